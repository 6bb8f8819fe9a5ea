// RUN: not relax-opt %s --pass-pipeline='builtin.module(relax-gpu-kernels-to-spirv)' --split-input-file 2>&1 | FileCheck %s

// CHECK: kernel m.k has no constant block size; WebGPU fixes it in the shader
module attributes {gpu.container_module} {
  gpu.module @m {
    gpu.func @k(%x: memref<4xf32>) kernel {
      gpu.return
    }
  }
}

// -----

// CHECK: kernel m.k: a scalar kernel argument of type complex<f32> cannot be passed to a WebGPU kernel
module attributes {gpu.container_module} {
  gpu.module @m {
    gpu.func @k(%c: complex<f32>) kernel attributes {known_block_size = array<i32: 1, 1, 1>} {
      gpu.return
    }
  }
}

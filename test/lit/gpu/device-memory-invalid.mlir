// RUN: not relax-opt %s --pass-pipeline='builtin.module(relax-gpu-device-memory)' --split-input-file 2>&1 | FileCheck %s

// CHECK: @k: host code writes device memory
func.func private @k(%m: memref<4xf32>) {
  %c0 = arith.constant 0 : index
  %f = arith.constant 1.0 : f32
  memref.store %f, %m[%c0] : memref<4xf32>
  return
}

// -----

// CHECK: @main uses the mutable global @g; on the webgpu target kernels read globals uploaded once
memref.global "private" @g : memref<4xf32> = dense<0.0>
func.func @main() attributes {relax.signature = "{}"} {
  %g = memref.get_global @g : memref<4xf32>
  return
}

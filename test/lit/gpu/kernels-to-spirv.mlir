// RUN: relax-opt %s --pass-pipeline='builtin.module(relax-gpu-kernels-to-spirv{capabilities=Shader,Int64})' | FileCheck %s

// A kernel in the WebGPU ABI: its memref and index arguments become flat storage buffers and one i32
// params buffer (offset, sizes, strides, then scalars), recorded in relax.webgpu_kernels; the module is
// serialized to SPIR-V in a gpu.binary.
// CHECK: module attributes {gpu.container_module, relax.webgpu_kernels = "{\22m.k\22: {\22args\22: [{\22dtype\22: \22index\22, \22kind\22: \22scalar\22, \22params_at\22: 5}, {\22binding\22: 0, \22dtype\22: \22f32\22, \22kind\22: \22memref\22, \22params_at\22: 0, \22rank\22: 2}], \22bindings\22: 2, \22entry\22: \22k\22, \22module\22: \22m\22, \22params\22: 6, \22workgroup_size\22: [64, 1, 1]}}"}
// CHECK: gpu.binary @m  [#gpu.object<#spirv.target_env<#spirv.vce<v1.3, [Shader, Int64]
// CHECK-NOT: gpu.module
module attributes {gpu.container_module} {
  gpu.module @m {
    gpu.func @k(%n: index, %x: memref<?x4xf32>) kernel attributes {known_block_size = array<i32: 64, 1, 1>} {
      %c0 = arith.constant 0 : index
      %t = gpu.thread_id x
      %ok = arith.cmpi ult, %t, %n : index
      scf.if %ok {
        %v = memref.load %x[%t, %c0] : memref<?x4xf32>
        %e = math.exp %v : f32
        memref.store %e, %x[%t, %c0] : memref<?x4xf32>
      }
      gpu.return
    }
  }
}

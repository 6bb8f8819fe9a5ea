// RUN: relax-opt %s --gpu | FileCheck %s
// RUN: relax-opt %s --pass-pipeline='builtin.module(relax-to-host-gpu,host-to-gpu)' | FileCheck %s

// The whole CUDA pipeline: each kernel becomes PTX for sm_80 (PTX ISA 8.0) in a gpu.binary, and the
// host code launches it with a grid computed from the run-time dim n.
// CHECK:       llvm.func @exp_0(
// CHECK:         gpu.launch_func  @exp_0_kernel::@exp_0_kernel blocks in (%{{.*}}, %{{.*}}, %{{.*}}) threads in (%{{.*}}, %{{.*}}, %{{.*}}) : i64
// CHECK:       gpu.binary @exp_0_kernel  [#gpu.object<#nvvm.target<chip = "sm_80", features = "+ptx80"{{.*}}assembly = "{{.*}}.version 8.0{{.*}}.target sm_80
// CHECK:       llvm.func @main(
// CHECK:         llvm.call @mgpuMemAlloc
// CHECK:         llvm.call @exp_0(
// CHECK:       llvm.func @_mlir_ciface_main(
func.func @main(%x: !relax.tensor<["n", 64], f32>) -> !relax.tensor<["n", 64], f32> {
  %0 = "relax.exp"(%x) : (!relax.tensor<["n", 64], f32>) -> !relax.tensor<["n", 64], f32>
  return %0 : !relax.tensor<["n", 64], f32>
}

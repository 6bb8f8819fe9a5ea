// RUN: relax-opt %s --cpu | FileCheck %s
// RUN: relax-opt %s --pass-pipeline='builtin.module(relax-to-host,host-to-llvm)' | FileCheck %s
// RUN: relax-opt %s --pass-pipeline='builtin.module(relax-O0,host-to-llvm)' | FileCheck %s --check-prefix=O0

// The named cpu pipeline takes a relax function to the LLVM dialect: a C-interface entry point
// taking memref descriptors for the input, the destination and the status buffer, and the
// kernels as ordinary LLVM functions.

// At O3 (cpu = relax-O3,host-to-llvm) the two exps are one fused kernel with no intermediate buffer;
// at O0 each op is its own kernel and the intermediate is allocated and freed.
// CHECK-DAG:   llvm.func @fused_exp_0(
// CHECK-DAG:   llvm.func @main(
// CHECK-DAG:   llvm.func @_mlir_ciface_main(%{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr {relax.role = "output"}, %{{.*}}: !llvm.ptr {relax.role = "host"})
// CHECK-NOT:   "relax.
// O0-DAG:      llvm.func @malloc(
// O0-DAG:      llvm.func @free(
// O0-DAG:      llvm.func @exp_0(
func.func @main(%x: !relax.tensor<["n", 4], f32>) -> !relax.tensor<["n", 4], f32> {
  %0 = "relax.exp"(%x) : (!relax.tensor<["n", 4], f32>) -> !relax.tensor<["n", 4], f32>
  %1 = "relax.exp"(%0) : (!relax.tensor<["n", 4], f32>) -> !relax.tensor<["n", 4], f32>
  return %1 : !relax.tensor<["n", 4], f32>
}

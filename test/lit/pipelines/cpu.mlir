// RUN: relax-opt %s --cpu | FileCheck %s
// RUN: relax-opt %s --pass-pipeline='builtin.module(relax-to-host,host-to-llvm)' | FileCheck %s

// The named cpu pipeline takes a relax function to the LLVM dialect: a C-interface entry point
// taking memref descriptors for the input, the destination and the status buffer, and the
// kernels as ordinary LLVM functions.

// CHECK-DAG:   llvm.func @malloc(
// CHECK-DAG:   llvm.func @free(
// CHECK-DAG:   llvm.func @exp_0(
// CHECK-DAG:   llvm.func @main(
// CHECK-DAG:   llvm.func @_mlir_ciface_main(%{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr)
// CHECK-NOT:   "relax.
func.func @main(%x: !relax.tensor<["n", 4], f32>) -> !relax.tensor<["n", 4], f32> {
  %0 = "relax.exp"(%x) : (!relax.tensor<["n", 4], f32>) -> !relax.tensor<["n", 4], f32>
  %1 = "relax.exp"(%0) : (!relax.tensor<["n", 4], f32>) -> !relax.tensor<["n", 4], f32>
  return %1 : !relax.tensor<["n", 4], f32>
}

// Static 0 dims never reach tiling: a linalg op with an empty iteration domain is folded to its inits
// before relax-parallelize-kernels and relax-schedule-kernels tile anything (MLIR 22 aborts otherwise).
// RUN: relax-opt %s --split-input-file --cpu | FileCheck %s
// RUN: relax-opt %s --split-input-file --pass-pipeline='builtin.module(relax-O2,host-to-llvm)' | FileCheck %s

// The matmul over k = 0 is gone: the kernel is the zero fill of its destination.
// CHECK-LABEL: llvm.func @_mlir_ciface_main
// CHECK-NOT:   "relax.
func.func @main(%a: !relax.tensor<["n", "k"], f32>, %b: !relax.tensor<[0, "m"], f32>) -> !relax.tensor<["n", "m"], f32> {
  %0 = "relax.matmul"(%a, %b) : (!relax.tensor<["n", "k"], f32>, !relax.tensor<[0, "m"], f32>) -> !relax.tensor<["n", "m"], f32>
  return %0 : !relax.tensor<["n", "m"], f32>
}

// -----

// Rows of length 0: the row schedule has nothing to tile.
// CHECK-LABEL: llvm.func @_mlir_ciface_main
func.func @main(%x: !relax.tensor<["n", 0], f32>) -> !relax.tensor<["n", 0], f32> {
  %0 = "relax.softmax"(%x) {axis = -1 : i64} : (!relax.tensor<["n", 0], f32>) -> !relax.tensor<["n", 0], f32>
  return %0 : !relax.tensor<["n", 0], f32>
}

// The IRDL generated from the op classes loads into upstream mlir-opt, which then parses and
// verifies relax IR whose variadic operand lists hold one type (IRDL in MLIR 22 binds a variadic
// constraint to its first type; relax-opt checks heterogeneous lists itself, see dialects/verify.py).
// RUN: relax-opt --emit-irdl -o %t.irdl.mlir
// RUN: mlir-opt --irdl-file=%t.irdl.mlir %s | FileCheck %s

// CHECK-LABEL: func.func @f
// CHECK: "relax.matmul"
// CHECK: "relax.sum"{{.*}}{axes = [1], keepdims = false}
func.func @f(%x: !relax.tensor<["n", 4], f32>, %w: !relax.tensor<[4, 8], f32>) -> !relax.tensor<["n"], f32> {
  %0 = "relax.matmul"(%x, %w) : (!relax.tensor<["n", 4], f32>, !relax.tensor<[4, 8], f32>) -> !relax.tensor<["n", 8], f32>
  %1 = "relax.sum"(%0) {axes = [1], keepdims = false} : (!relax.tensor<["n", 8], f32>) -> !relax.tensor<["n"], f32>
  return %1 : !relax.tensor<["n"], f32>
}

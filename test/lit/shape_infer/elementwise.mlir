// Shape deduction of the elementwise ops (relax/dialects/ops/elementwise.py): every op at static,
// symbolic, unknown-dim and unknown-rank operands; results start as coarse as possible ("*").
// Broadcasting: a constant against a symbol gives the constant; two symbols not provably equal give
// max(a, b) * min(a, b, 1).
// RUN: relax-opt %s --relax-infer-shapes | FileCheck %s
// RUN: relax-opt %s --relax-infer-shapes | relax-opt --relax-infer-shapes --relax-verify | FileCheck %s

// CHECK-LABEL: func.func @arith_static
// CHECK-SAME: -> !relax.tensor<[2, 3, 4], f32>
// CHECK: "relax.add"{{.*}} -> !relax.tensor<[2, 3, 4], f32>
// CHECK: "relax.subtract"{{.*}} -> !relax.tensor<[2, 3, 4], f32>
// CHECK: "relax.multiply"{{.*}} -> !relax.tensor<[2, 3, 4], f32>
// CHECK: "relax.divide"{{.*}} -> !relax.tensor<[2, 3, 4], f32>
// CHECK: "relax.floor_divide"{{.*}} -> !relax.tensor<[2, 3, 4], f32>
// CHECK: "relax.mod"{{.*}} -> !relax.tensor<[2, 3, 4], f32>
// CHECK: "relax.power"{{.*}} -> !relax.tensor<[2, 3, 4], f32>
// CHECK: "relax.maximum"{{.*}} -> !relax.tensor<[2, 3, 4], f32>
// CHECK: "relax.minimum"{{.*}} -> !relax.tensor<[2, 3, 4], f32>
func.func @arith_static(%a: !relax.tensor<[2, 1, 4], f32>, %b: !relax.tensor<[3, 1], f32>) -> !relax.tensor<"*", f32> {
  %0 = "relax.add"(%a, %b) : (!relax.tensor<[2, 1, 4], f32>, !relax.tensor<[3, 1], f32>) -> !relax.tensor<"*", f32>
  %1 = "relax.subtract"(%a, %b) : (!relax.tensor<[2, 1, 4], f32>, !relax.tensor<[3, 1], f32>) -> !relax.tensor<"*", f32>
  %2 = "relax.multiply"(%a, %b) : (!relax.tensor<[2, 1, 4], f32>, !relax.tensor<[3, 1], f32>) -> !relax.tensor<"*", f32>
  %3 = "relax.divide"(%a, %b) : (!relax.tensor<[2, 1, 4], f32>, !relax.tensor<[3, 1], f32>) -> !relax.tensor<"*", f32>
  %4 = "relax.floor_divide"(%a, %b) : (!relax.tensor<[2, 1, 4], f32>, !relax.tensor<[3, 1], f32>) -> !relax.tensor<"*", f32>
  %5 = "relax.mod"(%a, %b) : (!relax.tensor<[2, 1, 4], f32>, !relax.tensor<[3, 1], f32>) -> !relax.tensor<"*", f32>
  %6 = "relax.power"(%a, %b) : (!relax.tensor<[2, 1, 4], f32>, !relax.tensor<[3, 1], f32>) -> !relax.tensor<"*", f32>
  %7 = "relax.maximum"(%a, %b) : (!relax.tensor<[2, 1, 4], f32>, !relax.tensor<[3, 1], f32>) -> !relax.tensor<"*", f32>
  %8 = "relax.minimum"(%a, %b) : (!relax.tensor<[2, 1, 4], f32>, !relax.tensor<[3, 1], f32>) -> !relax.tensor<"*", f32>
  return %8 : !relax.tensor<"*", f32>
}

// CHECK-LABEL: func.func @arith_symbolic
// CHECK-SAME: -> !relax.tensor<["n", "m", 4], f32>
// CHECK: "relax.add"{{.*}} -> !relax.tensor<["n", "m", 4], f32>
// CHECK: "relax.subtract"{{.*}} -> !relax.tensor<["n", "m", 4], f32>
// CHECK: "relax.multiply"{{.*}} -> !relax.tensor<["n", "m", 4], f32>
// CHECK: "relax.divide"{{.*}} -> !relax.tensor<["n", "m", 4], f32>
// CHECK: "relax.floor_divide"{{.*}} -> !relax.tensor<["n", "m", 4], f32>
// CHECK: "relax.mod"{{.*}} -> !relax.tensor<["n", "m", 4], f32>
// CHECK: "relax.power"{{.*}} -> !relax.tensor<["n", "m", 4], f32>
// CHECK: "relax.maximum"{{.*}} -> !relax.tensor<["n", "m", 4], f32>
// CHECK: "relax.minimum"{{.*}} -> !relax.tensor<["n", "m", 4], f32>
func.func @arith_symbolic(%a: !relax.tensor<["n", 1, 4], f32>, %b: !relax.tensor<["m", 1], f32>) -> !relax.tensor<"*", f32> {
  %0 = "relax.add"(%a, %b) : (!relax.tensor<["n", 1, 4], f32>, !relax.tensor<["m", 1], f32>) -> !relax.tensor<"*", f32>
  %1 = "relax.subtract"(%a, %b) : (!relax.tensor<["n", 1, 4], f32>, !relax.tensor<["m", 1], f32>) -> !relax.tensor<"*", f32>
  %2 = "relax.multiply"(%a, %b) : (!relax.tensor<["n", 1, 4], f32>, !relax.tensor<["m", 1], f32>) -> !relax.tensor<"*", f32>
  %3 = "relax.divide"(%a, %b) : (!relax.tensor<["n", 1, 4], f32>, !relax.tensor<["m", 1], f32>) -> !relax.tensor<"*", f32>
  %4 = "relax.floor_divide"(%a, %b) : (!relax.tensor<["n", 1, 4], f32>, !relax.tensor<["m", 1], f32>) -> !relax.tensor<"*", f32>
  %5 = "relax.mod"(%a, %b) : (!relax.tensor<["n", 1, 4], f32>, !relax.tensor<["m", 1], f32>) -> !relax.tensor<"*", f32>
  %6 = "relax.power"(%a, %b) : (!relax.tensor<["n", 1, 4], f32>, !relax.tensor<["m", 1], f32>) -> !relax.tensor<"*", f32>
  %7 = "relax.maximum"(%a, %b) : (!relax.tensor<["n", 1, 4], f32>, !relax.tensor<["m", 1], f32>) -> !relax.tensor<"*", f32>
  %8 = "relax.minimum"(%a, %b) : (!relax.tensor<["n", 1, 4], f32>, !relax.tensor<["m", 1], f32>) -> !relax.tensor<"*", f32>
  return %8 : !relax.tensor<"*", f32>
}

// CHECK-LABEL: func.func @arith_unknown_dim
// CHECK-SAME: -> !relax.tensor<[3, 4], f32>
// CHECK: "relax.add"{{.*}} -> !relax.tensor<[3, 4], f32>
// CHECK: "relax.subtract"{{.*}} -> !relax.tensor<[3, 4], f32>
// CHECK: "relax.multiply"{{.*}} -> !relax.tensor<[3, 4], f32>
// CHECK: "relax.divide"{{.*}} -> !relax.tensor<[3, 4], f32>
// CHECK: "relax.floor_divide"{{.*}} -> !relax.tensor<[3, 4], f32>
// CHECK: "relax.mod"{{.*}} -> !relax.tensor<[3, 4], f32>
// CHECK: "relax.power"{{.*}} -> !relax.tensor<[3, 4], f32>
// CHECK: "relax.maximum"{{.*}} -> !relax.tensor<[3, 4], f32>
// CHECK: "relax.minimum"{{.*}} -> !relax.tensor<[3, 4], f32>
func.func @arith_unknown_dim(%a: !relax.tensor<["?", 4], f32>, %b: !relax.tensor<[3, 1], f32>) -> !relax.tensor<"*", f32> {
  %0 = "relax.add"(%a, %b) : (!relax.tensor<["?", 4], f32>, !relax.tensor<[3, 1], f32>) -> !relax.tensor<"*", f32>
  %1 = "relax.subtract"(%a, %b) : (!relax.tensor<["?", 4], f32>, !relax.tensor<[3, 1], f32>) -> !relax.tensor<"*", f32>
  %2 = "relax.multiply"(%a, %b) : (!relax.tensor<["?", 4], f32>, !relax.tensor<[3, 1], f32>) -> !relax.tensor<"*", f32>
  %3 = "relax.divide"(%a, %b) : (!relax.tensor<["?", 4], f32>, !relax.tensor<[3, 1], f32>) -> !relax.tensor<"*", f32>
  %4 = "relax.floor_divide"(%a, %b) : (!relax.tensor<["?", 4], f32>, !relax.tensor<[3, 1], f32>) -> !relax.tensor<"*", f32>
  %5 = "relax.mod"(%a, %b) : (!relax.tensor<["?", 4], f32>, !relax.tensor<[3, 1], f32>) -> !relax.tensor<"*", f32>
  %6 = "relax.power"(%a, %b) : (!relax.tensor<["?", 4], f32>, !relax.tensor<[3, 1], f32>) -> !relax.tensor<"*", f32>
  %7 = "relax.maximum"(%a, %b) : (!relax.tensor<["?", 4], f32>, !relax.tensor<[3, 1], f32>) -> !relax.tensor<"*", f32>
  %8 = "relax.minimum"(%a, %b) : (!relax.tensor<["?", 4], f32>, !relax.tensor<[3, 1], f32>) -> !relax.tensor<"*", f32>
  return %8 : !relax.tensor<"*", f32>
}

// CHECK-LABEL: func.func @arith_unknown_rank
// CHECK-SAME: -> !relax.tensor<"*", f32>
// CHECK: "relax.add"{{.*}} -> !relax.tensor<"*", f32>
// CHECK: "relax.subtract"{{.*}} -> !relax.tensor<"*", f32>
// CHECK: "relax.multiply"{{.*}} -> !relax.tensor<"*", f32>
// CHECK: "relax.divide"{{.*}} -> !relax.tensor<"*", f32>
// CHECK: "relax.floor_divide"{{.*}} -> !relax.tensor<"*", f32>
// CHECK: "relax.mod"{{.*}} -> !relax.tensor<"*", f32>
// CHECK: "relax.power"{{.*}} -> !relax.tensor<"*", f32>
// CHECK: "relax.maximum"{{.*}} -> !relax.tensor<"*", f32>
// CHECK: "relax.minimum"{{.*}} -> !relax.tensor<"*", f32>
func.func @arith_unknown_rank(%a: !relax.tensor<"*", f32>, %b: !relax.tensor<["n", 4], f32>) -> !relax.tensor<"*", f32> {
  %0 = "relax.add"(%a, %b) : (!relax.tensor<"*", f32>, !relax.tensor<["n", 4], f32>) -> !relax.tensor<"*", f32>
  %1 = "relax.subtract"(%a, %b) : (!relax.tensor<"*", f32>, !relax.tensor<["n", 4], f32>) -> !relax.tensor<"*", f32>
  %2 = "relax.multiply"(%a, %b) : (!relax.tensor<"*", f32>, !relax.tensor<["n", 4], f32>) -> !relax.tensor<"*", f32>
  %3 = "relax.divide"(%a, %b) : (!relax.tensor<"*", f32>, !relax.tensor<["n", 4], f32>) -> !relax.tensor<"*", f32>
  %4 = "relax.floor_divide"(%a, %b) : (!relax.tensor<"*", f32>, !relax.tensor<["n", 4], f32>) -> !relax.tensor<"*", f32>
  %5 = "relax.mod"(%a, %b) : (!relax.tensor<"*", f32>, !relax.tensor<["n", 4], f32>) -> !relax.tensor<"*", f32>
  %6 = "relax.power"(%a, %b) : (!relax.tensor<"*", f32>, !relax.tensor<["n", 4], f32>) -> !relax.tensor<"*", f32>
  %7 = "relax.maximum"(%a, %b) : (!relax.tensor<"*", f32>, !relax.tensor<["n", 4], f32>) -> !relax.tensor<"*", f32>
  %8 = "relax.minimum"(%a, %b) : (!relax.tensor<"*", f32>, !relax.tensor<["n", 4], f32>) -> !relax.tensor<"*", f32>
  return %8 : !relax.tensor<"*", f32>
}

// CHECK-LABEL: func.func @compare_static
// CHECK-SAME: -> !relax.tensor<[2, 3, 4], i1>
// CHECK: "relax.equal"{{.*}} -> !relax.tensor<[2, 3, 4], i1>
// CHECK: "relax.not_equal"{{.*}} -> !relax.tensor<[2, 3, 4], i1>
// CHECK: "relax.less"{{.*}} -> !relax.tensor<[2, 3, 4], i1>
// CHECK: "relax.less_equal"{{.*}} -> !relax.tensor<[2, 3, 4], i1>
// CHECK: "relax.greater"{{.*}} -> !relax.tensor<[2, 3, 4], i1>
// CHECK: "relax.greater_equal"{{.*}} -> !relax.tensor<[2, 3, 4], i1>
func.func @compare_static(%a: !relax.tensor<[2, 1, 4], f32>, %b: !relax.tensor<[3, 1], f32>) -> !relax.tensor<"*", none> {
  %0 = "relax.equal"(%a, %b) : (!relax.tensor<[2, 1, 4], f32>, !relax.tensor<[3, 1], f32>) -> !relax.tensor<"*", none>
  %1 = "relax.not_equal"(%a, %b) : (!relax.tensor<[2, 1, 4], f32>, !relax.tensor<[3, 1], f32>) -> !relax.tensor<"*", none>
  %2 = "relax.less"(%a, %b) : (!relax.tensor<[2, 1, 4], f32>, !relax.tensor<[3, 1], f32>) -> !relax.tensor<"*", none>
  %3 = "relax.less_equal"(%a, %b) : (!relax.tensor<[2, 1, 4], f32>, !relax.tensor<[3, 1], f32>) -> !relax.tensor<"*", none>
  %4 = "relax.greater"(%a, %b) : (!relax.tensor<[2, 1, 4], f32>, !relax.tensor<[3, 1], f32>) -> !relax.tensor<"*", none>
  %5 = "relax.greater_equal"(%a, %b) : (!relax.tensor<[2, 1, 4], f32>, !relax.tensor<[3, 1], f32>) -> !relax.tensor<"*", none>
  return %5 : !relax.tensor<"*", none>
}

// CHECK-LABEL: func.func @compare_symbolic
// CHECK-SAME: -> !relax.tensor<["n", "m", 4], i1>
// CHECK: "relax.equal"{{.*}} -> !relax.tensor<["n", "m", 4], i1>
// CHECK: "relax.not_equal"{{.*}} -> !relax.tensor<["n", "m", 4], i1>
// CHECK: "relax.less"{{.*}} -> !relax.tensor<["n", "m", 4], i1>
// CHECK: "relax.less_equal"{{.*}} -> !relax.tensor<["n", "m", 4], i1>
// CHECK: "relax.greater"{{.*}} -> !relax.tensor<["n", "m", 4], i1>
// CHECK: "relax.greater_equal"{{.*}} -> !relax.tensor<["n", "m", 4], i1>
func.func @compare_symbolic(%a: !relax.tensor<["n", 1, 4], f32>, %b: !relax.tensor<["m", 1], f32>) -> !relax.tensor<"*", none> {
  %0 = "relax.equal"(%a, %b) : (!relax.tensor<["n", 1, 4], f32>, !relax.tensor<["m", 1], f32>) -> !relax.tensor<"*", none>
  %1 = "relax.not_equal"(%a, %b) : (!relax.tensor<["n", 1, 4], f32>, !relax.tensor<["m", 1], f32>) -> !relax.tensor<"*", none>
  %2 = "relax.less"(%a, %b) : (!relax.tensor<["n", 1, 4], f32>, !relax.tensor<["m", 1], f32>) -> !relax.tensor<"*", none>
  %3 = "relax.less_equal"(%a, %b) : (!relax.tensor<["n", 1, 4], f32>, !relax.tensor<["m", 1], f32>) -> !relax.tensor<"*", none>
  %4 = "relax.greater"(%a, %b) : (!relax.tensor<["n", 1, 4], f32>, !relax.tensor<["m", 1], f32>) -> !relax.tensor<"*", none>
  %5 = "relax.greater_equal"(%a, %b) : (!relax.tensor<["n", 1, 4], f32>, !relax.tensor<["m", 1], f32>) -> !relax.tensor<"*", none>
  return %5 : !relax.tensor<"*", none>
}

// CHECK-LABEL: func.func @compare_unknown_dim
// CHECK-SAME: -> !relax.tensor<[3, 4], i1>
// CHECK: "relax.equal"{{.*}} -> !relax.tensor<[3, 4], i1>
// CHECK: "relax.not_equal"{{.*}} -> !relax.tensor<[3, 4], i1>
// CHECK: "relax.less"{{.*}} -> !relax.tensor<[3, 4], i1>
// CHECK: "relax.less_equal"{{.*}} -> !relax.tensor<[3, 4], i1>
// CHECK: "relax.greater"{{.*}} -> !relax.tensor<[3, 4], i1>
// CHECK: "relax.greater_equal"{{.*}} -> !relax.tensor<[3, 4], i1>
func.func @compare_unknown_dim(%a: !relax.tensor<["?", 4], f32>, %b: !relax.tensor<[3, 1], f32>) -> !relax.tensor<"*", none> {
  %0 = "relax.equal"(%a, %b) : (!relax.tensor<["?", 4], f32>, !relax.tensor<[3, 1], f32>) -> !relax.tensor<"*", none>
  %1 = "relax.not_equal"(%a, %b) : (!relax.tensor<["?", 4], f32>, !relax.tensor<[3, 1], f32>) -> !relax.tensor<"*", none>
  %2 = "relax.less"(%a, %b) : (!relax.tensor<["?", 4], f32>, !relax.tensor<[3, 1], f32>) -> !relax.tensor<"*", none>
  %3 = "relax.less_equal"(%a, %b) : (!relax.tensor<["?", 4], f32>, !relax.tensor<[3, 1], f32>) -> !relax.tensor<"*", none>
  %4 = "relax.greater"(%a, %b) : (!relax.tensor<["?", 4], f32>, !relax.tensor<[3, 1], f32>) -> !relax.tensor<"*", none>
  %5 = "relax.greater_equal"(%a, %b) : (!relax.tensor<["?", 4], f32>, !relax.tensor<[3, 1], f32>) -> !relax.tensor<"*", none>
  return %5 : !relax.tensor<"*", none>
}

// CHECK-LABEL: func.func @compare_unknown_rank
// CHECK-SAME: -> !relax.tensor<"*", i1>
// CHECK: "relax.equal"{{.*}} -> !relax.tensor<"*", i1>
// CHECK: "relax.not_equal"{{.*}} -> !relax.tensor<"*", i1>
// CHECK: "relax.less"{{.*}} -> !relax.tensor<"*", i1>
// CHECK: "relax.less_equal"{{.*}} -> !relax.tensor<"*", i1>
// CHECK: "relax.greater"{{.*}} -> !relax.tensor<"*", i1>
// CHECK: "relax.greater_equal"{{.*}} -> !relax.tensor<"*", i1>
func.func @compare_unknown_rank(%a: !relax.tensor<"*", f32>, %b: !relax.tensor<["n", 4], f32>) -> !relax.tensor<"*", none> {
  %0 = "relax.equal"(%a, %b) : (!relax.tensor<"*", f32>, !relax.tensor<["n", 4], f32>) -> !relax.tensor<"*", none>
  %1 = "relax.not_equal"(%a, %b) : (!relax.tensor<"*", f32>, !relax.tensor<["n", 4], f32>) -> !relax.tensor<"*", none>
  %2 = "relax.less"(%a, %b) : (!relax.tensor<"*", f32>, !relax.tensor<["n", 4], f32>) -> !relax.tensor<"*", none>
  %3 = "relax.less_equal"(%a, %b) : (!relax.tensor<"*", f32>, !relax.tensor<["n", 4], f32>) -> !relax.tensor<"*", none>
  %4 = "relax.greater"(%a, %b) : (!relax.tensor<"*", f32>, !relax.tensor<["n", 4], f32>) -> !relax.tensor<"*", none>
  %5 = "relax.greater_equal"(%a, %b) : (!relax.tensor<"*", f32>, !relax.tensor<["n", 4], f32>) -> !relax.tensor<"*", none>
  return %5 : !relax.tensor<"*", none>
}

// CHECK-LABEL: func.func @logical_static
// CHECK-SAME: -> !relax.tensor<[2, 3, 4], i1>
// CHECK: "relax.logical_and"{{.*}} -> !relax.tensor<[2, 3, 4], i1>
// CHECK: "relax.logical_or"{{.*}} -> !relax.tensor<[2, 3, 4], i1>
func.func @logical_static(%a: !relax.tensor<[2, 1, 4], i1>, %b: !relax.tensor<[3, 1], i1>) -> !relax.tensor<"*", none> {
  %0 = "relax.logical_and"(%a, %b) : (!relax.tensor<[2, 1, 4], i1>, !relax.tensor<[3, 1], i1>) -> !relax.tensor<"*", none>
  %1 = "relax.logical_or"(%a, %b) : (!relax.tensor<[2, 1, 4], i1>, !relax.tensor<[3, 1], i1>) -> !relax.tensor<"*", none>
  return %1 : !relax.tensor<"*", none>
}

// CHECK-LABEL: func.func @logical_symbolic
// CHECK-SAME: -> !relax.tensor<["n", "m", 4], i1>
// CHECK: "relax.logical_and"{{.*}} -> !relax.tensor<["n", "m", 4], i1>
// CHECK: "relax.logical_or"{{.*}} -> !relax.tensor<["n", "m", 4], i1>
func.func @logical_symbolic(%a: !relax.tensor<["n", 1, 4], i1>, %b: !relax.tensor<["m", 1], i1>) -> !relax.tensor<"*", none> {
  %0 = "relax.logical_and"(%a, %b) : (!relax.tensor<["n", 1, 4], i1>, !relax.tensor<["m", 1], i1>) -> !relax.tensor<"*", none>
  %1 = "relax.logical_or"(%a, %b) : (!relax.tensor<["n", 1, 4], i1>, !relax.tensor<["m", 1], i1>) -> !relax.tensor<"*", none>
  return %1 : !relax.tensor<"*", none>
}

// CHECK-LABEL: func.func @logical_unknown_dim
// CHECK-SAME: -> !relax.tensor<[3, 4], i1>
// CHECK: "relax.logical_and"{{.*}} -> !relax.tensor<[3, 4], i1>
// CHECK: "relax.logical_or"{{.*}} -> !relax.tensor<[3, 4], i1>
func.func @logical_unknown_dim(%a: !relax.tensor<["?", 4], i1>, %b: !relax.tensor<[3, 1], i1>) -> !relax.tensor<"*", none> {
  %0 = "relax.logical_and"(%a, %b) : (!relax.tensor<["?", 4], i1>, !relax.tensor<[3, 1], i1>) -> !relax.tensor<"*", none>
  %1 = "relax.logical_or"(%a, %b) : (!relax.tensor<["?", 4], i1>, !relax.tensor<[3, 1], i1>) -> !relax.tensor<"*", none>
  return %1 : !relax.tensor<"*", none>
}

// CHECK-LABEL: func.func @logical_unknown_rank
// CHECK-SAME: -> !relax.tensor<"*", i1>
// CHECK: "relax.logical_and"{{.*}} -> !relax.tensor<"*", i1>
// CHECK: "relax.logical_or"{{.*}} -> !relax.tensor<"*", i1>
func.func @logical_unknown_rank(%a: !relax.tensor<"*", i1>, %b: !relax.tensor<["n", 4], i1>) -> !relax.tensor<"*", none> {
  %0 = "relax.logical_and"(%a, %b) : (!relax.tensor<"*", i1>, !relax.tensor<["n", 4], i1>) -> !relax.tensor<"*", none>
  %1 = "relax.logical_or"(%a, %b) : (!relax.tensor<"*", i1>, !relax.tensor<["n", 4], i1>) -> !relax.tensor<"*", none>
  return %1 : !relax.tensor<"*", none>
}

// n vs m: either may be 1, so the dim is numpy's choice at run time, max(n, m) * min(n, m, 1) (checked by the
// lowering); a constant wins against a symbol.
// CHECK-LABEL: func.func @broadcast_details
// CHECK: "relax.add"{{.*}} -> !relax.tensor<["max(m, n) * min(min(m, n), 1)"], f32>
// CHECK: "relax.add"{{.*}} -> !relax.tensor<[4], f32>
// CHECK: "relax.add"{{.*}} -> !relax.tensor<[4], f32>
// CHECK: "relax.add"{{.*}} -> !relax.tensor<["n + 1", "b * s"], f32>
// CHECK: "relax.add"{{.*}} -> !relax.tensor<["max(n, 2 * n) * min(min(n, 2 * n), 1)"], f32>
// CHECK: "relax.add"{{.*}} -> !relax.tensor<[0], f32>
// CHECK: "relax.add"{{.*}} -> !relax.tensor<[1, "n"], f32>
// CHECK: "relax.add"{{.*}} -> !relax.tensor<["n + 1", "b * s"], f32>
// CHECK: "relax.add"{{.*}} -> !relax.tensor<[4], f32>
// CHECK: "relax.add"{{.*}} -> !relax.tensor<[1, "?"], f32>
// CHECK: "relax.add"{{.*}} -> !relax.tensor<[3, 9, 5], f32>
// CHECK: "relax.add"{{.*}} -> !relax.tensor<["n"], f32>
func.func @broadcast_details(%d: !relax.tensor<["n", "b", "s"], f32>, %n: !relax.tensor<["n"], f32>, %m: !relax.tensor<["m"], f32>, %four: !relax.tensor<[4], f32>, %e1: !relax.tensor<["n + 1", "b * s"], f32>, %e2: !relax.tensor<["1 + n", "s * b"], f32>, %two_n: !relax.tensor<["2 * n"], f32>, %zero: !relax.tensor<[0], f32>, %one: !relax.tensor<[1, 1], f32>, %scalar: !relax.tensor<[], f32>, %u: !relax.tensor<["?"], f32>, %odd: !relax.tensor<[3, 1, 5], f32>, %odd2: !relax.tensor<[3, 9, 1], f32>) {
  %0 = "relax.add"(%n, %m) : (!relax.tensor<["n"], f32>, !relax.tensor<["m"], f32>) -> !relax.tensor<"*", f32>
  %1 = "relax.add"(%n, %four) : (!relax.tensor<["n"], f32>, !relax.tensor<[4], f32>) -> !relax.tensor<"*", f32>
  %2 = "relax.add"(%four, %n) : (!relax.tensor<[4], f32>, !relax.tensor<["n"], f32>) -> !relax.tensor<"*", f32>
  %3 = "relax.add"(%e1, %e2) : (!relax.tensor<["n + 1", "b * s"], f32>, !relax.tensor<["1 + n", "s * b"], f32>) -> !relax.tensor<"*", f32>
  %4 = "relax.add"(%two_n, %n) : (!relax.tensor<["2 * n"], f32>, !relax.tensor<["n"], f32>) -> !relax.tensor<"*", f32>
  %5 = "relax.add"(%zero, %n) : (!relax.tensor<[0], f32>, !relax.tensor<["n"], f32>) -> !relax.tensor<"*", f32>
  %6 = "relax.add"(%n, %one) : (!relax.tensor<["n"], f32>, !relax.tensor<[1, 1], f32>) -> !relax.tensor<"*", f32>
  %7 = "relax.add"(%scalar, %e1) : (!relax.tensor<[], f32>, !relax.tensor<["n + 1", "b * s"], f32>) -> !relax.tensor<"*", f32>
  %8 = "relax.add"(%u, %four) : (!relax.tensor<["?"], f32>, !relax.tensor<[4], f32>) -> !relax.tensor<"*", f32>
  %9 = "relax.add"(%u, %one) : (!relax.tensor<["?"], f32>, !relax.tensor<[1, 1], f32>) -> !relax.tensor<"*", f32>
  %10 = "relax.add"(%odd, %odd2) : (!relax.tensor<[3, 1, 5], f32>, !relax.tensor<[3, 9, 1], f32>) -> !relax.tensor<"*", f32>
  %11 = "relax.add"(%n, %n) : (!relax.tensor<["n"], f32>, !relax.tensor<["n"], f32>) -> !relax.tensor<"*", f32>
  return
}

// CHECK-LABEL: func.func @unary_static
// CHECK-SAME: -> !relax.tensor<[2, 3], f32>
// CHECK: "relax.exp"{{.*}} -> !relax.tensor<[2, 3], f32>
// CHECK: "relax.log"{{.*}} -> !relax.tensor<[2, 3], f32>
// CHECK: "relax.sqrt"{{.*}} -> !relax.tensor<[2, 3], f32>
// CHECK: "relax.rsqrt"{{.*}} -> !relax.tensor<[2, 3], f32>
// CHECK: "relax.tanh"{{.*}} -> !relax.tensor<[2, 3], f32>
// CHECK: "relax.sigmoid"{{.*}} -> !relax.tensor<[2, 3], f32>
// CHECK: "relax.erf"{{.*}} -> !relax.tensor<[2, 3], f32>
// CHECK: "relax.gelu"{{.*}} -> !relax.tensor<[2, 3], f32>
// CHECK: "relax.gelu_tanh"{{.*}} -> !relax.tensor<[2, 3], f32>
// CHECK: "relax.silu"{{.*}} -> !relax.tensor<[2, 3], f32>
// CHECK: "relax.sin"{{.*}} -> !relax.tensor<[2, 3], f32>
// CHECK: "relax.cos"{{.*}} -> !relax.tensor<[2, 3], f32>
// CHECK: "relax.floor"{{.*}} -> !relax.tensor<[2, 3], f32>
// CHECK: "relax.ceil"{{.*}} -> !relax.tensor<[2, 3], f32>
// CHECK: "relax.round"{{.*}} -> !relax.tensor<[2, 3], f32>
// CHECK: "relax.relu"{{.*}} -> !relax.tensor<[2, 3], f32>
// CHECK: "relax.neg"{{.*}} -> !relax.tensor<[2, 3], f32>
// CHECK: "relax.abs"{{.*}} -> !relax.tensor<[2, 3], f32>
// CHECK: "relax.sign"{{.*}} -> !relax.tensor<[2, 3], f32>
func.func @unary_static(%x: !relax.tensor<[2, 3], f32>) -> !relax.tensor<"*", f32> {
  %0 = "relax.exp"(%x) : (!relax.tensor<[2, 3], f32>) -> !relax.tensor<"*", f32>
  %1 = "relax.log"(%0) : (!relax.tensor<"*", f32>) -> !relax.tensor<"*", f32>
  %2 = "relax.sqrt"(%1) : (!relax.tensor<"*", f32>) -> !relax.tensor<"*", f32>
  %3 = "relax.rsqrt"(%2) : (!relax.tensor<"*", f32>) -> !relax.tensor<"*", f32>
  %4 = "relax.tanh"(%3) : (!relax.tensor<"*", f32>) -> !relax.tensor<"*", f32>
  %5 = "relax.sigmoid"(%4) : (!relax.tensor<"*", f32>) -> !relax.tensor<"*", f32>
  %6 = "relax.erf"(%5) : (!relax.tensor<"*", f32>) -> !relax.tensor<"*", f32>
  %7 = "relax.gelu"(%6) : (!relax.tensor<"*", f32>) -> !relax.tensor<"*", f32>
  %8 = "relax.gelu_tanh"(%7) : (!relax.tensor<"*", f32>) -> !relax.tensor<"*", f32>
  %9 = "relax.silu"(%8) : (!relax.tensor<"*", f32>) -> !relax.tensor<"*", f32>
  %10 = "relax.sin"(%9) : (!relax.tensor<"*", f32>) -> !relax.tensor<"*", f32>
  %11 = "relax.cos"(%10) : (!relax.tensor<"*", f32>) -> !relax.tensor<"*", f32>
  %12 = "relax.floor"(%11) : (!relax.tensor<"*", f32>) -> !relax.tensor<"*", f32>
  %13 = "relax.ceil"(%12) : (!relax.tensor<"*", f32>) -> !relax.tensor<"*", f32>
  %14 = "relax.round"(%13) : (!relax.tensor<"*", f32>) -> !relax.tensor<"*", f32>
  %15 = "relax.relu"(%14) : (!relax.tensor<"*", f32>) -> !relax.tensor<"*", f32>
  %16 = "relax.neg"(%15) : (!relax.tensor<"*", f32>) -> !relax.tensor<"*", f32>
  %17 = "relax.abs"(%16) : (!relax.tensor<"*", f32>) -> !relax.tensor<"*", f32>
  %18 = "relax.sign"(%17) : (!relax.tensor<"*", f32>) -> !relax.tensor<"*", f32>
  return %18 : !relax.tensor<"*", f32>
}

// CHECK-LABEL: func.func @unary_static_edge
// CHECK-SAME: -> !relax.tensor<[0, 1, 7], f32>
// CHECK: "relax.exp"{{.*}} -> !relax.tensor<[0, 1, 7], f32>
// CHECK: "relax.log"{{.*}} -> !relax.tensor<[0, 1, 7], f32>
// CHECK: "relax.sqrt"{{.*}} -> !relax.tensor<[0, 1, 7], f32>
// CHECK: "relax.rsqrt"{{.*}} -> !relax.tensor<[0, 1, 7], f32>
// CHECK: "relax.tanh"{{.*}} -> !relax.tensor<[0, 1, 7], f32>
// CHECK: "relax.sigmoid"{{.*}} -> !relax.tensor<[0, 1, 7], f32>
// CHECK: "relax.erf"{{.*}} -> !relax.tensor<[0, 1, 7], f32>
// CHECK: "relax.gelu"{{.*}} -> !relax.tensor<[0, 1, 7], f32>
// CHECK: "relax.gelu_tanh"{{.*}} -> !relax.tensor<[0, 1, 7], f32>
// CHECK: "relax.silu"{{.*}} -> !relax.tensor<[0, 1, 7], f32>
// CHECK: "relax.sin"{{.*}} -> !relax.tensor<[0, 1, 7], f32>
// CHECK: "relax.cos"{{.*}} -> !relax.tensor<[0, 1, 7], f32>
// CHECK: "relax.floor"{{.*}} -> !relax.tensor<[0, 1, 7], f32>
// CHECK: "relax.ceil"{{.*}} -> !relax.tensor<[0, 1, 7], f32>
// CHECK: "relax.round"{{.*}} -> !relax.tensor<[0, 1, 7], f32>
// CHECK: "relax.relu"{{.*}} -> !relax.tensor<[0, 1, 7], f32>
// CHECK: "relax.neg"{{.*}} -> !relax.tensor<[0, 1, 7], f32>
// CHECK: "relax.abs"{{.*}} -> !relax.tensor<[0, 1, 7], f32>
// CHECK: "relax.sign"{{.*}} -> !relax.tensor<[0, 1, 7], f32>
func.func @unary_static_edge(%x: !relax.tensor<[0, 1, 7], f32>) -> !relax.tensor<"*", f32> {
  %0 = "relax.exp"(%x) : (!relax.tensor<[0, 1, 7], f32>) -> !relax.tensor<"*", f32>
  %1 = "relax.log"(%0) : (!relax.tensor<"*", f32>) -> !relax.tensor<"*", f32>
  %2 = "relax.sqrt"(%1) : (!relax.tensor<"*", f32>) -> !relax.tensor<"*", f32>
  %3 = "relax.rsqrt"(%2) : (!relax.tensor<"*", f32>) -> !relax.tensor<"*", f32>
  %4 = "relax.tanh"(%3) : (!relax.tensor<"*", f32>) -> !relax.tensor<"*", f32>
  %5 = "relax.sigmoid"(%4) : (!relax.tensor<"*", f32>) -> !relax.tensor<"*", f32>
  %6 = "relax.erf"(%5) : (!relax.tensor<"*", f32>) -> !relax.tensor<"*", f32>
  %7 = "relax.gelu"(%6) : (!relax.tensor<"*", f32>) -> !relax.tensor<"*", f32>
  %8 = "relax.gelu_tanh"(%7) : (!relax.tensor<"*", f32>) -> !relax.tensor<"*", f32>
  %9 = "relax.silu"(%8) : (!relax.tensor<"*", f32>) -> !relax.tensor<"*", f32>
  %10 = "relax.sin"(%9) : (!relax.tensor<"*", f32>) -> !relax.tensor<"*", f32>
  %11 = "relax.cos"(%10) : (!relax.tensor<"*", f32>) -> !relax.tensor<"*", f32>
  %12 = "relax.floor"(%11) : (!relax.tensor<"*", f32>) -> !relax.tensor<"*", f32>
  %13 = "relax.ceil"(%12) : (!relax.tensor<"*", f32>) -> !relax.tensor<"*", f32>
  %14 = "relax.round"(%13) : (!relax.tensor<"*", f32>) -> !relax.tensor<"*", f32>
  %15 = "relax.relu"(%14) : (!relax.tensor<"*", f32>) -> !relax.tensor<"*", f32>
  %16 = "relax.neg"(%15) : (!relax.tensor<"*", f32>) -> !relax.tensor<"*", f32>
  %17 = "relax.abs"(%16) : (!relax.tensor<"*", f32>) -> !relax.tensor<"*", f32>
  %18 = "relax.sign"(%17) : (!relax.tensor<"*", f32>) -> !relax.tensor<"*", f32>
  return %18 : !relax.tensor<"*", f32>
}

// CHECK-LABEL: func.func @unary_symbolic
// CHECK-SAME: -> !relax.tensor<["n + 1", "b * s"], f32>
// CHECK: "relax.exp"{{.*}} -> !relax.tensor<["n + 1", "b * s"], f32>
// CHECK: "relax.log"{{.*}} -> !relax.tensor<["n + 1", "b * s"], f32>
// CHECK: "relax.sqrt"{{.*}} -> !relax.tensor<["n + 1", "b * s"], f32>
// CHECK: "relax.rsqrt"{{.*}} -> !relax.tensor<["n + 1", "b * s"], f32>
// CHECK: "relax.tanh"{{.*}} -> !relax.tensor<["n + 1", "b * s"], f32>
// CHECK: "relax.sigmoid"{{.*}} -> !relax.tensor<["n + 1", "b * s"], f32>
// CHECK: "relax.erf"{{.*}} -> !relax.tensor<["n + 1", "b * s"], f32>
// CHECK: "relax.gelu"{{.*}} -> !relax.tensor<["n + 1", "b * s"], f32>
// CHECK: "relax.gelu_tanh"{{.*}} -> !relax.tensor<["n + 1", "b * s"], f32>
// CHECK: "relax.silu"{{.*}} -> !relax.tensor<["n + 1", "b * s"], f32>
// CHECK: "relax.sin"{{.*}} -> !relax.tensor<["n + 1", "b * s"], f32>
// CHECK: "relax.cos"{{.*}} -> !relax.tensor<["n + 1", "b * s"], f32>
// CHECK: "relax.floor"{{.*}} -> !relax.tensor<["n + 1", "b * s"], f32>
// CHECK: "relax.ceil"{{.*}} -> !relax.tensor<["n + 1", "b * s"], f32>
// CHECK: "relax.round"{{.*}} -> !relax.tensor<["n + 1", "b * s"], f32>
// CHECK: "relax.relu"{{.*}} -> !relax.tensor<["n + 1", "b * s"], f32>
// CHECK: "relax.neg"{{.*}} -> !relax.tensor<["n + 1", "b * s"], f32>
// CHECK: "relax.abs"{{.*}} -> !relax.tensor<["n + 1", "b * s"], f32>
// CHECK: "relax.sign"{{.*}} -> !relax.tensor<["n + 1", "b * s"], f32>
func.func @unary_symbolic(%d: !relax.tensor<["n", "b", "s"], f32>, %x: !relax.tensor<["n + 1", "b * s"], f32>) -> !relax.tensor<"*", f32> {
  %0 = "relax.exp"(%x) : (!relax.tensor<["n + 1", "b * s"], f32>) -> !relax.tensor<"*", f32>
  %1 = "relax.log"(%0) : (!relax.tensor<"*", f32>) -> !relax.tensor<"*", f32>
  %2 = "relax.sqrt"(%1) : (!relax.tensor<"*", f32>) -> !relax.tensor<"*", f32>
  %3 = "relax.rsqrt"(%2) : (!relax.tensor<"*", f32>) -> !relax.tensor<"*", f32>
  %4 = "relax.tanh"(%3) : (!relax.tensor<"*", f32>) -> !relax.tensor<"*", f32>
  %5 = "relax.sigmoid"(%4) : (!relax.tensor<"*", f32>) -> !relax.tensor<"*", f32>
  %6 = "relax.erf"(%5) : (!relax.tensor<"*", f32>) -> !relax.tensor<"*", f32>
  %7 = "relax.gelu"(%6) : (!relax.tensor<"*", f32>) -> !relax.tensor<"*", f32>
  %8 = "relax.gelu_tanh"(%7) : (!relax.tensor<"*", f32>) -> !relax.tensor<"*", f32>
  %9 = "relax.silu"(%8) : (!relax.tensor<"*", f32>) -> !relax.tensor<"*", f32>
  %10 = "relax.sin"(%9) : (!relax.tensor<"*", f32>) -> !relax.tensor<"*", f32>
  %11 = "relax.cos"(%10) : (!relax.tensor<"*", f32>) -> !relax.tensor<"*", f32>
  %12 = "relax.floor"(%11) : (!relax.tensor<"*", f32>) -> !relax.tensor<"*", f32>
  %13 = "relax.ceil"(%12) : (!relax.tensor<"*", f32>) -> !relax.tensor<"*", f32>
  %14 = "relax.round"(%13) : (!relax.tensor<"*", f32>) -> !relax.tensor<"*", f32>
  %15 = "relax.relu"(%14) : (!relax.tensor<"*", f32>) -> !relax.tensor<"*", f32>
  %16 = "relax.neg"(%15) : (!relax.tensor<"*", f32>) -> !relax.tensor<"*", f32>
  %17 = "relax.abs"(%16) : (!relax.tensor<"*", f32>) -> !relax.tensor<"*", f32>
  %18 = "relax.sign"(%17) : (!relax.tensor<"*", f32>) -> !relax.tensor<"*", f32>
  return %18 : !relax.tensor<"*", f32>
}

// CHECK-LABEL: func.func @unary_unknown_dim
// CHECK-SAME: -> !relax.tensor<["?", 4], f32>
// CHECK: "relax.exp"{{.*}} -> !relax.tensor<["?", 4], f32>
// CHECK: "relax.log"{{.*}} -> !relax.tensor<["?", 4], f32>
// CHECK: "relax.sqrt"{{.*}} -> !relax.tensor<["?", 4], f32>
// CHECK: "relax.rsqrt"{{.*}} -> !relax.tensor<["?", 4], f32>
// CHECK: "relax.tanh"{{.*}} -> !relax.tensor<["?", 4], f32>
// CHECK: "relax.sigmoid"{{.*}} -> !relax.tensor<["?", 4], f32>
// CHECK: "relax.erf"{{.*}} -> !relax.tensor<["?", 4], f32>
// CHECK: "relax.gelu"{{.*}} -> !relax.tensor<["?", 4], f32>
// CHECK: "relax.gelu_tanh"{{.*}} -> !relax.tensor<["?", 4], f32>
// CHECK: "relax.silu"{{.*}} -> !relax.tensor<["?", 4], f32>
// CHECK: "relax.sin"{{.*}} -> !relax.tensor<["?", 4], f32>
// CHECK: "relax.cos"{{.*}} -> !relax.tensor<["?", 4], f32>
// CHECK: "relax.floor"{{.*}} -> !relax.tensor<["?", 4], f32>
// CHECK: "relax.ceil"{{.*}} -> !relax.tensor<["?", 4], f32>
// CHECK: "relax.round"{{.*}} -> !relax.tensor<["?", 4], f32>
// CHECK: "relax.relu"{{.*}} -> !relax.tensor<["?", 4], f32>
// CHECK: "relax.neg"{{.*}} -> !relax.tensor<["?", 4], f32>
// CHECK: "relax.abs"{{.*}} -> !relax.tensor<["?", 4], f32>
// CHECK: "relax.sign"{{.*}} -> !relax.tensor<["?", 4], f32>
func.func @unary_unknown_dim(%x: !relax.tensor<["?", 4], f32>) -> !relax.tensor<"*", f32> {
  %0 = "relax.exp"(%x) : (!relax.tensor<["?", 4], f32>) -> !relax.tensor<"*", f32>
  %1 = "relax.log"(%0) : (!relax.tensor<"*", f32>) -> !relax.tensor<"*", f32>
  %2 = "relax.sqrt"(%1) : (!relax.tensor<"*", f32>) -> !relax.tensor<"*", f32>
  %3 = "relax.rsqrt"(%2) : (!relax.tensor<"*", f32>) -> !relax.tensor<"*", f32>
  %4 = "relax.tanh"(%3) : (!relax.tensor<"*", f32>) -> !relax.tensor<"*", f32>
  %5 = "relax.sigmoid"(%4) : (!relax.tensor<"*", f32>) -> !relax.tensor<"*", f32>
  %6 = "relax.erf"(%5) : (!relax.tensor<"*", f32>) -> !relax.tensor<"*", f32>
  %7 = "relax.gelu"(%6) : (!relax.tensor<"*", f32>) -> !relax.tensor<"*", f32>
  %8 = "relax.gelu_tanh"(%7) : (!relax.tensor<"*", f32>) -> !relax.tensor<"*", f32>
  %9 = "relax.silu"(%8) : (!relax.tensor<"*", f32>) -> !relax.tensor<"*", f32>
  %10 = "relax.sin"(%9) : (!relax.tensor<"*", f32>) -> !relax.tensor<"*", f32>
  %11 = "relax.cos"(%10) : (!relax.tensor<"*", f32>) -> !relax.tensor<"*", f32>
  %12 = "relax.floor"(%11) : (!relax.tensor<"*", f32>) -> !relax.tensor<"*", f32>
  %13 = "relax.ceil"(%12) : (!relax.tensor<"*", f32>) -> !relax.tensor<"*", f32>
  %14 = "relax.round"(%13) : (!relax.tensor<"*", f32>) -> !relax.tensor<"*", f32>
  %15 = "relax.relu"(%14) : (!relax.tensor<"*", f32>) -> !relax.tensor<"*", f32>
  %16 = "relax.neg"(%15) : (!relax.tensor<"*", f32>) -> !relax.tensor<"*", f32>
  %17 = "relax.abs"(%16) : (!relax.tensor<"*", f32>) -> !relax.tensor<"*", f32>
  %18 = "relax.sign"(%17) : (!relax.tensor<"*", f32>) -> !relax.tensor<"*", f32>
  return %18 : !relax.tensor<"*", f32>
}

// CHECK-LABEL: func.func @unary_unknown_rank
// CHECK-SAME: -> !relax.tensor<"*", f32>
// CHECK: "relax.exp"{{.*}} -> !relax.tensor<"*", f32>
// CHECK: "relax.log"{{.*}} -> !relax.tensor<"*", f32>
// CHECK: "relax.sqrt"{{.*}} -> !relax.tensor<"*", f32>
// CHECK: "relax.rsqrt"{{.*}} -> !relax.tensor<"*", f32>
// CHECK: "relax.tanh"{{.*}} -> !relax.tensor<"*", f32>
// CHECK: "relax.sigmoid"{{.*}} -> !relax.tensor<"*", f32>
// CHECK: "relax.erf"{{.*}} -> !relax.tensor<"*", f32>
// CHECK: "relax.gelu"{{.*}} -> !relax.tensor<"*", f32>
// CHECK: "relax.gelu_tanh"{{.*}} -> !relax.tensor<"*", f32>
// CHECK: "relax.silu"{{.*}} -> !relax.tensor<"*", f32>
// CHECK: "relax.sin"{{.*}} -> !relax.tensor<"*", f32>
// CHECK: "relax.cos"{{.*}} -> !relax.tensor<"*", f32>
// CHECK: "relax.floor"{{.*}} -> !relax.tensor<"*", f32>
// CHECK: "relax.ceil"{{.*}} -> !relax.tensor<"*", f32>
// CHECK: "relax.round"{{.*}} -> !relax.tensor<"*", f32>
// CHECK: "relax.relu"{{.*}} -> !relax.tensor<"*", f32>
// CHECK: "relax.neg"{{.*}} -> !relax.tensor<"*", f32>
// CHECK: "relax.abs"{{.*}} -> !relax.tensor<"*", f32>
// CHECK: "relax.sign"{{.*}} -> !relax.tensor<"*", f32>
func.func @unary_unknown_rank(%x: !relax.tensor<"*", f32>) -> !relax.tensor<"*", f32> {
  %0 = "relax.exp"(%x) : (!relax.tensor<"*", f32>) -> !relax.tensor<"*", f32>
  %1 = "relax.log"(%0) : (!relax.tensor<"*", f32>) -> !relax.tensor<"*", f32>
  %2 = "relax.sqrt"(%1) : (!relax.tensor<"*", f32>) -> !relax.tensor<"*", f32>
  %3 = "relax.rsqrt"(%2) : (!relax.tensor<"*", f32>) -> !relax.tensor<"*", f32>
  %4 = "relax.tanh"(%3) : (!relax.tensor<"*", f32>) -> !relax.tensor<"*", f32>
  %5 = "relax.sigmoid"(%4) : (!relax.tensor<"*", f32>) -> !relax.tensor<"*", f32>
  %6 = "relax.erf"(%5) : (!relax.tensor<"*", f32>) -> !relax.tensor<"*", f32>
  %7 = "relax.gelu"(%6) : (!relax.tensor<"*", f32>) -> !relax.tensor<"*", f32>
  %8 = "relax.gelu_tanh"(%7) : (!relax.tensor<"*", f32>) -> !relax.tensor<"*", f32>
  %9 = "relax.silu"(%8) : (!relax.tensor<"*", f32>) -> !relax.tensor<"*", f32>
  %10 = "relax.sin"(%9) : (!relax.tensor<"*", f32>) -> !relax.tensor<"*", f32>
  %11 = "relax.cos"(%10) : (!relax.tensor<"*", f32>) -> !relax.tensor<"*", f32>
  %12 = "relax.floor"(%11) : (!relax.tensor<"*", f32>) -> !relax.tensor<"*", f32>
  %13 = "relax.ceil"(%12) : (!relax.tensor<"*", f32>) -> !relax.tensor<"*", f32>
  %14 = "relax.round"(%13) : (!relax.tensor<"*", f32>) -> !relax.tensor<"*", f32>
  %15 = "relax.relu"(%14) : (!relax.tensor<"*", f32>) -> !relax.tensor<"*", f32>
  %16 = "relax.neg"(%15) : (!relax.tensor<"*", f32>) -> !relax.tensor<"*", f32>
  %17 = "relax.abs"(%16) : (!relax.tensor<"*", f32>) -> !relax.tensor<"*", f32>
  %18 = "relax.sign"(%17) : (!relax.tensor<"*", f32>) -> !relax.tensor<"*", f32>
  return %18 : !relax.tensor<"*", f32>
}

// relu, neg, abs and sign also take integers.
// CHECK-LABEL: func.func @unary_int
// CHECK: "relax.relu"{{.*}} -> !relax.tensor<["n", 3], i32>
// CHECK: "relax.neg"{{.*}} -> !relax.tensor<["n", 3], i32>
// CHECK: "relax.abs"{{.*}} -> !relax.tensor<["n", 3], i32>
// CHECK: "relax.sign"{{.*}} -> !relax.tensor<["n", 3], i32>
func.func @unary_int(%x: !relax.tensor<["n", 3], i32>) {
  %0 = "relax.relu"(%x) : (!relax.tensor<["n", 3], i32>) -> !relax.tensor<"*", none>
  %1 = "relax.neg"(%x) : (!relax.tensor<["n", 3], i32>) -> !relax.tensor<"*", none>
  %2 = "relax.abs"(%x) : (!relax.tensor<["n", 3], i32>) -> !relax.tensor<"*", none>
  %3 = "relax.sign"(%x) : (!relax.tensor<["n", 3], i32>) -> !relax.tensor<"*", none>
  return
}

// CHECK-LABEL: func.func @special_static
// CHECK: "relax.logical_not"{{.*}} -> !relax.tensor<[2, 1], i1>
// CHECK: "relax.leaky_relu"{{.*}} -> !relax.tensor<[3], f32>
// CHECK: "relax.clip"{{.*}} -> !relax.tensor<[3], f32>
// CHECK: "relax.where"{{.*}} -> !relax.tensor<[1, 2, 3], f32>
// CHECK: "relax.astype"{{.*}} -> !relax.tensor<[3], f16>
func.func @special_static(%c: !relax.tensor<[2, 1], i1>, %x: !relax.tensor<[3], f32>, %y: !relax.tensor<[1, 1, 1], f32>) {
  %0 = "relax.logical_not"(%c) : (!relax.tensor<[2, 1], i1>) -> !relax.tensor<"*", none>
  %1 = "relax.leaky_relu"(%x) {alpha = 2.000000e-01 : f64} : (!relax.tensor<[3], f32>) -> !relax.tensor<"*", f32>
  %2 = "relax.clip"(%1) {max = 6.000000e+00 : f64, min = 0.000000e+00 : f64} : (!relax.tensor<"*", f32>) -> !relax.tensor<"*", f32>
  %3 = "relax.where"(%c, %2, %y) : (!relax.tensor<[2, 1], i1>, !relax.tensor<"*", f32>, !relax.tensor<[1, 1, 1], f32>) -> !relax.tensor<"*", f32>
  %4 = "relax.astype"(%x) {dtype = "f16"} : (!relax.tensor<[3], f32>) -> !relax.tensor<"*", none>
  return
}

// CHECK-LABEL: func.func @special_symbolic
// CHECK: "relax.logical_not"{{.*}} -> !relax.tensor<["n", 1], i1>
// CHECK: "relax.leaky_relu"{{.*}} -> !relax.tensor<[4], f32>
// CHECK: "relax.clip"{{.*}} -> !relax.tensor<[4], f32>
// CHECK: "relax.where"{{.*}} -> !relax.tensor<["m", "n", 4], f32>
// CHECK: "relax.astype"{{.*}} -> !relax.tensor<[4], f16>
func.func @special_symbolic(%c: !relax.tensor<["n", 1], i1>, %x: !relax.tensor<[4], f32>, %y: !relax.tensor<["m", 1, 1], f32>) {
  %0 = "relax.logical_not"(%c) : (!relax.tensor<["n", 1], i1>) -> !relax.tensor<"*", none>
  %1 = "relax.leaky_relu"(%x) {alpha = 2.000000e-01 : f64} : (!relax.tensor<[4], f32>) -> !relax.tensor<"*", f32>
  %2 = "relax.clip"(%1) {max = 6.000000e+00 : f64, min = 0.000000e+00 : f64} : (!relax.tensor<"*", f32>) -> !relax.tensor<"*", f32>
  %3 = "relax.where"(%c, %2, %y) : (!relax.tensor<["n", 1], i1>, !relax.tensor<"*", f32>, !relax.tensor<["m", 1, 1], f32>) -> !relax.tensor<"*", f32>
  %4 = "relax.astype"(%x) {dtype = "f16"} : (!relax.tensor<[4], f32>) -> !relax.tensor<"*", none>
  return
}

// CHECK-LABEL: func.func @special_unknown_dim
// CHECK: "relax.logical_not"{{.*}} -> !relax.tensor<["?", 1], i1>
// CHECK: "relax.leaky_relu"{{.*}} -> !relax.tensor<["?", 4], f32>
// CHECK: "relax.clip"{{.*}} -> !relax.tensor<["?", 4], f32>
// CHECK: "relax.where"{{.*}} -> !relax.tensor<[3, 4], f32>
// CHECK: "relax.astype"{{.*}} -> !relax.tensor<["?", 4], f16>
func.func @special_unknown_dim(%c: !relax.tensor<["?", 1], i1>, %x: !relax.tensor<["?", 4], f32>, %y: !relax.tensor<[3, 1], f32>) {
  %0 = "relax.logical_not"(%c) : (!relax.tensor<["?", 1], i1>) -> !relax.tensor<"*", none>
  %1 = "relax.leaky_relu"(%x) {alpha = 2.000000e-01 : f64} : (!relax.tensor<["?", 4], f32>) -> !relax.tensor<"*", f32>
  %2 = "relax.clip"(%1) {max = 6.000000e+00 : f64, min = 0.000000e+00 : f64} : (!relax.tensor<"*", f32>) -> !relax.tensor<"*", f32>
  %3 = "relax.where"(%c, %2, %y) : (!relax.tensor<["?", 1], i1>, !relax.tensor<"*", f32>, !relax.tensor<[3, 1], f32>) -> !relax.tensor<"*", f32>
  %4 = "relax.astype"(%x) {dtype = "f16"} : (!relax.tensor<["?", 4], f32>) -> !relax.tensor<"*", none>
  return
}

// CHECK-LABEL: func.func @special_unknown_rank
// CHECK: "relax.logical_not"{{.*}} -> !relax.tensor<"*", i1>
// CHECK: "relax.leaky_relu"{{.*}} -> !relax.tensor<"*", f32>
// CHECK: "relax.clip"{{.*}} -> !relax.tensor<"*", f32>
// CHECK: "relax.where"{{.*}} -> !relax.tensor<"*", f32>
// CHECK: "relax.astype"{{.*}} -> !relax.tensor<"*", f16>
func.func @special_unknown_rank(%c: !relax.tensor<"*", i1>, %x: !relax.tensor<"*", f32>, %y: !relax.tensor<["n"], f32>) {
  %0 = "relax.logical_not"(%c) : (!relax.tensor<"*", i1>) -> !relax.tensor<"*", none>
  %1 = "relax.leaky_relu"(%x) {alpha = 2.000000e-01 : f64} : (!relax.tensor<"*", f32>) -> !relax.tensor<"*", f32>
  %2 = "relax.clip"(%1) {max = 6.000000e+00 : f64, min = 0.000000e+00 : f64} : (!relax.tensor<"*", f32>) -> !relax.tensor<"*", f32>
  %3 = "relax.where"(%c, %2, %y) : (!relax.tensor<"*", i1>, !relax.tensor<"*", f32>, !relax.tensor<["n"], f32>) -> !relax.tensor<"*", f32>
  %4 = "relax.astype"(%x) {dtype = "f16"} : (!relax.tensor<"*", f32>) -> !relax.tensor<"*", none>
  return
}

// An unknown dtype takes the other operand's; comparisons and logical ops always give i1.
// CHECK-LABEL: func.func @unknown_dtype
// CHECK: "relax.add"{{.*}} -> !relax.tensor<["n", 5], f32>
// CHECK: "relax.less"{{.*}} -> !relax.tensor<["n", 1], i1>
// CHECK: "relax.logical_and"{{.*}} -> !relax.tensor<["n", 1], i1>
// CHECK: "relax.logical_not"{{.*}} -> !relax.tensor<["n", 1], i1>
// CHECK: "relax.exp"{{.*}} -> !relax.tensor<["n", 1], none>
// CHECK: "relax.where"{{.*}} -> !relax.tensor<["n", 5], i32>
// CHECK: "relax.astype"{{.*}} -> !relax.tensor<["n", 1], i8>
func.func @unknown_dtype(%u: !relax.tensor<["n", 1], none>, %f: !relax.tensor<["n", 5], f32>, %i: !relax.tensor<[5], i32>) {
  %0 = "relax.add"(%u, %f) : (!relax.tensor<["n", 1], none>, !relax.tensor<["n", 5], f32>) -> !relax.tensor<"*", none>
  %1 = "relax.less"(%u, %u) : (!relax.tensor<["n", 1], none>, !relax.tensor<["n", 1], none>) -> !relax.tensor<"*", none>
  %2 = "relax.logical_and"(%u, %u) : (!relax.tensor<["n", 1], none>, !relax.tensor<["n", 1], none>) -> !relax.tensor<"*", none>
  %3 = "relax.logical_not"(%u) : (!relax.tensor<["n", 1], none>) -> !relax.tensor<"*", none>
  %4 = "relax.exp"(%u) : (!relax.tensor<["n", 1], none>) -> !relax.tensor<"*", none>
  %5 = "relax.where"(%u, %u, %i) : (!relax.tensor<["n", 1], none>, !relax.tensor<["n", 1], none>, !relax.tensor<[5], i32>) -> !relax.tensor<"*", none>
  %6 = "relax.astype"(%u) {dtype = "i8"} : (!relax.tensor<["n", 1], none>) -> !relax.tensor<"*", none>
  return
}

// CHECK-LABEL: func.func @dataflow
// CHECK-SAME: -> !relax.tensor<["b", "s", 64], f32>
// CHECK: "relax.add"{{.*}} -> !relax.tensor<["b", "s", 64], f32>
// CHECK: "relax.gelu"{{.*}} -> !relax.tensor<["b", "s", 64], f32>
// CHECK: "relax.greater"{{.*}} -> !relax.tensor<["b", "s", 64], i1>
// CHECK: "relax.where"{{.*}} -> !relax.tensor<["b", "s", 64], f32>
// CHECK: scf.yield {{.*}} : !relax.tensor<["b", "s", 64], f32>
func.func @dataflow(%x: !relax.tensor<["b", "s", 64], f32>, %bias: !relax.tensor<[64], f32>) -> !relax.tensor<"*", f32> {
  %r = scf.execute_region -> !relax.tensor<"*", f32> no_inline {
    %0 = "relax.add"(%x, %bias) : (!relax.tensor<["b", "s", 64], f32>, !relax.tensor<[64], f32>) -> !relax.tensor<"*", f32>
    %1 = "relax.gelu"(%0) : (!relax.tensor<"*", f32>) -> !relax.tensor<"*", f32>
    %2 = "relax.greater"(%1, %bias) : (!relax.tensor<"*", f32>, !relax.tensor<[64], f32>) -> !relax.tensor<"*", none>
    %3 = "relax.where"(%2, %1, %0) : (!relax.tensor<"*", none>, !relax.tensor<"*", f32>, !relax.tensor<"*", f32>) -> !relax.tensor<"*", f32>
    scf.yield %3 : !relax.tensor<"*", f32>
  } {relax.dataflow}
  return %r : !relax.tensor<"*", f32>
}

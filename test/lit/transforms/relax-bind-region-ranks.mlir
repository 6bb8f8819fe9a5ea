// RUN: relax-opt %s --relax-infer-shapes --relax-bind-region-dims --split-input-file | FileCheck %s

// Branches of rank 0 and 1 join to an unknown rank; the only use broadcasts the result against a rank-1
// operand, so the scalar is padded to [1] (the same numbers) and the result gets rank 1 and a named dim.

// CHECK-LABEL: func.func @pad_scalar(
// CHECK:         scf.if %{{.*}} -> (!relax.tensor<["?"], f32>) {
// CHECK:           %[[S:.*]] = "relax.constant"
// CHECK:           %[[P:.*]] = "relax.expand_dims"(%[[S]]) {axes = [0]} : (!relax.tensor<[], f32>) -> !relax.tensor<[1], f32>
// CHECK:           "relax.match_cast"(%[[P]]) : (!relax.tensor<[1], f32>) -> !relax.tensor<["?"], f32>
// CHECK:         } else {
// CHECK:           "relax.match_cast"(%{{.*}}) : (!relax.tensor<["n"], f32>) -> !relax.tensor<["?"], f32>
// CHECK:         }
// CHECK:         %[[D:.*]] = "relax.match_cast"(%{{.*}}) : (!relax.tensor<["?"], f32>) -> !relax.tensor<["d0"], f32>
// CHECK:         "relax.multiply"(%{{.*}}, %[[D]]) : (!relax.tensor<["n"], f32>, !relax.tensor<["d0"], f32>) -> !relax.tensor<["max(d0, n) * min(min(d0, n), 1)"], f32>
// CHECK-NOT:     "*"
func.func @pad_scalar(%x: !relax.tensor<["n"], f32>, %p: !relax.tensor<[], i1>) -> !relax.tensor<"*", f32> {
  %c = "relax.condition"(%p) : (!relax.tensor<[], i1>) -> i1
  %r = scf.if %c -> !relax.tensor<"*", f32> {
    %s = "relax.constant"() {value = dense<0.0> : tensor<f32>} : () -> !relax.tensor<[], f32>
    %w = "relax.match_cast"(%s) : (!relax.tensor<[], f32>) -> !relax.tensor<"*", f32>
    scf.yield %w : !relax.tensor<"*", f32>
  } else {
    %w = "relax.match_cast"(%x) : (!relax.tensor<["n"], f32>) -> !relax.tensor<"*", f32>
    scf.yield %w : !relax.tensor<"*", f32>
  }
  %y = "relax.multiply"(%x, %r) : (!relax.tensor<["n"], f32>, !relax.tensor<"*", f32>) -> !relax.tensor<"*", f32>
  return %y : !relax.tensor<"*", f32>
}

// -----

// A use that does not broadcast against an operand of rank >= 1 (here a rank-0 one: padding would change the
// result's rank) leaves the unknown rank, for the lowering to report.

// CHECK-LABEL: func.func @keep_unknown(
// CHECK:         scf.if %{{.*}} -> (!relax.tensor<"*", f32>) {
// CHECK-NOT:       relax.expand_dims
// CHECK:         "relax.add"(%{{.*}}, %{{.*}}) : (!relax.tensor<[], f32>, !relax.tensor<"*", f32>) -> !relax.tensor<"*", f32>
func.func @keep_unknown(%x: !relax.tensor<["n"], f32>, %p: !relax.tensor<[], i1>, %s: !relax.tensor<[], f32>) -> !relax.tensor<"*", f32> {
  %c = "relax.condition"(%p) : (!relax.tensor<[], i1>) -> i1
  %r = scf.if %c -> !relax.tensor<"*", f32> {
    %w = "relax.match_cast"(%s) : (!relax.tensor<[], f32>) -> !relax.tensor<"*", f32>
    scf.yield %w : !relax.tensor<"*", f32>
  } else {
    %w = "relax.match_cast"(%x) : (!relax.tensor<["n"], f32>) -> !relax.tensor<"*", f32>
    scf.yield %w : !relax.tensor<"*", f32>
  }
  %y = "relax.add"(%s, %r) : (!relax.tensor<[], f32>, !relax.tensor<"*", f32>) -> !relax.tensor<"*", f32>
  return %y : !relax.tensor<"*", f32>
}

// relax-specialize-ranks: a public function with tensor parameters of unknown rank becomes one variant per
// rank that type-checks (each dim a fresh symbol), and the original goes.
// RUN: relax-opt %s --pass-pipeline='builtin.module(relax-specialize-ranks{max-rank=2},relax-infer-shapes)' | FileCheck %s

// Elementwise: every rank in 0..max-rank type-checks.
// CHECK-NOT: func.func @unary(
// CHECK-LABEL: func.func @unary__r0(%arg0: !relax.tensor<[], f32> {relax.name = "x"}) -> !relax.tensor<[], f32>
// CHECK-SAME: relax.rank_variant = "{\22of\22: \22unary\22, \22params\22: [0], \22ranks\22: [0]}"
// CHECK: "relax.exp"(%arg0) : (!relax.tensor<[], f32>) -> !relax.tensor<[], f32>
// CHECK-LABEL: func.func @unary__r1(%arg0: !relax.tensor<["x_d0"], f32> {relax.name = "x"}) -> !relax.tensor<["x_d0"], f32>
// CHECK-LABEL: func.func @unary__r2(%arg0: !relax.tensor<["x_d0", "x_d1"], f32> {relax.name = "x"}) -> !relax.tensor<["x_d0", "x_d1"], f32>
// CHECK-NOT: func.func @unary__r3
func.func @unary(%x: !relax.tensor<"*", f32> {relax.name = "x"}) -> !relax.tensor<"*", f32> {
  %0 = "relax.exp"(%x) : (!relax.tensor<"*", f32>) -> !relax.tensor<"*", f32>
  return %0 : !relax.tensor<"*", f32>
}

// A match_cast to a rank keeps only that rank: the cast binds the symbols of its target.
// CHECK-NOT: func.func @cast__r0
// CHECK-NOT: func.func @cast__r1
// CHECK-LABEL: func.func @cast__r2(%arg0: !relax.tensor<["x_d0", "x_d1"], f32> {relax.name = "x"}) -> !relax.tensor<["n", 4], f32>
// CHECK: "relax.match_cast"(%arg0) : (!relax.tensor<["x_d0", "x_d1"], f32>) -> !relax.tensor<["n", 4], f32>
func.func @cast(%x: !relax.tensor<"*", f32> {relax.name = "x"}) -> !relax.tensor<["n", 4], f32> {
  %0 = "relax.match_cast"(%x) : (!relax.tensor<"*", f32>) -> !relax.tensor<["n", 4], f32>
  return %0 : !relax.tensor<["n", 4], f32>
}

// Two parameters of unknown rank: one variant per pair of ranks, broadcast by the usual rules.
// CHECK-LABEL: func.func @pair__r0_0
// CHECK-LABEL: func.func @pair__r1_2(%arg0: !relax.tensor<["a_d0"], f32> {relax.name = "a"}, %arg1: !relax.tensor<["b_d0", "b_d1"], f32> {relax.name = "b"})
// CHECK-LABEL: func.func @pair__r2_2
func.func @pair(%a: !relax.tensor<"*", f32> {relax.name = "a"}, %b: !relax.tensor<"*", f32> {relax.name = "b"}) -> !relax.tensor<"*", f32> {
  %0 = "relax.add"(%a, %b) : (!relax.tensor<"*", f32>, !relax.tensor<"*", f32>) -> !relax.tensor<"*", f32>
  return %0 : !relax.tensor<"*", f32>
}

// Private functions and functions of known rank are left alone.
// CHECK-LABEL: func.func private @helper(%arg0: !relax.tensor<"*", f32>)
func.func private @helper(%x: !relax.tensor<"*", f32>) -> !relax.tensor<"*", f32> {
  return %x : !relax.tensor<"*", f32>
}

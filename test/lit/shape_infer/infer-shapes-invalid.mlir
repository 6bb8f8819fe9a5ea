// relax-infer-shapes reports ill-typed ops at their location.
// RUN: relax-opt %s --split-input-file --verify-diagnostics --relax-infer-shapes

func.func @mismatch(%x: !relax.tensor<["n", 4], f32>, %y: !relax.tensor<[5], f32>) {
  // expected-error@below {{'relax.add' op cannot broadcast 'lhs' ["n", 4], 'rhs' [5]: dim -1 is 4 vs 5}}
  %0 = "relax.add"(%x, %y) : (!relax.tensor<["n", 4], f32>, !relax.tensor<[5], f32>) -> !relax.tensor<"*", f32>
  return
}

// -----

func.func @declared_wrong(%x: !relax.tensor<["n", 4], f32>) {
  // expected-error@below {{result #0 is declared !relax.tensor<[3], f32> but the operands give !relax.tensor<["n"], f32>}}
  %0 = "relax.sum"(%x) {axes = [1], keepdims = false} : (!relax.tensor<["n", 4], f32>) -> !relax.tensor<[3], f32>
  return
}

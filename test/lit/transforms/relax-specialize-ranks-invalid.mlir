// RUN: relax-opt %s --pass-pipeline='builtin.module(relax-specialize-ranks{max-rank=3})' --split-input-file --verify-diagnostics

// expected-error@below {{@f has parameters of unknown rank, but no rank in 0..3 type-checks (rank 0: 'relax.match_cast' op}}
func.func @f(%x: !relax.tensor<"*", f32> {relax.name = "x"}) -> !relax.tensor<[1, 2, 3, 4], f32> {
  %0 = "relax.match_cast"(%x) : (!relax.tensor<"*", f32>) -> !relax.tensor<[1, 2, 3, 4], f32>
  return %0 : !relax.tensor<[1, 2, 3, 4], f32>
}

// -----

module {
  func.func @g(%x: !relax.tensor<"*", f32>) -> !relax.tensor<"*", f32> {
    return %x : !relax.tensor<"*", f32>
  }
  func.func @main(%x: !relax.tensor<[2], f32>) -> !relax.tensor<"*", f32> {
    // expected-error@below {{@g has parameters of unknown rank and is called by another function: make it private, or give its parameters a rank}}
    %0 = "relax.call"(%x) {callee = @g} : (!relax.tensor<[2], f32>) -> !relax.tensor<"*", f32>
    return %0 : !relax.tensor<"*", f32>
  }
}

// Control flow that is ill-formed: diagnostics at the op.
// RUN: relax-opt %s --split-input-file --verify-diagnostics --relax-verify

// A symbol bound by a match_cast inside a branch is not visible after the join.
func.func @symbol_escapes(%x: !relax.tensor<"*", f32>, %p: !relax.tensor<[], i1>) {
  %c = "relax.condition"(%p) : (!relax.tensor<[], i1>) -> i1
  // expected-error@below {{'scf.if' op result #0 uses undefined symbol(s) j}}
  %r = scf.if %c -> !relax.tensor<["j"], f32> {
    %a = "relax.match_cast"(%x) : (!relax.tensor<"*", f32>) -> !relax.tensor<["j"], f32>
    scf.yield %a : !relax.tensor<["j"], f32>
  } else {
    %b = "relax.match_cast"(%x) : (!relax.tensor<"*", f32>) -> !relax.tensor<["j"], f32>
    scf.yield %b : !relax.tensor<["j"], f32>
  }
  return
}

// -----

func.func @symbol_used_after_loop(%x: !relax.tensor<"*", f32>, %k: !relax.prim<"k">) {
  %r = scf.while (%a = %x) : (!relax.tensor<"*", f32>) -> (!relax.tensor<"*", f32>) {
    %c = "relax.condition"(%k) : (!relax.prim<"k">) -> i1
    scf.condition(%c) %a : !relax.tensor<"*", f32>
  } do {
  ^bb0(%a: !relax.tensor<"*", f32>):
    %m = "relax.match_cast"(%a) : (!relax.tensor<"*", f32>) -> !relax.tensor<["j"], f32>
    %w = "relax.match_cast"(%m) : (!relax.tensor<["j"], f32>) -> !relax.tensor<"*", f32>
    scf.yield %w : !relax.tensor<"*", f32>
  }
  // expected-error@below {{'relax.exp' op result #0 uses undefined symbol(s) j}}
  %y = "relax.exp"(%r) : (!relax.tensor<"*", f32>) -> !relax.tensor<["j"], f32>
  return
}

// -----

// No control flow inside a dataflow block.
func.func @if_in_dataflow(%x: !relax.tensor<["n"], f32>, %p: !relax.tensor<[], i1>) -> !relax.tensor<["n"], f32> {
  %0 = scf.execute_region -> !relax.tensor<["n"], f32> no_inline {
    %c = "relax.condition"(%p) : (!relax.tensor<[], i1>) -> i1
    // expected-error@below {{'scf.if' op is not allowed in a relax dataflow block}}
    %r = scf.if %c -> !relax.tensor<["n"], f32> {
      scf.yield %x : !relax.tensor<["n"], f32>
    } else {
      scf.yield %x : !relax.tensor<["n"], f32>
    }
    scf.yield %r : !relax.tensor<["n"], f32>
  } {relax.dataflow}
  return %0 : !relax.tensor<["n"], f32>
}

// -----

func.func @condition_not_scalar(%x: !relax.tensor<["n"], i1>) {
  // expected-error@below {{'relax.condition' op operand 'value' must be a scalar tensor (rank 0), got !relax.tensor<["n"], i1>}}
  %c = "relax.condition"(%x) : (!relax.tensor<["n"], i1>) -> i1
  return
}

// -----

func.func @condition_of_shape(%x: !relax.tensor<["n"], f32>) {
  %s = "relax.shape_of"(%x) : (!relax.tensor<["n"], f32>) -> !relax.shape<["n"]>
  // expected-error@below {{'relax.condition' op operand 'value' must be a scalar tensor or a prim value, got !relax.shape<["n"]>}}
  %c = "relax.condition"(%s) : (!relax.shape<["n"]>) -> i1
  return
}

// -----

func.func @condition_not_i1(%x: !relax.tensor<[], i1>) {
  // expected-error@below {{'relax.condition' op result #0 (cond) must be i1, got i32}}
  %c = "relax.condition"(%x) : (!relax.tensor<[], i1>) -> i32
  return
}

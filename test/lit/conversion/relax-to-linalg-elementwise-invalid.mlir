// RUN: relax-opt %s --split-input-file --verify-diagnostics --convert-relax-to-linalg

// Elementwise ops that have no kernel: the error is at the op, and says what to do.

func.func @bool_subtract(%x: !relax.tensor<["n"], i1>, %y: !relax.tensor<["n"], i1>) -> !relax.tensor<["n"], i1> {
  // expected-error @+1 {{'relax.subtract' op cannot be lowered: relax.subtract: not defined for dtype i1; convert the operands with relax.astype first}}
  %0 = "relax.subtract"(%x, %y) : (!relax.tensor<["n"], i1>, !relax.tensor<["n"], i1>) -> !relax.tensor<["n"], i1>
  return %0 : !relax.tensor<["n"], i1>
}

// -----

// An unknown rank that nothing resolved (relax-bind-region-dims pads a join of ranks only where every use
// broadcasts it against an operand of at least that rank): the error names the op and says to state the rank.

func.func @unknown_rank(%s: !relax.tensor<[], f32>, %r: !relax.tensor<"*", f32>) -> !relax.tensor<"*", f32> {
  // expected-error @+1 {{'relax.add' op cannot be lowered: result #0 has type !relax.tensor<"*", f32>; lowering needs a tensor of known rank and dtype (state the operands' ranks with relax.match_cast first)}}
  %0 = "relax.add"(%s, %r) : (!relax.tensor<[], f32>, !relax.tensor<"*", f32>) -> !relax.tensor<"*", f32>
  return %0 : !relax.tensor<"*", f32>
}

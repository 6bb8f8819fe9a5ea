// RUN: relax-opt %s --split-input-file --verify-diagnostics --convert-relax-to-linalg

// Elementwise ops that have no kernel: the error is at the op, and says what to do.

func.func @bool_subtract(%x: !relax.tensor<["n"], i1>, %y: !relax.tensor<["n"], i1>) -> !relax.tensor<["n"], i1> {
  // expected-error @+1 {{'relax.subtract' op cannot be lowered: relax.subtract: not defined for dtype i1; convert the operands with relax.astype first}}
  %0 = "relax.subtract"(%x, %y) : (!relax.tensor<["n"], i1>, !relax.tensor<["n"], i1>) -> !relax.tensor<["n"], i1>
  return %0 : !relax.tensor<["n"], i1>
}

// RUN: relax-opt %s --split-input-file --verify-diagnostics --convert-relax-to-linalg

// Elementwise ops that have no kernel: the error is at the op, and says what to do.

func.func @bool_subtract(%x: !relax.tensor<["n"], i1>, %y: !relax.tensor<["n"], i1>) -> !relax.tensor<["n"], i1> {
  // expected-error @+1 {{'relax.subtract' op cannot be lowered: relax.subtract: not defined for dtype i1; convert the operands with relax.astype first}}
  %0 = "relax.subtract"(%x, %y) : (!relax.tensor<["n"], i1>, !relax.tensor<["n"], i1>) -> !relax.tensor<["n"], i1>
  return %0 : !relax.tensor<["n"], i1>
}

// -----

func.func @two_symbols(%x: !relax.tensor<["n"], f32>, %y: !relax.tensor<["m"], f32>) -> !relax.tensor<["?"], f32> {
  // expected-error @+1 {{cannot lower broadcasting to !relax.tensor<["?"], f32>}}
  %0 = "relax.add"(%x, %y) : (!relax.tensor<["n"], f32>, !relax.tensor<["m"], f32>) -> !relax.tensor<["?"], f32>
  return %0 : !relax.tensor<["?"], f32>
}

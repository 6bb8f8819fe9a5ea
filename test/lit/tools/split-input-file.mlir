// --split-input-file processes each chunk alone and keeps the file's line numbers.
// RUN: relax-opt %s --split-input-file | FileCheck %s
// RUN: not relax-opt %s --split-input-file --relax-verify 2>&1 | FileCheck %s --check-prefix=ERR

// CHECK-LABEL: func.func @first
// CHECK: // -----
// CHECK-LABEL: func.func @second
func.func @first(%x: !relax.tensor<["n"], f32>) {
  return
}

// -----

func.func @second(%x: !relax.tensor<["n"], f32>) {
  // ERR: split-input-file.mlir:[[# @LINE + 1]]:8: error: 'relax.exp' op result #0 uses undefined symbol(s) q
  %0 = "relax.exp"(%x) : (!relax.tensor<["n"], f32>) -> !relax.tensor<["q"], f32>
  return
}

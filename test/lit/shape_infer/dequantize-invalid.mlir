// Ill-typed relax.dequantize.
// RUN: relax-opt %s --split-input-file --verify-diagnostics --relax-verify

func.func @layout(%d: !relax.tensor<[4, 32], ui8>, %s: !relax.tensor<[4, 2], f16>) {
  // expected-error@below {{unknown layout 'q4_1'}}
  %0 = "relax.dequantize"(%d, %s) {layout = "q4_1"} : (!relax.tensor<[4, 32], ui8>, !relax.tensor<[4, 2], f16>) -> !relax.tensor<"*", f32>
  return
}

// -----

func.func @data_dtype(%d: !relax.tensor<[4, 64], ui8>, %s: !relax.tensor<[4, 2], f16>) {
  // expected-error@below {{layout q8_0 needs i8 data, got ui8}}
  %0 = "relax.dequantize"(%d, %s) {layout = "q8_0"} : (!relax.tensor<[4, 64], ui8>, !relax.tensor<[4, 2], f16>) -> !relax.tensor<"*", f32>
  return
}

// -----

func.func @rows(%d: !relax.tensor<[4, 32], ui8>, %s: !relax.tensor<[3, 2], f16>) {
  // expected-error@below {{data has 4 rows but scales have 3}}
  %0 = "relax.dequantize"(%d, %s) {layout = "q4_0"} : (!relax.tensor<[4, 32], ui8>, !relax.tensor<[3, 2], f16>) -> !relax.tensor<"*", f32>
  return
}

// -----

func.func @columns(%d: !relax.tensor<["n", 30], ui8>, %s: !relax.tensor<["n", 2], f16>) {
  // expected-error@below {{layout q4_0: 2 groups of 32 need 32 data columns, got 30}}
  %0 = "relax.dequantize"(%d, %s) {layout = "q4_0"} : (!relax.tensor<["n", 30], ui8>, !relax.tensor<["n", 2], f16>) -> !relax.tensor<"*", f32>
  return
}

// RUN: relax-opt %s --convert-relax-to-linalg --split-input-file | FileCheck %s

// relax.dequantize q4_0: one parallel linalg.generic over the [rows, k] result; element (r, j) reads scale
// (r, j / 32) and byte (r, 16 * (j / 32) + j % 16), whose high nibble holds the values j % 32 >= 16.
// CHECK-LABEL: func.func private @dequantize_0(
// CHECK-SAME:    %[[D:.*]]: tensor<?x32xi8>, %[[S:.*]]: tensor<?x2xf16>, %[[OUT:.*]]: tensor<?x64xf32>)
// CHECK:         linalg.generic {{.*}} iterator_types = ["parallel", "parallel"]} outs(%[[OUT]]
// CHECK:           %[[SC:.*]] = tensor.extract %[[S]]
// CHECK:           %[[SF:.*]] = arith.extf %[[SC]] : f16 to f32
// CHECK:           arith.cmpi uge
// CHECK:           %[[B:.*]] = tensor.extract %[[D]]
// CHECK:           arith.shrui %[[B]]
// CHECK:           arith.andi
// CHECK:           arith.uitofp {{.*}} : i8 to f32
// CHECK:           arith.subf
// CHECK:           arith.mulf {{.*}}, %[[SF]] : f32
func.func @q4_0(%d: !relax.tensor<["n", 32], ui8>, %s: !relax.tensor<["n", 2], f16>) -> !relax.tensor<["n", 64], f32> {
  %0 = "relax.dequantize"(%d, %s) {layout = "q4_0"} : (!relax.tensor<["n", 32], ui8>, !relax.tensor<["n", 2], f16>) -> !relax.tensor<["n", 64], f32>
  return %0 : !relax.tensor<["n", 64], f32>
}

// -----

// q8_0: a signed byte times its scale (no zero point).
// CHECK-LABEL: func.func private @dequantize_0(
// CHECK-SAME:    %[[D:.*]]: tensor<3x64xi8>, %[[S:.*]]: tensor<3x2xf32>
// CHECK:           %[[Q:.*]] = tensor.extract %[[D]]
// CHECK:           arith.sitofp %[[Q]] : i8 to f32
// CHECK-NOT:       arith.subf
// CHECK:           arith.mulf
func.func @q8_0(%d: !relax.tensor<[3, 64], i8>, %s: !relax.tensor<[3, 2], f32>) -> !relax.tensor<[3, 64], f32> {
  %0 = "relax.dequantize"(%d, %s) {layout = "q8_0"} : (!relax.tensor<[3, 64], i8>, !relax.tensor<[3, 2], f32>) -> !relax.tensor<[3, 64], f32>
  return %0 : !relax.tensor<[3, 64], f32>
}

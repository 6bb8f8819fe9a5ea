// relax-fuse-dequantize-matmul: x @ permute_dims(dequantize(d, s)) becomes relax.dequantize_matmul(x, d, s),
// and the dequantized f32 weight and its transpose are gone. Other patterns stay.
// RUN: relax-opt %s --relax-fuse-dequantize-matmul --split-input-file | FileCheck %s

// CHECK-LABEL: func.func @q4_0
// CHECK-NOT:     relax.dequantize"
// CHECK-NOT:     relax.permute_dims
// CHECK:         %[[Y:.*]] = "relax.dequantize_matmul"(%arg0, %arg1, %arg2) {activations = "f32", layout = "q4_0"} : (!relax.tensor<["b", "s", 64], f32>, !relax.tensor<[33, 32], ui8>, !relax.tensor<[33, 2], f16>) -> !relax.tensor<["b", "s", 33], f32>
// CHECK-NEXT:    return %[[Y]]
func.func @q4_0(%x: !relax.tensor<["b", "s", 64], f32>, %d: !relax.tensor<[33, 32], ui8>, %s: !relax.tensor<[33, 2], f16>) -> !relax.tensor<["b", "s", 33], f32> {
  %w = "relax.dequantize"(%d, %s) {layout = "q4_0"} : (!relax.tensor<[33, 32], ui8>, !relax.tensor<[33, 2], f16>) -> !relax.tensor<[33, 64], f32>
  %t = "relax.permute_dims"(%w) {axes = [1, 0]} : (!relax.tensor<[33, 64], f32>) -> !relax.tensor<[64, 33], f32>
  %y = "relax.matmul"(%x, %t) : (!relax.tensor<["b", "s", 64], f32>, !relax.tensor<[64, 33], f32>) -> !relax.tensor<["b", "s", 33], f32>
  return %y : !relax.tensor<["b", "s", 33], f32>
}

// -----

// The dequantized weight has another use: it stays for that use, the matmul is fused.
// CHECK-LABEL: func.func @shared
// CHECK:         "relax.dequantize"(%arg1, %arg2)
// CHECK-NOT:     relax.permute_dims
// CHECK:         "relax.dequantize_matmul"(%arg0, %arg1, %arg2) {activations = "f32", layout = "q8_0"}
func.func @shared(%x: !relax.tensor<["m", 32], f32>, %d: !relax.tensor<[4, 32], i8>, %s: !relax.tensor<[4, 1], f32>) -> (!relax.tensor<["m", 4], f32>, !relax.tensor<[4, 32], f32>) {
  %w = "relax.dequantize"(%d, %s) {layout = "q8_0"} : (!relax.tensor<[4, 32], i8>, !relax.tensor<[4, 1], f32>) -> !relax.tensor<[4, 32], f32>
  %t = "relax.permute_dims"(%w) {axes = [1, 0]} : (!relax.tensor<[4, 32], f32>) -> !relax.tensor<[32, 4], f32>
  %y = "relax.matmul"(%x, %t) : (!relax.tensor<["m", 32], f32>, !relax.tensor<[32, 4], f32>) -> !relax.tensor<["m", 4], f32>
  return %y, %w : !relax.tensor<["m", 4], f32>, !relax.tensor<[4, 32], f32>
}

// -----

// Not fused: no transpose (x @ W, a [rows, k] weight used as [k, n]), or symbolic weight dims.
// CHECK-LABEL: func.func @untransposed
// CHECK-NOT:     relax.dequantize_matmul
// CHECK:         "relax.matmul"
func.func @untransposed(%x: !relax.tensor<["m", 4], f32>, %d: !relax.tensor<[4, 16], ui8>, %s: !relax.tensor<[4, 1], f16>) -> !relax.tensor<["m", 32], f32> {
  %w = "relax.dequantize"(%d, %s) {layout = "q4_0"} : (!relax.tensor<[4, 16], ui8>, !relax.tensor<[4, 1], f16>) -> !relax.tensor<[4, 32], f32>
  %y = "relax.matmul"(%x, %w) : (!relax.tensor<["m", 4], f32>, !relax.tensor<[4, 32], f32>) -> !relax.tensor<["m", 32], f32>
  return %y : !relax.tensor<["m", 32], f32>
}

// CHECK-LABEL: func.func @symbolic
// CHECK-NOT:     relax.dequantize_matmul
// CHECK:         "relax.matmul"
func.func @symbolic(%x: !relax.tensor<["m", 32], f32>, %d: !relax.tensor<["n", 4], ui32>, %s: !relax.tensor<["n", 1], f16>) -> !relax.tensor<["m", "n"], f32> {
  %w = "relax.dequantize"(%d, %s) {layout = "q4f16_1"} : (!relax.tensor<["n", 4], ui32>, !relax.tensor<["n", 1], f16>) -> !relax.tensor<["n", 32], f32>
  %t = "relax.permute_dims"(%w) {axes = [1, 0]} : (!relax.tensor<["n", 32], f32>) -> !relax.tensor<[32, "n"], f32>
  %y = "relax.matmul"(%x, %t) : (!relax.tensor<["m", 32], f32>, !relax.tensor<[32, "n"], f32>) -> !relax.tensor<["m", "n"], f32>
  return %y : !relax.tensor<["m", "n"], f32>
}

// -----

// permute_dims without axes (reversed: the builder's default) is the same transpose.
// CHECK-LABEL: func.func @default_axes
// CHECK:         "relax.dequantize_matmul"(%arg0, %arg1, %arg2) {activations = "f32", layout = "q4f16_1"} : (!relax.tensor<["m", 32], f32>, !relax.tensor<[5, 4], ui32>, !relax.tensor<[5, 1], f32>) -> !relax.tensor<["m", 5], f32>
func.func @default_axes(%x: !relax.tensor<["m", 32], f32>, %d: !relax.tensor<[5, 4], ui32>, %s: !relax.tensor<[5, 1], f32>) -> !relax.tensor<["m", 5], f32> {
  %w = "relax.dequantize"(%d, %s) {layout = "q4f16_1"} : (!relax.tensor<[5, 4], ui32>, !relax.tensor<[5, 1], f32>) -> !relax.tensor<[5, 32], f32>
  %t = "relax.permute_dims"(%w) {axes} : (!relax.tensor<[5, 32], f32>) -> !relax.tensor<[32, 5], f32>
  %y = "relax.matmul"(%x, %t) : (!relax.tensor<["m", 32], f32>, !relax.tensor<[32, 5], f32>) -> !relax.tensor<["m", 5], f32>
  return %y : !relax.tensor<["m", 5], f32>
}

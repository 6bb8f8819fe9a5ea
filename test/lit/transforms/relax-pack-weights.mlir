// relax-pack-weights: a matmul by a constant 2-D f32 weight [k, n] becomes relax.matmul_packed by a
// constant holding the weight's column panels [np, k, 16] (n padded with zeros to a multiple of 32),
// computed at compile time. A transposed constant (ONNX Gemm transB=1) counts; other matmuls stay.
// Run twice: the second run changes nothing.
// RUN: relax-opt %s --relax-pack-weights --relax-pack-weights --split-input-file | FileCheck %s

// CHECK-LABEL: func.func @packed(
// CHECK-NOT:     relax.matmul"
// Panel 0 holds W's rows k-major (W[k, 0:16], zero-padded), panel 1 only padding.
// CHECK:         %[[P:.*]] = "relax.constant"() {value = dense<{{\[\[\[}}1.000000e+00, 2.000000e+00, 0.000000e+00,
// CHECK-SAME:    [3.000000e+00, 4.000000e+00, 0.000000e+00,
// CHECK-SAME:    [5.000000e+00, 6.000000e+00, 0.000000e+00,
// CHECK-SAME:    : tensor<2x3x16xf32>} : () -> !relax.tensor<[2, 3, 16], f32>
// CHECK-NEXT:    %[[Y:.*]] = "relax.matmul_packed"(%arg0, %[[P]]) {n = 2 : i64} : (!relax.tensor<["b", "s", 3], f32>, !relax.tensor<[2, 3, 16], f32>) -> !relax.tensor<["b", "s", 2], f32>
// CHECK-NEXT:    return %[[Y]]
func.func @packed(%x: !relax.tensor<["b", "s", 3], f32>) -> !relax.tensor<["b", "s", 2], f32> {
  %w = "relax.constant"() {value = dense<[[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]> : tensor<3x2xf32>} : () -> !relax.tensor<[3, 2], f32>
  %y = "relax.matmul"(%x, %w) : (!relax.tensor<["b", "s", 3], f32>, !relax.tensor<[3, 2], f32>) -> !relax.tensor<["b", "s", 2], f32>
  return %y : !relax.tensor<["b", "s", 2], f32>
}

// -----

// A transposed constant (Gemm transB=1) is packed from the original constant.
// CHECK-LABEL: func.func @transposed(
// CHECK-NOT:     relax.permute_dims
// CHECK:         "relax.constant"() {value = dense<{{\[\[\[}}1.000000e+00, 3.000000e+00, 5.000000e+00, 0.000000e+00,
// CHECK-SAME:    [2.000000e+00, 4.000000e+00, 6.000000e+00, 0.000000e+00,
// CHECK:         "relax.matmul_packed"(%arg0, %{{.*}}) {n = 3 : i64} : (!relax.tensor<["m", 2], f32>, !relax.tensor<[2, 2, 16], f32>) -> !relax.tensor<["m", 3], f32>
func.func @transposed(%x: !relax.tensor<["m", 2], f32>) -> !relax.tensor<["m", 3], f32> {
  %w = "relax.constant"() {value = dense<[[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]> : tensor<3x2xf32>} : () -> !relax.tensor<[3, 2], f32>
  %t = "relax.permute_dims"(%w) {axes = [1, 0]} : (!relax.tensor<[3, 2], f32>) -> !relax.tensor<[2, 3], f32>
  %y = "relax.matmul"(%x, %t) : (!relax.tensor<["m", 2], f32>, !relax.tensor<[2, 3], f32>) -> !relax.tensor<["m", 3], f32>
  return %y : !relax.tensor<["m", 3], f32>
}

// -----

// Weights that are parameters, f64 weights and 1-D operands are left alone.
// CHECK-LABEL: func.func @kept(
// CHECK-NOT:     relax.matmul_packed
// CHECK-COUNT-3: "relax.matmul"
func.func @kept(%x: !relax.tensor<["m", 3], f32>, %w: !relax.tensor<[3, 2], f32>, %xd: !relax.tensor<["m", 3], f64>, %v: !relax.tensor<[3], f32>) -> (!relax.tensor<["m", 2], f32>, !relax.tensor<["m", 2], f64>, !relax.tensor<[2], f32>) {
  %c = "relax.constant"() {value = dense<1.0> : tensor<3x2xf64>} : () -> !relax.tensor<[3, 2], f64>
  %c32 = "relax.constant"() {value = dense<1.0> : tensor<3x2xf32>} : () -> !relax.tensor<[3, 2], f32>
  %a = "relax.matmul"(%x, %w) : (!relax.tensor<["m", 3], f32>, !relax.tensor<[3, 2], f32>) -> !relax.tensor<["m", 2], f32>
  %b = "relax.matmul"(%xd, %c) : (!relax.tensor<["m", 3], f64>, !relax.tensor<[3, 2], f64>) -> !relax.tensor<["m", 2], f64>
  %d = "relax.matmul"(%v, %c32) : (!relax.tensor<[3], f32>, !relax.tensor<[3, 2], f32>) -> !relax.tensor<[2], f32>
  return %a, %b, %d : !relax.tensor<["m", 2], f32>, !relax.tensor<["m", 2], f64>, !relax.tensor<[2], f32>
}

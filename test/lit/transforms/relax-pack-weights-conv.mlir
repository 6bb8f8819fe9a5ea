// relax-pack-weights on convolutions: a conv2d (one group, f32, static channels and image) by a constant
// weight [F, C, KH, KW] with F a multiple of the block width becomes relax.conv2d_packed by a constant
// [F/w, C, KH, KW, w] (here w = 4, 128-bit vectors): packed[b, c, i, j, l] = W[b*4 + l, c, i, j].
// Pointwise (1x1, stride 1, no padding), grouped, F not a multiple of w and symbolic images stay conv2d.
// Run twice: the second run changes nothing.
// RUN: relax-opt %s --relax-pack-weights="vector-bits=128" --relax-pack-weights="vector-bits=128" --split-input-file | FileCheck %s

// CHECK-LABEL: func.func @packed(
// CHECK-NOT:     "relax.conv2d"
// CHECK:         %[[P:.*]] = "relax.constant"() {value = dense<{{\[\[\[\[\[}}1.000000e+00, 3.000000e+00, 5.000000e+00, 7.000000e+00], [2.000000e+00, 4.000000e+00, 6.000000e+00, 8.000000e+00]]]]]> : tensor<1x1x1x2x4xf32>}
// CHECK-NEXT:    %[[Y:.*]] = "relax.conv2d_packed"(%arg0, %[[P]]) {dilation = [1, 1], padding = [0, 1, 0, 0], strides = [1, 2]} : (!relax.tensor<["n", 1, 3, 5], f32>, !relax.tensor<[1, 1, 1, 2, 4], f32>) -> !relax.tensor<["n", 4, 3, 3], f32>
// CHECK-NEXT:    return %[[Y]]
func.func @packed(%x: !relax.tensor<["n", 1, 3, 5], f32>) -> !relax.tensor<["n", 4, 3, 3], f32> {
  %w = "relax.constant"() {value = dense<[[[[1.0, 2.0]]], [[[3.0, 4.0]]], [[[5.0, 6.0]]], [[[7.0, 8.0]]]]> : tensor<4x1x1x2xf32>} : () -> !relax.tensor<[4, 1, 1, 2], f32>
  %y = "relax.conv2d"(%x, %w) {dilation = [1, 1], groups = 1 : i64, padding = [0, 1, 0, 0], strides = [1, 2]} : (!relax.tensor<["n", 1, 3, 5], f32>, !relax.tensor<[4, 1, 1, 2], f32>) -> !relax.tensor<["n", 4, 3, 3], f32>
  return %y : !relax.tensor<["n", 4, 3, 3], f32>
}

// -----

// CHECK-LABEL: func.func @kept(
// CHECK-NOT:     relax.conv2d_packed
// CHECK-COUNT-4: "relax.conv2d"
func.func @kept(%x: !relax.tensor<["n", 4, 6, 6], f32>, %xs: !relax.tensor<["n", 4, 6, "w"], f32>) -> (!relax.tensor<["n", 4, 6, 6], f32>, !relax.tensor<["n", 4, 6, 6], f32>, !relax.tensor<["n", 6, 6, 6], f32>, !relax.tensor<["n", 4, 6, "w"], f32>) {
  %w1 = "relax.constant"() {value = dense<1.0> : tensor<4x4x1x1xf32>} : () -> !relax.tensor<[4, 4, 1, 1], f32>
  %wg = "relax.constant"() {value = dense<1.0> : tensor<4x2x3x3xf32>} : () -> !relax.tensor<[4, 2, 3, 3], f32>
  %w6 = "relax.constant"() {value = dense<1.0> : tensor<6x4x3x3xf32>} : () -> !relax.tensor<[6, 4, 3, 3], f32>
  %w3 = "relax.constant"() {value = dense<1.0> : tensor<4x4x3x3xf32>} : () -> !relax.tensor<[4, 4, 3, 3], f32>
  %a = "relax.conv2d"(%x, %w1) {dilation = [1, 1], groups = 1 : i64, padding = [0, 0, 0, 0], strides = [1, 1]} : (!relax.tensor<["n", 4, 6, 6], f32>, !relax.tensor<[4, 4, 1, 1], f32>) -> !relax.tensor<["n", 4, 6, 6], f32>
  %b = "relax.conv2d"(%x, %wg) {dilation = [1, 1], groups = 2 : i64, padding = [1, 1, 1, 1], strides = [1, 1]} : (!relax.tensor<["n", 4, 6, 6], f32>, !relax.tensor<[4, 2, 3, 3], f32>) -> !relax.tensor<["n", 4, 6, 6], f32>
  %c = "relax.conv2d"(%x, %w6) {dilation = [1, 1], groups = 1 : i64, padding = [1, 1, 1, 1], strides = [1, 1]} : (!relax.tensor<["n", 4, 6, 6], f32>, !relax.tensor<[6, 4, 3, 3], f32>) -> !relax.tensor<["n", 6, 6, 6], f32>
  %d = "relax.conv2d"(%xs, %w3) {dilation = [1, 1], groups = 1 : i64, padding = [1, 1, 1, 1], strides = [1, 1]} : (!relax.tensor<["n", 4, 6, "w"], f32>, !relax.tensor<[4, 4, 3, 3], f32>) -> !relax.tensor<["n", 4, 6, "w"], f32>
  return %a, %b, %c, %d : !relax.tensor<["n", 4, 6, 6], f32>, !relax.tensor<["n", 4, 6, 6], f32>, !relax.tensor<["n", 6, 6, 6], f32>, !relax.tensor<["n", 4, 6, "w"], f32>
}

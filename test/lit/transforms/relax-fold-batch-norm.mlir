// relax-fold-batch-norm: batch_norm(conv(x, W) [+ b]) with constant statistics becomes
// conv(x, W * s) + shift, s = gamma / sqrt(var + eps), shift = (b - mean) * s + beta; relax-fold-constants
// then evaluates the new weight and shift. Values are hand-derived: gamma [2, 3], var [0, 8] and
// eps 1 give s = [2 / 1, 3 / 3] = [2, 1].
// RUN: relax-opt %s --relax-fold-batch-norm --relax-fold-constants --relax-dce | FileCheck %s

// W = [[1]], [[2]] (2 output channels, 1x1), mean [1, 2], beta [10, 20]:
// W * s = [2, 2]; shift = beta - mean * s = [10 - 2, 20 - 2] = [8, 18].
// CHECK-LABEL: func.func @conv_bn
// CHECK-NEXT: %[[W:.*]] = "relax.constant"() {value = dense<2.000000e+00> : tensor<2x1x1x1xf32>}
// CHECK-NEXT: %[[C:.*]] = "relax.conv2d"(%arg0, %[[W]]) {dilation = [1, 1], groups = 1 : i64, padding = [0, 0, 0, 0], strides = [1, 1]}
// CHECK-NEXT: %[[S:.*]] = "relax.constant"() {value = dense<{{\[}}{{\[}}[8.000000e+00]], {{\[}}[1.800000e+01]]]> : tensor<2x1x1xf32>}
// CHECK-NEXT: %[[Y:.*]] = "relax.add"(%[[C]], %[[S]])
// CHECK-NEXT: return %[[Y]]
// CHECK-NOT: relax.batch_norm
func.func @conv_bn(%x: !relax.tensor<["n", 1, "h", "w"], f32>) -> !relax.tensor<["n", 2, "h", "w"], f32> {
  %w = "relax.constant"() {value = dense<[[[[1.0]]], [[[2.0]]]]> : tensor<2x1x1x1xf32>} : () -> !relax.tensor<[2, 1, 1, 1], f32>
  %g = "relax.constant"() {value = dense<[2.0, 3.0]> : tensor<2xf32>} : () -> !relax.tensor<[2], f32>
  %b = "relax.constant"() {value = dense<[10.0, 20.0]> : tensor<2xf32>} : () -> !relax.tensor<[2], f32>
  %m = "relax.constant"() {value = dense<[1.0, 2.0]> : tensor<2xf32>} : () -> !relax.tensor<[2], f32>
  %v = "relax.constant"() {value = dense<[0.0, 8.0]> : tensor<2xf32>} : () -> !relax.tensor<[2], f32>
  %c = "relax.conv2d"(%x, %w) {dilation = [1, 1], groups = 1 : i64, padding = [0, 0, 0, 0], strides = [1, 1]} : (!relax.tensor<["n", 1, "h", "w"], f32>, !relax.tensor<[2, 1, 1, 1], f32>) -> !relax.tensor<["n", 2, "h", "w"], f32>
  %y = "relax.batch_norm"(%c, %g, %b, %m, %v) {axis = 1 : i64, epsilon = 1.0 : f64} : (!relax.tensor<["n", 2, "h", "w"], f32>, !relax.tensor<[2], f32>, !relax.tensor<[2], f32>, !relax.tensor<[2], f32>, !relax.tensor<[2], f32>) -> !relax.tensor<["n", 2, "h", "w"], f32>
  return %y : !relax.tensor<["n", 2, "h", "w"], f32>
}

// A conv1d with a bias add first, bias [5, 6]: shift = (b - mean) * s + beta = [(5 - 1) * 2 + 10, (6 - 2) * 1 + 20] = [18, 24].
// CHECK-LABEL: func.func @conv1d_bias_bn
// CHECK: %[[C:.*]] = "relax.conv1d"
// CHECK-NEXT: %[[S:.*]] = "relax.constant"() {value = dense<{{\[}}[1.800000e+01], [2.400000e+01]]> : tensor<2x1xf32>}
// CHECK-NEXT: %[[Y:.*]] = "relax.add"(%[[C]], %[[S]])
// CHECK-NEXT: return %[[Y]]
func.func @conv1d_bias_bn(%x: !relax.tensor<["n", 1, 7], f32>) -> !relax.tensor<["n", 2, 7], f32> {
  %w = "relax.constant"() {value = dense<[[[1.0]], [[2.0]]]> : tensor<2x1x1xf32>} : () -> !relax.tensor<[2, 1, 1], f32>
  %bias = "relax.constant"() {value = dense<[[5.0], [6.0]]> : tensor<2x1xf32>} : () -> !relax.tensor<[2, 1], f32>
  %g = "relax.constant"() {value = dense<[2.0, 3.0]> : tensor<2xf32>} : () -> !relax.tensor<[2], f32>
  %b = "relax.constant"() {value = dense<[10.0, 20.0]> : tensor<2xf32>} : () -> !relax.tensor<[2], f32>
  %m = "relax.constant"() {value = dense<[1.0, 2.0]> : tensor<2xf32>} : () -> !relax.tensor<[2], f32>
  %v = "relax.constant"() {value = dense<[0.0, 8.0]> : tensor<2xf32>} : () -> !relax.tensor<[2], f32>
  %c = "relax.conv1d"(%x, %w) {dilation = [1], groups = 1 : i64, padding = [0, 0], strides = [1]} : (!relax.tensor<["n", 1, 7], f32>, !relax.tensor<[2, 1, 1], f32>) -> !relax.tensor<["n", 2, 7], f32>
  %a = "relax.add"(%c, %bias) : (!relax.tensor<["n", 2, 7], f32>, !relax.tensor<[2, 1], f32>) -> !relax.tensor<["n", 2, 7], f32>
  %y = "relax.batch_norm"(%a, %g, %b, %m, %v) {axis = 1 : i64, epsilon = 1.0 : f64} : (!relax.tensor<["n", 2, 7], f32>, !relax.tensor<[2], f32>, !relax.tensor<[2], f32>, !relax.tensor<[2], f32>, !relax.tensor<[2], f32>) -> !relax.tensor<["n", 2, 7], f32>
  return %y : !relax.tensor<["n", 2, 7], f32>
}

// Not folded: statistics that are function arguments, a convolution with a second use, a weight that
// is an argument.
// CHECK-LABEL: func.func @kept
// CHECK-COUNT-3: "relax.batch_norm"
func.func @kept(%x: !relax.tensor<["n", 1, 4, 4], f32>, %w2: !relax.tensor<[2, 1, 1, 1], f32>, %var: !relax.tensor<[2], f32>) -> (!relax.tensor<["n", 2, 4, 4], f32>, !relax.tensor<["n", 2, 4, 4], f32>, !relax.tensor<["n", 2, 4, 4], f32>, !relax.tensor<["n", 2, 4, 4], f32>) {
  %w = "relax.constant"() {value = dense<1.0> : tensor<2x1x1x1xf32>} : () -> !relax.tensor<[2, 1, 1, 1], f32>
  %s = "relax.constant"() {value = dense<1.0> : tensor<2xf32>} : () -> !relax.tensor<[2], f32>
  %c = "relax.conv2d"(%x, %w) {dilation = [1, 1], groups = 1 : i64, padding = [0, 0, 0, 0], strides = [1, 1]} : (!relax.tensor<["n", 1, 4, 4], f32>, !relax.tensor<[2, 1, 1, 1], f32>) -> !relax.tensor<["n", 2, 4, 4], f32>
  %y0 = "relax.batch_norm"(%c, %s, %s, %s, %var) {axis = 1 : i64, epsilon = 1.0e-05 : f64} : (!relax.tensor<["n", 2, 4, 4], f32>, !relax.tensor<[2], f32>, !relax.tensor<[2], f32>, !relax.tensor<[2], f32>, !relax.tensor<[2], f32>) -> !relax.tensor<["n", 2, 4, 4], f32>
  %c1 = "relax.conv2d"(%x, %w) {dilation = [1, 1], groups = 1 : i64, padding = [0, 0, 0, 0], strides = [1, 1]} : (!relax.tensor<["n", 1, 4, 4], f32>, !relax.tensor<[2, 1, 1, 1], f32>) -> !relax.tensor<["n", 2, 4, 4], f32>
  %y1 = "relax.batch_norm"(%c1, %s, %s, %s, %s) {axis = 1 : i64, epsilon = 1.0e-05 : f64} : (!relax.tensor<["n", 2, 4, 4], f32>, !relax.tensor<[2], f32>, !relax.tensor<[2], f32>, !relax.tensor<[2], f32>, !relax.tensor<[2], f32>) -> !relax.tensor<["n", 2, 4, 4], f32>
  %c2 = "relax.conv2d"(%x, %w2) {dilation = [1, 1], groups = 1 : i64, padding = [0, 0, 0, 0], strides = [1, 1]} : (!relax.tensor<["n", 1, 4, 4], f32>, !relax.tensor<[2, 1, 1, 1], f32>) -> !relax.tensor<["n", 2, 4, 4], f32>
  %y2 = "relax.batch_norm"(%c2, %s, %s, %s, %s) {axis = 1 : i64, epsilon = 1.0e-05 : f64} : (!relax.tensor<["n", 2, 4, 4], f32>, !relax.tensor<[2], f32>, !relax.tensor<[2], f32>, !relax.tensor<[2], f32>, !relax.tensor<[2], f32>) -> !relax.tensor<["n", 2, 4, 4], f32>
  return %y0, %y1, %c1, %y2 : !relax.tensor<["n", 2, 4, 4], f32>, !relax.tensor<["n", 2, 4, 4], f32>, !relax.tensor<["n", 2, 4, 4], f32>, !relax.tensor<["n", 2, 4, 4], f32>
}

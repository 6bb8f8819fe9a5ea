// relax-fuse-attention: matmul(softmax(where(mask, matmul(q, kt) / c, fill)), v) becomes relax.attention;
// a mask made from one arange (key <= query) becomes causal = true, and the mask's ops are gone.
// RUN: relax-opt %s --relax-fuse-attention --split-input-file | FileCheck %s

// CHECK-LABEL: func.func @causal
// CHECK-NOT:     relax.arange
// CHECK-NOT:     relax.softmax
// CHECK:         %[[Y:.*]] = "relax.attention"(%arg0, %[[KT:.*]], %arg2) {causal = true, mask_value = -1.000000e+09 : f64, scale = 1.250000e-01 : f64}
// CHECK-NEXT:    return %[[Y]]
func.func @causal(%q: !relax.tensor<["b", 2, "s", 64], f32>, %k: !relax.tensor<["b", 2, "s", 64], f32>, %v: !relax.tensor<["b", 2, "s", 64], f32>) -> !relax.tensor<["b", 2, "s", 64], f32> {
  %pos = "relax.arange"() {dtype = "i64", end = "s", start = 0 : i64, step = 1 : i64} : () -> !relax.tensor<["s"], i64>
  %rows = "relax.expand_dims"(%pos) {axes = [1]} : (!relax.tensor<["s"], i64>) -> !relax.tensor<["s", 1], i64>
  %cols = "relax.expand_dims"(%pos) {axes = [0]} : (!relax.tensor<["s"], i64>) -> !relax.tensor<[1, "s"], i64>
  %lt = "relax.less"(%rows, %cols) : (!relax.tensor<["s", 1], i64>, !relax.tensor<[1, "s"], i64>) -> !relax.tensor<["s", "s"], i1>
  %mask = "relax.logical_not"(%lt) : (!relax.tensor<["s", "s"], i1>) -> !relax.tensor<["s", "s"], i1>
  %kt = "relax.permute_dims"(%k) {axes = [0, 1, 3, 2]} : (!relax.tensor<["b", 2, "s", 64], f32>) -> !relax.tensor<["b", 2, 64, "s"], f32>
  %s = "relax.matmul"(%q, %kt) : (!relax.tensor<["b", 2, "s", 64], f32>, !relax.tensor<["b", 2, 64, "s"], f32>) -> !relax.tensor<["b", 2, "s", "s"], f32>
  %c = "relax.constant"() {value = dense<8.0> : tensor<f32>} : () -> !relax.tensor<[], f32>
  %d = "relax.divide"(%s, %c) : (!relax.tensor<["b", 2, "s", "s"], f32>, !relax.tensor<[], f32>) -> !relax.tensor<["b", 2, "s", "s"], f32>
  %neg = "relax.constant"() {value = dense<-1.0e9> : tensor<f32>} : () -> !relax.tensor<[], f32>
  %w = "relax.where"(%mask, %d, %neg) : (!relax.tensor<["s", "s"], i1>, !relax.tensor<["b", 2, "s", "s"], f32>, !relax.tensor<[], f32>) -> !relax.tensor<["b", 2, "s", "s"], f32>
  %p = "relax.softmax"(%w) {axis = -1 : i64} : (!relax.tensor<["b", 2, "s", "s"], f32>) -> !relax.tensor<["b", 2, "s", "s"], f32>
  %y = "relax.matmul"(%p, %v) : (!relax.tensor<["b", 2, "s", "s"], f32>, !relax.tensor<["b", 2, "s", 64], f32>) -> !relax.tensor<["b", 2, "s", 64], f32>
  return %y : !relax.tensor<["b", 2, "s", 64], f32>
}

// -----

// An explicit mask stays an operand; the probabilities have a second use here: nothing is fused.
// CHECK-LABEL: func.func @probs_used
// CHECK:         relax.softmax
// CHECK-NOT:     relax.attention
func.func @probs_used(%q: !relax.tensor<[1, 2, 4, 8], f32>, %kt: !relax.tensor<[1, 2, 8, 4], f32>, %v: !relax.tensor<[1, 2, 4, 8], f32>, %mask: !relax.tensor<[4, 4], i1>) -> (!relax.tensor<[1, 2, 4, 8], f32>, !relax.tensor<[1, 2, 4, 4], f32>) {
  %s = "relax.matmul"(%q, %kt) : (!relax.tensor<[1, 2, 4, 8], f32>, !relax.tensor<[1, 2, 8, 4], f32>) -> !relax.tensor<[1, 2, 4, 4], f32>
  %neg = "relax.constant"() {value = dense<0xFF800000> : tensor<f32>} : () -> !relax.tensor<[], f32>
  %w = "relax.where"(%mask, %s, %neg) : (!relax.tensor<[4, 4], i1>, !relax.tensor<[1, 2, 4, 4], f32>, !relax.tensor<[], f32>) -> !relax.tensor<[1, 2, 4, 4], f32>
  %p = "relax.softmax"(%w) {axis = 3 : i64} : (!relax.tensor<[1, 2, 4, 4], f32>) -> !relax.tensor<[1, 2, 4, 4], f32>
  %y = "relax.matmul"(%p, %v) : (!relax.tensor<[1, 2, 4, 4], f32>, !relax.tensor<[1, 2, 4, 8], f32>) -> !relax.tensor<[1, 2, 4, 8], f32>
  return %y, %p : !relax.tensor<[1, 2, 4, 8], f32>, !relax.tensor<[1, 2, 4, 4], f32>
}

// -----

// CHECK-LABEL: func.func @masked
// CHECK:         "relax.attention"(%arg0, %arg1, %arg2, %arg3) {causal = false, mask_value = 0xFFF0000000000000 : f64, scale = 1.000000e+00 : f64}
func.func @masked(%q: !relax.tensor<[1, 2, 4, 8], f32>, %kt: !relax.tensor<[1, 2, 8, 4], f32>, %v: !relax.tensor<[1, 2, 4, 8], f32>, %mask: !relax.tensor<[4, 4], i1>) -> !relax.tensor<[1, 2, 4, 8], f32> {
  %s = "relax.matmul"(%q, %kt) : (!relax.tensor<[1, 2, 4, 8], f32>, !relax.tensor<[1, 2, 8, 4], f32>) -> !relax.tensor<[1, 2, 4, 4], f32>
  %neg = "relax.constant"() {value = dense<0xFF800000> : tensor<f32>} : () -> !relax.tensor<[], f32>
  %w = "relax.where"(%mask, %s, %neg) : (!relax.tensor<[4, 4], i1>, !relax.tensor<[1, 2, 4, 4], f32>, !relax.tensor<[], f32>) -> !relax.tensor<[1, 2, 4, 4], f32>
  %p = "relax.softmax"(%w) {axis = 3 : i64} : (!relax.tensor<[1, 2, 4, 4], f32>) -> !relax.tensor<[1, 2, 4, 4], f32>
  %y = "relax.matmul"(%p, %v) : (!relax.tensor<[1, 2, 4, 4], f32>, !relax.tensor<[1, 2, 4, 8], f32>) -> !relax.tensor<[1, 2, 4, 8], f32>
  return %y : !relax.tensor<[1, 2, 4, 8], f32>
}

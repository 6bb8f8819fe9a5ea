// relax-fuse-attention: matmul(softmax(where(mask, matmul(q, kt) / c, fill)), v) becomes relax.attention;
// a mask made from one arange (key <= query) becomes causal = true, and the mask's ops are gone.
// ONNX's Attention form (an additive where(mask, 0, -inf) bias, a zero guard for rows that see no key)
// fuses too; its causal mask over cached keys (queries start at position p) is causal = true as well.
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

// -----

// CHECK-LABEL: func.func @onnx_causal_with_cache
// CHECK-NOT:     relax.where
// CHECK-NOT:     relax.softmax
// CHECK:         "relax.attention"(%{{.*}}, %{{.*}}, %arg2) {causal = true, mask_value = 0xFFF0000000000000 : f64, scale = 5.000000e-01 : f64}
func.func @onnx_causal_with_cache(%q: !relax.tensor<["b", 2, "s", 16], f32>, %k: !relax.tensor<["b", 2, "p + s", 16], f32>, %v: !relax.tensor<["b", 2, "p + s", 16], f32>) -> !relax.tensor<["b", 2, "s", 16], f32> {
  %half = "relax.constant"() {value = dense<5.000000e-01> : tensor<f32>} : () -> !relax.tensor<[], f32>
  %qs = "relax.multiply"(%q, %half) : (!relax.tensor<["b", 2, "s", 16], f32>, !relax.tensor<[], f32>) -> !relax.tensor<["b", 2, "s", 16], f32>
  %kt = "relax.permute_dims"(%k) {axes = [0, 1, 3, 2]} : (!relax.tensor<["b", 2, "p + s", 16], f32>) -> !relax.tensor<["b", 2, 16, "p + s"], f32>
  %s = "relax.matmul"(%qs, %kt) : (!relax.tensor<["b", 2, "s", 16], f32>, !relax.tensor<["b", 2, 16, "p + s"], f32>) -> !relax.tensor<["b", 2, "s", "p + s"], f32>
  %c0 = "relax.arange"() {dtype = "i64", end = "p + s", start = 0 : i64, step = 1 : i64} : () -> !relax.tensor<["p + s"], i64>
  %cols = "relax.reshape"(%c0) {shape = [1, "p + s"]} : (!relax.tensor<["p + s"], i64>) -> !relax.tensor<[1, "p + s"], i64>
  %r0 = "relax.arange"() {dtype = "i64", end = "p + s", start = "p", step = 1 : i64} : () -> !relax.tensor<["s"], i64>
  %rows = "relax.reshape"(%r0) {shape = ["s", 1]} : (!relax.tensor<["s"], i64>) -> !relax.tensor<["s", 1], i64>
  %allowed = "relax.less_equal"(%cols, %rows) : (!relax.tensor<[1, "p + s"], i64>, !relax.tensor<["s", 1], i64>) -> !relax.tensor<["s", "p + s"], i1>
  %zero = "relax.constant"() {value = dense<0.000000e+00> : tensor<f32>} : () -> !relax.tensor<[], f32>
  %ninf = "relax.constant"() {value = dense<0xFF800000> : tensor<f32>} : () -> !relax.tensor<[], f32>
  %bias = "relax.where"(%allowed, %zero, %ninf) : (!relax.tensor<["s", "p + s"], i1>, !relax.tensor<[], f32>, !relax.tensor<[], f32>) -> !relax.tensor<["s", "p + s"], f32>
  %biased = "relax.add"(%s, %bias) : (!relax.tensor<["b", 2, "s", "p + s"], f32>, !relax.tensor<["s", "p + s"], f32>) -> !relax.tensor<["b", 2, "s", "p + s"], f32>
  %p = "relax.softmax"(%biased) {axis = -1 : i64} : (!relax.tensor<["b", 2, "s", "p + s"], f32>) -> !relax.tensor<["b", 2, "s", "p + s"], f32>
  %rmax = "relax.max"(%bias) {axes = [-1], keepdims = true} : (!relax.tensor<["s", "p + s"], f32>) -> !relax.tensor<["s", 1], f32>
  %empty = "relax.equal"(%rmax, %ninf) : (!relax.tensor<["s", 1], f32>, !relax.tensor<[], f32>) -> !relax.tensor<["s", 1], i1>
  %guarded = "relax.where"(%empty, %zero, %p) : (!relax.tensor<["s", 1], i1>, !relax.tensor<[], f32>, !relax.tensor<["b", 2, "s", "p + s"], f32>) -> !relax.tensor<["b", 2, "s", "p + s"], f32>
  %y = "relax.matmul"(%guarded, %v) : (!relax.tensor<["b", 2, "s", "p + s"], f32>, !relax.tensor<["b", 2, "p + s", 16], f32>) -> !relax.tensor<["b", 2, "s", 16], f32>
  return %y : !relax.tensor<["b", 2, "s", 16], f32>
}

// -----

// The same chain over an explicit mask: a row of it may see no key, so the guard stays, on the output.
// CHECK-LABEL: func.func @onnx_masked
// CHECK:         %[[A:.*]] = "relax.attention"(%arg0, %arg1, %arg2, %arg3) {causal = false
// CHECK:         %[[G:.*]] = "relax.where"(%{{.*}}, %{{.*}}, %[[A]])
// CHECK-NEXT:    return %[[G]]
func.func @onnx_masked(%q: !relax.tensor<[1, 2, 4, 8], f32>, %kt: !relax.tensor<[1, 2, 8, 4], f32>, %v: !relax.tensor<[1, 2, 4, 8], f32>, %mask: !relax.tensor<[4, 4], i1>) -> !relax.tensor<[1, 2, 4, 8], f32> {
  %s = "relax.matmul"(%q, %kt) : (!relax.tensor<[1, 2, 4, 8], f32>, !relax.tensor<[1, 2, 8, 4], f32>) -> !relax.tensor<[1, 2, 4, 4], f32>
  %zero = "relax.constant"() {value = dense<0.000000e+00> : tensor<f32>} : () -> !relax.tensor<[], f32>
  %ninf = "relax.constant"() {value = dense<0xFF800000> : tensor<f32>} : () -> !relax.tensor<[], f32>
  %bias = "relax.where"(%mask, %zero, %ninf) : (!relax.tensor<[4, 4], i1>, !relax.tensor<[], f32>, !relax.tensor<[], f32>) -> !relax.tensor<[4, 4], f32>
  %biased = "relax.add"(%s, %bias) : (!relax.tensor<[1, 2, 4, 4], f32>, !relax.tensor<[4, 4], f32>) -> !relax.tensor<[1, 2, 4, 4], f32>
  %p = "relax.softmax"(%biased) {axis = -1 : i64} : (!relax.tensor<[1, 2, 4, 4], f32>) -> !relax.tensor<[1, 2, 4, 4], f32>
  %rmax = "relax.max"(%bias) {axes = [-1], keepdims = true} : (!relax.tensor<[4, 4], f32>) -> !relax.tensor<[4, 1], f32>
  %empty = "relax.equal"(%rmax, %ninf) : (!relax.tensor<[4, 1], f32>, !relax.tensor<[], f32>) -> !relax.tensor<[4, 1], i1>
  %guarded = "relax.where"(%empty, %zero, %p) : (!relax.tensor<[4, 1], i1>, !relax.tensor<[], f32>, !relax.tensor<[1, 2, 4, 4], f32>) -> !relax.tensor<[1, 2, 4, 4], f32>
  %y = "relax.matmul"(%guarded, %v) : (!relax.tensor<[1, 2, 4, 4], f32>, !relax.tensor<[1, 2, 4, 8], f32>) -> !relax.tensor<[1, 2, 4, 8], f32>
  return %y : !relax.tensor<[1, 2, 4, 8], f32>
}

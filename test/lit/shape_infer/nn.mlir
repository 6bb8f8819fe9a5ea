// Shape deduction of matmul, reductions and the neural-network ops: each op is written with a coarse
// result type and relax-infer-shapes refines it (static, symbolic, unknown dims "?", unknown rank "*").
// RUN: relax-opt %s --relax-infer-shapes | FileCheck %s
// RUN: relax-opt %s --relax-infer-shapes | relax-opt --relax-infer-shapes --relax-verify | FileCheck %s

// CHECK-LABEL: func.func @matmul
// CHECK: "relax.matmul"{{.*}} -> !relax.tensor<[2, 6, 7, 5], f32>
// CHECK: "relax.matmul"{{.*}} -> !relax.tensor<["b", "s", 64], f32>
// CHECK: "relax.matmul"{{.*}} -> !relax.tensor<["b", "n"], f32>
// CHECK: "relax.matmul"{{.*}} -> !relax.tensor<["b", "s"], f32>
// CHECK: "relax.matmul"{{.*}} -> !relax.tensor<[], f32>
// CHECK: "relax.matmul"{{.*}} -> !relax.tensor<["?", "?"], f32>
// CHECK: "relax.matmul"{{.*}} -> !relax.tensor<"*", f32>
func.func @matmul(%a: !relax.tensor<[2, 1, 7, 3], f32>, %b: !relax.tensor<[6, 3, 5], f32>,
                  %x: !relax.tensor<["b", "s", 512], f32>, %w: !relax.tensor<[512, 64], f32>,
                  %v: !relax.tensor<["k"], f32>, %m: !relax.tensor<["b", "k", "n"], f32>,
                  %p: !relax.tensor<["b", "s", "k"], f32>,
                  %u: !relax.tensor<["?", 4], f32>, %uw: !relax.tensor<[4, "?"], f32>,
                  %r: !relax.tensor<"*", f32>) {
  %0 = "relax.matmul"(%a, %b) : (!relax.tensor<[2, 1, 7, 3], f32>, !relax.tensor<[6, 3, 5], f32>) -> !relax.tensor<"*", f32>
  %1 = "relax.matmul"(%x, %w) : (!relax.tensor<["b", "s", 512], f32>, !relax.tensor<[512, 64], f32>) -> !relax.tensor<"*", f32>
  %2 = "relax.matmul"(%v, %m) : (!relax.tensor<["k"], f32>, !relax.tensor<["b", "k", "n"], f32>) -> !relax.tensor<"*", f32>
  %3 = "relax.matmul"(%p, %v) : (!relax.tensor<["b", "s", "k"], f32>, !relax.tensor<["k"], f32>) -> !relax.tensor<"*", f32>
  %4 = "relax.matmul"(%v, %v) : (!relax.tensor<["k"], f32>, !relax.tensor<["k"], f32>) -> !relax.tensor<"*", f32>
  %5 = "relax.matmul"(%u, %uw) : (!relax.tensor<["?", 4], f32>, !relax.tensor<[4, "?"], f32>) -> !relax.tensor<"*", f32>
  %6 = "relax.matmul"(%r, %w) : (!relax.tensor<"*", f32>, !relax.tensor<[512, 64], f32>) -> !relax.tensor<"*", f32>
  return
}

// CHECK-LABEL: func.func @reductions
// CHECK: "relax.sum"{{.*}} -> !relax.tensor<[2, 4], f32>
// CHECK: "relax.mean"{{.*}} -> !relax.tensor<[1, 3, 1], f32>
// CHECK: "relax.max"{{.*}} -> !relax.tensor<[], f32>
// CHECK: "relax.min"{{.*}} -> !relax.tensor<[1, 1, 1], f32>
// CHECK: "relax.prod"{{.*}} -> !relax.tensor<["n", "2 * k"], f32>
// CHECK: "relax.variance"{{.*}} -> !relax.tensor<["n", 1, "2 * k"], f32>
// CHECK: "relax.sum"{{.*}} -> !relax.tensor<["?"], f32>
// CHECK: "relax.mean"{{.*}} -> !relax.tensor<[], f32>
// CHECK: "relax.variance"{{.*}} -> !relax.tensor<"*", f32>
func.func @reductions(%x: !relax.tensor<[2, 3, 4], f32>, %s: !relax.tensor<["n", "m + 1", "2 * k"], f32>,
                      %n: !relax.tensor<["m"], f32>, %k: !relax.tensor<["k"], f32>,
                      %u: !relax.tensor<["?", 4], f32>, %r: !relax.tensor<"*", f32>) {
  %0 = "relax.sum"(%x) {axes = [1], keepdims = false} : (!relax.tensor<[2, 3, 4], f32>) -> !relax.tensor<"*", f32>
  %1 = "relax.mean"(%x) {axes = [-1, 0], keepdims = true} : (!relax.tensor<[2, 3, 4], f32>) -> !relax.tensor<"*", f32>
  %2 = "relax.max"(%x) {axes = unit, keepdims = false} : (!relax.tensor<[2, 3, 4], f32>) -> !relax.tensor<"*", f32>
  %3 = "relax.min"(%x) {axes = unit, keepdims = true} : (!relax.tensor<[2, 3, 4], f32>) -> !relax.tensor<"*", f32>
  %4 = "relax.prod"(%s) {axes = [-2], keepdims = false} : (!relax.tensor<["n", "m + 1", "2 * k"], f32>) -> !relax.tensor<"*", f32>
  %5 = "relax.variance"(%s) {axes = [1], keepdims = true} : (!relax.tensor<["n", "m + 1", "2 * k"], f32>) -> !relax.tensor<"*", f32>
  %6 = "relax.sum"(%u) {axes = [1], keepdims = false} : (!relax.tensor<["?", 4], f32>) -> !relax.tensor<"*", f32>
  %7 = "relax.mean"(%r) {axes = unit, keepdims = false} : (!relax.tensor<"*", f32>) -> !relax.tensor<"*", f32>
  %8 = "relax.variance"(%r) {axes = [0], keepdims = true} : (!relax.tensor<"*", f32>) -> !relax.tensor<"*", f32>
  return
}

// CHECK-LABEL: func.func @arg_reductions
// CHECK: "relax.argmax"{{.*}} -> !relax.tensor<[2, 4], i64>
// CHECK: "relax.argmin"{{.*}} -> !relax.tensor<[2, 3, 1], i64>
// CHECK: "relax.argmax"{{.*}} -> !relax.tensor<[], i64>
// CHECK: "relax.argmin"{{.*}} -> !relax.tensor<["n"], i64>
// CHECK: "relax.argmax"{{.*}} -> !relax.tensor<["?"], i64>
// CHECK: "relax.argmin"{{.*}} -> !relax.tensor<"*", i64>
func.func @arg_reductions(%x: !relax.tensor<[2, 3, 4], f32>, %s: !relax.tensor<["n", "m + 1"], f16>, %m: !relax.tensor<["m"], f16>,
                          %u: !relax.tensor<["?", 4], f32>, %r: !relax.tensor<"*", f32>) {
  %0 = "relax.argmax"(%x) {axis = [1], keepdims = false} : (!relax.tensor<[2, 3, 4], f32>) -> !relax.tensor<"*", i64>
  %1 = "relax.argmin"(%x) {axis = [-1], keepdims = true} : (!relax.tensor<[2, 3, 4], f32>) -> !relax.tensor<"*", i64>
  %2 = "relax.argmax"(%x) {axis = unit, keepdims = false} : (!relax.tensor<[2, 3, 4], f32>) -> !relax.tensor<"*", i64>
  %3 = "relax.argmin"(%s) {axis = [1], keepdims = false} : (!relax.tensor<["n", "m + 1"], f16>) -> !relax.tensor<"*", i64>
  %4 = "relax.argmax"(%u) {axis = [1], keepdims = false} : (!relax.tensor<["?", 4], f32>) -> !relax.tensor<"*", i64>
  %5 = "relax.argmin"(%r) {axis = [0], keepdims = false} : (!relax.tensor<"*", f32>) -> !relax.tensor<"*", i64>
  return
}

// CHECK-LABEL: func.func @cumsum_topk
// CHECK: "relax.cumsum"{{.*}} -> !relax.tensor<[2, 3], i32>
// CHECK: "relax.cumsum"{{.*}} -> !relax.tensor<["n", "m + 1"], f32>
// CHECK: "relax.cumsum"{{.*}} -> !relax.tensor<["?", 4], f32>
// CHECK: "relax.topk"{{.*}} -> (!relax.tensor<[2, 3], i32>, !relax.tensor<[2, 3], i64>)
// CHECK: "relax.topk"{{.*}} -> (!relax.tensor<[2, "m + 1"], f32>, !relax.tensor<[2, "m + 1"], i64>)
// CHECK: "relax.topk"{{.*}} -> (!relax.tensor<["?", 4], f32>, !relax.tensor<["?", 4], i64>)
// CHECK: "relax.topk"{{.*}} -> (!relax.tensor<"*", f32>, !relax.tensor<"*", i64>)
func.func @cumsum_topk(%x: !relax.tensor<[2, 3], i32>, %s: !relax.tensor<["n", "m + 1"], f32>, %n: !relax.tensor<["m"], f32>,
                       %u: !relax.tensor<["?", 4], f32>, %r: !relax.tensor<"*", f32>) {
  %0 = "relax.cumsum"(%x) {axis = -1 : i64, exclusive = false, reverse = false} : (!relax.tensor<[2, 3], i32>) -> !relax.tensor<"*", i32>
  %1 = "relax.cumsum"(%s) {axis = 0 : i64, exclusive = false, reverse = false} : (!relax.tensor<["n", "m + 1"], f32>) -> !relax.tensor<"*", f32>
  %2 = "relax.cumsum"(%u) {axis = 1 : i64, exclusive = false, reverse = false} : (!relax.tensor<["?", 4], f32>) -> !relax.tensor<"*", f32>
  %3:2 = "relax.topk"(%x) {axis = -1 : i64, k = 3 : i64, largest = true} : (!relax.tensor<[2, 3], i32>) -> (!relax.tensor<"*", i32>, !relax.tensor<"*", i64>)
  %4:2 = "relax.topk"(%s) {axis = 0 : i64, k = 2 : i64, largest = false} : (!relax.tensor<["n", "m + 1"], f32>) -> (!relax.tensor<"*", f32>, !relax.tensor<"*", i64>)
  %5:2 = "relax.topk"(%u) {axis = 1 : i64, k = 4 : i64, largest = true} : (!relax.tensor<["?", 4], f32>) -> (!relax.tensor<"*", f32>, !relax.tensor<"*", i64>)
  %6:2 = "relax.topk"(%r) {axis = 1 : i64, k = 4 : i64, largest = true} : (!relax.tensor<"*", f32>) -> (!relax.tensor<"*", f32>, !relax.tensor<"*", i64>)
  return
}

// CHECK-LABEL: func.func @softmax
// CHECK: "relax.softmax"{{.*}} -> !relax.tensor<[2, 1], f32>
// CHECK: "relax.log_softmax"{{.*}} -> !relax.tensor<["b", 8, "s", "s + 1"], f32>
// CHECK: "relax.softmax"{{.*}} -> !relax.tensor<["?", 4], f32>
// CHECK: "relax.log_softmax"{{.*}} -> !relax.tensor<"*", f32>
func.func @softmax(%x: !relax.tensor<[2, 1], f32>, %s: !relax.tensor<["b", 8, "s", "s + 1"], f32>,
                   %u: !relax.tensor<["?", 4], f32>, %r: !relax.tensor<"*", f32>) {
  %0 = "relax.softmax"(%x) {axis = 1 : i64} : (!relax.tensor<[2, 1], f32>) -> !relax.tensor<"*", f32>
  %1 = "relax.log_softmax"(%s) {axis = -1 : i64} : (!relax.tensor<["b", 8, "s", "s + 1"], f32>) -> !relax.tensor<"*", f32>
  %2 = "relax.softmax"(%u) {axis = 0 : i64} : (!relax.tensor<["?", 4], f32>) -> !relax.tensor<"*", f32>
  %3 = "relax.log_softmax"(%r) {axis = -1 : i64} : (!relax.tensor<"*", f32>) -> !relax.tensor<"*", f32>
  return
}

// CHECK-LABEL: func.func @norms
// CHECK: "relax.layer_norm"{{.*}} -> !relax.tensor<[2, 3, 4], f32>
// CHECK: "relax.layer_norm"{{.*}} -> !relax.tensor<["b", "s", "d"], f32>
// CHECK: "relax.rms_norm"{{.*}} -> !relax.tensor<["b", "s", "d"], f32>
// CHECK: "relax.rms_norm"{{.*}} -> !relax.tensor<["b", "?"], f32>
// CHECK: "relax.layer_norm"{{.*}} -> !relax.tensor<"*", f32>
// CHECK: "relax.group_norm"{{.*}} -> !relax.tensor<["n", 6, "h", "w"], f32>
// CHECK: "relax.group_norm"{{.*}} -> !relax.tensor<"*", f32>
// CHECK: "relax.batch_norm"{{.*}} -> !relax.tensor<["n", 6, "h", "w"], f32>
// CHECK: "relax.batch_norm"{{.*}} -> !relax.tensor<[2, 3, 6], f32>
// CHECK: "relax.batch_norm"{{.*}} -> !relax.tensor<"*", f32>
func.func @norms(%x: !relax.tensor<[2, 3, 4], f32>, %g4: !relax.tensor<[4], f32>, %g34: !relax.tensor<[3, 4], f32>,
                 %s: !relax.tensor<["b", "s", "d"], f32>, %gd: !relax.tensor<["d"], f32>,
                 %u: !relax.tensor<["b", "?"], f32>, %g8: !relax.tensor<[8], f32>, %r: !relax.tensor<"*", f32>,
                 %i: !relax.tensor<["n", 6, "h", "w"], f32>, %g6: !relax.tensor<[6], f32>,
                 %c: !relax.tensor<[2, 3, 6], f32>) {
  %0 = "relax.layer_norm"(%x, %g34, %g34) {axes = [1, 2], epsilon = 1.0e-05 : f64} : (!relax.tensor<[2, 3, 4], f32>, !relax.tensor<[3, 4], f32>, !relax.tensor<[3, 4], f32>) -> !relax.tensor<"*", f32>
  %1 = "relax.layer_norm"(%s, %gd, %gd) {axes = [-1], epsilon = 1.0e-05 : f64} : (!relax.tensor<["b", "s", "d"], f32>, !relax.tensor<["d"], f32>, !relax.tensor<["d"], f32>) -> !relax.tensor<"*", f32>
  %2 = "relax.rms_norm"(%s, %gd) {axes = [2], epsilon = 1.0e-06 : f64} : (!relax.tensor<["b", "s", "d"], f32>, !relax.tensor<["d"], f32>) -> !relax.tensor<"*", f32>
  %3 = "relax.rms_norm"(%u, %g8) {axes = [-1], epsilon = 1.0e-06 : f64} : (!relax.tensor<["b", "?"], f32>, !relax.tensor<[8], f32>) -> !relax.tensor<"*", f32>
  %4 = "relax.layer_norm"(%r, %g8, %g8) {axes = [-1], epsilon = 1.0e-05 : f64} : (!relax.tensor<"*", f32>, !relax.tensor<[8], f32>, !relax.tensor<[8], f32>) -> !relax.tensor<"*", f32>
  %5 = "relax.group_norm"(%i, %g6, %g6) {epsilon = 1.0e-05 : f64, num_groups = 3 : i64} : (!relax.tensor<["n", 6, "h", "w"], f32>, !relax.tensor<[6], f32>, !relax.tensor<[6], f32>) -> !relax.tensor<"*", f32>
  %6 = "relax.group_norm"(%r, %g6, %g6) {epsilon = 1.0e-05 : f64, num_groups = 2 : i64} : (!relax.tensor<"*", f32>, !relax.tensor<[6], f32>, !relax.tensor<[6], f32>) -> !relax.tensor<"*", f32>
  %7 = "relax.batch_norm"(%i, %g6, %g6, %g6, %g6) {axis = 1 : i64, epsilon = 1.0e-05 : f64} : (!relax.tensor<["n", 6, "h", "w"], f32>, !relax.tensor<[6], f32>, !relax.tensor<[6], f32>, !relax.tensor<[6], f32>, !relax.tensor<[6], f32>) -> !relax.tensor<"*", f32>
  %8 = "relax.batch_norm"(%c, %g6, %g6, %g6, %g6) {axis = -1 : i64, epsilon = 1.0e-05 : f64} : (!relax.tensor<[2, 3, 6], f32>, !relax.tensor<[6], f32>, !relax.tensor<[6], f32>, !relax.tensor<[6], f32>, !relax.tensor<[6], f32>) -> !relax.tensor<"*", f32>
  %9 = "relax.batch_norm"(%r, %g6, %g6, %g6, %g6) {axis = 1 : i64, epsilon = 1.0e-05 : f64} : (!relax.tensor<"*", f32>, !relax.tensor<[6], f32>, !relax.tensor<[6], f32>, !relax.tensor<[6], f32>, !relax.tensor<[6], f32>) -> !relax.tensor<"*", f32>
  return
}

// H_out = (H + pad_top + pad_bottom - dilation * (kh - 1) - 1) floordiv stride + 1, in canonical form.
// CHECK-LABEL: func.func @conv
// CHECK: "relax.conv2d"{{.*}} -> !relax.tensor<[2, 8, 3, 3], f32>
// CHECK: "relax.conv2d"{{.*}} -> !relax.tensor<[1, 2, 4, 3], f32>
// CHECK: "relax.conv2d"{{.*}} -> !relax.tensor<["n", 16, "(h + 1) floordiv 2", "(w + 1) floordiv 2"], f32>
// CHECK: "relax.conv2d"{{.*}} -> !relax.tensor<["n", 16, "(h + 1) floordiv 2 - 2", "w - 2"], f32>
// CHECK: "relax.conv2d"{{.*}} -> !relax.tensor<["n", 6, "h", "w"], f32>
// CHECK: "relax.conv2d"{{.*}} -> !relax.tensor<["?", 8, "?", 3], f32>
// CHECK: "relax.conv2d"{{.*}} -> !relax.tensor<["?", 16, "?", "?"], f32>
// CHECK: "relax.conv1d"{{.*}} -> !relax.tensor<[2, 6, 6], f32>
// CHECK: "relax.conv1d"{{.*}} -> !relax.tensor<["n", 32, "(l + 1) floordiv 2 - 1"], f32>
// CHECK: "relax.conv1d"{{.*}} -> !relax.tensor<["?", 32, "?"], f32>
func.func @conv(%a: !relax.tensor<[2, 3, 7, 7], f32>, %wa: !relax.tensor<[8, 3, 3, 3], f32>,
                %b: !relax.tensor<[1, 3, 5, 6], f32>, %wb: !relax.tensor<[2, 3, 3, 2], f32>,
                %x: !relax.tensor<["n", 3, "h", "w"], f32>, %w: !relax.tensor<[16, 3, 3, 3], f32>,
                %d: !relax.tensor<["n", 6, "h", "w"], f32>, %wd: !relax.tensor<[6, 1, 3, 3], f32>,
                %u: !relax.tensor<["?", 3, "?", 5], f32>, %r: !relax.tensor<"*", f32>,
                %l1: !relax.tensor<[2, 4, 11], f32>, %wl1: !relax.tensor<[6, 4, 3], f32>,
                %l: !relax.tensor<["n", 16, "l"], f32>, %wl: !relax.tensor<[32, 16, 3], f32>) {
  %0 = "relax.conv2d"(%a, %wa) {dilation = [1, 1], groups = 1 : i64, padding = [0, 0, 0, 0], strides = [2, 2]} : (!relax.tensor<[2, 3, 7, 7], f32>, !relax.tensor<[8, 3, 3, 3], f32>) -> !relax.tensor<"*", f32>
  %1 = "relax.conv2d"(%b, %wb) {dilation = [1, 1], groups = 1 : i64, padding = [1, 0, 0, 1], strides = [1, 2]} : (!relax.tensor<[1, 3, 5, 6], f32>, !relax.tensor<[2, 3, 3, 2], f32>) -> !relax.tensor<"*", f32>
  %2 = "relax.conv2d"(%x, %w) {dilation = [1, 1], groups = 1 : i64, padding = [1, 1, 1, 1], strides = [2, 2]} : (!relax.tensor<["n", 3, "h", "w"], f32>, !relax.tensor<[16, 3, 3, 3], f32>) -> !relax.tensor<"*", f32>
  %3 = "relax.conv2d"(%x, %w) {dilation = [2, 1], groups = 1 : i64, padding = [0, 0, 0, 0], strides = [2, 1]} : (!relax.tensor<["n", 3, "h", "w"], f32>, !relax.tensor<[16, 3, 3, 3], f32>) -> !relax.tensor<"*", f32>
  %4 = "relax.conv2d"(%d, %wd) {dilation = [1, 1], groups = 6 : i64, padding = [1, 1, 1, 1], strides = [1, 1]} : (!relax.tensor<["n", 6, "h", "w"], f32>, !relax.tensor<[6, 1, 3, 3], f32>) -> !relax.tensor<"*", f32>
  %5 = "relax.conv2d"(%u, %wa) {dilation = [1, 1], groups = 1 : i64, padding = [0, 0, 0, 0], strides = [1, 1]} : (!relax.tensor<["?", 3, "?", 5], f32>, !relax.tensor<[8, 3, 3, 3], f32>) -> !relax.tensor<"*", f32>
  %6 = "relax.conv2d"(%r, %w) {dilation = [1, 1], groups = 1 : i64, padding = [0, 0, 0, 0], strides = [1, 1]} : (!relax.tensor<"*", f32>, !relax.tensor<[16, 3, 3, 3], f32>) -> !relax.tensor<"*", f32>
  %7 = "relax.conv1d"(%l1, %wl1) {dilation = [1], groups = 1 : i64, padding = [1, 1], strides = [2]} : (!relax.tensor<[2, 4, 11], f32>, !relax.tensor<[6, 4, 3], f32>) -> !relax.tensor<"*", f32>
  %8 = "relax.conv1d"(%l, %wl) {dilation = [2], groups = 1 : i64, padding = [1, 1], strides = [2]} : (!relax.tensor<["n", 16, "l"], f32>, !relax.tensor<[32, 16, 3], f32>) -> !relax.tensor<"*", f32>
  %9 = "relax.conv1d"(%r, %wl) {dilation = [1], groups = 1 : i64, padding = [0, 0], strides = [1]} : (!relax.tensor<"*", f32>, !relax.tensor<[32, 16, 3], f32>) -> !relax.tensor<"*", f32>
  return
}

// CHECK-LABEL: func.func @pool
// CHECK: "relax.max_pool2d"{{.*}} -> !relax.tensor<[1, 3, 2, 2], f32>
// CHECK: "relax.max_pool2d"{{.*}} -> !relax.tensor<[1, 3, 3, 3], f32>
// CHECK: "relax.avg_pool2d"{{.*}} -> !relax.tensor<[1, 3, 3, 3], f32>
// CHECK: "relax.max_pool2d"{{.*}} -> !relax.tensor<["n", 8, "h floordiv 2", "w floordiv 2"], f32>
// CHECK: "relax.avg_pool2d"{{.*}} -> !relax.tensor<["n", 8, "h floordiv 2 + 1", "w floordiv 2 + 1"], f32>
// CHECK: "relax.max_pool2d"{{.*}} -> !relax.tensor<["?", 8, "?", 3], f32>
// CHECK: "relax.avg_pool2d"{{.*}} -> !relax.tensor<["?", "?", "?", "?"], f32>
// CHECK: "relax.adaptive_avg_pool2d"{{.*}} -> !relax.tensor<[1, 3, 1, 1], f32>
// CHECK: "relax.adaptive_avg_pool2d"{{.*}} -> !relax.tensor<["n", 8, 3, 5], f32>
// CHECK: "relax.adaptive_avg_pool2d"{{.*}} -> !relax.tensor<["?", 8, 7, 7], f32>
// CHECK: "relax.adaptive_avg_pool2d"{{.*}} -> !relax.tensor<["?", "?", 1, 1], f32>
func.func @pool(%a: !relax.tensor<[1, 3, 5, 5], f32>, %x: !relax.tensor<["n", 8, "h", "w"], f32>,
                %u: !relax.tensor<["?", 8, "?", 6], f32>, %r: !relax.tensor<"*", f32>) {
  %0 = "relax.max_pool2d"(%a) {ceil_mode = false, dilation = [1, 1], kernel = [2, 2], padding = [0, 0, 0, 0], strides = [2, 2]} : (!relax.tensor<[1, 3, 5, 5], f32>) -> !relax.tensor<"*", f32>
  %1 = "relax.max_pool2d"(%a) {ceil_mode = true, dilation = [1, 1], kernel = [2, 2], padding = [0, 0, 0, 0], strides = [2, 2]} : (!relax.tensor<[1, 3, 5, 5], f32>) -> !relax.tensor<"*", f32>
  %2 = "relax.avg_pool2d"(%a) {ceil_mode = true, count_include_pad = false, dilation = [1, 1], kernel = [2, 2], padding = [1, 1, 1, 1], strides = [2, 2]} : (!relax.tensor<[1, 3, 5, 5], f32>) -> !relax.tensor<"*", f32>
  %3 = "relax.max_pool2d"(%x) {ceil_mode = false, dilation = [1, 1], kernel = [2, 2], padding = [0, 0, 0, 0], strides = [2, 2]} : (!relax.tensor<["n", 8, "h", "w"], f32>) -> !relax.tensor<"*", f32>
  %4 = "relax.avg_pool2d"(%x) {ceil_mode = true, count_include_pad = true, dilation = [1, 1], kernel = [3, 3], padding = [1, 1, 1, 1], strides = [2, 2]} : (!relax.tensor<["n", 8, "h", "w"], f32>) -> !relax.tensor<"*", f32>
  %5 = "relax.max_pool2d"(%u) {ceil_mode = false, dilation = [1, 1], kernel = [2, 2], padding = [0, 0, 0, 0], strides = [2, 2]} : (!relax.tensor<["?", 8, "?", 6], f32>) -> !relax.tensor<"*", f32>
  %6 = "relax.avg_pool2d"(%r) {ceil_mode = false, count_include_pad = false, dilation = [1, 1], kernel = [2, 2], padding = [0, 0, 0, 0], strides = [2, 2]} : (!relax.tensor<"*", f32>) -> !relax.tensor<"*", f32>
  %7 = "relax.adaptive_avg_pool2d"(%a) {output_size = [1, 1]} : (!relax.tensor<[1, 3, 5, 5], f32>) -> !relax.tensor<"*", f32>
  %8 = "relax.adaptive_avg_pool2d"(%x) {output_size = [3, 5]} : (!relax.tensor<["n", 8, "h", "w"], f32>) -> !relax.tensor<"*", f32>
  %9 = "relax.adaptive_avg_pool2d"(%u) {output_size = [7, 7]} : (!relax.tensor<["?", 8, "?", 6], f32>) -> !relax.tensor<"*", f32>
  %10 = "relax.adaptive_avg_pool2d"(%r) {output_size = [1, 1]} : (!relax.tensor<"*", f32>) -> !relax.tensor<"*", f32>
  return
}

// CHECK-LABEL: func.func @resize
// CHECK: "relax.resize"{{.*}} -> !relax.tensor<[1, 3, 8, 1], f32>
// CHECK: "relax.resize"{{.*}} -> !relax.tensor<["n", 3, "2 * h", "w floordiv 2"], f32>
// CHECK: "relax.resize"{{.*}} -> !relax.tensor<["?", 3, 4, 4], f32>
// CHECK: "relax.resize"{{.*}} -> !relax.tensor<["?", "?", 4, 6], f32>
func.func @resize(%a: !relax.tensor<[1, 3, 4, 4], f32>, %x: !relax.tensor<["n", 3, "h", "w"], f32>,
                  %u: !relax.tensor<["?", 3, "?", "?"], f32>, %r: !relax.tensor<"*", f32>) {
  %0 = "relax.resize"(%a) {coordinate_mode = "asymmetric", method = "nearest", sizes = [8, 1]} : (!relax.tensor<[1, 3, 4, 4], f32>) -> !relax.tensor<"*", f32>
  %1 = "relax.resize"(%x) {coordinate_mode = "half_pixel", method = "linear", sizes = ["2 * h", "w floordiv 2"]} : (!relax.tensor<["n", 3, "h", "w"], f32>) -> !relax.tensor<"*", f32>
  %2 = "relax.resize"(%u) {coordinate_mode = "align_corners", method = "linear", sizes = [4, 4]} : (!relax.tensor<["?", 3, "?", "?"], f32>) -> !relax.tensor<"*", f32>
  %3 = "relax.resize"(%r) {coordinate_mode = "pytorch_half_pixel", method = "nearest", sizes = [4, 6]} : (!relax.tensor<"*", f32>) -> !relax.tensor<"*", f32>
  return
}

// Ill-typed matmul, reductions and neural-network ops: relax-verify reports each at the op.
// RUN: relax-opt %s --split-input-file --verify-diagnostics --relax-verify

func.func @matmul_contraction(%x: !relax.tensor<["n", 64], f32>, %w: !relax.tensor<[32, 16], f32>) {
  // expected-error@below {{contraction dims differ: 'lhs' ["n", 64] has 64, 'rhs' [32, 16] has 32}}
  %0 = "relax.matmul"(%x, %w) : (!relax.tensor<["n", 64], f32>, !relax.tensor<[32, 16], f32>) -> !relax.tensor<"*", f32>
  return
}

// -----

func.func @matmul_vectors(%x: !relax.tensor<[3], f32>, %y: !relax.tensor<[4], f32>) {
  // expected-error@below {{contraction dims differ: 'lhs' [3] has 3, 'rhs' [4] has 4}}
  %0 = "relax.matmul"(%x, %y) : (!relax.tensor<[3], f32>, !relax.tensor<[4], f32>) -> !relax.tensor<[], f32>
  return
}

// -----

func.func @matmul_batch(%x: !relax.tensor<[2, "n", 4], f32>, %y: !relax.tensor<[3, 4, 5], f32>) {
  // expected-error@below {{cannot broadcast batch dims [2] of 'lhs' [2, "n", 4] and [3] of 'rhs' [3, 4, 5]}}
  %0 = "relax.matmul"(%x, %y) : (!relax.tensor<[2, "n", 4], f32>, !relax.tensor<[3, 4, 5], f32>) -> !relax.tensor<"*", f32>
  return
}

// -----

func.func @matmul_scalar(%x: !relax.tensor<[], f32>, %y: !relax.tensor<[4], f32>) {
  // expected-error@below {{operand 'lhs' must have rank >= 1, got a scalar}}
  %0 = "relax.matmul"(%x, %y) : (!relax.tensor<[], f32>, !relax.tensor<[4], f32>) -> !relax.tensor<"*", f32>
  return
}

// -----

func.func @matmul_declared(%x: !relax.tensor<["n", 4], f32>, %y: !relax.tensor<[4, 5], f32>) {
  // expected-error@below {{result #0 is declared !relax.tensor<["n", 4], f32> but the operands give !relax.tensor<["n", 5], f32>: dim 1 is 4 vs 5}}
  %0 = "relax.matmul"(%x, %y) : (!relax.tensor<["n", 4], f32>, !relax.tensor<[4, 5], f32>) -> !relax.tensor<["n", 4], f32>
  return
}

// -----

func.func @sum_axes(%x: !relax.tensor<["n", 4], f32>) {
  // expected-error@below {{axes 2 is out of range for rank 2}}
  %0 = "relax.sum"(%x) {axes = [2], keepdims = false} : (!relax.tensor<["n", 4], f32>) -> !relax.tensor<"*", f32>
  return
}

// -----

func.func @mean_axes(%x: !relax.tensor<["n", 4], f32>) {
  // expected-error@below {{axes -3 is out of range for rank 2}}
  %0 = "relax.mean"(%x) {axes = [-3], keepdims = false} : (!relax.tensor<["n", 4], f32>) -> !relax.tensor<"*", f32>
  return
}

// -----

func.func @max_axes(%x: !relax.tensor<["n", 4], f32>) {
  // expected-error@below {{axes [0, -2] repeat an axis}}
  %0 = "relax.max"(%x) {axes = [0, -2], keepdims = false} : (!relax.tensor<["n", 4], f32>) -> !relax.tensor<"*", f32>
  return
}

// -----

func.func @min_axes(%x: !relax.tensor<["n", 4], f32>) {
  // expected-error@below {{axes 5 is out of range for rank 2}}
  %0 = "relax.min"(%x) {axes = [5], keepdims = false} : (!relax.tensor<["n", 4], f32>) -> !relax.tensor<"*", f32>
  return
}

// -----

func.func @prod_axes(%x: !relax.tensor<["n", 4], f32>) {
  // expected-error@below {{axes [1, 1] repeat an axis}}
  %0 = "relax.prod"(%x) {axes = [1, 1], keepdims = false} : (!relax.tensor<["n", 4], f32>) -> !relax.tensor<"*", f32>
  return
}

// -----

func.func @variance_axes(%x: !relax.tensor<["n", 4], f32>) {
  // expected-error@below {{axes -4 is out of range for rank 2}}
  %0 = "relax.variance"(%x) {axes = [-4], keepdims = false} : (!relax.tensor<["n", 4], f32>) -> !relax.tensor<"*", f32>
  return
}

// -----

func.func @sum_keepdims_declared(%x: !relax.tensor<["n", 4], f32>) {
  // expected-error@below {{result #0 is declared !relax.tensor<["n"], f32> but the operands give !relax.tensor<["n", 1], f32>: rank 1 ["n"] vs 2 ["n", 1]}}
  %0 = "relax.sum"(%x) {axes = [1], keepdims = true} : (!relax.tensor<["n", 4], f32>) -> !relax.tensor<["n"], f32>
  return
}

// -----

func.func @argmax_axis(%x: !relax.tensor<["n", 4], f32>) {
  // expected-error@below {{axis 2 is out of range for rank 2}}
  %0 = "relax.argmax"(%x) {axis = [2], keepdims = false} : (!relax.tensor<["n", 4], f32>) -> !relax.tensor<"*", i64>
  return
}

// -----

func.func @argmax_dtype(%x: !relax.tensor<["n", 4], f32>) {
  // expected-error@below {{result #0 is declared !relax.tensor<["n"], f32> but the operands give !relax.tensor<["n"], i64>: dtype f32 vs i64}}
  %0 = "relax.argmax"(%x) {axis = [1], keepdims = false} : (!relax.tensor<["n", 4], f32>) -> !relax.tensor<["n"], f32>
  return
}

// -----

func.func @argmin_two_axes(%x: !relax.tensor<"*", f32>) {
  // expected-error@below {{axis must hold one axis, got [0, 1]}}
  %0 = "relax.argmin"(%x) {axis = [0, 1], keepdims = false} : (!relax.tensor<"*", f32>) -> !relax.tensor<"*", i64>
  return
}

// -----

func.func @cumsum_axis(%x: !relax.tensor<["n", 4], f32>) {
  // expected-error@below {{axis -3 is out of range for rank 2}}
  %0 = "relax.cumsum"(%x) {axis = -3 : i64, exclusive = false, reverse = false} : (!relax.tensor<["n", 4], f32>) -> !relax.tensor<"*", f32>
  return
}

// -----

func.func @topk_k(%x: !relax.tensor<["n", 4], f32>) {
  // expected-error@below {{k = 5 is larger than dim 1 of size 4}}
  %0:2 = "relax.topk"(%x) {axis = -1 : i64, k = 5 : i64, largest = true} : (!relax.tensor<["n", 4], f32>) -> (!relax.tensor<"*", f32>, !relax.tensor<"*", i64>)
  return
}

// -----

func.func @topk_indices(%x: !relax.tensor<["n", 4], f32>) {
  // expected-error@below {{result #1 is declared !relax.tensor<[1, 4], i32> but the operands give !relax.tensor<[1, 4], i64>: dtype i32 vs i64}}
  %0:2 = "relax.topk"(%x) {axis = 0 : i64, k = 1 : i64, largest = true} : (!relax.tensor<["n", 4], f32>) -> (!relax.tensor<[1, 4], f32>, !relax.tensor<[1, 4], i32>)
  return
}

// -----

func.func @softmax_axis(%x: !relax.tensor<["b", 10], f32>) {
  // expected-error@below {{axis 2 is out of range for rank 2}}
  %0 = "relax.softmax"(%x) {axis = 2 : i64} : (!relax.tensor<["b", 10], f32>) -> !relax.tensor<"*", f32>
  return
}

// -----

func.func @log_softmax_int(%x: !relax.tensor<["b", 10], i32>) {
  // expected-error@below {{operand 'x' must have a float dtype, got i32}}
  %0 = "relax.log_softmax"(%x) {axis = -1 : i64} : (!relax.tensor<["b", 10], i32>) -> !relax.tensor<"*", i32>
  return
}

// -----

func.func @layer_norm_gamma(%x: !relax.tensor<["b", "s", 512], f32>, %g: !relax.tensor<[256], f32>, %b: !relax.tensor<[512], f32>) {
  // expected-error@below {{'gamma' [256] must have shape [512]}}
  %0 = "relax.layer_norm"(%x, %g, %b) {axes = [-1], epsilon = 1.0e-05 : f64} : (!relax.tensor<["b", "s", 512], f32>, !relax.tensor<[256], f32>, !relax.tensor<[512], f32>) -> !relax.tensor<"*", f32>
  return
}

// -----

func.func @layer_norm_unknown_rank(%x: !relax.tensor<"*", f32>, %g: !relax.tensor<[8], f32>, %b: !relax.tensor<[9], f32>) {
  // expected-error@below {{'beta' [9] must have shape [8] (like 'gamma')}}
  %0 = "relax.layer_norm"(%x, %g, %b) {axes = [-1], epsilon = 1.0e-05 : f64} : (!relax.tensor<"*", f32>, !relax.tensor<[8], f32>, !relax.tensor<[9], f32>) -> !relax.tensor<"*", f32>
  return
}

// -----

func.func @rms_norm_axes(%x: !relax.tensor<["s", 4, 8], f32>, %g: !relax.tensor<[8], f32>) {
  // expected-error@below {{'gamma' [8] must have shape [4, 8]}}
  %0 = "relax.rms_norm"(%x, %g) {axes = [1, 2], epsilon = 1.0e-05 : f64} : (!relax.tensor<["s", 4, 8], f32>, !relax.tensor<[8], f32>) -> !relax.tensor<"*", f32>
  return
}

// -----

func.func @group_norm_groups(%x: !relax.tensor<["n", 6, "h"], f32>, %g: !relax.tensor<[6], f32>) {
  // expected-error@below {{6 channels do not divide into 4 groups}}
  %0 = "relax.group_norm"(%x, %g, %g) {epsilon = 1.0e-05 : f64, num_groups = 4 : i64} : (!relax.tensor<["n", 6, "h"], f32>, !relax.tensor<[6], f32>, !relax.tensor<[6], f32>) -> !relax.tensor<"*", f32>
  return
}

// -----

func.func @group_norm_beta(%x: !relax.tensor<["n", 6, "h"], f32>, %g: !relax.tensor<[6], f32>, %b: !relax.tensor<[3], f32>) {
  // expected-error@below {{'beta' [3] must have shape [6]}}
  %0 = "relax.group_norm"(%x, %g, %b) {epsilon = 1.0e-05 : f64, num_groups = 3 : i64} : (!relax.tensor<["n", 6, "h"], f32>, !relax.tensor<[6], f32>, !relax.tensor<[3], f32>) -> !relax.tensor<"*", f32>
  return
}

// -----

func.func @batch_norm_mean(%x: !relax.tensor<["n", 3, "h", "w"], f32>, %g: !relax.tensor<[3], f32>, %m: !relax.tensor<[4], f32>) {
  // expected-error@below {{'mean' [4] must have shape [3]}}
  %0 = "relax.batch_norm"(%x, %g, %g, %m, %g) {axis = 1 : i64, epsilon = 1.0e-05 : f64} : (!relax.tensor<["n", 3, "h", "w"], f32>, !relax.tensor<[3], f32>, !relax.tensor<[3], f32>, !relax.tensor<[4], f32>, !relax.tensor<[3], f32>) -> !relax.tensor<"*", f32>
  return
}

// -----

func.func @batch_norm_var_dtype(%x: !relax.tensor<"*", f32>, %g: !relax.tensor<[3], f32>, %v: !relax.tensor<[3], f16>) {
  // expected-error@below {{operands 'x' (f32) and 'var' (f16) have different dtypes}}
  %0 = "relax.batch_norm"(%x, %g, %g, %g, %v) {axis = 1 : i64, epsilon = 1.0e-05 : f64} : (!relax.tensor<"*", f32>, !relax.tensor<[3], f32>, !relax.tensor<[3], f32>, !relax.tensor<[3], f32>, !relax.tensor<[3], f16>) -> !relax.tensor<"*", f32>
  return
}

// -----

func.func @conv2d_channels(%x: !relax.tensor<["n", 4, "h", "w"], f32>, %w: !relax.tensor<[8, 3, 3, 3], f32>) {
  // expected-error@below {{input channels of 'x' ["n", 4, "h", "w"] and 'weight' [8, 3, 3, 3] x groups 1 differ: 4 vs 3}}
  %0 = "relax.conv2d"(%x, %w) {dilation = [1, 1], groups = 1 : i64, padding = [1, 1, 1, 1], strides = [1, 1]} : (!relax.tensor<["n", 4, "h", "w"], f32>, !relax.tensor<[8, 3, 3, 3], f32>) -> !relax.tensor<"*", f32>
  return
}

// -----

func.func @conv2d_groups(%x: !relax.tensor<["n", 6, "h", "w"], f32>, %w: !relax.tensor<[8, 2, 3, 3], f32>) {
  // expected-error@below {{8 output channels do not divide into 3 groups}}
  %0 = "relax.conv2d"(%x, %w) {dilation = [1, 1], groups = 3 : i64, padding = [1, 1, 1, 1], strides = [1, 1]} : (!relax.tensor<["n", 6, "h", "w"], f32>, !relax.tensor<[8, 2, 3, 3], f32>) -> !relax.tensor<"*", f32>
  return
}

// -----

func.func @conv2d_window(%x: !relax.tensor<["n", 3, 2, "w"], f32>, %w: !relax.tensor<[8, 3, 3, 3], f32>) {
  // expected-error@below {{window of size 3 (dilation 1) is larger than the padded input 2}}
  %0 = "relax.conv2d"(%x, %w) {dilation = [1, 1], groups = 1 : i64, padding = [0, 0, 0, 0], strides = [1, 1]} : (!relax.tensor<["n", 3, 2, "w"], f32>, !relax.tensor<[8, 3, 3, 3], f32>) -> !relax.tensor<"*", f32>
  return
}

// -----

func.func @conv2d_declared(%x: !relax.tensor<["n", 3, "h", "w"], f32>, %w: !relax.tensor<[8, 3, 3, 3], f32>) {
  // expected-error@below {{dim 2 is h floordiv 2, which is not provably equal to (h + 1) floordiv 2}}
  %0 = "relax.conv2d"(%x, %w) {dilation = [1, 1], groups = 1 : i64, padding = [1, 1, 1, 1], strides = [2, 2]} : (!relax.tensor<["n", 3, "h", "w"], f32>, !relax.tensor<[8, 3, 3, 3], f32>) -> !relax.tensor<["n", 8, "h floordiv 2", "w floordiv 2"], f32>
  return
}

// -----

func.func @conv1d_rank(%x: !relax.tensor<["n", 4, "l"], f32>, %w: !relax.tensor<[8, 4, 3, 3], f32>) {
  // expected-error@below {{operand 'weight' [8, 4, 3, 3] must have rank 3}}
  %0 = "relax.conv1d"(%x, %w) {dilation = [1], groups = 1 : i64, padding = [0, 0], strides = [1]} : (!relax.tensor<["n", 4, "l"], f32>, !relax.tensor<[8, 4, 3, 3], f32>) -> !relax.tensor<"*", f32>
  return
}

// -----

func.func @conv1d_padding(%x: !relax.tensor<["n", 4, "l"], f32>, %w: !relax.tensor<[8, 4, 3], f32>) {
  // expected-error@below {{'padding' needs 2 values, got [1]}}
  %0 = "relax.conv1d"(%x, %w) {dilation = [1], groups = 1 : i64, padding = [1], strides = [1]} : (!relax.tensor<["n", 4, "l"], f32>, !relax.tensor<[8, 4, 3], f32>) -> !relax.tensor<"*", f32>
  return
}

// -----

func.func @max_pool2d_rank(%x: !relax.tensor<["n", 8, "h"], f32>) {
  // expected-error@below {{operand 'x' ["n", 8, "h"] must have rank 4 (NCHW)}}
  %0 = "relax.max_pool2d"(%x) {ceil_mode = false, dilation = [1, 1], kernel = [2, 2], padding = [0, 0, 0, 0], strides = [2, 2]} : (!relax.tensor<["n", 8, "h"], f32>) -> !relax.tensor<"*", f32>
  return
}

// -----

func.func @max_pool2d_ceil_declared(%x: !relax.tensor<[1, 3, 5, 5], f32>) {
  // expected-error@below {{result #0 is declared !relax.tensor<[1, 3, 4, 4], f32> but the operands give !relax.tensor<[1, 3, 3, 3], f32>: dim 2 is 4 vs 3}}
  %0 = "relax.max_pool2d"(%x) {ceil_mode = true, dilation = [1, 1], kernel = [2, 2], padding = [1, 1, 1, 1], strides = [2, 2]} : (!relax.tensor<[1, 3, 5, 5], f32>) -> !relax.tensor<[1, 3, 4, 4], f32>
  return
}

// -----

func.func @avg_pool2d_kernel(%x: !relax.tensor<["n", 8, "h", "w"], f32>) {
  // expected-error@below {{'kernel' needs 2 positive values, got [0, 2]}}
  %0 = "relax.avg_pool2d"(%x) {ceil_mode = false, count_include_pad = false, dilation = [1, 1], kernel = [0, 2], padding = [0, 0, 0, 0], strides = [2, 2]} : (!relax.tensor<["n", 8, "h", "w"], f32>) -> !relax.tensor<"*", f32>
  return
}

// -----

func.func @avg_pool2d_window(%x: !relax.tensor<["n", 8, 1, 1], f32>) {
  // expected-error@below {{window of size 2 (dilation 1) is larger than the padded input 1}}
  %0 = "relax.avg_pool2d"(%x) {ceil_mode = true, count_include_pad = false, dilation = [1, 1], kernel = [2, 2], padding = [0, 0, 0, 0], strides = [2, 2]} : (!relax.tensor<["n", 8, 1, 1], f32>) -> !relax.tensor<"*", f32>
  return
}

// -----

func.func @adaptive_avg_pool2d_size(%x: !relax.tensor<["n", 8, "h", "w"], f32>) {
  // expected-error@below {{'output_size' needs 2 positive values, got [1]}}
  %0 = "relax.adaptive_avg_pool2d"(%x) {output_size = [1]} : (!relax.tensor<["n", 8, "h", "w"], f32>) -> !relax.tensor<"*", f32>
  return
}

// -----

func.func @adaptive_avg_pool2d_rank(%x: !relax.tensor<["n", 8], f32>) {
  // expected-error@below {{operand 'x' ["n", 8] must have rank 4 (NCHW)}}
  %0 = "relax.adaptive_avg_pool2d"(%x) {output_size = [1, 1]} : (!relax.tensor<["n", 8], f32>) -> !relax.tensor<"*", f32>
  return
}

// -----

func.func @resize_method(%x: !relax.tensor<["n", 3, "h", "w"], f32>) {
  // expected-error@below {{unknown method 'cubic'; expected nearest or linear}}
  %0 = "relax.resize"(%x) {coordinate_mode = "half_pixel", method = "cubic", sizes = [8, 8]} : (!relax.tensor<["n", 3, "h", "w"], f32>) -> !relax.tensor<"*", f32>
  return
}

// -----

func.func @resize_negative(%x: !relax.tensor<["n", 3, "h", "w"], f32>) {
  // expected-error@below {{'sizes' must be non-negative, got -2}}
  %0 = "relax.resize"(%x) {coordinate_mode = "half_pixel", method = "nearest", sizes = [-2, 8]} : (!relax.tensor<["n", 3, "h", "w"], f32>) -> !relax.tensor<"*", f32>
  return
}

// -----

func.func @resize_bad_expression(%x: !relax.tensor<["n", 3, "h", "w"], f32>) {
  // expected-error@below {{'sizes': cannot parse dim expression}}
  %0 = "relax.resize"(%x) {coordinate_mode = "half_pixel", method = "nearest", sizes = ["2 *", 8]} : (!relax.tensor<["n", 3, "h", "w"], f32>) -> !relax.tensor<"*", f32>
  return
}

// -----

func.func @resize_undefined_symbol(%x: !relax.tensor<["n", 3, "h", "w"], f32>) {
  // expected-error@below {{uses undefined symbol(s) k}}
  %0 = "relax.resize"(%x) {coordinate_mode = "half_pixel", method = "nearest", sizes = ["2 * k", 8]} : (!relax.tensor<["n", 3, "h", "w"], f32>) -> !relax.tensor<"*", f32>
  return
}

// -----

func.func @conv2d_packed_channels(%x: !relax.tensor<["n", 4, 8, 8], f32>, %p: !relax.tensor<[2, 3, 3, 3, 16], f32>) {
  // expected-error@below {{input channels of 'x' ["n", 4, 8, 8] and 'packed' [2, 3, 3, 3, 16] differ}}
  %0 = "relax.conv2d_packed"(%x, %p) {dilation = [1, 1], padding = [1, 1, 1, 1], strides = [1, 1]} : (!relax.tensor<["n", 4, 8, 8], f32>, !relax.tensor<[2, 3, 3, 3, 16], f32>) -> !relax.tensor<"*", f32>
  return
}

// -----

func.func @conv2d_packed_layout(%x: !relax.tensor<["n", 3, 8, 8], f32>, %p: !relax.tensor<[2, 3, 3, 16], f32>) {
  // expected-error@below {{operand 'packed' must be [blocks, channels, kh, kw, width] with positive constant dims}}
  %0 = "relax.conv2d_packed"(%x, %p) {dilation = [1, 1], padding = [1, 1, 1, 1], strides = [1, 1]} : (!relax.tensor<["n", 3, 8, 8], f32>, !relax.tensor<[2, 3, 3, 16], f32>) -> !relax.tensor<"*", f32>
  return
}

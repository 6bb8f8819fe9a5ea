// RUN: relax-opt %s --convert-relax-to-linalg | FileCheck %s

// Kernels of the neural-network ops: one call_tir per op, dynamic dims stay `?`, and what a kernel
// only assumes about its operands' dims becomes a checked relax.match_cast before the call.

// Softmax along a middle axis: max, then sum of exp(x - max) over the axis, then one parallel pass.
// CHECK-LABEL: func.func @softmax(
// CHECK:         "relax.call_tir"(%arg0) {callee = @[[SOFTMAX:softmax_[0-9]+]]}

// Layer norm over the last axis: mean and the inverse deviation reduce to (b, s); gamma/beta index d2.
// CHECK-LABEL: func.func @layer_norm(
// CHECK:         "relax.call_tir"(%arg0, %arg1, %arg2) {callee = @[[LAYER_NORM:layer_norm_[0-9]+]]}

// Group norm with symbolic channels: the caller checks they divide into the groups.
// CHECK-LABEL: func.func @group_norm(
// CHECK:         %[[X:.*]] = "relax.match_cast"(%arg0) {{.*}} -> !relax.tensor<["n", "4 * (c floordiv 4)", "h", "w"], f32>
// CHECK:         %[[G:.*]] = "relax.match_cast"(%arg1) {{.*}} -> !relax.tensor<["4 * (c floordiv 4)"], f32>
// CHECK:         %[[B:.*]] = "relax.match_cast"(%arg2)
// CHECK:         "relax.call_tir"(%[[X]], %[[G]], %[[B]]) {callee = @[[GROUP_NORM:group_norm_[0-9]+]]}
// CHECK-SAME:    -> !relax.tensor<["n", "c", "h", "w"], f32>

// CHECK-LABEL: func.func @conv2d(
// CHECK:         "relax.call_tir"(%arg0, %arg1) {callee = @[[CONV2D:conv2d_[0-9]+]]}
// CHECK-SAME:    -> !relax.tensor<["n", 16, "(h + 1) floordiv 2", "(w + 1) floordiv 2"], f32>

// CHECK-LABEL: func.func @depthwise(
// CHECK:         "relax.call_tir"(%arg0, %arg1) {callee = @[[DEPTHWISE:conv2d_[0-9]+]]}

// A grouped conv1d whose input channels are symbolic: they must be groups * weight dim 1 = 4.
// CHECK-LABEL: func.func @grouped(
// CHECK:         %[[XC:.*]] = "relax.match_cast"(%arg0) {{.*}} -> !relax.tensor<["n", 4, "l"], f32>
// CHECK:         "relax.call_tir"(%[[XC]], %arg1) {callee = @[[GROUPED:conv1d_[0-9]+]]}

// CHECK-LABEL: func.func @max_pool2d(
// CHECK:         "relax.call_tir"(%arg0) {callee = @[[MAX_POOL:max_pool2d_[0-9]+]]}
// CHECK-LABEL: func.func @max_pool2d_tiles(
// CHECK:         "relax.call_tir"(%arg0) {callee = @[[MAX_POOL_TILES:max_pool2d_[0-9]+]]}
// CHECK-LABEL: func.func @avg_pool2d(
// CHECK:         "relax.call_tir"(%arg0) {callee = @[[AVG_POOL:avg_pool2d_[0-9]+]]}
// CHECK-LABEL: func.func @adaptive(
// CHECK:         "relax.call_tir"(%arg0) {callee = @[[ADAPTIVE:adaptive_avg_pool2d_[0-9]+]]}
// CHECK-LABEL: func.func @resize(
// CHECK:         "relax.call_tir"(%arg0) {callee = @[[RESIZE:resize_[0-9]+]]}

// CHECK-LABEL: func.func private @softmax_0(%arg0: tensor<?x?x16xf32>, %arg1: tensor<?x?x16xf32>)
// CHECK-SAME:    attributes {relax.destinations}
// CHECK:         %[[NEG_INF:.*]] = arith.constant 0xFF800000 : f32
// CHECK:         %[[MAX0:.*]] = linalg.fill ins(%[[NEG_INF]] : f32) outs(%{{.*}} : tensor<?x16xf32>)
// CHECK:         %[[MAX:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "reduction", "parallel"]} ins(%arg0 : tensor<?x?x16xf32>) outs(%[[MAX0]] : tensor<?x16xf32>)
// CHECK:           arith.maximumf
// One exp per element: the exps and their sum in one generic, then a multiply by 1 / sum.
// CHECK:         %[[EXP:.*]]:2 = linalg.generic {{.*}} iterator_types = ["parallel", "reduction", "parallel"]} ins(%arg0, %[[MAX]] : tensor<?x?x16xf32>, tensor<?x16xf32>)
// CHECK:           arith.subf
// CHECK:           math.exp
// CHECK:           arith.addf
// CHECK:         %[[INV:.*]] = linalg.generic {{.*}} outs(%[[EXP]]#1 : tensor<?x16xf32>)
// CHECK:           arith.divf
// CHECK:         linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "parallel"]} ins(%[[EXP]]#0, %[[INV]] : {{.*}}) outs(%arg1 : tensor<?x?x16xf32>)
// CHECK:           arith.mulf

// CHECK-LABEL: func.func private @layer_norm_0(%arg0: tensor<?x?x64xf32>, %arg1: tensor<64xf32>, %arg2: tensor<64xf32>, %arg3: tensor<?x?x64xf32>)
// Statistics that cannot overflow: max|x| and the sum of x * 2^-k (k: 1/2^k <= 1/64) per row; a
// power-of-two scale and the scaled mean from them; the squares of scaled, centered values; rsqrt.
// CHECK:         %[[AMAX:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "reduction"]} ins(%arg0 : tensor<?x?x64xf32>) outs(%{{.*}} : tensor<?x?xf32>)
// CHECK:           math.absf
// CHECK:           arith.maximumf
// CHECK:         %[[SUM:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "reduction"]} ins(%arg0 : tensor<?x?x64xf32>) outs(%{{.*}} : tensor<?x?xf32>)
// CHECK:           arith.mulf
// CHECK:           arith.addf
// CHECK:         %[[STATS:.*]]:2 = linalg.generic {{.*}} iterator_types = ["parallel", "parallel"]} outs(%[[SUM]], %[[AMAX]] : tensor<?x?xf32>, tensor<?x?xf32>)
// CHECK:         %[[SQ:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "reduction"]} ins(%arg0, %[[STATS]]#1, %[[STATS]]#0 : tensor<?x?x64xf32>, tensor<?x?xf32>, tensor<?x?xf32>) outs(%{{.*}} : tensor<?x?xf32>)
// CHECK:         %[[INV:.*]] = linalg.generic {{.*}} ins(%[[STATS]]#1 : tensor<?x?xf32>) outs(%[[SQ]] : tensor<?x?xf32>)
// CHECK:           math.rsqrt
// CHECK:         linalg.generic {{.*}} ins(%arg0, %[[STATS]]#1, %[[STATS]]#0, %[[INV]], %arg1, %arg2 : tensor<?x?x64xf32>, tensor<?x?xf32>, tensor<?x?xf32>, tensor<?x?xf32>, tensor<64xf32>, tensor<64xf32>) outs(%arg3 : tensor<?x?x64xf32>)

// CHECK-LABEL: func.func private @group_norm_0(%arg0: tensor<?x?x?x?xf32>, %arg1: tensor<?xf32>, %arg2: tensor<?xf32>, %arg3: tensor<?x?x?x?xf32>)
// CHECK:         %[[XG:.*]] = tensor.expand_shape %arg0 {{\[}}[0], [1, 2], [3], [4]] output_shape [%{{.*}}, 4, %{{.*}}, %{{.*}}, %{{.*}}] : tensor<?x?x?x?xf32> into tensor<?x4x?x?x?xf32>
// CHECK:         %[[OG:.*]] = tensor.expand_shape %arg3
// CHECK:         tensor.expand_shape %arg1 {{\[}}[0, 1]] output_shape [4, %{{.*}}] : tensor<?xf32> into tensor<4x?xf32>
// CHECK:         linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "reduction", "reduction", "reduction"]} ins(%[[XG]] : tensor<?x4x?x?x?xf32>) outs(%{{.*}} : tensor<?x4xf32>)
// CHECK:         %[[Y:.*]] = linalg.generic {{.*}} outs(%[[OG]] : tensor<?x4x?x?x?xf32>)
// CHECK:         %[[R:.*]] = tensor.collapse_shape %[[Y]] {{\[}}[0], [1, 2], [3], [4]] : tensor<?x4x?x?x?xf32> into tensor<?x?x?x?xf32>
// CHECK:         return %[[R]]

// A plain conv2d is im2col + linalg.matmul per block of output rows, in an scf.forall over images x row
// blocks (dialects/ops/conv.py). With both output spatial dims symbolic, each block is one output row: its 3
// padded input rows, W [16, 27] x cols [27, ow], stride-2 row copies, written into the destination's row.
// CHECK-LABEL: func.func private @conv2d_0(%arg0: tensor<?x3x?x?xf32>, %arg1: tensor<16x3x3x3xf32>, %arg2: tensor<?x16x?x?xf32>)
// CHECK:         %[[ZERO:.*]] = arith.constant 0.0{{.*}} : f32
// CHECK:         %[[W:.*]] = tensor.collapse_shape %arg1 {{\[}}[0], [1, 2, 3]] : tensor<16x3x3x3xf32> into tensor<16x27xf32>
// CHECK:         %[[R:.*]] = scf.forall (%{{.*}}, %{{.*}}) in (%{{.*}}, %{{.*}}) shared_outs(%{{.*}} = %arg2) -> (tensor<?x16x?x?xf32>)
// CHECK:           tensor.empty(%{{.*}}) : tensor<3x3x?xf32>
// CHECK:           linalg.fill ins(%[[ZERO]] : f32) outs(%{{.*}} : tensor<3x3x?xf32>)
// CHECK:           linalg.copy ins(%{{.*}} : tensor<1x1x?xf32>)
// CHECK:           tensor.empty(%{{.*}}) : tensor<3x3x3x1x?xf32>
// CHECK-COUNT-9:     tensor.extract_slice %{{.*}} [1, 1, %{{.*}}] [1, 1, 2] : tensor<3x3x?xf32> to tensor<1x1x?xf32>
// CHECK:           %[[COLS:.*]] = tensor.collapse_shape %{{.*}} {{\[}}[0, 1, 2], [3, 4]] : tensor<3x3x3x1x?xf32> into tensor<27x?xf32>
// CHECK:           linalg.fill ins(%[[ZERO]] : f32) outs(%{{.*}} : tensor<1x16x1x?xf32>)
// CHECK:           linalg.matmul ins(%[[W]], %[[COLS]] : tensor<16x27xf32>, tensor<27x?xf32>) outs(%{{.*}} : tensor<16x?xf32>)
// CHECK:           tensor.parallel_insert_slice %{{.*}} : tensor<1x16x1x?xf32> into tensor<?x16x?x?xf32>
// CHECK-NOT:     linalg.conv
// CHECK:         return %[[R]]

// CHECK-LABEL: func.func private @conv2d_1(%arg0: tensor<?x8x?x?xf32>, %arg1: tensor<8x1x3x3xf32>, %arg2: tensor<?x8x?x?xf32>)
// CHECK:         %[[W:.*]] = tensor.collapse_shape %arg1 {{\[}}[0, 1], [2], [3]] : tensor<8x1x3x3xf32> into tensor<8x3x3xf32>
// CHECK:         linalg.depthwise_conv_2d_nchw_chw {{.*}} ins(%{{.*}}, %[[W]] : tensor<?x8x?x?xf32>, tensor<8x3x3xf32>) outs(%{{.*}} : tensor<?x8x?x?xf32>)

// conv1d runs as a 2-D convolution over a unit height; groups split the channel dims.
// CHECK-LABEL: func.func private @conv1d_0(%arg0: tensor<?x4x?xf32>, %arg1: tensor<8x2x3xf32>, %arg2: tensor<?x8x?xf32>)
// CHECK:         tensor.expand_shape %arg0 {{\[}}[0], [1], [2, 3]] {{.*}} : tensor<?x4x?xf32> into tensor<?x4x1x?xf32>
// CHECK:         %[[GX:.*]] = tensor.expand_shape %{{.*}} {{\[}}[0], [1, 2], [3], [4]] {{.*}} : tensor<?x4x1x?xf32> into tensor<?x2x2x1x?xf32>
// CHECK:         %[[GW:.*]] = tensor.expand_shape %{{.*}} {{\[}}[0, 1], [2], [3], [4]] {{.*}} : tensor<8x2x1x3xf32> into tensor<2x4x2x1x3xf32>
// CHECK:         %[[GC:.*]] = linalg.conv_2d_ngchw_gfchw {{.*}} ins(%[[GX]], %[[GW]] : {{.*}}) outs(%{{.*}} : tensor<?x2x4x1x?xf32>)
// CHECK:         %[[C2:.*]] = tensor.collapse_shape %[[GC]] {{.*}} into tensor<?x8x1x?xf32>
// CHECK:         %[[C1:.*]] = tensor.collapse_shape %[[C2]] {{\[}}[0], [1], [2, 3]] : tensor<?x8x1x?xf32> into tensor<?x8x?xf32>
// CHECK:         return %[[C1]]

// Max pooling pads with -inf; in ceil mode the right padding is computed from the sizes.
// CHECK-LABEL: func.func private @max_pool2d_0(%arg0: tensor<?x8x?x?xf32>, %arg1: tensor<?x8x?x?xf32>)
// CHECK:         %[[NEG:.*]] = arith.constant 0xFF800000 : f32
// CHECK:         %[[HIGH_H:.*]] = arith.maxsi
// CHECK:         %[[HIGH_W:.*]] = arith.maxsi
// CHECK:         %[[P:.*]] = tensor.pad %arg0 low[0, 0, 1, 1] high[0, 0, %[[HIGH_H]], %[[HIGH_W]]]
// CHECK:           tensor.yield %[[NEG]] : f32
// CHECK:         %[[INIT:.*]] = linalg.fill ins(%[[NEG]] : f32) outs(%arg1 : tensor<?x8x?x?xf32>)
// CHECK:         %[[WIN:.*]] = tensor.empty() : tensor<3x3xf32>
// CHECK:         linalg.pooling_nchw_max {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>} ins(%[[P]], %[[WIN]] : tensor<?x8x?x?xf32>, tensor<3x3xf32>) outs(%[[INIT]] : tensor<?x8x?x?xf32>)

// Windows that tile the input (stride = kernel): a generic of loops LLVM vectorizes along the row.
// CHECK-LABEL: func.func private @max_pool2d_1(%arg0: tensor<?x8x?x?xf32>, %arg1: tensor<?x8x?x?xf32>)
// CHECK:         %[[WIN2:.*]] = tensor.empty() : tensor<2x2xf32>
// CHECK:         linalg.generic {indexing_maps = [#{{.*}}, #{{.*}}, #{{.*}}], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction"]} ins(%arg0, %[[WIN2]] : tensor<?x8x?x?xf32>, tensor<2x2xf32>)
// CHECK:           arith.maximumf
// CHECK-NOT:     linalg.pooling_nchw_max

// Average pooling: a sum pool, then a division by the taps counted per output row and column.
// CHECK-LABEL: func.func private @avg_pool2d_0(%arg0: tensor<?x8x?x?xf32>, %arg1: tensor<?x8x?x?xf32>)
// CHECK:         %[[SUMP:.*]] = linalg.pooling_nchw_sum {{.*}} outs(%{{.*}} : tensor<?x8x?x?xf32>)
// CHECK:         %[[ROWS:.*]] = linalg.generic {{.*}} iterator_types = ["parallel"]} outs(%{{.*}} : tensor<?xf32>)
// CHECK:           linalg.index 0
// CHECK:         %[[COLS:.*]] = linalg.generic {{.*}} iterator_types = ["parallel"]} outs(%{{.*}} : tensor<?xf32>)
// CHECK:         linalg.generic {{.*}} ins(%[[ROWS]], %[[COLS]] : tensor<?xf32>, tensor<?xf32>) outs(%[[SUMP]] : tensor<?x8x?x?xf32>)
// CHECK:           arith.divf

// Adaptive pooling: window bounds per output row/column, then masked sums along h and along w.
// CHECK-LABEL: func.func private @adaptive_avg_pool2d_0(%arg0: tensor<?x512x?x?xf32>, %arg1: tensor<?x512x1x1xf32>)
// CHECK:         %[[WH:.*]]:3 = linalg.generic {{.*}} outs(%{{.*}}, %{{.*}}, %{{.*}} : tensor<1xindex>, tensor<1xindex>, tensor<1xf32>)
// CHECK:           arith.floordivsi
// CHECK:           arith.ceildivsi
// CHECK:         %[[WW:.*]]:3 = linalg.generic
// CHECK:         %[[SH:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%arg0, %[[WH]]#0, %[[WH]]#1 : {{.*}}) outs(%{{.*}} : tensor<?x512x1x?xf32>)
// CHECK:           arith.select
// CHECK:         linalg.generic {{.*}} iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]} ins(%[[SH]], %[[WW]]#0, %[[WW]]#1 : {{.*}}) outs(%{{.*}} : tensor<?x512x1x1xf32>)

// Linear resize: source indices and weights per output row/column, then a gather.
// CHECK-LABEL: func.func private @resize_0(%arg0: tensor<?x3x?x?xf32>, %arg1: tensor<?x3x?x?xf32>)
// CHECK:         %[[TH:.*]]:3 = linalg.generic {{.*}} outs(%{{.*}}, %{{.*}}, %{{.*}} : tensor<?xindex>, tensor<?xindex>, tensor<?xf32>)
// CHECK:         %[[TW:.*]]:3 = linalg.generic
// CHECK:         linalg.generic {{.*}} ins(%[[TH]]#0, %[[TH]]#1, %[[TH]]#2, %[[TW]]#0, %[[TW]]#1, %[[TW]]#2 : {{.*}}) outs(%arg1 : tensor<?x3x?x?xf32>)
// CHECK-COUNT-4:   tensor.extract %arg0[
func.func @softmax(%x: !relax.tensor<["b", "s", 16], f32>) -> !relax.tensor<["b", "s", 16], f32> {
  %0 = "relax.softmax"(%x) {axis = 1 : i64} : (!relax.tensor<["b", "s", 16], f32>) -> !relax.tensor<["b", "s", 16], f32>
  return %0 : !relax.tensor<["b", "s", 16], f32>
}

func.func @layer_norm(%x: !relax.tensor<["b", "s", 64], f32>, %g: !relax.tensor<[64], f32>, %b: !relax.tensor<[64], f32>) -> !relax.tensor<["b", "s", 64], f32> {
  %0 = "relax.layer_norm"(%x, %g, %b) {axes = [-1], epsilon = 1.0e-05 : f64} : (!relax.tensor<["b", "s", 64], f32>, !relax.tensor<[64], f32>, !relax.tensor<[64], f32>) -> !relax.tensor<["b", "s", 64], f32>
  return %0 : !relax.tensor<["b", "s", 64], f32>
}

func.func @group_norm(%x: !relax.tensor<["n", "c", "h", "w"], f32>, %g: !relax.tensor<["c"], f32>, %b: !relax.tensor<["c"], f32>) -> !relax.tensor<["n", "c", "h", "w"], f32> {
  %0 = "relax.group_norm"(%x, %g, %b) {epsilon = 1.0e-05 : f64, num_groups = 4 : i64} : (!relax.tensor<["n", "c", "h", "w"], f32>, !relax.tensor<["c"], f32>, !relax.tensor<["c"], f32>) -> !relax.tensor<["n", "c", "h", "w"], f32>
  return %0 : !relax.tensor<["n", "c", "h", "w"], f32>
}

func.func @conv2d(%x: !relax.tensor<["n", 3, "h", "w"], f32>, %w: !relax.tensor<[16, 3, 3, 3], f32>) -> !relax.tensor<["n", 16, "(h + 1) floordiv 2", "(w + 1) floordiv 2"], f32> {
  %0 = "relax.conv2d"(%x, %w) {dilation = [1, 1], groups = 1 : i64, padding = [1, 1, 1, 1], strides = [2, 2]} : (!relax.tensor<["n", 3, "h", "w"], f32>, !relax.tensor<[16, 3, 3, 3], f32>) -> !relax.tensor<["n", 16, "(h + 1) floordiv 2", "(w + 1) floordiv 2"], f32>
  return %0 : !relax.tensor<["n", 16, "(h + 1) floordiv 2", "(w + 1) floordiv 2"], f32>
}

func.func @depthwise(%x: !relax.tensor<["n", 8, "h", "w"], f32>, %w: !relax.tensor<[8, 1, 3, 3], f32>) -> !relax.tensor<["n", 8, "h", "w"], f32> {
  %0 = "relax.conv2d"(%x, %w) {dilation = [1, 1], groups = 8 : i64, padding = [1, 1, 1, 1], strides = [1, 1]} : (!relax.tensor<["n", 8, "h", "w"], f32>, !relax.tensor<[8, 1, 3, 3], f32>) -> !relax.tensor<["n", 8, "h", "w"], f32>
  return %0 : !relax.tensor<["n", 8, "h", "w"], f32>
}

func.func @grouped(%x: !relax.tensor<["n", "c", "l"], f32>, %w: !relax.tensor<[8, 2, 3], f32>) -> !relax.tensor<["n", 8, "l - 2"], f32> {
  %0 = "relax.conv1d"(%x, %w) {dilation = [1], groups = 2 : i64, padding = [0, 0], strides = [1]} : (!relax.tensor<["n", "c", "l"], f32>, !relax.tensor<[8, 2, 3], f32>) -> !relax.tensor<["n", 8, "l - 2"], f32>
  return %0 : !relax.tensor<["n", 8, "l - 2"], f32>
}

func.func @max_pool2d(%x: !relax.tensor<["n", 8, "h", "w"], f32>) -> !relax.tensor<["n", 8, "h floordiv 2 + 1", "w floordiv 2 + 1"], f32> {
  %0 = "relax.max_pool2d"(%x) {ceil_mode = true, dilation = [1, 1], kernel = [3, 3], padding = [1, 1, 1, 1], strides = [2, 2]} : (!relax.tensor<["n", 8, "h", "w"], f32>) -> !relax.tensor<["n", 8, "h floordiv 2 + 1", "w floordiv 2 + 1"], f32>
  return %0 : !relax.tensor<["n", 8, "h floordiv 2 + 1", "w floordiv 2 + 1"], f32>
}

func.func @max_pool2d_tiles(%x: !relax.tensor<["n", 8, "h", "w"], f32>) -> !relax.tensor<["n", 8, "h floordiv 2", "w floordiv 2"], f32> {
  %0 = "relax.max_pool2d"(%x) {ceil_mode = false, dilation = [1, 1], kernel = [2, 2], padding = [0, 0, 0, 0], strides = [2, 2]} : (!relax.tensor<["n", 8, "h", "w"], f32>) -> !relax.tensor<["n", 8, "h floordiv 2", "w floordiv 2"], f32>
  return %0 : !relax.tensor<["n", 8, "h floordiv 2", "w floordiv 2"], f32>
}

func.func @avg_pool2d(%x: !relax.tensor<["n", 8, "h", "w"], f32>) -> !relax.tensor<["n", 8, "h", "w"], f32> {
  %0 = "relax.avg_pool2d"(%x) {ceil_mode = false, count_include_pad = false, dilation = [1, 1], kernel = [3, 3], padding = [1, 1, 1, 1], strides = [1, 1]} : (!relax.tensor<["n", 8, "h", "w"], f32>) -> !relax.tensor<["n", 8, "h", "w"], f32>
  return %0 : !relax.tensor<["n", 8, "h", "w"], f32>
}

func.func @adaptive(%x: !relax.tensor<["n", 512, "h", "w"], f32>) -> !relax.tensor<["n", 512, 1, 1], f32> {
  %0 = "relax.adaptive_avg_pool2d"(%x) {output_size = [1, 1]} : (!relax.tensor<["n", 512, "h", "w"], f32>) -> !relax.tensor<["n", 512, 1, 1], f32>
  return %0 : !relax.tensor<["n", 512, 1, 1], f32>
}

func.func @resize(%x: !relax.tensor<["n", 3, "h", "w"], f32>) -> !relax.tensor<["n", 3, "2 * h", "2 * w"], f32> {
  %0 = "relax.resize"(%x) {coordinate_mode = "half_pixel", method = "linear", sizes = ["2 * h", "2 * w"]} : (!relax.tensor<["n", 3, "h", "w"], f32>) -> !relax.tensor<["n", 3, "2 * h", "2 * w"], f32>
  return %0 : !relax.tensor<["n", 3, "2 * h", "2 * w"], f32>
}

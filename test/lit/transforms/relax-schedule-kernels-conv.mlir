// RUN: relax-opt %s --pass-pipeline='builtin.module(relax-infer-shapes,convert-relax-to-linalg{target-features=+avx512f},relax-lower-host,relax-schedule-kernels)' | FileCheck %s

// A plain convolution (over 32 channels of 3x3; fewer run direct, below) is im2col + one matmul per block of output rows (here 4 blocks of 8 rows). An
// scf.forall over the (symbolic) images x blocks zero-fills the block's padded input rows [C, 8 + 2, 34] (one
// zero vector per row), copies the input rows it needs (one vector copy per row; no tensor.pad of the whole
// batch), fills the block's columns [C, KH, KW, 8, OW] row by row (one vector row copy per kernel tap), then
// multiplies W [F, C*KH*KW] x cols [C*KH*KW, 8*OW] in register tiles of 8 output channels x 2 vectors of
// pixels accumulated over the columns' rows (conv_kernels.register_matmul: no zero fill of the block); no
// scalar convolution loop nest is left.
// CHECK-LABEL: func.func private @conv2d_0(%arg0: tensor<?x40x32x32xf32>, %arg1: tensor<16x40x3x3xf32>, %arg2: tensor<?x16x32x32xf32>)
// CHECK-NOT:     linalg.conv
// CHECK-NOT:     tensor.pad
// CHECK:         %[[W:.*]] = tensor.collapse_shape %arg1 {{\[}}[0], [1, 2, 3]] : tensor<16x40x3x3xf32> into tensor<16x360xf32>
// CHECK:         scf.forall (%[[N:.*]], %[[B:.*]]) in (%{{.*}}, 4) shared_outs(%[[OUT:.*]] = %{{.*}}) -> (tensor<?x16x32x32xf32>)
// CHECK:           %[[R0:.*]] = affine.apply #{{.*}}(%[[B]])
// CHECK:           tensor.empty() : tensor<40x10x34xf32>
// CHECK:             vector.transfer_write %{{.*}} : vector<1x1x34xf32>, tensor<40x10x34xf32>
// CHECK:           %[[XP:.*]] = scf.for %[[C0:.*]] = %c0 to %c40 step %c1
// CHECK:             scf.for
// CHECK:               vector.transfer_read %arg0[%[[N]], %[[C0]], %{{.*}}, %c0]{{.*}} : tensor<?x40x32x32xf32>, vector<1x1x32xf32>
// CHECK:               vector.transfer_write {{.*}} : vector<1x1x32xf32>, tensor<40x10x34xf32>
// CHECK:           tensor.empty() : tensor<40x3x3x8x32xf32>
// CHECK:           scf.for %[[C:.*]] = %c0 to %c40 step %c1
// CHECK:             scf.for %[[R:.*]] = %c0 to %c8 step %c1
// CHECK:               vector.transfer_read %[[XP]][%[[C]], %{{.*}}, %c0]{{.*}} : tensor<40x10x34xf32>, vector<1x1x32xf32>
// CHECK:               vector.transfer_write %{{.*}}[%[[C]], %c0, %c0, %[[R]], %c0]{{.*}} : vector<1x1x32xf32>, tensor<40x3x3x8x32xf32>
// CHECK-COUNT-8:       vector.transfer_write {{.*}} : vector<1x1x32xf32>, tensor<40x3x3x8x32xf32>
// CHECK:           %[[COLS:.*]] = tensor.collapse_shape %{{.*}} {{\[}}[0, 1, 2], [3, 4]] : tensor<40x3x3x8x32xf32> into tensor<360x256xf32>
// CHECK-NOT:       linalg.fill
// CHECK:           scf.for %[[F:.*]] = %c0 to %c16 step %c8
// CHECK:             scf.for %[[P:.*]] = %c0 to %c256 step %c32
// CHECK:               scf.for %[[K:.*]] = %c0 to %c360 step %c1 iter_args({{.*}}) -> (vector<16xf32>, {{.*}}) {
// CHECK-COUNT-2:         vector.transfer_read %[[COLS]][%[[K]], %{{.*}}]{{.*}} : tensor<360x256xf32>, vector<16xf32>
// CHECK:                 tensor.extract %[[W]][%[[F]], %[[K]]] : tensor<16x360xf32>
// CHECK-COUNT-2:         vector.fma {{.*}} : vector<16xf32>
// CHECK:           scf.forall.in_parallel
// CHECK:             tensor.parallel_insert_slice %{{.*}} into %[[OUT]][%[[N]], 0, %[[R0]], 0] [1, 16, 8, 32] [1, 1, 1, 1]
// CHECK-NOT:     linalg.conv
// CHECK:         return
func.func @conv(%x: !relax.tensor<["n", 40, 32, 32], f32>, %w: !relax.tensor<[16, 40, 3, 3], f32>) -> !relax.tensor<["n", 16, 32, 32], f32> {
  %0 = "relax.conv2d"(%x, %w) {dilation = [1, 1], groups = 1 : i64, padding = [1, 1, 1, 1], strides = [1, 1]} : (!relax.tensor<["n", 40, 32, 32], f32>, !relax.tensor<[16, 40, 3, 3], f32>) -> !relax.tensor<["n", 16, 32, 32], f32>
  return %0 : !relax.tensor<["n", 16, 32, 32], f32>
}

// Pooling: tiled to segments of 8 outputs of one row and one window row, decomposed to a 1-D window
// and vectorized (a max of vectors per window column).
// CHECK-LABEL: func.func private @max_pool2d_0(%arg0: tensor<?x8x32x32xf32>, %arg1: tensor<?x8x32x32xf32>)
// CHECK-NOT:     linalg.pooling
// CHECK:         scf.for {{.*}} step %c8
// CHECK:           scf.for {{.*}} to %c3 step %c1
// CHECK:             vector.transfer_read {{.*}} : tensor<?x8x34x34xf32>, vector<1x1x10xf32>
// CHECK-COUNT-3:     arith.maximumf {{.*}} : vector<1x8x1xf32>
// CHECK:             vector.transfer_write {{.*}} : vector<1x1x8xf32>, tensor<1x1x1x8xf32>
// CHECK:             tensor.insert_slice {{.*}} : tensor<1x1x1x8xf32> into tensor<?x8x32x32xf32>
// CHECK-NOT:     linalg.pooling
// CHECK:         return
func.func @max_pool(%x: !relax.tensor<["n", 8, 32, 32], f32>) -> !relax.tensor<["n", 8, 32, 32], f32> {
  %0 = "relax.max_pool2d"(%x) {ceil_mode = false, dilation = [1, 1], kernel = [3, 3], padding = [1, 1, 1, 1], strides = [1, 1]} : (!relax.tensor<["n", 8, 32, 32], f32>) -> !relax.tensor<["n", 8, 32, 32], f32>
  return %0 : !relax.tensor<["n", 8, 32, 32], f32>
}

// Stride 2: each im2col row is one contiguous vector read of 2 * OW - 1 elements and a shuffle
// picking every second one (a strided vector read would be one scalar load per element).
// CHECK-LABEL: func.func private @conv2d_1(%arg0: tensor<?x36x16x16xf32>, %arg1: tensor<8x36x3x3xf32>, %arg2: tensor<?x8x8x8xf32>)
// CHECK:         scf.forall
// CHECK:           %[[ROW:.*]] = vector.transfer_read {{.*}} : tensor<36x18x18xf32>, vector<15xf32>
// CHECK:           %[[PICK:.*]] = vector.shuffle %[[ROW]], %[[ROW]] [0, 2, 4, 6, 8, 10, 12, 14] : vector<15xf32>, vector<15xf32>
// CHECK:           vector.transfer_write %[[PICK]], {{.*}} : vector<8xf32>, tensor<36x3x3x8x8xf32>
// CHECK:         vector.fma
func.func @conv_stride2(%x: !relax.tensor<["n", 36, 16, 16], f32>, %w: !relax.tensor<[8, 36, 3, 3], f32>) -> !relax.tensor<["n", 8, 8, 8], f32> {
  %0 = "relax.conv2d"(%x, %w) {dilation = [1, 1], groups = 1 : i64, padding = [1, 1, 1, 1], strides = [2, 2]} : (!relax.tensor<["n", 36, 16, 16], f32>, !relax.tensor<[8, 36, 3, 3], f32>) -> !relax.tensor<["n", 8, 8, 8], f32>
  return %0 : !relax.tensor<["n", 8, 8, 8], f32>
}

// A depthwise convolution (and any grouped one, or a plain one of few channels) is direct: per output
// channel and row, one FMA per tap on vectors of output columns read from the input in place (no padded
// copy, no im2col): at the left border the row segment is shuffled next to zeros, a tap row that can fall
// in the top or bottom padding is guarded by an scf.if; the weights are broadcast once per channel. (One
// block of rows per image: the loop over blocks folds away.)
// CHECK-LABEL: func.func private @conv2d_2(%arg0: tensor<?x8x12x20xf32>, %arg1: tensor<8x1x3x3xf32>, %arg2: tensor<?x8x12x20xf32>)
// CHECK-NOT:     linalg.depthwise
// CHECK-NOT:     tensor.empty
// CHECK:         scf.forall (%[[N:.*]]) in (%{{.*}}) shared_outs(%[[OUT:.*]] = %arg2)
// CHECK:           scf.for %[[F:.*]] = %c0 to %c8 step %c1
// CHECK-COUNT-9:     vector.broadcast {{.*}} : f32 to vector<16xf32>
// CHECK:             scf.for
// CHECK:               scf.if
// CHECK:                 %[[ROW:.*]] = vector.transfer_read %arg0[%[[N]], %[[F]], %{{.*}}, %c0]{{.*}} : tensor<?x8x12x20xf32>, vector<16xf32>
// CHECK:                 vector.shuffle %[[ROW]], %{{.*}} [16, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14] : vector<16xf32>, vector<16xf32>
// CHECK:                 vector.fma {{.*}} : vector<16xf32>
// CHECK:               vector.transfer_write {{.*}} : vector<16xf32>, tensor<1x8x12x20xf32>
// CHECK:               vector.transfer_write {{.*}} : vector<4xf32>, tensor<1x8x12x20xf32>
// CHECK:           scf.forall.in_parallel
// CHECK-NOT:     linalg.depthwise
// CHECK:         return
func.func @depthwise(%x: !relax.tensor<["n", 8, 12, 20], f32>, %w: !relax.tensor<[8, 1, 3, 3], f32>) -> !relax.tensor<["n", 8, 12, 20], f32> {
  %0 = "relax.conv2d"(%x, %w) {dilation = [1, 1], groups = 8 : i64, padding = [1, 1, 1, 1], strides = [1, 1]} : (!relax.tensor<["n", 8, 12, 20], f32>, !relax.tensor<[8, 1, 3, 3], f32>) -> !relax.tensor<["n", 8, 12, 20], f32>
  return %0 : !relax.tensor<["n", 8, 12, 20], f32>
}

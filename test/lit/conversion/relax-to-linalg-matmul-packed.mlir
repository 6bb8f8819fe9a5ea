// RUN: relax-opt %s --convert-relax-to-linalg --split-input-file | FileCheck %s
// RUN: relax-opt %s --pass-pipeline='builtin.module(convert-relax-to-linalg,relax-lower-host,relax-schedule-kernels)' --split-input-file | FileCheck %s --check-prefix=SCHED

// relax.matmul_packed: rows in blocks of 8 ("main", [m1, 8, k] x panels [np, k, 16] -> [m1, 8, np, 16])
// and the last r = m mod 8 rows: a block of 4 rows when r >= 4 (an scf.index_switch on r & 4), then one of
// r mod 4 rows at the row after it (a switch on r & 3: "rest<b>", b static rows, [b, k] x panels -> [b, np, 16]), all
// views of x and of the destination; n = 20 is not a multiple
// of the panel width, so the products go to a [m, 32] temporary whose first 20 columns are copied out.
// CHECK-LABEL: func.func private @matmul_packed_0(
// CHECK-SAME:    %[[X:.*]]: tensor<?x8xf32>, %[[P:.*]]: tensor<2x8x16xf32>, %[[OUT:.*]]: tensor<?x20xf32>)
// CHECK:         %[[M:.*]] = tensor.dim %[[X]]
// CHECK:         %[[TMP:.*]] = tensor.empty(%[[M]]) : tensor<?x32xf32>
// CHECK:         %[[BLOCKS:.*]] = arith.divui %[[M]], %c8
// CHECK:         %[[REST:.*]] = arith.subi %[[M]], %{{.*}} : index
// CHECK:         tensor.expand_shape %{{.*}} {{\[\[}}0, 1], [2]] output_shape [%[[BLOCKS]], 8, 8] : tensor<?x8xf32> into tensor<?x8x8xf32>
// CHECK:         linalg.generic {{.*}} ins(%{{.*}}, %[[P]] : tensor<?x8x8xf32>, tensor<2x8x16xf32>) outs(%{{.*}} : tensor<?x8x2x16xf32>) attrs = {relax.packed_matmul = "main"}
// CHECK:         %[[MAIN:.*]] = tensor.insert_slice %{{.*}} into %[[TMP]][0, 0]
// CHECK:         %[[FOUR:.*]] = arith.andi %[[REST]], %c4
// CHECK:         %[[T4:.*]] = scf.index_switch %[[FOUR]] -> tensor<?x32xf32>
// CHECK-NEXT:    case 4 {
// CHECK:           tensor.extract_slice %[[X]][%[[FIRST:.*]], 0] [4, 8] [1, 1]
// CHECK:           linalg.generic {{.*}} ins(%{{.*}}, %[[P]] : tensor<4x8xf32>, tensor<2x8x16xf32>) outs(%{{.*}} : tensor<4x2x16xf32>) attrs = {relax.packed_matmul = "rest4"}
// CHECK:         default {
// CHECK-NEXT:      scf.yield %[[MAIN]]
// CHECK:         %[[AT:.*]] = arith.addi %[[FIRST]], %[[FOUR]]
// CHECK:         %[[TAIL:.*]] = arith.andi %[[REST]], %c3
// CHECK:         scf.index_switch %[[TAIL]] -> tensor<?x32xf32>
// CHECK-NEXT:    case 1 {
// CHECK:           tensor.extract_slice %[[X]][%[[AT]], 0] [1, 8] [1, 1]
// CHECK:           linalg.generic {{.*}} ins(%{{.*}}, %[[P]] : tensor<1x8xf32>, tensor<2x8x16xf32>) outs(%{{.*}} : tensor<1x2x16xf32>) attrs = {relax.packed_matmul = "rest1"}
// CHECK:         case 2 {
// CHECK:           linalg.generic {{.*}} ins(%{{.*}}, %[[P]] : tensor<2x8xf32>, tensor<2x8x16xf32>) outs(%{{.*}} : tensor<2x2x16xf32>) attrs = {relax.packed_matmul = "rest2"}
// CHECK:         case 3 {
// CHECK:           tensor.extract_slice %[[X]][%[[AT]], 0] [3, 8] [1, 1]
// CHECK:           linalg.generic {{.*}} ins(%{{.*}}, %[[P]] : tensor<3x8xf32>, tensor<2x8x16xf32>) outs(%{{.*}} : tensor<3x2x16xf32>) attrs = {relax.packed_matmul = "rest3"}
// CHECK:         default {
// CHECK-NOT:     relax.packed_matmul
// CHECK:         %[[COLS:.*]] = tensor.extract_slice %{{.*}}[0, 0] [%[[M]], 20] [1, 1] : tensor<?x32xf32> to tensor<?x20xf32>
// CHECK:         linalg.copy ins(%[[COLS]] : tensor<?x20xf32>) outs(%[[OUT]] : tensor<?x20xf32>)

// The schedule leaves no linalg.generic: all are tiled, vectorized and contracted to FMAs on
// 16-wide vectors (8 x 2 accumulators for the row blocks; b x 2 for a block of b remaining rows, every
// row in the register block, so the weights stream once per block: 4 x 2 for 4 rows, 3 x 2 for 3).
// SCHED-LABEL: func.func private @matmul_packed_0(
// SCHED-NOT:     linalg.generic
// SCHED:         scf.for {{.*}} -> (vector<8x2x16xf32>)
// SCHED-COUNT-16: vector.fma {{.*}} : vector<16xf32>
// SCHED-NOT:     linalg.generic
// SCHED:         scf.index_switch
// SCHED:         case 4 {
// SCHED:         scf.for {{.*}} -> (vector<4x2x16xf32>)
// SCHED-COUNT-8: vector.fma {{.*}} : vector<16xf32>
// SCHED-NOT:     linalg.generic
// SCHED:         scf.index_switch
// SCHED:         case 1 {
// SCHED:         scf.for {{.*}} -> (vector<2x16xf32>)
// SCHED-COUNT-2: vector.fma {{.*}} : vector<16xf32>
// SCHED-NOT:     linalg.generic
// SCHED:         case 3 {
// SCHED:         scf.for {{.*}} -> (vector<3x2x16xf32>)
// SCHED-COUNT-6: vector.fma {{.*}} : vector<16xf32>
// SCHED-NOT:     linalg.generic
// SCHED:         return
func.func @mp(%x: !relax.tensor<["m", 8], f32>, %p: !relax.tensor<[2, 8, 16], f32>) -> !relax.tensor<["m", 20], f32> {
  %0 = "relax.matmul_packed"(%x, %p) {n = 20} : (!relax.tensor<["m", 8], f32>, !relax.tensor<[2, 8, 16], f32>) -> !relax.tensor<["m", 20], f32>
  return %0 : !relax.tensor<["m", 20], f32>
}

// -----

// Two symbolic leading dims: one 2-D packed product on the b * s rows (views of x and of the destination),
// so [b, 1, k] at decode reads the weights once, not b times; no branch on s. The result is viewed back as
// [b, s, n] by tensor.reshape (an expand_shape into two dynamic dims aborts MLIR 22's expand-strided-metadata).
// CHECK-LABEL: func.func private @matmul_packed_0(
// CHECK:         tensor.collapse_shape %arg0 {{\[\[}}0, 1], [2]] : tensor<?x?x8xf32> into tensor<?x8xf32>
// CHECK:         tensor.collapse_shape %arg2 {{\[\[}}0, 1], [2]] : tensor<?x?x32xf32> into tensor<?x32xf32>
// CHECK-NOT:     scf.for
// CHECK-NOT:     scf.if
// CHECK:         relax.packed_matmul = "main"
// CHECK:         relax.packed_matmul = "rest4"
// CHECK:         relax.packed_matmul = "rest1"
// CHECK:         relax.packed_matmul = "rest2"
// CHECK:         relax.packed_matmul = "rest3"
// CHECK-NOT:     relax.packed_matmul
// CHECK:         %[[SHAPE:.*]] = tensor.from_elements %{{.*}}, %{{.*}}, %c32 : tensor<3xindex>
// CHECK:         %[[R:.*]] = tensor.reshape %{{.*}}(%[[SHAPE]]) : (tensor<?x32xf32>, tensor<3xindex>) -> tensor<?x?x32xf32>
// CHECK:         return %[[R]]
func.func @rows(%x: !relax.tensor<["b", "s", 8], f32>, %p: !relax.tensor<[2, 8, 16], f32>) -> !relax.tensor<["b", "s", 32], f32> {
  %0 = "relax.matmul_packed"(%x, %p) {n = 32} : (!relax.tensor<["b", "s", 8], f32>, !relax.tensor<[2, 8, 16], f32>) -> !relax.tensor<["b", "s", 32], f32>
  return %0 : !relax.tensor<["b", "s", 32], f32>
}

// -----

// A weight of 2**18 elements or more (32 panels of 512 x 16) is read from memory on every call, so the
// product always runs on all threads: one scf.forall over 4 parts of one chunk of 8 panels each
// (packed_chunk: 4 chunks, an even count), each chunk its own row blocks and remaining-rows blocks on a
// static slice of the panels. One loop for every register block: the kernel is outlined once for OpenMP.
// CHECK-LABEL: func.func private @matmul_packed_0(
// CHECK-SAME:    %{{.*}}: tensor<?x512xf32>, %[[P:.*]]: tensor<32x512x16xf32>, %[[OUT:.*]]: tensor<?x512xf32>)
// CHECK-NOT:     arith.cmpi
// CHECK:         scf.forall (%{{.*}}) in (%c4) shared_outs(%{{.*}} = %[[OUT]]) -> (tensor<?x512xf32>)
// CHECK:           scf.for
// CHECK:             tensor.extract_slice %[[P]][%{{.*}}, 0, 0] [8, 512, 16] [1, 1, 1] : tensor<32x512x16xf32> to tensor<8x512x16xf32>
// CHECK:             relax.packed_matmul = "main"
// CHECK:             scf.index_switch %{{.*}} -> tensor<?x128xf32>
// CHECK:               relax.packed_matmul = "rest4"
// CHECK:             scf.index_switch %{{.*}} -> tensor<?x128xf32>
// CHECK-COUNT-3:       relax.packed_matmul = "rest
// CHECK:           scf.forall.in_parallel
// CHECK-NEXT:        tensor.parallel_insert_slice
// CHECK-NOT:     scf.forall
func.func @split(%x: !relax.tensor<["m", 512], f32>, %p: !relax.tensor<[32, 512, 16], f32>) -> !relax.tensor<["m", 512], f32> {
  %0 = "relax.matmul_packed"(%x, %p) {n = 512} : (!relax.tensor<["m", 512], f32>, !relax.tensor<[32, 512, 16], f32>) -> !relax.tensor<["m", 512], f32>
  return %0 : !relax.tensor<["m", 512], f32>
}

// -----

// A small weight (6 panels: 3 chunks of 2) with a symbolic row count: split per call, when the work
// (m * (96 * 64 / 4 + 96) = m * 1632, plus the weight's 6144 elements) reaches 2**18: 3 parts of one chunk,
// else one part of all 3 (run on the calling thread).
// CHECK-LABEL: func.func private @matmul_packed_0(
// CHECK:         %[[M:.*]] = tensor.dim
// CHECK:         %[[W:.*]] = arith.muli %[[M]], %c1632
// CHECK:         %[[WORK:.*]] = arith.addi %[[W]], %c6144
// CHECK:         %[[BIG:.*]] = arith.cmpi uge, %[[WORK]], %c262144
// CHECK:         %[[PARTS:.*]] = arith.select %[[BIG]], %c3, %c1
// CHECK:         %[[PER:.*]] = arith.select %[[BIG]], %c1, %c3
// CHECK:         scf.forall (%[[I:.*]]) in (%[[PARTS]])
// CHECK:           arith.muli %[[I]], %[[PER]]
// CHECK:           tensor.extract_slice %{{.*}}[%{{.*}}, 0, 0] [2, 64, 16] [1, 1, 1] : tensor<6x64x16xf32> to tensor<2x64x16xf32>
func.func @per_call(%x: !relax.tensor<["m", 64], f32>, %p: !relax.tensor<[6, 64, 16], f32>) -> !relax.tensor<["m", 96], f32> {
  %0 = "relax.matmul_packed"(%x, %p) {n = 96} : (!relax.tensor<["m", 64], f32>, !relax.tensor<[6, 64, 16], f32>) -> !relax.tensor<["m", 96], f32>
  return %0 : !relax.tensor<["m", 96], f32>
}

// -----

// The same weight with 3 static rows: the work (3 * 1632 + 6144) is known to be small, so no chunks.
// CHECK-LABEL: func.func private @matmul_packed_0(
// CHECK-NOT:     scf.forall
// CHECK:         linalg.generic {{.*}} ins(%{{.*}}, %arg1 : tensor<?x8x64xf32>, tensor<6x64x16xf32>)
// CHECK-NOT:     scf.forall
// CHECK:         return
func.func @few_rows(%x: !relax.tensor<[3, 64], f32>, %p: !relax.tensor<[6, 64, 16], f32>) -> !relax.tensor<[3, 96], f32> {
  %0 = "relax.matmul_packed"(%x, %p) {n = 96} : (!relax.tensor<[3, 64], f32>, !relax.tensor<[6, 64, 16], f32>) -> !relax.tensor<[3, 96], f32>
  return %0 : !relax.tensor<[3, 96], f32>
}

// RUN: relax-opt %s --pass-pipeline='builtin.module(relax-gpu-prepare-kernels{tile-matmuls=false})' | FileCheck %s

// A row reduction runs one warp per output: 32 x 8 threads per block, lanes striding the row by 32
// (coalesced), a butterfly of five xor shuffles, and lane 0 folding the result into the output.
// CHECK-LABEL: func.func private @row_max
// CHECK:         gpu.launch blocks(%[[BX:[a-z0-9_]+]], {{.*}} threads(%[[TX:[a-z0-9_]+]], %[[TY:[a-z0-9_]+]], %{{.*}}) in (%{{.*}} = %c32{{.*}}, %{{.*}} = %c8
// CHECK:           %[[ROW:.*]] = arith.addi %{{.*}}, %[[TY]] : index
// CHECK:           %[[NEG:.*]] = arith.constant 0xFF800000 : f32
// CHECK:           %[[P:.*]] = scf.for %[[K:.*]] = %[[TX]] to %{{.*}} step %c32{{.*}} iter_args(%[[ACC:.*]] = %[[NEG]]) -> (f32) {
// CHECK:             %[[V:.*]] = memref.load %arg0[%[[ROW]], %[[K]]]
// CHECK:             arith.maximumf %[[ACC]], %[[V]]
// CHECK-COUNT-5:   gpu.shuffle  xor
// CHECK:           arith.cmpi eq, %[[TX]]
// CHECK:           memref.store %{{.*}}, %arg1[%[[ROW]]]
func.func private @row_max(%x: memref<?x?xf32>, %m: memref<?xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>],
                  iterator_types = ["parallel", "reduction"]} ins(%x : memref<?x?xf32>) outs(%m : memref<?xf32>) {
  ^bb0(%in: f32, %out: f32):
    %0 = arith.maximumf %out, %in : f32
    linalg.yield %0 : f32
  }
  return
}

// A reduction over a middle dim is already coalesced one thread per output (neighbouring threads read
// neighbouring columns): it is left to the loop mapping.
// CHECK-LABEL: func.func private @column_sum
// CHECK-NOT:     gpu.launch
// CHECK:         linalg.generic
func.func private @column_sum(%x: memref<?x?xf32>, %s: memref<?xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d1, d0)>, affine_map<(d0, d1) -> (d0)>],
                  iterator_types = ["parallel", "reduction"]} ins(%x : memref<?x?xf32>) outs(%s : memref<?xf32>) {
  ^bb0(%in: f32, %out: f32):
    %0 = arith.addf %out, %in : f32
    linalg.yield %0 : f32
  }
  return
}

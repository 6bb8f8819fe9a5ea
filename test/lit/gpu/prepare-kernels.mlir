// RUN: relax-opt %s --pass-pipeline='builtin.module(relax-gpu-prepare-kernels)' | FileCheck %s

// An f32 matmul becomes a call of the shared-memory tiled kernel: 16x16 threads per block, each with a
// 4x4 register tile (16 accumulators carried by the K loops), the batch in the grid's z, 64x16 slabs of A
// and 16x64 of B staged in workgroup memory between barriers; a kernel-level copy becomes a
// linalg.copy (a parallel loop on the GPU, not a host memcpy).
// CHECK-LABEL: func.func private @mm
// CHECK:         %[[A:.*]] = memref.cast %arg0 : memref<?x64xf32> to memref<?x?xf32>
// CHECK:         %[[B:.*]] = memref.cast %arg1 : memref<64x32xf32> to memref<?x?xf32>
// CHECK:         %[[C:.*]] = memref.cast %arg2 : memref<?x32xf32> to memref<?x?xf32>
// CHECK:         call @relax_gpu_matmul_f32_222(%[[A]], %[[B]], %[[C]])
// CHECK:         linalg.copy {{.*}}ins(%arg2 : memref<?x32xf32>) outs(%arg3 : memref<?x32xf32>)
// CHECK-NOT:     linalg.matmul
func.func private @mm(%a: memref<?x64xf32>, %b: memref<64x32xf32>, %c: memref<?x32xf32>, %d: memref<?x32xf32>) {
  linalg.matmul ins(%a, %b : memref<?x64xf32>, memref<64x32xf32>) outs(%c : memref<?x32xf32>)
  memref.copy %c, %d : memref<?x32xf32> to memref<?x32xf32>
  return
}

// A transposed-operand matmul is not the tiled kernel's layout: it stays a linalg op (parallel loops).
// CHECK-LABEL: func.func private @mm_transposed
// CHECK:         linalg.matmul
// CHECK-LABEL: func.func private @relax_gpu_matmul_f32_222
// CHECK:         gpu.launch blocks({{.*}}) threads(%{{.*}}, %{{.*}}, %{{.*}}) in (%{{.*}} = %c16, %{{.*}} = %c16, %{{.*}} = %c1)
// CHECK-SAME:        workgroup(%[[AS:.*]] : memref<64x16xf32, #gpu.address_space<workgroup>>, %[[BS:.*]] : memref<16x64xf32, #gpu.address_space<workgroup>>)
// CHECK:           scf.for {{.*}} -> (f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32) {
// CHECK-COUNT-4:     memref.store %{{.*}}, %[[AS]]
// CHECK-NOT:         gpu.barrier
// CHECK:             gpu.barrier
// CHECK:             scf.for
// CHECK-COUNT-4:       memref.load %[[AS]]
// CHECK-COUNT-4:       memref.load %[[BS]]
// CHECK-COUNT-16:      arith.mulf
// CHECK:             gpu.barrier
func.func private @mm_transposed(%a: memref<?x64xf32>, %b: memref<32x64xf32>, %c: memref<?x32xf32>) {
  linalg.matmul indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>]
      ins(%a, %b : memref<?x64xf32>, memref<32x64xf32>) outs(%c : memref<?x32xf32>)
  return
}

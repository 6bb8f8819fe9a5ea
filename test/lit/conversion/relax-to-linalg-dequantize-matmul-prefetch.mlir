// RUN: relax-opt %s --split-input-file --pass-pipeline='builtin.module(convert-relax-to-linalg{target-features=+avx512f,+avx512vl,+avx512vnni})' | FileCheck %s
// RUN: relax-opt %s --split-input-file --pass-pipeline='builtin.module(convert-relax-to-linalg{target-features=portable})' | FileCheck %s --check-prefix=PORTABLE

// The GEMV paths of relax.dequantize_matmul prefetch, per group and weight row, the packed bytes of the
// next block of weight rows (the block's rows are short interleaved streams the hardware prefetcher
// misses): q8_0 with int8 activations (two groups, one 64-byte line, per 512-bit vpdpbusd: the bytes
// flipped to unsigned ones) ...
// CHECK-LABEL: func.func private @dequantize_matmul_0(
// CHECK-SAME:    %{{.*}}: tensor<?x64xf32>, %[[D:.*]]: tensor<8x64xi8>
// CHECK:         %[[B:.*]] = bufferization.to_buffer %[[D]] read_only : tensor<8x64xi8> to memref<8x64xi8>
// CHECK:         scf.forall
// CHECK:           memref.prefetch %[[B]][%{{.*}}, %{{.*}}], read, locality<3>, data : memref<8x64xi8>
// CHECK:           %[[W:.*]] = vector.transfer_read %[[D]]{{.*}} : tensor<8x64xi8>, vector<64xi8>
// CHECK:           arith.xori %[[W]], %{{.*}} : vector<64xi8>
// CHECK:           llvm.x86.avx512.vpdpbusd.512
// PORTABLE-LABEL: func.func private @dequantize_matmul_0(
// PORTABLE:         memref.prefetch
// PORTABLE:         arith.sitofp {{.*}} : vector<8xi8> to vector<8xf32>
func.func @q8_0(%x: !relax.tensor<["m", 64], f32>, %d: !relax.tensor<[8, 64], i8>, %s: !relax.tensor<[8, 2], f16>) -> !relax.tensor<["m", 8], f32> {
  %0 = "relax.dequantize_matmul"(%x, %d, %s) {activations = "i8", layout = "q8_0"} : (!relax.tensor<["m", 64], f32>, !relax.tensor<[8, 64], i8>, !relax.tensor<[8, 2], f16>) -> !relax.tensor<["m", 8], f32>
  return %0 : !relax.tensor<["m", 8], f32>
}

// -----

// ... and q4_0's superblocks of 4 groups (one 64-byte load per weight row: one prefetch each).
// CHECK-LABEL: func.func private @dequantize_matmul_0(
// CHECK-SAME:    %{{.*}}: tensor<?x128xf32>, %[[D:.*]]: tensor<8x64xi8>
// CHECK:         %[[B:.*]] = bufferization.to_buffer %[[D]] read_only
// CHECK:           memref.prefetch %[[B]]
// CHECK:           vector.transfer_read %[[D]]{{.*}} : tensor<8x64xi8>, vector<64xi8>
// CHECK:           llvm.x86.avx512.vpdpbusd.512
// PORTABLE-LABEL: func.func private @dequantize_matmul_0(
// PORTABLE:         memref.prefetch
// PORTABLE:         arith.uitofp
func.func @q4_0(%x: !relax.tensor<["m", 128], f32>, %d: !relax.tensor<[8, 64], ui8>, %s: !relax.tensor<[8, 4], f16>) -> !relax.tensor<["m", 8], f32> {
  %0 = "relax.dequantize_matmul"(%x, %d, %s) {activations = "i8", layout = "q4_0"} : (!relax.tensor<["m", 128], f32>, !relax.tensor<[8, 64], ui8>, !relax.tensor<[8, 4], f16>) -> !relax.tensor<["m", 8], f32>
  return %0 : !relax.tensor<["m", 8], f32>
}

// RUN: relax-opt %s --convert-relax-to-linalg --relax-lower-host --relax-lower-host | FileCheck %s

// relax.call_dps_library: inputs become read-only buffers cast to all-dynamic memrefs, outputs are
// allocated (or the runtime's destination), the library function fills them and returns nothing.
// A registered callee (relax_blas_gemm) gets its MLIR wrapper, which calls cblas; another callee is an
// external C function with the memref C interface.

// CHECK-LABEL: func.func @gemm(
// CHECK-SAME:    %[[X:.*]]: memref<?x16xf32>, %[[W:.*]]: memref<16x?xf32>, %[[OUT:.*]]: memref<?x?xf32> {relax.role = "output"}, %{{.*}}: memref<4xi64> {relax.role = "host"})
// CHECK:         %[[XT:.*]] = bufferization.to_tensor %[[X]] restrict
// CHECK:         %[[M:.*]] = tensor.dim %[[XT]]
// CHECK:         %[[WT:.*]] = bufferization.to_tensor %[[W]] restrict
// CHECK:         %[[N:.*]] = tensor.dim %[[WT]]
// CHECK:         %[[XB:.*]] = bufferization.to_buffer %[[XT]] read_only : tensor<?x16xf32> to memref<?x16xf32>
// CHECK:         %[[XC:.*]] = memref.cast %[[XB]] : memref<?x16xf32> to memref<?x?xf32>
// CHECK:         %[[WB:.*]] = bufferization.to_buffer %[[WT]] read_only
// CHECK:         %[[WC:.*]] = memref.cast %[[WB]]
// CHECK:         %[[BUF:.*]] = memref.alloc(%[[M]], %[[N]]) {alignment = 64 : i64} : memref<?x?xf32>
// CHECK:         call @relax_blas_gemm_f32_2_2(%[[XC]], %[[WC]], %[[BUF]]) : (memref<?x?xf32>, memref<?x?xf32>, memref<?x?xf32>) -> ()
// CHECK:         %[[Y:.*]] = bufferization.to_tensor %[[BUF]] restrict writable
// CHECK:         call @exp_0(%[[Y]],
func.func @gemm(%x: !relax.tensor<["m", 16], f32>, %w: !relax.tensor<[16, "n"], f32>) -> !relax.tensor<["m", "n"], f32> {
  %0 = "relax.call_dps_library"(%x, %w) {callee = "relax_blas_gemm"} : (!relax.tensor<["m", 16], f32>, !relax.tensor<[16, "n"], f32>) -> !relax.tensor<["m", "n"], f32>
  %1 = "relax.exp"(%0) : (!relax.tensor<["m", "n"], f32>) -> !relax.tensor<["m", "n"], f32>
  return %1 : !relax.tensor<["m", "n"], f32>
}

// The last call writes straight into the destination; a prim argument is an index.
// CHECK-LABEL: func.func @external(
// CHECK-SAME:    %[[X:.*]]: memref<?x4xf64>, %[[P:.*]]: index, %[[OUT:.*]]: memref<?xf64> {relax.role = "output"}, %{{.*}}: memref<4xi64> {relax.role = "host"})
// CHECK:         %[[XC:.*]] = memref.cast %{{.*}} : memref<?x4xf64> to memref<?x?xf64>
// CHECK-NOT:     memref.alloc
// CHECK:         call @my_rowsum(%[[XC]], %[[P]], %[[OUT]]) : (memref<?x?xf64>, index, memref<?xf64>) -> ()
// CHECK:         bufferization.to_tensor %[[OUT]] restrict writable
// CHECK-NEXT:    return
func.func @external(%x: !relax.tensor<["n", 4], f64>, %p: !relax.prim<"n">) -> !relax.tensor<["n"], f64> {
  %0 = "relax.call_dps_library"(%x, %p) {callee = "my_rowsum"} : (!relax.tensor<["n", 4], f64>, !relax.prim<"n">) -> !relax.tensor<["n"], f64>
  return %0 : !relax.tensor<["n"], f64>
}

// One declaration of the cblas symbol; the wrapper calls it once per batch (here one) with the
// row-major (101), no-transpose (111) codes and leading dims of at least 1.
// CHECK-LABEL: func.func private @scipy_cblas_sgemm64_(i32, i32, i32, i64, i64, i64, f32, !llvm.ptr, i64, !llvm.ptr, i64, f32, !llvm.ptr, i64)
// CHECK-LABEL: func.func private @relax_blas_gemm_f32_2_2(
// CHECK-SAME:    %[[A:.*]]: memref<?x?xf32>, %[[B:.*]]: memref<?x?xf32>, %[[C:.*]]: memref<?x?xf32>) {
// CHECK-DAG:     %[[K:.*]] = memref.dim %[[A]], %c1
// CHECK-DAG:     %[[K64:.*]] = arith.index_cast %[[K]] : index to i64
// CHECK-DAG:     %[[LDA:.*]] = arith.maxsi %[[K64]], %c1_i64 : i64
// CHECK-DAG:     %[[PA:.*]] = memref.extract_aligned_pointer_as_index %[[A]]
// CHECK-DAG:     %[[PC:.*]] = memref.extract_aligned_pointer_as_index %[[C]]
// CHECK:         scf.for
// CHECK:           llvm.inttoptr
// CHECK:           func.call @scipy_cblas_sgemm64_(%c101_i32, %c111_i32, %c111_i32, %{{.*}}, %{{.*}}, %[[K64]], %cst, %{{.*}}, %[[LDA]], %{{.*}}, %{{.*}}, %cst_{{.*}}, %{{.*}}, %{{.*}})
// CHECK-LABEL: func.func private @my_rowsum(memref<?x?xf64>, index, memref<?xf64>) attributes {llvm.emit_c_interface}

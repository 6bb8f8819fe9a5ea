// RUN: relax-opt %s --relax-dispatch-blas --relax-dispatch-blas --split-input-file | FileCheck %s

// A 2-D matmul with symbolic dims becomes one library call with the same result type.
// CHECK-LABEL: func.func @gemm(
// CHECK-NOT:     relax.matmul
// CHECK:         %[[Y:.*]] = "relax.call_dps_library"(%arg0, %arg1) {callee = "relax_blas_gemm"} : (!relax.tensor<["m", "k"], f32>, !relax.tensor<["k", "n"], f32>) -> !relax.tensor<["m", "n"], f32>
// CHECK-NEXT:    return %[[Y]]
func.func @gemm(%x: !relax.tensor<["m", "k"], f32>, %w: !relax.tensor<["k", "n"], f32>) -> !relax.tensor<["m", "n"], f32> {
  %0 = "relax.matmul"(%x, %w) : (!relax.tensor<["m", "k"], f32>, !relax.tensor<["k", "n"], f32>) -> !relax.tensor<["m", "n"], f32>
  return %0 : !relax.tensor<["m", "n"], f32>
}

// -----

// A bias add that is the product's only use is folded in; the activation after it stays.
// CHECK-LABEL: func.func @bias_gelu(
// CHECK:         %[[Y:.*]] = "relax.call_dps_library"(%arg0, %arg1, %arg2) {callee = "relax_blas_gemm"} : (!relax.tensor<["b", "s", 64], f64>, !relax.tensor<[64, 96], f64>, !relax.tensor<[96], f64>) -> !relax.tensor<["b", "s", 96], f64>
// CHECK-NOT:     relax.add
// CHECK:         "relax.gelu"(%[[Y]])
func.func @bias_gelu(%x: !relax.tensor<["b", "s", 64], f64>, %w: !relax.tensor<[64, 96], f64>, %b: !relax.tensor<[96], f64>) -> !relax.tensor<["b", "s", 96], f64> {
  %0 = "relax.matmul"(%x, %w) : (!relax.tensor<["b", "s", 64], f64>, !relax.tensor<[64, 96], f64>) -> !relax.tensor<["b", "s", 96], f64>
  %1 = "relax.add"(%0, %b) : (!relax.tensor<["b", "s", 96], f64>, !relax.tensor<[96], f64>) -> !relax.tensor<["b", "s", 96], f64>
  %2 = "relax.gelu"(%1) : (!relax.tensor<["b", "s", 96], f64>) -> !relax.tensor<["b", "s", 96], f64>
  return %2 : !relax.tensor<["b", "s", 96], f64>
}

// -----

// A residual (bias of the product's shape, on either side of the add) is folded in; batched operands
// with the same batch dims are one call.
// CHECK-LABEL: func.func @residual_batched(
// CHECK:         %[[Y:.*]] = "relax.call_dps_library"(%arg0, %arg1, %arg2) {callee = "relax_blas_gemm"} : (!relax.tensor<["b", "m", 8], f32>, !relax.tensor<["b", 8, "n"], f32>, !relax.tensor<["b", "m", "n"], f32>) -> !relax.tensor<["b", "m", "n"], f32>
// CHECK-NEXT:    return %[[Y]]
func.func @residual_batched(%x: !relax.tensor<["b", "m", 8], f32>, %w: !relax.tensor<["b", 8, "n"], f32>, %r: !relax.tensor<["b", "m", "n"], f32>) -> !relax.tensor<["b", "m", "n"], f32> {
  %0 = "relax.matmul"(%x, %w) : (!relax.tensor<["b", "m", 8], f32>, !relax.tensor<["b", 8, "n"], f32>) -> !relax.tensor<["b", "m", "n"], f32>
  %1 = "relax.add"(%r, %0) : (!relax.tensor<["b", "m", "n"], f32>, !relax.tensor<["b", "m", "n"], f32>) -> !relax.tensor<["b", "m", "n"], f32>
  return %1 : !relax.tensor<["b", "m", "n"], f32>
}

// -----

// A product with two uses keeps its add; a bias that broadcasts the product to a larger shape too.
// CHECK-LABEL: func.func @not_folded(
// CHECK:         %[[Y:.*]] = "relax.call_dps_library"(%arg0, %arg1) {callee = "relax_blas_gemm"}
// CHECK:         "relax.add"(%[[Y]], %arg2)
// CHECK:         "relax.multiply"
// CHECK:         %[[Z:.*]] = "relax.call_dps_library"(%arg0, %arg1) {callee = "relax_blas_gemm"}
// CHECK:         "relax.add"(%[[Z]], %arg3)
func.func @not_folded(%x: !relax.tensor<["m", 8], f32>, %w: !relax.tensor<[8, 8], f32>, %b: !relax.tensor<[8], f32>, %big: !relax.tensor<[2, "m", 8], f32>) -> (!relax.tensor<["m", 8], f32>, !relax.tensor<[2, "m", 8], f32>) {
  %0 = "relax.matmul"(%x, %w) : (!relax.tensor<["m", 8], f32>, !relax.tensor<[8, 8], f32>) -> !relax.tensor<["m", 8], f32>
  %1 = "relax.add"(%0, %b) : (!relax.tensor<["m", 8], f32>, !relax.tensor<[8], f32>) -> !relax.tensor<["m", 8], f32>
  %2 = "relax.multiply"(%1, %0) : (!relax.tensor<["m", 8], f32>, !relax.tensor<["m", 8], f32>) -> !relax.tensor<["m", 8], f32>
  %3 = "relax.matmul"(%x, %w) : (!relax.tensor<["m", 8], f32>, !relax.tensor<[8, 8], f32>) -> !relax.tensor<["m", 8], f32>
  %4 = "relax.add"(%3, %big) : (!relax.tensor<["m", 8], f32>, !relax.tensor<[2, "m", 8], f32>) -> !relax.tensor<[2, "m", 8], f32>
  return %2, %4 : !relax.tensor<["m", 8], f32>, !relax.tensor<[2, "m", 8], f32>
}

// -----

// Left to the generated kernels: integer dtypes, contraction dims only assumed equal, broadcast
// batch dims, 1-D operands.
// CHECK-LABEL: func.func @unmatched(
// CHECK-NOT:     relax.call_dps_library
// CHECK-COUNT-4: "relax.matmul"
// CHECK-NOT:     relax.call_dps_library
func.func @unmatched(%i: !relax.tensor<["m", 4], i32>, %j: !relax.tensor<[4, "n"], i32>, %x: !relax.tensor<["m", "k"], f32>, %w: !relax.tensor<["k2", "n"], f32>, %a: !relax.tensor<[1, "m", 4], f32>, %b: !relax.tensor<["b", 4, "n"], f32>, %v: !relax.tensor<[4], f32>) -> (!relax.tensor<["m", "n"], i32>, !relax.tensor<["m", "n"], f32>, !relax.tensor<["b", "m", "n"], f32>, !relax.tensor<["b", "n"], f32>) {
  %0 = "relax.matmul"(%i, %j) : (!relax.tensor<["m", 4], i32>, !relax.tensor<[4, "n"], i32>) -> !relax.tensor<["m", "n"], i32>
  %1 = "relax.matmul"(%x, %w) : (!relax.tensor<["m", "k"], f32>, !relax.tensor<["k2", "n"], f32>) -> !relax.tensor<["m", "n"], f32>
  %2 = "relax.matmul"(%a, %b) : (!relax.tensor<[1, "m", 4], f32>, !relax.tensor<["b", 4, "n"], f32>) -> !relax.tensor<["b", "m", "n"], f32>
  %3 = "relax.matmul"(%v, %b) : (!relax.tensor<[4], f32>, !relax.tensor<["b", 4, "n"], f32>) -> !relax.tensor<["b", "n"], f32>
  return %0, %1, %2, %3 : !relax.tensor<["m", "n"], i32>, !relax.tensor<["m", "n"], f32>, !relax.tensor<["b", "m", "n"], f32>, !relax.tensor<["b", "n"], f32>
}

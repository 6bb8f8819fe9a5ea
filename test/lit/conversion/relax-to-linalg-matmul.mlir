// RUN: relax-opt %s --convert-relax-to-linalg --split-input-file | FileCheck %s

// matmul kernels are named linalg ops (linalg.matmul, linalg.batch_matmul) where the shapes allow, so
// that transform-dialect schedules can match them; reshapes are views, nothing is copied.

// 2-D x 2-D: a fill of the destination, then linalg.matmul into it.
// CHECK-LABEL: func.func @mm2d(
// CHECK:       func.func private @matmul_0(%[[A:.*]]: tensor<?x64xf32>, %[[B:.*]]: tensor<64x32xf32>, %[[C:.*]]: tensor<?x32xf32>)
// CHECK:         %[[Z:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%[[C]] : tensor<?x32xf32>)
// CHECK:         linalg.matmul ins(%[[A]], %[[B]] : tensor<?x64xf32>, tensor<64x32xf32>) outs(%[[Z]] : tensor<?x32xf32>)
func.func @mm2d(%x: !relax.tensor<["n", 64], f32>, %w: !relax.tensor<[64, 32], f32>) -> !relax.tensor<["n", 32], f32> {
  %0 = "relax.matmul"(%x, %w) : (!relax.tensor<["n", 64], f32>, !relax.tensor<[64, 32], f32>) -> !relax.tensor<["n", 32], f32>
  return %0 : !relax.tensor<["n", 32], f32>
}

// -----

// [b, s, 64] x [64, 48] with symbolic b and s: collapsing [b, s] into rows would need an expand_shape
// back to two dynamic dims in one group, which MLIR 22's expand-strided-metadata cannot lower; so a
// linalg.batch_matmul whose rhs map broadcasts it over the batch.
// CHECK-DAG:   #[[LHS:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>
// CHECK-DAG:   #[[RHS:.*]] = affine_map<(d0, d1, d2, d3) -> (d3, d2)>
// CHECK-DAG:   #[[OUT:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>
// CHECK-LABEL: func.func @transformer(
// CHECK:       func.func private @matmul_0(%[[A:.*]]: tensor<?x?x64xf32>, %[[B:.*]]: tensor<64x48xf32>, %[[C:.*]]: tensor<?x?x48xf32>)
// CHECK:         linalg.batch_matmul indexing_maps = [#[[LHS]], #[[RHS]], #[[OUT]]] ins(%[[A]], %[[B]] : tensor<?x?x64xf32>, tensor<64x48xf32>) outs(%{{.*}} : tensor<?x?x48xf32>)
func.func @transformer(%x: !relax.tensor<["b", "s", 64], f32>, %w: !relax.tensor<[64, 48], f32>) -> !relax.tensor<["b", "s", 48], f32> {
  %0 = "relax.matmul"(%x, %w) : (!relax.tensor<["b", "s", 64], f32>, !relax.tensor<[64, 48], f32>) -> !relax.tensor<["b", "s", 48], f32>
  return %0 : !relax.tensor<["b", "s", 48], f32>
}

// -----

// One dynamic leading dim: lhs and destination collapsed to rows (views), one linalg.matmul, expanded back.
// CHECK-LABEL: func.func @rows(
// CHECK:       func.func private @matmul_0(%[[A:.*]]: tensor<?x5x64xf32>, %[[B:.*]]: tensor<64x48xf32>, %[[C:.*]]: tensor<?x5x48xf32>)
// CHECK:         %[[A2:.*]] = tensor.collapse_shape %[[A]] {{\[}}[0, 1], [2]] : tensor<?x5x64xf32> into tensor<?x64xf32>
// CHECK:         %[[C2:.*]] = tensor.collapse_shape %[[C]] {{\[}}[0, 1], [2]] : tensor<?x5x48xf32> into tensor<?x48xf32>
// CHECK:         %[[Z:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%[[C2]] : tensor<?x48xf32>)
// CHECK:         %[[R:.*]] = linalg.matmul ins(%[[A2]], %[[B]] : tensor<?x64xf32>, tensor<64x48xf32>) outs(%[[Z]] : tensor<?x48xf32>)
// CHECK:         %[[N:.*]] = tensor.dim %[[C]], %c0
// CHECK:         tensor.expand_shape %[[R]] {{\[}}[0, 1], [2]] output_shape [%[[N]], 5, 48] : tensor<?x48xf32> into tensor<?x5x48xf32>
func.func @rows(%x: !relax.tensor<["n", 5, 64], f32>, %w: !relax.tensor<[64, 48], f32>) -> !relax.tensor<["n", 5, 48], f32> {
  %0 = "relax.matmul"(%x, %w) : (!relax.tensor<["n", 5, 64], f32>, !relax.tensor<[64, 48], f32>) -> !relax.tensor<["n", 5, 48], f32>
  return %0 : !relax.tensor<["n", 5, 48], f32>
}

// -----

// Equal batch dims: linalg.batch_matmul.
// CHECK-LABEL: func.func @batched(
// CHECK:       func.func private @matmul_0(%[[A:.*]]: tensor<?x?x?xf32>, %[[B:.*]]: tensor<?x?x?xf32>, %[[C:.*]]: tensor<?x?x?xf32>)
// CHECK:         linalg.batch_matmul ins(%[[A]], %[[B]] : tensor<?x?x?xf32>, tensor<?x?x?xf32>) outs(%{{.*}} : tensor<?x?x?xf32>)
func.func @batched(%x: !relax.tensor<["b", "n", "k"], f32>, %w: !relax.tensor<["b", "k", "m"], f32>) -> !relax.tensor<["b", "n", "m"], f32> {
  %0 = "relax.matmul"(%x, %w) : (!relax.tensor<["b", "n", "k"], f32>, !relax.tensor<["b", "k", "m"], f32>) -> !relax.tensor<["b", "n", "m"], f32>
  return %0 : !relax.tensor<["b", "n", "m"], f32>
}

// -----

// Contraction dims "k" and "k2" that the deduction only assumed equal: checked by a match_cast.
// CHECK-LABEL: func.func @assumed(
// CHECK:         %[[W:.*]] = "relax.match_cast"(%arg1) : (!relax.tensor<["k2", "m"], f32>) -> !relax.tensor<["k", "m"], f32>
// CHECK:         "relax.call_tir"(%arg0, %[[W]]) {callee = @matmul_0}
// CHECK:         linalg.matmul
func.func @assumed(%x: !relax.tensor<["n", "k"], f32>, %w: !relax.tensor<["k2", "m"], f32>) -> !relax.tensor<["n", "m"], f32> {
  %0 = "relax.matmul"(%x, %w) : (!relax.tensor<["n", "k"], f32>, !relax.tensor<["k2", "m"], f32>) -> !relax.tensor<["n", "m"], f32>
  return %0 : !relax.tensor<["n", "m"], f32>
}

// -----

// A 1-D lhs gets a unit row, and so does the destination (expand_shape views); collapsed back.
// CHECK-LABEL: func.func @vector(
// CHECK:       func.func private @matmul_0(%[[A:.*]]: tensor<?xf32>, %[[B:.*]]: tensor<?x?xf32>, %[[C:.*]]: tensor<?xf32>)
// CHECK:         %[[A2:.*]] = tensor.expand_shape %[[A]] {{\[}}[0, 1]] output_shape [1, %{{.*}}] : tensor<?xf32> into tensor<1x?xf32>
// CHECK:         %[[C2:.*]] = tensor.expand_shape %[[C]] {{\[}}[0, 1]] output_shape [1, %{{.*}}] : tensor<?xf32> into tensor<1x?xf32>
// CHECK:         %[[R:.*]] = linalg.matmul ins(%[[A2]], %[[B]] : tensor<1x?xf32>, tensor<?x?xf32>)
// CHECK:         tensor.collapse_shape %[[R]] {{\[}}[0, 1]] : tensor<1x?xf32> into tensor<?xf32>
func.func @vector(%x: !relax.tensor<["k"], f32>, %w: !relax.tensor<["k", "m"], f32>) -> !relax.tensor<["m"], f32> {
  %0 = "relax.matmul"(%x, %w) : (!relax.tensor<["k"], f32>, !relax.tensor<["k", "m"], f32>) -> !relax.tensor<["m"], f32>
  return %0 : !relax.tensor<["m"], f32>
}

// -----

// A size-1 batch dim broadcast against 3: a linalg.generic whose lhs map reads batch index 0.
// CHECK-DAG:   #[[LHS:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, 0, d2, d4)>
// CHECK-DAG:   #[[RHS:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d1, d4, d3)>
// CHECK-LABEL: func.func @broadcast(
// CHECK:         linalg.generic {indexing_maps = [#[[LHS]], #[[RHS]], #{{.*}}], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]}
// CHECK-SAME:      ins(%{{.*}}, %{{.*}} : tensor<?x1x?x?xf32>, tensor<3x?x?xf32>) outs(%{{.*}} : tensor<?x3x?x?xf32>)
// CHECK:           arith.mulf
// CHECK:           arith.addf
func.func @broadcast(%x: !relax.tensor<["b", 1, "n", "k"], f32>, %w: !relax.tensor<[3, "k", "m"], f32>) -> !relax.tensor<["b", 3, "n", "m"], f32> {
  %0 = "relax.matmul"(%x, %w) : (!relax.tensor<["b", 1, "n", "k"], f32>, !relax.tensor<[3, "k", "m"], f32>) -> !relax.tensor<["b", 3, "n", "m"], f32>
  return %0 : !relax.tensor<["b", 3, "n", "m"], f32>
}

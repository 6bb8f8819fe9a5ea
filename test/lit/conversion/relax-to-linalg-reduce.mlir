// RUN: relax-opt %s --convert-relax-to-linalg --split-input-file | FileCheck %s

// Kernels of the reductions (reduce.py), arange/full (create.py) and the data-dependent unique/nonzero
// (dynamic.py). Symbolic dims stay dynamic ("?").

// Reductions are linalg.generic ops with "reduction" iterators into the destination (filled with the
// combine op's identity first); kept unit dims are collapsed away and expanded back (views).
// CHECK-LABEL: func.func @sum_keepdims(
// CHECK:         "relax.call_tir"(%arg0) {callee = @sum_0} : (!relax.tensor<["n", 4, "m"], f32>) -> !relax.tensor<["n", 1, "m"], f32>
// CHECK:       func.func private @sum_0(%[[X:.*]]: tensor<?x4x?xf32>, %[[OUT:.*]]: tensor<?x1x?xf32>)
// CHECK:         %[[ACC:.*]] = tensor.collapse_shape %[[OUT]] {{\[}}[0], [1, 2]] : tensor<?x1x?xf32> into tensor<?x?xf32>
// CHECK:         %[[INIT:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%[[ACC]] : tensor<?x?xf32>)
// CHECK:         %[[SUM:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "reduction", "parallel"]} ins(%[[X]] : tensor<?x4x?xf32>) outs(%[[INIT]] : tensor<?x?xf32>)
// CHECK:           arith.addf
// CHECK:         tensor.expand_shape %[[SUM]] {{\[}}[0], [1, 2]] output_shape [%{{.*}}, 1, %{{.*}}] : tensor<?x?xf32> into tensor<?x1x?xf32>
func.func @sum_keepdims(%x: !relax.tensor<["n", 4, "m"], f32>) -> !relax.tensor<["n", 1, "m"], f32> {
  %0 = "relax.sum"(%x) {axes = [1], keepdims = true} : (!relax.tensor<["n", 4, "m"], f32>) -> !relax.tensor<["n", 1, "m"], f32>
  return %0 : !relax.tensor<["n", 1, "m"], f32>
}

// -----

// A mean over every axis: a rank-0 destination, the sum divided by the element count n * m.
// CHECK-LABEL: func.func @mean_all(
// CHECK:       func.func private @mean_0(%[[X:.*]]: tensor<?x?xf32>, %{{.*}}: tensor<f32>)
// CHECK:         linalg.generic {{.*}} iterator_types = ["reduction", "reduction"]} ins(%[[X]] : tensor<?x?xf32>) outs(%{{.*}} : tensor<f32>)
// CHECK-DAG:     %[[M:.*]] = tensor.dim %[[X]], %c1
// CHECK-DAG:     %[[N:.*]] = tensor.dim %[[X]], %c0
// CHECK:         %[[COUNT:.*]] = arith.muli %{{.*}}, %{{.*}} : index
// CHECK:         %[[F:.*]] = arith.sitofp %{{.*}} : i64 to f32
// CHECK:         linalg.generic
// CHECK:           arith.divf %{{.*}}, %[[F]] : f32
func.func @mean_all(%x: !relax.tensor<["n", "m"], f32>) -> !relax.tensor<[], f32> {
  %0 = "relax.mean"(%x) {axes, keepdims = false} : (!relax.tensor<["n", "m"], f32>) -> !relax.tensor<[], f32>
  return %0 : !relax.tensor<[], f32>
}

// -----

// argmax: one generic carrying the best value (a temporary) and its index (the destination).
// CHECK-LABEL: func.func @argmax(
// CHECK:       func.func private @argmax_0(%[[X:.*]]: tensor<?x8xf32>, %[[OUT:.*]]: tensor<?xi64>)
// CHECK:         %[[BEST:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<?xf32>)
// CHECK:         %[[IDX:.*]] = linalg.fill ins(%{{.*}} : i64) outs(%[[OUT]] : tensor<?xi64>)
// CHECK:         %[[R:.*]]:2 = linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]} ins(%[[X]] : tensor<?x8xf32>) outs(%[[BEST]], %[[IDX]] : tensor<?xf32>, tensor<?xi64>)
// CHECK:           linalg.index 1 : index
// CHECK:           arith.cmpf ogt
// CHECK:         } -> (tensor<?xf32>, tensor<?xi64>)
// CHECK:         return %[[R]]#1 : tensor<?xi64>
func.func @argmax(%x: !relax.tensor<["n", 8], f32>) -> !relax.tensor<["n"], i64> {
  %0 = "relax.argmax"(%x) {axis = [-1], keepdims = false} : (!relax.tensor<["n", 8], f32>) -> !relax.tensor<["n"], i64>
  return %0 : !relax.tensor<["n"], i64>
}

// -----

// cumsum: a loop over the axis; each step adds the previous result row to the input row.
// CHECK-LABEL: func.func @cumsum(
// CHECK:       func.func private @cumsum_0(%[[X:.*]]: tensor<?x4xi64>, %{{.*}}: tensor<?x4xi64>)
// CHECK:         %[[N:.*]] = tensor.dim %[[X]], %c0
// CHECK:         scf.for %[[I:.*]] = %c0 to %[[N]] step %c1 iter_args(%[[ACC:.*]] = %{{.*}}) -> (tensor<?x4xi64>)
// CHECK:           tensor.extract_slice %[[X]][%[[I]], 0] [1, 4] [1, 1] : tensor<?x4xi64> to tensor<1x4xi64>
// CHECK:           tensor.extract_slice %[[ACC]][%{{.*}}, 0] [1, 4] [1, 1] : tensor<?x4xi64> to tensor<1x4xi64>
// CHECK:           arith.addi
// CHECK:           tensor.insert_slice %{{.*}} into %[[ACC]][%[[I]], 0] [1, 4] [1, 1] : tensor<1x4xi64> into tensor<?x4xi64>
func.func @cumsum(%x: !relax.tensor<["n", 4], i64>) -> !relax.tensor<["n", 4], i64> {
  %0 = "relax.cumsum"(%x) {axis = 0 : i64, exclusive = false, reverse = false} : (!relax.tensor<["n", 4], i64>) -> !relax.tensor<["n", 4], i64>
  return %0 : !relax.tensor<["n", 4], i64>
}

// -----

// topk: k = 5 selection steps over the rows carry the indices; the values are gathered after.
// CHECK-LABEL: func.func @topk(
// CHECK:         %{{.*}}:2 = "relax.call_tir"(%arg0) {callee = @topk_0}
// CHECK:       func.func private @topk_0(%[[X:.*]]: tensor<?x100xf32>, %[[V:.*]]: tensor<?x5xf32>, %[[I:.*]]: tensor<?x5xi64>)
// CHECK:         %[[IDX:.*]] = scf.for %{{.*}} = %c0 to %c5 step %c1 iter_args(%{{.*}} = %{{.*}}) -> (tensor<?x5xi64>)
// CHECK:           linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]} ins(%[[X]], %{{.*}} : tensor<?x100xf32>, tensor<?xi64>)
// CHECK:           tensor.insert_slice
// CHECK:         linalg.generic {{.*}} ins(%[[IDX]] : tensor<?x5xi64>) outs(%[[V]] : tensor<?x5xf32>)
// CHECK:           tensor.extract %[[X]]
func.func @topk(%x: !relax.tensor<["n", 100], f32>) -> (!relax.tensor<["n", 5], f32>, !relax.tensor<["n", 5], i64>) {
  %v, %i = "relax.topk"(%x) {axis = -1 : i64, k = 5 : i64, largest = true} : (!relax.tensor<["n", 100], f32>) -> (!relax.tensor<["n", 5], f32>, !relax.tensor<["n", 5], i64>)
  return %v, %i : !relax.tensor<["n", 5], f32>, !relax.tensor<["n", 5], i64>
}

// -----

// arange with a symbolic start: "n" is not a dim of any kernel argument, so it comes as an index.
// CHECK-LABEL: func.func @arange(
// CHECK:         %[[N:.*]] = "relax.prim_value"() {value = "n"} : () -> !relax.prim<"n">
// CHECK:         "relax.call_tir"(%[[N]]) {callee = @arange_0}
// CHECK:       func.func private @arange_0(%[[START:.*]]: index, %[[OUT:.*]]: tensor<?xi64>)
// CHECK:         linalg.generic {{.*}} outs(%[[OUT]] : tensor<?xi64>)
// CHECK:           %[[I:.*]] = linalg.index 0 : index
// CHECK:           %[[D:.*]] = arith.muli %[[I]], %c-3 : index
// CHECK:           %[[S:.*]] = arith.addi %[[START]], %[[D]] : index
// CHECK:           arith.index_cast %[[S]] : index to i64
func.func @arange(%x: !relax.tensor<["n"], f32>) -> !relax.tensor<["(n + 2) floordiv 3"], i64> {
  %0 = "relax.arange"() {dtype = "i64", end = 0 : i64, start = "n", step = -3 : i64} : () -> !relax.tensor<["(n + 2) floordiv 3"], i64>
  return %0 : !relax.tensor<["(n + 2) floordiv 3"], i64>
}

// -----

// full: a fill of the symbolic destination (-inf as its bit pattern).
// CHECK-LABEL: func.func @full(
// CHECK:       func.func private @full_0(%[[OUT:.*]]: tensor<?x?xf32>)
// CHECK:         %[[C:.*]] = arith.constant 0xFF800000 : f32
// CHECK:         linalg.fill ins(%[[C]] : f32) outs(%[[OUT]] : tensor<?x?xf32>)
func.func @full(%x: !relax.tensor<["b", "s"], f32>) -> !relax.tensor<["b", "s"], f32> {
  %0 = "relax.full"() {dtype = "f32", shape = ["b", "s"], value = 0xFFF0000000000000 : f64} : () -> !relax.tensor<["b", "s"], f32>
  return %0 : !relax.tensor<["b", "s"], f32>
}

// -----

// unique allocates its result: merge sort (scf.while of scf.for), count, tensor.empty(count), fill.
// CHECK-LABEL: func.func @unique(
// CHECK:         "relax.call_tir"(%arg0) {callee = @unique_0} : (!relax.tensor<["n", 4], i64>) -> !relax.tensor<["?"], i64>
// CHECK:       func.func private @unique_0(%[[X:.*]]: tensor<?x4xi64>) -> tensor<?xi64>
// CHECK:         %[[FLAT:.*]] = tensor.collapse_shape %[[X]] {{\[}}[0, 1]]
// CHECK:         %[[SORTED:.*]]:3 = scf.while (%{{.*}} = %[[FLAT]], {{.*}}) : (tensor<?xi64>, tensor<?xi64>, index)
// CHECK:         linalg.generic {{.*}} iterator_types = ["reduction"]} ins(%{{.*}}, %{{.*}} : tensor<?xi64>, tensor<?xi64>) outs(%{{.*}} : tensor<i64>)
// CHECK:         } -> tensor<i64>
// CHECK:         %[[COUNT:.*]] = arith.addi %{{.*}}, %{{.*}} : index
// CHECK:         %[[OUT:.*]] = tensor.empty(%[[COUNT]]) : tensor<?xi64>
// CHECK:         %[[R:.*]]:2 = scf.for {{.*}} iter_args(%{{.*}} = %c0, %{{.*}} = %[[OUT]]) -> (index, tensor<?xi64>)
// CHECK:           scf.if
// CHECK:             tensor.insert
// CHECK:         return %[[R]]#1 : tensor<?xi64>
func.func @unique(%x: !relax.tensor<["n", 4], i64>) -> !relax.tensor<["?"], i64> {
  %0 = "relax.unique"(%x) : (!relax.tensor<["n", 4], i64>) -> !relax.tensor<["?"], i64>
  return %0 : !relax.tensor<["?"], i64>
}

// -----

// nonzero: count, allocate [rank, count], write the coordinates of each non-zero element.
// CHECK-LABEL: func.func @nonzero(
// CHECK:       func.func private @nonzero_0(%[[X:.*]]: tensor<?x4xf32>) -> tensor<2x?xi64>
// CHECK:         linalg.generic {{.*}} iterator_types = ["reduction"]} ins(%{{.*}} : tensor<?xf32>) outs(%{{.*}} : tensor<i64>)
// CHECK:           arith.cmpf une
// CHECK:         %[[COUNT:.*]] = arith.index_cast %{{.*}} : i64 to index
// CHECK:         %[[OUT:.*]] = tensor.empty(%[[COUNT]]) : tensor<2x?xi64>
// CHECK:         scf.for {{.*}} iter_args(%{{.*}} = %c0, %{{.*}} = %[[OUT]]) -> (index, tensor<2x?xi64>)
// CHECK:           scf.if
// CHECK-COUNT-2:     tensor.insert
func.func @nonzero(%x: !relax.tensor<["n", 4], f32>) -> !relax.tensor<[2, "?"], i64> {
  %0 = "relax.nonzero"(%x) : (!relax.tensor<["n", 4], f32>) -> !relax.tensor<[2, "?"], i64>
  return %0 : !relax.tensor<[2, "?"], i64>
}

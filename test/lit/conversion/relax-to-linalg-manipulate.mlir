// RUN: relax-opt %s --convert-relax-to-linalg --split-input-file | FileCheck %s

// Kernels of the manipulation and indexing ops (manipulate.py, pad.py, index.py): symbolic dims stay
// dynamic, reshapes are views of the input copied into the destination, slices copy through
// extract_slice/insert_slice, gathers read with tensor.extract inside a linalg.generic.

// Splitting heads: the reshape expands the last dim (a view) and copies; the permutation is a
// linalg.transpose. Sizes of the expansion are read from the destination.
// CHECK-LABEL: func.func @heads(
// CHECK:         %[[R:.*]] = "relax.call_tir"(%arg0) {callee = @[[RESHAPE:reshape_0]]}
// CHECK-SAME:      -> !relax.tensor<["b", "s", 8, 64], f32>
// CHECK:         "relax.call_tir"(%[[R]]) {callee = @[[PERMUTE:permute_dims_0]]}
// CHECK-SAME:      -> !relax.tensor<["b", 8, "s", 64], f32>
// CHECK:       func.func private @[[RESHAPE]](%[[X:[a-z0-9_]+]]: tensor<?x?x512xf32>, %[[OUT:[a-z0-9_]+]]: tensor<?x?x8x64xf32>)
// CHECK-DAG:     %[[B:.*]] = tensor.dim %[[OUT]], %c0
// CHECK-DAG:     %[[S:.*]] = tensor.dim %[[OUT]], %c1
// CHECK:         %[[V:.*]] = tensor.expand_shape %[[X]] {{\[}}[0], [1], [2, 3]] output_shape [%[[B]], %[[S]], 8, 64]
// CHECK:         linalg.copy ins(%[[V]] : tensor<?x?x8x64xf32>) outs(%[[OUT]] : tensor<?x?x8x64xf32>)
// CHECK:       func.func private @[[PERMUTE]](%{{.*}}: tensor<?x?x8x64xf32>, %{{.*}}: tensor<?x8x?x64xf32>)
// CHECK:         linalg.transpose ins(%{{.*}} : tensor<?x?x8x64xf32>) outs(%{{.*}} : tensor<?x8x?x64xf32>) permutation = [0, 2, 1, 3]
func.func @heads(%x: !relax.tensor<["b", "s", 512], f32>) -> !relax.tensor<["b", 8, "s", 64], f32> {
  %0 = "relax.reshape"(%x) {shape = ["b", "s", 8, 64]} : (!relax.tensor<["b", "s", 512], f32>) -> !relax.tensor<["b", "s", 8, 64], f32>
  %1 = "relax.permute_dims"(%0) {axes = [0, 2, 1, 3]} : (!relax.tensor<["b", "s", 8, 64], f32>) -> !relax.tensor<["b", 8, "s", 64], f32>
  return %1 : !relax.tensor<["b", 8, "s", 64], f32>
}

// -----

// One dynamic dim split into two cannot be an expand_shape: tensor.reshape with the sizes.
// CHECK-LABEL: func.func @merged(
// CHECK:       func.func private @reshape_0(
// CHECK-SAME:    %[[X:[a-z0-9_]+]]: tensor<?x64xf32>, %[[OUT:[a-z0-9_]+]]: tensor<?x?x64xf32>)
// CHECK:         %[[SHAPE:.*]] = tensor.from_elements %{{.*}}, %{{.*}}, %c64 : tensor<3xindex>
// CHECK:         %[[V:.*]] = tensor.reshape %[[X]](%[[SHAPE]])
// CHECK:         linalg.copy ins(%[[V]] : tensor<?x?x64xf32>) outs(%[[OUT]] : tensor<?x?x64xf32>)
func.func @merged(%x: !relax.tensor<["b * s", 64], f32>, %y: !relax.tensor<["b", "s"], f32>) -> !relax.tensor<["b", "s", 64], f32> {
  %0 = "relax.reshape"(%x) {shape = ["b", "s", 64]} : (!relax.tensor<["b * s", 64], f32>) -> !relax.tensor<["b", "s", 64], f32>
  return %0 : !relax.tensor<["b", "s", 64], f32>
}

// -----

// An input whose element count equals the result's only at run time is flattened and its count checked first
// (counts, not dims: [n, w] -> [n, 2] holds at n = 0 for any w).
// CHECK-LABEL: func.func @count(
// CHECK:         %[[C:.*]] = "relax.check_size"(%arg0) {size = "512 * b * s"} : (!relax.tensor<["?", 512], f32>) -> !relax.tensor<["512 * b * s"], f32>
// CHECK:         "relax.call_tir"(%[[C]]) {callee = @reshape_0}
// CHECK:       func.func private @reshape_0(%{{.*}}: tensor<?xf32>, %{{.*}}: tensor<?x?x8x64xf32>)
func.func @count(%x: !relax.tensor<["?", 512], f32>, %y: !relax.tensor<["b", "s"], f32>) -> !relax.tensor<["b", "s", 8, 64], f32> {
  %0 = "relax.reshape"(%x) {shape = ["b", "s", 8, 64]} : (!relax.tensor<["?", 512], f32>) -> !relax.tensor<["b", "s", 8, 64], f32>
  return %0 : !relax.tensor<["b", "s", 8, 64], f32>
}

// -----

// Concat copies each operand into its slice; the second starts at the first one's dynamic size.
// CHECK-LABEL: func.func @concat(
// CHECK:       func.func private @concat_0(
// CHECK-SAME:    %[[X:[a-z0-9_]+]]: tensor<?x4xf32>, %[[Y:[a-z0-9_]+]]: tensor<?x4xf32>, %[[OUT:[a-z0-9_]+]]: tensor<?x4xf32>)
// CHECK:         %[[N:.*]] = tensor.dim %[[X]], %c0
// CHECK:         %[[S0:.*]] = tensor.extract_slice %[[OUT]][0, 0] [%[[N]], 4] [1, 1]
// CHECK:         %[[C0:.*]] = linalg.copy ins(%[[X]] : tensor<?x4xf32>) outs(%[[S0]] : tensor<?x4xf32>)
// CHECK:         %[[I0:.*]] = tensor.insert_slice %[[C0]] into %[[OUT]][0, 0] [%[[N]], 4] [1, 1]
// CHECK:         %[[M:.*]] = tensor.dim %[[Y]], %c0
// CHECK:         %[[S1:.*]] = tensor.extract_slice %[[I0]][%[[N]], 0] [%[[M]], 4] [1, 1]
// CHECK:         %[[C1:.*]] = linalg.copy ins(%[[Y]] : tensor<?x4xf32>) outs(%[[S1]] : tensor<?x4xf32>)
// CHECK:         %[[I1:.*]] = tensor.insert_slice %[[C1]] into %[[I0]][%[[N]], 0] [%[[M]], 4] [1, 1]
// CHECK:         return %[[I1]]
func.func @concat(%x: !relax.tensor<["n", 4], f32>, %y: !relax.tensor<["m", 4], f32>) -> !relax.tensor<["m + n", 4], f32> {
  %0 = "relax.concat"(%x, %y) {axis = 0 : i64} : (!relax.tensor<["n", 4], f32>, !relax.tensor<["m", 4], f32>) -> !relax.tensor<["m + n", 4], f32>
  return %0 : !relax.tensor<["m + n", 4], f32>
}

// -----

// Equal sections need an even dim: stated with a match_cast, checked at run time.
// CHECK-LABEL: func.func @split(
// CHECK:         %[[C:.*]] = "relax.match_cast"(%arg0) : (!relax.tensor<["n"], f32>) -> !relax.tensor<["2 * (n floordiv 2)"], f32>
// CHECK:         "relax.call_tir"(%[[C]]) {callee = @split_0}
// CHECK:       func.func private @split_0(
// CHECK-SAME:    %[[X:[a-z0-9_]+]]: tensor<?xf32>, %[[A:[a-z0-9_]+]]: tensor<?xf32>, %[[B:[a-z0-9_]+]]: tensor<?xf32>) -> (tensor<?xf32>, tensor<?xf32>)
// CHECK:         %[[NA:.*]] = tensor.dim %[[A]], %c0
// CHECK:         tensor.extract_slice %[[X]][0] [%[[NA]]] [1]
// CHECK:         %[[NB:.*]] = tensor.dim %[[B]], %c0
// CHECK:         tensor.extract_slice %[[X]][%[[NA]]] [%[[NB]]] [1]
func.func @split(%x: !relax.tensor<["n"], f32>) -> (!relax.tensor<["n floordiv 2"], f32>, !relax.tensor<["n floordiv 2"], f32>) {
  %0:2 = "relax.split"(%x) {axis = 0 : i64, indices = [], sections = 2 : i64} : (!relax.tensor<["n"], f32>) -> (!relax.tensor<["n floordiv 2"], f32>, !relax.tensor<["n floordiv 2"], f32>)
  return %0#0, %0#1 : !relax.tensor<["n floordiv 2"], f32>, !relax.tensor<["n floordiv 2"], f32>
}

// -----

// Constant padding fills the destination, then copies x into its interior.
// CHECK-LABEL: func.func @pad(
// CHECK:       func.func private @pad_0(
// CHECK-SAME:    %[[X:[a-z0-9_]+]]: tensor<?x4xf32>, %[[OUT:[a-z0-9_]+]]: tensor<?x6xf32>)
// CHECK:         %[[V:.*]] = arith.constant 1.500000e+00 : f32
// CHECK:         %[[F:.*]] = linalg.fill ins(%[[V]] : f32) outs(%[[OUT]] : tensor<?x6xf32>)
// CHECK:         %[[S:.*]] = tensor.extract_slice %[[F]][1, 2] [%{{.*}}, 4] [1, 1]
// CHECK:         linalg.copy ins(%[[X]] : tensor<?x4xf32>) outs(%[[S]] : tensor<?x4xf32>)
// CHECK:         tensor.insert_slice %{{.*}} into %[[F]][1, 2] [%{{.*}}, 4] [1, 1]
func.func @pad(%x: !relax.tensor<["n", 4], f32>) -> !relax.tensor<["n + 3", 6], f32> {
  %0 = "relax.pad"(%x) {mode = "constant", pad_width = [1, 2, 2, 0], value = 1.5 : f64} : (!relax.tensor<["n", 4], f32>) -> !relax.tensor<["n + 3", 6], f32>
  return %0 : !relax.tensor<["n + 3", 6], f32>
}

// -----

// Positive strides: a strided extract_slice whose sizes are the destination's; a symbolic end
// needs no kernel argument because the host already computed min(s, t).
// CHECK-LABEL: func.func @slice(
// CHECK:       func.func private @strided_slice_0(
// CHECK-SAME:    %[[X:[a-z0-9_]+]]: tensor<?x4xf32>, %[[OUT:[a-z0-9_]+]]: tensor<?x2xf32>)
// CHECK:         %[[N:.*]] = tensor.dim %[[OUT]], %c0
// CHECK:         %[[S:.*]] = tensor.extract_slice %[[X]][0, 1] [%[[N]], 2] [1, 2]
// CHECK:         linalg.copy ins(%[[S]] : tensor<?x2xf32>) outs(%[[OUT]] : tensor<?x2xf32>)
func.func @slice(%x: !relax.tensor<["t", 4], f32>, %q: !relax.tensor<["s"], f32>) -> !relax.tensor<["min(s, t)", 2], f32> {
  %0 = "relax.strided_slice"(%x) {axes = [0, 1], begin = [0, 1], end = ["s", 4], strides = [1, 2]} : (!relax.tensor<["t", 4], f32>) -> !relax.tensor<["min(s, t)", 2], f32>
  return %0 : !relax.tensor<["min(s, t)", 2], f32>
}

// -----

// A negative stride reads each element at start + i * stride.
// CHECK-LABEL: func.func @reverse(
// CHECK:       func.func private @strided_slice_0(
// CHECK-SAME:    %[[X:[a-z0-9_]+]]: tensor<?xf32>, %[[OUT:[a-z0-9_]+]]: tensor<?xf32>)
// CHECK:         linalg.generic {{.*}} outs(%[[OUT]] : tensor<?xf32>)
// CHECK:           %[[I:.*]] = linalg.index 0 : index
// CHECK:           %[[J:.*]] = arith.muli %[[I]], %c-1 : index
// CHECK:           %[[K:.*]] = arith.addi %{{.*}}, %[[J]] : index
// CHECK:           tensor.extract %[[X]][%[[K]]] : tensor<?xf32>
func.func @reverse(%x: !relax.tensor<["n"], f32>) -> !relax.tensor<["n"], f32> {
  %0 = "relax.strided_slice"(%x) {axes = [0], begin = [-1], end = [-9223372036854775807], strides = [-1]} : (!relax.tensor<["n"], f32>) -> !relax.tensor<["n"], f32>
  return %0 : !relax.tensor<["n"], f32>
}

// -----

// take: a parallel loop over the result; negative indices count from the end. The indices are checked
// before the call: an index_range kernel gives their min and max, relax.check_index compares them with the dim;
// the kernel still clamps them (the call raises after it when the check failed).
// CHECK-LABEL: func.func @take(
// CHECK:       %[[R:.*]]:2 = "relax.call_tir"(%arg1) {callee = @index_range_0}
// CHECK:       %[[J:.*]] = "relax.check_index"(%arg1, %arg0, %[[R]]#0, %[[R]]#1) {axis = 0 : i64, bounded = [], op = "take"}
// CHECK:       "relax.call_tir"(%arg0, %[[J]]) {callee = @take_0}
// CHECK:       func.func private @take_0(
// CHECK-SAME:    %[[X:[a-z0-9_]+]]: tensor<50x8xf32>, %[[I:[a-z0-9_]+]]: tensor<?x?xi64>, %[[OUT:[a-z0-9_]+]]: tensor<?x?x8xf32>)
// CHECK:         linalg.generic {indexing_maps = [#{{.*}}, #{{.*}}], iterator_types = ["parallel", "parallel", "parallel"]}
// CHECK-SAME:      ins(%[[I]] : tensor<?x?xi64>) outs(%[[OUT]] : tensor<?x?x8xf32>)
// CHECK:           %[[C:.*]] = arith.index_cast %{{.*}} : i64 to index
// CHECK:           %[[NEG:.*]] = arith.cmpi slt, %[[C]], %c0 : index
// CHECK:           %[[W:.*]] = arith.addi %[[C]], %c50 : index
// CHECK:           %[[S:.*]] = arith.select %[[NEG]], %[[W]], %[[C]] : index
// CHECK:           %[[M:.*]] = arith.minsi %[[S]], %c49 : index
// CHECK:           %[[CL:.*]] = arith.maxsi %[[M]], %c0 : index
// CHECK:           tensor.extract %[[X]][%[[CL]], %{{.*}}] : tensor<50x8xf32>
// CHECK:       func.func private @index_range_0(%{{.*}}: tensor<?x?xi64>, %{{.*}}: tensor<i64>, %{{.*}}: tensor<i64>)
// CHECK:         linalg.generic {{.*}} iterator_types = ["reduction", "reduction"]}
// CHECK:           arith.minsi
// CHECK:           arith.maxsi
func.func @take(%x: !relax.tensor<[50, 8], f32>, %i: !relax.tensor<["b", "s"], i64>) -> !relax.tensor<["b", "s", 8], f32> {
  %0 = "relax.take"(%x, %i) {axis = 0 : i64} : (!relax.tensor<[50, 8], f32>, !relax.tensor<["b", "s"], i64>) -> !relax.tensor<["b", "s", 8], f32>
  return %0 : !relax.tensor<["b", "s", 8], f32>
}

// -----

// scatter_elements: copy x, then store the updates in order in a loop nest over the indices (none when x is
// empty: the indices are then out of range, the call raises, and nothing may be written).
// CHECK-LABEL: func.func @scatter(
// CHECK:       func.func private @scatter_elements_0(
// CHECK-SAME:    %[[X:[a-z0-9_]+]]: tensor<?x4xf32>, %[[I:[a-z0-9_]+]]: tensor<?x4xi64>, %[[U:[a-z0-9_]+]]: tensor<?x4xf32>, %[[OUT:[a-z0-9_]+]]: tensor<?x4xf32>)
// CHECK:         %[[K:.*]] = tensor.dim %[[I]], %c0
// CHECK:         %[[B:.*]] = arith.select %{{.*}}, %[[K]], %c0 : index
// CHECK:         %[[C:.*]] = linalg.copy ins(%[[X]] : tensor<?x4xf32>) outs(%[[OUT]] : tensor<?x4xf32>)
// CHECK:         scf.for %{{.*}} = %c0 to %[[B]] step %c1 iter_args(%{{.*}} = %[[C]]) -> (tensor<?x4xf32>)
// CHECK:           scf.for %{{.*}} = %c0 to %c4 step %c1
// CHECK:             tensor.insert %{{.*}} into %{{.*}}[%{{.*}}, %{{.*}}] : tensor<?x4xf32>
func.func @scatter(%x: !relax.tensor<["n", 4], f32>, %i: !relax.tensor<["k", 4], i64>, %u: !relax.tensor<["k", 4], f32>) -> !relax.tensor<["n", 4], f32> {
  %0 = "relax.scatter_elements"(%x, %i, %u) {axis = 0 : i64, reduction = "none"} : (!relax.tensor<["n", 4], f32>, !relax.tensor<["k", 4], i64>, !relax.tensor<["k", 4], f32>) -> !relax.tensor<["n", 4], f32>
  return %0 : !relax.tensor<["n", 4], f32>
}

// -----

// tile: each result element reads x at i mod d; a static repeated dim uses mod in the indexing map,
// a dynamic one reads with tensor.extract.
// CHECK-DAG:   #[[MOD:.*]] = affine_map<(d0, d1, d2) -> (d1, d2 mod 3)>
// CHECK-LABEL: func.func @tile(
// CHECK:       func.func private @tile_0(
// CHECK-SAME:    %[[X:[a-z0-9_]+]]: tensor<?x3xf32>, %[[OUT:[a-z0-9_]+]]: tensor<?x3xf32>)
// CHECK:         %[[N:.*]] = tensor.dim %[[X]], %c0
// CHECK:         linalg.generic {{.*}} outs(%[[OUT]] : tensor<?x3xf32>)
// CHECK:           %[[I:.*]] = linalg.index 0 : index
// CHECK:           %[[R:.*]] = arith.remui %[[I]], %[[N]] : index
// CHECK:           %[[J:.*]] = linalg.index 1 : index
// CHECK:           tensor.extract %[[X]][%[[R]], %[[J]]] : tensor<?x3xf32>
// CHECK:       func.func private @tile_1(
// CHECK-SAME:    %[[X:[a-z0-9_]+]]: tensor<?x3xf32>, %[[OUT:[a-z0-9_]+]]: tensor<2x?x9xf32>)
// CHECK:         linalg.generic {indexing_maps = [#[[MOD]], #{{.*}}], {{.*}} ins(%[[X]] : tensor<?x3xf32>) outs(%[[OUT]] : tensor<2x?x9xf32>)
func.func @tile(%x: !relax.tensor<["n", 3], f32>) -> (!relax.tensor<["2 * n", 3], f32>, !relax.tensor<[2, "n", 9], f32>) {
  %0 = "relax.tile"(%x) {repeats = [2, 1]} : (!relax.tensor<["n", 3], f32>) -> !relax.tensor<["2 * n", 3], f32>
  %1 = "relax.tile"(%x) {repeats = [2, 1, 3]} : (!relax.tensor<["n", 3], f32>) -> !relax.tensor<[2, "n", 9], f32>
  return %0, %1 : !relax.tensor<["2 * n", 3], f32>, !relax.tensor<[2, "n", 9], f32>
}

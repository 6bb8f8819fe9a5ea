// RUN: relax-opt %s --convert-relax-to-linalg --relax-lower-host --split-input-file | FileCheck %s

// Symbols are read from input dims once, intermediate buffers come from tensor.empty with the
// symbolic size, and the last kernel writes straight into the destination the runtime passes.

// CHECK-LABEL: func.func @main(
// CHECK-SAME:    %[[X:.*]]: memref<?x4xf32>, %[[B:.*]]: memref<4xf32>, %[[OUT:.*]]: memref<?x4xf32> {relax.role = "output"}, %[[STATUS:.*]]: memref<4xi64> {relax.role = "host"})
// CHECK-SAME:    llvm.emit_c_interface
// CHECK:         %[[XT:.*]] = bufferization.to_tensor %[[X]] restrict
// CHECK:         %[[N:.*]] = tensor.dim %[[XT]], %{{.*}} : tensor<?x4xf32>
// CHECK:         %[[E:.*]] = tensor.empty(%[[N]]) : tensor<?x4xf32>
// CHECK:         %[[T:.*]] = call @add_0(%[[XT]], %{{.*}}, %[[E]])
// CHECK:         %[[D:.*]] = bufferization.to_tensor %[[OUT]] restrict writable
// CHECK:         call @exp_0(%[[T]], %[[D]])
// CHECK-NEXT:    return
func.func @main(%x: !relax.tensor<["n", 4], f32>, %b: !relax.tensor<[4], f32>) -> !relax.tensor<["n", 4], f32> {
  %0 = scf.execute_region -> !relax.tensor<["n", 4], f32> no_inline {
    %1 = "relax.add"(%x, %b) : (!relax.tensor<["n", 4], f32>, !relax.tensor<[4], f32>) -> !relax.tensor<["n", 4], f32>
    %2 = "relax.exp"(%1) : (!relax.tensor<["n", 4], f32>) -> !relax.tensor<["n", 4], f32>
    scf.yield %2 : !relax.tensor<["n", 4], f32>
  } {relax.dataflow}
  return %0 : !relax.tensor<["n", 4], f32>
}

// -----

// A match_cast with a known dim becomes a comparison that branches to a block reporting the
// failure through the status buffer; the new symbol "m" is bound to the dim with no check.

// CHECK-LABEL: func.func @cast(
// CHECK:         %[[D0:.*]] = tensor.dim %{{.*}}, %c0
// CHECK:         %[[D1:.*]] = tensor.dim %{{.*}}, %c1
// CHECK:         %[[OK:.*]] = arith.cmpi eq, %[[D1]], %c4
// CHECK:         cf.cond_br %[[OK]], ^[[CONT:.*]], ^[[FAIL:.*]](%[[D1]], %c4 : index, index)
// CHECK:       ^[[CONT]]:
// CHECK:         tensor.cast %{{.*}} : tensor<?x?xf32> to tensor<?x4xf32>
// CHECK:       ^[[FAIL]](%[[ACTUAL:.*]]: index, %[[EXPECTED:.*]]: index):
// CHECK:         memref.store %{{.*}}, %[[STATUS:.*]][%{{.*}}] : memref<4xi64>
// CHECK:         return
func.func @cast(%x: !relax.tensor<["n", "k"], f32>) -> !relax.tensor<["n", 4], f32> {
  %y = "relax.match_cast"(%x) : (!relax.tensor<["n", "k"], f32>) -> !relax.tensor<["n", 4], f32>
  %z = "relax.exp"(%y) : (!relax.tensor<["n", 4], f32>) -> !relax.tensor<["n", 4], f32>
  return %z : !relax.tensor<["n", 4], f32>
}

// -----

// Shape and prim results are written into i64 destinations; sizes are computed in index arithmetic.

// CHECK-LABEL: func.func @shapes(
// CHECK-SAME:    %{{.*}}: memref<?x?xf32>, %[[S:.*]]: memref<2xi64> {relax.role = "host"}, %[[P:.*]]: memref<1xi64> {relax.role = "host"}, %{{.*}}: memref<4xi64> {relax.role = "host"})
// CHECK:         %[[B:.*]] = tensor.dim %{{.*}}, %c0
// CHECK:         %[[T:.*]] = tensor.dim %{{.*}}, %c1
// CHECK:         %[[M:.*]] = arith.muli %[[B]], %[[T]] : index
// CHECK:         memref.store %{{.*}}, %[[S]][%c0] : memref<2xi64>
// CHECK:         memref.store %{{.*}}, %[[S]][%c1] : memref<2xi64>
// CHECK:         arith.index_cast %[[M]] : index to i64
// CHECK:         memref.store %{{.*}}, %[[P]][%c0] : memref<1xi64>
func.func @shapes(%x: !relax.tensor<["b", "t"], f32>) -> (!relax.shape<["b", "t"]>, !relax.prim<"b * t">) {
  %s = "relax.shape_of"(%x) : (!relax.tensor<["b", "t"], f32>) -> !relax.shape<["b", "t"]>
  %p = "relax.prim_value"() {value = "b * t"} : () -> !relax.prim<"b * t">
  return %s, %p : !relax.shape<["b", "t"]>, !relax.prim<"b * t">
}

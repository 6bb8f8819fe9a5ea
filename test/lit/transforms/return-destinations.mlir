// RUN: relax-opt %s --relax-return-destinations | FileCheck %s

// A kernel returning its destination viewed back through a reshape returns the destination argument
// (so drop-equivalent-buffer-results drops the result); a view of another argument is left alone.
// CHECK-LABEL: func.func private @rows(
// CHECK-SAME:    %[[X:.*]]: memref<?x?x8xf32>, %[[OUT:.*]]: memref<?x?x8xf32>)
// CHECK:         return %[[OUT]] : memref<?x?x8xf32>
func.func private @rows(%x: memref<?x?x8xf32>, %out: memref<?x?x8xf32>) -> memref<?x?x8xf32> attributes {relax.destinations} {
  %c0 = arith.constant 0 : index
  %flat = memref.collapse_shape %out [[0, 1], [2]] : memref<?x?x8xf32> into memref<?x8xf32>
  %b = memref.dim %out, %c0 : memref<?x?x8xf32>
  %shape = memref.alloca() : memref<3xindex>
  memref.store %b, %shape[%c0] : memref<3xindex>
  %r = memref.reshape %flat(%shape) : (memref<?x8xf32>, memref<3xindex>) -> memref<?x?x8xf32>
  return %r : memref<?x?x8xf32>
}

// CHECK-LABEL: func.func private @other(
// CHECK:         %[[R:.*]] = memref.reshape
// CHECK:         return %[[R]]
func.func private @other(%x: memref<?x?x8xf32>, %out: memref<?x?x8xf32>) -> memref<?x?x8xf32> attributes {relax.destinations} {
  %flat = memref.collapse_shape %x [[0, 1], [2]] : memref<?x?x8xf32> into memref<?x8xf32>
  %shape = memref.alloca() : memref<3xindex>
  %r = memref.reshape %flat(%shape) : (memref<?x8xf32>, memref<3xindex>) -> memref<?x?x8xf32>
  return %r : memref<?x?x8xf32>
}

// A copy of the destination viewed back onto the destination is dropped; a copy from another buffer stays.
// CHECK-LABEL: func.func private @self_copy(
// CHECK-NOT:     linalg.copy ins(%{{.*}} : memref<?x?x8xf32>) outs(%arg1
// CHECK:         linalg.copy ins(%arg0 : memref<?x?x8xf32>) outs(%arg1 : memref<?x?x8xf32>)
// CHECK-NEXT:    return
func.func private @self_copy(%x: memref<?x?x8xf32>, %out: memref<?x?x8xf32>) attributes {relax.destinations} {
  %flat = memref.collapse_shape %out [[0, 1], [2]] : memref<?x?x8xf32> into memref<?x8xf32>
  %shape = memref.alloca() : memref<3xindex>
  %r = memref.reshape %flat(%shape) : (memref<?x8xf32>, memref<3xindex>) -> memref<?x?x8xf32>
  linalg.copy ins(%r : memref<?x?x8xf32>) outs(%out : memref<?x?x8xf32>)
  linalg.copy ins(%x : memref<?x?x8xf32>) outs(%out : memref<?x?x8xf32>)
  return
}

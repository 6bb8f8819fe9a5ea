// relax-thread-buffers: a constant's memref.get_global used after a check's branch is re-read in the user's
// block; a use in its own block keeps it. Without it, ownership-based-buffer-deallocation aborts on
// @crosses (Operation::isBeforeInBlock: "Expected other operation to have the same parent block").
// RUN: relax-opt %s --relax-thread-buffers | FileCheck %s
// RUN: relax-opt %s --relax-thread-buffers --ownership-based-buffer-deallocation | FileCheck %s --check-prefix=OBD

memref.global "private" constant @table : memref<3xi64> = dense<[1, 1, 2]>

func.func private @fill(memref<64xi8>)
func.func private @use(memref<64xi8>, memref<3xi64>)
func.func private @use_table(memref<3xi64>)

// CHECK-LABEL: func.func @crosses
// CHECK-NEXT: cf.cond_br
// CHECK: ^bb2(%[[A:.*]]: memref<64xi8>):
// CHECK-NEXT: %[[G:.*]] = memref.get_global @table
// CHECK-NEXT: call @use(%[[A]], %[[G]])
// CHECK: ^bb3:
// CHECK-NOT: memref.get_global
// OBD-LABEL: func.func @crosses
// OBD: bufferization.dealloc
func.func @crosses(%ok1: i1, %ok2: i1) {
  %g = memref.get_global @table : memref<3xi64>
  cf.cond_br %ok1, ^bb1, ^bb3
^bb1:
  %a = memref.alloc() : memref<64xi8>
  func.call @fill(%a) : (memref<64xi8>) -> ()
  cf.cond_br %ok2, ^bb2, ^bb3
^bb2:
  func.call @use(%a, %g) : (memref<64xi8>, memref<3xi64>) -> ()
  return
^bb3:
  return
}

// CHECK-LABEL: func.func @same_block
// CHECK-NEXT: %[[G:.*]] = memref.get_global @table
// CHECK-NEXT: call @use_table(%[[G]])
func.func @same_block() {
  %g = memref.get_global @table : memref<3xi64>
  func.call @use_table(%g) : (memref<3xi64>) -> ()
  return
}

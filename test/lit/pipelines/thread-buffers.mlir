// relax-thread-buffers: a buffer used in a later block reaches it as a block argument along each branch.
// Without it, ownership-based-buffer-deallocation aborts on @chain, whose live buffers come from three
// blocks (Operation::isBeforeInBlock: "Expected other operation to have the same parent block").
// RUN: relax-opt %s --relax-thread-buffers | FileCheck %s
// RUN: relax-opt %s --relax-thread-buffers --ownership-based-buffer-deallocation | FileCheck %s --check-prefix=OBD

func.func private @use(memref<?xf32>, memref<?xf32>)

// CHECK-LABEL: func.func @chain
// CHECK: %[[X:.*]] = memref.alloc() : memref<1xi64>
// CHECK: cf.cond_br %{{.*}}, ^bb1(%[[X]] : memref<1xi64>), ^bb4
// CHECK: ^bb1(%[[X1:.*]]: memref<1xi64>):
// CHECK: memref.load %[[X1]]
// CHECK: %[[A:.*]] = memref.alloc(%{{.*}}) : memref<?xf32>
// CHECK: cf.cond_br %{{.*}}, ^bb2(%[[A]] : memref<?xf32>), ^bb5(%{{.*}} : index)
// CHECK: ^bb2(%[[A2:.*]]: memref<?xf32>):
// CHECK: %[[Y:.*]] = memref.alloc() : memref<1xi64>
// CHECK: cf.cond_br %{{.*}}, ^bb3(%[[A2]], %[[Y]] : memref<?xf32>, memref<1xi64>), ^bb6
// CHECK: ^bb3(%[[A3:.*]]: memref<?xf32>, %[[Y3:.*]]: memref<1xi64>):
// CHECK: memref.load %[[Y3]]
// CHECK: call @use(%[[A3]],
// OBD-LABEL: func.func @chain
// OBD: bufferization.dealloc
func.func @chain(%n: index, %c: i1) -> memref<?xf32> {
  %c0 = arith.constant 0 : index
  %x = memref.alloc() : memref<1xi64>
  %v = memref.load %x[%c0] : memref<1xi64>
  cf.cond_br %c, ^bb1, ^bb4
^bb1:
  %v1 = memref.load %x[%c0] : memref<1xi64>
  %a = memref.alloc(%n) : memref<?xf32>
  cf.cond_br %c, ^bb2, ^bb5(%n : index)
^bb2:
  %y = memref.alloc() : memref<1xi64>
  %v2 = memref.load %y[%c0] : memref<1xi64>
  cf.cond_br %c, ^bb3, ^bb6
^bb3:
  %v3 = memref.load %y[%c0] : memref<1xi64>
  %b = memref.alloc(%n) : memref<?xf32>
  call @use(%a, %b) : (memref<?xf32>, memref<?xf32>) -> ()
  %r = memref.alloc(%n) : memref<?xf32>
  return %r : memref<?xf32>
^bb4:
  %z = memref.alloc(%n) : memref<?xf32>
  return %z : memref<?xf32>
^bb5(%m: index):
  %z5 = memref.alloc(%m) : memref<?xf32>
  return %z5 : memref<?xf32>
^bb6:
  %z6 = memref.alloc(%n) : memref<?xf32>
  return %z6 : memref<?xf32>
}

// A join between a buffer and its use: left alone.
// CHECK-LABEL: func.func @join
// CHECK: ^bb2:
// CHECK-NEXT: call @use(%{{.*}}, %{{.*}})
func.func @join(%n: index, %c: i1) {
  %a = memref.alloc(%n) : memref<?xf32>
  cf.cond_br %c, ^bb1, ^bb2
^bb1:
  cf.br ^bb2
^bb2:
  call @use(%a, %a) : (memref<?xf32>, memref<?xf32>) -> ()
  return
}

// Views of planned storages from two blocks (the host code of a GPT with rank-3 token ids, fuzz case 1597,
// reduced): a view used in a later block is re-created there from its base, and the base is threaded.
// Without it, deallocation aborts (isBeforeInBlock on %va and %vb, live into ^bb2 from ^bb0 and ^bb1).
// CHECK-LABEL: func.func @views
// CHECK: %[[A:.*]] = memref.alloc
// CHECK: cf.cond_br %{{.*}}, ^bb1(%[[A]] : memref<?xi8>), ^bb3
// CHECK: ^bb1(%[[A1:.*]]: memref<?xi8>):
// CHECK: %[[B:.*]] = memref.alloc
// CHECK: cf.cond_br %{{.*}}, ^bb2(%[[A1]], %[[B]] : memref<?xi8>, memref<?xi8>), ^bb3
// CHECK: ^bb2(%[[A2:.*]]: memref<?xi8>, %[[B2:.*]]: memref<?xi8>):
// CHECK-DAG: %[[VA:.*]] = memref.view %[[A2]]
// CHECK-DAG: %[[VB:.*]] = memref.view %[[B2]]
// CHECK: call @fill2(%[[VA]], %[[VB]])
// OBD-LABEL: func.func @views
// OBD: bufferization.dealloc
func.func private @fill(memref<?xf32>)
func.func private @fill2(memref<?xf32>, memref<?xf32>)
func.func @views(%n: index, %ok1: i1, %ok2: i1) {
  %c0 = arith.constant 0 : index
  %a = memref.alloc(%n) : memref<?xi8>
  %va = memref.view %a[%c0][%n] : memref<?xi8> to memref<?xf32>
  func.call @fill(%va) : (memref<?xf32>) -> ()
  cf.cond_br %ok1, ^bb1, ^bb3
^bb1:
  %b = memref.alloc(%n) : memref<?xi8>
  %vb = memref.view %b[%c0][%n] : memref<?xi8> to memref<?xf32>
  func.call @fill(%vb) : (memref<?xf32>) -> ()
  cf.cond_br %ok2, ^bb2, ^bb3
^bb2:
  func.call @fill2(%va, %vb) : (memref<?xf32>, memref<?xf32>) -> ()
  return
^bb3:
  return
}

// A function argument is threaded too: otherwise it and ^bb1's argument #0, both live into the scf.if,
// are arguments #0 of two blocks of one region, and deallocation's ordering asserts on them.
// CHECK-LABEL: func.func @nested
// CHECK: ^bb1(%[[Y:.*]]: memref<4xf32>, %[[X:.*]]: memref<4xf32>):
// CHECK: call @use4(%[[X]], %[[Y]])
// OBD-LABEL: func.func @nested
func.func private @use4(memref<4xf32>, memref<4xf32>)
func.func @nested(%x: memref<4xf32>, %c: i1) {
  %a = memref.alloc() : memref<4xf32>
  cf.cond_br %c, ^bb1(%a : memref<4xf32>), ^bb2
^bb1(%y: memref<4xf32>):
  scf.if %c {
    func.call @use4(%x, %y) : (memref<4xf32>, memref<4xf32>) -> ()
  }
  return
^bb2:
  return
}

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

// relax-split-deallocs: a dealloc of distinct fresh buffers becomes one dealloc per buffer (no
// memref<?xi1> helper after bufferization-lower-deallocations); possibly aliasing buffers stay together.
// RUN: relax-opt %s --relax-split-deallocs | FileCheck %s
// RUN: relax-opt %s --relax-split-deallocs --relax-split-deallocs | FileCheck %s

// CHECK-LABEL: func.func @fresh
// CHECK: %[[A:.*]] = memref.alloc
// CHECK: %[[B:.*]] = memref.alloc
// CHECK: %[[DA:.*]] = bufferization.dealloc (%[[A]] : memref<?xf32>) if (%{{.*}}) retain (%{{.*}} : memref<?xf32>)
// CHECK: %[[DB:.*]] = bufferization.dealloc (%[[B]] : memref<?xf32>) if (%{{.*}}) retain (%{{.*}} : memref<?xf32>)
// CHECK: arith.ori %[[DA]], %[[DB]]
// CHECK-NOT: bufferization.dealloc
func.func @fresh(%n: index, %c: i1, %keep: memref<?xf32>) -> i1 {
  %a = memref.alloc(%n) : memref<?xf32>
  %b = memref.alloc(%n) : memref<?xf32>
  %r = bufferization.dealloc (%a, %b : memref<?xf32>, memref<?xf32>) if (%c, %c) retain (%keep : memref<?xf32>)
  return %r : i1
}

// A block argument of a join may be %a: they stay together.
// CHECK-LABEL: func.func @aliasing
// CHECK: bufferization.dealloc (%{{.*}}, %{{.*}} : memref<?xf32>, memref<?xf32>)
func.func @aliasing(%n: index, %c: i1, %arg: memref<?xf32>) {
  %a = memref.alloc(%n) : memref<?xf32>
  cf.cond_br %c, ^bb1(%a : memref<?xf32>), ^bb2
^bb2:
  cf.br ^bb1(%arg : memref<?xf32>)
^bb1(%m: memref<?xf32>):
  bufferization.dealloc (%a, %m : memref<?xf32>, memref<?xf32>) if (%c, %c)
  return
}

// A function's argument is never owned (ownership-based deallocation's function boundary ABI): dropped.
// The argument of a block with one predecessor is the value that predecessor passes (relax-thread-buffers).
// CHECK-LABEL: func.func @argument
// CHECK: %[[A:.*]] = memref.alloc
// CHECK: ^bb1(%[[A1:.*]]: memref<?xf32>, %[[B1:.*]]: memref<?xf32>):
// CHECK-NEXT: bufferization.dealloc (%[[A1]] : memref<?xf32>) if (%arg1)
// CHECK-NEXT: bufferization.dealloc (%[[B1]] : memref<?xf32>) if (%arg1)
// CHECK-NOT: bufferization.dealloc
func.func @argument(%n: index, %c: i1, %arg: memref<?xf32>) {
  %a = memref.alloc(%n) : memref<?xf32>
  %b = memref.alloc(%n) : memref<?xf32>
  cf.br ^bb1(%a, %b : memref<?xf32>, memref<?xf32>)
^bb1(%a1: memref<?xf32>, %b1: memref<?xf32>):
  bufferization.dealloc (%a1, %arg, %b1 : memref<?xf32>, memref<?xf32>, memref<?xf32>) if (%c, %c, %c)
  return
}

// A planned storage and the base of a view of it are one allocation: freed once, if either is owned.
// CHECK-LABEL: func.func @storage_view
// CHECK: %[[S:.*]] = memref.alloc
// CHECK: %[[C:.*]] = arith.ori %arg1, %arg2
// CHECK: bufferization.dealloc (%[[S]] : memref<64xi8>) if (%[[C]])
// CHECK-NOT: bufferization.dealloc
func.func @storage_view(%n: index, %c1: i1, %c2: i1) {
  %c0 = arith.constant 0 : index
  %s = memref.alloc() : memref<64xi8>
  %v = memref.view %s[%c0][%n] : memref<64xi8> to memref<?xf32>
  %base, %offset, %size, %stride = memref.extract_strided_metadata %v : memref<?xf32> -> memref<f32>, index, index, index
  bufferization.dealloc (%s, %base : memref<64xi8>, memref<f32>) if (%c1, %c2)
  return
}

// A constant's buffer (memref.get_global) is never owned: it is dropped, the fresh buffer freed alone.
// CHECK-LABEL: func.func @with_global
// CHECK: %[[A:.*]] = memref.alloc
// CHECK: bufferization.dealloc (%[[A]] : memref<8xi8>) if (%arg1)
// CHECK-NOT: bufferization.dealloc
memref.global "private" constant @cst : memref<2xi64> = dense<[1, 2]>
func.func @with_global(%c0: i1, %c1: i1) {
  %g = memref.get_global @cst : memref<2xi64>
  %a = memref.alloc() : memref<8xi8>
  bufferization.dealloc (%g, %a : memref<2xi64>, memref<8xi8>) if (%c0, %c1)
  return
}

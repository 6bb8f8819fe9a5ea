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

// CHECK-LABEL: func.func @aliasing
// CHECK: bufferization.dealloc (%{{.*}}, %{{.*}} : memref<?xf32>, memref<?xf32>)
func.func @aliasing(%n: index, %c: i1, %arg: memref<?xf32>) {
  %a = memref.alloc(%n) : memref<?xf32>
  bufferization.dealloc (%a, %arg : memref<?xf32>, memref<?xf32>) if (%c, %c)
  return
}

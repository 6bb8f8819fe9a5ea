// RUN: relax-opt %s --relax-lower-parallel | FileCheck %s
// RUN: relax-opt %s --relax-lower-parallel | FileCheck %s --check-prefix=ONCE

// Two kernels whose chunk loops have the same body (they differ outside it: @scaled_plus also adds 1 to
// its first element, serially) share one outlined chunk function; @other, whose body multiplies instead,
// gets its own.
// ONCE-NOT: @scaled_plus_chunk
// CHECK-LABEL: func.func private @scaled_chunk0(
// CHECK:         arith.mulf
// CHECK-LABEL: func.func private @scaled(
// CHECK:         call @scaled_chunk0(
// CHECK:         omp.parallel
// CHECK-LABEL: func.func private @scaled_plus(
// CHECK:         call @scaled_chunk0(
// CHECK:         omp.parallel
// CHECK-LABEL: func.func private @other_chunk2(
// CHECK:         arith.addf
// CHECK-LABEL: func.func private @other(
// CHECK:         call @other_chunk2(
module attributes {relax.num_threads = 2 : i64} {
  func.func private @scaled(%x: memref<?xf32>, %y: memref<?xf32>, %n: index) {
    %c2 = arith.constant 2.0 : f32
    scf.forall (%i) in (%n) {
      %v = memref.load %x[%i] : memref<?xf32>
      %w = arith.mulf %v, %c2 : f32
      memref.store %w, %y[%i] : memref<?xf32>
    }
    return
  }
  func.func private @scaled_plus(%x: memref<?xf32>, %y: memref<?xf32>, %n: index) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1.0 : f32
    %c2 = arith.constant 2.0 : f32
    scf.forall (%i) in (%n) {
      %v = memref.load %x[%i] : memref<?xf32>
      %w = arith.mulf %v, %c2 : f32
      memref.store %w, %y[%i] : memref<?xf32>
    }
    %f = memref.load %y[%c0] : memref<?xf32>
    %g = arith.addf %f, %c1 : f32
    memref.store %g, %y[%c0] : memref<?xf32>
    return
  }
  func.func private @other(%x: memref<?xf32>, %y: memref<?xf32>, %n: index) {
    %c2 = arith.constant 2.0 : f32
    scf.forall (%i) in (%n) {
      %v = memref.load %x[%i] : memref<?xf32>
      %w = arith.addf %v, %c2 : f32
      memref.store %w, %y[%i] : memref<?xf32>
    }
    return
  }
}

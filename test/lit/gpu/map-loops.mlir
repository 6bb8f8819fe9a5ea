// RUN: relax-opt %s --pass-pipeline='builtin.module(relax-gpu-map-loops{block-size=128})' | FileCheck %s

// A kernel's parallel loop becomes one launch of one thread per iteration: the iteration space
// (symbolic %n x 64) is linearized row-major, so neighbouring threads take neighbouring elements of the
// innermost dim; the grid is ceildiv(n * 64, 128) blocks, computed at run time; empty loops launch nothing.
// CHECK-LABEL: func.func private @exp_kernel
// CHECK:         %[[N:.*]] = memref.dim
// CHECK:         %[[TOTAL:.*]] = arith.muli
// CHECK:         %[[NONEMPTY:.*]] = arith.cmpi ugt, %[[TOTAL]]
// CHECK:         scf.if %[[NONEMPTY]] {
// CHECK:           %[[GRID:.*]] = arith.ceildivui %[[TOTAL]], %{{.*}} : index
// CHECK:           gpu.launch blocks(%[[BX:[a-z0-9_]+]], %{{.*}}, %{{.*}}) in (%{{.*}} = %[[GRID]], %{{.*}} = %{{.*}}, %{{.*}} = %{{.*}}) threads(%[[TX:[a-z0-9_]+]], %{{.*}}, %{{.*}}) in (%{{.*}} = %c128
// CHECK:             %[[BASE:.*]] = arith.muli %[[BX]], %c128
// CHECK:             %[[K:.*]] = arith.addi %[[BASE]], %[[TX]]
// CHECK:             %[[IN:.*]] = arith.cmpi ult, %[[K]], %[[TOTAL]]
// CHECK:             scf.if %[[IN]] {
// CHECK:               %[[J:.*]] = arith.remui %[[K]]
// CHECK:               %[[I:.*]] = arith.divui %[[K]]
// CHECK:               memref.load %arg0[%{{.*}}, %{{.*}}]
// CHECK:               math.exp
// CHECK:               memref.store
// CHECK:             gpu.terminator
func.func private @exp_kernel(%x: memref<?x64xf32>, %y: memref<?x64xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c64 = arith.constant 64 : index
  %n = memref.dim %x, %c0 : memref<?x64xf32>
  scf.parallel (%i, %j) = (%c0, %c0) to (%n, %c64) step (%c1, %c1) {
    %v = memref.load %x[%i, %j] : memref<?x64xf32>
    %e = math.exp %v : f32
    memref.store %e, %y[%i, %j] : memref<?x64xf32>
    scf.reduce
  }
  return
}

// A loop that is not parallel (a scan) runs in a one-thread launch, so its data stays on the device.
// CHECK-LABEL: func.func private @scan_kernel
// CHECK:         gpu.launch blocks(%{{.*}}, %{{.*}}, %{{.*}}) in (%{{.*}} = %c1{{.*}}, %{{.*}} = %c1{{.*}}, %{{.*}} = %c1{{.*}}) threads(%{{.*}}, %{{.*}}, %{{.*}}) in (%{{.*}} = %c1
// CHECK-NEXT:      scf.for
func.func private @scan_kernel(%x: memref<?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memref.dim %x, %c0 : memref<?xf32>
  scf.for %i = %c1 to %n step %c1 {
    %p = arith.subi %i, %c1 : index
    %a = memref.load %x[%p] : memref<?xf32>
    %b = memref.load %x[%i] : memref<?xf32>
    %s = arith.addf %a, %b : f32
    memref.store %s, %x[%i] : memref<?xf32>
  }
  return
}

// A reduction over the outer dim (a column sum: the sequential loop around the parallel one) is
// interchanged: one thread per column runs the loop over rows, neighbouring threads reading neighbouring
// columns (coalesced), instead of one thread running everything.
// CHECK-LABEL: func.func private @column_sum
// CHECK:         gpu.launch
// CHECK:           scf.if
// CHECK:             %[[J:.*]] = arith.addi %c0
// CHECK:             scf.for %[[I:.*]] = %c0 to %{{.*}} step %c1 {
// CHECK:               memref.load %arg0[%[[I]], %[[J]]]
func.func private @column_sum(%x: memref<?x?xf32>, %s: memref<?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memref.dim %x, %c0 : memref<?x?xf32>
  %k = memref.dim %x, %c1 : memref<?x?xf32>
  scf.for %i = %c0 to %n step %c1 {
    scf.parallel (%j) = (%c0) to (%k) step (%c1) {
      %a = memref.load %x[%i, %j] : memref<?x?xf32>
      %b = memref.load %s[%j] : memref<?xf32>
      %c = arith.addf %a, %b : f32
      memref.store %c, %s[%j] : memref<?xf32>
      scf.reduce
    }
  }
  return
}

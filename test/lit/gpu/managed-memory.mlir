// RUN: relax-opt %s --pass-pipeline='builtin.module(relax-gpu-managed-memory)' | FileCheck %s

// A host function stages its arguments in managed memory: the input is copied in, the destination is
// copied back before the return, the status buffer (written by host code) is left alone, and a
// temporary becomes a managed allocation freed through an async gpu.dealloc.
// CHECK-LABEL: func.func @main
// CHECK-SAME:    (%[[X:.*]]: memref<?x4xf32>, %[[OUT:.*]]: memref<?x4xf32> {relax.role = "output"}, %[[STATUS:.*]]: memref<4xi64> {relax.role = "host"})
// CHECK:         %[[OS:[a-z0-9_]+]] = gpu.alloc  host_shared (%{{.*}}) : memref<?x4xf32>
// CHECK:         %[[XS:[a-z0-9_]+]] = gpu.alloc  host_shared (%{{.*}}) : memref<?x4xf32>
// CHECK-NEXT:    memref.copy %[[X]], %[[XS]]
// CHECK:         %[[TMP:[a-z0-9_]+]] = gpu.alloc  host_shared (%{{.*}}) : memref<?x4xf32>
// CHECK:         call @k(%[[XS]], %[[TMP]])
// CHECK:         call @k(%[[TMP]], %[[OS]])
// CHECK:         %[[T0:[0-9]+]] = gpu.wait async
// CHECK:         gpu.dealloc async [%[[T0]]] %[[TMP]]
// CHECK:         memref.store %{{.*}}, %[[STATUS]]
// CHECK:         memref.copy %[[OS]], %[[OUT]]
// CHECK:         gpu.dealloc async [%{{.*}}] %[[XS]]
// CHECK:         gpu.dealloc async [%{{.*}}] %[[OS]]
// CHECK-NEXT:    gpu.wait
// CHECK-NEXT:    return
func.func private @k(%a: memref<?x4xf32>, %b: memref<?x4xf32>) {
  return
}
func.func @main(%x: memref<?x4xf32>, %out: memref<?x4xf32> {relax.role = "output"}, %status: memref<4xi64> {relax.role = "host"}) attributes {relax.signature = "{}"} {
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0 : i64
  %n = memref.dim %x, %c0 : memref<?x4xf32>
  %tmp = memref.alloc(%n) : memref<?x4xf32>
  call @k(%x, %tmp) : (memref<?x4xf32>, memref<?x4xf32>) -> ()
  call @k(%tmp, %out) : (memref<?x4xf32>, memref<?x4xf32>) -> ()
  memref.dealloc %tmp : memref<?x4xf32>
  memref.store %zero, %status[%c0] : memref<4xi64>
  return
}

// RUN: relax-opt %s --pass-pipeline='builtin.module(relax-gpu-device-memory)' | FileCheck %s

// For devices the host cannot address (webgpu): arguments are copied into device allocations and back with
// gpu.memcpy, temporaries are device allocations, a constant global is handed to kernels as is, a buffer
// only the host writes (the status) stays host memory, and a host read of device memory reads a host copy.
// CHECK-LABEL: func.func @main
// CHECK-SAME:    (%[[X:.*]]: memref<?x4xf32>, %[[OUT:.*]]: memref<?x4xf32> {relax.role = "output"}, %[[STATUS:.*]]: memref<4xi64> {relax.role = "host"})
// CHECK:         %[[OS:[a-z0-9_]+]], %{{.*}} = gpu.alloc async [%{{.*}}] (%{{.*}}) : memref<?x4xf32>
// CHECK:         %[[XS:[a-z0-9_]+]], %{{.*}} = gpu.alloc async [%{{.*}}] (%{{.*}}) : memref<?x4xf32>
// CHECK:         gpu.memcpy async [%{{.*}}] %[[XS]], %[[X]]
// CHECK:         %[[W:.*]] = memref.get_global @w : memref<4xf32>
// CHECK:         %[[TMP:[a-z0-9_]+]], %{{.*}} = gpu.alloc async [%{{.*}}] (%{{.*}}) : memref<?x4xf32>
// CHECK:         call @k(%[[XS]], %[[W]], %[[TMP]])
// CHECK:         %[[HOST:.*]] = memref.alloc(%{{.*}}) : memref<?x4xf32>
// CHECK:         gpu.memcpy async [%{{.*}}] %[[HOST]], %[[TMP]]
// CHECK:         memref.load %[[HOST]]
// CHECK:         call @k(%[[TMP]], %[[W]], %[[OS]])
// CHECK:         memref.store %{{.*}}, %[[STATUS]]
// CHECK:         gpu.memcpy async [%{{.*}}] %[[OUT]], %[[OS]]
// CHECK:         return
memref.global "private" constant @w : memref<4xf32> = dense<1.0>
func.func private @k(%a: memref<?x4xf32>, %w: memref<4xf32>, %b: memref<?x4xf32>) {
  return
}
func.func @main(%x: memref<?x4xf32>, %out: memref<?x4xf32> {relax.role = "output"}, %status: memref<4xi64> {relax.role = "host"}) attributes {relax.signature = "{}"} {
  %c0 = arith.constant 0 : index
  %n = memref.dim %x, %c0 : memref<?x4xf32>
  %w = memref.get_global @w : memref<4xf32>
  %tmp = memref.alloc(%n) : memref<?x4xf32>
  call @k(%x, %w, %tmp) : (memref<?x4xf32>, memref<4xf32>, memref<?x4xf32>) -> ()
  %v = memref.load %tmp[%c0, %c0] : memref<?x4xf32>
  %i = arith.fptosi %v : f32 to i64
  call @k(%tmp, %w, %out) : (memref<?x4xf32>, memref<4xf32>, memref<?x4xf32>) -> ()
  memref.dealloc %tmp : memref<?x4xf32>
  memref.store %i, %status[%c0] : memref<4xi64>
  return
}

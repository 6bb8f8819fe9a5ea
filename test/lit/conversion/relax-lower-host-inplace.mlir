// An in-place op writes into its parameter's own buffer: the parameter becomes a writable tensor, it is
// the kernel call's destination, and after bufferization nothing is allocated or copied for it.
// RUN: relax-opt %s --pass-pipeline="builtin.module(relax-infer-shapes,convert-relax-to-linalg,relax-lower-host)" | FileCheck %s
// RUN: relax-opt %s --pass-pipeline="builtin.module(relax-infer-shapes,convert-relax-to-linalg,relax-lower-host,one-shot-bufferize{bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map},canonicalize)" | FileCheck %s --check-prefix=BUF

// CHECK-LABEL: func.func @append
// CHECK-SAME: (%[[C:[a-z0-9]+]]: memref<?x1x2x8xf32>
// CHECK-SAME: \22inplace\22: true
// CHECK: %[[T:.*]] = bufferization.to_tensor %[[C]] restrict writable
// CHECK: call @kv_cache_write_0(%[[T]], %{{.*}}, %{{.*}}, %[[T]])
// BUF-LABEL: func.func @append
// BUF-NOT: memref.alloc
// BUF-NOT: memref.copy
// BUF: call @kv_cache_write_0(%arg0, %arg1, %{{.*}}, %arg0)
// BUF-NOT: memref.alloc
// BUF: return
func.func @append(%c: !relax.tensor<["kv_len + 1", 1, 2, 8], f32>, %k: !relax.tensor<[1, 1, 2, 8], f32>, %n: !relax.prim<"kv_len">) -> !relax.tensor<["kv_len + 1", 1, 2, 8], f32> {
  %0 = "relax.kv_cache_write"(%c, %k) : (!relax.tensor<["kv_len + 1", 1, 2, 8], f32>, !relax.tensor<[1, 1, 2, 8], f32>) -> !relax.tensor<["kv_len + 1", 1, 2, 8], f32>
  %1 = "relax.exp"(%0) : (!relax.tensor<["kv_len + 1", 1, 2, 8], f32>) -> !relax.tensor<["kv_len + 1", 1, 2, 8], f32>
  return %1 : !relax.tensor<["kv_len + 1", 1, 2, 8], f32>
}

// Shape deduction of the KV-cache ops: the cache keeps its type, attention gives the queries' shape.
// RUN: relax-opt %s --relax-infer-shapes | FileCheck %s

// CHECK-LABEL: func.func @decode
func.func @decode(%q: !relax.tensor<["b", 1, 6, 8], f32>, %kc: !relax.tensor<["kv_len + 1", "b", 2, 8], f32>,
                  %k: !relax.tensor<["b", 1, 2, 8], f32>) -> !relax.tensor<"*", f32> {
  // CHECK: "relax.kv_cache_write"{{.*}} -> !relax.tensor<["kv_len + 1", "b", 2, 8], f32>
  %0 = "relax.kv_cache_write"(%kc, %k) : (!relax.tensor<["kv_len + 1", "b", 2, 8], f32>, !relax.tensor<["b", 1, 2, 8], f32>) -> !relax.tensor<"*", f32>
  // CHECK: "relax.cached_attention"{{.*}} -> !relax.tensor<["b", 1, 6, 8], f32>
  %1 = "relax.cached_attention"(%q, %0, %0) {scale = 0.35 : f64} : (!relax.tensor<["b", 1, 6, 8], f32>, !relax.tensor<"*", f32>, !relax.tensor<"*", f32>) -> !relax.tensor<"*", f32>
  return %1 : !relax.tensor<"*", f32>
}

// Ill-typed KV-cache ops.
// RUN: relax-opt %s --split-input-file --verify-diagnostics --relax-verify

func.func @heads_not_grouped(%q: !relax.tensor<["b", "s", 5, 8], f32>, %k: !relax.tensor<["t", "b", 2, 8], f32>) {
  // expected-error@below {{q heads (5) must be a multiple of kv heads (2)}}
  %0 = "relax.cached_attention"(%q, %k, %k) {scale = 0.35 : f64} : (!relax.tensor<["b", "s", 5, 8], f32>, !relax.tensor<["t", "b", 2, 8], f32>, !relax.tensor<["t", "b", 2, 8], f32>) -> !relax.tensor<"*", f32>
  return
}

// -----

func.func @head_dim(%q: !relax.tensor<["b", "s", 4, 16], f32>, %k: !relax.tensor<["t", "b", 2, 8], f32>) {
  // expected-error@below {{cached_attention: q head dim vs k head dim: 16 vs 8}}
  %0 = "relax.cached_attention"(%q, %k, %k) {scale = 0.35 : f64} : (!relax.tensor<["b", "s", 4, 16], f32>, !relax.tensor<["t", "b", 2, 8], f32>, !relax.tensor<["t", "b", 2, 8], f32>) -> !relax.tensor<"*", f32>
  return
}

// -----

func.func @more_rows_than_cache(%c: !relax.tensor<[3, 1, 2, 8], f32>, %k: !relax.tensor<[1, 4, 2, 8], f32>) {
  // expected-error@below {{kv_cache_write: new has 4 rows, more than the cache's 3}}
  %0 = "relax.kv_cache_write"(%c, %k) : (!relax.tensor<[3, 1, 2, 8], f32>, !relax.tensor<[1, 4, 2, 8], f32>) -> !relax.tensor<"*", f32>
  return
}

// -----

func.func @cache_batch(%c: !relax.tensor<["t", 2, 2, 8], f32>, %k: !relax.tensor<[3, 1, 2, 8], f32>) {
  // expected-error@below {{kv_cache_write: cache dim 1 vs new: 2 vs 3}}
  %0 = "relax.kv_cache_write"(%c, %k) : (!relax.tensor<["t", 2, 2, 8], f32>, !relax.tensor<[3, 1, 2, 8], f32>) -> !relax.tensor<"*", f32>
  return
}

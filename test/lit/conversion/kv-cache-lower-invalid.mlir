// kv_cache_write writes in place into a cache of known dims: an unknown ("?") dim is a located error,
// not an internal one (its lowering used to index a missing destination).
// RUN: relax-opt %s --split-input-file --verify-diagnostics --convert-relax-to-linalg

func.func @main(%cache: !relax.tensor<["?", "b", 4, 64], f32>, %k: !relax.tensor<["b", "s", 4, 64], f32>) -> !relax.tensor<["?", "b", 4, 64], f32> {
  // expected-error@+1 {{result !relax.tensor<["?", "b", 4, 64], f32> has unknown dims, and this op writes into a destination of known size}}
  %0 = "relax.kv_cache_write"(%cache, %k) : (!relax.tensor<["?", "b", 4, 64], f32>, !relax.tensor<["b", "s", 4, 64], f32>) -> !relax.tensor<["?", "b", 4, 64], f32>
  return %0 : !relax.tensor<["?", "b", 4, 64], f32>
}

// -----

// The result is the cache's buffer: it keeps the cache's type (dim 2 stays "?"), not one refined from %k.
func.func @main(%cache: !relax.tensor<["t", "b", "?", 64], f32>, %k: !relax.tensor<["b", "s", 4, 64], f32>) -> !relax.tensor<["t", "b", "?", 64], f32> {
  // expected-error@+1 {{result !relax.tensor<["t", "b", "?", 64], f32> has unknown dims}}
  %0 = "relax.kv_cache_write"(%cache, %k) : (!relax.tensor<["t", "b", "?", 64], f32>, !relax.tensor<["b", "s", 4, 64], f32>) -> !relax.tensor<["t", "b", "?", 64], f32>
  return %0 : !relax.tensor<["t", "b", "?", 64], f32>
}

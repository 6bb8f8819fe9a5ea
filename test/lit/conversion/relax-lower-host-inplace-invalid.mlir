// An in-place op (relax.kv_cache_write) may only update a parameter that nothing else reads.
// RUN: relax-opt %s --split-input-file --verify-diagnostics --pass-pipeline="builtin.module(relax-infer-shapes,convert-relax-to-linalg,relax-lower-host)"

func.func @cache_read_twice(%c: !relax.tensor<["t", 1, 2, 8], f32>, %k: !relax.tensor<[1, 1, 2, 8], f32>) -> !relax.tensor<["t", 1, 2, 8], f32> {
  // expected-error@below {{updates parameter #0 in place, but other ops also read it}}
  %0 = "relax.kv_cache_write"(%c, %k) : (!relax.tensor<["t", 1, 2, 8], f32>, !relax.tensor<[1, 1, 2, 8], f32>) -> !relax.tensor<["t", 1, 2, 8], f32>
  %1 = "relax.add"(%0, %c) : (!relax.tensor<["t", 1, 2, 8], f32>, !relax.tensor<["t", 1, 2, 8], f32>) -> !relax.tensor<["t", 1, 2, 8], f32>
  return %1 : !relax.tensor<["t", 1, 2, 8], f32>
}

// -----

func.func @cache_not_a_parameter(%c: !relax.tensor<["t", 1, 2, 8], f32>, %k: !relax.tensor<[1, 1, 2, 8], f32>) -> !relax.tensor<["t", 1, 2, 8], f32> {
  %0 = "relax.exp"(%c) : (!relax.tensor<["t", 1, 2, 8], f32>) -> !relax.tensor<["t", 1, 2, 8], f32>
  // expected-error@below {{updates operand #0 in place, so it must be a parameter of the function}}
  %1 = "relax.kv_cache_write"(%0, %k) : (!relax.tensor<["t", 1, 2, 8], f32>, !relax.tensor<[1, 1, 2, 8], f32>) -> !relax.tensor<["t", 1, 2, 8], f32>
  return %1 : !relax.tensor<["t", 1, 2, 8], f32>
}

// RUN: relax-opt %s --convert-relax-to-linalg | FileCheck %s

// Prefill attention: an scf.forall over (batch x kv head, block of 32 queries) so every core works on it;
// a block multiplies its queries only by the keys they may see (kv_len + its last query + 1), takes the
// masked softmax of that block, and divides its product with the values by the row sums.
// CHECK-DAG:   #[[BLOCKS:map[0-9]*]] = affine_map<()[s0] -> (s0 ceildiv 32)>
// CHECK-DAG:   #[[SEEN:map[0-9]*]] = affine_map<(d0, d1)[s0] -> (d0 + d1 + s0)>
// CHECK-LABEL: func.func private @cached_attention_0(
// CHECK:         affine.apply #[[BLOCKS]]()
// CHECK:         scf.forall ({{.*}}) in ({{.*}}) shared_outs(
// CHECK:           %[[KEYS:.*]] = affine.apply #[[SEEN]](
// CHECK:           tensor.empty(%{{.*}}, %[[KEYS]]) : tensor<?x?xf32>
// CHECK:           linalg.matmul
// CHECK:           math.exp
// CHECK:           linalg.matmul
// CHECK:           arith.divf
// CHECK:           tensor.parallel_insert_slice
func.func @prefill(%q: !relax.tensor<["b", "s", 6, 8], f32>, %k: !relax.tensor<["n + s", "b", 2, 8], f32>, %v: !relax.tensor<["n + s", "b", 2, 8], f32>) -> !relax.tensor<["b", "s", 6, 8], f32> {
  %0 = "relax.cached_attention"(%q, %k, %v) {scale = 0.35 : f64} : (!relax.tensor<["b", "s", 6, 8], f32>, !relax.tensor<["n + s", "b", 2, 8], f32>, !relax.tensor<["n + s", "b", 2, 8], f32>) -> !relax.tensor<["b", "s", 6, 8], f32>
  return %0 : !relax.tensor<["b", "s", 6, 8], f32>
}

// Decode (one query) of f16 (f32 with a static head dim has a one-pass kernel: test_cached_attention.py): contractions over the cache in place. The product with the values iterates over
// positions outside and the head dim innermost (contiguous in v, a vector loop): with the positions
// innermost (strided reads of v) a 12-head step over 150 positions took 4x as long.
// CHECK-LABEL: func.func private @cached_attention_1(
// CHECK:         linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction"]
// CHECK:         math.exp
// CHECK:         linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "parallel", "reduction", "parallel"]
func.func @decode(%q: !relax.tensor<["b", 1, 6, 8], f16>, %k: !relax.tensor<["n + 1", "b", 2, 8], f16>, %v: !relax.tensor<["n + 1", "b", 2, 8], f16>) -> !relax.tensor<["b", 1, 6, 8], f16> {
  %0 = "relax.cached_attention"(%q, %k, %v) {scale = 0.35 : f64} : (!relax.tensor<["b", 1, 6, 8], f16>, !relax.tensor<["n + 1", "b", 2, 8], f16>, !relax.tensor<["n + 1", "b", 2, 8], f16>) -> !relax.tensor<["b", 1, 6, 8], f16>
  return %0 : !relax.tensor<["b", 1, 6, 8], f16>
}

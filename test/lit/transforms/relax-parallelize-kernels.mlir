// RUN: relax-opt %s --pass-pipeline='builtin.module(relax-parallelize-kernels{num-threads=2},relax-parallelize-kernels{num-threads=2})' | FileCheck %s
// RUN: relax-opt %s --pass-pipeline='builtin.module(relax-parallelize-kernels{num-threads=2},one-shot-bufferize{bufferize-function-boundaries},relax-lower-parallel)' | FileCheck %s --check-prefix=OMP
// RUN: relax-opt %s --pass-pipeline='builtin.module(relax-parallelize-kernels{num-threads=1})' | FileCheck %s --check-prefix=SERIAL

// The module records the thread count that relax-lower-parallel makes the most threads of omp.parallel;
// the count used is read at run time (omp_get_max_threads, which the runtime sets from the load).
// CHECK: module attributes {relax.num_threads = 2 : i64}
// OMP: func.func private @omp_get_max_threads() -> i32
// SERIAL-NOT: relax.num_threads
// SERIAL-NOT: scf.forall

// A row reduction and the elementwise op that uses it: one forall over chunks of rows (the reduced
// innermost dim is never split), the reduction fused into it. The chunk count is decided at run time:
// min(2, rows) when the work (summed iteration spaces) reaches min-work, else 1.
// CHECK-LABEL: func.func private @rows
// CHECK: %[[MIN:.*]] = arith.minui %{{.*}}, %c2
// CHECK: %[[AT_LEAST_1:.*]] = arith.maxui %[[MIN]], %c1
// CHECK: %[[BIG:.*]] = arith.cmpi uge, %{{.*}}, %c262144
// CHECK: %[[N:.*]] = arith.select %[[BIG]], %[[AT_LEAST_1]], %c1
// CHECK: scf.forall (%{{.*}}) in (%[[N]])
// CHECK: linalg.fill
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "reduction"]
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "parallel"]
// CHECK: tensor.parallel_insert_slice
// CHECK-NOT: linalg.
// CHECK: return
// The loop body becomes one function of the chunk index (and the values it uses), called from serial
// loops on the calling thread when one thread runs at run time or there is a single chunk (no OpenMP
// entry; 0 chunks run nothing), else from an omp.parallel of min(2, run-time count, chunks) threads.
// OMP-LABEL: func.func private @rows_chunk0(%{{.*}}: index,
// OMP: linalg.generic
// OMP: return
// OMP-LABEL: func.func private @rows(
// OMP: %[[RT:.*]] = call @omp_get_max_threads() : () -> i32
// OMP: %[[RTI:.*]] = arith.index_cast %[[RT]]
// OMP: %[[ALONE:.*]] = arith.cmpi ule, %[[RTI]], %c1
// OMP: %[[SINGLE:.*]] = arith.cmpi ule, %{{.*}}, %c1
// OMP: %[[RUN_HERE:.*]] = arith.ori %[[ALONE]], %[[SINGLE]]
// OMP: scf.if %[[RUN_HERE]] {
// OMP-NOT: omp.
// OMP: scf.for
// OMP-NEXT: func.call @rows_chunk0(
// OMP: } else {
// OMP: %[[TRIPS:.*]] = arith.ceildivui
// OMP: call @omp_get_max_threads()
// OMP: %[[T:.*]] = arith.maxui
// OMP: %[[T32:.*]] = arith.index_cast %[[T]] : index to i32
// OMP: omp.parallel num_threads(%[[T32]] : i32)
// OMP-NEXT: omp.wsloop {
// OMP-NEXT: omp.loop_nest
// OMP-NEXT: func.call @rows_chunk0(
// OMP-NOT: linalg.
// OMP: return
func.func private @rows(%x: tensor<?x?xf32>, %out: tensor<?x?xf32>) -> tensor<?x?xf32> {
  %c0 = arith.constant 0 : index
  %zero = arith.constant 0.0 : f32
  %n = tensor.dim %x, %c0 : tensor<?x?xf32>
  %e = tensor.empty(%n) : tensor<?xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<?xf32>) -> tensor<?xf32>
  %sum = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<?x?xf32>) outs(%init : tensor<?xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %s = arith.addf %a, %acc : f32
    linalg.yield %s : f32
  } -> tensor<?xf32>
  %y = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]}
      ins(%x, %sum : tensor<?x?xf32>, tensor<?xf32>) outs(%out : tensor<?x?xf32>) {
  ^bb0(%a: f32, %s: f32, %o: f32):
    %d = arith.divf %a, %s : f32
    linalg.yield %d : f32
  } -> tensor<?x?xf32>
  return %y : tensor<?x?xf32>
}

// Rank 3: the two leading dims are split (a batch of 1 still gives two chunks along the second);
// static sizes give static chunk counts. Lowered to OpenMP, a 2-D loop gets a dynamic schedule (chunks may be empty).
// CHECK-LABEL: func.func private @batched
// CHECK: scf.forall (%{{.*}}, %{{.*}}) in (2, 2)
// CHECK-DAG: linalg.fill
// CHECK-DAG: linalg.broadcast
// CHECK: linalg.batch_matmul ins({{.*}} : tensor<2x64x64xf32>, tensor<2x64x96xf32>)
// CHECK: linalg.generic
// OMP-LABEL: func.func private @batched(
// OMP: omp.wsloop schedule(dynamic)
func.func private @batched(%a: tensor<4x128x64xf32>, %b: tensor<64x96xf32>, %out: tensor<4x128x96xf32>) -> tensor<4x128x96xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x128x96xf32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<4x128x96xf32>) -> tensor<4x128x96xf32>
  %bb = tensor.empty() : tensor<4x64x96xf32>
  %bcast = linalg.broadcast ins(%b : tensor<64x96xf32>) outs(%bb : tensor<4x64x96xf32>) dimensions = [0]
  %mm = linalg.batch_matmul ins(%a, %bcast : tensor<4x128x64xf32>, tensor<4x64x96xf32>) outs(%init : tensor<4x128x96xf32>) -> tensor<4x128x96xf32>
  %y = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%mm : tensor<4x128x96xf32>) outs(%out : tensor<4x128x96xf32>) {
  ^bb0(%m: f32, %o: f32):
    %r = arith.maximumf %m, %zero : f32
    linalg.yield %r : f32
  } -> tensor<4x128x96xf32>
  return %y : tensor<4x128x96xf32>
}

// Little static work (4 x 8 elements): left serial, no forall, no run-time test.
// CHECK-LABEL: func.func private @tiny
// CHECK-NOT: scf.forall
// CHECK: linalg.generic
// CHECK-NEXT: ^bb0
func.func private @tiny(%x: tensor<4x8xf32>, %out: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %y = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<4x8xf32>) outs(%out : tensor<4x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = math.exp %a : f32
    linalg.yield %r : f32
  } -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}


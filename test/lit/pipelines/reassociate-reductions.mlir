// relax-reassociate-reductions: the float combiner of a linalg.generic reduction (the op reading the
// accumulator that is yielded) gets fastmath<reassoc> so LLVM vectorizes the loop; other ops stay.
// RUN: relax-opt %s --relax-reassociate-reductions | FileCheck %s

// CHECK-LABEL: func.func @sum_of_exp
// CHECK: math.exp %{{.*}} : f32
// CHECK: arith.mulf %{{.*}} : f32
// CHECK: arith.addf %{{.*}}, %{{.*}} fastmath<reassoc> : f32
func.func @sum_of_exp(%x: memref<?x?xf32>, %acc: memref<?xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<?x?xf32>) outs(%acc : memref<?xf32>) {
  ^bb0(%in: f32, %out: f32):
    %e = math.exp %in : f32
    %sq = arith.mulf %e, %e : f32
    %s = arith.addf %out, %sq : f32
    linalg.yield %s : f32
  }
  return
}

// CHECK-LABEL: func.func @max_keeps_contract
// CHECK: arith.maximumf %{{.*}}, %{{.*}} fastmath<reassoc> : f32
func.func @max_keeps_contract(%x: tensor<?x?xf32>, %init: tensor<?xf32>) -> tensor<?xf32> {
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<?x?xf32>) outs(%init : tensor<?xf32>) {
  ^bb0(%in: f32, %out: f32):
    %m = arith.maximumf %out, %in : f32
    linalg.yield %m : f32
  } -> tensor<?xf32>
  return %r : tensor<?xf32>
}

// CHECK-LABEL: func.func @parallel_untouched
// CHECK: arith.addf %{{.*}}, %{{.*}} : f32
// CHECK-NOT: reassoc
func.func @parallel_untouched(%x: memref<?x?xf32>, %y: memref<?x?xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]}
      ins(%x : memref<?x?xf32>) outs(%y : memref<?x?xf32>) {
  ^bb0(%in: f32, %out: f32):
    %s = arith.addf %out, %in : f32
    linalg.yield %s : f32
  }
  return
}

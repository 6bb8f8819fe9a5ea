// relax-schedule-kernels, rows schedule (transforms/schedules/rows.py): a kernel whose reductions reduce trailing
// dims is tiled to one row per iteration of its root, with the elementwise producer, both reductions
// and their fills fused into the loop (one pass over the input); a contraction-shaped reduction
// (owned by the matmul schedules) and a kernel without reductions are left alone.
// RUN: relax-opt %s --relax-schedule-kernels | FileCheck %s

// CHECK-LABEL: func.func private @scaled_softmax
// CHECK: scf.for
// CHECK-NEXT: scf.for
// CHECK-NOT: scf.for
// CHECK: tensor.extract_slice %arg0[%{{.*}}, %{{.*}}, 0] [1, 1, %{{.*}}] [1, 1, 1] : tensor<?x?x?xf32> to tensor<1x1x?xf32>
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "parallel"]{{.*}}tensor<1x1x?xf32>
// CHECK: linalg.fill {{.*}} -> tensor<1x1xf32>
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "reduction"]{{.*}}outs(%{{.*}} : tensor<1x1xf32>)
// CHECK: linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "reduction"]{{.*}}outs(%{{.*}} : tensor<1x1xf32>)
// CHECK: linalg.generic {{.*}}relax.row_tiles = [1, 1, 0]
// CHECK: tensor.insert_slice
// CHECK-NOT: linalg.generic
// CHECK: return
func.func private @scaled_softmax(%x: tensor<?x?x?xf32>, %out: tensor<?x?x?xf32>) -> tensor<?x?x?xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %ninf = arith.constant 0xFF800000 : f32
  %zero = arith.constant 0.0 : f32
  %scale = arith.constant 0.125 : f32
  %d0 = tensor.dim %x, %c0 : tensor<?x?x?xf32>
  %d1 = tensor.dim %x, %c1 : tensor<?x?x?xf32>
  %d2 = tensor.dim %x, %c2 : tensor<?x?x?xf32>
  %e = tensor.empty(%d0, %d1, %d2) : tensor<?x?x?xf32>
  %s = linalg.generic {indexing_maps = [affine_map<(a, b, c) -> (a, b, c)>, affine_map<(a, b, c) -> (a, b, c)>],
                       iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%x : tensor<?x?x?xf32>) outs(%e : tensor<?x?x?xf32>) {
  ^bb0(%in: f32, %o: f32):
    %m = arith.mulf %in, %scale : f32
    linalg.yield %m : f32
  } -> tensor<?x?x?xf32>
  %r = tensor.empty(%d0, %d1) : tensor<?x?xf32>
  %mx0 = linalg.fill ins(%ninf : f32) outs(%r : tensor<?x?xf32>) -> tensor<?x?xf32>
  %mx = linalg.generic {indexing_maps = [affine_map<(a, b, c) -> (a, b, c)>, affine_map<(a, b, c) -> (a, b)>],
                        iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%s : tensor<?x?x?xf32>) outs(%mx0 : tensor<?x?xf32>) {
  ^bb0(%in: f32, %o: f32):
    %m = arith.maximumf %o, %in : f32
    linalg.yield %m : f32
  } -> tensor<?x?xf32>
  %sm0 = linalg.fill ins(%zero : f32) outs(%r : tensor<?x?xf32>) -> tensor<?x?xf32>
  %sm = linalg.generic {indexing_maps = [affine_map<(a, b, c) -> (a, b, c)>, affine_map<(a, b, c) -> (a, b)>,
                                         affine_map<(a, b, c) -> (a, b)>],
                        iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%s, %mx : tensor<?x?x?xf32>, tensor<?x?xf32>) outs(%sm0 : tensor<?x?xf32>) {
  ^bb0(%in: f32, %m: f32, %o: f32):
    %d = arith.subf %in, %m : f32
    %ex = math.exp %d : f32
    %a = arith.addf %o, %ex : f32
    linalg.yield %a : f32
  } -> tensor<?x?xf32>
  %y = linalg.generic {indexing_maps = [affine_map<(a, b, c) -> (a, b, c)>, affine_map<(a, b, c) -> (a, b)>,
                                        affine_map<(a, b, c) -> (a, b)>, affine_map<(a, b, c) -> (a, b, c)>],
                       iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%s, %mx, %sm : tensor<?x?x?xf32>, tensor<?x?xf32>, tensor<?x?xf32>) outs(%out : tensor<?x?x?xf32>) {
  ^bb0(%in: f32, %m: f32, %t: f32, %o: f32):
    %d = arith.subf %in, %m : f32
    %ex = math.exp %d : f32
    %q = arith.divf %ex, %t : f32
    linalg.yield %q : f32
  } -> tensor<?x?x?xf32>
  return %y : tensor<?x?x?xf32>
}

// CHECK-LABEL: func.func private @contraction_epilogue
// CHECK-NOT: scf.for
// CHECK-NOT: relax.row_tiles
// CHECK: return
func.func private @contraction_epilogue(%a: tensor<?x?xf32>, %b: tensor<?x?xf32>, %acc: tensor<?x?xf32>,
                                        %out: tensor<?x?xf32>) -> tensor<?x?xf32> {
  %mm = linalg.generic {indexing_maps = [affine_map<(i, j, k) -> (i, k)>, affine_map<(i, j, k) -> (k, j)>,
                                         affine_map<(i, j, k) -> (i, j)>],
                        iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %b : tensor<?x?xf32>, tensor<?x?xf32>) outs(%acc : tensor<?x?xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %o, %p : f32
    linalg.yield %s : f32
  } -> tensor<?x?xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>],
                       iterator_types = ["parallel", "parallel"]}
      ins(%mm : tensor<?x?xf32>) outs(%out : tensor<?x?xf32>) {
  ^bb0(%x: f32, %o: f32):
    %z = arith.constant 0.0 : f32
    %m = arith.maximumf %x, %z : f32
    linalg.yield %m : f32
  } -> tensor<?x?xf32>
  return %r : tensor<?x?xf32>
}

// CHECK-LABEL: func.func private @elementwise_only
// CHECK-NOT: scf.for
// CHECK: return
func.func private @elementwise_only(%x: tensor<?x?xf32>, %out: tensor<?x?xf32>) -> tensor<?x?xf32> {
  %r = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>],
                       iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<?x?xf32>) outs(%out : tensor<?x?xf32>) {
  ^bb0(%v: f32, %o: f32):
    %e = math.exp %v : f32
    linalg.yield %e : f32
  } -> tensor<?x?xf32>
  return %r : tensor<?x?xf32>
}

// RUN: relax-opt %s --relax-fuse-ops --convert-relax-to-linalg --relax-fuse-kernels --relax-fuse-kernels | FileCheck %s

// Each group becomes one call_tir of a fused kernel: external inputs, the symbol its intermediate
// needs (k, read from no tensor of the kernel) as a prim_value, one destination per value used
// outside the group. The members' kernels are inlined and their elementwise loops merged into one
// linalg.generic that writes the destination; the members' kernels are gone.
// CHECK-LABEL: func.func @f
// CHECK: %[[K:.*]] = "relax.prim_value"() {value = "k"}
// CHECK-NEXT: %[[R:.*]] = "relax.call_tir"(%arg0, %arg2, %[[K]]) {callee = @fused_reshape_add_multiply_sum_0}
// CHECK-NOT: fusion_group
// CHECK-NEXT: %[[C:.*]] = "relax.match_cast"(%[[R]])
// CHECK-NEXT: "relax.call_tir"(%[[C]]) {callee = @fused_exp_tanh_add_0}{{.*}}-> (!relax.tensor<["n"], f32>, !relax.tensor<["n"], f32>)
// CHECK-NOT: "relax.call_tir"
// CHECK: return
// CHECK-LABEL: func.func private @fused_reshape_add_multiply_sum_0
// CHECK-SAME: (%{{.*}}: tensor<?x?xf32>, %{{.*}}: tensor<4xf32>, %{{.*}}: index, %{{.*}}: tensor<?xf32>) -> tensor<?xf32>
// CHECK-NOT: func.call
// CHECK: linalg.generic
// CHECK-SAME: iterator_types = ["parallel", "reduction", "reduction"]
// CHECK: arith.addf
// CHECK: arith.mulf
// CHECK: arith.addf
// exp's result leaves the group (an output of its own); tanh and add merge into one loop.
// CHECK-LABEL: func.func private @fused_exp_tanh_add_0
// CHECK-SAME: (%[[IN:.*]]: tensor<?xf32>, %[[O0:.*]]: tensor<?xf32>, %[[O1:.*]]: tensor<?xf32>)
// CHECK: %[[E:.*]] = linalg.generic {{.*}} ins(%[[IN]] : tensor<?xf32>) outs(%[[O0]] : tensor<?xf32>)
// CHECK: math.exp
// CHECK: %[[T:.*]] = linalg.generic {{.*}} ins(%[[E]] : tensor<?xf32>) outs(%[[O1]] : tensor<?xf32>)
// CHECK: math.tanh
// CHECK: arith.addf
// CHECK-NOT: linalg.generic
// CHECK: return %[[E]], %[[T]]
// CHECK-NOT: func.func private @reshape_0
// CHECK-NOT: func.func private @exp_0
func.func @f(%x: !relax.tensor<["n", "k * 4"], f32>, %z: !relax.tensor<["k"], f32>, %b: !relax.tensor<[4], f32>) -> (!relax.tensor<["n"], f32>, !relax.tensor<["n"], f32>) {
  %0 = "relax.reshape"(%x) {shape = ["n", "k", 4]} : (!relax.tensor<["n", "k * 4"], f32>) -> !relax.tensor<["n", "k", 4], f32>
  %1 = "relax.add"(%0, %b) : (!relax.tensor<["n", "k", 4], f32>, !relax.tensor<[4], f32>) -> !relax.tensor<["n", "k", 4], f32>
  %2 = "relax.multiply"(%1, %1) : (!relax.tensor<["n", "k", 4], f32>, !relax.tensor<["n", "k", 4], f32>) -> !relax.tensor<["n", "k", 4], f32>
  %3 = "relax.sum"(%2) {axes = [1, 2], keepdims = false} : (!relax.tensor<["n", "k", 4], f32>) -> !relax.tensor<["n"], f32>
  %4 = "relax.match_cast"(%3) : (!relax.tensor<["n"], f32>) -> !relax.tensor<["n"], f32>
  %5 = "relax.exp"(%4) : (!relax.tensor<["n"], f32>) -> !relax.tensor<["n"], f32>
  %6 = "relax.tanh"(%5) : (!relax.tensor<["n"], f32>) -> !relax.tensor<["n"], f32>
  %7 = "relax.add"(%5, %6) : (!relax.tensor<["n"], f32>, !relax.tensor<["n"], f32>) -> !relax.tensor<["n"], f32>
  return %7, %5 : !relax.tensor<["n"], f32>, !relax.tensor<["n"], f32>
}

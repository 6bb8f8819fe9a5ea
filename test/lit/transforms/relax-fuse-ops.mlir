// RUN: relax-opt %s --relax-fuse-ops --relax-fuse-ops | FileCheck %s

// A matmul with a dynamic epilogue, then an injective chain with a creation op and a reduction at
// its end; the shape ops in between move above the group; match_cast ends a group.
// CHECK-LABEL: func.func @f
// CHECK: "relax.matmul"{{.*}}relax.fusion_group = 0
// CHECK-NEXT: "relax.add"{{.*}}relax.fusion_group = 0
// CHECK-NEXT: "relax.gelu"{{.*}}relax.fusion_group = 0
// CHECK-NEXT: "relax.shape_of"
// CHECK-NOT: fusion_group
// CHECK-NEXT: "relax.reshape"{{.*}}relax.fusion_group = 1
// CHECK-NEXT: "relax.full"{{.*}}relax.fusion_group = 1
// CHECK-NEXT: "relax.multiply"{{.*}}relax.fusion_group = 1
// CHECK-NEXT: "relax.sum"{{.*}}relax.fusion_group = 1
// CHECK-NEXT: "relax.match_cast"
// CHECK-NEXT: "relax.exp"
// CHECK-NOT: fusion_group
// CHECK: return
func.func @f(%x: !relax.tensor<["n", 8], f32>, %w: !relax.tensor<[8, 4], f32>, %b: !relax.tensor<[4], f32>) -> !relax.tensor<["m"], f32> {
  %0 = "relax.matmul"(%x, %w) : (!relax.tensor<["n", 8], f32>, !relax.tensor<[8, 4], f32>) -> !relax.tensor<["n", 4], f32>
  %1 = "relax.add"(%0, %b) : (!relax.tensor<["n", 4], f32>, !relax.tensor<[4], f32>) -> !relax.tensor<["n", 4], f32>
  %2 = "relax.gelu"(%1) : (!relax.tensor<["n", 4], f32>) -> !relax.tensor<["n", 4], f32>
  %3 = "relax.reshape"(%2) {shape = ["n", 2, 2]} : (!relax.tensor<["n", 4], f32>) -> !relax.tensor<["n", 2, 2], f32>
  %s = "relax.shape_of"(%x) : (!relax.tensor<["n", 8], f32>) -> !relax.shape<["n", 8]>
  %4 = "relax.full"() {dtype = "f32", shape = [], value = 2.000000e+00 : f64} : () -> !relax.tensor<[], f32>
  %5 = "relax.multiply"(%3, %4) : (!relax.tensor<["n", 2, 2], f32>, !relax.tensor<[], f32>) -> !relax.tensor<["n", 2, 2], f32>
  %6 = "relax.sum"(%5) {axes = [1, 2], keepdims = false} : (!relax.tensor<["n", 2, 2], f32>) -> !relax.tensor<["n"], f32>
  %7 = "relax.match_cast"(%6) : (!relax.tensor<["n"], f32>) -> !relax.tensor<["m"], f32>
  %8 = "relax.exp"(%7) : (!relax.tensor<["m"], f32>) -> !relax.tensor<["m"], f32>
  return %8 : !relax.tensor<["m"], f32>
}

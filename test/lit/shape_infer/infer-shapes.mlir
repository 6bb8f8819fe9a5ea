// relax-infer-shapes refines coarse result types by forward deduction, across dataflow blocks,
// calls and function signatures; a second run changes nothing.
// RUN: relax-opt %s --relax-infer-shapes | FileCheck %s
// RUN: relax-opt %s --relax-infer-shapes | relax-opt --relax-infer-shapes --relax-verify | FileCheck %s

// CHECK-LABEL: func.func @block
// CHECK-SAME: -> !relax.tensor<["b", 8, "s", "s"], f32>
// CHECK: "relax.matmul"{{.*}} -> !relax.tensor<["b", "s", 512], f32>
// CHECK: "relax.reshape"{{.*}} -> !relax.tensor<["b", "s", 8, 64], f32>
// CHECK: "relax.permute_dims"{{.*}} -> !relax.tensor<["b", 8, "s", 64], f32>
// CHECK: "relax.permute_dims"{{.*}} -> !relax.tensor<["b", 8, 64, "s"], f32>
// CHECK: "relax.matmul"{{.*}} -> !relax.tensor<["b", 8, "s", "s"], f32>
// CHECK: "relax.softmax"{{.*}} -> !relax.tensor<["b", 8, "s", "s"], f32>
// CHECK: scf.yield {{.*}} : !relax.tensor<["b", 8, "s", "s"], f32>
// CHECK: return {{.*}} : !relax.tensor<["b", 8, "s", "s"], f32>
func.func @block(%x: !relax.tensor<["b", "s", 512], f32>, %w: !relax.tensor<[512, 512], f32>)
    -> !relax.tensor<"*", f32> {
  %r = scf.execute_region -> !relax.tensor<"*", f32> {
    %q = "relax.matmul"(%x, %w) : (!relax.tensor<["b", "s", 512], f32>, !relax.tensor<[512, 512], f32>) -> !relax.tensor<"*", f32>
    %h = "relax.reshape"(%q) {shape = [0, 0, 8, -1]} : (!relax.tensor<"*", f32>) -> !relax.tensor<"*", f32>
    %t = "relax.permute_dims"(%h) {axes = [0, 2, 1, 3]} : (!relax.tensor<"*", f32>) -> !relax.tensor<"*", f32>
    %k = "relax.permute_dims"(%h) {axes = [0, 2, 3, 1]} : (!relax.tensor<"*", f32>) -> !relax.tensor<"*", f32>
    %s = "relax.matmul"(%t, %k) : (!relax.tensor<"*", f32>, !relax.tensor<"*", f32>) -> !relax.tensor<"*", f32>
    %p = "relax.softmax"(%s) {axis = -1 : i64} : (!relax.tensor<"*", f32>) -> !relax.tensor<"*", f32>
    scf.yield %p : !relax.tensor<"*", f32>
  } {no_inline, relax.dataflow}
  return %r : !relax.tensor<"*", f32>
}

// CHECK-LABEL: func.func @caller
// CHECK-SAME: -> !relax.tensor<["m + n", 4], f32>
// CHECK: call @concat2{{.*}} -> !relax.tensor<["m + n", 4], f32>
// CHECK: "relax.shape_of"{{.*}} -> !relax.shape<["m + n", 4]>
func.func @caller(%a: !relax.tensor<["n", 4], f32>, %b: !relax.tensor<["m", 4], f32>) -> !relax.tensor<"*", f32> {
  %0 = func.call @concat2(%a, %b) : (!relax.tensor<["n", 4], f32>, !relax.tensor<["m", 4], f32>) -> !relax.tensor<"*", f32>
  %1 = "relax.shape_of"(%0) : (!relax.tensor<"*", f32>) -> !relax.shape<"*">
  return %0 : !relax.tensor<"*", f32>
}

// CHECK-LABEL: func.func @concat2
// CHECK-SAME: -> !relax.tensor<["m + n", 4], f32>
func.func @concat2(%x: !relax.tensor<["n", 4], f32>, %y: !relax.tensor<["m", 4], f32>) -> !relax.tensor<"*", f32> {
  %0 = "relax.concat"(%x, %y) {axis = 0 : i64} : (!relax.tensor<["n", 4], f32>, !relax.tensor<["m", 4], f32>) -> !relax.tensor<"*", f32>
  return %0 : !relax.tensor<"*", f32>
}

// match_cast binds new symbols and deduction continues with them.
// CHECK-LABEL: func.func @cast
// CHECK: "relax.match_cast"{{.*}} -> !relax.tensor<["k", "j"], f32>
// CHECK: "relax.flatten"{{.*}} -> !relax.tensor<["j * k"], f32>
func.func @cast(%x: !relax.tensor<"*", f32>) -> !relax.tensor<"*", f32> {
  %0 = "relax.match_cast"(%x) : (!relax.tensor<"*", f32>) -> !relax.tensor<["k", "j"], f32>
  %1 = "relax.flatten"(%0) {start_axis = 0 : i64, end_axis = -1 : i64} : (!relax.tensor<["k", "j"], f32>) -> !relax.tensor<"*", f32>
  return %1 : !relax.tensor<"*", f32>
}

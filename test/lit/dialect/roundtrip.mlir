// Every relax type and op parses, prints and parses again to the same text.
// RUN: relax-opt %s | relax-opt | FileCheck %s
// RUN: relax-opt %s --relax-verify | FileCheck %s

// CHECK-LABEL: func.func @types
// CHECK-SAME: !relax.tensor<["n", 4], f32>
// CHECK-SAME: !relax.tensor<"*", f32>
// CHECK-SAME: !relax.tensor<["n", "?"], none>
// CHECK-SAME: !relax.tensor<[], i64>
// CHECK-SAME: !relax.shape<["n", 4]>
// CHECK-SAME: !relax.shape<"*">
// CHECK-SAME: !relax.prim<"n">
// CHECK-SAME: !relax.tuple<[!relax.tensor<["n", 4], f32>, !relax.object]>
// CHECK-SAME: !relax.object
func.func @types(%a: !relax.tensor<["n", 4], f32>, %b: !relax.tensor<"*", f32>,
                 %c: !relax.tensor<["n", "?"], none>, %d: !relax.tensor<[], i64>,
                 %e: !relax.shape<["n", 4]>, %f: !relax.shape<"*">, %g: !relax.prim<"n">,
                 %h: !relax.tuple<[!relax.tensor<["n", 4], f32>, !relax.object]>, %i: !relax.object) {
  return
}

// CHECK-LABEL: func.func @symbolic_dims
// CHECK-SAME: !relax.tensor<["?", "?"], f32>
// CHECK-SAME: -> !relax.tensor<["2 * n + 1", "(n + 3) floordiv 4"], f32>
func.func @symbolic_dims(%x: !relax.tensor<["?", "?"], f32>, %n: !relax.tensor<["n"], f32>)
    -> !relax.tensor<["2 * n + 1", "(n + 3) floordiv 4"], f32> {
  %0 = "relax.match_cast"(%x) : (!relax.tensor<["?", "?"], f32>) -> !relax.tensor<["2 * n + 1", "(n + 3) floordiv 4"], f32>
  return %0 : !relax.tensor<["2 * n + 1", "(n + 3) floordiv 4"], f32>
}

// CHECK-LABEL: func.func @ops
// CHECK: "relax.add"
// CHECK: "relax.subtract"
// CHECK: "relax.multiply"
// CHECK: "relax.divide"
// CHECK: "relax.matmul"
// CHECK: "relax.exp"
// CHECK: "relax.relu"
// CHECK: "relax.reshape"(%{{.*}}) {shape = ["b", "s", 8, 64]}
// CHECK: "relax.permute_dims"(%{{.*}}) {axes = [0, 2, 1, 3]}
// CHECK: "relax.sum"(%{{.*}}) {axes = [3], keepdims = false}
// CHECK: "relax.shape_of"
// CHECK: "relax.make_tuple"
// CHECK: "relax.tuple_get_item"(%{{.*}}) {index = 1 : i64}
// CHECK: "relax.constant"() {value = dense<[1.000000e+00, 2.000000e+00]> : tensor<2xf32>}
// CHECK: "relax.match_cast"
// CHECK: "relax.call_tir"(%{{.*}}) {callee = @kernel}
// CHECK: "relax.call_dps_library"(%{{.*}}) {callee = "relax_sgemm"}
func.func @ops(%x: !relax.tensor<["b", "s", 512], f32>, %w: !relax.tensor<[512, 512], f32>,
               %v: !relax.tensor<"*", f32>) -> !relax.tensor<["b", "s", 512], f32> {
  %0 = "relax.add"(%x, %x) : (!relax.tensor<["b", "s", 512], f32>, !relax.tensor<["b", "s", 512], f32>) -> !relax.tensor<["b", "s", 512], f32>
  %1 = "relax.subtract"(%0, %x) : (!relax.tensor<["b", "s", 512], f32>, !relax.tensor<["b", "s", 512], f32>) -> !relax.tensor<["b", "s", 512], f32>
  %2 = "relax.multiply"(%1, %x) : (!relax.tensor<["b", "s", 512], f32>, !relax.tensor<["b", "s", 512], f32>) -> !relax.tensor<["b", "s", 512], f32>
  %3 = "relax.divide"(%2, %x) : (!relax.tensor<["b", "s", 512], f32>, !relax.tensor<["b", "s", 512], f32>) -> !relax.tensor<["b", "s", 512], f32>
  %4 = "relax.matmul"(%3, %w) : (!relax.tensor<["b", "s", 512], f32>, !relax.tensor<[512, 512], f32>) -> !relax.tensor<["b", "s", 512], f32>
  %5 = "relax.exp"(%4) : (!relax.tensor<["b", "s", 512], f32>) -> !relax.tensor<["b", "s", 512], f32>
  %6 = "relax.relu"(%5) : (!relax.tensor<["b", "s", 512], f32>) -> !relax.tensor<["b", "s", 512], f32>
  %7 = "relax.reshape"(%6) {shape = ["b", "s", 8, 64]} : (!relax.tensor<["b", "s", 512], f32>) -> !relax.tensor<["b", "s", 8, 64], f32>
  %8 = "relax.permute_dims"(%7) {axes = [0, 2, 1, 3]} : (!relax.tensor<["b", "s", 8, 64], f32>) -> !relax.tensor<["b", 8, "s", 64], f32>
  %9 = "relax.sum"(%8) {axes = [3], keepdims = false} : (!relax.tensor<["b", 8, "s", 64], f32>) -> !relax.tensor<["b", 8, "s"], f32>
  %10 = "relax.shape_of"(%9) : (!relax.tensor<["b", 8, "s"], f32>) -> !relax.shape<["b", 8, "s"]>
  %11 = "relax.make_tuple"(%9, %10) : (!relax.tensor<["b", 8, "s"], f32>, !relax.shape<["b", 8, "s"]>) -> !relax.tuple<[!relax.tensor<["b", 8, "s"], f32>, !relax.shape<["b", 8, "s"]>]>
  %12 = "relax.tuple_get_item"(%11) {index = 1} : (!relax.tuple<[!relax.tensor<["b", 8, "s"], f32>, !relax.shape<["b", 8, "s"]>]>) -> !relax.shape<["b", 8, "s"]>
  %13 = "relax.constant"() {value = dense<[1.0, 2.0]> : tensor<2xf32>} : () -> !relax.tensor<[2], f32>
  %14 = "relax.match_cast"(%v) : (!relax.tensor<"*", f32>) -> !relax.tensor<["m", 2], f32>
  %15 = "relax.call_tir"(%14, %13) {callee = @kernel} : (!relax.tensor<["m", 2], f32>, !relax.tensor<[2], f32>) -> !relax.tensor<["m", 2], f32>
  %16 = "relax.call_dps_library"(%4, %w) {callee = "relax_sgemm"} : (!relax.tensor<["b", "s", 512], f32>, !relax.tensor<[512, 512], f32>) -> !relax.tensor<["b", "s", 512], f32>
  return %16 : !relax.tensor<["b", "s", 512], f32>
}

func.func private @kernel(%a: tensor<?x2xf32>, %b: tensor<2xf32>, %out: tensor<?x2xf32>) -> tensor<?x2xf32>

// CHECK-LABEL: func.func @dataflow
// CHECK: scf.execute_region -> (!relax.tensor<["n", 4], f32>, !relax.tensor<["n"], f32>) no_inline {
// CHECK: scf.yield
// CHECK: } {relax.dataflow}
func.func @dataflow(%x: !relax.tensor<["n", 4], f32>) -> !relax.tensor<["n"], f32>
    attributes {relax.upper_bounds = {n = 4096 : i64}} {
  %r:2 = scf.execute_region -> (!relax.tensor<["n", 4], f32>, !relax.tensor<["n"], f32>) {
    %0 = "relax.exp"(%x) : (!relax.tensor<["n", 4], f32>) -> !relax.tensor<["n", 4], f32>
    %1 = "relax.sum"(%0) {axes = [1], keepdims = false} : (!relax.tensor<["n", 4], f32>) -> !relax.tensor<["n"], f32>
    scf.yield %0, %1 : !relax.tensor<["n", 4], f32>, !relax.tensor<["n"], f32>
  } {no_inline, relax.dataflow}
  return %r#1 : !relax.tensor<["n"], f32>
}

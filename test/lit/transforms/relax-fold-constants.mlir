// relax-fold-constants: known symbolic integers become prim_value, constant shapes become
// constants, constant subgraphs are compiled, run and replaced by relax.constant. Run twice: the
// second run changes nothing.
// RUN: relax-opt %s --relax-fold-constants --relax-fold-constants | FileCheck %s
// RUN: relax-opt %s --pass-pipeline='builtin.module(relax-fold-constants{max-elements=2})' | FileCheck %s --check-prefix=LIMIT

// CHECK-LABEL: func.func @shapes
// CHECK-NEXT: %[[D:.*]] = "relax.prim_value"() {value = "s"} : () -> !relax.prim<"s">
// CHECK-NEXT: %[[M:.*]] = "relax.prim_value"() {value = "8 * s"} : () -> !relax.prim<"s * 8">
// CHECK-NEXT: %[[T:.*]] = "relax.constant"() {value = dense<[2, 8]> : tensor<2xi64>} : () -> !relax.tensor<[2], i64>
// CHECK-NEXT: %[[S:.*]] = "relax.make_shape"(%[[D]], %[[M]])
// CHECK-NEXT: return %[[S]], %[[T]]
func.func @shapes(%x: !relax.tensor<["b", "s", 64], f32>, %y: !relax.tensor<[2, 8], f32>) -> (!relax.shape<["s", "s * 8"]>, !relax.tensor<[2], i64>) {
  %s = "relax.shape_of"(%x) : (!relax.tensor<["b", "s", 64], f32>) -> !relax.shape<["b", "s", 64]>
  %d = "relax.get_dim"(%s) {index = 1 : i64} : (!relax.shape<["b", "s", 64]>) -> !relax.prim<"s">
  %e = "relax.prim_value"() {value = 8 : i64} : () -> !relax.prim<"8">
  %m = "relax.prim_binary"(%d, %e) {op = "mul"} : (!relax.prim<"s">, !relax.prim<"8">) -> !relax.prim<"s * 8">
  %ys = "relax.shape_of"(%y) : (!relax.tensor<[2, 8], f32>) -> !relax.shape<[2, 8]>
  %t = "relax.shape_to_tensor"(%ys) : (!relax.shape<[2, 8]>) -> !relax.tensor<[2], i64>
  %r = "relax.make_shape"(%d, %m) : (!relax.prim<"s">, !relax.prim<"s * 8">) -> !relax.shape<["s", "s * 8"]>
  return %r, %t : !relax.shape<["s", "s * 8"]>, !relax.tensor<[2], i64>
}

// A constant chain is evaluated; ops fed by run-time values stay.
// CHECK-LABEL: func.func @compute
// CHECK-NEXT: %[[C:.*]] = "relax.constant"() {value = dense<[2.000000e+00, 4.000000e+00, 6.000000e+00]> : tensor<3xf32>}
// CHECK-NEXT: %[[A:.*]] = "relax.add"(%arg0, %[[C]])
// CHECK-NEXT: return %[[A]]
// LIMIT-LABEL: func.func @compute
// LIMIT: "relax.multiply"
func.func @compute(%x: !relax.tensor<["n", 3], f32>) -> !relax.tensor<["n", 3], f32> {
  %c = "relax.constant"() {value = dense<[1.0, 2.0, 3.0]> : tensor<3xf32>} : () -> !relax.tensor<[3], f32>
  %two = "relax.full"() {dtype = "f32", shape = [], value = 2.0 : f64} : () -> !relax.tensor<[], f32>
  %0 = "relax.multiply"(%c, %two) : (!relax.tensor<[3], f32>, !relax.tensor<[], f32>) -> !relax.tensor<[3], f32>
  %1 = "relax.add"(%x, %0) : (!relax.tensor<["n", 3], f32>, !relax.tensor<[3], f32>) -> !relax.tensor<["n", 3], f32>
  return %1 : !relax.tensor<["n", 3], f32>
}

// Inside a dataflow block, with integer and boolean results; a generated value larger than 4096
// elements with no constant input is not materialized, one of symbolic shape never is.
// CHECK-LABEL: func.func @dataflow
// CHECK: "relax.constant"() {value = dense<[true, false, true, false]> : tensor<4xi1>}
// CHECK-NOT: "relax.less"
// CHECK: "relax.full"() {dtype = "f32", shape = [100, 100]
// CHECK: "relax.arange"() {dtype = "i64", end = "n"
// CHECK: scf.yield
func.func @dataflow(%n: !relax.tensor<["n"], i64>) -> (!relax.tensor<[4], i1>, !relax.tensor<[100, 100], f32>, !relax.tensor<["n"], i64>) {
  %r:3 = scf.execute_region -> (!relax.tensor<[4], i1>, !relax.tensor<[100, 100], f32>, !relax.tensor<["n"], i64>) no_inline {
    %a = "relax.arange"() {dtype = "i64", end = 4 : i64, start = 0 : i64, step = 1 : i64} : () -> !relax.tensor<[4], i64>
    %c = "relax.constant"() {value = dense<[1, 0, 3, 2]> : tensor<4xi64>} : () -> !relax.tensor<[4], i64>
    %l = "relax.less"(%a, %c) : (!relax.tensor<[4], i64>, !relax.tensor<[4], i64>) -> !relax.tensor<[4], i1>
    %f = "relax.full"() {dtype = "f32", shape = [100, 100], value = 1.0 : f64} : () -> !relax.tensor<[100, 100], f32>
    %s = "relax.arange"() {dtype = "i64", end = "n", start = 0 : i64, step = 1 : i64} : () -> !relax.tensor<["n"], i64>
    scf.yield %l, %f, %s : !relax.tensor<[4], i1>, !relax.tensor<[100, 100], f32>, !relax.tensor<["n"], i64>
  } {relax.dataflow}
  return %r#0, %r#1, %r#2 : !relax.tensor<[4], i1>, !relax.tensor<[100, 100], f32>, !relax.tensor<["n"], i64>
}

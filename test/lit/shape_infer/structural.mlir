// Deduction of the structural, shape-value, creation and data-dependent ops: each op is written with a
// coarse declared result and relax-infer-shapes refines it (static, symbolic, unknown dim, unknown rank).
// An explicit module keeps the dense_resource section outside it.
// RUN: relax-opt %s --relax-infer-shapes | FileCheck %s
// RUN: relax-opt %s --relax-infer-shapes | relax-opt --relax-infer-shapes --relax-verify | FileCheck %s

module {

// match_cast states its result (kept as written); ops after it deduce with the symbols it binds.
// CHECK-LABEL: func.func @match_cast
// CHECK: "relax.match_cast"{{.*}} -> !relax.tensor<["k", "j"], f32>
// CHECK: "relax.flatten"{{.*}} -> !relax.tensor<["j * k"], f32>
// CHECK: "relax.match_cast"{{.*}} -> !relax.tensor<[2, 0], f32>
// CHECK: "relax.shape_of"{{.*}} -> !relax.shape<[2, 0]>
// CHECK: "relax.match_cast"{{.*}} -> !relax.tensor<["?", "m"], f32>
// CHECK: "relax.shape_of"{{.*}} -> !relax.shape<["?", "m"]>
// CHECK: "relax.match_cast"{{.*}} -> !relax.tensor<"*", f32>
// CHECK: "relax.shape_of"{{.*}} -> !relax.shape<"*">
// CHECK: "relax.match_cast"{{.*}} -> !relax.prim<"t">
// CHECK: "relax.make_shape"{{.*}} -> !relax.shape<["t", "n"]>
// CHECK: "relax.match_cast"{{.*}} -> !relax.tuple<[!relax.tensor<["p"], f32>, !relax.prim<"q">]>
// CHECK: "relax.tuple_get_item"{{.*}} -> !relax.tensor<["p"], f32>
func.func @match_cast(%x: !relax.tensor<"*", f32>, %y: !relax.tensor<["n", 4], f32>, %p: !relax.prim<"?">,
                      %o: !relax.object) {
  %0 = "relax.match_cast"(%x) : (!relax.tensor<"*", f32>) -> !relax.tensor<["k", "j"], f32>
  %1 = "relax.flatten"(%0) {start_axis = 0 : i64, end_axis = -1 : i64} : (!relax.tensor<["k", "j"], f32>) -> !relax.tensor<"*", f32>
  %2 = "relax.match_cast"(%x) : (!relax.tensor<"*", f32>) -> !relax.tensor<[2, 0], f32>
  %3 = "relax.shape_of"(%2) : (!relax.tensor<[2, 0], f32>) -> !relax.shape<"*">
  %4 = "relax.match_cast"(%y) : (!relax.tensor<["n", 4], f32>) -> !relax.tensor<["?", "m"], f32>
  %5 = "relax.shape_of"(%4) : (!relax.tensor<["?", "m"], f32>) -> !relax.shape<"*">
  %6 = "relax.match_cast"(%y) : (!relax.tensor<["n", 4], f32>) -> !relax.tensor<"*", f32>
  %7 = "relax.shape_of"(%6) : (!relax.tensor<"*", f32>) -> !relax.shape<"*">
  %8 = "relax.match_cast"(%p) : (!relax.prim<"?">) -> !relax.prim<"t">
  %n = "relax.prim_value"() {value = "n"} : () -> !relax.prim<"?">
  %9 = "relax.make_shape"(%8, %n) : (!relax.prim<"t">, !relax.prim<"?">) -> !relax.shape<"*">
  %10 = "relax.match_cast"(%o) : (!relax.object) -> !relax.tuple<[!relax.tensor<["p"], f32>, !relax.prim<"q">]>
  %11 = "relax.tuple_get_item"(%10) {index = 0 : i64} : (!relax.tuple<[!relax.tensor<["p"], f32>, !relax.prim<"q">]>) -> !relax.tensor<"*", none>
  return
}

// call_tir / call_dps_library state their outputs; ops after them deduce from those.
// CHECK-LABEL: func.func private @kernel
func.func private @kernel(%a: tensor<?x4xf32>, %out: tensor<?x4xf32>) -> tensor<?x4xf32> {
  return %out : tensor<?x4xf32>
}

// CHECK-LABEL: func.func @calls
// CHECK: "relax.call_tir"{{.*}} {callee = @kernel}{{.*}} -> !relax.tensor<["n", 4], f32>
// CHECK: "relax.flatten"{{.*}} -> !relax.tensor<["4 * n"], f32>
// CHECK: "relax.call_dps_library"{{.*}} {callee = "relax_sgemm"}{{.*}} -> (!relax.tensor<["n", 1], f32>, !relax.tensor<[], i64>)
// CHECK: "relax.shape_of"{{.*}} -> !relax.shape<["n", 1]>
// CHECK: "relax.shape_of"{{.*}} -> !relax.shape<[]>
func.func @calls(%x: !relax.tensor<["n", 4], f32>, %u: !relax.tensor<"*", f32>, %s: !relax.shape<["n", 4]>) {
  %0 = "relax.call_tir"(%x) {callee = @kernel} : (!relax.tensor<["n", 4], f32>) -> !relax.tensor<["n", 4], f32>
  %1 = "relax.flatten"(%0) {start_axis = 0 : i64, end_axis = -1 : i64} : (!relax.tensor<["n", 4], f32>) -> !relax.tensor<["?"], f32>
  %2:2 = "relax.call_dps_library"(%u, %s) {callee = "relax_sgemm"} : (!relax.tensor<"*", f32>, !relax.shape<["n", 4]>) -> (!relax.tensor<["n", 1], f32>, !relax.tensor<[], i64>)
  %3 = "relax.shape_of"(%2#0) : (!relax.tensor<["n", 1], f32>) -> !relax.shape<"*">
  %4 = "relax.shape_of"(%2#1) : (!relax.tensor<[], i64>) -> !relax.shape<"*">
  return
}

// CHECK-LABEL: func.func @shape_of
// CHECK: "relax.shape_of"{{.*}} -> !relax.shape<[1, 0, 7]>
// CHECK: "relax.shape_of"{{.*}} -> !relax.shape<["b", "s", 512]>
// CHECK: "relax.shape_of"{{.*}} -> !relax.shape<["?", "n + 1"]>
// CHECK: "relax.shape_of"{{.*}} -> !relax.shape<"*">
func.func @shape_of(%a: !relax.tensor<[1, 0, 7], f32>, %b: !relax.tensor<["b", "s", 512], f16>,
                    %c: !relax.tensor<["?", "n + 1"], i64>, %d: !relax.tensor<"*", f32>, %n: !relax.prim<"n">) {
  %0 = "relax.shape_of"(%a) : (!relax.tensor<[1, 0, 7], f32>) -> !relax.shape<"*">
  %1 = "relax.shape_of"(%b) : (!relax.tensor<["b", "s", 512], f16>) -> !relax.shape<"*">
  %2 = "relax.shape_of"(%c) : (!relax.tensor<["?", "n + 1"], i64>) -> !relax.shape<["?", "?"]>
  %3 = "relax.shape_of"(%d) : (!relax.tensor<"*", f32>) -> !relax.shape<"*">
  return
}

// CHECK-LABEL: func.func @tuples
// CHECK: "relax.make_tuple"{{.*}} -> !relax.tuple<[!relax.tensor<[2, 1], f32>, !relax.tensor<["n", 4], f32>, !relax.tensor<["?", 4], f32>, !relax.tensor<"*", i32>]>
// CHECK: "relax.tuple_get_item"{{.*}} -> !relax.tensor<[2, 1], f32>
// CHECK: "relax.tuple_get_item"{{.*}} -> !relax.tensor<["n", 4], f32>
// CHECK: "relax.tuple_get_item"{{.*}} -> !relax.tensor<["?", 4], f32>
// CHECK: "relax.tuple_get_item"{{.*}} -> !relax.tensor<"*", i32>
// CHECK: "relax.make_tuple"() : () -> !relax.tuple<[]>
// CHECK: "relax.make_tuple"{{.*}} -> !relax.tuple<[!relax.shape<["n", 4]>, !relax.prim<"n">, !relax.tuple<[]>]>
// CHECK: "relax.tuple_get_item"{{.*}} {index = 1 : i64}{{.*}} -> !relax.prim<"n">
func.func @tuples(%a: !relax.tensor<[2, 1], f32>, %b: !relax.tensor<["n", 4], f32>, %c: !relax.tensor<["?", 4], f32>,
                  %d: !relax.tensor<"*", i32>) {
  %t = "relax.make_tuple"(%a, %b, %c, %d) : (!relax.tensor<[2, 1], f32>, !relax.tensor<["n", 4], f32>, !relax.tensor<["?", 4], f32>, !relax.tensor<"*", i32>) -> !relax.tuple<[!relax.tensor<"*", f32>, !relax.tensor<"*", f32>, !relax.tensor<"*", f32>, !relax.tensor<"*", i32>]>
  %0 = "relax.tuple_get_item"(%t) {index = 0 : i64} : (!relax.tuple<[!relax.tensor<"*", f32>, !relax.tensor<"*", f32>, !relax.tensor<"*", f32>, !relax.tensor<"*", i32>]>) -> !relax.tensor<"*", f32>
  %1 = "relax.tuple_get_item"(%t) {index = 1 : i64} : (!relax.tuple<[!relax.tensor<"*", f32>, !relax.tensor<"*", f32>, !relax.tensor<"*", f32>, !relax.tensor<"*", i32>]>) -> !relax.tensor<"*", f32>
  %2 = "relax.tuple_get_item"(%t) {index = 2 : i64} : (!relax.tuple<[!relax.tensor<"*", f32>, !relax.tensor<"*", f32>, !relax.tensor<"*", f32>, !relax.tensor<"*", i32>]>) -> !relax.tensor<"*", f32>
  %3 = "relax.tuple_get_item"(%t) {index = 3 : i64} : (!relax.tuple<[!relax.tensor<"*", f32>, !relax.tensor<"*", f32>, !relax.tensor<"*", f32>, !relax.tensor<"*", i32>]>) -> !relax.tensor<"*", none>
  %e = "relax.make_tuple"() : () -> !relax.tuple<[]>
  %s = "relax.shape_of"(%b) : (!relax.tensor<["n", 4], f32>) -> !relax.shape<"*">
  %n = "relax.get_dim"(%s) {index = 0 : i64} : (!relax.shape<"*">) -> !relax.prim<"?">
  %u = "relax.make_tuple"(%s, %n, %e) : (!relax.shape<"*">, !relax.prim<"?">, !relax.tuple<[]>) -> !relax.tuple<[!relax.shape<"*">, !relax.prim<"?">, !relax.tuple<[]>]>
  %4 = "relax.tuple_get_item"(%u) {index = 1 : i64} : (!relax.tuple<[!relax.shape<"*">, !relax.prim<"?">, !relax.tuple<[]>]>) -> !relax.prim<"?">
  return
}

// CHECK-LABEL: func.func @constants
// CHECK: "relax.constant"{{.*}} -> !relax.tensor<[2, 3], f32>
// CHECK: "relax.constant"{{.*}} -> !relax.tensor<[], i64>
// CHECK: "relax.constant"{{.*}} -> !relax.tensor<[0, 4], f16>
// CHECK: "relax.constant"{{.*}} -> !relax.tensor<[1], i1>
// CHECK: "relax.constant"() {value = dense_resource<weight> : tensor<2x3xf32>} : () -> !relax.tensor<[2, 3], f32>
func.func @constants() {
  %0 = "relax.constant"() {value = dense<[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]> : tensor<2x3xf32>} : () -> !relax.tensor<"*", f32>
  %1 = "relax.constant"() {value = dense<7> : tensor<i64>} : () -> !relax.tensor<"*", none>
  %2 = "relax.constant"() {value = dense<> : tensor<0x4xf16>} : () -> !relax.tensor<["?", "?"], f16>
  %3 = "relax.constant"() {value = dense<true> : tensor<1xi1>} : () -> !relax.tensor<["?"], none>
  %4 = "relax.constant"() {value = dense_resource<weight> : tensor<2x3xf32>} : () -> !relax.tensor<"*", f32>
  return
}

// shape_of -> get_dim -> prim arithmetic -> make_shape keeps the shape symbolic.
// CHECK-LABEL: func.func @shape_chain
// CHECK: "relax.shape_of"{{.*}} -> !relax.shape<["b", "s", 512]>
// CHECK: "relax.get_dim"{{.*}} -> !relax.prim<"b">
// CHECK: "relax.get_dim"{{.*}} -> !relax.prim<"s">
// CHECK: "relax.get_dim"{{.*}} -> !relax.prim<"512">
// CHECK: "relax.prim_value"{{.*}} -> !relax.prim<"8">
// CHECK: "relax.prim_value"{{.*}} -> !relax.prim<"64">
// CHECK: "relax.make_shape"{{.*}} -> !relax.shape<["b", "s", 8, 64]>
// CHECK: "relax.prim_value"{{.*}} -> !relax.prim<"1">
// CHECK: "relax.prim_binary"{{.*}} {op = "add"}{{.*}} -> !relax.prim<"s + 1">
// CHECK: "relax.prim_value"{{.*}} -> !relax.prim<"2">
// CHECK: "relax.prim_binary"{{.*}} {op = "mul"}{{.*}} -> !relax.prim<"2 * s">
// CHECK: "relax.prim_binary"{{.*}} {op = "floordiv"}{{.*}} -> !relax.prim<"s floordiv 2">
// CHECK: "relax.prim_binary"{{.*}} {op = "floordiv"}{{.*}} -> !relax.prim<"s">
// CHECK: "relax.prim_binary"{{.*}} {op = "mod"}{{.*}} -> !relax.prim<"s mod 2">
// CHECK: "relax.prim_binary"{{.*}} {op = "mul"}{{.*}} -> !relax.prim<"b * s">
// CHECK: "relax.prim_binary"{{.*}} {op = "sub"}{{.*}} -> !relax.prim<"s">
// CHECK: "relax.prim_binary"{{.*}} {op = "min"}{{.*}} -> !relax.prim<"min(s, 2)">
// CHECK: "relax.make_shape"{{.*}} -> !relax.shape<["b * s", 512]>
// CHECK: "relax.prim_value"{{.*}} -> !relax.prim<"s + 1">
func.func @shape_chain(%x: !relax.tensor<["b", "s", 512], f32>) {
  %sh = "relax.shape_of"(%x) : (!relax.tensor<["b", "s", 512], f32>) -> !relax.shape<"*">
  %b = "relax.get_dim"(%sh) {index = 0 : i64} : (!relax.shape<"*">) -> !relax.prim<"?">
  %s = "relax.get_dim"(%sh) {index = 1 : i64} : (!relax.shape<"*">) -> !relax.prim<"?">
  %c = "relax.get_dim"(%sh) {index = -1 : i64} : (!relax.shape<"*">) -> !relax.prim<"?">
  %h = "relax.prim_value"() {value = 8 : i64} : () -> !relax.prim<"?">
  %w = "relax.prim_value"() {value = 64 : i64} : () -> !relax.prim<"?">
  %0 = "relax.make_shape"(%b, %s, %h, %w) : (!relax.prim<"?">, !relax.prim<"?">, !relax.prim<"?">, !relax.prim<"?">) -> !relax.shape<"*">
  %one = "relax.prim_value"() {value = 1 : i64} : () -> !relax.prim<"?">
  %1 = "relax.prim_binary"(%s, %one) {op = "add"} : (!relax.prim<"?">, !relax.prim<"?">) -> !relax.prim<"?">
  %two = "relax.prim_value"() {value = 2 : i64} : () -> !relax.prim<"?">
  %2 = "relax.prim_binary"(%s, %two) {op = "mul"} : (!relax.prim<"?">, !relax.prim<"?">) -> !relax.prim<"?">
  %3 = "relax.prim_binary"(%s, %two) {op = "floordiv"} : (!relax.prim<"?">, !relax.prim<"?">) -> !relax.prim<"?">
  %4 = "relax.prim_binary"(%2, %two) {op = "floordiv"} : (!relax.prim<"?">, !relax.prim<"?">) -> !relax.prim<"?">
  %5 = "relax.prim_binary"(%s, %two) {op = "mod"} : (!relax.prim<"?">, !relax.prim<"?">) -> !relax.prim<"?">
  %6 = "relax.prim_binary"(%b, %s) {op = "mul"} : (!relax.prim<"?">, !relax.prim<"?">) -> !relax.prim<"?">
  %7 = "relax.prim_binary"(%1, %one) {op = "sub"} : (!relax.prim<"?">, !relax.prim<"?">) -> !relax.prim<"?">
  %8 = "relax.prim_binary"(%s, %two) {op = "min"} : (!relax.prim<"?">, !relax.prim<"?">) -> !relax.prim<"?">
  %9 = "relax.make_shape"(%6, %c) : (!relax.prim<"?">, !relax.prim<"?">) -> !relax.shape<"*">
  %10 = "relax.prim_value"() {value = "s + 1"} : () -> !relax.prim<"?">
  return
}

// Unknown dims and ranks flow through the shape ops as "?" and "*".
// CHECK-LABEL: func.func @shape_unknown
// CHECK: "relax.get_dim"{{.*}} -> !relax.prim<"?">
// CHECK: "relax.get_dim"{{.*}} -> !relax.prim<"4">
// CHECK: "relax.get_dim"{{.*}} -> !relax.prim<"?">
// CHECK: "relax.prim_binary"{{.*}} -> !relax.prim<"?">
// CHECK: "relax.make_shape"{{.*}} -> !relax.shape<["?", 4]>
// CHECK: "relax.make_shape"() : () -> !relax.shape<[]>
func.func @shape_unknown(%a: !relax.shape<["?", 4]>, %r: !relax.shape<"*">) {
  %0 = "relax.get_dim"(%a) {index = 0 : i64} : (!relax.shape<["?", 4]>) -> !relax.prim<"?">
  %1 = "relax.get_dim"(%a) {index = 1 : i64} : (!relax.shape<["?", 4]>) -> !relax.prim<"?">
  %2 = "relax.get_dim"(%r) {index = 7 : i64} : (!relax.shape<"*">) -> !relax.prim<"?">
  %3 = "relax.prim_binary"(%0, %1) {op = "add"} : (!relax.prim<"?">, !relax.prim<"?">) -> !relax.prim<"?">
  %4 = "relax.make_shape"(%0, %1) : (!relax.prim<"?">, !relax.prim<"?">) -> !relax.shape<"*">
  %5 = "relax.make_shape"() : () -> !relax.shape<"*">
  return
}

// CHECK-LABEL: func.func @shape_tensor
// CHECK: "relax.shape_to_tensor"{{.*}} -> !relax.tensor<[3], i64>
// CHECK: "relax.tensor_to_shape"{{.*}} -> !relax.shape<["?", "?", "?"]>
// CHECK: "relax.match_cast"{{.*}} -> !relax.shape<["p", "q", 512]>
// CHECK: "relax.get_dim"{{.*}} -> !relax.prim<"q">
// CHECK: "relax.shape_to_tensor"{{.*}} -> !relax.tensor<[0], i64>
// CHECK: "relax.tensor_to_shape"{{.*}} -> !relax.shape<[]>
// CHECK: "relax.shape_to_tensor"{{.*}} -> !relax.tensor<[2], i64>
// CHECK: "relax.shape_to_tensor"{{.*}} -> !relax.tensor<["?"], i64>
// CHECK: "relax.tensor_to_shape"{{.*}} -> !relax.shape<["?"]>
// CHECK: "relax.tensor_to_shape"{{.*}} -> !relax.shape<"*">
// CHECK: "relax.tensor_to_shape"{{.*}} -> !relax.shape<"*">
// CHECK: "relax.tensor_to_shape"{{.*}} -> !relax.shape<"*">
func.func @shape_tensor(%x: !relax.tensor<["b", "s", 512], f32>, %e: !relax.shape<[]>, %u: !relax.shape<["?", 4]>,
                        %r: !relax.shape<"*">, %t1: !relax.tensor<[1], i32>, %tn: !relax.tensor<["n"], i64>,
                        %tq: !relax.tensor<["?"], i64>, %tr: !relax.tensor<"*", i64>) {
  %sh = "relax.shape_of"(%x) : (!relax.tensor<["b", "s", 512], f32>) -> !relax.shape<"*">
  %0 = "relax.shape_to_tensor"(%sh) : (!relax.shape<"*">) -> !relax.tensor<"*", i64>
  %1 = "relax.tensor_to_shape"(%0) : (!relax.tensor<"*", i64>) -> !relax.shape<"*">
  %2 = "relax.match_cast"(%1) : (!relax.shape<"*">) -> !relax.shape<["p", "q", 512]>
  %3 = "relax.get_dim"(%2) {index = 1 : i64} : (!relax.shape<["p", "q", 512]>) -> !relax.prim<"?">
  %4 = "relax.shape_to_tensor"(%e) : (!relax.shape<[]>) -> !relax.tensor<"*", i64>
  %5 = "relax.tensor_to_shape"(%4) : (!relax.tensor<"*", i64>) -> !relax.shape<"*">
  %6 = "relax.shape_to_tensor"(%u) : (!relax.shape<["?", 4]>) -> !relax.tensor<"*", none>
  %7 = "relax.shape_to_tensor"(%r) : (!relax.shape<"*">) -> !relax.tensor<"*", i64>
  %8 = "relax.tensor_to_shape"(%t1) : (!relax.tensor<[1], i32>) -> !relax.shape<"*">
  %9 = "relax.tensor_to_shape"(%tn) : (!relax.tensor<["n"], i64>) -> !relax.shape<"*">
  %10 = "relax.tensor_to_shape"(%tq) : (!relax.tensor<["?"], i64>) -> !relax.shape<"*">
  %11 = "relax.tensor_to_shape"(%tr) : (!relax.tensor<"*", i64>) -> !relax.shape<"*">
  return
}

// arange length is ceil((end - start) / step), at least 0.
// CHECK-LABEL: func.func @arange
// CHECK: "relax.arange"{{.*}} -> !relax.tensor<[4], i64>
// CHECK: "relax.arange"{{.*}} -> !relax.tensor<[4], i64>
// CHECK: "relax.arange"{{.*}} -> !relax.tensor<[0], i32>
// CHECK: "relax.arange"{{.*}} -> !relax.tensor<[1], i64>
// CHECK: "relax.arange"{{.*}} -> !relax.tensor<[4], f32>
// CHECK: "relax.arange"{{.*}} -> !relax.tensor<["n"], i64>
// CHECK: "relax.arange"{{.*}} -> !relax.tensor<["(n + 1) floordiv 2"], i64>
// CHECK: "relax.arange"{{.*}} -> !relax.tensor<["n"], i64>
// CHECK: "relax.arange"{{.*}} -> !relax.tensor<[0], i64>
// CHECK: "relax.arange"{{.*}} -> !relax.tensor<["max(n - 5, 0)"], i64>
// CHECK: "relax.arange"{{.*}} -> !relax.tensor<["m"], i64>
func.func @arange(%x: !relax.tensor<["n", "m"], f32>) {
  %0 = "relax.arange"() {start = 0 : i64, end = 10 : i64, step = 3 : i64, dtype = "i64"} : () -> !relax.tensor<"*", i64>
  %1 = "relax.arange"() {start = 10 : i64, end = 0 : i64, step = -3 : i64, dtype = "i64"} : () -> !relax.tensor<"*", i64>
  %2 = "relax.arange"() {start = 5 : i64, end = 0 : i64, step = 1 : i64, dtype = "i32"} : () -> !relax.tensor<["?"], i32>
  %3 = "relax.arange"() {start = 0 : i64, end = 1 : i64, step = 1 : i64, dtype = "i64"} : () -> !relax.tensor<"*", none>
  %4 = "relax.arange"() {start = 0.0 : f64, end = 1.0 : f64, step = 0.25 : f64, dtype = "f32"} : () -> !relax.tensor<"*", f32>
  %5 = "relax.arange"() {start = 0 : i64, end = "n", step = 1 : i64, dtype = "i64"} : () -> !relax.tensor<"*", i64>
  %6 = "relax.arange"() {start = 0 : i64, end = "n", step = 2 : i64, dtype = "i64"} : () -> !relax.tensor<"*", i64>
  %7 = "relax.arange"() {start = "n", end = 0 : i64, step = -1 : i64, dtype = "i64"} : () -> !relax.tensor<"*", i64>
  %8 = "relax.arange"() {start = 0 : i64, end = "n", step = -1 : i64, dtype = "i64"} : () -> !relax.tensor<"*", i64>
  %9 = "relax.arange"() {start = 5 : i64, end = "n", step = 1 : i64, dtype = "i64"} : () -> !relax.tensor<"*", i64>
  %10 = "relax.arange"() {start = "n", end = "m + n", step = 1 : i64, dtype = "i64"} : () -> !relax.tensor<["?"], i64>
  return
}

// CHECK-LABEL: func.func @full
// CHECK: "relax.full"{{.*}} -> !relax.tensor<[2, 3], f32>
// CHECK: "relax.full"{{.*}} -> !relax.tensor<[], i64>
// CHECK: "relax.full"{{.*}} -> !relax.tensor<[0, 1], f16>
// CHECK: "relax.full"{{.*}} -> !relax.tensor<["b", "s"], f32>
// CHECK: "relax.full"{{.*}} -> !relax.tensor<["b", "2 * s", 64], i32>
func.func @full(%x: !relax.tensor<["b", "s"], f32>) {
  %0 = "relax.full"() {shape = [2, 3], value = 0.0 : f64, dtype = "f32"} : () -> !relax.tensor<"*", f32>
  %1 = "relax.full"() {shape = [], value = 1.0 : f64, dtype = "i64"} : () -> !relax.tensor<"*", none>
  %2 = "relax.full"() {shape = [0, 1], value = 1.0 : f64, dtype = "f16"} : () -> !relax.tensor<["?", "?"], f16>
  %3 = "relax.full"() {shape = ["b", "s"], value = -1.5 : f64, dtype = "f32"} : () -> !relax.tensor<"*", f32>
  %4 = "relax.full"() {shape = ["b", "s * 2", 64], value = 0.0 : f64, dtype = "i32"} : () -> !relax.tensor<["b", "?", "?"], i32>
  return
}

// CHECK-LABEL: func.func @dynamic
// CHECK: "relax.unique"{{.*}} -> !relax.tensor<["?"], i64>
// CHECK: "relax.nonzero"{{.*}} -> !relax.tensor<[2, "?"], i64>
// CHECK: "relax.unique"{{.*}} -> !relax.tensor<["?"], f32>
// CHECK: "relax.nonzero"{{.*}} -> !relax.tensor<[3, "?"], i64>
// CHECK: "relax.unique"{{.*}} -> !relax.tensor<["?"], none>
// CHECK: "relax.nonzero"{{.*}} -> !relax.tensor<[2, "?"], i64>
// CHECK: "relax.unique"{{.*}} -> !relax.tensor<["?"], f32>
// CHECK: "relax.nonzero"{{.*}} -> !relax.tensor<["?", "?"], i64>
// CHECK: "relax.nonzero"{{.*}} -> !relax.tensor<[0, "?"], i64>
// CHECK: "relax.match_cast"{{.*}} -> !relax.tensor<[3, "k"], i64>
// CHECK: "relax.flatten"{{.*}} -> !relax.tensor<["3 * k"], i64>
func.func @dynamic(%a: !relax.tensor<[2, 0], i64>, %b: !relax.tensor<["b", "s", 4], f32>,
                   %c: !relax.tensor<["?", "?"], none>, %d: !relax.tensor<"*", f32>, %e: !relax.tensor<[], i1>) {
  %0 = "relax.unique"(%a) : (!relax.tensor<[2, 0], i64>) -> !relax.tensor<"*", i64>
  %1 = "relax.nonzero"(%a) : (!relax.tensor<[2, 0], i64>) -> !relax.tensor<"*", none>
  %2 = "relax.unique"(%b) : (!relax.tensor<["b", "s", 4], f32>) -> !relax.tensor<"*", f32>
  %3 = "relax.nonzero"(%b) : (!relax.tensor<["b", "s", 4], f32>) -> !relax.tensor<"*", i64>
  %4 = "relax.unique"(%c) : (!relax.tensor<["?", "?"], none>) -> !relax.tensor<"*", none>
  %5 = "relax.nonzero"(%c) : (!relax.tensor<["?", "?"], none>) -> !relax.tensor<["?", "?"], i64>
  %6 = "relax.unique"(%d) : (!relax.tensor<"*", f32>) -> !relax.tensor<"*", f32>
  %7 = "relax.nonzero"(%d) : (!relax.tensor<"*", f32>) -> !relax.tensor<"*", i64>
  %8 = "relax.nonzero"(%e) : (!relax.tensor<[], i1>) -> !relax.tensor<"*", i64>
  %9 = "relax.match_cast"(%3) : (!relax.tensor<"*", i64>) -> !relax.tensor<[3, "k"], i64>
  %10 = "relax.flatten"(%9) {start_axis = 0 : i64, end_axis = -1 : i64} : (!relax.tensor<[3, "k"], i64>) -> !relax.tensor<"*", i64>
  return
}

}

{-#
  dialect_resources: {
    builtin: {
      weight: "0x04000000000000000000803F0000004000004040000080400000A040"
    }
  }
#-}

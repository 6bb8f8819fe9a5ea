// relax-cse: identical pure relax ops (name, operands, attributes, result types) merge under
// dominance. Run twice: the second run changes nothing.
// RUN: relax-opt %s --relax-cse --relax-cse | FileCheck %s

// CHECK-LABEL: func.func @merge
// CHECK-NEXT: %[[C:.*]] = "relax.constant"() {value = dense<2.000000e+00> : tensor<f32>}
// CHECK-NEXT: %[[E:.*]] = "relax.exp"(%arg0)
// CHECK-NEXT: %[[S:.*]] = "relax.sum"(%[[E]]) {axes = [1], keepdims = false}
// CHECK-NEXT: %[[S1:.*]] = "relax.sum"(%[[E]]) {axes = [0], keepdims = false}
// CHECK-NEXT: %[[M:.*]] = "relax.multiply"(%[[E]], %[[C]])
// CHECK-NEXT: %[[A:.*]] = "relax.add"(%[[M]], %[[M]])
// CHECK-NEXT: return %[[A]], %[[S]], %[[S1]]
func.func @merge(%x: !relax.tensor<["n", 4], f32>) -> (!relax.tensor<["n", 4], f32>, !relax.tensor<["n"], f32>, !relax.tensor<[4], f32>) {
  %c0 = "relax.constant"() {value = dense<2.0> : tensor<f32>} : () -> !relax.tensor<[], f32>
  %c1 = "relax.constant"() {value = dense<2.0> : tensor<f32>} : () -> !relax.tensor<[], f32>
  %0 = "relax.exp"(%x) : (!relax.tensor<["n", 4], f32>) -> !relax.tensor<["n", 4], f32>
  %1 = "relax.exp"(%x) : (!relax.tensor<["n", 4], f32>) -> !relax.tensor<["n", 4], f32>
  %2 = "relax.sum"(%0) {axes = [1], keepdims = false} : (!relax.tensor<["n", 4], f32>) -> !relax.tensor<["n"], f32>
  %3 = "relax.sum"(%1) {axes = [1], keepdims = false} : (!relax.tensor<["n", 4], f32>) -> !relax.tensor<["n"], f32>
  %4 = "relax.sum"(%1) {axes = [0], keepdims = false} : (!relax.tensor<["n", 4], f32>) -> !relax.tensor<[4], f32>
  %5 = "relax.multiply"(%0, %c0) : (!relax.tensor<["n", 4], f32>, !relax.tensor<[], f32>) -> !relax.tensor<["n", 4], f32>
  %6 = "relax.multiply"(%1, %c1) : (!relax.tensor<["n", 4], f32>, !relax.tensor<[], f32>) -> !relax.tensor<["n", 4], f32>
  %7 = "relax.add"(%5, %6) : (!relax.tensor<["n", 4], f32>, !relax.tensor<["n", 4], f32>) -> !relax.tensor<["n", 4], f32>
  return %7, %2, %4 : !relax.tensor<["n", 4], f32>, !relax.tensor<["n"], f32>, !relax.tensor<[4], f32>
}

// Inside a dataflow block, ops merge with ones before the block; after the block, nothing merges
// with an op inside it (not visible there).
// CHECK-LABEL: func.func @scopes
// CHECK-NEXT: %[[A:.*]] = "relax.abs"(%arg0)
// CHECK-NEXT: %[[R:.*]] = scf.execute_region
// CHECK-NEXT: %[[E:.*]] = "relax.exp"(%arg0)
// CHECK-NEXT: %[[M:.*]] = "relax.multiply"(%[[A]], %[[E]])
// CHECK-NEXT: scf.yield %[[M]]
// CHECK: %[[E2:.*]] = "relax.exp"(%arg0)
// CHECK-NEXT: %[[S:.*]] = "relax.add"(%[[R]], %[[E2]])
func.func @scopes(%x: !relax.tensor<["n"], f32>) -> !relax.tensor<["n"], f32> {
  %a = "relax.abs"(%x) : (!relax.tensor<["n"], f32>) -> !relax.tensor<["n"], f32>
  %r = scf.execute_region -> !relax.tensor<["n"], f32> no_inline {
    %0 = "relax.abs"(%x) : (!relax.tensor<["n"], f32>) -> !relax.tensor<["n"], f32>
    %1 = "relax.exp"(%x) : (!relax.tensor<["n"], f32>) -> !relax.tensor<["n"], f32>
    %2 = "relax.multiply"(%0, %1) : (!relax.tensor<["n"], f32>, !relax.tensor<["n"], f32>) -> !relax.tensor<["n"], f32>
    scf.yield %2 : !relax.tensor<["n"], f32>
  } {relax.dataflow}
  %e = "relax.exp"(%x) : (!relax.tensor<["n"], f32>) -> !relax.tensor<["n"], f32>
  %s = "relax.add"(%r, %e) : (!relax.tensor<["n"], f32>, !relax.tensor<["n"], f32>) -> !relax.tensor<["n"], f32>
  return %s : !relax.tensor<["n"], f32>
}

// Casts of the same value to the same type merge; casts of different values never do, nor do
// library calls; different result types keep ops apart.
// CHECK-LABEL: func.func @casts
// CHECK-NEXT: %[[A:.*]] = "relax.match_cast"(%arg0)
// CHECK-NEXT: %[[B:.*]] = "relax.match_cast"(%arg1)
// CHECK-NEXT: "relax.call_dps_library"(%[[A]])
// CHECK-NEXT: "relax.call_dps_library"(%[[A]])
// CHECK-NEXT: "relax.arange"() {dtype = "i64", end = "k"
// CHECK-NEXT: "relax.arange"() {dtype = "i32", end = "k"
// CHECK-NEXT: return %[[A]], %[[A]], %[[B]]
func.func @casts(%x: !relax.tensor<["?"], f32>, %y: !relax.tensor<["?"], f32>) -> (!relax.tensor<["k"], f32>, !relax.tensor<["k"], f32>, !relax.tensor<["k"], f32>) {
  %0 = "relax.match_cast"(%x) : (!relax.tensor<["?"], f32>) -> !relax.tensor<["k"], f32>
  %1 = "relax.match_cast"(%x) : (!relax.tensor<["?"], f32>) -> !relax.tensor<["k"], f32>
  %2 = "relax.match_cast"(%y) : (!relax.tensor<["?"], f32>) -> !relax.tensor<["k"], f32>
  %3 = "relax.call_dps_library"(%0) {callee = "ext"} : (!relax.tensor<["k"], f32>) -> !relax.tensor<["k"], f32>
  %4 = "relax.call_dps_library"(%1) {callee = "ext"} : (!relax.tensor<["k"], f32>) -> !relax.tensor<["k"], f32>
  %5 = "relax.arange"() {dtype = "i64", end = "k", start = 0 : i64, step = 1 : i64} : () -> !relax.tensor<["k"], i64>
  %6 = "relax.arange"() {dtype = "i32", end = "k", start = 0 : i64, step = 1 : i64} : () -> !relax.tensor<["k"], i32>
  %7 = "relax.arange"() {dtype = "i64", end = "k", start = 0 : i64, step = 1 : i64} : () -> !relax.tensor<["k"], i64>
  return %0, %1, %2 : !relax.tensor<["k"], f32>, !relax.tensor<["k"], f32>, !relax.tensor<["k"], f32>
}

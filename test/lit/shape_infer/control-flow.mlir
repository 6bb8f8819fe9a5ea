// Control flow: relax.condition, scf.if whose results are the join of its branches, scf.while whose
// carried values are the join over the iterations (a fixed point). Written with coarse types; relax-infer-shapes
// refines them and weakens a branch's more precise value with a relax.match_cast that cannot fail.
// RUN: relax-opt %s --relax-infer-shapes --relax-dce --relax-verify | FileCheck %s
// RUN: relax-opt %s --relax-infer-shapes --relax-dce | relax-opt --relax-infer-shapes --relax-dce --relax-verify | FileCheck %s

// Equal branch types stay symbolic: ["n", 4] and ["n", 4] give ["n", 4] (no cast).
// CHECK-LABEL: func.func @if_same
// CHECK-SAME: -> !relax.tensor<["n", 4], f32>
// CHECK: "relax.condition"{{.*}} : (!relax.tensor<[], i1>) -> i1
// CHECK: scf.if %{{.*}} -> (!relax.tensor<["n", 4], f32>)
// CHECK-NOT: relax.match_cast
// CHECK: return
func.func @if_same(%x: !relax.tensor<["n", 4], f32>, %p: !relax.tensor<[], i1>) -> !relax.tensor<"*", f32> {
  %c = "relax.condition"(%p) : (!relax.tensor<[], i1>) -> i1
  %r = scf.if %c -> !relax.tensor<"*", f32> {
    %a = "relax.exp"(%x) : (!relax.tensor<["n", 4], f32>) -> !relax.tensor<"*", f32>
    scf.yield %a : !relax.tensor<"*", f32>
  } else {
    %b = "relax.neg"(%x) : (!relax.tensor<["n", 4], f32>) -> !relax.tensor<"*", f32>
    scf.yield %b : !relax.tensor<"*", f32>
  }
  return %r : !relax.tensor<"*", f32>
}

// ["n", 4] and ["2 * n", 4] join to ["?", 4]; each branch weakens its value; a match_cast after the
// join recovers a symbol, which later ops use.
// CHECK-LABEL: func.func @if_differ
// CHECK: scf.if %{{.*}} -> (!relax.tensor<["?", 4], f32>)
// CHECK: "relax.match_cast"{{.*}} : (!relax.tensor<["n", 4], f32>) -> !relax.tensor<["?", 4], f32>
// CHECK: } else {
// CHECK: "relax.concat"{{.*}} -> !relax.tensor<["2 * n", 4], f32>
// CHECK: "relax.match_cast"{{.*}} : (!relax.tensor<["2 * n", 4], f32>) -> !relax.tensor<["?", 4], f32>
// CHECK: "relax.match_cast"{{.*}} -> !relax.tensor<["m", 4], f32>
// CHECK: "relax.concat"{{.*}} -> !relax.tensor<["m + n", 4], f32>
func.func @if_differ(%x: !relax.tensor<["n", 4], f32>, %p: !relax.tensor<[], f32>) -> !relax.tensor<"*", f32> {
  %c = "relax.condition"(%p) : (!relax.tensor<[], f32>) -> i1
  %r = scf.if %c -> !relax.tensor<"*", f32> {
    %a = "relax.exp"(%x) : (!relax.tensor<["n", 4], f32>) -> !relax.tensor<["n", 4], f32>
    %w = "relax.match_cast"(%a) : (!relax.tensor<["n", 4], f32>) -> !relax.tensor<"*", f32>
    scf.yield %w : !relax.tensor<"*", f32>
  } else {
    %b = "relax.concat"(%x, %x) {axis = 0 : i64} : (!relax.tensor<["n", 4], f32>, !relax.tensor<["n", 4], f32>) -> !relax.tensor<"*", f32>
    scf.yield %b : !relax.tensor<"*", f32>
  }
  %m = "relax.match_cast"(%r) : (!relax.tensor<"*", f32>) -> !relax.tensor<["m", 4], f32>
  %y = "relax.concat"(%m, %x) {axis = 0 : i64} : (!relax.tensor<["m", 4], f32>, !relax.tensor<["n", 4], f32>) -> !relax.tensor<"*", f32>
  return %y : !relax.tensor<"*", f32>
}

// Different ranks join to unknown rank, different dtypes to an unknown dtype, equal prims stay (a weakening
// cast is looked through); a prim condition.
// CHECK-LABEL: func.func @if_rank_dtype
// CHECK: scf.if %{{.*}} -> (!relax.tensor<"*", none>, !relax.prim<"k">, !relax.shape<["n", "?"]>)
func.func @if_rank_dtype(%x: !relax.tensor<["n", 4], f32>, %k: !relax.prim<"k">) -> (!relax.tensor<"*", none>, !relax.prim<"?">, !relax.shape<"*">) {
  %c = "relax.condition"(%k) : (!relax.prim<"k">) -> i1
  %r:3 = scf.if %c -> (!relax.tensor<"*", none>, !relax.prim<"?">, !relax.shape<"*">) {
    %a = "relax.sum"(%x) {axes = [1], keepdims = false} : (!relax.tensor<["n", 4], f32>) -> !relax.tensor<"*", none>
    %n = "relax.match_cast"(%k) : (!relax.prim<"k">) -> !relax.prim<"?">
    %s = "relax.shape_of"(%x) : (!relax.tensor<["n", 4], f32>) -> !relax.shape<"*">
    scf.yield %a, %n, %s : !relax.tensor<"*", none>, !relax.prim<"?">, !relax.shape<"*">
  } else {
    %b = "relax.astype"(%x) {dtype = "i32"} : (!relax.tensor<["n", 4], f32>) -> !relax.tensor<"*", none>
    %n = "relax.match_cast"(%k) : (!relax.prim<"k">) -> !relax.prim<"?">
    %t = "relax.permute_dims"(%x) {axes = [1, 0]} : (!relax.tensor<["n", 4], f32>) -> !relax.tensor<"*", f32>
    %u = "relax.match_cast"(%t) : (!relax.tensor<"*", f32>) -> !relax.tensor<["n", "j"], f32>
    %s = "relax.shape_of"(%u) : (!relax.tensor<["n", "j"], f32>) -> !relax.shape<"*">
    scf.yield %b, %n, %s : !relax.tensor<"*", none>, !relax.prim<"?">, !relax.shape<"*">
  }
  return %r#0, %r#1, %r#2 : !relax.tensor<"*", none>, !relax.prim<"?">, !relax.shape<"*">
}

// A symbol bound inside a branch is forgotten at the join (both branches bind "j": still "?" after it).
// CHECK-LABEL: func.func @if_local_symbol
// CHECK: scf.if %{{.*}} -> (!relax.tensor<["?"], f32>)
func.func @if_local_symbol(%x: !relax.tensor<"*", f32>, %p: !relax.tensor<[], i1>) -> !relax.tensor<"*", f32> {
  %c = "relax.condition"(%p) : (!relax.tensor<[], i1>) -> i1
  %r = scf.if %c -> !relax.tensor<"*", f32> {
    %a = "relax.match_cast"(%x) : (!relax.tensor<"*", f32>) -> !relax.tensor<["j"], f32>
    %w = "relax.match_cast"(%a) : (!relax.tensor<["j"], f32>) -> !relax.tensor<"*", f32>
    scf.yield %w : !relax.tensor<"*", f32>
  } else {
    %b = "relax.match_cast"(%x) : (!relax.tensor<"*", f32>) -> !relax.tensor<["j"], f32>
    %w = "relax.match_cast"(%b) : (!relax.tensor<["j"], f32>) -> !relax.tensor<"*", f32>
    scf.yield %w : !relax.tensor<"*", f32>
  }
  return %r : !relax.tensor<"*", f32>
}

// A loop whose carried tensor keeps its shape stays ["n"] (the user's weakening cast of the init is dropped).
// CHECK-LABEL: func.func @while_same
// CHECK-SAME: -> !relax.tensor<["n"], f32>
// CHECK: scf.while ({{.*}}) : (!relax.tensor<["n"], f32>) -> !relax.tensor<["n"], f32>
// CHECK: "relax.add"{{.*}} -> !relax.tensor<["n"], f32>
func.func @while_same(%x: !relax.tensor<["n"], f32>, %k: !relax.prim<"k">) -> !relax.tensor<"*", f32> {
  %x0 = "relax.match_cast"(%x) : (!relax.tensor<["n"], f32>) -> !relax.tensor<"*", f32>
  %r = scf.while (%a = %x0) : (!relax.tensor<"*", f32>) -> (!relax.tensor<"*", f32>) {
    %c = "relax.condition"(%k) : (!relax.prim<"k">) -> i1
    scf.condition(%c) %a : !relax.tensor<"*", f32>
  } do {
  ^bb0(%a: !relax.tensor<"*", f32>):
    %b = "relax.add"(%a, %a) : (!relax.tensor<"*", f32>, !relax.tensor<"*", f32>) -> !relax.tensor<"*", f32>
    scf.yield %b : !relax.tensor<"*", f32>
  }
  return %r : !relax.tensor<"*", f32>
}

// A loop-carried ["n", 3] that grows along dim 0 becomes ["?", 3]: the fixed point of join(init, body(T)).
// CHECK-LABEL: func.func @while_grow
// CHECK-SAME: -> !relax.tensor<["?", 3], f32>
// CHECK: "relax.match_cast"{{.*}} : (!relax.tensor<["n", 3], f32>) -> !relax.tensor<["?", 3], f32>
// CHECK: scf.while ({{.*}}) : (!relax.tensor<["?", 3], f32>, !relax.tensor<[], i64>) -> (!relax.tensor<["?", 3], f32>, !relax.tensor<[], i64>)
// CHECK: "relax.less"
// CHECK: scf.condition
// CHECK: "relax.concat"{{.*}} -> !relax.tensor<["?", 3], f32>
func.func @while_grow(%x: !relax.tensor<["n", 3], f32>, %k: !relax.tensor<[], i64>) -> !relax.tensor<"*", f32> {
  %one = "relax.constant"() {value = dense<1> : tensor<i64>} : () -> !relax.tensor<[], i64>
  %zero = "relax.constant"() {value = dense<0> : tensor<i64>} : () -> !relax.tensor<[], i64>
  %x0 = "relax.match_cast"(%x) : (!relax.tensor<["n", 3], f32>) -> !relax.tensor<"*", f32>
  %r:2 = scf.while (%a = %x0, %i = %zero) : (!relax.tensor<"*", f32>, !relax.tensor<[], i64>) -> (!relax.tensor<"*", f32>, !relax.tensor<[], i64>) {
    %lt = "relax.less"(%i, %k) : (!relax.tensor<[], i64>, !relax.tensor<[], i64>) -> !relax.tensor<"*", i1>
    %c = "relax.condition"(%lt) : (!relax.tensor<"*", i1>) -> i1
    scf.condition(%c) %a, %i : !relax.tensor<"*", f32>, !relax.tensor<[], i64>
  } do {
  ^bb0(%a: !relax.tensor<"*", f32>, %i: !relax.tensor<[], i64>):
    %b = "relax.concat"(%a, %a) {axis = 0 : i64} : (!relax.tensor<"*", f32>, !relax.tensor<"*", f32>) -> !relax.tensor<"*", f32>
    %j = "relax.add"(%i, %one) : (!relax.tensor<[], i64>, !relax.tensor<[], i64>) -> !relax.tensor<[], i64>
    scf.yield %b, %j : !relax.tensor<"*", f32>, !relax.tensor<[], i64>
  }
  return %r#0 : !relax.tensor<"*", f32>
}

// relax.call: the result type is the callee's declared result type with the callee's symbols replaced by
// what the arguments bind (dialects/bind.py); relax-infer-shapes reaches a fixed point over the call
// graph (recursion included); a second run changes nothing.
// RUN: relax-opt %s --relax-verify --relax-infer-shapes | FileCheck %s
// RUN: relax-opt %s --relax-infer-shapes | relax-opt --relax-infer-shapes --relax-verify | FileCheck %s

func.func private @sq(%x: !relax.tensor<["n"], f32>) -> !relax.tensor<["n"], f32> {
  %y = "relax.multiply"(%x, %x) : (!relax.tensor<["n"], f32>, !relax.tensor<["n"], f32>) -> !relax.tensor<["n"], f32>
  return %y : !relax.tensor<["n"], f32>
}

// The issue's example: @sq(["n"]) called with ["m"] binds n = m.
// CHECK-LABEL: func.func @main
// CHECK: "relax.call"(%{{.*}}) {callee = @sq} : (!relax.tensor<["m"], f32>) -> !relax.tensor<["m"], f32>
func.func @main(%x: !relax.tensor<["m"], f32>) -> !relax.tensor<"*", f32> {
  %y = "relax.call"(%x) {callee = @sq} : (!relax.tensor<["m"], f32>) -> !relax.tensor<"*", f32>
  return %y : !relax.tensor<"*", f32>
}

// f(x: ["n", 4]) -> ["2 * n", 4] called with ["m + 1", 4] gives ["2 * m + 2", 4].
func.func private @twice(%x: !relax.tensor<["n", 4], f32>) -> !relax.tensor<["2 * n", 4], f32> {
  %y = "relax.concat"(%x, %x) {axis = 0 : i64} : (!relax.tensor<["n", 4], f32>, !relax.tensor<["n", 4], f32>) -> !relax.tensor<["2 * n", 4], f32>
  return %y : !relax.tensor<["2 * n", 4], f32>
}

// CHECK-LABEL: func.func @expression_argument
// CHECK-SAME: -> !relax.tensor<["2 * m + 2", 4], f32>
// CHECK: "relax.call"{{.*}}{callee = @twice}{{.*}} -> !relax.tensor<["2 * m + 2", 4], f32>
func.func @expression_argument(%x: !relax.tensor<["m", 4], f32>, %y: !relax.tensor<[1, 4], f32>) -> !relax.tensor<"*", f32> {
  %c = "relax.concat"(%x, %y) {axis = 0 : i64} : (!relax.tensor<["m", 4], f32>, !relax.tensor<[1, 4], f32>) -> !relax.tensor<["m + 1", 4], f32>
  %r = "relax.call"(%c) {callee = @twice} : (!relax.tensor<["m + 1", 4], f32>) -> !relax.tensor<"*", f32>
  return %r : !relax.tensor<"*", f32>
}

// A parameter dim that is an expression: ["2 * n"] given ["2 * m"] binds n = m (solved, not matched).
func.func private @halves(%x: !relax.tensor<["2 * n"], f32>, %s: !relax.tensor<["n"], f32>) -> !relax.tensor<["n", 2], f32> {
  %y = "relax.reshape"(%x) {shape = ["n", 2]} : (!relax.tensor<["2 * n"], f32>) -> !relax.tensor<["n", 2], f32>
  return %y : !relax.tensor<["n", 2], f32>
}

// The first parameter cannot bind n alone (it needs the second's), in either order.
// CHECK-LABEL: func.func @expression_parameter
// CHECK: "relax.call"{{.*}}{callee = @halves}{{.*}} -> !relax.tensor<["m", 2], f32>
func.func @expression_parameter(%x: !relax.tensor<["2 * m"], f32>, %s: !relax.tensor<["m"], f32>) -> !relax.tensor<"*", f32> {
  %r = "relax.call"(%x, %s) {callee = @halves} : (!relax.tensor<["2 * m"], f32>, !relax.tensor<["m"], f32>) -> !relax.tensor<"*", f32>
  return %r : !relax.tensor<"*", f32>
}

func.func private @pair(%x: !relax.tensor<["n", "k"], f32>, %y: !relax.tensor<["n", "k"], f32>) -> !relax.tensor<["n", "k"], f32> {
  %z = "relax.add"(%x, %y) : (!relax.tensor<["n", "k"], f32>, !relax.tensor<["n", "k"], f32>) -> !relax.tensor<["n", "k"], f32>
  return %z : !relax.tensor<["n", "k"], f32>
}

// Failure to bind: an unknown dim leaves k unbound, so the result's k dim is unknown ("?"); the same symbol
// from two arguments (a vs b) is a run-time check, and the result takes the first binding.
// CHECK-LABEL: func.func @coarser
// CHECK: "relax.call"{{.*}}{callee = @pair}{{.*}} -> !relax.tensor<["a", "?"], f32>
func.func @coarser(%x: !relax.tensor<["a", "?"], f32>, %y: !relax.tensor<["b", "?"], f32>) -> !relax.tensor<"*", f32> {
  %r = "relax.call"(%x, %y) {callee = @pair} : (!relax.tensor<["a", "?"], f32>, !relax.tensor<["b", "?"], f32>) -> !relax.tensor<"*", f32>
  return %r : !relax.tensor<"*", f32>
}

// A prim and a shape value bind symbols too; a tuple argument binds field by field.
func.func private @grow(%t: !relax.tuple<[!relax.tensor<["n"], f32>, !relax.prim<"k">]>) -> !relax.shape<["n + k", "n * k"]> {
  %a = "relax.prim_value"() {value = "n + k"} : () -> !relax.prim<"n + k">
  %b = "relax.prim_value"() {value = "n * k"} : () -> !relax.prim<"n * k">
  %s = "relax.make_shape"(%a, %b) : (!relax.prim<"n + k">, !relax.prim<"n * k">) -> !relax.shape<["n + k", "n * k"]>
  return %s : !relax.shape<["n + k", "n * k"]>
}

// CHECK-LABEL: func.func @tuple_and_prim
// CHECK: "relax.call"{{.*}}{callee = @grow}{{.*}} -> !relax.shape<["m + 3", "3 * m"]>
func.func @tuple_and_prim(%t: !relax.tuple<[!relax.tensor<["m"], f32>, !relax.prim<3>]>) -> !relax.object {
  %r = "relax.call"(%t) {callee = @grow} : (!relax.tuple<[!relax.tensor<["m"], f32>, !relax.prim<3>]>) -> !relax.object
  return %r : !relax.object
}

// Recursion: the recursive call uses the callee's declared signature; the fixed point refines both the
// function's result and its own recursive call.
// CHECK-LABEL: func.func private @rec
// CHECK-SAME: -> !relax.tensor<["n"], f32>
// CHECK: "relax.call"{{.*}}{callee = @rec}{{.*}} -> !relax.tensor<["n"], f32>
func.func private @rec(%x: !relax.tensor<["n"], f32>) -> !relax.tensor<["n"], f32> {
  %r = "relax.call"(%x) {callee = @rec} : (!relax.tensor<["n"], f32>) -> !relax.tensor<"*", f32>
  %y = "relax.match_cast"(%r) : (!relax.tensor<"*", f32>) -> !relax.tensor<["n"], f32>
  return %y : !relax.tensor<["n"], f32>
}

// Mutual recursion whose result grows at each step: widened to an unknown dim, so the pass terminates.
// CHECK-LABEL: func.func private @grows
// CHECK-SAME: -> !relax.tensor<["?"], f32>
func.func private @grows(%x: !relax.tensor<["n"], f32>) -> !relax.tensor<"*", f32> {
  %r = "relax.call"(%x) {callee = @grows} : (!relax.tensor<["n"], f32>) -> !relax.tensor<"*", f32>
  %c = "relax.concat"(%r, %x) {axis = 0 : i64} : (!relax.tensor<"*", f32>, !relax.tensor<["n"], f32>) -> !relax.tensor<"*", f32>
  return %c : !relax.tensor<"*", f32>
}

// Recursion through a branch (the recursive halving): the call inside scf.if uses @halve's declared
// signature; the if's result is the join of the call's ["?"] and the parameter's ["n"].
// CHECK-LABEL: func.func private @halve
// CHECK-SAME: -> !relax.tensor<["?"], f32>
// CHECK: "relax.sum"{{.*}} -> !relax.tensor<["(n + 1) floordiv 2"], f32>
// CHECK: "relax.call"{{.*}}{callee = @halve} : (!relax.tensor<["(n + 1) floordiv 2"], f32>) -> !relax.tensor<["?"], f32>
// CHECK: "relax.match_cast"(%arg0) : (!relax.tensor<["n"], f32>) -> !relax.tensor<["?"], f32>
func.func private @halve(%x: !relax.tensor<["n"], f32>) -> !relax.tensor<["?"], f32> {
  %h = "relax.prim_value"() {value = "n floordiv 2"} : () -> !relax.prim<"n floordiv 2">
  %c = "relax.condition"(%h) : (!relax.prim<"n floordiv 2">) -> i1
  %r = scf.if %c -> (!relax.tensor<["?"], f32>) {
    %z = "relax.full"() {dtype = "f32", shape = ["n mod 2"], value = 0.0 : f64} : () -> !relax.tensor<"*", f32>
    %p = "relax.concat"(%x, %z) {axis = 0 : i64} : (!relax.tensor<["n"], f32>, !relax.tensor<"*", f32>) -> !relax.tensor<"*", f32>
    %q = "relax.reshape"(%p) {shape = ["(n + 1) floordiv 2", 2]} : (!relax.tensor<"*", f32>) -> !relax.tensor<"*", f32>
    %s = "relax.sum"(%q) {axes = [1], keepdims = false} : (!relax.tensor<"*", f32>) -> !relax.tensor<"*", f32>
    %y = "relax.call"(%s) {callee = @halve} : (!relax.tensor<"*", f32>) -> !relax.tensor<"*", f32>
    %w = "relax.match_cast"(%y) : (!relax.tensor<"*", f32>) -> !relax.tensor<["?"], f32>
    scf.yield %w : !relax.tensor<["?"], f32>
  } else {
    %w = "relax.match_cast"(%x) : (!relax.tensor<["n"], f32>) -> !relax.tensor<["?"], f32>
    scf.yield %w : !relax.tensor<["?"], f32>
  }
  return %r : !relax.tensor<["?"], f32>
}

// The caller comes first and its callee's declared result is coarse: once the callee's signature is refined,
// the caller is walked again (the worklist over the call graph).
// CHECK-LABEL: func.func @early_caller
// CHECK-SAME: -> !relax.tensor<["m", 3], f32>
// CHECK: "relax.call"{{.*}}{callee = @late_callee}{{.*}} -> !relax.tensor<["m", 3], f32>
func.func @early_caller(%x: !relax.tensor<["m", 3], f32>) -> !relax.tensor<"*", f32> {
  %r = "relax.call"(%x) {callee = @late_callee} : (!relax.tensor<["m", 3], f32>) -> !relax.tensor<"*", f32>
  return %r : !relax.tensor<"*", f32>
}
// CHECK-LABEL: func.func private @late_callee
// CHECK-SAME: -> !relax.tensor<["n", "k"], f32>
func.func private @late_callee(%x: !relax.tensor<["n", "k"], f32>) -> !relax.tensor<"*", f32> {
  %y = "relax.exp"(%x) : (!relax.tensor<["n", "k"], f32>) -> !relax.tensor<"*", f32>
  return %y : !relax.tensor<"*", f32>
}

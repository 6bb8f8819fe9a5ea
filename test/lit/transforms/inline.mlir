// relax-inline replaces calls of private, non-recursive relax functions by the callee's body, in the
// caller's symbols (dim attributes included); public and recursive callees stay calls.
// RUN: relax-opt %s --relax-inline --relax-verify | FileCheck %s

func.func private @twice(%x: !relax.tensor<["n", 4], f32>) -> !relax.tensor<["2 * n", 4], f32> {
  %y = "relax.concat"(%x, %x) {axis = 0 : i64} : (!relax.tensor<["n", 4], f32>, !relax.tensor<["n", 4], f32>) -> !relax.tensor<["2 * n", 4], f32>
  %z = "relax.reshape"(%y) {shape = ["n", 8]} : (!relax.tensor<["2 * n", 4], f32>) -> !relax.tensor<["n", 8], f32>
  %w = "relax.reshape"(%z) {shape = ["2 * n", 4]} : (!relax.tensor<["n", 8], f32>) -> !relax.tensor<["2 * n", 4], f32>
  return %w : !relax.tensor<["2 * n", 4], f32>
}

// CHECK-NOT: func.func private @twice
// CHECK-LABEL: func.func @main
// CHECK-NOT: relax.call
// CHECK: "relax.concat"{{.*}} -> !relax.tensor<["2 * m", 4], f32>
// CHECK: "relax.reshape"{{.*}}{shape = ["m", 8]}{{.*}} -> !relax.tensor<["m", 8], f32>
// CHECK: "relax.reshape"{{.*}}{shape = ["2 * m", 4]}{{.*}} -> !relax.tensor<["2 * m", 4], f32>
// CHECK: return {{.*}} : !relax.tensor<["2 * m", 4], f32>
func.func @main(%x: !relax.tensor<["m", 4], f32>) -> !relax.tensor<["2 * m", 4], f32> {
  %r = "relax.call"(%x) {callee = @twice} : (!relax.tensor<["m", 4], f32>) -> !relax.tensor<["2 * m", 4], f32>
  return %r : !relax.tensor<["2 * m", 4], f32>
}

// Symbols that must be checked (n from two arguments) or bound (an unknown dim) get a match_cast of the
// arguments; a symbol a match_cast in the callee binds gets a fresh name; a call in a dataflow block gets
// the callee's dataflow block dissolved; a result more precise than the call's type is weakened.
func.func private @pair(%x: !relax.tensor<["n", "k"], f32>, %y: !relax.tensor<["n", "k"], f32>) -> !relax.tensor<"*", f32> {
  %r = scf.execute_region -> !relax.tensor<["n", "k"], f32> {
    %z = "relax.add"(%x, %y) : (!relax.tensor<["n", "k"], f32>, !relax.tensor<["n", "k"], f32>) -> !relax.tensor<["n", "k"], f32>
    scf.yield %z : !relax.tensor<["n", "k"], f32>
  } {no_inline, relax.dataflow}
  %u = "relax.unique"(%r) : (!relax.tensor<["n", "k"], f32>) -> !relax.tensor<["?"], f32>
  %c = "relax.match_cast"(%u) : (!relax.tensor<["?"], f32>) -> !relax.tensor<["a"], f32>
  %d = "relax.match_cast"(%c) : (!relax.tensor<["a"], f32>) -> !relax.tensor<"*", f32>
  return %d : !relax.tensor<"*", f32>
}

// CHECK-LABEL: func.func @checked
// CHECK: "relax.match_cast"(%arg0) : (!relax.tensor<["a", "?"], f32>) -> !relax.tensor<["a", "k_{{[0-9]+}}"], f32>
// CHECK: "relax.match_cast"(%arg1) : (!relax.tensor<["b", "?"], f32>) -> !relax.tensor<["a", "k_{{[0-9]+}}"], f32>
// CHECK: scf.execute_region
// CHECK: "relax.add"
// CHECK: "relax.match_cast"{{.*}} -> !relax.tensor<["a_{{[0-9]+}}"], f32>
// CHECK-NOT: relax.call
func.func @checked(%x: !relax.tensor<["a", "?"], f32>, %y: !relax.tensor<["b", "?"], f32>) -> !relax.tensor<"*", f32> {
  %r = "relax.call"(%x, %y) {callee = @pair} : (!relax.tensor<["a", "?"], f32>, !relax.tensor<["b", "?"], f32>) -> !relax.tensor<"*", f32>
  return %r : !relax.tensor<"*", f32>
}

// CHECK-LABEL: func.func @in_dataflow
// CHECK: scf.execute_region
// CHECK-NOT: scf.execute_region
// CHECK: "relax.add"
// CHECK: "relax.unique"
func.func @in_dataflow(%x: !relax.tensor<["a", 3], f32>) -> !relax.tensor<"*", f32> {
  %r = scf.execute_region -> !relax.tensor<"*", f32> {
    %c = "relax.call"(%x, %x) {callee = @pair} : (!relax.tensor<["a", 3], f32>, !relax.tensor<["a", 3], f32>) -> !relax.tensor<"*", f32>
    scf.yield %c : !relax.tensor<"*", f32>
  } {no_inline, relax.dataflow}
  return %r : !relax.tensor<"*", f32>
}

// CHECK-LABEL: func.func private @rec
// CHECK: "relax.call"{{.*}}{callee = @rec}
func.func private @rec(%x: !relax.tensor<["n"], f32>) -> !relax.tensor<["n"], f32> {
  %r = "relax.call"(%x) {callee = @rec} : (!relax.tensor<["n"], f32>) -> !relax.tensor<["n"], f32>
  return %r : !relax.tensor<["n"], f32>
}

// CHECK-LABEL: func.func @public_callee
// CHECK: "relax.call"{{.*}}{callee = @rec}
func.func @public_callee(%x: !relax.tensor<["n"], f32>) -> !relax.tensor<["n"], f32> {
  %r = "relax.call"(%x) {callee = @rec} : (!relax.tensor<["n"], f32>) -> !relax.tensor<["n"], f32>
  return %r : !relax.tensor<["n"], f32>
}

// A callee with control flow is inlined at function level (its scf.if cloned, in the caller's symbols), but
// not into a dataflow block (which holds no control flow).
func.func private @branchy(%x: !relax.tensor<["n"], f32>, %p: !relax.prim<"k">) -> !relax.tensor<["n"], f32> {
  %c = "relax.condition"(%p) : (!relax.prim<"k">) -> i1
  %r = scf.if %c -> (!relax.tensor<["n"], f32>) {
    %e = "relax.exp"(%x) : (!relax.tensor<["n"], f32>) -> !relax.tensor<["n"], f32>
    scf.yield %e : !relax.tensor<["n"], f32>
  } else {
    scf.yield %x : !relax.tensor<["n"], f32>
  }
  return %r : !relax.tensor<["n"], f32>
}

// CHECK-LABEL: func.func @branch_caller
// CHECK: scf.if %{{.*}} -> (!relax.tensor<["m"], f32>)
// CHECK: "relax.exp"{{.*}} -> !relax.tensor<["m"], f32>
// CHECK: scf.execute_region
// CHECK: "relax.call"{{.*}}{callee = @branchy}
func.func @branch_caller(%x: !relax.tensor<["m"], f32>, %p: !relax.prim<"q">) -> !relax.tensor<["m"], f32> {
  %r = "relax.call"(%x, %p) {callee = @branchy} : (!relax.tensor<["m"], f32>, !relax.prim<"q">) -> !relax.tensor<["m"], f32>
  %s = scf.execute_region -> !relax.tensor<["m"], f32> {
    %t = "relax.call"(%r, %p) {callee = @branchy} : (!relax.tensor<["m"], f32>, !relax.prim<"q">) -> !relax.tensor<["m"], f32>
    scf.yield %t : !relax.tensor<["m"], f32>
  } {no_inline, relax.dataflow}
  return %s : !relax.tensor<["m"], f32>
}

// A fresh symbol used in an expression is cast once another argument has bound it (two steps).
func.func private @double_of(%x: !relax.tensor<["2 * n"], f32>, %y: !relax.tensor<["n"], f32>) -> !relax.tensor<["n"], f32> {
  return %y : !relax.tensor<["n"], f32>
}

// CHECK-LABEL: func.func @two_steps
// CHECK: "relax.match_cast"(%arg0) : (!relax.tensor<["?"], f32>) -> !relax.tensor<["?"], f32>
// CHECK: "relax.match_cast"(%arg1) : (!relax.tensor<["?"], f32>) -> !relax.tensor<["[[N:n_[0-9]+]]"], f32>
// CHECK: "relax.match_cast"(%{{.*}}) : (!relax.tensor<["?"], f32>) -> !relax.tensor<["2 * [[N]]"], f32>
func.func @two_steps(%x: !relax.tensor<["?"], f32>, %y: !relax.tensor<["?"], f32>) -> !relax.tensor<"*", f32> {
  %r = "relax.call"(%x, %y) {callee = @double_of} : (!relax.tensor<["?"], f32>, !relax.tensor<["?"], f32>) -> !relax.tensor<"*", f32>
  return %r : !relax.tensor<"*", f32>
}

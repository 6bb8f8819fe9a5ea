// Ill-typed relax.call: each with its diagnostic at the call.
// RUN: relax-opt %s --split-input-file --verify-diagnostics --relax-verify

func.func @missing(%x: !relax.tensor<["m"], f32>) {
  // expected-error@below {{'relax.call' op callee @nowhere is not a function of this module}}
  %y = "relax.call"(%x) {callee = @nowhere} : (!relax.tensor<["m"], f32>) -> !relax.tensor<["m"], f32>
  return
}

// -----

func.func private @sq(%x: !relax.tensor<["n"], f32>) -> !relax.tensor<["n"], f32> {
  return %x : !relax.tensor<["n"], f32>
}
func.func @count(%x: !relax.tensor<["m"], f32>) {
  // expected-error@below {{'relax.call' op @sq: the callee takes 1 arguments, the call passes 2}}
  %y = "relax.call"(%x, %x) {callee = @sq} : (!relax.tensor<["m"], f32>, !relax.tensor<["m"], f32>) -> !relax.tensor<["m"], f32>
  return
}

// -----

func.func private @sq(%x: !relax.tensor<["n"], f32>) -> !relax.tensor<["n"], f32> {
  return %x : !relax.tensor<["n"], f32>
}
func.func @dtype(%x: !relax.tensor<["m"], i32>) {
  // expected-error@below {{'relax.call' op @sq: argument #0 has dtype i32, the callee's parameter !relax.tensor<["n"], f32> has f32}}
  %y = "relax.call"(%x) {callee = @sq} : (!relax.tensor<["m"], i32>) -> !relax.tensor<["m"], f32>
  return
}

// -----

func.func private @sq(%x: !relax.tensor<["n"], f32>) -> !relax.tensor<["n"], f32> {
  return %x : !relax.tensor<["n"], f32>
}
func.func @rank(%x: !relax.tensor<["m", 2], f32>) {
  // expected-error@below {{'relax.call' op @sq: argument #0 !relax.tensor<["m", 2], f32> has rank 2, the callee's parameter !relax.tensor<["n"], f32> has rank 1}}
  %y = "relax.call"(%x) {callee = @sq} : (!relax.tensor<["m", 2], f32>) -> !relax.tensor<["m"], f32>
  return
}

// -----

func.func private @pair(%x: !relax.tensor<["n", "k"], f32>, %y: !relax.tensor<["n", "k"], f32>) -> !relax.tensor<["n", "k"], f32> {
  return %x : !relax.tensor<["n", "k"], f32>
}
// k is bound to 3 by the first argument; the second's 4 can never equal it.
func.func @binding_conflict(%x: !relax.tensor<["a", 3], f32>, %y: !relax.tensor<["a", 4], f32>) {
  // expected-error@below {{'relax.call' op @pair: argument #1 dim 1 has dim 4 where the callee's parameter needs k = 3}}
  %z = "relax.call"(%x, %y) {callee = @pair} : (!relax.tensor<["a", 3], f32>, !relax.tensor<["a", 4], f32>) -> !relax.tensor<"*", f32>
  return
}

// -----

func.func private @four(%x: !relax.tensor<["n", 4], f32>) -> !relax.tensor<["n", 4], f32> {
  return %x : !relax.tensor<["n", 4], f32>
}
func.func @constant_dim(%x: !relax.tensor<["m", 5], f32>) {
  // expected-error@below {{'relax.call' op @four: argument #0 dim 1 has dim 5 where the callee's parameter needs 4}}
  %y = "relax.call"(%x) {callee = @four} : (!relax.tensor<["m", 5], f32>) -> !relax.tensor<"*", f32>
  return
}

// -----

func.func private @sq(%x: !relax.tensor<["n"], f32>) -> !relax.tensor<["n"], f32> {
  return %x : !relax.tensor<["n"], f32>
}
func.func @declared_result(%x: !relax.tensor<["m"], f32>) {
  // expected-error@below {{'relax.call' op result #0 is declared !relax.tensor<["m + 1"], f32> but the operands give !relax.tensor<["m"], f32>}}
  %y = "relax.call"(%x) {callee = @sq} : (!relax.tensor<["m"], f32>) -> !relax.tensor<["m + 1"], f32>
  return
}

// -----

func.func private @kernel(%x: tensor<?xf32>) -> tensor<?xf32> {
  return %x : tensor<?xf32>
}
func.func @not_relax(%x: !relax.tensor<["m"], f32>) {
  // expected-error@below {{'relax.call' op @kernel: the callee's parameter #0 has type tensor<?xf32>, which is not a relax type}}
  %y = "relax.call"(%x) {callee = @kernel} : (!relax.tensor<["m"], f32>) -> !relax.tensor<["m"], f32>
  return
}

// -----

func.func private @sq(%x: !relax.tensor<["n"], f32>) -> !relax.tensor<["n"], f32> {
  return %x : !relax.tensor<["n"], f32>
}
func.func @shape_for_tensor(%s: !relax.shape<["m"]>) {
  // expected-error@below {{'relax.call' op @sq: argument #0 is !relax.shape<["m"]>, the callee's parameter is !relax.tensor<["n"], f32>: different kinds of value}}
  %y = "relax.call"(%s) {callee = @sq} : (!relax.shape<["m"]>) -> !relax.tensor<["m"], f32>
  return
}

// RUN: relax-opt %s --relax-lower-host --split-input-file --verify-diagnostics

// relax-lower-host re-checks a recorded plan (hand-written or edited IR) instead of miscompiling it.

func.func private @k(%a: tensor<?xf32>, %out: tensor<?xf32>) -> tensor<?xf32>

// expected-error@below {{@overlap: invalid memory plan (relax.storages): %1 (!relax.tensor<["n"], f32>) and %0 share storage 0 while both are live}}
func.func @overlap(%x: !relax.tensor<["n"], f32>) -> !relax.tensor<["n"], f32> attributes {relax.storages = ["4 * n"]} {
  %0 = "relax.call_tir"(%x) {callee = @k, relax.storage = [0]} : (!relax.tensor<["n"], f32>) -> !relax.tensor<["n"], f32>
  %1 = "relax.call_tir"(%0) {callee = @k, relax.storage = [0]} : (!relax.tensor<["n"], f32>) -> !relax.tensor<["n"], f32>
  %2 = "relax.call_tir"(%0) {callee = @k} : (!relax.tensor<["n"], f32>) -> !relax.tensor<["n"], f32>
  %3 = "relax.call_tir"(%1) {callee = @k} : (!relax.tensor<["n"], f32>) -> !relax.tensor<["n"], f32>
  return %3 : !relax.tensor<["n"], f32>
}

// -----

func.func private @k(%a: tensor<?xf32>, %out: tensor<?xf32>) -> tensor<?xf32>

// expected-error@below {{@too_small: invalid memory plan (relax.storages): %0 (!relax.tensor<["n"], f32>) needs 4 * n bytes, more than storage 0 holds (2 * n)}}
func.func @too_small(%x: !relax.tensor<["n"], f32>) -> !relax.tensor<["n"], f32> attributes {relax.storages = ["2 * n"]} {
  %0 = "relax.call_tir"(%x) {callee = @k, relax.storage = [0]} : (!relax.tensor<["n"], f32>) -> !relax.tensor<["n"], f32>
  %1 = "relax.call_tir"(%0) {callee = @k} : (!relax.tensor<["n"], f32>) -> !relax.tensor<["n"], f32>
  return %1 : !relax.tensor<["n"], f32>
}

// -----

func.func private @k(%a: tensor<?xf32>, %out: tensor<?xf32>) -> tensor<?xf32>

// A static storage must hold the tensor at the bounds: 4 * 2048 bytes do not fit in 4096.
// expected-error@below {{@above_bound: invalid memory plan (relax.storages): %0 (!relax.tensor<["n"], f32>) needs 4 * n bytes, more than storage 0 holds (4096)}}
func.func @above_bound(%x: !relax.tensor<["n"], f32>) -> !relax.tensor<["n"], f32>
    attributes {relax.storages = [4096], relax.upper_bounds = {n = 2048 : i64}} {
  %0 = "relax.call_tir"(%x) {callee = @k, relax.storage = [0]} : (!relax.tensor<["n"], f32>) -> !relax.tensor<["n"], f32>
  %1 = "relax.call_tir"(%0) {callee = @k} : (!relax.tensor<["n"], f32>) -> !relax.tensor<["n"], f32>
  return %1 : !relax.tensor<["n"], f32>
}

// -----

func.func private @k(%a: tensor<?xf32>, %out: tensor<?xf32>) -> tensor<?xf32>

// expected-error@below {{@missing: invalid memory plan (relax.storages): %0 (!relax.tensor<["n"], f32>) is planned into storage 2, but the function has 1 storages}}
func.func @missing(%x: !relax.tensor<["n"], f32>) -> !relax.tensor<["n"], f32> attributes {relax.storages = ["4 * n"]} {
  %0 = "relax.call_tir"(%x) {callee = @k, relax.storage = [2]} : (!relax.tensor<["n"], f32>) -> !relax.tensor<["n"], f32>
  %1 = "relax.call_tir"(%0) {callee = @k} : (!relax.tensor<["n"], f32>) -> !relax.tensor<["n"], f32>
  return %1 : !relax.tensor<["n"], f32>
}

// -----

func.func private @k(%a: tensor<?xf32>, %out: tensor<?xf32>) -> tensor<?xf32>

// expected-error@below {{@output: invalid memory plan (relax.storages): %0 (!relax.tensor<["n"], f32>) is planned into storage 0 but cannot be (function output)}}
func.func @output(%x: !relax.tensor<["n"], f32>) -> !relax.tensor<["n"], f32> attributes {relax.storages = ["4 * n"]} {
  %0 = "relax.call_tir"(%x) {callee = @k, relax.storage = [0]} : (!relax.tensor<["n"], f32>) -> !relax.tensor<["n"], f32>
  return %0 : !relax.tensor<["n"], f32>
}

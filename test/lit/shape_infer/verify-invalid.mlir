// relax-verify: ill-typed and ill-formed programs give a diagnostic at the op.
// RUN: relax-opt %s --split-input-file --verify-diagnostics --relax-verify

// expected-error@below {{parameter #0 of @expr_only uses symbol(s) n that no parameter defines}}
func.func @expr_only(%x: !relax.tensor<["n + 1"], f32>) {
  return
}

// -----

func.func @undefined_symbol_result(%x: !relax.tensor<["n"], f32>) {
  // expected-error@below {{result #0 uses undefined symbol(s) m}}
  %0 = "relax.exp"(%x) : (!relax.tensor<["n"], f32>) -> !relax.tensor<["m"], f32>
  return
}

// -----

func.func @broadcast_mismatch(%x: !relax.tensor<["n", 4], f32>, %y: !relax.tensor<[3], f32>) {
  // expected-error@below {{cannot broadcast 'lhs' ["n", 4], 'rhs' [3]: dim -1 is 4 vs 3}}
  %0 = "relax.add"(%x, %y) : (!relax.tensor<["n", 4], f32>, !relax.tensor<[3], f32>) -> !relax.tensor<["n", 4], f32>
  return
}

// -----

func.func @dtype_mismatch(%x: !relax.tensor<["n"], f32>, %y: !relax.tensor<["n"], i32>) {
  // expected-error@below {{operands 'lhs' (f32) and 'rhs' (i32) have different dtypes}}
  %0 = "relax.multiply"(%x, %y) : (!relax.tensor<["n"], f32>, !relax.tensor<["n"], i32>) -> !relax.tensor<["n"], f32>
  return
}

// -----

func.func @declared_wrong(%x: !relax.tensor<["n", 4], f32>) {
  // expected-error@below {{result #0 is declared !relax.tensor<["n", 5], f32> but the operands give !relax.tensor<["n", 4], f32>: dim 1 is 5 vs 4}}
  %0 = "relax.exp"(%x) : (!relax.tensor<["n", 4], f32>) -> !relax.tensor<["n", 5], f32>
  return
}

// -----

func.func @declared_other_symbol(%x: !relax.tensor<["n"], f32>, %y: !relax.tensor<["m"], f32>) {
  // expected-error@below {{dim 0 is m, which is not provably equal to n}}
  %0 = "relax.relu"(%x) : (!relax.tensor<["n"], f32>) -> !relax.tensor<["m"], f32>
  return
}

// -----

func.func @matmul_contraction(%x: !relax.tensor<["n", 64], f32>, %w: !relax.tensor<[32, 16], f32>) {
  // expected-error@below {{contraction dims differ: 'lhs' ["n", 64] has 64, 'rhs' [32, 16] has 32}}
  %0 = "relax.matmul"(%x, %w) : (!relax.tensor<["n", 64], f32>, !relax.tensor<[32, 16], f32>) -> !relax.tensor<["n", 16], f32>
  return
}

// -----

func.func @reshape_count(%x: !relax.tensor<[6, 4], f32>) {
  // expected-error@below {{cannot reshape [6, 4] (24 elements) to [5, 5] (25 elements)}}
  %0 = "relax.reshape"(%x) {shape = [5, 5]} : (!relax.tensor<[6, 4], f32>) -> !relax.tensor<[5, 5], f32>
  return
}

// -----

func.func @reshape_two_infer(%x: !relax.tensor<["n", 4], f32>) {
  // expected-error@below {{has more than one -1}}
  %0 = "relax.reshape"(%x) {shape = [-1, -1]} : (!relax.tensor<["n", 4], f32>) -> !relax.tensor<"*", f32>
  return
}

// -----

func.func @permute_bad_axes(%x: !relax.tensor<["n", 4], f32>) {
  // expected-error@below {{axes [0, 0] repeat an axis}}
  %0 = "relax.permute_dims"(%x) {axes = [0, 0]} : (!relax.tensor<["n", 4], f32>) -> !relax.tensor<["n", "n"], f32>
  return
}

// -----

func.func @sum_axis_range(%x: !relax.tensor<["n", 4], f32>) {
  // expected-error@below {{axes 2 is out of range for rank 2}}
  %0 = "relax.sum"(%x) {axes = [2], keepdims = false} : (!relax.tensor<["n", 4], f32>) -> !relax.tensor<["n"], f32>
  return
}

// -----

func.func @sum_axes_kind(%x: !relax.tensor<["n", 4], f32>) {
  // expected-error@below {{attribute 'axes' must be an array of integers or unit}}
  %0 = "relax.sum"(%x) {axes = ["a"], keepdims = false} : (!relax.tensor<["n", 4], f32>) -> !relax.tensor<["n"], f32>
  return
}

// -----

func.func @exp_int(%x: !relax.tensor<["n"], i32>) {
  // expected-error@below {{operand 'x' must have a float dtype, got i32}}
  %0 = "relax.exp"(%x) : (!relax.tensor<["n"], i32>) -> !relax.tensor<["n"], i32>
  return
}

// -----

func.func @match_cast_rank(%x: !relax.tensor<["n", 4], f32>) {
  // expected-error@below {{cannot cast rank 2 ["n", 4] to rank 3 ["a", "b", "c"]}}
  %0 = "relax.match_cast"(%x) : (!relax.tensor<["n", 4], f32>) -> !relax.tensor<["a", "b", "c"], f32>
  return
}

// -----

func.func @match_cast_kind(%x: !relax.tensor<["n", 4], f32>) {
  // expected-error@below {{different kinds of value}}
  %0 = "relax.match_cast"(%x) : (!relax.tensor<["n", 4], f32>) -> !relax.shape<["a", "b"]>
  return
}

// -----

func.func @call_tir_missing(%x: !relax.tensor<["n"], f32>) {
  // expected-error@below {{callee @nowhere is not a function of this module}}
  %0 = "relax.call_tir"(%x) {callee = @nowhere} : (!relax.tensor<["n"], f32>) -> !relax.tensor<["n"], f32>
  return
}

// -----

func.func @call_tir_unknown_rank_out(%x: !relax.tensor<["n"], f32>) {
  // expected-error@below {{output #0 needs a known rank and dtype to be allocated}}
  %0 = "relax.call_tir"(%x) {callee = @call_tir_unknown_rank_out} : (!relax.tensor<["n"], f32>) -> !relax.tensor<"*", f32>
  return
}

// -----

func.func @tuple_index(%t: !relax.tuple<[!relax.tensor<["n"], f32>]>) {
  // expected-error@below {{index 3 is out of range for a tuple of 1 fields}}
  %0 = "relax.tuple_get_item"(%t) {index = 3} : (!relax.tuple<[!relax.tensor<["n"], f32>]>) -> !relax.tensor<["n"], f32>
  return
}

// -----

func.func @constant_type(%x: !relax.tensor<["n"], f32>) {
  // expected-error@below {{result #0 is declared !relax.tensor<[3], f32> but the operands give !relax.tensor<[2], f32>}}
  %0 = "relax.constant"() {value = dense<[1.0, 2.0]> : tensor<2xf32>} : () -> !relax.tensor<[3], f32>
  return
}

// -----

func.func @dataflow_impure(%x: !relax.tensor<["n"], f32>) -> !relax.tensor<["n"], f32> {
  %r = scf.execute_region -> !relax.tensor<["n"], f32> {
    // expected-error@below {{'func.call' op is not allowed in a relax dataflow block}}
    %0 = func.call @dataflow_impure(%x) : (!relax.tensor<["n"], f32>) -> !relax.tensor<["n"], f32>
    scf.yield %0 : !relax.tensor<["n"], f32>
  } {no_inline, relax.dataflow}
  return %r : !relax.tensor<["n"], f32>
}

// -----

// expected-error@below {{upper bound names symbol 'm', which no parameter of @bounds defines}}
func.func @bounds(%x: !relax.tensor<["n"], f32>) attributes {relax.upper_bounds = {m = 8 : i64}} {
  return
}

// -----

func.func @tuple_operand_kind(%x: !relax.tensor<["n"], f32>) {
  // expected-error@below {{result #0 uses undefined symbol(s) k}}
  %0 = "relax.match_cast"(%x) : (!relax.tensor<["n"], f32>) -> !relax.tensor<["k + 1"], f32>
  return
}

// -----

func.func @dataflow_inlinable(%x: !relax.tensor<["n"], f32>) -> !relax.tensor<["n"], f32> {
  // expected-error@below {{a relax dataflow block must be marked no_inline}}
  %r = scf.execute_region -> !relax.tensor<["n"], f32> {
    %0 = "relax.exp"(%x) : (!relax.tensor<["n"], f32>) -> !relax.tensor<["n"], f32>
    scf.yield %0 : !relax.tensor<["n"], f32>
  } {relax.dataflow}
  return %r : !relax.tensor<["n"], f32>
}

// -----

func.func private @kernel(%a: tensor<?x4xf32>, %out: tensor<?x5xf32>) -> tensor<?x5xf32>
func.func @kernel_signature(%x: !relax.tensor<["n", 4], f32>) {
  // expected-error@below {{output #0: dim 1 is 4, callee parameter tensor<?x5xf32> has 5}}
  %0 = "relax.call_tir"(%x) {callee = @kernel} : (!relax.tensor<["n", 4], f32>) -> !relax.tensor<["n", 4], f32>
  return
}

// -----

func.func private @kernel(%a: tensor<?x4xf32>) -> tensor<?x4xf32>
func.func @kernel_arity(%x: !relax.tensor<["n", 4], f32>) {
  // expected-error@below {{callee takes 1 arguments, but the call passes 1 inputs and 1 outputs}}
  %0 = "relax.call_tir"(%x) {callee = @kernel} : (!relax.tensor<["n", 4], f32>) -> !relax.tensor<["n", 4], f32>
  return
}

// Ill-typed structural, shape-value, creation and data-dependent ops: relax-verify reports them at the op.
// RUN: relax-opt %s --split-input-file --verify-diagnostics --relax-verify

func.func @match_cast_static_dim(%x: !relax.tensor<["n", 4], f32>) {
  // expected-error@below {{'relax.match_cast' op cannot cast ["n", 4] to ["m", 5]: dim 1 is 4}}
  %0 = "relax.match_cast"(%x) : (!relax.tensor<["n", 4], f32>) -> !relax.tensor<["m", 5], f32>
  return
}

// -----

func.func @match_cast_rank_zero(%x: !relax.tensor<[], f32>) {
  // expected-error@below {{cannot cast rank 0 [] to rank 1 ["k"]}}
  %0 = "relax.match_cast"(%x) : (!relax.tensor<[], f32>) -> !relax.tensor<["k"], f32>
  return
}

// -----

func.func @match_cast_dtype(%x: !relax.tensor<"*", f32>) {
  // expected-error@below {{cannot cast dtype f32 to i64}}
  %0 = "relax.match_cast"(%x) : (!relax.tensor<"*", f32>) -> !relax.tensor<["k"], i64>
  return
}

// -----

func.func @match_cast_kind(%p: !relax.prim<"n">) {
  // expected-error@below {{cannot cast !relax.prim<"n"> to !relax.tensor<"*", f32>: different kinds of value}}
  %0 = "relax.match_cast"(%p) : (!relax.prim<"n">) -> !relax.tensor<"*", f32>
  return
}

// -----

func.func @match_cast_prim_value(%x: !relax.tensor<[1, 3], f32>) {
  %s = "relax.shape_of"(%x) : (!relax.tensor<[1, 3], f32>) -> !relax.shape<[1, 3]>
  %d = "relax.get_dim"(%s) {index = 0 : i64} : (!relax.shape<[1, 3]>) -> !relax.prim<"1">
  // expected-error@below {{cannot cast !relax.prim<"1"> to !relax.prim<"0">: the values differ}}
  %0 = "relax.match_cast"(%d) : (!relax.prim<"1">) -> !relax.prim<"0">
  return
}

// -----

func.func @match_cast_tuple(%t: !relax.tuple<[!relax.tensor<["n"], f32>, !relax.shape<[2]>]>) {
  // expected-error@below {{tuple field #1: cannot cast rank 1 [2] to rank 2 ["a", "b"]}}
  %0 = "relax.match_cast"(%t) : (!relax.tuple<[!relax.tensor<["n"], f32>, !relax.shape<[2]>]>) -> !relax.tuple<[!relax.tensor<["n"], f32>, !relax.shape<["a", "b"]>]>
  return
}

// -----

func.func @match_cast_expression_of_new_symbol(%x: !relax.tensor<"*", f32>) {
  // expected-error@below {{result #0 uses undefined symbol(s) j}}
  %0 = "relax.match_cast"(%x) : (!relax.tensor<"*", f32>) -> !relax.tensor<["k", "j + 1"], f32>
  return
}

// -----

func.func @call_tir_missing_callee(%x: !relax.tensor<["n"], f32>) {
  // expected-error@below {{'relax.call_tir' op callee @nowhere is not a function of this module}}
  %0 = "relax.call_tir"(%x) {callee = @nowhere} : (!relax.tensor<["n"], f32>) -> !relax.tensor<["n"], f32>
  return
}

// -----

func.func private @k1(%a: tensor<?xf32>, %out: tensor<?xf32>) -> tensor<?xf32>

func.func @call_tir_unknown_rank(%x: !relax.tensor<["n"], f32>) {
  // expected-error@below {{output #0 needs a known rank and dtype to be allocated, got !relax.tensor<"*", f32>}}
  %0 = "relax.call_tir"(%x) {callee = @k1} : (!relax.tensor<["n"], f32>) -> !relax.tensor<"*", f32>
  return
}

// -----

func.func private @k1(%a: tensor<?xf32>, %out: tensor<?xf32>) -> tensor<?xf32>

func.func @call_tir_unknown_dim(%x: !relax.tensor<["n"], f32>) {
  // expected-error@below {{callee takes 2 arguments and returns 1 values; an output with unknown dims needs a kernel that takes the 1 inputs and returns the 1 outputs}}
  %0 = "relax.call_tir"(%x) {callee = @k1} : (!relax.tensor<["n"], f32>) -> !relax.tensor<["?"], f32>
  return
}

// -----

func.func private @k1(%a: tensor<?xf32>, %out: tensor<?xf32>) -> tensor<?xf32>

func.func @call_tir_unknown_dtype(%x: !relax.tensor<["n"], f32>) {
  // expected-error@below {{output #0 needs a known rank and dtype to be allocated, got !relax.tensor<["n"], none>}}
  %0 = "relax.call_tir"(%x) {callee = @k1} : (!relax.tensor<["n"], f32>) -> !relax.tensor<["n"], none>
  return
}

// -----

func.func private @k0(%a: tensor<?xf32>) -> ()

func.func @call_tir_no_output(%x: !relax.tensor<["n"], f32>) {
  // expected-error@below {{a destination-passing call needs at least one output}}
  "relax.call_tir"(%x) {callee = @k0} : (!relax.tensor<["n"], f32>) -> ()
  return
}

// -----

func.func private @k1(%a: tensor<?xf32>, %out: tensor<?xf32>) -> tensor<?xf32>

func.func @call_tir_tuple_argument(%t: !relax.tuple<[!relax.tensor<["n"], f32>]>) {
  // expected-error@below {{argument #0 must be a tensor, shape or prim value}}
  %0 = "relax.call_tir"(%t) {callee = @k1} : (!relax.tuple<[!relax.tensor<["n"], f32>]>) -> !relax.tensor<[4], f32>
  return
}

// -----

func.func @call_dps_library_empty_callee(%x: !relax.tensor<["n"], f32>) {
  // expected-error@below {{'relax.call_dps_library' op callee must be a non-empty symbol name}}
  %0 = "relax.call_dps_library"(%x) {callee = ""} : (!relax.tensor<["n"], f32>) -> !relax.tensor<["n"], f32>
  return
}

// -----

func.func @call_dps_library_unknown_dim(%x: !relax.tensor<["n"], f32>) {
  // expected-error@below {{'relax.call_dps_library' op output #1 needs known dims to be allocated}}
  %0:2 = "relax.call_dps_library"(%x) {callee = "lib"} : (!relax.tensor<["n"], f32>) -> (!relax.tensor<["n"], f32>, !relax.tensor<["n", "?"], f32>)
  return
}

// -----

func.func @shape_of_declared_rank(%x: !relax.tensor<["n", 4], f32>) {
  // expected-error@below {{'relax.shape_of' op result #0 is declared !relax.shape<["n"]> but the operands give !relax.shape<["n", 4]>: rank 1 ["n"] vs 2 ["n", 4]}}
  %0 = "relax.shape_of"(%x) : (!relax.tensor<["n", 4], f32>) -> !relax.shape<["n"]>
  return
}

// -----

func.func @shape_of_unknown_rank(%x: !relax.tensor<"*", f32>) {
  // expected-error@below {{result #0 is declared !relax.shape<["?"]> but the operands give !relax.shape<"*">: the rank cannot be deduced}}
  %0 = "relax.shape_of"(%x) : (!relax.tensor<"*", f32>) -> !relax.shape<["?"]>
  return
}

// -----

func.func @make_tuple_fields(%x: !relax.tensor<["n"], f32>) {
  // expected-error@below {{'relax.make_tuple' op result #0 is declared !relax.tuple<[!relax.tensor<"*", f32>, !relax.tensor<"*", f32>]> but the operands give !relax.tuple<[!relax.tensor<["n"], f32>]>: 2 fields vs 1}}
  %0 = "relax.make_tuple"(%x) : (!relax.tensor<["n"], f32>) -> !relax.tuple<[!relax.tensor<"*", f32>, !relax.tensor<"*", f32>]>
  return
}

// -----

func.func @make_tuple_field_dtype(%x: !relax.tensor<["n"], f32>) {
  // expected-error@below {{'relax.make_tuple' op result #0 is declared}}
  %0 = "relax.make_tuple"(%x) : (!relax.tensor<["n"], f32>) -> !relax.tuple<[!relax.tensor<["n"], f16>]>
  return
}

// -----

func.func @tuple_get_item_out_of_range(%t: !relax.tuple<[!relax.tensor<["n"], f32>, !relax.prim<"n">]>) {
  // expected-error@below {{'relax.tuple_get_item' op index 2 is out of range for a tuple of 2 fields}}
  %0 = "relax.tuple_get_item"(%t) {index = 2 : i64} : (!relax.tuple<[!relax.tensor<["n"], f32>, !relax.prim<"n">]>) -> !relax.prim<"?">
  return
}

// -----

func.func @tuple_get_item_negative(%t: !relax.tuple<[!relax.tensor<["n"], f32>]>) {
  // expected-error@below {{index -1 is out of range for a tuple of 1 fields}}
  %0 = "relax.tuple_get_item"(%t) {index = -1 : i64} : (!relax.tuple<[!relax.tensor<["n"], f32>]>) -> !relax.tensor<"*", f32>
  return
}

// -----

func.func @tuple_get_item_empty() {
  %t = "relax.make_tuple"() : () -> !relax.tuple<[]>
  // expected-error@below {{index 0 is out of range for a tuple of 0 fields}}
  %0 = "relax.tuple_get_item"(%t) {index = 0 : i64} : (!relax.tuple<[]>) -> !relax.tensor<"*", f32>
  return
}

// -----

func.func @constant_shape() {
  // expected-error@below {{'relax.constant' op result #0 is declared !relax.tensor<[3], f32> but the operands give !relax.tensor<[2], f32>: dim 0 is 3 vs 2}}
  %0 = "relax.constant"() {value = dense<[1.0, 2.0]> : tensor<2xf32>} : () -> !relax.tensor<[3], f32>
  return
}

// -----

func.func @constant_dtype() {
  // expected-error@below {{dtype i32 vs i64}}
  %0 = "relax.constant"() {value = dense<0> : tensor<0xi64>} : () -> !relax.tensor<[0], i32>
  return
}

// -----

func.func @constant_scalar_rank() {
  // expected-error@below {{rank 1 [1] vs 0 []}}
  %0 = "relax.constant"() {value = dense<1.0> : tensor<f32>} : () -> !relax.tensor<[1], f32>
  return
}

// -----

func.func @get_dim_out_of_range(%x: !relax.tensor<["b", "s", 512], f32>) {
  %s = "relax.shape_of"(%x) : (!relax.tensor<["b", "s", 512], f32>) -> !relax.shape<["b", "s", 512]>
  // expected-error@below {{'relax.get_dim' op index 3 is out of range for rank 3}}
  %0 = "relax.get_dim"(%s) {index = 3 : i64} : (!relax.shape<["b", "s", 512]>) -> !relax.prim<"?">
  return
}

// -----

func.func @get_dim_declared(%s: !relax.shape<["b", "s"]>) {
  // expected-error@below {{result #0 is declared !relax.prim<"b"> but the operands give !relax.prim<"s">: dim 0 is b, which is not provably equal to s}}
  %0 = "relax.get_dim"(%s) {index = 1 : i64} : (!relax.shape<["b", "s"]>) -> !relax.prim<"b">
  return
}

// -----

func.func @prim_value_unknown() {
  // expected-error@below {{'relax.prim_value' op value must be an integer or an expression of defined symbols, got '?'}}
  %0 = "relax.prim_value"() {value = "?"} : () -> !relax.prim<"?">
  return
}

// -----

func.func @prim_value_undefined_symbol(%x: !relax.tensor<["n"], f32>) {
  // expected-error@below {{result #0 would be !relax.prim<"z + 1">, which uses undefined symbol(s) z}}
  %0 = "relax.prim_value"() {value = "z + 1"} : () -> !relax.prim<"?">
  return
}

// -----

func.func @prim_value_syntax() {
  // expected-error@below {{cannot parse dim expression "n +"}}
  %0 = "relax.prim_value"() {value = "n +"} : () -> !relax.prim<"?">
  return
}

// -----

func.func @prim_binary_unknown_op(%a: !relax.prim<"a">, %b: !relax.prim<"b">) {
  // expected-error@below {{'relax.prim_binary' op unknown op 'pow'; expected one of add, sub, mul, floordiv, mod, min, max}}
  %0 = "relax.prim_binary"(%a, %b) {op = "pow"} : (!relax.prim<"a">, !relax.prim<"b">) -> !relax.prim<"?">
  return
}

// -----

func.func @prim_binary_floordiv_zero(%a: !relax.prim<"a">) {
  %z = "relax.prim_value"() {value = 0 : i64} : () -> !relax.prim<"0">
  // expected-error@below {{'relax.prim_binary' op floordiv by zero}}
  %0 = "relax.prim_binary"(%a, %z) {op = "floordiv"} : (!relax.prim<"a">, !relax.prim<"0">) -> !relax.prim<"?">
  return
}

// -----

func.func @prim_binary_declared(%a: !relax.prim<"a">) {
  %one = "relax.prim_value"() {value = 1 : i64} : () -> !relax.prim<"1">
  // expected-error@below {{result #0 is declared !relax.prim<"a"> but the operands give !relax.prim<"a + 1">}}
  %0 = "relax.prim_binary"(%a, %one) {op = "add"} : (!relax.prim<"a">, !relax.prim<"1">) -> !relax.prim<"a">
  return
}

// -----

func.func @make_shape_declared(%a: !relax.prim<"a">) {
  // expected-error@below {{'relax.make_shape' op result #0 is declared !relax.shape<["a", 1]> but the operands give !relax.shape<["a"]>: rank 2}}
  %0 = "relax.make_shape"(%a) : (!relax.prim<"a">) -> !relax.shape<["a", 1]>
  return
}

// -----

func.func @make_shape_unknown_dim(%a: !relax.prim<"?">) {
  // expected-error@below {{dim 0 cannot be deduced (use relax.match_cast to state it)}}
  %0 = "relax.make_shape"(%a) : (!relax.prim<"?">) -> !relax.shape<[4]>
  return
}

// -----

func.func @shape_to_tensor_length(%s: !relax.shape<["b", "s"]>) {
  // expected-error@below {{'relax.shape_to_tensor' op result #0 is declared !relax.tensor<[3], i64> but the operands give !relax.tensor<[2], i64>: dim 0 is 3 vs 2}}
  %0 = "relax.shape_to_tensor"(%s) : (!relax.shape<["b", "s"]>) -> !relax.tensor<[3], i64>
  return
}

// -----

func.func @shape_to_tensor_dtype(%s: !relax.shape<"*">) {
  // expected-error@below {{dtype i32 vs i64}}
  %0 = "relax.shape_to_tensor"(%s) : (!relax.shape<"*">) -> !relax.tensor<"*", i32>
  return
}

// -----

func.func @tensor_to_shape_dtype(%x: !relax.tensor<[2], f32>) {
  // expected-error@below {{'relax.tensor_to_shape' op operand 'x' must have an integer dtype, got f32}}
  %0 = "relax.tensor_to_shape"(%x) : (!relax.tensor<[2], f32>) -> !relax.shape<"*">
  return
}

// -----

func.func @tensor_to_shape_rank(%x: !relax.tensor<[2, "n"], i64>) {
  // expected-error@below {{operand 'x' [2, "n"] must be 1-D}}
  %0 = "relax.tensor_to_shape"(%x) : (!relax.tensor<[2, "n"], i64>) -> !relax.shape<"*">
  return
}

// -----

func.func @tensor_to_shape_symbolic_length(%x: !relax.tensor<["n"], i64>) {
  // expected-error@below {{the rank cannot be deduced (use relax.match_cast to state it)}}
  %0 = "relax.tensor_to_shape"(%x) : (!relax.tensor<["n"], i64>) -> !relax.shape<["?"]>
  return
}

// -----

func.func @arange_zero_step(%x: !relax.tensor<["n"], f32>) {
  // expected-error@below {{'relax.arange' op step must not be 0}}
  %0 = "relax.arange"() {start = 0 : i64, end = "n", step = 0 : i64, dtype = "i64"} : () -> !relax.tensor<"*", i64>
  return
}

// -----

func.func @arange_symbolic_step(%x: !relax.tensor<["n"], f32>) {
  // expected-error@below {{step must be a constant, got 'n'}}
  %0 = "relax.arange"() {start = 0 : i64, end = 8 : i64, step = "n", dtype = "i64"} : () -> !relax.tensor<"*", i64>
  return
}

// -----

func.func @arange_unknown_end() {
  // expected-error@below {{end must be an integer or an expression of defined symbols, got '?'}}
  %0 = "relax.arange"() {start = 0 : i64, end = "?", step = 1 : i64, dtype = "i64"} : () -> !relax.tensor<"*", i64>
  return
}

// -----

func.func @arange_float_symbolic(%x: !relax.tensor<["n"], f32>) {
  // expected-error@below {{a float range needs constant start, end and step}}
  %0 = "relax.arange"() {start = 0.5 : f64, end = "n", step = 1 : i64, dtype = "f32"} : () -> !relax.tensor<"*", f32>
  return
}

// -----

func.func @arange_undefined_symbol(%x: !relax.tensor<["n"], f32>) {
  // expected-error@below {{which uses undefined symbol(s) m}}
  %0 = "relax.arange"() {start = 0 : i64, end = "m", step = 1 : i64, dtype = "i64"} : () -> !relax.tensor<"*", i64>
  return
}

// -----

func.func @arange_declared_length() {
  // expected-error@below {{result #0 is declared !relax.tensor<[3], i64> but the operands give !relax.tensor<[4], i64>: dim 0 is 3 vs 4}}
  %0 = "relax.arange"() {start = 0 : i64, end = 10 : i64, step = 3 : i64, dtype = "i64"} : () -> !relax.tensor<[3], i64>
  return
}

// -----

func.func @full_negative() {
  // expected-error@below {{'relax.full' op shape entry -2 at position 1 is negative}}
  %0 = "relax.full"() {shape = [3, -2], value = 0.0 : f64, dtype = "f32"} : () -> !relax.tensor<"*", f32>
  return
}

// -----

func.func @full_unknown_dim(%x: !relax.tensor<["n"], f32>) {
  // expected-error@below {{shape entry 1 must be an integer or an expression of defined symbols, got '?'}}
  %0 = "relax.full"() {shape = ["n", "?"], value = 0.0 : f64, dtype = "f32"} : () -> !relax.tensor<"*", f32>
  return
}

// -----

func.func @full_dtype() {
  // expected-error@below {{unknown dtype 'float32'}}
  %0 = "relax.full"() {shape = [2], value = 0.0 : f64, dtype = "float32"} : () -> !relax.tensor<"*", f32>
  return
}

// -----

func.func @full_undefined_symbol(%x: !relax.tensor<["n"], f32>) {
  // expected-error@below {{uses undefined symbol(s) k}}
  %0 = "relax.full"() {shape = ["n", "k"], value = 0.0 : f64, dtype = "f32"} : () -> !relax.tensor<"*", f32>
  return
}

// -----

func.func @unique_claims_length(%x: !relax.tensor<[4], i64>) {
  // expected-error@below {{'relax.unique' op result #0 is declared !relax.tensor<[4], i64> but the operands give !relax.tensor<["?"], i64>: dim 0 cannot be deduced (use relax.match_cast to state it)}}
  %0 = "relax.unique"(%x) : (!relax.tensor<[4], i64>) -> !relax.tensor<[4], i64>
  return
}

// -----

func.func @unique_dtype(%x: !relax.tensor<["n"], f32>) {
  // expected-error@below {{dtype i64 vs f32}}
  %0 = "relax.unique"(%x) : (!relax.tensor<["n"], f32>) -> !relax.tensor<"*", i64>
  return
}

// -----

func.func @nonzero_dtype(%x: !relax.tensor<["n", 4], f32>) {
  // expected-error@below {{'relax.nonzero' op result #0 is declared !relax.tensor<[2, "?"], f32> but the operands give !relax.tensor<[2, "?"], i64>: dtype f32 vs i64}}
  %0 = "relax.nonzero"(%x) : (!relax.tensor<["n", 4], f32>) -> !relax.tensor<[2, "?"], f32>
  return
}

// -----

func.func @nonzero_rank(%x: !relax.tensor<["b", "s", 4], f32>) {
  // expected-error@below {{dim 0 is 2 vs 3}}
  %0 = "relax.nonzero"(%x) : (!relax.tensor<["b", "s", 4], f32>) -> !relax.tensor<[2, "?"], i64>
  return
}

// -----

func.func @nonzero_unknown_rank(%x: !relax.tensor<"*", f32>) {
  // expected-error@below {{dim 0 cannot be deduced}}
  %0 = "relax.nonzero"(%x) : (!relax.tensor<"*", f32>) -> !relax.tensor<[2, "?"], i64>
  return
}

// Ill-typed elementwise ops: at least one diagnostic per op (incompatible dims, dtypes, non-tensor operands,
// wrong dtype kinds, bad attributes, declared results that disagree with deduction).
// RUN: relax-opt %s --split-input-file --verify-diagnostics --relax-verify

func.func @add_static(%x: !relax.tensor<[2, 3], f32>, %y: !relax.tensor<[3, 2], f32>) {
  // expected-error@below {{'relax.add' op cannot broadcast 'lhs' [2, 3], 'rhs' [3, 2]: dim -2 is 2 vs 3}}
  %0 = "relax.add"(%x, %y) : (!relax.tensor<[2, 3], f32>, !relax.tensor<[3, 2], f32>) -> !relax.tensor<"*", none>
  return
}

// -----

func.func @subtract_symbolic(%x: !relax.tensor<["n", 4], f32>, %y: !relax.tensor<[5], f32>) {
  // expected-error@below {{'relax.subtract' op cannot broadcast 'lhs' ["n", 4], 'rhs' [5]: dim -1 is 4 vs 5}}
  %0 = "relax.subtract"(%x, %y) : (!relax.tensor<["n", 4], f32>, !relax.tensor<[5], f32>) -> !relax.tensor<"*", none>
  return
}

// -----

func.func @multiply_zero(%x: !relax.tensor<[0], f32>, %y: !relax.tensor<[7], f32>) {
  // expected-error@below {{cannot broadcast 'lhs' [0], 'rhs' [7]: dim -1 is 0 vs 7}}
  %0 = "relax.multiply"(%x, %y) : (!relax.tensor<[0], f32>, !relax.tensor<[7], f32>) -> !relax.tensor<"*", none>
  return
}

// -----

func.func @divide_unknown_dim(%x: !relax.tensor<["?", 3], f32>, %y: !relax.tensor<["m", 1, 2], f32>) {
  // expected-error@below {{cannot broadcast 'lhs' ["?", 3], 'rhs' ["m", 1, 2]: dim -1 is 3 vs 2}}
  %0 = "relax.divide"(%x, %y) : (!relax.tensor<["?", 3], f32>, !relax.tensor<["m", 1, 2], f32>) -> !relax.tensor<"*", none>
  return
}

// -----

func.func @floor_divide_dtype(%x: !relax.tensor<["n"], i32>, %y: !relax.tensor<["n"], i64>) {
  // expected-error@below {{'relax.floor_divide' op operands 'lhs' (i32) and 'rhs' (i64) have different dtypes}}
  %0 = "relax.floor_divide"(%x, %y) : (!relax.tensor<["n"], i32>, !relax.tensor<["n"], i64>) -> !relax.tensor<"*", none>
  return
}

// -----

// dtypes are checked even when the rank is unknown
func.func @mod_dtype(%x: !relax.tensor<"*", f16>, %y: !relax.tensor<["n"], f32>) {
  // expected-error@below {{operands 'lhs' (f16) and 'rhs' (f32) have different dtypes}}
  %0 = "relax.mod"(%x, %y) : (!relax.tensor<"*", f16>, !relax.tensor<["n"], f32>) -> !relax.tensor<"*", none>
  return
}

// -----

func.func @power_non_tensor(%x: !relax.tensor<["n"], f32>, %s: !relax.shape<["n"]>) {
  // expected-error@below {{'relax.power' op operand #1 (rhs) must be !relax.tensor, got !relax.shape<["n"]>}}
  %0 = "relax.power"(%x, %s) : (!relax.tensor<["n"], f32>, !relax.shape<["n"]>) -> !relax.tensor<"*", none>
  return
}

// -----

func.func @maximum_static(%x: !relax.tensor<[2, 1], f32>, %y: !relax.tensor<[3, 4], f32>) {
  // expected-error@below {{cannot broadcast 'lhs' [2, 1], 'rhs' [3, 4]: dim -2 is 2 vs 3}}
  %0 = "relax.maximum"(%x, %y) : (!relax.tensor<[2, 1], f32>, !relax.tensor<[3, 4], f32>) -> !relax.tensor<"*", none>
  return
}

// -----

func.func @minimum_object(%o: !relax.object, %y: !relax.tensor<[3], f32>) {
  // expected-error@below {{operand #0 (lhs) must be !relax.tensor, got !relax.object}}
  %0 = "relax.minimum"(%o, %y) : (!relax.object, !relax.tensor<[3], f32>) -> !relax.tensor<"*", none>
  return
}

// -----

// n vs m broadcast to a dim chosen at run time (either may be 1): declaring n is not provable
func.func @add_declared_too_precise(%x: !relax.tensor<["n"], f32>, %y: !relax.tensor<["m"], f32>) {
  // expected-error@below {{result #0 is declared !relax.tensor<["n"], f32> but the operands give !relax.tensor<["max(m, n) * min(min(m, n), 1)"], f32>: dim 0 is n, which is not provably equal to max(m, n) * min(min(m, n), 1)}}
  %0 = "relax.add"(%x, %y) : (!relax.tensor<["n"], f32>, !relax.tensor<["m"], f32>) -> !relax.tensor<["n"], f32>
  return
}

// -----

func.func @add_declared_wrong(%x: !relax.tensor<["n", 1], f32>, %y: !relax.tensor<[4], f32>) {
  // expected-error@below {{result #0 is declared !relax.tensor<["n", 5], f32> but the operands give !relax.tensor<["n", 4], f32>: dim 1 is 5 vs 4}}
  %0 = "relax.add"(%x, %y) : (!relax.tensor<["n", 1], f32>, !relax.tensor<[4], f32>) -> !relax.tensor<["n", 5], f32>
  return
}

// -----

func.func @equal_static(%x: !relax.tensor<[4], f32>, %y: !relax.tensor<[3], f32>) {
  // expected-error@below {{'relax.equal' op cannot broadcast 'lhs' [4], 'rhs' [3]: dim -1 is 4 vs 3}}
  %0 = "relax.equal"(%x, %y) : (!relax.tensor<[4], f32>, !relax.tensor<[3], f32>) -> !relax.tensor<"*", none>
  return
}

// -----

func.func @not_equal_dtype(%x: !relax.tensor<["n"], f32>, %y: !relax.tensor<["n"], i32>) {
  // expected-error@below {{'relax.not_equal' op operands 'lhs' (f32) and 'rhs' (i32) have different dtypes}}
  %0 = "relax.not_equal"(%x, %y) : (!relax.tensor<["n"], f32>, !relax.tensor<["n"], i32>) -> !relax.tensor<"*", none>
  return
}

// -----

func.func @less_symbolic(%x: !relax.tensor<["n", 2], f32>, %y: !relax.tensor<["n", 3], f32>) {
  // expected-error@below {{cannot broadcast 'lhs' ["n", 2], 'rhs' ["n", 3]: dim -1 is 2 vs 3}}
  %0 = "relax.less"(%x, %y) : (!relax.tensor<["n", 2], f32>, !relax.tensor<["n", 3], f32>) -> !relax.tensor<"*", none>
  return
}

// -----

func.func @less_equal_dtype(%x: !relax.tensor<"*", i1>, %y: !relax.tensor<[2], i8>) {
  // expected-error@below {{operands 'lhs' (i1) and 'rhs' (i8) have different dtypes}}
  %0 = "relax.less_equal"(%x, %y) : (!relax.tensor<"*", i1>, !relax.tensor<[2], i8>) -> !relax.tensor<"*", none>
  return
}

// -----

// comparisons give i1, so a declared f32 result is wrong
func.func @greater_result_dtype(%x: !relax.tensor<["n"], f32>, %y: !relax.tensor<["n"], f32>) {
  // expected-error@below {{result #0 is declared !relax.tensor<"*", f32> but the operands give !relax.tensor<["n"], i1>: dtype f32 vs i1}}
  %0 = "relax.greater"(%x, %y) : (!relax.tensor<["n"], f32>, !relax.tensor<["n"], f32>) -> !relax.tensor<"*", f32>
  return
}

// -----

func.func @greater_equal_prim(%x: !relax.tensor<["n"], f32>, %p: !relax.prim<"n">) {
  // expected-error@below {{operand #0 (lhs) must be !relax.tensor, got !relax.prim<"n">}}
  %0 = "relax.greater_equal"(%p, %x) : (!relax.prim<"n">, !relax.tensor<["n"], f32>) -> !relax.tensor<"*", none>
  return
}

// -----

func.func @logical_and_float(%x: !relax.tensor<["n"], f32>, %y: !relax.tensor<["n"], i1>) {
  // expected-error@below {{'relax.logical_and' op operand 'lhs' must have dtype i1, got f32}}
  %0 = "relax.logical_and"(%x, %y) : (!relax.tensor<["n"], f32>, !relax.tensor<["n"], i1>) -> !relax.tensor<"*", none>
  return
}

// -----

func.func @logical_or_int(%x: !relax.tensor<["n"], i1>, %y: !relax.tensor<"*", i32>) {
  // expected-error@below {{'relax.logical_or' op operand 'rhs' must have dtype i1, got i32}}
  %0 = "relax.logical_or"(%x, %y) : (!relax.tensor<["n"], i1>, !relax.tensor<"*", i32>) -> !relax.tensor<"*", none>
  return
}

// -----

func.func @logical_or_static(%x: !relax.tensor<[2], i1>, %y: !relax.tensor<[5], i1>) {
  // expected-error@below {{cannot broadcast 'lhs' [2], 'rhs' [5]: dim -1 is 2 vs 5}}
  %0 = "relax.logical_or"(%x, %y) : (!relax.tensor<[2], i1>, !relax.tensor<[5], i1>) -> !relax.tensor<"*", none>
  return
}

// -----

func.func @logical_not_float(%x: !relax.tensor<["n"], f16>) {
  // expected-error@below {{'relax.logical_not' op operand 'x' must have dtype i1, got f16}}
  %0 = "relax.logical_not"(%x) : (!relax.tensor<["n"], f16>) -> !relax.tensor<"*", none>
  return
}

// -----

func.func @exp_int(%x: !relax.tensor<["n"], i32>) {
  // expected-error@below {{'relax.exp' op operand 'x' must have a float dtype, got i32}}
  %0 = "relax.exp"(%x) : (!relax.tensor<["n"], i32>) -> !relax.tensor<"*", none>
  return
}

// -----

func.func @log_int(%x: !relax.tensor<[2, 3], i64>) {
  // expected-error@below {{'relax.log' op operand 'x' must have a float dtype, got i64}}
  %0 = "relax.log"(%x) : (!relax.tensor<[2, 3], i64>) -> !relax.tensor<"*", none>
  return
}

// -----

func.func @sqrt_int(%x: !relax.tensor<"*", i1>) {
  // expected-error@below {{'relax.sqrt' op operand 'x' must have a float dtype, got i1}}
  %0 = "relax.sqrt"(%x) : (!relax.tensor<"*", i1>) -> !relax.tensor<"*", none>
  return
}

// -----

func.func @rsqrt_int(%x: !relax.tensor<["?", 4], i8>) {
  // expected-error@below {{'relax.rsqrt' op operand 'x' must have a float dtype, got i8}}
  %0 = "relax.rsqrt"(%x) : (!relax.tensor<["?", 4], i8>) -> !relax.tensor<"*", none>
  return
}

// -----

func.func @tanh_int(%d: !relax.tensor<["n"], f32>, %x: !relax.tensor<["n + 1"], ui8>) {
  // expected-error@below {{'relax.tanh' op operand 'x' must have a float dtype, got ui8}}
  %0 = "relax.tanh"(%x) : (!relax.tensor<["n + 1"], ui8>) -> !relax.tensor<"*", none>
  return
}

// -----

func.func @sigmoid_int(%x: !relax.tensor<["n"], i32>) {
  // expected-error@below {{'relax.sigmoid' op operand 'x' must have a float dtype, got i32}}
  %0 = "relax.sigmoid"(%x) : (!relax.tensor<["n"], i32>) -> !relax.tensor<"*", none>
  return
}

// -----

func.func @erf_int(%x: !relax.tensor<[2, 3], i64>) {
  // expected-error@below {{'relax.erf' op operand 'x' must have a float dtype, got i64}}
  %0 = "relax.erf"(%x) : (!relax.tensor<[2, 3], i64>) -> !relax.tensor<"*", none>
  return
}

// -----

func.func @gelu_int(%x: !relax.tensor<"*", i1>) {
  // expected-error@below {{'relax.gelu' op operand 'x' must have a float dtype, got i1}}
  %0 = "relax.gelu"(%x) : (!relax.tensor<"*", i1>) -> !relax.tensor<"*", none>
  return
}

// -----

func.func @gelu_tanh_int(%x: !relax.tensor<["?", 4], i8>) {
  // expected-error@below {{'relax.gelu_tanh' op operand 'x' must have a float dtype, got i8}}
  %0 = "relax.gelu_tanh"(%x) : (!relax.tensor<["?", 4], i8>) -> !relax.tensor<"*", none>
  return
}

// -----

func.func @silu_int(%d: !relax.tensor<["n"], f32>, %x: !relax.tensor<["n + 1"], ui8>) {
  // expected-error@below {{'relax.silu' op operand 'x' must have a float dtype, got ui8}}
  %0 = "relax.silu"(%x) : (!relax.tensor<["n + 1"], ui8>) -> !relax.tensor<"*", none>
  return
}

// -----

func.func @sin_int(%x: !relax.tensor<["n"], i32>) {
  // expected-error@below {{'relax.sin' op operand 'x' must have a float dtype, got i32}}
  %0 = "relax.sin"(%x) : (!relax.tensor<["n"], i32>) -> !relax.tensor<"*", none>
  return
}

// -----

func.func @cos_int(%x: !relax.tensor<[2, 3], i64>) {
  // expected-error@below {{'relax.cos' op operand 'x' must have a float dtype, got i64}}
  %0 = "relax.cos"(%x) : (!relax.tensor<[2, 3], i64>) -> !relax.tensor<"*", none>
  return
}

// -----

func.func @floor_int(%x: !relax.tensor<"*", i1>) {
  // expected-error@below {{'relax.floor' op operand 'x' must have a float dtype, got i1}}
  %0 = "relax.floor"(%x) : (!relax.tensor<"*", i1>) -> !relax.tensor<"*", none>
  return
}

// -----

func.func @ceil_int(%x: !relax.tensor<["?", 4], i8>) {
  // expected-error@below {{'relax.ceil' op operand 'x' must have a float dtype, got i8}}
  %0 = "relax.ceil"(%x) : (!relax.tensor<["?", 4], i8>) -> !relax.tensor<"*", none>
  return
}

// -----

func.func @round_int(%d: !relax.tensor<["n"], f32>, %x: !relax.tensor<["n + 1"], ui8>) {
  // expected-error@below {{'relax.round' op operand 'x' must have a float dtype, got ui8}}
  %0 = "relax.round"(%x) : (!relax.tensor<["n + 1"], ui8>) -> !relax.tensor<"*", none>
  return
}

// -----

func.func @relu_shape(%s: !relax.shape<["n"]>) {
  // expected-error@below {{'relax.relu' op operand #0 (x) must be !relax.tensor, got !relax.shape<["n"]>}}
  %0 = "relax.relu"(%s) : (!relax.shape<["n"]>) -> !relax.tensor<"*", none>
  return
}

// -----

func.func @neg_declared_dtype(%x: !relax.tensor<["n"], i32>) {
  // expected-error@below {{result #0 is declared !relax.tensor<["n"], f32> but the operands give !relax.tensor<["n"], i32>: dtype f32 vs i32}}
  %0 = "relax.neg"(%x) : (!relax.tensor<["n"], i32>) -> !relax.tensor<["n"], f32>
  return
}

// -----

func.func @abs_declared_rank(%x: !relax.tensor<["n", 2], f32>) {
  // expected-error@below {{result #0 is declared !relax.tensor<["n"], f32> but the operands give !relax.tensor<["n", 2], f32>: rank 1 ["n"] vs 2 ["n", 2]}}
  %0 = "relax.abs"(%x) : (!relax.tensor<["n", 2], f32>) -> !relax.tensor<["n"], f32>
  return
}

// -----

func.func @sign_unknown_rank(%x: !relax.tensor<"*", f32>) {
  // expected-error@below {{result #0 is declared !relax.tensor<[3], f32> but the operands give !relax.tensor<"*", f32>: the rank cannot be deduced (use relax.match_cast to state it)}}
  %0 = "relax.sign"(%x) : (!relax.tensor<"*", f32>) -> !relax.tensor<[3], f32>
  return
}

// -----

func.func @leaky_relu_int(%x: !relax.tensor<["n"], i32>) {
  // expected-error@below {{'relax.leaky_relu' op operand 'x' must have a float dtype, got i32}}
  %0 = "relax.leaky_relu"(%x) {alpha = 1.000000e-01 : f64} : (!relax.tensor<["n"], i32>) -> !relax.tensor<"*", none>
  return
}

// -----

func.func @leaky_relu_alpha_kind(%x: !relax.tensor<["n"], f32>) {
  // expected-error@below {{'relax.leaky_relu' op attribute 'alpha' must be a float, got 1 : i64}}
  %0 = "relax.leaky_relu"(%x) {alpha = 1 : i64} : (!relax.tensor<["n"], f32>) -> !relax.tensor<"*", none>
  return
}

// -----

func.func @clip_range(%x: !relax.tensor<["n"], f32>) {
  // expected-error@below {{'relax.clip' op min 1.0 is greater than max 0.0}}
  %0 = "relax.clip"(%x) {max = 0.0 : f64, min = 1.0 : f64} : (!relax.tensor<["n"], f32>) -> !relax.tensor<"*", none>
  return
}

// -----

func.func @clip_nan(%x: !relax.tensor<["n"], f32>) {
  // expected-error@below {{'relax.clip' op min nan and max 6.0 must not be NaN}}
  %0 = "relax.clip"(%x) {max = 6.0 : f64, min = 0x7FF8000000000000 : f64} : (!relax.tensor<["n"], f32>) -> !relax.tensor<"*", none>
  return
}

// -----

func.func @clip_missing(%x: !relax.tensor<["n"], f32>) {
  // expected-error@below {{'relax.clip' op requires attribute 'max' (a float)}}
  %0 = "relax.clip"(%x) {min = 0.0 : f64} : (!relax.tensor<["n"], f32>) -> !relax.tensor<"*", none>
  return
}

// -----

func.func @where_cond_dtype(%c: !relax.tensor<["n"], f32>, %x: !relax.tensor<["n"], f32>) {
  // expected-error@below {{'relax.where' op operand 'cond' must have dtype i1, got f32}}
  %0 = "relax.where"(%c, %x, %x) : (!relax.tensor<["n"], f32>, !relax.tensor<["n"], f32>, !relax.tensor<["n"], f32>) -> !relax.tensor<"*", none>
  return
}

// -----

func.func @where_dtype(%c: !relax.tensor<["n"], i1>, %x: !relax.tensor<["n"], f32>, %y: !relax.tensor<[1], f16>) {
  // expected-error@below {{'relax.where' op operands 'x' (f32) and 'y' (f16) have different dtypes}}
  %0 = "relax.where"(%c, %x, %y) : (!relax.tensor<["n"], i1>, !relax.tensor<["n"], f32>, !relax.tensor<[1], f16>) -> !relax.tensor<"*", none>
  return
}

// -----

func.func @where_broadcast(%c: !relax.tensor<["n", 4], i1>, %x: !relax.tensor<[4], f32>, %y: !relax.tensor<[2, "m", 3], f32>) {
  // expected-error@below {{'relax.where' op cannot broadcast 'cond' ["n", 4], 'x' [4], 'y' [2, "m", 3]: dim -1 is 4 vs 3}}
  %0 = "relax.where"(%c, %x, %y) : (!relax.tensor<["n", 4], i1>, !relax.tensor<[4], f32>, !relax.tensor<[2, "m", 3], f32>) -> !relax.tensor<"*", none>
  return
}

// -----

func.func @where_tuple(%c: !relax.tensor<["n"], i1>, %t: !relax.tuple<[!relax.tensor<["n"], f32>]>) {
  // expected-error@below {{operand #1 (x) must be !relax.tensor, got !relax.tuple<[!relax.tensor<["n"], f32>]>}}
  %0 = "relax.where"(%c, %t, %c) : (!relax.tensor<["n"], i1>, !relax.tuple<[!relax.tensor<["n"], f32>]>, !relax.tensor<["n"], i1>) -> !relax.tensor<"*", none>
  return
}

// -----

func.func @astype_dtype(%x: !relax.tensor<["n"], f32>) {
  // expected-error@below {{'relax.astype' op unknown dtype 'float16'; expected one of bf16, f16, f32, f4E2M1FN, f64, f8E4M3FN, f8E4M3FNUZ, f8E5M2, f8E5M2FNUZ, f8E8M0FNU, i1, i16, i2, i32, i4, i64, i8, ui16, ui2, ui32, ui4, ui64, ui8}}
  %0 = "relax.astype"(%x) {dtype = "float16"} : (!relax.tensor<["n"], f32>) -> !relax.tensor<"*", none>
  return
}

// -----

func.func @astype_declared(%x: !relax.tensor<["n", 2], f32>) {
  // expected-error@below {{result #0 is declared !relax.tensor<["n", 2], f16> but the operands give !relax.tensor<["n", 2], i32>: dtype f16 vs i32}}
  %0 = "relax.astype"(%x) {dtype = "i32"} : (!relax.tensor<["n", 2], f32>) -> !relax.tensor<["n", 2], f16>
  return
}

// -----

func.func @astype_kind(%x: !relax.tensor<["n"], f32>) {
  // expected-error@below {{'relax.astype' op attribute 'dtype' must be a string, got f16}}
  %0 = "relax.astype"(%x) {dtype = f16} : (!relax.tensor<["n"], f32>) -> !relax.tensor<"*", none>
  return
}

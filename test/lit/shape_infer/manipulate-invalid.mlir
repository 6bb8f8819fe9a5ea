// relax-verify: ill-typed manipulation and indexing ops (manipulate.py, index.py) give a diagnostic at the op.
// RUN: relax-opt %s --split-input-file --verify-diagnostics --relax-verify

func.func @reshape_count(%a0: !relax.tensor<[6, 4], f32>) {
  // expected-error@below {{'relax.reshape' op cannot reshape [6, 4] (24 elements) to [5, -1]}}
  %0 = "relax.reshape"(%a0) {shape = [5, -1]} : (!relax.tensor<[6, 4], f32>) -> !relax.tensor<"*", f32>
  return
}

// -----

func.func @reshape_copy_missing_dim(%a0: !relax.tensor<["n", 4], f32>) {
  // expected-error@below {{'relax.reshape' op shape entry 0 at position 2 copies an input dim that does not exist in ["n", 4]}}
  %0 = "relax.reshape"(%a0) {shape = [0, 0, 0]} : (!relax.tensor<["n", 4], f32>) -> !relax.tensor<"*", f32>
  return
}

// -----

func.func @permute_dims_rank(%a0: !relax.tensor<["b", "s", 64], f32>) {
  // expected-error@below {{'relax.permute_dims' op axes [1, 0] do not match the rank 3 of 'x' ["b", "s", 64]}}
  %0 = "relax.permute_dims"(%a0) {axes = [1, 0]} : (!relax.tensor<["b", "s", 64], f32>) -> !relax.tensor<"*", f32>
  return
}

// -----

func.func @permute_dims_unknown_rank_repeat(%a0: !relax.tensor<"*", f32>) {
  // expected-error@below {{'relax.permute_dims' op axes [1, 1] repeat an axis}}
  %0 = "relax.permute_dims"(%a0) {axes = [1, 1]} : (!relax.tensor<"*", f32>) -> !relax.tensor<"*", f32>
  return
}

// -----

func.func @expand_dims_range(%a0: !relax.tensor<["n", 4], f32>) {
  // expected-error@below {{'relax.expand_dims' op axes 3 is out of range for rank 3}}
  %0 = "relax.expand_dims"(%a0) {axes = [3]} : (!relax.tensor<["n", 4], f32>) -> !relax.tensor<"*", f32>
  return
}

// -----

func.func @squeeze_not_one(%a0: !relax.tensor<["n", 3], f32>) {
  // expected-error@below {{'relax.squeeze' op cannot squeeze axis 1 of ["n", 3]: its size is 3, not 1}}
  %0 = "relax.squeeze"(%a0) {axes = [-1]} : (!relax.tensor<["n", 3], f32>) -> !relax.tensor<"*", f32>
  return
}

// -----

func.func @flatten_order(%a0: !relax.tensor<[2, 3, 4], f32>) {
  // expected-error@below {{'relax.flatten' op start_axis 1 is after end_axis 0}}
  %0 = "relax.flatten"(%a0) {end_axis = 0 : i64, start_axis = 1 : i64} : (!relax.tensor<[2, 3, 4], f32>) -> !relax.tensor<"*", f32>
  return
}

// -----

func.func @concat_other_dim(%a0: !relax.tensor<["n", 4], f32>, %a1: !relax.tensor<["m", 5], f32>) {
  // expected-error@below {{'relax.concat' op dim 1 of xs[0] and xs[1] differ: 4 vs 5}}
  %0 = "relax.concat"(%a0, %a1) {axis = 0 : i64} : (!relax.tensor<["n", 4], f32>, !relax.tensor<["m", 5], f32>) -> !relax.tensor<"*", f32>
  return
}

// -----

func.func @concat_rank(%a0: !relax.tensor<["n", 4], f32>, %a1: !relax.tensor<["n"], f32>) {
  // expected-error@below {{'relax.concat' op operands have different ranks [1, 2]}}
  %0 = "relax.concat"(%a0, %a1) {axis = 0 : i64} : (!relax.tensor<["n", 4], f32>, !relax.tensor<["n"], f32>) -> !relax.tensor<"*", f32>
  return
}

// -----

func.func @split_sections(%a0: !relax.tensor<["n", 7], f32>) {
  // expected-error@below {{'relax.split' op dim 1 of size 7 does not split into 2 equal sections}}
  %0:2 = "relax.split"(%a0) {axis = 1 : i64, indices = [], sections = 2 : i64} : (!relax.tensor<["n", 7], f32>) -> (!relax.tensor<"*", f32>, !relax.tensor<"*", f32>)
  return
}

// -----

func.func @split_indices(%a0: !relax.tensor<[8], f32>) {
  // expected-error@below {{'relax.split' op split indices [4, 2] must be non-negative and increasing}}
  %0:3 = "relax.split"(%a0) {axis = 0 : i64, indices = [4, 2], sections = 0 : i64} : (!relax.tensor<[8], f32>) -> (!relax.tensor<"*", f32>, !relax.tensor<"*", f32>, !relax.tensor<"*", f32>)
  return
}

// -----

func.func @split_nothing(%a0: !relax.tensor<[8], f32>) {
  // expected-error@below {{'relax.split' op give split indices or a positive number of sections}}
  %0 = "relax.split"(%a0) {axis = 0 : i64, indices = [], sections = 0 : i64} : (!relax.tensor<[8], f32>) -> !relax.tensor<"*", f32>
  return
}

// -----

func.func @broadcast_to_incompatible(%a0: !relax.tensor<[3, 1], f32>) {
  // expected-error@below {{'relax.broadcast_to' op cannot broadcast [3, 1] to ["b", 4, 4] at dim -2}}
  %0 = "relax.broadcast_to"(%a0) {shape = ["b", 4, 4]} : (!relax.tensor<[3, 1], f32>) -> !relax.tensor<"*", f32>
  return
}

// -----

func.func @broadcast_to_negative(%a0: !relax.tensor<[1], f32>) {
  // expected-error@below {{'relax.broadcast_to' op shape entry -1 at position 0 is negative}}
  %0 = "relax.broadcast_to"(%a0) {shape = [-1]} : (!relax.tensor<[1], f32>) -> !relax.tensor<"*", f32>
  return
}

// -----

func.func @tile_negative(%a0: !relax.tensor<["n", 4], f32>) {
  // expected-error@below {{'relax.tile' op repeats [-2] must be non-negative}}
  %0 = "relax.tile"(%a0) {repeats = [-2]} : (!relax.tensor<["n", 4], f32>) -> !relax.tensor<"*", f32>
  return
}

// -----

func.func @repeat_axis(%a0: !relax.tensor<["n", 4], f32>) {
  // expected-error@below {{'relax.repeat' op axis 2 is out of range for rank 2}}
  %0 = "relax.repeat"(%a0) {axis = [2], repeats = 2 : i64} : (!relax.tensor<["n", 4], f32>) -> !relax.tensor<"*", f32>
  return
}

// -----

func.func @pad_width_count(%a0: !relax.tensor<["n", 4], f32>) {
  // expected-error@below {{'relax.pad' op pad_width needs 4 entries for rank 2, got 2}}
  %0 = "relax.pad"(%a0) {mode = "constant", pad_width = [1, 1], value = 0.0 : f64} : (!relax.tensor<["n", 4], f32>) -> !relax.tensor<"*", f32>
  return
}

// -----

func.func @pad_crop(%a0: !relax.tensor<[2], f32>) {
  // expected-error@below {{'relax.pad' op pad_width -2, -1 of dim 0 removes more than its size 2}}
  %0 = "relax.pad"(%a0) {mode = "constant", pad_width = [-2, -1], value = 0.0 : f64} : (!relax.tensor<[2], f32>) -> !relax.tensor<"*", f32>
  return
}

// -----

func.func @pad_mode(%a0: !relax.tensor<[2], f32>) {
  // expected-error@below {{'relax.pad' op unknown pad mode 'symmetric'; expected one of constant, edge, reflect, wrap}}
  %0 = "relax.pad"(%a0) {mode = "symmetric", pad_width = [1, 1], value = 0.0 : f64} : (!relax.tensor<[2], f32>) -> !relax.tensor<"*", f32>
  return
}

// -----

func.func @tril_rank(%a0: !relax.tensor<["s"], f32>) {
  // expected-error@below {{'relax.tril' op operand 'x' must have rank >= 2, got ["s"]}}
  %0 = "relax.tril"(%a0) {k = 0 : i64} : (!relax.tensor<["s"], f32>) -> !relax.tensor<"*", f32>
  return
}

// -----

func.func @triu_rank(%a0: !relax.tensor<[], f32>) {
  // expected-error@below {{'relax.triu' op operand 'x' must have rank >= 2, got []}}
  %0 = "relax.triu"(%a0) {k = 1 : i64} : (!relax.tensor<[], f32>) -> !relax.tensor<"*", f32>
  return
}

// -----

func.func @strided_slice_stride(%a0: !relax.tensor<["n"], f32>) {
  // expected-error@below {{'relax.strided_slice' op stride of axis 0 is 0}}
  %0 = "relax.strided_slice"(%a0) {axes = [0], begin = [0], end = [4], strides = [0]} : (!relax.tensor<["n"], f32>) -> !relax.tensor<"*", f32>
  return
}

// -----

func.func @strided_slice_lengths(%a0: !relax.tensor<["n", 4], f32>) {
  // expected-error@below {{'relax.strided_slice' op axes, begin, end and strides need equal lengths, got 2, 1, 1, 1}}
  %0 = "relax.strided_slice"(%a0) {axes = [0, 1], begin = [0], end = [4], strides = [1]} : (!relax.tensor<["n", 4], f32>) -> !relax.tensor<"*", f32>
  return
}

// -----

func.func @take_indices_dtype(%a0: !relax.tensor<[5, 4], f32>, %a1: !relax.tensor<["n"], f32>) {
  // expected-error@below {{'relax.take' op operand 'indices' must have an integer dtype (i32 or i64), got f32}}
  %0 = "relax.take"(%a0, %a1) {axis = 0 : i64} : (!relax.tensor<[5, 4], f32>, !relax.tensor<["n"], f32>) -> !relax.tensor<"*", f32>
  return
}

// -----

func.func @take_axis(%a0: !relax.tensor<[5, 4], f32>, %a1: !relax.tensor<"*", i64>) {
  // expected-error@below {{'relax.take' op axis 2 is out of range for rank 2}}
  %0 = "relax.take"(%a0, %a1) {axis = 2 : i64} : (!relax.tensor<[5, 4], f32>, !relax.tensor<"*", i64>) -> !relax.tensor<"*", f32>
  return
}

// -----

func.func @gather_elements_rank(%a0: !relax.tensor<[3, 4], f32>, %a1: !relax.tensor<["n"], i64>) {
  // expected-error@below {{'relax.gather_elements' op 'x' [3, 4] and 'indices' ["n"] must have the same rank}}
  %0 = "relax.gather_elements"(%a0, %a1) {axis = 0 : i64} : (!relax.tensor<[3, 4], f32>, !relax.tensor<["n"], i64>) -> !relax.tensor<"*", f32>
  return
}

// -----

func.func @gather_elements_larger(%a0: !relax.tensor<[3, 4], f32>, %a1: !relax.tensor<[5, 2], i64>) {
  // expected-error@below {{'relax.gather_elements' op dim 0 of 'indices' [5, 2] is 5, larger than 3 of 'x' [3, 4]}}
  %0 = "relax.gather_elements"(%a0, %a1) {axis = 1 : i64} : (!relax.tensor<[3, 4], f32>, !relax.tensor<[5, 2], i64>) -> !relax.tensor<"*", f32>
  return
}

// -----

func.func @scatter_elements_updates(%a0: !relax.tensor<["n", 4], f32>, %a1: !relax.tensor<[2, 4], i64>, %a2: !relax.tensor<[2, 3], f32>) {
  // expected-error@below {{'relax.scatter_elements' op dim 1 of 'indices' and 'updates' differ: 4 vs 3}}
  %0 = "relax.scatter_elements"(%a0, %a1, %a2) {axis = 0 : i64, reduction = "none"} : (!relax.tensor<["n", 4], f32>, !relax.tensor<[2, 4], i64>, !relax.tensor<[2, 3], f32>) -> !relax.tensor<"*", f32>
  return
}

// -----

func.func @scatter_elements_dtype(%a0: !relax.tensor<["n", 4], f32>, %a1: !relax.tensor<[2, 4], i64>, %a2: !relax.tensor<[2, 4], f16>) {
  // expected-error@below {{'relax.scatter_elements' op operands 'x' (f32) and 'updates' (f16) have different dtypes}}
  %0 = "relax.scatter_elements"(%a0, %a1, %a2) {axis = 0 : i64, reduction = "none"} : (!relax.tensor<["n", 4], f32>, !relax.tensor<[2, 4], i64>, !relax.tensor<[2, 4], f16>) -> !relax.tensor<"*", f32>
  return
}

// -----

func.func @concat_declared_wrong(%a0: !relax.tensor<["m", 4], f32>) {
  // expected-error@below {{'relax.concat' op result #0 is declared !relax.tensor<["m", 4], f32> but the operands give !relax.tensor<["2 * m", 4], f32>: dim 0 is m, which is not provably equal to 2 * m}}
  %0 = "relax.concat"(%a0, %a0) {axis = 0 : i64} : (!relax.tensor<["m", 4], f32>, !relax.tensor<["m", 4], f32>) -> !relax.tensor<["m", 4], f32>
  return
}

// -----

func.func @strided_slice_declared_unclamped(%a0: !relax.tensor<["n"], f32>) {
  // expected-error@below {{'relax.strided_slice' op result #0 is declared !relax.tensor<["n - 2"], f32> but the operands give !relax.tensor<["max(n - 2, 0)"], f32>: dim 0 is n - 2, which is not provably equal to max(n - 2, 0)}}
  %0 = "relax.strided_slice"(%a0) {axes = [0], begin = [1], end = [-1], strides = [1]} : (!relax.tensor<["n"], f32>) -> !relax.tensor<["n - 2"], f32>
  return
}

// -----

func.func @split_sections_count(%x: !relax.tensor<[6], f32>) {
  // expected-error@below {{'relax.split' op has 2 results but its operands and attributes give 3}}
  %0:2 = "relax.split"(%x) {axis = 0 : i64, indices = [], sections = 3 : i64} : (!relax.tensor<[6], f32>) -> (!relax.tensor<[2], f32>, !relax.tensor<[2], f32>)
  return
}

// Malformed relax types and ops give located diagnostics.
// RUN: relax-opt %s --split-input-file --verify-diagnostics

// expected-error@+1 {{cannot parse relax type '!relax.tuple<3>': expected '['}}
func.func @not_a_tuple(%a: !relax.tuple<3>) {
  return
}

// -----

// expected-error@+1 {{expected a dim (integer or quoted expression)}}
func.func @prim_value(%a: !relax.prim<n>) {
  return
}

// -----

// expected-error@+1 {{unknown relax type '!relax.tensr'}}
func.func @unknown_type(%a: !relax.tensr<["n"], f32>) {
  return
}

// -----

// expected-error@+1 {{cannot parse dim expression "n +": unexpected end of input at column 4}}
func.func @bad_dim(%a: !relax.tensor<["n +"], f32>) {
  return
}

// -----

// expected-error@+1 {{negative dim -3}}
func.func @negative_dim(%a: !relax.tensor<[-3], f32>) {
  return
}

// -----

// expected-error@+1 {{result #0 of the function type: cannot parse relax type}}
func.func private @bad_result(%a: !relax.tensor<["n"], f32>) -> !relax.tensor<["n"]>

// -----

func.func @undefined_value(%x: !relax.tensor<["n"], f32>) -> !relax.tensor<["n"], f32> {
  // expected-error@+1 {{use of undeclared SSA value name}}
  return %y : !relax.tensor<["n"], f32>
}

// -----

func.func @unknown_op(%x: !relax.tensor<["n"], f32>) {
  // expected-error@+1 {{unregistered operation 'relax.frobnicate' in dialect 'relax'}}
  %0 = "relax.frobnicate"(%x) : (!relax.tensor<["n"], f32>) -> !relax.tensor<["n"], f32>
  return
}

// -----

func.func @unknown_dialect(%x: !relax.tensor<["n"], f32>) {
  // expected-error@+1 {{unregistered operation 'foo.bar' (unknown dialect 'foo')}}
  "foo.bar"(%x) : (!relax.tensor<["n"], f32>) -> ()
  return
}

// -----

func.func @wrong_operand_count(%x: !relax.tensor<["n"], f32>) {
  // expected-error@+1 {{'relax.add' op expects 2 operands, but got 1}}
  %0 = "relax.add"(%x) : (!relax.tensor<["n"], f32>) -> !relax.tensor<["n"], f32>
  return
}

// -----

func.func @wrong_result_count(%x: !relax.tensor<["n"], f32>) {
  // expected-error@+1 {{'relax.exp' op expects 1 results, but got 2}}
  %0:2 = "relax.exp"(%x) : (!relax.tensor<["n"], f32>) -> (!relax.tensor<["n"], f32>, !relax.tensor<["n"], f32>)
  return
}

// -----

func.func @operand_not_tensor(%s: !relax.shape<["n"]>) {
  // expected-error@+1 {{'relax.exp' op operand #0 (x) must be !relax.tensor, got !relax.shape<["n"]>}}
  %0 = "relax.exp"(%s) : (!relax.shape<["n"]>) -> !relax.tensor<["n"], f32>
  return
}

// -----

func.func @operand_not_relax(%s: tensor<4xf32>) {
  // expected-error@+1 {{'relax.exp' op operand #0 (x) must be a relax type, got tensor<4xf32>}}
  %0 = "relax.exp"(%s) : (tensor<4xf32>) -> !relax.tensor<[4], f32>
  return
}

// -----

func.func @missing_attr(%x: !relax.tensor<["n", 4], f32>) {
  // expected-error@+1 {{'relax.reshape' op requires attribute 'shape' (an array of integers and dim strings)}}
  %0 = "relax.reshape"(%x) : (!relax.tensor<["n", 4], f32>) -> !relax.tensor<["n", 4], f32>
  return
}

// -----

func.func @wrong_attr_kind(%x: !relax.tensor<["n", 4], f32>) {
  // expected-error@+1 {{'relax.permute_dims' op attribute 'axes' must be an array of integers or unit, got "x"}}
  %0 = "relax.permute_dims"(%x) {axes = "x"} : (!relax.tensor<["n", 4], f32>) -> !relax.tensor<[4, "n"], f32>
  return
}

// -----

func.func @dataflow_escape(%x: !relax.tensor<["n"], f32>) -> !relax.tensor<["n"], f32> {
  %r = scf.execute_region -> !relax.tensor<["n"], f32> {
    %0 = "relax.exp"(%x) : (!relax.tensor<["n"], f32>) -> !relax.tensor<["n"], f32>
    scf.yield %0 : !relax.tensor<["n"], f32>
  } {no_inline, relax.dataflow}
  // expected-error@+1 {{use of undeclared SSA value name}}
  return %0 : !relax.tensor<["n"], f32>
}

// -----

// Static dims whose bytes overflow int64 (2**62 x 4 x 4 bytes): MLIR would abort computing strides.
// expected-error@+1 {{argument #0: invalid relax type '!relax.tensor<[4611686018427387904, 4], f32>': its static dims take 73786976294838206464 bytes}}
func.func @too_large(%a: !relax.tensor<[4611686018427387904, 4], f32>) {
  return
}

// -----

// An unknown dtype, even on an unused parameter.
// expected-error@+1 {{argument #1: invalid relax type '!relax.tensor<[4], f33>': unknown dtype 'f33'}}
func.func @unknown_dtype(%a: !relax.tensor<[4], f32>, %b: !relax.tensor<[4], f33>) {
  return
}

// -----

// expected-error@+1 {{unknown dtype 'float'}}
func.func @c_dtype(%a: !relax.tensor<[4], float>) {
  return
}

// -----

// A negative dim spelled as an expression.
// expected-error@+1 {{invalid relax type '!relax.tensor<["-3"], f32>': negative dim -3}}
func.func @negative_expression(%a: !relax.tensor<["-3"], f32>) {
  return
}

// RUN: relax-opt %s --relax-lower-host --split-input-file --verify-diagnostics

func.func @not_lowered(%x: !relax.tensor<["n"], f32>) -> !relax.tensor<["n"], f32> {
  // expected-error@below {{'relax.exp' op cannot be lowered to host code (run convert-relax-to-linalg first)}}
  %0 = "relax.exp"(%x) : (!relax.tensor<["n"], f32>) -> !relax.tensor<["n"], f32>
  return %0 : !relax.tensor<["n"], f32>
}

// -----

// expected-error@below {{@object_param: #0 of type !relax.object cannot be passed to compiled code}}
func.func @object_param(%x: !relax.object) -> !relax.object {
  return %x : !relax.object
}

// -----

func.func private @k(%a: tensor<?xf32>, %out: tensor<?xf32>) -> tensor<?xf32>

func.func @shape_argument(%x: !relax.tensor<["n"], f32>, %s: !relax.shape<["n"]>) -> !relax.tensor<["n"], f32> {
  // expected-error@below {{'relax.call_tir' op: only tensor and prim arguments can be passed to kernels}}
  %0 = "relax.call_tir"(%x, %s) {callee = @k} : (!relax.tensor<["n"], f32>, !relax.shape<["n"]>) -> !relax.tensor<["n"], f32>
  return %0 : !relax.tensor<["n"], f32>
}

// RUN: relax-opt %s --relax-verify --relax-lift-load-time-params --split-input-file --verify-diagnostics

// expected-error@below {{'relax.load_time_params' names 'v', which is not a parameter of @f (parameters: x, w)}}
func.func @f(%x: !relax.tensor<[2], f32> {relax.name = "x"}, %w: !relax.tensor<[2], f32> {relax.name = "w"}) -> !relax.tensor<[2], f32> attributes {relax.load_time_params = ["v"]} {
  return %x : !relax.tensor<[2], f32>
}

// -----

// expected-error@below {{load-time parameter 'n' of @f must be a tensor, got !relax.prim<"n">}}
func.func @f(%n: !relax.prim<"n"> {relax.name = "n"}) -> !relax.prim<"n"> attributes {relax.load_time_params = ["n"]} {
  return %n : !relax.prim<"n">
}

// -----

// expected-error@below {{'relax.load_time_params' must be a list of parameter names like ["w"]}}
func.func @f(%w: !relax.tensor<[2], f32>) -> !relax.tensor<[2], f32> attributes {relax.load_time_params = "w"} {
  return %w : !relax.tensor<[2], f32>
}

// -----

func.func private @layer(%x: !relax.tensor<[3], f32> {relax.name = "x"}, %w: !relax.tensor<[3], f32> {relax.name = "w"}) -> !relax.tensor<[3], f32> attributes {relax.load_time_params = ["w"]} {
  %e = "relax.exp"(%w) : (!relax.tensor<[3], f32>) -> !relax.tensor<[3], f32>
  %y = "relax.add"(%x, %e) : (!relax.tensor<[3], f32>, !relax.tensor<[3], f32>) -> !relax.tensor<[3], f32>
  return %y : !relax.tensor<[3], f32>
}
func.func @main(%x: !relax.tensor<[3], f32> {relax.name = "x"}) -> !relax.tensor<[3], f32> {
  // expected-error@below {{relax-lift-load-time-params: @main passes a value computed at run time to load-time parameter 'w' of @layer}}
  %y = "relax.call"(%x, %x) {callee = @layer} : (!relax.tensor<[3], f32>, !relax.tensor<[3], f32>) -> !relax.tensor<[3], f32>
  return %y : !relax.tensor<[3], f32>
}

// -----

func.func @a(%w: !relax.tensor<[2], f32> {relax.name = "w"}) -> !relax.tensor<[2], f32> attributes {relax.load_time_params = ["w"]} {
  return %w : !relax.tensor<[2], f32>
}
// expected-error@below {{load-time parameter 'w' of @b has type !relax.tensor<[3], f32>, but another function's 'w' has !relax.tensor<[2], f32> (one name, one weight)}}
func.func @b(%w: !relax.tensor<[3], f32> {relax.name = "w"}) -> !relax.tensor<[3], f32> attributes {relax.load_time_params = ["w"]} {
  return %w : !relax.tensor<[3], f32>
}

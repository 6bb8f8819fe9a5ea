// Upstream ops whose custom parser would abort the process on a malformed attribute are rejected,
// with a located diagnostic, before MLIR sees the text.
// RUN: relax-opt %s --split-input-file --verify-diagnostics

func.func @int_iterator(%x: memref<?xf32>, %y: memref<?xf32>) {
  // expected-error@+1 {{'linalg.generic' expects 'iterator_types' to be a list of strings}}
  linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = [-3]}
      ins(%x : memref<?xf32>) outs(%y : memref<?xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  }
  return
}

// -----

#trait = {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>],
// expected-error@+1 {{'linalg.generic' expects 'iterator_types' to be a list of strings}}
          iterator_types = [#linalg.iterator_type<parallel>]}
func.func @enum_iterator_in_alias(%x: memref<?xf32>, %y: memref<?xf32>) {
  linalg.generic #trait ins(%x : memref<?xf32>) outs(%y : memref<?xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  }
  return
}

// -----

func.func @nested_iterator(%a: vector<4xf32>, %b: vector<4xf32>, %c: f32) -> f32 {
  // expected-error@+1 {{'vector.contract' expects 'iterator_types' to be a list of strings}}
  %r = vector.contract {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>, affine_map<(d0) -> ()>], iterator_types = [["reduction"]], kind = #vector.kind<add>} %a, %b, %c : vector<4xf32>, vector<4xf32> into f32
  return %r : f32
}

// -----

// The generic form and a well-formed custom form still parse (and MLIR checks the rest).
func.func @fine(%x: memref<?xf32>, %y: memref<?xf32>) {
  // expected-error@+2 {{unexpected iterator_type (foo)}}
  linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["foo"]}
      ins(%x : memref<?xf32>) outs(%y : memref<?xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  }
  return
}

// -----

func.func @generic_form(%x: memref<?xf32>, %y: memref<?xf32>) {
  // expected-error@+1 {{failed to satisfy constraint: Iterator type should be an enum}}
  "linalg.generic"(%x, %y) <{indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = [1], operandSegmentSizes = array<i32: 1, 1>}> ({
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  }) : (memref<?xf32>, memref<?xf32>) -> ()
  return
}

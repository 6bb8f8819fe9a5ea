// relax-infer-shapes on the manipulation and indexing ops (manipulate.py, index.py): static, symbolic,
// unknown-dim and unknown-rank operands; each op is declared with a coarse result and refined.
// RUN: relax-opt %s --relax-infer-shapes | FileCheck %s
// RUN: relax-opt %s --relax-infer-shapes | relax-opt --relax-infer-shapes --relax-verify | FileCheck %s

// CHECK-LABEL: func.func @reshape_static
// CHECK: "relax.reshape"{{.*}} -> !relax.tensor<[4, 6], f32>{{$}}
// CHECK: "relax.reshape"{{.*}} -> !relax.tensor<[2, 12], f32>{{$}}
// CHECK: "relax.reshape"{{.*}} -> !relax.tensor<[1, 1], f32>{{$}}
func.func @reshape_static(%a0: !relax.tensor<[2, 3, 4], f32>, %a1: !relax.tensor<[], f32>) {
  %0 = "relax.reshape"(%a0) {shape = [4, -1]} : (!relax.tensor<[2, 3, 4], f32>) -> !relax.tensor<"*", f32>
  %1 = "relax.reshape"(%a0) {shape = [0, -1]} : (!relax.tensor<[2, 3, 4], f32>) -> !relax.tensor<"*", f32>
  %2 = "relax.reshape"(%a1) {shape = [1, 1]} : (!relax.tensor<[], f32>) -> !relax.tensor<"*", f32>
  return
}

// CHECK-LABEL: func.func @reshape_symbolic
// CHECK: "relax.reshape"{{.*}} -> !relax.tensor<["b", "s", 8, 64], f32>{{$}}
// CHECK: "relax.reshape"{{.*}} -> !relax.tensor<["b", "s", 8, 64], f32>{{$}}
// CHECK: "relax.reshape"{{.*}} -> !relax.tensor<["b * s", 512], f32>{{$}}
// CHECK: "relax.reshape"{{.*}} -> !relax.tensor<["512 * b * s"], f32>{{$}}
func.func @reshape_symbolic(%a0: !relax.tensor<["b", "s", 512], f32>) {
  %0 = "relax.reshape"(%a0) {shape = ["b", "s", 8, -1]} : (!relax.tensor<["b", "s", 512], f32>) -> !relax.tensor<"*", f32>
  %1 = "relax.reshape"(%a0) {shape = [0, 0, -1, 64]} : (!relax.tensor<["b", "s", 512], f32>) -> !relax.tensor<"*", f32>
  %2 = "relax.reshape"(%a0) {shape = [-1, 512]} : (!relax.tensor<["b", "s", 512], f32>) -> !relax.tensor<"*", f32>
  %3 = "relax.reshape"(%a0) {shape = [-1]} : (!relax.tensor<["b", "s", 512], f32>) -> !relax.tensor<"*", f32>
  return
}

// CHECK-LABEL: func.func @reshape_unknown
// CHECK: "relax.reshape"{{.*}} -> !relax.tensor<["?", 2], f32>{{$}}
// CHECK: "relax.reshape"{{.*}} -> !relax.tensor<["?", 2], f32>{{$}}
// CHECK: "relax.reshape"{{.*}} -> !relax.tensor<["?", 4], f32>{{$}}
func.func @reshape_unknown(%a0: !relax.tensor<["?", 4], f32>, %a1: !relax.tensor<"*", f32>) {
  %0 = "relax.reshape"(%a0) {shape = [-1, 2]} : (!relax.tensor<["?", 4], f32>) -> !relax.tensor<"*", f32>
  %1 = "relax.reshape"(%a1) {shape = [-1, 2]} : (!relax.tensor<"*", f32>) -> !relax.tensor<"*", f32>
  %2 = "relax.reshape"(%a1) {shape = [0, 4]} : (!relax.tensor<"*", f32>) -> !relax.tensor<"*", f32>
  return
}

// CHECK-LABEL: func.func @permute_dims_static
// CHECK: "relax.permute_dims"{{.*}} -> !relax.tensor<[3, 2, 4], f32>{{$}}
// CHECK: "relax.permute_dims"{{.*}} -> !relax.tensor<[4, 3, 2], f32>{{$}}
func.func @permute_dims_static(%a0: !relax.tensor<[2, 3, 4], f32>) {
  %0 = "relax.permute_dims"(%a0) {axes = [1, 0, 2]} : (!relax.tensor<[2, 3, 4], f32>) -> !relax.tensor<"*", f32>
  %1 = "relax.permute_dims"(%a0) {axes = unit} : (!relax.tensor<[2, 3, 4], f32>) -> !relax.tensor<"*", f32>
  return
}

// CHECK-LABEL: func.func @permute_dims_symbolic
// CHECK: "relax.permute_dims"{{.*}} -> !relax.tensor<["b", 64, "s"], f32>{{$}}
// CHECK: "relax.permute_dims"{{.*}} -> !relax.tensor<[64, "b", "s"], f32>{{$}}
// CHECK: "relax.permute_dims"{{.*}} -> !relax.tensor<[64, "s", "b"], f32>{{$}}
func.func @permute_dims_symbolic(%a0: !relax.tensor<["b", "s", 64], f32>) {
  %0 = "relax.permute_dims"(%a0) {axes = [0, 2, 1]} : (!relax.tensor<["b", "s", 64], f32>) -> !relax.tensor<"*", f32>
  %1 = "relax.permute_dims"(%a0) {axes = [-1, 0, 1]} : (!relax.tensor<["b", "s", 64], f32>) -> !relax.tensor<"*", f32>
  %2 = "relax.permute_dims"(%a0) {axes = unit} : (!relax.tensor<["b", "s", 64], f32>) -> !relax.tensor<"*", f32>
  return
}

// CHECK-LABEL: func.func @permute_dims_unknown
// CHECK: "relax.permute_dims"{{.*}} -> !relax.tensor<["n", "?"], f32>{{$}}
// CHECK: "relax.permute_dims"{{.*}} -> !relax.tensor<["?", "?"], f32>{{$}}
// CHECK: "relax.permute_dims"{{.*}} -> !relax.tensor<"*", f32>{{$}}
func.func @permute_dims_unknown(%a0: !relax.tensor<["?", "n"], f32>, %a1: !relax.tensor<"*", f32>) {
  %0 = "relax.permute_dims"(%a0) {axes = unit} : (!relax.tensor<["?", "n"], f32>) -> !relax.tensor<"*", f32>
  %1 = "relax.permute_dims"(%a1) {axes = [1, 0]} : (!relax.tensor<"*", f32>) -> !relax.tensor<"*", f32>
  %2 = "relax.permute_dims"(%a1) {axes = unit} : (!relax.tensor<"*", f32>) -> !relax.tensor<"*", f32>
  return
}

// CHECK-LABEL: func.func @expand_dims_static
// CHECK: "relax.expand_dims"{{.*}} -> !relax.tensor<[2, 1, 3, 1], f32>{{$}}
// CHECK: "relax.expand_dims"{{.*}} -> !relax.tensor<[1], f32>{{$}}
func.func @expand_dims_static(%a0: !relax.tensor<[2, 3], f32>, %a1: !relax.tensor<[], f32>) {
  %0 = "relax.expand_dims"(%a0) {axes = [1, 3]} : (!relax.tensor<[2, 3], f32>) -> !relax.tensor<"*", f32>
  %1 = "relax.expand_dims"(%a1) {axes = [0]} : (!relax.tensor<[], f32>) -> !relax.tensor<"*", f32>
  return
}

// CHECK-LABEL: func.func @expand_dims_symbolic
// CHECK: "relax.expand_dims"{{.*}} -> !relax.tensor<[1, "n", "m", 1], f32>{{$}}
func.func @expand_dims_symbolic(%a0: !relax.tensor<["n", "m"], f32>) {
  %0 = "relax.expand_dims"(%a0) {axes = [-1, 0]} : (!relax.tensor<["n", "m"], f32>) -> !relax.tensor<"*", f32>
  return
}

// CHECK-LABEL: func.func @expand_dims_unknown
// CHECK: "relax.expand_dims"{{.*}} -> !relax.tensor<["?", 1, 4], f32>{{$}}
// CHECK: "relax.expand_dims"{{.*}} -> !relax.tensor<"*", f32>{{$}}
func.func @expand_dims_unknown(%a0: !relax.tensor<["?", 4], f32>, %a1: !relax.tensor<"*", f32>) {
  %0 = "relax.expand_dims"(%a0) {axes = [-2]} : (!relax.tensor<["?", 4], f32>) -> !relax.tensor<"*", f32>
  %1 = "relax.expand_dims"(%a1) {axes = [0]} : (!relax.tensor<"*", f32>) -> !relax.tensor<"*", f32>
  return
}

// CHECK-LABEL: func.func @squeeze_static
// CHECK: "relax.squeeze"{{.*}} -> !relax.tensor<[3, 1], f32>{{$}}
// CHECK: "relax.squeeze"{{.*}} -> !relax.tensor<[3], f32>{{$}}
func.func @squeeze_static(%a0: !relax.tensor<[3, 1, 1], f32>) {
  %0 = "relax.squeeze"(%a0) {axes = [1]} : (!relax.tensor<[3, 1, 1], f32>) -> !relax.tensor<"*", f32>
  %1 = "relax.squeeze"(%a0) {axes = unit} : (!relax.tensor<[3, 1, 1], f32>) -> !relax.tensor<"*", f32>
  return
}

// CHECK-LABEL: func.func @squeeze_symbolic
// CHECK: "relax.squeeze"{{.*}} -> !relax.tensor<["n", "m"], f32>{{$}}
// CHECK: "relax.squeeze"{{.*}} -> !relax.tensor<"*", f32>{{$}}
func.func @squeeze_symbolic(%a0: !relax.tensor<["n", 1, "m"], f32>) {
  %0 = "relax.squeeze"(%a0) {axes = [-2]} : (!relax.tensor<["n", 1, "m"], f32>) -> !relax.tensor<"*", f32>
  %1 = "relax.squeeze"(%a0) {axes = unit} : (!relax.tensor<["n", 1, "m"], f32>) -> !relax.tensor<"*", f32>
  return
}

// CHECK-LABEL: func.func @squeeze_unknown
// CHECK: "relax.squeeze"{{.*}} -> !relax.tensor<["?"], f32>{{$}}
// CHECK: "relax.squeeze"{{.*}} -> !relax.tensor<"*", f32>{{$}}
func.func @squeeze_unknown(%a0: !relax.tensor<["?", 1], f32>, %a1: !relax.tensor<"*", f32>) {
  %0 = "relax.squeeze"(%a0) {axes = [1]} : (!relax.tensor<["?", 1], f32>) -> !relax.tensor<"*", f32>
  %1 = "relax.squeeze"(%a1) {axes = [0]} : (!relax.tensor<"*", f32>) -> !relax.tensor<"*", f32>
  return
}

// CHECK-LABEL: func.func @flatten_static
// CHECK: "relax.flatten"{{.*}} -> !relax.tensor<[24], f32>{{$}}
// CHECK: "relax.flatten"{{.*}} -> !relax.tensor<[2, 12], f32>{{$}}
// CHECK: "relax.flatten"{{.*}} -> !relax.tensor<[1], f32>{{$}}
func.func @flatten_static(%a0: !relax.tensor<[2, 3, 4], f32>, %a1: !relax.tensor<[], f32>) {
  %0 = "relax.flatten"(%a0) {end_axis = -1 : i64, start_axis = 0 : i64} : (!relax.tensor<[2, 3, 4], f32>) -> !relax.tensor<"*", f32>
  %1 = "relax.flatten"(%a0) {end_axis = -1 : i64, start_axis = 1 : i64} : (!relax.tensor<[2, 3, 4], f32>) -> !relax.tensor<"*", f32>
  %2 = "relax.flatten"(%a1) {end_axis = -1 : i64, start_axis = 0 : i64} : (!relax.tensor<[], f32>) -> !relax.tensor<"*", f32>
  return
}

// CHECK-LABEL: func.func @flatten_symbolic
// CHECK: "relax.flatten"{{.*}} -> !relax.tensor<["j * k"], f32>{{$}}
// CHECK: "relax.flatten"{{.*}} -> !relax.tensor<["b", "8 * s", 64], f32>{{$}}
func.func @flatten_symbolic(%a0: !relax.tensor<["k", "j"], f32>, %a1: !relax.tensor<["b", "s", 8, 64], f32>) {
  %0 = "relax.flatten"(%a0) {end_axis = -1 : i64, start_axis = 0 : i64} : (!relax.tensor<["k", "j"], f32>) -> !relax.tensor<"*", f32>
  %1 = "relax.flatten"(%a1) {end_axis = -2 : i64, start_axis = -3 : i64} : (!relax.tensor<["b", "s", 8, 64], f32>) -> !relax.tensor<"*", f32>
  return
}

// CHECK-LABEL: func.func @flatten_unknown
// CHECK: "relax.flatten"{{.*}} -> !relax.tensor<["b", "?"], f32>{{$}}
// CHECK: "relax.flatten"{{.*}} -> !relax.tensor<["?"], f32>{{$}}
// CHECK: "relax.flatten"{{.*}} -> !relax.tensor<"*", f32>{{$}}
func.func @flatten_unknown(%a0: !relax.tensor<["b", "?", 4], f32>, %a1: !relax.tensor<"*", f32>) {
  %0 = "relax.flatten"(%a0) {end_axis = 2 : i64, start_axis = 1 : i64} : (!relax.tensor<["b", "?", 4], f32>) -> !relax.tensor<"*", f32>
  %1 = "relax.flatten"(%a1) {end_axis = -1 : i64, start_axis = 0 : i64} : (!relax.tensor<"*", f32>) -> !relax.tensor<"*", f32>
  %2 = "relax.flatten"(%a1) {end_axis = -1 : i64, start_axis = 1 : i64} : (!relax.tensor<"*", f32>) -> !relax.tensor<"*", f32>
  return
}

// CHECK-LABEL: func.func @concat_static
// CHECK: "relax.concat"{{.*}} -> !relax.tensor<[2, 8], f32>{{$}}
// CHECK: "relax.concat"{{.*}} -> !relax.tensor<[4, 3], f32>{{$}}
func.func @concat_static(%a0: !relax.tensor<[2, 3], f32>, %a1: !relax.tensor<[2, 5], f32>, %a2: !relax.tensor<[0, 3], f32>) {
  %0 = "relax.concat"(%a0, %a1) {axis = -1 : i64} : (!relax.tensor<[2, 3], f32>, !relax.tensor<[2, 5], f32>) -> !relax.tensor<"*", f32>
  %1 = "relax.concat"(%a0, %a2, %a0) {axis = 0 : i64} : (!relax.tensor<[2, 3], f32>, !relax.tensor<[0, 3], f32>, !relax.tensor<[2, 3], f32>) -> !relax.tensor<"*", f32>
  return
}

// CHECK-LABEL: func.func @concat_symbolic
// CHECK: "relax.concat"{{.*}} -> !relax.tensor<["m + n", 4], f32>{{$}}
// CHECK: "relax.concat"{{.*}} -> !relax.tensor<["2 * n", 4], f32>{{$}}
// CHECK: "relax.concat"{{.*}} -> !relax.tensor<["m + n", 4], f32>{{$}}
func.func @concat_symbolic(%a0: !relax.tensor<["n", 4], f32>, %a1: !relax.tensor<["m", 4], f32>, %a2: !relax.tensor<["n", "k"], f32>) {
  %0 = "relax.concat"(%a0, %a1) {axis = 0 : i64} : (!relax.tensor<["n", 4], f32>, !relax.tensor<["m", 4], f32>) -> !relax.tensor<"*", f32>
  %1 = "relax.concat"(%a0, %a0) {axis = 0 : i64} : (!relax.tensor<["n", 4], f32>, !relax.tensor<["n", 4], f32>) -> !relax.tensor<"*", f32>
  %2 = "relax.concat"(%a1, %a2) {axis = 0 : i64} : (!relax.tensor<["m", 4], f32>, !relax.tensor<["n", "k"], f32>) -> !relax.tensor<"*", f32>
  return
}

// CHECK-LABEL: func.func @concat_unknown
// CHECK: "relax.concat"{{.*}} -> !relax.tensor<["?", 4], f32>{{$}}
// CHECK: "relax.concat"{{.*}} -> !relax.tensor<["?", 4], f32>{{$}}
// CHECK: "relax.concat"{{.*}} -> !relax.tensor<"*", f32>{{$}}
func.func @concat_unknown(%a0: !relax.tensor<["n", 4], f32>, %a1: !relax.tensor<["?", 4], f32>, %a2: !relax.tensor<"*", f32>) {
  %0 = "relax.concat"(%a0, %a1) {axis = 0 : i64} : (!relax.tensor<["n", 4], f32>, !relax.tensor<["?", 4], f32>) -> !relax.tensor<"*", f32>
  %1 = "relax.concat"(%a0, %a2) {axis = 0 : i64} : (!relax.tensor<["n", 4], f32>, !relax.tensor<"*", f32>) -> !relax.tensor<"*", f32>
  %2 = "relax.concat"(%a2, %a2) {axis = 0 : i64} : (!relax.tensor<"*", f32>, !relax.tensor<"*", f32>) -> !relax.tensor<"*", f32>
  return
}

// CHECK-LABEL: func.func @split_static
// CHECK: "relax.split"{{.*}} -> (!relax.tensor<[2, 4], f32>, !relax.tensor<[2, 4], f32>, !relax.tensor<[2, 4], f32>){{$}}
// CHECK: "relax.split"{{.*}} -> (!relax.tensor<[2], f32>, !relax.tensor<[2], f32>, !relax.tensor<[0], f32>){{$}}
func.func @split_static(%a0: !relax.tensor<[6, 4], f32>, %a1: !relax.tensor<[4], f32>) {
  %0:3 = "relax.split"(%a0) {axis = 0 : i64, indices = [], sections = 3 : i64} : (!relax.tensor<[6, 4], f32>) -> (!relax.tensor<"*", f32>, !relax.tensor<"*", f32>, !relax.tensor<"*", f32>)
  %1:3 = "relax.split"(%a1) {axis = 0 : i64, indices = [2, 5], sections = 0 : i64} : (!relax.tensor<[4], f32>) -> (!relax.tensor<"*", f32>, !relax.tensor<"*", f32>, !relax.tensor<"*", f32>)
  return
}

// CHECK-LABEL: func.func @split_symbolic
// CHECK: "relax.split"{{.*}} -> (!relax.tensor<["n", 4], f32>, !relax.tensor<["n", 4], f32>){{$}}
// CHECK: "relax.split"{{.*}} -> (!relax.tensor<["n floordiv 2"], f32>, !relax.tensor<["n floordiv 2"], f32>){{$}}
// CHECK: "relax.split"{{.*}} -> (!relax.tensor<["min(n, 2)"], f32>, !relax.tensor<["-min(n, 2) + min(n, 5)"], f32>, !relax.tensor<["n - min(n, 5)"], f32>){{$}}
func.func @split_symbolic(%a0: !relax.tensor<["n", 8], f32>, %a1: !relax.tensor<["n"], f32>) {
  %0:2 = "relax.split"(%a0) {axis = 1 : i64, indices = [], sections = 2 : i64} : (!relax.tensor<["n", 8], f32>) -> (!relax.tensor<"*", f32>, !relax.tensor<"*", f32>)
  %1:2 = "relax.split"(%a1) {axis = 0 : i64, indices = [], sections = 2 : i64} : (!relax.tensor<["n"], f32>) -> (!relax.tensor<"*", f32>, !relax.tensor<"*", f32>)
  %2:3 = "relax.split"(%a1) {axis = 0 : i64, indices = [2, 5], sections = 0 : i64} : (!relax.tensor<["n"], f32>) -> (!relax.tensor<"*", f32>, !relax.tensor<"*", f32>, !relax.tensor<"*", f32>)
  return
}

// CHECK-LABEL: func.func @split_unknown
// CHECK: "relax.split"{{.*}} -> (!relax.tensor<["?", 2], f32>, !relax.tensor<["?", 2], f32>, !relax.tensor<["?", 2], f32>){{$}}
// CHECK: "relax.split"{{.*}} -> (!relax.tensor<["?", 6], f32>, !relax.tensor<["?", 6], f32>){{$}}
// CHECK: "relax.split"{{.*}} -> (!relax.tensor<"*", f32>, !relax.tensor<"*", f32>){{$}}
func.func @split_unknown(%a0: !relax.tensor<["?", 6], f32>, %a1: !relax.tensor<"*", f32>) {
  %0:3 = "relax.split"(%a0) {axis = -1 : i64, indices = [], sections = 3 : i64} : (!relax.tensor<["?", 6], f32>) -> (!relax.tensor<"*", f32>, !relax.tensor<"*", f32>, !relax.tensor<"*", f32>)
  %1:2 = "relax.split"(%a0) {axis = 0 : i64, indices = [1], sections = 0 : i64} : (!relax.tensor<["?", 6], f32>) -> (!relax.tensor<"*", f32>, !relax.tensor<"*", f32>)
  %2:2 = "relax.split"(%a1) {axis = 0 : i64, indices = [], sections = 2 : i64} : (!relax.tensor<"*", f32>) -> (!relax.tensor<"*", f32>, !relax.tensor<"*", f32>)
  return
}

// CHECK-LABEL: func.func @broadcast_to_static
// CHECK: "relax.broadcast_to"{{.*}} -> !relax.tensor<[2, 3, 4], f32>{{$}}
// CHECK: "relax.broadcast_to"{{.*}} -> !relax.tensor<[0], f32>{{$}}
func.func @broadcast_to_static(%a0: !relax.tensor<[3, 1], f32>, %a1: !relax.tensor<[1], f32>) {
  %0 = "relax.broadcast_to"(%a0) {shape = [2, 3, 4]} : (!relax.tensor<[3, 1], f32>) -> !relax.tensor<"*", f32>
  %1 = "relax.broadcast_to"(%a1) {shape = [0]} : (!relax.tensor<[1], f32>) -> !relax.tensor<"*", f32>
  return
}

// CHECK-LABEL: func.func @broadcast_to_symbolic
// CHECK: "relax.broadcast_to"{{.*}} -> !relax.tensor<["b", "n", 4], f32>{{$}}
// CHECK: "relax.broadcast_to"{{.*}} -> !relax.tensor<["n", "b + 1"], f32>{{$}}
func.func @broadcast_to_symbolic(%a0: !relax.tensor<["n", 1], f32>, %a1: !relax.tensor<["b"], f32>) {
  %0 = "relax.broadcast_to"(%a0) {shape = ["b", "n", 4]} : (!relax.tensor<["n", 1], f32>) -> !relax.tensor<"*", f32>
  %1 = "relax.broadcast_to"(%a0) {shape = ["n", "b + 1"]} : (!relax.tensor<["n", 1], f32>) -> !relax.tensor<"*", f32>
  return
}

// CHECK-LABEL: func.func @broadcast_to_unknown
// CHECK: "relax.broadcast_to"{{.*}} -> !relax.tensor<[3, 5], f32>{{$}}
// CHECK: "relax.broadcast_to"{{.*}} -> !relax.tensor<["n", 4], f32>{{$}}
func.func @broadcast_to_unknown(%a0: !relax.tensor<["?", 1], f32>, %a1: !relax.tensor<"*", f32>, %a2: !relax.tensor<["n"], f32>) {
  %0 = "relax.broadcast_to"(%a0) {shape = [3, 5]} : (!relax.tensor<["?", 1], f32>) -> !relax.tensor<"*", f32>
  %1 = "relax.broadcast_to"(%a1) {shape = ["n", 4]} : (!relax.tensor<"*", f32>) -> !relax.tensor<"*", f32>
  return
}

// CHECK-LABEL: func.func @tile_static
// CHECK: "relax.tile"{{.*}} -> !relax.tensor<[4, 6], f32>{{$}}
// CHECK: "relax.tile"{{.*}} -> !relax.tensor<[2, 2, 3], f32>{{$}}
// CHECK: "relax.tile"{{.*}} -> !relax.tensor<[0, 3], f32>{{$}}
func.func @tile_static(%a0: !relax.tensor<[2, 3], f32>) {
  %0 = "relax.tile"(%a0) {repeats = [2, 2]} : (!relax.tensor<[2, 3], f32>) -> !relax.tensor<"*", f32>
  %1 = "relax.tile"(%a0) {repeats = [2, 1, 1]} : (!relax.tensor<[2, 3], f32>) -> !relax.tensor<"*", f32>
  %2 = "relax.tile"(%a0) {repeats = [0, 1]} : (!relax.tensor<[2, 3], f32>) -> !relax.tensor<"*", f32>
  return
}

// CHECK-LABEL: func.func @tile_symbolic
// CHECK: "relax.tile"{{.*}} -> !relax.tensor<["2 * n", 4], f32>{{$}}
// CHECK: "relax.tile"{{.*}} -> !relax.tensor<["n", 12], f32>{{$}}
func.func @tile_symbolic(%a0: !relax.tensor<["n", 4], f32>) {
  %0 = "relax.tile"(%a0) {repeats = [2, 1]} : (!relax.tensor<["n", 4], f32>) -> !relax.tensor<"*", f32>
  %1 = "relax.tile"(%a0) {repeats = [3]} : (!relax.tensor<["n", 4], f32>) -> !relax.tensor<"*", f32>
  return
}

// CHECK-LABEL: func.func @tile_unknown
// CHECK: "relax.tile"{{.*}} -> !relax.tensor<["?", 8], f32>{{$}}
// CHECK: "relax.tile"{{.*}} -> !relax.tensor<"*", f32>{{$}}
func.func @tile_unknown(%a0: !relax.tensor<["?", 4], f32>, %a1: !relax.tensor<"*", f32>) {
  %0 = "relax.tile"(%a0) {repeats = [2, 2]} : (!relax.tensor<["?", 4], f32>) -> !relax.tensor<"*", f32>
  %1 = "relax.tile"(%a1) {repeats = [2, 2]} : (!relax.tensor<"*", f32>) -> !relax.tensor<"*", f32>
  return
}

// CHECK-LABEL: func.func @repeat_static
// CHECK: "relax.repeat"{{.*}} -> !relax.tensor<[4, 3], f32>{{$}}
// CHECK: "relax.repeat"{{.*}} -> !relax.tensor<[12], f32>{{$}}
// CHECK: "relax.repeat"{{.*}} -> !relax.tensor<[2, 0], f32>{{$}}
func.func @repeat_static(%a0: !relax.tensor<[2, 3], f32>) {
  %0 = "relax.repeat"(%a0) {axis = [0], repeats = 2 : i64} : (!relax.tensor<[2, 3], f32>) -> !relax.tensor<"*", f32>
  %1 = "relax.repeat"(%a0) {axis = unit, repeats = 2 : i64} : (!relax.tensor<[2, 3], f32>) -> !relax.tensor<"*", f32>
  %2 = "relax.repeat"(%a0) {axis = [-1], repeats = 0 : i64} : (!relax.tensor<[2, 3], f32>) -> !relax.tensor<"*", f32>
  return
}

// CHECK-LABEL: func.func @repeat_symbolic
// CHECK: "relax.repeat"{{.*}} -> !relax.tensor<["3 * n", 4], f32>{{$}}
// CHECK: "relax.repeat"{{.*}} -> !relax.tensor<["12 * n"], f32>{{$}}
func.func @repeat_symbolic(%a0: !relax.tensor<["n", 4], f32>) {
  %0 = "relax.repeat"(%a0) {axis = [0], repeats = 3 : i64} : (!relax.tensor<["n", 4], f32>) -> !relax.tensor<"*", f32>
  %1 = "relax.repeat"(%a0) {axis = unit, repeats = 3 : i64} : (!relax.tensor<["n", 4], f32>) -> !relax.tensor<"*", f32>
  return
}

// CHECK-LABEL: func.func @repeat_unknown
// CHECK: "relax.repeat"{{.*}} -> !relax.tensor<["?", 8], f32>{{$}}
// CHECK: "relax.repeat"{{.*}} -> !relax.tensor<"*", f32>{{$}}
// CHECK: "relax.repeat"{{.*}} -> !relax.tensor<["?"], f32>{{$}}
func.func @repeat_unknown(%a0: !relax.tensor<["?", 4], f32>, %a1: !relax.tensor<"*", f32>) {
  %0 = "relax.repeat"(%a0) {axis = [1], repeats = 2 : i64} : (!relax.tensor<["?", 4], f32>) -> !relax.tensor<"*", f32>
  %1 = "relax.repeat"(%a1) {axis = [0], repeats = 2 : i64} : (!relax.tensor<"*", f32>) -> !relax.tensor<"*", f32>
  %2 = "relax.repeat"(%a1) {axis = unit, repeats = 2 : i64} : (!relax.tensor<"*", f32>) -> !relax.tensor<"*", f32>
  return
}

// CHECK-LABEL: func.func @pad_static
// CHECK: "relax.pad"{{.*}} -> !relax.tensor<[4, 5], f32>{{$}}
// CHECK: "relax.pad"{{.*}} -> !relax.tensor<[0], f32>{{$}}
func.func @pad_static(%a0: !relax.tensor<[2, 3], f32>, %a1: !relax.tensor<[4], f32>) {
  %0 = "relax.pad"(%a0) {mode = "constant", pad_width = [1, 1, 0, 2], value = 0.0 : f64} : (!relax.tensor<[2, 3], f32>) -> !relax.tensor<"*", f32>
  %1 = "relax.pad"(%a1) {mode = "edge", pad_width = [-1, -3], value = 0.0 : f64} : (!relax.tensor<[4], f32>) -> !relax.tensor<"*", f32>
  return
}

// CHECK-LABEL: func.func @pad_symbolic
// CHECK: "relax.pad"{{.*}} -> !relax.tensor<["n + 3", 4], f32>{{$}}
// CHECK: "relax.pad"{{.*}} -> !relax.tensor<["b", "s + 4"], f32>{{$}}
// CHECK: "relax.pad"{{.*}} -> !relax.tensor<["max(n - 1, 0)", 4], f32>{{$}}
func.func @pad_symbolic(%a0: !relax.tensor<["n", 4], f32>, %a1: !relax.tensor<["b", "s"], f32>) {
  %0 = "relax.pad"(%a0) {mode = "constant", pad_width = [1, 2, 0, 0], value = 0.0 : f64} : (!relax.tensor<["n", 4], f32>) -> !relax.tensor<"*", f32>
  %1 = "relax.pad"(%a1) {mode = "reflect", pad_width = [0, 0, 2, 2], value = 0.0 : f64} : (!relax.tensor<["b", "s"], f32>) -> !relax.tensor<"*", f32>
  %2 = "relax.pad"(%a0) {mode = "constant", pad_width = [-1, 0, 0, 0], value = 1.0 : f64} : (!relax.tensor<["n", 4], f32>) -> !relax.tensor<"*", f32>
  return
}

// CHECK-LABEL: func.func @pad_unknown
// CHECK: "relax.pad"{{.*}} -> !relax.tensor<["?", 6], f32>{{$}}
// CHECK: "relax.pad"{{.*}} -> !relax.tensor<["?", "?"], f32>{{$}}
func.func @pad_unknown(%a0: !relax.tensor<["?", 4], f32>, %a1: !relax.tensor<"*", f32>) {
  %0 = "relax.pad"(%a0) {mode = "constant", pad_width = [1, 1, 1, 1], value = 0.0 : f64} : (!relax.tensor<["?", 4], f32>) -> !relax.tensor<"*", f32>
  %1 = "relax.pad"(%a1) {mode = "constant", pad_width = [1, 1, 2, 2], value = 0.0 : f64} : (!relax.tensor<"*", f32>) -> !relax.tensor<"*", f32>
  return
}

// CHECK-LABEL: func.func @tril_static
// CHECK: "relax.tril"{{.*}} -> !relax.tensor<[3, 3], f32>{{$}}
// CHECK: "relax.tril"{{.*}} -> !relax.tensor<[2, 0, 5], f32>{{$}}
func.func @tril_static(%a0: !relax.tensor<[3, 3], f32>, %a1: !relax.tensor<[2, 0, 5], f32>) {
  %0 = "relax.tril"(%a0) {k = 0 : i64} : (!relax.tensor<[3, 3], f32>) -> !relax.tensor<"*", f32>
  %1 = "relax.tril"(%a1) {k = -1 : i64} : (!relax.tensor<[2, 0, 5], f32>) -> !relax.tensor<"*", f32>
  return
}

// CHECK-LABEL: func.func @tril_symbolic
// CHECK: "relax.tril"{{.*}} -> !relax.tensor<["b", "s", "s"], f32>{{$}}
func.func @tril_symbolic(%a0: !relax.tensor<["b", "s", "s"], f32>) {
  %0 = "relax.tril"(%a0) {k = 1 : i64} : (!relax.tensor<["b", "s", "s"], f32>) -> !relax.tensor<"*", f32>
  return
}

// CHECK-LABEL: func.func @tril_unknown
// CHECK: "relax.tril"{{.*}} -> !relax.tensor<["?", "s"], f32>{{$}}
// CHECK: "relax.tril"{{.*}} -> !relax.tensor<"*", f32>{{$}}
func.func @tril_unknown(%a0: !relax.tensor<["?", "s"], f32>, %a1: !relax.tensor<"*", f32>) {
  %0 = "relax.tril"(%a0) {k = 0 : i64} : (!relax.tensor<["?", "s"], f32>) -> !relax.tensor<"*", f32>
  %1 = "relax.tril"(%a1) {k = 0 : i64} : (!relax.tensor<"*", f32>) -> !relax.tensor<"*", f32>
  return
}

// CHECK-LABEL: func.func @triu_static
// CHECK: "relax.triu"{{.*}} -> !relax.tensor<[3, 3], f32>{{$}}
// CHECK: "relax.triu"{{.*}} -> !relax.tensor<[2, 0, 5], f32>{{$}}
func.func @triu_static(%a0: !relax.tensor<[3, 3], f32>, %a1: !relax.tensor<[2, 0, 5], f32>) {
  %0 = "relax.triu"(%a0) {k = 0 : i64} : (!relax.tensor<[3, 3], f32>) -> !relax.tensor<"*", f32>
  %1 = "relax.triu"(%a1) {k = -1 : i64} : (!relax.tensor<[2, 0, 5], f32>) -> !relax.tensor<"*", f32>
  return
}

// CHECK-LABEL: func.func @triu_symbolic
// CHECK: "relax.triu"{{.*}} -> !relax.tensor<["b", "s", "s"], f32>{{$}}
func.func @triu_symbolic(%a0: !relax.tensor<["b", "s", "s"], f32>) {
  %0 = "relax.triu"(%a0) {k = 1 : i64} : (!relax.tensor<["b", "s", "s"], f32>) -> !relax.tensor<"*", f32>
  return
}

// CHECK-LABEL: func.func @triu_unknown
// CHECK: "relax.triu"{{.*}} -> !relax.tensor<["?", "s"], f32>{{$}}
// CHECK: "relax.triu"{{.*}} -> !relax.tensor<"*", f32>{{$}}
func.func @triu_unknown(%a0: !relax.tensor<["?", "s"], f32>, %a1: !relax.tensor<"*", f32>) {
  %0 = "relax.triu"(%a0) {k = 0 : i64} : (!relax.tensor<["?", "s"], f32>) -> !relax.tensor<"*", f32>
  %1 = "relax.triu"(%a1) {k = 0 : i64} : (!relax.tensor<"*", f32>) -> !relax.tensor<"*", f32>
  return
}

// CHECK-LABEL: func.func @strided_slice_static
// CHECK: "relax.strided_slice"{{.*}} -> !relax.tensor<[8], f32>{{$}}
// CHECK: "relax.strided_slice"{{.*}} -> !relax.tensor<[3], f32>{{$}}
// CHECK: "relax.strided_slice"{{.*}} -> !relax.tensor<[3], f32>{{$}}
// CHECK: "relax.strided_slice"{{.*}} -> !relax.tensor<[10], f32>{{$}}
// CHECK: "relax.strided_slice"{{.*}} -> !relax.tensor<[0], f32>{{$}}
// CHECK: "relax.strided_slice"{{.*}} -> !relax.tensor<[2, 3], f32>{{$}}
func.func @strided_slice_static(%a0: !relax.tensor<[10], f32>, %a1: !relax.tensor<[4, 6], f32>) {
  %0 = "relax.strided_slice"(%a0) {axes = [0], begin = [1], end = [-1], strides = [1]} : (!relax.tensor<[10], f32>) -> !relax.tensor<"*", f32>
  %1 = "relax.strided_slice"(%a0) {axes = [0], begin = [2], end = [100], strides = [3]} : (!relax.tensor<[10], f32>) -> !relax.tensor<"*", f32>
  %2 = "relax.strided_slice"(%a0) {axes = [0], begin = [8], end = [2], strides = [-2]} : (!relax.tensor<[10], f32>) -> !relax.tensor<"*", f32>
  %3 = "relax.strided_slice"(%a0) {axes = [0], begin = [-1], end = [-100], strides = [-1]} : (!relax.tensor<[10], f32>) -> !relax.tensor<"*", f32>
  %4 = "relax.strided_slice"(%a0) {axes = [0], begin = [5], end = [2], strides = [1]} : (!relax.tensor<[10], f32>) -> !relax.tensor<"*", f32>
  %5 = "relax.strided_slice"(%a1) {axes = [0, 1], begin = [1, 0], end = [3, 6], strides = [1, 2]} : (!relax.tensor<[4, 6], f32>) -> !relax.tensor<"*", f32>
  return
}

// CHECK-LABEL: func.func @strided_slice_symbolic
// CHECK: "relax.strided_slice"{{.*}} -> !relax.tensor<["max(n - 2, 0)"], f32>{{$}}
// CHECK: "relax.strided_slice"{{.*}} -> !relax.tensor<["min(m, n)"], f32>{{$}}
// CHECK: "relax.strided_slice"{{.*}} -> !relax.tensor<["min(n, 3)"], f32>{{$}}
// CHECK: "relax.strided_slice"{{.*}} -> !relax.tensor<["(n + 1) floordiv 2"], f32>{{$}}
// CHECK: "relax.strided_slice"{{.*}} -> !relax.tensor<["n"], f32>{{$}}
// CHECK: "relax.strided_slice"{{.*}} -> !relax.tensor<["max(min(n - 2, 3), 0)"], f32>{{$}}
// CHECK: "relax.strided_slice"{{.*}} -> !relax.tensor<["b", "max(n - 2, 0)"], f32>{{$}}
// CHECK: "relax.strided_slice"{{.*}} -> !relax.tensor<["max(min(-k + n, 4), 0)"], f32>{{$}}
func.func @strided_slice_symbolic(%a0: !relax.tensor<["n"], f32>, %a1: !relax.tensor<["b", "n"], f32>, %a2: !relax.tensor<["m"], f32>, %a3: !relax.tensor<["k"], f32>) {
  %0 = "relax.strided_slice"(%a0) {axes = [0], begin = [1], end = [-1], strides = [1]} : (!relax.tensor<["n"], f32>) -> !relax.tensor<"*", f32>
  %1 = "relax.strided_slice"(%a0) {axes = [0], begin = [0], end = ["m"], strides = [1]} : (!relax.tensor<["n"], f32>) -> !relax.tensor<"*", f32>
  %2 = "relax.strided_slice"(%a0) {axes = [0], begin = [-3], end = [9223372036854775807], strides = [1]} : (!relax.tensor<["n"], f32>) -> !relax.tensor<"*", f32>
  %3 = "relax.strided_slice"(%a0) {axes = [0], begin = [0], end = [9223372036854775807], strides = [2]} : (!relax.tensor<["n"], f32>) -> !relax.tensor<"*", f32>
  %4 = "relax.strided_slice"(%a0) {axes = [0], begin = [-1], end = [-9223372036854775808], strides = [-1]} : (!relax.tensor<["n"], f32>) -> !relax.tensor<"*", f32>
  %5 = "relax.strided_slice"(%a0) {axes = [0], begin = [2], end = [5], strides = [1]} : (!relax.tensor<["n"], f32>) -> !relax.tensor<"*", f32>
  %6 = "relax.strided_slice"(%a1) {axes = [1], begin = [1], end = ["n - 1"], strides = [1]} : (!relax.tensor<["b", "n"], f32>) -> !relax.tensor<"*", f32>
  %7 = "relax.strided_slice"(%a0) {axes = [0], begin = ["k"], end = ["k + 4"], strides = [1]} : (!relax.tensor<["n"], f32>) -> !relax.tensor<"*", f32>
  return
}

// CHECK-LABEL: func.func @strided_slice_unknown
// CHECK: "relax.strided_slice"{{.*}} -> !relax.tensor<["?", 4], f32>{{$}}
// CHECK: "relax.strided_slice"{{.*}} -> !relax.tensor<["?", 8], f32>{{$}}
// CHECK: "relax.strided_slice"{{.*}} -> !relax.tensor<"*", f32>{{$}}
func.func @strided_slice_unknown(%a0: !relax.tensor<["?", 8], f32>, %a1: !relax.tensor<"*", f32>) {
  %0 = "relax.strided_slice"(%a0) {axes = [1], begin = [0], end = [4], strides = [1]} : (!relax.tensor<["?", 8], f32>) -> !relax.tensor<"*", f32>
  %1 = "relax.strided_slice"(%a0) {axes = [0], begin = [0], end = [4], strides = [1]} : (!relax.tensor<["?", 8], f32>) -> !relax.tensor<"*", f32>
  %2 = "relax.strided_slice"(%a1) {axes = [0], begin = [1], end = [3], strides = [1]} : (!relax.tensor<"*", f32>) -> !relax.tensor<"*", f32>
  return
}

// CHECK-LABEL: func.func @take_static
// CHECK: "relax.take"{{.*}} -> !relax.tensor<[3, 4], f32>{{$}}
// CHECK: "relax.take"{{.*}} -> !relax.tensor<[5, 3], f32>{{$}}
// CHECK: "relax.take"{{.*}} -> !relax.tensor<[4], f32>{{$}}
func.func @take_static(%a0: !relax.tensor<[5, 4], f32>, %a1: !relax.tensor<[3], i64>, %a2: !relax.tensor<[], i64>) {
  %0 = "relax.take"(%a0, %a1) {axis = 0 : i64} : (!relax.tensor<[5, 4], f32>, !relax.tensor<[3], i64>) -> !relax.tensor<"*", f32>
  %1 = "relax.take"(%a0, %a1) {axis = -1 : i64} : (!relax.tensor<[5, 4], f32>, !relax.tensor<[3], i64>) -> !relax.tensor<"*", f32>
  %2 = "relax.take"(%a0, %a2) {axis = 0 : i64} : (!relax.tensor<[5, 4], f32>, !relax.tensor<[], i64>) -> !relax.tensor<"*", f32>
  return
}

// CHECK-LABEL: func.func @take_symbolic
// CHECK: "relax.take"{{.*}} -> !relax.tensor<["b", "s", 768], f32>{{$}}
// CHECK: "relax.take"{{.*}} -> !relax.tensor<["v", "n"], f32>{{$}}
func.func @take_symbolic(%a0: !relax.tensor<[50257, 768], f32>, %a1: !relax.tensor<["b", "s"], i64>, %a2: !relax.tensor<["v", "d"], f32>, %a3: !relax.tensor<["n"], i64>) {
  %0 = "relax.take"(%a0, %a1) {axis = 0 : i64} : (!relax.tensor<[50257, 768], f32>, !relax.tensor<["b", "s"], i64>) -> !relax.tensor<"*", f32>
  %1 = "relax.take"(%a2, %a3) {axis = 1 : i64} : (!relax.tensor<["v", "d"], f32>, !relax.tensor<["n"], i64>) -> !relax.tensor<"*", f32>
  return
}

// CHECK-LABEL: func.func @take_unknown
// CHECK: "relax.take"{{.*}} -> !relax.tensor<["?", "?"], f32>{{$}}
// CHECK: "relax.take"{{.*}} -> !relax.tensor<"*", f32>{{$}}
// CHECK: "relax.take"{{.*}} -> !relax.tensor<"*", f32>{{$}}
func.func @take_unknown(%a0: !relax.tensor<[5, "?"], f32>, %a1: !relax.tensor<["?"], i64>, %a2: !relax.tensor<"*", f32>, %a3: !relax.tensor<"*", i64>) {
  %0 = "relax.take"(%a0, %a1) {axis = 0 : i64} : (!relax.tensor<[5, "?"], f32>, !relax.tensor<["?"], i64>) -> !relax.tensor<"*", f32>
  %1 = "relax.take"(%a2, %a1) {axis = 0 : i64} : (!relax.tensor<"*", f32>, !relax.tensor<["?"], i64>) -> !relax.tensor<"*", f32>
  %2 = "relax.take"(%a0, %a3) {axis = 0 : i64} : (!relax.tensor<[5, "?"], f32>, !relax.tensor<"*", i64>) -> !relax.tensor<"*", f32>
  return
}

// CHECK-LABEL: func.func @gather_elements_static
// CHECK: "relax.gather_elements"{{.*}} -> !relax.tensor<[3, 2], f32>{{$}}
// CHECK: "relax.gather_elements"{{.*}} -> !relax.tensor<[5, 4], f32>{{$}}
func.func @gather_elements_static(%a0: !relax.tensor<[3, 4], f32>, %a1: !relax.tensor<[3, 2], i64>, %a2: !relax.tensor<[5, 4], i64>) {
  %0 = "relax.gather_elements"(%a0, %a1) {axis = 1 : i64} : (!relax.tensor<[3, 4], f32>, !relax.tensor<[3, 2], i64>) -> !relax.tensor<"*", f32>
  %1 = "relax.gather_elements"(%a0, %a2) {axis = 0 : i64} : (!relax.tensor<[3, 4], f32>, !relax.tensor<[5, 4], i64>) -> !relax.tensor<"*", f32>
  return
}

// CHECK-LABEL: func.func @gather_elements_symbolic
// CHECK: "relax.gather_elements"{{.*}} -> !relax.tensor<["n", 2], f32>{{$}}
func.func @gather_elements_symbolic(%a0: !relax.tensor<["n", 4], f32>, %a1: !relax.tensor<["n", 2], i64>) {
  %0 = "relax.gather_elements"(%a0, %a1) {axis = -1 : i64} : (!relax.tensor<["n", 4], f32>, !relax.tensor<["n", 2], i64>) -> !relax.tensor<"*", f32>
  return
}

// CHECK-LABEL: func.func @gather_elements_unknown
// CHECK: "relax.gather_elements"{{.*}} -> !relax.tensor<["?", 2], f32>{{$}}
// CHECK: "relax.gather_elements"{{.*}} -> !relax.tensor<["?", 2], f32>{{$}}
// CHECK: "relax.gather_elements"{{.*}} -> !relax.tensor<"*", f32>{{$}}
func.func @gather_elements_unknown(%a0: !relax.tensor<["n", 4], f32>, %a1: !relax.tensor<["?", 2], i64>, %a2: !relax.tensor<"*", f32>, %a3: !relax.tensor<"*", i64>) {
  %0 = "relax.gather_elements"(%a0, %a1) {axis = 1 : i64} : (!relax.tensor<["n", 4], f32>, !relax.tensor<["?", 2], i64>) -> !relax.tensor<"*", f32>
  %1 = "relax.gather_elements"(%a2, %a1) {axis = 0 : i64} : (!relax.tensor<"*", f32>, !relax.tensor<["?", 2], i64>) -> !relax.tensor<"*", f32>
  %2 = "relax.gather_elements"(%a0, %a3) {axis = 0 : i64} : (!relax.tensor<["n", 4], f32>, !relax.tensor<"*", i64>) -> !relax.tensor<"*", f32>
  return
}

// CHECK-LABEL: func.func @scatter_elements_static
// CHECK: "relax.scatter_elements"{{.*}} -> !relax.tensor<[3, 4], f32>{{$}}
func.func @scatter_elements_static(%a0: !relax.tensor<[3, 4], f32>, %a1: !relax.tensor<[2, 4], i64>, %a2: !relax.tensor<[2, 4], f32>) {
  %0 = "relax.scatter_elements"(%a0, %a1, %a2) {axis = 0 : i64, reduction = "none"} : (!relax.tensor<[3, 4], f32>, !relax.tensor<[2, 4], i64>, !relax.tensor<[2, 4], f32>) -> !relax.tensor<"*", f32>
  return
}

// CHECK-LABEL: func.func @scatter_elements_symbolic
// CHECK: "relax.scatter_elements"{{.*}} -> !relax.tensor<["n", "m"], f32>{{$}}
func.func @scatter_elements_symbolic(%a0: !relax.tensor<["n", "m"], f32>, %a1: !relax.tensor<["k", "m"], i64>, %a2: !relax.tensor<["k", "m"], f32>) {
  %0 = "relax.scatter_elements"(%a0, %a1, %a2) {axis = -2 : i64, reduction = "none"} : (!relax.tensor<["n", "m"], f32>, !relax.tensor<["k", "m"], i64>, !relax.tensor<["k", "m"], f32>) -> !relax.tensor<"*", f32>
  return
}

// CHECK-LABEL: func.func @scatter_elements_unknown
// CHECK: "relax.scatter_elements"{{.*}} -> !relax.tensor<["?", 4], f32>{{$}}
// CHECK: "relax.scatter_elements"{{.*}} -> !relax.tensor<"*", f32>{{$}}
func.func @scatter_elements_unknown(%a0: !relax.tensor<["?", 4], f32>, %a1: !relax.tensor<["?", 4], i64>, %a2: !relax.tensor<[2, 4], f32>, %a3: !relax.tensor<"*", f32>) {
  %0 = "relax.scatter_elements"(%a0, %a1, %a2) {axis = 0 : i64, reduction = "none"} : (!relax.tensor<["?", 4], f32>, !relax.tensor<["?", 4], i64>, !relax.tensor<[2, 4], f32>) -> !relax.tensor<"*", f32>
  %1 = "relax.scatter_elements"(%a3, %a1, %a2) {axis = 0 : i64, reduction = "none"} : (!relax.tensor<"*", f32>, !relax.tensor<["?", 4], i64>, !relax.tensor<[2, 4], f32>) -> !relax.tensor<"*", f32>
  return
}

// Results flow on through a dataflow block and into the function's signature.
// CHECK-LABEL: func.func @chain
// CHECK-SAME: -> (!relax.tensor<["n + 2", 8], f32>, !relax.tensor<["n + 2", 4], f32>)
// CHECK: "relax.pad"{{.*}} -> !relax.tensor<["n + 2", 4], f32>{{$}}
// CHECK: "relax.concat"{{.*}} -> !relax.tensor<["n + 2", 8], f32>{{$}}
// CHECK: "relax.split"{{.*}} -> (!relax.tensor<["n + 2", 4], f32>, !relax.tensor<["n + 2", 4], f32>){{$}}
// CHECK: scf.yield {{.*}} : !relax.tensor<["n + 2", 8], f32>, !relax.tensor<["n + 2", 4], f32>
func.func @chain(%x: !relax.tensor<["n", 4], f32>) -> (!relax.tensor<"*", f32>, !relax.tensor<"*", f32>) {
  %r:2 = scf.execute_region -> (!relax.tensor<"*", f32>, !relax.tensor<"*", f32>) no_inline {
    %p = "relax.pad"(%x) {mode = "constant", pad_width = [1, 1, 0, 0], value = 0.0 : f64} : (!relax.tensor<["n", 4], f32>) -> !relax.tensor<"*", f32>
    %c = "relax.concat"(%p, %p) {axis = 1 : i64} : (!relax.tensor<"*", f32>, !relax.tensor<"*", f32>) -> !relax.tensor<"*", f32>
    %s:2 = "relax.split"(%c) {axis = 1 : i64, indices = [], sections = 2 : i64} : (!relax.tensor<"*", f32>) -> (!relax.tensor<"*", f32>, !relax.tensor<"*", f32>)
    scf.yield %c, %s#1 : !relax.tensor<"*", f32>, !relax.tensor<"*", f32>
  } {relax.dataflow}
  return %r#0, %r#1 : !relax.tensor<"*", f32>, !relax.tensor<"*", f32>
}

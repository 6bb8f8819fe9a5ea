// relax-canonicalize: exact algebraic cleanups, one function per rule (and cases a rule must leave
// alone). Run twice: the second run changes nothing.
// RUN: relax-opt %s --relax-canonicalize --relax-canonicalize | FileCheck %s

// CHECK-LABEL: func.func @astype_same
// CHECK-NEXT: %[[C:.*]] = "relax.astype"(%arg0) {dtype = "f16"}
// CHECK-NEXT: return %arg0, %[[C]]
func.func @astype_same(%x: !relax.tensor<["n", "?"], f32>) -> (!relax.tensor<["n", "?"], f32>, !relax.tensor<["n", "?"], f16>) {
  %0 = "relax.astype"(%x) {dtype = "f32"} : (!relax.tensor<["n", "?"], f32>) -> !relax.tensor<["n", "?"], f32>
  %1 = "relax.astype"(%x) {dtype = "f16"} : (!relax.tensor<["n", "?"], f32>) -> !relax.tensor<["n", "?"], f16>
  return %0, %1 : !relax.tensor<["n", "?"], f32>, !relax.tensor<["n", "?"], f16>
}

// CHECK-LABEL: func.func @reshape_same
// CHECK-NEXT: %[[R:.*]] = "relax.reshape"(%arg1)
// CHECK-NEXT: return %arg0, %[[R]]
func.func @reshape_same(%x: !relax.tensor<["b", "s", 64], f32>, %y: !relax.tensor<["?", 4], f32>) -> (!relax.tensor<["b", "s", 64], f32>, !relax.tensor<["?", 4], f32>) {
  %0 = "relax.reshape"(%x) {shape = [0, "s", -1]} : (!relax.tensor<["b", "s", 64], f32>) -> !relax.tensor<["b", "s", 64], f32>
  // an unknown dim may differ: kept
  %1 = "relax.reshape"(%y) {shape = [-1, 4]} : (!relax.tensor<["?", 4], f32>) -> !relax.tensor<["?", 4], f32>
  return %0, %1 : !relax.tensor<["b", "s", 64], f32>, !relax.tensor<["?", 4], f32>
}

// CHECK-LABEL: func.func @reshape_reshape
// CHECK-NEXT: %[[R:.*]] = "relax.reshape"(%arg0) {shape = ["b * s", 64]} : (!relax.tensor<["b", "s", 64], f32>) -> !relax.tensor<["b * s", 64], f32>
// CHECK-NEXT: return %[[R]], %arg0
func.func @reshape_reshape(%x: !relax.tensor<["b", "s", 64], f32>) -> (!relax.tensor<["b * s", 64], f32>, !relax.tensor<["b", "s", 64], f32>) {
  %0 = "relax.reshape"(%x) {shape = [0, 0, 4, 16]} : (!relax.tensor<["b", "s", 64], f32>) -> !relax.tensor<["b", "s", 4, 16], f32>
  %1 = "relax.reshape"(%0) {shape = [-1, 64]} : (!relax.tensor<["b", "s", 4, 16], f32>) -> !relax.tensor<["b * s", 64], f32>
  %2 = "relax.reshape"(%0) {shape = [0, 0, 64]} : (!relax.tensor<["b", "s", 4, 16], f32>) -> !relax.tensor<["b", "s", 64], f32>
  return %1, %2 : !relax.tensor<["b * s", 64], f32>, !relax.tensor<["b", "s", 64], f32>
}

// The inner reshape's size check is not implied (n vs m * 4): the chain stays.
// CHECK-LABEL: func.func @reshape_reshape_checked
// CHECK-NEXT: "relax.reshape"(%arg0)
// CHECK-NEXT: "relax.reshape"
func.func @reshape_reshape_checked(%x: !relax.tensor<["n"], f32>) -> !relax.tensor<["m * 4"], f32> {
  %0 = "relax.reshape"(%x) {shape = ["m", 4]} : (!relax.tensor<["n"], f32>) -> !relax.tensor<["m", 4], f32>
  %1 = "relax.reshape"(%0) {shape = [-1]} : (!relax.tensor<["m", 4], f32>) -> !relax.tensor<["m * 4"], f32>
  return %1 : !relax.tensor<["m * 4"], f32>
}

// CHECK-LABEL: func.func @permutes
// CHECK-NEXT: %[[P:.*]] = "relax.permute_dims"(%arg0) {axes = [0, 2, 3, 1]} : (!relax.tensor<["b", "s", 8, 64], f32>) -> !relax.tensor<["b", 8, 64, "s"], f32>
// CHECK-NEXT: return %arg0, %[[P]], %arg0
func.func @permutes(%x: !relax.tensor<["b", "s", 8, 64], f32>) -> (!relax.tensor<["b", "s", 8, 64], f32>, !relax.tensor<["b", 8, 64, "s"], f32>, !relax.tensor<["b", "s", 8, 64], f32>) {
  %0 = "relax.permute_dims"(%x) {axes = [0, 1, 2, 3]} : (!relax.tensor<["b", "s", 8, 64], f32>) -> !relax.tensor<["b", "s", 8, 64], f32>
  %1 = "relax.permute_dims"(%x) {axes = [0, 2, 1, 3]} : (!relax.tensor<["b", "s", 8, 64], f32>) -> !relax.tensor<["b", 8, "s", 64], f32>
  %2 = "relax.permute_dims"(%1) {axes = [0, 1, 3, 2]} : (!relax.tensor<["b", 8, "s", 64], f32>) -> !relax.tensor<["b", 8, 64, "s"], f32>
  %3 = "relax.permute_dims"(%1) {axes = [0, 2, 1, 3]} : (!relax.tensor<["b", 8, "s", 64], f32>) -> !relax.tensor<["b", "s", 8, 64], f32>
  return %0, %2, %3 : !relax.tensor<["b", "s", 8, 64], f32>, !relax.tensor<["b", 8, 64, "s"], f32>, !relax.tensor<["b", "s", 8, 64], f32>
}

// CHECK-LABEL: func.func @expand_squeeze
// CHECK-NEXT: %[[E:.*]] = "relax.expand_dims"(%arg0) {axes = [0, 2]}
// CHECK-NEXT: %[[S:.*]] = "relax.squeeze"(%[[E]]) {axes = [0]}
// CHECK-NEXT: return %arg0, %[[S]]
func.func @expand_squeeze(%x: !relax.tensor<["n", "m"], f32>) -> (!relax.tensor<["n", "m"], f32>, !relax.tensor<["n", 1, "m"], f32>) {
  %0 = "relax.expand_dims"(%x) {axes = [0, 2]} : (!relax.tensor<["n", "m"], f32>) -> !relax.tensor<[1, "n", 1, "m"], f32>
  %1 = "relax.squeeze"(%0) {axes = [2, 0]} : (!relax.tensor<[1, "n", 1, "m"], f32>) -> !relax.tensor<["n", "m"], f32>
  // squeezes only one of the inserted axes: kept
  %2 = "relax.squeeze"(%0) {axes = [0]} : (!relax.tensor<[1, "n", 1, "m"], f32>) -> !relax.tensor<["n", 1, "m"], f32>
  return %1, %2 : !relax.tensor<["n", "m"], f32>, !relax.tensor<["n", 1, "m"], f32>
}

// CHECK-LABEL: func.func @broadcast_same
// CHECK-NEXT: %[[B:.*]] = "relax.broadcast_to"(%arg0) {shape = [3, "n"]}
// CHECK-NEXT: return %arg0, %[[B]]
func.func @broadcast_same(%x: !relax.tensor<[1, "n"], f32>) -> (!relax.tensor<[1, "n"], f32>, !relax.tensor<[3, "n"], f32>) {
  %0 = "relax.broadcast_to"(%x) {shape = [1, "n"]} : (!relax.tensor<[1, "n"], f32>) -> !relax.tensor<[1, "n"], f32>
  %1 = "relax.broadcast_to"(%x) {shape = [3, "n"]} : (!relax.tensor<[1, "n"], f32>) -> !relax.tensor<[3, "n"], f32>
  return %0, %1 : !relax.tensor<[1, "n"], f32>, !relax.tensor<[3, "n"], f32>
}

// A cast to the value's own type goes; one that checks or binds stays.
// CHECK-LABEL: func.func @match_cast_same
// CHECK-NEXT: %[[C:.*]] = "relax.match_cast"(%arg1)
// CHECK-NEXT: return %arg0, %[[C]]
func.func @match_cast_same(%x: !relax.tensor<["n", 4], f32>, %y: !relax.tensor<["?"], f32>) -> (!relax.tensor<["n", 4], f32>, !relax.tensor<["k"], f32>) {
  %0 = "relax.match_cast"(%x) : (!relax.tensor<["n", 4], f32>) -> !relax.tensor<["n", 4], f32>
  %1 = "relax.match_cast"(%y) : (!relax.tensor<["?"], f32>) -> !relax.tensor<["k"], f32>
  return %0, %1 : !relax.tensor<["n", 4], f32>, !relax.tensor<["k"], f32>
}

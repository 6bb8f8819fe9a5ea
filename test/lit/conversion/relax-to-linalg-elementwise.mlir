// RUN: relax-opt %s --convert-relax-to-linalg | FileCheck %s

// Kernels of the elementwise ops: one call_tir per op, one parallel linalg.generic per kernel whose
// indexing maps do numpy broadcasting (a 1 against a larger dim reads index 0, a missing dim is dropped),
// dynamic dims stay `?`, and booleans are stored as i8 bytes.

// CHECK-DAG: #[[ID2:map[0-9]*]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG: #[[ROW:map[0-9]*]] = affine_map<(d0, d1) -> (d1)>
// CHECK-DAG: #[[COL0:map[0-9]*]] = affine_map<(d0, d1) -> (d0, 0)>
// CHECK-DAG: #[[ROW0:map[0-9]*]] = affine_map<(d0, d1) -> (0, d1)>
// CHECK-DAG: #[[SCALAR:map[0-9]*]] = affine_map<(d0, d1) -> ()>

// CHECK-LABEL: func.func @add_row(
// CHECK:         "relax.call_tir"(%arg0, %arg1) {callee = @add_0}
// CHECK-SAME:    -> !relax.tensor<["n", 4], f32>

// [n, 1] mod [1, m] gives [n, m].
// CHECK-LABEL: func.func @outer(
// CHECK:         "relax.call_tir"(%arg0, %arg1) {callee = @mod_0}
// CHECK-SAME:    -> !relax.tensor<["n", "m"], i32>

// CHECK-LABEL: func.func @scalar(
// CHECK:         "relax.call_tir"(%arg0, %arg1) {callee = @not_equal_0}

// A symbol against a constant: the kernel takes the constant, the caller checks it at run time.
// CHECK-LABEL: func.func @checked(
// CHECK:         %[[Y:.*]] = "relax.match_cast"(%arg1) : (!relax.tensor<["m"], f32>) -> !relax.tensor<[4], f32>
// CHECK:         "relax.call_tir"(%arg0, %[[Y]]) {callee = @maximum_0}

// CHECK-LABEL: func.func @select(
// CHECK:         "relax.call_tir"(%arg0, %arg1, %arg2) {callee = @where_0}

// CHECK-LABEL: func.func @cast(
// CHECK:         "relax.call_tir"(%arg0) {callee = @astype_0}

// Identical kernels are shared.
// CHECK-LABEL: func.func @unary(
// CHECK:         %[[S:.*]] = "relax.call_tir"(%arg0) {callee = @sigmoid_0}
// CHECK:         %[[C:.*]] = "relax.call_tir"(%[[S]]) {callee = @clip_0}
// CHECK:         "relax.call_tir"(%[[C]]) {callee = @sigmoid_0}

// CHECK-LABEL: func.func @logic(
// CHECK:         "relax.call_tir"(%arg0, %arg1) {callee = @logical_and_0}

// CHECK-LABEL: func.func private @add_0(%arg0: tensor<?x4xf32>, %arg1: tensor<4xf32>, %arg2: tensor<?x4xf32>) -> tensor<?x4xf32>
// CHECK:         linalg.generic {indexing_maps = [#[[ID2]], #[[ROW]], #[[ID2]]], iterator_types = ["parallel", "parallel"]}
// CHECK-SAME:      ins(%arg0, %arg1 : tensor<?x4xf32>, tensor<4xf32>) outs(%arg2 : tensor<?x4xf32>)
// CHECK:           arith.addf
// CHECK:           linalg.yield

// Integer mod: a guarded divisor (0 and -1 never reach remsi), then the divisor's sign.
// CHECK-LABEL: func.func private @mod_0(%arg0: tensor<?x1xi32>, %arg1: tensor<1x?xi32>, %arg2: tensor<?x?xi32>) -> tensor<?x?xi32>
// CHECK:         linalg.generic {indexing_maps = [#[[COL0]], #[[ROW0]], #[[ID2]]], iterator_types = ["parallel", "parallel"]}
// CHECK:           %[[SAFE:.*]] = arith.select %{{.*}}, %{{.*}}, %in_0 : i32
// CHECK:           %[[REM:.*]] = arith.remsi %in, %[[SAFE]] : i32
// CHECK:           %[[SUM:.*]] = arith.addi %[[REM]], %[[SAFE]] : i32
// CHECK:           arith.select %{{.*}}, %[[SUM]], %[[REM]] : i32

// A rank-0 operand maps to (); not_equal is unordered (true for NaN); the i1 result is stored as a byte.
// CHECK-LABEL: func.func private @not_equal_0(%arg0: tensor<?x3xf32>, %arg1: tensor<f32>, %arg2: tensor<?x3xi8>) -> tensor<?x3xi8>
// CHECK:         linalg.generic {indexing_maps = [#[[ID2]], #[[SCALAR]], #[[ID2]]]
// CHECK:           %[[FLAG:.*]] = arith.cmpf une, %in, %in_0 : f32
// CHECK:           arith.extui %[[FLAG]] : i1 to i8

// CHECK-LABEL: func.func private @maximum_0(%arg0: tensor<?x4xf32>, %arg1: tensor<4xf32>
// CHECK:           arith.maximumf

// CHECK-LABEL: func.func private @where_0(%arg0: tensor<?x1xi8>, %arg1: tensor<?x4xf32>, %arg2: tensor<4xf32>, %arg3: tensor<?x4xf32>)
// CHECK:         linalg.generic {indexing_maps = [#[[COL0]], #[[ID2]], #[[ROW]], #[[ID2]]]
// CHECK:           %[[COND:.*]] = arith.cmpi ne, %in, %{{.*}} : i8
// CHECK:           arith.select %[[COND]], %in_0, %in_1 : f32

// f32 to ui8 truncates through i32 (and wraps), ui8 being a signless i8.
// CHECK-LABEL: func.func private @astype_0(%arg0: tensor<?xf32>, %arg1: tensor<?xi8>) -> tensor<?xi8>
// CHECK:           %[[I:.*]] = arith.fptosi %in : f32 to i32
// CHECK:           arith.trunci %[[I]] : i32 to i8

// CHECK-LABEL: func.func private @sigmoid_0(%arg0: tensor<?x?xf16>, %arg1: tensor<?x?xf16>) -> tensor<?x?xf16>
// CHECK:           math.exp %{{.*}} : f16
// CHECK:           arith.divf

// CHECK-LABEL: func.func private @clip_0(
// CHECK:           %[[LO:.*]] = arith.constant 0.000000e+00 : f16
// CHECK:           %[[LOW:.*]] = arith.maximumf %in, %[[LO]] : f16
// CHECK:           %[[HI:.*]] = arith.constant 6.000000e+00 : f16
// CHECK:           arith.minimumf %[[LOW]], %[[HI]] : f16

// Logic on booleans is byte logic on 0/1.
// CHECK-LABEL: func.func private @logical_and_0(%arg0: tensor<?xi8>, %arg1: tensor<?xi8>, %arg2: tensor<?xi8>) -> tensor<?xi8>
// CHECK:           %[[B:.*]] = arith.andi %in, %in_0 : i8
// CHECK:           linalg.yield %[[B]] : i8

func.func @add_row(%x: !relax.tensor<["n", 4], f32>, %b: !relax.tensor<[4], f32>) -> !relax.tensor<["n", 4], f32> {
  %0 = "relax.add"(%x, %b) : (!relax.tensor<["n", 4], f32>, !relax.tensor<[4], f32>) -> !relax.tensor<["n", 4], f32>
  return %0 : !relax.tensor<["n", 4], f32>
}

func.func @outer(%x: !relax.tensor<["n", 1], i32>, %y: !relax.tensor<[1, "m"], i32>) -> !relax.tensor<["n", "m"], i32> {
  %0 = "relax.mod"(%x, %y) : (!relax.tensor<["n", 1], i32>, !relax.tensor<[1, "m"], i32>) -> !relax.tensor<["n", "m"], i32>
  return %0 : !relax.tensor<["n", "m"], i32>
}

func.func @scalar(%x: !relax.tensor<["n", 3], f32>, %s: !relax.tensor<[], f32>) -> !relax.tensor<["n", 3], i1> {
  %0 = "relax.not_equal"(%x, %s) : (!relax.tensor<["n", 3], f32>, !relax.tensor<[], f32>) -> !relax.tensor<["n", 3], i1>
  return %0 : !relax.tensor<["n", 3], i1>
}

func.func @checked(%x: !relax.tensor<["n", 4], f32>, %y: !relax.tensor<["m"], f32>) -> !relax.tensor<["n", 4], f32> {
  %0 = "relax.maximum"(%x, %y) : (!relax.tensor<["n", 4], f32>, !relax.tensor<["m"], f32>) -> !relax.tensor<["n", 4], f32>
  return %0 : !relax.tensor<["n", 4], f32>
}

func.func @select(%c: !relax.tensor<["n", 1], i1>, %x: !relax.tensor<["n", 4], f32>, %y: !relax.tensor<[4], f32>) -> !relax.tensor<["n", 4], f32> {
  %0 = "relax.where"(%c, %x, %y) : (!relax.tensor<["n", 1], i1>, !relax.tensor<["n", 4], f32>, !relax.tensor<[4], f32>) -> !relax.tensor<["n", 4], f32>
  return %0 : !relax.tensor<["n", 4], f32>
}

func.func @cast(%x: !relax.tensor<["n"], f32>) -> !relax.tensor<["n"], ui8> {
  %0 = "relax.astype"(%x) {dtype = "ui8"} : (!relax.tensor<["n"], f32>) -> !relax.tensor<["n"], ui8>
  return %0 : !relax.tensor<["n"], ui8>
}

func.func @unary(%x: !relax.tensor<["n", "k"], f16>) -> !relax.tensor<["n", "k"], f16> {
  %0 = "relax.sigmoid"(%x) : (!relax.tensor<["n", "k"], f16>) -> !relax.tensor<["n", "k"], f16>
  %1 = "relax.clip"(%0) {max = 6.0 : f64, min = 0.0 : f64} : (!relax.tensor<["n", "k"], f16>) -> !relax.tensor<["n", "k"], f16>
  %2 = "relax.sigmoid"(%1) : (!relax.tensor<["n", "k"], f16>) -> !relax.tensor<["n", "k"], f16>
  return %2 : !relax.tensor<["n", "k"], f16>
}

func.func @logic(%x: !relax.tensor<["n"], i1>, %y: !relax.tensor<["n"], i1>) -> !relax.tensor<["n"], i1> {
  %0 = "relax.logical_and"(%x, %y) : (!relax.tensor<["n"], i1>, !relax.tensor<["n"], i1>) -> !relax.tensor<["n"], i1>
  return %0 : !relax.tensor<["n"], i1>
}

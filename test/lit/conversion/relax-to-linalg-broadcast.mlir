// RUN: relax-opt %s --convert-relax-to-linalg | FileCheck %s

// Two symbols that may each be 1 broadcast at run time: relax.check_broadcast before the call; the kernel
// allocates its result (the dim that is not 1) and reads index 0 of an operand whose dim is 1. Shapes that
// prove no broadcast keep the plain maps.
// CHECK-LABEL: func.func @two_symbols(
// CHECK:         %[[C:.*]] = "relax.check_broadcast"(%arg0, %arg1) {dim_a = 0 : i64, dim_b = 0 : i64, op = "add"}
// CHECK:         "relax.call_tir"(%[[C]], %arg1) {callee = @[[K:add_[0-9]+]]}
// CHECK-LABEL: func.func @same_symbol(
// CHECK-NOT:     relax.check_broadcast
// CHECK:       func.func private @[[K]](
// CHECK:         linalg.generic {{.*}} outs(
// CHECK:           %[[I:.*]] = linalg.index 0
// CHECK:           %[[J:.*]] = arith.select %{{.*}}, %c0, %[[I]]
// CHECK:           tensor.extract %arg0[%[[J]]]
func.func @two_symbols(%x: !relax.tensor<["n"], f32>, %y: !relax.tensor<["m"], f32>) -> !relax.tensor<["?"], f32> {
  %0 = "relax.add"(%x, %y) : (!relax.tensor<["n"], f32>, !relax.tensor<["m"], f32>) -> !relax.tensor<["?"], f32>
  return %0 : !relax.tensor<["?"], f32>
}

func.func @same_symbol(%x: !relax.tensor<["n"], f32>, %y: !relax.tensor<["n"], f32>) -> !relax.tensor<["n"], f32> {
  %0 = "relax.add"(%x, %y) : (!relax.tensor<["n"], f32>, !relax.tensor<["n"], f32>) -> !relax.tensor<["n"], f32>
  return %0 : !relax.tensor<["n"], f32>
}

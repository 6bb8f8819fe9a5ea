// RUN: relax-opt %s --convert-relax-to-linalg | FileCheck %s

// Two symbols that may each be 1 broadcast at run time: the result dim is max(n, m) * min(n, m, 1) (the host
// computes it), relax.check_broadcast before the call, and the kernel reads index min(i, dim - 1) of each
// operand (0 where its dim is 1). Shapes that prove no broadcast keep the plain maps.
// CHECK-LABEL: func.func @two_symbols(
// CHECK:         %[[C:.*]] = "relax.check_broadcast"(%arg0, %arg1) {dim_a = 0 : i64, dim_b = 0 : i64, op = "add"}
// CHECK:         "relax.call_tir"(%[[C]], %arg1) {callee = @[[K:add_[0-9]+]]}
// CHECK-LABEL: func.func @same_symbol(
// CHECK-NOT:     relax.check_broadcast
// CHECK:       func.func private @[[K]](
// CHECK:         %[[D:.*]] = tensor.dim %arg0, %c0
// CHECK:         %[[LAST:.*]] = arith.subi %[[D]], %c1
// CHECK:         linalg.generic {{.*}} outs(%arg2
// CHECK:           %[[I:.*]] = linalg.index 0
// CHECK:           %[[J:.*]] = arith.minsi %[[I]], %[[LAST]]
// CHECK:           tensor.extract %arg0[%[[J]]]
func.func @two_symbols(%x: !relax.tensor<["n"], f32>, %y: !relax.tensor<["m"], f32>) -> !relax.tensor<["max(m, n) * min(min(m, n), 1)"], f32> {
  %0 = "relax.add"(%x, %y) : (!relax.tensor<["n"], f32>, !relax.tensor<["m"], f32>) -> !relax.tensor<["max(m, n) * min(min(m, n), 1)"], f32>
  return %0 : !relax.tensor<["max(m, n) * min(min(m, n), 1)"], f32>
}

func.func @same_symbol(%x: !relax.tensor<["n"], f32>, %y: !relax.tensor<["n"], f32>) -> !relax.tensor<["n"], f32> {
  %0 = "relax.add"(%x, %y) : (!relax.tensor<["n"], f32>, !relax.tensor<["n"], f32>) -> !relax.tensor<["n"], f32>
  return %0 : !relax.tensor<["n"], f32>
}

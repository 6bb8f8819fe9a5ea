// Shape deduction of relax.dequantize: [rows, 32 * groups] f32 from the data and the scales.
// RUN: relax-opt %s --relax-infer-shapes | FileCheck %s

// CHECK-LABEL: func.func @q4_0
func.func @q4_0(%d: !relax.tensor<["n", "16 * g"], ui8>, %s: !relax.tensor<["n", "g"], f16>) -> !relax.tensor<"*", f32> {
  // CHECK: "relax.dequantize"{{.*}} -> !relax.tensor<["n", "32 * g"], f32>
  %0 = "relax.dequantize"(%d, %s) {layout = "q4_0"} : (!relax.tensor<["n", "16 * g"], ui8>, !relax.tensor<["n", "g"], f16>) -> !relax.tensor<"*", f32>
  return %0 : !relax.tensor<"*", f32>
}

// CHECK-LABEL: func.func @q8_0
func.func @q8_0(%d: !relax.tensor<[0, 64], i8>, %s: !relax.tensor<[0, 2], f32>) -> !relax.tensor<"*", f32> {
  // CHECK: "relax.dequantize"{{.*}} -> !relax.tensor<[0, 64], f32>
  %0 = "relax.dequantize"(%d, %s) {layout = "q8_0"} : (!relax.tensor<[0, 64], i8>, !relax.tensor<[0, 2], f32>) -> !relax.tensor<"*", f32>
  return %0 : !relax.tensor<"*", f32>
}

// The groups come from the data when the scales' are unknown (q4f16_1: 8 values per ui32 word).
// CHECK-LABEL: func.func @q4f16_1
func.func @q4f16_1(%d: !relax.tensor<[7, "w"], ui32>, %s: !relax.tensor<"*", f16>) -> !relax.tensor<"*", f32> {
  // CHECK: "relax.dequantize"{{.*}} -> !relax.tensor<[7, "8 * w"], f32>
  %0 = "relax.dequantize"(%d, %s) {layout = "q4f16_1"} : (!relax.tensor<[7, "w"], ui32>, !relax.tensor<"*", f16>) -> !relax.tensor<"*", f32>
  return %0 : !relax.tensor<"*", f32>
}

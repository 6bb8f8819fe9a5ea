// Every unsupported op of a model is listed at once, with node name and opset; exit status 1.
// RUN: %python %S/Inputs/make_model.py unsupported %t.onnx
// RUN: not relax-import-onnx %t.onnx 2>&1 | FileCheck %s
// RUN: not relax-import-onnx %t.missing.onnx 2>&1 | FileCheck %s --check-prefix=MISSING
// RUN: not relax-import-onnx %s 2>&1 | FileCheck %s --check-prefix=GARBAGE

// CHECK: relax-import-onnx: error: the model uses 2 node(s) of unsupported ONNX ops:
// CHECK-NEXT: StringNormalizer (node 'normalize', opset 21)
// CHECK-NEXT: Loop (node 'loop', opset 21)

// MISSING: error: {{.*}}missing.onnx: no such file
// GARBAGE: error: {{.*}}import-onnx-invalid.mlir: not a readable ONNX model

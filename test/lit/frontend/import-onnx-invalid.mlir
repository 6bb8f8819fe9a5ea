// Every unsupported op of a model is listed at once, with node name and opset; exit status 1.
// RUN: %python %S/Inputs/make_model.py unsupported %t.onnx
// RUN: not relax-import-onnx %t.onnx 2>&1 | FileCheck %s
// RUN: not relax-import-onnx %t.missing.onnx 2>&1 | FileCheck %s --check-prefix=MISSING
// RUN: not relax-import-onnx %s 2>&1 | FileCheck %s --check-prefix=GARBAGE
// Models that break the ONNX spec: exit 1, an error line naming the input or node, no output file.
// RUN: %python %S/Inputs/make_model.py negative-dim %t.neg.onnx
// RUN: rm -f %t.neg.mlir && not relax-import-onnx %t.neg.onnx -o %t.neg.mlir 2>&1 | FileCheck %s --check-prefix=NEGDIM
// RUN: not test -e %t.neg.mlir
// RUN: %python %S/Inputs/make_model.py relu5 %t.relu5.onnx
// RUN: not relax-import-onnx %t.relu5.onnx 2>&1 | FileCheck %s --check-prefix=RELU5
// RUN: head -c 40 %t.relu5.onnx > %t.truncated.onnx
// RUN: not relax-import-onnx %t.truncated.onnx 2>&1 | FileCheck %s --check-prefix=TRUNCATED

// CHECK: relax-import-onnx: error: the model uses 2 node(s) of unsupported ONNX ops:
// CHECK-NEXT: StringNormalizer (node 'normalize', opset 21)
// CHECK-NEXT: TfIdfVectorizer (node 'tfidf', opset 21)

// MISSING: error: {{.*}}missing.onnx: no such file
// GARBAGE: error: {{.*}}import-onnx-invalid.mlir: not a readable ONNX model

// NEGDIM: relax-import-onnx: error: graph input 'x': dim 0 is -5; dims must be >= 0
// NEGDIM-NOT: Traceback
// RELU5: relax-import-onnx: error: ONNX node 'relu' (Relu, opset 21): has 5 inputs; Relu-14 takes 1
// TRUNCATED: relax-import-onnx: error:
// TRUNCATED-NOT: Traceback

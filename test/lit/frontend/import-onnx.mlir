// Shape chains of an exported model stay symbolic: Shape -> Gather -> Concat -> Reshape gives the
// reshape ["batch", "seq", 2, 4], and Range over the sequence length gives a ["seq", "seq"] mask.
// RUN: %python %S/Inputs/make_model.py heads %t.onnx
// RUN: relax-import-onnx %t.onnx | FileCheck %s
// RUN: relax-import-onnx %t.onnx -o %t.mlir && relax-opt %t.mlir --relax-verify --relax-infer-shapes | FileCheck %s
// RUN: relax-import-onnx %t.onnx --shape x=1,n,8 | FileCheck %s --check-prefix=SHAPE
// RUN: relax-import-onnx %t.onnx --mlir-print-debuginfo | FileCheck %s --check-prefix=LOC

// CHECK-LABEL: func.func @main
// CHECK-SAME: !relax.tensor<["batch", "seq", 8], f32> {relax.name = "x"}
// CHECK-SAME: -> (!relax.tensor<["batch", "seq", 2, 4], f32>, !relax.tensor<["seq", "seq"], i1>)
// CHECK: "relax.reshape"(%arg0) {shape = ["batch", "seq", 2, 4]}
// CHECK: "relax.arange"() {dtype = "i64", end = "seq", start = 0 : i64, step = 1 : i64}
// CHECK: "relax.less_equal"
// CHECK-SAME: -> !relax.tensor<["seq", "seq"], i1>
// CHECK-NOT: "?"

// SHAPE: -> (!relax.tensor<[1, "n", 2, 4], f32>, !relax.tensor<["n", "n"], i1>)

// LOC: "relax.reshape"{{.*}} loc([[LOC:#loc[0-9]+]])
// LOC: [[LOC]] = loc("Reshape_6")

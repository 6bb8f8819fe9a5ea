// relax-fuse-multiply-add: a float multiply used only by an add, and the add, may be contracted into an
// FMA (fastmath<contract>; scalars and vectors); a product with other uses stays as it is.
// RUN: relax-opt %s --relax-fuse-multiply-add | FileCheck %s
// RUN: relax-opt %s --relax-fuse-multiply-add --relax-fuse-multiply-add | FileCheck %s

// CHECK-LABEL: func.func @scalar
// CHECK-NEXT: %[[P:.*]] = arith.mulf %arg0, %arg1 fastmath<contract> : f32
// CHECK-NEXT: %[[R:.*]] = arith.addf %arg2, %[[P]] fastmath<contract> : f32
// CHECK-NEXT: return %[[R]]
func.func @scalar(%a: f32, %b: f32, %c: f32) -> f32 {
  %p = arith.mulf %a, %b : f32
  %s = arith.addf %c, %p : f32
  return %s : f32
}

// CHECK-LABEL: func.func @vector
// CHECK: arith.mulf %arg0, %arg1 fastmath<contract> : vector<8xf32>
// CHECK: arith.addf %{{.*}}, %arg2 fastmath<contract> : vector<8xf32>
func.func @vector(%a: vector<8xf32>, %b: vector<8xf32>, %c: vector<8xf32>) -> vector<8xf32> {
  %p = arith.mulf %a, %b : vector<8xf32>
  %s = arith.addf %p, %c : vector<8xf32>
  return %s : vector<8xf32>
}

// CHECK-LABEL: func.func @shared_product
// CHECK: arith.mulf %arg0, %arg1 : f32
// CHECK: arith.addf %{{.*}}, %arg2 : f32
func.func @shared_product(%a: f32, %b: f32, %c: f32) -> (f32, f32) {
  %p = arith.mulf %a, %b : f32
  %s = arith.addf %p, %c : f32
  return %s, %p : f32, f32
}

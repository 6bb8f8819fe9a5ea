// relax-approximate-math: f32 math.exp/erf/tanh (scalars and vectors) become inline arith polynomials,
// which LLVM can vectorize (libm calls it cannot); other element types and other math ops stay.
// RUN: relax-opt %s --relax-approximate-math | FileCheck %s

// CHECK-LABEL: func.func @exp_vector
// CHECK-NOT: math.exp
// CHECK: arith.bitcast %{{.*}} : vector<8xf32> to vector<8xi32>
// CHECK: arith.shli %{{.*}} : vector<8xi32>
// CHECK: arith.addi
// CHECK: arith.bitcast %{{.*}} : vector<8xi32> to vector<8xf32>
// CHECK: arith.cmpf uno
// CHECK: return
func.func @exp_vector(%x: vector<8xf32>) -> vector<8xf32> {
  %0 = math.exp %x : vector<8xf32>
  return %0 : vector<8xf32>
}

// CHECK-LABEL: func.func @erf_tanh_scalar
// CHECK-NOT: math.erf
// CHECK-NOT: math.tanh
// CHECK-NOT: math.exp
// CHECK: arith.divf
// CHECK: arith.select
// CHECK: return
func.func @erf_tanh_scalar(%x: f32) -> f32 {
  %0 = math.erf %x : f32
  %1 = math.tanh %0 : f32
  return %1 : f32
}

// CHECK-LABEL: func.func @untouched
// CHECK: math.exp %{{.*}} : f64
// CHECK: math.log %{{.*}} : f32
func.func @untouched(%x: f64, %y: f32) -> (f64, f32) {
  %0 = math.exp %x : f64
  %1 = math.log %y : f32
  return %0, %1 : f64, f32
}

// RUN: relax-opt %s --relax-infer-shapes --relax-bind-region-dims --convert-relax-to-linalg --relax-lower-host --split-input-file | FileCheck %s

// A branch: relax.condition reads the scalar and compares it with zero; scf.if yields host tensors (the join
// ["?", 4] is a tensor<?x4xf32>), and an output whose size differs per branch is returned (data-dependent),
// not written into a destination. The weakening casts check nothing.

// CHECK-LABEL: func.func @branch(
// CHECK-SAME:    %{{.*}}: memref<?x4xf32>, %{{.*}}: memref<f32>, %{{.*}}: memref<4xi64> {relax.role = "host"}) -> tensor<?x4xf32>
// CHECK:         %[[V:.*]] = tensor.extract %{{.*}}[] : tensor<f32>
// CHECK:         %[[C:.*]] = arith.cmpf une, %[[V]], %{{.*}} : f32
// CHECK:         %[[IF:.*]] = scf.if %[[C]] -> (tensor<?x4xf32>) {
// CHECK:           call @exp_0
// CHECK-NOT:       cf.cond_br
// CHECK:           scf.yield %{{.*}} : tensor<?x4xf32>
// CHECK:         } else {
// CHECK:           call @concat_0
// CHECK:           scf.yield %{{.*}} : tensor<?x4xf32>
// CHECK:         }
// CHECK:         return %[[IF]] : tensor<?x4xf32>
func.func @branch(%x: !relax.tensor<["n", 4], f32>, %p: !relax.tensor<[], f32>) -> !relax.tensor<"*", f32> {
  %c = "relax.condition"(%p) : (!relax.tensor<[], f32>) -> i1
  %r = scf.if %c -> !relax.tensor<"*", f32> {
    %a = "relax.exp"(%x) : (!relax.tensor<["n", 4], f32>) -> !relax.tensor<"*", f32>
    scf.yield %a : !relax.tensor<"*", f32>
  } else {
    %b = "relax.concat"(%x, %x) {axis = 0 : i64} : (!relax.tensor<["n", 4], f32>, !relax.tensor<["n", 4], f32>) -> !relax.tensor<"*", f32>
    scf.yield %b : !relax.tensor<"*", f32>
  }
  return %r : !relax.tensor<"*", f32>
}

// -----

// A loop whose carried tensor grows: its dims are read again in each iteration (the fresh symbol d0 bound by
// relax-bind-region-dims), a prim condition is compared with zero and the loop also stops once a check
// inside it has failed (the status is nonzero). The output of unknown size is returned.

// CHECK-LABEL: func.func @grow(
// CHECK-SAME:    %{{[^:]*}}: memref<?xf32>, %[[K:[^:]*]]: index, %[[STATUS:[^:]*]]: memref<4xi64> {relax.role = "host"}) -> tensor<?xf32>
// CHECK:         %[[W:.*]] = scf.while (%[[A:.*]] = %{{.*}}) : (tensor<?xf32>) -> tensor<?xf32> {
// CHECK:           %[[C:.*]] = arith.cmpi ne, %[[K]], %{{.*}} : index
// CHECK:           memref.load %[[STATUS]]
// CHECK:           %[[GO:.*]] = arith.andi %[[C]], %{{.*}} : i1
// CHECK:           scf.condition(%[[GO]]) %[[A]] : tensor<?xf32>
// CHECK:         } do {
// CHECK:         ^bb0(%[[B:.*]]: tensor<?xf32>):
// CHECK:           %[[D0:.*]] = tensor.dim %[[B]]
// CHECK:           %[[D2:.*]] = arith.muli %[[D0]], %{{.*}} : index
// CHECK:           bufferization.alloc_tensor(%[[D2]]) : tensor<?xf32>
// CHECK:           call @concat_0
// CHECK:           scf.yield %{{.*}} : tensor<?xf32>
// CHECK:         }
// CHECK:         return %[[W]] : tensor<?xf32>
func.func @grow(%x: !relax.tensor<["n"], f32>, %k: !relax.prim<"k">) -> !relax.tensor<"*", f32> {
  %x0 = "relax.match_cast"(%x) : (!relax.tensor<["n"], f32>) -> !relax.tensor<"*", f32>
  %r = scf.while (%a = %x0) : (!relax.tensor<"*", f32>) -> (!relax.tensor<"*", f32>) {
    %c = "relax.condition"(%k) : (!relax.prim<"k">) -> i1
    scf.condition(%c) %a : !relax.tensor<"*", f32>
  } do {
  ^bb0(%a: !relax.tensor<"*", f32>):
    %b = "relax.concat"(%a, %a) {axis = 0 : i64} : (!relax.tensor<"*", f32>, !relax.tensor<"*", f32>) -> !relax.tensor<"*", f32>
    scf.yield %b : !relax.tensor<"*", f32>
  }
  return %r : !relax.tensor<"*", f32>
}

// -----

// A match_cast that checks (not binds) a dim inside a loop body cannot branch out of the region: it records
// the failure in the status and goes on with an uninitialized tensor of the expected shape, so the kernels
// after it stay inside their buffers until the loop stops and the runtime raises.

// CHECK-LABEL: func.func @checked_in_loop(
// CHECK:         scf.while
// CHECK:         } do {
// CHECK:           %[[D:.*]] = tensor.dim %{{.*}}, %{{.*}} : tensor<?xf32>
// CHECK:           %[[OK:.*]] = arith.cmpi eq, %[[D]], %[[N:.*]] : index
// CHECK:           scf.if
// CHECK:             memref.store
// CHECK:           %[[E:.*]] = tensor.empty(%[[N]]) : tensor<?xf32>
// CHECK:           %[[SAFE:.*]] = arith.select %[[OK]], %{{.*}}, %[[E]] : tensor<?xf32>
// CHECK:           call @add_0(%[[SAFE]]
// CHECK:           call @concat_0

func.func @checked_in_loop(%x: !relax.tensor<["n"], f32>, %k: !relax.prim<"k">) -> !relax.tensor<"*", f32> {
  %x0 = "relax.match_cast"(%x) : (!relax.tensor<["n"], f32>) -> !relax.tensor<"*", f32>
  %r = scf.while (%a = %x0) : (!relax.tensor<"*", f32>) -> (!relax.tensor<"*", f32>) {
    %c = "relax.condition"(%k) : (!relax.prim<"k">) -> i1
    scf.condition(%c) %a : !relax.tensor<"*", f32>
  } do {
  ^bb0(%a: !relax.tensor<"*", f32>):
    %s = "relax.match_cast"(%a) : (!relax.tensor<"*", f32>) -> !relax.tensor<["n"], f32>
    %b = "relax.add"(%s, %x) : (!relax.tensor<["n"], f32>, !relax.tensor<["n"], f32>) -> !relax.tensor<["n"], f32>
    %g = "relax.concat"(%b, %b) {axis = 0 : i64} : (!relax.tensor<["n"], f32>, !relax.tensor<["n"], f32>) -> !relax.tensor<"*", f32>
    scf.yield %g : !relax.tensor<"*", f32>
  }
  return %r : !relax.tensor<"*", f32>
}

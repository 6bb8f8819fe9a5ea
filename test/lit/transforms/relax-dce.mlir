// relax-dce: dead pure relax ops and dead dataflow outputs go; match_casts that can fail and
// call_dps_library stay. Run twice: the second run changes nothing.
// RUN: relax-opt %s --relax-dce --relax-dce | FileCheck %s

// CHECK-LABEL: func.func @dead_chain
// CHECK-NEXT: %[[E:.*]] = "relax.exp"(%arg0)
// CHECK-NEXT: return %[[E]]
func.func @dead_chain(%x: !relax.tensor<["n", 4], f32>) -> !relax.tensor<["n", 4], f32> {
  %s = "relax.shape_of"(%x) : (!relax.tensor<["n", 4], f32>) -> !relax.shape<["n", 4]>
  %d = "relax.get_dim"(%s) {index = 0 : i64} : (!relax.shape<["n", 4]>) -> !relax.prim<"n">
  %0 = "relax.exp"(%x) : (!relax.tensor<["n", 4], f32>) -> !relax.tensor<["n", 4], f32>
  %1 = "relax.log"(%0) : (!relax.tensor<["n", 4], f32>) -> !relax.tensor<["n", 4], f32>
  %2 = "relax.sum"(%1) {axes = [1], keepdims = false} : (!relax.tensor<["n", 4], f32>) -> !relax.tensor<["n"], f32>
  return %0 : !relax.tensor<["n", 4], f32>
}

// A dataflow output nothing uses is dropped, with the ops only it needed.
// CHECK-LABEL: func.func @dataflow_outputs
// CHECK: %[[R:.*]] = scf.execute_region -> !relax.tensor<["n", 4], f32> no_inline {
// CHECK-NEXT: %[[A:.*]] = "relax.abs"(%arg0)
// CHECK-NEXT: scf.yield %[[A]]
// CHECK-NEXT: } {relax.dataflow}
// CHECK-NEXT: return %[[R]]
func.func @dataflow_outputs(%x: !relax.tensor<["n", 4], f32>) -> !relax.tensor<["n", 4], f32> {
  %r:2 = scf.execute_region -> (!relax.tensor<["n", 4], f32>, !relax.tensor<["n", 4], f32>) no_inline {
    %0 = "relax.exp"(%x) : (!relax.tensor<["n", 4], f32>) -> !relax.tensor<["n", 4], f32>
    %1 = "relax.abs"(%x) : (!relax.tensor<["n", 4], f32>) -> !relax.tensor<["n", 4], f32>
    %2 = "relax.neg"(%1) : (!relax.tensor<["n", 4], f32>) -> !relax.tensor<["n", 4], f32>
    scf.yield %0, %1 : !relax.tensor<["n", 4], f32>, !relax.tensor<["n", 4], f32>
  } {relax.dataflow}
  return %r#1 : !relax.tensor<["n", 4], f32>
}

// A dataflow block whose outputs are all dead disappears.
// CHECK-LABEL: func.func @dead_block
// CHECK-NOT: scf.execute_region
// CHECK: return %arg0
func.func @dead_block(%x: !relax.tensor<["n"], f32>) -> !relax.tensor<["n"], f32> {
  %r = scf.execute_region -> !relax.tensor<["n"], f32> no_inline {
    %0 = "relax.exp"(%x) : (!relax.tensor<["n"], f32>) -> !relax.tensor<["n"], f32>
    scf.yield %0 : !relax.tensor<["n"], f32>
  } {relax.dataflow}
  return %x : !relax.tensor<["n"], f32>
}

// match_cast: kept when its check can fail (even unused); removed when the source type implies the
// target. call_dps_library is kept.
// CHECK-LABEL: func.func @casts
// CHECK-NEXT: "relax.match_cast"(%arg0) : (!relax.tensor<"*", f32>) -> !relax.tensor<["m", 4], f32>
// CHECK-NEXT: "relax.call_dps_library"
// CHECK-NEXT: return
func.func @casts(%x: !relax.tensor<"*", f32>, %y: !relax.tensor<["n", 4], f32>) {
  %0 = "relax.match_cast"(%x) : (!relax.tensor<"*", f32>) -> !relax.tensor<["m", 4], f32>
  %1 = "relax.match_cast"(%y) : (!relax.tensor<["n", 4], f32>) -> !relax.tensor<["n", "?"], f32>
  %2 = "relax.match_cast"(%y) : (!relax.tensor<["n", 4], f32>) -> !relax.object
  %3 = "relax.call_dps_library"(%y) {callee = "ext"} : (!relax.tensor<["n", 4], f32>) -> !relax.tensor<["n", 4], f32>
  return
}

// A dead match_cast whose symbol a later live op's type names is kept (it also checks).
// CHECK-LABEL: func.func @cast_binds
// CHECK-NEXT: "relax.match_cast"
// CHECK-NEXT: "relax.match_cast"
// CHECK-NEXT: "relax.shape_of"
func.func @cast_binds(%x: !relax.tensor<["?"], f32>) -> !relax.shape<["k"]> {
  %0 = "relax.match_cast"(%x) : (!relax.tensor<["?"], f32>) -> !relax.tensor<["k"], f32>
  %1 = "relax.match_cast"(%x) : (!relax.tensor<["?"], f32>) -> !relax.tensor<["k"], f32>
  %2 = "relax.shape_of"(%1) : (!relax.tensor<["k"], f32>) -> !relax.shape<["k"]>
  return %2 : !relax.shape<["k"]>
}

// Dead ops inside the branches of an scf.if go, and so does a value outside that only they used;
// the values the branches yield stay.
// CHECK-LABEL: func.func @dead_in_if
// CHECK-NOT: relax.abs
// CHECK: scf.if
// CHECK-NEXT: %[[E:.*]] = "relax.exp"
// CHECK-NEXT: scf.yield %[[E]]
// CHECK-NEXT: } else {
// CHECK-NEXT: %[[N:.*]] = "relax.neg"
// CHECK-NEXT: scf.yield %[[N]]
func.func @dead_in_if(%x: !relax.tensor<["n"], f32>, %p: !relax.tensor<[], i1>) -> !relax.tensor<["n"], f32> {
  %c = "relax.condition"(%p) : (!relax.tensor<[], i1>) -> i1
  %u = "relax.abs"(%x) : (!relax.tensor<["n"], f32>) -> !relax.tensor<["n"], f32>
  %r = scf.if %c -> !relax.tensor<["n"], f32> {
    %a = "relax.exp"(%x) : (!relax.tensor<["n"], f32>) -> !relax.tensor<["n"], f32>
    %dead = "relax.log"(%u) : (!relax.tensor<["n"], f32>) -> !relax.tensor<["n"], f32>
    scf.yield %a : !relax.tensor<["n"], f32>
  } else {
    %b = "relax.neg"(%x) : (!relax.tensor<["n"], f32>) -> !relax.tensor<["n"], f32>
    %s = "relax.shape_of"(%b) : (!relax.tensor<["n"], f32>) -> !relax.shape<["n"]>
    scf.yield %b : !relax.tensor<["n"], f32>
  }
  return %r : !relax.tensor<["n"], f32>
}

// Dead ops in both regions of an scf.while go; the condition and the carried value stay.
// CHECK-LABEL: func.func @dead_in_while
// CHECK: scf.while
// CHECK-NEXT: "relax.condition"
// CHECK-NEXT: scf.condition
// CHECK: do {
// CHECK-NEXT: ^bb0(%[[A:.*]]: !relax.tensor<["n"], f32>):
// CHECK-NEXT: %[[B:.*]] = "relax.add"(%[[A]], %[[A]])
// CHECK-NEXT: scf.yield %[[B]]
func.func @dead_in_while(%x: !relax.tensor<["n"], f32>, %k: !relax.prim<"k">) -> !relax.tensor<["n"], f32> {
  %r = scf.while (%a = %x) : (!relax.tensor<["n"], f32>) -> (!relax.tensor<["n"], f32>) {
    %c = "relax.condition"(%k) : (!relax.prim<"k">) -> i1
    %d = "relax.exp"(%a) : (!relax.tensor<["n"], f32>) -> !relax.tensor<["n"], f32>
    scf.condition(%c) %a : !relax.tensor<["n"], f32>
  } do {
  ^bb0(%a: !relax.tensor<["n"], f32>):
    %b = "relax.add"(%a, %a) : (!relax.tensor<["n"], f32>, !relax.tensor<["n"], f32>) -> !relax.tensor<["n"], f32>
    %d = "relax.sum"(%b) {axes = [0], keepdims = false} : (!relax.tensor<["n"], f32>) -> !relax.tensor<[], f32>
    scf.yield %b : !relax.tensor<["n"], f32>
  }
  return %r : !relax.tensor<["n"], f32>
}

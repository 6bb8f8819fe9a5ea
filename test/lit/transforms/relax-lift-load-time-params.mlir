// relax-lift-load-time-params: pure computations on load-time parameters (relax.load_time_params) move to
// @__load_params, run once at load; the functions take the lifted values instead. With relax-pack-weights
// first, a matmul by a load-time weight reads panels packed at load (no BLAS, no repacking per call).
// RUN: relax-opt %s --relax-pack-weights --relax-lift-load-time-params --split-input-file | FileCheck %s

// Two functions with the same weight share one packed copy; g (used as is) stays a raw load-time parameter.
// CHECK-LABEL: func.func @prefill(
// CHECK-SAME:    %[[X:.*]]: !relax.tensor<["b", 3], f32> {relax.name = "x"}, %{{.*}}: !relax.tensor<[2], f32> {relax.name = "g"}, %[[P:.*]]: !relax.tensor<[2, 3, 16], f32> {relax.name = "w:lifted0"})
// CHECK-SAME:    relax.load_time_params = ["g", "w:lifted0"]
// CHECK-NOT:     relax.pad
// CHECK:         "relax.matmul_packed"(%[[X]], %[[P]]) {n = 2 : i64}
// CHECK-LABEL: func.func @decode(
// CHECK-SAME:    {relax.name = "w:lifted0"}
// CHECK-SAME:    relax.load_time_params = ["g", "w:lifted0"]
// CHECK-LABEL: func.func @__load_params(
// CHECK-SAME:    %[[W:.*]]: !relax.tensor<[3, 2], f32> {relax.name = "w"}, %{{.*}}: !relax.tensor<[2], f32> {relax.name = "g"}) -> !relax.tensor<[2, 3, 16], f32>
// CHECK-SAME:    relax.load_outputs = ["w:lifted0"]
// CHECK-NEXT:    %[[PAD:.*]] = "relax.pad"(%[[W]])
// CHECK-NEXT:    %[[R:.*]] = "relax.reshape"(%[[PAD]])
// CHECK-NEXT:    %[[T:.*]] = "relax.permute_dims"(%[[R]])
// CHECK-NEXT:    return %[[T]]
func.func @prefill(%x: !relax.tensor<["b", 3], f32> {relax.name = "x"}, %w: !relax.tensor<[3, 2], f32> {relax.name = "w"}, %g: !relax.tensor<[2], f32> {relax.name = "g"}) -> !relax.tensor<["b", 2], f32> attributes {relax.load_time_params = ["w", "g"]} {
  %y = "relax.matmul"(%x, %w) : (!relax.tensor<["b", 3], f32>, !relax.tensor<[3, 2], f32>) -> !relax.tensor<["b", 2], f32>
  %z = "relax.multiply"(%y, %g) : (!relax.tensor<["b", 2], f32>, !relax.tensor<[2], f32>) -> !relax.tensor<["b", 2], f32>
  return %z : !relax.tensor<["b", 2], f32>
}
func.func @decode(%x: !relax.tensor<[1, 3], f32> {relax.name = "x"}, %w: !relax.tensor<[3, 2], f32> {relax.name = "w"}, %g: !relax.tensor<[2], f32> {relax.name = "g"}) -> !relax.tensor<[1, 2], f32> attributes {relax.load_time_params = ["w", "g"]} {
  %y = "relax.matmul"(%x, %w) : (!relax.tensor<[1, 3], f32>, !relax.tensor<[3, 2], f32>) -> !relax.tensor<[1, 2], f32>
  %z = "relax.multiply"(%y, %g) : (!relax.tensor<[1, 2], f32>, !relax.tensor<[2], f32>) -> !relax.tensor<[1, 2], f32>
  return %z : !relax.tensor<[1, 2], f32>
}

// -----

// Any pure computation is lifted (with the constants it reads), not only packing; a parameter that is not
// load-time (x) and what depends on it stay. Names without relax.name are #i.
// CHECK-LABEL: func.func @generic(
// CHECK-SAME:    %[[X:.*]]: !relax.tensor<[4], f32>, %[[L:.*]]: !relax.tensor<[4], f32> {relax.name = "#1:lifted0"})
// CHECK-SAME:    relax.load_time_params = ["#1:lifted0"]
// CHECK-NEXT:    %[[Y:.*]] = "relax.add"(%[[X]], %[[L]])
// CHECK-NEXT:    return %[[Y]]
// CHECK-LABEL: func.func @__load_params(
// CHECK-SAME:    %[[W:.*]]: !relax.tensor<[4], f32> {relax.name = "#1"})
// CHECK-NEXT:    %[[C:.*]] = "relax.constant"()
// CHECK-NEXT:    %[[M:.*]] = "relax.multiply"(%[[W]], %[[C]])
// CHECK-NEXT:    %[[E:.*]] = "relax.exp"(%[[M]])
// CHECK-NEXT:    return %[[E]]
func.func @generic(%x: !relax.tensor<[4], f32>, %w: !relax.tensor<[4], f32>) -> !relax.tensor<[4], f32> attributes {relax.load_time_params = ["#1"]} {
  %c = "relax.constant"() {value = dense<2.0> : tensor<f32>} : () -> !relax.tensor<[], f32>
  %m = "relax.multiply"(%w, %c) : (!relax.tensor<[4], f32>, !relax.tensor<[], f32>) -> !relax.tensor<[4], f32>
  %e = "relax.exp"(%m) : (!relax.tensor<[4], f32>) -> !relax.tensor<[4], f32>
  %y = "relax.add"(%x, %e) : (!relax.tensor<[4], f32>, !relax.tensor<[4], f32>) -> !relax.tensor<[4], f32>
  return %y : !relax.tensor<[4], f32>
}

// -----

// Calls: the private callee takes the packed weight; @layer__load packs it; each call site calls
// @layer__load on its weight, which the caller lifts into @__load_params (one packed copy per weight).
// CHECK-LABEL: func.func private @layer(
// CHECK-SAME:    %{{.*}}: !relax.tensor<["b", 3], f32> {relax.name = "x"}, %{{.*}}: !relax.tensor<[2, 3, 16], f32> {relax.name = "lifted0"})
// CHECK-NOT:     relax.pad
// CHECK:         relax.matmul_packed
// CHECK-LABEL: func.func @main(
// CHECK-SAME:    {relax.name = "w0:lifted0"}, %{{.*}}: !relax.tensor<[2, 3, 16], f32> {relax.name = "w1:lifted0"})
// CHECK-SAME:    relax.load_time_params = ["w0:lifted0", "w1:lifted0"]
// CHECK-NOT:     @layer__load
// CHECK:         "relax.call"(%{{.*}}) {callee = @layer}
// CHECK:         "relax.call"(%{{.*}}) {callee = @layer}
// CHECK-LABEL: func.func @__load_params(
// CHECK:         "relax.call"(%arg0) {callee = @layer__load}
// CHECK:         "relax.call"(%arg1) {callee = @layer__load}
// CHECK-LABEL: func.func private @layer__load(
// CHECK-SAME:    %{{.*}}: !relax.tensor<[3, 3], f32> {relax.name = "w"}) -> !relax.tensor<[2, 3, 16], f32>
// CHECK-SAME:    relax.load_callee
// CHECK:         relax.pad
func.func private @layer(%x: !relax.tensor<["b", 3], f32> {relax.name = "x"}, %w: !relax.tensor<[3, 3], f32> {relax.name = "w"}) -> !relax.tensor<["b", 3], f32> attributes {relax.load_time_params = ["w"]} {
  %y = "relax.matmul"(%x, %w) : (!relax.tensor<["b", 3], f32>, !relax.tensor<[3, 3], f32>) -> !relax.tensor<["b", 3], f32>
  return %y : !relax.tensor<["b", 3], f32>
}
func.func @main(%x: !relax.tensor<["b", 3], f32> {relax.name = "x"}, %w0: !relax.tensor<[3, 3], f32> {relax.name = "w0"}, %w1: !relax.tensor<[3, 3], f32> {relax.name = "w1"}) -> !relax.tensor<["b", 3], f32> attributes {relax.load_time_params = ["w0", "w1"]} {
  %y = "relax.call"(%x, %w0) {callee = @layer} : (!relax.tensor<["b", 3], f32>, !relax.tensor<[3, 3], f32>) -> !relax.tensor<["b", 3], f32>
  %z = "relax.call"(%y, %w1) {callee = @layer} : (!relax.tensor<["b", 3], f32>, !relax.tensor<[3, 3], f32>) -> !relax.tensor<["b", 3], f32>
  return %z : !relax.tensor<["b", 3], f32>
}

// -----

// Without relax.load_time_params nothing changes (no load function).
// CHECK-LABEL: func.func @plain(
// CHECK:         relax.matmul"
// CHECK-NOT:     __load_params
func.func @plain(%x: !relax.tensor<["b", 3], f32>, %w: !relax.tensor<[3, 2], f32>) -> !relax.tensor<["b", 2], f32> {
  %y = "relax.matmul"(%x, %w) : (!relax.tensor<["b", 3], f32>, !relax.tensor<[3, 2], f32>) -> !relax.tensor<["b", 2], f32>
  return %y : !relax.tensor<["b", 2], f32>
}

// -----

// Two callees packing their weight the same way (prefill's and decode's layer) share one load function, and
// the weight is packed once for both callers.
// CHECK-LABEL: func.func private @prefill_layer(
// CHECK-LABEL: func.func @prefill(
// CHECK-SAME:    relax.load_time_params = ["w:lifted0"]
// CHECK-LABEL: func.func private @decode_layer(
// CHECK-LABEL: func.func @decode(
// CHECK-SAME:    relax.load_time_params = ["w:lifted0"]
// CHECK-LABEL: func.func @__load_params(
// CHECK-SAME:    -> !relax.tensor<[2, 3, 16], f32> attributes {relax.load_outputs = ["w:lifted0"]}
// CHECK-NEXT:    "relax.call"(%arg0) {callee = @prefill_layer__load}
// CHECK-NEXT:    return
// CHECK-LABEL: func.func private @prefill_layer__load(
// CHECK-NOT:     func.func private @decode_layer__load
func.func private @prefill_layer(%x: !relax.tensor<["s", 3], f32> {relax.name = "x"}, %w: !relax.tensor<[3, 3], f32> {relax.name = "w"}) -> !relax.tensor<["s", 3], f32> attributes {relax.load_time_params = ["w"]} {
  %y = "relax.matmul"(%x, %w) : (!relax.tensor<["s", 3], f32>, !relax.tensor<[3, 3], f32>) -> !relax.tensor<["s", 3], f32>
  return %y : !relax.tensor<["s", 3], f32>
}
func.func @prefill(%x: !relax.tensor<["s", 3], f32> {relax.name = "x"}, %w: !relax.tensor<[3, 3], f32> {relax.name = "w"}) -> !relax.tensor<["s", 3], f32> attributes {relax.load_time_params = ["w"]} {
  %y = "relax.call"(%x, %w) {callee = @prefill_layer} : (!relax.tensor<["s", 3], f32>, !relax.tensor<[3, 3], f32>) -> !relax.tensor<["s", 3], f32>
  return %y : !relax.tensor<["s", 3], f32>
}
func.func private @decode_layer(%x: !relax.tensor<[1, 3], f32> {relax.name = "x"}, %w: !relax.tensor<[3, 3], f32> {relax.name = "w"}) -> !relax.tensor<[1, 3], f32> attributes {relax.load_time_params = ["w"]} {
  %y = "relax.matmul"(%x, %w) : (!relax.tensor<[1, 3], f32>, !relax.tensor<[3, 3], f32>) -> !relax.tensor<[1, 3], f32>
  return %y : !relax.tensor<[1, 3], f32>
}
func.func @decode(%x: !relax.tensor<[1, 3], f32> {relax.name = "x"}, %w: !relax.tensor<[3, 3], f32> {relax.name = "w"}) -> !relax.tensor<[1, 3], f32> attributes {relax.load_time_params = ["w"]} {
  %y = "relax.call"(%x, %w) {callee = @decode_layer} : (!relax.tensor<[1, 3], f32>, !relax.tensor<[3, 3], f32>) -> !relax.tensor<[1, 3], f32>
  return %y : !relax.tensor<[1, 3], f32>
}

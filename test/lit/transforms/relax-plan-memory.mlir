// RUN: relax-opt %s --pass-pipeline='builtin.module(convert-relax-to-linalg,relax-plan-memory,relax-plan-memory)' --split-input-file | FileCheck %s
// RUN: relax-opt %s --pass-pipeline='builtin.module(convert-relax-to-linalg,relax-plan-memory{report=true})' --split-input-file 2>&1 >/dev/null | FileCheck %s --check-prefix=REPORT
// RUN: relax-opt %s --pass-pipeline='builtin.module(convert-relax-to-linalg,relax-plan-memory,relax-lower-host)' --split-input-file | FileCheck %s --check-prefix=HOST

// Without bounds: a dead storage is reused when its symbolic size is proven large enough; the
// output is not planned (the runtime passes its destination).

// CHECK-LABEL: func.func @chain
// CHECK-SAME:    relax.storages = ["16 * n", "16 * n"]
// CHECK:         "relax.call_tir"(%arg0) {callee = @exp_0, relax.storage = [0]}
// CHECK:         "relax.call_tir"(%{{.*}}) {callee = @exp_0, relax.storage = [1]}
// CHECK:         "relax.call_tir"(%{{.*}}) {callee = @exp_0, relax.storage = [0]}
// CHECK:         "relax.call_tir"(%{{.*}}) {callee = @exp_0} :
// REPORT:      @chain: 3 intermediates in 2 storages
// REPORT:        peak (planned): 32 * n bytes = unbounded at the bounds
// REPORT:        allocate every intermediate: 48 * n bytes
// REPORT:        best liveness bound: 32 * n bytes
// REPORT:        not planned: %{{.*}} (function output)
// HOST-LABEL:  func.func @chain(
// HOST:          %[[N:.*]] = tensor.dim
// HOST:          %[[BYTES:.*]] = arith.muli %[[N]], %{{.*}} : index
// Each storage is allocated where it is first used.
// HOST:          %[[S0:.*]] = memref.alloc(%[[BYTES]]) {alignment = 64 : i64} : memref<?xi8>
// HOST:          %[[V0:.*]] = memref.view %[[S0]][%{{.*}}][%[[N]]] : memref<?xi8> to memref<?x4xf32>
// HOST:          bufferization.to_tensor %[[V0]] restrict writable
// HOST:          %[[S1:.*]] = memref.alloc(%[[BYTES]]) {alignment = 64 : i64} : memref<?xi8>
// HOST:          memref.view %[[S1]]
// HOST:          memref.view %[[S0]]
// HOST-NOT:      tensor.empty
// HOST:          return
func.func @chain(%x: !relax.tensor<["n", 4], f32>) -> !relax.tensor<["n", 4], f32> {
  %0 = scf.execute_region -> !relax.tensor<["n", 4], f32> no_inline {
    %1 = "relax.exp"(%x) : (!relax.tensor<["n", 4], f32>) -> !relax.tensor<["n", 4], f32>
    %2 = "relax.exp"(%1) : (!relax.tensor<["n", 4], f32>) -> !relax.tensor<["n", 4], f32>
    %3 = "relax.exp"(%2) : (!relax.tensor<["n", 4], f32>) -> !relax.tensor<["n", 4], f32>
    %4 = "relax.exp"(%3) : (!relax.tensor<["n", 4], f32>) -> !relax.tensor<["n", 4], f32>
    scf.yield %4 : !relax.tensor<["n", 4], f32>
  } {relax.dataflow}
  return %0 : !relax.tensor<["n", 4], f32>
}

// -----

// Bounded symbols: every storage has a constant size (the largest tensor it holds at the bounds);
// the dead n*4 buffer grows to hold the n*16 one.

// CHECK-LABEL: func.func @bounded
// CHECK-SAME:    relax.storages = [512, 512]
// CHECK:         {callee = @exp_0, relax.storage = [0]}
// CHECK:         {callee = @matmul_0, relax.storage = [1]}
// CHECK:         {callee = @exp_1, relax.storage = [0]}
// CHECK:         {callee = @matmul_1} :
// REPORT:      @bounded: 3 intermediates in 2 storages
// REPORT-NEXT:   bounds: n <= 8
// REPORT-NEXT:   storage 0 (static): 512 bytes, holds 2 tensors
// REPORT-NEXT:   storage 1 (static): 512 bytes, holds 1 tensors
// REPORT-NEXT:   peak (planned): 1024 bytes
// REPORT-NEXT:   allocate every intermediate: 144 * n bytes = 1152 at the bounds
// REPORT-NEXT:   best liveness bound: 128 * n bytes = 1024 at the bounds
// HOST-LABEL:  func.func @bounded(
// HOST:          memref.alloc() {alignment = 64 : i64} : memref<512xi8>
// HOST:          memref.view %{{.*}} : memref<512xi8> to memref<?x4xf32>
// HOST:          memref.alloc() {alignment = 64 : i64} : memref<512xi8>
func.func @bounded(%x: !relax.tensor<["n", 4], f32>, %w: !relax.tensor<[4, 16], f32>, %v: !relax.tensor<[16, 4], f32>) -> !relax.tensor<["n", 4], f32>
    attributes {relax.upper_bounds = {n = 8 : i64}} {
  %1 = "relax.exp"(%x) : (!relax.tensor<["n", 4], f32>) -> !relax.tensor<["n", 4], f32>
  %2 = "relax.matmul"(%1, %w) : (!relax.tensor<["n", 4], f32>, !relax.tensor<[4, 16], f32>) -> !relax.tensor<["n", 16], f32>
  %3 = "relax.exp"(%2) : (!relax.tensor<["n", 16], f32>) -> !relax.tensor<["n", 16], f32>
  %4 = "relax.matmul"(%3, %v) : (!relax.tensor<["n", 16], f32>, !relax.tensor<[16, 4], f32>) -> !relax.tensor<["n", 4], f32>
  return %4 : !relax.tensor<["n", 4], f32>
}

// -----

// A symbol without a bound is never planned as static, even next to bounded ones: the n*m tensors
// get symbolic storages, the n-only tensor a constant one.

// CHECK-LABEL: func.func @partly_bounded
// CHECK-SAME:    relax.storages = ["4 * m * n", 32, "4 * m * n"]
// REPORT:      @partly_bounded: 3 intermediates in 3 storages
// REPORT:        storage 0 (symbolic): 4 * m * n bytes
// REPORT:        storage 1 (static): 32 bytes
// REPORT:        peak (planned): 8 * m * n + 32 bytes = unbounded at the bounds
func.func @partly_bounded(%x: !relax.tensor<["n", "m"], f32>, %y: !relax.tensor<["n"], f32>) -> (!relax.tensor<["n", "m"], f32>, !relax.tensor<["n"], f32>)
    attributes {relax.upper_bounds = {n = 8 : i64}} {
  %1 = "relax.exp"(%x) : (!relax.tensor<["n", "m"], f32>) -> !relax.tensor<["n", "m"], f32>
  %2 = "relax.exp"(%y) : (!relax.tensor<["n"], f32>) -> !relax.tensor<["n"], f32>
  %3 = "relax.exp"(%1) : (!relax.tensor<["n", "m"], f32>) -> !relax.tensor<["n", "m"], f32>
  %4 = "relax.exp"(%3) : (!relax.tensor<["n", "m"], f32>) -> !relax.tensor<["n", "m"], f32>
  %5 = "relax.exp"(%2) : (!relax.tensor<["n"], f32>) -> !relax.tensor<["n"], f32>
  return %4, %5 : !relax.tensor<["n", "m"], f32>, !relax.tensor<["n"], f32>
}

// -----

// A tensor sized by a symbol that match_cast binds inside the function is not planned: its size is
// not known when the storages are allocated.

// CHECK-LABEL: func.func @late_symbol
// CHECK-NOT:     relax.storage
// CHECK:         return
// REPORT:      @late_symbol: 0 intermediates in 0 storages
// REPORT:        not planned: %{{.*}} (size uses symbols bound inside the function)
func.func @late_symbol(%x: !relax.tensor<["?"], f32>) -> !relax.tensor<["k"], f32> {
  %0 = "relax.match_cast"(%x) : (!relax.tensor<["?"], f32>) -> !relax.tensor<["k"], f32>
  %1 = "relax.exp"(%0) : (!relax.tensor<["k"], f32>) -> !relax.tensor<["k"], f32>
  %2 = "relax.exp"(%1) : (!relax.tensor<["k"], f32>) -> !relax.tensor<["k"], f32>
  return %2 : !relax.tensor<["k"], f32>
}

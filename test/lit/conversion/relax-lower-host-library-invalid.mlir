// RUN: relax-opt %s --relax-lower-host --split-input-file --verify-diagnostics

func.func @shape_argument(%x: !relax.tensor<["n"], f32>, %s: !relax.shape<["n"]>) -> !relax.tensor<["n"], f32> {
  // expected-error@below {{'relax.call_dps_library' op: argument #1 of type !relax.shape<["n"]> cannot be passed to a library function}}
  %0 = "relax.call_dps_library"(%x, %s) {callee = "lib"} : (!relax.tensor<["n"], f32>, !relax.shape<["n"]>) -> !relax.tensor<["n"], f32>
  return %0 : !relax.tensor<["n"], f32>
}

// -----

func.func @gemm_of_ints(%x: !relax.tensor<["m", 4], i32>, %w: !relax.tensor<[4, "n"], i32>) -> !relax.tensor<["m", "n"], i32> {
  // expected-error@below {{'relax.call_dps_library' op: relax_blas_gemm takes f32 or f64 tensors of one dtype, got i32}}
  %0 = "relax.call_dps_library"(%x, %w) {callee = "relax_blas_gemm"} : (!relax.tensor<["m", 4], i32>, !relax.tensor<[4, "n"], i32>) -> !relax.tensor<["m", "n"], i32>
  return %0 : !relax.tensor<["m", "n"], i32>
}

// -----

func.func @gemm_of_vectors(%x: !relax.tensor<[4], f32>, %w: !relax.tensor<[4, "n"], f32>) -> !relax.tensor<["n"], f32> {
  // expected-error@below {{'relax.call_dps_library' op: relax_blas_gemm: unsupported ranks [1, 2, 1]}}
  %0 = "relax.call_dps_library"(%x, %w) {callee = "relax_blas_gemm"} : (!relax.tensor<[4], f32>, !relax.tensor<[4, "n"], f32>) -> !relax.tensor<["n"], f32>
  return %0 : !relax.tensor<["n"], f32>
}

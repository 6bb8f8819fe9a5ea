// relax-compile: a shared library and its header; the LLVM IR for aarch64 calls no OpenMP or BLAS;
// unknown targets and unsupported outputs are errors with exit status 1.

// RUN: %python %S/../../../tools/relax-compile %s --target x86_64 -o %t.so --header %t.h --stats | FileCheck %s --check-prefix=STATS
// STATS: link
// STATS: functions: concat_exp -> relax_concat_exp
// STATS: needed: libc.so.6

// RUN: FileCheck %s --check-prefix=HEADER < %t.h
// HEADER: typedef struct relax_tensor {
// HEADER: @concat_exp, upper bounds: n <= 64
// HEADER-NEXT: input 0: x: tensor<[n, 4], f32>
// HEADER-NEXT: input 1: y: tensor<[m, 4], f32>
// HEADER-NEXT: output 0: tensor<[m + n, 4], f32>
// HEADER: #define RELAX_CONCAT_EXP_OUTPUT_DIMS 2
// HEADER: int relax_concat_exp(const relax_tensor *inputs, int64_t n_inputs, relax_tensor *outputs, int64_t n_outputs);
// HEADER: int relax_concat_exp_output_shapes(

// RUN: %python %S/../../../tools/relax-compile %s --target aarch64 --emit llvm -o %t.ll && FileCheck %s --check-prefix=LLVM < %t.ll
// LLVM: define void @_mlir_ciface_concat_exp(
// LLVM-NOT: __kmpc
// LLVM-NOT: cblas

// RUN: not %python %S/../../../tools/relax-compile %s --target riscv -o %t.so 2>&1 | FileCheck %s --check-prefix=TARGET
// TARGET: relax-compile: error: unknown target 'riscv'; available targets: aarch64, cpu, cuda, wasm32, webgpu, x86_64

// RUN: not %python %S/../../../tools/relax-compile %s --cpu bogus -o %t.so 2>&1 | FileCheck %s --check-prefix=CPU
// CPU: relax-compile: error: unknown CPU 'bogus' for x86_64; llc knows: {{.*}}x86-64-v2

// RUN: not %python %S/../../../tools/relax-compile %S/Inputs/nonzero.mlir -o %t.so 2>&1 | FileCheck %s --check-prefix=DYNAMIC
// DYNAMIC: relax-compile: error: @nz: output #0 {{.*}} depend on the data

func.func @concat_exp(%x: !relax.tensor<["n", 4], f32> {relax.name = "x"}, %y: !relax.tensor<["m", 4], f32> {relax.name = "y"})
    -> !relax.tensor<["m + n", 4], f32> attributes {relax.upper_bounds = {n = 64 : i64}} {
  %c = "relax.concat"(%x, %y) {axis = 0 : i64} : (!relax.tensor<["n", 4], f32>, !relax.tensor<["m", 4], f32>) -> !relax.tensor<["m + n", 4], f32>
  %e = "relax.exp"(%c) : (!relax.tensor<["m + n", 4], f32>) -> !relax.tensor<["m + n", 4], f32>
  return %e : !relax.tensor<["m + n", 4], f32>
}

// relax-parallelize-kernels and relax-schedule-kernels fold a linalg op whose iteration domain is statically
// empty to its init (tiling it aborts in MLIR 22).
// RUN: relax-opt %s --relax-schedule-kernels | FileCheck %s
// RUN: relax-opt %s --pass-pipeline='builtin.module(relax-parallelize-kernels{num-threads=2})' | FileCheck %s

// CHECK-LABEL: func.func private @matmul_0
// CHECK-NOT:   linalg.matmul
// CHECK:       return
func.func private @matmul_0(%a: tensor<?x0xf32>, %b: tensor<0x?xf32>, %out: tensor<?x?xf32>) -> tensor<?x?xf32> {
  %cst = arith.constant 0.000000e+00 : f32
  %0 = linalg.fill ins(%cst : f32) outs(%out : tensor<?x?xf32>) -> tensor<?x?xf32>
  %1 = linalg.matmul ins(%a, %b : tensor<?x0xf32>, tensor<0x?xf32>) outs(%0 : tensor<?x?xf32>) -> tensor<?x?xf32>
  return %1 : tensor<?x?xf32>
}

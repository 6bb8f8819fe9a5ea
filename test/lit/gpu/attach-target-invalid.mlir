// RUN: not relax-opt %s --pass-pipeline='builtin.module(relax-gpu-attach-target{chip=sm_8})' 2>&1 | FileCheck %s

// CHECK: error: relax-gpu-attach-target: unknown CUDA chip 'sm_8': expected sm_<major><minor> >= sm_50, e.g. sm_80 or sm_90
gpu.module @k {
}

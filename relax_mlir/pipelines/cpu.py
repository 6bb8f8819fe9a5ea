"""The CPU pipelines: relax to host code, host code to LLVM, and both (``cpu``)."""

from __future__ import annotations

from relax_mlir.pipelines.registry import register_pipeline
from relax_mlir.runtime.codegen import llvm_pipeline

RELAX_TO_HOST = (
    "relax-verify,relax-infer-shapes,convert-relax-to-linalg,relax-lower-host,relax-schedule-kernels"
)

register_pipeline(
    "relax-to-host",
    RELAX_TO_HOST,
    "Lower relax functions to host code calling linalg kernels; tile and vectorize matmul kernels",
)
register_pipeline("host-to-llvm", llvm_pipeline(), "Bufferize host code and kernels and lower them to LLVM")
register_pipeline(
    "cpu", "relax-to-host,host-to-llvm", "Everything from relax to the LLVM dialect, for the CPU"
)

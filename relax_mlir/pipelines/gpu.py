"""The GPU (CUDA) pipelines: relax to host code for the GPU, host code to LLVM with PTX kernels, and both.

``relax-to-host-gpu`` is the CPU's ``relax-O2`` without what only the CPU uses (packed weights, CPU
schedules, OpenMP, BLAS): fusion and static memory planning stay. ``host-to-gpu`` (``codegen.host_to_gpu``,
for sm_80; ``relax-gpu-attach-target{chip=sm_90}`` picks another chip) maps kernels to blocks and threads
and emits PTX. ``gpu`` is both; ``compile(module, target="cuda", chip=...)`` runs the same passes.
"""

from __future__ import annotations

from relax_mlir.pipelines.cpu import VERIFY, cleanup
from relax_mlir.pipelines.registry import register_pipeline
from relax_mlir.runtime.gpu.codegen import host_to_gpu

RELAX_TO_HOST_GPU = (
    f"{VERIFY},{cleanup(2)},relax-fuse-ops,convert-relax-to-linalg,relax-fuse-kernels,relax-plan-memory,"
    "relax-lower-host"
)

register_pipeline(
    "relax-to-host-gpu",
    RELAX_TO_HOST_GPU,
    "Relax to host code for the GPU: cleanups, fusion, memory planning",
)
register_pipeline(
    "host-to-gpu",
    host_to_gpu(),
    "Map kernels to GPU blocks/threads, managed memory, PTX (sm_80) and LLVM host code",
)
register_pipeline("gpu", "relax-to-host-gpu,host-to-gpu", "Everything from relax to LLVM host code and PTX")

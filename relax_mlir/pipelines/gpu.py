"""The GPU (CUDA) pipelines: relax to host code for the GPU, host code to LLVM with PTX kernels.

``relax-to-host-gpu`` is the CPU's ``relax-O2`` without what only the CPU uses (packed weights, CPU
schedules, OpenMP): fusion and static memory planning stay. ``host-to-gpu`` (``host_to_gpu()``, for
sm_80; ``relax-gpu-attach-target{chip=sm_90}`` picks another chip) maps kernels to blocks and threads
and emits PTX: bufferize, map kernels to the GPU, managed memory, outline kernels into ``gpu.module``s,
lower them to NVVM and the host to LLVM (the CPU's ``TO_LLVM`` plus ``gpu-to-llvm``), and serialize
each ``gpu.module`` to PTX (``gpu.binary``, loaded by the driver's JIT at run time). The ``gpu`` pipeline
(both) is registered by the CUDA target (``targets/cuda.py``).
"""

from __future__ import annotations

from relax_mlir.pipelines.cpu import BUFFERIZE, TO_LLVM, relax_level
from relax_mlir.pipelines.data import P, Pipeline, insert_before, passes, replace, without
from relax_mlir.pipelines.registry import register_pipeline
from relax_mlir.transforms.gpu.target import DEFAULT_CHIP

# What relax-O2 does only for the CPU: quantized matmuls fused, weights packed for CPU kernels, CPU schedules, OpenMP threads.
CPU_ONLY = (
    "relax-fuse-dequantize-matmul",
    "relax-fuse-attention",
    "relax-pack-weights",
    "relax-parallelize-kernels",
    "relax-schedule-kernels",
)

KERNELS_TO_NVVM = P(
    "gpu.module",
    nested=passes(
        "expand-strided-metadata",
        "lower-affine",
        "convert-scf-to-cf",
        "convert-gpu-to-nvvm",
        "canonicalize",
        "cse",
        "reconcile-unrealized-casts",
    ),
)


def relax_to_host_gpu() -> Pipeline:
    """``relax-O2`` without the CPU-only passes; convolutions as named linalg ops, whose loops the GPU
    mapping puts on threads (im2col runs a loop over images that would stay on the host)."""
    return replace(
        without(relax_level(2), *CPU_ONLY),
        "convert-relax-to-linalg",
        [P("convert-relax-to-linalg", conv="direct")],
    )


def host_to_llvm_gpu() -> Pipeline:
    """The CPU's host-to-LLVM passes with ``gpu-to-llvm`` (kernel launches) before the final cast cleanup."""
    return insert_before(TO_LLVM, "reconcile-unrealized-casts", passes("gpu-to-llvm"))


def host_to_gpu(chip: str = DEFAULT_CHIP, block_size: int = 256) -> Pipeline:
    """The passes from host code and tensor kernels to LLVM host code with PTX ``gpu.binary``s."""
    return [
        *BUFFERIZE,
        P("relax-gpu-prepare-kernels"),
        P("func.func", nested=passes("convert-linalg-to-parallel-loops")),
        P("relax-gpu-map-loops", block_size=block_size),
        P("relax-gpu-managed-memory"),
        P("gpu-kernel-outlining"),
        P("relax-gpu-attach-target", chip=chip),
        KERNELS_TO_NVVM,
        *host_to_llvm_gpu(),
        P("gpu-module-to-binary", format="isa"),
    ]


register_pipeline(
    "relax-to-host-gpu",
    relax_to_host_gpu(),
    "Relax to host code for the GPU: cleanups, fusion, memory planning",
)
register_pipeline(
    "host-to-gpu",
    host_to_gpu(),
    "Map kernels to GPU blocks/threads, managed memory, PTX (sm_80) and LLVM host code",
)

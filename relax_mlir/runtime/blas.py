"""numpy's OpenBLAS in this process: loaded once, its threads set from ``$RELAX_MLIR_BLAS_THREADS``.

The gemm wrappers that call it (the ``relax_blas_gemm`` library ABI) are in ``lowering/blas.py``.
"""

from __future__ import annotations

import ctypes
import functools
import os

from relax_mlir.lowering.blas import openblas
from relax_mlir.runtime import libs

THREADS_ENV = "RELAX_MLIR_BLAS_THREADS"
SPIN_LOG2 = 4  # OpenBLAS's idle workers spin 2**SPIN_LOG2 cycles (its minimum), then sleep (_short_spin)


def library_path() -> str | None:
    found = openblas()
    return found[0] if found else None


@functools.cache
def prepare() -> None:
    """Load OpenBLAS globally and set its thread count from ``$RELAX_MLIR_BLAS_THREADS`` (if set)."""
    path = library_path()
    if path is None:
        return
    lib = ctypes.CDLL(path, mode=ctypes.RTLD_GLOBAL)
    _short_spin(lib)
    threads = int(os.environ.get(THREADS_ENV, "0"))
    for name in ("scipy_openblas_set_num_threads64_", "openblas_set_num_threads64_"):
        if threads > 0 and hasattr(lib, name):
            getattr(lib, name).argtypes = [ctypes.c_int]
            getattr(lib, name)(threads)
            return


def _short_spin(lib: ctypes.CDLL) -> None:
    """Make OpenBLAS's idle workers sleep after ~``2**SPIN_LOG2`` cycles instead of ~``2**28`` (its default,
    tens of ms), unless ``$OPENBLAS_THREAD_TIMEOUT`` is set: spinning, they take the cores that the
    OpenMP kernels run on next (GPT 4x128 at two threads: 82 ms with, 37 ms without). OpenBLAS reads the
    setting when it starts its pool: the environment is re-read and the pool restarted (on next use)."""
    names = ("openblas_read_env", "blas_thread_shutdown_")
    if "OPENBLAS_THREAD_TIMEOUT" in os.environ or libs.openmp_library() is None:
        return
    if not all(hasattr(lib, n) for n in names):
        return
    os.environ["OPENBLAS_THREAD_TIMEOUT"] = str(SPIN_LOG2)
    lib.openblas_read_env()
    lib.blas_thread_shutdown_()

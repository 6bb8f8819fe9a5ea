"""Named pipelines and the pass registry that relax-opt and compile() share."""

from __future__ import annotations

import importlib
import pkgutil

from relax_mlir.pipelines.registry import (
    PASSES,
    PIPELINES,
    add_pipeline,
    parse_pipeline,
    register_pass,
    register_pipeline,
)

__all__ = ["PASSES", "PIPELINES", "add_pipeline", "load_passes", "parse_pipeline", "register_pass"]
__all__ += ["register_pipeline"]

_PASS_PACKAGES = (  # every pass is defined in transforms/; named pipelines in pipelines/ (and targets/)
    "relax_mlir.transforms",
    "relax_mlir.transforms.gpu",
    "relax_mlir.transforms.schedules",
    "relax_mlir.pipelines",
)


def load_passes() -> None:
    """Import every module that may define passes, so their decorators register them."""
    for name in _PASS_PACKAGES:
        package = importlib.import_module(name)
        for info in pkgutil.iter_modules(package.__path__):
            importlib.import_module(f"{name}.{info.name}")

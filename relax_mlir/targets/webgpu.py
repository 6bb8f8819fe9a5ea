"""The webgpu target, ``compile(module, target="webgpu")``: SPIR-V kernels run through WebGPU (``wgpu``).

The relax level and the mapping of kernels to workgroups are the CUDA target's; kernels become SPIR-V
(``pipelines/webgpu.py``), which ``wgpu`` runs on Vulkan, Metal or D3D12 adapters (on Linux without a GPU:
Mesa's lavapipe). Host code is compiled for this CPU and calls the runtime of ``targets/webgpu_runtime.py``
for buffers, copies and dispatches. ``exe.kernels`` holds each kernel's SPIR-V and its binding layout
(``KernelInfo``). Building needs no adapter; the first call (or ``exe.load()``) opens the device and raises
``DeviceUnavailableError`` where there is none.
"""

from __future__ import annotations

import base64
import ctypes
import json
import time
import weakref
from dataclasses import dataclass
from typing import Any

from mlir import ir

from relax_mlir.dialects.registry import op_class
from relax_mlir.errors import CompileError, RelaxError
from relax_mlir.pipelines.data import P, Pipeline
from relax_mlir.pipelines.webgpu import host_to_webgpu, relax_to_host_webgpu
from relax_mlir.runtime import cache, weights
from relax_mlir.runtime.executable import Executable, Function, rank_dispatches
from relax_mlir.runtime.loader import LoadedObject
from relax_mlir.targets import gpu_host, steps
from relax_mlir.targets import webgpu_runtime as runtime
from relax_mlir.targets.base import CompileStats, JitTarget, register_target
from relax_mlir.transforms.gpu.spirv_abi import KERNELS_ATTR


@dataclass(frozen=True)
class KernelInfo:
    """One kernel: its SPIR-V module, entry point, workgroup size and argument layout.

    ``args`` lists the kernel's arguments in launch order: ``{"kind": "memref", "dtype", "rank",
    "binding", "params_at"}`` or ``{"kind": "scalar", "dtype", "params_at"}``; binding ``bindings - 1`` is
    the params buffer (``transforms/gpu/spirv_abi.py``)."""

    module: str
    entry: str
    spirv: bytes
    workgroup_size: tuple[int, int, int]
    args: list[dict]
    params: int
    bindings: int

    @property
    def features(self) -> set[str]:
        """The WebGPU features the kernel needs (``shader-f16``, ``shader-int64``, ...)."""
        return runtime.spirv_features(self.spirv)


def _spirv_modules(module: ir.Operation) -> dict[str, bytes]:
    """The SPIR-V of every ``gpu.binary``, by module name."""
    return {name: text.encode("latin-1") for name, text in gpu_host.binaries(module, "bin").items()}


def _kernels(layouts: dict[str, dict], spirv: dict[str, bytes]) -> dict[str, KernelInfo]:
    return {
        key: KernelInfo(
            module=info["module"],
            entry=info["entry"],
            spirv=spirv[info["module"]],
            workgroup_size=tuple(info["workgroup_size"]),
            args=info["args"],
            params=info["params"],
            bindings=info["bindings"],
        )
        for key, info in layouts.items()
    }


class WebgpuFunction(Function):
    """A compiled function whose host code calls the WebGPU runtime; runtime errors are raised after it."""

    def _run(self, *args: Any) -> Any:
        dev = runtime.device()
        with dev.lock:
            dev.error = None
            try:
                result = super()._run(*args)
            except RelaxError:
                dev.check()  # a failed check after a failed launch: the launch's error is the cause
                raise
            finally:
                dev.flush()  # whatever the call recorded and did not read back
            dev.check()
        return result


class WebgpuExecutable(Executable):
    """The compiled functions of a module for the webgpu target; they load on first use."""

    def __init__(
        self,
        data: bytes,
        signatures: dict[str, dict],
        kernels: dict[str, KernelInfo],
        stats: Any,
        weights: dict[str, int] | None = None,
        memory: Any = None,
    ) -> None:
        self.object = data
        self.signatures = signatures
        self.kernels = kernels
        self.stats = stats
        self.weights = weights or {}  # weight global -> address in ``memory`` (kept out of the object)
        self.memory = memory
        self._functions: dict[str, Function] | None = None

    @property
    def adapter(self) -> str:
        """The adapter the code runs on (opens the device)."""
        return runtime.device().summary

    def load(self) -> None:
        """Open the WebGPU device and load the kernels; ``DeviceUnavailableError`` where there is none."""
        if self._functions is not None:
            return
        dev = runtime.device()
        with dev.lock:
            for module in {k.module: k for k in self.kernels.values()}.values():
                dev.register(
                    module.spirv,
                    {key: _layout(k) for key, k in self.kernels.items() if k.module == module.module},
                )
            loaded = LoadedObject(self.object, self.weights, self.memory)
            owner = dev.new_owner()
            # the device buffers of this object's modules and constants go when the object goes
            weakref.finalize(loaded, dev.release, owner)
            dev.error = None
            with dev.loading(owner):
                ctypes.CFUNCTYPE(None)(loaded.address(gpu_host.LOAD_MODULES))()
            dev.check()
        functions = {name: WebgpuFunction(name, sig, loaded) for name, sig in self.signatures.items()}
        self._functions = {**functions, **rank_dispatches(functions)}

    @property
    def functions(self) -> dict[str, Function]:  # type: ignore[override]
        self.load()
        assert self._functions is not None
        return self._functions


def _layout(kernel: KernelInfo) -> dict:
    return {
        "module": kernel.module,
        "entry": kernel.entry,
        "workgroup_size": list(kernel.workgroup_size),
        "args": kernel.args,
        "params": kernel.params,
        "bindings": kernel.bindings,
    }


@dataclass
class WebgpuObject:
    """What a webgpu build produces: the host object, the entry points' signatures, the kernels, the
    weights taken out of the object."""

    data: bytes
    signatures: dict[str, dict]
    kernels: dict[str, KernelInfo]
    weights: list[Any]


def _meta(artifact: WebgpuObject) -> dict:
    kernels = {
        key: {**_layout(k), "spirv": base64.b64encode(k.spirv).decode()}
        for key, k in artifact.kernels.items()
    }
    return {"signatures": artifact.signatures, "kernels": kernels}


@register_target
class WebgpuTarget(JitTarget):
    """WebGPU (Vulkan, Metal, D3D12) through wgpu: SPIR-V kernels, host code on this CPU."""

    name = "webgpu"
    summary = "WebGPU adapters through wgpu (SPIR-V kernels; Vulkan, Metal, D3D12; lavapipe on the CPU)"
    lowering_stage = "to llvm and spir-v"

    def relax_pipeline(self, opt_level: int) -> Pipeline:
        return relax_to_host_webgpu()

    def lowering_pipeline(self, opt_level: int, **options: Any) -> Pipeline:
        return host_to_webgpu()

    def named_pipelines(self) -> dict[str, tuple[Pipeline, str]]:
        return {
            "webgpu": (
                [P("relax-to-host-webgpu"), P("host-to-webgpu")],
                "Everything from relax to LLVM host code and SPIR-V kernels for WebGPU",
            )
        }

    def check_ops(self, op: ir.Operation) -> None:
        """Refuse ops whose kernels only the CPU targets lower (``CPU_ONLY``), naming the first one."""
        found: list[ir.Operation] = []

        def visit(inner: ir.Operation) -> ir.WalkResult:
            cls = op_class(inner)
            if cls is not None and cls.CPU_ONLY:
                found.append(inner)
                return ir.WalkResult.INTERRUPT
            return ir.WalkResult.ADVANCE

        op.walk(visit)
        if found:
            raise CompileError(
                f"{steps.where(found[0].location)}the webgpu target cannot compile '{found[0].name}': its kernel "
                "is CPU code (a CPU-packed layout or CPU vector instructions, made by CPU-only passes such as "
                "relax-pack-weights or relax-fuse-dequantize-matmul)"
            )

    def codegen(
        self,
        op: ir.Operation,
        signatures: dict[str, dict],
        opt_level: int,
        stats: CompileStats,
        **options: Any,
    ) -> WebgpuObject:
        layouts = {}  # recorded by relax-gpu-kernels-to-spirv; not LLVM IR
        if KERNELS_ATTR in op.attributes:
            layouts = json.loads(ir.StringAttr(op.attributes[KERNELS_ATTR]).value)
            del op.attributes[KERNELS_ATTR]
        kernels = _kernels(layouts, _spirv_modules(op))
        t = time.perf_counter()
        llvm_module = steps.as_module(op)
        blobs = weights.externalize(llvm_module)  # large constants: out of the object (and its relocations)
        stats.stages["weights"] = time.perf_counter() - t
        t = time.perf_counter()
        data = gpu_host.object_code(llvm_module, opt_level, runtime_prefix=runtime.PREFIX)
        stats.stages["llvm codegen"] = time.perf_counter() - t
        return WebgpuObject(data, signatures, kernels, blobs)

    def load_cached(self, key: str, stats: CompileStats, **options: Any) -> Executable | None:
        hit = cache.load_unlinked(key, fields=())
        if hit is None:
            return None
        data, meta, memory = hit
        layouts = meta["kernels"]
        spirv = {info["module"]: base64.b64decode(info["spirv"]) for info in layouts.values()}
        pointers = cache.pointers(meta, memory)
        return WebgpuExecutable(data, meta["signatures"], _kernels(layouts, spirv), stats, pointers, memory)

    def executable(self, key: str, artifact: WebgpuObject, stats: CompileStats, **options: Any) -> Executable:
        meta, memory = cache.store_unlinked(key, artifact.data, _meta(artifact), artifact.weights)
        pointers = cache.pointers(meta, memory)
        return WebgpuExecutable(artifact.data, artifact.signatures, artifact.kernels, stats, pointers, memory)

"""The webgpu target's runtime: MLIR's ``mgpu*`` GPU runtime calls, implemented on WebGPU with ``wgpu``.

Host code compiled for ``target="webgpu"`` calls ``relax_wgpu_<Name>`` wherever MLIR's GPU lowering calls
``mgpu<Name>`` (``targets/gpu_host.py`` renames them); this module gives those symbols to the JIT linker as
ctypes callbacks. One WebGPU device serves the process (``device()``: the adapter ``wgpu`` prefers, or
``$RELAX_MLIR_WEBGPU_ADAPTER`` to pick one whose description contains that text).

Device memory is WebGPU buffers, which the host cannot address: an allocation returns a *handle*, an
address in a range no host pointer uses (from ``HANDLE_BASE``), so memref descriptors, views and offsets
work unchanged on the host side, and the calls here tell device handles from host pointers. A kernel
argument that is not a device handle is a constant global of the host code: its bytes are uploaded on
first use and kept on the device (weights are read once, not per call). Freed buffers go back to a pool
by size and are reused by the next call's temporaries.

A launch turns each memref descriptor into a binding (the buffer from an aligned offset) and the kernel's
params buffer (offsets, sizes, strides, scalars: ``transforms/gpu/spirv_abi.py``), and dispatches. Errors
inside a callback cannot unwind through compiled code: the first one is kept and raised when the compiled
function returns (``check()``).
"""

from __future__ import annotations

import bisect
import contextlib
import ctypes
import hashlib
import os
import struct
import tempfile
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import llvmlite.binding as llvm

from relax_mlir.errors import CompileError, DeviceUnavailableError, InputError, OutOfMemoryError, RelaxError

PREFIX = "relax_wgpu_"
HANDLE_BASE = 1 << 60  # above every user-space address of x86-64 and AArch64
_HANDLE_GAP = 1 << 12
_POOL_BYTES = 1 << 30  # freed buffers kept for reuse, at most this many bytes
_I32_MAX = 2**31 - 1
_MIN_BUFFER = 16  # bytes: a binding of an empty tensor still holds one element of any type

# SPIR-V capabilities (OpCapability operands) that need a WebGPU feature
_CAPABILITY_FEATURES = {9: "shader-f16", 10: "shader-f64", 11: "shader-int64"}
_OP_CAPABILITY = 17

_SCALAR_FORMATS = {
    "index": "q",
    "i64": "q",
    "f64": "d",
    "i32": "i",
    "i16": "h",
    "i8": "b",
    "i1": "b",
    "f32": "f",
    "f16": "e",
}
_ELEMENT_BYTES = {"f64": 8, "i64": 8, "f32": 4, "i32": 4, "f16": 2, "bf16": 2, "i16": 2, "i8": 1, "i1": 1}


def element_bytes(dtype: str) -> int:
    if dtype not in _ELEMENT_BYTES:
        raise CompileError(f"the webgpu target has no buffers of element type {dtype}")
    return _ELEMENT_BYTES[dtype]


def spirv_features(spirv: bytes) -> set[str]:
    """The WebGPU features a SPIR-V module's capabilities need."""
    words = struct.unpack(f"<{len(spirv) // 4}I", spirv[: len(spirv) // 4 * 4])
    features, at = set(), 5
    while at < len(words):
        count, opcode = words[at] >> 16, words[at] & 0xFFFF
        if opcode == _OP_CAPABILITY and words[at + 1] in _CAPABILITY_FEATURES:
            features.add(_CAPABILITY_FEATURES[words[at + 1]])
        at += max(count, 1)
    return features


@dataclass
class _Buffer:
    buffer: Any  # wgpu.GPUBuffer
    size: int  # bytes asked for


@dataclass
class _Kernel:
    key: str
    owner: int
    info: dict
    pipeline: Any
    layout: Any  # the bind group layout


@dataclass
class _Module:
    owner: int
    shader: Any
    kernels: dict[str, dict]  # entry -> kernel info
    functions: dict[str, int] = field(default_factory=dict)


class Device:
    """The process's WebGPU device, its buffers, modules and the ``mgpu*`` calls on them."""

    def __init__(self) -> None:
        self.lock = threading.RLock()
        self.error: BaseException | None = None
        self.buffers: dict[int, _Buffer] = {}
        self.bases: list[int] = []  # sorted handles, for pointers into a buffer
        self.next_handle = HANDLE_BASE
        self.pool: dict[int, list[Any]] = {}
        self.pool_bytes = 0
        self.constants: dict[tuple[int, int, int], Any] = {}  # (owner, address, bytes) -> buffer
        self.owners = 0  # loaded objects so far; modules and constants belong to one
        self.owner = 0  # the object whose modules are being loaded
        self.registered: dict[bytes, dict[str, dict]] = {}  # sha256 of a SPIR-V module -> its kernels
        self.modules: dict[int, _Module] = {}
        self.functions: dict[int, _Kernel] = {}
        self.next_id = 1
        self.timings: dict[str, list[float]] | None = None  # per kernel, while ``profile()`` is on
        self.pending: Any = None  # the command encoder recording this call's dispatches and copies
        self._open()

    def _open(self) -> None:
        if not os.environ.get("XDG_RUNTIME_DIR"):  # Mesa's Vulkan drivers complain on every start without it
            os.environ["XDG_RUNTIME_DIR"] = tempfile.mkdtemp(prefix="relax_mlir_xdg_")
        try:
            import wgpu  # noqa: PLC0415  (optional: the webgpu extra)
        except ImportError as e:
            raise DeviceUnavailableError(
                f"cannot run webgpu code here: the wgpu package is missing ({e}); pip install relax_mlir[webgpu]"
            ) from None
        self.wgpu = wgpu
        wanted = os.environ.get("RELAX_MLIR_WEBGPU_ADAPTER", "")
        try:
            if wanted:
                adapters = [
                    a for a in wgpu.gpu.enumerate_adapters_sync() if wanted.lower() in a.summary.lower()
                ]
                adapter = adapters[0] if adapters else None
            else:
                adapter = wgpu.gpu.request_adapter_sync(power_preference="high-performance")
        except Exception as e:  # noqa: BLE001  (wgpu raises plain RuntimeErrors for a missing driver)
            raise DeviceUnavailableError(f"cannot run webgpu code here: no WebGPU adapter ({e})") from None
        if adapter is None:
            raise DeviceUnavailableError(
                "cannot run webgpu code here: no WebGPU adapter"
                + (f" matching $RELAX_MLIR_WEBGPU_ADAPTER={wanted!r}" if wanted else "")
                + " (on Linux without a GPU: apt-get install mesa-vulkan-drivers)"
            )
        self.adapter = adapter
        self.features = {f for f in _CAPABILITY_FEATURES.values() if f in adapter.features}
        limits = {
            k: adapter.limits[k]
            for k in (
                "max-storage-buffers-per-shader-stage",
                "max-storage-buffer-binding-size",
                "max-buffer-size",
                "max-compute-workgroups-per-dimension",
            )
        }
        self.device = adapter.request_device_sync(
            required_features=sorted(self.features), required_limits=limits
        )
        self.limits = limits
        self.alignment = adapter.limits["min-storage-buffer-offset-alignment"]
        self.queue = self.device.queue
        usage = wgpu.BufferUsage
        self.usage = usage.STORAGE | usage.COPY_SRC | usage.COPY_DST
        self.sync_buffer = self.device.create_buffer(size=_MIN_BUFFER, usage=self.usage)

    @property
    def summary(self) -> str:
        return self.adapter.summary

    # -- errors ------------------------------------------------------------------------------------------

    def fail(self, error: BaseException) -> None:
        if self.error is None:
            self.error = error

    def check(self) -> None:
        """Raise the first error a callback kept since the last check."""
        error, self.error = self.error, None
        if error is None:
            return
        if isinstance(error, RelaxError):
            raise error
        raise RelaxError(f"webgpu runtime: {type(error).__name__}: {error}") from error

    # -- memory ------------------------------------------------------------------------------------------

    def alloc(self, size: int) -> int:
        rounded = max(_MIN_BUFFER, (size + 3) // 4 * 4)
        if rounded > self.limits["max-buffer-size"]:
            raise OutOfMemoryError(
                f"webgpu: cannot allocate {size} bytes: the adapter's largest buffer is "
                f"{self.limits['max-buffer-size']} bytes"
            )
        free = self.pool.get(rounded)
        if free:
            buffer = free.pop()
            self.pool_bytes -= rounded
        else:
            buffer = self.device.create_buffer(size=rounded, usage=self.usage)
        handle = self.next_handle
        self.next_handle += (rounded + _HANDLE_GAP - 1) // _HANDLE_GAP * _HANDLE_GAP + _HANDLE_GAP
        self.buffers[handle] = _Buffer(buffer, size)
        bisect.insort(self.bases, handle)
        return handle

    def free(self, handle: int) -> None:
        entry = self.buffers.pop(handle, None)
        if entry is None:
            return
        self.bases.pop(bisect.bisect_left(self.bases, handle))
        size = entry.buffer.size
        if self.pool_bytes + size <= _POOL_BYTES:
            self.pool.setdefault(size, []).append(entry.buffer)
            self.pool_bytes += size
        else:
            self.flush()
            entry.buffer.destroy()

    def find(self, pointer: int) -> tuple[Any, int] | None:
        """The device buffer a pointer points into and the byte offset, or None for a host pointer."""
        if pointer < HANDLE_BASE:
            return None
        at = bisect.bisect_right(self.bases, pointer) - 1
        if at < 0:
            raise RelaxError(f"webgpu: {pointer:#x} is no device buffer")
        base = self.bases[at]
        entry = self.buffers[base]
        if pointer - base > entry.buffer.size:
            raise RelaxError(f"webgpu: {pointer:#x} is outside every device buffer")
        return entry.buffer, pointer - base

    @contextlib.contextmanager
    def profile(self) -> Iterator[dict[str, list[float]]]:
        """Time every dispatch in this context (each waits for the queue: slower, for measuring only):
        seconds per kernel key, one entry per dispatch."""
        self.timings = {}
        try:
            yield self.timings
        finally:
            self.timings = None

    def encoder(self) -> Any:
        """The command encoder that records dispatches and device copies until the next ``flush``: one
        submission per run of them, not one per dispatch (each submission costs lavapipe milliseconds)."""
        if self.pending is None:
            self.pending = self.device.create_command_encoder()
        return self.pending

    def flush(self) -> None:
        """Submit what was recorded; before the queue writes or reads a buffer (``write_buffer`` would
        overtake recorded but unsubmitted commands) and before a buffer is destroyed."""
        if self.pending is not None:
            pending, self.pending = self.pending, None
            self.queue.submit([pending.finish()])

    def _wait(self) -> None:
        """Submit what was recorded and wait until the queue is idle (a read waits for all submitted work;
        wgpu 0.32's ``on_submitted_work_done`` fails)."""
        self.read(self.sync_buffer, 0, 4)

    def new_owner(self) -> int:
        self.owners += 1
        return self.owners

    @contextlib.contextmanager
    def loading(self, owner: int) -> Iterator[None]:
        """Modules loaded in this context belong to ``owner`` (a loaded object)."""
        self.owner = owner
        try:
            yield
        finally:
            self.owner = 0

    def release(self, owner: int) -> None:
        """Free the modules, pipelines and constants of an object that was unloaded."""
        with self.lock:
            self.flush()
            for key in [k for k in self.constants if k[0] == owner]:
                self.constants.pop(key).destroy()
            for handle in [h for h, m in self.modules.items() if m.owner == owner]:
                module = self.modules.pop(handle)
                for function in module.functions.values():
                    self.functions.pop(function, None)

    def constant(self, owner: int, pointer: int, nbytes: int) -> Any:
        """A device copy of host memory that never changes (a constant global or weight of the object
        ``owner``), uploaded once."""
        key = (owner, pointer, nbytes)
        buffer = self.constants.get(key)
        if buffer is None:
            rounded = max(_MIN_BUFFER, (nbytes + 3) // 4 * 4)
            buffer = self.device.create_buffer(size=rounded, usage=self.usage)
            data = bytearray(ctypes.string_at(pointer, nbytes)) + bytes(rounded - nbytes)
            self.flush()
            self.queue.write_buffer(buffer, 0, data)
            self.constants[key] = buffer
        return buffer

    def write(self, buffer: Any, offset: int, data: bytes) -> None:
        """Bytes into a buffer at any offset (WebGPU writes 4-byte aligned ranges: widen and merge)."""
        if not data:
            return
        start, end = offset // 4 * 4, (offset + len(data) + 3) // 4 * 4
        if (start, end) != (offset, offset + len(data)):
            merged = bytearray(self.read(buffer, start, end - start))
            merged[offset - start : offset - start + len(data)] = data
            data = bytes(merged)
        self.flush()
        self.queue.write_buffer(buffer, start, data)

    def read(self, buffer: Any, offset: int, size: int) -> bytes:
        if size == 0:
            return b""
        start, end = offset // 4 * 4, min((offset + size + 3) // 4 * 4, buffer.size)
        self.flush()
        data = self.queue.read_buffer(buffer, start, end - start)
        return bytes(data)[offset - start : offset - start + size]

    def memcpy(self, dst: int, src: int, size: int) -> None:
        if size <= 0:
            return
        target, source = self.find(dst), self.find(src)
        if target is None and source is None:
            ctypes.memmove(dst, src, size)
        elif target is None:
            ctypes.memmove(dst, self.read(*source, size), size)
        elif source is None:
            self.write(*target, ctypes.string_at(src, size))
        elif source[1] % 4 == 0 and target[1] % 4 == 0 and size % 4 == 0:
            self.encoder().copy_buffer_to_buffer(source[0], source[1], target[0], target[1], size)
        else:
            self.write(*target, self.read(*source, size))

    # -- modules and launches ----------------------------------------------------------------------------

    def register(self, spirv: bytes, kernels: dict[str, dict]) -> None:
        """Make a SPIR-V module's kernel layouts known before its host code loads it."""
        self.registered[hashlib.sha256(spirv).digest()] = kernels

    def load_module(self, data: bytes) -> int:
        kernels = self.registered.get(hashlib.sha256(data).digest())
        if kernels is None:
            raise RelaxError("webgpu: the host code loads a SPIR-V module that no executable registered")
        missing = spirv_features(data) - self.features
        if missing:
            names = ", ".join(sorted(kernels))
            raise DeviceUnavailableError(
                f"webgpu: kernel {names} needs the feature(s) {', '.join(sorted(missing))}, which the "
                f"adapter '{self.summary}' does not have"
            )
        try:
            shader = self.device.create_shader_module(code=data)
        except Exception as e:  # noqa: BLE001  (wgpu raises GPUValidationError and friends)
            raise CompileError(
                f"webgpu: the adapter rejected the SPIR-V of {', '.join(kernels)}: {e}"
            ) from None
        handle = self.next_id
        self.next_id += 1
        self.modules[handle] = _Module(self.owner, shader, {info["entry"]: info for info in kernels.values()})
        return handle

    def function(self, module: int, name: str) -> int:
        mod = self.modules[module]
        if name in mod.functions:
            return mod.functions[name]
        info = mod.kernels[name]
        wgpu = self.wgpu
        entries = [
            {
                "binding": i,
                "visibility": wgpu.ShaderStage.COMPUTE,
                "buffer": {"type": wgpu.BufferBindingType.storage},
            }
            for i in range(info["bindings"])
        ]
        if info["bindings"] > self.limits["max-storage-buffers-per-shader-stage"]:
            raise DeviceUnavailableError(
                f"webgpu: kernel {info['module']}.{name} binds {info['bindings']} storage buffers; the adapter "
                f"allows {self.limits['max-storage-buffers-per-shader-stage']}"
            )
        layout = self.device.create_bind_group_layout(entries=entries)
        try:
            pipeline = self.device.create_compute_pipeline(
                layout=self.device.create_pipeline_layout(bind_group_layouts=[layout]),
                compute={"module": mod.shader, "entry_point": name},
            )
        except Exception as e:  # noqa: BLE001
            raise CompileError(f"webgpu: the adapter rejected kernel {info['module']}.{name}: {e}") from None
        handle = self.next_id
        self.next_id += 1
        self.functions[handle] = _Kernel(f"{info['module']}.{name}", mod.owner, info, pipeline, layout)
        mod.functions[name] = handle
        return handle

    def launch(self, function: int, grid: tuple[int, int, int], params: int, count: int) -> None:
        kernel = self.functions[function]
        if 0 in grid:
            return
        most = self.limits["max-compute-workgroups-per-dimension"]
        if max(grid) > most:
            raise InputError(
                f"webgpu: kernel {kernel.key} needs {max(grid)} workgroups in one dimension; the adapter "
                f"allows {most} (the tensor is too large for the webgpu target's 1-D grids)"
            )
        slots = ctypes.cast(params, ctypes.POINTER(ctypes.c_void_p))
        values: list[int] = [0] * kernel.info["params"]
        bindings: list[tuple[Any, int, int]] = []
        at = 0
        for arg in kernel.info["args"]:
            if arg["kind"] == "scalar":
                self._scalar(kernel, arg, slots[at], values)
                at += 1
                continue
            rank = arg["rank"]
            words = [ctypes.c_int64.from_address(slots[at + i]).value for i in range(2, 3 + 2 * rank)]
            aligned = ctypes.c_void_p.from_address(slots[at + 1]).value or 0
            at += 3 + 2 * rank
            offset, sizes, strides = words[0], words[1 : 1 + rank], words[1 + rank :]
            bindings.append(self._bind(kernel, arg, aligned, offset, sizes, strides, values))
        if at != count:
            raise RelaxError(f"webgpu: kernel {kernel.key} got {count} launch arguments, expected {at}")
        wgpu = self.wgpu
        param_buffer = self.device.create_buffer_with_data(
            data=struct.pack(f"<{max(len(values), 1)}i", *(values or [0])), usage=wgpu.BufferUsage.STORAGE
        )
        entries = [
            {"binding": i, "resource": {"buffer": b, "offset": o, "size": s}}
            for i, (b, o, s) in enumerate(bindings)
        ]
        entries.append(
            {
                "binding": len(bindings),
                "resource": {"buffer": param_buffer, "offset": 0, "size": param_buffer.size},
            }
        )
        group = self.device.create_bind_group(layout=kernel.layout, entries=entries)
        if self.timings is not None:
            self._wait()
            start = time.perf_counter()
        compute = self.encoder().begin_compute_pass()
        compute.set_pipeline(kernel.pipeline)
        compute.set_bind_group(0, group)
        compute.dispatch_workgroups(*grid)
        compute.end()
        if self.timings is not None:
            self._wait()
            self.timings.setdefault(kernel.key, []).append(time.perf_counter() - start)

    def _scalar(self, kernel: _Kernel, arg: dict, address: int, values: list[int]) -> None:
        """One scalar argument into its params slots: 64-bit values as two words, low first."""
        fmt = _SCALAR_FORMATS.get(arg["dtype"])
        if fmt is None:
            raise RelaxError(f"webgpu: kernel {kernel.key} takes a scalar of type {arg['dtype']}")
        raw = ctypes.string_at(address, struct.calcsize(fmt))
        at = arg["params_at"]
        if arg["dtype"] in ("i64", "f64"):
            values[at], values[at + 1] = struct.unpack("<ii", raw)
            return
        value = struct.unpack(f"<{fmt}", raw)[0]
        if fmt in "fe":
            value = struct.unpack("<i", struct.pack("<f", value))[0]
        values[at] = _i32(value, kernel.key)

    def _bind(
        self,
        kernel: _Kernel,
        arg: dict,
        aligned: int,
        offset: int,
        sizes: list[int],
        strides: list[int],
        values: list[int],
    ) -> tuple[Any, int, int]:
        """The (buffer, offset, size) binding of one memref argument; fills its params."""
        es = element_bytes(arg["dtype"])
        extent = 0 if 0 in sizes else 1 + sum((n - 1) * s for n, s in zip(sizes, strides, strict=True))
        found = self.find(aligned)
        if found is None:  # a constant global of the host code
            buffer, start = self.constant(kernel.owner, aligned + offset * es, max(extent * es, 1)), 0
        else:
            buffer, base = found
            start = base + offset * es
        bind_at = start // self.alignment * self.alignment
        # a binding holds at least one element, even of an empty tensor (buffers are large enough)
        size = min(max(4, es, (start - bind_at + extent * es + 3) // 4 * 4), buffer.size - bind_at)
        if size > self.limits["max-storage-buffer-binding-size"]:
            raise InputError(
                f"webgpu: kernel {kernel.key} binds {size} bytes of one tensor; the adapter binds at most "
                f"{self.limits['max-storage-buffer-binding-size']}"
            )
        at = arg["params_at"]
        values[at] = _i32((start - bind_at) // es, kernel.key)
        for i, v in enumerate([*sizes, *strides]):
            values[at + 1 + i] = _i32(v, kernel.key)
        return buffer, bind_at, size


def _i32(value: int, key: str) -> int:
    if not -(2**31) <= value <= _I32_MAX:
        raise InputError(
            f"webgpu: kernel {key} gets the value {value}, beyond the 32-bit indices of WebGPU kernels"
        )
    return value


_DEVICE: Device | None = None
_CALLBACKS: dict[str, Any] = {}


def device() -> Device:
    """The process's WebGPU device (opened on first use); ``DeviceUnavailableError`` where there is none."""
    global _DEVICE
    if _DEVICE is None:
        _DEVICE = Device()
        _install(_DEVICE)
    return _DEVICE


def _guard(dev: Device, fn: Any, default: Any = None, always: bool = False) -> Any:
    """``fn`` as a callback: after a failure in this call the rest are skipped (but frees, ``always``),
    and no exception unwinds through compiled code: the first is kept for ``Device.check``."""

    def call(*args: Any) -> Any:
        if dev.error is not None and not always:
            return default
        try:
            return fn(*args)
        except BaseException as e:  # noqa: BLE001  (nothing may unwind through compiled code)
            dev.fail(e)
            return default

    return call


def _install(dev: Device) -> None:
    """Give the JIT linker the ``relax_wgpu_*`` symbols the host code calls."""
    vp, i64 = ctypes.c_void_p, ctypes.c_int64
    token = 1  # streams and events: WebGPU's one queue runs everything in order
    calls = {
        "ModuleLoad": (
            ctypes.CFUNCTYPE(vp, vp, i64),
            lambda data, size: dev.load_module(ctypes.string_at(data, size)),
        ),
        "ModuleUnload": (ctypes.CFUNCTYPE(None, vp), lambda module: dev.modules.pop(module, None)),
        "ModuleGetFunction": (
            ctypes.CFUNCTYPE(vp, vp, ctypes.c_char_p),
            lambda module, name: dev.function(module, name.decode()),
        ),
        "LaunchKernel": (
            ctypes.CFUNCTYPE(None, vp, i64, i64, i64, i64, i64, i64, ctypes.c_int32, vp, vp, vp, i64),
            lambda f, gx, gy, gz, bx, by, bz, smem, stream, params, extra, count: dev.launch(
                f, (gx, gy, gz), params, count
            ),
        ),
        "MemAlloc": (
            ctypes.CFUNCTYPE(vp, i64, vp, ctypes.c_int8),
            lambda size, stream, shared: dev.alloc(size),
        ),
        "MemFree": (ctypes.CFUNCTYPE(None, vp, vp), lambda ptr, stream: dev.free(ptr or 0)),
        "Memcpy": (
            ctypes.CFUNCTYPE(None, vp, vp, i64, vp),
            lambda dst, src, size, stream: dev.memcpy(dst or 0, src or 0, size),
        ),
        "StreamCreate": (ctypes.CFUNCTYPE(vp), lambda: token),
        "StreamSynchronize": (ctypes.CFUNCTYPE(None, vp), lambda stream: None),
        "StreamDestroy": (ctypes.CFUNCTYPE(None, vp), lambda stream: None),
        "StreamWaitEvent": (ctypes.CFUNCTYPE(None, vp, vp), lambda stream, event: None),
        "EventCreate": (ctypes.CFUNCTYPE(vp), lambda: token),
        "EventDestroy": (ctypes.CFUNCTYPE(None, vp), lambda event: None),
        "EventSynchronize": (ctypes.CFUNCTYPE(None, vp), lambda event: None),
        "EventRecord": (ctypes.CFUNCTYPE(None, vp, vp), lambda event, stream: None),
    }
    for name, (prototype, fn) in calls.items():
        default = token if name in ("StreamCreate", "EventCreate") else None
        callback = prototype(_guard(dev, fn, default, always=name == "MemFree"))
        _CALLBACKS[name] = callback  # kept alive as long as the process
        llvm.add_symbol(PREFIX + name, ctypes.cast(callback, ctypes.c_void_p).value)

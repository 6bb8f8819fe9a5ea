"""The ``wasm32`` target: a relax module in, a standalone WebAssembly module with the C API out.

``compile(module, target="wasm32")`` returns an executable that runs the module with ``wasmtime`` (same
calling convention, input checks and error messages as the CPU target); ``compile_library(module,
"model.wasm", target="wasm32")`` (``relax-compile --target wasm32 -o model.wasm``) writes the ``.wasm``
and ``model.json`` (the signatures, ``steps.signatures``) for JavaScript and benchmarks.

Toolchain (``pip install relax_mlir[wasm]``: the ``ziglang`` and ``wasmtime`` wheels):

1. ``aot_pipeline(opt_level, SIMD128)`` (relax-O<n> without OpenBLAS and OpenMP; register tiles and packed
   weight panels sized for 16 registers of 128 bits, ``transforms/schedules``' ``VectorUnit``), then ``host-to-llvm`` with
   ``finalize-memref-to-llvm{use-generic-functions}``: compiled code allocates through
   ``_mlir_memref_to_llvm_alloc(i64)``/``_mlir_memref_to_llvm_free``, which the C wrapper defines over
   wasi-libc's ``malloc(size_t)`` (a direct ``malloc(i64)`` call would mismatch wasm32's
   ``malloc(i32)``, and wasm-ld turns a signature mismatch into a stub that traps). ``index`` stays 64-bit,
   so memref descriptors are what the C API's wrapper builds (``int64_t`` offsets, sizes and strides;
   pointers are 4 bytes); buffer sizes are computed in i64 (``sizes_in_64_bits``), so a buffer over
   4 GiB is a failed allocation, not a wrapped size. exp/erf/tanh are inlined polynomials (``relax-approximate-math``, they vectorize);
   other math calls musl's libm from wasi-libc (scalar).
2. ``mlir-translate`` gives LLVM IR; llvmlite (LLVM 22) optimizes it (``-O<min(n, 2)>``) and emits a
   ``wasm32-unknown-wasi`` object with ``+simd128``. Relaxed SIMD is left out: node 20 (V8 11.3) rejects
   it without ``--experimental-wasm-relaxed-simd``. The first link builds wasi-libc into zig's cache
   (~20 s, once per machine).
3. ``python -m ziglang cc -target wasm32-wasi`` compiles the C wrapper of ``runtime/capi.py`` (with the
   allocation hooks above) and links it with the object and wasi-libc (LLD 22) into a WASI reactor
   (``-mexec-model=reactor``: no entry point); zig puts the stack (``STACK_SIZE``) first in memory, so a
   stack overflow traps instead of overwriting data.

The module imports nothing and exports ``memory``, ``malloc``, ``free``, ``<prefix>_last_error`` and, per
public function ``@f``, ``<prefix>_f`` and ``<prefix>_f_output_shapes`` (``capi.py`` documents them; the
prefix is ``relax``), plus ``_initialize``: the WASI reactor's constructor entry, which a host calls once
after instantiating (the Python runner does; it needs no import). Integer arguments of the C API are
``int64_t`` (a JavaScript ``BigInt``), pointers are ``i32`` addresses in ``memory``. Memory grows on
``malloc`` (views of ``memory.buffer`` must be re-made after any call). A ``relax_tensor`` in wasm32
memory (size 24, alignment 8; checked by ``_Static_assert`` in the wrapper):

| field | offset | size | type |
| --- | --- | --- | --- |
| ``data`` | 0 | 4 | pointer (wasm32 address) |
| (padding) | 4 | 4 | |
| ``ndim`` | 8 | 8 | int64 |
| ``shape`` | 16 | 4 | pointer to ``ndim`` int64 |
| ``dtype`` | 20 | 4 | int32 (``relax_dtype``) |

Errors: a call's inputs are checked in Python first (``executable.Signature``, the CPU target's checks
and messages); a non-zero ``RELAX_ERR_*`` from the wrapper is an ``InputError`` with
``<prefix>_last_error()``'s message. When ``malloc`` fails inside compiled code, the allocation hook sets
the message (``out of memory: compiled code could not allocate N bytes``) and traps (``unreachable``): the
runner raises ``OutOfMemoryError``; any other trap is a ``WasmTrapError`` (the instance stays usable;
what compiled code had allocated before the trap is not freed).

Not supported (``CompileError`` before lowering, naming the function): outputs whose dims depend on the
data (``nonzero``, ``unique``: the C API sizes every output before the call), dtypes the C API rejects;
(``CompileError`` "unsupported on wasm32" before LLVM's backend, which would abort or hang): arithmetic in
bf16 and comparisons of f16 vectors (LLVM 22's WebAssembly backend without the fp16 proposal);
and ``relax.call_dps_library`` calls to anything but libc/libm functions (nothing else links into the
``.wasm``: the link fails naming the undefined symbol). wasm32 memory is at most 4 GiB: larger inputs,
outputs or buffers raise ``OutOfMemoryError``.
"""

from __future__ import annotations

import atexit
import functools
import importlib.metadata
import json
import os
import re
import struct
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import llvmlite.binding as llvm
import numpy as np
from mlir import ir
from mlir.dialects import llvm as llvm_dialect

from relax_mlir.dialects.types import NUMPY_DTYPES
from relax_mlir.errors import CompileError, InputError, OutOfMemoryError, RelaxError, WasmTrapError
from relax_mlir.pipelines.cpu import host_to_llvm
from relax_mlir.pipelines.data import P, Pipeline, replace
from relax_mlir.runtime import cache, capi
from relax_mlir.runtime.executable import Executable, Fixed, Signature, out_of_memory
from relax_mlir.runtime.toolchain import find_tool
from relax_mlir.targets import steps, wasm_js
from relax_mlir.targets.aot import aot_pipeline, check_lowered, function_apis, run_tool
from relax_mlir.targets.base import CompileStats, JitTarget, check_opt_level, register_target
from relax_mlir.targets.codegen import llvm_level
from relax_mlir.transforms.schedules import VectorUnit

TRIPLE = "wasm32-unknown-wasi"
FEATURES = "+simd128"
# what kernels are tiled for: SIMD128, and the 16 registers engines use (x86 xmm0-15)
SIMD128 = VectorUnit(128, 16)
STACK_SIZE = 8 << 20  # bytes of shadow stack (kernels' stack buffers); Linux threads get as much
INSTALL = "pip install relax_mlir[wasm]"
TENSOR_SIZE = 24  # a relax_tensor in wasm32 (see the table above)
_TENSOR = struct.Struct("<I4xqIi")  # data, ndim, shape, dtype
ALIGN = 16  # of every buffer the runner allocates in wasm memory (a SIMD vector)

# The wasm32 additions to the C wrapper: layout checks and the allocation hooks of compiled code.
WASM_PRELUDE = r"""
#include <stddef.h>
#include <stdlib.h>

_Static_assert(sizeof(relax_tensor) == 24 && _Alignof(relax_tensor) == 8, "relax_tensor layout");
_Static_assert(offsetof(relax_tensor, data) == 0 && offsetof(relax_tensor, ndim) == 8, "relax_tensor layout");
_Static_assert(offsetof(relax_tensor, shape) == 16 && offsetof(relax_tensor, dtype) == 20, "relax_tensor layout");

void *_mlir_memref_to_llvm_alloc(uint64_t size);
void _mlir_memref_to_llvm_free(void *ptr);

/* memref.alloc of compiled code: on failure, say how much and trap (the runner raises OutOfMemoryError). */
void *_mlir_memref_to_llvm_alloc(uint64_t size) {
  void *p = size <= SIZE_MAX ? malloc((size_t)size) : NULL;
  if (p == NULL && size > 0) {
    relax__fail(RELAX_ERR_RUNTIME, "out of memory: compiled code could not allocate %llu bytes (malloc failed)",
                (unsigned long long)size);
    __builtin_trap();
  }
  return p;
}

void _mlir_memref_to_llvm_free(void *ptr) { free(ptr); }
"""
_BF16_MOVES = frozenset(
    "load store getelementptr fpext phi select bitcast extractelement insertelement shufflevector "
    "insertvalue extractvalue alloca ret br define".split()
)
_F16_VECTOR_COMPARE = re.compile(r"fcmp \w+ <\d+ x half>")
_OOM = re.compile(r"out of memory: compiled code could not allocate (\d+) bytes")


# -- the toolchain ------------------------------------------------------------------------------------
def _version(package: str) -> str | None:
    try:
        return importlib.metadata.version(package)
    except importlib.metadata.PackageNotFoundError:
        return None


def zig() -> list[str]:
    """The command that runs zig (the ``ziglang`` wheel of this Python), or ``RelaxError`` saying what to install."""
    if _version("ziglang") is None:
        raise RelaxError(f"the wasm32 target needs the ziglang package (its clang and wasm-ld): {INSTALL}")
    return [sys.executable, "-m", "ziglang"]


def wasmtime_module() -> Any:
    """The ``wasmtime`` package, or ``RelaxError`` saying what to install."""
    try:
        import wasmtime
    except ImportError:
        raise RelaxError(f"running wasm32 code from Python needs the wasmtime package: {INSTALL}") from None
    return wasmtime


@functools.cache
def _target_machine(opt_level: int) -> llvm.TargetMachine:
    llvm.initialize_all_targets()
    llvm.initialize_all_asmprinters()
    target = llvm.Target.from_triple(TRIPLE)
    return target.create_target_machine(
        cpu="generic", features=FEATURES, opt=opt_level, reloc="static", codemodel="default"
    )


def object_code(llvm_ir: str, opt_level: int) -> bytes:
    """A wasm32 object of LLVM IR (from ``mlir-translate``), optimized at ``llvm_level(opt_level)``."""
    level = llvm_level(opt_level)
    tm = _target_machine(level)
    module = llvm.parse_assembly(llvm_ir)
    module.triple = TRIPLE
    module.data_layout = str(tm.target_data)
    module.verify()
    check_bf16(llvm_ir)
    f16 = " half" in llvm_ir
    if level > 0:
        tuning = llvm.create_pipeline_tuning_options(speed_level=level)
        # LLVM's vectorizers would make f16 vectors, whose comparisons hang the wasm backend (below)
        tuning.loop_vectorization = tuning.slp_vectorization = not f16
        builder = llvm.create_pass_builder(tm, tuning)
        builder.getModulePassManager().run(module, builder)
    if f16:
        found = _F16_VECTOR_COMPARE.search(str(module))
        if found:
            raise CompileError(
                f"unsupported on wasm32: the module compares f16 vectors ('{found.group(0)}'), which LLVM 22's "
                "WebAssembly backend cannot compile (it loops forever in instruction selection without the "
                "fp16 proposal, which node 20 lacks); compute in f32 (relax.astype) instead"
            )
    return tm.emit_object(module)


def check_bf16(llvm_ir: str) -> None:
    """LLVM 22's WebAssembly backend cannot round f32 to bf16 (``fp_to_bf16``: it aborts the process), so
    bf16 may only be moved (loaded, stored, widened), never computed or narrowed to."""
    if " bfloat" not in llvm_ir:
        return
    for line in llvm_ir.splitlines():
        if "bfloat" in line and not line.lstrip().startswith(("declare", ";")):
            opcode = line.split("= ", 1)[1].split()[0] if "= " in line else line.split()[0]
            if opcode not in _BF16_MOVES:
                raise CompileError(
                    f"unsupported on wasm32: the module computes in bf16 ('{line.strip()[:120]}'), which "
                    "LLVM 22's WebAssembly backend cannot compile (no f32 to bf16 rounding); compute in f32 "
                    "(relax.astype) instead"
                )


def exports(apis: list[capi.FunctionApi], prefix: str) -> list[str]:
    """What the module exports besides ``memory``: libc's allocator and the C API."""
    names = ["malloc", "free", f"{prefix}_last_error"]
    for api in apis:
        names += [f"{prefix}_{api.c_name}", f"{prefix}_{api.c_name}_output_shapes"]
    return names


def link(obj: bytes, apis: list[capi.FunctionApi], prefix: str, work: Path, header: Path) -> bytes:
    """Compile the C wrapper for wasm32 and link it with ``obj`` and wasi-libc into the module's bytes."""
    (work / "model.o").write_bytes(obj)
    header.write_text(capi.header_source(apis, "RELAX_WASM_H_", "model.wasm", prefix))
    wrapper = capi.wrapper_source(apis, header.name, prefix) + WASM_PRELUDE
    (work / "wrapper.c").write_text(wrapper)
    out = work / "model.wasm"
    args = [
        *zig(), "cc", "-target", "wasm32-wasi", "-O2", "-std=gnu11", "-Wall", "-mcpu=generic+simd128",
        f"-I{header.parent}", str(work / "wrapper.c"), str(work / "model.o"), "-o", str(out),
        "-mexec-model=reactor", f"-Wl,-z,stack-size={STACK_SIZE}",
        *(f"-Wl,--export={name}" for name in exports(apis, prefix)),
    ]  # fmt: skip
    result = subprocess.run(args, capture_output=True, text=True)
    if result.returncode != 0:
        raise CompileError(
            f"linking the wasm32 module failed (zig cc):\n{(result.stderr or result.stdout).strip()}"
        )
    return out.read_bytes()


def _wasm_lowering() -> Pipeline:
    return replace(
        host_to_llvm(), "finalize-memref-to-llvm", [P("finalize-memref-to-llvm", use_generic_functions=True)]
    )


_SCALAR_BYTES = {"f16": 2, "bf16": 2, "f32": 4, "f64": 8}


def _type_bytes(t: str) -> int | None:
    """The allocation size of a scalar or power-of-two vector LLVM type (``f32``, ``vector<16xf32>``)."""
    if t in _SCALAR_BYTES:
        return _SCALAR_BYTES[t]
    if re.fullmatch(r"i\d+", t):
        return max(1, 1 << (int(t[1:]) - 1).bit_length()) // 8 or 1
    vec = re.fullmatch(r"vector<(\d+)x(\w+)>", t)
    if vec and int(vec.group(1)) & (int(vec.group(1)) - 1) == 0:
        inner = _type_bytes(vec.group(2))
        return None if inner is None else int(vec.group(1)) * inner
    return None


def sizes_in_64_bits(op: ir.Operation) -> None:
    """Compute buffer sizes as ``n * sizeof`` in i64 instead of ``ptrtoint(gep null[n])``.

    MLIR's memref lowering sizes allocations with the null-GEP idiom, which on wasm32's 32-bit pointers
    wraps modulo 4 GiB: a larger buffer would get a small allocation. In i64 the allocation hook sees the
    real size and reports it (``OutOfMemoryError``)."""
    found: list[tuple[ir.Operation, ir.Value, int]] = []

    def visit(inner: ir.Operation) -> ir.WalkResult:
        if inner.name != "llvm.ptrtoint" or str(inner.results[0].type) != "i64":
            return ir.WalkResult.ADVANCE
        gep = inner.operands[0].owner
        if not isinstance(gep, ir.Operation) and hasattr(gep, "operation"):
            gep = gep.operation
        if not isinstance(gep, ir.Operation) or gep.name != "llvm.getelementptr" or len(gep.operands) != 2:
            return ir.WalkResult.ADVANCE
        base = gep.operands[0].owner
        base = base.operation if hasattr(base, "operation") else base
        size = _type_bytes(str(ir.TypeAttr(gep.attributes["elem_type"]).value))
        if getattr(base, "name", "") == "llvm.mlir.zero" and size and str(gep.operands[1].type) == "i64":
            found.append((inner, gep.operands[1], size))
        return ir.WalkResult.ADVANCE

    op.walk(visit)
    i64 = ir.IntegerType.get_signless(64)
    for ptrtoint, count, size in found:
        with ir.InsertionPoint(ptrtoint), ptrtoint.location:
            c = llvm_dialect.ConstantOp(i64, ir.IntegerAttr.get(i64, size)).result
            product = llvm_dialect.MulOp(count, c, ir.Attribute.parse("#llvm.overflow<none>")).result
        ptrtoint.results[0].replace_all_uses_with(product)
        ptrtoint.erase()


@dataclass
class WasmModule:
    """What a wasm32 build produces: the module's bytes, the signatures, where time went."""

    wasm: bytes
    signatures: dict[str, dict]
    llvm_ir: str = ""
    obj: bytes = b""


@dataclass
class WasmLibrary:
    """What ``compile_library`` wrote: the module, its signatures file, the exports, seconds per stage."""

    path: Path
    signatures_path: Path | None
    target: str = "wasm32"
    functions: dict[str, str] = field(default_factory=dict)  # relax function -> exported C function
    exports: list[str] = field(default_factory=list)
    imports: list[str] = field(default_factory=list)
    stages: dict[str, float] = field(default_factory=dict)


# -- running it with wasmtime -------------------------------------------------------------------------
class WasmInstance:
    """One instantiated module (one wasmtime Store per executable) and its allocator."""

    def __init__(self, wasm: bytes, prefix: str = "relax") -> None:
        wt = wasmtime_module()
        self.wt = wt
        self.engine = _engine()
        self.module = wt.Module(self.engine, wasm)
        self.store = wt.Store(self.engine)
        instance = wt.Instance(self.store, self.module, [])
        self.exports = instance.exports(self.store)
        self.memory = self.exports["memory"]
        self._malloc = self.exports["malloc"]
        self._free = self.exports["free"]
        self._last_error = self.exports[f"{prefix}_last_error"]
        self.prefix = prefix
        if "_initialize" in self.exports:  # a WASI reactor's constructors, run once before any call
            self.exports["_initialize"](self.store)

    def base(self) -> int:
        """The host address of wasm memory (it moves when memory grows)."""
        import ctypes

        return ctypes.addressof(self.memory.data_ptr(self.store).contents)

    def malloc(self, size: int) -> int:
        """A block of ``size`` bytes in wasm memory, 0 when it cannot be allocated."""
        if size >= 1 << 32:
            return 0
        return self._malloc(self.store, size) & 0xFFFFFFFF

    def free(self, address: int) -> None:
        if address:
            self._free(self.store, address)

    def last_error(self) -> str:
        at = self._last_error(self.store) & 0xFFFFFFFF
        raw = self.memory.read(self.store, at, min(at + 1024, self.memory.data_len(self.store)))
        return bytes(raw).split(b"\0", 1)[0].decode("utf-8", "replace")

    def call(self, fn: Any, name: str, *args: int) -> int:
        """Call an export; a trap becomes ``OutOfMemoryError`` (a failed malloc) or ``WasmTrapError``."""
        try:
            return fn(self.store, *args)
        except self.wt.Trap as e:
            message = self.last_error()
            found = _OOM.search(message)
            if found:
                raise out_of_memory(name, int(found.group(1))) from None
            lines = [line.strip() for line in e.message.splitlines() if line.strip()]
            reason = lines[-1].split(": ", 1)[-1] if lines else "unknown trap"
            raise WasmTrapError(f"@{name}: the wasm32 module trapped ({reason})") from None


@functools.cache
def _engine() -> Any:
    wt = wasmtime_module()
    config = wt.Config()
    config.wasm_simd = True
    engine = wt.Engine(config)
    atexit.register(engine.close)  # before interpreter teardown, when wasmtime can still free it
    return engine


def _aligned(n: int) -> int:
    return (n + ALIGN - 1) & -ALIGN


class WasmFunction(Signature):
    """One relax function of a wasm32 module, called with numpy arrays like the CPU target's ``Function``."""

    def __init__(self, name: str, signature: dict[str, Any], instance: WasmInstance) -> None:
        super().__init__(name, signature)
        api = capi.function_api(name, signature)
        self.instance = instance
        self._fn = instance.exports[f"{instance.prefix}_{api.c_name}"]
        self._shapes = instance.exports[f"{instance.prefix}_{api.c_name}_output_shapes"]
        self._in_codes = [capi.DTYPES[v.dtype][1] for v in api.inputs]
        self._out_specs = [(v.kind, v.dtype, capi.DTYPES[v.dtype][1], len(v.dims)) for v in api.outputs]
        self._n_out_dims = sum(len(v.dims) if v.kind == "tensor" else v.ndim for v in api.outputs)

    def _check(self, rc: int) -> None:
        if rc:
            raise InputError(self.instance.last_error())

    def _run(
        self, arrays: list[np.ndarray], dims: tuple[int, ...], ints: list[int], fixed: Fixed | None = None
    ) -> Any:
        inst = self.instance
        # the inputs as (host array, shape): prim values are 0-d int64 tensors, shapes 1-d
        values: list[tuple[np.ndarray, tuple[int, ...]]] = []
        tensors, numbers = iter(arrays), iter(ints)
        for spec in self.inputs:
            if spec.kind == "tensor":
                a = next(tensors)
                values.append((a, a.shape))
            elif spec.kind == "prim":
                values.append((np.array(next(numbers), np.int64), ()))
            else:
                n = len(spec.type.values)
                values.append((np.array([next(numbers) for _ in range(n)], np.int64), (n,)))
        blocks: list[int] = []
        try:
            in_at, in_size = self._layout([(s, a.nbytes) for a, s in values], self._n_out_dims)
            block = self._alloc(in_size, "its inputs", blocks)
            base = inst.base()
            tensors_at = block
            self._write(base, block, in_at, values, self._in_codes)
            dims_at = block + in_at[-1]
            n_in = len(values)
            self._check(inst.call(self._shapes, self.name, tensors_at, n_in, dims_at, self._n_out_dims))
            base = inst.base()
            out_dims = (
                np.frombuffer((ctypes_bytes(base + dims_at, 8 * self._n_out_dims)), np.int64).tolist()
                if self._n_out_dims
                else []
            )
            shapes, at = [], 0
            for kind, _, _, rank in self._out_specs:
                k = rank if kind == "tensor" else (0 if kind == "prim" else 1)
                shapes.append(tuple(out_dims[at : at + k]))
                at += k
            outs = [np.empty(s, NUMPY_DTYPES[dtype]) for s, (_, dtype, _, _) in zip(shapes, self._out_specs)]
            out_at, out_size = self._layout([(s, o.nbytes) for s, o in zip(shapes, outs)], 0)
            out_block = self._alloc(out_size, "its outputs", blocks)
            base = inst.base()
            self._write(
                base,
                out_block,
                out_at,
                [(o, s) for o, s in zip(outs, shapes)],
                [c for _, _, c, _ in self._out_specs],
                copy=False,
            )
            self._check(inst.call(self._fn, self.name, tensors_at, n_in, out_block, len(outs)))
            base = inst.base()
            for spec, (a, _), data_at in zip(self.inputs, values, in_at[n_in : 2 * n_in]):
                if spec.inplace and a.nbytes:  # the function updated its copy: update the caller's array
                    a.reshape(-1).view(np.uint8)[:] = np.frombuffer(
                        ctypes_bytes(base + block + data_at, a.nbytes), np.uint8
                    )
            results: list[Any] = []
            for (kind, _, _, _), o, data_at in zip(self._out_specs, outs, out_at[len(outs) : 2 * len(outs)]):
                if o.nbytes:
                    o.reshape(-1).view(np.uint8)[:] = np.frombuffer(
                        ctypes_bytes(base + out_block + data_at, o.nbytes), np.uint8
                    )
                results.append(o if kind == "tensor" else (int(o) if kind == "prim" else tuple(o.tolist())))
        finally:
            for b in blocks:
                inst.free(b)
        if self._flat_results:
            return results[0] if len(results) == 1 else tuple(results)
        return self._structure(results)

    @staticmethod
    def _layout(values: list[tuple[tuple[int, ...], int]], extra_dims: int) -> tuple[list[int], int]:
        """Offsets in one block of n values: the n relax_tensors at 0, then n shapes, n data buffers and
        ``extra_dims`` int64s: returns the offsets of the shapes, of the data and of the extra dims, and the
        block's size."""
        at = TENSOR_SIZE * len(values)
        shape_at = []
        for shape, _ in values:
            shape_at.append(at)
            at += 8 * len(shape)
        data_at = []
        for _, nbytes in values:
            at = _aligned(at)
            data_at.append(at)
            at += nbytes
        at = _aligned(at)
        return [*shape_at, *data_at, at], at + 8 * extra_dims

    def _alloc(self, size: int, what: str, blocks: list[int]) -> int:
        block = self.instance.malloc(max(size, 1))
        if not block:
            raise OutOfMemoryError(
                f"@{self.name}: out of memory: {what} need {size} bytes in wasm32 memory, which malloc could "
                "not allocate (at most 4 GiB)"
            )
        blocks.append(block)
        return block

    def _write(
        self, base: int, block: int, at: list[int], values: list[tuple[np.ndarray, tuple[int, ...]]],
        codes: list[int], copy: bool = True,
    ) -> None:  # fmt: skip
        """The relax_tensors, shapes and (when ``copy``) data of ``values`` into the block at ``block``."""
        import ctypes

        n = len(values)
        shape_at, data_at = at[:n], at[n : 2 * n]
        meta = bytearray(TENSOR_SIZE * n)
        for i, ((_, shape), code) in enumerate(zip(values, codes)):
            _TENSOR.pack_into(
                meta, TENSOR_SIZE * i, block + data_at[i], len(shape), block + shape_at[i], code
            )
        ctypes.memmove(base + block, bytes(meta), len(meta))
        for i, (a, shape) in enumerate(values):
            if shape:
                ctypes.memmove(
                    base + block + shape_at[i], struct.pack(f"<{len(shape)}q", *shape), 8 * len(shape)
                )
            if copy and a.nbytes:
                ctypes.memmove(base + block + data_at[i], a.ctypes.data, a.nbytes)


def ctypes_bytes(address: int, n: int) -> Any:
    import ctypes

    return (ctypes.c_char * n).from_address(address)


class WasmExecutable(Executable):
    """The functions of a wasm32 module, run by wasmtime in this process (one Store per executable)."""

    def __init__(self, wasm: bytes, signatures: dict[str, dict], stats: Any = None) -> None:
        self.wasm = wasm
        self.signatures = signatures
        self.instance = WasmInstance(wasm)
        functions = {name: WasmFunction(name, sig, self.instance) for name, sig in signatures.items()}
        super().__init__(functions, stats)  # type: ignore[arg-type]


# -- the target ---------------------------------------------------------------------------------------
@register_target
class WasmTarget(JitTarget):
    """WebAssembly (wasm32 + SIMD128): a standalone module, run from Python by wasmtime."""

    name = "wasm32"
    summary = "a standalone WebAssembly module (SIMD128) with the C API; runs in node, browsers, wasmtime"

    def relax_pipeline(self, opt_level: int) -> Pipeline:
        return aot_pipeline(opt_level, SIMD128, "+simd128")  # kernels of 128-bit vectors

    def lowering_pipeline(self, opt_level: int, **options: Any) -> Pipeline:
        return _wasm_lowering()

    def check_signatures(self, signatures: dict[str, dict]) -> None:
        for name, signature in signatures.items():
            capi.function_api(name, signature)

    def cache_tag(self, relax_pipeline: str, **options: Any) -> str:
        return f"{self.name}:{FEATURES}:ziglang {_version('ziglang')}:{relax_pipeline}"

    def codegen(
        self,
        op: ir.Operation,
        signatures: dict[str, dict],
        opt_level: int,
        stats: CompileStats,
        prefix: str = "relax",
        emit: str = "wasm",
        **options: Any,
    ) -> WasmModule:
        check_lowered(op)
        sizes_in_64_bits(op)
        apis = function_apis(signatures)
        t = time.perf_counter()
        with tempfile.TemporaryDirectory(prefix="relax_wasm_") as tmp:
            work = Path(tmp)
            (work / "model.mlirbc").write_bytes(steps.bytecode(op))
            ll = work / "model.ll"
            run_tool(
                [find_tool("mlir-translate"), "--mlir-to-llvmir", str(work / "model.mlirbc"), "-o", str(ll)],
                "mlir-translate --mlir-to-llvmir",
            )
            llvm_ir = ll.read_text()
            stats.stages["llvm ir"] = time.perf_counter() - t
            if emit == "llvm":
                return WasmModule(b"", signatures, llvm_ir=llvm_ir)
            t = time.perf_counter()
            obj = object_code(llvm_ir, opt_level)
            stats.stages["llvm codegen"] = time.perf_counter() - t
            if emit == "obj":
                return WasmModule(b"", signatures, obj=obj)
            t = time.perf_counter()
            wasm = link(obj, apis, prefix, work, work / "model.h")
            stats.stages["link"] = time.perf_counter() - t
        return WasmModule(wasm, signatures)

    def load_cached(self, key: str, stats: CompileStats, **options: Any) -> Executable | None:
        hit = cache.load_unlinked(key, fields=())
        if hit is None:
            return None
        data, meta, _ = hit
        return WasmExecutable(data, meta["signatures"], stats)

    def executable(self, key: str, artifact: WasmModule, stats: CompileStats, **options: Any) -> Executable:
        t = time.perf_counter()
        cache.store_unlinked(key, artifact.wasm, {"signatures": artifact.signatures})
        exe = WasmExecutable(artifact.wasm, artifact.signatures, stats)
        stats.stages["load"] = time.perf_counter() - t
        return exe

    def compile(self, module: Any, **options: Any) -> Executable:  # type: ignore[override]
        zig()
        wasmtime_module()
        options.pop("chip", None)
        return super().compile(module, **options)

    def compile_library(  # type: ignore[override]
        self,
        module: ir.Module | ir.Operation | str,
        path: str | os.PathLike,
        *,
        opt_level: int = 2,
        cpu: str | None = None,
        header: str | os.PathLike | None = None,
        prefix: str = "relax",
        emit: str = "wasm",
        source_name: str = "<relax-compile>",
    ) -> WasmLibrary:
        """Write the module to ``path`` (``emit="wasm"``; ``"so"`` means the same) and its signatures to
        ``path`` with suffix ``.json``; ``emit="llvm"`` writes the LLVM IR, ``"obj"`` the model's wasm32
        object instead. ``header`` also writes the C header of the API; ``cpu`` must be None."""
        t_all = time.perf_counter()
        emit = "wasm" if emit == "so" else emit
        if emit not in ("wasm", "obj", "llvm"):
            raise RelaxError(f"unknown --emit '{emit}' for wasm32; choose one of wasm, obj, llvm")
        if cpu:
            raise RelaxError(f"--cpu is not an option of the wasm32 target (it targets {TRIPLE} {FEATURES})")
        capi.check_prefix(prefix)
        if emit != "llvm":
            zig()
        check_opt_level(opt_level)
        out = Path(path)
        lib = WasmLibrary(out, None)
        stats = CompileStats(lib.stages)
        source = steps.source(steps.verified(module))
        built: WasmModule = self.build(
            source, opt_level, stats=stats, source_name=source_name, prefix=prefix, emit=emit
        )
        apis = function_apis(built.signatures)
        if emit == "llvm":
            out.write_text(built.llvm_ir)
        elif emit == "obj":
            out.write_bytes(built.obj)
        else:
            out.write_bytes(built.wasm)
            lib.signatures_path = out.with_suffix(".json")
            lib.signatures_path.write_text(json.dumps(built.signatures, indent=1))
            wasm_js.write_js(out, built.signatures, prefix)  # model.mjs + model.d.ts
            lib.functions = {api.name: f"{prefix}_{api.c_name}" for api in apis}
            lib.imports, lib.exports = module_interface(built.wasm)
        if header is not None:
            Path(header).write_text(capi.header_source(apis, "RELAX_WASM_H_", out.name, prefix))
        lib.stages["total"] = time.perf_counter() - t_all
        return lib


def module_interface(wasm: bytes) -> tuple[list[str], list[str]]:
    """The imports (``module.name``) and exports of a wasm module."""
    wt = wasmtime_module()
    m = wt.Module(_engine(), wasm)
    return [f"{i.module}.{i.name}" for i in m.imports], [e.name for e in m.exports]

"""Calling compiled relax functions with numpy arrays: input checks, output allocation, errors.

Before native code runs, every input is checked against the function's relax signature: count,
kind, dtype, rank, constant dims, one value per symbol across all parameters, symbolic dim
expressions, and declared upper bounds. Non-contiguous arrays are copied. Outputs whose shapes
follow from the inputs are allocated here as numpy arrays and written in place by the compiled code;
data-dependent outputs come back from native code and are copied into numpy arrays, then freed.
"""

from __future__ import annotations

import ctypes
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import ml_dtypes
import numpy as np

from relax_mlir.dialects.types import PrimType, TensorType, parse_type
from relax_mlir.errors import InputError
from relax_mlir.runtime.loader import LoadedObject
from relax_mlir.shape_infer.expr import Expr, format_dim

NUMPY_DTYPES = {
    "f16": np.float16,
    "f32": np.float32,
    "f64": np.float64,
    "i1": np.bool_,
    "i8": np.int8,
    "i16": np.int16,
    "i32": np.int32,
    "i64": np.int64,
    "ui8": np.uint8,
    "ui16": np.uint16,
    "ui32": np.uint32,
    "ui64": np.uint64,
    "bf16": ml_dtypes.bfloat16,
    "f8E4M3FN": ml_dtypes.float8_e4m3fn,
    "f8E4M3FNUZ": ml_dtypes.float8_e4m3fnuz,
    "f8E5M2": ml_dtypes.float8_e5m2,
    "f8E5M2FNUZ": ml_dtypes.float8_e5m2fnuz,
    "f8E8M0FNU": ml_dtypes.float8_e8m0fnu,
    "f4E2M1FN": ml_dtypes.float4_e2m1fn,
    "i4": ml_dtypes.int4,
    "ui4": ml_dtypes.uint4,
    "i2": ml_dtypes.int2,
    "ui2": ml_dtypes.uint2,
}

_libc = ctypes.CDLL(None)
_libc.free.argtypes = [ctypes.c_void_p]


_DESCRIPTORS: dict[int, type[ctypes.Structure]] = {}


def descriptor_type(rank: int) -> type[ctypes.Structure]:
    """The ctypes struct of a ranked memref descriptor: pointers, offset, sizes, strides."""
    if rank not in _DESCRIPTORS:
        fields = [("allocated", ctypes.c_void_p), ("aligned", ctypes.c_void_p), ("offset", ctypes.c_int64)]
        if rank:
            fields += [("sizes", ctypes.c_int64 * rank), ("strides", ctypes.c_int64 * rank)]
        _DESCRIPTORS[rank] = type(f"MemRef{rank}D", (ctypes.Structure,), {"_fields_": fields})
    return _DESCRIPTORS[rank]


def _describe(array: np.ndarray) -> ctypes.Structure:
    d = descriptor_type(array.ndim)()
    d.allocated = d.aligned = array.ctypes.data
    d.offset = 0
    if array.ndim:
        d.sizes[:] = array.shape
        d.strides[:] = [s // array.itemsize for s in array.strides] if array.size else [0] * array.ndim
    return d


def numpy_dtype(dtype: str | None, what: str) -> np.dtype:
    if dtype not in NUMPY_DTYPES:
        raise InputError(f"{what}: dtype {dtype} has no numpy equivalent")
    return np.dtype(NUMPY_DTYPES[dtype])


@dataclass
class _Input:
    kind: str
    type: Any
    name: str


class Function:
    """One compiled relax function; call it with numpy arrays (and ints for prim/shape parameters)."""

    def __init__(self, name: str, signature: dict[str, Any], loaded: LoadedObject) -> None:
        self.name = name
        self.inputs = [_Input(x["kind"], parse_type(x["type"]), x["name"]) for x in signature["inputs"]]
        self.outputs = [(x["kind"], parse_type(x["type"])) for x in signature["outputs"]]
        self.checks: list[str] = signature["checks"]
        self.upper_bounds: dict[str, int] = signature["upper_bounds"]
        self.param_structure = signature["param_structure"]
        self.result_structure = signature["result_structure"]
        self._returned = [t for kind, t in self.outputs if kind == "returned"]
        self._result_struct = (
            type(
                f"{name}_results",
                (ctypes.Structure,),
                {
                    "_fields_": [
                        (f"r{i}", descriptor_type(len(t.shape))) for i, t in enumerate(self._returned)
                    ]
                },
            )
            if self._returned
            else None
        )
        argtypes: list[Any] = [ctypes.c_void_p] if self._returned else []
        for spec in self.inputs:
            if spec.kind == "tensor":
                argtypes.append(ctypes.c_void_p)
            else:
                argtypes += [ctypes.c_int64] * (1 if spec.kind == "prim" else len(spec.type.values))
        argtypes += [ctypes.c_void_p] * (len(self.outputs) - len(self._returned) + 1)
        self._fn = ctypes.CFUNCTYPE(None, *argtypes)(loaded.address(f"_mlir_ciface_{name}"))
        self._loaded = loaded  # keeps the code alive
        self._status = np.zeros(4, np.int64)

    def __repr__(self) -> str:
        params = ", ".join(f"{i.name}: {i.type}" for i in self.inputs)
        return f"<compiled @{self.name}({params})>"

    # -- checking inputs ---------------------------------------------------------------------------
    def _flatten(self, args: Sequence[Any]) -> list[Any]:
        if len(args) != len(self.param_structure):
            raise InputError(f"@{self.name} takes {len(self.param_structure)} argument(s), got {len(args)}")
        flat: list[Any] = []

        def walk(value: Any, structure: Any, what: str) -> None:
            if structure == 0:
                flat.append(value)
                return
            if not isinstance(value, (tuple, list)) or len(value) != len(structure):
                raise InputError(f"@{self.name}: {what} must be a tuple of {len(structure)} values")
            for j, (v, s) in enumerate(zip(value, structure)):
                walk(v, s, f"{what}.{j}")

        for i, (a, s) in enumerate(zip(args, self.param_structure)):
            walk(a, s, f"argument #{i}")
        return flat

    def bind(self, args: Sequence[Any]) -> tuple[list[Any], dict[str, int]]:
        """Check the arguments; return them as contiguous arrays/ints and the symbol values."""
        flat = self._flatten(args)
        env: dict[str, int] = {}
        origin: dict[str, str] = {}
        values: list[Any] = []
        pending: list[tuple[Expr, int, str]] = []

        def dim(d: Expr | None, actual: int, what: str) -> None:
            if d is None:
                return
            if d.is_const:
                if d.value != actual:
                    raise InputError(f"@{self.name}: {what} is {actual}, expected {d.value}")
                return
            name = str(d)
            if d.free_symbols == {name}:
                if name in env and env[name] != actual:
                    raise InputError(
                        f"@{self.name}: {what} is {actual}, but symbol '{name}' is {env[name]} from {origin[name]}"
                    )
                env.setdefault(name, actual)
                origin.setdefault(name, what)
                return
            pending.append((d, actual, what))

        for spec, value in zip(self.inputs, flat):
            where = f"parameter '{spec.name}'"
            if spec.kind == "tensor":
                array = self._array(value, spec, where)
                for axis, (d, actual) in enumerate(zip(spec.type.shape, array.shape)):
                    dim(d, actual, f"{where} dim {axis}")
                values.append(array)
            else:
                ints = self._ints(value, spec, where)
                dims = [spec.type.value] if isinstance(spec.type, PrimType) else list(spec.type.values)
                for j, (d, actual) in enumerate(zip(dims, ints)):
                    dim(d, actual, f"{where} value #{j}" if spec.kind == "shape" else where)
                values.extend(ints)
        for d, actual, what in pending:
            expected = d.evaluate(env)
            if expected != actual:
                raise InputError(f"@{self.name}: {what} is {actual}, expected {format_dim(d)} = {expected}")
        for name, bound in self.upper_bounds.items():
            if env.get(name, 0) > bound:
                raise InputError(
                    f"@{self.name}: symbol '{name}' is {env[name]} (from {origin[name]}), above its upper bound {bound}"
                )
        return values, env

    def _array(self, value: Any, spec: _Input, where: str) -> np.ndarray:
        t: TensorType = spec.type
        if not isinstance(value, np.ndarray):
            raise InputError(
                f"@{self.name}: {where} must be a numpy array of {t}, got {type(value).__name__}"
            )
        expected = numpy_dtype(t.dtype, where)
        if value.dtype != expected:
            raise InputError(
                f"@{self.name}: {where} has dtype {value.dtype}, expected {expected} ({t.dtype})"
            )
        if value.ndim != len(t.shape):
            raise InputError(
                f"@{self.name}: {where} has rank {value.ndim} (shape {value.shape}), expected rank {len(t.shape)} {t}"
            )
        return np.ascontiguousarray(value)

    def _ints(self, value: Any, spec: _Input, where: str) -> list[int]:
        if spec.kind == "prim":
            if not isinstance(value, (int, np.integer)):
                raise InputError(f"@{self.name}: {where} must be an integer, got {value!r}")
            return [int(value)]
        n = len(spec.type.values)
        if not isinstance(value, (tuple, list)) or len(value) != n:
            raise InputError(f"@{self.name}: {where} must be a shape of {n} integers, got {value!r}")
        return [int(v) for v in value]

    # -- calling -------------------------------------------------------------------------------------------
    def __call__(self, *args: Any) -> Any:
        values, env = self.bind(args)
        c_args: list[Any] = []
        descriptors = []
        for v in values:
            if isinstance(v, np.ndarray):
                d = _describe(v)
                descriptors.append(d)
                c_args.append(ctypes.byref(d))
            else:
                c_args.append(v)
        results: list[Any] = []
        for kind, t in self.outputs:
            if kind == "returned":
                results.append(None)
                continue
            if kind == "tensor":
                shape = [d.evaluate(env) for d in t.shape]
                out = np.empty(shape, numpy_dtype(t.dtype, "output"))
            else:
                out = np.zeros(1 if kind == "prim" else len(t.values), np.int64)
            results.append(out)
            d = _describe(out)
            descriptors.append(d)
            c_args.append(ctypes.byref(d))
        self._status[:] = 0
        status = _describe(self._status)
        c_args.append(ctypes.byref(status))
        returned = None
        if self._result_struct is not None:
            returned = self._result_struct()
            c_args.insert(0, ctypes.byref(returned))
        self._fn(*c_args)
        if self._status[0]:
            code, actual, expected = (int(x) for x in self._status[:3])
            self._free(returned)
            raise InputError(f"@{self.name}: {self.checks[code - 1]}, got {actual} (expected {expected})")
        if returned is not None:
            copies = iter(self._copy_returned(returned))
            results = [next(copies) if r is None else r for r in results]
        for i, (kind, _) in enumerate(self.outputs):
            if kind == "prim":
                results[i] = int(results[i][0])
            elif kind == "shape":
                results[i] = tuple(int(v) for v in results[i])
        return self._structure(results)

    def _copy_returned(self, returned: ctypes.Structure) -> list[np.ndarray]:
        arrays = []
        for i, t in enumerate(self._returned):
            d = getattr(returned, f"r{i}")
            shape = tuple(d.sizes) if len(t.shape) else ()
            dtype = numpy_dtype(t.dtype, "output")
            n = int(np.prod(shape)) if shape else 1
            out = np.empty(shape, dtype)
            if n and d.aligned:
                src = (ctypes.c_char * (n * dtype.itemsize)).from_address(
                    d.aligned + d.offset * dtype.itemsize
                )
                out.reshape(-1).view(np.uint8)[:] = np.frombuffer(src, np.uint8)
            arrays.append(out)
        self._free(returned)
        return arrays

    def _free(self, returned: ctypes.Structure | None) -> None:
        if returned is None:
            return
        for i in range(len(self._returned)):
            d = getattr(returned, f"r{i}")
            if d.allocated:
                _libc.free(d.allocated)
                d.allocated = d.aligned = None

    def _structure(self, flat: list[Any]) -> Any:
        it = iter(flat)

        def build(s: Any) -> Any:
            if s == 0:
                return next(it)
            return tuple(build(x) for x in s)

        out = [build(s) for s in self.result_structure]
        return out[0] if len(out) == 1 else tuple(out)


class Executable:
    """The compiled functions of a module: ``exe(*arrays)`` calls ``main`` (or the only function)."""

    def __init__(self, functions: dict[str, Function], stats: Any = None) -> None:
        self.functions = functions
        self.stats = stats  # relax_mlir.runtime.compiler.CompileStats

    def __getitem__(self, name: str) -> Function:
        if name not in self.functions:
            raise KeyError(f"no compiled function @{name}; functions: {', '.join(sorted(self.functions))}")
        return self.functions[name]

    def __call__(self, *args: Any) -> Any:
        if "main" in self.functions:
            return self.functions["main"](*args)
        if len(self.functions) == 1:
            return next(iter(self.functions.values()))(*args)
        raise InputError(f"the module has no @main; call one of {', '.join(sorted(self.functions))} by name")

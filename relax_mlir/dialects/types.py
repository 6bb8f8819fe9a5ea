"""Python views of the relax types, cached so that reading a type costs microseconds.

IR spelling::

    !relax.tensor<["n", 4], f32>     tensor with symbolic shape ("?" = unknown dim)
    !relax.tensor<"*", f32>          tensor of unknown rank
    !relax.tensor<["n"], none>       tensor of unknown dtype
    !relax.shape<["n", "m + 1"]>     a shape value; !relax.shape<"*"> of unknown rank
    !relax.prim<"n * 2">             a symbolic integer value; !relax.prim<"?"> unknown
    !relax.tuple<[T1, T2]>           a tuple
    !relax.object                    anything

MLIR 22's Python bindings have no accessors for IRDL type parameters, so a type is read by
parsing its printed form once and caching the result per type, in a cache that dies with the context.
"""

from __future__ import annotations

import ctypes
import re
import sys
from dataclasses import dataclass
from typing import Union

import ml_dtypes
import numpy as np
from mlir import ir

from relax_mlir.errors import ParseError, ShapeError
from relax_mlir.shape_infer.expr import Expr, format_dim, parse_dim

Dim = Union[Expr, None]  # None: unknown dim


@dataclass(frozen=True, slots=True)
class TensorType:
    """A tensor whose shape is a tuple of symbolic dims (None = unknown rank)."""

    shape: tuple[Dim, ...] | None
    dtype: str | None  # MLIR element type spelling ("f32"); None = unknown

    @property
    def ndim(self) -> int | None:
        return None if self.shape is None else len(self.shape)

    def __str__(self) -> str:
        dtype = self.dtype or "none"
        return f"!relax.tensor<{_format_dims(self.shape)}, {dtype}>"


@dataclass(frozen=True, slots=True)
class ShapeType:
    """A first-class shape value (the result of ``relax.shape_of``)."""

    values: tuple[Dim, ...] | None

    @property
    def ndim(self) -> int | None:
        return None if self.values is None else len(self.values)

    def __str__(self) -> str:
        return f"!relax.shape<{_format_dims(self.values)}>"


@dataclass(frozen=True, slots=True)
class PrimType:
    """A symbolic integer value (None = unknown value)."""

    value: Dim

    def __str__(self) -> str:
        return f'!relax.prim<"{format_dim(self.value)}">'


@dataclass(frozen=True, slots=True)
class TupleType:
    """A tuple of relax values."""

    fields: tuple[RelaxType, ...]

    def __str__(self) -> str:
        return "!relax.tuple<[" + ", ".join(str(f) for f in self.fields) + "]>"


@dataclass(frozen=True, slots=True)
class ObjectType:
    """Any value; nothing is known about it."""

    def __str__(self) -> str:
        return "!relax.object"


RelaxType = Union[TensorType, ShapeType, PrimType, TupleType, ObjectType]


def _format_dims(dims: tuple[Dim, ...] | None) -> str:
    if dims is None:
        return '"*"'
    items = []
    for d in dims:
        f = format_dim(d)
        items.append(str(f) if isinstance(f, int) else f'"{f}"')
    return "[" + ", ".join(items) + "]"


# ----------------------------------------------------------------------------------------------
# Validity: known dtypes, non-negative dims, sizes that fit in int64

# Every dtype a relax tensor may have, and the bytes one element takes in memory (sub-byte ints and
# 4-bit floats take a byte each, as in ml_dtypes).
DTYPE_BYTES: dict[str, int] = {
    **{t: 1 for t in ("i1", "i2", "i4", "ui2", "ui4", "i8", "ui8")},
    **{"i16": 2, "ui16": 2, "i32": 4, "ui32": 4, "i64": 8, "ui64": 8},
    **{"f16": 2, "bf16": 2, "f32": 4, "f64": 8},
    **{t: 1 for t in ("f8E4M3FN", "f8E4M3FNUZ", "f8E5M2", "f8E5M2FNUZ", "f8E8M0FNU", "f4E2M1FN")},
}
INT64_MAX = 2**63 - 1


def type_problem(t: RelaxType) -> str | None:
    """What makes ``t`` unusable, or None: an unknown dtype, a negative static dim, static dims whose
    bytes (product of the non-zero static dims x element size) overflow int64 (every address and
    stride computation would), or a constant beyond int64 in a shape or prim value."""
    if isinstance(t, TupleType):
        return next((p for p in map(type_problem, t.fields) if p is not None), None)
    if isinstance(t, TensorType):
        if t.dtype is not None and t.dtype not in DTYPE_BYTES:
            return f"unknown dtype '{t.dtype}'; expected one of {', '.join(DTYPE_BYTES)} (or none)"
        size = DTYPE_BYTES.get(t.dtype or "", 1)
        for d in t.shape or ():
            v = None if d is None else d.value
            if v is not None and v < 0:
                return f"negative dim {v}"
            size *= v or 1
        if size > INT64_MAX:
            return f"its static dims take {size} bytes, more than the 2**63 - 1 an address can reach"
        return None
    values = t.values or () if isinstance(t, ShapeType) else (t.value,) if isinstance(t, PrimType) else ()
    for d in values:
        v = None if d is None else d.value
        if v is not None and not -INT64_MAX - 1 <= v <= INT64_MAX:
            return f"value {v} does not fit in a 64-bit integer"
    return None


def check_type(t: RelaxType) -> RelaxType:
    """``t``, or a ShapeError naming it and what makes it unusable (see ``type_problem``)."""
    problem = type_problem(t)
    if problem is not None:
        raise ShapeError(f"invalid type {t}: {problem}")
    return t


# ----------------------------------------------------------------------------------------------
# Reading types from MLIR

_TOKEN = re.compile(r'\s*(?:(!relax\.\w+)|("(?:[^"\\]|\\.)*")|(-?\d+)|([\[\]<>,]))')


class _TypeCache:
    """The relax views of one context's types, both ways; it lives and dies with its context.

    Keys and values are the types' uniqued storage pointers, not ``ir.Type`` objects: an ``ir.Type``
    holds its context alive, so caching those would keep every context of the process (2.4 MiB per
    compile) alive. A pointer is unique only within its context, hence one cache per context.
    """

    __slots__ = ("from_mlir", "to_mlir")

    def __init__(self) -> None:
        self.from_mlir: dict[int, RelaxType | None] = {}
        self.to_mlir: dict[RelaxType, object] = {}  # a capsule of the MlirType (holds no context)


def _cache(ctx: ir.Context) -> _TypeCache:
    """The type cache of ``ctx``, kept as an attribute of the context object (which takes attributes)."""
    try:
        return ctx._relax_type_cache
    except AttributeError:
        cache = ctx._relax_type_cache = _TypeCache()
        return cache


_CAPSULE_NAME = b"mlir.ir.Type._CAPIPtr"
_capsule_pointer = ctypes.pythonapi.PyCapsule_GetPointer
_capsule_pointer.restype = ctypes.c_void_p
_capsule_pointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
_read_word = ctypes.c_size_t.from_address
_POINTER_OFFSET = object.__basicsize__  # PyCapsule's ``pointer`` follows PyObject_HEAD (CPython)


def _header_readable() -> bool:
    """Whether a capsule's pointer can be read from its header (3x faster than the C API call)."""
    if sys.implementation.name != "cpython":
        return False
    new = ctypes.pythonapi.PyCapsule_New
    new.restype, new.argtypes = ctypes.py_object, [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]
    probe = new(0x5EED0, _CAPSULE_NAME, None)
    return _read_word(id(probe) + _POINTER_OFFSET).value == 0x5EED0


_HEADER_READABLE = _header_readable()


def _pointer(capsule: object) -> int:
    """The MlirType pointer in a ``_CAPIPtr`` capsule: the type's identity within its context."""
    if _HEADER_READABLE:
        return _read_word(id(capsule) + _POINTER_OFFSET).value
    return _capsule_pointer(capsule, _CAPSULE_NAME)


def relax_type(t: ir.Type) -> RelaxType | None:
    """The relax view of an MLIR type, or None when it is not a relax type. Cached per type."""
    ctx = t.context
    try:
        cache = ctx._relax_type_cache.from_mlir
    except AttributeError:
        cache = _cache(ctx).from_mlir
    capsule = t._CAPIPtr  # inlined ``_pointer``: this is the hot path of every pass
    key = _read_word(id(capsule) + _POINTER_OFFSET).value if _HEADER_READABLE else _pointer(capsule)
    cached = cache.get(key, _MISSING)
    if cached is not _MISSING:
        return cached
    text = str(t)
    result = parse_type(text) if text.startswith("!relax.") else None
    cache[key] = result
    return result


_MISSING = object()


def to_mlir(t: RelaxType, context: ir.Context | None = None) -> ir.Type:
    """The MLIR type of a relax type (the relax dialect must be loaded in the context); ShapeError when
    the type is invalid (``type_problem``)."""
    cache = _cache(context or ir.Context.current)
    capsule = cache.to_mlir.get(t)
    if capsule is not None:
        return ir.Type._CAPICreate(capsule)
    check_type(t)
    mt = ir.Type.parse(str(t), context)
    cache.to_mlir[t] = mt._CAPIPtr
    cache.from_mlir[_pointer(cache.to_mlir[t])] = t
    return mt


def parse_type(text: str) -> RelaxType:
    """Parse the spelling of a relax type (see the module docstring)."""
    parser = _TypeParser(text)
    result = parser.parse_type()
    if parser.pos != len(text.rstrip()):
        raise ParseError(f"unexpected text after relax type at column {parser.pos + 1} in '{text}'")
    problem = type_problem(result)
    if problem is not None:
        raise ParseError(f"invalid relax type '{text}': {problem}")
    return result


class _TypeParser:
    def __init__(self, text: str) -> None:
        self.text = text
        self.pos = 0

    def error(self, what: str) -> ParseError:
        return ParseError(f"cannot parse relax type '{self.text}': {what} at column {self.pos + 1}")

    def skip_ws(self) -> None:
        while self.pos < len(self.text) and self.text[self.pos].isspace():
            self.pos += 1

    def expect(self, s: str) -> None:
        self.skip_ws()
        if not self.text.startswith(s, self.pos):
            raise self.error(f"expected '{s}'")
        self.pos += len(s)

    def peek(self, s: str) -> bool:
        self.skip_ws()
        return self.text.startswith(s, self.pos)

    def parse_type(self) -> RelaxType:
        self.skip_ws()
        m = re.compile(r"!relax\.(\w+)").match(self.text, self.pos)
        if not m:
            raise self.error("expected a relax type")
        self.pos = m.end()
        kind = m.group(1)
        if kind == "object":
            return ObjectType()
        self.expect("<")
        if kind == "tensor":
            shape = self.parse_dims()
            self.expect(",")
            dtype = self.parse_dtype()
            result: RelaxType = TensorType(shape, None if dtype == "none" else dtype)
        elif kind == "shape":
            result = ShapeType(self.parse_dims())
        elif kind == "prim":
            result = PrimType(self.parse_dim_item())
        elif kind == "tuple":
            self.expect("[")
            fields = []
            while not self.peek("]"):
                fields.append(self.parse_type())
                if not self.peek("]"):
                    self.expect(",")
            self.expect("]")
            result = TupleType(tuple(fields))
        else:
            raise self.error(f"unknown relax type '!relax.{kind}'")
        self.expect(">")
        return result

    def parse_dims(self) -> tuple[Dim, ...] | None:
        if self.peek('"*"'):
            self.pos += 3
            return None
        self.expect("[")
        dims: list[Dim] = []
        while not self.peek("]"):
            dims.append(self.parse_dim_item())
            if not self.peek("]"):
                self.expect(",")
        self.expect("]")
        return tuple(dims)

    def parse_dim_item(self) -> Dim:
        self.skip_ws()
        m = _TOKEN.match(self.text, self.pos)
        if not m or not (m.group(2) or m.group(3)):
            raise self.error("expected a dim (integer or quoted expression)")
        self.pos = m.end()
        if m.group(3):
            value = int(m.group(3))
            if value < 0:
                raise self.error(f"negative dim {value}")
            return parse_dim(value)
        return parse_dim(m.group(2)[1:-1])

    def parse_dtype(self) -> str:
        self.skip_ws()
        start = depth = self.pos
        depth = 0
        while self.pos < len(self.text):
            c = self.text[self.pos]
            if c == "<":
                depth += 1
            elif c == ">":
                if depth == 0:
                    break
                depth -= 1
            self.pos += 1
        dtype = self.text[start : self.pos].strip()
        if not dtype:
            raise self.error("expected a dtype")
        return dtype


# ----------------------------------------------------------------------------------------------
# Symbols


def bare_symbols(t: RelaxType) -> set[str]:
    """Symbols that appear alone as a dim/value in a type: the ones a parameter or match_cast defines."""
    out: set[str] = set()
    for d in _dims_of(t):
        if d is not None and len(d.free_symbols) == 1 and str(d) in d.free_symbols:
            out |= d.free_symbols
    return out


def free_symbols(t: RelaxType) -> set[str]:
    """Every symbol a type mentions."""
    out: set[str] = set()
    for d in _dims_of(t):
        if d is not None:
            out |= d.free_symbols
    return out


def _dims_of(t: RelaxType) -> list[Dim]:
    if isinstance(t, TensorType):
        return list(t.shape or ())
    if isinstance(t, ShapeType):
        return list(t.values or ())
    if isinstance(t, PrimType):
        return [t.value]
    if isinstance(t, TupleType):
        return [d for f in t.fields for d in _dims_of(f)]
    return []


# The numpy dtype of each relax dtype (ml_dtypes for bf16, float8/float4 and int4/int2).
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

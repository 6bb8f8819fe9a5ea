"""ONNX op converters: one function per ONNX op type, registered with ``@converter``.

    @converter("Relu")
    def _relu(ctx: NodeContext) -> list[Out]:
        return [R.relu(ctx.x(0))]

A converter reads its node through ``NodeContext``: inputs as relax values (``ctx.x(i)``), their types
(``ctx.type(i)``), values known at import time (``ctx.const(i)``, ``ctx.ints(i)``), attributes with
defaults (``ctx.attr("axis", 0)``) and the opset. It returns one entry per node output: a relax value,
or a ``Known`` (contents known at import time, possibly symbolic: the shape-computation chains).
Ops are built with the node's location, so every error names the node.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import ml_dtypes
import numpy as np
import onnx
from mlir import ir

from relax_mlir.dialects import relax as R
from relax_mlir.dialects.types import TensorType, relax_type
from relax_mlir.errors import RelaxError
from relax_mlir.shape_infer.expr import Expr, const

# ONNX element type -> (relax dtype, numpy dtype)
DTYPES: dict[int, tuple[str, type]] = {
    onnx.TensorProto.FLOAT: ("f32", np.float32),
    onnx.TensorProto.DOUBLE: ("f64", np.float64),
    onnx.TensorProto.FLOAT16: ("f16", np.float16),
    onnx.TensorProto.INT8: ("i8", np.int8),
    onnx.TensorProto.INT16: ("i16", np.int16),
    onnx.TensorProto.INT32: ("i32", np.int32),
    onnx.TensorProto.INT64: ("i64", np.int64),
    onnx.TensorProto.UINT8: ("ui8", np.uint8),
    onnx.TensorProto.UINT16: ("ui16", np.uint16),
    onnx.TensorProto.UINT32: ("ui32", np.uint32),
    onnx.TensorProto.UINT64: ("ui64", np.uint64),
    onnx.TensorProto.BOOL: ("i1", np.bool_),
    onnx.TensorProto.BFLOAT16: ("bf16", ml_dtypes.bfloat16),
    onnx.TensorProto.FLOAT8E4M3FN: ("f8E4M3FN", ml_dtypes.float8_e4m3fn),
    onnx.TensorProto.FLOAT8E4M3FNUZ: ("f8E4M3FNUZ", ml_dtypes.float8_e4m3fnuz),
    onnx.TensorProto.FLOAT8E5M2: ("f8E5M2", ml_dtypes.float8_e5m2),
    onnx.TensorProto.FLOAT8E5M2FNUZ: ("f8E5M2FNUZ", ml_dtypes.float8_e5m2fnuz),
    onnx.TensorProto.FLOAT8E8M0: ("f8E8M0FNU", ml_dtypes.float8_e8m0fnu),
    onnx.TensorProto.FLOAT4E2M1: ("f4E2M1FN", ml_dtypes.float4_e2m1fn),
    onnx.TensorProto.INT4: ("i4", ml_dtypes.int4),
    onnx.TensorProto.UINT4: ("ui4", ml_dtypes.uint4),
    onnx.TensorProto.INT2: ("i2", ml_dtypes.int2),
    onnx.TensorProto.UINT2: ("ui2", ml_dtypes.uint2),
}
NUMPY_TO_RELAX = {np.dtype(n): r for r, n in DTYPES.values()}
RELAX_TO_NUMPY = {r: np.dtype(n) for r, n in DTYPES.values()}


class ConversionError(RelaxError):
    """A node that cannot be converted as written (the importer adds the node's name and op)."""


class ConstantRequired(ConversionError):
    """An input that must be known at import time (it decides a rank or an attribute) is not."""

    def __init__(self, message: str, input_name: str) -> None:
        super().__init__(message)
        self.input_name = input_name


def dtype_name(elem_type: int) -> str:
    """The ONNX name of an element type (``FLOAT``), or its number when ONNX defines none."""
    if elem_type == onnx.TensorProto.UNDEFINED:
        return "undefined"
    try:
        return onnx.TensorProto.DataType.Name(elem_type)
    except ValueError:
        return f"{elem_type} (not an ONNX element type)"


def relax_dtype(elem_type: int, what: str) -> str:
    """The relax dtype of an ONNX element type, or a ConversionError naming ``what``."""
    if elem_type not in DTYPES:
        raise ConversionError(f"{what}: element type {dtype_name(elem_type)} is not supported")
    return DTYPES[elem_type][0]


@dataclass
class Known:
    """A tensor whose contents are known at import time: numbers, or (for integer tensors of rank 0
    or 1) symbolic dims such as ``["batch", "seq + 1"]``. Shape computations stay in this form, so
    Shape -> Gather -> Concat -> Reshape keeps every dim symbolic; it becomes a relax value only
    when an op needs it as a tensor."""

    values: np.ndarray  # dtype object (entries are Expr) for symbolic contents
    dtype: str

    def __post_init__(self) -> None:
        if isinstance(self.values, np.ndarray):
            return
        if isinstance(self.values, Expr):  # numpy indexing gives a bare entry for a 0-D result
            boxed = np.empty((), dtype=object)
            boxed[()] = self.values
            self.values = boxed
        else:
            self.values = np.asarray(self.values)

    @property
    def is_numeric(self) -> bool:
        return self.values.dtype != object

    def numbers(self) -> np.ndarray | None:
        """The contents as a numpy array of ``dtype``, or None if some entry is symbolic."""
        if self.is_numeric:
            return self.values
        flat = [e.value for e in self.values.reshape(-1)]
        if any(v is None for v in flat):
            return None
        return np.array(flat, dtype=RELAX_TO_NUMPY[self.dtype]).reshape(self.values.shape)

    def simplified(self) -> Known:
        """The same contents, as numbers when no entry is symbolic any more."""
        numbers = self.numbers()
        return self if numbers is None or self.is_numeric else Known(numbers, self.dtype)

    def exprs(self) -> np.ndarray | None:
        """The contents as an object array of Expr (integer tensors only)."""
        if not self.is_numeric:
            return self.values
        if self.values.dtype.kind not in "iub":
            return None
        flat = [const(int(v)) for v in self.values.reshape(-1)]
        out = np.empty(len(flat), dtype=object)
        out[:] = flat
        return out.reshape(self.values.shape)


def known_dims(dims: Sequence[Expr | int], dtype: str = "i64", shape: tuple[int, ...] | None = None) -> Known:
    """A ``Known`` integer tensor holding ``dims`` (1-D unless ``shape`` says otherwise)."""
    values = np.empty(len(dims), dtype=object)
    values[:] = [d if isinstance(d, Expr) else const(int(d)) for d in dims]
    return Known(values.reshape(shape if shape is not None else (len(dims),)), dtype).simplified()


@dataclass
class Seq:
    """An ONNX sequence whose length is known at import time: its items (relax values, or contents
    known at import time) and its element dtype (which an empty sequence still has). It becomes a
    relax tuple where a single value is needed (a graph output, an op that takes a value)."""

    items: list[ir.Value | Known]
    dtype: str | None


@dataclass
class SeqList:
    """An ONNX sequence whose length is known only at run time, packed in two relax values: ``data``
    (1-D, the items' elements back to back) and ``shapes`` (i64 ``[length, rank]``, one row per item).
    Its type deduces the element type: dtype and rank (each item's dims are ``"?"`` until read).
    Where one value is needed it is the tuple ``(data, shapes)``; at the Python boundary, a list of arrays."""

    data: ir.Value
    shapes: ir.Value
    dtype: str
    rank: int | None  # None: unknown until an item of known rank comes in
    dims: tuple[Expr | None, ...] | None = None  # the items' dims as the model declares them, if it does


Out = ir.Value | Known | Seq | SeqList | None


class NodeContext:
    """What a converter sees of its node."""

    def __init__(self, importer: Any, node: onnx.NodeProto, opset: int) -> None:
        self.importer = importer
        self.node = node
        self.opset = opset
        self._attrs = {a.name: a for a in node.attribute}

    # -- attributes ------------------------------------------------------------------------------
    def attr(self, name: str, default: Any = None) -> Any:
        """The attribute's Python value (bytes become str), or ``default``."""
        a = self._attrs.get(name)
        if a is None:
            return default
        if a.type == onnx.AttributeProto.GRAPH or a.type == onnx.AttributeProto.GRAPHS:
            raise ConversionError(f"attribute '{name}' holds a subgraph, which is not supported")
        value = onnx.helper.get_attribute_value(a)
        if isinstance(value, bytes):
            return value.decode()
        if isinstance(value, list) and value and isinstance(value[0], bytes):
            return [v.decode() for v in value]
        if isinstance(value, onnx.TensorProto):
            return self.importer.tensor_array(value)
        return value

    def has_attr(self, name: str) -> bool:
        return name in self._attrs

    def graph(self, name: str) -> onnx.GraphProto:
        """Subgraph attribute ``name`` (a branch or loop body), imported with ``importer.subgraph``."""
        a = self._attrs.get(name)
        if a is None or a.type != onnx.AttributeProto.GRAPH:
            raise ConversionError(f"attribute '{name}' must be a graph")
        return a.g

    # -- inputs ----------------------------------------------------------------------------------
    @property
    def num_inputs(self) -> int:
        return len(self.node.input)

    def has(self, i: int) -> bool:
        """True when optional input ``i`` is given (present and not the empty name)."""
        return i < len(self.node.input) and self.node.input[i] != ""

    def x(self, i: int) -> ir.Value:
        """Input ``i`` as a relax value (known contents become a constant or a shape computation)."""
        return self.importer.materialize(self._name(i))

    def is_seq(self, i: int) -> bool:
        """True when input ``i`` is a sequence."""
        return self.has(i) and isinstance(self.importer.values[self.node.input[i]], (Seq, SeqList))

    def seq(self, i: int) -> Seq | SeqList:
        """Input ``i`` as a sequence, or a ConversionError when it is a tensor."""
        v = self.importer.values[self._name(i)]
        if not isinstance(v, (Seq, SeqList)):
            raise ConversionError(f"input #{i} ('{self.node.input[i]}') must be a sequence, got a tensor")
        return v

    def item_value(self, item: ir.Value | Known) -> ir.Value:
        """A sequence item as a relax value."""
        return self.importer.known_value(item) if isinstance(item, Known) else item

    def item_type(self, item: ir.Value | Known) -> TensorType:
        """The relax tensor type of a sequence item."""
        if isinstance(item, Known):
            return TensorType(tuple(const(d) for d in item.values.shape), item.dtype)
        t = relax_type(item.type)
        if not isinstance(t, TensorType):
            raise ConversionError(f"a sequence item is not a tensor: {t}")
        return t

    def xs(self) -> list[ir.Value]:
        """Every given input, as relax values."""
        return [self.x(i) for i in range(self.num_inputs) if self.has(i)]

    def type(self, i: int) -> TensorType:
        """The relax tensor type of input ``i``."""
        v = self.importer.values[self._name(i)]
        if isinstance(v, (Seq, SeqList)):
            raise ConversionError(f"input #{i} ('{self.node.input[i]}') must be a tensor, got a sequence")
        if isinstance(v, Known):
            return TensorType(tuple(const(d) for d in v.values.shape), v.dtype)
        t = relax_type(v.type)
        if not isinstance(t, TensorType):
            raise ConversionError(f"input #{i} ('{self.node.input[i]}') is not a tensor: {t}")
        return t

    def dtype(self, i: int) -> str:
        dtype = self.type(i).dtype
        if dtype is None:
            raise ConversionError(f"input #{i} ('{self.node.input[i]}') has an unknown dtype")
        return dtype

    def rank(self, i: int) -> int:
        shape = self.type(i).shape
        if shape is None:
            raise ConversionError(f"input #{i} ('{self.node.input[i]}') has an unknown rank")
        return len(shape)

    def shape(self, i: int) -> tuple[Expr | None, ...]:
        shape = self.type(i).shape
        if shape is None:
            raise ConversionError(f"input #{i} ('{self.node.input[i]}') has an unknown rank")
        return shape

    def known(self, i: int) -> Known | None:
        """Input ``i`` if its contents are known at import time."""
        v = self.importer.values[self._name(i)]
        return v if isinstance(v, Known) else None

    def const(self, i: int) -> np.ndarray | None:
        """Input ``i``'s numbers if known at import time (no symbolic entries), else None."""
        k = self.known(i)
        return None if k is None else k.numbers()

    def require_const(self, i: int, what: str) -> np.ndarray:
        """Input ``i``'s numbers, or a ConversionError saying ``what`` must be a constant."""
        c = self.const(i) if self.has(i) else None
        if c is None:
            name = self.node.input[i] if self.has(i) else ""
            raise ConstantRequired(
                f"input #{i} ('{what}', value '{name}') must be known at import time (a constant or an "
                "initializer; graph inputs can be fixed with from_onnx(..., constants={...}))",
                name,
            )
        return c

    def exprs(self, i: int) -> np.ndarray | None:
        """Input ``i``'s entries as symbolic dims if it is an integer tensor known at import time."""
        k = self.known(i)
        return None if k is None else k.exprs()

    def dims(self, i: int, what: str) -> list[Expr]:
        """The entries of 1-D integer input ``i`` as dims: symbolic when known at import time,
        else read at run time into fresh symbols (bound by a match_cast)."""
        exprs = self.exprs(i)
        if exprs is not None:
            return list(exprs.reshape(-1))
        x = self.x(i)
        if self.dtype(i) != "i64":
            x = R.astype(x, "i64")
        return self.importer.runtime_dims(x, f"{self.node.output[0]}_{what}")

    def value_of(self, known: Known) -> ir.Value:
        """A relax value holding ``known``."""
        return self.importer.known_value(known)

    def _name(self, i: int) -> str:
        if not self.has(i):
            raise ConversionError(f"input #{i} is required")
        return self.node.input[i]

    # -- building --------------------------------------------------------------------------------
    def constant(self, array: np.ndarray | float | int, dtype: str | None = None) -> ir.Value:
        """A relax constant; ``dtype`` (a relax dtype) converts the numbers first."""
        a = np.asarray(array)
        if dtype is not None:
            a = a.astype(RELAX_TO_NUMPY[dtype])
        return R.constant(a)

    def scalar_like(self, value: float | int, dtype: str) -> ir.Value:
        """A 0-D constant of relax dtype ``dtype``."""
        return self.constant(np.array(value), dtype)


CONVERTERS: dict[str, Callable[[NodeContext], Sequence[Out]]] = {}
# ops that build control flow (scf.if / scf.while), with a predicate on the node (some build it only for
# some nodes): the importer keeps those nodes out of dataflow blocks
CONTROL_FLOW: dict[str, Callable[[onnx.NodeProto], bool]] = {}


def converter(*op_types: str, control_flow: bool | Callable[[onnx.NodeProto], bool] = False) -> Callable:
    """Register ``fn(ctx) -> outputs`` as the converter of each ONNX op type (default domain);
    ``control_flow`` (True, or a predicate on the node) for converters that build regions (never inside a
    dataflow block)."""

    def register(fn: Callable[[NodeContext], Sequence[Out]]) -> Callable[[NodeContext], Sequence[Out]]:
        for op_type in op_types:
            if op_type in CONVERTERS:
                raise TypeError(f"ONNX op {op_type} has two converters")
            CONVERTERS[op_type] = fn
            if control_flow:
                CONTROL_FLOW[op_type] = control_flow if callable(control_flow) else lambda node: True
        return fn

    return register


_SYMBOL_CHARS = re.compile(r"[^A-Za-z0-9_]")


def symbol_name(text: str) -> str:
    """A valid symbol from a ``dim_param`` (``"batch size"`` -> ``batch_size``)."""
    name = _SYMBOL_CHARS.sub("_", text.strip()) or "d"
    if name[0].isdigit():
        name = "d" + name
    if name in ("floordiv", "ceildiv", "mod"):
        name += "_"
    return name

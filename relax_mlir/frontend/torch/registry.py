"""The converter registry of the PyTorch importer and the context a converter gets.

A converter turns one FX node of an ``ExportedProgram`` (an ATen op) into relax values::

    @converter("aten.relu.default")
    def _relu(ctx: NodeContext) -> ir.Value:
        return R.relu(ctx.tensor(0))

Registration is by the op overload's name (``aten.add.Tensor``) or its packet (``aten.add``: every
overload). Arguments come converted: tensors as relax values, SymInts as ``Expr``s, Python scalars as is.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from mlir import ir

from relax_mlir.dialects import relax as R
from relax_mlir.dialects.types import TensorType, relax_type
from relax_mlir.errors import RelaxError
from relax_mlir.frontend.onnx.ops.attention import dtype_of, spell  # noqa: F401  (the frontends share them)
from relax_mlir.frontend.onnx.registry import RELAX_TO_NUMPY
from relax_mlir.shape_infer.expr import Expr, format_dim

Converter = Callable[["NodeContext"], Any]
CONVERTERS: dict[str, Converter] = {}

# torch dtype name (``str(torch.float32)`` without ``torch.``) -> relax dtype
TORCH_DTYPES = {
    "float32": "f32",
    "float64": "f64",
    "float16": "f16",
    "bfloat16": "bf16",
    "int64": "i64",
    "int32": "i32",
    "int16": "i16",
    "int8": "i8",
    "uint8": "ui8",
    "bool": "i1",
}


class ConversionError(RelaxError):
    """A node that cannot be converted as written (the importer adds the node, its op and source line)."""


def converter(*targets: str) -> Callable[[Converter], Converter]:
    """Register a converter for ATen op overloads (``aten.add.Tensor``) or packets (``aten.add``)."""

    def register(fn: Converter) -> Converter:
        for t in targets:
            CONVERTERS[t] = fn
        return fn

    return register


def target_name(target: Any) -> str:
    """``aten.add.Tensor`` for an op overload, ``operator.getitem`` for a Python function."""
    if callable(target) and getattr(target, "__module__", None) in ("_operator", "operator"):
        return f"operator.{target.__name__}"
    return str(target)


def find_converter(target: Any) -> Converter | None:
    name = target_name(target)
    if name in CONVERTERS:
        return CONVERTERS[name]
    packet = name.rsplit(".", 1)[0] if name.startswith("aten.") else None
    return CONVERTERS.get(packet) if packet else None


def relax_dtype(dtype: Any) -> str:
    """The relax dtype of a ``torch.dtype``."""
    name = str(dtype).removeprefix("torch.")
    if name not in TORCH_DTYPES:
        raise ConversionError(f"dtype {dtype} is not supported")
    return TORCH_DTYPES[name]


# -- value helpers ---------------------------------------------------------------------------------------


def dims(v: ir.Value) -> list[Expr]:
    """The dims of relax tensor ``v`` (all known: the importer builds only such values)."""
    t = relax_type(v.type)
    if not isinstance(t, TensorType) or t.shape is None or any(d is None for d in t.shape):
        raise ConversionError(f"expected a tensor of known shape, got {t}")
    return list(t.shape)


def scalar(value: float | int | bool | Expr, dtype: str) -> ir.Value:
    """A 0-D tensor of ``dtype`` holding ``value``; a symbolic value is computed at run time."""
    if isinstance(value, Expr) and not value.is_const:
        t = R.shape_to_tensor(R.make_shape([R.prim_value(format_dim(value))]))
        t = R.reshape(t, [])
        return t if dtype == "i64" else R.astype(t, dtype)
    if isinstance(value, Expr):
        value = value.value
    return R.constant(np.array(value, dtype=RELAX_TO_NUMPY[dtype]))


def norm_axis(axis: int, rank: int) -> int:
    return axis + rank if axis < 0 else axis


class NodeContext:
    """One node being converted: its converted arguments and the type torch recorded for its result."""

    def __init__(self, importer: Any, node: Any, args: list[Any], kwargs: dict[str, Any]) -> None:
        self.importer = importer
        self.node = node
        self.args = args
        self.kwargs = kwargs

    def arg(self, i: int, name: str | None = None, default: Any = None) -> Any:
        """Positional argument ``i`` or keyword ``name``, else ``default``."""
        if i < len(self.args):
            return self.args[i]
        if name is not None and name in self.kwargs:
            return self.kwargs[name]
        return default

    @property
    def val(self) -> Any:
        """The fake result torch recorded (a FakeTensor, a tuple of them, a SymInt...)."""
        return self.node.meta.get("val")

    @property
    def out_dtype(self) -> str:
        val = self.val
        if isinstance(val, (list, tuple)):
            val = val[0]
        return relax_dtype(val.dtype)

    def tensor(self, i: int, name: str | None = None, dtype: str | None = None) -> ir.Value:
        """Argument ``i`` as a relax tensor; a scalar becomes a 0-D constant of ``dtype`` (default: the
        result's dtype)."""
        v = self.arg(i, name)
        if isinstance(v, ir.Value):
            return v
        if v is None:
            raise ConversionError(f"argument #{i} is missing")
        return scalar(v, dtype or self.out_dtype)

"""Elementwise ops: binary arithmetic with numpy broadcasting, and unary math.

Each family is declared once as a base class and instantiated per op from a table.

Broadcasting follows numpy, dim by dim from the right (``dims.broadcast_shapes``): equal dims, or
a 1 against anything, give the other dim; a constant against a symbol gives the constant (the
symbol must be 1 or that constant, checked at run time); two symbols not provably equal (``n`` vs
``m``) give ``"?"``: the rank is kept, where Relax would drop every dim. An unknown dim ``"?"``
gives the other dim only when that one can never be 1 (a constant, or ``n + 2``), else ``"?"``.
Two different constants, neither 1, are an error. An unknown rank anywhere gives an unknown rank.
Operand dtypes must agree (an unknown dtype takes the other's); comparisons and logical ops give i1.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from mlir import ir

from relax_mlir.dialects.registry import Attr, Operand, RelaxOp, relax_op
from relax_mlir.dialects.types import RelaxType, TensorType
from relax_mlir.errors import ShapeError
from relax_mlir.shape_infer.dims import broadcast_shapes, join_dtype, tensor_operand
from relax_mlir.transforms.kernel import KernelBuilder, KernelValue, element, is_float

FLOAT_DTYPES = {"f16", "bf16", "f32", "f64"}


class BinaryElementwiseOp(RelaxOp):
    """Base of binary elementwise ops: numpy broadcasting over symbolic dims, equal dtypes."""

    OPERANDS = (Operand("lhs"), Operand("rhs"))

    @classmethod
    def deduce(cls, operand_types: Sequence[RelaxType | None], attrs: dict[str, Any]) -> list[RelaxType]:
        lhs = tensor_operand(operand_types[0], "lhs")
        rhs = tensor_operand(operand_types[1], "rhs")
        dtype = join_dtype(lhs, rhs, ("lhs", "rhs"))
        return [TensorType(broadcast_shapes([lhs.shape, rhs.shape], ["lhs", "rhs"]), dtype)]

    @classmethod
    def lower(cls, k: KernelBuilder) -> list[KernelValue]:
        out = k.outs[0]
        t = element(k.ins[0].dtype)
        op = {"add": ("arith.addf", "arith.addi"), "multiply": ("arith.mulf", "arith.muli")}[cls.NAME]
        name = op[0] if is_float(k.ins[0].dtype) else op[1]
        return [k.elementwise(k.ins, out, lambda a: k.scalar(f"{name} {a[0]}, {a[1]}", t))]


class ComparisonOp(BinaryElementwiseOp):
    """Base of comparisons: broadcasting like arithmetic, i1 result."""

    @classmethod
    def deduce(cls, operand_types: Sequence[RelaxType | None], attrs: dict[str, Any]) -> list[RelaxType]:
        (out,) = super().deduce(operand_types, attrs)
        assert isinstance(out, TensorType)
        return [TensorType(out.shape, "i1")]


class LogicalOp(BinaryElementwiseOp):
    """Base of binary logical ops: i1 operands, broadcasting, i1 result (even from unknown dtypes)."""

    @classmethod
    def deduce(cls, operand_types: Sequence[RelaxType | None], attrs: dict[str, Any]) -> list[RelaxType]:
        for name, t in zip(("lhs", "rhs"), operand_types):
            _require_bool(tensor_operand(t, name), name)
        (out,) = super().deduce(operand_types, attrs)
        assert isinstance(out, TensorType)
        return [TensorType(out.shape, "i1")]


def _require_bool(t: TensorType, name: str) -> None:
    if t.dtype is not None and t.dtype != "i1":
        raise ShapeError(f"operand '{name}' must have dtype i1, got {t.dtype}")


class UnaryElementwiseOp(RelaxOp):
    """Base of unary elementwise ops: the result has the operand's type."""

    OPERANDS = (Operand("x"),)
    FLOAT_ONLY = False

    @classmethod
    def deduce(cls, operand_types: Sequence[RelaxType | None], attrs: dict[str, Any]) -> list[RelaxType]:
        x = tensor_operand(operand_types[0], "x")
        if cls.FLOAT_ONLY and x.dtype is not None and x.dtype not in FLOAT_DTYPES:
            raise ShapeError(f"operand 'x' must have a float dtype, got {x.dtype}")
        return [x]

    @classmethod
    def lower(cls, k: KernelBuilder) -> list[KernelValue]:
        out = k.outs[0]
        t = element(out.dtype)
        if cls.NAME == "exp":
            return [k.elementwise(k.ins, out, lambda a: k.scalar(f"math.exp {a[0]}", t))]
        zero = "0.0" if is_float(out.dtype) else "0"
        return [k.elementwise(k.ins, out, lambda a: k.scalar(f"arith.maximumf {a[0]}, {k.scalar(f'arith.constant {zero}', t)}", t))]


def _binary_example(name: str) -> str:
    return (
        f'``%z = "relax.{name}"(%x, %y) : (!relax.tensor<["n", 4], f32>, !relax.tensor<[4], f32>)'
        f' -> !relax.tensor<["n", 4], f32>``'
    )


def _unary_example(name: str) -> str:
    return f'``%y = "relax.{name}"(%x) : (!relax.tensor<["n"], f32>) -> !relax.tensor<["n"], f32>``'


_BINARY = {
    "add": "Elementwise sum with numpy broadcasting.",
    "subtract": "Elementwise difference with numpy broadcasting.",
    "multiply": "Elementwise product with numpy broadcasting.",
    "divide": "Elementwise quotient with numpy broadcasting.",
    "floor_divide": "Elementwise floor(x / y) with numpy broadcasting.",
    "mod": "Elementwise remainder with the sign of the divisor (numpy.mod).",
    "power": "Elementwise x ** y with numpy broadcasting.",
    "maximum": "Elementwise maximum with numpy broadcasting.",
    "minimum": "Elementwise minimum with numpy broadcasting.",
}

_COMPARISON = {
    "equal": "Elementwise x == y (i1 result).",
    "not_equal": "Elementwise x != y (i1 result).",
    "less": "Elementwise x < y (i1 result).",
    "less_equal": "Elementwise x <= y (i1 result).",
    "greater": "Elementwise x > y (i1 result).",
    "greater_equal": "Elementwise x >= y (i1 result).",
}

_LOGICAL = {
    "logical_and": "Elementwise x and y on i1 tensors.",
    "logical_or": "Elementwise x or y on i1 tensors.",
}

_UNARY = {
    # name: (summary, float only)
    "exp": ("Elementwise e**x.", True),
    "log": ("Elementwise natural logarithm.", True),
    "sqrt": ("Elementwise square root.", True),
    "rsqrt": ("Elementwise 1 / sqrt(x).", True),
    "tanh": ("Elementwise hyperbolic tangent.", True),
    "sigmoid": ("Elementwise 1 / (1 + e**-x).", True),
    "erf": ("Elementwise error function.", True),
    "gelu": ("Elementwise GELU, x * (1 + erf(x / sqrt(2))) / 2.", True),
    "gelu_tanh": ("Elementwise GELU, tanh approximation.", True),
    "silu": ("Elementwise x * sigmoid(x).", True),
    "sin": ("Elementwise sine.", True),
    "cos": ("Elementwise cosine.", True),
    "floor": ("Elementwise floor.", True),
    "ceil": ("Elementwise ceiling.", True),
    "round": ("Elementwise round half to even.", True),
    "relu": ("Elementwise max(x, 0).", False),
    "neg": ("Elementwise -x.", False),
    "abs": ("Elementwise |x|.", False),
    "sign": ("Elementwise sign (-1, 0 or 1).", False),
}


def _camel(name: str) -> str:
    return "".join(part.capitalize() for part in name.split("_")) + "Op"


def _make_binary(name: str, summary: str, base: type[RelaxOp] = BinaryElementwiseOp) -> Any:
    doc = f"{summary}\n\n{_binary_example(name)}"
    cls = relax_op(type(_camel(name), (base,), {"NAME": name, "__doc__": doc}))

    def helper(lhs: ir.Value, rhs: ir.Value, *, loc: ir.Location | None = None) -> ir.Value:
        return cls.build([lhs, rhs], loc=loc).result

    helper.__name__ = helper.__qualname__ = name
    helper.__doc__ = summary
    return cls, helper


def _make_unary(name: str, summary: str, float_only: bool) -> Any:
    doc = f"{summary}\n\n{_unary_example(name)}"
    cls = relax_op(
        type(_camel(name), (UnaryElementwiseOp,), {"NAME": name, "FLOAT_ONLY": float_only, "__doc__": doc})
    )

    def helper(x: ir.Value, *, loc: ir.Location | None = None) -> ir.Value:
        return cls.build([x], loc=loc).result

    helper.__name__ = helper.__qualname__ = name
    helper.__doc__ = summary
    return cls, helper


for _table, _base in ((_BINARY, BinaryElementwiseOp), (_COMPARISON, ComparisonOp), (_LOGICAL, LogicalOp)):
    for _name, _summary in _table.items():
        globals()[_camel(_name)], globals()[_name] = _make_binary(_name, _summary, _base)
for _name, (_summary, _float_only) in _UNARY.items():
    globals()[_camel(_name)], globals()[_name] = _make_unary(_name, _summary, _float_only)


@relax_op
class LogicalNotOp(RelaxOp):
    """Elementwise not on an i1 tensor.

    ``%y = "relax.logical_not"(%x) : (!relax.tensor<["n"], i1>) -> !relax.tensor<["n"], i1>``
    """

    NAME = "logical_not"
    OPERANDS = (Operand("x"),)

    @classmethod
    def deduce(cls, operand_types: Sequence[RelaxType | None], attrs: dict[str, Any]) -> list[RelaxType]:
        x = tensor_operand(operand_types[0], "x")
        _require_bool(x, "x")
        return [TensorType(x.shape, "i1")]


def logical_not(x: ir.Value, *, loc: ir.Location | None = None) -> ir.Value:
    """Elementwise not."""
    return LogicalNotOp.build([x], loc=loc).result


@relax_op
class LeakyReluOp(UnaryElementwiseOp):
    """Elementwise x if x >= 0 else alpha * x.

    ``%y = "relax.leaky_relu"(%x) {alpha = 1.000000e-02 : f64} : (!relax.tensor<["n"], f32>) -> !relax.tensor<["n"], f32>``
    """

    NAME = "leaky_relu"
    FLOAT_ONLY = True
    ATTRS = (Attr("alpha", "float"),)


def leaky_relu(x: ir.Value, alpha: float = 0.01, *, loc: ir.Location | None = None) -> ir.Value:
    """Leaky ReLU with slope ``alpha`` for negative inputs."""
    return LeakyReluOp.build([x], {"alpha": alpha}, loc=loc).result


@relax_op
class ClipOp(UnaryElementwiseOp):
    """Elementwise clamp to [min, max].

    ``%y = "relax.clip"(%x) {max = 6.0 : f64, min = 0.0 : f64} : (!relax.tensor<["n"], f32>) -> !relax.tensor<["n"], f32>``
    """

    NAME = "clip"
    ATTRS = (Attr("min", "float"), Attr("max", "float"))

    @classmethod
    def deduce(cls, operand_types: Sequence[RelaxType | None], attrs: dict[str, Any]) -> list[RelaxType]:
        if math.isnan(attrs["min"]) or math.isnan(attrs["max"]):
            raise ShapeError(f"min {attrs['min']} and max {attrs['max']} must not be NaN")
        if attrs["min"] > attrs["max"]:
            raise ShapeError(f"min {attrs['min']} is greater than max {attrs['max']}")
        return super().deduce(operand_types, attrs)


def clip(x: ir.Value, min: float, max: float, *, loc: ir.Location | None = None) -> ir.Value:  # noqa: A002
    """Clamp ``x`` to [min, max]."""
    return ClipOp.build([x], {"min": min, "max": max}, loc=loc).result


@relax_op
class WhereOp(RelaxOp):
    """Select ``x`` where ``cond`` else ``y``, broadcasting all three.

    ``%z = "relax.where"(%c, %x, %y) : (!relax.tensor<["n", 1], i1>, !relax.tensor<["n", 4], f32>,
    !relax.tensor<[4], f32>) -> !relax.tensor<["n", 4], f32>``
    """

    NAME = "where"
    OPERANDS = (Operand("cond"), Operand("x"), Operand("y"))

    @classmethod
    def deduce(cls, operand_types: Sequence[RelaxType | None], attrs: dict[str, Any]) -> list[RelaxType]:
        cond = tensor_operand(operand_types[0], "cond")
        x = tensor_operand(operand_types[1], "x")
        y = tensor_operand(operand_types[2], "y")
        _require_bool(cond, "cond")
        dtype = join_dtype(x, y, ("x", "y"))
        shape = broadcast_shapes([cond.shape, x.shape, y.shape], ["cond", "x", "y"])
        return [TensorType(shape, dtype)]


def where(cond: ir.Value, x: ir.Value, y: ir.Value, *, loc: ir.Location | None = None) -> ir.Value:
    """``x`` where ``cond`` else ``y``."""
    return WhereOp.build([cond, x, y], loc=loc).result


DTYPES = {"f16", "bf16", "f32", "f64", "i1", "i8", "i16", "i32", "i64", "ui8"}


@relax_op
class AstypeOp(RelaxOp):
    """Convert the element type.

    ``%y = "relax.astype"(%x) {dtype = "f16"} : (!relax.tensor<["n"], f32>) -> !relax.tensor<["n"], f16>``
    """

    NAME = "astype"
    OPERANDS = (Operand("x"),)
    ATTRS = (Attr("dtype", "str"),)

    @classmethod
    def deduce(cls, operand_types: Sequence[RelaxType | None], attrs: dict[str, Any]) -> list[RelaxType]:
        x = tensor_operand(operand_types[0], "x")
        if attrs["dtype"] not in DTYPES:
            raise ShapeError(f"unknown dtype '{attrs['dtype']}'; expected one of {', '.join(sorted(DTYPES))}")
        return [TensorType(x.shape, attrs["dtype"])]


def astype(x: ir.Value, dtype: str, *, loc: ir.Location | None = None) -> ir.Value:
    """``x`` converted to ``dtype``."""
    return AstypeOp.build([x], {"dtype": dtype}, loc=loc).result

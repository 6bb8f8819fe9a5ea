"""Reductions."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from mlir import ir

from relax_mlir.dialects.registry import Attr, Operand, RelaxOp, relax_op
from relax_mlir.dialects.types import RelaxType, TensorType
from relax_mlir.errors import ShapeError
from relax_mlir.shape_infer.dims import ONE, normalize_axes, normalize_axis, tensor_operand
from relax_mlir.shape_infer.expr import const


class ReductionOp(RelaxOp):
    """Base of reductions over ``axes`` (``unit`` = all axes), keeping reduced dims as 1 if ``keepdims``."""

    OPERANDS = (Operand("x"),)
    ATTRS = (Attr("axes", "ints_or_none"), Attr("keepdims", "bool"))

    @classmethod
    def deduce(cls, operand_types: Sequence[RelaxType | None], attrs: dict[str, Any]) -> list[RelaxType]:
        x = tensor_operand(operand_types[0], "x")
        axes, keepdims = attrs["axes"], attrs["keepdims"]
        if x.shape is None:
            if axes is None and not keepdims:
                return [TensorType((), x.dtype)]
            return [TensorType(None, x.dtype)]
        reduced = set(range(len(x.shape)) if axes is None else normalize_axes(axes, len(x.shape)))
        if keepdims:
            shape = tuple(ONE if i in reduced else d for i, d in enumerate(x.shape))
        else:
            shape = tuple(d for i, d in enumerate(x.shape) if i not in reduced)
        return [TensorType(shape, x.dtype)]


_REDUCTIONS = {
    "sum": "Sum over axes.",
    "mean": "Mean over axes.",
    "max": "Maximum over axes.",
    "min": "Minimum over axes.",
    "prod": "Product over axes.",
    "variance": "Population variance over axes.",
}


def _make_reduction(name: str, summary: str) -> Any:
    example = (
        f'``%y = "relax.{name}"(%x) {{axes = [1], keepdims = false}} : (!relax.tensor<["n", 4], f32>)'
        f' -> !relax.tensor<["n"], f32>``'
    )
    camel = "".join(p.capitalize() for p in name.split("_")) + "Op"
    cls = relax_op(type(camel, (ReductionOp,), {"NAME": name, "__doc__": f"{summary}\n\n{example}"}))

    def helper(
        x: ir.Value,
        axes: Sequence[int] | None = None,
        keepdims: bool = False,
        *,
        loc: ir.Location | None = None,
    ) -> ir.Value:
        attrs = {"axes": None if axes is None else list(axes), "keepdims": keepdims}
        return cls.build([x], attrs, loc=loc).result

    helper.__name__ = helper.__qualname__ = name
    helper.__doc__ = f"{summary} (axes None = all)"
    return camel, cls, helper


for _name, _summary in _REDUCTIONS.items():
    _camel, _cls, _helper = _make_reduction(_name, _summary)
    globals()[_camel], globals()[_name] = _cls, _helper


class ArgReductionOp(RelaxOp):
    """Base of argmax/argmin: i64 indices along ``axis`` (``unit`` = of the flattened tensor)."""

    OPERANDS = (Operand("x"),)
    ATTRS = (Attr("axis", "ints_or_none"), Attr("keepdims", "bool"))

    @classmethod
    def deduce(cls, operand_types: Sequence[RelaxType | None], attrs: dict[str, Any]) -> list[RelaxType]:
        x = tensor_operand(operand_types[0], "x")
        axis = attrs["axis"]
        if axis is not None and len(axis) != 1:
            raise ShapeError(f"axis must hold one axis, got {axis}")
        if axis is not None and x.shape is not None:
            normalize_axis(axis[0], len(x.shape))
        (out,) = ReductionOp.deduce([x], {"axes": axis, "keepdims": attrs["keepdims"]})
        assert isinstance(out, TensorType)
        return [TensorType(out.shape, "i64")]


@relax_op
class ArgmaxOp(ArgReductionOp):
    """Index of the maximum along an axis.

    ``%i = "relax.argmax"(%x) {axis = [1], keepdims = false} : (!relax.tensor<["n", 4], f32>)
    -> !relax.tensor<["n"], i64>``
    """

    NAME = "argmax"


@relax_op
class ArgminOp(ArgReductionOp):
    """Index of the minimum along an axis.

    ``%i = "relax.argmin"(%x) {axis = [1], keepdims = false} : (!relax.tensor<["n", 4], f32>)
    -> !relax.tensor<["n"], i64>``
    """

    NAME = "argmin"


def argmax(
    x: ir.Value, axis: int | None = None, keepdims: bool = False, *, loc: ir.Location | None = None
) -> ir.Value:
    """Index of the maximum of ``x`` along ``axis``."""
    return ArgmaxOp.build(
        [x], {"axis": None if axis is None else [axis], "keepdims": keepdims}, loc=loc
    ).result


def argmin(
    x: ir.Value, axis: int | None = None, keepdims: bool = False, *, loc: ir.Location | None = None
) -> ir.Value:
    """Index of the minimum of ``x`` along ``axis``."""
    return ArgminOp.build(
        [x], {"axis": None if axis is None else [axis], "keepdims": keepdims}, loc=loc
    ).result


@relax_op
class CumsumOp(RelaxOp):
    """Cumulative sum along ``axis``.

    ``%y = "relax.cumsum"(%x) {axis = 1 : i64} : (!relax.tensor<["n", 4], f32>) -> !relax.tensor<["n", 4], f32>``
    """

    NAME = "cumsum"
    OPERANDS = (Operand("x"),)
    ATTRS = (Attr("axis", "int"),)

    @classmethod
    def deduce(cls, operand_types: Sequence[RelaxType | None], attrs: dict[str, Any]) -> list[RelaxType]:
        x = tensor_operand(operand_types[0], "x")
        if x.shape is not None:
            normalize_axis(attrs["axis"], len(x.shape))
        return [x]


def cumsum(x: ir.Value, axis: int = 0, *, loc: ir.Location | None = None) -> ir.Value:
    """Cumulative sum of ``x`` along ``axis``."""
    return CumsumOp.build([x], {"axis": axis}, loc=loc).result


@relax_op
class TopkOp(RelaxOp):
    """The ``k`` largest (or smallest) values along ``axis`` and their i64 indices, sorted.

    ``%v, %i = "relax.topk"(%x) {axis = -1 : i64, k = 5 : i64, largest = true} : (!relax.tensor<["n", 100], f32>)
    -> (!relax.tensor<["n", 5], f32>, !relax.tensor<["n", 5], i64>)``
    """

    NAME = "topk"
    OPERANDS = (Operand("x"),)
    RESULTS = (Operand("values"), Operand("indices"))
    ATTRS = (Attr("k", "int"), Attr("axis", "int"), Attr("largest", "bool"))

    @classmethod
    def deduce(cls, operand_types: Sequence[RelaxType | None], attrs: dict[str, Any]) -> list[RelaxType]:
        x = tensor_operand(operand_types[0], "x")
        k = attrs["k"]
        if k < 0:
            raise ShapeError(f"k must be non-negative, got {k}")
        if x.shape is None:
            return [TensorType(None, x.dtype), TensorType(None, "i64")]
        axis = normalize_axis(attrs["axis"], len(x.shape))
        d = x.shape[axis]
        if d is not None and d.is_const and d.value < k:
            raise ShapeError(f"k = {k} is larger than dim {axis} of size {d.value}")
        shape = x.shape[:axis] + (const(k),) + x.shape[axis + 1 :]
        return [TensorType(shape, x.dtype), TensorType(shape, "i64")]


def topk(
    x: ir.Value, k: int, axis: int = -1, largest: bool = True, *, loc: ir.Location | None = None
) -> tuple[ir.Value, ir.Value]:
    """The top ``k`` values of ``x`` along ``axis`` and their indices."""
    op = TopkOp.build([x], {"k": k, "axis": axis, "largest": largest}, loc=loc)
    return op.results[0], op.results[1]

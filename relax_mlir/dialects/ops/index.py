"""Indexing ops: slicing, gathering and scattering."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from mlir import ir

from relax_mlir.dialects.registry import Attr, Operand, RelaxOp, relax_op
from relax_mlir.dialects.types import Dim, RelaxType, TensorType
from relax_mlir.errors import ParseError, ShapeError
from relax_mlir.shape_infer.dims import (
    clamp_nonneg,
    dim_min,
    fmt_shape,
    join_dtype,
    normalize_axes,
    normalize_axis,
    same_dim,
    tensor_operand,
)
from relax_mlir.shape_infer.expr import Expr, ceildiv, const, parse_dim, prove_le, smax


def _parse(d: int | str) -> Dim:
    try:
        return parse_dim(d)
    except ParseError as e:
        raise ShapeError(str(e)) from None


_BIG = 1 << 31  # ends at or above this mean "to the end of the dim" (ONNX uses INT64_MAX)


@relax_op
class StridedSliceOp(RelaxOp):
    """Slice ``axes`` with begin/end/strides (negative indices count from the end; clamped like numpy).

    ``%y = "relax.strided_slice"(%x) {axes = [1], begin = [1], end = ["n - 1"], strides = [1]}
    : (!relax.tensor<["b", "n"], f32>) -> !relax.tensor<["b", "n - 2"], f32>``
    """

    NAME = "strided_slice"
    OPERANDS = (Operand("x"),)
    ATTRS = (Attr("axes", "ints"), Attr("begin", "dims"), Attr("end", "dims"), Attr("strides", "ints"))

    @classmethod
    def deduce(cls, operand_types: Sequence[RelaxType | None], attrs: dict[str, Any]) -> list[RelaxType]:
        x = tensor_operand(operand_types[0], "x")
        axes, begin, end, strides = attrs["axes"], attrs["begin"], attrs["end"], attrs["strides"]
        if not len(axes) == len(begin) == len(end) == len(strides):
            raise ShapeError(
                f"axes, begin, end and strides need equal lengths, got {len(axes)}, {len(begin)}, "
                f"{len(end)}, {len(strides)}"
            )
        if x.shape is None:
            return [TensorType(None, x.dtype)]
        out = list(x.shape)
        for a, b, e, s in zip(normalize_axes(axes, len(x.shape)), begin, end, strides):
            if s == 0:
                raise ShapeError(f"stride of axis {a} is 0")
            dim = x.shape[a]
            out[a] = None if dim is None else _slice_length(dim, _parse(b), _parse(e), s)
        return [TensorType(tuple(out), x.dtype)]


def _slice_length(dim: Expr, begin: Dim, end: Dim, stride: int) -> Dim:
    if begin is None or end is None:
        return None
    if stride > 0:
        b = _normalize_index(begin, dim, low=0)
        e = _normalize_index(end, dim, low=0)
        return clamp_nonneg(ceildiv(e - b, stride))
    b = _normalize_index(begin, dim, low=-1, high_minus_one=True)
    e = _normalize_index(end, dim, low=-1, high_minus_one=True)
    return clamp_nonneg(ceildiv(b - e, -stride))


def _normalize_index(i: Expr, dim: Expr, low: int, high_minus_one: bool = False) -> Expr:
    """An index made non-negative and clamped into [low, dim] (or [low, dim - 1] for negative strides)."""
    high = dim - 1 if high_minus_one else dim
    if i.is_const and i.value >= _BIG:
        return high
    if i.is_const and i.value <= -_BIG:
        return const(low)
    if i.is_const and i.value < 0:
        i = dim + i
        return i if prove_le(const(low), i) else smax(i, low)
    return dim_min(i, high)


def strided_slice(
    x: ir.Value,
    axes: Sequence[int],
    begin: Sequence[int | str],
    end: Sequence[int | str],
    strides: Sequence[int] | None = None,
    *,
    loc: ir.Location | None = None,
) -> ir.Value:
    """Slice ``x`` along ``axes``."""
    attrs = {
        "axes": list(axes),
        "begin": list(begin),
        "end": list(end),
        "strides": list(strides) if strides is not None else [1] * len(axes),
    }
    return StridedSliceOp.build([x], attrs, loc=loc).result


INDEX_DTYPES = {"i32", "i64"}


def _index_operand(t: RelaxType | None, name: str) -> TensorType:
    idx = tensor_operand(t, name)
    if idx.dtype is not None and idx.dtype not in INDEX_DTYPES:
        raise ShapeError(f"operand '{name}' must have an integer dtype (i32 or i64), got {idx.dtype}")
    return idx


@relax_op
class TakeOp(RelaxOp):
    """Gather slices of ``x`` along ``axis`` at ``indices`` (numpy.take; ONNX Gather).

    ``%y = "relax.take"(%emb, %ids) {axis = 0 : i64} : (!relax.tensor<[50257, 768], f32>, !relax.tensor<["b", "s"], i64>)
    -> !relax.tensor<["b", "s", 768], f32>``
    """

    NAME = "take"
    OPERANDS = (Operand("x"), Operand("indices"))
    ATTRS = (Attr("axis", "int"),)

    @classmethod
    def deduce(cls, operand_types: Sequence[RelaxType | None], attrs: dict[str, Any]) -> list[RelaxType]:
        x = tensor_operand(operand_types[0], "x")
        idx = _index_operand(operand_types[1], "indices")
        if x.shape is None or idx.shape is None:
            return [TensorType(None, x.dtype)]
        axis = normalize_axis(attrs["axis"], len(x.shape))
        return [TensorType(x.shape[:axis] + idx.shape + x.shape[axis + 1 :], x.dtype)]


def take(x: ir.Value, indices: ir.Value, axis: int = 0, *, loc: ir.Location | None = None) -> ir.Value:
    """``x`` gathered along ``axis`` at ``indices``."""
    return TakeOp.build([x, indices], {"axis": axis}, loc=loc).result


@relax_op
class GatherElementsOp(RelaxOp):
    """Pick elements of ``x`` along ``axis`` at ``indices`` (same rank; result has the indices' shape).

    ``%y = "relax.gather_elements"(%x, %i) {axis = 1 : i64} : (!relax.tensor<["n", 4], f32>,
    !relax.tensor<["n", 2], i64>) -> !relax.tensor<["n", 2], f32>``
    """

    NAME = "gather_elements"
    OPERANDS = (Operand("x"), Operand("indices"))
    ATTRS = (Attr("axis", "int"),)

    @classmethod
    def deduce(cls, operand_types: Sequence[RelaxType | None], attrs: dict[str, Any]) -> list[RelaxType]:
        x = tensor_operand(operand_types[0], "x")
        idx = _index_operand(operand_types[1], "indices")
        _same_rank(x, idx, "x", "indices")
        if x.shape is not None:
            normalize_axis(attrs["axis"], len(x.shape))
        return [TensorType(idx.shape, x.dtype)]


def _same_rank(a: TensorType, b: TensorType, na: str, nb: str) -> None:
    if a.ndim is not None and b.ndim is not None and a.ndim != b.ndim:
        raise ShapeError(
            f"'{na}' {fmt_shape(a.shape)} and '{nb}' {fmt_shape(b.shape)} must have the same rank"
        )


def gather_elements(
    x: ir.Value, indices: ir.Value, axis: int = 0, *, loc: ir.Location | None = None
) -> ir.Value:
    """Elements of ``x`` along ``axis`` at ``indices``."""
    return GatherElementsOp.build([x, indices], {"axis": axis}, loc=loc).result


@relax_op
class ScatterElementsOp(RelaxOp):
    """A copy of ``x`` with ``updates`` written along ``axis`` at ``indices``.

    ``%y = "relax.scatter_elements"(%x, %i, %u) {axis = 0 : i64} : (!relax.tensor<["n", 4], f32>,
    !relax.tensor<[2, 4], i64>, !relax.tensor<[2, 4], f32>) -> !relax.tensor<["n", 4], f32>``
    """

    NAME = "scatter_elements"
    OPERANDS = (Operand("x"), Operand("indices"), Operand("updates"))
    ATTRS = (Attr("axis", "int"),)

    @classmethod
    def deduce(cls, operand_types: Sequence[RelaxType | None], attrs: dict[str, Any]) -> list[RelaxType]:
        x = tensor_operand(operand_types[0], "x")
        idx = _index_operand(operand_types[1], "indices")
        upd = tensor_operand(operand_types[2], "updates")
        join_dtype(x, upd, ("x", "updates"))
        _same_rank(x, idx, "x", "indices")
        _same_rank(idx, upd, "indices", "updates")
        if idx.shape is not None and upd.shape is not None:
            for i, (a, b) in enumerate(zip(idx.shape, upd.shape)):
                same_dim(a, b, f"dim {i} of 'indices' and 'updates' differ")
        if x.shape is not None:
            normalize_axis(attrs["axis"], len(x.shape))
        return [x]


def scatter_elements(
    x: ir.Value, indices: ir.Value, updates: ir.Value, axis: int = 0, *, loc: ir.Location | None = None
) -> ir.Value:
    """``x`` with ``updates`` scattered along ``axis`` at ``indices``."""
    return ScatterElementsOp.build([x, indices, updates], {"axis": axis}, loc=loc).result

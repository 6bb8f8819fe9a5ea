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
    fmt_shape,
    join_dtype,
    normalize_axes,
    normalize_axis,
    same_dim,
    tensor_operand,
)
from relax_mlir.shape_infer.expr import Expr, ceildiv, const, format_dim, parse_dim, prove_le, smin


def _parse(d: int | str) -> Dim:
    try:
        return parse_dim(d)
    except ParseError as e:
        raise ShapeError(str(e)) from None


_BIG = 1 << 31  # ends at or above this mean "to the end of the dim" (ONNX uses INT64_MAX)


@relax_op
class StridedSliceOp(RelaxOp):
    """Slice ``axes`` with begin/end/strides (negative indices count from the end; clamped like numpy).

    ``%y = "relax.strided_slice"(%x) {axes = [1], begin = [1], end = [-1], strides = [1]}
    : (!relax.tensor<["b", "n"], f32>) -> !relax.tensor<["b", "max(n - 2, 0)"], f32>``
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
    """Numpy's slice length: indices clamped into [0, dim] (or [-1, dim - 1] for a negative stride).

    Clamping is monotone, so max(clamp(e) - clamp(b), 0) == max(min(e, hi) - max(b, lo), 0): the min of four
    differences, of which the provably larger ones are dropped to keep the result readable.
    """
    if begin is None or end is None:
        return None
    lo, hi = (const(0), dim) if stride > 0 else (const(-1), dim - 1)
    b, e = _raw_index(begin, dim, lo, hi), _raw_index(end, dim, lo, hi)
    first, last = (e, b) if stride > 0 else (b, e)
    kept: list[Expr] = []
    for t in (first - last, first - lo, hi - last, dim):
        if any(prove_le(k, t) for k in kept):
            continue
        kept = [k for k in kept if not prove_le(t, k)] + [t]
    length = kept[0]
    for k in kept[1:]:
        length = smin(length, k)
    if abs(stride) > 1:
        length = ceildiv(length, abs(stride))
    return clamp_nonneg(length)


def _raw_index(i: Expr, dim: Expr, lo: Expr, hi: Expr) -> Expr:
    """A negative constant index counted from the end; huge ones (ONNX's INT64_MAX/MIN) as the bounds.

    Symbolic indices are taken as positions from the start (symbols are non-negative).
    """
    if not i.is_const:
        return i
    if i.value >= _BIG:
        return hi
    if i.value <= -_BIG:
        return lo
    return dim + i if i.value < 0 else i


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
        if x.shape is None:
            return [TensorType(None, x.dtype)]
        axis = normalize_axis(attrs["axis"], len(x.shape))
        if idx.shape is None:
            return [TensorType(None, x.dtype)]
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
        _indices_within(x, idx, attrs["axis"])
        return [TensorType(idx.shape, x.dtype)]


def _same_rank(a: TensorType, b: TensorType, na: str, nb: str) -> None:
    if a.ndim is not None and b.ndim is not None and a.ndim != b.ndim:
        raise ShapeError(
            f"'{na}' {fmt_shape(a.shape)} and '{nb}' {fmt_shape(b.shape)} must have the same rank"
        )


def _indices_within(x: TensorType, idx: TensorType, axis: int) -> None:
    """Check ``axis``, and that 'indices' is nowhere larger than 'x' off the axis (as ONNX and torch require)."""
    if x.shape is None:
        return
    axis = normalize_axis(axis, len(x.shape))
    if idx.shape is None:
        return
    for i, (d, k) in enumerate(zip(x.shape, idx.shape)):
        if i != axis and d is not None and k is not None and prove_le(d + 1, k):
            raise ShapeError(
                f"dim {i} of 'indices' {fmt_shape(idx.shape)} is {format_dim(k)}, larger than "
                f"{format_dim(d)} of 'x' {fmt_shape(x.shape)}"
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
        dtype = join_dtype(x, upd, ("x", "updates"))
        _same_rank(x, idx, "x", "indices")
        _same_rank(idx, upd, "indices", "updates")
        if idx.shape is not None and upd.shape is not None:
            for i, (a, b) in enumerate(zip(idx.shape, upd.shape)):
                same_dim(a, b, f"dim {i} of 'indices' and 'updates' differ")
        _indices_within(x, idx, attrs["axis"])
        return [TensorType(x.shape, dtype)]


def scatter_elements(
    x: ir.Value, indices: ir.Value, updates: ir.Value, axis: int = 0, *, loc: ir.Location | None = None
) -> ir.Value:
    """``x`` with ``updates`` scattered along ``axis`` at ``indices``."""
    return ScatterElementsOp.build([x, indices, updates], {"axis": axis}, loc=loc).result

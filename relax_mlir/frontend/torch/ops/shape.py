"""Shape and indexing ATen ops: view/reshape/permute/expand, slice/select/cat/split, gather/index/embedding,
and the creation ops (arange, full, ones, zeros).

Result shapes are taken from the shapes torch recorded on the node (``out_shape``), so a reshape to
``[b, -1]`` or a squeeze keeps torch's own symbolic expression.
"""

from __future__ import annotations

from typing import Any

import torch
from mlir import ir

from relax_mlir.dialects import relax as R
from relax_mlir.frontend.torch.registry import (
    ConversionError,
    NodeContext,
    converter,
    dims,
    dtype_of,
    norm_axis,
    scalar,
    spell,
)
from relax_mlir.frontend.torch.symbols import to_expr
from relax_mlir.shape_infer.expr import Expr, const, format_dim


def shape_of_val(ctx: NodeContext, val: Any) -> list[Expr]:
    """The dims of a fake tensor as ``Expr``s, with the importer's symbol names."""
    return [const(d) if isinstance(d, int) else to_expr(d.node.expr, ctx.importer.names) for d in val.shape]


def out_shape(ctx: NodeContext) -> list[Expr]:
    val = ctx.val
    if isinstance(val, (list, tuple)):
        val = val[0]
    return shape_of_val(ctx, val)


@converter("aten.view.default", "aten.reshape.default", "aten._unsafe_view.default", "aten.view_copy.default")
@converter("aten.unsqueeze.default", "aten.squeeze.dim", "aten.squeeze.dims", "aten.squeeze.default")
@converter("aten.flatten.using_ints", "aten.unflatten.int", "aten.expand_dims.default")
def _reshape(ctx: NodeContext) -> ir.Value:
    x = ctx.tensor(0)
    shape = out_shape(ctx)
    return x if dims(x) == shape else R.reshape(x, spell(shape))


@converter("aten.permute.default", "aten.permute_copy.default")
def _permute(ctx: NodeContext) -> ir.Value:
    x = ctx.tensor(0)
    rank = len(dims(x))
    return R.permute_dims(x, [norm_axis(a, rank) for a in ctx.arg(1)])


@converter("aten.transpose.int")
def _transpose(ctx: NodeContext) -> ir.Value:
    x = ctx.tensor(0)
    rank = len(dims(x))
    axes = list(range(rank))
    a, b = norm_axis(ctx.arg(1), rank), norm_axis(ctx.arg(2), rank)
    axes[a], axes[b] = axes[b], axes[a]
    return R.permute_dims(x, axes)


@converter("aten.t.default", "aten.numpy_T.default")
def _t(ctx: NodeContext) -> ir.Value:
    x = ctx.tensor(0)
    rank = len(dims(x))
    return x if rank < 2 else R.permute_dims(x, list(range(rank))[::-1])


@converter(
    "aten.expand.default", "aten.expand_as.default", "aten.broadcast_to.default", "aten.expand_copy.default"
)
def _expand(ctx: NodeContext) -> ir.Value:
    x = ctx.tensor(0)
    shape = out_shape(ctx)
    return x if dims(x) == shape else R.broadcast_to(x, spell(shape))


def _index(v: Any, size: Expr) -> Expr:
    """A slice bound as an ``Expr``: negative constants count from the end."""
    e = v if isinstance(v, Expr) else const(int(v))
    if e.is_const and e.value < 0:
        return size + e
    return e


def take_range(x: ir.Value, axis: int, begin: Expr, length: Expr, step: int = 1) -> ir.Value | None:
    """``x`` at ``begin, begin + step, ...`` (``length`` of them) along ``axis`` as a take whose result dim is
    exactly ``length`` (a strided_slice deduces ``min(n, 1)`` for ``x[:1]``: it cannot know the bounds are in
    range; torch's guards do); None when the index range cannot say ``length`` either (``max(n - 1, 0)``)."""
    indices = R.arange(0, format_dim(length * step), step, "i64")
    if dims(indices)[0] != length:
        indices.owner.erase()
        return None
    if begin != const(0):
        indices = R.add(indices, scalar(begin, "i64"))
    return R.take(x, indices, axis)


def slice_axis(x: ir.Value, axis: int, begin: Expr, length: Expr, step: int = 1) -> ir.Value:
    """A slice of ``length`` elements along ``axis``, typed ``length`` where an op can say so (else the
    importer reshapes it to torch's type, checked at run time)."""
    end = begin + (length - 1) * step + 1 if step != 1 else begin + length
    y = R.strided_slice(x, [axis], [format_dim(begin)], [format_dim(end)], [step])
    if dims(y)[axis] == length:
        return y
    taken = take_range(x, axis, begin, length, step)
    if taken is None:
        return y
    y.owner.erase()
    return taken


@converter("aten.slice.Tensor", "aten.slice_copy.Tensor")
def _slice(ctx: NodeContext) -> ir.Value:
    x = ctx.tensor(0)
    shape = dims(x)
    axis = norm_axis(ctx.arg(1, "dim", 0), len(shape))
    start, step = ctx.arg(2, "start", None), ctx.arg(4, "step", 1)
    length = out_shape(ctx)[axis]
    if length == shape[axis] and step == 1:
        return x
    begin = const(0) if start is None else _index(start, shape[axis])
    if begin.is_const and shape[axis].is_const:
        begin = const(min(max(begin.value, 0), shape[axis].value))
    return slice_axis(x, axis, begin, length, step)


@converter("aten.select.int", "aten.select_copy.int")
def _select(ctx: NodeContext) -> ir.Value:
    x = ctx.tensor(0)
    shape = dims(x)
    axis = norm_axis(ctx.arg(1), len(shape))
    i = _index(ctx.arg(2), shape[axis])
    y = R.strided_slice(x, [axis], [format_dim(i)], [format_dim(i + 1)], [1])
    if dims(y)[axis] != const(1):
        return R.take(x, scalar(i, "i64"), axis)
    return R.reshape(y, spell(out_shape(ctx)))


@converter("aten.cat.default", "aten.concat.default", "aten.concatenate.default")
def _cat(ctx: NodeContext) -> ir.Value:
    dtype = ctx.out_dtype
    xs = [x if dtype_of(x) == dtype else R.astype(x, dtype) for x in ctx.arg(0)]
    rank = len(out_shape(ctx))
    xs = [x for x in xs if len(dims(x)) == rank]  # torch skips legacy empty 1-D tensors
    if len(xs) == 1:
        return xs[0]
    return R.concat(xs, norm_axis(ctx.arg(1, "dim", 0), rank))


@converter("aten.stack.default")
def _stack(ctx: NodeContext) -> ir.Value:
    rank = len(out_shape(ctx))
    axis = norm_axis(ctx.arg(1, "dim", 0), rank)
    xs = [R.expand_dims(x, [axis]) for x in ctx.arg(0)]
    return xs[0] if len(xs) == 1 else R.concat(xs, axis)


@converter("aten.split.Tensor", "aten.split_with_sizes.default", "aten.chunk.default", "aten.unbind.int")
@converter("aten.tensor_split.sections", "aten.split_with_sizes_copy.default", "aten.split_copy.Tensor")
def _split(ctx: NodeContext) -> list[ir.Value]:
    """The pieces as torch recorded them: consecutive slices along the axis."""
    x = ctx.tensor(0)
    rank = len(dims(x))
    name = str(ctx.node.target)
    axis = norm_axis(ctx.arg(1 if "unbind" in name else 2, "dim", 0), rank)
    pieces, begin, out = list(ctx.val), const(0), []
    for piece in pieces:
        shape = shape_of_val(ctx, piece)
        length = const(1) if "unbind" in name else shape[axis]
        y = slice_axis(x, axis, begin, length)
        out.append(R.reshape(y, spell(shape)) if "unbind" in name else y)
        begin = begin + length
    return out


@converter("aten.gather.default")
def _gather(ctx: NodeContext) -> ir.Value:
    x = ctx.tensor(0)
    return R.gather_elements(x, ctx.tensor(2), norm_axis(ctx.arg(1), len(dims(x))))


@converter("aten.index_select.default")
def _index_select(ctx: NodeContext) -> ir.Value:
    x = ctx.tensor(0)
    return R.take(x, ctx.tensor(2), norm_axis(ctx.arg(1), len(dims(x))))


@converter("aten.embedding.default")
def _embedding(ctx: NodeContext) -> ir.Value:
    return R.take(ctx.tensor(0), ctx.tensor(1), 0)


@converter("aten.index.Tensor")
def _index_tensor(ctx: NodeContext) -> ir.Value:
    """``x[..., idx]`` with one index tensor (the others ``None``): a take along that axis."""
    x, indices = ctx.tensor(0), list(ctx.arg(1))
    used = [i for i, v in enumerate(indices) if v is not None]
    if len(used) != 1:
        raise ConversionError("indexing with several index tensors is not supported (only x[..., idx])")
    idx = indices[used[0]]
    if dtype_of(idx) == "i1":
        raise ConversionError("indexing with a boolean mask (a data-dependent shape) is not supported")
    return R.take(x, idx, used[0])


@converter("aten.repeat.default")
def _repeat(ctx: NodeContext) -> ir.Value:
    x, repeats = ctx.tensor(0), [int(r) for r in ctx.arg(1)]
    rank = len(dims(x))
    if len(repeats) > rank:
        x = R.reshape(x, spell([const(1)] * (len(repeats) - rank) + dims(x)))
    return R.tile(x, repeats)


@converter("aten.tril.default")
def _tril(ctx: NodeContext) -> ir.Value:
    return R.tril(ctx.tensor(0), int(ctx.arg(1, "diagonal", 0)))


@converter("aten.triu.default")
def _triu(ctx: NodeContext) -> ir.Value:
    return R.triu(ctx.tensor(0), int(ctx.arg(1, "diagonal", 0)))


@converter("aten.cumsum.default")
def _cumsum(ctx: NodeContext) -> ir.Value:
    x = ctx.tensor(0)
    dtype = ctx.out_dtype
    x = x if dtype_of(x) == dtype else R.astype(x, dtype)
    return R.cumsum(x, norm_axis(ctx.arg(1), len(dims(x))))


# -- creation ----------------------------------------------------------------------------------------------


def _bound(v: Any) -> int | float | str:
    if isinstance(v, Expr):
        return v.value if v.is_const else format_dim(v)
    return v


@converter("aten.arange.default", "aten.arange.start", "aten.arange.start_step")
def _arange(ctx: NodeContext) -> ir.Value:
    args = list(ctx.args)
    start, end, step = (
        (0, args[0], 1) if len(args) == 1 else (args[0], args[1], args[2] if len(args) > 2 else 1)
    )
    dtype = ctx.out_dtype
    y = R.arange(
        _bound(start), _bound(end), _bound(step), dtype if dtype in ("i64", "i32", "f32", "f64") else "f32"
    )
    return y if dtype_of(y) == dtype else R.astype(y, dtype)


@converter("aten.full.default", "aten.full_like.default", "aten.new_full.default")
def _full(ctx: NodeContext) -> ir.Value:
    name = str(ctx.node.target)
    value = ctx.arg(2 if "new_full" in name else 1, "fill_value")
    return _filled(ctx, value)


def _filled(ctx: NodeContext, value: Any) -> ir.Value:
    dtype = ctx.out_dtype
    if isinstance(value, Expr):
        if not value.is_const:
            return R.broadcast_to(scalar(value, dtype), spell(out_shape(ctx)))
        value = value.value
    if isinstance(value, ir.Value):
        raise ConversionError("a fill value computed at run time is not supported")
    return R.full(spell(out_shape(ctx)), float(value), dtype)


@converter("aten.ones.default", "aten.ones_like.default", "aten.new_ones.default")
def _ones(ctx: NodeContext) -> ir.Value:
    return _filled(ctx, 1)


@converter("aten.zeros.default", "aten.zeros_like.default", "aten.new_zeros.default")
@converter("aten.empty.memory_format", "aten.empty_like.default", "aten.new_empty.default")
def _zeros(ctx: NodeContext) -> ir.Value:
    return _filled(ctx, 0)


@converter("aten.slice_scatter.default")
def _slice_scatter(ctx: NodeContext) -> ir.Value:
    """``x`` with ``src`` written into positions ``begin, begin + step, ...`` along ``dim``: a ``where`` over
    the axis positions, picking ``src`` (gathered at ``(i - begin) / step``) inside the slice. Every type
    stays exact, where a concat of the parts around the slice would be ``seq + max(64 - seq, 0)``."""
    x, src = ctx.tensor(0), ctx.tensor(1)
    shape = dims(x)
    rank = len(shape)
    axis = norm_axis(ctx.arg(2, "dim", 0), rank)
    start, step = ctx.arg(3, "start", None), int(ctx.arg(5, "step", 1))
    begin = const(0) if start is None else _index(start, shape[axis])
    length = dims(src)[axis]
    if dtype_of(src) != dtype_of(x):
        src = R.astype(src, dtype_of(x))
    pos = R.arange(0, format_dim(shape[axis]), 1, "i64")
    offset = R.subtract(pos, scalar(begin, "i64")) if begin != const(0) else pos
    inside = R.logical_and(
        R.greater_equal(offset, scalar(0, "i64")), R.less(offset, scalar(length * step, "i64"))
    )
    if step != 1:
        inside = R.logical_and(inside, R.equal(R.mod(offset, scalar(step, "i64")), scalar(0, "i64")))
        offset = R.floor_divide(offset, scalar(step, "i64"))
    index = R.minimum(R.maximum(offset, scalar(0, "i64")), scalar(length - 1, "i64"))
    picked = R.take(src, index, axis)
    trailing = [const(1)] * (rank - axis - 1)
    mask = R.reshape(inside, spell([shape[axis], *trailing])) if trailing else inside
    return R.where(mask, picked, x)


_ = torch  # torch is imported for the type of fake values (shape_of_val)


@converter("aten.copy.default")
def _copy(ctx: NodeContext) -> ir.Value:
    """The functional ``copy``: ``src`` in ``self``'s dtype, broadcast to its shape."""
    src, dtype = ctx.tensor(1), ctx.out_dtype
    src = src if dtype_of(src) == dtype else R.astype(src, dtype)
    shape = out_shape(ctx)
    return src if dims(src) == shape else R.broadcast_to(src, spell(shape))

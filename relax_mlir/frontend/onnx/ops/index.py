"""Indexing, scatter/gather, splitting, tiling and data-dependent ONNX ops.

GatherElements, GatherND, ScatterElements, Scatter, ScatterND, TensorScatter, Split, Tile, Trilu,
OneHot, EyeLike, ReverseSequence, Compress, NonZero, Unique.

Most are decompositions into relax ops: GatherND/ScatterND linearize their index tuples and become a
``take``/``scatter_elements`` on the data reshaped so that the indexed dims are one; ReverseSequence and
TensorScatter compute their index tensors with ``arange`` and use ``gather_elements``/
``scatter_elements``. Outputs whose length depends on the data (NonZero, Compress, Unique) are bound to
fresh symbols by a ``match_cast``, so the ops after them see symbolic dims.
"""

from __future__ import annotations

import numpy as np
from mlir import ir

from relax_mlir.dialects import relax as R
from relax_mlir.dialects.dims import normalize_axis, product
from relax_mlir.dialects.types import TensorType, relax_type
from relax_mlir.frontend.onnx.registry import (
    RELAX_TO_NUMPY,
    ConversionError,
    Known,
    NodeContext,
    Out,
    converter,
    known_dims,
    relax_dtype,
)
from relax_mlir.shape_infer.expr import Expr, ceildiv, const, format_dim


def _spell(dims: list[Expr | None] | tuple[Expr | None, ...]) -> list[int | str]:
    return [format_dim(d) for d in dims]


def _known_shape(ctx: NodeContext, i: int) -> list[Expr]:
    shape = ctx.shape(i)
    if any(d is None for d in shape):
        raise ConversionError(f"input #{i} has unknown dims {_spell(shape)}")
    return list(shape)


def _i64(ctx: NodeContext, i: int) -> ir.Value:
    """Input ``i`` as an i64 tensor."""
    return ctx.x(i) if ctx.dtype(i) == "i64" else R.astype(ctx.x(i), "i64")


def _dims_value(ctx: NodeContext, dims: list[Expr], shape: tuple[int, ...] | None = None) -> ir.Value:
    """An i64 tensor holding ``dims`` (a constant, or a shape computation when symbolic)."""
    return ctx.value_of(known_dims(dims, "i64", shape=shape))


def _iota(n: Expr, axis: int, rank: int) -> ir.Value:
    """``arange(n)`` (i64) shaped to broadcast along ``axis`` of a rank-``rank`` tensor."""
    r = R.arange(0, format_dim(n), 1, "i64")
    return R.reshape(r, [format_dim(n) if a == axis else 1 for a in range(rank)])


def _shape_of(value: ir.Value) -> tuple[Expr | None, ...]:
    t = relax_type(value.type)
    assert isinstance(t, TensorType) and t.shape is not None
    return t.shape


def _bind(ctx: NodeContext, value: ir.Value, what: str) -> ir.Value:
    """``value`` with its unknown dims bound to fresh symbols (checked at run time by a match_cast)."""
    shape = _shape_of(value)
    unknown = [a for a, d in enumerate(shape) if d is None]
    if not unknown:
        return value
    fresh = iter(ctx.importer.fresh_symbols(f"{ctx.node.output[0]}_{what}", len(unknown)))
    dims = tuple(next(fresh) if d is None else d for d in shape)
    return R.match_cast(value, TensorType(dims, relax_type(value.type).dtype))


# -- gather / scatter ----------------------------------------------------------------------------------


@converter("GatherElements")
def _gather_elements(ctx: NodeContext) -> list[Out]:
    axis = normalize_axis(ctx.attr("axis", 0), ctx.rank(0))
    return [R.gather_elements(ctx.x(0), ctx.x(1), axis)]


def _reduction(ctx: NodeContext) -> str:
    reduction = ctx.attr("reduction", "none")
    allowed = ("none", "add", "mul") if ctx.opset < 18 else ("none", "add", "mul", "max", "min")
    if reduction not in allowed:
        raise ConversionError(f"attribute 'reduction' = '{reduction}' is not one of {', '.join(allowed)}")
    if reduction != "none" and ctx.dtype(0) == "i1":
        raise ConversionError(f"attribute 'reduction' = '{reduction}' is not supported for bool data")
    return reduction


@converter("ScatterElements", "Scatter")
def _scatter_elements(ctx: NodeContext) -> list[Out]:
    axis = normalize_axis(ctx.attr("axis", 0), ctx.rank(0))
    return [R.scatter_elements(ctx.x(0), ctx.x(1), ctx.x(2), axis, _reduction(ctx))]


def _linear_index(ctx: NodeContext, data_dims: list[Expr], batch: int) -> tuple[ir.Value, int]:
    """The index tuples of input 1 (last axis of length k) as linear offsets into ``data_dims[batch:batch+k]``,
    negative entries counted from the end; with ``batch`` > 0, offset by the batch position so they index
    the data with its first ``batch + k`` dims flattened into one. Returns (offsets of shape
    ``indices.shape[:-1]``, k). Each component is checked against its own dim at run time
    (``R.check_index``): an out-of-range one raises InputError even when the offset would be in range."""
    idx_shape = list(ctx.shape(1))
    last = idx_shape[-1]
    if last is None or not last.is_const:
        raise ConversionError("the last dim of 'indices' must be known at import time")
    k = last.value
    if batch + k > len(data_dims):
        raise ConversionError(f"indices tuples of length {k} exceed the {len(data_dims) - batch} data dims")
    outer = idx_shape[:-1]
    if k == 0:
        lin = R.full(_spell(outer), 0.0, "i64")
    else:
        dims = data_dims[batch : batch + k]
        idx = _i64(ctx, 1)
        rank = len(idx_shape)
        for j in range(k):
            component = R.take(idx, ctx.scalar_like(j, "i64"), rank - 1)
            idx = R.check_index(idx, ctx.x(0), batch + j, f"onnx.{ctx.node.op_type}", component)
        sizes = _dims_value(ctx, dims)
        idx = R.where(R.less(idx, ctx.scalar_like(0, "i64")), R.add(idx, sizes), idx)
        strides = [product(dims[j + 1 :]) for j in range(k)]
        lin = R.sum(R.multiply(idx, _dims_value(ctx, strides)), [len(idx_shape) - 1], False)
    if batch:
        b = product(data_dims[:batch])
        pos = R.reshape(
            R.arange(0, format_dim(b), 1, "i64"), _spell(data_dims[:batch]) + [1] * (len(outer) - batch)
        )
        lin = R.add(lin, R.multiply(pos, _dims_value(ctx, [product(data_dims[batch : batch + k])], shape=())))
    return lin, k


@converter("GatherND")
def _gather_nd(ctx: NodeContext) -> list[Out]:
    batch = ctx.attr("batch_dims", 0)
    data_dims = _known_shape(ctx, 0)
    if ctx.dtype(1) != "i64":
        raise ConversionError(f"indices must be int64, got {ctx.dtype(1)}")
    lin, k = _linear_index(ctx, data_dims, batch)
    flat = R.reshape(ctx.x(0), [format_dim(product(data_dims[: batch + k]))] + _spell(data_dims[batch + k :]))
    return [R.take(flat, lin, 0)]


@converter("ScatterND")
def _scatter_nd(ctx: NodeContext) -> list[Out]:
    reduction = _reduction(ctx)
    data_dims = _known_shape(ctx, 0)
    lin, k = _linear_index(ctx, data_dims, 0)
    rows, cols = product(data_dims[:k]), product(data_dims[k:])
    m = product(_known_shape(ctx, 1)[:-1])
    data = R.reshape(ctx.x(0), _spell([rows, cols]))
    updates = R.reshape(ctx.x(2), _spell([m, cols]))
    idx = R.broadcast_to(R.reshape(lin, _spell([m, const(1)])), _spell([m, cols]))
    out = R.scatter_elements(data, idx, updates, 0, reduction)
    return [R.reshape(out, _spell(data_dims))]


@converter("TensorScatter")
def _tensor_scatter(ctx: NodeContext) -> list[Out]:
    mode = ctx.attr("mode", "linear")
    if mode not in ("linear", "circular"):
        raise ConversionError(f"attribute 'mode' = '{mode}' is not one of linear, circular")
    cache_dims, upd_dims = _known_shape(ctx, 0), _known_shape(ctx, 1)
    rank = len(cache_dims)
    axis = normalize_axis(ctx.attr("axis", -2), rank)
    if axis == 0:
        raise ConversionError("attribute 'axis' must not be the batch axis 0")
    pos = _iota(upd_dims[axis], axis, rank)
    if ctx.has(2):
        start = R.reshape(_i64(ctx, 2), [format_dim(cache_dims[0])] + [1] * (rank - 1))
        pos = R.add(pos, start)
    if mode == "circular":
        pos = R.mod(pos, _dims_value(ctx, [cache_dims[axis]], shape=()))
    idx = R.broadcast_to(pos, _spell(upd_dims))
    return [R.scatter_elements(ctx.x(0), idx, ctx.x(1), axis)]


# -- splitting and tiling ------------------------------------------------------------------------------


@converter("Split")
def _split(ctx: NodeContext) -> list[Out]:
    rank = ctx.rank(0)
    axis = normalize_axis(ctx.attr("axis", 0), rank)
    dim = ctx.shape(0)[axis]
    if dim is None:
        raise ConversionError(f"axis {axis} of the input has an unknown size")
    count = len(ctx.node.output)
    if ctx.opset < 13 and ctx.has_attr("split"):
        sizes = [const(int(s)) for s in ctx.attr("split")]
    elif ctx.opset >= 13 and ctx.has(1):
        sizes = ctx.dims(1, "split")
    else:
        if ctx.has_attr("num_outputs"):
            count = ctx.attr("num_outputs")
            if count != len(ctx.node.output):
                raise ConversionError(
                    f"attribute 'num_outputs' = {count} differs from the node's {len(ctx.node.output)} outputs"
                )
        # equal parts; when the dim does not divide, every part but the last is ceil(dim / count)
        chunk = ceildiv(dim, count)
        sizes = [chunk] * (count - 1) + [dim - chunk * (count - 1)]
    if len(sizes) != count:
        raise ConversionError(f"'split' has {len(sizes)} entries for {count} outputs")
    return split_sizes(ctx, axis, sizes)


def split_sizes(ctx: NodeContext, axis: int, sizes: list[Expr]) -> list[ir.Value]:
    """Input 0 split along ``axis`` into parts of ``sizes`` (which must add up to its dim)."""
    dim = ctx.shape(0)[axis]
    count = len(sizes)
    if any(s.is_const and s.value < 0 for s in sizes):
        raise ConversionError(f"'split' has negative sizes {_spell(sizes)}")
    x = ctx.x(0)
    if all(s.is_const for s in sizes):
        total = sum(s.value for s in sizes)
        if dim.is_const and total != dim.value:
            raise ConversionError(f"'split' sizes {_spell(sizes)} do not add up to the dim {dim.value}")
        if not dim.is_const:  # the sizes fix the dim: checked at run time
            shape = list(ctx.shape(0))
            shape[axis] = const(total)
            x = R.match_cast(x, TensorType(tuple(shape), ctx.dtype(0)))
        if count == 1:
            return [x]
        return list(R.split(x, [int(c) for c in np.cumsum([s.value for s in sizes])[:-1]], axis))
    outs, start = [], const(0)
    for s in sizes:
        end = start + s
        outs.append(R.strided_slice(x, [axis], [format_dim(start)], [format_dim(end)], [1]))
        start = end
    return outs


@converter("Tile")
def _tile(ctx: NodeContext) -> list[Out]:
    reps = ctx.const(1)
    if reps is not None:
        reps = [int(r) for r in reps.reshape(-1)]
        if len(reps) != ctx.rank(0):
            raise ConversionError(f"'repeats' has {len(reps)} entries for a rank-{ctx.rank(0)} input")
        if any(r < 0 for r in reps):
            raise ConversionError(f"'repeats' {reps} has negative entries")
        return [R.tile(ctx.x(0), reps)]
    # repeats known at run time: broadcast x to (r0, d0, r1, d1, ...) and merge each pair
    dims = _known_shape(ctx, 0)
    reps_dims = ctx.dims(1, "repeats")
    if len(reps_dims) != len(dims):
        raise ConversionError(f"'repeats' has {len(reps_dims)} entries for a rank-{len(dims)} input")
    pairs = [e for d in dims for e in (const(1), d)]
    target = [e for r, d in zip(reps_dims, dims) for e in (r, d)]
    x = R.broadcast_to(R.reshape(ctx.x(0), _spell(pairs)), _spell(target))
    return [R.reshape(x, _spell([r * d for r, d in zip(reps_dims, dims)]))]


# -- triangles and one-hot -----------------------------------------------------------------------------


@converter("Trilu")
def _trilu(ctx: NodeContext) -> list[Out]:
    upper = ctx.attr("upper", 1)
    if ctx.rank(0) < 2:
        raise ConversionError(f"the input must have rank >= 2, got rank {ctx.rank(0)}")
    k = ctx.const(1) if ctx.has(1) else np.array(0)
    if k is not None:
        k = int(np.asarray(k).reshape(-1)[0])
        return [R.triu(ctx.x(0), k) if upper else R.tril(ctx.x(0), k)]
    shape = list(ctx.shape(0))
    rows, cols = shape[-2], shape[-1]
    if rows is None or cols is None:
        raise ConversionError(f"the last two dims {_spell(shape[-2:])} must be known")
    diff = R.subtract(_iota(cols, 1, 2), _iota(rows, 0, 2))
    kv = R.reshape(_i64(ctx, 1), [])
    keep = R.greater_equal(diff, kv) if upper else R.less_equal(diff, kv)
    return [R.where(keep, ctx.x(0), ctx.scalar_like(0, ctx.dtype(0)))]


@converter("EyeLike")
def _eye_like(ctx: NodeContext) -> list[Out]:
    if ctx.rank(0) != 2:
        raise ConversionError(f"the input must have rank 2, got rank {ctx.rank(0)}")
    dtype = relax_dtype(ctx.attr("dtype"), "attribute 'dtype'") if ctx.has_attr("dtype") else ctx.dtype(0)
    k = ctx.attr("k", 0)
    rows, cols = _known_shape(ctx, 0)
    if rows.is_const and cols.is_const:
        return [Known(np.eye(rows.value, cols.value, k, dtype=RELAX_TO_NUMPY[dtype]), dtype)]
    on = R.equal(R.subtract(_iota(cols, 1, 2), _iota(rows, 0, 2)), ctx.scalar_like(k, "i64"))
    return [on if dtype == "i1" else R.astype(on, dtype)]


def _depth(ctx: NodeContext) -> Expr:
    """OneHot's depth (a scalar or one-element tensor of any numeric type) as a dim."""
    numbers = ctx.const(1)
    if numbers is not None:
        depth = int(np.asarray(numbers).reshape(-1)[0])
        if depth < 1:
            raise ConversionError(f"'depth' must be positive, got {depth}")
        return const(depth)
    exprs = ctx.exprs(1)
    if exprs is not None:
        return exprs.reshape(-1)[0]
    v = R.reshape(ctx.x(1), [1])
    if ctx.dtype(1) != "i64":
        v = R.astype(v, "i64")
    return ctx.importer.runtime_dims(v, f"{ctx.node.output[0]}_depth")[0]


@converter("OneHot")
def _one_hot(ctx: NodeContext) -> list[Out]:
    rank = ctx.rank(0) + 1
    axis = normalize_axis(ctx.attr("axis", -1), rank)
    depth = _depth(ctx)
    idx = _i64(ctx, 0)
    idx = R.where(
        R.less(idx, ctx.scalar_like(0, "i64")), R.add(idx, _dims_value(ctx, [depth], shape=())), idx
    )
    hot = R.equal(R.expand_dims(idx, [axis]), _iota(depth, axis, rank))
    values = ctx.x(2)
    off = R.take(values, ctx.constant(np.array(0, np.int64)), 0)
    on = R.take(values, ctx.constant(np.array(1, np.int64)), 0)
    return [R.where(hot, on, off)]


# -- sequences -----------------------------------------------------------------------------------------


@converter("ReverseSequence")
def _reverse_sequence(ctx: NodeContext) -> list[Out]:
    dims = _known_shape(ctx, 0)
    rank = len(dims)
    if rank < 2:
        raise ConversionError(f"the input must have rank >= 2, got rank {rank}")
    time_axis = normalize_axis(ctx.attr("time_axis", 0), rank)
    batch_axis = normalize_axis(ctx.attr("batch_axis", 1), rank)
    if {time_axis, batch_axis} != {0, 1}:
        raise ConversionError(
            f"attributes 'time_axis' = {time_axis} and 'batch_axis' = {batch_axis} must be 0 and 1"
        )
    t = _iota(dims[time_axis], time_axis, rank)
    lens = R.reshape(
        _i64(ctx, 1), [format_dim(dims[batch_axis]) if a == batch_axis else 1 for a in range(rank)]
    )
    src = R.where(R.less(t, lens), R.subtract(R.subtract(lens, ctx.scalar_like(1, "i64")), t), t)
    return [R.gather_elements(ctx.x(0), R.broadcast_to(src, _spell(dims)), time_axis)]


# -- data-dependent shapes -----------------------------------------------------------------------------


@converter("NonZero")
def _nonzero(ctx: NodeContext) -> list[Out]:
    if ctx.rank(0) == 0:
        raise ConversionError("NonZero of a 0-d tensor is not supported: reshape it to 1-D")
    return [_bind(ctx, R.nonzero(ctx.x(0)), "count")]


def _positions(ctx: NodeContext, flags: ir.Value, what: str) -> ir.Value:
    """The positions of the true entries of the 1-D ``flags``, as i64 of a fresh symbolic length."""
    found = _bind(ctx, R.nonzero(flags), what)
    return R.reshape(found, [format_dim(_shape_of(found)[1])])


@converter("Compress")
def _compress(ctx: NodeContext) -> list[Out]:
    if ctx.rank(1) != 1:
        raise ConversionError(f"'condition' must be 1-D, got rank {ctx.rank(1)}")
    x = ctx.x(0)
    if ctx.has_attr("axis"):
        axis = normalize_axis(ctx.attr("axis"), ctx.rank(0))
    else:
        x, axis = R.reshape(x, [-1]), 0
    cond = ctx.x(1)
    if ctx.dtype(1) != "i1":
        cond = R.not_equal(cond, ctx.scalar_like(0, ctx.dtype(1)))
    return [R.take(x, _positions(ctx, cond, "count"), axis)]


@converter("Unique")
def _unique(ctx: NodeContext) -> list[Out]:
    """The sorted values alone (no axis) are ``relax.unique`` (a merge sort). Otherwise the slices along
    the axis (elements when there is no axis) are compared pairwise: O(n^2 * slice size) work and
    memory, fine for the sizes Unique meets in models; NaNs then count as distinct values."""
    dims = _known_shape(ctx, 0)
    x = ctx.x(0)
    wanted = [j for j, name in enumerate(ctx.node.output) if name]
    if wanted == [0] and ctx.attr("sorted", 1) and not ctx.has_attr("axis"):
        return [_bind(ctx, R.unique(x), "count")]
    if ctx.has_attr("axis"):
        axis = normalize_axis(ctx.attr("axis"), len(dims))
        perm = [axis] + [a for a in range(len(dims)) if a != axis]
        n, m = dims[axis], product([dims[a] for a in perm[1:]])
        rows = R.reshape(R.permute_dims(x, perm), _spell([n, m]))
    else:
        axis, n, m = None, product(dims), const(1)
        x = R.reshape(x, [format_dim(n)])
        rows = R.reshape(x, _spell([n, m]))
    a, b = R.expand_dims(rows, [1]), R.expand_dims(rows, [0])  # [n, 1, m], [1, n, m]
    differ = R.not_equal(a, b)  # [n, n, m]
    same = R.equal(R.sum(R.astype(differ, "i32"), [2], False), ctx.scalar_like(0, "i32"))  # [n, n]
    before = R.less(_iota(n, 0, 2), _iota(n, 1, 2))  # [j, i]: j < i
    earlier_same = R.logical_and(same, R.permute_dims(before, [1, 0]))  # [i, j]: same and j < i
    first = R.logical_not(
        R.greater(R.sum(R.astype(earlier_same, "i32"), [1], False), ctx.scalar_like(0, "i32"))
    )
    if ctx.attr("sorted", 1):
        # order[j, i]: slice j sorts before slice i (compare at the first position where they differ)
        where = R.argmax(R.astype(differ, "i32"), 2, True)  # [n, n, 1]
        less_there = R.squeeze(R.gather_elements(R.less(a, b), where, 2), [2])
        order = R.logical_and(less_there, R.logical_not(same))
    else:
        order = before
    ranks = R.sum(R.astype(R.logical_and(R.expand_dims(first, [1]), order), "i64"), [0], False)  # [n]
    positions = _positions(ctx, first, "count")  # first occurrences, in index order
    u = _shape_of(positions)[0]
    if ctx.attr("sorted", 1):
        slot = R.equal(R.expand_dims(R.take(ranks, positions, 0), [0]), _iota(u, 0, 2))  # [p, q]
        positions = R.take(positions, R.argmax(R.astype(slot, "i32"), 1, False), 0)
    y = R.take(x, positions, 0 if axis is None else axis)
    inverse = R.take(ranks, R.argmax(R.astype(same, "i32"), 1, False), 0)
    counts = R.take(R.sum(R.astype(same, "i64"), [1], False), positions, 0)
    return [y, positions, inverse, counts]

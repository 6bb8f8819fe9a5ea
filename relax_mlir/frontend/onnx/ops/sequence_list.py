"""ONNX sequences whose length is known only at run time: ``SeqList`` (packed ``(data, shapes)``).

Every op is existing relax ops: an item's place in ``data`` comes from a cumulative sum of the rows'
products, positions and offsets read at run time are bound to symbols by ``match_cast`` (so slices and
reshapes take them), and positions are checked at run time (``check_index``: an InputError).
"""

from __future__ import annotations

import numpy as np
from mlir import ir

from relax_mlir.dialects import relax as R
from relax_mlir.dialects.types import TensorType, relax_type
from relax_mlir.frontend.onnx.registry import (
    RELAX_TO_NUMPY,
    ConversionError,
    Known,
    NodeContext,
    Seq,
    SeqList,
    known_dims,
)
from relax_mlir.shape_infer.expr import Expr, ceildiv, const, format_dim


def _f(e: Expr) -> str | int:
    return e.value if e.is_const else format_dim(e)


def bound(ctx: NodeContext, v: ir.Value, prefix: str) -> tuple[ir.Value, tuple[Expr, ...]]:
    """``v`` with every unknown dim bound to a fresh symbol (a match_cast), and its dims."""
    t = relax_type(v.type)
    if not isinstance(t, TensorType) or t.shape is None:
        raise ConversionError(f"a sequence item must be a tensor of known rank, got {t}")
    if all(d is not None for d in t.shape):
        return v, t.shape
    fresh = iter(ctx.importer.fresh_symbols(prefix, sum(d is None for d in t.shape)))
    dims = tuple(d if d is not None else next(fresh) for d in t.shape)
    return R.match_cast(v, TensorType(dims, t.dtype)), dims


def _dim(v: ir.Value, axis: int) -> Expr:
    d = relax_type(v.type).shape[axis]
    assert d is not None, "a SeqList's dims are always bound"
    return d


def length(seq: SeqList) -> Expr:
    return _dim(seq.shapes, 0)


def make(ctx: NodeContext, data: ir.Value, shapes: ir.Value, dtype: str, rank: int | None) -> SeqList:
    """A SeqList whose dims are bound to symbols."""
    name = ctx.node.output[0]
    data, _ = bound(ctx, data, f"{name}_size")
    shapes, _ = bound(ctx, shapes, f"{name}_len")
    return SeqList(data, shapes, dtype, rank)


def flat_item(ctx: NodeContext, v: ir.Value | Known, rank: int) -> tuple[ir.Value, ir.Value]:
    """An item as its elements (1-D) and its shape row (i64 ``[1, rank]``)."""
    value, dims = bound(ctx, ctx.item_value(v), f"{ctx.node.output[0]}_item")
    if len(dims) != rank:
        raise ConversionError(f"a sequence of {rank}-D items cannot hold a {len(dims)}-D tensor")
    flat = value if len(dims) == 1 else R.reshape(value, [-1])  # (an entry 0 would copy an input dim)
    row = ctx.value_of(known_dims(list(dims), shape=(1, rank)))
    return flat, row


def pack(ctx: NodeContext, seq: Seq | SeqList, rank: int | None = None) -> SeqList:
    """A sequence as a SeqList (a Seq's items must share a rank; an empty one takes ``rank``, or leaves
    it unknown until an item comes in)."""
    if isinstance(seq, SeqList):
        return seq
    ranks = {len(ctx.item_type(t).shape) for t in seq.items} | ({rank} if rank is not None else set())
    if len(ranks) > 1:
        raise ConversionError(f"a sequence of run-time length needs items of one rank, got {sorted(ranks)}")
    r = ranks.pop() if ranks else None
    dtype = seq.dtype or "f32"
    parts = [flat_item(ctx, t, r) for t in seq.items]
    if not parts:
        data = R.constant(np.zeros(0, RELAX_TO_NUMPY[dtype]))
        shapes = R.constant(np.zeros((0, r or 0), np.int64))
        if r is None:  # the width is the rank of the items to come
            shapes = R.match_cast(shapes, TensorType((const(0), None), "i64"))
    else:
        data = parts[0][0] if len(parts) == 1 else R.concat([p[0] for p in parts], 0)
        shapes = parts[0][1] if len(parts) == 1 else R.concat([p[1] for p in parts], 0)
    return make(ctx, data, shapes, dtype, r)


def rank_of(shapes: ir.Value) -> int | None:
    """The items' rank: the width of ``shapes`` when known."""
    width = relax_type(shapes.type).shape[1]
    return width.value if width is not None and width.is_const else None


def with_rank(ctx: NodeContext, seq: SeqList, rank: int) -> SeqList:
    """``seq`` (of unknown item rank) as a list of ``rank``-D items, checked at run time (the rows of an
    empty list may have any width)."""
    if seq.rank is not None:
        return seq
    n = length(seq)
    if rank == 0:
        shapes = R.match_cast(seq.shapes, TensorType((n, const(0)), "i64"))
    else:
        # through a 1-D concat (not a reshape chain, which would be merged into one that assumes the
        # width equals ``rank``, wrong for an empty list): the reshape checks only the element count
        rows = R.concat([R.reshape(seq.shapes, [-1]), R.zeros([1], "i64")], 0)
        shapes = R.reshape(R.strided_slice(rows, [0], [0], [_f(n * _dim(seq.shapes, 1))]), [_f(n), rank])
    return make(ctx, seq.data, shapes, seq.dtype, rank)


def _rank(seq: SeqList, what: str) -> int:
    if seq.rank is None:
        raise ConversionError(f"{what} needs the rank of the sequence's items, which is unknown")
    return seq.rank


def _offsets(ctx: NodeContext, seq: SeqList) -> ir.Value:
    """Where each item starts in ``data``, and the end: i64 ``[length + 1]``."""
    n = length(seq)
    if seq.rank == 0:
        sizes = R.ones([_f(n)], "i64")
    else:
        sizes = R.prod(seq.shapes, [1], False)
    return R.concat([R.zeros([1], "i64"), R.cumsum(sizes, 0)], 0)


def _read(ctx: NodeContext, v: ir.Value, k: int, prefix: str) -> list[Expr]:
    """The ``k`` entries of an i64 tensor, bound to fresh symbols."""
    return ctx.importer.runtime_dims(R.reshape(v, [k]), f"{ctx.node.output[0]}_{prefix}") if k else []


def scalar(ctx: NodeContext, v: ir.Value, prefix: str) -> Expr:
    """An i64 scalar tensor's value, bound to a fresh symbol."""
    return _read(ctx, v, 1, prefix)[0]


def position(ctx: NodeContext, i: int) -> ir.Value | None:
    """Optional input ``i`` (a position) as an i64 scalar, or None."""
    if not ctx.has(i):
        return None
    p = ctx.x(i)
    return R.reshape(R.astype(p, "i64") if ctx.dtype(i) != "i64" else p, [])


def _position(
    ctx: NodeContext, p: ir.Value | None, seq: SeqList, default: int, inserting: bool = False
) -> Expr:
    """Position ``p`` (an i64 scalar; None: ``default``; negative counts from the back) as a symbol in
    ``[0, length)`` (``[0, length]`` when ``inserting``), checked at run time."""
    n = length(seq)
    size = ctx.value_of(known_dims([n], shape=()))
    if p is None:
        p = ctx.value_of(known_dims([n + const(default)] if default < 0 else [const(default)], shape=()))
    zero = ctx.scalar_like(0, "i64")
    q = R.where(R.less(p, zero), R.add(p, size), p)
    # a position still negative is out of range: move it past the end, where the check sees it
    top = size if not inserting else R.add(size, ctx.scalar_like(1, "i64"))
    q = R.where(R.less(q, zero), top, q)
    checked = R.check_index(q, R.zeros([_f(n + const(1)) if inserting else _f(n)], "i8"), 0, ctx.node.op_type)
    return scalar(ctx, checked, "pos")


def _slice(v: ir.Value, begin: Expr, end: Expr) -> ir.Value:
    return R.strided_slice(v, [0], [_f(begin)], [_f(end)])


def item_bounds(ctx: NodeContext, seq: SeqList, q: Expr) -> tuple[Expr, Expr]:
    """Where item ``q`` starts and ends in ``data``, as symbols."""
    offsets = _offsets(ctx, seq)
    pair = _slice(offsets, q, q + const(2))
    begin, end = _read(ctx, pair, 2, "at")
    return begin, end


def at(ctx: NodeContext, seq: SeqList, p: ir.Value | None) -> ir.Value:
    """The item at position ``p``."""
    _rank(seq, "SequenceAt")
    q = _position(ctx, p, seq, 0)
    begin, end = item_bounds(ctx, seq, q)
    dims = _read(ctx, _slice(seq.shapes, q, q + const(1)), seq.rank, "dim")
    item = R.reshape(_slice(seq.data, begin, end), [_f(d) for d in dims])
    if seq.dims is None or len(seq.dims) != seq.rank or all(d is None for d in seq.dims):
        return item
    # the dims the model declares for the items, checked (a named one is bound, or checked if bound)
    return R.match_cast(
        item, TensorType(tuple(d if d is not None else e for d, e in zip(seq.dims, dims)), seq.dtype)
    )


def insert(ctx: NodeContext, seq: SeqList, item: ir.Value | Known, p: ir.Value | None) -> SeqList:
    """``seq`` with ``item`` inserted at position ``p`` (None: at the end)."""
    n = length(seq)
    q = _position(ctx, p, seq, 0, inserting=True) if p is not None else n
    offsets = _offsets(ctx, seq)
    begin = scalar(ctx, _slice(offsets, q, q + const(1)), "at")
    shape = ctx.item_type(item).shape
    if shape is None:
        raise ConversionError("the inserted tensor has an unknown rank")
    rank = len(shape)
    flat, row = flat_item(ctx, item, rank)
    if seq.rank is not None and seq.rank != rank:  # only right when the list is empty: checked below
        seq = SeqList(seq.data, seq.shapes, seq.dtype, None)
    total = _dim(seq.data, 0)
    data = R.concat([_slice(seq.data, const(0), begin), flat, _slice(seq.data, begin, total)], 0)
    if seq.rank is None and rank > 0:  # the item decides the rank: the rows so far must have as many
        # entries, which the final reshape checks (rows of an empty list may have any width)
        rows = R.reshape(seq.shapes, [-1])
        at, end = q * const(rank), _dim(rows, 0)
        parts = [_slice(rows, const(0), at), R.reshape(row, [rank]), _slice(rows, at, end)]
        shapes = R.reshape(R.concat(parts, 0), [_f(n + const(1)), rank])
        return make(ctx, data, shapes, seq.dtype, rank)
    old = seq.shapes
    if seq.rank is None:  # rank-0 items: rows of no entries
        old = R.match_cast(old, TensorType((n, const(0)), "i64"))
    shapes = R.concat([_slice(old, const(0), q), row, _slice(old, q, n)], 0)
    return make(ctx, data, shapes, seq.dtype, rank)


def erase(ctx: NodeContext, seq: SeqList, p: ir.Value | None) -> SeqList:
    """``seq`` without the item at position ``p`` (None: the last)."""
    n = length(seq)
    q = _position(ctx, p, seq, -1)
    begin, end = item_bounds(ctx, seq, q)
    total = _dim(seq.data, 0)
    data = R.concat([_slice(seq.data, const(0), begin), _slice(seq.data, end, total)], 0)
    shapes = R.concat([_slice(seq.shapes, const(0), q), _slice(seq.shapes, q + const(1), n)], 0)
    return make(ctx, data, shapes, seq.dtype, seq.rank)


def concat(ctx: NodeContext, seq: SeqList, axis: int, new_axis: bool) -> ir.Value:
    """ConcatFromSequence: stacking on any axis; concatenation along axis 0 (items may differ there)."""
    _rank(seq, "ConcatFromSequence")
    first = R.check_index(
        ctx.scalar_like(0, "i64"), R.zeros([_f(length(seq))], "i8"), 0, "ConcatFromSequence (empty)"
    )
    row = R.reshape(R.take(seq.shapes, first, 0), [seq.rank])
    if new_axis:
        dims = _read(ctx, row, seq.rank, "dim")
        stacked = R.reshape(seq.data, [_f(length(seq))] + [_f(d) for d in dims])
        if axis == 0:
            return stacked
        perm = list(range(1, seq.rank + 1))
        perm.insert(axis, 0)
        return R.permute_dims(stacked, perm)
    if axis != 0:
        raise ConversionError(
            f"concatenating a sequence of run-time length along axis {axis} is not supported (only axis 0)"
        )
    rest = _read(ctx, R.strided_slice(row, [0], [1], [seq.rank]), seq.rank - 1, "dim")
    total = scalar(ctx, R.sum(R.strided_slice(seq.shapes, [1], [0], [1]), None, False), "dim0")
    return R.reshape(seq.data, [_f(total)] + [_f(d) for d in rest])


def split(
    ctx: NodeContext,
    x: ir.Value,
    sizes: ir.Value | None,
    chunk: Expr | None,
    squeeze: bool,
    axis: int = 0,
) -> SeqList:
    """SplitToSequence along ``axis`` into a list: parts of the run-time ``sizes`` (i64 1-D), else of
    ``chunk`` each (the last smaller; None: 1), squeezed when ``squeeze``. Along axis 0 the parts are
    ``x``'s elements in order, so ``data`` is ``x`` flattened; along another axis ``data`` gathers them
    (``_gather_parts``). ``shapes`` says where each part ends."""
    x, dims = bound(ctx, x, f"{ctx.node.output[0]}_in")
    dtype = relax_type(x.type).dtype
    n, before, after = dims[axis], list(dims[:axis]), list(dims[axis + 1 :])
    if sizes is None:
        step = chunk if chunk is not None else const(1)
        count = ceildiv(n, step)
        starts = R.arange(_f(count))
        if step != const(1):
            starts = R.multiply(starts, _i64(ctx, step))
        sizes = R.minimum(_i64(ctx, step), R.subtract(_i64(ctx, n), starts))
    else:
        count = _dim(sizes, 0)
        (covered,) = _read(ctx, R.sum(sizes, None, False), 1, "total")  # the parts must cover the axis
        x = R.match_cast(x, TensorType((*before, covered, *after), dtype))
        n = covered
    data = R.reshape(x, [-1]) if len(dims) != 1 else x
    if before:
        data = R.take(data, _gather_parts(ctx, sizes, before, n, after))
    columns = [] if squeeze else [R.expand_dims(sizes, [1])]
    if before:
        columns.insert(0, _rows(ctx, before, count))
    if after:
        columns.append(_rows(ctx, after, count))
    if not columns:
        shapes = R.zeros([_f(count), 0], "i64")
    else:
        shapes = columns[0] if len(columns) == 1 else R.concat(columns, 1)
    return make(ctx, data, shapes, dtype, len(dims) - int(squeeze))


def _rows(ctx: NodeContext, dims: list[Expr], count: Expr) -> ir.Value:
    """``dims`` as an i64 ``[count, len(dims)]`` (the same row for every part)."""
    row = ctx.value_of(known_dims(dims, shape=(1, len(dims))))
    return R.broadcast_to(row, [_f(count), len(dims)])


def _gather_parts(
    ctx: NodeContext, sizes: ir.Value, before: list[Expr], n: Expr, after: list[Expr]
) -> ir.Value:
    """For ``x`` seen as ``(A, n, B)`` and split along its middle axis into parts of ``sizes``: the index
    into ``x`` flattened of each element of the parts flattened one after the other. Element ``j`` lies in
    the part holding row ``j // (A B)`` (each part has ``A B`` elements per row), which starts at row
    ``s`` and has ``z`` rows; inside it, ``j - A B s`` is ``(a, r, b)`` of ``(A, z, B)``."""
    big_a, big_b = const(1), const(1)
    for d in before:
        big_a = big_a * d
    for d in after:
        big_b = big_b * d
    ab, b = _i64(ctx, big_a * big_b), _i64(ctx, big_b)
    ends = R.cumsum(sizes, 0)
    rows = R.arange(_f(n))
    part = R.sum(R.astype(R.less_equal(R.expand_dims(ends, [0]), R.expand_dims(rows, [1])), "i64"), [1])
    row_start = R.take(R.subtract(ends, sizes), part)
    row_size = R.take(sizes, part)
    j = R.arange(_f(big_a * n * big_b))
    q = R.floor_divide(j, ab)
    s, z = R.take(row_start, q), R.take(row_size, q)
    off = R.subtract(j, R.multiply(ab, s))
    a = R.floor_divide(off, R.multiply(z, b))
    r = R.mod(R.floor_divide(off, b), z)
    row = R.add(R.multiply(a, _i64(ctx, n)), R.add(s, r))
    return R.add(R.multiply(row, b), R.mod(off, b))


def _i64(ctx: NodeContext, e: Expr) -> ir.Value:
    return ctx.value_of(known_dims([e], shape=()))

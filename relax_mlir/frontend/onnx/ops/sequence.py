"""ONNX sequence ops on sequences whose length is known at import time.

SequenceConstruct, SequenceEmpty, SequenceLength, SequenceAt, SequenceInsert, SequenceErase,
SplitToSequence, ConcatFromSequence.

A sequence is a ``Seq``: a Python list of relax values (or ``Known`` contents) kept by the importer, so
SequenceAt/Insert/Erase with positions known at import time cost nothing at run time and every item keeps
its own symbolic shape. Where a sequence must be one value (a graph output or input) it is a relax tuple.
A position known only at run time is supported where the items share one type (SequenceAt stacks them and
takes the item). A sequence whose length is known only at run time (a sequence input without a length in
shape_dict, an insert or erase at a run-time position, a Loop or If that carries one, a split along a
run-time axis) is a ``SeqList``: see ``sequence_list.py``.
"""

from __future__ import annotations

import numpy as np
from mlir import ir

from relax_mlir.dialects import relax as R
from relax_mlir.dialects.dims import normalize_axis
from relax_mlir.frontend.onnx.ops import sequence_list as L
from relax_mlir.frontend.onnx.ops.index import split_sizes
from relax_mlir.frontend.onnx.registry import (
    ConversionError,
    Known,
    NodeContext,
    Out,
    Seq,
    SeqList,
    converter,
    known_dims,
    relax_dtype,
)
from relax_mlir.shape_infer.expr import Expr, ceildiv, const


def _position(ctx: NodeContext, i: int, length: int, inserting: bool = False) -> int:
    """Input ``i`` as a position in ``[0, length]`` (``inserting``) or ``[0, length)``; negative counts
    from the back, as ONNX says."""
    p = int(ctx.require_const(i, "position").reshape(-1)[0])
    top = length + 1 if inserting else length
    q = p + length if p < 0 else p
    if not 0 <= q < top:
        raise ConversionError(f"position {p} is out of range for a sequence of {length} items")
    return q


@converter("SequenceConstruct")
def _construct(ctx: NodeContext) -> list[Out]:
    items = [ctx.known(i) or ctx.x(i) for i in range(ctx.num_inputs) if ctx.has(i)]
    dtypes = {ctx.item_type(t).dtype for t in items}
    if len(dtypes) != 1:
        raise ConversionError(f"the items have different dtypes {sorted(str(d) for d in dtypes)}")
    return [Seq(items, dtypes.pop())]


@converter("SequenceEmpty")
def _empty(ctx: NodeContext) -> list[Out]:
    import onnx

    return [Seq([], relax_dtype(ctx.attr("dtype", onnx.TensorProto.FLOAT), "attribute 'dtype'"))]


@converter("SequenceLength")
def _length(ctx: NodeContext) -> list[Out]:
    seq = ctx.seq(0)
    if isinstance(seq, SeqList):
        return [known_dims([L.length(seq)], shape=())]
    return [Known(np.array(len(ctx.seq(0).items), np.int64), "i64")]


@converter("SequenceAt")
def _at(ctx: NodeContext) -> list[Out]:
    seq = ctx.seq(0)
    if isinstance(seq, SeqList):
        return [L.at(ctx, seq, L.position(ctx, 1))]
    n = len(seq.items)
    if ctx.const(1) is not None or n == 0:
        return [seq.items[_position(ctx, 1, n)]]
    types = {ctx.item_type(t) for t in seq.items}
    if len(types) != 1:
        ctx.require_const(1, "position")  # items of different shapes: the position must be known
    # one type: stack the items and take the one at the run-time position (negative counts from the back)
    stacked = R.concat([R.expand_dims(ctx.item_value(t), [0]) for t in seq.items], 0)
    pos = ctx.x(1)
    if ctx.dtype(1) != "i64":
        pos = R.astype(pos, "i64")
    pos = R.reshape(pos, [])
    zero, size = ctx.scalar_like(0, "i64"), ctx.scalar_like(n, "i64")
    pos = R.where(R.less(pos, zero), R.add(pos, size), pos)
    return [R.take(stacked, pos, 0)]


@converter("SequenceInsert")
def _insert(ctx: NodeContext) -> list[Out]:
    seq = ctx.seq(0)
    item = ctx.known(1) or ctx.x(1)
    if seq.dtype is not None and ctx.dtype(1) != seq.dtype:
        raise ConversionError(f"the tensor's dtype {ctx.dtype(1)} differs from the sequence's {seq.dtype}")
    if isinstance(seq, SeqList) or (ctx.has(2) and ctx.const(2) is None):  # a run-time list
        if isinstance(seq, Seq) and seq.dtype is None:
            seq = Seq(seq.items, ctx.dtype(1))
        return [L.insert(ctx, L.pack(ctx, seq, ctx.rank(1)), item, L.position(ctx, 2))]
    n = len(seq.items)
    pos = _position(ctx, 2, n, inserting=True) if ctx.has(2) else n
    return [Seq(seq.items[:pos] + [item] + seq.items[pos:], ctx.dtype(1))]


@converter("SequenceErase")
def _erase(ctx: NodeContext) -> list[Out]:
    seq = ctx.seq(0)
    if isinstance(seq, SeqList) or (ctx.has(1) and ctx.const(1) is None):  # a run-time list
        return [L.erase(ctx, L.pack(ctx, seq), L.position(ctx, 1))]
    n = len(seq.items)
    pos = _position(ctx, 1, n) if ctx.has(1) else n - 1
    if n == 0:
        raise ConversionError("cannot erase from an empty sequence")
    return [Seq(seq.items[:pos] + seq.items[pos + 1 :], seq.dtype)]


def _chunk(ctx: NodeContext) -> Expr:
    """The scalar ``split`` input (a part's size): its value, or a symbol bound at run time to the value,
    checked to be positive (else InputError)."""
    known = ctx.const(1)
    if known is not None:
        chunk = int(known.reshape(-1)[0])
        if chunk <= 0:
            raise ConversionError(f"'split' must be positive, got {chunk}")
        return const(chunk)
    v = ctx.x(1) if ctx.dtype(1) == "i64" else R.astype(ctx.x(1), "i64")
    one = R.constant(np.array(1, np.int64))
    v = R.check_true(v, R.less_equal(one, v), "'split' must be positive", "SplitToSequence")
    # a failed check raises after the call: until then the sizes computed from it must not divide by 0
    return L.scalar(ctx, R.maximum(v, one), "split")


@converter("SplitToSequence")
def _split_to_sequence(ctx: NodeContext) -> list[Out]:
    rank = ctx.rank(0)
    axis = normalize_axis(ctx.attr("axis", 0), rank)
    dim = ctx.shape(0)[axis]
    if ctx.has(1) and ctx.rank(1) == 1:  # a run-time list when the number of sizes is not static
        count = ctx.shape(1)[0]
        runtime = count is None or not count.is_const
    else:  # parts of one size: a run-time list when the axis or the size is not static
        runtime = (dim is not None and not dim.is_const) or (ctx.has(1) and ctx.const(1) is None)
    if runtime:
        if not ctx.has(1):
            return [L.split(ctx, ctx.x(0), None, None, not ctx.attr("keepdims", 1), axis)]
        if ctx.rank(1) == 0:
            return [L.split(ctx, ctx.x(0), None, _chunk(ctx), False, axis)]
        sizes = ctx.x(1) if ctx.dtype(1) == "i64" else R.astype(ctx.x(1), "i64")
        return [L.split(ctx, ctx.x(0), sizes, None, False, axis)]
    if dim is None:
        raise ConversionError(f"axis {axis} of the input has an unknown size")
    if not ctx.has(1):  # parts of size 1, squeezed unless keepdims
        if not dim.is_const:
            raise ConversionError(f"the sequence length is dim {axis} of the input, which must be static")
        parts = split_sizes(ctx, axis, [const(1)] * dim.value)
        if not ctx.attr("keepdims", 1):
            parts = [R.squeeze(p, [axis]) for p in parts]
        return [Seq(list(parts), ctx.dtype(0))]
    if ctx.rank(1) == 0:  # parts of equal size, the last one smaller
        chunk = int(ctx.require_const(1, "split").reshape(-1)[0])
        if not dim.is_const:
            raise ConversionError(
                f"the sequence length depends on dim {axis} of the input, which must be static"
            )
        if chunk <= 0:
            raise ConversionError(f"'split' must be positive, got {chunk}")
        count = ceildiv(dim, const(chunk)).value
        sizes = [const(chunk)] * (count - 1) + [dim - const(chunk * (count - 1))]
    else:
        sizes = ctx.dims(1, "split")
    return [Seq(list(split_sizes(ctx, axis, sizes)), ctx.dtype(0))]


@converter("ConcatFromSequence")
def _concat_from_sequence(ctx: NodeContext) -> list[Out]:
    seq = ctx.seq(0)
    if isinstance(seq, SeqList):
        new_axis = bool(ctx.attr("new_axis", 0))
        axis = normalize_axis(ctx.attr("axis"), seq.rank + int(new_axis))
        return [L.concat(ctx, seq, axis, new_axis)]
    if not seq.items:
        raise ConversionError("cannot concatenate an empty sequence")
    values: list[ir.Value] = [ctx.item_value(t) for t in seq.items]
    rank = ctx.item_type(seq.items[0]).ndim
    if ctx.attr("new_axis", 0):
        axis = normalize_axis(ctx.attr("axis"), rank + 1)
        values = [R.expand_dims(v, [axis]) for v in values]
    else:
        axis = normalize_axis(ctx.attr("axis"), rank)
    return [values[0] if len(values) == 1 else R.concat(values, axis)]

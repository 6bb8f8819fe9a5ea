"""Helpers for converters whose shape-deciding inputs are read at run time (axes, Resize's scales)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from mlir import ir

from relax_mlir.dialects import relax as R
from relax_mlir.dialects.dims import product
from relax_mlir.dialects.types import TensorType
from relax_mlir.frontend.onnx.registry import ConversionError, NodeContext, known_dims
from relax_mlir.shape_infer.expr import Expr, format_dim


def static_length(ctx: NodeContext, i: int, what: str) -> int:
    """The static length of 1-D input ``i``."""
    shape = ctx.shape(i)
    if len(shape) != 1 or shape[0] is None or not shape[0].is_const:
        raise ConversionError(
            f"input #{i} ('{what}') is read at run time, so its length must be known at import time; "
            f"it has shape {[str(d) for d in shape]}"
        )
    return shape[0].value


def is_given(ctx: NodeContext, i: int | None) -> bool:
    """True when optional input ``i`` is given and not known to be empty (a run-time input of static length
    0 is as good as absent)."""
    if i is None or not ctx.has(i):
        return False
    return ctx.known(i) is not None or static_length(ctx, i, "input") > 0


def is_runtime(ctx: NodeContext, i: int | None) -> bool:
    """True when optional input ``i`` is given, not empty, and known only at run time."""
    return is_given(ctx, i) and ctx.known(i) is None


def resize_params(
    ctx: NodeContext,
    axes: Sequence[int],
    scales_i: int | None,
    sizes_i: int | None,
    roi_i: int | None,
    crop: bool,
) -> tuple[list[Expr] | None, list[ir.Value]]:
    """Per resized axis, an f64 tensor (scale, roi start, roi end) for ``relax.resize_axis_runtime``, and the
        output sizes when they are computed at run time, bound to fresh symbols: floor(dim * scale) for scales read
    at run time, round(dim * scale) for sizes with a keep_aspect_ratio_policy."""
    n, rank = len(axes), ctx.rank(0)
    sizes = None
    dims = R.astype(ctx.value_of(known_dims([ctx.shape(0)[a] for a in axes])), "f64")
    policy = ctx.attr("keep_aspect_ratio_policy", "stretch")
    if policy != "stretch" and sizes_i is not None and ctx.has(sizes_i) and not is_runtime(ctx, scales_i):
        # one scale for every axis: the min (not_larger) or max (not_smaller) of sizes / dims
        ratios = R.divide(R.astype(ctx.x(sizes_i), "f64"), dims)
        scale = R.min(ratios, [0], True) if policy == "not_larger" else R.max(ratios, [0], True)
        out = R.astype(R.floor(R.add(R.multiply(dims, scale), ctx.constant(0.5, "f64"))), "i64")
        sizes = ctx.importer.runtime_dims(out, f"{ctx.node.output[0]}_sizes")
        scales = R.multiply(scale, ctx.constant(np.ones(n), "f64"))
    elif is_runtime(ctx, scales_i):
        assert scales_i is not None
        if static_length(ctx, scales_i, "scales") != n:
            raise ConversionError(f"'scales' needs {n} values, got {ctx.shape(scales_i)[0]}")
        scales = R.astype(ctx.x(scales_i), "f64")
        out = R.astype(R.floor(R.multiply(dims, scales)), "i64")
        sizes = ctx.importer.runtime_dims(out, f"{ctx.node.output[0]}_sizes")
    elif (
        scales_i is not None
        and ctx.has(scales_i)
        and ctx.const(scales_i) is not None
        and ctx.const(scales_i).size
    ):
        scales = ctx.constant(ctx.const(scales_i).reshape(-1), "f64")
    else:
        scales = ctx.constant(np.zeros(n), "f64")
    if crop:
        assert roi_i is not None
        roi = R.astype(ctx.x(roi_i), "f64")
        length = static_length(ctx, roi_i, "roi")
        if length == 2 * n:
            where = [(j, n + j) for j in range(n)]
        elif length == 2 * rank:
            where = [(a, rank + a) for a in axes]
        else:
            raise ConversionError(f"'roi' needs {2 * n} values, got {length}")
    else:
        roi, where = ctx.constant(np.array([0.0, 1.0]), "f64"), [(0, 1)] * n
    table = R.concat([scales, roi])
    params = [
        R.take(table, ctx.constant(np.array([j, n + s, n + e]), "i64")) for j, (s, e) in enumerate(where)
    ]
    return sizes, params


def checked_axes(ctx: NodeContext, i: int, extra: int = 0) -> tuple[ir.Value, int]:
    """Input ``i``, axes read at run time, as i64 normalized into [0, rank of input 0 + ``extra``) and
    checked at run time (range, no repeats); and their count."""
    length = static_length(ctx, i, "axes")
    rank = ctx.rank(0) + extra
    axes = ctx.x(i) if ctx.dtype(i) == "i64" else R.astype(ctx.x(i), "i64")
    axes = R.check_axes(axes, ctx.x(0), ctx.node.op_type, True, extra)
    axes = R.where(R.less(axes, ctx.scalar_like(0, "i64")), R.add(axes, ctx.scalar_like(rank, "i64")), axes)
    return axes, length


def _mask(axes: ir.Value, length: int, rank: int) -> ir.Value:
    """i64 [rank]: 1 at the positions ``axes`` (normalized, [length]) names, else 0."""
    positions = R.constant(np.arange(rank, dtype=np.int64).reshape(1, rank))
    hits = R.astype(R.equal(R.reshape(axes, [length, 1]), positions), "i64")
    return R.max(hits, [0], False)


def unsqueeze_runtime(ctx: NodeContext) -> ir.Value:
    """Unsqueeze with axes read at run time: the result shape is computed by tensor arithmetic, bound to
    fresh symbols, and the input reshaped to it."""
    n = ctx.rank(0)
    axes, length = checked_axes(ctx, 1, extra=static_length(ctx, 1, "axes"))
    rank = n + length
    mask = _mask(axes, length, rank)
    before = R.subtract(R.constant(np.arange(rank, dtype=np.int64)), R.cumsum(mask, 0))  # input axis
    source = R.minimum(R.maximum(before, ctx.scalar_like(0, "i64")), ctx.scalar_like(max(n - 1, 0), "i64"))
    dims = ctx.value_of(known_dims(list(ctx.shape(0)) or [1]))
    spec = R.where(R.equal(mask, ctx.scalar_like(1, "i64")), ctx.scalar_like(1, "i64"), R.take(dims, source))
    return reshape_runtime(ctx, ctx.x(0), spec)


def squeeze_runtime(ctx: NodeContext) -> ir.Value:
    """Squeeze with axes read at run time: the kept dims are gathered by tensor arithmetic into the result
    shape, bound to fresh symbols (a squeezed dim other than 1 fails the element count check)."""
    n = ctx.rank(0)
    axes, length = checked_axes(ctx, 1)
    if length > n:
        raise ConversionError(f"{length} axes for an input of rank {n}")
    kept = R.subtract(ctx.scalar_like(1, "i64"), _mask(axes, length, n))
    position = R.cumsum(kept, 0, exclusive=True)  # the result axis of each kept input axis
    slots = R.constant(np.arange(n - length, dtype=np.int64).reshape(1, n - length))
    picks = R.multiply(R.astype(R.equal(R.reshape(position, [n, 1]), slots), "i64"), R.reshape(kept, [n, 1]))
    dims = R.reshape(ctx.value_of(known_dims(list(ctx.shape(0)))), [n, 1])
    spec = R.sum(R.multiply(picks, dims), [0], False)
    return reshape_runtime(ctx, ctx.x(0), spec)


def reshape_runtime(ctx: NodeContext, x: ir.Value, spec: ir.Value) -> ir.Value:
    """``x`` reshaped to the 1-D i64 tensor ``spec`` (read at run time into fresh symbols); the element count
    is checked at run time."""
    dims = ctx.importer.runtime_dims(spec, f"{ctx.node.output[0]}_shape")
    flat = R.match_cast(R.reshape(x, [-1]), TensorType((product(dims),), ctx.dtype(0)))
    return R.reshape(flat, [format_dim(d) for d in dims])


def pad_runtime(ctx: NodeContext, mode: str) -> ir.Value:
    """Pad (opset >= 11) with pads, constant_value or axes read at run time: ``relax.pad_runtime``, the pads
    of the given axes scattered into [before0, after0, before1, ...] by tensor arithmetic."""
    rank, dtype = ctx.rank(0), ctx.dtype(0)
    pads = ctx.x(1) if ctx.dtype(1) == "i64" else R.astype(ctx.x(1), "i64")
    if ctx.has(2):  # a scalar (or one value)
        value = R.reshape(ctx.x(2), [])
    else:
        value = ctx.scalar_like(0, dtype)
    if ctx.has(3):
        axes, n = checked_axes(ctx, 3)
        positions = R.constant(np.arange(rank, dtype=np.int64).reshape(1, rank))
        hits = R.astype(R.equal(R.reshape(axes, [n, 1]), positions), "i64")  # [n, rank]
    else:
        n, hits = rank, R.constant(np.eye(rank, dtype=np.int64))
    if static_length(ctx, 1, "pads") != 2 * n:
        raise ConversionError(f"'pads' needs {2 * n} values, got {ctx.shape(1)[0]}")
    halves = R.reshape(pads, [2, n, 1])  # befores, afters
    widths = R.sum(R.multiply(halves, R.reshape(hits, [1, n, rank])), [1], False)  # [2, rank]
    widths = R.reshape(R.permute_dims(widths, [1, 0]), [2 * rank])
    return R.pad_runtime(ctx.x(0), widths, value, mode)


def slice_runtime(ctx: NodeContext) -> ir.Value:
    """Slice (opset >= 10) whose axes or steps are read at run time: ``relax.slice_runtime``."""
    n = static_length(ctx, 1, "starts")

    def operand(i: int, default: np.ndarray) -> ir.Value:
        if not ctx.has(i):
            return R.constant(default)
        return ctx.x(i) if ctx.dtype(i) == "i64" else R.astype(ctx.x(i), "i64")

    axes = checked_axes(ctx, 3)[0] if ctx.has(3) else R.constant(np.arange(n, dtype=np.int64))
    steps = operand(4, np.ones(n, np.int64))
    if ctx.has(4):  # ONNX forbids a step of 0
        zero = R.constant(np.array(0, np.int64))
        nonzero = R.greater(R.min(R.astype(R.not_equal(steps, zero), "i64")), zero)
        steps = R.check_true(steps, nonzero, "a step is 0 (steps must be nonzero)", "Slice")
    return R.slice_runtime(ctx.x(0), operand(1, None), operand(2, None), axes, steps)

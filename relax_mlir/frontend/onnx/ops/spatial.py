"""Padding and data rearrangement ONNX ops: Pad, CenterCropPad, DepthToSpace, SpaceToDepth."""

from __future__ import annotations

import numpy as np
from mlir import ir

from relax_mlir.dialects import relax as R
from relax_mlir.dialects.dims import normalize_axis
from relax_mlir.frontend.onnx.ops.runtime_inputs import is_runtime, pad_runtime
from relax_mlir.frontend.onnx.ops.windows import (
    dims_of,
    reshape_to,
    static_dim,
)
from relax_mlir.frontend.onnx.registry import (
    RELAX_TO_NUMPY,
    ConversionError,
    NodeContext,
    Out,
    converter,
    known_dims,
)
from relax_mlir.shape_infer.expr import format_dim

# -- Pad, CenterCropPad, DepthToSpace, SpaceToDepth -----------------------------------------------------


@converter("Pad")
def _pad(ctx: NodeContext) -> list[Out]:
    rank = ctx.rank(0)
    mode = ctx.attr("mode", "constant")
    if mode not in ("constant", "reflect", "edge", "wrap"):
        raise ConversionError(f"attribute 'mode' value '{mode}' is not supported")
    if ctx.opset < 11:
        pads = [int(p) for p in ctx.attr("pads")]
        value = float(ctx.attr("value", 0.0))
        axes = list(range(rank))
    elif any(is_runtime(ctx, i) for i in (1, 2, 3)):
        return [pad_runtime(ctx, mode)]
    else:
        pads = [int(p) for p in ctx.require_const(1, "pads").reshape(-1)]
        value = 0.0
        if ctx.has(2):
            v = ctx.require_const(2, "constant_value").reshape(-1)
            value = float(v[0]) if v.size else 0.0
        if ctx.has(3):
            axes = [normalize_axis(int(a), rank) for a in ctx.require_const(3, "axes").reshape(-1)]
        else:
            axes = list(range(rank))
    n = len(axes)
    if len(pads) != 2 * n:
        raise ConversionError(f"'pads' needs {2 * n} values, got {pads}")
    widths = [0] * (2 * rank)
    for i, a in enumerate(axes):
        widths[2 * a], widths[2 * a + 1] = pads[i], pads[n + i]
    return [R.pad(ctx.x(0), widths, mode, value)]


@converter("CenterCropPad")
def _center_crop_pad(ctx: NodeContext) -> list[Out]:
    x = ctx.x(0)
    rank = ctx.rank(0)
    axes = [normalize_axis(int(a), rank) for a in ctx.attr("axes", list(range(rank)))]
    if ctx.const(1) is None or any(not dims_of(x)[a].is_const for a in axes):
        return [_center_crop_pad_at_run_time(ctx, axes)]
    target = [int(v) for v in ctx.require_const(1, "shape").reshape(-1)]
    shape = dims_of(x)
    widths = [0] * (2 * rank)
    for a, t in zip(axes, target):
        size = static_dim(shape[a], "CenterCropPad")
        if size > t:  # crop: start at (size - t) // 2
            start = (size - t) // 2
            x = R.strided_slice(x, [a], [start], [start + t], [1])
        elif size < t:  # pad: (t - size) // 2 before
            before = (t - size) // 2
            widths[2 * a], widths[2 * a + 1] = before, t - size - before
    if any(widths):
        x = R.pad(x, widths)
    return [x]


def _center_crop_pad_at_run_time(ctx: NodeContext, axes: list[int]) -> ir.Value:
    """CenterCropPad whose target sizes (or input sizes) are known only at run time: per axis, output
    position o reads input position o + offset (offset = (size - t) // 2 when cropping, -((t - size) // 2)
    when padding), and is 0 where that falls outside the input."""
    x = ctx.x(0)
    dtype = ctx.dtype(0)
    targets = ctx.dims(1, "shape")
    if len(targets) != len(axes):
        raise ConversionError(f"'shape' has {len(targets)} entries for {len(axes)} axes")
    zero_i, two = R.constant(np.array(0, np.int64)), R.constant(np.array(2, np.int64))
    for a, t in zip(axes, targets):
        size, want = (ctx.value_of(known_dims([d], shape=())) for d in (dims_of(x)[a], t))
        offset = R.where(
            R.greater(size, want),
            R.floor_divide(R.subtract(size, want), two),
            R.neg(R.floor_divide(R.subtract(want, size), two)),
        )
        pos = R.add(R.arange(0, format_dim(t), 1, "i64"), offset)
        inside = R.logical_and(R.greater_equal(pos, zero_i), R.less(pos, size))
        picked = R.take(x, R.where(inside, pos, zero_i), a)
        mask = R.reshape(inside, [format_dim(t) if j == a else 1 for j in range(ctx.rank(0))])
        x = R.where(mask, picked, R.constant(np.zeros((), RELAX_TO_NUMPY[dtype])))
    return x


@converter("DepthToSpace")
def _depth_to_space(ctx: NodeContext) -> list[Out]:
    x = ctx.x(0)
    b = int(ctx.attr("blocksize"))
    mode = ctx.attr("mode", "DCR")
    n, c, h, w = dims_of(x)
    cb = c // (b * b)
    if mode == "DCR":
        y = reshape_to(x, [n, b, b, cb, h, w])
        y = R.permute_dims(y, [0, 3, 4, 1, 5, 2])
    elif mode == "CRD":
        y = reshape_to(x, [n, cb, b, b, h, w])
        y = R.permute_dims(y, [0, 1, 4, 2, 5, 3])
    else:
        raise ConversionError(f"attribute 'mode' value '{mode}' is not supported")
    return [reshape_to(y, [n, cb, h * b, w * b])]


@converter("SpaceToDepth")
def _space_to_depth(ctx: NodeContext) -> list[Out]:
    x = ctx.x(0)
    b = int(ctx.attr("blocksize"))
    mode = ctx.attr("mode", "DCR")
    n, c, h, w = dims_of(x)
    y = reshape_to(x, [n, c, h // b, b, w // b, b])
    if mode == "DCR":
        y = R.permute_dims(y, [0, 3, 5, 1, 2, 4])
    elif mode == "CRD":
        y = R.permute_dims(y, [0, 1, 3, 5, 2, 4])
    else:
        raise ConversionError(f"attribute 'mode' value '{mode}' is not supported")
    return [reshape_to(y, [n, c * b * b, h // b, w // b])]

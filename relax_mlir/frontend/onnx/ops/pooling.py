"""Pooling ONNX ops: MaxPool (with indices), AveragePool, LpPool, the global pools and LRN.

1-D windows run as 2-D ones over a unit height; 3-D max/average pooling is separable (pool along depth, then
over height and width); LpPool is a depthwise convolution with a kernel of ones.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from mlir import ir

from relax_mlir.dialects import relax as R
from relax_mlir.frontend.onnx.ops.nn import conv_nd
from relax_mlir.frontend.onnx.ops.windows import (
    dims_of,
    kernel_attrs,
    reshape_to,
    spell,
    static_dim,
    window_pads,
)
from relax_mlir.frontend.onnx.registry import (
    ConversionError,
    NodeContext,
    Out,
    converter,
)
from relax_mlir.shape_infer.expr import const

# -- pooling ------------------------------------------------------------------------------------------


def _pool_params(ctx: NodeContext, x: ir.Value) -> tuple[list[int], list[int], list[int], list[int]]:
    kernel = [int(k) for k in ctx.attr("kernel_shape")]
    n = len(kernel)
    strides, dilations = kernel_attrs(ctx, n, kernel)
    pads = window_pads(ctx, dims_of(x)[2:], kernel, strides, dilations)
    return kernel, strides, pads, dilations


def _pool2d(kind: str, x: ir.Value, kernel, strides, pads, dilations, ceil: bool, include: bool) -> ir.Value:
    if kind == "max":
        return R.max_pool2d(x, kernel, strides, pads, dilations, ceil)
    return R.avg_pool2d(x, kernel, strides, pads, dilations, ceil, include)


def pool_nd(
    kind: str,
    x: ir.Value,
    kernel: Sequence[int],
    strides: Sequence[int],
    pads: Sequence[int],
    dilations: Sequence[int],
    ceil: bool,
    include: bool = False,
) -> ir.Value:
    """Max or average pooling over 1, 2 or 3 spatial dims with the relax 2-D poolings."""
    n = len(kernel)
    shape = dims_of(x)
    if n == 1:
        y = _pool2d(
            kind,
            R.expand_dims(x, [2]),
            [1, kernel[0]],
            [1, strides[0]],
            [0, pads[0], 0, pads[1]],
            [1, dilations[0]],
            ceil,
            include,
        )
        return R.squeeze(y, [2])
    if n == 2:
        return _pool2d(kind, x, kernel, strides, pads, dilations, ceil, include)
    if n != 3:
        raise ConversionError(f"{n}-D pooling is not supported")
    # Separable: pool along depth (windows are boxes; max and sums/counts factor by axis).
    nb, c, d, h, w = shape
    y = _pool2d(
        kind,
        reshape_to(x, [nb, c, d, h * w]),
        [kernel[0], 1],
        [strides[0], 1],
        [pads[0], 0, pads[3], 0],
        [dilations[0], 1],
        ceil,
        include,
    )
    od = dims_of(y)[2]
    y = _pool2d(
        kind,
        reshape_to(y, [nb, c * od, h, w]),
        kernel[1:],
        strides[1:],
        [pads[1], pads[2], pads[4], pads[5]],
        dilations[1:],
        ceil,
        include,
    )
    oh, ow = dims_of(y)[2:]
    return reshape_to(y, [nb, c, od, oh, ow])


@converter("MaxPool")
def _max_pool(ctx: NodeContext) -> list[Out]:
    x = ctx.x(0)
    order = ctx.attr("storage_order", 0)
    if order not in (0, 1):
        raise ConversionError(f"attribute 'storage_order' value {order} is not supported")
    kernel, strides, pads, dilations = _pool_params(ctx, x)
    ceil = bool(ctx.attr("ceil_mode", 0))
    y = pool_nd("max", x, kernel, strides, pads, dilations, ceil)
    if len(ctx.node.output) < 2 or not ctx.node.output[1]:
        return [y]
    return [y, _max_pool_indices(ctx, x, y, kernel, strides, pads, dilations, order)]


def _max_pool_indices(
    ctx: NodeContext,
    x: ir.Value,
    y: ir.Value,
    kernel: Sequence[int],
    strides: Sequence[int],
    pads: Sequence[int],
    dilations: Sequence[int],
    order: int,
) -> ir.Value:
    """MaxPool's Indices: scan the window taps in order and keep the first maximum's flat index
    (row-major over the whole input; with ``storage_order`` 1 the spatial dims count column-major)."""
    if ctx.dtype(0) not in ("f16", "f32", "f64"):
        raise ConversionError(f"MaxPool's 'Indices' output needs a float input, got {ctx.dtype(0)}")
    shape = [static_dim(d, "MaxPool's 'Indices' output") for d in dims_of(x)]
    out = [static_dim(d, "MaxPool's 'Indices' output") for d in dims_of(y)]
    n = len(kernel)
    sp, osp = shape[2:], out[2:]
    # Pad with -inf so that every tap of every window reads inside the padded input.
    widths = [0, 0, 0, 0]
    for i in range(n):
        reach = (osp[i] - 1) * strides[i] + (kernel[i] - 1) * dilations[i] + 1
        widths += [pads[i], max(0, reach - sp[i] - pads[i])]
    xp = R.pad(x, widths, "constant", float("-inf"))
    # Flat index of each input position (before padding), for every (n, c).
    nc = np.arange(shape[0] * shape[1]).reshape(shape[0], shape[1], *([1] * n)) * int(np.prod(sp))
    strides_flat = (
        [int(np.prod(sp[i + 1 :])) for i in range(n)]
        if order == 0
        else [int(np.prod(sp[:i])) for i in range(n)]
    )
    best_v, best_i = None, None
    for tap in np.ndindex(*kernel):
        starts = [t * d for t, d in zip(tap, dilations)]
        ends = [st + (o - 1) * s + 1 for st, o, s in zip(starts, osp, strides)]
        v = R.strided_slice(xp, list(range(2, 2 + n)), starts, ends, list(strides))
        # Input position of this tap in every window (may lie in the padding: never the maximum).
        positions = [np.arange(o) * s + st - p for o, s, st, p in zip(osp, strides, starts, pads[:n])]
        mesh = np.meshgrid(*positions, indexing="ij")
        flat = sum(m * f for m, f in zip(mesh, strides_flat))
        idx = ctx.constant(nc + np.asarray(flat)[None, None], "i64")
        if best_v is None:
            best_v, best_i = v, R.broadcast_to(idx, spell(out))
            continue
        better = R.greater(v, best_v)
        best_v, best_i = R.where(better, v, best_v), R.where(better, idx, best_i)
    assert best_i is not None
    return best_i


@converter("AveragePool")
def _avg_pool(ctx: NodeContext) -> list[Out]:
    x = ctx.x(0)
    kernel, strides, pads, dilations = _pool_params(ctx, x)
    include = bool(ctx.attr("count_include_pad", 0))
    return [pool_nd("avg", x, kernel, strides, pads, dilations, bool(ctx.attr("ceil_mode", 0)), include)]


def _pow(ctx: NodeContext, x: ir.Value, p: float) -> ir.Value:
    if p == 1:
        return R.abs(x)
    if p == 2:
        return R.multiply(x, x)
    return R.power(R.abs(x), ctx.scalar_like(p, ctx.dtype(0)))


def _root(ctx: NodeContext, x: ir.Value, p: float) -> ir.Value:
    if p == 1:
        return x
    if p == 2:
        return R.sqrt(x)
    return R.power(x, ctx.scalar_like(1.0 / p, ctx.dtype(0)))


@converter("LpPool")
def _lp_pool(ctx: NodeContext) -> list[Out]:
    x = ctx.x(0)
    if ctx.attr("ceil_mode", 0):
        raise ConversionError("attribute 'ceil_mode' value 1 is not supported for LpPool")
    kernel, strides, pads, dilations = _pool_params(ctx, x)
    p = float(ctx.attr("p", 2))
    c = static_dim(dims_of(x)[1], "LpPool's channels")
    ones = ctx.constant(np.ones((c, 1, *kernel)), ctx.dtype(0))
    s = conv_nd(_pow(ctx, x, p), ones, strides, pads, dilations, c)
    return [_root(ctx, s, p)]


@converter("GlobalAveragePool", "GlobalMaxPool", "GlobalLpPool")
def _global_pool(ctx: NodeContext) -> list[Out]:
    x = ctx.x(0)
    axes = list(range(2, ctx.rank(0)))
    op = ctx.node.op_type
    if op == "GlobalAveragePool":
        return [R.mean(x, axes, keepdims=True)]
    if op == "GlobalMaxPool":
        return [R.max(x, axes, keepdims=True)]
    p = float(ctx.attr("p", 2))
    return [_root(ctx, R.sum(_pow(ctx, x, p), axes, keepdims=True), p)]


@converter("LRN")
def _lrn(ctx: NodeContext) -> list[Out]:
    x = ctx.x(0)
    dtype = ctx.dtype(0)
    size = int(ctx.attr("size"))
    alpha, beta, bias = (
        float(ctx.attr("alpha", 1e-4)),
        float(ctx.attr("beta", 0.75)),
        float(ctx.attr("bias", 1.0)),
    )
    shape = dims_of(x)
    rest = const(1)
    for d in shape[2:]:
        rest = rest * d
    sq = reshape_to(R.multiply(x, x), [shape[0], 1, shape[1], rest])
    before, after = (size - 1) // 2, size - 1 - (size - 1) // 2
    avg = R.avg_pool2d(sq, [size, 1], [1, 1], [before, 0, after, 0], 1, False, True)
    avg = reshape_to(avg, shape)
    scale = R.add(ctx.scalar_like(bias, dtype), R.multiply(avg, ctx.scalar_like(alpha, dtype)))
    return [R.divide(x, R.power(scale, ctx.scalar_like(beta, dtype)))]

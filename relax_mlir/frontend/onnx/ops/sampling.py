"""Grid and sampling ONNX ops: AffineGrid, MaxUnpool, Col2Im, GridSample, RoiAlign."""

from __future__ import annotations

import numpy as np
from mlir import ir

from relax_mlir.dialects import relax as R
from relax_mlir.dialects.dims import product
from relax_mlir.frontend.onnx.ops.windows import (
    dims_of,
    int_list,
    reshape_to,
    spell,
    static_dim,
    stuff,
)
from relax_mlir.frontend.onnx.registry import (
    ConversionError,
    NodeContext,
    Out,
    converter,
    known_dims,
)
from relax_mlir.shape_infer.expr import const, format_dim

# -- AffineGrid, MaxUnpool, Col2Im --------------------------------------------------------------------


def _base_coords(n: int, align: bool) -> np.ndarray:
    """AffineGrid's normalized coordinates of ``n`` positions in [-1, 1]."""
    if align:
        return np.linspace(-1.0, 1.0, n)  # one position: -1, as ONNX's reference and onnxruntime
    return (2.0 * np.arange(n) + 1.0) / n - 1.0


def _affine_grid_runtime(ctx: NodeContext, theta: ir.Value, align: bool) -> ir.Value:
    """AffineGrid with ``size`` read at run time: its dims bound to symbols, the base grid built from aranges."""
    dims = ctx.dims(1, "size")
    spatial, dtype = dims[2:], ctx.dtype(0)
    if len(spatial) not in (2, 3):
        raise ConversionError(f"'size' needs 4 or 5 values, got {len(dims)}")
    full = [format_dim(d) for d in spatial]
    coords = []  # x, y[, z]: varying along W, H[, D]
    for axis in reversed(range(len(spatial))):
        n = spatial[axis]
        i = R.astype(R.arange(0, format_dim(n), 1, "i64"), dtype)
        count = R.astype(ctx.value_of(known_dims([n], shape=())), dtype)
        one, two = ctx.scalar_like(1, dtype), ctx.scalar_like(2, dtype)
        if align:
            c = R.subtract(R.divide(R.multiply(i, two), R.maximum(R.subtract(count, one), one)), one)
        else:
            c = R.subtract(R.divide(R.add(R.multiply(i, two), one), count), one)
        shape = [1] * len(spatial)
        shape[axis] = full[axis]
        coords.append(R.reshape(R.broadcast_to(R.reshape(c, shape), full), [-1, 1]))
    ones = R.full([format_dim(product(spatial)), 1], 1.0, dtype)
    base = R.reshape(R.concat([*coords, ones], 1), [1, -1, len(spatial) + 1])
    batch = R.broadcast_to(
        base, [format_dim(dims_of(theta)[0]), format_dim(product(spatial)), len(spatial) + 1]
    )
    grid = R.matmul(batch, R.permute_dims(theta, [0, 2, 1]))
    return reshape_to(grid, [dims_of(theta)[0], *spatial, len(spatial)])


@converter("AffineGrid")
def _affine_grid(ctx: NodeContext) -> list[Out]:
    theta = ctx.x(0)
    align = bool(ctx.attr("align_corners", 0))
    if ctx.const(1) is None:
        return [_affine_grid_runtime(ctx, theta, align)]
    size = [int(v) for v in ctx.require_const(1, "size").reshape(-1)]
    spatial = size[2:]
    if len(spatial) not in (2, 3):
        raise ConversionError(f"'size' needs 4 or 5 values, got {size}")
    # Base grid points (x, y[, z], 1), x varying fastest (along W).
    axes = [_base_coords(s, align) for s in reversed(spatial)]  # x, y[, z]
    mesh = np.meshgrid(*axes[::-1], indexing="ij")  # over (D,) H, W
    points = np.stack([*(m.reshape(-1) for m in mesh[::-1]), np.ones(mesh[0].size)], axis=-1)
    base = ctx.constant(points[None], ctx.dtype(0))
    grid = R.matmul(base, R.permute_dims(theta, [0, 2, 1]))  # (N, points, dims)
    return [reshape_to(grid, [dims_of(theta)[0], *spatial, len(spatial)])]


@converter("MaxUnpool")
def _max_unpool(ctx: NodeContext) -> list[Out]:
    x, idx = ctx.x(0), ctx.x(1)
    shape = dims_of(x)
    kernel = [int(k) for k in ctx.attr("kernel_shape")]
    n = len(kernel)
    strides = int_list(ctx.attr("strides"), n, 1, "strides")
    pads = int_list(ctx.attr("pads"), 2 * n, 0, "pads")
    out = [
        *shape[:2],
        *(
            (d - 1) * s + k - pads[i] - pads[n + i]
            for i, (d, s, k) in enumerate(zip(shape[2:], strides, kernel))
        ),
    ]
    # Indices address the default unpooled shape; a larger output_shape pads each spatial dim at its end.
    extra = [0] * (2 * len(out))
    if ctx.has(2) and ctx.const(2) is None:  # read at run time: pad each dim at its end by the difference
        target = ctx.x(2) if ctx.dtype(2) == "i64" else R.astype(ctx.x(2), "i64")
        grow = R.subtract(target, ctx.value_of(known_dims(out)))
        widths = R.concat([ctx.constant(np.zeros(len(out)), "i64"), grow])
        widths = R.reshape(R.permute_dims(R.reshape(widths, [2, len(out)]), [1, 0]), [2 * len(out)])
        flat = R.scatter_elements(
            R.full(spell([product(out)]), 0.0, ctx.dtype(0)), R.flatten(idx), R.flatten(x), 0
        )
        return [R.pad_runtime(reshape_to(flat, out), widths, ctx.scalar_like(0, ctx.dtype(0)))]
    if ctx.has(2):
        target = [int(v) for v in ctx.require_const(2, "output_shape").reshape(-1)]
        for i, (d, t) in enumerate(zip(out, target)):
            extra[2 * i + 1] = t - static_dim(d, "MaxUnpool with output_shape")
    total = const(1)
    for d in out:
        total = total * d
    zeros = R.full(spell([total]), 0.0, ctx.dtype(0))
    flat = R.scatter_elements(zeros, R.flatten(idx), R.flatten(x), 0)
    y = reshape_to(flat, out)
    return [R.pad(y, extra) if any(extra) else y]


@converter("Col2Im")
def _col2im(ctx: NodeContext) -> list[Out]:
    x = ctx.x(0)
    if ctx.const(1) is None or ctx.const(2) is None:  # read at run time
        n = ctx.shape(1)[0]
        if n is None or not n.is_const:
            raise ConversionError("the length of 'image_shape' must be known at import time")
        image, block = (ctx.x(i) if ctx.dtype(i) == "i64" else R.astype(ctx.x(i), "i64") for i in (1, 2))
        dilations = int_list(ctx.attr("dilations"), n.value, 1, "dilations")
        strides = int_list(ctx.attr("strides"), n.value, 1, "strides")
        pads = int_list(ctx.attr("pads"), 2 * n.value, 0, "pads")
        return [R.col2im_runtime(x, image, block, dilations, pads, strides)]
    image = [int(v) for v in ctx.require_const(1, "image_shape").reshape(-1)]
    block = [int(v) for v in ctx.require_const(2, "block_shape").reshape(-1)]
    n = len(image)
    dilations = int_list(ctx.attr("dilations"), n, 1, "dilations")
    strides = int_list(ctx.attr("strides"), n, 1, "strides")
    pads = int_list(ctx.attr("pads"), 2 * n, 0, "pads")
    nb, ck, _ = dims_of(x)
    taps = int(np.prod(block))
    c = ck // taps
    counts = [
        (image[i] + pads[i] + pads[n + i] - dilations[i] * (block[i] - 1) - 1) // strides[i] + 1
        for i in range(n)
    ]
    cols = reshape_to(x, [nb, c, *block, *counts])
    padded = [image[i] + pads[i] + pads[n + i] for i in range(n)]
    total = None
    for offset in np.ndindex(*block):
        starts = [[o] for o in offset]
        part = R.strided_slice(
            cols, list(range(2, 2 + n)), [o[0] for o in starts], [o[0] + 1 for o in starts]
        )
        part = reshape_to(part, [nb, c, *counts])
        for axis in range(n):
            part = stuff(part, 2 + axis, strides[axis])
        widths = [0, 0, 0, 0]
        for i in range(n):
            before = offset[i] * dilations[i]
            length = (counts[i] - 1) * strides[i] + 1
            widths += [before, padded[i] - before - length]
        part = R.pad(part, widths)
        total = part if total is None else R.add(total, part)
    assert total is not None
    crop = [0, 0, 0, 0]
    for i in range(n):
        crop += [-pads[i], -pads[n + i]]
    return [R.pad(total, crop)]


# -- GridSample -------------------------------------------------------------------------------------


def _gs_reflect(ctx: NodeContext, v: ir.Value, lo: float, hi: float) -> ir.Value:
    """Reflect ``v`` by the near border until inside [lo, hi] (ONNX GridSample's reflection)."""
    dtype = ctx.dtype(0)

    def c(value: float) -> ir.Value:
        return ctx.scalar_like(value, dtype)

    span = hi - lo
    if span <= 0:
        return R.multiply(v, c(0.0)) if lo == 0 else R.add(R.multiply(v, c(0.0)), c(lo))

    def fold(dx: ir.Value, near: float, far: float, sign: float) -> ir.Value:
        n = R.floor(R.divide(dx, c(span)))
        r = R.subtract(dx, R.multiply(n, c(span)))
        even = R.equal(R.multiply(R.floor(R.divide(n, c(2.0))), c(2.0)), n)
        return R.where(even, R.add(c(near), R.multiply(r, c(sign))), R.add(c(far), R.multiply(r, c(-sign))))

    below = fold(R.subtract(c(lo), v), lo, hi, 1.0)
    above = fold(R.subtract(v, c(hi)), hi, lo, -1.0)
    return R.where(R.less(v, c(lo)), below, R.where(R.greater(v, c(hi)), above, v))


@converter("GridSample")
def _grid_sample(ctx: NodeContext) -> list[Out]:
    """Per spatial axis: the taps' indices and weights as (N, taps, points) tensors; the taps of all
    axes combine by broadcasting, then one gather reads every tap of every point."""
    x, grid = ctx.x(0), ctx.x(1)
    dtype = ctx.dtype(0)
    mode = ctx.attr("mode", "linear" if ctx.opset >= 20 else "bilinear")
    mode = {"bilinear": "linear", "bicubic": "cubic"}.get(mode, mode)
    padding = ctx.attr("padding_mode", "zeros")
    align = bool(ctx.attr("align_corners", 0))
    if mode not in ("nearest", "linear", "cubic"):
        raise ConversionError(f"attribute 'mode' value '{mode}' is not supported")
    if padding not in ("zeros", "border", "reflection"):
        raise ConversionError(f"attribute 'padding_mode' value '{padding}' is not supported")
    xshape, gshape = dims_of(x), dims_of(grid)
    r = len(xshape) - 2
    dims = [static_dim(d, "GridSample's input spatial dims") for d in xshape[2:]]
    nb, ch = xshape[:2]
    out_sp = gshape[1:-1]
    points = const(1)
    for d in out_sp:
        points = points * d
    offsets = {"nearest": [0.0], "linear": [0.0, 1.0], "cubic": [-1.0, 0.0, 1.0, 2.0]}[mode]
    taps = len(offsets)
    off = ctx.constant(np.array(offsets).reshape(1, taps, 1), dtype)

    def c(value: float) -> ir.Value:
        return ctx.scalar_like(value, dtype)

    flat_grid = reshape_to(grid, [nb, points, r])
    lin, weight, mask = None, None, None
    strides = [int(np.prod(dims[i + 1 :])) for i in range(r)]
    for i, size in enumerate(dims):
        g = reshape_to(R.strided_slice(flat_grid, [2], [r - 1 - i], [r - i]), [nb, 1, points])
        if align:
            v = R.multiply(R.add(g, c(1.0)), c((size - 1) / 2.0))
        else:
            v = R.divide(R.subtract(R.multiply(R.add(g, c(1.0)), c(float(size))), c(1.0)), c(2.0))
        if mode == "nearest":
            v = R.round(v)
        lo, hi = (0.0, size - 1.0) if align else (-0.5, size - 0.5)
        if padding == "border":
            outside = R.logical_or(R.less(v, c(lo)), R.greater(v, c(hi)))
            v = R.where(outside, R.clip(v, 0.0, float(size - 1)), v)
        elif padding == "reflection":
            v = _gs_reflect(ctx, v, lo, hi)
        base = v if mode == "nearest" else R.floor(v)
        pos = R.add(base, off)  # (N, taps, points)
        w = None
        if mode != "nearest":
            d = R.abs(R.subtract(off, R.subtract(v, base)))
            if mode == "linear":
                w = R.subtract(c(1.0), d)
            else:
                a = -0.75
                near = R.add(
                    R.multiply(R.multiply(R.subtract(R.multiply(c(a + 2), d), c(a + 3)), d), d), c(1.0)
                )
                inner = R.add(R.multiply(R.subtract(R.multiply(c(a), d), c(5 * a)), d), c(8 * a))
                far = R.subtract(R.multiply(inner, d), c(4 * a))
                w = R.where(R.less_equal(d, c(1.0)), near, far)
        if padding == "reflection":
            pos = _gs_reflect(ctx, pos, lo, hi)
        m = None
        if padding == "zeros":
            m = R.logical_and(R.greater_equal(pos, c(0.0)), R.less(pos, c(float(size))))
        idx = R.astype(R.clip(pos, 0.0, float(size - 1)), "i64")
        # Put this axis' taps on their own axis: (N, 1.., taps, ..1, points).
        view = [nb, *([1] * i), taps, *([1] * (r - 1 - i)), points]
        term = reshape_to(idx, view)
        if strides[i] != 1:
            term = R.multiply(term, ctx.scalar_like(strides[i], "i64"))
        lin = term if lin is None else R.add(lin, term)
        if w is not None:
            w = reshape_to(w, view)
            weight = w if weight is None else R.multiply(weight, w)
        if m is not None:
            m = reshape_to(m, view)
            mask = m if mask is None else R.logical_and(mask, m)
    assert lin is not None
    combos = taps**r
    total_taps = points * combos
    idx = R.broadcast_to(reshape_to(lin, [nb, 1, total_taps]), spell([nb, ch, total_taps]))
    vals = reshape_to(
        R.gather_elements(reshape_to(x, [nb, ch, int(np.prod(dims))]), idx, 2), [nb, ch, combos, points]
    )
    if mask is not None:
        m = R.astype(mask, dtype)
        weight = m if weight is None else R.multiply(weight, m)
    if weight is not None:
        vals = R.multiply(vals, reshape_to(weight, [nb, 1, combos, points]))
    y = R.sum(vals, [2]) if combos > 1 else reshape_to(vals, [nb, ch, points])
    return [reshape_to(y, [nb, ch, *out_sp])]


# -- RoiAlign -----------------------------------------------------------------------------------------


@converter("RoiAlign")
def _roi_align(ctx: NodeContext) -> list[Out]:
    """Bilinear samples on a ``sampling_ratio`` x ``sampling_ratio`` grid per output bin, as separable
    per-axis (low, high, weight) tensors; one gather per corner reads every sample of every roi."""
    x, rois, batch = ctx.x(0), ctx.x(1), ctx.x(2)
    dtype = ctx.dtype(0)
    mode = ctx.attr("mode", "avg")
    if mode not in ("avg", "max"):
        raise ConversionError(f"attribute 'mode' value '{mode}' is not supported")
    coord = ctx.attr(
        "coordinate_transformation_mode", "half_pixel" if ctx.opset >= 16 else "output_half_pixel"
    )
    if coord not in ("half_pixel", "output_half_pixel"):
        raise ConversionError(f"attribute 'coordinate_transformation_mode' value '{coord}' is not supported")
    ratio = int(ctx.attr("sampling_ratio", 0))
    if ratio <= 0:
        raise ConversionError(f"attribute 'sampling_ratio' value {ratio} (adaptive) is not supported")
    out_h, out_w = int(ctx.attr("output_height", 1)), int(ctx.attr("output_width", 1))
    scale = float(ctx.attr("spatial_scale", 1.0))
    nb, ch, h, w = dims_of(x)
    hs, ws = static_dim(h, "RoiAlign's input height"), static_dim(w, "RoiAlign's input width")
    nr = dims_of(rois)[0]
    offset = 0.5 if coord == "half_pixel" else 0.0

    def c(value: float) -> ir.Value:
        return ctx.scalar_like(value, dtype)

    def corner(i: int) -> ir.Value:
        v = R.strided_slice(rois, [1], [i], [i + 1])  # (R, 1)
        return R.subtract(R.multiply(v, c(scale)), c(offset))

    def axis(
        start: ir.Value, end: ir.Value, bins: int, size: int
    ) -> tuple[list[ir.Value], list[ir.Value], ir.Value]:
        """Per sample along one axis: (low, high) indices, their weights, and the in-range mask."""
        extent = R.subtract(end, start)
        if coord == "output_half_pixel":
            extent = R.maximum(extent, c(1.0))
        bin_size = R.divide(extent, c(float(bins)))
        steps = np.array([p + (i + 0.5) / ratio for p in range(bins) for i in range(ratio)])
        v = R.add(start, R.multiply(bin_size, ctx.constant(steps[None], dtype)))  # (R, bins * ratio)
        valid = R.logical_and(R.greater_equal(v, c(-1.0)), R.less_equal(v, c(float(size))))
        v = R.maximum(v, c(0.0))
        low = R.floor(v)
        edge = R.greater_equal(low, c(float(size - 1)))
        low = R.where(edge, c(float(size - 1)), low)
        high = R.where(edge, low, R.add(low, c(1.0)))
        v = R.where(edge, low, v)
        frac = R.subtract(v, low)
        return [low, high], [R.subtract(c(1.0), frac), frac], valid

    ys, wys, vy = axis(corner(1), corner(3), out_h, hs)
    xs, wxs, vx = axis(corner(0), corner(2), out_w, ws)
    sy, sx = out_h * ratio, out_w * ratio
    valid = R.astype(R.logical_and(R.expand_dims(vy, [2]), R.expand_dims(vx, [1])), dtype)  # (R, sy, sx)
    data = R.take(reshape_to(x, [nb, ch, hs * ws]), batch, 0)  # (R, C, H*W)
    total = None
    for yi, wy in zip(ys, wys):
        for xi, wx in zip(xs, wxs):
            pos = R.add(R.multiply(R.expand_dims(yi, [2]), c(float(ws))), R.expand_dims(xi, [1]))
            idx = R.broadcast_to(reshape_to(R.astype(pos, "i64"), [nr, 1, sy * sx]), spell([nr, ch, sy * sx]))
            weight = R.multiply(R.multiply(R.expand_dims(wy, [2]), R.expand_dims(wx, [1])), valid)
            vals = R.multiply(
                reshape_to(R.gather_elements(data, idx, 2), [nr, ch, sy, sx]), R.expand_dims(weight, [1])
            )
            if total is None:
                total = vals
            else:
                total = R.add(total, vals) if mode == "avg" else R.maximum(total, vals)
    assert total is not None
    bins = reshape_to(total, [nr, ch, out_h, ratio, out_w, ratio])
    if mode == "avg":
        return [R.divide(R.sum(bins, [3, 5]), c(float(ratio * ratio)))]
    return [R.max(bins, [3, 5])]

"""Neural-network ONNX ops: MatMul, Gemm and the convolutions (Conv, ConvTranspose, DeformConv).

1-D convolutions run as 2-D ones over a unit height; 3-D convolutions are a sum over the depth taps of 2-D
convolutions; ConvTranspose is a convolution over the zero-stuffed input with the flipped, transposed kernel.
Pooling is in ``pooling.py``, Pad and data rearrangement in ``spatial.py``, Resize in ``resize.py``, grids and
sampling in ``sampling.py``.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from mlir import ir

from relax_mlir.dialects import relax as R
from relax_mlir.dialects.types import TensorType, relax_type
from relax_mlir.frontend.onnx.ops.windows import (
    BIG,
    dims_of,
    int_list,
    kernel_attrs,
    reshape_to,
    spell,
    static_dim,
    stuff,
    window_pads,
)
from relax_mlir.frontend.onnx.registry import (
    ConversionError,
    NodeContext,
    Out,
    converter,
)
from relax_mlir.shape_infer.expr import format_dim

# -- MatMul, Gemm -------------------------------------------------------------------------------------


@converter("MatMul")
def _matmul(ctx: NodeContext) -> list[Out]:
    return [matmul_wide(ctx.x(0), ctx.x(1), ctx.dtype(0))]


def matmul_wide(a: ir.Value, b: ir.Value, dtype: str) -> ir.Value:
    """``a @ b``, accumulated in f32 for f16/bf16 (as numpy and onnxruntime do), then rounded once."""
    if dtype not in ("f16", "bf16"):
        return R.matmul(a, b)
    return R.astype(R.matmul(R.astype(a, "f32"), R.astype(b, "f32")), dtype)


@converter("Gemm")
def _gemm(ctx: NodeContext) -> list[Out]:
    a, b = ctx.x(0), ctx.x(1)
    dtype = ctx.dtype(0)
    if ctx.attr("transA", 0):
        a = R.permute_dims(a, [1, 0])
    if ctx.attr("transB", 0):
        b = R.permute_dims(b, [1, 0])
    y = matmul_wide(a, b, dtype)
    alpha, beta = float(ctx.attr("alpha", 1.0)), float(ctx.attr("beta", 1.0))
    if alpha != 1.0:
        y = R.multiply(y, ctx.scalar_like(alpha, dtype))
    if ctx.has(2) and beta != 0.0:
        c = ctx.x(2)
        if beta != 1.0:
            c = R.multiply(c, ctx.scalar_like(beta, dtype))
        y = R.add(y, c)
    return [y]


# -- convolutions -------------------------------------------------------------------------------------


def conv_nd(
    x: ir.Value,
    w: ir.Value,
    strides: Sequence[int],
    pads: Sequence[int],
    dilations: Sequence[int],
    groups: int,
) -> ir.Value:
    """N-d convolution (1-D, 2-D or 3-D) with the relax 1-D/2-D convolutions; pads are befores then afters.
    f16 and bf16 are multiplied and accumulated in f32, then rounded once (as numpy and onnxruntime do)."""
    t = relax_type(x.type)
    if isinstance(t, TensorType) and t.dtype in ("f16", "bf16"):
        wide = conv_nd(R.astype(x, "f32"), R.astype(w, "f32"), strides, pads, dilations, groups)
        return R.astype(wide, t.dtype)
    n = len(strides)
    if n == 1:
        return R.conv1d(x, w, strides, list(pads), dilations, groups)
    if n == 2:
        return R.conv2d(x, w, strides, list(pads), dilations, groups)
    if n != 3:
        raise ConversionError(f"{n}-D convolutions are not supported")
    # Sum over the depth taps of 2-D convolutions of the strided depth slices.
    x = R.pad(x, [0, 0, 0, 0, pads[0], pads[3], 0, 0, 0, 0])
    nb, c, depth, h, wd = dims_of(x)
    o, cg, kd, kh, kw = dims_of(w)
    kd_i = static_dim(kd, "the kernel depth")
    sd, dd = strides[0], dilations[0]
    out_d = (depth - (kd_i - 1) * dd - 1) // sd + 1
    total = None
    for t in range(kd_i):
        start = t * dd
        end = format_dim(start + (out_d - 1) * sd + 1)
        xs = R.strided_slice(x, [2], [start], [end], [sd])
        xs = R.permute_dims(xs, [0, 2, 1, 3, 4])
        xs = reshape_to(xs, [nb * out_d, c, h, wd])
        wt = reshape_to(R.strided_slice(w, [2], [t], [t + 1], [1]), [o, cg, kh, kw])
        y = R.conv2d(xs, wt, strides[1:], [pads[1], pads[2], pads[4], pads[5]], dilations[1:], groups)
        total = y if total is None else R.add(total, y)
    assert total is not None
    _, _, oh, ow = dims_of(total)
    y = reshape_to(total, [nb, out_d, o, oh, ow])
    return R.permute_dims(y, [0, 2, 1, 3, 4])


def _add_bias(y: ir.Value, b: ir.Value, spatial: int) -> ir.Value:
    return R.add(y, R.expand_dims(b, list(range(1, spatial + 1))))


@converter("Conv")
def _conv(ctx: NodeContext) -> list[Out]:
    x, w = ctx.x(0), ctx.x(1)
    wshape = dims_of(w)
    n = len(wshape) - 2
    kernel = [static_dim(d, "the kernel") for d in wshape[2:]]
    if ctx.has_attr("kernel_shape") and list(ctx.attr("kernel_shape")) != kernel:
        raise ConversionError(
            f"attribute 'kernel_shape' {ctx.attr('kernel_shape')} differs from the weight's {kernel}"
        )
    strides, dilations = kernel_attrs(ctx, n, kernel)
    pads = window_pads(ctx, dims_of(x)[2:], kernel, strides, dilations)
    y = conv_nd(x, w, strides, pads, dilations, int(ctx.attr("group", 1)))
    if ctx.has(2):
        y = _add_bias(y, ctx.x(2), n)
    return [y]


def _flip_transpose_weight(w: ir.Value, groups: int) -> ir.Value:
    """(C, O/g, k...) -> (O, C/g, k...) with every spatial axis reversed."""
    c, og, *ks = dims_of(w)
    n = len(ks)
    w = reshape_to(w, [groups, c // groups, og, *ks])
    w = R.permute_dims(w, [0, 2, 1, *range(3, 3 + n)])
    w = reshape_to(w, [og * groups, c // groups, *ks])
    axes = list(range(2, 2 + n))
    return R.strided_slice(w, axes, [-1] * n, [-BIG] * n, [-1] * n)


@converter("ConvTranspose")
def _conv_transpose(ctx: NodeContext) -> list[Out]:
    x, w = ctx.x(0), ctx.x(1)
    groups = int(ctx.attr("group", 1))
    wshape = dims_of(w)
    n = len(wshape) - 2
    kernel = [static_dim(d, "the kernel") for d in wshape[2:]]
    strides, dilations = kernel_attrs(ctx, n, kernel)
    out_pad = int_list(ctx.attr("output_padding"), n, 0, "output_padding")
    sizes = dims_of(x)[2:]
    auto = ctx.attr("auto_pad", "NOTSET")
    if auto not in ("NOTSET", "", "VALID", "SAME_UPPER", "SAME_LOWER"):
        raise ConversionError(f"attribute 'auto_pad' value '{auto}' is not supported")
    spans = [(k - 1) * d + 1 for k, d in zip(kernel, dilations)]
    if ctx.has_attr("output_shape") or auto in ("SAME_UPPER", "SAME_LOWER"):
        sizes_i = [static_dim(s, "ConvTranspose with output_shape or auto_pad") for s in sizes]
        if ctx.has_attr("output_shape"):
            target = [int(v) for v in ctx.attr("output_shape")][-n:]
        else:
            target = [s * st for s, st in zip(sizes_i, strides)]
        befores, afters = [], []
        for i in range(n):
            total = strides[i] * (sizes_i[i] - 1) + out_pad[i] + spans[i] - target[i]
            if auto == "SAME_UPPER":
                befores.append(total // 2)
                afters.append(total - total // 2)
            else:
                befores.append(total - total // 2)
                afters.append(total // 2)
        pads = befores + afters
    elif auto == "VALID":
        pads = [0] * (2 * n)
    else:
        pads = int_list(ctx.attr("pads"), 2 * n, 0, "pads")
    for axis in range(n):
        x = stuff(x, 2 + axis, strides[axis])
    widths = [0, 0, 0, 0]
    for i in range(n):
        edge = spans[i] - 1
        widths += [edge - pads[i], edge - pads[n + i] + out_pad[i]]
    x = R.pad(x, widths)
    y = conv_nd(x, _flip_transpose_weight(w, groups), [1] * n, [0] * (2 * n), dilations, groups)
    if ctx.has(2):
        y = _add_bias(y, ctx.x(2), n)
    return [y]


# -- DeformConv ---------------------------------------------------------------------------------------


@converter("DeformConv")
def _deform_conv(ctx: NodeContext) -> list[Out]:
    """Bilinear samples (zero outside) at each tap's offset position, weighted by the mask, gathered
    into columns (N, C * taps, points); then a grouped matmul with the weights."""
    x, w, off = ctx.x(0), ctx.x(1), ctx.x(2)
    dtype = ctx.dtype(0)
    if ctx.rank(0) != 4:
        raise ConversionError(f"DeformConv supports 2-D inputs only, got rank {ctx.rank(0)}")
    nb, ch, h, wd = dims_of(x)
    hs, ws = static_dim(h, "DeformConv's input height"), static_dim(wd, "DeformConv's input width")
    cs = static_dim(ch, "DeformConv's channels")
    o, _, kh, kw = (static_dim(d, "DeformConv's weight") for d in dims_of(w))
    oh, ow = (static_dim(d, "DeformConv's offset") for d in dims_of(off)[2:])
    groups, og = int(ctx.attr("group", 1)), int(ctx.attr("offset_group", 1))
    sh, sw = int_list(ctx.attr("strides"), 2, 1, "strides")
    dh, dw = int_list(ctx.attr("dilations"), 2, 1, "dilations")
    pads = int_list(ctx.attr("pads"), 4, 0, "pads")
    points = oh * ow

    def c(value: float) -> ir.Value:
        return ctx.scalar_like(value, dtype)

    offs = reshape_to(off, [nb, og, kh, kw, 2, points])
    mask = reshape_to(ctx.x(4), [nb, og, kh, kw, points]) if ctx.has(4) else None
    data = reshape_to(x, [nb, og, cs // og, hs * ws])
    rows = np.repeat(np.arange(oh) * sh - pads[0], ow).astype(float)
    cols = np.tile(np.arange(ow) * sw - pads[1], oh).astype(float)

    def tap_offset(i: int, j: int, axis: int) -> ir.Value:
        v = R.strided_slice(offs, [2, 3, 4], [i, j, axis], [i + 1, j + 1, axis + 1])
        return reshape_to(v, [nb, og, points])

    taps = []
    for i in range(kh):
        for j in range(kw):
            py = R.add(tap_offset(i, j, 0), ctx.constant(rows + i * dh, dtype))
            px = R.add(tap_offset(i, j, 1), ctx.constant(cols + j * dw, dtype))
            y0, x0 = R.floor(py), R.floor(px)
            ly, lx = R.subtract(py, y0), R.subtract(px, x0)
            sample = None
            for yy, wy in ((y0, R.subtract(c(1.0), ly)), (R.add(y0, c(1.0)), ly)):
                for xx, wx in ((x0, R.subtract(c(1.0), lx)), (R.add(x0, c(1.0)), lx)):
                    inside = R.logical_and(
                        R.logical_and(R.greater_equal(yy, c(0.0)), R.less(yy, c(float(hs)))),
                        R.logical_and(R.greater_equal(xx, c(0.0)), R.less(xx, c(float(ws)))),
                    )
                    yi = R.clip(yy, 0.0, float(hs - 1))
                    xi = R.clip(xx, 0.0, float(ws - 1))
                    pos = R.astype(R.add(R.multiply(yi, c(float(ws))), xi), "i64")
                    idx = R.broadcast_to(
                        reshape_to(pos, [nb, og, 1, points]), spell([nb, og, cs // og, points])
                    )
                    weight = R.multiply(R.multiply(wy, wx), R.astype(inside, dtype))
                    vals = R.multiply(R.gather_elements(data, idx, 3), R.expand_dims(weight, [2]))
                    sample = vals if sample is None else R.add(sample, vals)
            assert sample is not None
            if mask is not None:
                m = reshape_to(R.strided_slice(mask, [2, 3], [i, j], [i + 1, j + 1]), [nb, og, 1, points])
                sample = R.multiply(sample, m)
            taps.append(R.expand_dims(reshape_to(sample, [nb, cs, points]), [2]))
    columns = reshape_to(R.concat(taps, 2), [nb, groups, (cs // groups) * kh * kw, points])
    weights = reshape_to(w, [1, groups, o // groups, (cs // groups) * kh * kw])
    y = reshape_to(R.matmul(weights, columns), [nb, o, oh, ow])
    if ctx.has(3):
        y = _add_bias(y, ctx.x(3), 2)
    return [y]

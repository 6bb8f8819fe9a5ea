"""Neural-network ONNX ops: MatMul, Gemm, convolutions, pooling, LRN, Pad, Resize and data rearrangement.

Most ops decompose into relax ops: 1-D windows run as 2-D ones over a unit height; 3-D convolutions are
a sum over the depth taps of 2-D convolutions; 3-D max/average pooling is separable (pool along depth,
then over height and width); ConvTranspose is a convolution over the zero-stuffed input with the
flipped, transposed kernel; LpPool is a depthwise convolution with a kernel of ones.
"""

from __future__ import annotations

from collections.abc import Sequence
from fractions import Fraction

import numpy as np
from mlir import ir

from relax_mlir.dialects import relax as R
from relax_mlir.dialects.dims import normalize_axis, product
from relax_mlir.dialects.types import TensorType, relax_type
from relax_mlir.frontend.onnx.ops.runtime_inputs import is_runtime, pad_runtime, resize_params
from relax_mlir.frontend.onnx.registry import (
    RELAX_TO_NUMPY,
    ConversionError,
    NodeContext,
    Out,
    converter,
    known_dims,
)
from relax_mlir.shape_infer.expr import Expr, ceildiv, const, format_dim

BIG = 1 << 62


# -- helpers -----------------------------------------------------------------------------------------


def _shape(v: ir.Value) -> list[Expr]:
    """The dims of relax value ``v``; every dim must be known (symbolic is fine)."""
    t = relax_type(v.type)
    if not isinstance(t, TensorType) or t.shape is None or any(d is None for d in t.shape):
        raise ConversionError(f"needs known dims, got {t}")
    return list(t.shape)  # type: ignore[arg-type]


def _spell(dims: Sequence[Expr | int]) -> list[int | str]:
    return [format_dim(d if isinstance(d, Expr) else const(int(d))) for d in dims]


def _reshape(v: ir.Value, dims: Sequence[Expr | int]) -> ir.Value:
    return R.reshape(v, _spell(dims))


def _ints(values: Sequence[int] | None, n: int, default: int, name: str) -> list[int]:
    if values is None:
        return [default] * n
    values = [int(v) for v in values]
    if len(values) != n:
        raise ConversionError(f"attribute '{name}' needs {n} values, got {values}")
    return values


def _static(d: Expr, what: str) -> int:
    if not d.is_const:
        raise ConversionError(f"{what} needs a static size, got '{format_dim(d)}'")
    return int(d.value)


def _window_pads(
    ctx: NodeContext,
    spatial_dims: Sequence[Expr],
    kernel: Sequence[int],
    strides: Sequence[int],
    dilations: Sequence[int],
) -> list[int]:
    """The pads (all befores then all afters) from ``pads`` or ``auto_pad``."""
    n = len(kernel)
    auto = ctx.attr("auto_pad", "NOTSET")
    if auto in ("NOTSET", ""):
        return _ints(ctx.attr("pads"), 2 * n, 0, "pads")
    if auto == "VALID":
        return [0] * (2 * n)
    if auto not in ("SAME_UPPER", "SAME_LOWER"):
        raise ConversionError(f"attribute 'auto_pad' value '{auto}' is not supported")
    befores, afters = [], []
    for size, k, s, d in zip(spatial_dims, kernel, strides, dilations):
        span = (k - 1) * d + 1
        if s == 1:
            total = span - 1
        else:
            size_i = _static(size, f"auto_pad {auto} with stride {s}")
            total = max(0, (ceildiv(const(size_i), s).value - 1) * s + span - size_i)
        small, big = total // 2, total - total // 2
        befores.append(small if auto == "SAME_UPPER" else big)
        afters.append(big if auto == "SAME_UPPER" else small)
    return befores + afters


def _kernel_attrs(ctx: NodeContext, n: int, kernel: Sequence[int]) -> tuple[list[int], list[int]]:
    return _ints(ctx.attr("strides"), n, 1, "strides"), _ints(ctx.attr("dilations"), n, 1, "dilations")


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
    nb, c, depth, h, wd = _shape(x)
    o, cg, kd, kh, kw = _shape(w)
    kd_i = _static(kd, "the kernel depth")
    sd, dd = strides[0], dilations[0]
    out_d = (depth - (kd_i - 1) * dd - 1) // sd + 1
    total = None
    for t in range(kd_i):
        start = t * dd
        end = format_dim(start + (out_d - 1) * sd + 1)
        xs = R.strided_slice(x, [2], [start], [end], [sd])
        xs = R.permute_dims(xs, [0, 2, 1, 3, 4])
        xs = _reshape(xs, [nb * out_d, c, h, wd])
        wt = _reshape(R.strided_slice(w, [2], [t], [t + 1], [1]), [o, cg, kh, kw])
        y = R.conv2d(xs, wt, strides[1:], [pads[1], pads[2], pads[4], pads[5]], dilations[1:], groups)
        total = y if total is None else R.add(total, y)
    assert total is not None
    _, _, oh, ow = _shape(total)
    y = _reshape(total, [nb, out_d, o, oh, ow])
    return R.permute_dims(y, [0, 2, 1, 3, 4])


def _add_bias(y: ir.Value, b: ir.Value, spatial: int) -> ir.Value:
    return R.add(y, R.expand_dims(b, list(range(1, spatial + 1))))


@converter("Conv")
def _conv(ctx: NodeContext) -> list[Out]:
    x, w = ctx.x(0), ctx.x(1)
    wshape = _shape(w)
    n = len(wshape) - 2
    kernel = [_static(d, "the kernel") for d in wshape[2:]]
    if ctx.has_attr("kernel_shape") and list(ctx.attr("kernel_shape")) != kernel:
        raise ConversionError(
            f"attribute 'kernel_shape' {ctx.attr('kernel_shape')} differs from the weight's {kernel}"
        )
    strides, dilations = _kernel_attrs(ctx, n, kernel)
    pads = _window_pads(ctx, _shape(x)[2:], kernel, strides, dilations)
    y = conv_nd(x, w, strides, pads, dilations, int(ctx.attr("group", 1)))
    if ctx.has(2):
        y = _add_bias(y, ctx.x(2), n)
    return [y]


def _flip_transpose_weight(w: ir.Value, groups: int) -> ir.Value:
    """(C, O/g, k...) -> (O, C/g, k...) with every spatial axis reversed."""
    c, og, *ks = _shape(w)
    n = len(ks)
    w = _reshape(w, [groups, c // groups, og, *ks])
    w = R.permute_dims(w, [0, 2, 1, *range(3, 3 + n)])
    w = _reshape(w, [og * groups, c // groups, *ks])
    axes = list(range(2, 2 + n))
    return R.strided_slice(w, axes, [-1] * n, [-BIG] * n, [-1] * n)


def _stuff(x: ir.Value, axis: int, stride: int) -> ir.Value:
    """Insert ``stride - 1`` zeros between the elements of ``x`` along ``axis``."""
    if stride == 1:
        return x
    shape = _shape(x)
    rank = len(shape)
    y = R.expand_dims(x, [axis + 1])
    widths = [0] * (2 * (rank + 1))
    widths[2 * (axis + 1) + 1] = stride - 1
    y = R.pad(y, widths)
    merged = [*shape[:axis], shape[axis] * stride, *shape[axis + 1 :]]
    y = _reshape(y, merged)
    return R.strided_slice(y, [axis], [0], [format_dim(shape[axis] * stride - (stride - 1))], [1])


@converter("ConvTranspose")
def _conv_transpose(ctx: NodeContext) -> list[Out]:
    x, w = ctx.x(0), ctx.x(1)
    groups = int(ctx.attr("group", 1))
    wshape = _shape(w)
    n = len(wshape) - 2
    kernel = [_static(d, "the kernel") for d in wshape[2:]]
    strides, dilations = _kernel_attrs(ctx, n, kernel)
    out_pad = _ints(ctx.attr("output_padding"), n, 0, "output_padding")
    sizes = _shape(x)[2:]
    auto = ctx.attr("auto_pad", "NOTSET")
    if auto not in ("NOTSET", "", "VALID", "SAME_UPPER", "SAME_LOWER"):
        raise ConversionError(f"attribute 'auto_pad' value '{auto}' is not supported")
    spans = [(k - 1) * d + 1 for k, d in zip(kernel, dilations)]
    if ctx.has_attr("output_shape") or auto in ("SAME_UPPER", "SAME_LOWER"):
        sizes_i = [_static(s, "ConvTranspose with output_shape or auto_pad") for s in sizes]
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
        pads = _ints(ctx.attr("pads"), 2 * n, 0, "pads")
    for axis in range(n):
        x = _stuff(x, 2 + axis, strides[axis])
    widths = [0, 0, 0, 0]
    for i in range(n):
        edge = spans[i] - 1
        widths += [edge - pads[i], edge - pads[n + i] + out_pad[i]]
    x = R.pad(x, widths)
    y = conv_nd(x, _flip_transpose_weight(w, groups), [1] * n, [0] * (2 * n), dilations, groups)
    if ctx.has(2):
        y = _add_bias(y, ctx.x(2), n)
    return [y]


# -- pooling ------------------------------------------------------------------------------------------


def _pool_params(ctx: NodeContext, x: ir.Value) -> tuple[list[int], list[int], list[int], list[int]]:
    kernel = [int(k) for k in ctx.attr("kernel_shape")]
    n = len(kernel)
    strides, dilations = _kernel_attrs(ctx, n, kernel)
    pads = _window_pads(ctx, _shape(x)[2:], kernel, strides, dilations)
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
    shape = _shape(x)
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
        _reshape(x, [nb, c, d, h * w]),
        [kernel[0], 1],
        [strides[0], 1],
        [pads[0], 0, pads[3], 0],
        [dilations[0], 1],
        ceil,
        include,
    )
    od = _shape(y)[2]
    y = _pool2d(
        kind,
        _reshape(y, [nb, c * od, h, w]),
        kernel[1:],
        strides[1:],
        [pads[1], pads[2], pads[4], pads[5]],
        dilations[1:],
        ceil,
        include,
    )
    oh, ow = _shape(y)[2:]
    return _reshape(y, [nb, c, od, oh, ow])


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
    shape = [_static(d, "MaxPool's 'Indices' output") for d in _shape(x)]
    out = [_static(d, "MaxPool's 'Indices' output") for d in _shape(y)]
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
            best_v, best_i = v, R.broadcast_to(idx, _spell(out))
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
    c = _static(_shape(x)[1], "LpPool's channels")
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
    shape = _shape(x)
    rest = const(1)
    for d in shape[2:]:
        rest = rest * d
    sq = _reshape(R.multiply(x, x), [shape[0], 1, shape[1], rest])
    before, after = (size - 1) // 2, size - 1 - (size - 1) // 2
    avg = R.avg_pool2d(sq, [size, 1], [1, 1], [before, 0, after, 0], 1, False, True)
    avg = _reshape(avg, shape)
    scale = R.add(ctx.scalar_like(bias, dtype), R.multiply(avg, ctx.scalar_like(alpha, dtype)))
    return [R.divide(x, R.power(scale, ctx.scalar_like(beta, dtype)))]


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
    if ctx.const(1) is None or any(not _shape(x)[a].is_const for a in axes):
        return [_center_crop_pad_at_run_time(ctx, axes)]
    target = [int(v) for v in ctx.require_const(1, "shape").reshape(-1)]
    shape = _shape(x)
    widths = [0] * (2 * rank)
    for a, t in zip(axes, target):
        size = _static(shape[a], "CenterCropPad")
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
        size, want = (ctx.value_of(known_dims([d], shape=())) for d in (_shape(x)[a], t))
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
    n, c, h, w = _shape(x)
    cb = c // (b * b)
    if mode == "DCR":
        y = _reshape(x, [n, b, b, cb, h, w])
        y = R.permute_dims(y, [0, 3, 4, 1, 5, 2])
    elif mode == "CRD":
        y = _reshape(x, [n, cb, b, b, h, w])
        y = R.permute_dims(y, [0, 1, 4, 2, 5, 3])
    else:
        raise ConversionError(f"attribute 'mode' value '{mode}' is not supported")
    return [_reshape(y, [n, cb, h * b, w * b])]


@converter("SpaceToDepth")
def _space_to_depth(ctx: NodeContext) -> list[Out]:
    x = ctx.x(0)
    b = int(ctx.attr("blocksize"))
    mode = ctx.attr("mode", "DCR")
    n, c, h, w = _shape(x)
    y = _reshape(x, [n, c, h // b, b, w // b, b])
    if mode == "DCR":
        y = R.permute_dims(y, [0, 3, 5, 1, 2, 4])
    elif mode == "CRD":
        y = R.permute_dims(y, [0, 1, 3, 5, 2, 4])
    else:
        raise ConversionError(f"attribute 'mode' value '{mode}' is not supported")
    return [_reshape(y, [n, c * b * b, h // b, w // b])]


# -- Resize, Upsample ---------------------------------------------------------------------------------


def _scaled(d: Expr, scale: float) -> Expr:
    """floor(d * scale), exactly (the f32 scale read as the binary fraction it is)."""
    r = Fraction(float(scale))
    return (d * r.numerator) // r.denominator


def _resize_axes(
    ctx: NodeContext,
    x: ir.Value,
    axes: Sequence[int],
    sizes: Sequence[Expr],
    scales: Sequence[float],
    roi: Sequence[tuple[float, float]],
    **attrs: object,
) -> ir.Value:
    """``x`` resized along each of ``axes`` in turn (ONNX Resize is separable); identity axes are skipped."""
    shape = _shape(x)
    for axis, size, scale, box in zip(axes, sizes, scales, roi):
        identity = (scale == 1.0 or (scale == 0.0 and size == shape[axis])) and size == shape[axis]
        if identity and box == (0.0, 1.0):
            continue
        if attrs.get("antialias") and attrs.get("method") != "nearest" and scale == 0.0:
            if not (size.is_const and shape[axis].is_const):
                raise ConversionError("Resize with antialias and 'sizes' needs static dims")
            scale = size.value / shape[axis].value
        x = R.resize_axis(x, axis, format_dim(size), scale=scale, roi=box, **attrs)  # type: ignore[arg-type]
    return x


@converter("Resize")
def _resize(ctx: NodeContext) -> list[Out]:
    x = ctx.x(0)
    rank = ctx.rank(0)
    shape = _shape(x)
    mode = ctx.attr("mode", "nearest")
    if mode not in ("nearest", "linear", "cubic"):
        raise ConversionError(f"attribute 'mode' value '{mode}' is not supported")
    if ctx.opset < 11:
        coord, nearest = "asymmetric", "floor"
        scales_i, sizes_i, roi_i = 1, None, None
    else:
        coord = ctx.attr("coordinate_transformation_mode", "half_pixel")
        nearest = ctx.attr("nearest_mode", "round_prefer_floor")
        scales_i, sizes_i, roi_i = 2, 3, 1
    axes = [normalize_axis(int(a), rank) for a in ctx.attr("axes", list(range(rank)))]
    n = len(axes)
    scales: list[float] | None = None
    sizes: list[Expr] | None = None
    crop = coord == "tf_crop_and_resize"
    keep_ratio = ctx.attr("keep_aspect_ratio_policy", "stretch") != "stretch" and is_runtime(ctx, sizes_i)
    if is_runtime(ctx, scales_i) or (crop and is_runtime(ctx, roi_i)) or keep_ratio:
        return [_resize_runtime(ctx, x, axes, scales_i, sizes_i, roi_i, mode, coord, nearest)]
    if scales_i is not None and ctx.has(scales_i):
        values = ctx.require_const(scales_i, "scales").reshape(-1)
        if values.size:
            scales = [float(v) for v in values]
    if sizes_i is not None and ctx.has(sizes_i) and scales is None:
        sizes = ctx.dims(sizes_i, "sizes")
    if (scales is None) == (sizes is None):
        raise ConversionError("Resize needs exactly one of 'scales' and 'sizes'")
    for name, v in (("scales", scales), ("sizes", sizes)):
        if v is not None and len(v) != n:
            raise ConversionError(f"'{name}' needs {n} values, got {len(v)}")
    policy = ctx.attr("keep_aspect_ratio_policy", "stretch")
    if policy not in ("stretch", "not_larger", "not_smaller"):
        raise ConversionError(f"attribute 'keep_aspect_ratio_policy' value '{policy}' is not supported")
    if sizes is not None and policy != "stretch":
        ratios = [
            _static(s, "keep_aspect_ratio_policy") / _static(shape[a], "keep_aspect_ratio_policy")
            for s, a in zip(sizes, axes)
        ]
        scale = min(ratios) if policy == "not_larger" else max(ratios)
        scales = [scale] * n
        sizes = [const(int(scale * shape[a].value + 0.5)) for a in axes]
    elif scales is not None:
        if any(not s > 0 for s in scales):
            raise ConversionError(f"'scales' must be positive, got {scales}")
        sizes = [_scaled(shape[a], s) for a, s in zip(axes, scales)]
    else:
        scales = [0.0] * n
    roi = [(0.0, 1.0)] * n
    if coord == "tf_crop_and_resize":
        box = [float(v) for v in ctx.require_const(roi_i, "roi").reshape(-1)] if roi_i is not None else []
        if len(box) == 2 * n:
            roi = [(box[i], box[n + i]) for i in range(n)]
        elif len(box) == 2 * rank:
            roi = [(box[a], box[rank + a]) for a in axes]
        else:
            raise ConversionError(f"'roi' needs {2 * n} values, got {len(box)}")
    antialias = bool(ctx.attr("antialias", 0))
    if antialias and mode == "nearest":
        antialias = False  # ONNX: antialias only affects linear and cubic
    assert sizes is not None
    y = _resize_axes(
        ctx,
        x,
        axes,
        sizes,
        scales,
        roi,
        method=mode,
        coordinate_mode=coord,
        nearest_mode=nearest,
        cubic_a=float(ctx.attr("cubic_coeff_a", -0.75)),
        exclude_outside=bool(ctx.attr("exclude_outside", 0)),
        antialias=antialias,
        extrapolation=float(ctx.attr("extrapolation_value", 0.0)),
    )
    return [y]


def _resize_runtime(
    ctx: NodeContext,
    x: ir.Value,
    axes: list[int],
    scales_i: int | None,
    sizes_i: int | None,
    roi_i: int | None,
    mode: str,
    coord: str,
    nearest: str,
) -> ir.Value:
    """Resize whose scales (or roi) are read at run time: every axis is resized (none is known to be an
    identity), with ``relax.resize_axis_runtime``."""
    if ctx.attr("antialias", 0) and mode != "nearest":
        raise ConversionError("antialias needs 'scales' or 'sizes' known at import time")
    sizes, params = resize_params(ctx, axes, scales_i, sizes_i, roi_i, coord == "tf_crop_and_resize")
    if sizes is None:
        if sizes_i is None or not ctx.has(sizes_i):
            raise ConversionError("Resize needs exactly one of 'scales' and 'sizes'")
        sizes = ctx.dims(sizes_i, "sizes")
    for axis, size, p in zip(axes, sizes, params):
        x = R.resize_axis(
            x,
            axis,
            format_dim(size),
            method=mode,
            coordinate_mode=coord,
            nearest_mode=nearest,
            cubic_a=float(ctx.attr("cubic_coeff_a", -0.75)),
            exclude_outside=bool(ctx.attr("exclude_outside", 0)),
            extrapolation=float(ctx.attr("extrapolation_value", 0.0)),
            params=p,
        )
    return x


@converter("Upsample")
def _upsample(ctx: NodeContext) -> list[Out]:
    x = ctx.x(0)
    rank = ctx.rank(0)
    mode = ctx.attr("mode", "nearest")
    if mode not in ("nearest", "linear", "bilinear"):
        raise ConversionError(f"attribute 'mode' value '{mode}' is not supported")
    if ctx.has_attr("scales"):
        scales = [float(s) for s in ctx.attr("scales")]
    elif is_runtime(ctx, 1):
        return [
            _resize_runtime(
                ctx,
                x,
                list(range(rank)),
                1,
                None,
                None,
                "nearest" if mode == "nearest" else "linear",
                "asymmetric",
                "floor",
            )
        ]
    else:
        scales = [float(s) for s in ctx.require_const(1, "scales").reshape(-1)]
    if len(scales) != rank:
        raise ConversionError(f"'scales' needs {rank} values, got {scales}")
    shape = _shape(x)
    sizes = [_scaled(d, s) for d, s in zip(shape, scales)]
    y = _resize_axes(
        ctx,
        x,
        list(range(rank)),
        sizes,
        scales,
        [(0.0, 1.0)] * rank,
        method="nearest" if mode == "nearest" else "linear",
        coordinate_mode="asymmetric",
        nearest_mode="floor",
    )
    return [y]


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
        base, [format_dim(_shape(theta)[0]), format_dim(product(spatial)), len(spatial) + 1]
    )
    grid = R.matmul(batch, R.permute_dims(theta, [0, 2, 1]))
    return _reshape(grid, [_shape(theta)[0], *spatial, len(spatial)])


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
    return [_reshape(grid, [_shape(theta)[0], *spatial, len(spatial)])]


@converter("MaxUnpool")
def _max_unpool(ctx: NodeContext) -> list[Out]:
    x, idx = ctx.x(0), ctx.x(1)
    shape = _shape(x)
    kernel = [int(k) for k in ctx.attr("kernel_shape")]
    n = len(kernel)
    strides = _ints(ctx.attr("strides"), n, 1, "strides")
    pads = _ints(ctx.attr("pads"), 2 * n, 0, "pads")
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
            R.full(_spell([product(out)]), 0.0, ctx.dtype(0)), R.flatten(idx), R.flatten(x), 0
        )
        return [R.pad_runtime(_reshape(flat, out), widths, ctx.scalar_like(0, ctx.dtype(0)))]
    if ctx.has(2):
        target = [int(v) for v in ctx.require_const(2, "output_shape").reshape(-1)]
        for i, (d, t) in enumerate(zip(out, target)):
            extra[2 * i + 1] = t - _static(d, "MaxUnpool with output_shape")
    total = const(1)
    for d in out:
        total = total * d
    zeros = R.full(_spell([total]), 0.0, ctx.dtype(0))
    flat = R.scatter_elements(zeros, R.flatten(idx), R.flatten(x), 0)
    y = _reshape(flat, out)
    return [R.pad(y, extra) if any(extra) else y]


@converter("Col2Im")
def _col2im(ctx: NodeContext) -> list[Out]:
    x = ctx.x(0)
    if ctx.const(1) is None or ctx.const(2) is None:  # read at run time
        n = ctx.shape(1)[0]
        if n is None or not n.is_const:
            raise ConversionError("the length of 'image_shape' must be known at import time")
        image, block = (ctx.x(i) if ctx.dtype(i) == "i64" else R.astype(ctx.x(i), "i64") for i in (1, 2))
        dilations = _ints(ctx.attr("dilations"), n.value, 1, "dilations")
        strides = _ints(ctx.attr("strides"), n.value, 1, "strides")
        pads = _ints(ctx.attr("pads"), 2 * n.value, 0, "pads")
        return [R.col2im_runtime(x, image, block, dilations, pads, strides)]
    image = [int(v) for v in ctx.require_const(1, "image_shape").reshape(-1)]
    block = [int(v) for v in ctx.require_const(2, "block_shape").reshape(-1)]
    n = len(image)
    dilations = _ints(ctx.attr("dilations"), n, 1, "dilations")
    strides = _ints(ctx.attr("strides"), n, 1, "strides")
    pads = _ints(ctx.attr("pads"), 2 * n, 0, "pads")
    nb, ck, _ = _shape(x)
    taps = int(np.prod(block))
    c = ck // taps
    counts = [
        (image[i] + pads[i] + pads[n + i] - dilations[i] * (block[i] - 1) - 1) // strides[i] + 1
        for i in range(n)
    ]
    cols = _reshape(x, [nb, c, *block, *counts])
    padded = [image[i] + pads[i] + pads[n + i] for i in range(n)]
    total = None
    for offset in np.ndindex(*block):
        starts = [[o] for o in offset]
        part = R.strided_slice(
            cols, list(range(2, 2 + n)), [o[0] for o in starts], [o[0] + 1 for o in starts]
        )
        part = _reshape(part, [nb, c, *counts])
        for axis in range(n):
            part = _stuff(part, 2 + axis, strides[axis])
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
    xshape, gshape = _shape(x), _shape(grid)
    r = len(xshape) - 2
    dims = [_static(d, "GridSample's input spatial dims") for d in xshape[2:]]
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

    flat_grid = _reshape(grid, [nb, points, r])
    lin, weight, mask = None, None, None
    strides = [int(np.prod(dims[i + 1 :])) for i in range(r)]
    for i, size in enumerate(dims):
        g = _reshape(R.strided_slice(flat_grid, [2], [r - 1 - i], [r - i]), [nb, 1, points])
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
        term = _reshape(idx, view)
        if strides[i] != 1:
            term = R.multiply(term, ctx.scalar_like(strides[i], "i64"))
        lin = term if lin is None else R.add(lin, term)
        if w is not None:
            w = _reshape(w, view)
            weight = w if weight is None else R.multiply(weight, w)
        if m is not None:
            m = _reshape(m, view)
            mask = m if mask is None else R.logical_and(mask, m)
    assert lin is not None
    combos = taps**r
    total_taps = points * combos
    idx = R.broadcast_to(_reshape(lin, [nb, 1, total_taps]), _spell([nb, ch, total_taps]))
    vals = _reshape(
        R.gather_elements(_reshape(x, [nb, ch, int(np.prod(dims))]), idx, 2), [nb, ch, combos, points]
    )
    if mask is not None:
        m = R.astype(mask, dtype)
        weight = m if weight is None else R.multiply(weight, m)
    if weight is not None:
        vals = R.multiply(vals, _reshape(weight, [nb, 1, combos, points]))
    y = R.sum(vals, [2]) if combos > 1 else _reshape(vals, [nb, ch, points])
    return [_reshape(y, [nb, ch, *out_sp])]


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
    nb, ch, h, w = _shape(x)
    hs, ws = _static(h, "RoiAlign's input height"), _static(w, "RoiAlign's input width")
    nr = _shape(rois)[0]
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
    data = R.take(_reshape(x, [nb, ch, hs * ws]), batch, 0)  # (R, C, H*W)
    total = None
    for yi, wy in zip(ys, wys):
        for xi, wx in zip(xs, wxs):
            pos = R.add(R.multiply(R.expand_dims(yi, [2]), c(float(ws))), R.expand_dims(xi, [1]))
            idx = R.broadcast_to(_reshape(R.astype(pos, "i64"), [nr, 1, sy * sx]), _spell([nr, ch, sy * sx]))
            weight = R.multiply(R.multiply(R.expand_dims(wy, [2]), R.expand_dims(wx, [1])), valid)
            vals = R.multiply(
                _reshape(R.gather_elements(data, idx, 2), [nr, ch, sy, sx]), R.expand_dims(weight, [1])
            )
            if total is None:
                total = vals
            else:
                total = R.add(total, vals) if mode == "avg" else R.maximum(total, vals)
    assert total is not None
    bins = _reshape(total, [nr, ch, out_h, ratio, out_w, ratio])
    if mode == "avg":
        return [R.divide(R.sum(bins, [3, 5]), c(float(ratio * ratio)))]
    return [R.max(bins, [3, 5])]


# -- DeformConv ---------------------------------------------------------------------------------------


@converter("DeformConv")
def _deform_conv(ctx: NodeContext) -> list[Out]:
    """Bilinear samples (zero outside) at each tap's offset position, weighted by the mask, gathered
    into columns (N, C * taps, points); then a grouped matmul with the weights."""
    x, w, off = ctx.x(0), ctx.x(1), ctx.x(2)
    dtype = ctx.dtype(0)
    if ctx.rank(0) != 4:
        raise ConversionError(f"DeformConv supports 2-D inputs only, got rank {ctx.rank(0)}")
    nb, ch, h, wd = _shape(x)
    hs, ws = _static(h, "DeformConv's input height"), _static(wd, "DeformConv's input width")
    cs = _static(ch, "DeformConv's channels")
    o, _, kh, kw = (_static(d, "DeformConv's weight") for d in _shape(w))
    oh, ow = (_static(d, "DeformConv's offset") for d in _shape(off)[2:])
    groups, og = int(ctx.attr("group", 1)), int(ctx.attr("offset_group", 1))
    sh, sw = _ints(ctx.attr("strides"), 2, 1, "strides")
    dh, dw = _ints(ctx.attr("dilations"), 2, 1, "dilations")
    pads = _ints(ctx.attr("pads"), 4, 0, "pads")
    points = oh * ow

    def c(value: float) -> ir.Value:
        return ctx.scalar_like(value, dtype)

    offs = _reshape(off, [nb, og, kh, kw, 2, points])
    mask = _reshape(ctx.x(4), [nb, og, kh, kw, points]) if ctx.has(4) else None
    data = _reshape(x, [nb, og, cs // og, hs * ws])
    rows = np.repeat(np.arange(oh) * sh - pads[0], ow).astype(float)
    cols = np.tile(np.arange(ow) * sw - pads[1], oh).astype(float)

    def tap_offset(i: int, j: int, axis: int) -> ir.Value:
        v = R.strided_slice(offs, [2, 3, 4], [i, j, axis], [i + 1, j + 1, axis + 1])
        return _reshape(v, [nb, og, points])

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
                        _reshape(pos, [nb, og, 1, points]), _spell([nb, og, cs // og, points])
                    )
                    weight = R.multiply(R.multiply(wy, wx), R.astype(inside, dtype))
                    vals = R.multiply(R.gather_elements(data, idx, 3), R.expand_dims(weight, [2]))
                    sample = vals if sample is None else R.add(sample, vals)
            assert sample is not None
            if mask is not None:
                m = _reshape(R.strided_slice(mask, [2, 3], [i, j], [i + 1, j + 1]), [nb, og, 1, points])
                sample = R.multiply(sample, m)
            taps.append(R.expand_dims(_reshape(sample, [nb, cs, points]), [2]))
    columns = _reshape(R.concat(taps, 2), [nb, groups, (cs // groups) * kh * kw, points])
    weights = _reshape(w, [1, groups, o // groups, (cs // groups) * kh * kw])
    y = _reshape(R.matmul(weights, columns), [nb, o, oh, ow])
    if ctx.has(3):
        y = _add_bias(y, ctx.x(3), 2)
    return [y]

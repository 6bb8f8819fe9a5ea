"""Quantization converters: QuantizeLinear, DequantizeLinear, DynamicQuantizeLinear, MatMulInteger,
QLinearMatMul, ConvInteger, QLinearConv.

Everything is computed on widened types (f32, or f64 for f64 inputs; i32 for integer products), as
ONNX's reference does, then rounded half to even, clipped and narrowed.
"""

from __future__ import annotations

from mlir import ir

from relax_mlir.dialects import relax as R
from relax_mlir.dialects.dims import normalize_axis
from relax_mlir.frontend.onnx.registry import ConversionError, NodeContext, Out, converter, relax_dtype
from relax_mlir.lowering.minifloat import is_minifloat
from relax_mlir.lowering.minifloat import max_value as minifloat_max

INT_RANGES = {
    "ui8": (0, 255),
    "i8": (-128, 127),
    "ui16": (0, 65535),
    "i16": (-32768, 32767),
    "ui4": (0, 15),
    "i4": (-8, 7),
    "ui2": (0, 3),
    "i2": (-2, 1),
    "i32": (-(2**31), 2**31 - 1),
}


def _wide(dtype: str) -> str:
    return "f64" if dtype == "f64" else "f32"


def _param(ctx: NodeContext, i: int, axis: int, block_size: int, dtype: str) -> ir.Value:
    """Scale or zero point ``i`` as ``dtype``, shaped to broadcast against input 0 (per tensor, per
    axis or blocked)."""
    rank = ctx.rank(0)
    shape = ctx.shape(i)
    v = ctx.x(i)
    if ctx.dtype(i) != dtype:
        v = R.astype(v, dtype)
    if len(shape) == 0:
        return v
    if block_size > 0:
        if len(shape) != rank:
            raise ConversionError(f"blocked quantization: input #{i} must have rank {rank}, got {len(shape)}")
        v = R.repeat(v, block_size, axis)
        dim = ctx.shape(0)[axis]
        if dim is None:
            raise ConversionError(f"blocked quantization: axis {axis} of the input has an unknown size")
        return R.strided_slice(v, [axis], [0], [dim.value if dim.is_const else str(dim)])
    if len(shape) != 1:
        raise ConversionError(
            f"input #{i} must be a scalar or 1-D (or set block_size), got rank {len(shape)}"
        )
    if shape[0] is not None and shape[0].is_const and shape[0].value == 1:
        return R.reshape(v, [])
    dims: list[int | str] = [1] * rank
    dims[axis] = -1
    n = shape[0]
    dims[axis] = n.value if n is not None and n.is_const else str(n)
    return R.reshape(v, dims)


def _round_clip(ctx: NodeContext, v: ir.Value, dtype: str, wide: str) -> ir.Value:
    lo, hi = INT_RANGES[dtype]
    return R.astype(R.clip(v, lo, hi), dtype)


def _quantize(ctx: NodeContext, q: ir.Value, zp: ir.Value | None, dtype: str, saturate: bool) -> ir.Value:
    """``q`` (x / scale, a widened float) quantized to ``dtype`` with zero point ``zp`` (same float type)."""
    if dtype in INT_RANGES:
        r = R.round(q)
        if zp is not None:
            r = R.add(r, zp)
        return _round_clip(ctx, r, dtype, "")
    if dtype == "f4E2M1FN":
        return R.astype(q if zp is None else R.add(q, zp), dtype)
    if is_minifloat(dtype) and dtype != "f8E8M0FNU":
        if saturate:
            bound = minifloat_max(dtype)
            q = R.clip(q, -bound, bound)
        return R.astype(q, dtype)
    raise ConversionError(f"quantized type {dtype} is not supported")


def _axis_block(ctx: NodeContext) -> tuple[int, int]:
    """The quantization axis (only checked when a scale is per axis or blocked) and block size."""
    block = int(ctx.attr("block_size", 0))
    scale_shape = ctx.shape(1)
    if len(scale_shape) == 0 or (
        len(scale_shape) == 1 and scale_shape[0] is not None and scale_shape[0].value == 1
    ):
        return 0, block
    return normalize_axis(ctx.attr("axis", 1), ctx.rank(0)), block


@converter("QuantizeLinear")
def _quantize_linear(ctx: NodeContext) -> list[Out]:
    axis, block = _axis_block(ctx)
    if ctx.has(2):
        dtype = ctx.dtype(2)
    elif ctx.attr("output_dtype", 0):
        dtype = relax_dtype(ctx.attr("output_dtype"), "attribute 'output_dtype'")
    else:
        dtype = "ui8"
    precision = ctx.attr("precision", 0)
    wide = relax_dtype(precision, "attribute 'precision'") if precision else None
    x_dtype, s_dtype = ctx.dtype(0), ctx.dtype(1)
    if wide is None:
        wide = x_dtype if x_dtype == s_dtype else _wide(x_dtype if x_dtype == "f64" else s_dtype)
    x = ctx.x(0) if x_dtype == wide else R.astype(ctx.x(0), wide)
    q = R.divide(x, _param(ctx, 1, axis, block, wide))
    if wide in ("f16", "bf16") and dtype in INT_RANGES:  # round in the input type, add zero point wider
        q = R.astype(R.round(q), "f32")
        wide = "f32"
    saturate = bool(ctx.attr("saturate", 1))
    zp = None
    if ctx.has(2) and (dtype in INT_RANGES or dtype == "f4E2M1FN"):
        zp = _param(ctx, 2, axis, block, wide if wide not in ("f16", "bf16") else "f32")
        if wide in ("f16", "bf16"):
            q = R.astype(q, "f32")
    return [_quantize(ctx, q, zp, dtype, saturate)]


@converter("DequantizeLinear")
def _dequantize_linear(ctx: NodeContext) -> list[Out]:
    axis, block = _axis_block(ctx)
    s_dtype = ctx.dtype(1)
    out = (
        relax_dtype(ctx.attr("output_dtype"), "attribute 'output_dtype'")
        if ctx.attr("output_dtype", 0)
        else s_dtype
    )
    wide = _wide(s_dtype)
    x_dtype = ctx.dtype(0)
    dx = R.astype(ctx.x(0), wide)
    if ctx.has(2) and not is_minifloat(x_dtype):
        dx = R.subtract(dx, _param(ctx, 2, axis, block, wide))
    y = R.multiply(dx, _param(ctx, 1, axis, block, wide))
    return [y if out == wide else R.astype(y, out)]


@converter("DynamicQuantizeLinear")
def _dynamic_quantize_linear(ctx: NodeContext) -> list[Out]:
    if ctx.dtype(0) != "f32":
        raise ConversionError(f"input type {ctx.dtype(0)} is not supported (f32 only)")
    x = ctx.x(0)
    zero = ctx.scalar_like(0, "f32")
    lo = R.minimum(R.min(x), zero)
    hi = R.maximum(R.max(x), zero)
    scale = R.divide(R.subtract(hi, lo), ctx.scalar_like(255, "f32"))
    zp = R.clip(R.round(R.subtract(zero, R.divide(lo, scale))), 0, 255)
    y = R.astype(R.clip(R.add(R.round(R.divide(x, scale)), zp), 0, 255), "ui8")
    return [y, scale, R.astype(zp, "ui8")]


def _centered(ctx: NodeContext, i: int, zp: int, row_axis: int | None) -> ir.Value:
    """Input ``i`` widened to i32 minus its zero point (input ``zp``, scalar or 1-D along ``row_axis``
    of input ``i``, counted from the end)."""
    v = R.astype(ctx.x(i), "i32")
    if not ctx.has(zp):
        return v
    z = R.astype(ctx.x(zp), "i32")
    zshape = ctx.shape(zp)
    if len(zshape) == 1 and row_axis is not None and not (zshape[0] is not None and zshape[0].value == 1):
        z = R.expand_dims(z, [-1] * (-row_axis - 1)) if row_axis < -1 else z
    elif len(zshape) == 1:
        z = R.reshape(z, [])
    return R.subtract(v, z)


@converter("MatMulInteger")
def _matmul_integer(ctx: NodeContext) -> list[Out]:
    a = _centered(ctx, 0, 2, -2)
    b = _centered(ctx, 1, 3, -1)
    return [R.matmul(a, b)]


def _requantize(ctx: NodeContext, acc: ir.Value, scale: ir.Value, y_zp: int) -> ir.Value:
    """An i32 accumulator times a float scale, quantized with zero point input ``y_zp``."""
    dtype = ctx.dtype(y_zp)
    q = R.multiply(R.astype(acc, "f32"), scale)
    zp = R.astype(ctx.x(y_zp), "f32")
    if len(ctx.shape(y_zp)) == 1:
        zp = R.reshape(zp, [])
    return _quantize(ctx, q, zp, dtype, True)


def _f32(ctx: NodeContext, i: int) -> ir.Value:
    v = ctx.x(i)
    v = v if ctx.dtype(i) == "f32" else R.astype(v, "f32")
    shape = ctx.shape(i)
    return R.reshape(v, []) if len(shape) == 1 and shape[0] is not None and shape[0].value == 1 else v


@converter("QLinearMatMul")
def _qlinear_matmul(ctx: NodeContext) -> list[Out]:
    a = _centered(ctx, 0, 2, -2)
    b = _centered(ctx, 3, 5, -1)
    a_scale = _f32(ctx, 1)
    if len(ctx.shape(1)) == 1 and ctx.shape(1)[0] is not None and ctx.shape(1)[0].value != 1:
        a_scale = R.expand_dims(a_scale, [-1])
    scale = R.divide(R.multiply(a_scale, _f32(ctx, 4)), _f32(ctx, 6))
    return [_requantize(ctx, R.matmul(a, b), scale, 7)]


def _conv(ctx: NodeContext, x: ir.Value, w: ir.Value, rank: int) -> ir.Value:
    if ctx.attr("auto_pad", "NOTSET") not in ("NOTSET", "VALID"):
        raise ConversionError(f"attribute 'auto_pad' = '{ctx.attr('auto_pad')}' is not supported")
    n = rank - 2
    strides = list(ctx.attr("strides", [1] * n))
    dilations = list(ctx.attr("dilations", [1] * n))
    pads = list(ctx.attr("pads", [0] * (2 * n)))
    group = int(ctx.attr("group", 1))
    # relax convolutions are float-only: f64 holds every i32 sum of 8-bit products exactly
    x, w = R.astype(x, "f64"), R.astype(w, "f64")
    if n == 2:
        return R.astype(R.conv2d(x, w, strides, pads, dilations, group), "i32")
    if n == 1:
        return R.astype(R.conv1d(x, w, strides, pads, dilations, group), "i32")
    raise ConversionError(f"{n}-D integer convolution is not supported")


def _centered_weight(ctx: NodeContext, i: int, zp: int) -> ir.Value:
    """Weight ``i`` widened to i32 minus its zero point (scalar, or one per output channel)."""
    w = R.astype(ctx.x(i), "i32")
    if not ctx.has(zp):
        return w
    z = R.astype(ctx.x(zp), "i32")
    zshape = ctx.shape(zp)
    if len(zshape) == 1 and not (zshape[0] is not None and zshape[0].value == 1):
        z = R.expand_dims(z, list(range(1, ctx.rank(i))))
    elif len(zshape) == 1:
        z = R.reshape(z, [])
    return R.subtract(w, z)


@converter("ConvInteger")
def _conv_integer(ctx: NodeContext) -> list[Out]:
    x = R.astype(ctx.x(0), "i32")
    if ctx.has(2):
        x = R.subtract(x, R.reshape(R.astype(ctx.x(2), "i32"), []))
    return [_conv(ctx, x, _centered_weight(ctx, 1, 3), ctx.rank(0))]


@converter("QLinearConv")
def _qlinear_conv(ctx: NodeContext) -> list[Out]:
    x = R.subtract(R.astype(ctx.x(0), "i32"), R.reshape(R.astype(ctx.x(2), "i32"), []))
    w = _centered_weight(ctx, 3, 5)
    acc = _conv(ctx, x, w, ctx.rank(0))
    rank = ctx.rank(0)
    if ctx.has(8):
        acc = R.add(acc, R.expand_dims(ctx.x(8), list(range(1, rank - 1))))
    w_scale = _f32(ctx, 4)
    if len(ctx.shape(4)) == 1 and ctx.shape(4)[0] is not None and ctx.shape(4)[0].value != 1:
        w_scale = R.expand_dims(w_scale, list(range(1, rank - 1)))
    scale = R.divide(R.multiply(_f32(ctx, 1), w_scale), _f32(ctx, 6))
    return [_requantize(ctx, acc, scale, 7)]


@converter("BitCast")
def _bitcast(ctx: NodeContext) -> list[Out]:
    """Same-width reinterpretation; a bool is one byte (ONNX and numpy agree)."""
    dst = relax_dtype(ctx.attr("to"), "attribute 'to'")
    src = ctx.dtype(0)
    if src == "i1" and dst != "i1" and dst in ("i8", "ui8"):
        return [R.astype(ctx.x(0), dst)]  # a bool byte holds 0 or 1
    return [R.bitcast(ctx.x(0), dst)]

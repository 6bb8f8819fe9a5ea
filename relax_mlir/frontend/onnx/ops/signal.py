"""ONNX signal ops: DFT, STFT and the window functions HannWindow, HammingWindow, BlackmanWindow.

DFT is a product with cos/sin matrices built at run time from ``arange`` (so lengths may be symbolic):
the angle of bin k at sample n is ``2 pi ((n k) mod L) / L`` (exact integer phase, no drift with n k),
computed in f64 and rounded once to the input dtype. Samples past the DFT length L are masked out and
missing ones count as zero, which truncates or zero-pads the signal without a copy. An inverse one-sided
DFT (irfft) weighs the bins Hermitian-wise (2 except DC and Nyquist) and gives a real signal. STFT gathers
the frames, multiplies by the window and takes their one-sided DFT.

A window is ``a0 - a1 cos(2 pi n / D) + a2 cos(4 pi n / D)`` over ``n = 0 .. size - 1``, with ``D = size``
(periodic, the default) or ``size - 1`` (symmetric), computed in f64 and rounded once to
``output_datatype``. ``size`` may be known only at run time: the length is then a fresh symbol.
"""

from __future__ import annotations

import math

import numpy as np
import onnx
from mlir import ir

from relax_mlir.dialects import relax as R
from relax_mlir.dialects.dims import normalize_axis
from relax_mlir.dialects.types import TensorType, relax_type
from relax_mlir.frontend.onnx.ops.control_flow import _build_if, _refine
from relax_mlir.frontend.onnx.registry import (
    ConversionError,
    NodeContext,
    Out,
    converter,
    known_dims,
    relax_dtype,
)
from relax_mlir.shape_infer.expr import Expr, const, format_dim

# op -> (a0, a1, a2)
WINDOWS = {
    "HannWindow": (0.5, 0.5, 0.0),
    "HammingWindow": (25.0 / 46.0, 21.0 / 46.0, 0.0),
    "BlackmanWindow": (0.42, 0.5, 0.08),
}


def scalar_dim(ctx: NodeContext, i: int, what: str) -> Expr:
    """Scalar (or one-element) integer input ``i`` as a dim: its value when known at import time, else a
    fresh symbol bound at run time."""
    exprs = ctx.exprs(i)
    if exprs is not None:
        if exprs.size != 1:
            raise ConversionError(f"'{what}' must hold one value, got {exprs.size}")
        return exprs.reshape(-1)[0]
    x = ctx.x(i)
    if ctx.dtype(i) != "i64":
        x = R.astype(x, "i64")
    (d,) = ctx.importer.runtime_dims(R.reshape(x, [1]), f"{ctx.node.output[0]}_{what}")
    return d


@converter(*WINDOWS)
def _window(ctx: NodeContext) -> list[Out]:
    a0, a1, a2 = WINDOWS[ctx.node.op_type]
    dtype = relax_dtype(ctx.attr("output_datatype", onnx.TensorProto.FLOAT), "attribute 'output_datatype'")
    size = scalar_dim(ctx, 0, "size")
    if size.is_const and size.value < 0:
        raise ConversionError(f"'size' must be >= 0, got {size.value}")
    denominator = size if ctx.attr("periodic", 1) else size - const(1)
    n = R.arange(0, format_dim(size), 1, "f64")
    d = R.astype(ctx.value_of(known_dims([denominator])), "f64")
    phase = R.divide(R.multiply(n, R.constant(np.array(2 * math.pi))), R.reshape(d, []))
    w = R.subtract(R.constant(np.array(a0)), R.multiply(R.constant(np.array(a1)), R.cos(phase)))
    if a2:
        w = R.add(
            w, R.multiply(R.constant(np.array(a2)), R.cos(R.multiply(phase, R.constant(np.array(2.0)))))
        )
    return [w if dtype == "f64" else R.astype(w, dtype)]


def _dims(v: ir.Value) -> list[Expr]:
    t = relax_type(v.type)
    assert isinstance(t, TensorType) and t.shape is not None
    if any(d is None for d in t.shape):
        raise ConversionError(f"the signal's dims must be known or symbolic, got {t}")
    return list(t.shape)  # type: ignore[arg-type]


def _f64(v: float) -> ir.Value:
    return R.constant(np.array(v))


def _dft_last(
    ctx: NodeContext, xr: ir.Value, xi: ir.Value | None, length: Expr, inverse: bool, onesided: bool
) -> tuple[ir.Value, ir.Value | None]:
    """The DFT of length ``length`` along the last axis of f64 ``xr`` (+ i ``xi``): (real, imag), or
    (real, None) for an inverse one-sided DFT."""
    n_in = _dims(xr)[-1]
    bins = length // const(2) + const(1) if onesided and not inverse else length
    n = R.expand_dims(R.arange(0, format_dim(n_in), 1, "i64"), [1])  # (a reshape to 0 would copy a dim)
    k = R.expand_dims(R.arange(0, format_dim(bins), 1, "i64"), [0])
    big_l = ctx.value_of(known_dims([length], shape=()))
    phase = R.astype(R.mod(R.multiply(n, k), big_l), "f64")
    angle = R.divide(R.multiply(phase, _f64(2 * math.pi)), R.astype(big_l, "f64"))
    used = length // const(2) + const(1) if onesided and inverse else length  # samples that count
    keep = R.astype(R.less(n, ctx.value_of(known_dims([used], shape=()))), "f64")
    if onesided and inverse:  # Hermitian weights: 2 for the bins mirrored in the full spectrum
        twice = R.logical_and(R.less(_zero_i64(), n), R.less(R.multiply(n, _two_i64()), big_l))
        keep = R.multiply(keep, R.where(twice, _f64(2.0), _f64(1.0)))
    cos, sin = R.multiply(R.cos(angle), keep), R.multiply(R.sin(angle), keep)
    sign = 1.0 if inverse else -1.0  # e^{sign i angle}
    real = R.matmul(xr, cos)
    imag = R.multiply(R.matmul(xr, sin), _f64(sign))
    if xi is not None:
        real = R.subtract(real, R.multiply(R.matmul(xi, sin), _f64(sign)))
        imag = R.add(imag, R.matmul(xi, cos))
    if inverse:
        scale = R.divide(_f64(1.0), R.astype(big_l, "f64"))
        real, imag = R.multiply(real, scale), R.multiply(imag, scale)
    return (real, None) if onesided and inverse else (real, imag)


def _zero_i64() -> ir.Value:
    return R.constant(np.array(0, np.int64))


def _two_i64() -> ir.Value:
    return R.constant(np.array(2, np.int64))


def _components(x: ir.Value) -> tuple[ir.Value, ir.Value | None]:
    """The real and imaginary parts (None for a real signal) of a (..., 1 or 2) signal, as f64."""
    dims = _dims(x)
    last = dims[-1]
    if not last.is_const or last.value not in (1, 2):
        raise ConversionError(
            f"the signal's last dim must be 1 (real) or 2 (complex), got {format_dim(last)}"
        )
    rank = len(dims)
    x64 = R.astype(x, "f64")
    real = R.squeeze(R.strided_slice(x64, [rank - 1], [0], [1], [1]), [rank - 1])
    if last.value == 1:
        return real, None
    return real, R.squeeze(R.strided_slice(x64, [rank - 1], [1], [2], [1]), [rank - 1])


def _assemble(parts: list[ir.Value], dtype: str) -> ir.Value:
    """(..., 1 or 2) of ``dtype`` from the f64 parts."""
    out = [R.expand_dims(p, [-1]) for p in parts]
    y = out[0] if len(out) == 1 else R.concat(out, -1)
    return R.astype(y, dtype)


def _axis_input(node: onnx.NodeProto) -> bool:
    """Whether a DFT node has an ``axis`` input (opset 20), which may be read at run time."""
    return len(node.input) > 2 and node.input[2] != ""


@converter("DFT", control_flow=_axis_input)
def _dft(ctx: NodeContext) -> list[Out]:
    rank = ctx.rank(0)
    if ctx.opset < 20:
        return [_dft_on(ctx, ctx.x(0), normalize_axis(int(ctx.attr("axis", 1)), rank))]
    if not ctx.has(2):
        return [_dft_on(ctx, ctx.x(0), rank - 2)]
    known = ctx.const(2)
    if known is not None:
        return [_dft_on(ctx, ctx.x(0), normalize_axis(int(known.reshape(-1)[0]), rank))]
    return [_dft_runtime_axis(ctx, rank)]


def _dft_runtime_axis(ctx: NodeContext, rank: int) -> ir.Value:
    """DFT along an axis read at run time: an ``scf.if`` chain over the axes a signal of this rank allows
    (``[0, rank - 2]``); another value raises InputError before any branch runs."""
    if rank < 2:
        raise ConversionError(f"the signal must have rank >= 2, got {rank}")
    a = ctx.x(2)
    if relax_type(a.type).shape != ():
        a = R.reshape(a, [])  # ONNX allows a one-element tensor; reshape checks the element count
    if ctx.dtype(2) != "i64":
        a = R.astype(a, "i64")
    rank_c = R.constant(np.array(rank, np.int64))
    a = R.where(R.less(a, _zero_i64()), R.add(a, rank_c), a)
    top = R.constant(np.array(rank - 2, np.int64))
    ok = R.logical_and(R.less_equal(_zero_i64(), a), R.less_equal(a, top))
    what = f"'axis' must lie in [{-rank}, -2] or [0, {rank - 2}] (the last dim holds the parts)"
    x = R.check_true(ctx.x(0), ok, what, "DFT")

    def chain(k: int) -> list[ir.Value]:
        if k == rank - 2:
            return [_dft_on(ctx, x, k)]
        taken = R.equal(a, R.constant(np.array(k, np.int64)))
        return _build_if(ctx, taken, lambda: [_dft_on(ctx, x, k)], lambda: chain(k + 1))

    (y,) = chain(0)
    return _refine(ctx, y, f"{ctx.node.output[0]}_d")


def _dft_on(ctx: NodeContext, x: ir.Value, axis: int) -> ir.Value:
    """DFT of signal ``x`` (input 0's type) along the static ``axis``."""
    rank = ctx.rank(0)
    if axis == rank - 1:
        raise ConversionError("'axis' cannot be the last dim (it holds the real and imaginary parts)")
    inverse, onesided = bool(ctx.attr("inverse", 0)), bool(ctx.attr("onesided", 0))
    n_in = ctx.shape(0)[axis]
    if ctx.has(1):
        length = scalar_dim(ctx, 1, "dft_length")
    elif inverse and onesided:
        length = const(2) * (n_in - const(1))
    else:
        length = n_in
    xr, xi = _components(x)
    # the transformed axis goes last, and back
    perm = [a for a in range(rank - 1) if a != axis] + [axis]
    back = [perm.index(a) for a in range(rank - 1)]
    xr = R.permute_dims(xr, perm)
    xi = None if xi is None else R.permute_dims(xi, perm)
    real, imag = _dft_last(ctx, xr, xi, length, inverse, onesided)
    parts = [real] if imag is None else [real, imag]
    return _assemble([R.permute_dims(p, back) for p in parts], ctx.dtype(0))


@converter("STFT")
def _stft(ctx: NodeContext) -> list[Out]:
    if ctx.rank(0) != 3:
        raise ConversionError(f"the signal must be (batch, length, 1 or 2), got rank {ctx.rank(0)}")
    batch, signal_len, _ = ctx.shape(0)
    step = scalar_dim(ctx, 1, "frame_step")
    if ctx.has(3):
        frame = scalar_dim(ctx, 3, "frame_length")
    elif ctx.has(2):
        frame = ctx.shape(2)[0]
    else:
        raise ConversionError("STFT needs a window or a frame_length")
    onesided = bool(ctx.attr("onesided", 1))
    frames = (signal_len - frame) // step + const(1)
    # indices[f, j] = f * step + j
    f = R.reshape(R.arange(0, format_dim(frames), 1, "i64"), [format_dim(frames), 1])
    j = R.reshape(R.arange(0, format_dim(frame), 1, "i64"), [1, format_dim(frame)])
    idx = R.add(R.multiply(f, ctx.value_of(known_dims([step], shape=()))), j)
    xr, xi = _components(ctx.x(0))  # (batch, length)
    window = None
    if ctx.has(2):
        window = R.astype(ctx.x(2), "f64")

    def framed(v: ir.Value) -> ir.Value:
        flat = R.take(v, R.reshape(idx, [format_dim(frames * frame)]), 1)
        out = R.reshape(flat, [format_dim(batch), format_dim(frames), format_dim(frame)])
        return out if window is None else R.multiply(out, window)

    real, imag = _dft_last(ctx, framed(xr), None if xi is None else framed(xi), frame, False, onesided)
    return [_assemble([real, imag], ctx.dtype(0))]

"""Neural-network ATen ops: linear/matmul family, convolutions, norms, softmax, attention, pooling."""

from __future__ import annotations

import math

import numpy as np
import torch
from mlir import ir

from relax_mlir.dialects import relax as R
from relax_mlir.frontend.onnx.ops.attention import matmul
from relax_mlir.frontend.onnx.ops.nn import conv_nd
from relax_mlir.frontend.onnx.registry import RELAX_TO_NUMPY
from relax_mlir.frontend.torch.registry import (
    ConversionError,
    NodeContext,
    converter,
    dims,
    dtype_of,
    norm_axis,
    scalar,
    spell,
)
from relax_mlir.shape_infer.expr import format_dim


def _transposed(w: ir.Value) -> ir.Value:
    rank = len(dims(w))
    return R.permute_dims(w, list(range(rank - 2)) + [rank - 1, rank - 2])


@converter("aten.linear.default")
def _linear(ctx: NodeContext) -> ir.Value:
    x, w, b = ctx.tensor(0), ctx.tensor(1), ctx.arg(2, "bias")
    y = matmul(x, _transposed(w))
    return y if b is None else R.add(y, b)


@converter("aten.mm.default", "aten.bmm.default", "aten.matmul.default")
def _matmul(ctx: NodeContext) -> ir.Value:
    return matmul(ctx.tensor(0), ctx.tensor(1))


@converter("aten.addmm.default", "aten.baddbmm.default")
def _addmm(ctx: NodeContext) -> ir.Value:
    bias, a, b = ctx.tensor(0), ctx.tensor(1), ctx.tensor(2)
    beta, alpha = ctx.kwargs.get("beta", 1), ctx.kwargs.get("alpha", 1)
    y = matmul(a, b)
    dtype = dtype_of(y)
    if alpha != 1:
        y = R.multiply(y, scalar(alpha, dtype))
    if beta == 0:
        return y
    return R.add(y, bias if beta == 1 else R.multiply(bias, scalar(beta, dtype)))


# -- convolution -----------------------------------------------------------------------------------------


def _pads(padding: object, n: int, kernel: list[int], dilation: list[int]) -> list[int]:
    """Befores then afters, from torch's symmetric ``padding`` (ints, or ``"same"``/``"valid"``)."""
    if padding == "valid":
        return [0] * (2 * n)
    if padding == "same":
        total = [d * (k - 1) for k, d in zip(kernel, dilation)]
        return [t // 2 for t in total] + [t - t // 2 for t in total]
    p = list(padding) if isinstance(padding, (list, tuple)) else [int(padding)] * n
    p = p * n if len(p) == 1 else p
    return p + p


def _ints(v: object, n: int) -> list[int]:
    values = list(v) if isinstance(v, (list, tuple)) else [int(v)]  # type: ignore[call-overload]
    return values * n if len(values) == 1 else values


@converter("aten.conv1d.default", "aten.conv2d.default", "aten.conv1d.padding", "aten.conv2d.padding")
@converter("aten.convolution.default", "aten._convolution.default")
def _conv(ctx: NodeContext) -> ir.Value:
    x, w, b = ctx.tensor(0), ctx.tensor(1), ctx.arg(2, "bias")
    wshape = dims(w)
    n = len(wshape) - 2
    if not all(d.is_const for d in wshape):
        raise ConversionError("the convolution weight needs a static shape")
    kernel = [d.value for d in wshape[2:]]
    if "convolution" in str(ctx.node.target):
        stride, padding, dilation, transposed, _, groups = ctx.args[3:9]
        if transposed:
            raise ConversionError("transposed convolutions are not supported")
    else:
        stride, padding, dilation, groups = (
            ctx.arg(3, "stride", 1),
            ctx.arg(4, "padding", 0),
            ctx.arg(5, "dilation", 1),
            ctx.arg(6, "groups", 1),
        )
    dil = _ints(dilation, n)
    y = conv_nd(x, w, _ints(stride, n), _pads(padding, n, kernel, dil), dil, int(groups))
    if b is not None:
        y = R.add(y, R.expand_dims(b, list(range(1, n + 1))))
    return y


# -- norms -----------------------------------------------------------------------------------------------


def _param_or(ctx: NodeContext, v: object, shape: list, value: float) -> ir.Value:
    if isinstance(v, ir.Value):
        return v
    return R.full(spell(shape), value, ctx.out_dtype)


@converter("aten.layer_norm.default", "aten.native_layer_norm.default")
def _layer_norm(ctx: NodeContext) -> ir.Value | list:
    x = ctx.tensor(0)
    normalized = list(ctx.arg(1))
    shape = dims(x)[len(dims(x)) - len(normalized) :]
    gamma = _param_or(ctx, ctx.arg(2, "weight"), shape, 1.0)
    beta = _param_or(ctx, ctx.arg(3, "bias"), shape, 0.0)
    eps = float(ctx.arg(4, "eps", 1e-5))
    rank = len(dims(x))
    y = R.layer_norm(x, gamma, beta, list(range(rank - len(normalized), rank)), eps)
    return [y, None, None] if "native" in str(ctx.node.target) else y


@converter("aten.rms_norm.default")
def _rms_norm(ctx: NodeContext) -> ir.Value:
    x = ctx.tensor(0)
    normalized = list(ctx.arg(1))
    shape = dims(x)[len(dims(x)) - len(normalized) :]
    gamma = _param_or(ctx, ctx.arg(2, "weight"), shape, 1.0)
    eps = ctx.arg(3, "eps")
    if eps is None:
        eps = float(np.finfo(RELAX_TO_NUMPY[dtype_of(x)]).eps)
    rank = len(dims(x))
    return R.rms_norm(x, gamma, list(range(rank - len(normalized), rank)), float(eps))


@converter("aten.batch_norm.default", "aten._native_batch_norm_legit_no_training.default")
def _batch_norm(ctx: NodeContext) -> ir.Value | list:
    x = ctx.tensor(0)
    native = "native" in str(ctx.node.target)
    if not native and ctx.arg(5, "training", False):
        raise ConversionError("batch_norm in training mode is not supported (export the model in eval mode)")
    channels = [dims(x)[1]]
    gamma = _param_or(ctx, ctx.arg(1, "weight"), channels, 1.0)
    beta = _param_or(ctx, ctx.arg(2, "bias"), channels, 0.0)
    mean, var = ctx.tensor(3), ctx.tensor(4)
    eps = float(ctx.arg(6, "eps", 1e-5) if native else ctx.arg(7, "eps", 1e-5))
    y = R.batch_norm(x, gamma, beta, mean, var, 1, eps)
    return [y, None, None] if native else y


@converter("aten.group_norm.default")
def _group_norm(ctx: NodeContext) -> ir.Value:
    x = ctx.tensor(0)
    channels = [dims(x)[1]]
    gamma = _param_or(ctx, ctx.arg(2, "weight"), channels, 1.0)
    beta = _param_or(ctx, ctx.arg(3, "bias"), channels, 0.0)
    return R.group_norm(x, gamma, beta, int(ctx.arg(1)), float(ctx.arg(4, "eps", 1e-5)))


# -- softmax and attention -------------------------------------------------------------------------------


@converter("aten.softmax.int", "aten._softmax.default", "aten._safe_softmax.default")
def _softmax(ctx: NodeContext) -> ir.Value:
    x, dtype = ctx.tensor(0), ctx.out_dtype
    x = x if dtype_of(x) == dtype else R.astype(x, dtype)
    return R.softmax(x, norm_axis(ctx.arg(1), len(dims(x))))


@converter("aten.log_softmax.int", "aten._log_softmax.default")
def _log_softmax(ctx: NodeContext) -> ir.Value:
    x, dtype = ctx.tensor(0), ctx.out_dtype
    x = x if dtype_of(x) == dtype else R.astype(x, dtype)
    return R.log_softmax(x, norm_axis(ctx.arg(1), len(dims(x))))


@converter("aten.scaled_dot_product_attention.default")
def _sdpa(ctx: NodeContext) -> ir.Value:
    """softmax(q kᵀ * scale + mask) v, with a top-left causal mask, boolean or additive masks, and GQA
    (each group of query heads shares one key/value head)."""
    q, k, v = ctx.tensor(0), ctx.tensor(1), ctx.tensor(2)
    mask = ctx.arg(3, "attn_mask")
    if ctx.arg(4, "dropout_p", 0.0):
        raise ConversionError("scaled_dot_product_attention with dropout is not supported")
    causal, scale = ctx.arg(5, "is_causal", False), ctx.arg(6, "scale")
    qs, ks = dims(q), dims(k)
    rank, dtype = len(qs), dtype_of(q)
    if rank >= 3 and qs[-3] != ks[-3]:
        if not ctx.arg(7, "enable_gqa", False) or not (qs[-3].is_const and ks[-3].is_const):
            raise ConversionError(
                f"{format_dim(qs[-3])} query heads but {format_dim(ks[-3])} key/value heads"
            )
        rep = qs[-3].value // ks[-3].value
        k, v = (_repeat_heads(t, rep) for t in (k, v))
    head = qs[-1]
    if scale is None:
        if not head.is_const:
            raise ConversionError("the head size must be static (or give scale=)")
        scale = 1.0 / math.sqrt(head.value)
    scores = matmul(R.multiply(q, scalar(scale, dtype)), _transposed(k))
    length, total = qs[-2], ks[-2]
    if causal:
        rows = R.expand_dims(R.arange(0, format_dim(length), 1, "i64"), [1])
        cols = R.expand_dims(R.arange(0, format_dim(total), 1, "i64"), [0])
        scores = R.where(R.less_equal(cols, rows), scores, scalar(-math.inf, dtype))
    if isinstance(mask, ir.Value):
        if dtype_of(mask) == "i1":
            scores = R.where(mask, scores, scalar(-math.inf, dtype))
        else:
            scores = R.add(scores, mask if dtype_of(mask) == dtype else R.astype(mask, dtype))
    return matmul(R.softmax(scores, -1), v)


def _repeat_heads(t: ir.Value, rep: int) -> ir.Value:
    """(..., H, S, D) -> (..., H*rep, S, D), each head repeated ``rep`` times in place (repeat_interleave)."""
    if rep == 1:
        return t
    shape = dims(t)
    lead, (h, s, d) = shape[:-3], shape[-3:]
    expanded = R.broadcast_to(R.expand_dims(t, [len(shape) - 2]), spell([*lead, h, rep, s, d]))
    return R.reshape(expanded, spell([*lead, h * rep, s, d]))


# -- pooling ---------------------------------------------------------------------------------------------


@converter("aten.max_pool2d.default", "aten.max_pool2d_with_indices.default")
def _max_pool2d(ctx: NodeContext) -> ir.Value | list:
    x = ctx.tensor(0)
    kernel = _ints(ctx.arg(1, "kernel_size"), 2)
    stride = ctx.arg(2, "stride") or kernel
    padding = _ints(ctx.arg(3, "padding", 0), 2)
    dilation = _ints(ctx.arg(4, "dilation", 1), 2)
    y = R.max_pool2d(
        x, kernel, _ints(stride, 2), padding + padding, dilation, bool(ctx.arg(5, "ceil_mode", False))
    )
    return [y, None] if "indices" in str(ctx.node.target) else y


@converter("aten.avg_pool2d.default")
def _avg_pool2d(ctx: NodeContext) -> ir.Value:
    x = ctx.tensor(0)
    kernel = _ints(ctx.arg(1, "kernel_size"), 2)
    stride = ctx.arg(2, "stride") or kernel
    padding = _ints(ctx.arg(3, "padding", 0), 2)
    if ctx.arg(6, "divisor_override") is not None:
        raise ConversionError("avg_pool2d with divisor_override is not supported")
    return R.avg_pool2d(
        x,
        kernel,
        _ints(stride, 2),
        padding + padding,
        1,
        bool(ctx.arg(4, "ceil_mode", False)),
        bool(ctx.arg(5, "count_include_pad", True)),
    )


@converter("aten.adaptive_avg_pool2d.default", "aten._adaptive_avg_pool2d.default")
def _adaptive_avg_pool2d(ctx: NodeContext) -> ir.Value:
    x = ctx.tensor(0)
    size = _ints(ctx.arg(1), 2)
    if size == [1, 1]:
        return R.mean(x, [2, 3], True)
    return R.adaptive_avg_pool2d(x, size)


_ = torch

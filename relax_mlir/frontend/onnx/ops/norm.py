"""Softmax family, normalizations and losses.

Fused relax ops (softmax, layer_norm, rms_norm, group_norm, batch_norm) are used when the ONNX node
maps onto them exactly; broadcast scales, extra statistics outputs and stash types other than the
input's dtype are decomposed into reductions and elementwise ops, following the ops' function bodies.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from mlir import ir

from relax_mlir.dialects import relax as R
from relax_mlir.dialects.dims import normalize_axes, normalize_axis
from relax_mlir.dialects.types import relax_type
from relax_mlir.frontend.onnx.registry import (
    DTYPES,
    RELAX_TO_NUMPY,
    ConversionError,
    NodeContext,
    Out,
    converter,
    relax_dtype,
)
from relax_mlir.lowering.kernel import FLOAT_TYPES
from relax_mlir.shape_infer.expr import Expr, const, format_dim


def _dtype(v: ir.Value) -> str:
    return relax_type(v.type).dtype


def _scalar(value: float, dtype: str) -> ir.Value:
    return R.constant(np.array(value, dtype=RELAX_TO_NUMPY[dtype]))


def _known_shape(ctx: NodeContext, i: int) -> list[Expr]:
    shape = ctx.shape(i)
    if any(d is None for d in shape):
        raise ConversionError(f"input #{i} needs known dims, got {[format_dim(d) for d in shape]}")
    return list(shape)  # type: ignore[arg-type]


def _product(dims: Sequence[Expr]) -> Expr:
    out = const(1)
    for d in dims:
        out = out * d
    return out


# -- Softmax, LogSoftmax, Hardmax ----------------------------------------------------------------------


def _hardmax(x: ir.Value, axis: int, n: Expr, rank: int) -> ir.Value:
    """One-hot of the first maximum along ``axis``."""
    idx = R.argmax(x, axis, True)
    positions = R.reshape(R.arange(format_dim(n)), [format_dim(n) if i == axis else 1 for i in range(rank)])
    return R.astype(R.equal(positions, idx), _dtype(x))


@converter("Softmax", "LogSoftmax", "Hardmax")
def _softmax(ctx: NodeContext) -> list[Out]:
    op = ctx.node.op_type
    rank = ctx.rank(0)
    x = ctx.x(0)
    if ctx.dtype(0) not in FLOAT_TYPES:
        raise ConversionError(f"{op} of a {ctx.dtype(0)} tensor is not supported")
    axis = normalize_axis(ctx.attr("axis", -1 if ctx.opset >= 13 else 1), rank)
    if ctx.opset >= 13:
        if op == "Hardmax":
            return [_hardmax(x, axis, _known_shape(ctx, 0)[axis], rank)]
        return [(R.softmax if op == "Softmax" else R.log_softmax)(x, axis)]
    # opsets < 13: the input is coerced to 2-D [prod(dims[:axis]), prod(dims[axis:])]
    shape = _known_shape(ctx, 0)
    rows, cols = _product(shape[:axis]), _product(shape[axis:])
    flat = R.reshape(x, [format_dim(rows), format_dim(cols)])
    if op == "Hardmax":
        y = _hardmax(flat, 1, cols, 2)
    else:
        y = (R.softmax if op == "Softmax" else R.log_softmax)(flat, 1)
    return [R.reshape(y, [format_dim(d) for d in shape])]


# -- LayerNormalization, RMSNormalization ---------------------------------------------------------------


def _stash(ctx: NodeContext) -> str:
    stash = ctx.attr("stash_type", 1)
    if stash not in DTYPES or relax_dtype(stash, "attribute 'stash_type'")[0] != "f":
        raise ConversionError(f"attribute 'stash_type' = {stash} is not a supported float type")
    return relax_dtype(stash, "attribute 'stash_type'")


def _same_shape(ctx: NodeContext, i: int, dims: Sequence[Expr]) -> bool:
    shape = ctx.shape(i)
    return len(shape) == len(dims) and all(a is not None and a == b for a, b in zip(shape, dims))


@converter("LayerNormalization", "RMSNormalization")
def _layer_norm(ctx: NodeContext) -> list[Out]:
    op = ctx.node.op_type
    rank, dtype = ctx.rank(0), ctx.dtype(0)
    axis = normalize_axis(ctx.attr("axis", -1), rank)
    axes = list(range(axis, rank))
    eps = float(ctx.attr("epsilon", 1e-5))
    stash = _stash(ctx)
    centered = op == "LayerNormalization"
    has_bias = centered and ctx.has(2)
    extra = [o for o in ctx.node.output[1:] if o]
    normalized = ctx.shape(0)[axis:]
    fused = (
        not extra
        and stash == dtype
        and _same_shape(ctx, 1, normalized)  # type: ignore[arg-type]
        and (not has_bias or _same_shape(ctx, 2, normalized))  # type: ignore[arg-type]
    )
    x, scale = ctx.x(0), ctx.x(1)
    if fused and centered:
        bias = ctx.x(2) if has_bias else R.zeros([format_dim(d) for d in normalized], dtype)
        return [R.layer_norm(x, scale, bias, axes, eps)]
    if fused:
        return [R.rms_norm(x, scale, axes, eps)]
    xs = x if stash == dtype else R.astype(x, stash)
    mean = R.mean(xs, axes, True) if centered else None
    d = R.subtract(xs, mean) if centered else xs
    var = R.mean(R.multiply(d, d), axes, True)
    inv = R.divide(_scalar(1.0, stash), R.sqrt(R.add(var, _scalar(eps, stash))))
    y = R.multiply(d, inv)
    if stash != dtype:
        y = R.astype(y, dtype)
    y = R.multiply(y, scale)
    if has_bias:
        y = R.add(y, ctx.x(2))
    if not centered:
        return [y]
    return [y, mean, inv]


# -- GroupNormalization, InstanceNormalization ------------------------------------------------------------


def _per_channel(v: ir.Value, rank: int) -> ir.Value:
    """A [C] tensor shaped to broadcast against (N, C, ...)."""
    return R.expand_dims(v, [0, *range(2, rank)]) if rank > 1 else v


@converter("GroupNormalization")
def _group_norm(ctx: NodeContext) -> list[Out]:
    rank, dtype = ctx.rank(0), ctx.dtype(0)
    if rank < 2:
        raise ConversionError(f"GroupNormalization needs a (N, C, ...) input, got rank {rank}")
    groups = int(ctx.attr("num_groups"))
    eps = float(ctx.attr("epsilon", 1e-5))
    stash = _stash(ctx) if ctx.opset >= 21 else dtype
    shape = _known_shape(ctx, 0)
    channels = shape[1]
    x, scale, bias = ctx.x(0), ctx.x(1), ctx.x(2)
    if ctx.opset < 21:  # scale and bias are per group: repeat them per channel
        if not channels.is_const:
            raise ConversionError("GroupNormalization before opset 21 needs a known channel count")
        per = channels.value // groups
        scale, bias = R.repeat(scale, per, 0), R.repeat(bias, per, 0)
    if stash == dtype:
        return [R.group_norm(x, scale, bias, groups, eps)]
    y = R.group_norm(R.astype(x, stash), R.astype(scale, stash), R.astype(bias, stash), groups, eps)
    return [R.astype(y, dtype)]


@converter("InstanceNormalization")
def _instance_norm(ctx: NodeContext) -> list[Out]:
    rank, dtype = ctx.rank(0), ctx.dtype(0)
    if rank < 3:
        raise ConversionError(f"InstanceNormalization needs a (N, C, D1, ...) input, got rank {rank}")
    eps = float(ctx.attr("epsilon", 1e-5))
    shape = _known_shape(ctx, 0)
    x, scale, bias = ctx.x(0), ctx.x(1), ctx.x(2)
    if shape[1].is_const:
        return [R.group_norm(x, scale, bias, shape[1].value, eps)]
    axes = list(range(2, rank))
    mean = R.mean(x, axes, True)
    d = R.subtract(x, mean)
    var = R.mean(R.multiply(d, d), axes, True)
    y = R.divide(d, R.sqrt(R.add(var, _scalar(eps, dtype))))
    return [R.add(R.multiply(y, _per_channel(scale, rank)), _per_channel(bias, rank))]


# -- BatchNormalization ---------------------------------------------------------------------------------


@converter("BatchNormalization")
def _batch_norm(ctx: NodeContext) -> list[Out]:
    rank = ctx.rank(0)
    if rank < 2:
        raise ConversionError(f"BatchNormalization needs a (N, C, ...) input, got rank {rank}")
    if ctx.opset < 9 and not ctx.attr("spatial", 1):
        raise ConversionError("attribute 'spatial' = 0 is not supported")
    eps = float(ctx.attr("epsilon", 1e-5))
    x, scale, bias, mean, var = (ctx.x(i) for i in range(5))
    training = ctx.attr("training_mode", 0) if ctx.opset >= 14 else 0
    if ctx.opset < 14 and any(ctx.node.output[1:]):
        raise ConversionError(
            "training outputs (running and saved statistics) before opset 14 are not supported"
        )
    if not training:
        return [R.batch_norm(x, scale, bias, mean, var, 1, eps)]
    momentum = float(ctx.attr("momentum", 0.9))
    dtype = ctx.dtype(0)
    axes = [0, *range(2, rank)]
    saved_mean, saved_var = R.mean(x, axes), R.variance(x, axes)
    y = R.batch_norm(x, scale, bias, saved_mean, saved_var, 1, eps)
    m, rest = _scalar(momentum, dtype), _scalar(1.0 - momentum, dtype)
    running_mean = R.add(R.multiply(mean, m), R.multiply(saved_mean, rest))
    running_var = R.add(R.multiply(var, m), R.multiply(saved_var, rest))
    return [y, running_mean, running_var]


# -- LpNormalization, MeanVarianceNormalization ----------------------------------------------------------


@converter("LpNormalization")
def _lp_norm(ctx: NodeContext) -> list[Out]:
    axis = normalize_axis(ctx.attr("axis", -1), ctx.rank(0))
    p = ctx.attr("p", 2)
    x = ctx.x(0)
    if p == 1:
        norm = R.sum(R.abs(x), [axis], True)
    elif p == 2:
        norm = R.sqrt(R.sum(R.multiply(x, x), [axis], True))
    else:
        raise ConversionError(f"attribute 'p' = {p} is not supported (1 or 2)")
    zero = _scalar(0, ctx.dtype(0))
    return [R.where(R.equal(norm, zero), zero, R.divide(x, norm))]  # a zero vector stays zero


@converter("MeanVarianceNormalization")
def _mvn(ctx: NodeContext) -> list[Out]:
    rank, dtype = ctx.rank(0), ctx.dtype(0)
    axes = sorted(normalize_axes(ctx.attr("axes", [0, 2, 3]), rank))
    x = ctx.x(0)
    mean = R.mean(x, axes, True)
    var = R.subtract(R.mean(R.multiply(x, x), axes, True), R.multiply(mean, mean))
    std = R.add(R.sqrt(var), _scalar(1e-9, dtype))
    return [R.divide(R.subtract(x, mean), std)]


# -- NegativeLogLikelihoodLoss, SoftmaxCrossEntropyLoss ----------------------------------------------------


def _nll(ctx: NodeContext, log_prob: ir.Value) -> ir.Value:
    """The NLL loss of ``log_prob`` (N, C, ...) against target input #1 and optional weight input #2."""
    reduction = ctx.attr("reduction", "mean")
    if reduction not in ("none", "sum", "mean"):
        raise ConversionError(f"attribute 'reduction' = '{reduction}' is not supported (none, sum, mean)")
    if ctx.rank(0) < 2:
        raise ConversionError(f"input #0 needs shape (N, C, ...), got rank {ctx.rank(0)}")
    dtype = _dtype(log_prob)
    target = ctx.x(1)
    if ctx.dtype(1) != "i64":
        target = R.astype(target, "i64")
    weight = None
    mask = None
    if ctx.has_attr("ignore_index"):
        ignore = R.constant(np.array(int(ctx.attr("ignore_index")), dtype=np.int64))
        mask = R.not_equal(target, ignore)
        target = R.where(mask, target, R.zeros([], "i64"))
    picked = R.squeeze(R.gather_elements(log_prob, R.expand_dims(target, [1]), 1), [1])
    loss = R.neg(picked)
    if ctx.has(2):
        weight = R.take(ctx.x(2), target, 0)
        if mask is not None:
            weight = R.where(mask, weight, R.zeros([], dtype))
    elif mask is not None:
        weight = R.astype(mask, dtype)
    if weight is not None:
        loss = R.multiply(loss, weight)
    if reduction == "none":
        return loss
    if reduction == "sum":
        return R.sum(loss)
    if weight is not None:
        return R.divide(R.sum(loss), R.sum(weight))
    return R.mean(loss)


@converter("NegativeLogLikelihoodLoss")
def _nll_loss(ctx: NodeContext) -> list[Out]:
    return [_nll(ctx, ctx.x(0))]


@converter("SoftmaxCrossEntropyLoss")
def _sce_loss(ctx: NodeContext) -> list[Out]:
    if ctx.rank(0) < 2:
        raise ConversionError(f"input #0 needs shape (N, C, ...), got rank {ctx.rank(0)}")
    log_prob = R.log_softmax(ctx.x(0), 1)
    return [_nll(ctx, log_prob), log_prob]

"""Transformer composite ONNX ops, decomposed into relax ops: Attention, RotaryEmbedding, SwiGLU,
LinearAttention, CausalConvWithState.

Attention (opsets 23..25) becomes: heads split (3-D inputs), KV-cache concat, Q and K scaled by
sqrt(scale), GQA heads repeated, ``matmul``, softcap, an additive bias (float mask, boolean mask,
causal / sliding-window / padding masks as one ``where(allowed, 0, -inf)``), ``softmax`` (in
``softmax_precision``), a zero guard for fully masked rows, and ``matmul`` with V. Every dim stays
symbolic: the causal frontier is an ``arange`` comparison over ``(q, total)`` positions.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from mlir import ir

from relax_mlir.dialects import relax as R
from relax_mlir.dialects.dims import provably_different
from relax_mlir.dialects.types import TensorType, relax_type
from relax_mlir.frontend.onnx.registry import (
    DTYPES,
    RELAX_TO_NUMPY,
    ConversionError,
    NodeContext,
    Out,
    converter,
    known_dims,
)
from relax_mlir.lowering.kernel import FLOAT_TYPES
from relax_mlir.shape_infer.expr import Expr, const, format_dim

# -- small helpers -----------------------------------------------------------------------------------


def shape_of(v: ir.Value, what: str) -> list[Expr]:
    """The dims of relax tensor ``v``; a ConversionError naming ``what`` when a dim is unknown."""
    t = relax_type(v.type)
    if not isinstance(t, TensorType) or t.shape is None or any(d is None for d in t.shape):
        raise ConversionError(f"{what} needs a known shape, got {t}")
    return list(t.shape)


def dtype_of(v: ir.Value) -> str:
    t = relax_type(v.type)
    assert isinstance(t, TensorType) and t.dtype is not None
    return t.dtype


def spell(dims: Sequence[Expr | int]) -> list[int | str]:
    return [d if isinstance(d, int) else format_dim(d) for d in dims]


def scalar(value: float, dtype: str) -> ir.Value:
    """A 0-D constant of relax dtype ``dtype``."""
    return R.constant(np.array(value, dtype=RELAX_TO_NUMPY[dtype]))


def require_float(ctx: NodeContext, i: int, what: str) -> str:
    dtype = ctx.dtype(i)
    if dtype not in FLOAT_TYPES:
        raise ConversionError(f"{what} has element type {dtype}; only f16, bf16, f32 and f64 are supported")
    return dtype


def split_heads(x: ir.Value, heads: int, what: str) -> ir.Value:
    """(B, S, H*D) -> (B, H, S, D)."""
    b, s, hidden = shape_of(x, what)
    if hidden.is_const:
        if hidden.value % heads:
            raise ConversionError(f"{what}: hidden size {hidden.value} is not a multiple of {heads} heads")
        head = format_dim(const(hidden.value // heads))
    else:
        head = -1
    return R.permute_dims(R.reshape(x, [format_dim(b), format_dim(s), heads, head]), [0, 2, 1, 3])


def merge_heads(y: ir.Value) -> ir.Value:
    """(B, H, S, D) -> (B, S, H*D)."""
    b, h, s, d = shape_of(y, "the attention output")
    return R.reshape(R.permute_dims(y, [0, 2, 1, 3]), spell([b, s, h * d]))


def matmul(a: ir.Value, b: ir.Value) -> ir.Value:
    """``a @ b``; f16 and bf16 operands are multiplied and accumulated in f32, then rounded once (as
    numpy does: a long 16-bit accumulation would lose digits)."""
    dtype = dtype_of(a)
    if dtype not in ("f16", "bf16"):
        return R.matmul(a, b)
    return R.astype(R.matmul(R.astype(a, "f32"), R.astype(b, "f32")), dtype)


# -- Attention ---------------------------------------------------------------------------------------


def _positions(start: Expr, length: Expr) -> ir.Value:
    """arange(start, start + length) as i64."""
    return R.arange(format_dim(start), format_dim(start + length), 1, "i64")


def _structural_allowed(
    ctx: NodeContext,
    causal: bool,
    left: int,
    right: int,
    q_len: Expr,
    total: Expr,
    past: Expr,
    nonpad: ir.Value | None,
    batch: Expr,
) -> ir.Value | None:
    """The boolean (q, total) or (B, 1, q, total) set of keys each query may see, from the causal
    frontier, the sliding window and the padding given by nonpad_kv_seqlen (None: every key)."""
    if not (causal or left >= 0 or right >= 0 or nonpad is not None):
        return None
    cols = R.reshape(_positions(const(0), total), [1, format_dim(total)])
    if nonpad is not None:
        # absolute query positions per batch: i + nonpad[b] - q_len, shape (B, q, 1)
        q_len_value = ctx.value_of(known_dims([q_len], shape=()))
        offset = R.subtract(R.reshape(nonpad, [format_dim(batch), 1, 1]), q_len_value)
        rows = R.add(R.reshape(_positions(const(0), q_len), [1, format_dim(q_len), 1]), offset)
        cols = R.reshape(cols, [1, 1, format_dim(total)])
    else:
        rows = R.reshape(_positions(past, q_len), [format_dim(q_len), 1])
    allowed: ir.Value | None = None

    def conj(a: ir.Value | None, b: ir.Value) -> ir.Value:
        return b if a is None else R.logical_and(a, b)

    if causal:
        allowed = conj(allowed, R.less_equal(cols, rows))
    if left >= 0:
        allowed = conj(allowed, R.less_equal(R.subtract(rows, cols), scalar(left, "i64")))
    if right >= 0:
        allowed = conj(allowed, R.less_equal(R.subtract(cols, rows), scalar(right, "i64")))
    if nonpad is not None:
        valid = R.less(cols, R.reshape(nonpad, [format_dim(batch), 1, 1]))  # (B, 1, total)
        allowed = conj(allowed, valid)
        allowed = R.expand_dims(allowed, [1])  # (B, 1, q, total)
    return allowed


def _mask_bias(ctx: NodeContext, dtype: str, total: Expr) -> ir.Value:
    """attn_mask as an additive bias of ``dtype`` whose last dim is padded to ``total`` with -inf."""
    mask = ctx.x(3)
    mask_dtype = ctx.dtype(3)
    if mask_dtype == "i1":
        bias = R.where(mask, scalar(0, dtype), scalar(-np.inf, dtype))
    elif mask_dtype in FLOAT_TYPES:
        bias = mask if mask_dtype == dtype else R.astype(mask, dtype)
    else:
        raise ConversionError(f"attn_mask has element type {mask_dtype}; expected bool or the type of Q")
    dims = shape_of(bias, "attn_mask")
    last = dims[-1]
    if last == total:
        return bias
    if last.is_const and total.is_const and last.value > total.value:
        raise ConversionError(
            f"attn_mask's last dim {last.value} is longer than the total sequence length {total.value}"
        )
    fill = R.full(spell(dims[:-1] + [total - last]), -math.inf, dtype)
    return R.concat([bias, fill], -1)


def _scale_factor(ctx: NodeContext, head: Expr, dtype: str) -> np.floating:
    """sqrt(scale) in the input dtype (Q and K are each multiplied by it)."""
    if ctx.has_attr("scale"):
        scale = float(ctx.attr("scale"))
    else:
        if not head.is_const:
            raise ConversionError("the default scale needs a head size known at import time")
        scale = 1.0 / math.sqrt(head.value)
    return RELAX_TO_NUMPY[dtype].type(np.sqrt(np.float64(scale)))


@converter("Attention")
def _attention(ctx: NodeContext) -> list[Out]:
    dtype = require_float(ctx, 0, "Q")
    rank = ctx.rank(0)
    if rank not in (3, 4) or ctx.rank(1) != rank or ctx.rank(2) != rank:
        raise ConversionError(
            f"Q, K and V must all be 3-D or all 4-D, got ranks {[ctx.rank(i) for i in range(3)]}"
        )
    q, k, v = ctx.x(0), ctx.x(1), ctx.x(2)
    if ctx.dtype(1) != dtype or ctx.dtype(2) != dtype:
        raise ConversionError(
            f"Q, K and V must have one element type, got {[ctx.dtype(i) for i in range(3)]}"
        )
    if rank == 3:
        q_heads, kv_heads = ctx.attr("q_num_heads"), ctx.attr("kv_num_heads")
        if q_heads is None or kv_heads is None or q_heads <= 0 or kv_heads <= 0:
            raise ConversionError(
                f"3-D inputs need positive attributes q_num_heads and kv_num_heads, got {q_heads} and {kv_heads}"
            )
        q, k, v = split_heads(q, q_heads, "Q"), split_heads(k, kv_heads, "K"), split_heads(v, kv_heads, "V")
    left, right = int(ctx.attr("left_window_size", -1)), int(ctx.attr("right_window_size", -1))
    if left < -1 or right < -1:
        raise ConversionError(f"left_window_size {left} / right_window_size {right}: must be -1 or >= 0")
    mode = int(ctx.attr("qk_matmul_output_mode", 0))
    if mode not in (0, 1, 2, 3):
        raise ConversionError(f"qk_matmul_output_mode {mode} is not one of 0, 1, 2, 3")
    causal = bool(ctx.attr("is_causal", 0))
    softcap = float(ctx.attr("softcap", 0.0))

    batch, q_heads4, q_len, head = shape_of(q, "Q")
    # KV cache
    if ctx.has(4) != ctx.has(5):
        raise ConversionError("past_key and past_value must be given together")
    past = const(0)
    if ctx.has(4):
        past_k, past_v = ctx.x(4), ctx.x(5)
        past = shape_of(past_k, "past_key")[2]
        k, v = R.concat([past_k, k], 2), R.concat([past_v, v], 2)
    present_k, present_v = k, v
    nonpad = None
    if ctx.has(6):
        if ctx.has(4):
            raise ConversionError("nonpad_kv_seqlen cannot be combined with past_key / past_value")
        nonpad = ctx.x(6)
        if ctx.dtype(6) != "i64":
            nonpad = R.astype(nonpad, "i64")
    _, kv_heads4, total, _ = shape_of(k, "K")

    # GQA: query head h reads kv head h // (q_heads / kv_heads)
    if q_heads4 != kv_heads4:
        if not (q_heads4.is_const and kv_heads4.is_const):
            raise ConversionError("Q and K have different head counts that are not known at import time")
        if q_heads4.value % kv_heads4.value:
            raise ConversionError(
                f"q_num_heads {q_heads4.value} is not a multiple of kv_num_heads {kv_heads4.value}"
            )
        reps = q_heads4.value // kv_heads4.value
    else:
        reps = 1

    s = _scale_factor(ctx, head, dtype)
    qs = R.multiply(q, R.constant(np.array(s)))
    ks = R.multiply(k, R.constant(np.array(s)))
    vr = v
    if reps > 1:
        ks, vr = R.repeat(ks, reps, 1), R.repeat(v, reps, 1)
    qk = matmul(qs, R.permute_dims(ks, [0, 1, 3, 2]))
    raw = qk
    if softcap > 0:
        qk = R.multiply(R.tanh(R.divide(qk, scalar(softcap, dtype))), scalar(softcap, dtype))
    capped = qk

    bias = _mask_bias(ctx, dtype, total) if ctx.has(3) else None
    allowed = _structural_allowed(ctx, causal, left, right, q_len, total, past, nonpad, batch)
    if allowed is not None:
        structural = R.where(allowed, scalar(0, dtype), scalar(-np.inf, dtype))
        bias = structural if bias is None else R.add(bias, structural)
    if bias is not None:
        qk = R.add(qk, bias)
    with_bias = qk

    sm_dtype = dtype
    if ctx.has_attr("softmax_precision"):
        code = int(ctx.attr("softmax_precision"))
        sm_dtype = DTYPES.get(code, (None,))[0]
        if sm_dtype not in FLOAT_TYPES:
            raise ConversionError(f"softmax_precision {code} is not supported (f16, bf16, f32 or f64 only)")
    if sm_dtype != dtype:
        qk = R.astype(qk, sm_dtype)
    probs = R.softmax(qk, -1)  # f16 sums accumulate in f32 (relax.softmax's lowering)
    if bias is not None:
        # a row whose bias is -inf everywhere attends nothing: its probabilities are 0, not NaN
        row_max = R.max(bias, [-1], True)
        empty = R.equal(row_max, scalar(-np.inf, dtype))
        probs = R.where(empty, scalar(0, sm_dtype), probs)
    if sm_dtype != dtype:
        probs = R.astype(probs, dtype)
    y = matmul(probs, vr)
    if rank == 3:
        y = merge_heads(y)

    outputs = list(ctx.node.output) + [""] * 4
    qk_out = None
    if outputs[3]:
        qk_out = {0: raw, 1: capped, 2: with_bias, 3: probs}[mode]
    return [
        y,
        present_k if outputs[1] else None,
        present_v if outputs[2] else None,
        qk_out,
    ]


# -- RotaryEmbedding ---------------------------------------------------------------------------------


def _last_slice(x: ir.Value, begin: Expr | int, end: Expr | int, step: int = 1) -> ir.Value:
    return R.strided_slice(x, [-1], spell([begin]), spell([end]), [step])


@converter("RotaryEmbedding")
def _rotary_embedding(ctx: NodeContext) -> list[Out]:
    dtype = require_float(ctx, 0, "X")
    rank = ctx.rank(0)
    x = ctx.x(0)
    if rank == 3:
        heads = ctx.attr("num_heads")
        if not heads or heads <= 0:
            raise ConversionError(f"3-D input needs a positive attribute num_heads, got {heads}")
        b, s, hidden = shape_of(x, "X")
        if not hidden.is_const or hidden.value % heads:
            raise ConversionError(
                f"hidden size {format_dim(hidden)} is not a known multiple of num_heads {heads}"
            )
        x = R.reshape(x, spell([b, s, heads, hidden.value // heads]))  # (B, S, H, D)
        head_axis = 2
    elif rank == 4:
        head_axis = 1  # (B, H, S, D)
    else:
        raise ConversionError(f"X must be 3-D or 4-D, got rank {rank}")
    head = shape_of(x, "X")[3]
    rd = int(ctx.attr("rotary_embedding_dim", 0)) or None
    if rd is None:
        if not head.is_const:
            raise ConversionError("the head size must be known at import time when rotary_embedding_dim is 0")
        rd = head.value
    if rd % 2 or (head.is_const and rd > head.value):
        raise ConversionError(
            f"rotary_embedding_dim {rd} must be even and at most the head size {format_dim(head)}"
        )
    half = rd // 2
    caches = []
    for i, name in ((1, "cos_cache"), (2, "sin_cache")):
        c = ctx.x(i)
        if ctx.dtype(i) != dtype:
            raise ConversionError(f"{name} has element type {ctx.dtype(i)}, X has {dtype}")
        if ctx.has(3):
            ids = ctx.x(3) if ctx.dtype(3) in ("i32", "i64") else R.astype(ctx.x(3), "i64")
            c = R.take(c, ids, 0)  # (B, S, rd/2)
        last = shape_of(c, name)[-1]
        if provably_different(last, const(half)):
            raise ConversionError(
                f"{name}'s last dim {format_dim(last)} is not rotary_embedding_dim/2 = {half}"
            )
        caches.append(R.expand_dims(c, [head_axis]))
    cos, sin = caches
    x_rot = x if head.is_const and rd == head.value else _last_slice(x, 0, rd)
    if ctx.attr("interleaved", 0):
        x1, x2 = _last_slice(x_rot, 0, rd, 2), _last_slice(x_rot, 1, rd, 2)
    else:
        x1, x2 = _last_slice(x_rot, 0, half), _last_slice(x_rot, half, rd)
    real = R.subtract(R.multiply(cos, x1), R.multiply(sin, x2))
    imag = R.add(R.multiply(sin, x1), R.multiply(cos, x2))
    if ctx.attr("interleaved", 0):
        pairs = R.concat([R.expand_dims(real, [-1]), R.expand_dims(imag, [-1])], -1)
        rotated = R.reshape(pairs, spell(shape_of(x_rot, "X")))
    else:
        rotated = R.concat([real, imag], -1)
    if not (head.is_const and rd == head.value):
        rotated = R.concat([rotated, _last_slice(x, rd, head)], -1)
    if rank == 3:
        rotated = R.reshape(rotated, spell(ctx.shape(0)))
    return [rotated]


# -- SwiGLU ------------------------------------------------------------------------------------------


@converter("SwiGLU")
def _swiglu(ctx: NodeContext) -> list[Out]:
    dtype = require_float(ctx, 0, "A")
    if ctx.dtype(1) != dtype:
        raise ConversionError(f"A and B must have one element type, got {dtype} and {ctx.dtype(1)}")
    a, b = ctx.x(0), ctx.x(1)
    alpha = float(ctx.attr("alpha", 1.0))
    gate = R.divide(scalar(1, dtype), R.add(scalar(1, dtype), R.exp(R.multiply(a, scalar(-alpha, dtype)))))
    return [R.multiply(R.multiply(a, gate), b)]


# -- CausalConvWithState -----------------------------------------------------------------------------


@converter("CausalConvWithState")
def _causal_conv_with_state(ctx: NodeContext) -> list[Out]:
    dtype = require_float(ctx, 0, "input")
    activation = ctx.attr("activation", "none")
    if activation not in ("none", "silu", "swish"):
        raise ConversionError(f"activation '{activation}' is not one of 'none', 'silu', 'swish'")
    if ctx.rank(0) != 3 or ctx.rank(1) != 3:
        raise ConversionError(f"input and weight must be 3-D, got ranks {ctx.rank(0)} and {ctx.rank(1)}")
    x, w = ctx.x(0), ctx.x(1)
    batch, channels, length = shape_of(x, "input")
    kernel = shape_of(w, "weight")[2]
    if not channels.is_const or not kernel.is_const:
        raise ConversionError("the channel count and the kernel size must be known at import time")
    k = kernel.value
    if ctx.has(3):
        state = ctx.x(3)
    else:
        state = R.full(spell([batch, channels, k - 1]), 0.0, dtype)
    padded = R.concat([state, x], 2) if k > 1 else x
    conv_in, conv_w = (padded, w) if dtype != "f16" else (R.astype(padded, "f32"), R.astype(w, "f32"))
    y = R.conv1d(conv_in, conv_w, 1, 0, 1, channels.value)
    if ctx.has(2):
        b = ctx.x(2) if dtype != "f16" else R.astype(ctx.x(2), "f32")
        y = R.add(y, R.reshape(b, [channels.value, 1]))
    if dtype == "f16":
        y = R.astype(y, "f16")
    if activation != "none":
        y32 = y if dtype == "f32" else R.astype(y, "f32")
        one = scalar(1, "f32")
        y32 = R.multiply(y32, R.divide(one, R.add(one, R.exp(R.neg(y32)))))
        y = y32 if dtype == "f32" else R.astype(y32, dtype)
    if k > 1:
        present = R.strided_slice(padded, [2], spell([length]), spell([length + k - 1]))
    else:
        present = R.full(spell([batch, channels, 0]), 0.0, dtype)
    return [y, present]


# -- LinearAttention ---------------------------------------------------------------------------------


@converter("LinearAttention")
def _linear_attention(ctx: NodeContext) -> list[Out]:
    dtype = require_float(ctx, 0, "query")
    rule = ctx.attr("update_rule", "gated_delta")
    if rule not in ("linear", "gated", "delta", "gated_delta"):
        raise ConversionError(f"update_rule '{rule}' is not one of linear, gated, delta, gated_delta")
    q_heads, kv_heads = ctx.attr("q_num_heads"), ctx.attr("kv_num_heads")
    if not q_heads or not kv_heads or q_heads <= 0 or kv_heads <= 0 or q_heads % kv_heads:
        raise ConversionError(f"q_num_heads {q_heads} must be a positive multiple of kv_num_heads {kv_heads}")
    gating, delta = rule in ("gated", "gated_delta"), rule in ("delta", "gated_delta")
    if gating != ctx.has(4):
        raise ConversionError(f"update_rule '{rule}' {'needs' if gating else 'forbids'} the decay input")
    if delta != ctx.has(5):
        raise ConversionError(f"update_rule '{rule}' {'needs' if delta else 'forbids'} the beta input")
    for i, name in ((0, "query"), (1, "key"), (2, "value")):
        if ctx.rank(i) != 3:
            raise ConversionError(f"{name} must be 3-D (B, T, H*D), got rank {ctx.rank(i)}")
    b, t, q_hidden = shape_of(ctx.x(0), "query")
    v_hidden = shape_of(ctx.x(2), "value")[2]
    if not (t.is_const and q_hidden.is_const and v_hidden.is_const):
        raise ConversionError(
            "the sequence length and hidden sizes must be known at import time (the op is unrolled)"
        )
    d_k, d_v, group = q_hidden.value // q_heads, v_hidden.value // kv_heads, q_heads // kv_heads

    def f32(v: ir.Value) -> ir.Value:
        return v if dtype_of(v) == "f32" else R.astype(v, "f32")

    q = f32(split_heads(ctx.x(0), q_heads, "query"))  # (B, Hq, T, dk)
    k = f32(split_heads(ctx.x(1), kv_heads, "key"))
    v = f32(split_heads(ctx.x(2), kv_heads, "value"))
    decay = beta = None
    if gating:
        last = shape_of(ctx.x(4), "decay")[2]
        if last == const(kv_heads):
            decay = R.permute_dims(R.reshape(ctx.x(4), spell([b, t, kv_heads, 1])), [0, 2, 1, 3])
        elif last == const(kv_heads * d_k):
            decay = split_heads(ctx.x(4), kv_heads, "decay")
        else:
            raise ConversionError(
                f"decay's last dim {format_dim(last)} is neither kv_num_heads nor kv_num_heads*d_k"
            )
        decay = R.exp(f32(decay))  # (B, Hkv, T, 1 or dk)
    if delta:
        last = shape_of(ctx.x(5), "beta")[2]
        if not last.is_const or last.value not in (kv_heads, 1):
            raise ConversionError(f"beta's last dim {format_dim(last)} is neither kv_num_heads nor 1")
        beta = f32(R.permute_dims(R.reshape(ctx.x(5), spell([b, t, last.value, 1])), [0, 2, 1, 3]))
    if ctx.has(3):
        state_dtype = ctx.dtype(3)
        state = f32(ctx.x(3))
    else:
        state_dtype = dtype
        state = R.full(spell([b, kv_heads, d_k, d_v]), 0.0, "f32")
    scale = float(ctx.attr("scale", 0.0)) or 1.0 / math.sqrt(d_k)

    def at(x: ir.Value, i: int) -> ir.Value:
        return R.strided_slice(x, [2], [i], [i + 1])  # (B, H, 1, D)

    outs = []
    for i in range(t.value):
        k_t = at(k, i)  # (B, Hkv, 1, dk)
        v_t = at(v, i)  # (B, Hkv, 1, dv)
        if decay is not None:
            state = R.multiply(state, R.permute_dims(at(decay, i), [0, 1, 3, 2]))  # (.., dk|1, 1)
        if beta is not None:
            v_t = R.multiply(at(beta, i), R.subtract(v_t, R.matmul(k_t, state)))
        state = R.add(state, R.matmul(R.permute_dims(k_t, [0, 1, 3, 2]), v_t))  # outer product
        q_t = R.reshape(at(q, i), spell([b, kv_heads, group, d_k]))
        o_t = R.matmul(q_t, state)  # (B, Hkv, group, dv): query head h reads kv head h // group
        outs.append(R.reshape(R.multiply(scalar(scale, "f32"), o_t), spell([b, 1, q_heads * d_v])))
    out = outs[0] if len(outs) == 1 else R.concat(outs, 1)
    if dtype != "f32":
        out = R.astype(out, dtype)
    if state_dtype != "f32":
        state = R.astype(state, state_dtype)
    return [out, state]

"""Recurrent ONNX ops RNN, GRU and LSTM, unrolled over the sequence length (known at import time).

The input projection ``X @ W^T`` of every time step is one matmul; each step then adds
``H @ R^T``, applies the gates and produces the next state. ``sequence_lens`` freezes a batch
entry's state (and zeroes its ``Y``) once its sequence has ended; the reverse direction then
starts at that entry's last valid step, as the spec requires.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from mlir import ir

from relax_mlir.dialects import relax as R
from relax_mlir.frontend.onnx.ops.attention import require_float, scalar, shape_of, spell
from relax_mlir.frontend.onnx.registry import ConversionError, NodeContext, Out, converter
from relax_mlir.shape_infer.expr import Expr

Activation = Callable[[ir.Value], ir.Value]

# name -> (number of alpha/beta parameters it takes, default alpha, default beta)
_PARAMS: dict[str, tuple[int, float | None, float | None]] = {
    "relu": (0, None, None),
    "tanh": (0, None, None),
    "sigmoid": (0, None, None),
    "softsign": (0, None, None),
    "softplus": (0, None, None),
    "leakyrelu": (1, 0.01, None),
    "thresholdedrelu": (1, 1.0, None),
    "elu": (1, 1.0, None),
    "hardsigmoid": (2, 0.2, 0.5),
    "affine": (2, None, None),
    "scaledtanh": (2, None, None),
}


def _make_activation(name: str, alpha: float | None, beta: float | None, dtype: str) -> Activation:
    def c(v: float) -> ir.Value:
        return scalar(v, dtype)

    one, zero = c(1), c(0)
    if name == "relu":
        return R.relu
    if name == "tanh":
        return R.tanh
    if name == "sigmoid":
        return lambda x: R.divide(one, R.add(one, R.exp(R.neg(x))))
    if name == "softsign":
        return lambda x: R.divide(x, R.add(one, R.abs(x)))
    if name == "softplus":
        return lambda x: R.log(R.add(R.exp(x), one))
    if name == "leakyrelu":
        return lambda x: R.where(R.less(x, zero), R.multiply(x, c(alpha)), x)
    if name == "thresholdedrelu":
        return lambda x: R.where(R.greater(x, c(alpha)), x, zero)
    if name == "elu":
        return lambda x: R.where(R.less(x, zero), R.multiply(c(alpha), R.subtract(R.exp(x), one)), x)
    if name == "hardsigmoid":
        return lambda x: R.maximum(zero, R.minimum(one, R.add(R.multiply(x, c(alpha)), c(beta))))
    if name == "affine":
        return lambda x: R.add(R.multiply(x, c(alpha)), c(beta))
    if name == "scaledtanh":
        return lambda x: R.multiply(c(alpha), R.tanh(R.multiply(x, c(beta))))
    raise AssertionError(name)


def _activations(
    ctx: NodeContext, defaults: list[str], directions: int, dtype: str
) -> list[list[Activation]]:
    """Per direction, the activation functions (attribute ``activations`` or the op's defaults)."""
    names = ctx.attr("activations", None)
    per = len(defaults)
    if names is None:
        names = defaults * directions
    names = [n.lower() for n in names]
    if len(names) == per and directions == 2:
        names = names * 2
    if len(names) != per * directions:
        raise ConversionError(f"activations {names}: expected {per * directions} names")
    alphas = list(ctx.attr("activation_alpha", []) or [])
    betas = list(ctx.attr("activation_beta", []) or [])
    fns = []
    for name in names:
        if name not in _PARAMS:
            raise ConversionError(f"activation '{name}' is not supported")
        count, alpha, beta = _PARAMS[name]
        if count >= 1 and alphas:
            alpha = float(alphas.pop(0))
        if count >= 2 and betas:
            beta = float(betas.pop(0))
        if (count >= 1 and alpha is None) or (count >= 2 and beta is None):
            raise ConversionError(f"activation '{name}' needs activation_alpha and activation_beta values")
        fns.append(_make_activation(name, alpha, beta, dtype))
    return [fns[d * per : (d + 1) * per] for d in range(directions)]


def _direction_slice(x: ir.Value, d: int) -> ir.Value:
    """x[d] of a (num_directions, ...) tensor."""
    return R.squeeze(R.strided_slice(x, [0], [d], [d + 1]), [0])


def _time_slice(x: ir.Value, t: int) -> ir.Value:
    return R.squeeze(R.strided_slice(x, [0], [t], [t + 1]), [0])


class _Recurrence:
    """What RNN, GRU and LSTM share: inputs in (T, B, ...) layout, directions, masking, outputs."""

    def __init__(self, ctx: NodeContext, gates: int, default_activations: list[str]) -> None:
        self.ctx = ctx
        self.dtype = require_float(ctx, 0, "X")
        direction = ctx.attr("direction", "forward")
        if direction not in ("forward", "reverse", "bidirectional"):
            raise ConversionError(f"direction '{direction}' is not forward, reverse or bidirectional")
        self.direction = direction
        self.num_directions = 2 if direction == "bidirectional" else 1
        self.layout = int(ctx.attr("layout", 0))
        if self.layout not in (0, 1):
            raise ConversionError(f"layout {self.layout} is not 0 or 1")
        x = ctx.x(0)
        if ctx.rank(0) != 3:
            raise ConversionError(f"X must be 3-D, got rank {ctx.rank(0)}")
        if self.layout:
            x = R.permute_dims(x, [1, 0, 2])
        self.x = x
        seq, batch, _ = shape_of(x, "X")
        if not seq.is_const:
            raise ConversionError(
                "the sequence length of X must be known at import time (the op is unrolled)"
            )
        self.seq, self.batch = seq.value, batch
        w_dims = shape_of(ctx.x(1), "W")
        if w_dims[0].is_const and w_dims[0].value != self.num_directions:
            raise ConversionError(
                f"W has {w_dims[0].value} directions; direction '{direction}' needs {self.num_directions}"
            )
        hidden = ctx.attr("hidden_size", None)
        r_hidden = shape_of(ctx.x(2), "R")[-1]
        if hidden is None:
            if not r_hidden.is_const:
                raise ConversionError("hidden_size is not given and R's last dim is not known")
            hidden = r_hidden.value
        self.hidden = int(hidden)
        self.gates = gates
        clip = ctx.attr("clip", None)
        self.clip = None if clip is None else float(clip)
        self.activations = _activations(ctx, default_activations, self.num_directions, self.dtype)
        self.lengths = self._lengths()

    def _lengths(self) -> ir.Value | None:
        """sequence_lens as a (B, 1) i64 tensor, or None when absent or all equal to T."""
        ctx = self.ctx
        if not ctx.has(4):
            return None
        known = ctx.const(4)
        if known is not None and bool(np.all(known == self.seq)):
            return None
        lens = ctx.x(4)
        if ctx.dtype(4) != "i64":
            lens = R.astype(lens, "i64")
        return R.reshape(lens, [_spell_dim(self.batch), 1])

    def clipped(self, x: ir.Value) -> ir.Value:
        return x if self.clip is None else R.clip(x, -self.clip, self.clip)

    def weights(self, d: int) -> tuple[ir.Value, ir.Value, ir.Value | None, ir.Value | None]:
        """W_d^T (I, G*H), R_d^T (H, G*H) and the input/recurrent biases (G*H,) or None."""
        ctx = self.ctx
        w = R.permute_dims(_direction_slice(ctx.x(1), d), [1, 0])
        r = R.permute_dims(_direction_slice(ctx.x(2), d), [1, 0])
        if not ctx.has(3):
            return w, r, None, None
        b = _direction_slice(ctx.x(3), d)
        n = self.gates * self.hidden
        return w, r, R.strided_slice(b, [0], [0], [n]), R.strided_slice(b, [0], [n], [2 * n])

    def initial(self, i: int, d: int) -> ir.Value:
        """initial_h (i=5) or initial_c (i=6) of direction d as (B, H); zeros when absent."""
        ctx = self.ctx
        if not ctx.has(i):
            return R.full(spell([self.batch, self.hidden]), 0.0, self.dtype)
        v = ctx.x(i)
        if self.layout:
            v = R.permute_dims(v, [1, 0, 2])
        return _direction_slice(v, d)

    def steps(self, d: int) -> list[int]:
        reverse = self.direction == "reverse" or d == 1
        return list(range(self.seq - 1, -1, -1) if reverse else range(self.seq))

    def keep(self, t: int, new: ir.Value, old: ir.Value) -> ir.Value:
        """``new`` where step t is within the batch entry's sequence, else ``old``."""
        if self.lengths is None:
            return new
        valid = R.less(scalar(t, "i64"), self.lengths)
        return R.where(valid, new, old)

    def outputs(self, per_direction: list[tuple[list[ir.Value], list[ir.Value]]]) -> list[Out]:
        """Y (T, D, B, H) from each direction's per-step outputs, and each final state (D, B, H);
        transposed for layout 1."""
        names = list(self.ctx.node.output) + [""] * 3
        out: list[Out] = []
        if names[0]:
            ys = []
            for steps, _ in per_direction:
                ys.append(R.concat([R.expand_dims(h, [0, 1]) for h in steps], 0))  # (T, 1, B, H)
            y = ys[0] if len(ys) == 1 else R.concat(ys, 1)
            out.append(R.permute_dims(y, [2, 0, 1, 3]) if self.layout else y)
        else:
            out.append(None)
        for j in range(len(per_direction[0][1])):
            if not names[j + 1]:
                out.append(None)
                continue
            states = [R.expand_dims(finals[j], [0]) for _, finals in per_direction]
            s = states[0] if len(states) == 1 else R.concat(states, 0)
            out.append(R.permute_dims(s, [1, 0, 2]) if self.layout else s)
        return out

    def step_output(self, t: int, h: ir.Value) -> ir.Value:
        """Y's entry at step t: zero past the end of a batch entry's sequence."""
        if self.lengths is None:
            return h
        return R.where(R.less(scalar(t, "i64"), self.lengths), h, scalar(0, self.dtype))

    def projected(self, w: ir.Value, wb: ir.Value | None, rb: ir.Value | None) -> ir.Value:
        """X @ W^T (+ Wb + Rb) for every step at once: (T, B, G*H)."""
        xw = R.matmul(self.x, w)
        if wb is not None:
            xw = R.add(xw, R.add(wb, rb))
        return xw


def _spell_dim(d: Expr) -> int | str:
    return spell([d])[0]


def _split(x: ir.Value, parts: int) -> list[ir.Value]:
    return R.split(x, parts, -1)


@converter("RNN")
def _rnn(ctx: NodeContext) -> list[Out]:
    rec = _Recurrence(ctx, 1, ["Tanh"])
    results = []
    for d in range(rec.num_directions):
        (f,) = rec.activations[d]
        w, r, wb, rb = rec.weights(d)
        xw = rec.projected(w, wb, rb)
        h = rec.initial(5, d)
        ys: dict[int, ir.Value] = {}
        for t in rec.steps(d):
            new = f(rec.clipped(R.add(_time_slice(xw, t), R.matmul(h, r))))
            ys[t] = rec.step_output(t, new)
            h = rec.keep(t, new, h)
        results.append(([ys[t] for t in range(rec.seq)], [h]))
    return rec.outputs(results)


@converter("GRU")
def _gru(ctx: NodeContext) -> list[Out]:
    rec = _Recurrence(ctx, 3, ["Sigmoid", "Tanh"])
    linear_before_reset = int(ctx.attr("linear_before_reset", 0))
    n = rec.hidden
    results = []
    for d in range(rec.num_directions):
        f, g = rec.activations[d]
        w, r, wb, rb = rec.weights(d)
        # z and r gates take both biases; the hidden gate's recurrent bias Rbh sits inside it
        xw = R.matmul(rec.x, w)
        if wb is not None:
            zr_bias = R.add(R.strided_slice(wb, [0], [0], [2 * n]), R.strided_slice(rb, [0], [0], [2 * n]))
            wbh, rbh = R.strided_slice(wb, [0], [2 * n], [3 * n]), R.strided_slice(rb, [0], [2 * n], [3 * n])
        r_zr = R.strided_slice(r, [1], [0], [2 * n])
        r_h = R.strided_slice(r, [1], [2 * n], [3 * n])
        h = rec.initial(5, d)
        ys: dict[int, ir.Value] = {}
        for t in rec.steps(d):
            x_t = _time_slice(xw, t)
            x_zr, x_h = R.strided_slice(x_t, [1], [0], [2 * n]), R.strided_slice(x_t, [1], [2 * n], [3 * n])
            zr = R.add(x_zr, R.matmul(h, r_zr))
            if wb is not None:
                zr = R.add(zr, zr_bias)
            z, rg = (f(rec.clipped(v)) for v in _split(zr, 2))
            if linear_before_reset:
                hr = R.matmul(h, r_h)
                if wb is not None:
                    hr = R.add(hr, rbh)
                pre = R.add(x_h, R.multiply(rg, hr))
                if wb is not None:
                    pre = R.add(pre, wbh)
            else:
                pre = R.add(x_h, R.matmul(R.multiply(rg, h), r_h))
                if wb is not None:
                    pre = R.add(R.add(pre, wbh), rbh)
            hh = g(rec.clipped(pre))
            new = R.add(R.multiply(R.subtract(scalar(1, rec.dtype), z), hh), R.multiply(z, h))
            ys[t] = rec.step_output(t, new)
            h = rec.keep(t, new, h)
        results.append(([ys[t] for t in range(rec.seq)], [h]))
    return rec.outputs(results)


@converter("LSTM")
def _lstm(ctx: NodeContext) -> list[Out]:
    rec = _Recurrence(ctx, 4, ["Sigmoid", "Tanh", "Tanh"])
    if int(ctx.attr("input_forget", 0)):
        raise ConversionError("input_forget 1 (coupled input and forget gates) is not supported")
    results = []
    for d in range(rec.num_directions):
        f, g, hf = rec.activations[d]
        w, r, wb, rb = rec.weights(d)
        xw = rec.projected(w, wb, rb)
        peep = _split(_direction_slice(ctx.x(7), d), 3) if ctx.has(7) else None  # p_i, p_o, p_f
        h, c = rec.initial(5, d), rec.initial(6, d)
        ys: dict[int, ir.Value] = {}
        for t in rec.steps(d):
            gates = R.add(_time_slice(xw, t), R.matmul(h, r))
            i, o, fg, cg = _split(gates, 4)
            if peep is not None:
                i, fg = R.add(i, R.multiply(peep[0], c)), R.add(fg, R.multiply(peep[2], c))
            i, fg = f(rec.clipped(i)), f(rec.clipped(fg))
            cg = g(rec.clipped(cg))
            new_c = R.add(R.multiply(fg, c), R.multiply(i, cg))
            if peep is not None:
                o = R.add(o, R.multiply(peep[1], new_c))
            o = f(rec.clipped(o))
            new_h = R.multiply(o, hf(new_c))
            ys[t] = rec.step_output(t, new_h)
            h, c = rec.keep(t, new_h, h), rec.keep(t, new_c, c)
        results.append(([ys[t] for t in range(rec.seq)], [h, c]))
    return rec.outputs(results)

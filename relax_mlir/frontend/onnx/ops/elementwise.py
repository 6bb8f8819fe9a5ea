"""Elementwise ONNX ops: arithmetic, comparisons, logic and unary math.

Arithmetic on integer tensors known at import time (shape computations) is folded symbolically, so
``Shape -> Gather -> Mul -> Concat -> Reshape`` keeps symbolic dims.
"""

from __future__ import annotations

import operator
from collections.abc import Callable

import numpy as np
from mlir import ir

from relax_mlir.dialects import relax as R
from relax_mlir.frontend.onnx.registry import ConversionError, Known, NodeContext, Out, converter
from relax_mlir.lowering.kernel import is_float
from relax_mlir.shape_infer.expr import Expr, const, floordiv, mod, smax, smin


def _truncating_div(a: Expr, b: Expr) -> Expr:
    """ONNX integer Div rounds toward zero. Symbolic entries are dims (never negative), where that is
    floordiv; constant entries may be negative."""
    if a.is_const and b.is_const:
        q = abs(a.value) // abs(b.value)
        return const(q if (a.value < 0) == (b.value < 0) else -q)
    return floordiv(a, b)


# ONNX op -> (relax helper, symbolic fold on Expr entries or None)
_BINARY: dict[str, tuple[Callable[[ir.Value, ir.Value], ir.Value], Callable[[Expr, Expr], Expr] | None]] = {
    "Add": (R.add, operator.add),
    "Sub": (R.subtract, operator.sub),
    "Mul": (R.multiply, operator.mul),
    "Div": (R.divide, _truncating_div),
    "Equal": (R.equal, None),
    "Less": (R.less, None),
    "LessOrEqual": (R.less_equal, None),
    "Greater": (R.greater, None),
    "GreaterOrEqual": (R.greater_equal, None),
    "And": (R.logical_and, None),
    "Or": (R.logical_or, None),
    "Xor": (R.logical_xor, None),
    "BitwiseAnd": (R.bitwise_and, None),
    "BitwiseOr": (R.bitwise_or, None),
    "BitwiseXor": (R.bitwise_xor, None),
}


def fold_binary(ctx: NodeContext, fn: Callable[[Expr, Expr], Expr]) -> Known | None:
    """``fn`` applied at import time when both inputs are integer tensors known (maybe symbolically)."""
    a, b = ctx.known(0), ctx.known(1)
    if a is None or b is None or a.dtype != b.dtype or a.dtype not in ("i32", "i64"):
        return None
    if a.is_numeric and b.is_numeric and fn in (operator.add, operator.sub, operator.mul):
        return Known(fn(a.values, b.values).astype(a.values.dtype), a.dtype)
    ea, eb = a.exprs(), b.exprs()  # integer tensors: never None
    try:
        out = np.frompyfunc(fn, 2, 1)(ea, eb)
    except ZeroDivisionError:
        return None
    shape = np.broadcast_shapes(ea.shape, eb.shape)
    return Known(np.asarray(out, dtype=object).reshape(shape), a.dtype).simplified()


# comparisons and logic folded at import time on small known numbers (shape computations)
_PREDICATES = {
    "Equal": np.equal,
    "Less": np.less,
    "LessOrEqual": np.less_equal,
    "Greater": np.greater,
    "GreaterOrEqual": np.greater_equal,
    "And": np.logical_and,
    "Or": np.logical_or,
    "Xor": np.logical_xor,
}


def _binary(ctx: NodeContext) -> list[Out]:
    helper, fold = _BINARY[ctx.node.op_type]
    if fold is not None:
        known = fold_binary(ctx, fold)
        if known is not None:
            return [known]
    predicate = _PREDICATES.get(ctx.node.op_type)
    a, b = ctx.const(0), ctx.const(1)
    if predicate is not None and a is not None and b is not None and a.size <= 64 and b.size <= 64:
        return [Known(np.asarray(predicate(a, b)), "i1")]
    return [helper(ctx.x(0), ctx.x(1))]


converter(*_BINARY)(_binary)


@converter("Pow")
def _pow(ctx: NodeContext) -> list[Out]:
    """The result has the base's dtype; an exponent of another dtype is converted: to a float base's
    dtype; with an integer base and a float exponent both go to f64 and the result is truncated back;
    two integer dtypes meet in the wider one (products wrap the same way)."""
    x, y = ctx.x(0), ctx.x(1)
    tx, ty = ctx.dtype(0), ctx.dtype(1)
    if tx == ty:
        return [R.power(x, y)]
    if is_float(tx):
        return [R.power(x, R.astype(y, tx))]
    if is_float(ty):
        return [R.astype(R.power(R.astype(x, "f64"), R.astype(y, "f64")), tx)]
    wide = max((tx, ty), key=lambda t: int(t.lstrip("ui")))
    return [R.astype(R.power(R.astype(x, wide), R.astype(y, wide)), tx)]


@converter("Mod")
def _mod(ctx: NodeContext) -> list[Out]:
    """fmod=0: the remainder with the divisor's sign (numpy.mod); fmod=1: with the dividend's (C's %)."""
    fmod = ctx.attr("fmod", 0)
    if fmod not in (0, 1):
        raise ConversionError(f"attribute 'fmod' must be 0 or 1, got {fmod}")
    if fmod:
        return [R.fmod(ctx.x(0), ctx.x(1))]
    known = fold_binary(ctx, mod)
    if known is not None:
        return [known]
    return [R.mod(ctx.x(0), ctx.x(1))]


@converter("BitShift")
def _bitshift(ctx: NodeContext) -> list[Out]:
    direction = ctx.attr("direction", None)
    if direction not in ("LEFT", "RIGHT"):
        raise ConversionError(f"attribute 'direction' must be 'LEFT' or 'RIGHT', got {direction!r}")
    shift = R.left_shift if direction == "LEFT" else R.right_shift
    return [shift(ctx.x(0), ctx.x(1))]


@converter("Max", "Min", "Sum", "Mean")
def _variadic(ctx: NodeContext) -> list[Out]:
    op = ctx.node.op_type
    xs = ctx.xs()
    if op in ("Max", "Min") and all(ctx.known(i) is not None for i in range(ctx.num_inputs)) and len(xs) == 2:
        known = fold_binary(ctx, smax if op == "Max" else smin)
        if known is not None:
            return [known]
    step = {"Max": R.maximum, "Min": R.minimum, "Sum": R.add, "Mean": R.add}[op]
    acc = xs[0]
    for x in xs[1:]:
        acc = step(acc, x)
    if op == "Mean":
        acc = R.divide(acc, ctx.scalar_like(len(xs), ctx.dtype(0)))
    return [acc]


_UNARY: dict[str, Callable[[ir.Value], ir.Value]] = {
    "Abs": R.abs,
    "Neg": R.neg,
    "Exp": R.exp,
    "Log": R.log,
    "Sqrt": R.sqrt,
    "Sin": R.sin,
    "Cos": R.cos,
    "Tan": R.tan,
    "Asin": R.asin,
    "Acos": R.acos,
    "Atan": R.atan,
    "Sinh": R.sinh,
    "Cosh": R.cosh,
    "Asinh": R.asinh,
    "Acosh": R.acosh,
    "Atanh": R.atanh,
    "Softplus": R.softplus,
    "Mish": R.mish,
    "BitwiseNot": R.bitwise_not,
    "Tanh": R.tanh,
    "Sigmoid": R.sigmoid,
    "Relu": R.relu,
    "Erf": R.erf,
    "Floor": R.floor,
    "Ceil": R.ceil,
    "Round": R.round,
    "Sign": R.sign,
    "Not": R.logical_not,
}


@converter(*_UNARY)
def _unary(ctx: NodeContext) -> list[Out]:
    known = ctx.known(0)
    if ctx.node.op_type == "Not" and known is not None and known.is_numeric and known.values.size <= 64:
        return [Known(np.logical_not(known.values), "i1")]
    if (
        ctx.node.op_type in ("Neg", "Abs")
        and known is not None
        and known.is_numeric
        and known.dtype in ("i32", "i64")
    ):
        return [
            Known(
                np.negative(known.values) if ctx.node.op_type == "Neg" else np.abs(known.values), known.dtype
            )
        ]
    return [_UNARY[ctx.node.op_type](ctx.x(0))]


@converter("Reciprocal")
def _reciprocal(ctx: NodeContext) -> list[Out]:
    return [R.divide(ctx.scalar_like(1, ctx.dtype(0)), ctx.x(0))]


@converter("Where")
def _where(ctx: NodeContext) -> list[Out]:
    cond = ctx.const(0)
    a, b = ctx.known(1), ctx.known(2)
    if (
        cond is not None
        and a is not None
        and b is not None
        and a.exprs() is not None
        and b.exprs() is not None
    ):
        shape = np.broadcast_shapes(cond.shape, a.values.shape, b.values.shape)
        ea, eb = np.broadcast_to(a.exprs(), shape), np.broadcast_to(b.exprs(), shape)
        picked = np.where(np.broadcast_to(cond, shape), ea, eb)
        return [Known(np.asarray(picked, dtype=object), a.dtype).simplified()]
    return [R.where(ctx.x(0), ctx.x(1), ctx.x(2))]


@converter("Identity")
def _identity(ctx: NodeContext) -> list[Out]:
    if ctx.is_seq(0):
        return [ctx.seq(0)]
    known = ctx.known(0)
    return [known if known is not None else ctx.x(0)]


@converter("Clip")
def _clip(ctx: NodeContext) -> list[Out]:
    """Bounds known at import time become one ``relax.clip``; others a maximum and a minimum (which
    also give ``max`` everywhere when min > max, as ONNX says)."""
    x, dtype = ctx.x(0), ctx.dtype(0)
    if ctx.opset < 11:
        lo, hi = ctx.attr("min", -np.inf), ctx.attr("max", np.inf)
        return [R.clip(x, float(min(lo, hi)), float(hi))]
    bounds = [ctx.const(i) if ctx.has(i) else None for i in (1, 2)]
    given = [ctx.has(1), ctx.has(2)]
    if all(b is not None or not g for b, g in zip(bounds, given)) and all(
        b is None or _exact_in_float(b, dtype) for b in bounds
    ):
        lo = -np.inf if bounds[0] is None else float(bounds[0])
        hi = np.inf if bounds[1] is None else float(bounds[1])
        return [R.clip(x, min(lo, hi), hi)]  # ONNX: when min > max, every element becomes max
    if given[0]:
        x = R.maximum(x, ctx.x(1))
    if given[1]:
        x = R.minimum(x, ctx.x(2))
    return [x]


def _exact_in_float(value: np.ndarray, dtype: str) -> bool:
    """Whether a bound survives the trip through a float attribute (large int64 ones may not)."""
    return is_float(dtype) or int(float(value)) == int(value)


# -- activations ---------------------------------------------------------------------------------------
def _float_input(ctx: NodeContext, widen: bool = False) -> tuple[ir.Value, str]:
    """Input 0 (a float tensor) and its dtype; with ``widen``, f16 and bf16 become f32, so an activation
    made of several ops rounds once (``_narrow`` converts back), as the reference computes it."""
    dtype = ctx.dtype(0)
    if not is_float(dtype):
        raise ConversionError(f"input #0 must have a float dtype, got {dtype}")
    if widen and dtype in ("f16", "bf16"):
        return R.astype(ctx.x(0), "f32"), "f32"
    return ctx.x(0), dtype


def _narrow(ctx: NodeContext, y: ir.Value, work: str) -> list[Out]:
    """``y`` (computed in dtype ``work``) in input 0's dtype."""
    return [y if work == ctx.dtype(0) else R.astype(y, ctx.dtype(0))]


@converter("IsNaN")
def _isnan(ctx: NodeContext) -> list[Out]:
    x, _ = _float_input(ctx)
    return [R.not_equal(x, x)]


@converter("IsInf")
def _isinf(ctx: NodeContext) -> list[Out]:
    x, dtype = _float_input(ctx)
    positive, negative = ctx.attr("detect_positive", 1), ctx.attr("detect_negative", 1)
    if positive and negative:
        return [R.equal(R.abs(x), ctx.scalar_like(np.inf, dtype))]
    if positive or negative:
        return [R.equal(x, ctx.scalar_like(np.inf if positive else -np.inf, dtype))]
    return [R.equal(x, ctx.scalar_like(np.nan, dtype))]  # never true


@converter("LeakyRelu")
def _leaky_relu(ctx: NodeContext) -> list[Out]:
    x, _ = _float_input(ctx)
    return [R.leaky_relu(x, float(ctx.attr("alpha", 0.01)))]


@converter("PRelu")
def _prelu(ctx: NodeContext) -> list[Out]:
    """x where x >= 0 else slope * x (the slope broadcasts to x's shape)."""
    x, slope, dtype = ctx.x(0), ctx.x(1), ctx.dtype(0)
    negative = R.less(x, ctx.scalar_like(0, dtype))
    return [R.where(negative, R.multiply(x, slope), x)]


def _expm1_times(ctx: NodeContext, x: ir.Value, dtype: str, alpha: float) -> ir.Value:
    """alpha * (e**x - 1)."""
    return R.multiply(R.subtract(R.exp(x), ctx.scalar_like(1, dtype)), ctx.scalar_like(alpha, dtype))


@converter("Elu")
def _elu(ctx: NodeContext) -> list[Out]:
    """x where x >= 0 else alpha * (e**x - 1)."""
    x, dtype = _float_input(ctx, widen=True)
    alpha = float(ctx.attr("alpha", 1.0))
    negative = R.less(x, ctx.scalar_like(0, dtype))
    return _narrow(ctx, R.where(negative, _expm1_times(ctx, x, dtype, alpha), x), dtype)


@converter("Celu")
def _celu(ctx: NodeContext) -> list[Out]:
    """max(0, x) + min(0, alpha * (e**(x / alpha) - 1))."""
    x, dtype = _float_input(ctx, widen=True)
    alpha = float(ctx.attr("alpha", 1.0))
    if alpha == 0:
        raise ConversionError("attribute 'alpha' must not be 0")
    zero = ctx.scalar_like(0, dtype)
    scaled = R.divide(x, ctx.scalar_like(alpha, dtype))
    return _narrow(ctx, R.add(R.relu(x), R.minimum(zero, _expm1_times(ctx, scaled, dtype, alpha))), dtype)


@converter("Selu")
def _selu(ctx: NodeContext) -> list[Out]:
    """gamma * x where x > 0 else gamma * alpha * (e**x - 1)."""
    x, dtype = _float_input(ctx, widen=True)
    alpha = float(ctx.attr("alpha", 1.67326319217681884765625))
    gamma = float(ctx.attr("gamma", 1.05070102214813232421875))
    positive = R.greater(x, ctx.scalar_like(0, dtype))
    negative = R.subtract(R.multiply(R.exp(x), ctx.scalar_like(alpha, dtype)), ctx.scalar_like(alpha, dtype))
    return _narrow(ctx, R.multiply(R.where(positive, x, negative), ctx.scalar_like(gamma, dtype)), dtype)


@converter("ThresholdedRelu")
def _thresholded_relu(ctx: NodeContext) -> list[Out]:
    x, dtype = _float_input(ctx)
    alpha = float(ctx.attr("alpha", 1.0))
    return [R.where(R.greater(x, ctx.scalar_like(alpha, dtype)), x, ctx.scalar_like(0, dtype))]


def _hard_sigmoid(ctx: NodeContext, x: ir.Value, dtype: str, alpha: float, beta: float) -> ir.Value:
    """max(0, min(1, alpha * x + beta))."""
    line = R.add(R.multiply(x, ctx.scalar_like(alpha, dtype)), ctx.scalar_like(beta, dtype))
    return R.clip(line, 0.0, 1.0)


@converter("HardSigmoid")
def _hardsigmoid(ctx: NodeContext) -> list[Out]:
    x, dtype = _float_input(ctx, widen=True)
    alpha, beta = float(ctx.attr("alpha", 0.2)), float(ctx.attr("beta", 0.5))
    return _narrow(ctx, _hard_sigmoid(ctx, x, dtype, alpha, beta), dtype)


@converter("HardSwish")
def _hardswish(ctx: NodeContext) -> list[Out]:
    """x * max(0, min(1, x / 6 + 1 / 2))."""
    x, dtype = _float_input(ctx, widen=True)
    return _narrow(ctx, R.multiply(x, _hard_sigmoid(ctx, x, dtype, 1 / 6, 0.5)), dtype)


@converter("Softsign")
def _softsign(ctx: NodeContext) -> list[Out]:
    """x / (1 + |x|)."""
    x, dtype = _float_input(ctx, widen=True)
    return _narrow(ctx, R.divide(x, R.add(R.abs(x), ctx.scalar_like(1, dtype))), dtype)


@converter("Gelu")
def _gelu(ctx: NodeContext) -> list[Out]:
    x, _ = _float_input(ctx)
    approximate = ctx.attr("approximate", "none")
    if approximate not in ("none", "tanh"):
        raise ConversionError(f"attribute 'approximate' must be 'none' or 'tanh', got {approximate!r}")
    return [R.gelu(x) if approximate == "none" else R.gelu_tanh(x)]


@converter("Swish")
def _swish(ctx: NodeContext) -> list[Out]:
    """x * sigmoid(alpha * x)."""
    alpha = float(ctx.attr("alpha", 1.0))
    if alpha == 1.0:
        return [R.silu(_float_input(ctx)[0])]
    x, dtype = _float_input(ctx, widen=True)
    return _narrow(ctx, R.multiply(x, R.sigmoid(R.multiply(x, ctx.scalar_like(alpha, dtype)))), dtype)


@converter("Shrink")
def _shrink(ctx: NodeContext) -> list[Out]:
    """x + bias where x < -lambd, x - bias where x > lambd, else 0. Integer inputs are compared and
    shifted in f64 and truncated back, as onnxruntime does in float."""
    x, dtype = ctx.x(0), ctx.dtype(0)
    lambd, bias = float(ctx.attr("lambd", 0.5)), float(ctx.attr("bias", 0.0))
    work = dtype if is_float(dtype) else "f64"
    if work != dtype:
        x = R.astype(x, work)
    low = R.less(x, ctx.scalar_like(-lambd, work))
    high = R.greater(x, ctx.scalar_like(lambd, work))
    zero = ctx.scalar_like(0, work)
    y = R.where(
        low,
        R.add(x, ctx.scalar_like(bias, work)),
        R.where(high, R.subtract(x, ctx.scalar_like(bias, work)), zero),
    )
    return [y if work == dtype else R.astype(y, dtype)]

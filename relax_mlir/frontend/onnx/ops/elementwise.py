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
from relax_mlir.frontend.onnx.registry import Known, NodeContext, Out, converter
from relax_mlir.shape_infer.expr import Expr, floordiv, mod, smax, smin


def _fold_div(a: Expr, b: Expr) -> Expr:
    return floordiv(a, b)


# ONNX op -> (relax helper, symbolic fold on Expr entries or None)
_BINARY: dict[str, tuple[Callable[[ir.Value, ir.Value], ir.Value], Callable[[Expr, Expr], Expr] | None]] = {
    "Add": (R.add, operator.add),
    "Sub": (R.subtract, operator.sub),
    "Mul": (R.multiply, operator.mul),
    "Div": (R.divide, _fold_div),
    "Pow": (R.power, None),
    "Equal": (R.equal, None),
    "Less": (R.less, None),
    "LessOrEqual": (R.less_equal, None),
    "Greater": (R.greater, None),
    "GreaterOrEqual": (R.greater_equal, None),
    "And": (R.logical_and, None),
    "Or": (R.logical_or, None),
}


def fold_binary(ctx: NodeContext, fn: Callable[[Expr, Expr], Expr]) -> Known | None:
    """``fn`` applied at import time when both inputs are integer tensors known (maybe symbolically)."""
    a, b = ctx.known(0), ctx.known(1)
    if a is None or b is None or a.dtype != b.dtype or a.dtype not in ("i32", "i64"):
        return None
    ea, eb = a.exprs(), b.exprs()
    if ea is None or eb is None or (a.is_numeric and b.is_numeric):
        if a.is_numeric and b.is_numeric and fn in (operator.add, operator.sub, operator.mul):
            return Known(fn(a.values, b.values).astype(a.values.dtype), a.dtype)
        if ea is None or eb is None:
            return None
    try:
        out = np.frompyfunc(fn, 2, 1)(ea, eb)
    except ZeroDivisionError:
        return None
    result = Known(np.asarray(out, dtype=object).reshape(np.broadcast_shapes(ea.shape, eb.shape)), a.dtype)
    numbers = result.numbers()
    return Known(numbers, a.dtype) if numbers is not None else result


def _binary(ctx: NodeContext) -> list[Out]:
    helper, fold = _BINARY[ctx.node.op_type]
    if fold is not None:
        known = fold_binary(ctx, fold)
        if known is not None:
            return [known]
    return [helper(ctx.x(0), ctx.x(1))]


converter(*_BINARY)(_binary)


@converter("Mod")
def _mod(ctx: NodeContext) -> list[Out]:
    fmod = ctx.attr("fmod", 0)
    if not fmod:
        known = fold_binary(ctx, mod)
        if known is not None:
            return [known]
        return [R.mod(ctx.x(0), ctx.x(1))]
    # fmod: the remainder with the dividend's sign: x - trunc(x / y) * y
    x, y = ctx.x(0), ctx.x(1)
    r = R.mod(x, y)
    zero = ctx.scalar_like(0, ctx.dtype(0))
    fix = R.logical_and(R.not_equal(r, zero), R.not_equal(R.less(x, zero), R.less(y, zero)))
    return [R.where(fix, R.subtract(r, y), r)]


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
        known = Known(np.asarray(picked, dtype=object), a.dtype)
        numbers = known.numbers()
        return [Known(numbers, a.dtype) if numbers is not None else known]
    return [R.where(ctx.x(0), ctx.x(1), ctx.x(2))]


@converter("Identity")
def _identity(ctx: NodeContext) -> list[Out]:
    known = ctx.known(0)
    return [known if known is not None else ctx.x(0)]


@converter("Clip")
def _clip(ctx: NodeContext) -> list[Out]:
    dtype = ctx.dtype(0)
    if ctx.opset < 11:
        lo, hi = ctx.attr("min", None), ctx.attr("max", None)
    else:
        lo = float(ctx.require_const(1, "min")) if ctx.has(1) else None
        hi = float(ctx.require_const(2, "max")) if ctx.has(2) else None
    if dtype.startswith(("i", "ui")) and dtype != "i1":
        info = np.iinfo(np.dtype(dtype.replace("ui", "uint").replace("i", "int", 1)))
        lo = info.min if lo is None else lo
        hi = info.max if hi is None else hi
    lo = -np.inf if lo is None else lo
    hi = np.inf if hi is None else hi
    lo = min(lo, hi)  # ONNX: when min > max, every element becomes max
    return [R.clip(ctx.x(0), float(lo), float(hi))]

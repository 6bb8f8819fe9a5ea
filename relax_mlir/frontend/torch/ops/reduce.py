"""Reduction ATen ops: sum, mean, amax/amin, max/min (with dim), var/std, prod, argmax/argmin, any/all."""

from __future__ import annotations

from typing import Any

from mlir import ir

from relax_mlir.dialects import relax as R
from relax_mlir.frontend.torch.registry import NodeContext, converter, dims, dtype_of, norm_axis, scalar
from relax_mlir.shape_infer.expr import const


def _axes(ctx: NodeContext, x: ir.Value, i: int, name: str = "dim") -> list[int] | None:
    v = ctx.arg(i, name)
    if v is None or (isinstance(v, (list, tuple)) and not v):
        return None
    rank = len(dims(x))
    values = list(v) if isinstance(v, (list, tuple)) else [v]
    return [norm_axis(int(a), rank) for a in values]


def _input(ctx: NodeContext) -> ir.Value:
    x, dtype = ctx.tensor(0), ctx.out_dtype
    return x if dtype_of(x) == dtype else R.astype(x, dtype)


def _reduction(fn: Any) -> Any:
    def convert(ctx: NodeContext) -> ir.Value:
        x = _input(ctx)
        return fn(x, _axes(ctx, x, 1), bool(ctx.arg(2, "keepdim", False)))

    return convert


for _name, _fn in (("sum", R.sum), ("mean", R.mean), ("amax", R.max), ("amin", R.min), ("prod", R.prod)):
    converter(f"aten.{_name}")(_reduction(_fn))


@converter("aten.max.default", "aten.min.default")
def _max_all(ctx: NodeContext) -> ir.Value:
    return (R.max if "max" in str(ctx.node.target) else R.min)(ctx.tensor(0))


@converter("aten.max.dim", "aten.min.dim")
def _max_dim(ctx: NodeContext) -> list[ir.Value]:
    x = ctx.tensor(0)
    axis, keep = norm_axis(ctx.arg(1), len(dims(x))), bool(ctx.arg(2, "keepdim", False))
    is_max = "max" in str(ctx.node.target)
    values = (R.max if is_max else R.min)(x, [axis], keep)
    return [values, (R.argmax if is_max else R.argmin)(x, axis, keep)]


@converter("aten.argmax.default", "aten.argmin.default")
def _argmax(ctx: NodeContext) -> ir.Value:
    x = ctx.tensor(0)
    axis = ctx.arg(1, "dim")
    fn = R.argmax if "argmax" in str(ctx.node.target) else R.argmin
    if axis is None:
        return fn(R.reshape(x, [-1]), 0, False)
    return fn(x, norm_axis(axis, len(dims(x))), bool(ctx.arg(2, "keepdim", False)))


def _variance(ctx: NodeContext, std: bool) -> ir.Value:
    x = _input(ctx)
    axes = _axes(ctx, x, 1)
    keep = bool(ctx.kwargs.get("keepdim", ctx.arg(3, default=False)))
    if "correction" in str(ctx.node.target):
        correction = ctx.kwargs.get("correction", ctx.arg(2))
        correction = 1 if correction is None else correction
    else:
        unbiased = ctx.arg(2, "unbiased", True)
        correction = 1 if unbiased else 0
    y = R.variance(x, axes, keep)
    if correction:
        shape = dims(x)
        n = const(1)
        for a in axes if axes is not None else range(len(shape)):
            n = n * shape[a]
        dtype = dtype_of(y)
        y = R.divide(R.multiply(y, scalar(n, dtype)), scalar(n - correction, dtype))
    return R.sqrt(y) if std else y


@converter("aten.var.correction", "aten.var.dim", "aten.var.default")
def _var(ctx: NodeContext) -> ir.Value:
    return _variance(ctx, False)


@converter("aten.std.correction", "aten.std.dim", "aten.std.default")
def _std(ctx: NodeContext) -> ir.Value:
    return _variance(ctx, True)


@converter(
    "aten.any.dim", "aten.any.dims", "aten.any.default", "aten.all.dim", "aten.all.dims", "aten.all.default"
)
def _any(ctx: NodeContext) -> ir.Value:
    x = ctx.tensor(0)
    flags = R.astype(R.not_equal(x, scalar(0, dtype_of(x))) if dtype_of(x) != "i1" else x, "i32")
    fn = R.max if "any" in str(ctx.node.target) else R.min
    y = fn(flags, _axes(ctx, x, 1), bool(ctx.arg(2, "keepdim", False)))
    return R.not_equal(y, scalar(0, "i32"))

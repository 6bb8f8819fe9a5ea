"""Elementwise ATen ops: arithmetic, comparisons, unary math, activations, where/masked_fill, casts."""

from __future__ import annotations

from typing import Any

import torch
from mlir import ir

from relax_mlir.dialects import relax as R
from relax_mlir.frontend.torch.registry import (
    ConversionError,
    NodeContext,
    converter,
    dtype_of,
    relax_dtype,
    scalar,
)
from relax_mlir.lowering.kernel import FLOAT_TYPES
from relax_mlir.shape_infer.expr import Expr


def _dummy(node_arg: Any) -> Any:
    """A stand-in of an argument for ``torch.result_type``: a real tensor of the right dtype and rank class."""
    if isinstance(node_arg, torch.fx.Node):
        val = node_arg.meta.get("val")
        if isinstance(val, torch.Tensor):
            return torch.empty([1] * min(val.dim(), 1), dtype=val.dtype)
        if isinstance(val, torch.SymInt):
            return 1
        if isinstance(val, torch.SymFloat):
            return 1.0
        return val
    return node_arg


def common_dtype(ctx: NodeContext, *indices: int) -> str:
    """The dtype torch computes arguments ``indices`` in (type promotion, scalars included)."""
    args = [_dummy(ctx.node.args[i]) for i in indices if i < len(ctx.node.args)]
    if len(args) == 1:
        a = args[0]
        return relax_dtype(a.dtype) if isinstance(a, torch.Tensor) else ctx.out_dtype
    return relax_dtype(torch.result_type(*args[:2]))


def operands(ctx: NodeContext, dtype: str, *indices: int) -> list[ir.Value]:
    """Arguments ``indices`` as tensors of ``dtype`` (scalars become constants, tensors are cast)."""
    out = []
    for i in indices:
        v = ctx.arg(i)
        if isinstance(v, ir.Value):
            out.append(v if dtype_of(v) == dtype else R.astype(v, dtype))
        else:
            out.append(scalar(v, dtype))
    return out


def _alpha(ctx: NodeContext, b: ir.Value, dtype: str) -> ir.Value:
    alpha = ctx.kwargs.get("alpha", 1)
    return b if alpha == 1 else R.multiply(b, scalar(alpha, dtype))


@converter("aten.add.Tensor", "aten.add.Scalar")
def _add(ctx: NodeContext) -> ir.Value:
    dtype = ctx.out_dtype
    a, b = operands(ctx, dtype, 0, 1)
    return R.add(a, _alpha(ctx, b, dtype))


@converter("aten.sub.Tensor", "aten.sub.Scalar")
def _sub(ctx: NodeContext) -> ir.Value:
    dtype = ctx.out_dtype
    a, b = operands(ctx, dtype, 0, 1)
    return R.subtract(a, _alpha(ctx, b, dtype))


@converter("aten.rsub.Scalar", "aten.rsub.Tensor")
def _rsub(ctx: NodeContext) -> ir.Value:
    dtype = ctx.out_dtype
    a, b = operands(ctx, dtype, 0, 1)
    return R.subtract(b, _alpha(ctx, a, dtype))


_BINARY = {
    "mul": R.multiply,
    "maximum": R.maximum,
    "minimum": R.minimum,
    "floor_divide": R.floor_divide,
    "remainder": R.mod,
    "fmod": R.fmod,
    "pow": R.power,
    "bitwise_and": R.bitwise_and,
    "bitwise_or": R.bitwise_or,
    "bitwise_xor": R.bitwise_xor,
}


def _binary(fn: Any) -> Any:
    def convert(ctx: NodeContext) -> ir.Value:
        dtype = ctx.out_dtype
        a, b = operands(ctx, dtype, 0, 1)
        return fn(a, b)

    return convert


for _name, _fn in _BINARY.items():
    converter(f"aten.{_name}")(_binary(_fn))


@converter("aten.pow.Tensor_Scalar")
def _pow_scalar(ctx: NodeContext) -> ir.Value:
    x = operands(ctx, ctx.out_dtype, 0)[0]
    p = ctx.arg(1)
    if p == 2:
        return R.multiply(x, x)
    if p == 0.5:
        return R.sqrt(x)
    if p == -0.5:
        return R.rsqrt(x)
    if p == 1:
        return x
    return R.power(x, scalar(p, ctx.out_dtype))


@converter("aten.div")
def _div(ctx: NodeContext) -> ir.Value:
    mode = ctx.kwargs.get("rounding_mode", ctx.arg(2))
    dtype = ctx.out_dtype
    if mode is None:
        a, b = operands(ctx, dtype, 0, 1)
        return R.divide(a, b)
    work = common_dtype(ctx, 0, 1)
    a, b = operands(ctx, work, 0, 1)
    if mode == "floor":
        return R.floor_divide(a, b) if work not in FLOAT_TYPES else R.floor(R.divide(a, b))
    if work in FLOAT_TYPES:
        q = R.divide(a, b)
        return R.where(R.less(q, scalar(0, work)), R.ceil(q), R.floor(q))
    return R.divide(a, b)  # integer division truncates


_COMPARE = {
    "eq": R.equal,
    "ne": R.not_equal,
    "lt": R.less,
    "le": R.less_equal,
    "gt": R.greater,
    "ge": R.greater_equal,
    "logical_and": R.logical_and,
    "logical_or": R.logical_or,
    "logical_xor": R.logical_xor,
}


def _compare(fn: Any, logical: bool) -> Any:
    def convert(ctx: NodeContext) -> ir.Value:
        if logical:
            a, b = (R.astype(v, "i1") if dtype_of(v) != "i1" else v for v in operands(ctx, "i1", 0, 1))
            return fn(a, b)
        a, b = operands(ctx, common_dtype(ctx, 0, 1), 0, 1)
        return fn(a, b)

    return convert


for _name, _fn in _COMPARE.items():
    converter(f"aten.{_name}")(_compare(_fn, _name.startswith("logical")))

# unary ops whose relax op computes in the result's dtype (ints are cast first, as torch promotes)
_UNARY = {
    "relu": R.relu,
    "silu": R.silu,
    "sigmoid": R.sigmoid,
    "tanh": R.tanh,
    "exp": R.exp,
    "log": R.log,
    "sqrt": R.sqrt,
    "rsqrt": R.rsqrt,
    "neg": R.neg,
    "abs": R.abs,
    "sin": R.sin,
    "cos": R.cos,
    "erf": R.erf,
    "floor": R.floor,
    "ceil": R.ceil,
    "round": R.round,
    "sign": R.sign,
    "mish": R.mish,
}


def _unary(fn: Any) -> Any:
    def convert(ctx: NodeContext) -> ir.Value:
        return fn(operands(ctx, ctx.out_dtype, 0)[0])

    return convert


for _name, _fn in _UNARY.items():
    converter(f"aten.{_name}.default")(_unary(_fn))


@converter("aten.logical_not.default")
def _logical_not(ctx: NodeContext) -> ir.Value:
    x = ctx.tensor(0)
    return R.logical_not(x if dtype_of(x) == "i1" else R.not_equal(x, scalar(0, dtype_of(x))))


@converter("aten.bitwise_not.default")
def _bitwise_not(ctx: NodeContext) -> ir.Value:
    x = ctx.tensor(0)
    return R.logical_not(x) if dtype_of(x) == "i1" else R.bitwise_not(x)


@converter("aten.reciprocal.default")
def _reciprocal(ctx: NodeContext) -> ir.Value:
    dtype = ctx.out_dtype
    return R.divide(scalar(1, dtype), operands(ctx, dtype, 0)[0])


@converter("aten.gelu.default")
def _gelu(ctx: NodeContext) -> ir.Value:
    x = ctx.tensor(0)
    return R.gelu_tanh(x) if ctx.arg(1, "approximate", "none") == "tanh" else R.gelu(x)


@converter("aten.leaky_relu.default")
def _leaky_relu(ctx: NodeContext) -> ir.Value:
    return R.leaky_relu(ctx.tensor(0), float(ctx.arg(1, "negative_slope", 0.01)))


@converter("aten.softplus.default")
def _softplus(ctx: NodeContext) -> ir.Value:
    if ctx.arg(1, "beta", 1) != 1 or ctx.arg(2, "threshold", 20) != 20:
        raise ConversionError("softplus with beta != 1 or threshold != 20 is not supported")
    return R.softplus(ctx.tensor(0))


@converter("aten.clamp.default", "aten.clamp.Tensor", "aten.hardtanh.default", "aten.clamp_min.default")
@converter("aten.clamp_max.default")
def _clamp(ctx: NodeContext) -> ir.Value:
    name = str(ctx.node.target)
    dtype = ctx.out_dtype
    x = operands(ctx, dtype, 0)[0]
    if "hardtanh" in name:
        lo, hi = ctx.arg(1, "min_val", -1.0), ctx.arg(2, "max_val", 1.0)
    elif "clamp_min" in name:
        lo, hi = ctx.arg(1), None
    elif "clamp_max" in name:
        lo, hi = None, ctx.arg(1)
    else:
        lo, hi = ctx.arg(1, "min"), ctx.arg(2, "max")
    for bound, fn in ((lo, R.maximum), (hi, R.minimum)):
        if bound is not None:
            x = fn(x, bound if isinstance(bound, ir.Value) else scalar(bound, dtype))
    return x


@converter("aten.where.self", "aten.where.ScalarOther", "aten.where.ScalarSelf", "aten.where.Scalar")
def _where(ctx: NodeContext) -> ir.Value:
    cond = ctx.tensor(0, dtype="i1")
    if dtype_of(cond) != "i1":
        cond = R.astype(cond, "i1")
    a, b = operands(ctx, ctx.out_dtype, 1, 2)
    return R.where(cond, a, b)


@converter("aten.masked_fill.Scalar", "aten.masked_fill.Tensor")
def _masked_fill(ctx: NodeContext) -> ir.Value:
    dtype = ctx.out_dtype
    x, value = operands(ctx, dtype, 0, 2)
    return R.where(ctx.tensor(1, dtype="i1"), value, x)


@converter("aten._to_copy.default", "aten.to.dtype", "aten.to.dtype_layout", "aten.to.device")
@converter("aten.type_as.default", "aten._to_dtype.default")
def _cast(ctx: NodeContext) -> ir.Value:
    x, dtype = ctx.tensor(0), ctx.out_dtype
    return x if dtype_of(x) == dtype else R.astype(x, dtype)


@converter("aten.clone.default", "aten.contiguous.default", "aten.detach.default", "aten.alias.default")
@converter("aten.lift_fresh_copy.default", "aten.dropout.default", "aten.feature_dropout.default")
@converter("aten.alpha_dropout.default", "aten.detach_.default", "aten._assert_tensor_metadata.default")
def _identity(ctx: NodeContext) -> ir.Value:
    name = str(ctx.node.target)
    if "dropout" in name and ctx.arg(2, "train", False):
        raise ConversionError("dropout in training mode is not supported (export the model in eval mode)")
    return ctx.tensor(0)


@converter("aten.scalar_tensor.default")
def _scalar_tensor(ctx: NodeContext) -> ir.Value:
    v = ctx.arg(0)
    return scalar(v if not isinstance(v, Expr) else v, ctx.out_dtype)

"""Helpers of the ONNX window ops (convolution, pooling, resize, sampling): known dims, reshapes, integer
attributes, pads from ``pads`` or ``auto_pad``."""

from __future__ import annotations

from collections.abc import Sequence

from mlir import ir

from relax_mlir.dialects import relax as R
from relax_mlir.dialects.types import TensorType, relax_type
from relax_mlir.frontend.onnx.registry import (
    ConversionError,
    NodeContext,
)
from relax_mlir.shape_infer.expr import Expr, ceildiv, const, format_dim

BIG = 1 << 62


def dims_of(v: ir.Value) -> list[Expr]:
    """The dims of relax value ``v``; every dim must be known (symbolic is fine)."""
    t = relax_type(v.type)
    if not isinstance(t, TensorType) or t.shape is None or any(d is None for d in t.shape):
        raise ConversionError(f"needs known dims, got {t}")
    return list(t.shape)  # type: ignore[arg-type]


def spell(dims: Sequence[Expr | int]) -> list[int | str]:
    return [format_dim(d if isinstance(d, Expr) else const(int(d))) for d in dims]


def reshape_to(v: ir.Value, dims: Sequence[Expr | int]) -> ir.Value:
    return R.reshape(v, spell(dims))


def int_list(values: Sequence[int] | None, n: int, default: int, name: str) -> list[int]:
    if values is None:
        return [default] * n
    values = [int(v) for v in values]
    if len(values) != n:
        raise ConversionError(f"attribute '{name}' needs {n} values, got {values}")
    return values


def static_dim(d: Expr, what: str) -> int:
    if not d.is_const:
        raise ConversionError(f"{what} needs a static size, got '{format_dim(d)}'")
    return int(d.value)


def window_pads(
    ctx: NodeContext,
    spatial_dims: Sequence[Expr],
    kernel: Sequence[int],
    strides: Sequence[int],
    dilations: Sequence[int],
) -> list[int]:
    """The pads (all befores then all afters) from ``pads`` or ``auto_pad``."""
    n = len(kernel)
    auto = ctx.attr("auto_pad", "NOTSET")
    if auto in ("NOTSET", ""):
        return int_list(ctx.attr("pads"), 2 * n, 0, "pads")
    if auto == "VALID":
        return [0] * (2 * n)
    if auto not in ("SAME_UPPER", "SAME_LOWER"):
        raise ConversionError(f"attribute 'auto_pad' value '{auto}' is not supported")
    befores, afters = [], []
    for size, k, s, d in zip(spatial_dims, kernel, strides, dilations):
        span = (k - 1) * d + 1
        if s == 1:
            total = span - 1
        else:
            size_i = static_dim(size, f"auto_pad {auto} with stride {s}")
            total = max(0, (ceildiv(const(size_i), s).value - 1) * s + span - size_i)
        small, big = total // 2, total - total // 2
        befores.append(small if auto == "SAME_UPPER" else big)
        afters.append(big if auto == "SAME_UPPER" else small)
    return befores + afters


def kernel_attrs(ctx: NodeContext, n: int, kernel: Sequence[int]) -> tuple[list[int], list[int]]:
    return int_list(ctx.attr("strides"), n, 1, "strides"), int_list(ctx.attr("dilations"), n, 1, "dilations")


def stuff(x: ir.Value, axis: int, stride: int) -> ir.Value:
    """Insert ``stride - 1`` zeros between the elements of ``x`` along ``axis``."""
    if stride == 1:
        return x
    shape = dims_of(x)
    rank = len(shape)
    y = R.expand_dims(x, [axis + 1])
    widths = [0] * (2 * (rank + 1))
    widths[2 * (axis + 1) + 1] = stride - 1
    y = R.pad(y, widths)
    merged = [*shape[:axis], shape[axis] * stride, *shape[axis + 1 :]]
    y = reshape_to(y, merged)
    return R.strided_slice(y, [axis], [0], [format_dim(shape[axis] * stride - (stride - 1))], [1])

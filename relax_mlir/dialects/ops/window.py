"""Sliding-window arithmetic (output lengths, attributes) and the linalg lowering helpers that
convolutions, pooling, resize and normalization share."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from relax_mlir.dialects.dims import dim_min, tensor_operand
from relax_mlir.dialects.ops.elementwise import FLOAT_DTYPES
from relax_mlir.dialects.types import Dim, RelaxType, TensorType
from relax_mlir.errors import ShapeError
from relax_mlir.lowering.kernel import KernelBuilder, KernelValue, builtin_tensor, element
from relax_mlir.shape_infer.expr import Expr, as_expr, ceildiv, floordiv, format_dim


def float_operand(t: RelaxType | None, name: str) -> TensorType:
    """Operand ``name`` as a tensor type; a ShapeError unless its dtype is a float one."""
    x = tensor_operand(t, name)
    if x.dtype is not None and x.dtype not in FLOAT_DTYPES:
        raise ShapeError(f"operand '{name}' must have a float dtype, got {x.dtype}")
    return x


def window_output(
    size: Dim,
    kernel: Dim,
    stride: int,
    pad_before: int,
    pad_after: int,
    dilation: int,
    ceil_mode: bool = False,
) -> Dim:
    """Output length of a sliding window: (size + pads - dilation*(kernel-1) - 1) / stride + 1.

    With ``ceil_mode`` the division rounds up, but (as in PyTorch and ONNX) a last window that
    would start in the right padding is dropped: at most ceildiv(size + pad_before, stride) windows.
    """
    if size is None or kernel is None:
        return None
    span = size + pad_before + pad_after - (kernel - 1) * dilation - 1
    if span.is_const and span.value < 0:
        raise ShapeError(
            f"window of size {format_dim(kernel)} (dilation {dilation}) is larger than the padded input "
            f"{format_dim(size + pad_before + pad_after)}"
        )
    if not ceil_mode:
        return floordiv(span, stride) + 1
    return dim_min(ceildiv(span, stride) + 1, ceildiv(size + pad_before, stride))


def check_window_attrs(attrs: dict[str, Any], spatial: int) -> None:
    """ShapeError unless strides and dilation have ``spatial`` positive values and padding 2x that."""
    for name, n in (("strides", spatial), ("padding", 2 * spatial), ("dilation", spatial)):
        values = attrs[name]
        if len(values) != n:
            raise ShapeError(f"'{name}' needs {n} values, got {values}")
        if name != "padding" and any(v <= 0 for v in values):
            raise ShapeError(f"'{name}' must be positive, got {values}")
        if name == "padding" and any(v < 0 for v in values):
            raise ShapeError(f"'padding' must be non-negative, got {values}")


def require_known_result(k: KernelBuilder) -> None:
    """Fail unless every result dim is known (the kernel writes into destinations of known size)."""
    if k.allocating:
        raise k.fail(
            f"result {', '.join(str(t) for t in k.result_types)} has unknown dims: "
            "state the input dims with relax.match_cast first"
        )


def fill_tensor(k: KernelBuilder, value: str, dest: KernelValue) -> KernelValue:
    """``linalg.fill`` of ``dest`` with the scalar ``value``."""
    t = element(dest.dtype)
    return k.op(f"linalg.fill ins({value} : {t}) outs({dest.name} : {dest.mlir}) -> {dest.mlir}", dest)


def pad_tensor(
    k: KernelBuilder, x: KernelValue, low: Sequence[int], high: Sequence[Expr | int], value: str
) -> KernelValue:
    """``tensor.pad`` of ``x`` with the scalar ``value``; ``high`` may be symbolic. No-op without padding."""
    high_exprs = [as_expr(h) for h in high]
    if not any(low) and all(h == 0 for h in high_exprs):
        return x
    shape = tuple(None if d is None else d + lo + hi for d, lo, hi in zip(x.shape, low, high_exprs))
    t = TensorType(shape, x.dtype)
    highs = [str(h.value) if h.is_const else k.index(h) for h in high_exprs]
    args = ", ".join(f"{k.fresh('i')}: index" for _ in x.shape)
    result = k.op(f"tensor.pad {x.name} low[{', '.join(map(str, low))}] high[{', '.join(highs)}] {{", t)
    k.emit(
        f"^bb0({args}):",
        f"  tensor.yield {value} : {element(x.dtype)}",
        f"}} : {x.mlir} to {result.mlir}",
    )
    return result


def window_attrs(strides: Sequence[int], dilation: Sequence[int]) -> str:
    """The ``dilations``/``strides`` attribute dictionary of named linalg convolutions and poolings."""

    def dense(v: Sequence[int]) -> str:
        return f"dense<[{', '.join(map(str, v))}]> : tensor<{len(v)}xi64>"

    return f"{{dilations = {dense(dilation)}, strides = {dense(strides)}}}"


def named_linalg(
    k: KernelBuilder, op: str, attrs: str, ins: Sequence[KernelValue], out: KernelValue
) -> KernelValue:
    """A named linalg op ``op`` with ``attrs`` reading ``ins`` and accumulating into ``out``."""
    names, types = ", ".join(v.name for v in ins), ", ".join(v.mlir for v in ins)
    return k.op(f"{op} {attrs} ins({names} : {types}) outs({out.name} : {out.mlir}) -> {out.mlir}", out)


def empty_like_dims(k: KernelBuilder, dims: Sequence[tuple[KernelValue, int]], dtype: str) -> KernelValue:
    """A ``tensor.empty`` whose dims are those of other tensors (read with ``tensor.dim`` when dynamic)."""
    t = TensorType(tuple(v.shape[a] for v, a in dims), dtype)
    sizes = [k.dim(v, a) for v, a in dims if v.shape[a] is None or not v.shape[a].is_const]  # type: ignore[union-attr]
    return k.op(f"tensor.empty({', '.join(sizes)}) : {builtin_tensor(t)}", t)


def index_to_float(k: KernelBuilder, value: str, dtype: str) -> str:
    """The index ``value`` as a float of ``dtype``."""
    i64 = k.scalar(f"arith.index_cast {value}", "index to i64")
    return k.scalar(f"arith.sitofp {i64}", f"i64 to {element(dtype)}")


def window_op_attrs(spatial: int, strides: Any, padding: Any, dilation: Any, groups: int) -> dict[str, Any]:
    """The strides / padding / dilation / groups attributes of a convolution or pooling over ``spatial`` dims
    (an int repeats; ``spatial`` pads apply to both sides)."""

    def expand(v: Any, n: int) -> list[int]:
        return [v] * n if isinstance(v, int) else list(v)

    pads = expand(padding, spatial)
    if len(pads) == spatial:
        pads = pads + pads
    return {
        "strides": expand(strides, spatial),
        "padding": pads,
        "dilation": expand(dilation, spatial),
        "groups": groups,
    }

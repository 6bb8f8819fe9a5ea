"""Convolutions (NCW/NCHW inputs, OIW/OIHW weights) and the sliding-window arithmetic pooling shares.

Lowering: the input is zero-padded with ``tensor.pad``, then one named linalg convolution writes into
the zero-filled destination: ``linalg.conv_2d_nchw_fchw`` (groups = 1), ``linalg.depthwise_conv_2d_nchw_chw``
(one input and one output channel per group), else ``linalg.conv_2d_ngchw_gfchw`` on views that split the
channels into groups. ``conv1d`` runs as a 2-D convolution over a unit height.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from mlir import ir

from relax_mlir.dialects.ops.elementwise import FLOAT_DTYPES
from relax_mlir.dialects.registry import Attr, Operand, RelaxOp, relax_op
from relax_mlir.dialects.types import Dim, RelaxType, TensorType
from relax_mlir.errors import ShapeError
from relax_mlir.shape_infer.dims import dim_min, fmt_shape, join_dtype, same_dim, tensor_operand
from relax_mlir.shape_infer.expr import Expr, as_expr, ceildiv, floordiv, format_dim
from relax_mlir.transforms.kernel import KernelBuilder, KernelValue, builtin_tensor, element


def _float_operand(t: RelaxType | None, name: str) -> TensorType:
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


def _check_window_attrs(attrs: dict[str, Any], spatial: int) -> None:
    for name, n in (("strides", spatial), ("padding", 2 * spatial), ("dilation", spatial)):
        values = attrs[name]
        if len(values) != n:
            raise ShapeError(f"'{name}' needs {n} values, got {values}")
        if name != "padding" and any(v <= 0 for v in values):
            raise ShapeError(f"'{name}' must be positive, got {values}")
        if name == "padding" and any(v < 0 for v in values):
            raise ShapeError(f"'padding' must be non-negative, got {values}")


class ConvOp(RelaxOp):
    """Base of N-d convolutions, layout NC<spatial> with weights OI<spatial>; ``padding`` is all befores then afters."""

    FUSION = "matmul"

    SPATIAL = 2
    OPERANDS = (Operand("x"), Operand("weight"))
    ATTRS = (
        Attr("strides", "ints"),
        Attr("padding", "ints"),
        Attr("dilation", "ints"),
        Attr("groups", "int"),
    )

    @classmethod
    def deduce(cls, operand_types: Sequence[RelaxType | None], attrs: dict[str, Any]) -> list[RelaxType]:
        x = _float_operand(operand_types[0], "x")
        w = tensor_operand(operand_types[1], "weight")
        dtype = join_dtype(x, w, ("x", "weight"))
        rank = cls.SPATIAL + 2
        _check_window_attrs(attrs, cls.SPATIAL)
        groups = attrs["groups"]
        if groups <= 0:
            raise ShapeError(f"groups must be positive, got {groups}")
        for t, n in ((x, "x"), (w, "weight")):
            if t.shape is not None and len(t.shape) != rank:
                raise ShapeError(f"operand '{n}' {fmt_shape(t.shape)} must have rank {rank}")
        out_ch = None if w.shape is None else w.shape[0]
        if out_ch is not None and out_ch.is_const and out_ch.value % groups:
            raise ShapeError(f"{out_ch.value} output channels do not divide into {groups} groups")
        if x.shape is None or w.shape is None:
            batch = None if x.shape is None else x.shape[0]
            return [TensorType((batch, out_ch) + (None,) * cls.SPATIAL, dtype)]
        same_dim(
            x.shape[1],
            w.shape[1] * groups if w.shape[1] is not None else None,
            f"input channels of 'x' {fmt_shape(x.shape)} and 'weight' {fmt_shape(w.shape)} x groups {groups} differ",
        )
        pads = attrs["padding"]
        spatial = [
            window_output(
                x.shape[2 + i],
                w.shape[2 + i],
                attrs["strides"][i],
                pads[i],
                pads[i + cls.SPATIAL],
                attrs["dilation"][i],
            )
            for i in range(cls.SPATIAL)
        ]
        return [TensorType((x.shape[0], out_ch, *spatial), dtype)]

    @classmethod
    def lower(cls, k: KernelBuilder) -> list[KernelValue]:
        _require_known_result(k)
        groups, sp = k.attrs["groups"], cls.SPATIAL
        x, w = k.ins
        out_ch, group_ch = w.shape[0], w.shape[1]
        if out_ch is None or group_ch is None or any(d is None for d in x.shape):
            raise k.fail(
                f"weight {w.type} and input {x.type} need known dims: state them with relax.match_cast"
            )
        # What the deduction only assumed, checked by the caller: C == groups * (C / groups), O % groups == 0.
        k.assume(0, (x.shape[0], group_ch * groups, *x.shape[2:]))
        k.assume(1, (floordiv(out_ch, groups) * groups, *w.shape[1:]))
        x, w = k.ins
        out = k.outs[0]
        strides, dilation, pads = (
            list(k.attrs["strides"]),
            list(k.attrs["dilation"]),
            list(k.attrs["padding"]),
        )
        if sp == 1:  # a 1-D convolution is a 2-D one over a unit height
            x = k.expand(x, [[0], [1], [2, 3]], (*x.shape[:2], 1, x.shape[2]))
            w = k.expand(w, [[0], [1], [2, 3]], (*w.shape[:2], 1, w.shape[2]))
            out = k.expand(out, [[0], [1], [2, 3]], (*out.shape[:2], 1, out.shape[2]))
            strides, dilation, pads = [1, *strides], [1, *dilation], [0, pads[0], 0, pads[1]]
        zero = k.constant(0.0, x.dtype)
        xp = _pad(k, x, [0, 0, pads[0], pads[1]], [0, 0, pads[2], pads[3]], zero)
        acc = _fill(k, zero, out)
        attrs = _window_attrs(strides, dilation)
        if groups == 1:
            r = _named(k, "linalg.conv_2d_nchw_fchw", attrs, [xp, w], acc)
        elif group_ch == 1 and out_ch == groups:
            w3 = k.collapse(w, [[0, 1], [2], [3]])
            r = _named(k, "linalg.depthwise_conv_2d_nchw_chw", attrs, [xp, w3], acc)
        else:
            n, c, hp, wp = xp.shape
            xg = k.expand(xp, [[0], [1, 2], [3], [4]], (n, groups, group_ch, hp, wp))
            wg = k.expand(w, [[0, 1], [2], [3], [4]], (groups, floordiv(out_ch, groups), *w.shape[1:]))
            og = k.expand(acc, [[0], [1, 2], [3], [4]], (acc.shape[0], groups, wg.shape[1], *acc.shape[2:]))
            rg = _named(k, "linalg.conv_2d_ngchw_gfchw", attrs, [xg, wg], og)
            r = k.collapse(rg, [[0], [1, 2], [3], [4]])
        if sp == 1:
            r = k.collapse(r, [[0], [1], [2, 3]])
        return [r]


@relax_op
class Conv1dOp(ConvOp):
    """1-D convolution, NCW x OIW.

    ``%y = "relax.conv1d"(%x, %w) {dilation = [1], groups = 1 : i64, padding = [1, 1], strides = [1]}
    : (!relax.tensor<["n", 16, "l"], f32>, !relax.tensor<[32, 16, 3], f32>) -> !relax.tensor<["n", 32, "l"], f32>``
    """

    NAME = "conv1d"
    SPATIAL = 1


@relax_op
class Conv2dOp(ConvOp):
    """2-D convolution, NCHW x OIHW.

    ``%y = "relax.conv2d"(%x, %w) {dilation = [1, 1], groups = 1 : i64, padding = [1, 1, 1, 1], strides = [2, 2]}
    : (!relax.tensor<["n", 3, "h", "w"], f32>, !relax.tensor<[64, 3, 3, 3], f32>)
    -> !relax.tensor<["n", 64, "(h + 1) floordiv 2", "(w + 1) floordiv 2"], f32>``
    """

    NAME = "conv2d"
    SPATIAL = 2


def _conv_attrs(spatial: int, strides: Any, padding: Any, dilation: Any, groups: int) -> dict[str, Any]:
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


def conv1d(
    x: ir.Value,
    weight: ir.Value,
    strides: int | Sequence[int] = 1,
    padding: int | Sequence[int] = 0,
    dilation: int | Sequence[int] = 1,
    groups: int = 1,
    *,
    loc: ir.Location | None = None,
) -> ir.Value:
    """1-D convolution (NCW, OIW)."""
    return Conv1dOp.build([x, weight], _conv_attrs(1, strides, padding, dilation, groups), loc=loc).result


def conv2d(
    x: ir.Value,
    weight: ir.Value,
    strides: int | Sequence[int] = 1,
    padding: int | Sequence[int] = 0,
    dilation: int | Sequence[int] = 1,
    groups: int = 1,
    *,
    loc: ir.Location | None = None,
) -> ir.Value:
    """2-D convolution (NCHW, OIHW); ``padding`` is one int, (h, w), or (top, left, bottom, right)."""
    return Conv2dOp.build([x, weight], _conv_attrs(2, strides, padding, dilation, groups), loc=loc).result


# -- lowering helpers shared with pooling and normalization ------------------------------------------------


def _require_known_result(k: KernelBuilder) -> None:
    """Fail unless every result dim is known (the kernel writes into destinations of known size)."""
    if k.allocating:
        raise k.fail(
            f"result {', '.join(str(t) for t in k.result_types)} has unknown dims: "
            "state the input dims with relax.match_cast first"
        )


def _fill(k: KernelBuilder, value: str, dest: KernelValue) -> KernelValue:
    """``linalg.fill`` of ``dest`` with the scalar ``value``."""
    t = element(dest.dtype)
    return k.op(f"linalg.fill ins({value} : {t}) outs({dest.name} : {dest.mlir}) -> {dest.mlir}", dest)


def _pad(
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


def _window_attrs(strides: Sequence[int], dilation: Sequence[int]) -> str:
    """The ``dilations``/``strides`` attribute dictionary of named linalg convolutions and poolings."""

    def dense(v: Sequence[int]) -> str:
        return f"dense<[{', '.join(map(str, v))}]> : tensor<{len(v)}xi64>"

    return f"{{dilations = {dense(dilation)}, strides = {dense(strides)}}}"


def _named(
    k: KernelBuilder, op: str, attrs: str, ins: Sequence[KernelValue], out: KernelValue
) -> KernelValue:
    """A named linalg op ``op`` with ``attrs`` reading ``ins`` and accumulating into ``out``."""
    names, types = ", ".join(v.name for v in ins), ", ".join(v.mlir for v in ins)
    return k.op(f"{op} {attrs} ins({names} : {types}) outs({out.name} : {out.mlir}) -> {out.mlir}", out)


def _empty_dims(k: KernelBuilder, dims: Sequence[tuple[KernelValue, int]], dtype: str) -> KernelValue:
    """A ``tensor.empty`` whose dims are those of other tensors (read with ``tensor.dim`` when dynamic)."""
    t = TensorType(tuple(v.shape[a] for v, a in dims), dtype)
    sizes = [k.dim(v, a) for v, a in dims if v.shape[a] is None or not v.shape[a].is_const]  # type: ignore[union-attr]
    return k.op(f"tensor.empty({', '.join(sizes)}) : {builtin_tensor(t)}", t)


def _index_to_float(k: KernelBuilder, value: str, dtype: str) -> str:
    i64 = k.scalar(f"arith.index_cast {value}", "index to i64")
    return k.scalar(f"arith.sitofp {i64}", f"i64 to {element(dtype)}")

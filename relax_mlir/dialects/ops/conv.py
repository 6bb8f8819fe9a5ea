"""Convolutions (NCW/NCHW inputs, OIW/OIHW weights); their window arithmetic is in ``window.py``.

Lowering, with every dim but the batch static: plain 1x1 convolutions of stride 1 without padding are
register-blocked matmuls on the input in place (``conv_kernels.pointwise_conv``); grouped and depthwise
convolutions, and plain ones with few input channels (``SMALL_CONV_TAPS``), are direct loops on vectors of
output columns that read the input in place (``conv_kernels.direct_conv``); other plain convolutions with a
constant kernel size are im2col + a matmul per block of output rows (``conv_kernels.im2col_conv``):
``register_matmul`` with static dims, else a ``linalg.matmul`` that the matmul schedule tiles and vectorizes.
Both run in an ``scf.forall`` over images x blocks of output rows, so that even one image runs on several
threads, into which ``relax-fuse-kernels`` moves the bias/ReLU/residual epilogue
(``transforms/fuse_epilogue.py``). ``convert-relax-to-linalg{conv=direct}``, for GPU targets, skips both (the
loops would run on the host). Otherwise the result is zero-filled, the input is zero-padded with
``tensor.pad`` and one named linalg convolution writes into the destination: ``linalg.conv_2d_nchw_fchw``
(groups = 1, symbolic kernel size), ``linalg.depthwise_conv_2d_nchw_chw`` (one input and one output channel
per group), else ``linalg.conv_2d_ngchw_gfchw`` on views that split the channels into groups;
``transforms/schedules/conv.py`` tiles those. ``conv1d`` runs as a 2-D convolution over a unit height.

``relax-pack-weights`` turns a ``conv2d`` by a constant weight into ``conv2d_winograd`` (3x3, stride 1: Winograd's
F(2x2, 3x3), ``conv_kernels.winograd_conv``) or ``conv2d_packed`` (``conv_kernels.packed_conv``: vectors along the
output channels), on weights transformed or packed at compile time.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from mlir import ir

from relax_mlir.dialects.dims import fmt_shape, join_dtype, provably_different, same_dim, tensor_operand
from relax_mlir.dialects.ops.conv_kernels import (
    direct_conv,
    direct_fits,
    im2col_conv,
    packed_conv,
    pointwise_conv,
    pointwise_fits,
    winograd_conv,
)
from relax_mlir.dialects.ops.window import (
    check_window_attrs,
    fill_tensor,
    float_operand,
    named_linalg,
    pad_tensor,
    require_known_result,
    window_attrs,
    window_op_attrs,
    window_output,
)
from relax_mlir.dialects.registry import Attr, Operand, RelaxOp, relax_op
from relax_mlir.dialects.types import RelaxType, TensorType
from relax_mlir.errors import ShapeError
from relax_mlir.lowering.kernel import KernelBuilder, KernelValue
from relax_mlir.shape_infer.expr import Expr, as_expr, floordiv


def _spatial(sizes: Sequence[Expr | None], kernel: Sequence[Expr | None], attrs: dict[str, Any]) -> list:
    """The output sizes of a convolution over the input ``sizes`` by a window of ``kernel`` sizes, with the
    ``strides``, ``padding`` (all befores, then afters) and ``dilation`` of ``attrs``."""
    n, pads = len(sizes), attrs["padding"]
    return [
        window_output(sizes[i], kernel[i], attrs["strides"][i], pads[i], pads[i + n], attrs["dilation"][i])
        for i in range(n)
    ]


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
        x = float_operand(operand_types[0], "x")
        w = tensor_operand(operand_types[1], "weight")
        dtype = join_dtype(x, w, ("x", "weight"))
        rank = cls.SPATIAL + 2
        check_window_attrs(attrs, cls.SPATIAL)
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
        spatial = _spatial(x.shape[2:], w.shape[2:], attrs)
        return [TensorType((x.shape[0], out_ch, *spatial), dtype)]

    @classmethod
    def lower(cls, k: KernelBuilder) -> list[KernelValue]:
        require_known_result(k)
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
        empty = any(d.is_const and d.value == 0 for d in (*x.shape, *w.shape))
        im2col = k.choices.get("conv", "im2col") == "im2col"
        if not empty and im2col and pointwise_fits(x, w, out, strides, pads, groups):
            r = pointwise_conv(k, x, w, out)
            return [k.collapse(r, [[0], [1], [2, 3]]) if sp == 1 else r]
        if not empty and im2col and direct_fits(k, x, w, out, groups):
            r = direct_conv(k, x, w, out, strides, dilation, pads, groups)
            return [k.collapse(r, [[0], [1], [2, 3]]) if sp == 1 else r]
        if not empty and im2col and groups == 1 and all(d is not None and d.is_const for d in w.shape[2:]):
            r = im2col_conv(k, x, w, out, strides, dilation, pads, zero)
            return [k.collapse(r, [[0], [1], [2, 3]]) if sp == 1 else r]
        acc = fill_tensor(k, zero, out)
        if empty:
            # no products to sum (empty image, channels or window): the zeros are the result; slicing
            # an empty dim would also fail MLIR 22's extract_slice verifier (offset 0 >= size 0)
            return [k.collapse(acc, [[0], [1], [2, 3]]) if sp == 1 else acc]
        attrs = window_attrs(strides, dilation)
        xp = pad_tensor(k, x, [0, 0, pads[0], pads[1]], [0, 0, pads[2], pads[3]], zero)
        if groups == 1:
            r = named_linalg(k, "linalg.conv_2d_nchw_fchw", attrs, [xp, w], acc)
        elif group_ch == 1 and out_ch == groups:
            w3 = k.collapse(w, [[0, 1], [2], [3]])
            r = named_linalg(k, "linalg.depthwise_conv_2d_nchw_chw", attrs, [xp, w3], acc)
        else:
            n, c, hp, wp = xp.shape
            xg = k.expand(xp, [[0], [1, 2], [3], [4]], (n, groups, group_ch, hp, wp))
            wg = k.expand(w, [[0, 1], [2], [3], [4]], (groups, floordiv(out_ch, groups), *w.shape[1:]))
            og = k.expand(acc, [[0], [1, 2], [3], [4]], (acc.shape[0], groups, wg.shape[1], *acc.shape[2:]))
            rg = named_linalg(k, "linalg.conv_2d_ngchw_gfchw", attrs, [xg, wg], og)
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


def _static_input(k: KernelBuilder, channels: Expr | None) -> KernelValue | None:
    """The input of a convolution by a packed weight of ``channels`` input channels, its channels checked at
    the call; None when there is nothing to write (no pixels or images). Its channels, height and width
    must be static (the kernels unroll over them)."""
    require_known_result(k)
    x = k.ins[0]
    if not all(d is not None and d.is_const for d in x.shape[1:]):
        raise k.fail(f"input {x.type} needs static channels, height and width")
    if x.shape[1] != channels:
        k.assume(0, (x.shape[0], channels, *x.shape[2:]))
        x = k.ins[0]
    if any(d.is_const and d.value == 0 for d in (*k.outs[0].shape, x.shape[0])):
        return None
    return x


@relax_op
class Conv2dPackedOp(RelaxOp):
    """2-D convolution (NCHW, one group) by a weight packed into blocks of ``L`` output channels: ``packed``
    [F/L, C, KH, KW, L] holds ``W[b*L + l, c, i, j]`` at ``packed[b, c, i, j, l]``. Internal: made by
    ``relax-pack-weights`` from a ``conv2d`` by a constant weight, not by frontends.

    ``%y = "relax.conv2d_packed"(%x, %wp) {dilation = [1, 1], padding = [1, 1, 1, 1], strides = [1, 1]} : (!relax.tensor<["n", 16, 32, 32], f32>, !relax.tensor<[2, 16, 3, 3, 16], f32>)
    -> !relax.tensor<["n", 32, 32, 32], f32>``
    """

    NAME = "conv2d_packed"
    FUSION = "matmul"
    CPU_ONLY = True
    OPERANDS = (Operand("x"), Operand("packed"))
    ATTRS = (
        Attr("strides", "ints"),
        Attr("padding", "ints"),
        Attr("dilation", "ints"),
    )

    @classmethod
    def deduce(cls, operand_types: Sequence[RelaxType | None], attrs: dict[str, Any]) -> list[RelaxType]:
        x = float_operand(operand_types[0], "x")
        packed = tensor_operand(operand_types[1], "packed")
        dtype = join_dtype(x, packed, ("x", "packed"))
        check_window_attrs(attrs, 2)
        if (
            packed.shape is None
            or len(packed.shape) != 5
            or not all(d is not None and d.is_const and d.value > 0 for d in packed.shape)
        ):
            raise ShapeError(
                f"operand 'packed' must be [blocks, channels, kh, kw, width] with positive constant dims, "
                f"got {packed}"
            )
        channels = packed.shape[0] * packed.shape[4]  # type: ignore[operator]
        if x.shape is None:
            return [TensorType((None, channels, None, None), dtype)]
        if len(x.shape) != 4:
            raise ShapeError(f"operand 'x' {fmt_shape(x.shape)} must have rank 4")
        if provably_different(x.shape[1], packed.shape[1]):
            raise ShapeError(
                f"input channels of 'x' {fmt_shape(x.shape)} and 'packed' {fmt_shape(packed.shape)} differ"
            )
        return [TensorType((x.shape[0], channels, *_spatial(x.shape[2:], packed.shape[2:4], attrs)), dtype)]

    @classmethod
    def lower(cls, k: KernelBuilder) -> list[KernelValue]:
        """``conv_kernels.packed_conv``: vectors along the output channels, the input read in place."""
        x = _static_input(k, k.ins[1].shape[1])
        if x is None:
            return [k.outs[0]]
        attrs = [list(k.attrs[a]) for a in ("strides", "dilation", "padding")]
        return [packed_conv(k, x, k.ins[1], k.outs[0], *attrs)]


def conv2d_packed(
    x: ir.Value,
    packed: ir.Value,
    strides: Sequence[int],
    padding: Sequence[int],
    dilation: Sequence[int],
    *,
    loc: ir.Location | None = None,
) -> ir.Value:
    """2-D convolution (NCHW, one group) by a weight packed as ``packed`` [F/L, C, KH, KW, L]."""
    attrs = {"strides": list(strides), "padding": list(padding), "dilation": list(dilation)}
    return Conv2dPackedOp.build([x, packed], attrs, loc=loc).result


@relax_op
class Conv2dWinogradOp(RelaxOp):
    """3x3 convolution of stride 1 (NCHW, one group) by Winograd's F(2x2, 3x3): ``u`` [4, 4, F/L, C, L]
    holds ``(G W[f, c] G^T)[xi, nu]`` at ``u[xi, nu, f // L, c, f % L]`` (G of Lavin and Gray). Internal:
    made by ``relax-pack-weights`` from a ``conv2d`` by a constant weight, not by frontends.

    ``%y = "relax.conv2d_winograd"(%x, %u) {padding = [1, 1, 1, 1]} : (!relax.tensor<["n", 32, 16, 16], f32>,
    !relax.tensor<[4, 4, 2, 32, 16], f32>) -> !relax.tensor<["n", 32, 16, 16], f32>``
    """

    NAME = "conv2d_winograd"
    FUSION = "matmul"
    CPU_ONLY = True
    OPERANDS = (Operand("x"), Operand("u"))
    ATTRS = (Attr("padding", "ints"),)

    @classmethod
    def deduce(cls, operand_types: Sequence[RelaxType | None], attrs: dict[str, Any]) -> list[RelaxType]:
        x = float_operand(operand_types[0], "x")
        u = tensor_operand(operand_types[1], "u")
        dtype = join_dtype(x, u, ("x", "u"))
        pads = attrs["padding"]
        if len(pads) != 4 or any(p < 0 for p in pads):
            raise ShapeError(f"'padding' needs 4 non-negative values, got {pads}")
        dims = u.shape or ()
        if (
            len(dims) != 5
            or not all(d is not None and d.is_const and d.value > 0 for d in dims)
            or (
                dims[0].value,  # type: ignore[union-attr]
                dims[1].value,  # type: ignore[union-attr]
            )
            != (4, 4)
        ):
            raise ShapeError(
                f"operand 'u' must be [4, 4, blocks, channels, width] with constant dims, got {u}"
            )
        channels = dims[2] * dims[4]  # type: ignore[operator]
        if x.shape is None:
            return [TensorType((None, channels, None, None), dtype)]
        if len(x.shape) != 4:
            raise ShapeError(f"operand 'x' {fmt_shape(x.shape)} must have rank 4")
        if provably_different(x.shape[1], dims[3]):
            raise ShapeError(f"input channels of 'x' {fmt_shape(x.shape)} and 'u' {fmt_shape(dims)} differ")
        unit = {"strides": [1, 1], "dilation": [1, 1], "padding": pads}
        return [TensorType((x.shape[0], channels, *_spatial(x.shape[2:], [as_expr(3)] * 2, unit)), dtype)]

    @classmethod
    def lower(cls, k: KernelBuilder) -> list[KernelValue]:
        """``conv_kernels.winograd_conv``."""
        x = _static_input(k, k.ins[1].shape[3])
        if x is None:
            return [k.outs[0]]
        return [winograd_conv(k, x, k.ins[1], k.outs[0], list(k.attrs["padding"]))]


def conv2d_winograd(
    x: ir.Value, u: ir.Value, padding: Sequence[int], *, loc: ir.Location | None = None
) -> ir.Value:
    """3x3 stride-1 convolution (NCHW, one group) by the Winograd-transformed weight ``u`` [4, 4, F/L, C, L]."""
    return Conv2dWinogradOp.build([x, u], {"padding": list(padding)}, loc=loc).result


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
    return Conv1dOp.build([x, weight], window_op_attrs(1, strides, padding, dilation, groups), loc=loc).result


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
    return Conv2dOp.build([x, weight], window_op_attrs(2, strides, padding, dilation, groups), loc=loc).result

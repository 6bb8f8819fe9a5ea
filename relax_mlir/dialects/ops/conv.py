"""Convolutions (NCW/NCHW inputs, OIW/OIHW weights) and the sliding-window arithmetic pooling shares.

Lowering: the result is zero-filled. Without groups and with a constant kernel size, the convolution is
im2col + one ``linalg.matmul`` per image (``_im2col_conv``, in an ``scf.forall`` over the images), which
the matmul schedule tiles and vectorizes (``convert-relax-to-linalg{conv=direct}``, for GPU targets, skips
it: the loop over images would run on the host). Otherwise the input is zero-padded with ``tensor.pad`` and one
named linalg convolution writes into the destination: ``linalg.conv_2d_nchw_fchw`` (groups = 1, symbolic
kernel size), ``linalg.depthwise_conv_2d_nchw_chw`` (one input and one output channel per group), else
``linalg.conv_2d_ngchw_gfchw`` on views that split the channels into groups; ``transforms/schedules/conv.py`` tiles
those. ``conv1d`` runs as a 2-D convolution over a unit height.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from mlir import ir

from relax_mlir.dialects.dims import dim_min, fmt_shape, join_dtype, same_dim, tensor_operand
from relax_mlir.dialects.ops.elementwise import FLOAT_DTYPES
from relax_mlir.dialects.registry import Attr, Operand, RelaxOp, relax_op
from relax_mlir.dialects.types import Dim, RelaxType, TensorType
from relax_mlir.errors import ShapeError
from relax_mlir.lowering.kernel import KernelBuilder, KernelValue, builtin_tensor, element
from relax_mlir.shape_infer.expr import Expr, as_expr, ceildiv, floordiv, format_dim


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
        acc = _fill(k, zero, out)
        if any(d.is_const and d.value == 0 for d in (*x.shape, *w.shape)):
            # no products to sum (empty image, channels or window): the zeros are the result; slicing
            # an empty dim would also fail MLIR 22's extract_slice verifier (offset 0 >= size 0)
            return [k.collapse(acc, [[0], [1], [2, 3]]) if sp == 1 else acc]
        attrs = _window_attrs(strides, dilation)
        im2col = k.choices.get("conv", "im2col") == "im2col"
        if im2col and groups == 1 and all(d is not None and d.is_const for d in w.shape[2:]):
            r = _im2col_conv(k, x, w, acc, strides, dilation, pads, zero)
            return [k.collapse(r, [[0], [1], [2, 3]]) if sp == 1 else r]
        xp = _pad(k, x, [0, 0, pads[0], pads[1]], [0, 0, pads[2], pads[3]], zero)
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


def _padded_image(k: KernelBuilder, x: KernelValue, n: str, pads: Sequence[int], zero: str) -> KernelValue:
    """Image ``n`` of ``x`` [N, C, H, W] as [C, H + pads, W + pads]: per channel, a zero fill, then one copy
    per input row.

    (``tensor.pad`` of the whole batch bufferizes to a ``memref.copy`` into a strided view, which runs
    as a slow generic loop; rows of static width are vectorized by the schedules.)
    """
    c, h, w = x.shape[1:]
    image = TensorType((c, h, w), x.dtype)
    c_s, h_s, w_s = k.sizes(x)[1:]
    x_n = k.op(
        f"tensor.extract_slice {x.name}[{n}, 0, 0, 0] [1, {c_s}, {h_s}, {w_s}] [1, 1, 1, 1] : "
        f"{x.mlir} to {builtin_tensor(image)}",
        image,
    )
    top, left, bottom, right = pads
    if not any(pads):
        return x_n
    hp, wp = h + top + bottom, w + left + right  # type: ignore[operator]
    padded = k.empty((c, hp, wp), x.dtype)
    plane = TensorType((as_expr(1), hp, wp), x.dtype)
    line = TensorType((as_expr(1), as_expr(1), w), x.dtype)
    hp_s, wp_s = k.mixed([hp, wp])

    def channel(ci: str, padded: KernelValue) -> KernelValue:
        where = f"[{ci}, 0, 0] [1, {hp_s}, {wp_s}] [1, 1, 1]"
        part = k.op(
            f"tensor.extract_slice {padded.name}{where} : {padded.mlir} to {builtin_tensor(plane)}", plane
        )
        zeroed = k.fill(zero, part)
        padded = k.op(
            f"tensor.insert_slice {zeroed.name} into {padded.name}{where} : {zeroed.mlir} into {padded.mlir}",
            padded,
        )

        def row(r: str, padded: KernelValue) -> KernelValue:
            src = k.op(
                f"tensor.extract_slice {x_n.name}[{ci}, {r}, 0] [1, 1, {w_s}] [1, 1, 1] : "
                f"{x_n.mlir} to {builtin_tensor(line)}",
                line,
            )
            y = k.typed(f"affine.apply affine_map<(d0) -> (d0 + {top})>({r})")
            where = f"[{ci}, {y}, {left}] [1, 1, {w_s}] [1, 1, 1]"
            part = k.op(f"tensor.extract_slice {padded.name}{where} : {padded.mlir} to {src.mlir}", line)
            copied = k.copy(src, part)
            return k.op(
                f"tensor.insert_slice {copied.name} into {padded.name}{where} : {src.mlir} into {padded.mlir}",
                padded,
            )

        return k.loop(k.dim(x, 2), padded, row)

    return k.loop(k.dim(x, 1), padded, channel)


def _forall(
    k: KernelBuilder,
    upper: str,
    init: KernelValue,
    body: Callable[[str, KernelValue], tuple[KernelValue, str]],
) -> KernelValue:
    """``scf.forall`` over ``upper`` independent iterations sharing ``init``.

    ``body(iv, shared)`` emits one iteration and returns its part and where it goes in ``shared``
    (``[offsets] [sizes] [strides]``), written back with ``tensor.parallel_insert_slice``, which
    bufferizes in place. (An ``scf.for`` would need a ``tensor.insert_slice`` that the schedules'
    vectorization turns into a whole-part vector read and write, unrolled at compile time.)
    ``relax-lower-parallel`` runs the iterations on OpenMP threads when kernels are parallel.
    """
    iv, shared = k.fresh("iv"), KernelValue(k.fresh("o"), init.type, init.mlir)
    lines, (part, where) = k.capture(lambda: body(iv, shared))
    result = KernelValue(k.fresh("t"), init.type, init.mlir)
    k.emit(
        f"{result.name} = scf.forall ({iv}) in ({upper}) shared_outs({shared.name} = {init.name}) "
        f"-> ({init.mlir}) {{",
        *("  " + line for line in lines),
        "  scf.forall.in_parallel {",
        f"    tensor.parallel_insert_slice {part.name} into {shared.name}{where} : {part.mlir} into {init.mlir}",
        "  }",
        "}",
    )
    return result


def _im2col_conv(
    k: KernelBuilder,
    x: KernelValue,
    w: KernelValue,
    acc: KernelValue,
    strides: Sequence[int],
    dilation: Sequence[int],
    pads: Sequence[int],
    zero: str,
) -> KernelValue:
    """``acc += conv(x, w)`` as im2col + one matmul per image: W [F, C*KH*KW] x cols [C*KH*KW, OH*OW].

    Each image (an ``scf.forall`` iteration) is padded on its own (``_padded_image``) and its ``cols``
    [C, KH, KW, OH, OW] filled row by row, one row copy per kernel tap, so both stay in cache; the
    schedules vectorize the copies when OW is static, and strided rows are one contiguous vector read
    and a shuffle. A 1x1 stride-1 convolution without padding multiplies the image itself. The
    contraction is a ``linalg.matmul`` that the matmul schedule tiles and vectorizes. When OH and OW are
    both dynamic, each output row is its own matmul (``memref.expand_shape`` of one dim into two dynamic
    ones aborts MLIR 22's expand-strided-metadata).
    """
    c, f = x.shape[1], acc.shape[1]
    kh, kw = w.shape[2:]
    oh, ow = acc.shape[2:]
    assert kh is not None and kw is not None and kh.is_const and kw.is_const
    per_row = sum(1 for d in (oh, ow) if d is None or not d.is_const) > 1
    rows = as_expr(1) if per_row else oh
    block = TensorType((f, rows, ow), acc.dtype)
    image = TensorType((f, oh, ow), acc.dtype)
    line = TensorType((as_expr(1), as_expr(1), ow), x.dtype)
    f_s, oh_s, ow_s = k.sizes(acc)[1:]
    rows_s = "1" if per_row else oh_s
    pointwise = kh == 1 and kw == 1 and list(strides) == [1, 1] and not any(pads) and not per_row
    w2 = k.collapse(w, [[0], [1, 2, 3]])

    # A strided row of static width: one contiguous vector read and a shuffle picking every stride-th
    # element (a strided transfer_read would become one scalar load per element).
    span = strides[1] * (ow.value - 1) + 1 if ow is not None and ow.is_const else 0
    deinterleave = strides[1] > 1 and 0 < span <= 256
    c0, pad = k.const(0), k.constant(0.0, x.dtype)

    def strided_row(
        x_n: KernelValue, ci: str, y: str, x0: int, at: Sequence[str], cols: KernelValue
    ) -> KernelValue:
        t = element(x.dtype)
        v = k.typed(
            f"vector.transfer_read {x_n.name}[{ci}, {y}, {k.const(x0)}], {pad} {{in_bounds = [true]}} : "
            f"{x_n.mlir}, vector<{span}x{t}>"
        )
        mask = ", ".join(str(strides[1] * e) for e in range(ow.value))  # type: ignore[union-attr]
        picked = k.typed(f"vector.shuffle {v}, {v} [{mask}] : vector<{span}x{t}>, vector<{span}x{t}>")
        written = k.fresh("t")
        k.emit(
            f"{written} = vector.transfer_write {picked}, {cols.name}[{', '.join(at)}] {{in_bounds = [true]}} : "
            f"vector<{ow.value}x{t}>, {cols.mlir}"  # type: ignore[union-attr]
        )
        return KernelValue(written, cols.type, cols.mlir)

    def fill_row(x_n: KernelValue, ci: str, r: str, y0: str, cols: KernelValue) -> KernelValue:
        """Row ``r`` of every tap of channel ``ci`` in ``cols``, from input rows starting at ``y0``."""
        for i in range(kh.value):  # type: ignore[union-attr]
            y = k.typed(f"affine.apply affine_map<(d0) -> (d0 + {i * dilation[0]})>({y0})")
            for j in range(kw.value):  # type: ignore[union-attr]
                if deinterleave:
                    cols = strided_row(x_n, ci, y, j * dilation[1], [ci, k.const(i), k.const(j), r, c0], cols)
                    continue
                src = k.op(
                    f"tensor.extract_slice {x_n.name}[{ci}, {y}, {j * dilation[1]}] [1, 1, {ow_s}] "
                    f"[1, 1, {strides[1]}] : {x_n.mlir} to {builtin_tensor(line)}",
                    line,
                )
                where = f"[{ci}, {i}, {j}, {r}, 0] [1, 1, 1, 1, {ow_s}] [1, 1, 1, 1, 1]"
                part = k.op(f"tensor.extract_slice {cols.name}{where} : {cols.mlir} to {src.mlir}", line)
                copied = k.copy(src, part)
                cols = k.op(
                    f"tensor.insert_slice {copied.name} into {cols.name}{where} : {src.mlir} into {cols.mlir}",
                    cols,
                )
        return cols

    def one_block(x_n: KernelValue, r0: str, out: KernelValue) -> KernelValue:
        """Output rows ``r0`` .. ``r0 + rows`` of one image: ``out`` [F, OH, OW], padded input ``x_n``."""

        def channel(ci: str, cols: KernelValue) -> KernelValue:
            def row(r: str, cols: KernelValue) -> KernelValue:
                y0 = k.typed(f"affine.apply affine_map<(d0, d1) -> ((d0 + d1) * {strides[0]})>({r}, {r0})")
                return fill_row(x_n, ci, r, y0, cols)

            return k.loop(k.const(1) if per_row else k.dim(acc, 2), cols, row)

        if pointwise:  # the image itself is the columns [C, H*W]
            cols2 = k.collapse(x_n, [[0], [1, 2]])
        else:
            cols = k.loop(k.dim(x, 1), k.empty((c, kh, kw, rows, ow), x.dtype), channel)
            cols2 = k.collapse(cols, [[0, 1, 2], [3, 4]])
        where = f"[0, {r0}, 0] [{f_s}, 1, {ow_s}] [1, 1, 1]"
        o_n = out
        if per_row:
            o_n = k.op(
                f"tensor.extract_slice {out.name}{where} : {out.mlir} to {builtin_tensor(block)}", block
            )
        o2 = k.collapse(o_n, [[0], [1, 2]])
        r2 = k.op(
            f"linalg.matmul ins({w2.name}, {cols2.name} : {w2.mlir}, {cols2.mlir}) "
            f"outs({o2.name} : {o2.mlir}) -> {o2.mlir}",
            o2,
        )
        sizes = [
            None if d is not None and d.is_const else v for d, v in zip(block.shape, (f_s, rows_s, ow_s))
        ]
        r_n = k.expand(r2, [[0], [1, 2]], block.shape, sizes)
        if not per_row:
            return r_n
        return k.op(
            f"tensor.insert_slice {r_n.name} into {out.name}{where} : {r_n.mlir} into {out.mlir}", out
        )

    def one_image(n: str, out: KernelValue) -> tuple[KernelValue, str]:
        x_n = _padded_image(k, x, n, pads, zero)
        where = f"[{n}, 0, 0, 0] [1, {f_s}, {oh_s}, {ow_s}] [1, 1, 1, 1]"
        o_img = k.op(f"tensor.extract_slice {out.name}{where} : {out.mlir} to {builtin_tensor(image)}", image)
        if per_row:
            return k.loop(k.dim(acc, 2), o_img, lambda r0, o: one_block(x_n, r0, o)), where
        return one_block(x_n, k.const(0), o_img), where

    return _forall(k, k.dim(acc, 0), acc, one_image)


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

"""2-D pooling over NCHW: max, average, and adaptive average.

Lowering: f32/f64 max pooling of windows that tile the input (stride = kernel, no padding), every dim
static but the batch, is a vectorized loop per image and channel (``conv_kernels.max_pool``). Otherwise the
input is padded with ``tensor.pad`` (-inf or the type's minimum for max, 0 for average; in
``ceil_mode`` the right padding grows so the last window fits), then ``linalg.pooling_nchw_max`` or
``linalg.pooling_nchw_sum`` runs over it (max: a ``linalg.generic`` for windows that tile the input, and
with ``arith.maxui`` for unsigned and i1).
Average pooling divides by the number of window taps inside the input (or inside the padded input
with ``count_include_pad``), as PyTorch does, with dilation counted tap by tap. Adaptive average
pooling sums with masked reductions along H then W (window i covers [floor(i*H/out), ceil((i+1)*H/out))),
then divides by the window sizes.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from mlir import ir

from relax_mlir.dialects.dims import fmt_shape, tensor_operand
from relax_mlir.dialects.ops.conv_kernels import max_pool, max_pool_fits
from relax_mlir.dialects.ops.window import (
    check_window_attrs,
    empty_like_dims,
    fill_tensor,
    float_operand,
    index_to_float,
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
from relax_mlir.lowering.kernel import KernelBuilder, KernelValue, element, is_float, unsigned_order
from relax_mlir.shape_infer.expr import Expr, const, smax


class Pool2dOp(RelaxOp):
    """Base of 2-D pooling over NCHW with a ``kernel`` window."""

    OPERANDS = (Operand("x"),)
    ATTRS = (
        Attr("kernel", "ints"),
        Attr("strides", "ints"),
        Attr("padding", "ints"),
        Attr("dilation", "ints"),
        Attr("ceil_mode", "bool"),
    )
    FLOAT_ONLY = False

    @classmethod
    def deduce(cls, operand_types: Sequence[RelaxType | None], attrs: dict[str, Any]) -> list[RelaxType]:
        x = float_operand(operand_types[0], "x") if cls.FLOAT_ONLY else tensor_operand(operand_types[0], "x")
        check_window_attrs(attrs, 2)
        kernel = attrs["kernel"]
        if len(kernel) != 2 or any(k <= 0 for k in kernel):
            raise ShapeError(f"'kernel' needs 2 positive values, got {kernel}")
        if x.shape is None:
            return [TensorType((None,) * 4, x.dtype)]
        if len(x.shape) != 4:
            raise ShapeError(f"operand 'x' {fmt_shape(x.shape)} must have rank 4 (NCHW)")
        pads = attrs["padding"]
        spatial = [
            window_output(
                x.shape[2 + i],
                const(kernel[i]),
                attrs["strides"][i],
                pads[i],
                pads[i + 2],
                attrs["dilation"][i],
                attrs["ceil_mode"],
            )
            for i in range(2)
        ]
        return [TensorType((x.shape[0], x.shape[1], *spatial), x.dtype)]


@relax_op
class MaxPool2dOp(Pool2dOp):
    """2-D max pooling (NCHW).

    ``%y = "relax.max_pool2d"(%x) {ceil_mode = false, dilation = [1, 1], kernel = [2, 2], padding = [0, 0, 0, 0],
    strides = [2, 2]} : (!relax.tensor<["n", 8, "h", "w"], f32>) -> !relax.tensor<["n", 8, "h floordiv 2", "w floordiv 2"], f32>``
    """

    NAME = "max_pool2d"

    @classmethod
    def lower(cls, k: KernelBuilder) -> list[KernelValue]:
        require_known_result(k)
        x, out = k.ins[0], k.outs[0]
        empty = any(d is not None and d.is_const and d.value == 0 for d in (*x.shape[1:], *out.shape[1:]))
        if not empty and max_pool_fits(x, out, k.attrs):
            return [max_pool(k, x, out, k.attrs["kernel"])]
        lowest = _lowest(k, x.dtype)
        xp = _pad_windows(k, x, out, lowest)
        acc = fill_tensor(k, lowest, out)
        window = _window(k, x.dtype)
        attrs = window_attrs(k.attrs["strides"], k.attrs["dilation"])
        unsigned = not is_float(x.dtype) and unsigned_order(x.dtype)
        if not unsigned and not _disjoint_windows(k.attrs):
            return [named_linalg(k, "linalg.pooling_nchw_max", attrs, [xp, window], acc)]
        # A generic: the named op compares signed (unsigned ints and booleans need an unsigned maximum), and
        # windows that tile the input (stride = kernel) run 2.8-3.3x faster as its loops, which LLVM
        # vectorizes along the output row, than as the named op's schedule, which unrolls strided windows
        # per output (2x2 windows on [8, 16, 64, 64] f32: 0.107 against 0.295 ms on znver4). Overlapping
        # windows (3x3, stride 2) are faster as the named op (0.98 against 1.48 ms on [8, 64, 56, 56]).
        (sh, sw), (dh, dw) = k.attrs["strides"], k.attrs["dilation"]
        maps = [
            f"(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2 * {sh} + d4 * {dh}, d3 * {sw} + d5 * {dw})",
            "(d0, d1, d2, d3, d4, d5) -> (d4, d5)",
            "(d0, d1, d2, d3, d4, d5) -> (d0, d1, d2, d3)",
        ]
        t = element(x.dtype)
        maximum = "maxui" if unsigned else "maximumf" if is_float(x.dtype) else "maxsi"
        [r] = k.generic(
            [xp, window],
            [acc],
            maps,
            ["parallel"] * 4 + ["reduction"] * 2,
            lambda a: [k.scalar(f"arith.{maximum} {a[2]}, {a[0]}", t)],
        )
        return [r]


def _disjoint_windows(attrs: dict[str, Any]) -> bool:
    """Whether the windows tile the input without overlap or gaps: stride = kernel, no dilation."""
    return list(attrs["strides"]) == list(attrs["kernel"]) and all(d == 1 for d in attrs["dilation"])


@relax_op
class AvgPool2dOp(Pool2dOp):
    """2-D average pooling (NCHW); ``count_include_pad`` picks the divisor at the borders.

    ``%y = "relax.avg_pool2d"(%x) {ceil_mode = false, count_include_pad = false, dilation = [1, 1], kernel = [3, 3],
    padding = [1, 1, 1, 1], strides = [1, 1]} : (!relax.tensor<["n", 8, "h", "w"], f32>) -> !relax.tensor<["n", 8, "h", "w"], f32>``
    """

    NAME = "avg_pool2d"
    ATTRS = (*Pool2dOp.ATTRS, Attr("count_include_pad", "bool"))
    FLOAT_ONLY = True

    @classmethod
    def lower(cls, k: KernelBuilder) -> list[KernelValue]:
        require_known_result(k)
        x, out = k.ins[0], k.outs[0]
        zero = k.constant(0.0, x.dtype)
        xp = _pad_windows(k, x, out, zero)
        attrs = window_attrs(k.attrs["strides"], k.attrs["dilation"])
        total = named_linalg(
            k, "linalg.pooling_nchw_sum", attrs, [xp, _window(k, x.dtype)], fill_tensor(k, zero, out)
        )
        counts = [_tap_counts(k, x, out, axis) for axis in (2, 3)]
        maps = [
            "(d0, d1, d2, d3) -> (d2)",
            "(d0, d1, d2, d3) -> (d3)",
            "(d0, d1, d2, d3) -> (d0, d1, d2, d3)",
        ]
        t = element(x.dtype)

        def divide(a: list[str]) -> list[str]:
            count = k.scalar(f"arith.mulf {a[0]}, {a[1]}", t)
            return [k.scalar(f"arith.divf {a[2]}, {count}", t)]

        [r] = k.generic(counts, [total], maps, ["parallel"] * 4, divide)
        return [r]


def _pool_attrs(
    kernel: int | Sequence[int], strides: Any, padding: Any, dilation: Any, ceil_mode: bool
) -> dict:
    attrs = window_op_attrs(2, kernel if strides is None else strides, padding, dilation, 1)
    del attrs["groups"]
    attrs["kernel"] = [kernel] * 2 if isinstance(kernel, int) else list(kernel)
    attrs["ceil_mode"] = ceil_mode
    return attrs


def max_pool2d(
    x: ir.Value,
    kernel: int | Sequence[int],
    strides: int | Sequence[int] | None = None,
    padding: int | Sequence[int] = 0,
    dilation: int | Sequence[int] = 1,
    ceil_mode: bool = False,
    *,
    loc: ir.Location | None = None,
) -> ir.Value:
    """2-D max pooling; ``strides`` defaults to the kernel."""
    return MaxPool2dOp.build([x], _pool_attrs(kernel, strides, padding, dilation, ceil_mode), loc=loc).result


def avg_pool2d(
    x: ir.Value,
    kernel: int | Sequence[int],
    strides: int | Sequence[int] | None = None,
    padding: int | Sequence[int] = 0,
    dilation: int | Sequence[int] = 1,
    ceil_mode: bool = False,
    count_include_pad: bool = False,
    *,
    loc: ir.Location | None = None,
) -> ir.Value:
    """2-D average pooling; ``strides`` defaults to the kernel."""
    attrs = _pool_attrs(kernel, strides, padding, dilation, ceil_mode)
    attrs["count_include_pad"] = count_include_pad
    return AvgPool2dOp.build([x], attrs, loc=loc).result


def _lowest(k: KernelBuilder, dtype: str) -> str:
    """-inf, or the smallest value of an integer type (0 for unsigned and i1)."""
    if is_float(dtype):
        return k.constant(float("-inf"), dtype)
    if unsigned_order(dtype):
        return k.constant(0, dtype)
    return k.constant(-(1 << (int(dtype[1:]) - 1)), dtype)


def _window(k: KernelBuilder, dtype: str) -> KernelValue:
    """The kernel-shaped tensor that gives named pooling ops their window size (never read)."""
    return k.empty(tuple(const(s) for s in k.attrs["kernel"]), dtype)


def _pad_windows(k: KernelBuilder, x: KernelValue, out: KernelValue, value: str) -> KernelValue:
    """``x`` padded by ``padding`` with ``value``; in ceil mode the right padding grows to fit the last window."""
    pads = k.attrs["padding"]
    high: list[Expr | int] = [0, 0]
    for i in range(2):
        after = pads[2 + i]
        if k.attrs["ceil_mode"]:
            size, windows = x.shape[2 + i], out.shape[2 + i]
            assert size is not None and windows is not None
            stride, dilation, kernel = k.attrs["strides"][i], k.attrs["dilation"][i], k.attrs["kernel"][i]
            needed = (windows - 1) * stride + (kernel - 1) * dilation + 1 - size - pads[i]
            after = smax(after, needed)
        high.append(after)
    return pad_tensor(k, x, [0, 0, pads[0], pads[1]], high, value)


def _tap_counts(k: KernelBuilder, x: KernelValue, out: KernelValue, axis: int) -> KernelValue:
    """Per output position along ``axis``: how many window taps fall inside the (padded) input, as floats.

    Window o starts at o*stride - pad_before; tap j sits at start + j*dilation and counts when it lies in
    [0, size), or in [-pad_before, size + pad_after) with ``count_include_pad``.
    """
    i = axis - 2
    stride, dilation, kernel = k.attrs["strides"][i], k.attrs["dilation"][i], k.attrs["kernel"][i]
    before, after = k.attrs["padding"][i], k.attrs["padding"][2 + i]
    include = k.attrs["count_include_pad"]
    size = k.dim(x, axis)
    lo = k.const(-before if include else 0)
    hi = k.scalar(f"arith.addi {size}, {k.const(after)}", "index") if include else size
    c = {v: k.const(v) for v in (0, 1, stride, dilation, before, kernel - 1)}
    dest = k.empty((out.shape[axis],), x.dtype)

    def body(a: list[str]) -> list[str]:
        def op(name: str, lhs: str, rhs: str) -> str:
            return k.scalar(f"arith.{name} {lhs}, {rhs}", "index")

        o = k.scalar("linalg.index 0", "index")
        start = op("subi", op("muli", o, c[stride]), c[before])
        first = op("maxsi", op("ceildivsi", op("subi", lo, start), c[dilation]), c[0])
        last_pos = op("subi", op("subi", hi, c[1]), start)
        last = op("minsi", op("floordivsi", last_pos, c[dilation]), c[kernel - 1])
        count = op("maxsi", op("addi", op("subi", last, first), c[1]), c[0])
        return [index_to_float(k, count, x.dtype)]

    [r] = k.generic([], [dest], ["(d0) -> (d0)"], ["parallel"], body)
    return r


@relax_op
class AdaptiveAvgPool2dOp(RelaxOp):
    """Average pooling to a fixed output size (NCHW).

    ``%y = "relax.adaptive_avg_pool2d"(%x) {output_size = [1, 1]} : (!relax.tensor<["n", 512, "h", "w"], f32>)
    -> !relax.tensor<["n", 512, 1, 1], f32>``
    """

    NAME = "adaptive_avg_pool2d"
    OPERANDS = (Operand("x"),)
    ATTRS = (Attr("output_size", "ints"),)

    @classmethod
    def deduce(cls, operand_types: Sequence[RelaxType | None], attrs: dict[str, Any]) -> list[RelaxType]:
        x = float_operand(operand_types[0], "x")
        size = attrs["output_size"]
        if len(size) != 2 or any(s <= 0 for s in size):
            raise ShapeError(f"'output_size' needs 2 positive values, got {size}")
        if x.shape is not None and len(x.shape) != 4:
            raise ShapeError(f"operand 'x' {fmt_shape(x.shape)} must have rank 4 (NCHW)")
        n, c = (None, None) if x.shape is None else x.shape[:2]
        return [TensorType((n, c, const(size[0]), const(size[1])), x.dtype)]

    @classmethod
    def lower(cls, k: KernelBuilder) -> list[KernelValue]:
        require_known_result(k)
        x, out = k.ins[0], k.outs[0]
        t = element(x.dtype)
        zero = k.constant(0.0, x.dtype)
        (start_h, end_h, count_h), (start_w, end_w, count_w) = (
            _adaptive_windows(k, x, axis) for axis in (2, 3)
        )

        def window_sum(a: list[str]) -> list[str]:
            tap = k.scalar("linalg.index 4", "index")
            after_start = k.scalar(f"arith.cmpi sge, {tap}, {a[1]}", "index")
            before_end = k.scalar(f"arith.cmpi slt, {tap}, {a[2]}", "index")
            inside = k.scalar(f"arith.andi {after_start}, {before_end}", "i1")
            v = k.scalar(f"arith.select {inside}, {a[0]}, {zero}", t)
            return [k.scalar(f"arith.addf {a[3]}, {v}", t)]

        # rows[n, c, i, w] = sum over the h of window i of x[n, c, h, w]; then the same along w.
        pre = "(d0, d1, d2, d3, d4) -> "
        rows = fill_tensor(k, zero, empty_like_dims(k, [(x, 0), (x, 1), (out, 2), (x, 3)], x.dtype))
        [rows] = k.generic(
            [x, start_h, end_h],
            [rows],
            [pre + "(d0, d1, d4, d3)", pre + "(d2)", pre + "(d2)", pre + "(d0, d1, d2, d3)"],
            ["parallel"] * 4 + ["reduction"],
            window_sum,
        )
        [total] = k.generic(
            [rows, start_w, end_w],
            [fill_tensor(k, zero, out)],
            [pre + "(d0, d1, d2, d4)", pre + "(d3)", pre + "(d3)", pre + "(d0, d1, d2, d3)"],
            ["parallel"] * 4 + ["reduction"],
            window_sum,
        )
        maps = [
            "(d0, d1, d2, d3) -> (d2)",
            "(d0, d1, d2, d3) -> (d3)",
            "(d0, d1, d2, d3) -> (d0, d1, d2, d3)",
        ]

        def divide(a: list[str]) -> list[str]:
            return [k.scalar(f"arith.divf {a[2]}, {k.scalar(f'arith.mulf {a[0]}, {a[1]}', t)}", t)]

        [r] = k.generic([count_h, count_w], [total], maps, ["parallel"] * 4, divide)
        return [r]


def adaptive_avg_pool2d(
    x: ir.Value, output_size: int | Sequence[int], *, loc: ir.Location | None = None
) -> ir.Value:
    """Average-pool ``x`` to ``output_size``."""
    size = [output_size] * 2 if isinstance(output_size, int) else list(output_size)
    return AdaptiveAvgPool2dOp.build([x], {"output_size": size}, loc=loc).result


def _adaptive_windows(k: KernelBuilder, x: KernelValue, axis: int) -> list[KernelValue]:
    """Along ``axis``: each output window's first and end input positions, and its size as a float."""
    out_size = k.attrs["output_size"][axis - 2]
    size = k.dim(x, axis)
    c_out, c_one = k.const(out_size), k.const(1)

    def body(a: list[str]) -> list[str]:
        o = k.scalar("linalg.index 0", "index")
        start = k.scalar(f"arith.floordivsi {k.scalar(f'arith.muli {o}, {size}', 'index')}, {c_out}", "index")
        after = k.scalar(f"arith.addi {o}, {c_one}", "index")
        end = k.scalar(
            f"arith.ceildivsi {k.scalar(f'arith.muli {after}, {size}', 'index')}, {c_out}", "index"
        )
        return [start, end, index_to_float(k, k.scalar(f"arith.subi {end}, {start}", "index"), x.dtype)]

    shape = (const(out_size),)
    dests = [k.empty(shape, "index"), k.empty(shape, "index"), k.empty(shape, x.dtype)]
    return k.generic([], dests, ["(d0) -> (d0)"] * 3, ["parallel"], body)

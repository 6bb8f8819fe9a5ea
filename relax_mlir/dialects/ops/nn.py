"""Neural-network ops: softmax, normalizations, convolutions, pooling, resize."""

from __future__ import annotations

from collections.abc import Sequence
from fractions import Fraction
from typing import Any

from mlir import ir

from relax_mlir.dialects.ops.elementwise import FLOAT_DTYPES
from relax_mlir.dialects.registry import Attr, Operand, RelaxOp, caller_location, located, relax_op
from relax_mlir.dialects.types import Dim, RelaxType, TensorType, relax_type
from relax_mlir.errors import ParseError, ShapeError
from relax_mlir.shape_infer.dims import (
    dim_min,
    fmt_shape,
    join_dtype,
    normalize_axes,
    normalize_axis,
    provably_different,
    same_dim,
    tensor_operand,
)
from relax_mlir.shape_infer.expr import ceildiv, const, floordiv, format_dim, parse_dim


def _float_operand(t: RelaxType | None, name: str) -> TensorType:
    x = tensor_operand(t, name)
    if x.dtype is not None and x.dtype not in FLOAT_DTYPES:
        raise ShapeError(f"operand '{name}' must have a float dtype, got {x.dtype}")
    return x


class SoftmaxBaseOp(RelaxOp):
    """Base of softmax and log_softmax along ``axis``."""

    OPERANDS = (Operand("x"),)
    ATTRS = (Attr("axis", "int"),)

    @classmethod
    def deduce(cls, operand_types: Sequence[RelaxType | None], attrs: dict[str, Any]) -> list[RelaxType]:
        x = _float_operand(operand_types[0], "x")
        if x.shape is not None:
            normalize_axis(attrs["axis"], len(x.shape))
        return [x]


@relax_op
class SoftmaxOp(SoftmaxBaseOp):
    """exp(x) / sum(exp(x)) along ``axis``.

    ``%y = "relax.softmax"(%x) {axis = -1 : i64} : (!relax.tensor<["b", "s"], f32>) -> !relax.tensor<["b", "s"], f32>``
    """

    NAME = "softmax"


@relax_op
class LogSoftmaxOp(SoftmaxBaseOp):
    """log(softmax(x)) along ``axis``.

    ``%y = "relax.log_softmax"(%x) {axis = -1 : i64} : (!relax.tensor<["b", 10], f32>) -> !relax.tensor<["b", 10], f32>``
    """

    NAME = "log_softmax"


def softmax(x: ir.Value, axis: int = -1, *, loc: ir.Location | None = None) -> ir.Value:
    """Softmax of ``x`` along ``axis``."""
    return SoftmaxOp.build([x], {"axis": axis}, loc=loc).result


def log_softmax(x: ir.Value, axis: int = -1, *, loc: ir.Location | None = None) -> ir.Value:
    """Log-softmax of ``x`` along ``axis``."""
    return LogSoftmaxOp.build([x], {"axis": axis}, loc=loc).result


def _check_params(
    x: TensorType, params: Sequence[tuple[RelaxType | None, str]], expected: Sequence[Dim]
) -> list[Dim]:
    """Per-channel/per-feature parameters: tensors of x's dtype and exactly the ``expected`` shape.

    What x does not know (its dtype, dims of ``expected`` that are None) is taken from the first
    parameter that knows it, so that the parameters also have to agree with each other. Returns
    ``expected`` with the dims learned from the parameters.
    """
    expected = list(expected)
    source = [""] * len(expected)
    ref, ref_name = x, "x"
    for t, name in params:
        p = tensor_operand(t, name)
        join_dtype(ref, p, (ref_name, name))
        if ref.dtype is None and p.dtype is not None:
            ref, ref_name = p, name
        if p.shape is None:
            continue
        if len(p.shape) != len(expected) or any(provably_different(a, b) for a, b in zip(p.shape, expected)):
            learned = sorted({s for s in source if s})
            like = f" (like {', '.join(repr(s) for s in learned)})" if learned else ""
            raise ShapeError(f"'{name}' {fmt_shape(p.shape)} must have shape {fmt_shape(expected)}{like}")
        for i, d in enumerate(p.shape):
            if expected[i] is None and d is not None:
                expected[i], source[i] = d, name
    return expected


def _normalized_shape(x: TensorType, axes: Sequence[int]) -> list[Dim]:
    """The dims of x over ``axes`` (unknown dims when x's rank is unknown)."""
    if x.shape is None:
        if len(set(axes)) != len(axes):
            raise ShapeError(f"axes {list(axes)} repeat an axis")
        return [None] * len(axes)
    return [x.shape[a] for a in normalize_axes(axes, len(x.shape))]


@relax_op
class LayerNormOp(RelaxOp):
    """(x - mean) / sqrt(var + epsilon) * gamma + beta over ``axes``.

    ``%y = "relax.layer_norm"(%x, %g, %b) {axes = [-1], epsilon = 1.0e-05 : f64} : (!relax.tensor<["b", "s", 512], f32>,
    !relax.tensor<[512], f32>, !relax.tensor<[512], f32>) -> !relax.tensor<["b", "s", 512], f32>``
    """

    NAME = "layer_norm"
    OPERANDS = (Operand("x"), Operand("gamma"), Operand("beta"))
    ATTRS = (Attr("axes", "ints"), Attr("epsilon", "float"))

    @classmethod
    def deduce(cls, operand_types: Sequence[RelaxType | None], attrs: dict[str, Any]) -> list[RelaxType]:
        x = _float_operand(operand_types[0], "x")
        params = list(zip(operand_types[1:], ("gamma", "beta")))
        _check_params(x, params, _normalized_shape(x, attrs["axes"]))
        return [x]


def layer_norm(
    x: ir.Value,
    gamma: ir.Value,
    beta: ir.Value,
    axes: Sequence[int] = (-1,),
    epsilon: float = 1e-5,
    *,
    loc: ir.Location | None = None,
) -> ir.Value:
    """Layer normalization of ``x`` over ``axes``."""
    return LayerNormOp.build([x, gamma, beta], {"axes": list(axes), "epsilon": epsilon}, loc=loc).result


@relax_op
class RmsNormOp(RelaxOp):
    """x / sqrt(mean(x**2) + epsilon) * gamma over ``axes``.

    ``%y = "relax.rms_norm"(%x, %g) {axes = [-1], epsilon = 1.0e-05 : f64} : (!relax.tensor<["s", 512], f32>,
    !relax.tensor<[512], f32>) -> !relax.tensor<["s", 512], f32>``
    """

    NAME = "rms_norm"
    OPERANDS = (Operand("x"), Operand("gamma"))
    ATTRS = (Attr("axes", "ints"), Attr("epsilon", "float"))

    @classmethod
    def deduce(cls, operand_types: Sequence[RelaxType | None], attrs: dict[str, Any]) -> list[RelaxType]:
        x = _float_operand(operand_types[0], "x")
        _check_params(x, [(operand_types[1], "gamma")], _normalized_shape(x, attrs["axes"]))
        return [x]


def rms_norm(
    x: ir.Value,
    gamma: ir.Value,
    axes: Sequence[int] = (-1,),
    epsilon: float = 1e-5,
    *,
    loc: ir.Location | None = None,
) -> ir.Value:
    """RMS normalization of ``x`` over ``axes``."""
    return RmsNormOp.build([x, gamma], {"axes": list(axes), "epsilon": epsilon}, loc=loc).result


@relax_op
class GroupNormOp(RelaxOp):
    """Normalize channel groups of an (N, C, ...) tensor, then scale by gamma[C] and shift by beta[C].

    ``%y = "relax.group_norm"(%x, %g, %b) {epsilon = 1.0e-05 : f64, num_groups = 8 : i64}
    : (!relax.tensor<["n", 32, 7, 7], f32>, !relax.tensor<[32], f32>, !relax.tensor<[32], f32>) -> ...``
    """

    NAME = "group_norm"
    OPERANDS = (Operand("x"), Operand("gamma"), Operand("beta"))
    ATTRS = (Attr("num_groups", "int"), Attr("epsilon", "float"))

    @classmethod
    def deduce(cls, operand_types: Sequence[RelaxType | None], attrs: dict[str, Any]) -> list[RelaxType]:
        x = _float_operand(operand_types[0], "x")
        groups = attrs["num_groups"]
        if groups <= 0:
            raise ShapeError(f"num_groups must be positive, got {groups}")
        if x.shape is not None and len(x.shape) < 2:
            raise ShapeError(f"operand 'x' {fmt_shape(x.shape)} needs a channel dim (rank >= 2)")
        channels = None if x.shape is None else x.shape[1]
        (channels,) = _check_params(x, list(zip(operand_types[1:], ("gamma", "beta"))), [channels])
        if channels is not None and channels.is_const and channels.value % groups:
            raise ShapeError(f"{channels.value} channels do not divide into {groups} groups")
        return [x]


def group_norm(
    x: ir.Value,
    gamma: ir.Value,
    beta: ir.Value,
    num_groups: int,
    epsilon: float = 1e-5,
    *,
    loc: ir.Location | None = None,
) -> ir.Value:
    """Group normalization of ``x``."""
    attrs = {"num_groups": num_groups, "epsilon": epsilon}
    return GroupNormOp.build([x, gamma, beta], attrs, loc=loc).result


@relax_op
class BatchNormOp(RelaxOp):
    """Inference batch norm: (x - mean) / sqrt(var + epsilon) * gamma + beta along channel ``axis``.

    ``%y = "relax.batch_norm"(%x, %g, %b, %m, %v) {axis = 1 : i64, epsilon = 1.0e-05 : f64}
    : (!relax.tensor<["n", 64, "h", "w"], f32>, !relax.tensor<[64], f32>, ...) -> !relax.tensor<["n", 64, "h", "w"], f32>``
    """

    NAME = "batch_norm"
    OPERANDS = (Operand("x"), Operand("gamma"), Operand("beta"), Operand("mean"), Operand("var"))
    ATTRS = (Attr("axis", "int"), Attr("epsilon", "float"))

    @classmethod
    def deduce(cls, operand_types: Sequence[RelaxType | None], attrs: dict[str, Any]) -> list[RelaxType]:
        x = _float_operand(operand_types[0], "x")
        channels = None if x.shape is None else x.shape[normalize_axis(attrs["axis"], len(x.shape))]
        _check_params(x, list(zip(operand_types[1:], ("gamma", "beta", "mean", "var"))), [channels])
        return [x]


def batch_norm(
    x: ir.Value,
    gamma: ir.Value,
    beta: ir.Value,
    mean: ir.Value,
    var: ir.Value,
    axis: int = 1,
    epsilon: float = 1e-5,
    *,
    loc: ir.Location | None = None,
) -> ir.Value:
    """Inference batch normalization of ``x``."""
    return BatchNormOp.build([x, gamma, beta, mean, var], {"axis": axis, "epsilon": epsilon}, loc=loc).result


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

    @classmethod
    def deduce(cls, operand_types: Sequence[RelaxType | None], attrs: dict[str, Any]) -> list[RelaxType]:
        x = tensor_operand(operand_types[0], "x")
        _check_window_attrs(attrs, 2)
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


@relax_op
class AvgPool2dOp(Pool2dOp):
    """2-D average pooling (NCHW); ``count_include_pad`` picks the divisor at the borders.

    ``%y = "relax.avg_pool2d"(%x) {ceil_mode = false, count_include_pad = false, dilation = [1, 1], kernel = [3, 3],
    padding = [1, 1, 1, 1], strides = [1, 1]} : (!relax.tensor<["n", 8, "h", "w"], f32>) -> !relax.tensor<["n", 8, "h", "w"], f32>``
    """

    NAME = "avg_pool2d"
    ATTRS = (*Pool2dOp.ATTRS, Attr("count_include_pad", "bool"))


def _pool_attrs(
    kernel: int | Sequence[int], strides: Any, padding: Any, dilation: Any, ceil_mode: bool
) -> dict:
    attrs = _conv_attrs(2, kernel if strides is None else strides, padding, dilation, 1)
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
        x = tensor_operand(operand_types[0], "x")
        size = attrs["output_size"]
        if len(size) != 2 or any(s <= 0 for s in size):
            raise ShapeError(f"'output_size' needs 2 positive values, got {size}")
        if x.shape is not None and len(x.shape) != 4:
            raise ShapeError(f"operand 'x' {fmt_shape(x.shape)} must have rank 4 (NCHW)")
        n, c = (None, None) if x.shape is None else x.shape[:2]
        return [TensorType((n, c, const(size[0]), const(size[1])), x.dtype)]


def adaptive_avg_pool2d(
    x: ir.Value, output_size: int | Sequence[int], *, loc: ir.Location | None = None
) -> ir.Value:
    """Average-pool ``x`` to ``output_size``."""
    size = [output_size] * 2 if isinstance(output_size, int) else list(output_size)
    return AdaptiveAvgPool2dOp.build([x], {"output_size": size}, loc=loc).result


RESIZE_METHODS = {"nearest", "linear"}
RESIZE_COORDINATES = {"half_pixel", "asymmetric", "align_corners", "pytorch_half_pixel"}


@relax_op
class ResizeOp(RelaxOp):
    """Resize the spatial dims of an NCHW tensor to ``sizes`` (symbolic allowed).

    ``%y = "relax.resize"(%x) {coordinate_mode = "half_pixel", method = "nearest", sizes = ["2 * h", "2 * w"]}
    : (!relax.tensor<["n", 3, "h", "w"], f32>) -> !relax.tensor<["n", 3, "2 * h", "2 * w"], f32>``
    """

    NAME = "resize"
    OPERANDS = (Operand("x"),)
    ATTRS = (Attr("sizes", "dims"), Attr("method", "str"), Attr("coordinate_mode", "str"))

    @classmethod
    def deduce(cls, operand_types: Sequence[RelaxType | None], attrs: dict[str, Any]) -> list[RelaxType]:
        x = tensor_operand(operand_types[0], "x")
        if attrs["method"] not in RESIZE_METHODS:
            raise ShapeError(f"unknown method '{attrs['method']}'; expected nearest or linear")
        if attrs["coordinate_mode"] not in RESIZE_COORDINATES:
            raise ShapeError(
                f"unknown coordinate_mode '{attrs['coordinate_mode']}'; expected one of "
                f"{', '.join(sorted(RESIZE_COORDINATES))}"
            )
        sizes = attrs["sizes"]
        if len(sizes) != 2:
            raise ShapeError(f"'sizes' needs 2 values (h, w), got {sizes}")
        if x.shape is not None and len(x.shape) != 4:
            raise ShapeError(f"operand 'x' {fmt_shape(x.shape)} must have rank 4 (NCHW)")
        n, c = (None, None) if x.shape is None else x.shape[:2]
        return [TensorType((n, c, *(_size(s) for s in sizes)), x.dtype)]


def _size(s: int | str) -> Dim:
    try:
        d = parse_dim(s)
    except ParseError as e:
        raise ShapeError(f"'sizes': {e}") from None
    if d is not None and d.is_const and d.value < 0:
        raise ShapeError(f"'sizes' must be non-negative, got {s}")
    return d


def _scaled_sizes(x: ir.Value, scales: Sequence[float]) -> list[int | str]:
    """ONNX's output size for ``scales``: floor(dim * scale), exactly (a scale is read as its decimal)."""
    t = relax_type(x.type)
    shape = t.shape if isinstance(t, TensorType) else None
    if len(scales) != 2 or any(not s > 0 for s in scales):
        raise ShapeError(f"'scales' needs 2 positive values (h, w), got {list(scales)}")
    if shape is None or len(shape) != 4 or shape[2] is None or shape[3] is None:
        raise ShapeError(
            f"'scales' need the spatial dims of 'x' {fmt_shape(shape)}; give 'sizes' or match_cast 'x' first"
        )
    out = []
    for d, scale in zip(shape[2:], scales):
        r = Fraction(repr(float(scale)))
        out.append(format_dim(floordiv(d * r.numerator, r.denominator)))
    return out


def resize(
    x: ir.Value,
    sizes: Sequence[int | str] | None = None,
    method: str = "nearest",
    coordinate_mode: str = "half_pixel",
    *,
    scales: Sequence[float] | None = None,
    loc: ir.Location | None = None,
) -> ir.Value:
    """Resize ``x`` (NCHW) to spatial ``sizes``, or by ``scales`` (size floor(dim * scale), as in ONNX)."""
    with located(ResizeOp.NAME, loc or caller_location()):
        if (sizes is None) == (scales is None):
            raise ShapeError("give exactly one of 'sizes' and 'scales'")
        if scales is not None:
            sizes = _scaled_sizes(x, scales)
    attrs = {"sizes": list(sizes), "method": method, "coordinate_mode": coordinate_mode}
    return ResizeOp.build([x], attrs, loc=loc).result

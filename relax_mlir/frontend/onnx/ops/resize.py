"""Resizing ONNX ops: Resize and Upsample (import-time or run-time scales and sizes)."""

from __future__ import annotations

from collections.abc import Sequence
from fractions import Fraction

from mlir import ir

from relax_mlir.dialects import relax as R
from relax_mlir.dialects.dims import normalize_axis
from relax_mlir.frontend.onnx.ops.runtime_inputs import is_given, is_runtime, resize_params
from relax_mlir.frontend.onnx.ops.windows import (
    dims_of,
    static_dim,
)
from relax_mlir.frontend.onnx.registry import (
    ConversionError,
    NodeContext,
    Out,
    converter,
)
from relax_mlir.shape_infer.expr import Expr, const, format_dim

# -- Resize, Upsample ---------------------------------------------------------------------------------


def _scaled(d: Expr, scale: float) -> Expr:
    """floor(d * scale), exactly (the f32 scale read as the binary fraction it is)."""
    r = Fraction(float(scale))
    return (d * r.numerator) // r.denominator


def _resize_axes(
    ctx: NodeContext,
    x: ir.Value,
    axes: Sequence[int],
    sizes: Sequence[Expr],
    scales: Sequence[float],
    roi: Sequence[tuple[float, float]],
    **attrs: object,
) -> ir.Value:
    """``x`` resized along each of ``axes`` in turn (ONNX Resize is separable); identity axes are skipped."""
    shape = dims_of(x)
    for axis, size, scale, box in zip(axes, sizes, scales, roi):
        identity = (scale == 1.0 or (scale == 0.0 and size == shape[axis])) and size == shape[axis]
        if identity and box == (0.0, 1.0):
            continue
        if attrs.get("antialias") and attrs.get("method") != "nearest" and scale == 0.0:
            if size.is_const and shape[axis].is_const and shape[axis].value > 0:
                scale = size.value / shape[axis].value  # a fixed filter width (else read at run time)
        x = R.resize_axis(x, axis, format_dim(size), scale=scale, roi=box, **attrs)  # type: ignore[arg-type]
    return x


@converter("Resize")
def _resize(ctx: NodeContext) -> list[Out]:
    x = ctx.x(0)
    rank = ctx.rank(0)
    shape = dims_of(x)
    mode = ctx.attr("mode", "nearest")
    if mode not in ("nearest", "linear", "cubic"):
        raise ConversionError(f"attribute 'mode' value '{mode}' is not supported")
    if ctx.opset < 11:
        coord, nearest = "asymmetric", "floor"
        scales_i, sizes_i, roi_i = 1, None, None
    else:
        coord = ctx.attr("coordinate_transformation_mode", "half_pixel")
        nearest = ctx.attr("nearest_mode", "round_prefer_floor")
        scales_i, sizes_i, roi_i = 2, 3, 1
    axes = [normalize_axis(int(a), rank) for a in ctx.attr("axes", list(range(rank)))]
    n = len(axes)
    scales: list[float] | None = None
    sizes: list[Expr] | None = None
    crop = coord == "tf_crop_and_resize"
    keep_ratio = ctx.attr("keep_aspect_ratio_policy", "stretch") != "stretch" and is_runtime(ctx, sizes_i)
    if is_runtime(ctx, scales_i) or (crop and is_runtime(ctx, roi_i)) or keep_ratio:
        return [_resize_runtime(ctx, x, axes, scales_i, sizes_i, roi_i, mode, coord, nearest)]
    if is_given(ctx, scales_i):
        values = ctx.require_const(scales_i, "scales").reshape(-1)
        if values.size:
            scales = [float(v) for v in values]
    if sizes_i is not None and ctx.has(sizes_i) and scales is None:
        sizes = ctx.dims(sizes_i, "sizes")
    if (scales is None) == (sizes is None):
        raise ConversionError("Resize needs exactly one of 'scales' and 'sizes'")
    for name, v in (("scales", scales), ("sizes", sizes)):
        if v is not None and len(v) != n:
            raise ConversionError(f"'{name}' needs {n} values, got {len(v)}")
    policy = ctx.attr("keep_aspect_ratio_policy", "stretch")
    if policy not in ("stretch", "not_larger", "not_smaller"):
        raise ConversionError(f"attribute 'keep_aspect_ratio_policy' value '{policy}' is not supported")
    if sizes is not None and policy != "stretch":
        ratios = [
            static_dim(s, "keep_aspect_ratio_policy") / static_dim(shape[a], "keep_aspect_ratio_policy")
            for s, a in zip(sizes, axes)
        ]
        scale = min(ratios) if policy == "not_larger" else max(ratios)
        scales = [scale] * n
        sizes = [const(int(scale * shape[a].value + 0.5)) for a in axes]
    elif scales is not None:
        if any(not s > 0 for s in scales):
            raise ConversionError(f"'scales' must be positive, got {scales}")
        sizes = [_scaled(shape[a], s) for a, s in zip(axes, scales)]
    else:
        scales = [0.0] * n
    roi = [(0.0, 1.0)] * n
    if coord == "tf_crop_and_resize":
        box = [float(v) for v in ctx.require_const(roi_i, "roi").reshape(-1)] if roi_i is not None else []
        if len(box) == 2 * n:
            roi = [(box[i], box[n + i]) for i in range(n)]
        elif len(box) == 2 * rank:
            roi = [(box[a], box[rank + a]) for a in axes]
        else:
            raise ConversionError(f"'roi' needs {2 * n} values, got {len(box)}")
    antialias = bool(ctx.attr("antialias", 0))
    if antialias and mode == "nearest":
        antialias = False  # ONNX: antialias only affects linear and cubic
    assert sizes is not None
    y = _resize_axes(
        ctx,
        x,
        axes,
        sizes,
        scales,
        roi,
        method=mode,
        coordinate_mode=coord,
        nearest_mode=nearest,
        cubic_a=float(ctx.attr("cubic_coeff_a", -0.75)),
        exclude_outside=bool(ctx.attr("exclude_outside", 0)),
        antialias=antialias,
        extrapolation=float(ctx.attr("extrapolation_value", 0.0)),
    )
    return [y]


def _resize_runtime(
    ctx: NodeContext,
    x: ir.Value,
    axes: list[int],
    scales_i: int | None,
    sizes_i: int | None,
    roi_i: int | None,
    mode: str,
    coord: str,
    nearest: str,
) -> ir.Value:
    """Resize whose scales (or roi) are read at run time: every axis is resized (none is known to be an
    identity), with ``relax.resize_axis_runtime``."""
    sizes, params = resize_params(ctx, axes, scales_i, sizes_i, roi_i, coord == "tf_crop_and_resize")
    if sizes is None:
        if sizes_i is None or not ctx.has(sizes_i):
            raise ConversionError("Resize needs exactly one of 'scales' and 'sizes'")
        sizes = ctx.dims(sizes_i, "sizes")
    for axis, size, p in zip(axes, sizes, params):
        x = R.resize_axis(
            x,
            axis,
            format_dim(size),
            method=mode,
            coordinate_mode=coord,
            nearest_mode=nearest,
            cubic_a=float(ctx.attr("cubic_coeff_a", -0.75)),
            exclude_outside=bool(ctx.attr("exclude_outside", 0)),
            antialias=bool(ctx.attr("antialias", 0)) and mode != "nearest",
            extrapolation=float(ctx.attr("extrapolation_value", 0.0)),
            params=p,
        )
    return x


@converter("Upsample")
def _upsample(ctx: NodeContext) -> list[Out]:
    x = ctx.x(0)
    rank = ctx.rank(0)
    mode = ctx.attr("mode", "nearest")
    if mode not in ("nearest", "linear", "bilinear"):
        raise ConversionError(f"attribute 'mode' value '{mode}' is not supported")
    if ctx.has_attr("scales"):
        scales = [float(s) for s in ctx.attr("scales")]
    elif is_runtime(ctx, 1):
        return [
            _resize_runtime(
                ctx,
                x,
                list(range(rank)),
                1,
                None,
                None,
                "nearest" if mode == "nearest" else "linear",
                "asymmetric",
                "floor",
            )
        ]
    else:
        scales = [float(s) for s in ctx.require_const(1, "scales").reshape(-1)]
    if len(scales) != rank:
        raise ConversionError(f"'scales' needs {rank} values, got {scales}")
    shape = dims_of(x)
    sizes = [_scaled(d, s) for d, s in zip(shape, scales)]
    y = _resize_axes(
        ctx,
        x,
        list(range(rank)),
        sizes,
        scales,
        [(0.0, 1.0)] * rank,
        method="nearest" if mode == "nearest" else "linear",
        coordinate_mode="asymmetric",
        nearest_mode="floor",
    )
    return [y]

"""Resizing the spatial dims of NCHW tensors (ONNX Resize with ``sizes``).

Source coordinates follow ONNX's coordinate transformation modes with scale = out / in per axis,
computed in f64. ``nearest`` rounds half down (ONNX's default ``round_prefer_floor``) and clamps to the
input; ``linear`` clamps the coordinate to [0, in - 1] and interpolates the two neighbours along H and
along W (ONNX and PyTorch agree on this). Lowering: one small ``linalg.generic`` per axis computes the
source indices (and weights), then a ``linalg.generic`` over the output gathers with ``tensor.extract``.
"""

from __future__ import annotations

from collections.abc import Sequence
from fractions import Fraction
from typing import Any

from mlir import ir

from relax_mlir.dialects.ops.conv import _require_known_result
from relax_mlir.dialects.ops.elementwise import FLOAT_DTYPES
from relax_mlir.dialects.registry import Attr, Operand, RelaxOp, caller_location, located, relax_op
from relax_mlir.dialects.types import Dim, RelaxType, TensorType, relax_type
from relax_mlir.errors import ParseError, ShapeError
from relax_mlir.shape_infer.dims import fmt_shape, tensor_operand
from relax_mlir.shape_infer.expr import floordiv, format_dim, parse_dim
from relax_mlir.transforms.kernel import KernelBuilder, KernelValue, element

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
        if attrs["method"] == "linear" and x.dtype is not None and x.dtype not in FLOAT_DTYPES:
            raise ShapeError(f"method 'linear' needs a float dtype, got {x.dtype}")
        sizes = attrs["sizes"]
        if len(sizes) != 2:
            raise ShapeError(f"'sizes' needs 2 values (h, w), got {sizes}")
        if x.shape is not None and len(x.shape) != 4:
            raise ShapeError(f"operand 'x' {fmt_shape(x.shape)} must have rank 4 (NCHW)")
        n, c = (None, None) if x.shape is None else x.shape[:2]
        return [TensorType((n, c, *(_size(s) for s in sizes)), x.dtype)]

    @classmethod
    def lower(cls, k: KernelBuilder) -> list[KernelValue]:
        _require_known_result(k)
        x, out = k.ins[0], k.outs[0]
        maps = ["(d0, d1, d2, d3) -> (d2)", "(d0, d1, d2, d3) -> (d3)"]
        out_map = "(d0, d1, d2, d3) -> (d0, d1, d2, d3)"

        batch: list[str] = []  # the (n, c) of the current element

        def extract(h: str, w: str) -> str:
            if not batch:
                batch.extend(k.scalar(f"linalg.index {i}", "index") for i in (0, 1))
            return k.scalar(f"tensor.extract {x.name}[{batch[0]}, {batch[1]}, {h}, {w}]", x.mlir)

        if k.attrs["method"] == "nearest":
            rows, cols = (_nearest(k, x, out, axis) for axis in (2, 3))
            [r] = k.generic(
                [rows, cols], [out], [*maps, out_map], ["parallel"] * 4, lambda a: [extract(a[0], a[1])]
            )
            return [r]
        taps = [_linear(k, x, out, axis) for axis in (2, 3)]
        t = element(x.dtype)
        one = k.constant(1.0, x.dtype)

        def lerp(a: str, b: str, f: str) -> str:
            g = k.scalar(f"arith.subf {one}, {f}", t)
            left = k.scalar(f"arith.mulf {a}, {g}", t)
            return k.scalar(f"arith.addf {left}, {k.scalar(f'arith.mulf {b}, {f}', t)}", t)

        def body(a: list[str]) -> list[str]:
            h0, h1, fh, w0, w1, fw = a[:6]
            top = lerp(extract(h0, w0), extract(h0, w1), fw)
            bottom = lerp(extract(h1, w0), extract(h1, w1), fw)
            return [lerp(top, bottom, fh)]

        ins = [*taps[0], *taps[1]]
        [r] = k.generic(ins, [out], [maps[0]] * 3 + [maps[1]] * 3 + [out_map], ["parallel"] * 4, body)
        return [r]


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


def _coordinate(k: KernelBuilder, o: str, size: str, out_size: str) -> str:
    """The f64 source coordinate of output position ``o`` (an index) along one axis, per ONNX's mode."""
    mode = k.attrs["coordinate_mode"]

    def f64(index: str) -> str:
        return k.scalar(f"arith.sitofp {k.scalar(f'arith.index_cast {index}', 'index to i64')}", "i64 to f64")

    def op(name: str, a: str, b: str) -> str:
        return k.scalar(f"arith.{name} {a}, {b}", "f64")

    of, in_f, out_f = f64(o), f64(size), f64(out_size)
    zero, half, one = (k.scalar(f"arith.constant {v}", "f64") for v in ("0.0", "0.5", "1.0"))
    if mode == "align_corners":
        value = op("divf", op("mulf", of, op("subf", in_f, one)), op("subf", out_f, one))
        single = k.scalar(f"arith.cmpf oeq, {out_f}, {one}", "f64")
        return k.scalar(f"arith.select {single}, {zero}, {value}", "f64")
    scale = op("divf", out_f, in_f)
    if mode == "asymmetric":
        return op("divf", of, scale)
    value = op("subf", op("divf", op("addf", of, half), scale), half)
    if mode == "half_pixel":
        return value
    several = k.scalar(f"arith.cmpf ogt, {out_f}, {one}", "f64")  # pytorch_half_pixel
    return k.scalar(f"arith.select {several}, {value}, {zero}", "f64")


def _to_index(k: KernelBuilder, value: str) -> str:
    return k.scalar(f"arith.index_cast {k.scalar(f'arith.fptosi {value}', 'f64 to i64')}", "i64 to index")


def _ceil_index(k: KernelBuilder, value: str) -> str:
    """ceil(value) as an index, with arith only (math.ceil's expansion does not reach LLVM here)."""
    truncated = k.scalar(f"arith.fptosi {value}", "f64 to i64")
    back = k.scalar(f"arith.sitofp {truncated}", "i64 to f64")
    below = k.scalar(f"arith.cmpf olt, {back}, {value}", "f64")
    up = k.scalar(f"arith.extui {below}", "i1 to i64")
    return k.scalar(f"arith.index_cast {k.scalar(f'arith.addi {truncated}, {up}', 'i64')}", "i64 to index")


def _nearest(k: KernelBuilder, x: KernelValue, out: KernelValue, axis: int) -> KernelValue:
    """Source index of each output position along ``axis``: round half down, clamped to the input."""
    size, out_size = k.dim(x, axis), k.dim(out, axis)
    last = k.scalar(f"arith.subi {size}, {k.const(1)}", "index")

    def body(a: list[str]) -> list[str]:
        coord = _coordinate(k, k.scalar("linalg.index 0", "index"), size, out_size)
        half = k.scalar("arith.constant 0.5", "f64")
        i = _ceil_index(k, k.scalar(f"arith.subf {coord}, {half}", "f64"))
        clamped = k.scalar(f"arith.maxsi {i}, {k.const(0)}", "index")
        return [k.scalar(f"arith.minsi {clamped}, {last}", "index")]

    [r] = k.generic([], [k.empty((out.shape[axis],), "index")], ["(d0) -> (d0)"], ["parallel"], body)
    return r


def _linear(k: KernelBuilder, x: KernelValue, out: KernelValue, axis: int) -> list[KernelValue]:
    """Per output position along ``axis``: the two source indices and the weight of the second."""
    size, out_size = k.dim(x, axis), k.dim(out, axis)
    last = k.scalar(f"arith.subi {size}, {k.const(1)}", "index")
    t = element(x.dtype)

    def body(a: list[str]) -> list[str]:
        coord = _coordinate(k, k.scalar("linalg.index 0", "index"), size, out_size)
        last_f = k.scalar(
            f"arith.sitofp {k.scalar(f'arith.index_cast {last}', 'index to i64')}", "i64 to f64"
        )
        zero = k.scalar("arith.constant 0.0", "f64")
        clamped = k.scalar(
            f"arith.minimumf {k.scalar(f'arith.maximumf {coord}, {zero}', 'f64')}, {last_f}", "f64"
        )
        i0 = _to_index(k, clamped)
        i1 = k.scalar(f"arith.minsi {k.scalar(f'arith.addi {i0}, {k.const(1)}', 'index')}, {last}", "index")
        i0_f = k.scalar(f"arith.sitofp {k.scalar(f'arith.index_cast {i0}', 'index to i64')}", "i64 to f64")
        frac = k.scalar(f"arith.subf {clamped}, {i0_f}", "f64")
        if t != "f64":
            frac = k.scalar(f"arith.truncf {frac}", f"f64 to {t}")
        return [i0, i1, frac]

    dests = [k.empty((out.shape[axis],), "index"), k.empty((out.shape[axis],), "index")]
    dests.append(k.empty((out.shape[axis],), x.dtype))
    return k.generic([], dests, ["(d0) -> (d0)"] * 3, ["parallel"], body)

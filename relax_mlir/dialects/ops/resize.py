"""Resizing: ``resize`` (the spatial dims of NCHW tensors, to ``sizes``) and ``resize_axis`` (one axis of
any tensor, with every mode of ONNX Resize: nearest with each rounding, linear, cubic, antialias,
exclude_outside, tf_crop_and_resize; ONNX's resize is separable, so the importer chains one per axis).

``resize``: source coordinates follow ONNX's coordinate transformation modes with scale = out / in per
axis, computed in f64. ``nearest`` rounds half down (ONNX's default ``round_prefer_floor``) and clamps to
the input; ``linear`` clamps the coordinate to [0, in - 1] and interpolates the two neighbours along H
and along W. Lowering: one small ``linalg.generic`` per axis computes the source indices (and weights),
then a ``linalg.generic`` over the output gathers with ``tensor.extract``. ``resize_axis`` lowers the
same way, with a table of ``taps`` indices and f64 weights per output position.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from fractions import Fraction
from typing import Any

from mlir import ir

from relax_mlir.dialects.dims import fmt_shape, tensor_operand
from relax_mlir.dialects.ops.elementwise import FLOAT_DTYPES
from relax_mlir.dialects.ops.window import require_known_result
from relax_mlir.dialects.registry import Attr, Operand, RelaxOp, caller_location, located, relax_op
from relax_mlir.dialects.types import Dim, RelaxType, TensorType, relax_type
from relax_mlir.errors import ParseError, ShapeError
from relax_mlir.lowering.kernel import KernelBuilder, KernelValue, element, identity
from relax_mlir.shape_infer.expr import const, floordiv, format_dim, parse_dim

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
        require_known_result(k)
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


# -- one-axis resize (ONNX Resize, every mode) ------------------------------------------------------------

AXIS_METHODS = {"nearest", "linear", "cubic"}
AXIS_COORDINATES = RESIZE_COORDINATES | {"half_pixel_symmetric", "tf_crop_and_resize"}
NEAREST_MODES = {"round_prefer_floor", "round_prefer_ceil", "floor", "ceil"}


def resize_taps(method: str, antialias: bool, scale: float) -> int:
    """How many input taps each output element reads (ONNX's filter footprint)."""
    if method == "nearest":
        return 1
    if not antialias or scale >= 1.0:
        return 2 if method == "linear" else 4
    reach = 1.0 if method == "linear" else 2.0
    start = math.floor(-reach / scale) + 1
    return 2 - 2 * start


@relax_op
class ResizeAxisOp(RelaxOp):
    """Resize one axis of a tensor of any rank to ``size``, with ONNX Resize's exact semantics.

    ``scale`` is the scale the coordinate transform uses (0: size / input size, read at run time);
    ``roi`` is (start, end) for ``tf_crop_and_resize``, whose outside positions get ``extrapolation``.
    Linear and cubic filters (and their ``antialias`` versions, widened by 1 / scale when downscaling)
    weigh ``resize_taps`` neighbours, clamped to the edge (with antialias and a scale known only at run
    time, a loop over as many taps as that scale needs); ``exclude_outside`` drops neighbours
    outside the input and renormalizes. Arithmetic is in f64.

    ``%y = "relax.resize_axis"(%x) {antialias = false, axis = 2 : i64, coordinate_mode = "half_pixel",
    cubic_a = -0.75 : f64, exclude_outside = false, extrapolation = 0.0 : f64, method = "cubic",
    nearest_mode = "round_prefer_floor", roi_end = 1.0 : f64, roi_start = 0.0 : f64, scale = 2.0 : f64,
    size = "2 * h"}
    : (!relax.tensor<["n", 3, "h", "w"], f32>) -> !relax.tensor<["n", 3, "2 * h", "w"], f32>``
    """

    NAME = "resize_axis"
    OPERANDS = (Operand("x"),)
    ATTRS = (
        Attr("axis", "int"),
        Attr("size", "dim"),
        Attr("method", "str"),
        Attr("coordinate_mode", "str"),
        Attr("nearest_mode", "str"),
        Attr("scale", "float"),
        Attr("cubic_a", "float"),
        Attr("exclude_outside", "bool"),
        Attr("antialias", "bool"),
        Attr("roi_start", "float"),
        Attr("roi_end", "float"),
        Attr("extrapolation", "float"),
    )

    @classmethod
    def deduce(cls, operand_types: Sequence[RelaxType | None], attrs: dict[str, Any]) -> list[RelaxType]:
        x = tensor_operand(operand_types[0], "x")
        for name, allowed in (
            ("method", AXIS_METHODS),
            ("coordinate_mode", AXIS_COORDINATES),
            ("nearest_mode", NEAREST_MODES),
        ):
            if attrs[name] not in allowed:
                raise ShapeError(
                    f"unknown {name} '{attrs[name]}'; expected one of {', '.join(sorted(allowed))}"
                )
        if attrs["method"] != "nearest" and x.dtype is not None and x.dtype not in FLOAT_DTYPES:
            raise ShapeError(f"method '{attrs['method']}' needs a float dtype, got {x.dtype}")
        if attrs["scale"] < 0:
            raise ShapeError(f"'scale' must be positive (or 0: size / input size), got {attrs['scale']}")
        size = _size(attrs["size"])
        if x.shape is None:
            return [TensorType(None, x.dtype)]
        axis = attrs["axis"]
        if not 0 <= axis < len(x.shape):
            raise ShapeError(f"axis {axis} is out of range for 'x' {fmt_shape(x.shape)}")
        out = list(x.shape)
        out[axis] = size
        return [TensorType(tuple(out), x.dtype)]

    @classmethod
    def lower(cls, k: KernelBuilder) -> list[KernelValue]:
        return _lower_axis(k, None)


@relax_op
class ResizeAxisRuntimeOp(ResizeAxisOp):
    """``relax.resize_axis`` whose scale and roi are read at run time from ``params``, an f64 tensor
    (scale, roi start, roi end); a scale of 0 means size / input size. The ``scale``, ``roi_start`` and
    ``roi_end`` attributes are unused (0, 0, 1).

    ``%y = "relax.resize_axis_runtime"(%x, %p) {antialias = false, axis = 2 : i64, coordinate_mode =
    "asymmetric", cubic_a = -0.75 : f64, exclude_outside = false, extrapolation = 0.0 : f64, method =
    "nearest", nearest_mode = "floor", roi_end = 1.0 : f64, roi_start = 0.0 : f64, scale = 0.0 : f64,
    size = "s"} : (!relax.tensor<["n", 3, "h", "w"], f32>, !relax.tensor<[3], f64>)
    -> !relax.tensor<["n", 3, "s", "w"], f32>``
    """

    NAME = "resize_axis_runtime"
    OPERANDS = (Operand("x"), Operand("params"))

    @classmethod
    def deduce(cls, operand_types: Sequence[RelaxType | None], attrs: dict[str, Any]) -> list[RelaxType]:
        p = operand_types[1]
        if not isinstance(p, TensorType) or p.dtype != "f64" or p.shape != (const(3),):
            raise ShapeError(f"operand 'params' must be an f64 tensor of 3 values, got {p}")
        return super().deduce(operand_types[:1], attrs)

    @classmethod
    def lower(cls, k: KernelBuilder) -> list[KernelValue]:
        p = k.ins[1]
        names = [k.scalar(f"tensor.extract {p.name}[{k.const(i)}]", p.mlir) for i in range(3)]
        return _lower_axis(k, dict(zip(("scale", "start", "end"), names)))


def _lower_axis(k: KernelBuilder, params: dict[str, str] | None) -> list[KernelValue]:
    """The kernel of ``relax.resize_axis``; ``params`` holds f64 SSA values of the scale and roi read at run
    time (None: the attributes)."""
    require_known_result(k)
    x, out = k.ins[0], k.outs[0]
    axis, rank = k.attrs["axis"], x.rank
    if any(d == const(0) for d in out.shape):
        return [out]
    method = k.attrs["method"]
    if k.attrs["antialias"] and method != "nearest" and (params is not None or k.attrs["scale"] == 0):
        return [_lower_axis_antialias(k, params)]
    taps = resize_taps(method, k.attrs["antialias"], k.attrs["scale"])
    tables = _axis_tables(k, x, out, axis, taps, params)
    crop = k.attrs["coordinate_mode"] == "tf_crop_and_resize"
    maps = [f"({', '.join(f'd{i}' for i in range(rank))}) -> (d{axis})"] * len(tables)
    out_map = identity(rank)
    zero = k.const(0)

    def read(ivs: list[str], idx: str) -> str:
        coords = list(ivs)
        coords[axis] = idx
        return k.scalar(f"tensor.extract {x.name}[{', '.join(coords)}]", x.mlir)

    def body(a: list[str]) -> list[str]:
        ivs = [k.scalar(f"linalg.index {i}", "index") for i in range(rank)]
        first = k.scalar(f"arith.maxsi {a[0]}, {zero}", "index")
        if method == "nearest":
            value = read(ivs, first)
        else:
            t = element(x.dtype)
            acc = None
            for j in range(taps):
                v = read(ivs, first if j == 0 else a[j])
                if t != "f64":
                    v = k.scalar(f"arith.extf {v}", f"{t} to f64")
                term = k.scalar(f"arith.mulf {v}, {a[taps + j]}", "f64")
                acc = term if acc is None else k.scalar(f"arith.addf {acc}, {term}", "f64")
            assert acc is not None
            value = acc if t == "f64" else k.scalar(f"arith.truncf {acc}", f"f64 to {t}")
        if not crop:
            return [value]
        outside = k.scalar(f"arith.cmpi slt, {a[0]}, {zero}", "index")
        fill = _extrapolation(k, x.dtype)
        return [
            k.scalar(
                f"arith.select {outside}, {fill}, {value}", element(x.dtype) if x.dtype != "i1" else "i8"
            )
        ]

    [r] = k.generic(tables, [out], [*maps, out_map], ["parallel"] * rank, body)
    return [r]


def _lower_axis_antialias(k: KernelBuilder, params: dict[str, str] | None) -> KernelValue:
    """``relax.resize_axis`` with an antialiased linear or cubic filter whose scale is known only at run time
    (``params``, or size / input size): the filter spans 2 * ceil(reach / min(scale, 1)) taps, so each
    output element loops over them, clamps their indices to the edge and divides by the sum of the weights,
    as ONNX's reference does."""
    x, out = k.ins[0], k.outs[0]
    axis, rank = k.attrs["axis"], x.rank
    method, a_coef = k.attrs["method"], k.attrs["cubic_a"]
    crop = k.attrs["coordinate_mode"] == "tf_crop_and_resize"
    size, out_size = k.dim(x, axis), k.dim(out, axis)
    last = k.scalar(f"arith.subi {size}, {k.const(1)}", "index")

    def op(name: str, a: str, b: str, t: str = "f64") -> str:
        return k.scalar(f"arith.{name} {a}, {b}", t)

    def c(v: float) -> str:
        return k.scalar(f"arith.constant {float(v)!r}", "f64")

    scale = _scale(k, size, out_size, params)
    narrow = op("minimumf", scale, c(1.0))  # the filter widens only when downscaling
    half = _ceil_index(k, op("divf", c(1.0 if method == "linear" else 2.0), narrow))
    taps = op("muli", half, k.const(2), "index")
    start = _f64(k, op("subi", k.const(1), half, "index"))  # the offset of tap 0 from floor(coord)

    def table(_: list[str]) -> list[str]:
        o = k.scalar("linalg.index 0", "index")
        coord = _source(k, o, size, out_size, params)
        up = _ceil_index(k, coord)
        ratio = op("addf", op("subf", coord, _f64(k, up)), c(1.0))  # coord - floor(coord), in (0, 1]
        row = [op("subi", up, half, "index"), ratio]
        if crop:
            below = k.scalar(f"arith.cmpf olt, {coord}, {c(0.0)}", "f64")
            above = k.scalar(f"arith.cmpf ogt, {coord}, {_f64(k, last)}", "f64")
            outside = k.scalar(f"arith.ori {below}, {above}", "i1")
            row.append(k.scalar(f"arith.select {outside}, {k.const(1)}, {k.const(0)}", "index"))
        return row

    n_out = out.shape[axis]
    dests = [k.empty((n_out,), "index"), k.empty((n_out,), "f64")]
    if crop:
        dests.append(k.empty((n_out,), "index"))
    tables = k.generic([], dests, ["(d0) -> (d0)"] * len(dests), ["parallel"], table)
    t = element(x.dtype)

    def tap(ivs: list[str], base: str, ratio: str, j: str, acc: str, total: str) -> tuple[str, str]:
        raw = op("addi", base, j, "index")
        coords = list(ivs)
        coords[axis] = op("minsi", op("maxsi", raw, k.const(0), "index"), last, "index")
        d = op("mulf", op("subf", op("addf", _f64(k, j), start), ratio), narrow)
        w = _filter_weight(k, method, a_coef, d)
        if k.attrs["exclude_outside"]:
            w = _zero_outside(k, w, raw, last)
        v = k.scalar(f"tensor.extract {x.name}[{', '.join(coords)}]", x.mlir)
        if t != "f64":
            v = k.scalar(f"arith.extf {v}", f"{t} to f64")
        return op("addf", acc, op("mulf", w, v)), op("addf", total, w)

    def body(a: list[str]) -> list[str]:
        ivs = [k.scalar(f"linalg.index {i}", "index") for i in range(rank)]
        j, acc, total, sums = k.fresh("j"), k.fresh("acc"), k.fresh("total"), k.fresh("sums")
        lines, (acc2, total2) = k.capture(lambda: tap(ivs, a[0], a[1], j, acc, total))
        zero = c(0.0)
        k.emit(
            f"{sums}:2 = scf.for {j} = {k.const(0)} to {taps} step {k.const(1)} "
            f"iter_args({acc} = {zero}, {total} = {zero}) -> (f64, f64) {{",
            *("  " + line for line in lines),
            f"  scf.yield {acc2}, {total2} : f64, f64",
            "}",
        )
        nonzero = k.scalar(f"arith.cmpf one, {sums}#1, {zero}", "f64")
        divisor = k.scalar(f"arith.select {nonzero}, {sums}#1, {c(1.0)}", "f64")
        value = op("divf", f"{sums}#0", divisor)
        if t != "f64":
            value = k.scalar(f"arith.truncf {value}", f"f64 to {t}")
        if not crop:
            return [value]
        outside = k.scalar(f"arith.cmpi ne, {a[2]}, {k.const(0)}", "index")
        return [k.scalar(f"arith.select {outside}, {_extrapolation(k, x.dtype)}, {value}", t)]

    maps = [f"({', '.join(f'd{i}' for i in range(rank))}) -> (d{axis})"] * len(tables)
    [r] = k.generic(tables, [out], [*maps, identity(rank)], ["parallel"] * rank, body)
    return r


def _extrapolation(k: KernelBuilder, dtype: str) -> str:
    value = k.attrs["extrapolation"]
    if dtype == "i1":
        return k.scalar(f"arith.constant {int(bool(value))}", "i8")
    if dtype in FLOAT_DTYPES:
        return k.constant(value, dtype)
    return k.constant(int(value), dtype)


def _f64(k: KernelBuilder, index: str) -> str:
    return k.scalar(f"arith.sitofp {k.scalar(f'arith.index_cast {index}', 'index to i64')}", "i64 to f64")


def _scale(k: KernelBuilder, size: str, out_size: str, params: dict[str, str] | None) -> str:
    """The f64 scale of the resized axis: the ``scale`` attribute, else size / input size, unless ``params``
    gives a positive one at run time."""
    attr = k.attrs["scale"]
    if attr > 0:
        scale = k.scalar(f"arith.constant {float(attr)!r}", "f64")
    else:
        scale = k.scalar(f"arith.divf {_f64(k, out_size)}, {_f64(k, size)}", "f64")
    if params is None:
        return scale
    zero = k.scalar("arith.constant 0.0", "f64")
    given = k.scalar(f"arith.cmpf ogt, {params['scale']}, {zero}", "f64")
    return k.scalar(f"arith.select {given}, {params['scale']}, {scale}", "f64")


def _zero_outside(k: KernelBuilder, weight: str, raw: str, last: str) -> str:
    """``weight``, or 0 where tap index ``raw`` lies outside the input ``[0, last]`` (exclude_outside)."""
    lo = k.scalar(f"arith.cmpi sge, {raw}, {k.const(0)}", "index")
    hi = k.scalar(f"arith.cmpi sle, {raw}, {last}", "index")
    inside = k.scalar(f"arith.andi {lo}, {hi}", "i1")
    return k.scalar(f"arith.select {inside}, {weight}, {k.scalar('arith.constant 0.0', 'f64')}", "f64")


def _source(k: KernelBuilder, o: str, size: str, out_size: str, params: dict[str, str] | None = None) -> str:
    """ONNX's source coordinate (f64) of output position ``o`` along the resized axis (``params``: the
    scale and roi read at run time)."""
    mode = k.attrs["coordinate_mode"]

    def op(name: str, a: str, b: str) -> str:
        return k.scalar(f"arith.{name} {a}, {b}", "f64")

    def c(v: float) -> str:
        return k.scalar(f"arith.constant {float(v)!r}", "f64")

    of, in_f, out_int = _f64(k, o), _f64(k, size), _f64(k, out_size)
    scale = _scale(k, size, out_size, params)
    out_f = op("mulf", scale, in_f)  # ONNX's "output width": scale * input size, not rounded
    one, half = c(1.0), c(0.5)
    is_one = k.scalar(f"arith.cmpf oeq, {out_f}, {one}", "f64")
    if mode == "align_corners":
        value = op("divf", op("mulf", of, op("subf", in_f, one)), op("subf", out_f, one))
        return k.scalar(f"arith.select {is_one}, {c(0.0)}, {value}", "f64")
    if mode == "asymmetric":
        return op("divf", of, scale)
    if mode == "tf_crop_and_resize":
        start, end = (
            (params["start"], params["end"]) if params else (c(k.attrs["roi_start"]), c(k.attrs["roi_end"]))
        )
        span = op("mulf", op("subf", end, start), op("subf", in_f, one))
        many = op("divf", op("mulf", of, span), op("subf", out_f, one))
        value = k.scalar(f"arith.select {is_one}, {op('divf', span, c(2.0))}, {many}", "f64")
        return op("addf", value, op("mulf", start, op("subf", in_f, one)))
    value = op("subf", op("divf", op("addf", of, half), scale), half)
    if mode == "half_pixel":
        return value
    if mode == "pytorch_half_pixel":
        return k.scalar(f"arith.select {is_one}, {c(-0.5)}, {value}", "f64")
    # half_pixel_symmetric
    adjustment = op("divf", out_int, out_f)
    offset = op("mulf", op("divf", in_f, c(2.0)), op("subf", one, adjustment))
    return op("addf", offset, value)


def _ceil_f64(k: KernelBuilder, value: str) -> str:
    """ceil(value) as an index (arith only)."""
    return _ceil_index(k, value)


def _filter_weight(k: KernelBuilder, method: str, a: float, d: str) -> str:
    """ONNX Resize's linear (triangle) or cubic (Keys, coefficient ``a``) filter at f64 distance ``d``."""

    def op(name: str, x: str, y: str) -> str:
        return k.scalar(f"arith.{name} {x}, {y}", "f64")

    def c(v: float) -> str:
        return k.scalar(f"arith.constant {float(v)!r}", "f64")

    ad = op("maximumf", d, k.scalar(f"arith.negf {d}", "f64"))
    if method == "linear":
        return op("maximumf", op("subf", c(1.0), ad), c(0.0))
    a2, a3 = op("mulf", ad, ad), op("mulf", op("mulf", ad, ad), ad)
    near = op("addf", op("subf", op("mulf", c(a + 2), a3), op("mulf", c(a + 3), a2)), c(1.0))
    far = op(
        "subf",
        op("addf", op("subf", op("mulf", c(a), a3), op("mulf", c(5 * a), a2)), op("mulf", c(8 * a), ad)),
        c(4 * a),
    )
    le1 = k.scalar(f"arith.cmpf ole, {ad}, {c(1.0)}", "f64")
    lt2 = k.scalar(f"arith.cmpf olt, {ad}, {c(2.0)}", "f64")
    return k.scalar(
        f"arith.select {le1}, {near}, {k.scalar(f'arith.select {lt2}, {far}, {c(0.0)}', 'f64')}", "f64"
    )


def _axis_tables(
    k: KernelBuilder,
    x: KernelValue,
    out: KernelValue,
    axis: int,
    taps: int,
    params: dict[str, str] | None = None,
) -> list[KernelValue]:
    """Per output position: ``taps`` source indices (the first is -1 when tf_crop_and_resize
    extrapolates), then (linear, cubic) ``taps`` f64 weights."""
    size, out_size = k.dim(x, axis), k.dim(out, axis)
    last = k.scalar(f"arith.subi {size}, {k.const(1)}", "index")
    method, crop = k.attrs["method"], k.attrs["coordinate_mode"] == "tf_crop_and_resize"
    scale = min(k.attrs["scale"], 1.0) if k.attrs["antialias"] and k.attrs["scale"] > 0 else 1.0
    a_coef = k.attrs["cubic_a"]

    def op(name: str, a: str, b: str, t: str = "f64") -> str:
        return k.scalar(f"arith.{name} {a}, {b}", t)

    def c(v: float) -> str:
        return k.scalar(f"arith.constant {float(v)!r}", "f64")

    def clamp(i: str) -> str:
        return op("minsi", op("maxsi", i, k.const(0), "index"), last, "index")

    def body(_: list[str]) -> list[str]:
        o = k.scalar("linalg.index 0", "index")
        coord = _source(k, o, size, out_size, params)
        outside = None
        if crop:
            below = k.scalar(f"arith.cmpf olt, {coord}, {c(0.0)}", "f64")
            above = k.scalar(f"arith.cmpf ogt, {coord}, {_f64(k, last)}", "f64")
            outside = k.scalar(f"arith.ori {below}, {above}", "i1")
        minus_one = k.const(-1)
        if method == "nearest":
            nearest = k.attrs["nearest_mode"]
            if nearest == "ceil":
                i = _ceil_f64(k, coord)
            elif nearest == "floor":
                i = op("subi", k.const(0), _ceil_f64(k, k.scalar(f"arith.negf {coord}", "f64")), "index")
            elif nearest == "round_prefer_floor":
                i = _ceil_f64(k, op("subf", coord, c(0.5)))
            else:  # round_prefer_ceil: floor(x + 0.5)
                neg = k.scalar(f"arith.negf {op('addf', coord, c(0.5))}", "f64")
                i = op("subi", k.const(0), _ceil_f64(k, neg), "index")
            i = clamp(i)
            if outside is not None:
                i = k.scalar(f"arith.select {outside}, {minus_one}, {i}", "index")
            return [i]
        up = _ceil_f64(k, coord)
        base = op("subi", up, k.const(taps // 2), "index")
        ratio = op("addf", op("subf", coord, _f64(k, up)), c(1.0))  # in (0, 1]
        indices, weights = [], []
        for j in range(taps):
            d = op("mulf", op("subf", c(j + 1 - taps // 2), ratio), c(scale))
            w = _filter_weight(k, method, a_coef, d)
            raw = op("addi", base, k.const(j), "index")
            if k.attrs["exclude_outside"]:
                w = _zero_outside(k, w, raw, last)
            indices.append(clamp(raw))
            weights.append(w)
        if k.attrs["exclude_outside"] or scale < 1.0:
            total = weights[0]
            for w in weights[1:]:
                total = op("addf", total, w)
            nonzero = k.scalar(f"arith.cmpf one, {total}, {c(0.0)}", "f64")
            total = k.scalar(f"arith.select {nonzero}, {total}, {c(1.0)}", "f64")
            weights = [op("divf", w, total) for w in weights]
        if outside is not None:
            indices[0] = k.scalar(f"arith.select {outside}, {minus_one}, {indices[0]}", "index")
        return indices + weights

    n_out = out.shape[axis]
    dests = [k.empty((n_out,), "index") for _ in range(taps)]
    if method != "nearest":
        dests += [k.empty((n_out,), "f64") for _ in range(taps)]
    return k.generic([], dests, ["(d0) -> (d0)"] * len(dests), ["parallel"], body)


def resize_axis(
    x: ir.Value,
    axis: int,
    size: int | str,
    method: str = "nearest",
    coordinate_mode: str = "half_pixel",
    nearest_mode: str = "round_prefer_floor",
    scale: float = 0.0,
    cubic_a: float = -0.75,
    exclude_outside: bool = False,
    antialias: bool = False,
    roi: tuple[float, float] = (0.0, 1.0),
    extrapolation: float = 0.0,
    params: ir.Value | None = None,
    *,
    loc: ir.Location | None = None,
) -> ir.Value:
    """Resize ``axis`` of ``x`` to ``size`` as ONNX Resize does (``scale`` 0: size / input size); ``params``,
    an f64 tensor (scale, roi start, roi end), gives those at run time instead."""
    attrs = {
        "axis": axis,
        "size": size,
        "method": method,
        "coordinate_mode": coordinate_mode,
        "nearest_mode": nearest_mode,
        "scale": scale,
        "cubic_a": cubic_a,
        "exclude_outside": exclude_outside,
        "antialias": antialias,
        "roi_start": roi[0],
        "roi_end": roi[1],
        "extrapolation": extrapolation,
    }
    if params is not None:
        attrs.update(scale=0.0, roi_start=0.0, roi_end=1.0)
        return ResizeAxisRuntimeOp.build([x, params], attrs, loc=loc).result
    return ResizeAxisOp.build([x], attrs, loc=loc).result

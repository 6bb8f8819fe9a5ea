"""Shape computations and data movement: Shape, Size, Constant, Cast, Gather, Concat, (Un)Squeeze,
Reshape, Expand, ConstantOfShape, Range, Slice, Flatten, Transpose.

Every converter here first tries to evaluate its node at import time on ``Known`` inputs, keeping
symbolic entries symbolic (``Shape(x)`` of ``x: ["batch", "seq", 512]`` is ``Known([batch, seq, 512])``);
only when an input is a real run-time tensor does it emit relax ops. Shape inputs known only at run
time (a Reshape whose shape is a graph input) are read into fresh symbols by a ``match_cast``.
"""

from __future__ import annotations

import math

import numpy as np
from mlir import ir

from relax_mlir.dialects import relax as R
from relax_mlir.dialects.dims import normalize_axes, normalize_axis, product
from relax_mlir.dialects.types import TensorType
from relax_mlir.frontend.onnx.ops.runtime_inputs import (
    is_runtime,
    reshape_runtime,
    slice_runtime,
    squeeze_runtime,
    unsqueeze_runtime,
)
from relax_mlir.frontend.onnx.registry import (
    RELAX_TO_NUMPY,
    ConversionError,
    Known,
    NodeContext,
    Out,
    converter,
    known_dims,
    relax_dtype,
)
from relax_mlir.lowering.minifloat import is_minifloat
from relax_mlir.lowering.minifloat import max_value as minifloat_max
from relax_mlir.shape_infer.expr import Expr, const, format_dim

KNOWN_LIMIT = 4096  # larger results of import-time evaluation are left to kernels, not constants


def _spell(dims: list[Expr | None]) -> list[int | str]:
    return [format_dim(d) for d in dims]


def _known_shape(ctx: NodeContext, i: int) -> list[Expr]:
    shape = ctx.shape(i)
    if any(d is None for d in shape):
        raise ConversionError(f"input #{i} has unknown dims {_spell(list(shape))}")
    return list(shape)


# -- values known at import time -----------------------------------------------------------------------


@converter("Shape")
def _shape(ctx: NodeContext) -> list[Out]:
    dims = _known_shape(ctx, 0)
    start, end = ctx.attr("start", 0), ctx.attr("end", None)
    return [known_dims(dims[slice(start, end)])]


@converter("Size")
def _size(ctx: NodeContext) -> list[Out]:
    return [known_dims([product(_known_shape(ctx, 0))], shape=())]


@converter("Constant")
def _constant(ctx: NodeContext) -> list[Out]:
    for name, dtype, np_dtype in (
        ("value_float", "f32", np.float32),
        ("value_floats", "f32", np.float32),
        ("value_int", "i64", np.int64),
        ("value_ints", "i64", np.int64),
    ):
        if ctx.has_attr(name):
            return [Known(np.array(ctx.attr(name), dtype=np_dtype), dtype)]
    if ctx.has_attr("value"):
        t = next(a.t for a in ctx.node.attribute if a.name == "value")
        return [Known(ctx.attr("value"), relax_dtype(t.data_type, "attribute 'value'"))]
    names = [a.name for a in ctx.node.attribute]
    raise ConversionError(f"only numeric tensor constants are supported, got attribute(s) {names}")


def _cast_to(ctx: NodeContext, dtype: str) -> list[Out]:
    saturate = bool(ctx.attr("saturate", 1)) if ctx.opset >= 19 else True
    round_mode = ctx.attr("round_mode", "up")
    small = is_minifloat(dtype) or is_minifloat(ctx.dtype(0))
    known = ctx.known(0)
    if known is not None and not small:
        if known.is_numeric:
            return [Known(known.values.astype(RELAX_TO_NUMPY[dtype]), dtype)]
        if dtype in ("i32", "i64"):
            return [Known(known.values, dtype)]
    if ctx.dtype(0) == dtype:
        return [ctx.x(0)]
    x = ctx.x(0)
    if dtype == "f8E8M0FNU":
        if round_mode != "up":
            raise ConversionError(f"attribute 'round_mode' = '{round_mode}' is not supported (only 'up')")
        # As ONNX's reference: the float32 value's exponent (its sign ignored), rounded up.
        x = R.abs(R.astype(x, "f32") if ctx.dtype(0) != "f32" else x)
        if saturate:  # finite values above the largest stay at it; inf and NaN stay NaN
            inf = ctx.scalar_like(np.inf, "f32")
            x = R.where(R.equal(x, inf), x, R.minimum(x, ctx.scalar_like(2.0**127, "f32")))
        return [R.astype(x, dtype)]
    if is_minifloat(dtype) and saturate and dtype != "f4E2M1FN":  # clip to the finite range first
        if ctx.dtype(0) not in ("f16", "bf16", "f32", "f64"):
            x = R.astype(x, "f32")
        bound = minifloat_max(dtype)
        x = R.clip(x, -bound, bound)
    return [R.astype(x, dtype)]


@converter("Cast")
def _cast(ctx: NodeContext) -> list[Out]:
    return _cast_to(ctx, relax_dtype(ctx.attr("to"), "attribute 'to'"))


@converter("CastLike")
def _cast_like(ctx: NodeContext) -> list[Out]:
    return _cast_to(ctx, ctx.dtype(1))


# -- indexing ------------------------------------------------------------------------------------------


@converter("Gather")
def _gather(ctx: NodeContext) -> list[Out]:
    axis = normalize_axis(ctx.attr("axis", 0), ctx.rank(0))
    data, indices = ctx.known(0), ctx.const(1)
    if data is not None and indices is not None:
        n = data.values.shape[axis]
        idx = np.where(indices < 0, indices + n, indices)
        return [Known(np.take(data.values, idx, axis=axis), data.dtype)]
    dim = ctx.shape(0)[axis]
    if indices is not None and dim is not None and dim.is_const:
        return [R.take(ctx.x(0), ctx.constant(np.where(indices < 0, indices + dim.value, indices)), axis)]
    idx = ctx.x(1)
    if dim is None:
        raise ConversionError(f"axis {axis} of the data has an unknown size")
    zero = ctx.scalar_like(0, ctx.dtype(1))
    size = ctx.value_of(known_dims([dim], ctx.dtype(1), shape=()))
    idx = R.where(R.less(idx, zero), R.add(idx, size), idx)
    return [R.take(ctx.x(0), idx, axis)]


@converter("Concat")
def _concat(ctx: NodeContext) -> list[Out]:
    inputs = [i for i in range(ctx.num_inputs) if ctx.has(i)]
    axis = normalize_axis(ctx.attr("axis"), ctx.rank(inputs[0]))
    knowns = [ctx.known(i) for i in inputs]
    if all(k is not None and k.exprs() is not None for k in knowns) and len({k.dtype for k in knowns}) == 1:
        arrays = [k.exprs() for k in knowns]
        rest = {a.shape[:axis] + a.shape[axis + 1 :] if a.ndim > axis else None for a in arrays}
        if len(rest) == 1 and None not in rest:  # else relax.concat's deduction reports the mismatch
            return [Known(np.concatenate(arrays, axis=axis), knowns[0].dtype).simplified()]
    return [R.concat([ctx.x(i) for i in inputs], axis)]


def _axes(ctx: NodeContext, input_index: int) -> list[int] | None:
    """Axes from input ``input_index`` (opset >= 13) or from the ``axes`` attribute (older opsets)."""
    if ctx.has_attr("axes"):
        return list(ctx.attr("axes"))
    if ctx.has(input_index):
        return [int(a) for a in ctx.require_const(input_index, "axes").reshape(-1)]
    return None


@converter("Unsqueeze")
def _unsqueeze(ctx: NodeContext) -> list[Out]:
    if not ctx.has_attr("axes") and is_runtime(ctx, 1):
        return [unsqueeze_runtime(ctx)]
    axes = _axes(ctx, 1)
    if axes is None:
        raise ConversionError("axes are required")
    rank = ctx.rank(0) + len(axes)
    axes = sorted(normalize_axes(axes, rank))
    known = ctx.known(0)
    if known is not None:
        shape = list(known.values.shape)
        for a in axes:
            shape.insert(a, 1)
        return [Known(known.values.reshape(shape), known.dtype)]
    return [R.expand_dims(ctx.x(0), axes)]


@converter("Squeeze")
def _squeeze(ctx: NodeContext) -> list[Out]:
    if not ctx.has_attr("axes") and is_runtime(ctx, 1):
        return [squeeze_runtime(ctx)]
    axes = _axes(ctx, 1)
    known = ctx.known(0)
    if known is not None:
        squeezed = np.squeeze(known.values, axis=None if axes is None else tuple(axes))
        return [Known(np.asarray(squeezed, dtype=known.values.dtype), known.dtype)]
    if axes is None:
        return [_squeeze_unit_dims(ctx)]
    return [R.squeeze(ctx.x(0), normalize_axes(axes, ctx.rank(0)))]


def _squeeze_unit_dims(ctx: NodeContext) -> ir.Value:
    """Squeeze without axes: the dims known to be 1 go. Whether a symbolic dim is 1 is known only at run
    time, and with it the result's rank; the rank is chosen here (such dims stay) and checked at run time
    (InputError when one is 1), so that the kernels downstream know it."""
    x = ctx.x(0)
    shape = ctx.shape(0)
    if None in shape:  # unknown dims become symbols, to be compared with 1
        fresh = iter(ctx.importer.fresh_symbols(f"{ctx.node.output[0]}_d", shape.count(None)))
        shape = [next(fresh) if d is None else d for d in shape]
        x = R.match_cast(x, TensorType(tuple(shape), ctx.dtype(0)))
    symbolic = [d for d in shape if not d.is_const]
    if symbolic:
        one = R.constant(np.array(1, np.int64))
        dims = ctx.value_of(known_dims(symbolic))
        kept = R.less(R.max(R.astype(R.equal(dims, one), "i64"), None, False), one)
        names = ", ".join(format_dim(d) for d in symbolic)
        what = (
            f"a dim not known to be 1 at import time ({names}) is 1 at run time: Squeeze without 'axes' "
            "would change the rank the model was compiled for (give 'axes')"
        )
        x = R.check_true(x, kept, what, "Squeeze")
    return R.squeeze(x, [i for i, d in enumerate(shape) if d == const(1)])


# -- reshaping -----------------------------------------------------------------------------------------


def _reshape_dims(ctx: NodeContext, in_shape: list[Expr | None], spec: list[Expr]) -> list[Expr | int]:
    """ONNX's shape spelling resolved: 0 copies the input dim (unless allowzero), -1 is inferred."""
    allowzero = ctx.attr("allowzero", 0)
    out: list[Expr | int] = []
    for i, d in enumerate(spec):
        if d.is_const and d.value == 0 and not allowzero:
            if i >= len(in_shape) or in_shape[i] is None:
                raise ConversionError(f"shape entry 0 at position {i} copies a dim the input does not have")
            out.append(in_shape[i])
        elif d.is_const and d.value == -1:
            out.append(-1)
        else:
            out.append(d)
    return out


@converter("Reshape")
def _reshape(ctx: NodeContext) -> list[Out]:
    if ctx.opset < 5:
        spec = [const(int(d)) for d in ctx.attr("shape")]
    elif ctx.exprs(1) is not None:
        spec = list(ctx.exprs(1).reshape(-1))
    else:
        return [_reshape_runtime(ctx)]
    dims = _reshape_dims(ctx, list(ctx.shape(0)), spec)
    known = ctx.known(0)
    if known is not None and all(isinstance(d, int) or d.is_const for d in dims):
        return [
            Known(known.values.reshape([d if isinstance(d, int) else d.value for d in dims]), known.dtype)
        ]
    return [R.reshape(ctx.x(0), [d if isinstance(d, int) else format_dim(d) for d in dims])]


def _reshape_runtime(ctx: NodeContext) -> ir.Value:
    """A shape known only at run time: 0 and -1 resolved by tensor arithmetic, then bound to symbols."""
    spec = R.astype(ctx.x(1), "i64") if ctx.dtype(1) != "i64" else ctx.x(1)
    n = ctx.shape(1)[0]
    if n is None or not n.is_const:
        raise ConversionError("the length of the shape input must be known at import time")
    in_shape = _known_shape(ctx, 0)
    zero, minus_one, one = (ctx.scalar_like(v, "i64") for v in (0, -1, 1))
    if not ctx.attr("allowzero", 0):
        copied = (in_shape + [const(0)] * n.value)[: n.value]
        spec = R.where(R.equal(spec, zero), ctx.value_of(known_dims(copied)), spec)
    inferred_from = R.prod(R.where(R.equal(spec, minus_one), one, spec), None, False)
    total = ctx.value_of(known_dims([product(in_shape)], shape=()))
    spec = R.where(R.equal(spec, minus_one), R.floor_divide(total, inferred_from), spec)
    return reshape_runtime(ctx, ctx.x(0), spec)


@converter("Flatten")
def _flatten(ctx: NodeContext) -> list[Out]:
    shape = list(ctx.shape(0))
    axis = ctx.attr("axis", 1)
    axis = normalize_axis(axis + len(shape) if axis < 0 else axis, len(shape) + 1)  # [-r, r]: -1 is r - 1
    dims = [product(shape[:axis]), product(shape[axis:])]
    known = ctx.known(0)
    if known is not None:
        return [Known(known.values.reshape([d.value for d in dims]), known.dtype)]
    return [R.reshape(ctx.x(0), _spell(dims))]


@converter("Transpose")
def _transpose(ctx: NodeContext) -> list[Out]:
    perm = ctx.attr("perm", None)
    known = ctx.known(0)
    if known is not None:
        return [Known(np.transpose(known.values, perm), known.dtype)]
    return [R.permute_dims(ctx.x(0), None if perm is None else list(perm))]


def _expand_shape(x: list[Expr | None], target: list[Expr]) -> list[Expr | None]:
    """ONNX Expand's bidirectional broadcast of ``x`` against ``target``."""
    rank = max(len(x), len(target))
    x = [const(1)] * (rank - len(x)) + x
    target = [const(1)] * (rank - len(target)) + list(target)
    out: list[Expr | None] = []
    for a, b in zip(x, target):
        if b.is_const and b.value == 1:
            out.append(a)
        elif a is not None and (a == b or (a.is_const and a.value == 1)):
            out.append(b)
        elif a is not None and a.is_const and b.is_const:
            raise ConversionError(f"cannot expand a dim of {a.value} to {b.value}")
        else:
            out.append(b if a is None or not a.is_const else a)
    return out


@converter("Expand")
def _expand(ctx: NodeContext) -> list[Out]:
    target = ctx.dims(1, "shape")
    out = _expand_shape(list(ctx.shape(0)), target)
    known = ctx.known(0)
    if known is not None and all(d is not None and d.is_const for d in out):
        return [Known(np.broadcast_to(known.values, [d.value for d in out]).copy(), known.dtype)]
    return [R.broadcast_to(ctx.x(0), _spell(out))]


@converter("ConstantOfShape")
def _constant_of_shape(ctx: NodeContext) -> list[Out]:
    value = ctx.attr("value", None)
    if value is None:
        value, dtype = np.zeros(1, np.float32), "f32"
    else:
        t = next(a.t for a in ctx.node.attribute if a.name == "value")
        dtype = relax_dtype(t.data_type, "attribute 'value'")
    dims = ctx.dims(0, "shape")
    fill = value.reshape(-1)[0]
    if all(d.is_const for d in dims) and int(np.prod([d.value for d in dims])) <= KNOWN_LIMIT:
        return [Known(np.full([d.value for d in dims], fill, RELAX_TO_NUMPY[dtype]), dtype)]
    # large (weights filled at run time, as the light models do) or symbolic: a fill kernel
    return [R.full(_spell(dims), float(fill), dtype)]


def _range_length(start: float, limit: float, delta: float) -> int:
    """How many elements Range(start, limit, delta) has, without making them."""
    if delta == 0:
        raise ConversionError(f"delta is 0: Range({start}, {limit}, {delta}) would never end")
    if all(isinstance(v, int) for v in (start, limit, delta)):
        return max(-((start - limit) // delta), 0)  # exact ceil for Python ints
    n = (limit - start) / delta
    if not math.isfinite(n):
        raise ConversionError(f"Range({start}, {limit}, {delta}) has no finite length")
    return max(math.ceil(n), 0)


@converter("Range")
def _range(ctx: NodeContext) -> list[Out]:
    dtype = ctx.dtype(0)
    numbers = [ctx.const(i) for i in range(3)]
    if all(n is not None for n in numbers) and _range_length(*(n.item() for n in numbers)) <= KNOWN_LIMIT:
        start, limit, delta = (n.item() for n in numbers)
        return [Known(np.arange(start, limit, delta, dtype=RELAX_TO_NUMPY[dtype]), dtype)]
    exprs = [ctx.exprs(i) for i in range(3)]
    if all(e is not None for e in exprs) and exprs[2].item().is_const:
        start, limit, delta = (e.item() for e in exprs)
        if delta.value == 1:
            return [R.arange(format_dim(start), format_dim(limit), 1, dtype)]
    # run-time bounds: n = max(ceil((limit - start) / delta), 0) elements of start + i * delta
    start, limit, delta = (ctx.x(i) for i in range(3))
    span = R.subtract(limit, start)
    if dtype.startswith(("f", "bf")):
        count = R.astype(R.ceil(R.divide(span, delta)), "i64")
    else:
        count = R.astype(R.floor_divide(R.add(span, R.subtract(delta, R.sign(delta))), delta), "i64")
    count = R.maximum(count, ctx.scalar_like(0, "i64"))
    (n,) = ctx.importer.runtime_dims(R.reshape(count, [1]), f"{ctx.node.output[0]}_len")
    steps = R.arange(0, format_dim(n), 1, dtype)
    return [R.add(start, R.multiply(steps, delta))]


@converter("Slice")
def _slice(ctx: NodeContext) -> list[Out]:
    rank = ctx.rank(0)
    if ctx.opset < 10:
        starts = [const(int(v)) for v in ctx.attr("starts")]
        ends = [const(int(v)) for v in ctx.attr("ends")]
        axes = list(ctx.attr("axes", range(len(starts))))
        steps = [1] * len(starts)
    else:
        n = ctx.shape(1)[0]
        if n is None or not n.is_const:
            raise ConversionError("the length of 'starts' must be known at import time")
        if is_runtime(ctx, 3) or is_runtime(ctx, 4):
            return [slice_runtime(ctx)]
        axes = [int(a) for a in ctx.require_const(3, "axes")] if ctx.has(3) else list(range(n.value))
        steps = [int(s) for s in ctx.require_const(4, "steps")] if ctx.has(4) else [1] * n.value
        axes = normalize_axes(axes, rank)
        if any(s < 0 for s in steps) and (ctx.exprs(1) is None or ctx.exprs(2) is None):
            return [slice_runtime(ctx)]  # negative steps from bounds read at run time
        starts, ends = (_slice_bounds(ctx, i, what, axes, steps) for i, what in ((1, "starts"), (2, "ends")))
    axes = normalize_axes(axes, rank)
    if any(s == 0 for s in steps):
        raise ConversionError("a slice step is 0")
    starts = [_clamp_int(s) for s in starts]
    ends = [_clamp_int(e) for e in ends]
    known = ctx.known(0)
    if known is not None and all(isinstance(v, int) for v in starts + ends):
        index = [slice(None)] * rank
        for a, b, e, s in zip(axes, starts, ends, steps):
            index[a] = slice(b, e, s)
        return [Known(known.values[tuple(index)], known.dtype)]
    return [R.strided_slice(ctx.x(0), axes, _spell_any(starts), _spell_any(ends), steps)]


def _slice_bounds(ctx: NodeContext, i: int, what: str, axes: list[int], steps: list[int]) -> list[Expr]:
    """Slice starts or ends as dims. Known at import time, they keep ONNX's spelling (negative counts
    from the end); read at run time, they are first made non-negative and clamped to the dim."""
    if ctx.exprs(i) is not None:
        return list(ctx.exprs(i).reshape(-1))
    dtype = ctx.dtype(i)
    dims = ctx.value_of(known_dims([ctx.shape(0)[a] for a in axes], dtype))
    v = ctx.x(i)
    zero = ctx.scalar_like(0, dtype)
    v = R.where(R.less(v, zero), R.add(v, dims), v)
    v = R.minimum(R.maximum(v, zero), dims)
    return ctx.importer.runtime_dims(R.astype(v, "i64"), f"{ctx.node.output[0]}_{what}")


def _clamp_int(e: Expr) -> int | Expr:
    if not e.is_const:
        return e
    return int(min(max(e.value, -(2**62)), 2**62))


def _spell_any(values: list[int | Expr]) -> list[int | str]:
    return [v if isinstance(v, int) else format_dim(v) for v in values]


@converter("Dropout")
def _dropout(ctx: NodeContext) -> list[Out]:
    """Inference-mode Dropout: the identity (and an all-true mask). Training mode is random."""
    if ctx.has(2) and ctx.const(2) is None:  # training mode read at run time: it must drop nothing
        x = ctx.x(0)
        if ctx.has(1) and ctx.const(1) is None:
            zero = R.equal(R.reshape(ctx.x(1), []), ctx.scalar_like(0, ctx.dtype(1)))
        else:
            ratio = float(ctx.const(1)) if ctx.has(1) else float(ctx.attr("ratio", 0.5))
            zero = ctx.constant(np.array(ratio == 0.0))
        keep = R.logical_or(R.logical_not(R.astype(R.reshape(ctx.x(2), []), "i1")), zero)
        what = "training mode with a non-zero ratio drops at random, which is not supported"
        x = R.check_true(x, keep, what, "Dropout")
        mask = R.full(_spell(list(ctx.shape(0))), 1.0, "i1") if len(ctx.node.output) > 1 else None
        return [x, mask]
    training = ctx.const(2) if ctx.has(2) else np.array(False)
    if ctx.has(1) and ctx.const(1) is None and not bool(training):  # inference: the ratio is unused
        ratio = 0.0
    else:
        ratio = float(ctx.require_const(1, "ratio")) if ctx.has(1) else float(ctx.attr("ratio", 0.5))
    if bool(training) and ratio != 0.0:
        raise ConversionError(f"training mode with ratio {ratio} drops at random, which is not supported")
    x = ctx.x(0)
    mask = R.full(_spell(list(ctx.shape(0))), 1.0, "i1") if len(ctx.node.output) > 1 else None
    return [x, mask]

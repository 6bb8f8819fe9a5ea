"""Indexing ops: slicing, gathering and scattering.

Index tensors follow ONNX (Gather, GatherElements, ScatterElements): negative indices count from the
end of the axis. An index outside ``[-dim, dim)`` is an error, as in numpy and ONNX Runtime: a kernel
states the indices it reads with (``KernelBuilder.check_indices``), and convert-relax-to-linalg checks them
before the call with ``relax.check_index`` (the min and max of the indices, computed by a small
``index_range`` kernel, compared with the dim by the host code), so the call raises ``InputError``.
The kernel still runs (host code does not branch around it: see ``record_check`` in
``transforms/host_checks.py``), so it clamps its coordinates into the tensor and never touches memory outside
it; its output is then garbage, never seen.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from mlir import ir

from relax_mlir.dialects.dims import (
    clamp_nonneg,
    fmt_shape,
    join_dtype,
    normalize_axes,
    normalize_axis,
    same_dim,
    tensor_operand,
)
from relax_mlir.dialects.ops import structural
from relax_mlir.dialects.registry import INT64_MAX, INT64_MIN, Attr, Operand, RelaxOp, relax_op
from relax_mlir.dialects.types import Dim, RelaxType, TensorType
from relax_mlir.errors import ParseError, ShapeError
from relax_mlir.lowering.kernel import (
    KernelBuilder,
    KernelValue,
    element,
    identity,
    is_float,
    unsigned_order,
)
from relax_mlir.shape_infer.expr import Expr, ceildiv, const, format_dim, parse_dim, prove_le, smax, smin


def _parse(d: int | str) -> Dim:
    try:
        return parse_dim(d)
    except ParseError as e:
        raise ShapeError(str(e)) from None


_BIG = 1 << 31  # ends at or above this mean "to the end of the dim" (ONNX uses INT64_MAX)


@relax_op
class StridedSliceOp(RelaxOp):
    """Slice ``axes`` with begin/end/strides (negative indices count from the end; clamped like numpy).

    ``%y = "relax.strided_slice"(%x) {axes = [1], begin = [1], end = [-1], strides = [1]}
    : (!relax.tensor<["b", "n"], f32>) -> !relax.tensor<["b", "max(n - 2, 0)"], f32>``
    """

    NAME = "strided_slice"
    OPERANDS = (Operand("x"),)
    ATTRS = (Attr("axes", "ints"), Attr("begin", "dims"), Attr("end", "dims"), Attr("strides", "ints"))
    BIT_MOVING = True

    @classmethod
    def deduce(cls, operand_types: Sequence[RelaxType | None], attrs: dict[str, Any]) -> list[RelaxType]:
        x = tensor_operand(operand_types[0], "x")
        axes, begin, end, strides = attrs["axes"], attrs["begin"], attrs["end"], attrs["strides"]
        if not len(axes) == len(begin) == len(end) == len(strides):
            raise ShapeError(
                f"axes, begin, end and strides need equal lengths, got {len(axes)}, {len(begin)}, "
                f"{len(end)}, {len(strides)}"
            )
        if x.shape is None:
            return [TensorType(None, x.dtype)]
        out = list(x.shape)
        for a, b, e, s in zip(normalize_axes(axes, len(x.shape)), begin, end, strides):
            if s == 0:
                raise ShapeError(f"stride of axis {a} is 0")
            dim = x.shape[a]
            out[a] = None if dim is None else _slice_length(dim, _parse(b), _parse(e), s)
        return [TensorType(tuple(out), x.dtype)]

    @classmethod
    def lower(cls, k: KernelBuilder) -> list[KernelValue]:
        """Start at begin clamped like the deduction clamps it; the result's dims give the lengths.

        Positive strides copy a strided ``tensor.extract_slice``; a negative one reads each element.
        """
        x, out = k.ins[0], k.destination(0)
        if any(d == const(0) for d in out.shape):  # empty: nothing to copy (and no valid offset)
            return [out]
        starts: list[Expr] = [const(0)] * x.rank
        steps = [1] * x.rank
        for a, b, s in zip(normalize_axes(k.attrs["axes"], x.rank), k.attrs["begin"], k.attrs["strides"]):
            dim = x.shape[a]
            assert dim is not None  # else the result dim would be unknown
            lo, hi = (const(0), dim) if s > 0 else (const(-1), dim - 1)
            raw = _raw_index(_parse(b), dim, lo, hi)  # type: ignore[arg-type]
            start = raw if prove_le(lo, raw) else smax(raw, lo)
            starts[a] = start if prove_le(start, hi) else smin(start, hi)
            steps[a] = s
        offsets = [str(e.value) if e.is_const else k.index(e) for e in starts]
        if all(s > 0 for s in steps):
            where = f"[{', '.join(offsets)}] [{', '.join(k.sizes(out))}] [{', '.join(map(str, steps))}]"
            part = k.op(f"tensor.extract_slice {x.name}{where} : {x.mlir} to {out.mlir}", out)
            return [k.copy(part, out)]
        offsets = [k.const(e.value) if e.is_const else k.index(e) for e in starts]

        def body(_: list[str]) -> list[str]:
            coords = []
            for a, (start, step) in enumerate(zip(offsets, steps)):
                i = k.scalar(f"linalg.index {a}", "index")
                if step != 1:
                    i = k.scalar(f"arith.muli {i}, {k.const(step)}", "index")
                coords.append(k.scalar(f"arith.addi {start}, {i}", "index"))
            return [k.scalar(f"tensor.extract {x.name}[{', '.join(coords)}]", x.mlir)]

        return k.generic([], [out], [identity(out.rank)], ["parallel"] * out.rank, body)


def _slice_length(dim: Expr, begin: Dim, end: Dim, stride: int) -> Dim:
    """Numpy's slice length: indices clamped into [0, dim] (or [-1, dim - 1] for a negative stride).

    Clamping is monotone, so max(clamp(e) - clamp(b), 0) == max(min(e, hi) - max(b, lo), 0): the min of four
    differences, of which the provably larger ones are dropped to keep the result readable.
    """
    if begin is None or end is None:
        return None
    lo, hi = (const(0), dim) if stride > 0 else (const(-1), dim - 1)
    b, e = _raw_index(begin, dim, lo, hi), _raw_index(end, dim, lo, hi)
    first, last = (e, b) if stride > 0 else (b, e)
    kept: list[Expr] = []
    for t in (first - last, first - lo, hi - last, dim):
        if any(prove_le(k, t) for k in kept):
            continue
        kept = [k for k in kept if not prove_le(t, k)] + [t]
    length = kept[0]
    for k in kept[1:]:
        length = smin(length, k)
    if abs(stride) > 1:
        length = ceildiv(length, abs(stride))
    return clamp_nonneg(length)


def _raw_index(i: Expr, dim: Expr, lo: Expr, hi: Expr) -> Expr:
    """A negative constant index counted from the end; huge ones (ONNX's INT64_MAX/MIN) as the bounds.

    Symbolic indices are taken as positions from the start (symbols are non-negative).
    """
    if not i.is_const:
        return i
    if i.value >= _BIG:
        return hi
    if i.value <= -_BIG:
        return lo
    return dim + i if i.value < 0 else i


def strided_slice(
    x: ir.Value,
    axes: Sequence[int],
    begin: Sequence[int | str],
    end: Sequence[int | str],
    strides: Sequence[int] | None = None,
    *,
    loc: ir.Location | None = None,
) -> ir.Value:
    """Slice ``x`` along ``axes``."""
    attrs = {
        "axes": list(axes),
        "begin": list(begin),
        "end": list(end),
        "strides": list(strides) if strides is not None else [1] * len(axes),
    }
    return StridedSliceOp.build([x], attrs, loc=loc).result


INDEX_DTYPES = {"i32", "i64"}


def _index_operand(t: RelaxType | None, name: str) -> TensorType:
    idx = tensor_operand(t, name)
    if idx.dtype is not None and idx.dtype not in INDEX_DTYPES:
        raise ShapeError(f"operand '{name}' must have an integer dtype (i32 or i64), got {idx.dtype}")
    return idx


@relax_op
class TakeOp(RelaxOp):
    """Gather slices of ``x`` along ``axis`` at ``indices`` (numpy.take; ONNX Gather).

    ``%y = "relax.take"(%emb, %ids) {axis = 0 : i64} : (!relax.tensor<[50257, 768], f32>, !relax.tensor<["b", "s"], i64>)
    -> !relax.tensor<["b", "s", 768], f32>``
    """

    NAME = "take"
    OPERANDS = (Operand("x"), Operand("indices"))
    ATTRS = (Attr("axis", "int"),)
    BIT_MOVING = True

    @classmethod
    def deduce(cls, operand_types: Sequence[RelaxType | None], attrs: dict[str, Any]) -> list[RelaxType]:
        x = tensor_operand(operand_types[0], "x")
        idx = _index_operand(operand_types[1], "indices")
        if x.shape is None:
            return [TensorType(None, x.dtype)]
        axis = normalize_axis(attrs["axis"], len(x.shape))
        if idx.shape is None:
            return [TensorType(None, x.dtype)]
        return [TensorType(x.shape[:axis] + idx.shape + x.shape[axis + 1 :], x.dtype)]

    @classmethod
    def lower(cls, k: KernelBuilder) -> list[KernelValue]:
        """A parallel loop over the result reading ``x`` at each (normalized) index."""
        (x, idx), out = k.ins, k.destination(0)
        axis = normalize_axis(k.attrs["axis"], x.rank)
        k.check_indices(1, 0, axis)
        bound = _Bound(k, x, axis)
        ds = [f"d{i}" for i in range(out.rank)]
        idx_map = f"({', '.join(ds)}) -> ({', '.join(ds[axis : axis + idx.rank])})"

        def body(a: list[str]) -> list[str]:
            coords = [k.scalar(f"linalg.index {d}", "index") for d in range(axis)]
            coords.append(bound.normalize(a[0], idx.dtype))
            coords += [k.scalar(f"linalg.index {d}", "index") for d in range(axis + idx.rank, out.rank)]
            return [bound.read(coords)]

        return k.generic([idx], [out], [idx_map, identity(out.rank)], ["parallel"] * out.rank, body)


class _Bound:
    """Coordinates into ``x`` along ``axis`` from index values: negative ones count from the end (numpy, ONNX).

    The indices are checked before the call (``KernelBuilder.check_indices``): out of range, the call
    raises InputError, but the kernel has run. So it clamps every coordinate into ``x`` (one min/max each)
    and reads or writes nothing when ``x`` is empty (``nonempty``): no index touches memory outside ``x``.
    """

    def __init__(self, k: KernelBuilder, x: KernelValue, axis: int) -> None:
        self.k, self.x = k, x
        self.size = k.dim(x, axis)
        self.zero = k.const(0)
        self.last = self._last(axis)
        unproven = [d for d, n in enumerate(x.shape) if n is None or not prove_le(const(1), n)]
        self.nonempty = None  # an i1 value: x has an element (None: provably so)
        for d in unproven:
            ok = k.scalar(f"arith.cmpi sgt, {k.dim(x, d)}, {self.zero}", "index")
            self.nonempty = (
                ok if self.nonempty is None else k.scalar(f"arith.andi {self.nonempty}, {ok}", "i1")
            )

    def normalize(self, value: str, dtype: str) -> str:
        """The coordinate for an integer ``value`` of ``dtype``, clamped into ``[0, dim)``."""
        k = self.k
        i = k.scalar(f"arith.index_cast {value}", f"{element(dtype)} to index")
        negative = k.scalar(f"arith.cmpi slt, {i}, {self.zero}", "index")
        i = k.scalar(
            f"arith.select {negative}, {k.scalar(f'arith.addi {i}, {self.size}', 'index')}, {i}", "index"
        )
        return k.scalar(
            f"arith.maxsi {k.scalar(f'arith.minsi {i}, {self.last}', 'index')}, {self.zero}", "index"
        )

    def clamp(self, i: str, d: int) -> str:
        """The non-negative coordinate ``i`` along dim ``d`` (off the axis) clamped into ``x``."""
        return self.k.scalar(f"arith.minsi {i}, {self._last(d)}", "index")

    def _last(self, d: int) -> str:
        """``dim - 1`` of ``x`` along ``d`` (a constant when static)."""
        n = self.x.shape[d]
        if n is not None and n.is_const:
            return self.k.const(n.value - 1)
        return self.k.scalar(f"arith.subi {self.k.dim(self.x, d)}, {self.k.const(1)}", "index")

    def read(self, coords: Sequence[str]) -> str:
        """``x`` at ``coords`` (clamped), or zero when ``x`` is empty."""
        k, x = self.k, self.x
        extract = f"tensor.extract {x.name}[{', '.join(coords)}]"
        if self.nonempty is None:
            return k.scalar(extract, x.mlir)
        lines, value = k.capture(lambda: k.scalar(extract, x.mlir))
        t = element(x.dtype)
        zero = k.typed(f"arith.constant {'0' if t.startswith('i') else '0.0'} : {t}")
        result = k.fresh()
        k.emit(
            f"{result} = scf.if {self.nonempty} -> ({t}) {{",
            *("  " + line for line in lines),
            f"  scf.yield {value} : {t}",
            "} else {",
            f"  scf.yield {zero} : {t}",
            "}",
        )
        return result

    def loop_bound(self, n: str) -> str:
        """``n`` iterations, or none when ``x`` is empty (a loop writing into ``x``)."""
        if self.nonempty is None:
            return n
        return self.k.scalar(f"arith.select {self.nonempty}, {n}, {self.zero}", "index")


def take(x: ir.Value, indices: ir.Value, axis: int = 0, *, loc: ir.Location | None = None) -> ir.Value:
    """``x`` gathered along ``axis`` at ``indices``."""
    return TakeOp.build([x, indices], {"axis": axis}, loc=loc).result


@relax_op
class GatherElementsOp(RelaxOp):
    """Pick elements of ``x`` along ``axis`` at ``indices`` (same rank; result has the indices' shape).

    ``%y = "relax.gather_elements"(%x, %i) {axis = 1 : i64} : (!relax.tensor<["n", 4], f32>,
    !relax.tensor<["n", 2], i64>) -> !relax.tensor<["n", 2], f32>``
    """

    NAME = "gather_elements"
    OPERANDS = (Operand("x"), Operand("indices"))
    ATTRS = (Attr("axis", "int"),)

    @classmethod
    def deduce(cls, operand_types: Sequence[RelaxType | None], attrs: dict[str, Any]) -> list[RelaxType]:
        x = tensor_operand(operand_types[0], "x")
        idx = _index_operand(operand_types[1], "indices")
        _same_rank(x, idx, "x", "indices")
        _indices_within(x, idx, attrs["axis"])
        return [TensorType(idx.shape, x.dtype)]

    @classmethod
    def lower(cls, k: KernelBuilder) -> list[KernelValue]:
        """A parallel loop over ``indices`` reading ``x`` with the axis coordinate replaced."""
        (x, idx), out = k.ins, k.destination(0)
        axis = normalize_axis(k.attrs["axis"], x.rank)
        unproven = _unproven_dims(x, idx, axis)
        k.check_indices(1, 0, axis, unproven)
        bound = _Bound(k, x, axis)

        def body(a: list[str]) -> list[str]:
            coords = [
                bound.normalize(a[0], idx.dtype) if d == axis else k.scalar(f"linalg.index {d}", "index")
                for d in range(out.rank)
            ]
            return [bound.read([bound.clamp(c, d) if d in unproven else c for d, c in enumerate(coords)])]

        maps = [identity(out.rank)] * 2
        return k.generic([idx], [out], maps, ["parallel"] * out.rank, body)


def _same_rank(a: TensorType, b: TensorType, na: str, nb: str) -> None:
    if a.ndim is not None and b.ndim is not None and a.ndim != b.ndim:
        raise ShapeError(
            f"'{na}' {fmt_shape(a.shape)} and '{nb}' {fmt_shape(b.shape)} must have the same rank"
        )


def _indices_within(x: TensorType, idx: TensorType, axis: int) -> None:
    """Check ``axis``, and that 'indices' is nowhere larger than 'x' off the axis (as ONNX and torch require)."""
    if x.shape is None:
        return
    axis = normalize_axis(axis, len(x.shape))
    if idx.shape is None:
        return
    for i, (d, k) in enumerate(zip(x.shape, idx.shape)):
        if i != axis and d is not None and k is not None and prove_le(d + 1, k):
            raise ShapeError(
                f"dim {i} of 'indices' {fmt_shape(idx.shape)} is {format_dim(k)}, larger than "
                f"{format_dim(d)} of 'x' {fmt_shape(x.shape)}"
            )


def _unproven_dims(x: KernelValue, idx: KernelValue, axis: int) -> list[int]:
    """The dims off ``axis`` where 'indices' is not provably no larger than ``x``.

    The deduction rejects 'indices' dims provably larger than those of 'x'; symbolic ones may still be at
    run time, so they are checked before the kernel runs (``KernelBuilder.check_indices``) and clamped in it.
    """
    return [
        d
        for d, (a, b) in enumerate(zip(x.shape, idx.shape))
        if d != axis and not (a is not None and b is not None and prove_le(b, a))
    ]


def gather_elements(
    x: ir.Value, indices: ir.Value, axis: int = 0, *, loc: ir.Location | None = None
) -> ir.Value:
    """Elements of ``x`` along ``axis`` at ``indices``."""
    return GatherElementsOp.build([x, indices], {"axis": axis}, loc=loc).result


@relax_op
class ScatterElementsOp(RelaxOp):
    """A copy of ``x`` with ``updates`` written along ``axis`` at ``indices``, or combined with the
    element there by ``reduction`` (``none``, ``add``, ``mul``, ``max``, ``min``; ONNX ScatterElements).
    Updates apply in order, so with ``none`` a later duplicate index wins.

    ``%y = "relax.scatter_elements"(%x, %i, %u) {axis = 0 : i64, reduction = "add"} : (!relax.tensor<["n", 4], f32>,
    !relax.tensor<[2, 4], i64>, !relax.tensor<[2, 4], f32>) -> !relax.tensor<["n", 4], f32>``
    """

    NAME = "scatter_elements"
    OPERANDS = (Operand("x"), Operand("indices"), Operand("updates"))
    ATTRS = (Attr("axis", "int"), Attr("reduction", "str"))

    @classmethod
    def deduce(cls, operand_types: Sequence[RelaxType | None], attrs: dict[str, Any]) -> list[RelaxType]:
        x = tensor_operand(operand_types[0], "x")
        idx = _index_operand(operand_types[1], "indices")
        upd = tensor_operand(operand_types[2], "updates")
        dtype = join_dtype(x, upd, ("x", "updates"))
        _check_reduction(attrs["reduction"], dtype)
        _same_rank(x, idx, "x", "indices")
        _same_rank(idx, upd, "indices", "updates")
        if idx.shape is not None and upd.shape is not None:
            for i, (a, b) in enumerate(zip(idx.shape, upd.shape)):
                same_dim(a, b, f"dim {i} of 'indices' and 'updates' differ")
        _indices_within(x, idx, attrs["axis"])
        return [TensorType(x.shape, dtype)]

    @classmethod
    def lower(cls, k: KernelBuilder) -> list[KernelValue]:
        """Copy ``x`` to the destination, then store (or combine) the updates in order."""
        (x, idx, upd), out = k.ins, k.destination(0)
        axis = normalize_axis(k.attrs["axis"], x.rank)
        k.assume(2, idx.shape)  # type: ignore[arg-type]
        upd = k.ins[2]
        unproven = _unproven_dims(x, idx, axis)
        k.check_indices(1, 0, axis, unproven)
        bound = _Bound(k, out, axis)
        bounds = [k.dim(idx, d) for d in range(idx.rank)]
        if bounds:
            bounds[0] = bound.loop_bound(bounds[0])
        combine = _combiner(k, k.attrs["reduction"], out.dtype, out.mlir)

        def nest(level: int, acc: KernelValue, ivs: list[str]) -> KernelValue:
            if level < idx.rank:
                return k.loop(bounds[level], acc, lambda iv, a: nest(level + 1, a, [*ivs, iv]))
            i = k.scalar(f"tensor.extract {idx.name}[{', '.join(ivs)}]", idx.mlir)
            u = k.scalar(f"tensor.extract {upd.name}[{', '.join(ivs)}]", upd.mlir)
            coords = [
                bound.normalize(i, idx.dtype) if d == axis else bound.clamp(iv, d) if d in unproven else iv
                for d, iv in enumerate(ivs)
            ]
            u = combine(acc.name, coords, u)
            return k.op(f"tensor.insert {u} into {acc.name}[{', '.join(coords)}] : {acc.mlir}", acc)

        return [nest(0, k.copy(x, out), [])]


SCATTER_REDUCTIONS = ("none", "add", "mul", "max", "min")


def _check_reduction(reduction: str, dtype: str | None) -> None:
    if reduction not in SCATTER_REDUCTIONS:
        raise ShapeError(f"reduction must be one of {', '.join(SCATTER_REDUCTIONS)}, got '{reduction}'")
    if reduction != "none" and dtype == "i1":
        raise ShapeError(f"reduction '{reduction}' is not defined for i1 tensors")


def _combiner(
    k: KernelBuilder, reduction: str, dtype: str, tensor: str
) -> Callable[[str, list[str], str], str]:
    """``fn(acc, coords, update)``: the value to store at ``coords`` of tensor ``acc`` for ``reduction``."""
    if reduction == "none":
        return lambda acc, coords, u: u
    t, s = element(dtype), "u" if unsigned_order(dtype) else "s"
    if is_float(dtype):
        op = {"add": "arith.addf", "mul": "arith.mulf", "max": "arith.maximumf", "min": "arith.minimumf"}
    else:
        op = {"add": "arith.addi", "mul": "arith.muli", "max": f"arith.max{s}i", "min": f"arith.min{s}i"}

    def combine(acc: str, coords: list[str], u: str) -> str:
        old = k.scalar(f"tensor.extract {acc}[{', '.join(coords)}]", tensor)
        return k.scalar(f"{op[reduction]} {old}, {u}", t)

    return combine


def scatter_elements(
    x: ir.Value,
    indices: ir.Value,
    updates: ir.Value,
    axis: int = 0,
    reduction: str = "none",
    *,
    loc: ir.Location | None = None,
) -> ir.Value:
    """``x`` with ``updates`` scattered along ``axis`` at ``indices`` (combined by ``reduction``)."""
    attrs = {"axis": axis, "reduction": reduction}
    return ScatterElementsOp.build([x, indices, updates], attrs, loc=loc).result


@relax_op
class IndexRangeOp(RelaxOp):
    """The min and max of an index tensor (i64 scalars), the ``low`` and ``high`` of ``relax.check_index``.

    ``%lo, %hi = "relax.index_range"(%i) : (!relax.tensor<["k"], i64>) -> (!relax.tensor<[], i64>,
    !relax.tensor<[], i64>)``

    One vectorizable pass over the indices; with no indices, (INT64_MAX, INT64_MIN), which pass any check.
    """

    NAME = "index_range"
    OPERANDS = (Operand("indices"),)
    RESULTS = (Operand("low"), Operand("high"))

    @classmethod
    def deduce(cls, operand_types: Sequence[RelaxType | None], attrs: dict[str, Any]) -> list[RelaxType]:
        _index_operand(operand_types[0], "indices")
        return [TensorType((), "i64"), TensorType((), "i64")]

    @classmethod
    def lower(cls, k: KernelBuilder) -> list[KernelValue]:
        """A reduction of every index into a running min and max."""
        idx = k.ins[0]
        low = k.fill(k.constant(INT64_MAX, "i64"), k.destination(0))
        high = k.fill(k.constant(INT64_MIN, "i64"), k.destination(1))
        ds = ", ".join(f"d{i}" for i in range(idx.rank))
        maps = [identity(idx.rank), f"({ds}) -> ()", f"({ds}) -> ()"]

        def body(a: list[str]) -> list[str]:
            v = (
                a[0]
                if idx.dtype == "i64"
                else k.scalar(f"arith.extsi {a[0]}", f"{element(idx.dtype)} to i64")
            )
            return [k.scalar(f"arith.minsi {a[1]}, {v}", "i64"), k.scalar(f"arith.maxsi {a[2]}, {v}", "i64")]

        return k.generic([idx], [low, high], maps, ["reduction"] * idx.rank, body)


def index_range_kernel(indices: TensorType) -> tuple[KernelBuilder, list[KernelValue]]:
    """The ``index_range`` kernel of ``indices`` (``IndexRangeOp``), for convert-relax-to-linalg's checks."""
    scalar = TensorType((), "i64")
    k = KernelBuilder("index_range", [indices], [scalar, scalar], {})
    return k, IndexRangeOp.lower(k)


def index_range(indices: ir.Value, *, loc: ir.Location | None = None) -> tuple[ir.Value, ir.Value]:
    """The min and max of ``indices`` (i64 scalars; INT64_MAX and INT64_MIN when it is empty)."""
    low, high = IndexRangeOp.build([indices], loc=loc).results
    return low, high


def check_index(
    indices: ir.Value,
    x: ir.Value,
    axis: int,
    op: str,
    values: ir.Value | None = None,
    *,
    loc: ir.Location | None = None,
) -> ir.Value:
    """``indices``, after a run-time check that ``values`` (default: ``indices``; e.g. one component of index
    tuples) lie in ``[-d, d)`` for ``d`` = dim ``axis`` of ``x``; a failure raises InputError naming ``op``. For
    a frontend that combines indices in a way no kernel's own check sees (GatherND's flat offsets)."""
    low, high = index_range(indices if values is None else values, loc=loc)
    attrs = {"axis": axis, "bounded": [], "op": op}
    return structural.CheckIndexOp.build([indices, x, low, high], attrs, loc=loc).result

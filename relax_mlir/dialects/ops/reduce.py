"""Reductions (sum, mean, max, min, prod, variance), argmax/argmin, cumsum/cumprod and topk.

Kernels: reductions and arg reductions are ``linalg.generic`` ops with "reduction" iterators; kept
unit dims (keepdims) are collapsed away and expanded back (views). cumsum/cumprod and topk are short
``scf.for`` loops (over the axis, over the k results) whose steps are ``linalg.generic`` ops on slices.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from mlir import ir

from relax_mlir.dialects.dims import ONE, normalize_axes, normalize_axis, product, tensor_operand
from relax_mlir.dialects.registry import Attr, Operand, RelaxOp, relax_op
from relax_mlir.dialects.types import PrimType, RelaxType, TensorType
from relax_mlir.errors import ShapeError
from relax_mlir.lowering.kernel import (
    KernelBuilder,
    KernelValue,
    builtin_tensor,
    element,
    identity,
    is_float,
    unit_groups,
    unsigned_order,
)
from relax_mlir.lowering.ordering import equal, precedes
from relax_mlir.shape_infer.expr import const


class ReductionOp(RelaxOp):
    """Base of reductions over ``axes`` (``unit`` = all axes), keeping reduced dims as 1 if ``keepdims``."""

    FUSION = "reduction"

    OPERANDS = (Operand("x"),)
    ATTRS = (Attr("axes", "ints_or_none"), Attr("keepdims", "bool"))

    @classmethod
    def deduce(cls, operand_types: Sequence[RelaxType | None], attrs: dict[str, Any]) -> list[RelaxType]:
        x = tensor_operand(operand_types[0], "x")
        axes, keepdims = attrs["axes"], attrs["keepdims"]
        if x.shape is None:
            if axes is None and not keepdims:
                return [TensorType((), x.dtype)]
            return [TensorType(None, x.dtype)]
        reduced = set(range(len(x.shape)) if axes is None else normalize_axes(axes, len(x.shape)))
        if keepdims:
            shape = tuple(ONE if i in reduced else d for i, d in enumerate(x.shape))
        else:
            shape = tuple(d for i, d in enumerate(x.shape) if i not in reduced)
        return [TensorType(shape, x.dtype)]

    @classmethod
    def lower(cls, k: KernelBuilder) -> list[KernelValue]:
        x, keepdims = k.ins[0], k.attrs["keepdims"]
        axes = _axes(k.attrs["axes"], x.rank)
        out = k.destination(0, _reduction_sizes(k, x, axes, keepdims))
        acc = _squeeze(k, out, axes if keepdims else [])
        r = _reduce(k, cls.NAME, x, axes, acc)
        return [_unsqueeze(k, r, out, axes if keepdims else [])]


_REDUCTIONS = {
    "sum": "Sum over axes.",
    "mean": "Mean over axes.",
    "max": "Maximum over axes.",
    "min": "Minimum over axes.",
    "prod": "Product over axes.",
    "variance": "Population variance over axes.",
}


def _make_reduction(name: str, summary: str) -> Any:
    example = (
        f'``%y = "relax.{name}"(%x) {{axes = [1], keepdims = false}} : (!relax.tensor<["n", 4], f32>)'
        f' -> !relax.tensor<["n"], f32>``'
    )
    camel = "".join(p.capitalize() for p in name.split("_")) + "Op"
    cls = relax_op(type(camel, (ReductionOp,), {"NAME": name, "__doc__": f"{summary}\n\n{example}"}))

    def helper(
        x: ir.Value,
        axes: Sequence[int] | None = None,
        keepdims: bool = False,
        *,
        loc: ir.Location | None = None,
    ) -> ir.Value:
        attrs = {"axes": None if axes is None else list(axes), "keepdims": keepdims}
        return cls.build([x], attrs, loc=loc).result

    helper.__name__ = helper.__qualname__ = name
    helper.__doc__ = f"{summary} (axes None = all)"
    return camel, cls, helper


for _name, _summary in _REDUCTIONS.items():
    _camel, _cls, _helper = _make_reduction(_name, _summary)
    globals()[_camel], globals()[_name] = _cls, _helper


class ArgReductionOp(RelaxOp):
    """Base of argmax/argmin: i64 indices along ``axis`` (``unit`` = of the flattened tensor)."""

    OPERANDS = (Operand("x"),)
    ATTRS = (Attr("axis", "ints_or_none"), Attr("keepdims", "bool"))

    @classmethod
    def deduce(cls, operand_types: Sequence[RelaxType | None], attrs: dict[str, Any]) -> list[RelaxType]:
        x = tensor_operand(operand_types[0], "x")
        axis = attrs["axis"]
        if axis is not None and len(axis) != 1:
            raise ShapeError(f"axis must hold one axis, got {axis}")
        if axis is not None and x.shape is not None:
            normalize_axis(axis[0], len(x.shape))
        (out,) = ReductionOp.deduce([x], {"axes": axis, "keepdims": attrs["keepdims"]})
        assert isinstance(out, TensorType)
        return [TensorType(out.shape, "i64")]

    @classmethod
    def lower(cls, k: KernelBuilder) -> list[KernelValue]:
        """Index of the first extreme (NaN counts as the extreme, as in numpy), order-independent."""
        x, keepdims, axis = k.ins[0], k.attrs["keepdims"], k.attrs["axis"]
        units = list(range(x.rank)) if keepdims else []
        if axis is None:
            out = k.destination(0)
            x = k.flatten(x)
            axes = [0]
        else:
            axes = [normalize_axis(axis[0], x.rank)]
            out = k.destination(0, _reduction_sizes(k, x, axes, keepdims))
            units = axes if keepdims else []
        acc = _squeeze(k, out, units)
        rank, t = x.rank, element(x.dtype)
        best = _fill(k, k.empty_like(acc, x.dtype), identity_value(cls.NAME, x.dtype))
        kept = [i for i in range(rank) if i not in axes]
        maps = [identity(rank), _projection(rank, kept), _projection(rank, kept)]
        iterators = ["reduction" if i in axes else "parallel" for i in range(rank)]

        def body(a: list[str]) -> list[str]:
            i = _line(k, f"arith.index_cast {_line(k, f'linalg.index {axes[0]} : index')} : index to i64")
            better = precedes(k, cls.NAME == "argmax", True, x.dtype, a[0], a[1])
            tie = k.scalar(
                f"arith.andi {equal(k, x.dtype, a[0], a[1])}, {k.scalar(f'arith.cmpi slt, {i}, {a[2]}', 'i64')}",
                "i1",
            )
            take = k.scalar(f"arith.ori {better}, {tie}", "i1")
            return [
                k.scalar(f"arith.select {take}, {a[0]}, {a[1]}", t),
                k.scalar(f"arith.select {take}, {i}, {a[2]}", "i64"),
            ]

        _, r = k.generic([x], [best, _fill(k, acc, 0)], maps, iterators, body)
        return [_unsqueeze(k, r, out, units)]


@relax_op
class ArgmaxOp(ArgReductionOp):
    """Index of the maximum along an axis.

    ``%i = "relax.argmax"(%x) {axis = [1], keepdims = false} : (!relax.tensor<["n", 4], f32>)
    -> !relax.tensor<["n"], i64>``
    """

    NAME = "argmax"


@relax_op
class ArgminOp(ArgReductionOp):
    """Index of the minimum along an axis.

    ``%i = "relax.argmin"(%x) {axis = [1], keepdims = false} : (!relax.tensor<["n", 4], f32>)
    -> !relax.tensor<["n"], i64>``
    """

    NAME = "argmin"


def argmax(
    x: ir.Value, axis: int | None = None, keepdims: bool = False, *, loc: ir.Location | None = None
) -> ir.Value:
    """Index of the maximum of ``x`` along ``axis``."""
    return ArgmaxOp.build(
        [x], {"axis": None if axis is None else [axis], "keepdims": keepdims}, loc=loc
    ).result


def argmin(
    x: ir.Value, axis: int | None = None, keepdims: bool = False, *, loc: ir.Location | None = None
) -> ir.Value:
    """Index of the minimum of ``x`` along ``axis``."""
    return ArgminOp.build(
        [x], {"axis": None if axis is None else [axis], "keepdims": keepdims}, loc=loc
    ).result


class CumulativeOp(RelaxOp):
    """Base of cumsum and cumprod along ``axis``; ``exclusive`` leaves out each element itself,
    ``reverse`` runs from the end of the axis."""

    OPERANDS = (Operand("x"),)
    ATTRS = (Attr("axis", "int"), Attr("exclusive", "bool"), Attr("reverse", "bool"))

    @classmethod
    def deduce(cls, operand_types: Sequence[RelaxType | None], attrs: dict[str, Any]) -> list[RelaxType]:
        x = tensor_operand(operand_types[0], "x")
        if x.shape is not None:
            normalize_axis(attrs["axis"], len(x.shape))
        return [x]

    @classmethod
    def lower(cls, k: KernelBuilder) -> list[KernelValue]:
        x = k.ins[0]
        out = k.destination(0, _result_sizes(k, x, list(range(x.rank))))
        kind = "sum" if cls.NAME == "cumsum" else "prod"
        axis = normalize_axis(k.attrs["axis"], x.rank)
        return [cumulate(k, x, out, kind, axis, k.attrs["exclusive"], k.attrs["reverse"])]


def cumulate(
    k: KernelBuilder,
    x: KernelValue,
    out: KernelValue,
    kind: str,
    axis: int | str,
    exclusive: bool,
    reverse: bool,
) -> KernelValue:
    """The scan of cumsum/cumprod (``kind`` "sum" or "prod") of ``x`` into ``out`` along ``axis``: a static
    axis, or an ``index`` value in ``[0, rank)`` (``relax.cumsum_axis``; slices pick the axis by masks).

    A loop over the axis: step i writes slice p (p = i, or n - 1 - i if ``reverse``) as x[p] + result[q]
    (q the previous position), or x[q] + result[q] if ``exclusive``; step 0 writes x[p] (or the identity).
    """
    if x.dtype == "i1":
        raise k.fail(f"{k.op_name} of an i1 tensor is not lowered: convert it with relax.astype first")
    rank, t = x.rank, element(x.dtype)
    combine = COMBINE[kind][0 if is_float(x.dtype) else 1]
    start = k.constant(identity_value(kind, x.dtype), x.dtype)
    dims = [str(d.value) if d is not None and d.is_const else k.dim(x, j) for j, d in enumerate(x.shape)]
    if isinstance(axis, int):
        n = k.dim(x, axis)
        sizes = ["1" if j == axis else d for j, d in enumerate(dims)]
        slice_type = TensorType(tuple(ONE if j == axis else d for j, d in enumerate(x.shape)), x.dtype)

        def offsets(position: str) -> list[str]:
            return [position if j == axis else "0" for j in range(rank)]

    else:
        masks = [k.scalar(f"arith.cmpi eq, {axis}, {k.const(j)}", "index") for j in range(rank)]
        n = k.const(0)
        for m, j in zip(masks, range(rank)):
            n = k.scalar(f"arith.select {m}, {k.dim(x, j)}, {n}", "index")
        sizes = [
            k.scalar(f"arith.select {m}, {k.const(1)}, {k.dim(x, j)}", "index") for j, m in enumerate(masks)
        ]
        slice_type = TensorType((None,) * rank, x.dtype)

        def offsets(position: str) -> list[str]:
            return [k.scalar(f"arith.select {m}, {position}, {k.const(0)}", "index") for m in masks]

    slice_mlir = builtin_tensor(slice_type)
    dynamic = [size for size, d in zip(sizes, slice_type.shape) if d is None or not d.is_const]

    def where(position: str) -> str:
        return f"[{', '.join(offsets(position))}] [{', '.join(sizes)}] [{', '.join(['1'] * rank)}]"

    i, acc, r = k.fresh("i"), k.fresh("acc"), k.fresh("r")

    def step() -> str:
        last = k.scalar(f"arith.subi {n}, {k.const(1)}", "index")
        if reverse:
            p = k.scalar(f"arith.subi {last}, {i}", "index")
            q = k.scalar(f"arith.minsi {k.scalar(f'arith.addi {p}, {k.const(1)}', 'index')}, {last}", "index")
        else:
            p = i
            q = k.scalar(
                f"arith.maxsi {k.scalar(f'arith.subi {i}, {k.const(1)}', 'index')}, {k.const(0)}", "index"
            )
        xs = k.typed(
            f"tensor.extract_slice {x.name}{where(q if exclusive else p)} : {x.mlir} to {slice_mlir}"
        )
        ps = k.typed(f"tensor.extract_slice {acc}{where(q)} : {out.mlir} to {slice_mlir}")
        first = k.scalar(f"arith.cmpi eq, {i}, {k.const(0)}", "index")
        empty = k.typed(f"tensor.empty({', '.join(dynamic)}) : {slice_mlir}")

        def body(a: list[str]) -> list[str]:
            initial = start if exclusive else a[0]
            both = k.scalar(f"{combine} {a[0]}, {a[1]}", t)
            return [k.scalar(f"arith.select {first}, {initial}, {both}", t)]

        [s] = k.generic(
            [KernelValue(xs, slice_type, slice_mlir), KernelValue(ps, slice_type, slice_mlir)],
            [KernelValue(empty, slice_type, slice_mlir)],
            [identity(rank)] * 3,
            ["parallel"] * rank,
            body,
        )
        return k.typed(f"tensor.insert_slice {s.name} into {acc}{where(p)} : {slice_mlir} into {out.mlir}")

    lines, updated = k.capture(step)
    k.emit(
        f"{r} = scf.for {i} = {k.const(0)} to {n} step {k.const(1)} "
        f"iter_args({acc} = {out.name}) -> ({out.mlir}) {{",
        *("  " + line for line in lines),
        f"  scf.yield {updated} : {out.mlir}",
        "}",
    )
    return KernelValue(r, out.type, out.mlir)


@relax_op
class CumsumOp(CumulativeOp):
    """Cumulative sum along ``axis``.

    ``%y = "relax.cumsum"(%x) {axis = 1 : i64, exclusive = false, reverse = false} : (!relax.tensor<["n", 4], f32>)
    -> !relax.tensor<["n", 4], f32>``
    """

    NAME = "cumsum"


@relax_op
class CumprodOp(CumulativeOp):
    """Cumulative product along ``axis``.

    ``%y = "relax.cumprod"(%x) {axis = 0 : i64, exclusive = true, reverse = false} : (!relax.tensor<["n", 4], f32>)
    -> !relax.tensor<["n", 4], f32>``
    """

    NAME = "cumprod"


def cumsum(
    x: ir.Value,
    axis: int = 0,
    exclusive: bool = False,
    reverse: bool = False,
    *,
    loc: ir.Location | None = None,
) -> ir.Value:
    """Cumulative sum of ``x`` along ``axis``."""
    return CumsumOp.build([x], {"axis": axis, "exclusive": exclusive, "reverse": reverse}, loc=loc).result


def cumprod(
    x: ir.Value,
    axis: int = 0,
    exclusive: bool = False,
    reverse: bool = False,
    *,
    loc: ir.Location | None = None,
) -> ir.Value:
    """Cumulative product of ``x`` along ``axis``."""
    return CumprodOp.build([x], {"axis": axis, "exclusive": exclusive, "reverse": reverse}, loc=loc).result


@relax_op
class TopkOp(RelaxOp):
    """The ``k`` largest (or smallest) values along ``axis`` and their i64 indices, sorted.

    ``%v, %i = "relax.topk"(%x) {axis = -1 : i64, k = 5 : i64, largest = true} : (!relax.tensor<["n", 100], f32>)
    -> (!relax.tensor<["n", 5], f32>, !relax.tensor<["n", 5], i64>)``
    """

    NAME = "topk"
    OPERANDS = (Operand("x"),)
    RESULTS = (Operand("values"), Operand("indices"))
    ATTRS = (Attr("k", "int"), Attr("axis", "int"), Attr("largest", "bool"))

    @classmethod
    def deduce(cls, operand_types: Sequence[RelaxType | None], attrs: dict[str, Any]) -> list[RelaxType]:
        x = tensor_operand(operand_types[0], "x")
        k = attrs["k"]
        if k < 0:
            raise ShapeError(f"k must be non-negative, got {k}")
        if x.shape is None:
            return [TensorType(None, x.dtype), TensorType(None, "i64")]
        axis = normalize_axis(attrs["axis"], len(x.shape))
        d = x.shape[axis]
        if d is not None and d.is_const and d.value < k:
            raise ShapeError(f"k = {k} is larger than dim {axis} of size {d.value}")
        shape = x.shape[:axis] + (const(k),) + x.shape[axis + 1 :]
        return [TensorType(shape, x.dtype), TensorType(shape, "i64")]

    @classmethod
    def lower(cls, k: KernelBuilder) -> list[KernelValue]:
        """k selection steps: step j takes, per row, the first element after step j - 1's in the sort order.

        The order is by value (descending if ``largest``), then by index, with NaN above every number,
        so results match a stable sort. The loop carries only the indices; the values are gathered
        after it. Costs k passes over the input: meant for small k. A symbolic axis shorter than k at
        run time (nothing can check it before the call) gives index -1 and value 0 past its end.
        """
        return _topk(k, k.const(k.attrs["k"]), None)


@relax_op
class TopkRuntimeOp(TopkOp):
    """``relax.topk`` with ``k`` a symbolic integer (read at run time, e.g. bound by a match_cast of a shape);
    ``relax.check_bound`` checks it against the axis before.

    ``%v, %i = "relax.topk_runtime"(%x, %k) {axis = -1 : i64, largest = true} : (!relax.tensor<["n", 100], f32>,
    !relax.prim<"k">) -> (!relax.tensor<["n", "k"], f32>, !relax.tensor<["n", "k"], i64>)``
    """

    NAME = "topk_runtime"
    OPERANDS = (Operand("x"), Operand("k", "prim"))
    ATTRS = (Attr("axis", "int"), Attr("largest", "bool"))

    @classmethod
    def deduce(cls, operand_types: Sequence[RelaxType | None], attrs: dict[str, Any]) -> list[RelaxType]:
        x, count = tensor_operand(operand_types[0], "x"), operand_types[1]
        if not isinstance(count, PrimType):
            raise ShapeError(f"operand 'k' must be a symbolic integer, got {count}")
        if x.shape is None:
            return [TensorType(None, x.dtype), TensorType(None, "i64")]
        axis = normalize_axis(attrs["axis"], len(x.shape))
        shape = x.shape[:axis] + (count.value,) + x.shape[axis + 1 :]
        return [TensorType(shape, x.dtype), TensorType(shape, "i64")]

    @classmethod
    def lower(cls, k: KernelBuilder) -> list[KernelValue]:
        count = k.scalar(f"arith.maxsi {k.ins[1].name}, {k.const(0)}", "index")
        return _topk(k, count, count)


def _topk(k: KernelBuilder, count: str, count_size: str | None) -> list[KernelValue]:
    """The k selection steps of ``relax.topk`` for ``count`` (an index value) results; ``count_size`` sizes
    the results' axis when it is unknown."""
    x, largest = k.ins[0], k.attrs["largest"]
    axis = normalize_axis(k.attrs["axis"], x.rank)
    sizes = _result_sizes(k, x, [None if j == axis else j for j in range(x.rank)])
    if sizes:
        sizes[axis] = count_size
    values, indices = k.destination(0, sizes), k.destination(1, sizes)
    rank, t = x.rank, element(x.dtype)
    rows = [j for j in range(rank) if j != axis]
    row_index_type = TensorType(tuple(x.shape[j] for j in rows), "i64")
    j, idxs, r = k.fresh("j"), k.fresh("idxs"), k.fresh("r")
    maps = [identity(rank)] + [_projection(rank, rows)] * 3
    iterators = ["reduction" if d == axis else "parallel" for d in range(rank)]

    def before(a: str, ia: str, b: str, ib: str) -> str:
        """(a, ia) strictly before (b, ib) in the order."""
        less_index = k.scalar(f"arith.cmpi slt, {ia}, {ib}", "i64")
        tie = k.scalar(f"arith.andi {equal(k, x.dtype, a, b)}, {less_index}", "i1")
        return k.scalar(f"arith.ori {precedes(k, largest, largest, x.dtype, a, b)}, {tie}", "i1")

    def step() -> str:
        prev = k.scalar(
            f"arith.maxsi {k.scalar(f'arith.subi {j}, {k.const(1)}', 'index')}, {k.const(0)}", "index"
        )
        first = k.scalar(f"arith.cmpi eq, {j}, {k.const(0)}", "index")
        pi = _line(
            k,
            f"tensor.extract_slice {idxs}{_slice(k, indices, axis, prev)} : "
            f"{indices.mlir} to {builtin_tensor(row_index_type)}",
        )
        best_v = _fill(k, _empty_from(k, x, rows, x.dtype), 0)
        best_i = _fill(k, _empty_from(k, x, rows, "i64"), -1)

        def body(a: list[str]) -> list[str]:
            xv, piv, bv, bi = a
            i = _line(k, f"arith.index_cast {_line(k, f'linalg.index {axis} : index')} : index to i64")
            zero = k.constant(0, "i64")
            has_prev = k.scalar(f"arith.cmpi sge, {piv}, {zero}", "i64")  # -1: the axis had < k elements
            clamped = k.scalar(f"arith.maxsi {piv}, {zero}", "i64")
            safe = k.scalar(f"arith.select {first}, {zero}, {clamped}", "i64")
            pvv = _gather(k, x, axis, safe)  # unset before step 0: not read then
            after = k.scalar(f"arith.andi {has_prev}, {before(pvv, piv, xv, i)}", "i1")
            candidate = k.scalar(f"arith.ori {first}, {after}", "i1")
            none = k.scalar(f"arith.cmpi slt, {bi}, {k.constant(0, 'i64')}", "i64")
            better = k.scalar(f"arith.ori {none}, {before(xv, i, bv, bi)}", "i1")
            take = k.scalar(f"arith.andi {candidate}, {better}", "i1")
            return [
                k.scalar(f"arith.select {take}, {xv}, {bv}", t),
                k.scalar(f"arith.select {take}, {i}, {bi}", "i64"),
            ]

        prev_i = KernelValue(pi, row_index_type, builtin_tensor(row_index_type))
        _, i = k.generic([x, prev_i], [best_v, best_i], maps, iterators, body)
        return _line(
            k,
            f"tensor.insert_slice {i.name} into {idxs}{_slice(k, indices, axis, j)} : "
            f"{i.mlir} into {indices.mlir}",
        )

    lines, new_i = k.capture(step)
    k.emit(
        f"{r} = scf.for {j} = {k.const(0)} to {count} step {k.const(1)} "
        f"iter_args({idxs} = {indices.name}) -> ({indices.mlir}) {{",
        *("  " + line for line in lines),
        f"  scf.yield {new_i} : {indices.mlir}",
        "}",
    )
    found = KernelValue(r, indices.type, indices.mlir)

    def gather(a: list[str]) -> list[str]:
        """The value at each found index; 0 where none was found (an axis shorter than k at run time)."""
        zero = k.constant(0, "i64")
        value = _gather(k, x, axis, k.scalar(f"arith.maxsi {a[0]}, {zero}", "i64"))
        missing = k.scalar(f"arith.cmpi slt, {a[0]}, {zero}", "i64")
        return [k.scalar(f"arith.select {missing}, {k.constant(0, x.dtype)}, {value}", t)]

    [v] = k.generic([found], [values], [identity(rank)] * 2, ["parallel"] * rank, gather)
    return [v, found]


def topk(
    x: ir.Value, k: int | ir.Value, axis: int = -1, largest: bool = True, *, loc: ir.Location | None = None
) -> tuple[ir.Value, ir.Value]:
    """The top ``k`` values of ``x`` along ``axis`` and their indices (``k`` an int, or a symbolic integer
    value known at run time)."""
    if isinstance(k, ir.Value):
        op = TopkRuntimeOp.build([x, k], {"axis": axis, "largest": largest}, loc=loc)
    else:
        op = TopkOp.build([x], {"k": k, "axis": axis, "largest": largest}, loc=loc)
    return op.results[0], op.results[1]


# -- lowering helpers ------------------------------------------------------------------------------------

COMBINE = {  # name -> (float op, signed int op, unsigned int op)
    "sum": ("arith.addf", "arith.addi", "arith.addi"),
    "mean": ("arith.addf", "arith.addi", "arith.addi"),
    "variance": ("arith.addf", "arith.addi", "arith.addi"),
    "prod": ("arith.mulf", "arith.muli", "arith.muli"),
    "max": ("arith.maximumf", "arith.maxsi", "arith.maxui"),
    "min": ("arith.minimumf", "arith.minsi", "arith.minui"),
}


def _int_bounds(dtype: str) -> tuple[int, int]:
    if dtype == "i1":
        return 0, 1
    bits = int(element(dtype)[1:])
    if unsigned_order(dtype):
        return 0, (1 << bits) - 1
    return -(1 << (bits - 1)), (1 << (bits - 1)) - 1


def identity_value(name: str, dtype: str) -> float | int:
    """The start value of a reduction: its combine op's identity."""
    if name in ("sum", "mean", "variance"):
        return 0
    if name == "prod":
        return 1
    lo, hi = (-math.inf, math.inf) if is_float(dtype) else _int_bounds(dtype)
    return lo if name in ("max", "argmax") else hi


def _line(k: KernelBuilder, text: str) -> str:
    """Emit ``%v = <text>`` (an op whose text already ends with its types); return ``%v``."""
    name = k.fresh()
    k.emit(f"{name} = {text}")
    return name


def _fill(k: KernelBuilder, dest: KernelValue, value: float | int) -> KernelValue:
    return k.fill(k.constant(value, dest.dtype), dest)


def _projection(rank: int, dims: Sequence[int]) -> str:
    ds = ", ".join(f"d{i}" for i in range(rank))
    return f"({ds}) -> ({', '.join(f'd{i}' for i in dims)})"


def _squeeze(k: KernelBuilder, value: KernelValue, units: Sequence[int]) -> KernelValue:
    if not units:
        return value
    return k.collapse(value, unit_groups(value.rank, units))


def _unsqueeze(k: KernelBuilder, value: KernelValue, like: KernelValue, units: Sequence[int]) -> KernelValue:
    """``value`` (``like`` without its unit dims ``units``) expanded back to ``like``'s shape."""
    if not units:
        return value
    sizes = [None if d is not None and d.is_const else k.dim(like, i) for i, d in enumerate(like.shape)]
    return k.expand(value, unit_groups(like.rank, units), like.shape, sizes)


def _result_sizes(k: KernelBuilder, x: KernelValue, dims: Sequence[int | None]) -> list[str | None]:
    """Index values of result dims read from ``x``'s dims (None for a constant dim); only when allocating."""
    if not k.allocating:
        return []
    return [None if a is None else k.dim(x, a) for a in dims]


def _reduction_sizes(
    k: KernelBuilder, x: KernelValue, axes: Sequence[int], keepdims: bool
) -> list[str | None]:
    if keepdims:
        return _result_sizes(k, x, [None if i in axes else i for i in range(x.rank)])
    return _result_sizes(k, x, [i for i in range(x.rank) if i not in axes])


def _count(k: KernelBuilder, x: KernelValue, axes: Sequence[int]) -> str:
    """The number of elements reduced (an index value)."""
    dims = [x.shape[a] for a in axes]
    if all(d is not None for d in dims):
        return k.index(product(dims) or 1)  # type: ignore[arg-type]
    total = k.const(1)
    for a in axes:
        total = k.scalar(f"arith.muli {total}, {k.dim(x, a)}", "index")
    return total


def _reduce(
    k: KernelBuilder, name: str, x: KernelValue, axes: Sequence[int], acc: KernelValue
) -> KernelValue:
    """Reduce ``x`` over ``axes`` into ``acc`` (shape: the kept dims) with reduction ``name``. An f16
    sum, mean or variance accumulates in f32 and rounds once (as numpy and ONNX Runtime do)."""
    dtype, t, rank = x.dtype, element(x.dtype), x.rank
    if dtype == "f16" and name in ("sum", "mean", "variance"):
        wide = _convert(k, x, k.empty_like(x, "f32"), "arith.extf")
        return _convert(k, _reduce(k, name, wide, axes, k.empty_like(acc, "f32")), acc, "arith.truncf")
    kept = [i for i in range(rank) if i not in axes]
    maps = [identity(rank), _projection(rank, kept)]
    iterators = ["reduction" if i in axes else "parallel" for i in range(rank)]
    if dtype == "i1" and name in ("sum", "mean", "variance"):
        raise k.fail(f"{name} of an i1 tensor is not lowered: convert it with relax.astype first")
    if name == "variance" and not is_float(dtype):
        raise k.fail(
            f"variance of an integer ({dtype}) tensor is not lowered: convert it to a float dtype first"
        )
    op = COMBINE[name][0 if is_float(dtype) else 2 if unsigned_order(dtype) else 1]
    if name == "mean" and not is_float(dtype):
        return _int_mean(k, x, axes, acc, maps, iterators)
    if name == "variance":
        mean = _reduce(k, "mean", x, axes, k.empty_like(acc))

        def body(a: list[str]) -> list[str]:
            d = k.scalar(f"arith.subf {a[0]}, {a[1]}", t)
            return [k.scalar(f"arith.addf {k.scalar(f'arith.mulf {d}, {d}', t)}, {a[2]}", t)]

        [r] = k.generic([x, mean], [_fill(k, acc, 0)], [maps[0], maps[1], maps[1]], iterators, body)
    else:
        [r] = k.generic(
            [x],
            [_fill(k, acc, identity_value(name, dtype))],
            maps,
            iterators,
            lambda a: [k.scalar(f"{op} {a[0]}, {a[1]}", t)],
        )
    if name not in ("mean", "variance"):
        return r
    n = _line(
        k, f"arith.sitofp {_line(k, f'arith.index_cast {_count(k, x, axes)} : index to i64')} : i64 to {t}"
    )
    [r] = k.generic(
        [], [r], [identity(r.rank)], ["parallel"] * r.rank, lambda a: [k.scalar(f"arith.divf {a[0]}, {n}", t)]
    )
    return r


def _convert(k: KernelBuilder, x: KernelValue, dest: KernelValue, op: str) -> KernelValue:
    """``x`` converted elementwise into ``dest`` (of another float dtype) with ``op`` (extf/truncf)."""
    src, dst = element(x.dtype), element(dest.dtype)
    [r] = k.generic(
        [x],
        [dest],
        [identity(x.rank)] * 2,
        ["parallel"] * x.rank,
        lambda a: [k.typed(f"{op} {a[0]} : {src} to {dst}")],
    )
    return r


def _int_mean(
    k: KernelBuilder,
    x: KernelValue,
    axes: Sequence[int],
    acc: KernelValue,
    maps: list[str],
    iterators: list[str],
) -> KernelValue:
    """An integer mean: summed in i64, divided rounding toward zero (as ONNX ReduceMean); empty gives 0."""
    t, unsigned = element(x.dtype), unsigned_order(x.dtype)
    wide = _fill(k, k.empty_like(acc, "i64"), 0)

    def add(a: list[str]) -> list[str]:
        v = a[0] if t == "i64" else _line(k, f"arith.{'extui' if unsigned else 'extsi'} {a[0]} : {t} to i64")
        return [k.scalar(f"arith.addi {v}, {a[1]}", "i64")]

    [total] = k.generic([x], [wide], maps, iterators, add)
    count = k.scalar(f"arith.maxsi {_count(k, x, axes)}, {k.const(1)}", "index")
    n = _line(k, f"arith.index_cast {count} : index to i64")

    def divide(a: list[str]) -> list[str]:
        q = k.scalar(f"arith.{'divui' if unsigned else 'divsi'} {a[0]}, {n}", "i64")
        return [q if t == "i64" else _line(k, f"arith.trunci {q} : i64 to {t}")]

    rank = acc.rank
    [r] = k.generic([total], [acc], [identity(rank)] * 2, ["parallel"] * rank, divide)
    return r


def _axes(axes: Sequence[int] | None, rank: int) -> list[int]:
    return list(range(rank)) if axes is None else sorted(normalize_axes(axes, rank))


def _slice(k: KernelBuilder, like: KernelValue, axis: int, position: str) -> str:
    """``[offsets][sizes][strides]`` of the slice of ``like`` at ``position`` along ``axis``."""
    offsets = [position if j == axis else "0" for j in range(like.rank)]
    sizes = [
        "1" if j == axis else str(d.value) if d is not None and d.is_const else k.dim(like, j)
        for j, d in enumerate(like.shape)
    ]
    return f"[{', '.join(offsets)}] [{', '.join(sizes)}] [{', '.join('1' for _ in sizes)}]"


def _empty_from(k: KernelBuilder, x: KernelValue, dims: Sequence[int | None], dtype: str) -> KernelValue:
    """A ``tensor.empty`` whose dims are ``x``'s dims ``dims`` (None: a unit dim), sized from ``x``."""
    t = TensorType(tuple(ONE if j is None else x.shape[j] for j in dims), dtype)
    sizes = [k.dim(x, j) for j, d in zip(dims, t.shape) if j is not None and (d is None or not d.is_const)]
    name = k.fresh("empty")
    k.emit(f"{name} = tensor.empty({', '.join(sizes)}) : {builtin_tensor(t)}")
    return KernelValue(name, t, builtin_tensor(t))


def _gather(k: KernelBuilder, x: KernelValue, axis: int, position: str) -> str:
    """Inside a linalg body: the element of ``x`` at the iteration's indices, ``axis`` replaced by ``position`` (i64)."""
    coords = [
        _line(k, f"arith.index_cast {position} : i64 to index")
        if d == axis
        else _line(k, f"linalg.index {d} : index")
        for d in range(x.rank)
    ]
    return k.scalar(f"tensor.extract {x.name}[{', '.join(coords)}]", x.mlir)

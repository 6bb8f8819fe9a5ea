"""Ops that read shape-deciding values at run time (an ONNX ``axes`` or ``k`` input computed by the graph).

The axes tensor has a static length, so the result's rank is known; its dims are not (``"?"``).
``relax.check_axes`` and ``relax.check_bound`` check the values before the kernel runs (a failure raises
InputError); the kernels stay inside their buffers whatever the values are.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from mlir import ir

from relax_mlir.dialects.dims import ONE, normalize_axis, tensor_operand
from relax_mlir.dialects.ops.reduce import COMBINE, cumulate, identity_value
from relax_mlir.dialects.registry import Attr, Operand, RelaxOp, relax_op
from relax_mlir.dialects.types import RelaxType, TensorType
from relax_mlir.errors import ShapeError
from relax_mlir.lowering.kernel import (
    KernelBuilder,
    KernelValue,
    builtin_tensor,
    element,
    is_float,
    unsigned_order,
)

if TYPE_CHECKING:
    from relax_mlir.dialects.host_lowering import HostLowering

_KINDS = ("sum", "mean", "max", "min", "prod")


def _axes_length(t: RelaxType | None, name: str = "axes") -> int | None:
    """The static length of a 1-D i64 axes operand (None when unknown)."""
    a = tensor_operand(t, name)
    if a.dtype is not None and a.dtype != "i64":
        raise ShapeError(f"operand '{name}' must be an i64 tensor, got {a}")
    if a.shape is None:
        return None
    if len(a.shape) != 1:
        raise ShapeError(f"operand '{name}' must be 1-D, got {a}")
    n = a.shape[0]
    return n.value if n is not None and n.is_const else None


@relax_op
class CheckAxesOp(RelaxOp):
    """``axes`` unchanged, checked at run time: each value lies in ``[-r, r)`` for ``r`` the rank of ``x``
    (``extra`` added, for ops whose result has more dims than ``x``) and, if ``unique``, no axis repeats.
    A failure raises InputError naming ``op``.

    ``%a = "relax.check_axes"(%axes, %x) {extra = 0 : i64, op = "ReduceSum", unique = true} :
    (!relax.tensor<[1], i64>, !relax.tensor<["n", 4], f32>) -> !relax.tensor<[1], i64>``
    """

    NAME = "check_axes"
    OPERANDS = (Operand("axes"), Operand("x"))
    ATTRS = (Attr("extra", "int"), Attr("unique", "bool"), Attr("op", "str"))

    @classmethod
    def deduce(cls, operand_types: Sequence[RelaxType | None], attrs: dict[str, Any]) -> list[RelaxType]:
        if _axes_length(operand_types[0]) is None:
            raise ShapeError(f"operand 'axes' {operand_types[0]} must have a static length")
        x = tensor_operand(operand_types[1], "x")
        if x.shape is None:
            raise ShapeError(f"operand 'x' {x} must have a known rank")
        return [operand_types[0]]  # type: ignore[list-item]

    def lower_host(self, host: HostLowering) -> None:
        axes, x = (host.lookup(v) for v in self.operation.operands)
        attrs = self.attr_values()
        rank = len(x.type.shape) + attrs["extra"]
        at = host.location(self.operation).removesuffix(": ")
        where = f" in {attrs['op']}" + (f" at {at}" if at else "")
        values = []
        for j in range(axes.type.shape[0].value):
            e, v, shifted, norm, neg, low, high, bad, true, ok = (host.fresh("ax") for _ in range(10))
            for line in (
                f"{e} = tensor.extract {axes.name}[{host.code.const(j)}] : {axes.mlir}",
                f"{v} = arith.index_cast {e} : i64 to index",
                f"{neg} = arith.cmpi slt, {v}, {host.code.const(0)} : index",
                f"{shifted} = arith.addi {v}, {host.code.const(rank)} : index",
                f"{norm} = arith.select {neg}, {shifted}, {v} : index",
                f"{low} = arith.cmpi slt, {v}, {host.code.const(-rank)} : index",
                f"{high} = arith.cmpi sge, {v}, {host.code.const(rank)} : index",
                f"{bad} = arith.ori {low}, {high} : i1",
                f"{true} = arith.constant true",
                f"{ok} = arith.xori {bad}, {true} : i1",
            ):
                host.emit(line)
            message = f"axis {{actual}} is out of range for rank {{expected}}{where}"
            host.record_check(ok, v, host.code.const(rank), message)
            values.append((v, norm))
        if attrs["unique"]:
            for i, (vi, ni) in enumerate(values):
                for vj, nj in values[:i]:
                    ok = host.fresh("ax")
                    host.emit(f"{ok} = arith.cmpi ne, {ni}, {nj} : index")
                    host.record_check(ok, vi, vj, f"axis {{actual}} repeats axis {{expected}}{where}")
        host.bind(self.results[0], axes)


def check_axes(
    axes: ir.Value,
    x: ir.Value,
    op: str,
    unique: bool = True,
    extra: int = 0,
    *,
    loc: ir.Location | None = None,
) -> ir.Value:
    """``axes`` checked at run time against the rank of ``x`` (plus ``extra``)."""
    return CheckAxesOp.build([axes, x], {"extra": extra, "unique": unique, "op": op}, loc=loc).result


@relax_op
class CheckBoundOp(RelaxOp):
    """``value`` (an i64 tensor) unchanged, checked at run time: each entry lies in ``[0, d]`` for ``d`` dim
    ``axis`` of ``x``. A failure raises InputError naming ``what`` and ``op``.

    ``%k2 = "relax.check_bound"(%k, %x) {axis = 1 : i64, op = "TopK", what = "k"} :
    (!relax.tensor<[1], i64>, !relax.tensor<["n", 4], f32>) -> !relax.tensor<[1], i64>``
    """

    NAME = "check_bound"
    OPERANDS = (Operand("value"), Operand("x"))
    ATTRS = (Attr("axis", "int"), Attr("what", "str"), Attr("op", "str"))

    @classmethod
    def deduce(cls, operand_types: Sequence[RelaxType | None], attrs: dict[str, Any]) -> list[RelaxType]:
        v, x = tensor_operand(operand_types[0], "value"), tensor_operand(operand_types[1], "x")
        if (
            v.dtype not in (None, "i64")
            or v.shape is None
            or any(d is None or not d.is_const for d in v.shape)
        ):
            raise ShapeError(f"operand 'value' must be an i64 tensor of static shape, got {v}")
        if x.shape is None:
            raise ShapeError(f"operand 'x' {x} must have a known rank")
        normalize_axis(attrs["axis"], len(x.shape))
        return [v]

    def lower_host(self, host: HostLowering) -> None:
        value, x = (host.lookup(v) for v in self.operation.operands)
        attrs = self.attr_values()
        at = host.location(self.operation).removesuffix(": ")
        where = f" in {attrs['op']}" + (f" at {at}" if at else "")
        bound = host.dim(x, normalize_axis(attrs["axis"], len(x.type.shape)))
        count = 1
        for d in value.type.shape:
            count *= d.value
        for j in range(count):
            index = [host.code.const(0)] * (len(value.type.shape) - 1) + [host.code.const(j)]
            if not value.type.shape:
                index = []
            e, v, low, high, bad, true, ok = (host.fresh("bd") for _ in range(7))
            for line in (
                f"{e} = tensor.extract {value.name}[{', '.join(index)}] : {value.mlir}",
                f"{v} = arith.index_cast {e} : i64 to index",
                f"{low} = arith.cmpi slt, {v}, {host.code.const(0)} : index",
                f"{high} = arith.cmpi sgt, {v}, {bound} : index",
                f"{bad} = arith.ori {low}, {high} : i1",
                f"{true} = arith.constant true",
                f"{ok} = arith.xori {bad}, {true} : i1",
            ):
                host.emit(line)
            message = f"{attrs['what']} = {{actual}} is out of range [0, {{expected}}]{where}"
            host.record_check(ok, v, bound, message)
        host.bind(self.results[0], value)


def check_bound(
    value: ir.Value, x: ir.Value, axis: int, what: str, op: str, *, loc: ir.Location | None = None
) -> ir.Value:
    """``value`` checked at run time to lie in ``[0, dim axis of x]``."""
    return CheckBoundOp.build([value, x], {"axis": axis, "what": what, "op": op}, loc=loc).result


@relax_op
class CheckTrueOp(RelaxOp):
    """``value`` unchanged, checked at run time: the 0-d boolean ``cond`` holds; else InputError ``what``.

    ``%y = "relax.check_true"(%x, %ok) {op = "Dropout", what = "training mode drops at random"} :
    (!relax.tensor<["n"], f32>, !relax.tensor<[], i1>) -> !relax.tensor<["n"], f32>``
    """

    NAME = "check_true"
    OPERANDS = (Operand("value"), Operand("cond"))
    ATTRS = (Attr("what", "str"), Attr("op", "str"))

    @classmethod
    def deduce(cls, operand_types: Sequence[RelaxType | None], attrs: dict[str, Any]) -> list[RelaxType]:
        cond = tensor_operand(operand_types[1], "cond")
        if cond.dtype not in (None, "i1") or cond.shape not in (None, ()):
            raise ShapeError(f"operand 'cond' must be a 0-d i1 tensor, got {cond}")
        return [operand_types[0]]  # type: ignore[list-item]

    def lower_host(self, host: HostLowering) -> None:
        value, cond = (host.lookup(v) for v in self.operation.operands)
        attrs = self.attr_values()
        at = host.location(self.operation).removesuffix(": ")
        where = f" in {attrs['op']}" + (f" at {at}" if at else "")
        e, zero8, ok = host.fresh("ck"), host.fresh("ck"), host.fresh("ck")
        stored = host.element("i1")
        host.emit(f"{e} = tensor.extract {cond.name}[] : {cond.mlir}")
        host.emit(f"{zero8} = arith.constant 0 : {stored}")
        host.emit(f"{ok} = arith.cmpi ne, {e}, {zero8} : {stored}")
        zero = host.code.const(0)
        host.record_check(ok, zero, zero, attrs["what"] + where)
        host.bind(self.results[0], value)


def check_true(
    value: ir.Value, cond: ir.Value, what: str, op: str, *, loc: ir.Location | None = None
) -> ir.Value:
    """``value`` checked at run time: ``cond`` (a 0-d boolean) must hold, else InputError ``what``."""
    return CheckTrueOp.build([value, cond], {"what": what, "op": op}, loc=loc).result


@relax_op
class ReduceAxesOp(RelaxOp):
    """Reduction ``kind`` (sum, mean, max, min, prod) over axes read at run time from a 1-D i64 tensor.

    ``%y = "relax.reduce_axes"(%x, %axes) {keepdims = false, kind = "sum"} :
    (!relax.tensor<["n", 4, 5], f32>, !relax.tensor<[2], i64>) -> !relax.tensor<["?"], f32>``
    """

    NAME = "reduce_axes"
    OPERANDS = (Operand("x"), Operand("axes"))
    ATTRS = (Attr("kind", "str"), Attr("keepdims", "bool"))

    @classmethod
    def deduce(cls, operand_types: Sequence[RelaxType | None], attrs: dict[str, Any]) -> list[RelaxType]:
        x = tensor_operand(operand_types[0], "x")
        n = _axes_length(operand_types[1])
        if attrs["kind"] not in _KINDS:
            raise ShapeError(f"unknown reduction kind '{attrs['kind']}'; expected one of {', '.join(_KINDS)}")
        if x.shape is None or (n is None and not attrs["keepdims"]):
            return [TensorType(None, x.dtype)]
        if n is not None and n > len(x.shape):
            raise ShapeError(f"{n} axes for a tensor of rank {len(x.shape)}")
        if attrs["keepdims"]:
            return [TensorType(tuple(ONE if d == ONE else None for d in x.shape), x.dtype)]
        return [TensorType((None,) * (len(x.shape) - n), x.dtype)]  # type: ignore[operator]

    @classmethod
    def lower(cls, k: KernelBuilder) -> list[KernelValue]:
        """A window reduction: result dim i is 1 where axis i is reduced (the window spans the dim), else
        the dim (the window is 1); ``linalg.generic`` over (result, window) reads x at result + window."""
        x, axes = k.ins
        kind, keepdims, rank = k.attrs["kind"], k.attrs["keepdims"], x.rank
        if x.dtype == "i1" and kind not in ("max", "min"):
            raise k.fail(f"{kind} of an i1 tensor is not lowered: convert it with relax.astype first")
        one = k.const(1)
        norms = []
        for j in range(axes.shape[0].value):  # type: ignore[union-attr]
            e = k.scalar(f"tensor.extract {axes.name}[{k.const(j)}]", axes.mlir)
            v = k.typed(f"arith.index_cast {e} : i64 to index")
            neg = k.scalar(f"arith.cmpi slt, {v}, {k.const(0)}", "index")
            shifted = k.scalar(f"arith.addi {v}, {k.const(rank)}", "index")
            norms.append(k.scalar(f"arith.select {neg}, {shifted}, {v}", "index"))
        masks = []
        for i in range(rank):
            m = k.typed("arith.constant false")
            for a in norms:
                m = k.scalar(f"arith.ori {m}, {k.scalar(f'arith.cmpi eq, {a}, {k.const(i)}', 'index')}", "i1")
            masks.append(m)
        dims = [k.dim(x, i) for i in range(rank)]
        kept = [k.scalar(f"arith.select {m}, {one}, {d}", "index") for m, d in zip(masks, dims)]
        window = [k.scalar(f"arith.select {m}, {d}, {one}", "index") for m, d in zip(masks, dims)]
        loose = TensorType((None,) * rank, x.dtype)
        acc = KernelValue(k.fresh("acc"), loose, builtin_tensor(loose))
        k.emit(f"{acc.name} = tensor.empty({', '.join(kept)}) : {acc.mlir}")
        wt = TensorType((None,) * rank, "i8")
        win = KernelValue(k.fresh("win"), wt, builtin_tensor(wt))
        k.emit(f"{win.name} = tensor.empty({', '.join(window)}) : {win.mlir}")
        t, fl = element(x.dtype), is_float(x.dtype)
        unsigned = unsigned_order(x.dtype)
        op = COMBINE[kind][0 if fl else 2 if unsigned else 1]
        acc = k.fill(k.constant(identity_value(kind, x.dtype), x.dtype), acc)
        ds = [f"d{i}" for i in range(2 * rank)]
        head = f"({', '.join(ds)})"
        maps = [
            f"{head} -> ({', '.join(f'd{i} + d{rank + i}' for i in range(rank))})",
            f"{head} -> ({', '.join(ds[rank:])})",
            f"{head} -> ({', '.join(ds[:rank])})",
        ]
        iterators = ["parallel"] * rank + ["reduction"] * rank
        [r] = k.generic([x, win], [acc], maps, iterators, lambda a: [k.scalar(f"{op} {a[0]}, {a[2]}", t)])
        if kind == "mean":
            count = one
            for w in window:
                count = k.scalar(f"arith.muli {count}, {w}", "index")
            r = _divide(k, r, count, x.dtype)
        if keepdims:
            return [_into_result(k, r, None)]
        seen = k.const(0)  # kept axes before axis i
        sizes = []
        positions = []
        for m in masks:
            positions.append(seen)
            keep = k.scalar(f"arith.select {m}, {k.const(0)}, {one}", "index")
            seen = k.scalar(f"arith.addi {seen}, {keep}", "index")
        true = k.typed("arith.constant true")
        for p in range(len(k.result_types[0].shape or ())):
            s = k.const(0)
            for m, pos, d in zip(masks, positions, dims):
                here = k.scalar(f"arith.cmpi eq, {pos}, {k.const(p)}", "index")
                take = k.scalar(f"arith.andi {here}, {k.scalar(f'arith.xori {m}, {true}', 'i1')}", "i1")
                s = k.scalar(f"arith.select {take}, {d}, {s}", "index")
            sizes.append(s)
        return [_into_result(k, r, sizes)]


def _divide(k: KernelBuilder, r: KernelValue, count: str, dtype: str) -> KernelValue:
    """``r`` divided by the element count ``count`` (an index; integers round toward zero, 0 for none)."""
    t = element(dtype)
    wide = k.typed(f"arith.index_cast {count} : index to i64")
    if is_float(dtype):
        n = k.typed(f"arith.sitofp {wide} : i64 to {t}")
        div = "arith.divf"
    else:
        wide = k.scalar(f"arith.maxsi {wide}, {k.scalar('arith.constant 1', 'i64')}", "i64")
        n = wide if t == "i64" else k.typed(f"arith.trunci {wide} : i64 to {t}")
        div = "arith.divui" if dtype.startswith("ui") else "arith.divsi"
    rank = r.rank
    ident = f"({', '.join(f'd{i}' for i in range(rank))}) -> ({', '.join(f'd{i}' for i in range(rank))})"
    [out] = k.generic([], [r], [ident], ["parallel"] * rank, lambda a: [k.scalar(f"{div} {a[0]}, {n}", t)])
    return out


def _into_result(k: KernelBuilder, r: KernelValue, sizes: list[str] | None) -> KernelValue:
    """``r`` as the op's result: reshaped to ``sizes`` (index values) if given, cast to the result type,
    copied into the destination when the kernel has one."""
    t = k.result_types[0]
    mlir = builtin_tensor(t)
    if sizes is not None:
        loose = TensorType((None,) * len(sizes), r.dtype)
        shape = k.typed(
            f"tensor.from_elements {', '.join(sizes)} : tensor<{len(sizes)}xindex>"
            if sizes
            else "tensor.empty() : tensor<0xindex>"
        )
        name = k.fresh("t")
        k.emit(
            f"{name} = tensor.reshape {r.name}({shape}) : ({r.mlir}, tensor<{len(sizes)}xindex>) -> "
            f"{builtin_tensor(loose)}"
        )
        r = KernelValue(name, loose, builtin_tensor(loose))
    if r.mlir != mlir:
        r = k.op(f"tensor.cast {r.name} : {r.mlir} to {mlir}", t)
    if k.allocating:
        return r
    return k.copy(r, k.destination(0))


def reduce_axes(
    x: ir.Value, axes: ir.Value, kind: str, keepdims: bool = False, *, loc: ir.Location | None = None
) -> ir.Value:
    """Reduction ``kind`` of ``x`` over the run-time ``axes`` (a 1-D i64 tensor of static length)."""
    return ReduceAxesOp.build([x, axes], {"kind": kind, "keepdims": keepdims}, loc=loc).result


class CumulativeAxisOp(RelaxOp):
    """Base of cumsum/cumprod along an axis read at run time (a 1-element i64 tensor, checked by
    ``relax.check_axes``); ``exclusive`` and ``reverse`` as in ``relax.cumsum``."""

    OPERANDS = (Operand("x"), Operand("axis"))
    ATTRS = (Attr("exclusive", "bool"), Attr("reverse", "bool"))

    @classmethod
    def deduce(cls, operand_types: Sequence[RelaxType | None], attrs: dict[str, Any]) -> list[RelaxType]:
        x = tensor_operand(operand_types[0], "x")
        if _axes_length(operand_types[1], "axis") not in (None, 1):
            raise ShapeError(f"operand 'axis' must hold one axis, got {operand_types[1]}")
        return [x]

    @classmethod
    def lower(cls, k: KernelBuilder) -> list[KernelValue]:
        """``relax.cumsum``'s scan (``reduce.cumulate``) along the axis read at run time. An axis out of range,
        which ``relax.check_axes`` reports, is clamped into ``[0, rank)``, so the kernel still writes every
        element of its result."""
        x = k.ins[0]
        rank = x.rank
        if rank == 0:
            raise k.fail(f"{cls.NAME} of {x.type} is not lowered")
        e = k.scalar(f"tensor.extract {k.ins[1].name}[{k.const(0)}]", k.ins[1].mlir)
        a = k.typed(f"arith.index_cast {e} : i64 to index")
        neg = k.scalar(f"arith.cmpi slt, {a}, {k.const(0)}", "index")
        a = k.scalar(
            f"arith.select {neg}, {k.scalar(f'arith.addi {a}, {k.const(rank)}', 'index')}, {a}", "index"
        )
        a = k.scalar(f"arith.maxsi {a}, {k.const(0)}", "index")
        a = k.scalar(f"arith.minsi {a}, {k.const(rank - 1)}", "index")
        out = k.destination(0, [k.dim(x, j) for j in range(rank)])
        kind = "sum" if cls.NAME == "cumsum_axis" else "prod"
        return [cumulate(k, x, out, kind, a, k.attrs["exclusive"], k.attrs["reverse"])]


@relax_op
class CumsumAxisOp(CumulativeAxisOp):
    """Cumulative sum along an axis read at run time.

    ``%y = "relax.cumsum_axis"(%x, %axis) {exclusive = false, reverse = false} :
    (!relax.tensor<["n", 4], f32>, !relax.tensor<[1], i64>) -> !relax.tensor<["n", 4], f32>``
    """

    NAME = "cumsum_axis"


@relax_op
class CumprodAxisOp(CumulativeAxisOp):
    """Cumulative product along an axis read at run time.

    ``%y = "relax.cumprod_axis"(%x, %axis) {exclusive = true, reverse = false} :
    (!relax.tensor<["n", 4], f32>, !relax.tensor<[1], i64>) -> !relax.tensor<["n", 4], f32>``
    """

    NAME = "cumprod_axis"


def cumulate_axis(
    x: ir.Value,
    axis: ir.Value,
    kind: str,
    exclusive: bool = False,
    reverse: bool = False,
    *,
    loc: ir.Location | None = None,
) -> ir.Value:
    """Cumulative ``kind`` ("sum" or "prod") of ``x`` along the run-time ``axis`` (a 1-element i64 tensor)."""
    cls = CumsumAxisOp if kind == "sum" else CumprodAxisOp
    return cls.build([x, axis], {"exclusive": exclusive, "reverse": reverse}, loc=loc).result


@relax_op
class SliceRuntimeOp(RelaxOp):
    """ONNX Slice with ``starts``, ``ends``, ``axes`` and ``steps`` (1-D i64 tensors of one static length) read
    at run time: negative starts/ends count from the end and are clamped as in ONNX; the result dims are
    unknown. Axes are checked by ``relax.check_axes``; the importer rejects a step of 0 (``relax.check_true``).

    ``%y = "relax.slice_runtime"(%x, %b, %e, %a, %s) : (!relax.tensor<["n", 4], f32>, !relax.tensor<[1], i64>,
    !relax.tensor<[1], i64>, !relax.tensor<[1], i64>, !relax.tensor<[1], i64>) -> !relax.tensor<["?", "?"], f32>``
    """

    NAME = "slice_runtime"
    OPERANDS = (Operand("x"), Operand("starts"), Operand("ends"), Operand("axes"), Operand("steps"))

    @classmethod
    def deduce(cls, operand_types: Sequence[RelaxType | None], attrs: dict[str, Any]) -> list[RelaxType]:
        x = tensor_operand(operand_types[0], "x")
        lengths = {_axes_length(t, n) for t, n in zip(operand_types[1:], ("starts", "ends", "axes", "steps"))}
        if len(lengths) != 1 or None in lengths:
            raise ShapeError(f"starts, ends, axes and steps need one static length, got {operand_types[1:]}")
        return [TensorType(None if x.shape is None else (None,) * len(x.shape), x.dtype)]

    @classmethod
    def lower(cls, k: KernelBuilder) -> list[KernelValue]:
        """Per axis, (start, step, count) chosen at run time (the whole axis where no entry names it); one
        ``linalg.generic`` over the result reads x at start + index * step."""
        x, starts, ends, axes, steps = k.ins
        rank, n = x.rank, axes.shape[0].value  # type: ignore[union-attr]

        def sel(c: str, a: str, b: str, t: str = "i64") -> str:
            return k.scalar(f"arith.select {c}, {a}, {b}", t)

        def op(name: str, a: str, b: str, t: str = "i64") -> str:
            return k.scalar(f"arith.{name} {a}, {b}", t)

        def read(v: KernelValue, j: int) -> str:
            return k.scalar(f"tensor.extract {v.name}[{k.const(j)}]", v.mlir)

        zero, one, minus_one = (k.scalar(f"arith.constant {c}", "i64") for c in (0, 1, -1))
        dims = [k.typed(f"arith.index_cast {k.dim(x, i)} : index to i64") for i in range(rank)]
        begin, stride, count = [zero] * rank, [one] * rank, list(dims)
        for j in range(n):
            a = read(axes, j)
            a = sel(op("cmpi slt,", a, zero), op("addi", a, k.scalar(f"arith.constant {rank}", "i64")), a)
            s = read(steps, j)
            s = sel(op("cmpi eq,", s, zero), one, s)
            up = op("cmpi sgt,", s, zero)
            for i in range(rank):
                d = dims[i]
                last = op("subi", d, one)
                b, e = read(starts, j), read(ends, j)
                b = sel(op("cmpi slt,", b, zero), op("addi", b, d), b)
                e = sel(op("cmpi slt,", e, zero), op("addi", e, d), e)
                b = sel(up, op("minsi", op("maxsi", b, zero), d), op("minsi", op("maxsi", b, zero), last))
                e = sel(
                    up, op("minsi", op("maxsi", e, zero), d), op("minsi", op("maxsi", e, minus_one), last)
                )
                span = sel(up, op("subi", e, b), op("subi", b, e))
                size = sel(up, s, op("subi", zero, s))
                c = op("divsi", op("addi", op("maxsi", span, zero), op("subi", size, one)), size)
                hit = op("cmpi eq,", a, k.scalar(f"arith.constant {i}", "i64"))
                begin[i], stride[i], count[i] = (
                    sel(hit, b, begin[i]),
                    sel(hit, s, stride[i]),
                    sel(hit, c, count[i]),
                )
        sizes = [k.typed(f"arith.index_cast {c} : i64 to index") for c in count]
        out = k.destination(0, sizes)
        starts_ix = [k.typed(f"arith.index_cast {b} : i64 to index") for b in begin]
        strides_ix = [k.typed(f"arith.index_cast {s} : i64 to index") for s in stride]

        def body(_: list[str]) -> list[str]:
            coords = []
            for i in range(rank):
                o = k.scalar(f"linalg.index {i}", "index")
                coords.append(op("addi", starts_ix[i], op("muli", o, strides_ix[i], "index"), "index"))
            return [k.scalar(f"tensor.extract {x.name}[{', '.join(coords)}]", x.mlir)]

        ident = f"({', '.join(f'd{i}' for i in range(rank))}) -> ({', '.join(f'd{i}' for i in range(rank))})"
        return k.generic([], [out], [ident], ["parallel"] * rank, body)


def slice_runtime(
    x: ir.Value,
    starts: ir.Value,
    ends: ir.Value,
    axes: ir.Value,
    steps: ir.Value,
    *,
    loc: ir.Location | None = None,
) -> ir.Value:
    """ONNX Slice of ``x`` with every parameter read at run time (1-D i64 tensors of one static length)."""
    return SliceRuntimeOp.build([x, starts, ends, axes, steps], loc=loc).result


@relax_op
class Col2imRuntimeOp(RelaxOp):
    """ONNX Col2Im with ``image_shape`` and ``block_shape`` (1-D i64 tensors of static length) read at run
    time: x [N, C * prod(block), L] -> [N, C, *image]; each output element sums the block taps that land on it.

    ``%y = "relax.col2im_runtime"(%x, %image, %block) {dilations = [1, 1], pads = [0, 0, 0, 0],
    strides = [1, 1]} : (!relax.tensor<[1, 4, 9], f32>, !relax.tensor<[2], i64>, !relax.tensor<[2], i64>)
    -> !relax.tensor<[1, "?", "?", "?"], f32>``
    """

    NAME = "col2im_runtime"
    OPERANDS = (Operand("x"), Operand("image"), Operand("block"))
    ATTRS = (Attr("dilations", "ints"), Attr("pads", "ints"), Attr("strides", "ints"))

    @classmethod
    def deduce(cls, operand_types: Sequence[RelaxType | None], attrs: dict[str, Any]) -> list[RelaxType]:
        x = tensor_operand(operand_types[0], "x")
        n = _axes_length(operand_types[1], "image")
        if n is None or _axes_length(operand_types[2], "block") != n:
            raise ShapeError(f"image and block need one static length, got {operand_types[1:]}")
        if x.shape is not None and len(x.shape) != 3:
            raise ShapeError(f"operand 'x' must have rank 3, got {x}")
        if len(attrs["dilations"]) != n or len(attrs["strides"]) != n or len(attrs["pads"]) != 2 * n:
            raise ShapeError(f"dilations and strides need {n} values, pads {2 * n}")
        batch = None if x.shape is None else x.shape[0]
        return [TensorType((batch, *(None,) * (n + 1)), x.dtype)]

    @classmethod
    def lower(cls, k: KernelBuilder) -> list[KernelValue]:
        """One ``linalg.generic`` over (output, block window): a tap adds where its column position is a
        whole stride step inside the column grid."""
        x, image, block = k.ins
        n = image.shape[0].value  # type: ignore[union-attr]
        dil, pads, strides = k.attrs["dilations"], k.attrs["pads"], k.attrs["strides"]

        def op(name: str, a: str, b: str, t: str = "index") -> str:
            return k.scalar(f"arith.{name} {a}, {b}", t)

        def read(v: KernelValue, j: int) -> str:
            return k.typed(
                f"arith.index_cast {k.scalar(f'tensor.extract {v.name}[{k.const(j)}]', v.mlir)} : i64 to index"
            )

        one, zero = k.const(1), k.const(0)
        dims, blocks = [read(image, j) for j in range(n)], [read(block, j) for j in range(n)]
        taps = one
        for b in blocks:
            taps = op("muli", taps, b)
        channels = op("divsi", k.dim(x, 1), op("maxsi", taps, one))
        counts = []
        for i in range(n):
            span = op(
                "subi",
                op("addi", dims[i], k.const(pads[i] + pads[n + i])),
                op("muli", k.const(dil[i]), op("subi", blocks[i], one)),
            )
            counts.append(op("addi", op("floordivsi", op("subi", span, one), k.const(strides[i])), one))
        out = k.destination(0, [None, channels, *dims])
        out = k.fill(k.constant(0, x.dtype), out)
        wt = TensorType((None,) * n, "i8")
        win = KernelValue(k.fresh("win"), wt, builtin_tensor(wt))
        k.emit(f"{win.name} = tensor.empty({', '.join(blocks)}) : {win.mlir}")
        t = element(x.dtype)
        rank = 2 + n
        last_col = op("subi", k.dim(x, 2), one)
        last_row = op("subi", k.dim(x, 1), one)

        def body(a: list[str]) -> list[str]:
            ok = k.typed("arith.constant true")
            column, row = zero, k.scalar(f"linalg.index {1}", "index")
            for i in range(n):
                y = k.scalar(f"linalg.index {2 + i}", "index")
                tap = k.scalar(f"linalg.index {rank + i}", "index")
                p = op("subi", op("addi", y, k.const(pads[i])), op("muli", tap, k.const(dil[i])))
                q = op("floordivsi", p, k.const(strides[i]))
                exact = op("cmpi eq,", op("muli", q, k.const(strides[i])), p)
                inside = op("andi", op("cmpi sge,", q, zero), op("cmpi slt,", q, counts[i]), "i1")
                ok = op("andi", ok, op("andi", exact, inside, "i1"), "i1")
                column = op("addi", op("muli", column, counts[i]), q)
                row = op("addi", op("muli", row, blocks[i]), tap)
            column = op("minsi", op("maxsi", column, zero), last_col)
            row = op("minsi", op("maxsi", row, zero), last_row)
            b = k.scalar("linalg.index 0", "index")
            v = k.scalar(f"tensor.extract {x.name}[{b}, {row}, {column}]", x.mlir)
            add = "arith.addf" if is_float(x.dtype) else "arith.addi"
            return [k.scalar(f"arith.select {ok}, {k.scalar(f'{add} {a[1]}, {v}', t)}, {a[1]}", t)]

        ds = [f"d{i}" for i in range(rank + n)]
        maps = [
            f"({', '.join(ds)}) -> ({', '.join(ds[rank:])})",
            f"({', '.join(ds)}) -> ({', '.join(ds[:rank])})",
        ]
        return k.generic([win], [out], maps, ["parallel"] * rank + ["reduction"] * n, body)


def col2im_runtime(
    x: ir.Value,
    image: ir.Value,
    block: ir.Value,
    dilations: Sequence[int],
    pads: Sequence[int],
    strides: Sequence[int],
    *,
    loc: ir.Location | None = None,
) -> ir.Value:
    """ONNX Col2Im of ``x`` with ``image`` and ``block`` shapes read at run time."""
    attrs = {"dilations": list(dilations), "pads": list(pads), "strides": list(strides)}
    return Col2imRuntimeOp.build([x, image, block], attrs, loc=loc).result

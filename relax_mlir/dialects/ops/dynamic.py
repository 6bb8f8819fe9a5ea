"""Ops whose output shapes depend on data: their results are coarse (rank known, dims unknown).

Restore precision with ``relax.match_cast``, which binds new symbols and is checked at run time.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from mlir import ir

from relax_mlir.dialects.dims import tensor_operand
from relax_mlir.dialects.registry import Operand, RelaxOp, relax_op
from relax_mlir.dialects.types import RelaxType, TensorType
from relax_mlir.lowering.kernel import (
    KernelBuilder,
    KernelValue,
    builtin_tensor,
    element,
    is_float,
)
from relax_mlir.lowering.ordering import equal, precedes
from relax_mlir.shape_infer.expr import const


@relax_op
class UniqueOp(RelaxOp):
    """The sorted unique elements of the flattened tensor (length known only at run time).

    ``%u = "relax.unique"(%x) : (!relax.tensor<["n", 4], i64>) -> !relax.tensor<["?"], i64>``
    """

    NAME = "unique"
    OPERANDS = (Operand("x"),)

    @classmethod
    def deduce(cls, operand_types: Sequence[RelaxType | None], attrs: dict[str, Any]) -> list[RelaxType]:
        x = tensor_operand(operand_types[0], "x")
        return [TensorType((None,), x.dtype)]

    @classmethod
    def lower(cls, k: KernelBuilder) -> list[KernelValue]:
        """Merge sort (bottom-up, scf loops), count the distinct values, allocate, copy them out.

        NaNs sort last and count as one value, as in numpy.unique.
        """
        x = k.flatten(k.ins[0])
        if x.shape[0] is not None and x.shape[0].is_const:  # the sort's buffers are sized at run time
            t = TensorType((None,), x.dtype)
            x = KernelValue(
                k.typed(f"tensor.cast {x.name} : {x.mlir} to {builtin_tensor(t)}"), t, builtin_tensor(t)
            )
        n = k.dim(x, 0)
        s = _merge_sort(k, x, n)
        count = _count_distinct(k, s, n)
        out_type = TensorType((None,), x.dtype)
        out = KernelValue(k.fresh("unique"), out_type, builtin_tensor(out_type))
        k.emit(f"{out.name} = tensor.empty({count}) : {out.mlir}")
        p, pos, acc, r = k.fresh("p"), k.fresh("pos"), k.fresh("acc"), k.fresh("r")

        def step() -> tuple[str, str]:
            prev = k.scalar(
                f"arith.maxsi {k.scalar(f'arith.subi {p}, {k.const(1)}', 'index')}, {k.const(0)}", "index"
            )
            a = k.scalar(f"tensor.extract {s.name}[{p}]", s.mlir)
            b = k.scalar(f"tensor.extract {s.name}[{prev}]", s.mlir)
            first = k.scalar(f"arith.cmpi eq, {p}, {k.const(0)}", "index")
            new = k.scalar(f"arith.ori {first}, {_differ(k, x.dtype, a, b)}", "i1")
            written = _insert_if(
                k, new, lambda: k.typed(f"tensor.insert {a} into {acc}[{pos}] : {out.mlir}"), acc, out
            )
            moved = k.scalar(f"arith.addi {pos}, {k.const(1)}", "index")
            return k.scalar(f"arith.select {new}, {moved}, {pos}", "index"), written

        lines, (next_pos, written) = k.capture(step)
        k.emit(
            f"{r}:2 = scf.for {p} = {k.const(0)} to {n} step {k.const(1)} "
            f"iter_args({pos} = {k.const(0)}, {acc} = {out.name}) -> (index, {out.mlir}) {{",
            *("  " + line for line in lines),
            f"  scf.yield {next_pos}, {written} : index, {out.mlir}",
            "}",
        )
        return [KernelValue(f"{r}#1", out_type, out.mlir)]


def unique(x: ir.Value, *, loc: ir.Location | None = None) -> ir.Value:
    """Sorted unique elements of ``x``."""
    return UniqueOp.build([x], loc=loc).result


@relax_op
class NonzeroOp(RelaxOp):
    """Indices of the non-zero elements, shape (rank, count) with the count known only at run time.

    ``%i = "relax.nonzero"(%x) : (!relax.tensor<["n", 4], f32>) -> !relax.tensor<[2, "?"], i64>``
    """

    NAME = "nonzero"
    OPERANDS = (Operand("x"),)

    @classmethod
    def deduce(cls, operand_types: Sequence[RelaxType | None], attrs: dict[str, Any]) -> list[RelaxType]:
        x = tensor_operand(operand_types[0], "x")
        rank = None if x.shape is None else const(len(x.shape))
        return [TensorType((rank, None), "i64")]

    @classmethod
    def lower(cls, k: KernelBuilder) -> list[KernelValue]:
        """Count the non-zero elements (a linalg reduction), allocate [rank, count], fill it in one scf loop."""
        x = k.ins[0]
        rank = x.rank
        if rank == 0:
            raise k.fail("nonzero of a 0-d tensor is not defined (numpy refuses it too): reshape it to 1-D")
        flat = k.flatten(x)
        total = k.dim(flat, 0)
        count = _count(k, flat, lambda a: _nonzero(k, x.dtype, a[0]))
        out_type = TensorType((const(rank), None), "i64")
        out = KernelValue(k.fresh("nonzero"), out_type, builtin_tensor(out_type))
        k.emit(f"{out.name} = tensor.empty({count}) : {out.mlir}")
        strides, stride = [], k.const(1)
        for axis in reversed(range(rank)):
            strides.insert(0, stride)
            stride = k.scalar(f"arith.muli {stride}, {k.dim(x, axis)}", "index")
        p, pos, acc_out, r = k.fresh("p"), k.fresh("pos"), k.fresh("acc"), k.fresh("r")

        def step() -> tuple[str, str]:
            v = k.scalar(f"tensor.extract {flat.name}[{p}]", flat.mlir)
            nz = _nonzero(k, x.dtype, v)

            def write() -> str:
                cur = acc_out
                for axis in range(rank):
                    q = k.scalar(f"arith.divui {p}, {strides[axis]}", "index")
                    coord = k.scalar(f"arith.remui {q}, {k.dim(x, axis)}", "index")
                    value = k.typed(f"arith.index_cast {coord} : index to i64")
                    cur = k.typed(f"tensor.insert {value} into {cur}[{k.const(axis)}, {pos}] : {out.mlir}")
                return cur

            written = _insert_if(k, nz, write, acc_out, out)
            moved = k.scalar(f"arith.addi {pos}, {k.const(1)}", "index")
            return k.scalar(f"arith.select {nz}, {moved}, {pos}", "index"), written

        lines, (next_pos, written) = k.capture(step)
        k.emit(
            f"{r}:2 = scf.for {p} = {k.const(0)} to {total} step {k.const(1)} "
            f"iter_args({pos} = {k.const(0)}, {acc_out} = {out.name}) -> (index, {out.mlir}) {{",
            *("  " + line for line in lines),
            f"  scf.yield {next_pos}, {written} : index, {out.mlir}",
            "}",
        )
        return [KernelValue(f"{r}#1", out_type, out.mlir)]


def nonzero(x: ir.Value, *, loc: ir.Location | None = None) -> ir.Value:
    """Indices of the non-zero elements of ``x``."""
    return NonzeroOp.build([x], loc=loc).result


# -- lowering helpers ------------------------------------------------------------------------------------


def _insert_if(k: KernelBuilder, cond: str, write: Callable[[], str], acc: str, out: KernelValue) -> str:
    """``scf.if cond`` yielding ``write()`` (tensor inserts into ``acc``), else ``acc`` unchanged."""
    lines, written = k.capture(write)
    result = k.fresh("w")
    k.emit(
        f"{result} = scf.if {cond} -> ({out.mlir}) {{",
        *("  " + line for line in lines),
        f"  scf.yield {written} : {out.mlir}",
        "} else {",
        f"  scf.yield {acc} : {out.mlir}",
        "}",
    )
    return result


def _count(
    k: KernelBuilder, flat: KernelValue, predicate: Callable[[list[str]], str], *more: KernelValue
) -> str:
    """How many positions of the 1-D ``flat`` (and ``more``, same length) satisfy ``predicate`` (an index value)."""
    zero = k.constant(0, "i64")
    empty = k.typed("tensor.empty() : tensor<i64>")
    acc = k.fill(zero, KernelValue(empty, TensorType((), "i64"), "tensor<i64>"))

    def body(a: list[str]) -> list[str]:
        one = k.typed(f"arith.extui {predicate(a)} : i1 to i64")
        return [k.scalar(f"arith.addi {a[-1]}, {one}", "i64")]

    inputs = [flat, *more]
    maps = ["(d0) -> (d0)"] * len(inputs) + ["(d0) -> ()"]
    [c] = k.generic(inputs, [acc], maps, ["reduction"], body)
    return k.typed(f"arith.index_cast {k.typed(f'tensor.extract {c.name}[] : tensor<i64>')} : i64 to index")


def _nonzero(k: KernelBuilder, dtype: str, v: str) -> str:
    """``v != 0`` (NaN counts as non-zero, -0.0 as zero, as in numpy)."""
    t = element(dtype)
    zero = k.constant(0, dtype)
    if is_float(dtype):
        return k.scalar(f"arith.cmpf une, {v}, {zero}", t)
    return k.scalar(f"arith.cmpi ne, {v}, {zero}", t)


def _differ(k: KernelBuilder, dtype: str, a: str, b: str) -> str:
    """``a != b`` with all NaNs equal (numpy.unique's equal_nan)."""
    return k.scalar(f"arith.xori {equal(k, dtype, a, b)}, {k.flag(True)}", "i1")


def _merge_pass(k: KernelBuilder, x: KernelValue, n: str, src: str, dst: str, width: str) -> str:
    """Merge the sorted runs of ``width`` of ``src`` pairwise into ``dst`` (stable); returns the new ``dst``."""
    t, c1 = element(x.dtype), k.const(1)
    true = k.flag(True)
    lo, d, p, i, j, dd, merged, result = (k.fresh(v) for v in ("lo", "d", "p", "i", "j", "dd", "m", "pass"))
    two_w = k.scalar(f"arith.muli {width}, {k.const(2)}", "index")

    def run() -> str:
        mid = k.scalar(f"arith.minsi {k.scalar(f'arith.addi {lo}, {width}', 'index')}, {n}", "index")
        hi = k.scalar(f"arith.minsi {k.scalar(f'arith.addi {lo}, {two_w}', 'index')}, {n}", "index")
        last = k.scalar(f"arith.subi {hi}, {c1}", "index")

        def element_step() -> tuple[str, str, str]:
            a = k.scalar(f"tensor.extract {src}[{k.scalar(f'arith.minsi {i}, {last}', 'index')}]", x.mlir)
            b = k.scalar(f"tensor.extract {src}[{k.scalar(f'arith.minsi {j}, {last}', 'index')}]", x.mlir)
            left = k.scalar(f"arith.cmpi slt, {i}, {mid}", "index")
            right_done = k.scalar(f"arith.cmpi sge, {j}, {hi}", "index")
            not_less = k.scalar(f"arith.xori {precedes(k, False, False, x.dtype, b, a)}, {true}", "i1")
            either = k.scalar(f"arith.ori {right_done}, {not_less}", "i1")
            take_left = k.scalar(f"arith.andi {left}, {either}", "i1")
            v = k.scalar(f"arith.select {take_left}, {a}, {b}", t)
            written = k.typed(f"tensor.insert {v} into {dd}[{p}] : {x.mlir}")
            i1 = k.scalar(f"arith.addi {i}, {c1}", "index")
            j1 = k.scalar(f"arith.addi {j}, {c1}", "index")
            i2 = k.scalar(f"arith.select {take_left}, {i1}, {i}", "index")
            j2 = k.scalar(f"arith.select {take_left}, {j}, {j1}", "index")
            return i2, j2, written

        lines, (i2, j2, written) = k.capture(element_step)
        k.emit(
            f"{merged}:3 = scf.for {p} = {lo} to {hi} step {c1} iter_args({i} = {lo}, {j} = {mid}, {dd} = {d}) "
            f"-> (index, index, {x.mlir}) {{",
            *("  " + line for line in lines),
            f"  scf.yield {i2}, {j2}, {written} : index, index, {x.mlir}",
            "}",
        )
        return f"{merged}#2"

    lines, written = k.capture(run)
    k.emit(
        f"{result} = scf.for {lo} = {k.const(0)} to {n} step {two_w} iter_args({d} = {dst}) -> ({x.mlir}) {{",
        *("  " + line for line in lines),
        f"  scf.yield {written} : {x.mlir}",
        "}",
    )
    return result


def _merge_sort(k: KernelBuilder, x: KernelValue, n: str) -> KernelValue:
    """``x`` (1-D, ``n`` elements) sorted, stable: bottom-up merge sort with runs of width 1, 2, 4, ...

    Each loop iteration merges twice, ``a`` into the scratch ``b`` then back, so both loop-carried
    tensors are updated in place (bufferization needs each yield equivalent to its iteration argument).
    """
    a0, b0, w0 = k.fresh("a"), k.fresh("b"), k.fresh("width")
    a, b, w, more, res = k.fresh("a"), k.fresh("b"), k.fresh("w"), k.fresh("more"), k.fresh("sorted")
    scratch = k.typed(f"tensor.empty({n}) : {x.mlir}")

    def twice() -> tuple[str, str, str]:
        b2 = _merge_pass(k, x, n, a, b, w)
        w2 = k.scalar(f"arith.muli {w}, {k.const(2)}", "index")
        a2 = _merge_pass(k, x, n, b2, a, w2)
        return a2, b2, k.scalar(f"arith.muli {w}, {k.const(4)}", "index")

    lines, (a2, b2, w4) = k.capture(twice)
    types = f"{x.mlir}, {x.mlir}, index"
    k.emit(
        f"{res}:3 = scf.while ({a0} = {x.name}, {b0} = {scratch}, {w0} = {k.const(1)}) : ({types}) -> ({types}) {{",
        f"  {more} = arith.cmpi slt, {w0}, {n} : index",
        f"  scf.condition({more}) {a0}, {b0}, {w0} : {types}",
        "} do {",
        f"^bb0({a}: {x.mlir}, {b}: {x.mlir}, {w}: index):",
        *("  " + line for line in lines),
        f"  scf.yield {a2}, {b2}, {w4} : {types}",
        "}",
    )
    return KernelValue(f"{res}#0", x.type, x.mlir)


def _count_distinct(k: KernelBuilder, s: KernelValue, n: str) -> str:
    """The number of distinct values of the sorted 1-D ``s`` of ``n`` elements (an index value)."""
    c0, c1 = k.const(0), k.const(1)
    m = k.scalar(f"arith.maxsi {k.scalar(f'arith.subi {n}, {c1}', 'index')}, {c0}", "index")
    t = TensorType((None,), s.dtype)
    tail = KernelValue(
        k.typed(f"tensor.extract_slice {s.name}[1] [{m}] [1] : {s.mlir} to {s.mlir}"), t, s.mlir
    )
    head = KernelValue(
        k.typed(f"tensor.extract_slice {s.name}[0] [{m}] [1] : {s.mlir} to {s.mlir}"), t, s.mlir
    )
    steps = _count(k, tail, lambda a: _differ(k, s.dtype, a[0], a[1]), head)
    return k.scalar(f"arith.addi {steps}, {k.scalar(f'arith.minsi {n}, {c1}', 'index')}", "index")

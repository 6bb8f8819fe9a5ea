"""Joining and splitting along one axis: ``concat`` and ``split``.

Their kernels copy through slices at symbolic offsets (``tensor.insert_slice`` / ``tensor.extract_slice``);
split sections that the deduction only assumed equal are checked at run time.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from mlir import ir

from relax_mlir.dialects.dims import dim_min, join_dtype, normalize_axis, same_dim, tensor_operand
from relax_mlir.dialects.registry import Attr, Operand, RelaxOp, relax_op
from relax_mlir.dialects.types import Dim, RelaxType, TensorType
from relax_mlir.errors import ShapeError
from relax_mlir.lowering.kernel import KernelBuilder, KernelValue
from relax_mlir.shape_infer.expr import const, floordiv


@relax_op
class ConcatOp(RelaxOp):
    """Concatenate tensors along ``axis``; the result dim is the symbolic sum.

    ``%z = "relax.concat"(%x, %y) {axis = 0 : i64} : (!relax.tensor<["n", 4], f32>, !relax.tensor<["m", 4], f32>)
    -> !relax.tensor<["m + n", 4], f32>``
    """

    NAME = "concat"
    OPERANDS = (Operand("xs", variadic=True),)
    ATTRS = (Attr("axis", "int"),)
    BIT_MOVING = True

    @classmethod
    def deduce(cls, operand_types: Sequence[RelaxType | None], attrs: dict[str, Any]) -> list[RelaxType]:
        if not operand_types:
            raise ShapeError("needs at least one operand")
        xs = [tensor_operand(t, f"xs[{i}]") for i, t in enumerate(operand_types)]
        dtype = xs[0].dtype
        for i, x in enumerate(xs[1:], start=1):
            dtype = join_dtype(TensorType(None, dtype), x, ("xs[0]", f"xs[{i}]"))
        ranks = {len(x.shape) for x in xs if x.shape is not None}
        if len(ranks) > 1:
            raise ShapeError(f"operands have different ranks {sorted(ranks)}")
        if not ranks:
            return [TensorType(None, dtype)]
        rank = ranks.pop()
        if rank == 0:
            raise ShapeError("cannot concatenate scalars")
        axis = normalize_axis(attrs["axis"], rank)
        known = [(i, x.shape) for i, x in enumerate(xs) if x.shape is not None]
        out: list[Dim] = []
        for d in range(rank):
            if d == axis:
                out.append(_sum([x.shape[d] if x.shape is not None else None for x in xs]))
                continue
            first, dim = known[0][0], known[0][1][d]
            for i, shape in known[1:]:
                dim = same_dim(dim, shape[d], f"dim {d} of xs[{first}] and xs[{i}] differ")
            out.append(dim)
        return [TensorType(tuple(out), dtype)]

    @classmethod
    def lower(cls, k: KernelBuilder) -> list[KernelValue]:
        """Each operand is copied into its slice of the destination, at the sum of the sizes before it."""
        acc = k.destination(0)
        axis = normalize_axis(k.attrs["axis"], acc.rank)
        for i in range(len(k.ins)):
            dims = [d if a == axis else acc.shape[a] for a, d in enumerate(k.ins[i].shape)]
            k.assume(i, dims)  # type: ignore[arg-type]  (known: the result's dims are)
        for x, start in zip(k.ins, _starts(k, k.ins, axis)):
            if any(d == const(0) for d in x.shape):  # an empty part adds nothing (and has no valid offset)
                continue
            acc = k.insert(x, acc, [start if a == axis else "0" for a in range(acc.rank)])
        return [acc]


def _starts(k: KernelBuilder, parts: Sequence[KernelValue], axis: int) -> list[str]:
    """Where each of ``parts`` starts along ``axis`` when laid end to end (ints or index values)."""
    starts: list[str] = []
    static, dynamic = 0, None
    for v in parts:
        if dynamic is None:
            starts.append(str(static))
        else:
            starts.append(
                dynamic if static == 0 else k.scalar(f"arith.addi {dynamic}, {k.const(static)}", "index")
            )
        if len(starts) == len(parts):
            break
        d = v.shape[axis]
        if d is not None and d.is_const:
            static += d.value
            continue
        size = k.dim(v, axis)
        dynamic = size if dynamic is None else k.scalar(f"arith.addi {dynamic}, {size}", "index")
    return starts


def _sum(dims: Sequence[Dim]) -> Dim:
    """The sum of dims, None if any is unknown."""
    total = const(0)
    for d in dims:
        if d is None:
            return None
        total = total + d
    return total


def concat(xs: Sequence[ir.Value], axis: int = 0, *, loc: ir.Location | None = None) -> ir.Value:
    """Concatenate ``xs`` along ``axis``."""
    return ConcatOp.build(list(xs), {"axis": axis}, loc=loc).result


@relax_op
class SplitOp(RelaxOp):
    """Split along ``axis`` at ``indices``, or into ``sections`` equal parts when ``sections`` > 0.

    ``%a, %b = "relax.split"(%x) {axis = 1 : i64, indices = [], sections = 2 : i64}
    : (!relax.tensor<["n", 8], f32>) -> (!relax.tensor<["n", 4], f32>, !relax.tensor<["n", 4], f32>)``
    """

    NAME = "split"
    OPERANDS = (Operand("x"),)
    RESULTS = (Operand("outs", variadic=True),)
    ATTRS = (Attr("indices", "ints"), Attr("sections", "int"), Attr("axis", "int"))
    BIT_MOVING = True

    @classmethod
    def deduce(cls, operand_types: Sequence[RelaxType | None], attrs: dict[str, Any]) -> list[RelaxType]:
        x = tensor_operand(operand_types[0], "x")
        indices, sections = attrs["indices"], attrs["sections"]
        if sections < 0 or (sections == 0 and not indices):
            raise ShapeError("give split indices or a positive number of sections")
        if sections and indices:
            raise ShapeError("give either split indices or sections, not both")
        count = sections or len(indices) + 1
        if x.shape is None:
            return [TensorType(None, x.dtype)] * count
        axis = normalize_axis(attrs["axis"], len(x.shape))
        dim = x.shape[axis]
        if sections:
            if dim is not None and dim.is_const and dim.value % sections:
                raise ShapeError(
                    f"dim {axis} of size {dim.value} does not split into {sections} equal sections"
                )
            parts: list[Dim] = [None if dim is None else floordiv(dim, sections)] * sections
        else:
            if any(b < a for a, b in zip(indices, indices[1:])) or indices[0] < 0:
                raise ShapeError(f"split indices {indices} must be non-negative and increasing")
            # Indices past the dim clamp to it (numpy); increasing indices make every part >= 0.
            cuts: list[Dim] = (
                [const(0)] + [None if dim is None else dim_min(const(i), dim) for i in indices] + [dim]
            )
            parts = [None if a is None or b is None else b - a for a, b in zip(cuts, cuts[1:])]
        return [TensorType(x.shape[:axis] + (p,) + x.shape[axis + 1 :], x.dtype) for p in parts]

    @classmethod
    def lower(cls, k: KernelBuilder) -> list[KernelValue]:
        outs = [k.destination(i) for i in range(len(k.result_types))]
        x = k.ins[0]
        axis = normalize_axis(k.attrs["axis"], x.rank)
        sections = k.attrs["sections"]
        if sections:  # equal parts: the dim must be a multiple of the number of sections (checked)
            k.assume(0, [sections * outs[0].shape[axis] if a == axis else d for a, d in enumerate(x.shape)])  # type: ignore[operator,misc]
            x = k.ins[0]
        results = []
        for out, start in zip(outs, _starts(k, outs, axis)):
            if any(d == const(0) for d in out.shape):  # empty part: nothing to copy
                results.append(out)
                continue
            offsets = [start if a == axis else "0" for a in range(x.rank)]
            where = f"[{', '.join(offsets)}] [{', '.join(k.sizes(out))}] [{', '.join(['1'] * x.rank)}]"
            part = k.op(f"tensor.extract_slice {x.name}{where} : {x.mlir} to {out.mlir}", out)
            results.append(k.copy(part, out))
        return results


def split(
    x: ir.Value, indices_or_sections: int | Sequence[int], axis: int = 0, *, loc: ir.Location | None = None
) -> list[ir.Value]:
    """Split ``x`` into equal sections (an int) or at indices (a list)."""
    if isinstance(indices_or_sections, int):
        attrs = {"indices": [], "sections": indices_or_sections, "axis": axis}
    else:
        attrs = {"indices": list(indices_or_sections), "sections": 0, "axis": axis}
    return list(SplitOp.build([x], attrs, loc=loc).results)

"""Shape manipulation ops (``concat`` and ``split`` are in ``concat.py``).

Their kernels copy data into the destination: reshapes through a collapse/expand view of the input
(``tensor.reshape`` when one dynamic dim splits into several), transposes with ``linalg.transpose``,
the rest as parallel ``linalg.generic`` loops. Dims a
kernel needs equal that the deduction only assumed (a reshape's element count, a squeezed symbolic
dim, equal split sections) are stated with ``k.assume`` and checked at run time.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from mlir import ir

from relax_mlir.dialects.dims import (
    ONE,
    fmt_shape,
    normalize_axes,
    normalize_axis,
    product,
    provably_different,
    tensor_operand,
)
from relax_mlir.dialects.registry import Attr, Operand, RelaxOp, relax_op
from relax_mlir.dialects.rewrite import attr_value, fully_known, producer, same_type_identity, tensor_of
from relax_mlir.dialects.types import Dim, RelaxType, TensorType
from relax_mlir.errors import ParseError, ShapeError
from relax_mlir.lowering.kernel import (
    KernelBuilder,
    KernelValue,
    builtin_tensor,
    element,
    identity,
    is_float,
)
from relax_mlir.shape_infer.expr import Expr, const, floordiv, format_dim, parse_dim


@relax_op
class ReshapeOp(RelaxOp):
    """Reshape to a target shape of ints, symbolic expressions, -1 (inferred) and 0 (copy the input dim).

    ``%y = "relax.reshape"(%x) {shape = ["b", "s", 8, -1]} : (!relax.tensor<["b", "s", 512], f32>)
    -> !relax.tensor<["b", "s", 8, 64], f32>``
    """

    NAME = "reshape"
    FUSION = "injective"
    OPERANDS = (Operand("x"),)
    ATTRS = (Attr("shape", "dims"),)
    BIT_MOVING = True

    @classmethod
    def deduce(cls, operand_types: Sequence[RelaxType | None], attrs: dict[str, Any]) -> list[RelaxType]:
        x = tensor_operand(operand_types[0], "x")
        target: list[Dim] = []
        infer_at = None
        for i, d in enumerate(attrs["shape"]):
            if d == -1:
                if infer_at is not None:
                    raise ShapeError(f"shape {attrs['shape']} has more than one -1")
                infer_at = i
                target.append(None)
            elif d == 0:
                if x.shape is None:
                    target.append(None)  # copies a dim of an unknown-rank input
                    continue
                if i >= len(x.shape):
                    raise ShapeError(
                        f"shape entry 0 at position {i} copies an input dim that does not exist "
                        f"in {fmt_shape(x.shape)}"
                    )
                target.append(x.shape[i])
            elif isinstance(d, int) and d < 0:
                raise ShapeError(f"shape entry {d} at position {i} is negative")
            else:
                target.append(_parse(d))
        total_in = product(x.shape) if x.shape is not None else None
        if infer_at is not None:
            known = product(target[:infer_at] + target[infer_at + 1 :])
            if total_in is not None and known is not None:
                target[infer_at] = _divide(total_in, known, x.shape, attrs["shape"])
        elif total_in is not None:
            total_out = product(target)
            if total_out is not None and total_in.is_const and total_out.is_const and total_in != total_out:
                raise ShapeError(
                    f"cannot reshape {fmt_shape(x.shape)} ({total_in.value} elements) to "
                    f"{fmt_shape(target)} ({total_out.value} elements)"
                )
        return [TensorType(tuple(target), x.dtype)]

    @classmethod
    def canonicalize(cls, op: ir.Operation) -> ir.Value | None:
        """To the operand's own fully known type -> the operand; ``reshape(reshape(x))`` -> one reshape to
        the outer shape, when the inner one provably keeps the element count (so its run-time size check
        is implied by the new one) and no dim is unknown."""
        same = same_type_identity(op)
        if same is not None:
            return same
        inner = producer(op.operands[0], ReshapeOp)
        out = tensor_of(op.results[0])
        if inner is None or not fully_known(out):
            return None
        x = inner.operands[0]
        xt, mid = tensor_of(x), tensor_of(inner.results[0])
        if not (fully_known(xt) and fully_known(mid)) or product(xt.shape) != product(mid.shape):
            return None
        if x.type == op.results[0].type:
            return x
        assert out is not None and out.shape is not None
        if any(d.is_const and d.value == 0 for d in out.shape):
            return None  # a 0 in the shape attribute would mean "copy the input dim"
        shape = [format_dim(d) for d in out.shape]
        with ir.InsertionPoint(op), op.location:
            new = ReshapeOp.build([x], {"shape": shape}, loc=op.location)
        if new.results[0].type != op.results[0].type:  # deduction disagrees: leave the chain alone
            new.operation.erase()
            return None
        return new.results[0]

    @classmethod
    def lower(cls, k: KernelBuilder) -> list[KernelValue]:
        out = k.destination(0)
        _check_same_size(k, out)
        return [_copy_reshaped(k, k.ins[0], out)]


def _parse(d: int | str) -> Dim:
    try:
        return parse_dim(d)
    except ParseError as e:
        raise ShapeError(str(e)) from None


def _divide(total: Expr, known: Expr, in_shape: Sequence[Dim], spec: list[int | str]) -> Dim:
    if known.is_const:
        if known.value == 0:
            raise ShapeError(f"cannot infer -1 in {spec}: the other dims multiply to 0")
        q = floordiv(total, known.value)
        if total.is_const and total.value % known.value:
            raise ShapeError(f"cannot reshape {fmt_shape(in_shape)} ({total.value} elements) to {spec}")
        return q
    return floordiv(total, known)


def reshape(x: ir.Value, shape: Sequence[int | str], *, loc: ir.Location | None = None) -> ir.Value:
    """Reshape ``x`` (see ReshapeOp for the spelling of ``shape``)."""
    return ReshapeOp.build([x], {"shape": shape}, loc=loc).result


def _check_same_size(k: KernelBuilder, out: KernelValue) -> None:
    """Make the element counts of ``k.ins[0]`` and ``out`` provably equal, or fail.

    The deduction accepts a reshape whose counts are equal only at run time (``[n] -> [2, n floordiv
    2]``, ``[n, w] -> [n, 2]``): then the kernel takes the input flattened to the output's count, which the
    caller checks (``relax.check_size``). The counts are compared, not dims: at n = 0 ``[n, w]`` has the
    same 0 elements as ``[n, 2]`` whatever ``w`` is.
    """
    x = k.ins[0]
    total = product(out.shape)
    assert total is not None
    if product(x.shape) != total:
        k.check_size(0, total)


def _copy_reshaped(k: KernelBuilder, x: KernelValue, out: KernelValue) -> KernelValue:
    """Copy ``x`` into ``out`` (same element count, another shape) through a view of ``x``.

    The dims are split into segments of equal products (``[b, s, 512] -> [b, s, 8, 64]`` is
    ``b | s | 512 -> 8, 64``); the view collapses each segment and expands it again. MLIR expands a dim
    into at most one dynamic dim, so other reshapes (``[b * s] -> [b, s]``) use ``tensor.reshape``.
    """
    segments = _segments(x.shape, out.shape)  # type: ignore[arg-type]
    if x.rank == 0:
        view = k.expand(x, [], out.shape)
    elif out.rank == 0:
        view = k.collapse(x, [])
    elif all(sum(not out.shape[j].is_const for j in g) <= 1 for _, g in segments):  # type: ignore[union-attr]
        view = x
        if any(len(g) > 1 for g, _ in segments):
            view = k.collapse(view, [g for g, _ in segments])
        if any(len(g) > 1 for _, g in segments):
            sizes = [None if d.is_const else k.dim(out, i) for i, d in enumerate(out.shape)]  # type: ignore[union-attr]
            view = k.expand(view, [g for _, g in segments], out.shape, sizes)
    else:
        sizes = [k.const(d.value) if d.is_const else k.dim(out, i) for i, d in enumerate(out.shape)]  # type: ignore[union-attr]
        shape = k.fresh("shape")
        k.emit(f"{shape} = tensor.from_elements {', '.join(sizes)} : tensor<{out.rank}xindex>")
        view = k.op(
            f"tensor.reshape {x.name}({shape}) : ({x.mlir}, tensor<{out.rank}xindex>) -> {out.mlir}", out
        )
    return k.copy(_cast(k, view, out.shape), out)


def _segments(src: Sequence[Expr], dst: Sequence[Expr]) -> list[tuple[list[int], list[int]]]:
    """Consecutive groups of ``src`` and ``dst`` dims with equal products (each group non-empty)."""
    cuts, j = [(0, 0)], 0
    for i in range(1, len(src)):
        p = product(src[:i])
        for jj in range(j + 1, len(dst)):
            if product(dst[:jj]) == p:
                cuts.append((i, jj))
                j = jj
                break
    cuts.append((len(src), len(dst)))
    return [(list(range(a, c)), list(range(b, d))) for (a, b), (c, d) in zip(cuts, cuts[1:])]


def _cast(k: KernelBuilder, v: KernelValue, shape: Sequence[Dim]) -> KernelValue:
    """``v`` as a tensor of ``shape`` (a ``tensor.cast`` when the builtin types differ)."""
    t = TensorType(tuple(shape), v.dtype)
    if builtin_tensor(t) == v.mlir:
        return KernelValue(v.name, t, v.mlir)
    return k.op(f"tensor.cast {v.name} : {v.mlir} to {builtin_tensor(t)}", t)


@relax_op
class PermuteDimsOp(RelaxOp):
    """Permute the dims of a tensor (``axes = unit`` reverses them, like numpy.transpose).

    ``%y = "relax.permute_dims"(%x) {axes = [0, 2, 1]} : (!relax.tensor<["b", "s", 64], f32>)
    -> !relax.tensor<["b", 64, "s"], f32>``
    """

    NAME = "permute_dims"
    FUSION = "injective"
    OPERANDS = (Operand("x"),)
    ATTRS = (Attr("axes", "ints_or_none"),)
    BIT_MOVING = True

    @classmethod
    def deduce(cls, operand_types: Sequence[RelaxType | None], attrs: dict[str, Any]) -> list[RelaxType]:
        x = tensor_operand(operand_types[0], "x")
        axes = attrs["axes"]
        if x.shape is None:
            if axes is None:
                return [TensorType(None, x.dtype)]
            normalize_axes(axes, len(axes))
            return [TensorType((None,) * len(axes), x.dtype)]
        if axes is None:
            return [TensorType(tuple(reversed(x.shape)), x.dtype)]
        if len(axes) != len(x.shape):
            raise ShapeError(f"axes {axes} do not match the rank {len(x.shape)} of 'x' {fmt_shape(x.shape)}")
        perm = normalize_axes(axes, len(x.shape))
        return [TensorType(tuple(x.shape[a] for a in perm), x.dtype)]

    @classmethod
    def canonicalize(cls, op: ir.Operation) -> ir.Value | None:
        """By the identity -> the operand; ``permute_dims(permute_dims(x))`` -> one ``permute_dims`` (or
        ``x`` when the composition is the identity)."""
        x = op.operands[0]
        t = tensor_of(x)
        if t is None or t.shape is None:
            return None
        perm = _permutation(op, len(t.shape))
        if perm == list(range(len(perm))) and x.type == op.results[0].type:
            return x
        inner = producer(x, PermuteDimsOp)
        if inner is None:
            return None
        src = inner.operands[0]
        st = tensor_of(src)
        if st is None or st.shape is None:
            return None
        first = _permutation(inner, len(st.shape))
        composed = [first[p] for p in perm]
        if composed == list(range(len(composed))):
            return src if src.type == op.results[0].type else None
        with ir.InsertionPoint(op), op.location:
            new = PermuteDimsOp.build([src], {"axes": composed}, loc=op.location)
        if new.results[0].type != op.results[0].type:
            new.operation.erase()
            return None
        return new.results[0]

    @classmethod
    def lower(cls, k: KernelBuilder) -> list[KernelValue]:
        x, out = k.ins[0], k.destination(0)
        axes = k.attrs["axes"]
        perm = list(reversed(range(x.rank))) if axes is None else normalize_axes(axes, x.rank)
        if perm == sorted(perm):
            return [k.copy(x, out)]
        return [
            k.op(
                f"linalg.transpose ins({x.name} : {x.mlir}) outs({out.name} : {out.mlir}) "
                f"permutation = [{', '.join(map(str, perm))}]",
                out,
            )
        ]


def permute_dims(
    x: ir.Value, axes: Sequence[int] | None = None, *, loc: ir.Location | None = None
) -> ir.Value:
    """Permute dims of ``x``; None reverses them."""
    return PermuteDimsOp.build([x], {"axes": axes}, loc=loc).result


def _permutation(op: ir.Operation, rank: int) -> list[int]:
    axes = attr_value(op, "axes")
    return list(reversed(range(rank))) if axes is None else normalize_axes(axes, rank)  # type: ignore[arg-type]


@relax_op
class ExpandDimsOp(RelaxOp):
    """Insert dims of size 1 at ``axes`` (positions in the result).

    ``%y = "relax.expand_dims"(%x) {axes = [0]} : (!relax.tensor<["n"], f32>) -> !relax.tensor<[1, "n"], f32>``
    """

    NAME = "expand_dims"
    FUSION = "injective"
    OPERANDS = (Operand("x"),)
    ATTRS = (Attr("axes", "ints"),)
    BIT_MOVING = True

    @classmethod
    def deduce(cls, operand_types: Sequence[RelaxType | None], attrs: dict[str, Any]) -> list[RelaxType]:
        x = tensor_operand(operand_types[0], "x")
        if x.shape is None:
            return [TensorType(None, x.dtype)]
        rank = len(x.shape) + len(attrs["axes"])
        inserted = set(normalize_axes(attrs["axes"], rank))
        rest = iter(x.shape)
        return [TensorType(tuple(ONE if i in inserted else next(rest) for i in range(rank)), x.dtype)]

    @classmethod
    def lower(cls, k: KernelBuilder) -> list[KernelValue]:
        return [_copy_reshaped(k, k.ins[0], k.destination(0))]


def expand_dims(x: ir.Value, axes: Sequence[int], *, loc: ir.Location | None = None) -> ir.Value:
    """Insert size-1 dims at ``axes``."""
    return ExpandDimsOp.build([x], {"axes": axes}, loc=loc).result


@relax_op
class SqueezeOp(RelaxOp):
    """Remove size-1 dims at ``axes`` (``unit``: every dim known to be 1).

    ``%y = "relax.squeeze"(%x) {axes = [1]} : (!relax.tensor<["n", 1], f32>) -> !relax.tensor<["n"], f32>``
    """

    NAME = "squeeze"
    FUSION = "injective"
    OPERANDS = (Operand("x"),)
    ATTRS = (Attr("axes", "ints_or_none"),)
    BIT_MOVING = True

    @classmethod
    def deduce(cls, operand_types: Sequence[RelaxType | None], attrs: dict[str, Any]) -> list[RelaxType]:
        x = tensor_operand(operand_types[0], "x")
        axes = attrs["axes"]
        if x.shape is None:
            return [TensorType(None, x.dtype)]
        if axes is None:
            if any(d is None or not d.is_const for d in x.shape):
                return [TensorType(None, x.dtype)]  # whether a symbolic dim is 1 is known only at run time
            return [TensorType(tuple(d for d in x.shape if d != ONE), x.dtype)]
        removed = normalize_axes(axes, len(x.shape))
        for a in removed:
            d = x.shape[a]
            if d is not None and d.is_const and d != ONE:
                raise ShapeError(
                    f"cannot squeeze axis {a} of {fmt_shape(x.shape)}: its size is {d.value}, not 1"
                )
        return [TensorType(tuple(d for i, d in enumerate(x.shape) if i not in removed), x.dtype)]

    @classmethod
    def canonicalize(cls, op: ir.Operation) -> ir.Value | None:
        """``squeeze(expand_dims(x, axes), axes)`` -> ``x`` (the squeezed dims are the inserted 1s)."""
        inner = producer(op.operands[0], ExpandDimsOp)
        axes = attr_value(op, "axes")
        if inner is None or axes is None:
            return None
        x = inner.operands[0]
        mid = tensor_of(inner.results[0])
        if mid is None or mid.shape is None:
            return None
        rank = len(mid.shape)
        inserted = sorted(normalize_axes(attr_value(inner, "axes"), rank))  # type: ignore[arg-type]
        if sorted(normalize_axes(axes, rank)) != inserted or x.type != op.results[0].type:  # type: ignore[arg-type]
            return None
        return x

    @classmethod
    def lower(cls, k: KernelBuilder) -> list[KernelValue]:
        out = k.destination(0)
        x = k.ins[0]
        axes = k.attrs["axes"]
        removed = set(normalize_axes(axes, x.rank)) if axes is not None else set()
        k.assume(0, [ONE if i in removed else d for i, d in enumerate(x.shape)])  # type: ignore[misc]
        return [_copy_reshaped(k, k.ins[0], out)]


def squeeze(x: ir.Value, axes: Sequence[int] | None = None, *, loc: ir.Location | None = None) -> ir.Value:
    """Remove size-1 dims."""
    return SqueezeOp.build([x], {"axes": axes}, loc=loc).result


@relax_op
class FlattenOp(RelaxOp):
    """Merge dims ``start_axis..end_axis`` (inclusive) into one.

    ``%y = "relax.flatten"(%x) {end_axis = -1 : i64, start_axis = 1 : i64} : (!relax.tensor<["b", 3, 4], f32>)
    -> !relax.tensor<["b", 12], f32>``
    """

    NAME = "flatten"
    FUSION = "injective"
    OPERANDS = (Operand("x"),)
    ATTRS = (Attr("start_axis", "int"), Attr("end_axis", "int"))
    BIT_MOVING = True

    @classmethod
    def deduce(cls, operand_types: Sequence[RelaxType | None], attrs: dict[str, Any]) -> list[RelaxType]:
        x = tensor_operand(operand_types[0], "x")
        if x.shape is None:
            whole = (attrs["start_axis"], attrs["end_axis"]) == (0, -1)
            return [TensorType((None,) if whole else None, x.dtype)]
        if not x.shape:  # a scalar flattens like a [1] tensor
            normalize_axis(attrs["start_axis"], 1, "start_axis")
            normalize_axis(attrs["end_axis"], 1, "end_axis")
            return [TensorType((ONE,), x.dtype)]
        start = normalize_axis(attrs["start_axis"], len(x.shape), "start_axis")
        end = normalize_axis(attrs["end_axis"], len(x.shape), "end_axis")
        if start > end:
            raise ShapeError(f"start_axis {start} is after end_axis {end}")
        merged = product(x.shape[start : end + 1])
        return [TensorType(x.shape[:start] + (merged,) + x.shape[end + 1 :], x.dtype)]

    @classmethod
    def lower(cls, k: KernelBuilder) -> list[KernelValue]:
        return [_copy_reshaped(k, k.ins[0], k.destination(0))]


def flatten(
    x: ir.Value, start_axis: int = 0, end_axis: int = -1, *, loc: ir.Location | None = None
) -> ir.Value:
    """Merge dims ``start_axis..end_axis``."""
    return FlattenOp.build([x], {"start_axis": start_axis, "end_axis": end_axis}, loc=loc).result


@relax_op
class BroadcastToOp(RelaxOp):
    """Broadcast to a target shape (numpy rules).

    ``%y = "relax.broadcast_to"(%x) {shape = ["b", "n", 4]} : (!relax.tensor<["n", 1], f32>)
    -> !relax.tensor<["b", "n", 4], f32>``
    """

    NAME = "broadcast_to"
    FUSION = "injective"
    OPERANDS = (Operand("x"),)
    ATTRS = (Attr("shape", "dims"),)
    BIT_MOVING = True

    @classmethod
    def deduce(cls, operand_types: Sequence[RelaxType | None], attrs: dict[str, Any]) -> list[RelaxType]:
        x = tensor_operand(operand_types[0], "x")
        for i, d in enumerate(attrs["shape"]):
            if isinstance(d, int) and d < 0:
                raise ShapeError(f"shape entry {d} at position {i} is negative")
        target = tuple(_parse(d) for d in attrs["shape"])
        if x.shape is not None:
            if len(x.shape) > len(target):
                raise ShapeError(
                    f"cannot broadcast rank {len(x.shape)} {fmt_shape(x.shape)} to rank {len(target)}"
                )
            for i, (src, dst) in enumerate(zip(x.shape[::-1], target[::-1])):
                if src is not None and src != ONE and provably_different(src, dst):
                    raise ShapeError(
                        f"cannot broadcast {fmt_shape(x.shape)} to {fmt_shape(target)} at dim {-1 - i}"
                    )
        return [TensorType(target, x.dtype)]

    @classmethod
    def canonicalize(cls, op: ir.Operation) -> ir.Value | None:
        """To the operand's own fully known type -> the operand."""
        return same_type_identity(op)

    @classmethod
    def lower(cls, k: KernelBuilder) -> list[KernelValue]:
        """A dim that is 1 broadcasts; any other must equal the target dim (checked at run time)."""
        return [k.elementwise(k.ins, k.destination(0), lambda a: a[0])]


def broadcast_to(x: ir.Value, shape: Sequence[int | str], *, loc: ir.Location | None = None) -> ir.Value:
    """``x`` broadcast to ``shape``."""
    return BroadcastToOp.build([x], {"shape": shape}, loc=loc).result


@relax_op
class TileOp(RelaxOp):
    """Repeat the whole tensor ``repeats`` times per dim (numpy.tile).

    ``%y = "relax.tile"(%x) {repeats = [2, 1]} : (!relax.tensor<["n", 4], f32>) -> !relax.tensor<["2 * n", 4], f32>``
    """

    NAME = "tile"
    OPERANDS = (Operand("x"),)
    ATTRS = (Attr("repeats", "ints"),)
    BIT_MOVING = True

    @classmethod
    def deduce(cls, operand_types: Sequence[RelaxType | None], attrs: dict[str, Any]) -> list[RelaxType]:
        x = tensor_operand(operand_types[0], "x")
        reps = attrs["repeats"]
        if any(r < 0 for r in reps):
            raise ShapeError(f"repeats {reps} must be non-negative")
        if x.shape is None:
            return [TensorType(None, x.dtype)]
        rank = max(len(x.shape), len(reps))
        shape = (ONE,) * (rank - len(x.shape)) + x.shape
        reps = [1] * (rank - len(reps)) + list(reps)
        return [TensorType(tuple(None if d is None else d * r for d, r in zip(shape, reps)), x.dtype)]

    @classmethod
    def lower(cls, k: KernelBuilder) -> list[KernelValue]:
        """Element i of the result reads x at ``i mod d`` along each repeated dim (a parallel loop).

        Static repeated dims use ``mod`` in the indexing map; dynamic ones read with tensor.extract.
        """
        x, out = k.ins[0], k.destination(0)
        if any(d == const(0) for d in out.shape):
            return [out]
        rank, lead = out.rank, out.rank - x.rank
        reps = [1] * (rank - len(k.attrs["repeats"])) + list(k.attrs["repeats"])
        repeated = [a for a in range(x.rank) if reps[lead + a] != 1]
        ds = [f"d{i}" for i in range(rank)]
        iterators = ["parallel"] * rank
        if all(x.shape[a].is_const for a in repeated):  # type: ignore[union-attr]
            exprs = [
                f"d{lead + a} mod {x.shape[a].value}" if a in repeated else f"d{lead + a}"
                for a in range(x.rank)
            ]  # type: ignore[union-attr]
            x_map = f"({', '.join(ds)}) -> ({', '.join(exprs)})"
            return k.generic([x], [out], [x_map, identity(rank)], iterators, lambda v: [v[0]])
        sizes = {a: k.dim(x, a) for a in repeated}

        def body(_: list[str]) -> list[str]:
            coords = []
            for a in range(x.rank):
                i = k.scalar(f"linalg.index {lead + a}", "index")
                coords.append(k.scalar(f"arith.remui {i}, {sizes[a]}", "index") if a in repeated else i)
            return [k.scalar(f"tensor.extract {x.name}[{', '.join(coords)}]", x.mlir)]

        return k.generic([], [out], [identity(rank)], iterators, body)


def tile(x: ir.Value, repeats: Sequence[int], *, loc: ir.Location | None = None) -> ir.Value:
    """``x`` tiled ``repeats`` times."""
    return TileOp.build([x], {"repeats": repeats}, loc=loc).result


@relax_op
class RepeatOp(RelaxOp):
    """Repeat each element ``repeats`` times along ``axis`` (``unit``: of the flattened tensor).

    ``%y = "relax.repeat"(%x) {axis = [0], repeats = 3 : i64} : (!relax.tensor<["n", 4], f32>)
    -> !relax.tensor<["3 * n", 4], f32>``
    """

    NAME = "repeat"
    OPERANDS = (Operand("x"),)
    ATTRS = (Attr("repeats", "int"), Attr("axis", "ints_or_none"))
    BIT_MOVING = True

    @classmethod
    def deduce(cls, operand_types: Sequence[RelaxType | None], attrs: dict[str, Any]) -> list[RelaxType]:
        x = tensor_operand(operand_types[0], "x")
        reps, axis = attrs["repeats"], attrs["axis"]
        if reps < 0:
            raise ShapeError(f"repeats {reps} must be non-negative")
        if axis is None:
            total = product(x.shape) if x.shape is not None else None
            return [TensorType((None if total is None else total * reps,), x.dtype)]
        if len(axis) != 1:
            raise ShapeError(f"axis must hold one axis, got {axis}")
        if x.shape is None:
            return [TensorType(None, x.dtype)]
        a = normalize_axis(axis[0], len(x.shape))
        d = x.shape[a]
        return [TensorType(x.shape[:a] + (None if d is None else d * reps,) + x.shape[a + 1 :], x.dtype)]

    @classmethod
    def lower(cls, k: KernelBuilder) -> list[KernelValue]:
        """Element i of the result along the axis is element ``i floordiv repeats`` of ``x``."""
        x, out = k.ins[0], k.destination(0)
        reps, axis = k.attrs["repeats"], k.attrs["axis"]
        if reps == 0:
            return [out]
        if axis is None:
            x = x if x.rank == 1 else k.expand(x, [], (1,)) if x.rank == 0 else k.collapse(x, [range(x.rank)])
            a = 0
        else:
            a = normalize_axis(axis[0], x.rank)
        ds = [f"d{i}" for i in range(out.rank)]
        exprs = [f"{d} floordiv {reps}" if i == a else d for i, d in enumerate(ds)]
        x_map = f"({', '.join(ds)}) -> ({', '.join(exprs)})"
        return k.generic([x], [out], [x_map, identity(out.rank)], ["parallel"] * out.rank, lambda v: [v[0]])


def repeat(x: ir.Value, repeats: int, axis: int | None = None, *, loc: ir.Location | None = None) -> ir.Value:
    """Each element of ``x`` repeated ``repeats`` times along ``axis``."""
    return RepeatOp.build([x], {"repeats": repeats, "axis": None if axis is None else [axis]}, loc=loc).result


class TriangularOp(RelaxOp):
    """Base of tril/triu: keep the lower/upper triangle of the last two dims, offset by diagonal ``k``."""

    OPERANDS = (Operand("x"),)
    ATTRS = (Attr("k", "int"),)

    @classmethod
    def deduce(cls, operand_types: Sequence[RelaxType | None], attrs: dict[str, Any]) -> list[RelaxType]:
        x = tensor_operand(operand_types[0], "x")
        if x.ndim is not None and x.ndim < 2:
            raise ShapeError(f"operand 'x' must have rank >= 2, got {fmt_shape(x.shape)}")
        return [x]

    @classmethod
    def lower(cls, k: KernelBuilder) -> list[KernelValue]:
        """Keep element (i, j) of the last two dims where ``j - i <= k`` (tril) or ``>= k`` (triu)."""
        out = k.destination(0)
        rank, t = out.rank, element(out.dtype)
        diagonal, pred = k.const(k.attrs["k"]), "sle" if cls.NAME == "tril" else "sge"
        zero = k.scalar(f"arith.constant {0.0 if is_float(out.dtype) else 0}", t)  # i1 is stored as i8

        def body(a: list[str]) -> list[str]:
            i = k.scalar(f"linalg.index {rank - 2}", "index")
            j = k.scalar(f"linalg.index {rank - 1}", "index")
            keep = k.scalar(
                f"arith.cmpi {pred}, {k.scalar(f'arith.subi {j}, {i}', 'index')}, {diagonal}", "index"
            )
            return [k.scalar(f"arith.select {keep}, {a[0]}, {zero}", t)]

        maps = [identity(rank)] * 2
        return k.generic([k.ins[0]], [out], maps, ["parallel"] * rank, body)


@relax_op
class TrilOp(TriangularOp):
    """Lower triangle (elements above diagonal k set to 0).

    ``%y = "relax.tril"(%x) {k = 0 : i64} : (!relax.tensor<["s", "s"], f32>) -> !relax.tensor<["s", "s"], f32>``
    """

    NAME = "tril"


@relax_op
class TriuOp(TriangularOp):
    """Upper triangle (elements below diagonal k set to 0).

    ``%y = "relax.triu"(%x) {k = 1 : i64} : (!relax.tensor<["s", "s"], f32>) -> !relax.tensor<["s", "s"], f32>``
    """

    NAME = "triu"


def tril(x: ir.Value, k: int = 0, *, loc: ir.Location | None = None) -> ir.Value:
    """Lower triangle of ``x``."""
    return TrilOp.build([x], {"k": k}, loc=loc).result


def triu(x: ir.Value, k: int = 0, *, loc: ir.Location | None = None) -> ir.Value:
    """Upper triangle of ``x``."""
    return TriuOp.build([x], {"k": k}, loc=loc).result

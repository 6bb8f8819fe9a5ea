"""``relax-bind-region-dims``: name the unknown dims of branch and loop values, so their kernels can be lowered.

A join forgets what differs between branches or iterations (``["n"]`` and ``["2 * n"]`` give ``["?"]``), but a
kernel needs every dim of its operands as a value. Like a user's ``relax.match_cast`` after a data-dependent op,
this pass casts each ``scf.if`` / ``scf.while`` result and each loop-body argument with unknown dims (known rank)
to fresh symbols (``d0``, ``d1`` ...), read from the value at run time where the cast is (it checks nothing),
then runs ``relax-infer-shapes`` so the ops that use them become symbolic.

A join of different ranks (``[]`` and ``["n"]``) is an unknown rank (``"*"``), which no kernel takes. When every
use of such an ``scf.if`` result broadcasts it (numpy rules) against another operand of at least the branches'
highest rank R, the yields of lower rank are padded with leading 1s to rank R first: broadcasting gives the same
result, so the rank is known and nothing is checked. Other unknown ranks are left to the lowering's error.
"""

from __future__ import annotations

import itertools

from mlir import ir

from relax_mlir.dialects.ops.manipulate import ExpandDimsOp
from relax_mlir.dialects.ops.structural import MatchCastOp
from relax_mlir.dialects.registry import op_class
from relax_mlir.dialects.types import (
    PrimType,
    RelaxType,
    ShapeType,
    TensorType,
    free_symbols,
    relax_type,
    to_mlir,
)
from relax_mlir.shape_infer.expr import sym
from relax_mlir.transforms.infer_shapes import infer_shapes, precise
from relax_mlir.transforms.registry import PassFailed, register_pass


def _named(t: RelaxType, fresh: itertools.count, taken: set[str]) -> RelaxType | None:
    """``t`` with each unknown dim a fresh symbol; None when it has none (or an unknown rank)."""

    def name() -> object:
        while True:
            s = f"d{next(fresh)}"
            if s not in taken:
                taken.add(s)
                return sym(s)

    if isinstance(t, TensorType) and t.shape is not None and None in t.shape:
        return TensorType(tuple(d if d is not None else name() for d in t.shape), t.dtype)  # type: ignore[misc]
    if isinstance(t, ShapeType) and t.values is not None and None in t.values:
        return ShapeType(tuple(d if d is not None else name() for d in t.values))  # type: ignore[misc]
    if isinstance(t, PrimType) and t.value is None:
        return PrimType(name())  # type: ignore[arg-type]
    return None


_PASS_THROUGH = {"scf.yield", "scf.condition", "func.return"}


def _bind(
    value: ir.Value, ip: ir.InsertionPoint, loc: ir.Location, fresh: itertools.count, taken: set[str]
) -> ir.Operation | None:
    """Cast ``value`` (at ``ip``) to its type with fresh symbols, used instead of it; the cast, if made."""
    t = relax_type(value.type)
    named = _named(t, fresh, taken) if t is not None else None
    if named is None or all(use.owner.name in _PASS_THROUGH for use in value.uses):
        return None  # no kernel reads it
    cast = MatchCastOp.build([value], result_types=[named], loc=loc, ip=ip)
    value.replace_all_uses_except(cast.result, cast.operation)
    return cast.operation


def bind_region_dims(func: ir.Operation) -> int:
    """Bind the unknown dims of every branch/loop value of ``func``; the number of casts made."""
    taken: set[str] = set()
    targets: list[ir.Operation] = []

    def visit(op: ir.Operation) -> ir.WalkResult:
        for r in op.results:
            t = relax_type(r.type)
            if t is not None:
                taken.update(free_symbols(t))
        if op.name in ("scf.if", "scf.while"):
            targets.append(op)
        return ir.WalkResult.ADVANCE

    func.walk(visit, ir.WalkOrder.PRE_ORDER)
    for arg in func.regions[0].blocks[0].arguments:
        t = relax_type(arg.type)
        if t is not None:
            taken.update(free_symbols(t))
    fresh = itertools.count()
    before = len(taken)
    for op in targets:
        with op.context:
            if op.name == "scf.while":
                for region in op.regions:
                    block = region.blocks[0]
                    ip = ir.InsertionPoint.at_block_begin(block)
                    for arg in block.arguments:
                        _bind(arg, ip, op.location, fresh, taken)
            last = op
            for r in op.results:  # each cast goes after the op (and the casts before it)
                cast = _bind(r, ir.InsertionPoint(op), op.location, fresh, taken)
                if cast is not None:
                    cast.move_after(last)
                    last = cast
    return len(taken) - before


def _rank(t: RelaxType | None) -> int | None:
    return len(t.shape) if isinstance(t, TensorType) and t.shape is not None else None


def _broadcast_uses_only(value: ir.Value, rank: int) -> bool:
    """Whether every use of ``value`` is a broadcasting op with another operand of rank ``>= rank``."""
    uses = list(value.uses)
    for use in uses:
        cls = op_class(use.owner)
        if cls is None or cls.FUSION != "broadcast":
            return False
        others = [
            _rank(relax_type(v.type)) for i, v in enumerate(use.owner.operands) if i != use.operand_number
        ]
        if not any(r is not None and r >= rank for r in others):
            return False
    return bool(uses)


def pad_region_ranks(func: ir.Operation) -> int:
    """Give a known rank to each ``scf.if`` result of unknown rank that only broadcasts against operands of
    higher or equal rank (the yields padded with leading 1s); the number of results changed."""
    ifs: list[ir.Operation] = []
    func.walk(lambda op: (ifs.append(op) if op.name == "scf.if" else None, ir.WalkResult.ADVANCE)[1])
    changed = 0
    for op in ifs:
        if len(op.regions[1].blocks) == 0:
            continue
        yields = [r.blocks[0].operations[len(r.blocks[0].operations) - 1].operation for r in op.regions]
        for i, result in enumerate(op.results):
            t = relax_type(result.type)
            if not isinstance(t, TensorType) or t.shape is not None:
                continue
            ranks = [_rank(relax_type(precise(y.operands[i]))) for y in yields]
            if None in ranks or not _broadcast_uses_only(result, max(ranks)):  # type: ignore[type-var]
                continue
            top: int = max(ranks)  # type: ignore[type-var,assignment]
            with op.context:
                for y, r in zip(yields, ranks):
                    v = cast = y.operands[i]
                    if v.owner.name == "relax.match_cast" and precise(v) != v.type:
                        v = v.owner.operands[0]  # the weakening cast goes (infer-shapes makes one if needed)
                    if r < top:  # type: ignore[operator]
                        v = ExpandDimsOp.build(
                            [v],
                            {"axes": list(range(top - r))},
                            loc=y.location,
                            ip=ir.InsertionPoint(y),  # type: ignore[operator]
                        ).result
                    y.operands[i] = v
                    if cast != v and next(iter(cast.uses), None) is None:
                        cast.owner.erase()
                result.set_type(to_mlir(TensorType((None,) * top, t.dtype)))
            changed += 1
    return changed


@register_pass("relax-bind-region-dims")
class BindRegionDims:
    """Cast branch/loop values with unknown dims to fresh symbols (for lowering), then infer shapes."""

    def run(self, module: ir.Operation) -> None:
        funcs = [
            op.operation
            for op in module.regions[0].blocks[0].operations
            if op.operation.name == "func.func" and len(op.operation.regions[0].blocks)
        ]
        if sum(pad_region_ranks(f) for f in funcs) and not infer_shapes(module):
            raise PassFailed("shape inference failed")
        changed = 0
        for f in funcs:
            changed += bind_region_dims(f)
        if changed and not infer_shapes(module):
            raise PassFailed("shape inference failed")

"""``relax-bind-region-dims``: name the unknown dims of branch and loop values, so their kernels can be lowered.

A join forgets what differs between branches or iterations (``["n"]`` and ``["2 * n"]`` give ``["?"]``), but a
kernel needs every dim of its operands as a value. Like a user's ``relax.match_cast`` after a data-dependent op,
this pass casts each ``scf.if`` / ``scf.while`` result and each loop-body argument with unknown dims (known rank)
to fresh symbols (``d0``, ``d1`` ...), read from the value at run time where the cast is (it checks nothing),
then runs ``relax-infer-shapes`` so the ops that use them become symbolic.
"""

from __future__ import annotations

import itertools

from mlir import ir

from relax_mlir.dialects.ops.structural import MatchCastOp
from relax_mlir.dialects.types import PrimType, RelaxType, ShapeType, TensorType, free_symbols, relax_type
from relax_mlir.shape_infer.expr import sym
from relax_mlir.transforms.infer_shapes import infer_shapes
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


@register_pass("relax-bind-region-dims")
class BindRegionDims:
    """Cast branch/loop values with unknown dims to fresh symbols (for lowering), then infer shapes."""

    def run(self, module: ir.Operation) -> None:
        changed = 0
        for op in module.regions[0].blocks[0].operations:
            if op.operation.name == "func.func" and len(op.operation.regions[0].blocks):
                changed += bind_region_dims(op.operation)
        if changed and not infer_shapes(module):
            raise PassFailed("shape inference failed")

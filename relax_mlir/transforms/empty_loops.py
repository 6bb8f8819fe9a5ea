"""Fold linalg ops whose iteration domain is statically empty, before anything tiles them.

A structured linalg op with a loop dim of static size 0 (a matmul over ``k = 0``, a softmax over rows
of length 0, a pooling of batch 0) never runs its body: its results are its inits. MLIR 22's tiling
takes such a dim's size, 0, for "not tiled" and aborts (``expected as many ivs as non-zero sizes``)
when it tiles or fuses the op, so the passes that tile (``relax-parallelize-kernels``,
``relax-schedule-kernels``) call ``fold_empty_loops`` first, and no tile size ever comes from a
static 0 dim.
"""

from __future__ import annotations

from mlir import ir
from mlir.dialects import linalg


def loop_maps(op: ir.Operation) -> list[ir.AffineMap] | None:
    """The indexing maps of a structured linalg op on tensors (one per operand), else None."""
    if not op.name.startswith("linalg.") or not op.results:
        return None
    try:
        maps = [ir.AffineMapAttr(a).value for a in linalg.get_indexing_maps(op)]
    except Exception:  # noqa: BLE001  (not a LinalgOp: no indexing maps)
        return None
    return maps if maps and len(maps) == len(op.operands) else None


def has_empty_domain(op: ir.Operation) -> bool:
    """True when an operand dim of static size 0 is indexed by a loop dim of linalg ``op`` alone."""
    maps = loop_maps(op)
    if maps is None:
        return False
    for value, amap in zip(op.operands, maps, strict=True):
        if not isinstance(value.type, ir.RankedTensorType):
            continue
        t = ir.RankedTensorType(value.type)
        for axis, expr in enumerate(amap.results):
            if isinstance(expr, ir.AffineDimExpr) and not t.is_dynamic_dim(axis) and t.shape[axis] == 0:
                return True
    return False


def fold_empty_loops(root: ir.Operation) -> int:
    """Replace the results of every linalg op under ``root`` with an empty iteration domain by its
    inits and erase it; returns how many were folded."""
    found: list[ir.Operation] = []

    def visit(op: ir.Operation) -> ir.WalkResult:
        if has_empty_domain(op):
            found.append(op)
        return ir.WalkResult.ADVANCE

    root.walk(visit, ir.WalkOrder.PRE_ORDER)
    for op in found:
        inits = list(op.operands)[len(op.operands) - len(op.results) :]
        for result, init in zip(op.results, inits, strict=True):
            result.replace_all_uses_with(init)
        op.erase()
    return len(found)

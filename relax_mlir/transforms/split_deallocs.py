"""Split ``bufferization.dealloc`` ops over distinct fresh buffers into one dealloc per buffer.

A dealloc of several buffers lowers (``bufferization-lower-deallocations``) to a helper function that
works on ``memref<?xi1>`` ownership arrays, which MLIR 22's memref-to-LLVM lowering aborts on. Such
deallocs appear when a data-dependent result (unique, nonzero: returned by its kernel) flows into further
kernels. Under ownership-based deallocation a ``func.call`` result and a ``memref.alloc`` result are fresh
allocations, so buffers whose roots (through view ops) are distinct such values never alias each other,
and freeing them one by one is exact: each single-buffer dealloc still compares its buffer with the
retained values inline, and the updated ownerships of the retained values are or-ed together.

Runs between ``buffer-deallocation-simplification`` and ``bufferization-lower-deallocations``.
"""

from __future__ import annotations

from mlir import ir
from mlir.dialects import arith, bufferization

from relax_mlir.transforms.registry import register_pass

_VIEWS = frozenset(
    {
        "memref.extract_strided_metadata",
        "memref.cast",
        "memref.subview",
        "memref.collapse_shape",
        "memref.expand_shape",
        "memref.reinterpret_cast",
        "memref.reshape",
        "memref.view",
    }
)
_FRESH = frozenset({"memref.alloc", "func.call"})
_GLOBAL = "memref.get_global"  # a constant's buffer: static memory, never owned, never freed


def _defining_op(v: ir.Value) -> ir.Operation | None:
    owner = v.owner
    return owner.operation if isinstance(owner, (ir.Operation, ir.OpView)) else None


def _root(v: ir.Value) -> ir.Value:
    """The buffer ``v`` is a view of (following view ops to their source)."""
    while (op := _defining_op(v)) is not None and op.name in _VIEWS:
        v = op.operands[0]
    return v


def _fresh_roots(memrefs: list[ir.Value]) -> list[ir.Value] | None:
    """The fresh buffer each of ``memrefs`` is a view of, or None when one is not a view of a fresh buffer."""
    roots = [_root(m) for m in memrefs]
    if any((op := _defining_op(r)) is None or op.name not in _FRESH | {_GLOBAL} for r in roots):
        return None
    return roots


@register_pass("relax-split-deallocs")
class SplitDeallocs:
    """Split bufferization.dealloc over distinct fresh buffers into one dealloc per buffer."""

    def run(self, module: ir.Operation) -> None:
        found: list[ir.Operation] = []

        def visit(op: ir.Operation) -> ir.WalkResult:
            if op.name == "bufferization.dealloc":
                found.append(op)
            return ir.WalkResult.ADVANCE

        module.walk(visit)
        for op in found:
            d = op.opview
            memrefs, conditions, retained = list(d.memrefs), list(d.conditions), list(d.retained)
            roots = _fresh_roots(memrefs) if len(memrefs) >= 2 else None
            if roots is None:
                continue
            with ir.InsertionPoint(op), op.location:
                # views of one buffer (a planned storage and a view of it) are freed once, if any owns it
                # a constant's buffer (memref.get_global) is dropped: ownership-based deallocation never
                # owns one, so its condition is false at run time (a free would be a bug)
                groups: dict[ir.Value, tuple[ir.Value, ir.Value]] = {}
                for m, c, r in zip(memrefs, conditions, roots):
                    if _defining_op(r).name == _GLOBAL:
                        continue
                    groups[r] = (groups[r][0], arith.ori(groups[r][1], c)) if r in groups else (m, c)
                parts = [bufferization.DeallocOp([m], [c], retained) for m, c in groups.values()]
                false = arith.constant(ir.IntegerType.get_signless(1), 0) if not parts else None
                for j, old in enumerate(op.results):
                    owned = parts[0].results[j] if parts else false
                    for p in parts[1:]:
                        owned = arith.ori(owned, p.results[j])
                    old.replace_all_uses_with(owned)
            op.erase()

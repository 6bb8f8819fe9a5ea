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

VIEWS = frozenset(
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
    """The buffer ``v`` is a view of (following view ops to their source, and the argument of a block with
    one predecessor to the value that predecessor passes: relax-thread-buffers threads buffers so)."""
    while True:
        op = _defining_op(v)
        if op is not None and op.name in VIEWS:
            v = op.operands[0]
        elif op is None and (passed := _incoming(ir.BlockArgument(v))) is not None:
            v = passed
        else:
            return v


def _incoming(arg: ir.BlockArgument) -> ir.Value | None:
    """The value a block's only predecessor passes for ``arg`` (a cf.br or cf.cond_br), else None."""
    block = arg.owner
    preds = [p for p in block.predecessors]
    if len(preds) != 1:
        return None
    term = preds[0].operations[len(preds[0].operations) - 1].operation
    succs = list(term.successors)
    if term.name == "cf.br":
        return term.operands[arg.arg_number]
    if term.name != "cf.cond_br" or succs.count(block) != 1:
        return None
    sizes = list(ir.DenseI32ArrayAttr(term.attributes["operandSegmentSizes"]))
    first = 1 if succs[0] == block else 1 + sizes[1]
    return term.operands[first + arg.arg_number]


def _never_owned(root: ir.Value) -> bool:
    """A constant's buffer (memref.get_global) or a function's argument: ownership-based deallocation never
    owns one (static memory; the caller's buffer, by its function boundary ABI), so its condition is false
    at run time."""
    op = _defining_op(root)
    if op is not None:
        return op.name == _GLOBAL
    block = root.owner
    return block.owner.operation.name == "func.func" and next(iter(block.predecessors), None) is None


def _fresh_roots(memrefs: list[ir.Value]) -> list[ir.Value] | None:
    """The fresh buffer each of ``memrefs`` is a view of, or None when one is not a view of a fresh buffer
    (or of a buffer never owned)."""
    roots = [_root(m) for m in memrefs]
    if any(not _never_owned(r) and ((op := _defining_op(r)) is None or op.name not in _FRESH) for r in roots):
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
                # a buffer never owned (a constant's, an argument's) is dropped (a free would be a bug)
                groups: dict[ir.Value, tuple[ir.Value, ir.Value]] = {}
                for m, c, r in zip(memrefs, conditions, roots):
                    if _never_owned(r):
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

"""``relax-dce``: remove relax ops whose results are unused, and unused dataflow block outputs.

IRDL ops carry no ``Pure`` trait, so upstream ``canonicalize``/DCE keep every dead relax op. Every relax
compute op is pure (``call_tir`` kernels included); an impure op (``PURE = False``: ``call_dps_library``
calls code we cannot see) is kept unless its class's ``removable_when_unused`` says otherwise: ``match_cast``
is removed only when its check can never fail and it binds no new symbol (its target type is implied by
its operand's type). Like Relax, dropping a dead value never drops a run-time check,
and a symbol a later type names stays bound. Dataflow blocks lose the outputs nothing after them uses;
a block left with no output and no op disappears. The regions of control flow (``scf.if``/``scf.while`` from
relax branches and loops) are cleaned the same way.
"""

from __future__ import annotations

from mlir import ir

from relax_mlir.transforms.registry import register_pass
from relax_mlir.transforms.relax_ir import (
    drop_dataflow_results,
    functions,
    is_dataflow,
    is_pure,
    relax_class,
    unused,
)


def removable(op: ir.Operation) -> bool:
    """A relax op that may be erased when its results are unused."""
    if is_pure(op):
        return True
    return relax_class(op) is not None and op.opview.removable_when_unused()  # type: ignore[attr-defined]


def dce_block(block: ir.Block) -> int:
    """Erase dead relax ops in ``block``, its dataflow blocks and the regions of its other ops (``scf.if``
    branches, ``scf.while`` bodies), last to first; the number erased."""
    erased = 0
    for op in reversed(list(block.operations)):
        op = op.operation
        if is_dataflow(op):
            erased += _dce_dataflow(op)
            continue
        for region in op.regions:  # before the ops above: uses inside a region keep values outside it alive
            for inner in region.blocks:
                erased += dce_block(inner)
        if removable(op) and unused(op):
            op.erase()
            erased += 1
    return erased


def _dce_dataflow(op: ir.Operation) -> int:
    keep = [i for i, r in enumerate(op.results) if list(r.uses)]
    erased = 0
    if len(keep) != len(op.results):
        erased += len(op.results) - len(keep)
        op = drop_dataflow_results(op, keep)
    block = op.regions[0].blocks[0]
    erased += dce_block(block)
    if not op.results and len(block.operations) == 1:  # only the yield is left
        op.erase()
        erased += 1
    return erased


def dce(module: ir.Operation) -> int:
    """Run relax-dce on every function of ``module``; the number of ops and outputs removed."""
    return sum(dce_block(f.regions[0].blocks[0]) for f in functions(module))


@register_pass("relax-dce")
class DeadCodeElimination:
    """Remove unused pure relax ops and unused dataflow block outputs (run-time checks are kept)."""

    def run(self, module: ir.Operation) -> None:
        dce(module)

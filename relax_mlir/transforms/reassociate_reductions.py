"""``relax-reassociate-reductions``: let LLVM vectorize float reductions of ``linalg.generic`` kernels.

A float sum, product, max or min accumulated in a loop is a serial chain unless the compiler may
reassociate it; LLVM's loop vectorizer then keeps 8-32 partial accumulators and combines them at the
end (which is also what numpy's pairwise and onnxruntime's vector sums do, and usually more accurate
than one serial chain). The combiner of each reduction (the float op in a ``linalg.generic`` with a
reduction iterator that reads the accumulator block argument and is yielded) gets
``fastmath<reassoc>``; nothing else changes. Runs on bufferized kernels before ``convert-linalg-to-loops``.
"""

from __future__ import annotations

from mlir import ir

from relax_mlir.transforms.fuse_multiply_add import with_fastmath_flag
from relax_mlir.transforms.registry import register_pass

COMBINERS = frozenset(
    {"arith.addf", "arith.mulf", "arith.maximumf", "arith.minimumf", "arith.maxnumf", "arith.minnumf"}
)


def _has_reduction(op: ir.Operation) -> bool:
    return "reduction" in str(op.attributes["iterator_types"])


def _mark_combiners(generic: ir.Operation) -> None:
    args = list(generic.regions[0].blocks[0].arguments)
    accs = args[_n_inputs(generic) :]
    terminator = list(generic.regions[0].blocks[0].operations)[-1]
    for yielded in terminator.operands:
        owner = yielded.owner
        if not isinstance(owner, (ir.Operation, ir.OpView)):
            continue
        op = owner.operation
        if op.name in COMBINERS and any(a in accs for a in op.operands):
            op.attributes["fastmath"] = with_fastmath_flag(op, "reassoc")


def _n_inputs(generic: ir.Operation) -> int:
    return ir.DenseI32ArrayAttr(generic.attributes["operandSegmentSizes"])[0]


@register_pass("relax-reassociate-reductions")
class ReassociateReductions:
    """Mark the combiners of float linalg.generic reductions fastmath<reassoc> (vectorizable sums/maxes)."""

    def run(self, module: ir.Operation) -> None:
        found: list[ir.Operation] = []

        def visit(op: ir.Operation) -> ir.WalkResult:
            if op.name == "linalg.generic" and _has_reduction(op):
                found.append(op)
            return ir.WalkResult.ADVANCE

        module.walk(visit)
        for op in found:
            _mark_combiners(op)

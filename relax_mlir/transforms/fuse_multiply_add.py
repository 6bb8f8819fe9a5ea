"""``relax-fuse-multiply-add``: contract ``a * b + c`` into ``math.fma`` (one rounding).

Like C compilers' default ``-ffp-contract=on``: a float multiply whose only use is an add becomes a
fused multiply-add. Vectorized matmul tiles already accumulate with FMAs (vector.contract lowers to
vector.fma); without this pass their scalar remainder loops round twice, so columns of one matmul
computed on different paths differ in the last bit.
"""

from __future__ import annotations

from mlir import ir
from mlir.dialects import math

from relax_mlir.pipelines.registry import register_pass


def _single_use_mulf(v: ir.Value, block: ir.Block) -> ir.Operation | None:
    owner = v.owner
    if not isinstance(owner, (ir.Operation, ir.OpView)):
        return None
    op = owner.operation
    if op.name != "arith.mulf" or op.block != block:
        return None
    if len(list(op.results[0].uses)) != 1:
        return None
    return op


@register_pass("relax-fuse-multiply-add")
class FuseMultiplyAdd:
    """Rewrite arith.addf(arith.mulf(a, b), c) with a single-use product into math.fma(a, b, c)."""

    def run(self, module: ir.Operation) -> None:
        adds: list[ir.Operation] = []

        def visit(op: ir.Operation) -> ir.WalkResult:
            if op.name == "arith.addf":
                adds.append(op)
            return ir.WalkResult.ADVANCE

        module.walk(visit)
        for add in adds:
            for i in (0, 1):
                mul = _single_use_mulf(add.operands[i], add.block)
                if mul is None:
                    continue
                with ir.InsertionPoint(add), add.location:
                    fma = math.fma(mul.operands[0], mul.operands[1], add.operands[1 - i])
                add.results[0].replace_all_uses_with(fma)
                add.erase()
                mul.erase()
                break

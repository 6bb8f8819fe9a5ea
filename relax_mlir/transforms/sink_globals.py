"""``relax-sink-globals``: a ``memref.get_global`` used in other blocks is re-read in each user's block.

Canonicalization hoists constants to the entry block, so after bufferization a constant's
``memref.get_global`` sits before the host code's first check branch (a match_cast, a guard on the
inputs) and is used after it. MLIR 22's ``ownership-based-buffer-deallocation`` aborts on such a global
(``Operation::isBeforeInBlock`` asserts: "Expected other operation to have the same parent block").
Reading the global again next to each use in another block (it is only an address) avoids that.
Runs right before ``ownership-based-buffer-deallocation``.
"""

from __future__ import annotations

from mlir import ir

from relax_mlir.transforms.registry import register_pass


@register_pass("relax-sink-globals")
class SinkGlobals:
    """Re-read a memref.get_global next to each user in another block (before buffer deallocation)."""

    def run(self, module: ir.Operation) -> None:
        found: list[ir.Operation] = []

        def visit(op: ir.Operation) -> ir.WalkResult:
            if op.name == "memref.get_global":
                found.append(op)
            return ir.WalkResult.ADVANCE

        module.walk(visit)
        for op in found:
            result = op.results[0]
            home = op.block
            moved = False
            for use in list(result.uses):
                user = use.owner.operation if isinstance(use.owner, ir.OpView) else use.owner
                if user.block == home:
                    continue
                clone = op.clone(ir.InsertionPoint(user))
                user.operands[use.operand_number] = clone.results[0]
                moved = True
            if moved and next(iter(result.uses), None) is None:
                op.erase()

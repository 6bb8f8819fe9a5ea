"""``relax-return-destinations``: a kernel that returns a reshaped view of its destination returns the
destination itself.

A kernel writes each result into its destination argument (``relax.destinations``); after bufferization it
may return that buffer through views (``memref.reshape`` / ``expand_shape`` / ``collapse_shape`` /
``cast``: the rows of a ``[b, s, k]`` product are computed on a collapsed view and viewed back), and
copy such a view into the destination (``pin_results`` does not see through a result made in regions).
``drop-equivalent-buffer-results`` only drops a result that is the argument itself; a kept one makes
``ownership-based-buffer-deallocation`` track it (MLIR 22 then lowers a multi-buffer dealloc through a
``memref<i1>``, which aborts). The same buffer under the argument's own type is the argument, and the copy is dropped.
Runs right before ``drop-equivalent-buffer-results``.
"""

from __future__ import annotations

from mlir import ir

from relax_mlir.lowering.kernel import DESTINATIONS_ATTR
from relax_mlir.transforms.registry import register_pass

COPIES = ("linalg.copy", "memref.copy")
VIEWS = ("memref.reshape", "memref.expand_shape", "memref.collapse_shape", "memref.cast")


def _viewed(v: ir.Value) -> ir.Value:
    """The value ``v`` is a chain of whole-buffer views of."""
    while isinstance(v.owner, (ir.Operation, ir.OpView)) and v.owner.operation.name in VIEWS:
        v = v.owner.operation.operands[0]
    return v


@register_pass("relax-return-destinations")
class ReturnDestinations:
    """Return a kernel's destination argument instead of a reshaped view of it, and drop copies of such a
    view into the destination (after bufferization)."""

    def run(self, module: ir.Operation) -> None:
        for f in module.regions[0].blocks[0].operations:
            f = f.operation
            if f.name != "func.func" or DESTINATIONS_ATTR not in f.attributes or not f.regions[0].blocks:
                continue
            block = f.regions[0].blocks[0]
            for op in list(block.operations):
                op = op.operation
                if op.name in COPIES and len(op.operands) == 2:
                    src, dst = op.operands
                    if src.type == dst.type and _viewed(src) == _viewed(dst):
                        op.erase()  # the same elements of the same buffer (whole views keep the order)
            ret = block.operations[len(block.operations) - 1].operation
            args = list(block.arguments)
            for i, v in enumerate(ret.operands):
                arg = args[len(args) - len(ret.operands) + i]
                if v != arg and v.type == arg.type and _viewed(v) == arg:
                    ret.operands[i] = arg

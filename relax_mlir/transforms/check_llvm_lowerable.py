"""``relax-check-llvm-lowerable``: memrefs MLIR 22 cannot lower to LLVM become errors, not aborts."""

from __future__ import annotations

from mlir import ir

from relax_mlir.transforms.registry import PassFailed, register_pass


def _bool_memref(t: ir.Type) -> bool:
    return (
        isinstance(t, ir.MemRefType)
        and isinstance(t.element_type, ir.IntegerType)
        and t.element_type.width == 1
    )


@register_pass("relax-check-llvm-lowerable")
class CheckLlvmLowerable:
    """Report memrefs of i1, which MLIR 22's memref-to-LLVM lowering aborts on, as errors instead."""

    def run(self, module: ir.Operation) -> None:
        bad: list[ir.Operation] = []

        def visit(op: ir.Operation) -> ir.WalkResult:
            # the lowering aborts on memref ops; every memref of i1 reaches one (allocated, loaded, stored)
            if op.name.startswith("memref.") and any(
                _bool_memref(v.type) for v in (*op.operands, *op.results)
            ):
                bad.append(op)
                return ir.WalkResult.INTERRUPT
            return ir.WalkResult.ADVANCE

        module.walk(visit, ir.WalkOrder.PRE_ORDER)
        if not bad:
            return
        bad[0].location.emit_error(
            f"'{bad[0].name}' op uses a memref of i1, which MLIR 22 cannot lower to LLVM (it aborts); this "
            "happens when buffers of data-dependent size (from unique or nonzero) flow into further kernels"
        )
        raise PassFailed("memref of i1 found")

"""``relax-fuse-multiply-add``: allow ``a * b + c`` to be contracted into one fused multiply-add.

Like C compilers' default ``-ffp-contract=on``: a float multiply whose only use is an add, and that add,
get ``fastmath<contract>``, so LLVM emits an FMA where the target has one (and mul + add otherwise).
Vectorized matmul tiles already accumulate with fused multiply-adds (``vector.fma`` lowers to
``llvm.fmuladd``); without this their scalar remainder loops round twice, so columns of one matmul
computed on different paths differ in the last bit. (Rewriting to ``math.fma`` instead forces an FMA
even where LLVM would schedule mul + add better: remainder loops ran 2x slower.)
"""

from __future__ import annotations

from mlir import ir

from relax_mlir.transforms.registry import register_pass


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
    """Mark arith.mulf + arith.addf pairs (single-use product) fastmath<contract> for FMA contraction."""

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
                for op in (mul, add):
                    op.attributes["fastmath"] = with_fastmath_flag(op, "contract")
                break


def with_fastmath_flag(op: ir.Operation, flag: str) -> ir.Attribute:
    """The op's fastmath flags plus ``flag``."""
    flags = set()
    if "fastmath" in op.attributes:
        text = str(op.attributes["fastmath"])  # #arith.fastmath<nnan,contract> or #arith.fastmath<none>
        flags = {f.strip() for f in text[text.index("<") + 1 : -1].split(",")} - {"none"}
    flags.add(flag)
    return ir.Attribute.parse(f"#arith.fastmath<{','.join(sorted(flags))}>")

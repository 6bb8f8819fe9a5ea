"""``relax-dispatch-blas``: offload f32/f64 matmuls (and a following bias add) to BLAS.

Runs on relax IR, before ``convert-relax-to-linalg``. A ``relax.matmul`` whose operands are

- ``[..., m, k] x [k, n]`` (lhs batch dims fold into ``m``), or
- ``[b..., m, k] x [b..., k, n]`` with the same batch dims,

of one dtype (f32 or f64), with provably equal contraction dims (the same symbolic expression) and a
result of known dims, becomes ``relax.call_dps_library "relax_blas_gemm"(lhs, rhs)`` (``lowering/blas.py``).
If the product's only use is a ``relax.add`` with a ``bias`` of shape ``[n]`` or of the product's shape
(a residual), and the add keeps the product's type, the add is folded in: ``relax_blas_gemm(lhs, rhs,
bias)`` (BLAS accumulates onto the bias, ``beta = 1``). Activations after it stay relax ops (they become
elementwise kernels). Anything else (1-D operands, broadcast batch dims, dims only assumed equal,
other dtypes) is left to the generated kernels. Without numpy's OpenBLAS the pass changes nothing.
"""

from __future__ import annotations

from mlir import ir

from relax_mlir.dialects.ops.structural import call_dps_library
from relax_mlir.dialects.types import TensorType, relax_type
from relax_mlir.lowering import blas
from relax_mlir.transforms.registry import register_pass


def _tensor(v: ir.Value) -> TensorType | None:
    t = relax_type(v.type)
    if not isinstance(t, TensorType) or t.shape is None or t.dtype is None:
        return None
    return t


def _gemm_operands(op: ir.Operation) -> TensorType | None:
    """The matmul's result type if BLAS computes it exactly as the op means it, else None."""
    lhs, rhs, out = _tensor(op.operands[0]), _tensor(op.operands[1]), _tensor(op.results[0])
    if lhs is None or rhs is None or out is None:
        return None
    a, b = lhs.shape, rhs.shape
    assert a is not None and b is not None and out.shape is not None
    if not (lhs.dtype == rhs.dtype == out.dtype and out.dtype in blas.DTYPES):
        return None
    if len(a) < 2 or len(b) < 2 or (len(b) > 2 and (len(a) != len(b) or a[:-2] != b[:-2])):
        return None
    if a[-1] is None or a[-1] != b[-2]:
        return None
    if any(d is None for d in (*a[:-2], *b[:-2])):
        return None
    if len(out.shape) != len(a) or any(d is None for d in out.shape):
        return None
    return out


def _bias_add(op: ir.Operation, out: TensorType) -> tuple[ir.Operation, ir.Value] | None:
    """The ``relax.add`` that is the product's only use and adds a foldable bias: (add, bias)."""
    uses = list(op.results[0].uses)
    if len(uses) != 1:
        return None
    add = uses[0].owner
    if not isinstance(add, (ir.Operation, ir.OpView)) or add.operation.name != "relax.add":
        return None
    add = add.operation
    others = [v for v in add.operands if v != op.results[0]]
    if len(others) != 1 or _tensor(add.results[0]) != out:
        return None
    bias = others[0]
    t = _tensor(bias)
    assert out.shape is not None
    if t is None or t.dtype != out.dtype or t.shape not in ((out.shape[-1],), out.shape):
        return None
    return add, bias


def _matmuls(module: ir.Operation) -> list[ir.Operation]:
    found: list[ir.Operation] = []

    def visit(op: ir.Operation) -> ir.WalkResult:
        if op.name == "relax.matmul":
            found.append(op)
        return ir.WalkResult.ADVANCE

    module.walk(visit, ir.WalkOrder.PRE_ORDER)
    return found


@register_pass("relax-dispatch-blas")
class DispatchBlas:
    """Offload f32/f64 matmuls (with a following bias or residual add) to BLAS via call_dps_library."""

    bias: bool = True  # fold a following bias/residual add into the gemm

    def run(self, module: ir.Operation) -> None:
        if not blas.available():
            return
        for op in _matmuls(module):
            out = _gemm_operands(op)
            if out is None:
                continue
            args = [op.operands[0], op.operands[1]]
            target = op
            fused = _bias_add(op, out) if self.bias else None
            if fused is not None:
                target, bias = fused
                args.append(bias)
            with ir.InsertionPoint(target), target.location:
                (result,) = call_dps_library(blas.GEMM, args, [out], loc=target.location)
            target.results[0].replace_all_uses_with(result)
            target.erase()
            if target is not op:
                op.erase()

"""Linear algebra ops."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from mlir import ir

from relax_mlir.dialects.registry import Operand, RelaxOp, relax_op
from relax_mlir.dialects.types import RelaxType, TensorType
from relax_mlir.errors import ShapeError
from relax_mlir.shape_infer.dims import (
    broadcast_shapes,
    fmt_shape,
    join_dtype,
    provably_different,
    tensor_operand,
)
from relax_mlir.shape_infer.expr import format_dim


@relax_op
class MatmulOp(RelaxOp):
    """Matrix product with numpy semantics: batched, broadcasting batch dims, 1-D operands promoted.

    ``%z = "relax.matmul"(%x, %w) : (!relax.tensor<["b", "s", 512], f32>, !relax.tensor<[512, 64], f32>)
    -> !relax.tensor<["b", "s", 64], f32>``
    """

    NAME = "matmul"
    OPERANDS = (Operand("lhs"), Operand("rhs"))

    @classmethod
    def deduce(cls, operand_types: Sequence[RelaxType | None], attrs: dict[str, Any]) -> list[RelaxType]:
        lhs = tensor_operand(operand_types[0], "lhs")
        rhs = tensor_operand(operand_types[1], "rhs")
        dtype = join_dtype(lhs, rhs, ("lhs", "rhs"))
        for name, t in (("lhs", lhs), ("rhs", rhs)):
            if t.ndim == 0:
                raise ShapeError(f"operand '{name}' must have rank >= 1, got a scalar")
        if lhs.shape is None or rhs.shape is None:
            return [TensorType(None, dtype)]
        a = lhs.shape if len(lhs.shape) > 1 else (None,) + lhs.shape
        b = rhs.shape if len(rhs.shape) > 1 else rhs.shape + (None,)
        k_lhs, k_rhs = a[-1], b[-2]
        if provably_different(k_lhs, k_rhs):
            raise ShapeError(
                f"contraction dims differ: 'lhs' {fmt_shape(lhs.shape)} has {format_dim(k_lhs)}, "
                f"'rhs' {fmt_shape(rhs.shape)} has {format_dim(k_rhs)}"
            )
        try:
            batch = broadcast_shapes([a[:-2], b[:-2]], ["lhs", "rhs"])
        except ShapeError:
            raise ShapeError(
                f"cannot broadcast batch dims {fmt_shape(a[:-2])} of 'lhs' {fmt_shape(lhs.shape)} "
                f"and {fmt_shape(b[:-2])} of 'rhs' {fmt_shape(rhs.shape)}"
            ) from None
        out = list(batch)
        if len(lhs.shape) > 1:
            out.append(a[-2])
        if len(rhs.shape) > 1:
            out.append(b[-1])
        return [TensorType(tuple(out), dtype)]


def matmul(lhs: ir.Value, rhs: ir.Value, *, loc: ir.Location | None = None) -> ir.Value:
    """Matrix product (numpy.matmul semantics)."""
    return MatmulOp.build([lhs, rhs], loc=loc).result

"""Ops whose output shapes depend on data: their results are coarse (rank known, dims unknown).

Restore precision with ``relax.match_cast``, which binds new symbols and is checked at run time.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from mlir import ir

from relax_mlir.dialects.registry import Operand, RelaxOp, relax_op
from relax_mlir.dialects.types import RelaxType, TensorType
from relax_mlir.shape_infer.dims import tensor_operand
from relax_mlir.shape_infer.expr import const


@relax_op
class UniqueOp(RelaxOp):
    """The sorted unique elements of the flattened tensor (length known only at run time).

    ``%u = "relax.unique"(%x) : (!relax.tensor<["n", 4], i64>) -> !relax.tensor<["?"], i64>``
    """

    NAME = "unique"
    OPERANDS = (Operand("x"),)

    @classmethod
    def deduce(cls, operand_types: Sequence[RelaxType | None], attrs: dict[str, Any]) -> list[RelaxType]:
        x = tensor_operand(operand_types[0], "x")
        return [TensorType((None,), x.dtype)]


def unique(x: ir.Value, *, loc: ir.Location | None = None) -> ir.Value:
    """Sorted unique elements of ``x``."""
    return UniqueOp.build([x], loc=loc).result


@relax_op
class NonzeroOp(RelaxOp):
    """Indices of the non-zero elements, shape (rank, count) with the count known only at run time.

    ``%i = "relax.nonzero"(%x) : (!relax.tensor<["n", 4], f32>) -> !relax.tensor<[2, "?"], i64>``
    """

    NAME = "nonzero"
    OPERANDS = (Operand("x"),)

    @classmethod
    def deduce(cls, operand_types: Sequence[RelaxType | None], attrs: dict[str, Any]) -> list[RelaxType]:
        x = tensor_operand(operand_types[0], "x")
        rank = None if x.shape is None else const(len(x.shape))
        return [TensorType((rank, None), "i64")]


def nonzero(x: ir.Value, *, loc: ir.Location | None = None) -> ir.Value:
    """Indices of the non-zero elements of ``x``."""
    return NonzeroOp.build([x], loc=loc).result

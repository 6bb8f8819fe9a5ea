"""Helpers for the canonicalization rules that op classes declare (``RelaxOp.canonicalize``)."""

from __future__ import annotations

from mlir import ir

from relax_mlir.dialects.registry import RelaxOp
from relax_mlir.dialects.types import TensorType, relax_type


def tensor_of(v: ir.Value) -> TensorType | None:
    """The tensor type of ``v``, or None when it is not a tensor."""
    t = relax_type(v.type)
    return t if isinstance(t, TensorType) else None


def fully_known(t: TensorType | None) -> bool:
    """A tensor type with known rank, dtype and no unknown dim."""
    return t is not None and t.shape is not None and t.dtype is not None and None not in t.shape


def producer(v: ir.Value, cls: type[RelaxOp]) -> ir.Operation | None:
    """The op of class ``cls`` that defines ``v``, or None."""
    if not isinstance(v, ir.OpResult) or v.owner.name != cls.OPERATION_NAME:
        return None
    return v.owner.operation


def attr_value(op: ir.Operation, name: str) -> object:
    """The Python value of attribute ``name`` of relax op ``op``."""
    return op.opview.attr_values()[name]  # type: ignore[attr-defined]


def same_type_identity(op: ir.Operation) -> ir.Value | None:
    """The operand of a one-operand op whose result has the operand's own fully known type."""
    x = op.operands[0]
    if fully_known(tensor_of(x)) and x.type == op.results[0].type:
        return x
    return None

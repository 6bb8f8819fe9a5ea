"""Control flow: ``relax.condition`` turns a scalar relax value into the ``i1`` that upstream ``scf.if`` and
``scf.condition`` take. Branches and loops are upstream ``scf.if`` / ``scf.while`` over relax values (their
result types are joins, ``dialects/join.py``; ``relax-infer-shapes`` keeps them up to date)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from mlir import ir

from relax_mlir.dialects.ops.structural import DeclaredResultsOp
from relax_mlir.dialects.registry import Operand, caller_location, check_operands, describe_location, relax_op
from relax_mlir.dialects.types import PrimType, RelaxType, TensorType, relax_type
from relax_mlir.errors import ShapeError
from relax_mlir.lowering.kernel import element, is_float

if TYPE_CHECKING:
    from relax_mlir.dialects.host_lowering import HostLowering


@relax_op
class ConditionOp(DeclaredResultsOp):
    """True when a scalar tensor (any dtype) or a prim value is nonzero, as a builtin ``i1``.

    ``%c = "relax.condition"(%t) : (!relax.tensor<[], i1>) -> i1``
    """

    NAME = "condition"
    OPERANDS = (Operand("value", "any"),)
    RESULTS = (Operand("cond", "i1"),)
    HOISTABLE = True
    ALIASES_OPERANDS = False

    @classmethod
    def check_results(
        cls,
        operand_types: Sequence[RelaxType | None],
        attrs: dict[str, Any],
        result_types: Sequence[RelaxType],
    ) -> None:
        check_condition_operand(operand_types[0])

    def lower_host(self, host: HostLowering) -> None:
        x = host.lookup(self.operands[0])
        out, zero = host.fresh("cond"), host.fresh("zero")
        if hasattr(x, "names"):  # a prim value: one index
            host.emit(f"{zero} = arith.constant 0 : index")
            host.emit(f"{out} = arith.cmpi ne, {x.names[0]}, {zero} : index")
        else:
            dtype = x.type.dtype
            if x.type.shape != ():
                raise ShapeError(f"relax.condition needs a scalar tensor, got {x.type}")
            stored, value = element(dtype), host.fresh("c")
            host.emit(f"{value} = tensor.extract {x.name}[] : {x.mlir}")
            if is_float(dtype):
                host.emit(f"{zero} = arith.constant 0.0 : {stored}")
                host.emit(f"{out} = arith.cmpf une, {value}, {zero} : {stored}")
            else:
                host.emit(f"{zero} = arith.constant 0 : {stored}")
                host.emit(f"{out} = arith.cmpi ne, {value}, {zero} : {stored}")
        host.bind(self.results[0], out)


def check_condition_operand(t: RelaxType | None) -> None:
    """ShapeError unless ``t`` can be a condition: a scalar tensor or a prim value."""
    if isinstance(t, PrimType):
        return
    if not isinstance(t, TensorType):
        raise ShapeError(f"operand 'value' must be a scalar tensor or a prim value, got {t}")
    if t.shape is not None and len(t.shape) != 0:
        raise ShapeError(f"operand 'value' must be a scalar tensor (rank 0), got {t}")


def condition(value: ir.Value, *, loc: ir.Location | None = None) -> ir.Value:
    """The ``i1`` that is true when scalar tensor or prim ``value`` is nonzero (for ``scf.if``/``scf.while``)."""
    if loc is None:
        loc = caller_location()
    where = f"{describe_location(loc)}relax.condition"
    (value,) = check_operands([value], ["value"], where)
    try:
        check_condition_operand(relax_type(value.type))
    except ShapeError as e:
        raise ShapeError(f"{where}: {e}") from None
    op = ir.Operation.create(
        ConditionOp.OPERATION_NAME, results=[ir.IntegerType.get_signless(1)], operands=[value], loc=loc
    )
    return op.result

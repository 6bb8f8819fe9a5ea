"""Calls between relax functions: ``relax.call``.

The result types of a call are the callee's declared result types with the callee's symbols replaced by
what the arguments bind (``dialects/bind.py``): calling ``@f(%x: ["n", 4]) -> ["2 * n", 4]`` with
``["m + 1", 4]`` gives ``["2 * m + 2", 4]``. Deduction needs the callee's signature, which an op's
``deduce`` (operand types and attributes only) cannot see: ``deduce_call`` takes it, and the builder,
``relax-infer-shapes`` and ``relax-verify`` look the callee up in the module.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from mlir import ir

from relax_mlir.dialects.bind import Binding, bind, instantiate
from relax_mlir.dialects.ops.structural import DeclaredResultsOp
from relax_mlir.dialects.registry import Attr, Operand, relax_op
from relax_mlir.dialects.types import RelaxType, relax_type
from relax_mlir.errors import ShapeError

if TYPE_CHECKING:
    from relax_mlir.dialects.host_lowering import HostLowering


@relax_op
class CallOp(DeclaredResultsOp):
    """Call a relax function of the same module; its results are the callee's, instantiated.

    ``%y = "relax.call"(%x) {callee = @sq} : (!relax.tensor<["m"], f32>) -> !relax.tensor<["m"], f32>``
    """

    NAME = "call"
    OPERANDS = (Operand("args", "any", variadic=True),)
    RESULTS = (Operand("outs", "any", variadic=True),)
    ATTRS = (Attr("callee", "symbol"),)
    PURE = False  # checks its arguments at run time; the callee may hold checks too

    def lower_host(self, host: HostLowering) -> None:
        host.call_function(self.operation)


def callee_signature(ftype: ir.FunctionType) -> tuple[list[RelaxType], list[RelaxType]]:
    """A relax function's parameter and result types; ShapeError for a non-relax one."""
    params, results = [relax_type(t) for t in ftype.inputs], [relax_type(t) for t in ftype.results]
    for what, types, mlir in (("parameter", params, ftype.inputs), ("result", results, ftype.results)):
        for i, t in enumerate(types):
            if t is None:
                raise ShapeError(f"the callee's {what} #{i} has type {mlir[i]}, which is not a relax type")
    return params, results  # type: ignore[return-value]


def deduce_call(
    ftype: ir.FunctionType, operand_types: Sequence[RelaxType | None]
) -> tuple[Binding, list[RelaxType]]:
    """The binding of the callee's symbols and the call's result types; ShapeError when an argument cannot
    match its parameter."""
    params, results = callee_signature(ftype)
    binding = bind(params, operand_types)
    return binding, [instantiate(t, binding) for t in results]


def call(
    callee: str,
    ftype: ir.FunctionType,
    args: Sequence[ir.Value],
    *,
    loc: ir.Location | None = None,
) -> list[ir.Value]:
    """Call relax function ``@callee`` of type ``ftype`` with ``args``; the results are deduced."""
    from relax_mlir.dialects.registry import caller_location, describe_location

    loc = loc or caller_location()
    try:
        _, results = deduce_call(ftype, [relax_type(a.type) for a in args])
    except ShapeError as e:
        raise ShapeError(f"{describe_location(loc)}relax.call @{callee}: {e}") from None
    attrs: dict[str, Any] = {"callee": callee}
    return list(CallOp.build(list(args), attrs, result_types=results, loc=loc).results)

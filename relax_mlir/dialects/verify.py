"""Structural verification of parsed relax IR: what an op definition guarantees in a C++ dialect.

MLIR 22's IRDL cannot describe operand lists whose types differ (a constraint variable binds
to the first type it sees, so ``relax.make_tuple``, ``relax.concat`` and ``relax.call_tir``
would reject tensors of different shapes). relax ops are therefore parsed as ops of an
unregistered dialect, and this module checks, right after parsing, what IRDL would have:
every op belongs to a known dialect, every ``relax.*`` op is defined, its operand/result
counts, type kinds and attributes match its definition, and every ``!relax`` type parses.
"""

from __future__ import annotations

from dataclasses import dataclass

from mlir import ir

from relax_mlir.dialects.registry import ATTR_KINDS, DIALECT, OPS, RelaxOp, attr_spelling, check_types
from relax_mlir.dialects.types import relax_type
from relax_mlir.errors import ParseError


@dataclass
class Problem:
    """A located verification failure."""

    loc: ir.Location
    message: str


def check_structure(module: ir.Operation) -> list[Problem]:
    """Every structural problem of ``module``, in IR order."""
    problems: list[Problem] = []
    context = module.context
    _walk(module, context, problems)
    return problems


def _walk(op: ir.Operation, context: ir.Context, problems: list[Problem]) -> None:
    for region in op.regions:
        for block in region.blocks:
            for arg in block.arguments:
                _check_type(arg.type, op, problems, f"argument #{arg.arg_number}", arg.location)
            for inner in block.operations:
                _check_op(inner.operation, context, problems)
                _walk(inner.operation, context, problems)


def _check_op(op: ir.Operation, context: ir.Context, problems: list[Problem]) -> None:
    name = op.name
    dialect = name.split(".", 1)[0]
    if dialect == DIALECT:
        cls = OPS.get(name[len(DIALECT) + 1 :])
        if cls is None:
            problems.append(Problem(op.location, f"unregistered operation '{name}' in dialect 'relax'"))
            return
        for i, value in enumerate(op.operands):
            if not _check_type(value.type, op, problems, f"operand #{i}"):
                return
        for i, value in enumerate(op.results):
            if not _check_type(value.type, op, problems, f"result #{i}"):
                return
        message = op_structure_problem(cls, op)
        if message is not None:
            problems.append(Problem(op.location, f"'{name}' op {message}"))
        return
    if not context.is_registered_operation(name):
        problems.append(
            Problem(op.location, f"unregistered operation '{name}' (unknown dialect '{dialect}')")
        )
        return
    if name == "func.func":
        function_type = ir.FunctionType(ir.TypeAttr(op.attributes["function_type"]).value)
        for i, t in enumerate(function_type.results):
            _check_type(t, op, problems, f"result #{i} of the function type")


def op_structure_problem(cls: type[RelaxOp], op: ir.Operation) -> str | None:
    """What is wrong with the operands, results or attributes of relax op ``op``, or None."""
    message = check_types(cls, op)
    if message is not None:
        return message
    for a in cls.ATTRS:
        if a.name not in op.attributes:
            return f"requires attribute '{a.name}' ({attr_spelling(a.kind)})"
        if not ATTR_KINDS[a.kind].check(op.attributes[a.name]):
            return f"attribute '{a.name}' must be {attr_spelling(a.kind)}, got {op.attributes[a.name]}"
    return None


def _check_type(
    t: ir.Type, op: ir.Operation, problems: list[Problem], what: str, loc: ir.Location | None = None
) -> bool:
    try:
        relax_type(t)
    except ParseError as e:
        problems.append(Problem(loc or op.location, f"'{op.name}' op {what}: {e}"))
        return False
    return True

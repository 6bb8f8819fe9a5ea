"""MLIR contexts with the upstream dialects and the relax dialect loaded."""

from __future__ import annotations

import re

from mlir import ir
from mlir._mlir_libs import _mlir as _cext

import relax_mlir.dialects.relax  # noqa: F401  (registers every op)
from relax_mlir.dialects.verify import check_structure
from relax_mlir.errors import ParseError

_cext.globals.append_dialect_search_prefix("relax_mlir.dialects")


def make_context() -> ir.Context:
    """A new context where relax and every upstream dialect can be parsed.

    relax ops and types belong to an unregistered dialect at the MLIR level (see
    ``relax_mlir.dialects.verify`` for why); ``parse_module`` checks their structure after parsing.
    """
    ctx = ir.Context()
    ctx.allow_unregistered_dialects = True
    return ctx


_TOP_LEVEL_COUNT = re.compile(r"single top-level operation, found: \d+")


def parse_module(text: str, source_name: str = "<stdin>") -> ir.Operation:
    """Parse textual IR into a verified ``builtin.module`` (top-level ops get an implicit one, as in mlir-opt).

    Locations keep the file's own line and column numbers. Raises ``ir.MLIRError`` when MLIR rejects the
    text, and ``ParseError`` after emitting a located diagnostic for each malformed relax op or type.
    """
    module = _parse(text, source_name)
    problems = check_structure(module)
    for p in problems:
        p.loc.emit_error(p.message)
    if problems:
        raise ParseError(f"{len(problems)} malformed relax op(s) or type(s)")
    return module


def _parse(text: str, source_name: str) -> ir.Operation:
    try:
        op = ir.Operation.parse(text, source_name=source_name)
    except ir.MLIRError as e:
        if not _TOP_LEVEL_COUNT.search(str(e)):
            raise
        return ir.Operation.parse(_wrap_in_module(text), source_name=source_name).operation
    if op.operation.name == "builtin.module":
        return op.operation
    module = ir.Module.create(ir.Location.unknown())
    module.body.append(op.operation)
    return module.operation


def _wrap_in_module(text: str) -> str:
    """``module { text }`` with ``module {`` put on a blank or comment line so no op moves."""
    lines = text.split("\n")
    for i, line in enumerate(lines):
        stripped = line.strip()
        if stripped and not stripped.startswith("//"):
            break
        if i + 1 < len(lines):
            lines[i] = "module {" + line
            return "\n".join(lines) + "\n}\n"
    return "module { " + text + "\n}\n"

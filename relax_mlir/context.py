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


# Comments and attribute/location aliases (``#loc1 = loc(...)``) may come before the module.
_STARTS_WITH_MODULE = re.compile(r'(?:\s|//[^\n]*\n|#[\w.$-]+\s*=[^\n]*\n)*(?:module\b|"builtin\.module")')
_TOP_LEVEL_COUNT = re.compile(r"single top-level operation, found: \d+")


def parse_module(text: str | bytes, source_name: str = "<stdin>") -> ir.Operation:
    """Parse textual IR (or MLIR bytecode) into a verified ``builtin.module`` (top-level ops get an
    implicit one, as in mlir-opt).

    Locations keep the file's own line and column numbers. Raises ``ir.MLIRError`` when MLIR rejects the
    text, and ``ParseError`` after emitting a located diagnostic for each malformed relax op or type.
    """
    module = ir.Module.parse(text).operation if isinstance(text, bytes) else _parse(text, source_name)
    problems = check_structure(module)
    for p in problems:
        p.loc.emit_error(p.message)
    if problems:
        raise ParseError(f"{len(problems)} malformed relax op(s) or type(s)")
    return module


def _parse(text: str, source_name: str) -> ir.Operation:
    """Parse once where possible: a second parse in the same context would rename resource blobs."""
    if _STARTS_WITH_MODULE.match(text):
        return ir.Operation.parse(text, source_name=source_name).operation
    wrapped = _wrap_in_module(text)
    if wrapped is not None:
        return ir.Operation.parse(wrapped, source_name=source_name).operation
    # Code on the first line: wrapping would shift its columns, so try the text alone first.
    try:
        op = ir.Operation.parse(text, source_name=source_name)
    except ir.MLIRError as e:
        if not _TOP_LEVEL_COUNT.search(str(e)):
            raise
        return ir.Operation.parse("module { " + text + "\n}", source_name=source_name).operation
    module = ir.Module.create(ir.Location.unknown())
    module.body.append(op.operation)
    return module.operation


def _wrap_in_module(text: str) -> str | None:
    """``module { text }`` with ``module {`` put on a blank or comment line so no op moves; None when
    the first line holds code. A trailing ``{-# dialect_resources #-}`` section stays outside."""
    resources = text.find("{-#")
    body, tail = (text, "") if resources < 0 else (text[:resources], text[resources:])
    lines = body.split("\n")
    for i, line in enumerate(lines):
        stripped = line.strip()
        if stripped and not stripped.startswith("//"):
            if i == 0:
                return None
            lines[i - 1] = "module {" + lines[i - 1]
            return "\n".join(lines) + "}\n" + tail
    return None

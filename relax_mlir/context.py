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
    text, and ``ParseError`` after emitting a located diagnostic for each malformed relax op or type
    (or for an upstream op whose parser would abort the process, checked before MLIR sees the text).
    """
    if isinstance(text, bytes):
        module = ir.Module.parse(text).operation
    else:
        _check_iterator_types(text, source_name)
        _check_dense_lists(text, source_name)
        module = _parse(text, source_name)
    problems = check_structure(module)
    for p in problems:
        p.loc.emit_error(p.message)
    if problems:
        raise ParseError(f"{len(problems)} malformed relax op(s) or type(s)")
    return module


# Upstream's custom-form parsers of these ops cast every ``iterator_types`` element to a string attribute
# and abort the process on anything else (``iterator_types = [1]``, ``[#linalg.iterator_type<parallel>]``).
_STRING_ITERATOR_OPS = re.compile(r'(?<![\w."])(linalg\.generic|vector\.contract)\b\s*(?:(\{)|(#[\w.$-]+))?')
_ITERATOR_TYPES = re.compile(r"\biterator_types\s*=\s*\[")
_STRINGS_THEN_BRACKET = re.compile(r'\s*(?:"(?:[^"\\]|\\.)*"\s*(?:,\s*"(?:[^"\\]|\\.)*"\s*)*)?\]')


def _check_iterator_types(text: str, source_name: str) -> None:
    """Reject, with a located diagnostic and ``ParseError``, a custom-form ``linalg.generic`` or
    ``vector.contract`` whose ``iterator_types`` is a list holding anything but strings (MLIR aborts)."""
    for m in _STRING_ITERATOR_OPS.finditer(text):
        line_start = text.rfind("\n", 0, m.start()) + 1
        if "//" in text[line_start : m.start()]:
            continue
        if m.group(2):
            start = m.start(2)
        elif m.group(3):
            alias = re.search(rf"(?m)^{re.escape(m.group(3))}\s*=\s*(?=\{{)", text)
            if alias is None:
                continue
            start = alias.end()
        else:
            continue
        span = text[start : _closing_brace(text, start)]
        for it in _ITERATOR_TYPES.finditer(span):
            if not _STRINGS_THEN_BRACKET.match(span, it.end()):
                pos = start + it.start()
                line = text.count("\n", 0, pos) + 1
                col = pos - (text.rfind("\n", 0, pos) + 1) + 1
                message = (
                    f"'{m.group(1)}' expects 'iterator_types' to be a list of strings such as "
                    '["parallel", "reduction"]'
                )
                ir.Location.file(source_name, line, col).emit_error(message)
                raise ParseError(f"{source_name}:{line}:{col}: {message}")


_DENSE_LIST = re.compile(r"dense<\s*\[")


def _check_dense_lists(text: str, source_name: str) -> None:
    """Reject, with a located diagnostic and ``ParseError``, a ``dense<[...]>`` literal holding a string
    element (MLIR's parser asserts on one where it expects an integer)."""
    for m in _DENSE_LIST.finditer(text):
        line_start = text.rfind("\n", 0, m.start()) + 1
        if "//" in text[line_start : m.start()]:
            continue
        depth, pos = 0, m.end() - 1
        while pos < len(text):
            ch = text[pos]
            if ch == "[":
                depth += 1
            elif ch == "]":
                depth -= 1
                if depth == 0:
                    break
            elif ch == '"':
                line = text.count("\n", 0, pos) + 1
                col = pos - (text.rfind("\n", 0, pos) + 1) + 1
                message = "a dense<[...]> literal holds numbers or booleans, not strings"
                ir.Location.file(source_name, line, col).emit_error(message)
                raise ParseError(f"{source_name}:{line}:{col}: {message}")
            pos += 1


def _closing_brace(text: str, start: int) -> int:
    """Index just past the ``}`` matching the ``{`` at ``start`` (or the end of ``text``), skipping strings."""
    depth, i, n = 0, start, len(text)
    while i < n:
        c = text[i]
        if c == '"':
            i += 1
            while i < n and text[i] != '"':
                i += 2 if text[i] == "\\" else 1
        elif c == "{":
            depth += 1
        elif c == "}":
            depth -= 1
            if depth == 0:
                return i + 1
        i += 1
    return n


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

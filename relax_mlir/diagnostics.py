"""Formatting MLIR diagnostics the way mlir-opt prints them: ``file:line:col: error: message``."""

from __future__ import annotations

from dataclasses import dataclass

from mlir import ir

_SEVERITY = {
    ir.DiagnosticSeverity.ERROR: "error",
    ir.DiagnosticSeverity.WARNING: "warning",
    ir.DiagnosticSeverity.NOTE: "note",
    ir.DiagnosticSeverity.REMARK: "remark",
}


@dataclass(frozen=True)
class Diagnostic:
    """A diagnostic detached from MLIR: severity, file, line, column and message."""

    severity: str
    file: str
    line: int
    col: int
    message: str

    def __str__(self) -> str:
        where = (
            f"{self.file}:{self.line}:{self.col}: " if self.line else (f"{self.file}: " if self.file else "")
        )
        return f"{where}{self.severity}: {self.message}"


def file_location(loc: ir.Location) -> tuple[str, int, int]:
    """(file, line, col) of the first file location inside ``loc``, or ("", 0, 0)."""
    if loc.is_a_file():
        return loc.filename, loc.start_line, loc.start_col
    if loc.is_a_name():
        return file_location(loc.child_loc)
    if loc.is_a_callsite():
        return file_location(loc.callee)
    if loc.is_a_fused():
        for inner in loc.locations:
            found = file_location(inner)
            if found[1]:
                return found
    return "", 0, 0


# upstream errors whose fix in relax IR is another op: (what the message holds, the hint appended)
_HINTS = (
    (
        ("'func.call' op operand type mismatch", "!relax."),
        "; call a relax function with relax.call, which binds the callee's symbols to the arguments' "
        '(`%y = "relax.call"(%x) {callee = @f} : (...) -> ...`)',
    ),
)


def hinted(message: str) -> str:
    """``message`` with a hint appended when it is an upstream error whose fix is a relax op."""
    for needles, hint in _HINTS:
        if all(n in message for n in needles):
            return message + hint
    return message


def from_mlir(diag: ir.Diagnostic | ir.DiagnosticInfo) -> list[Diagnostic]:
    """A diagnostic and its attached notes."""
    file, line, col = file_location(diag.location)
    out = [Diagnostic(_SEVERITY.get(diag.severity, "error"), file, line, col, hinted(str(diag.message)))]
    for note in diag.notes:
        out.extend(from_mlir(note))
    return out


def from_error(error: Exception) -> list[Diagnostic]:
    """The diagnostics carried by an MLIRError (falls back to its text)."""
    infos = getattr(error, "error_diagnostics", None)
    if not infos:
        return [Diagnostic("error", "", 0, 0, str(error))]
    return [d for info in infos for d in from_mlir(info)]

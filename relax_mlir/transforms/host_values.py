"""Host values of ``relax-lower-host``: what a relax value is while its function is written as host code.

A tensor is an SSA tensor name and its type, a prim or shape value one ``index`` name per dim, a tuple its
fields; ``_Function`` is the text of the host function being written, ``_OpError`` an error at an op.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from mlir import ir

from relax_mlir.dialects.types import TensorType
from relax_mlir.lowering.kernel import builtin_tensor


def memref_type(t: TensorType) -> str:
    return builtin_tensor(t).replace("tensor<", "memref<", 1)


@dataclass
class _Tensor:
    name: str
    type: TensorType

    @property
    def mlir(self) -> str:
        return builtin_tensor(self.type)


@dataclass
class _Constant:
    """A constant tensor, written (``arith.constant``, a ``memref.get_global`` once bufferized) at each use:
    a global's buffer defined before a check's branch and used after it makes ownership-based buffer
    deallocation abort (MLIR 22), so none crosses a branch."""

    text: str
    type: TensorType


@dataclass
class _Ints:
    """A prim value (one index) or a shape value (several)."""

    names: list[str]
    is_shape: bool


@dataclass(frozen=True)
class _Field:
    """Field ``index`` of a tuple-typed relax value (an output that is not a ``make_tuple``)."""

    tuple: Any
    index: int


@dataclass
class _Tuple:
    fields: list[Any]


@dataclass
class _Function:
    """Text of one host function being written."""

    name: str
    lines: list[str] = field(default_factory=list)
    fail_blocks: list[str] = field(default_factory=list)
    counter: int = 0
    checks: list[str] = field(default_factory=list)

    def fresh(self, prefix: str = "h") -> str:
        """A new SSA name; a prefix ending in a digit (``c1``, a constant) gets a ``_`` before the counter, so
        ``c1`` + 6 and ``c`` + 16 stay apart."""
        self.counter += 1
        sep = "_" if prefix[-1:].isdigit() else ""
        return f"%{prefix}{sep}{self.counter}"


class _OpError(Exception):
    """A lowering error at a particular op (reported at its location)."""

    def __init__(self, op: ir.Operation, message: str) -> None:
        super().__init__(message)
        self.op = op
        self.message = message


def _location(op: ir.Operation) -> str:
    """``file:line:col: `` of an op's file location; just ``name: `` for line 0 (a location that names what
    a check is about rather than a source line, e.g. an importer's guard)."""
    loc = op.location
    if loc.is_a_file():
        if loc.start_line == 0:
            return f"{loc.filename}: "
        return f"{loc.filename}:{loc.start_line}:{loc.start_col}: "
    return ""

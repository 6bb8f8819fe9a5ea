"""What an op's ``lower_host`` hook may use: the interface ``relax-lower-host`` gives it.

An op that stays on the host (shape and tuple ops, constants, checks, calls) writes itself as host code
with these primitives; ``transforms/lower_host.py`` (with its ``host_*`` mixins) implements them. Host
values are opaque to ops except for these fields: a tensor has ``name``, ``type`` (a TensorType) and ``mlir``
(its builtin tensor type); a prim or shape value has ``names`` (one SSA ``index`` name per dim); a tuple has
``fields``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from mlir import ir

    from relax_mlir.dialects.types import RelaxType, TensorType
    from relax_mlir.shape_infer.expr import Expr


class IndexArithmetic(Protocol):
    """Emits ``index`` arithmetic, each symbolic size computed once."""

    def value(self, e: Expr) -> str: ...
    def binary(self, op: str, a: str, b: str) -> str: ...
    def const(self, i: int) -> str: ...


class HostLowering(Protocol):
    """The host function being written, as an op's ``lower_host`` sees it."""

    code: IndexArithmetic

    def lookup(self, v: ir.Value) -> Any:
        """The host value of a relax value defined earlier."""

    def bind(self, v: ir.Value, value: Any) -> None:
        """Make ``value`` the host value of ``v``."""

    def fresh(self, prefix: str) -> str:
        """A new SSA name (``%<prefix><n>``)."""

    def emit(self, line: str) -> None:
        """Append a line of host code."""

    def tensor(self, t: TensorType, prefix: str = "t") -> Any:
        """A new tensor value with a fresh name (the caller emits the line that defines it)."""

    def ints(self, names: list[str], is_shape: bool) -> Any:
        """A shape value (``is_shape``) or a prim value (one name) of ``index`` SSA names."""

    def tuple(self, fields: list[Any]) -> Any:
        """A tuple value."""

    def dim(self, x: Any, axis: int) -> str:
        """The ``index`` SSA name of dim ``axis`` of tensor value ``x``."""

    def element(self, dtype: str) -> str:
        """The builtin element type a relax dtype is stored as."""

    def location(self, op: ir.Operation) -> str:
        """``file:line:col: `` of ``op`` for messages (empty when unknown)."""

    def record_check(self, ok: str, actual: str, expected: str, message: str) -> None:
        """Unless the i1 ``ok`` holds, record the failure of check ``message`` (with ``{actual}`` and
        ``{expected}`` filled from those ``index`` names) in the status, without branching: the call goes
        on and the runtime raises after it."""

    def cast(self, src: Any, target: RelaxType | None, op: ir.Operation) -> Any:
        """``src`` checked against ``target`` at run time (binding new symbols); the refined value."""

    def constant(self, attr: ir.Attribute, t: TensorType) -> Any:
        """A tensor value holding constant data ``attr`` of type ``t``."""

    def call_kernel(self, op: ir.Operation) -> None:
        """Lower a call of a kernel of the module: destinations from the memory plan, results bound."""

    def call_library(self, op: ir.Operation) -> None:
        """Lower a call of a library function (``lowering/library.py``'s ABI), results bound."""

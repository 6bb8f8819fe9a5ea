"""The join of two relax types: the most precise type every value of either has.

It is the result type of an ``scf.if`` (join of the branches) and of an ``scf.while`` (join over the
iterations: a fixed point of ``join(init, body(T))``, reached because a join only coarsens). The rule:

- tensors: dims that the symbolic algebra proves equal stay, others become ``"?"``; different ranks give
  unknown rank (``"*"``); different dtypes give an unknown dtype (``none``);
- shape values like tensor shapes; prim values keep their value when equal, else ``"?"``;
- tuples of the same length join fieldwise, of different lengths give ``!relax.object``;
- values of different kinds (a tensor and a shape, ...) give ``!relax.object``.

``forget`` coarsens the dims that use symbols no longer in scope (bound by a match_cast inside a branch or
loop body) to ``"?"``: such a symbol is not visible after the join unless bound again.
"""

from __future__ import annotations

from collections.abc import Sequence

from relax_mlir.dialects.types import Dim, ObjectType, PrimType, RelaxType, ShapeType, TensorType, TupleType


def join(a: RelaxType, b: RelaxType) -> RelaxType:
    """The join of ``a`` and ``b`` (see the module docstring)."""
    if a == b:
        return a
    if isinstance(a, TensorType) and isinstance(b, TensorType):
        return TensorType(_join_dims(a.shape, b.shape), a.dtype if a.dtype == b.dtype else None)
    if isinstance(a, ShapeType) and isinstance(b, ShapeType):
        return ShapeType(_join_dims(a.values, b.values))
    if isinstance(a, PrimType) and isinstance(b, PrimType):
        return PrimType(_join_dim(a.value, b.value))
    if isinstance(a, TupleType) and isinstance(b, TupleType) and len(a.fields) == len(b.fields):
        return TupleType(tuple(join(x, y) for x, y in zip(a.fields, b.fields)))
    return ObjectType()


def join_all(types: Sequence[RelaxType]) -> RelaxType:
    """The join of one or more types."""
    out = types[0]
    for t in types[1:]:
        out = join(out, t)
    return out


def _join_dim(a: Dim, b: Dim) -> Dim:
    return a if a is not None and a == b else None


def _join_dims(a: tuple[Dim, ...] | None, b: tuple[Dim, ...] | None) -> tuple[Dim, ...] | None:
    if a is None or b is None or len(a) != len(b):
        return None
    return tuple(_join_dim(x, y) for x, y in zip(a, b))


def forget(t: RelaxType, visible: set[str]) -> RelaxType:
    """``t`` with every dim that uses a symbol outside ``visible`` made unknown."""
    if isinstance(t, TensorType):
        return TensorType(_forget_dims(t.shape, visible), t.dtype)
    if isinstance(t, ShapeType):
        return ShapeType(_forget_dims(t.values, visible))
    if isinstance(t, PrimType):
        return PrimType(_forget_dim(t.value, visible))
    if isinstance(t, TupleType):
        return TupleType(tuple(forget(x, visible) for x in t.fields))
    return t


def _forget_dim(d: Dim, visible: set[str]) -> Dim:
    return d if d is None or d.free_symbols <= visible else None


def _forget_dims(dims: tuple[Dim, ...] | None, visible: set[str]) -> tuple[Dim, ...] | None:
    return None if dims is None else tuple(_forget_dim(d, visible) for d in dims)

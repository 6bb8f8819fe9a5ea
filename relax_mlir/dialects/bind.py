"""Binding a callee's symbols at a call: match parameter types against argument types.

``bind(params, args)`` matches each parameter dim (an expression over the callee's symbols) with the
argument's dim (an expression over the caller's symbols) and solves for the callee's symbols: a parameter
dim linear in one unsolved symbol (``n``, ``2 * n``, ``n + 1``, ``k * n`` with ``k`` already solved) gives it
when the division is exact (``["2 * n"]`` given ``["2 * m"]`` binds ``n = m``). The solving repeats until
nothing changes, so the order of parameters does not matter. What remains:

- a dim whose instantiated parameter dim is provably different from the argument's is a ShapeError;
- a dim that is neither provably equal nor provably different (or whose argument dim is unknown) is a
  run-time check (``Binding.checks``): the call casts its argument to the instantiated parameter type;
- a symbol no dim can solve is ``unbound``: result dims that use it become unknown (``instantiate``).

The symbols of the callee and of the caller live in different namespaces: substitution is simultaneous, so
a callee's ``n`` and a caller's ``n`` never mix.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field

from relax_mlir.dialects.dims import provably_different
from relax_mlir.dialects.types import (
    Dim,
    ObjectType,
    PrimType,
    RelaxType,
    ShapeType,
    TensorType,
    TupleType,
    free_symbols,
)
from relax_mlir.errors import ShapeError
from relax_mlir.shape_infer.expr import Expr, format_dim

__all__ = ["Binding", "bind", "instantiate"]


@dataclass(frozen=True)
class Check:
    """A dim the call must check at run time: the argument's ``actual`` (None: unknown) must equal
    ``expected`` (the instantiated parameter dim; None: it uses an unbound symbol)."""

    where: str
    expected: Expr | None
    actual: Expr | None

    def __str__(self) -> str:
        return f"{self.where}: {format_dim(self.actual)} must be {format_dim(self.expected)}"


@dataclass
class Binding:
    """The callee's symbols in terms of the caller's, what must be checked at run time, what stays unknown."""

    subst: dict[str, Expr] = field(default_factory=dict)
    checks: list[Check] = field(default_factory=list)
    unbound: set[str] = field(default_factory=set)

    def dim(self, d: Dim) -> Dim:
        """A callee dim in the caller's symbols; None when it uses an unbound symbol."""
        if d is None or not d.free_symbols <= self.subst.keys():
            return None
        return d.subs(self.subst)


def instantiate(t: RelaxType, binding: Binding) -> RelaxType:
    """A callee type (a result type) in the caller's symbols; unbound symbols make dims unknown."""
    if isinstance(t, TensorType):
        shape = None if t.shape is None else tuple(binding.dim(d) for d in t.shape)
        return TensorType(shape, t.dtype)
    if isinstance(t, ShapeType):
        return ShapeType(None if t.values is None else tuple(binding.dim(d) for d in t.values))
    if isinstance(t, PrimType):
        return PrimType(binding.dim(t.value))
    if isinstance(t, TupleType):
        return TupleType(tuple(instantiate(f, binding) for f in t.fields))
    return t


def bind(params: Sequence[RelaxType], args: Sequence[RelaxType | None]) -> Binding:
    """Solve the callee's symbols from the arguments; ShapeError when an argument cannot match its parameter."""
    if len(params) != len(args):
        raise ShapeError(f"the callee takes {len(params)} arguments, the call passes {len(args)}")
    pairs: list[tuple[str, Expr, Dim]] = []
    for i, (p, a) in enumerate(zip(params, args)):
        pairs.extend(_pairs(p, a, f"argument #{i}"))
    binding = Binding()
    progress = True
    while progress:
        progress = False
        for _, p, a in pairs:
            if a is None:
                continue
            unsolved = p.free_symbols - binding.subst.keys()
            if len(unsolved) != 1:
                continue
            (s,) = unsolved
            value = _solve(p, s, a, binding.subst)
            if value is not None:
                binding.subst[s] = value
                progress = True
    symbols: set[str] = set()
    for p in params:
        symbols |= free_symbols(p)
    binding.unbound = symbols - binding.subst.keys()
    for where, p, a in pairs:
        expected = binding.dim(p)
        if expected is not None and a is not None and expected == a:
            continue
        if provably_different(expected, a):
            value = "" if expected == p else f" = {format_dim(expected)}"
            raise ShapeError(
                f"{where} has dim {format_dim(a)} where the callee's parameter needs {format_dim(p)}{value}"
            )
        binding.checks.append(Check(where, expected, a))
    return binding


def _solve(p: Expr, s: str, a: Expr, subst: dict[str, Expr]) -> Expr | None:
    """``s`` such that ``p`` (linear in ``s``, its other symbols in ``subst``) equals ``a``; None if none is exact."""
    r = p.subs({s: 0})
    c = p.subs({s: 1}) - r
    if p.subs({s: 2}) - r != 2 * c:
        return None  # not linear in s
    r, c = r.subs(subst), c.subs(subst)
    if c.is_const and c.value == 0:
        return None
    value = (a - r) // c
    return value if value * c + r == a else None


def _pairs(p: RelaxType, a: RelaxType | None, where: str) -> Iterator[tuple[str, Expr, Dim]]:
    """(where, parameter dim, argument dim) for each parameter dim that is not unknown."""
    if isinstance(p, ObjectType):
        return
    if a is None or isinstance(a, ObjectType):
        a = _unknown_like(p)
    if type(p) is not type(a):
        raise ShapeError(f"{where} is {a}, the callee's parameter is {p}: different kinds of value")
    if isinstance(p, TensorType):
        assert isinstance(a, TensorType)
        if p.dtype is not None and a.dtype is not None and p.dtype != a.dtype:
            raise ShapeError(f"{where} has dtype {a.dtype}, the callee's parameter {p} has {p.dtype}")
        yield from _dim_pairs(p.shape, a.shape, where, p, a)
    elif isinstance(p, ShapeType):
        assert isinstance(a, ShapeType)
        yield from _dim_pairs(p.values, a.values, where, p, a)
    elif isinstance(p, PrimType):
        assert isinstance(a, PrimType)
        if p.value is not None:
            yield where, p.value, a.value
    elif isinstance(p, TupleType):
        assert isinstance(a, TupleType)
        if len(p.fields) != len(a.fields):
            raise ShapeError(
                f"{where} is a tuple of {len(a.fields)} fields, the callee's has {len(p.fields)}"
            )
        for j, (pf, af) in enumerate(zip(p.fields, a.fields)):
            yield from _pairs(pf, af, f"{where} field #{j}")


def _dim_pairs(
    ps: tuple[Dim, ...] | None, as_: tuple[Dim, ...] | None, where: str, p: RelaxType, a: RelaxType
) -> Iterator[tuple[str, Expr, Dim]]:
    if ps is None:
        return
    if as_ is None:
        as_ = (None,) * len(ps)
    if len(ps) != len(as_):
        raise ShapeError(f"{where} {a} has rank {len(as_)}, the callee's parameter {p} has rank {len(ps)}")
    for axis, (pd, ad) in enumerate(zip(ps, as_)):
        if pd is not None:
            yield f"{where} dim {axis}", pd, ad


def _unknown_like(p: RelaxType) -> RelaxType:
    """The coarsest value of ``p``'s kind (what an ``!relax.object`` argument is matched as)."""
    if isinstance(p, TensorType):
        return TensorType(None, None)
    if isinstance(p, ShapeType):
        return ShapeType(None)
    if isinstance(p, PrimType):
        return PrimType(None)
    if isinstance(p, TupleType):
        return TupleType(tuple(_unknown_like(f) for f in p.fields))
    return p

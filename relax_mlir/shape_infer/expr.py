"""Symbolic integer expressions for tensor dims, always kept in canonical form.

An ``Expr`` is a polynomial with integer coefficients over *atoms*: symbols (``n``) and opaque nodes
``floordiv``, ``ceildiv``, ``mod``, ``min``, ``max`` whose arguments are canonical ``Expr``s. Because the
form is canonical, ``==`` decides equality by normalization, and ``str`` is a canonical spelling that
``parse_expr`` reads back. Every rewrite applied is valid for every integer assignment of the symbols;
``floordiv``/``mod`` use floor semantics (Python, MLIR affine).

Representation (chosen so that hashing, equality and sorting run in C): a term is a triple
``(-degree, monomial, coefficient)``; a monomial is a sorted tuple of atom keys with repetition for
powers. A symbol's key is its name; an opaque node's key is an ``_Atom`` (a ``str`` subclass carrying
the op and its arguments) spelled ``"~" + its printed form``, so it sorts after symbols and two nodes
are equal exactly when their canonical printings are.
"""

from __future__ import annotations

import math
import operator
import re
from collections.abc import Mapping
from functools import lru_cache
from typing import Union

from relax_mlir.errors import ParseError

__all__ = ["Expr", "ExprLike", "as_expr", "ceildiv", "const", "floordiv", "format_dim", "mod", "parse_dim"]
__all__ += ["parse_expr", "prove_equal", "prove_le", "smax", "smin", "sym"]

ExprLike = Union["Expr", int]

_INFIX = ("floordiv", "ceildiv", "mod")
_KEYWORDS = frozenset(_INFIX)
_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_.]*\Z")


class _Atom(str):
    """The key of an opaque node: ``"~" + printed form``, carrying the op and its arguments."""

    op: str
    args: tuple[Expr, Expr]


class Expr:
    """An immutable symbolic integer expression in canonical form; build it with ``sym``/``const``/ops."""

    __slots__ = ("_terms", "_hash", "_str", "_free")

    _terms: tuple[tuple[int, tuple[str, ...], int], ...]

    def __new__(cls, x: Expr | int | str = 0) -> Expr:
        return as_expr(x)

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError("Expr is immutable")

    def __reduce__(self) -> tuple:
        return (parse_expr, (str(self),))

    def __copy__(self) -> Expr:
        return self

    def __deepcopy__(self, memo: dict) -> Expr:
        return self

    # -- equality and hashing ------------------------------------------------------------------------

    def __eq__(self, other: object) -> bool:
        if type(other) is Expr:
            return self is other or (self._hash == other._hash and self._terms == other._terms)
        if isinstance(other, int):
            return self.value == other
        return NotImplemented

    def __hash__(self) -> int:
        return self._hash

    # -- arithmetic ----------------------------------------------------------------------------------

    def __add__(self, other: ExprLike) -> Expr:
        if type(other) is int:
            return _add_const(self, other)
        if type(other) is not Expr and (other := _coerce(other)) is NotImplemented:
            return NotImplemented
        return _add(self, other, 1)

    __radd__ = __add__

    def __sub__(self, other: ExprLike) -> Expr:
        if type(other) is int:
            return _add_const(self, -other)
        if type(other) is not Expr and (other := _coerce(other)) is NotImplemented:
            return NotImplemented
        return _add(self, other, -1)

    def __rsub__(self, other: int) -> Expr:
        other = _coerce(other)
        return other if other is NotImplemented else _add(other, self, -1)

    def __neg__(self) -> Expr:
        return _scale(self, -1)

    def __pos__(self) -> Expr:
        return self

    def __mul__(self, other: ExprLike) -> Expr:
        if type(other) is int:
            return _scale(self, other)
        if type(other) is not Expr and (other := _coerce(other)) is NotImplemented:
            return NotImplemented
        return _mul(self, other)

    __rmul__ = __mul__

    def __floordiv__(self, other: ExprLike) -> Expr:
        return floordiv(self, other)

    def __rfloordiv__(self, other: int) -> Expr:
        return floordiv(other, self)

    def __mod__(self, other: ExprLike) -> Expr:
        return mod(self, other)

    def __rmod__(self, other: int) -> Expr:
        return mod(other, self)

    # -- queries -------------------------------------------------------------------------------------

    @property
    def is_const(self) -> bool:
        return self.value is not None

    @property
    def value(self) -> int | None:
        """The constant value, or None if the expression has free symbols."""
        t = self._terms
        if len(t) > 1 or (t and t[0][1]):
            return None
        return t[0][2] if t else 0

    @property
    def free_symbols(self) -> frozenset[str]:
        try:
            return self._free
        except AttributeError:
            pass
        names: set[str] = set()
        for _, mono, _ in self._terms:
            for a in mono:
                if type(a) is str:
                    names.add(a)
                else:
                    names |= a.args[0].free_symbols | a.args[1].free_symbols
        free = frozenset(names)
        _set_free(self, free)
        return free

    def subs(self, mapping: Mapping[str, ExprLike | str]) -> Expr:
        """Substitute symbols by expressions (or ints) and re-canonicalize."""
        if not mapping or not (self.free_symbols & mapping.keys()):
            return self
        env = {k: as_expr(v) for k, v in mapping.items()}
        result = ZERO
        for _, mono, coeff in self._terms:
            term = const(coeff)
            for a in mono:
                if type(a) is str:
                    term = term * (env[a] if a in env else sym(a))
                else:
                    x, y = a.args
                    term = term * _OPS[a.op](x.subs(env), y.subs(env))
            result = result + term
        return result

    def evaluate(self, env: Mapping[str, int]) -> int:
        """The integer value under ``env``; KeyError names a missing symbol."""
        total = 0
        for _, mono, coeff in self._terms:
            v = coeff
            for a in mono:
                if type(a) is str:
                    try:
                        v *= env[a]
                    except KeyError:
                        raise KeyError(a) from None
                else:
                    x, y = a.args
                    v *= _EVAL[a.op](x.evaluate(env), y.evaluate(env))
            total += v
        return total

    def upper_bound(self, bounds: Mapping[str, int] | None = None) -> int | None:
        """An upper bound when every symbol is a dim in [0, bounds.get(name)]; None when unbounded."""
        hi = -_lower(-self, bounds or {}, _BOUND_DEPTH)
        return None if hi == math.inf else hi

    def lower_bound(self, bounds: Mapping[str, int] | None = None) -> int | None:
        """A lower bound when every symbol is a dim in [0, bounds.get(name)]; None when unbounded."""
        lo = _lower(self, bounds or {}, _BOUND_DEPTH)
        return None if lo == -math.inf else lo

    # -- printing ------------------------------------------------------------------------------------

    def __str__(self) -> str:
        try:
            return self._str
        except AttributeError:
            pass
        s = _format(self._terms)
        _set_str(self, s)
        return s

    def __repr__(self) -> str:
        return f"Expr({str(self)!r})"


_set_terms = Expr._terms.__set__  # type: ignore[attr-defined]
_set_hash = Expr._hash.__set__  # type: ignore[attr-defined]
_set_str = Expr._str.__set__  # type: ignore[attr-defined]
_set_free = Expr._free.__set__  # type: ignore[attr-defined]
_new = object.__new__


def _make(terms: tuple) -> Expr:
    e = _new(Expr)
    _set_terms(e, terms)
    # Constants hash like the int they equal, since ``const(4) == 4``.
    if not terms:
        _set_hash(e, 0)
    elif len(terms) == 1 and not terms[0][1]:
        _set_hash(e, hash(terms[0][2]))
    else:
        _set_hash(e, hash(terms))
    return e


def _from_dict(d: dict[tuple[str, ...], int]) -> Expr:
    return _make(tuple(sorted([(-len(m), m, c) for m, c in d.items() if c])))


def _coerce(x: object) -> Expr:
    if type(x) is Expr:
        return x
    try:
        return const(operator.index(x))
    except TypeError:
        return NotImplemented


def _add(x: Expr, y: Expr, sign: int) -> Expr:
    a, b = x._terms, y._terms
    if not b:
        return x
    if not a and sign == 1:
        return y
    d = {m: c for _, m, c in a}
    get = d.get
    if sign == 1:
        for _, m, c in b:
            d[m] = get(m, 0) + c
    else:
        for _, m, c in b:
            d[m] = get(m, 0) - c
    return _from_dict(d)


def _add_const(e: Expr, k: int) -> Expr:
    if not k:
        return e
    t = e._terms
    if t and not t[-1][1]:  # the constant term sorts last
        c = t[-1][2] + k
        return _make(t[:-1] + ((0, (), c),)) if c else _make(t[:-1])
    return _make(t + ((0, (), k),))


def _scale(e: Expr, k: int) -> Expr:
    if k == 1:
        return e
    if k == 0:
        return ZERO
    return _make(tuple([(n, m, c * k) for n, m, c in e._terms]))


def _mul(x: Expr, y: Expr) -> Expr:
    a, b = x._terms, y._terms
    if len(b) == 1 and not b[0][1]:
        return _scale(x, b[0][2])
    if len(a) == 1 and not a[0][1]:
        return _scale(y, a[0][2])
    if not a or not b:
        return ZERO
    d: dict[tuple[str, ...], int] = {}
    get = d.get
    for _, m1, c1 in a:
        for _, m2, c2 in b:
            if not m1:
                m = m2
            elif not m2:
                m = m1
            else:
                m = tuple(sorted(m1 + m2))
            d[m] = get(m, 0) + c1 * c2
    return _from_dict(d)


def const(v: int) -> Expr:
    """The constant ``v``."""
    e = _CONSTS.get(v) if type(v) is int else None
    if e is not None:
        return e
    v = operator.index(v)
    return _make(((0, (), v),)) if v else ZERO


@lru_cache(maxsize=4096)
def sym(name: str) -> Expr:
    """The symbol ``name`` (an identifier ``[A-Za-z_][A-Za-z0-9_.]*``, not a keyword)."""
    if not isinstance(name, str) or not _IDENT.match(name) or name in _KEYWORDS:
        raise ParseError(f"invalid symbol name {name!r}: expected an identifier")
    return _make(((-1, (name,), 1),))


def as_expr(x: Expr | int | str) -> Expr:
    """An Expr from an Expr, an int, or a string in the dim-expression grammar."""
    if type(x) is Expr:
        return x
    if isinstance(x, str):
        return parse_expr(x)
    try:
        return const(operator.index(x))
    except TypeError:
        raise TypeError(f"cannot convert {type(x).__name__} {x!r} to a dim expression") from None


ZERO = _make(())
_CONSTS: dict[int, Expr] = {0: ZERO}
_CONSTS.update((v, _make(((0, (), v),))) for v in range(-64, 1025) if v)
ONE = const(1)

# -- opaque nodes ------------------------------------------------------------------------------------


def _bare(e: Expr) -> bool:
    """True when ``e`` prints as an operand of an infix op without parentheses."""
    t = e._terms
    if not t:
        return True
    if len(t) != 1:
        return False
    _, mono, c = t[0]
    if not mono:
        return c >= 0
    return c == 1 and len(mono) == 1 and (type(mono[0]) is str or mono[0].op not in _INFIX)


_ATOM_MEMO: dict[tuple[str, Expr, Expr], _Atom] = {}


def _atom_key(op: str, a: Expr, b: Expr) -> _Atom:
    """The (memoized) key of the opaque node ``op(a, b)``; a and b are canonical."""
    memo_key = (op, a, b)
    key = _ATOM_MEMO.get(memo_key)
    if key is not None:
        return key
    if op in _INFIX:
        sa, sb = str(a), str(b)
        text = f"{sa if _bare(a) else '(' + sa + ')'} {op} {sb if _bare(b) else '(' + sb + ')'}"
    else:
        text = f"{op}({a}, {b})"
    key = _Atom("~" + text)
    key.op = op
    key.args = (a, b)
    if len(_ATOM_MEMO) >= 65536:
        _ATOM_MEMO.clear()
    _ATOM_MEMO[memo_key] = key
    return key


def _atom(op: str, a: Expr, b: Expr) -> Expr:
    return _make(((-1, (_atom_key(op, a, b),), 1),))


def _with_atom(q: dict, op: str, a: Expr, b: Expr, coeff: int = 1) -> Expr:
    """``q + coeff * op(a, b)`` as one canonicalization."""
    m = (_atom_key(op, a, b),)
    q[m] = q.get(m, 0) + coeff
    return _from_dict(q)


def _split(terms: tuple, c: int) -> tuple[dict, dict]:
    """Split ``terms`` as ``c * q + r`` with every coefficient of r in [1, c)."""
    q: dict[tuple[str, ...], int] = {}
    r: dict[tuple[str, ...], int] = {}
    for _, m, k in terms:
        qq, rr = divmod(k, c)
        if qq:
            q[m] = qq
        if rr:
            r[m] = rr
    return q, r


def _prologue(op: str, a: ExprLike, b: ExprLike) -> tuple[Expr, int, Expr | None]:
    """Coerce the operands of a division; the result already when it is folded or opaque."""
    if type(a) is not Expr:
        a = as_expr(a)
    if type(b) is int:
        c = b
    else:
        b = as_expr(b)
        c = b.value
    if c == 0:
        raise ZeroDivisionError(f"{op} of {a} by zero")
    if c is None:
        b = as_expr(b)
        return a, 0, _symbolic_division(op, a, b)
    if c < 0:  # negative divisor: no rewrite is valid for every sign
        v = a.value
        return a, 0, (_atom(op, a, as_expr(b)) if v is None else const(_EVAL[op](v, c)))
    return a, c, None


def _symbolic_division(op: str, a: Expr, b: Expr) -> Expr:
    """``op(a, b)`` for a symbolic divisor, simplified where the division is exact.

    Rewrites hold wherever the original is defined (``b != 0``): an exact polynomial quotient
    ``a == q * b`` gives ``q`` (``mod``: 0), and a factor ``g`` (integer and monomial) common to every term of
    ``a`` and ``b`` cancels (``mod`` keeps it: ``mod(g*x, g*y) = g * mod(x, y)``).
    """
    q = _exact_quotient(a, b)
    if q is not None:
        return ZERO if op == "mod" else q
    k = math.gcd(*(c for _, _, c in a._terms + b._terms))
    g = _common_factor(a, b)
    if k == 1 and not g:
        return _atom(op, a, b)
    result = _OPS[op](_divide_monomial(a, g, k), _divide_monomial(b, g, k))
    return result * _make(((-len(g), g, k),)) if op == "mod" else result


def _mono_div(m: tuple, d: tuple) -> tuple | None:
    """The monomial ``m / d``, or None when ``d`` does not divide ``m`` (both sorted, with repetition)."""
    if not d:
        return m
    rest = list(m)
    for x in d:
        try:
            rest.remove(x)
        except ValueError:
            return None
    return tuple(rest)


def _common_factor(a: Expr, b: Expr) -> tuple:
    """The largest monomial dividing every term of ``a`` and of ``b``."""
    common: list | None = None
    for _, m, _ in a._terms + b._terms:
        if common is None:
            common = list(m)
            continue
        rest = list(m)
        kept = []
        for x in common:
            if x in rest:
                rest.remove(x)
                kept.append(x)
        common = kept
        if not common:
            return ()
    return tuple(common or ())


def _divide_monomial(e: Expr, g: tuple, k: int) -> Expr:
    """``e / (k * g)`` for a monomial ``g`` and integer ``k`` that divide every term."""
    return _from_dict({_mono_div(m, g): c // k for _, m, c in e._terms})  # type: ignore[misc]


def _exact_quotient(a: Expr, b: Expr, max_steps: int = 16) -> Expr | None:
    """``q`` with ``a == q * b`` as polynomials, or None (leading-term division, checked at the end)."""
    if not b._terms or not a._terms:
        return ZERO if not a._terms and b._terms else None
    _, lead_m, lead_c = b._terms[0]
    q: dict[tuple[str, ...], int] = {}
    rest = a
    for _ in range(max_steps):
        if not rest._terms:
            quotient = _from_dict(q)
            return quotient if _mul(quotient, b) == a else None
        _, m, c = rest._terms[0]
        qm = _mono_div(m, lead_m)
        if qm is None or c % lead_c:
            return None
        step = _make(((-len(qm), qm, c // lead_c),))
        q[qm] = q.get(qm, 0) + c // lead_c
        rest = _add(rest, _mul(step, b), -1)
    return None


def _nested_floordiv(r: dict, c: int) -> Expr | None:
    """``floordiv(floordiv(x, a) + s, c) = floordiv(x + a*s, a*c)`` for positive constants a, c."""
    found = None
    for m, k in r.items():
        if len(m) == 1 and type(m[0]) is not str and m[0].op == "floordiv" and k == 1:
            a = m[0].args[1].value
            if a is not None and a > 0:
                if found is not None:
                    return None
                found = (m, a)
    if found is None:
        return None
    m, a = found
    x = m[0].args[0]
    s = _from_dict({mm: k for mm, k in r.items() if mm != m})
    return floordiv(x + s * a, a * c)


def floordiv(a: ExprLike, b: ExprLike) -> Expr:
    """``floor(a / b)``; ZeroDivisionError for a constant 0 divisor."""
    a, c, done = _prologue("floordiv", a, b)
    if done is not None:
        return done
    if c == 1:
        return a
    q, r = _split(a._terms, c)
    if not r or (len(r) == 1 and () in r):  # constant remainder in [0, c): floors to 0
        return _from_dict(q)
    g = math.gcd(c, *r.values())
    if g > 1:
        r = {m: k // g for m, k in r.items()}
        c //= g
    nested = _nested_floordiv(r, c)
    if nested is not None:
        return _from_dict(q) + nested
    return _with_atom(q, "floordiv", _from_dict(r), const(c))


def ceildiv(a: ExprLike, b: ExprLike) -> Expr:
    """``ceil(a / b)``; by a positive constant c it is ``floordiv(a + c - 1, c)``."""
    a, c, done = _prologue("ceildiv", a, b)
    if done is not None:
        return done
    return floordiv(_add_const(a, c - 1), c)


def mod(a: ExprLike, b: ExprLike) -> Expr:
    """``a - b * floor(a / b)`` (the result has the sign of b); ZeroDivisionError for a constant 0 b."""
    a, c, done = _prologue("mod", a, b)
    if done is not None:
        return done
    if c == 1:
        return ZERO
    _, r = _split(a._terms, c)
    if not r:
        return ZERO
    if len(r) == 1 and () in r:
        return const(r[()])
    g = math.gcd(c, *r.values())
    if g > 1:
        r = {m: k // g for m, k in r.items()}
        c //= g
    return _with_atom({}, "mod", _from_dict(r), const(c), g)


def _minmax(op: str, a: ExprLike, b: ExprLike) -> Expr:
    a, b = as_expr(a), as_expr(b)
    if a == b:
        return a
    diff = (a - b).value
    if diff is not None:  # the operands differ by a constant
        return a if (diff < 0) == (op == "min") else b
    if b.value is not None or (a.value is None and a._terms < b._terms):  # constants go last
        return _atom(op, a, b)
    return _atom(op, b, a)


def smin(a: ExprLike, b: ExprLike) -> Expr:
    """``min(a, b)``."""
    return _minmax("min", a, b)


def smax(a: ExprLike, b: ExprLike) -> Expr:
    """``max(a, b)``."""
    return _minmax("max", a, b)


_OPS = {"floordiv": floordiv, "ceildiv": ceildiv, "mod": mod, "min": smin, "max": smax}
_EVAL = {"floordiv": operator.floordiv, "mod": operator.mod, "min": min, "max": max}
_EVAL["ceildiv"] = lambda x, y: -(-x // y)

# -- printing ----------------------------------------------------------------------------------------


def _factor(a: str, wrap: bool) -> str:
    if type(a) is str:
        return a
    text = a[1:]
    return "(" + text + ")" if wrap and a.op in _INFIX else text


def _term(mono: tuple[str, ...], c: int, lead: bool) -> str:
    """The unsigned spelling of a term (the sign is printed by the caller)."""
    c = abs(c)
    if not mono:
        return str(c)
    # An infix atom needs parentheses inside a product and after a leading unary minus.
    wrap = len(mono) > 1 or c != 1 or lead
    factors = [_factor(a, wrap) for a in mono]
    if c != 1:
        factors.insert(0, str(c))
    return " * ".join(factors)


def _format(terms: tuple) -> str:
    if not terms:
        return "0"
    parts = []
    for i, (_, mono, c) in enumerate(terms):
        if i == 0:
            parts.append("-" + _term(mono, c, True) if c < 0 else _term(mono, c, False))
        else:
            parts.append((" - " if c < 0 else " + ") + _term(mono, c, False))
    return "".join(parts)


# -- parsing -----------------------------------------------------------------------------------------

_TOKEN = re.compile(r"(?a)\s*(?:(\d+)|([A-Za-z_][A-Za-z0-9_.]*)|(//|[-+*%(),])|(\S))")
_KINDS = (None, "int", "id", "op")
_MUL_OPS = {"*": None, "floordiv": floordiv, "//": floordiv, "ceildiv": ceildiv, "mod": mod, "%": mod}


class _Parser:
    __slots__ = ("text", "toks", "i")

    def __init__(self, text: str) -> None:
        self.text = text
        self.toks: list[tuple[str, str, int]] = []
        for m in _TOKEN.finditer(text):  # every character but trailing whitespace is in some token
            if m.lastindex == 4:
                self.fail(f"unexpected character {m.group(4)!r}", m.start(4))
            self.toks.append((_KINDS[m.lastindex], m.group(m.lastindex), m.start(m.lastindex)))
        self.toks.append(("end", "", len(text)))
        self.i = 0

    def fail(self, what: str, pos: int) -> None:
        raise ParseError(f'cannot parse dim expression "{self.text}": {what} at column {pos + 1}')

    def unexpected(self) -> None:
        kind, tok, pos = self.toks[self.i]
        self.fail("unexpected end of input" if kind == "end" else f"unexpected {tok!r}", pos)

    def expect(self, tok: str) -> None:
        if self.toks[self.i][1] != tok or self.toks[self.i][0] == "end":
            kind, found, pos = self.toks[self.i]
            where = "end of input" if kind == "end" else repr(found)
            self.fail(f"expected {tok!r}, found {where}", pos)
        self.i += 1

    def parse(self) -> Expr:
        e = self.sum()
        if self.toks[self.i][0] != "end":
            self.unexpected()
        return e

    def sum(self) -> Expr:
        e = self.product()
        while True:
            kind, tok, _ = self.toks[self.i]
            if kind != "op" or tok not in ("+", "-"):
                return e
            self.i += 1
            e = e + self.product() if tok == "+" else e - self.product()

    def product(self) -> Expr:
        e = self.unary()
        while True:
            kind, tok, pos = self.toks[self.i]
            if kind == "int" or tok not in _MUL_OPS:
                return e
            self.i += 1
            rhs = self.unary()
            fn = _MUL_OPS[tok]
            if fn is None:
                e = e * rhs
                continue
            try:
                e = fn(e, rhs)
            except ZeroDivisionError:
                self.fail(f"division by zero in {tok!r}", pos)

    def unary(self) -> Expr:
        kind, tok, _ = self.toks[self.i]
        if kind == "op" and tok == "-":
            self.i += 1
            return -self.unary()
        return self.primary()

    def primary(self) -> Expr:
        kind, tok, _ = self.toks[self.i]
        if kind == "int":
            self.i += 1
            return const(int(tok))
        if kind == "id" and tok not in _KEYWORDS:
            self.i += 1
            if tok in ("min", "max") and self.toks[self.i][1] == "(" and self.toks[self.i][0] == "op":
                self.i += 1
                a = self.sum()
                self.expect(",")
                b = self.sum()
                self.expect(")")
                return smin(a, b) if tok == "min" else smax(a, b)
            return sym(tok)
        if kind == "op" and tok == "(":
            self.i += 1
            e = self.sum()
            self.expect(")")
            return e
        self.unexpected()
        raise AssertionError("unreachable")


@lru_cache(maxsize=65536)
def parse_expr(text: str) -> Expr:
    """Parse a dim expression such as ``(n + 3) floordiv 4``; ParseError names the column of an error.

    Results are cached; ``parse_expr.__wrapped__`` parses without the cache.
    """
    if not isinstance(text, str):
        raise TypeError(f"parse_expr expects a str, got {type(text).__name__}")
    return _Parser(text).parse()


# -- bounds ------------------------------------------------------------------------------------------

_INF = math.inf


def _xmul(x: float, y: float) -> float:
    return 0 if x == 0 or y == 0 else x * y


def _imul(a: tuple, b: tuple) -> tuple:
    p = (_xmul(a[0], b[0]), _xmul(a[0], b[1]), _xmul(a[1], b[0]), _xmul(a[1], b[1]))
    return min(p), max(p)


def _ipow(iv: tuple, p: int) -> tuple:
    lo, hi = iv
    if p == 1 or lo >= 0 or p % 2:
        return lo**p, hi**p
    if hi <= 0:
        return hi**p, lo**p
    return 0, max(lo**p, hi**p)


def _fdiv_pos(x: float, y: float) -> float:
    """floor(x / y) for y >= 1 (y may be +inf), as the limit for infinite operands."""
    if x in (_INF, -_INF):
        return x
    if y == _INF:
        return 0 if x >= 0 else -1
    return x // y


def _ifloordiv(a: tuple, b: tuple) -> tuple:
    """Interval of floor(a / b) over the points where b != 0."""
    alo, ahi = a
    blo, bhi = b
    if blo < 0 and bhi > 0:
        return -_INF, _INF
    if bhi <= 0:  # floor(a / b) = floor(-a / -b)
        alo, ahi, blo, bhi = -ahi, -alo, -bhi, -blo
    blo = max(blo, 1)
    if blo > bhi:
        return -_INF, _INF
    lo = _fdiv_pos(alo, bhi) if alo >= 0 else _fdiv_pos(alo, blo)
    hi = _fdiv_pos(ahi, blo) if ahi >= 0 else _fdiv_pos(ahi, bhi)
    return lo, hi


def _imod(a: tuple, b: tuple) -> tuple:
    alo, ahi = a
    blo, bhi = b
    if blo >= 0:
        blo = max(blo, 1)
        if alo >= 0 and ahi < blo:  # every value is already reduced
            return alo, ahi
        hi = bhi - 1
        return 0, min(hi, ahi) if alo >= 0 else hi
    return blo + 1, (0 if bhi <= 0 else bhi - 1)


def _iatom(a: _Atom, bounds: Mapping[str, int]) -> tuple:
    x = _interval(a.args[0], bounds)
    y = _interval(a.args[1], bounds)
    op = a.op
    if op == "floordiv":
        return _ifloordiv(x, y)
    if op == "ceildiv":
        lo, hi = _ifloordiv((-x[1], -x[0]), y)
        return -hi, -lo
    if op == "mod":
        return _imod(x, y)
    if op == "min":
        return min(x[0], y[0]), min(x[1], y[1])
    return max(x[0], y[0]), max(x[1], y[1])


def _interval(e: Expr, bounds: Mapping[str, int]) -> tuple:
    lo = hi = 0
    for _, mono, c in e._terms:
        iv: tuple = (c, c)
        i, n = 0, len(mono)
        while i < n:
            a = mono[i]
            j = i + 1
            while j < n and mono[j] == a:
                j += 1
            if type(a) is str:
                ub = bounds.get(a)
                base = (0, _INF if ub is None else ub)
            else:
                base = _iatom(a, bounds)
            iv = _imul(iv, _ipow(base, j - i))
            i = j
        lo += iv[0]
        hi += iv[1]
    return lo, hi


_BOUND_DEPTH = 2


def _lower(e: Expr, bounds: Mapping[str, int], depth: int) -> float:
    """Interval lower bound, tightened by eliminating linear opaque terms ``k * f`` one at a time."""
    best = _interval(e, bounds)[0]
    if depth == 0:
        return best
    for _, mono, k in e._terms:
        if len(mono) != 1 or type(mono[0]) is str:
            continue
        f = mono[0]
        x, y = f.args
        rest = _add(e, _make(((-1, mono, k),)), -1)
        if f.op in ("min", "max") and (f.op == "min") == (k < 0):  # k * f >= k * x and k * f >= k * y
            best = max(best, _lower(rest + x * k, bounds, depth - 1), _lower(rest + y * k, bounds, depth - 1))
        elif f.op == "floordiv" and (c := y.value) is not None and c > 0:
            # c * f = x - t with t in [0, c - 1], so c * e = c * rest + k * x - k * t.
            low = _lower(rest * c + x * k, bounds, depth - 1) + min(0, -k * (c - 1))
            if low != -_INF:
                best = max(best, -(-low // c))
    return best


# -- dims --------------------------------------------------------------------------------------------


def parse_dim(d: int | str | Expr) -> Expr | None:
    """A dim from its attribute spelling: ``"?"`` (unknown) -> None, int -> const, str -> parsed."""
    if type(d) is Expr:
        return d
    if isinstance(d, str):
        return None if d.strip() == "?" else parse_expr(d)
    return const(d)


def format_dim(e: Expr | None) -> int | str:
    """The attribute spelling of a dim: int for constants, ``"?"`` for unknown, else the expression."""
    if e is None:
        return "?"
    v = e.value
    return v if v is not None else str(e)


def prove_equal(a: ExprLike, b: ExprLike) -> bool:
    """True when a and b are equal for every assignment (decided by canonical form)."""
    return as_expr(a) == as_expr(b)


def prove_le(a: ExprLike, b: ExprLike, bounds: Mapping[str, int] | None = None) -> bool:
    """True only if a <= b for every dim assignment within ``bounds`` (sound, not complete)."""
    low = (as_expr(b) - as_expr(a)).lower_bound(bounds)
    return low is not None and low >= 0

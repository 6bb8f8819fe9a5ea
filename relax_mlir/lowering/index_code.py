"""Emitting symbolic dim expressions as MLIR ``index`` arithmetic, each distinct expression once."""

from __future__ import annotations

from collections.abc import Callable

from relax_mlir.shape_infer.expr import Expr, as_expr

_BINARY = {
    "add": "arith.addi",
    "sub": "arith.subi",
    "mul": "arith.muli",
    "floordiv": "arith.floordivsi",
    "ceildiv": "arith.ceildivsi",
    "min": "arith.minsi",
    "max": "arith.maxsi",
}


class IndexCode:
    """Writes ``index`` SSA values for symbolic expressions into a list of lines.

    ``symbol`` maps a symbol name to the SSA name holding its value (or raises KeyError). Every
    expression, constant and sub-term is computed once per ``IndexCode`` and then reused.
    """

    def __init__(self, lines: list[str], fresh: Callable[[str], str], symbol: Callable[[str], str]) -> None:
        self.lines = lines
        self.fresh = fresh
        self.symbol = symbol
        self._cache: dict[object, str] = {}

    def const(self, value: int) -> str:
        key = ("const", value)
        if key not in self._cache:
            # "_": the counter that ``fresh`` appends must not run into the value (c1 + 64 and c16 + 4)
            name = self.fresh(f"c{value}_".replace("-", "m"))
            self.lines.append(f"{name} = arith.constant {value} : index")
            self._cache[key] = name
        return self._cache[key]

    def value(self, e: Expr | int | str) -> str:
        """The SSA name of ``e``'s value."""
        e = as_expr(e)
        if e.is_const:
            return self.const(e.value)
        if e in self._cache:
            return self._cache[e]
        total: str | None = None
        for _, mono, coeff in e._terms:
            term = self._monomial(mono, coeff)
            total = term if total is None else self._op("arith.addi", total, term)
        assert total is not None
        self._cache[e] = total
        return total

    def _monomial(self, mono: tuple, coeff: int) -> str:
        if not mono:
            return self.const(coeff)
        product: str | None = None
        for factor in mono:
            v = self.symbol(factor) if type(factor) is str else self._atom(factor)
            product = v if product is None else self._op("arith.muli", product, v)
        assert product is not None
        return product if coeff == 1 else self._op("arith.muli", product, self.const(coeff))

    def _atom(self, atom) -> str:  # noqa: ANN001  (an expr.py opaque node)
        key = ("atom", atom)
        if key in self._cache:
            return self._cache[key]
        a, b = (self.value(x) for x in atom.args)
        result = self.binary(atom.op, a, b)
        self._cache[key] = result
        return result

    def binary(self, op: str, a: str, b: str) -> str:
        """``a <op> b`` on index values; ``op`` is add, sub, mul, floordiv, ceildiv, mod, min or max."""
        if op == "mod":  # floor modulo, as the symbolic algebra defines it
            r = self._op("arith.remsi", a, b)
            return self._op("arith.remsi", self._op("arith.addi", r, b), b)
        return self._op(_BINARY[op], a, b)

    def _op(self, op: str, a: str, b: str) -> str:
        key = (op, a, b)
        if key not in self._cache:
            name = self.fresh("i")
            self.lines.append(f"{name} = {op} {a}, {b} : index")
            self._cache[key] = name
        return self._cache[key]

"""torch.export's symbolic sizes (sympy expressions over ``s0``-style symbols) as relax dim expressions.

``to_expr`` converts the sympy expressions torch records on SymInts (sums, products, ``FloorDiv``,
``Mod``, ``Max``/``Min``...) into canonical ``Expr``s, renaming symbols (``s17`` -> ``batch``) on the way.
``check_of`` turns a recorded guard (``Eq(Mod(s0, 8), 0)``, ``s0 >= 2``) into a pair (actual, expected)
that a run-time ``match_cast`` compares.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from relax_mlir.errors import UnsupportedOpError
from relax_mlir.shape_infer.expr import Expr, const, floordiv, mod, smax, smin, sym


def to_expr(e: Any, names: Mapping[str, str]) -> Expr:
    """The relax ``Expr`` of sympy expression ``e`` (a torch SymInt's ``node.expr``); symbols renamed by ``names``."""
    import sympy  # noqa: PLC0415  (comes with torch)

    if isinstance(e, int):
        return const(e)
    if isinstance(e, sympy.Integer):
        return const(int(e))
    if isinstance(e, sympy.Symbol):
        return sym(names.get(e.name, e.name))
    args = [to_expr(a, names) for a in e.args]
    kind = type(e).__name__
    if kind == "Add":
        out = const(0)
        for a in args:
            out = out + a
        return out
    if kind == "Mul":
        out = const(1)
        for a in args:
            out = out * a
        return out
    if kind == "Pow" and args[1].is_const and args[1].value >= 0:
        out = const(1)
        for _ in range(args[1].value):
            out = out * args[0]
        return out
    if kind in ("FloorDiv", "CleanDiv", "IntTrueDiv") and len(args) == 2:
        return floordiv(args[0], args[1])
    if kind == "CeilDiv" and len(args) == 2:
        return -floordiv(-args[0], args[1])
    if kind in ("Mod", "PythonMod") and len(args) == 2:
        return mod(args[0], args[1])
    if kind in ("Max", "Min"):
        out = args[0]
        for a in args[1:]:
            out = smax(out, a) if kind == "Max" else smin(out, a)
        return out
    raise UnsupportedOpError(f"the symbolic size {e} ({kind}) has no relax dim expression")


def check_of(cond: Any, names: Mapping[str, str]) -> tuple[Expr, Expr] | None:
    """A guard as (actual, expected): it holds exactly when the two are equal at run time; None when the
    guard is always true or cannot be written so (``!=``)."""
    import sympy  # noqa: PLC0415

    if cond is sympy.true or cond is True:
        return None
    kind = type(cond).__name__
    if kind in ("Equality", "Eq"):
        a, b = (to_expr(x, names) for x in cond.args)
        return (a - b, const(0)) if not (a - b).is_const else None
    lhs, rhs = (to_expr(x, names) for x in cond.args[:2]) if len(cond.args) == 2 else (None, None)
    if lhs is None:
        return None
    if kind in ("GreaterThan", "Ge"):  # lhs >= rhs  <=>  lhs == max(lhs, rhs)
        return lhs, smax(lhs, rhs)
    if kind in ("StrictGreaterThan", "Gt"):
        return lhs, smax(lhs, rhs + 1)
    if kind in ("LessThan", "Le"):
        return lhs, smin(lhs, rhs)
    if kind in ("StrictLessThan", "Lt"):
        return lhs, smin(lhs, rhs - 1)
    return None


def spelled(cond: Any, names: Mapping[str, str]) -> str:
    """A guard with the user's symbol names, for messages."""
    text = str(cond)
    for old, new in sorted(names.items(), key=lambda kv: -len(kv[0])):
        text = _replace_word(text, old, new)
    return text


def _replace_word(text: str, old: str, new: str) -> str:
    import re  # noqa: PLC0415

    return re.sub(rf"\b{re.escape(old)}\b", new, text)


def guard_checks(code: str, input_dims: Mapping[str, Sequence[Expr]]) -> list[tuple[Expr, Expr]]:
    """The checks of one guard torch.export kept as Python source (``ep._guards_code``, e.g.
    ``(L['x'].size()[1] % 4) == 0``), over the dims of the inputs (``input_dims[name]``): each holds when
    its two sides are equal. Parts that cannot be written so (``!=``, strides) give no check."""
    import ast  # noqa: PLC0415

    try:
        tree = ast.parse(code, mode="eval").body
    except SyntaxError:
        return []
    parts = tree.values if isinstance(tree, ast.BoolOp) and isinstance(tree.op, ast.And) else [tree]
    checks = []
    for part in parts:
        if not isinstance(part, ast.Compare):
            continue
        try:
            terms = [_guard_expr(t, input_dims) for t in (part.left, *part.comparators)]
        except (KeyError, IndexError, TypeError, ValueError):
            continue
        for op, a, b in zip(part.ops, terms, terms[1:]):
            check = _compare(op, a, b)
            if check is not None and check[0] != check[1]:
                checks.append(check)
    return checks


def _compare(op: Any, a: Expr, b: Expr) -> tuple[Expr, Expr] | None:
    import ast  # noqa: PLC0415

    if isinstance(op, ast.Eq):
        return a - b, const(0)
    if isinstance(op, ast.LtE):
        return a, smin(a, b)
    if isinstance(op, ast.Lt):
        return a, smin(a, b - 1)
    if isinstance(op, ast.GtE):
        return a, smax(a, b)
    if isinstance(op, ast.Gt):
        return a, smax(a, b + 1)
    return None


def _guard_expr(node: Any, input_dims: Mapping[str, Sequence[Expr]]) -> Expr:
    """An integer expression of a guard: ints, + - * // %, and ``L['x'].size()[i]``."""
    import ast  # noqa: PLC0415

    if isinstance(node, ast.Constant) and isinstance(node.value, int) and not isinstance(node.value, bool):
        return const(node.value)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        return -_guard_expr(node.operand, input_dims)
    if isinstance(node, ast.BinOp):
        a, b = _guard_expr(node.left, input_dims), _guard_expr(node.right, input_dims)
        ops = {ast.Add: lambda: a + b, ast.Sub: lambda: a - b, ast.Mult: lambda: a * b}
        ops.update({ast.FloorDiv: lambda: floordiv(a, b), ast.Mod: lambda: mod(a, b)})
        if type(node.op) in ops:
            return ops[type(node.op)]()
    # L['x'].size()[i]
    if (
        isinstance(node, ast.Subscript)
        and isinstance(node.value, ast.Call)
        and isinstance(node.value.func, ast.Attribute)
        and node.value.func.attr == "size"
        and isinstance(node.value.func.value, ast.Subscript)
        and isinstance(node.value.func.value.slice, ast.Constant)
        and isinstance(node.slice, ast.Constant)
    ):
        return input_dims[node.value.func.value.slice.value][node.slice.value]
    raise ValueError(f"unsupported guard term {ast.dump(node)}")

"""Helpers shared by the ops' shape deductions: dims, axes, broadcasting, dtypes."""

from __future__ import annotations

from collections.abc import Sequence

from relax_mlir.dialects.types import Dim, RelaxType, TensorType
from relax_mlir.errors import ShapeError
from relax_mlir.shape_infer.expr import Expr, const, format_dim, prove_le, smax, smin

ONE = const(1)


def fmt_shape(shape: Sequence[Dim] | None) -> str:
    """A shape as users write it: ``["n", 4]``; ``*`` for unknown rank."""
    if shape is None:
        return "*"
    return "[" + ", ".join(repr(format_dim(d)).replace("'", '"') for d in shape) + "]"


def tensor_operand(t: RelaxType | None, name: str) -> TensorType:
    """The operand's tensor type, or a ShapeError naming the operand."""
    if not isinstance(t, TensorType):
        raise ShapeError(
            f"operand '{name}' must be a tensor, got {t if t is not None else 'a non-relax type'}"
        )
    return t


def provably_different(a: Dim, b: Dim) -> bool:
    """True when two dims can never be equal: their difference is bounded away from zero."""
    if a is None or b is None:
        return False
    diff = a - b
    low = diff.lower_bound()
    if low is not None and low > 0:
        return True
    high = diff.upper_bound()
    return high is not None and high < 0


def dims_equal(a: Dim, b: Dim) -> bool:
    """True when two dims are proven equal."""
    return a is not None and b is not None and a == b


def join_dtype(a: TensorType, b: TensorType, names: tuple[str, str]) -> str | None:
    """The common dtype of two operands (unknown unifies with anything)."""
    if a.dtype is None:
        return b.dtype
    if b.dtype is None or a.dtype == b.dtype:
        return a.dtype
    raise ShapeError(f"operands '{names[0]}' ({a.dtype}) and '{names[1]}' ({b.dtype}) have different dtypes")


def _never_one(d: Expr) -> bool:
    """True when a dim can never be 1 (a constant other than 1, or proven >= 2)."""
    if d.is_const:
        return d != ONE
    low = d.lower_bound()
    return low is not None and low >= 2


def broadcast_dim(a: Dim, b: Dim) -> Dim:
    """Numpy broadcasting of one dim pair; ValueError when the pair can never broadcast."""
    if a is None or b is None:
        other = b if a is None else a
        # An unknown dim against a dim that may be 1 could be either; one that is never 1 wins.
        return other if other is not None and _never_one(other) else None
    if a == b or b == ONE:
        return a
    if a == ONE:
        return b
    if a.is_const and b.is_const:
        raise ValueError
    for c, e in ((a, b), (b, a)):
        if c.is_const and _never_one(e) and not prove_le(e, c):
            raise ValueError  # e is never 1 and can never equal the constant c
    if a.is_const:
        return a  # b must be a or 1 at run time
    if b.is_const:
        return b
    return broadcast_at_run_time(a, b)  # equal, or one of them is 1: checked at run time


def broadcast_at_run_time(a: Expr, b: Expr) -> Expr:
    """The numpy broadcast of two dims that may each be 1, as one expression: ``max(a, b) * min(a, b, 1)``
    (the larger when both are at least 1, else 0: ``[0]`` with ``[1]`` gives ``[0]``). The lowering checks
    that the dims broadcast (``relax.check_broadcast``) and reads index 0 of an operand whose dim is 1."""
    return smax(a, b) * smin(smin(a, b), 1)


def broadcast_shapes(shapes: Sequence[Sequence[Dim] | None], names: Sequence[str]) -> tuple[Dim, ...] | None:
    """Numpy broadcasting over symbolic shapes (None when any rank is unknown)."""
    if any(s is None for s in shapes):
        return None
    rank = max(len(s) for s in shapes)
    padded = [(ONE,) * (rank - len(s)) + tuple(s) for s in shapes]
    out: list[Dim] = []
    for i in range(rank):
        dim = padded[0][i]
        for j in range(1, len(padded)):
            try:
                dim = broadcast_dim(dim, padded[j][i])
            except ValueError:
                detail = ", ".join(f"'{n}' {fmt_shape(s)}" for n, s in zip(names, shapes))
                raise ShapeError(
                    f"cannot broadcast {detail}: dim {i - rank} is {format_dim(dim)} "
                    f"vs {format_dim(padded[j][i])}"
                ) from None
        out.append(dim)
    return tuple(out)


def normalize_axis(axis: int, ndim: int, what: str = "axis") -> int:
    """A non-negative axis; ShapeError when out of range for the rank."""
    if not -ndim <= axis < ndim:
        raise ShapeError(f"{what} {axis} is out of range for rank {ndim}")
    return axis + ndim if axis < 0 else axis


def normalize_axes(axes: Sequence[int], ndim: int, what: str = "axes") -> list[int]:
    """Non-negative, duplicate-free axes."""
    out = [normalize_axis(a, ndim, what) for a in axes]
    if len(set(out)) != len(out):
        raise ShapeError(f"{what} {list(axes)} repeat an axis")
    return out


def product(dims: Sequence[Dim]) -> Dim:
    """The product of dims, None if any is unknown."""
    result: Expr = ONE
    for d in dims:
        if d is None:
            return None
        result = result * d
    return result


def clamp_nonneg(e: Expr) -> Expr:
    """max(e, 0), simplified when e is provably non-negative (symbols are dims, so >= 0)."""
    low = e.lower_bound()
    if low is not None and low >= 0:
        return e
    high = e.upper_bound({})
    if high is not None and high <= 0:
        return const(0)
    return smax(e, 0)


def dim_min(a: Expr, b: Expr) -> Expr:
    """min(a, b), simplified when one side is provably smaller."""
    if prove_le(a, b):
        return a
    if prove_le(b, a):
        return b
    return smin(a, b)


def same_dim(a: Dim, b: Dim, what: str) -> Dim:
    """Two dims that must be equal: the known one; ShapeError when provably different."""
    if provably_different(a, b):
        raise ShapeError(f"{what}: {format_dim(a)} vs {format_dim(b)}")
    if a is None:
        return b
    if b is None or a == b or a.is_const:
        return a
    return b if b.is_const else a

"""Reductions, arg reductions, cumulative ops, TopK and Einsum.

Every ``Reduce*`` op is a pre-map, one relax reduction and a post-map (ReduceL2 = sqrt(sum(x * x))).
Reducing over no axes (``noop_with_empty_axes``) applies the maps alone, as the ONNX reference does.
Einsum is decomposed into diagonals, sums, permutes, reshapes and batched matmuls.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
from mlir import ir

from relax_mlir.dialects import relax as R
from relax_mlir.dialects.dims import normalize_axes, normalize_axis
from relax_mlir.frontend.onnx.registry import ConversionError, NodeContext, Out, converter, known_dims
from relax_mlir.shape_infer.expr import Expr, const, format_dim

# -- Reduce* -----------------------------------------------------------------------------------------

# op -> first opset that takes the axes as an input
_AXES_INPUT = {"ReduceSum": 13}
_REDUCE_OPS = (
    "ReduceSum",
    "ReduceMean",
    "ReduceMax",
    "ReduceMin",
    "ReduceProd",
    "ReduceL1",
    "ReduceL2",
    "ReduceLogSum",
    "ReduceLogSumExp",
    "ReduceSumSquare",
)


def _is_float(dtype: str) -> bool:
    return dtype.startswith(("f", "bf"))


def _reduce_axes(ctx: NodeContext) -> list[int] | ir.Value | None:
    """The normalized axes to reduce; None = all (empty axes without noop_with_empty_axes); a relax value
    (a 1-D i64 tensor checked at run time) when the axes are known only at run time."""
    rank = ctx.rank(0)
    if ctx.opset >= _AXES_INPUT.get(ctx.node.op_type, 18):
        if ctx.has(1) and ctx.const(1) is None and runtime_axes_length(ctx, 1) > 0:
            return runtime_axes(ctx, 1, rank)
        axes = [int(a) for a in ctx.const(1).reshape(-1)] if ctx.has(1) and ctx.const(1) is not None else []
    else:
        axes = list(ctx.attr("axes", []))
    if not axes:
        return [] if ctx.attr("noop_with_empty_axes", 0) else None
    try:
        return sorted(normalize_axes(axes, rank))
    except Exception as e:  # noqa: BLE001 - repeated or out-of-range axes
        raise ConversionError(f"attribute/input 'axes' = {axes} is invalid for rank {rank}: {e}") from None


def runtime_axes_length(ctx: NodeContext, i: int) -> int:
    """The static length of input ``i``, a 1-D axes tensor known only at run time."""
    shape = ctx.shape(i)
    if len(shape) != 1 or shape[0] is None or not shape[0].is_const:
        raise ConversionError(
            f"input #{i} ('axes') is read at run time, so its length must be known at import time; "
            f"it has shape {list(map(str, shape))}"
        )
    return shape[0].value


def runtime_axes(ctx: NodeContext, i: int, rank: int, extra: int = 0, unique: bool = True) -> ir.Value:
    """Input ``i``, axes read at run time, as an i64 tensor checked at run time against ``rank`` + ``extra``."""
    axes = ctx.x(i)
    if ctx.dtype(i) != "i64":
        axes = R.astype(axes, "i64")
    return R.check_axes(axes, ctx.x(0), ctx.node.op_type, unique, extra)


def reduce_with(x: ir.Value, name: str, axes: list[int] | ir.Value | None, keepdims: bool) -> ir.Value:
    """Relax reduction ``name`` (sum/mean/max/min/prod) over ``axes`` (None = all; [] = none; a relax
    value: axes read at run time)."""
    if isinstance(axes, ir.Value):
        return R.reduce_axes(x, axes, name, keepdims)
    if axes == []:
        return x
    return getattr(R, name)(x, axes, keepdims)


def _float_math(ctx: NodeContext, x: ir.Value, fn: Callable[[ir.Value], ir.Value]) -> ir.Value:
    """``fn`` on ``x``; integer tensors go through f64 and are cast back (truncating)."""
    dtype = ctx.dtype(0)
    if _is_float(dtype):
        return fn(x)
    return R.astype(fn(R.astype(x, "f64")), dtype)


@converter(*_REDUCE_OPS)
def _reduce(ctx: NodeContext) -> list[Out]:
    op = ctx.node.op_type
    axes = _reduce_axes(ctx)
    keepdims = bool(ctx.attr("keepdims", 1))
    x, dtype = ctx.x(0), ctx.dtype(0)
    simple = {
        "ReduceSum": "sum",
        "ReduceMean": "mean",
        "ReduceMax": "max",
        "ReduceMin": "min",
        "ReduceProd": "prod",
    }
    if op in simple:
        if dtype == "i1" and op in ("ReduceSum", "ReduceMean", "ReduceProd"):
            raise ConversionError(f"{op} of a bool tensor is not supported")
        return [reduce_with(x, simple[op], axes, keepdims)]
    if op == "ReduceL1":
        return [reduce_with(R.abs(x), "sum", axes, keepdims)]
    if op == "ReduceSumSquare":
        return [reduce_with(R.multiply(x, x), "sum", axes, keepdims)]
    if op == "ReduceL2":
        return [_float_math(ctx, reduce_with(R.multiply(x, x), "sum", axes, keepdims), R.sqrt)]
    if op == "ReduceLogSum":
        return [_float_math(ctx, reduce_with(x, "sum", axes, keepdims), R.log)]
    # ReduceLogSumExp: max + log(sum(exp(x - max))), the max replaced by 0 where it is infinite
    if not _is_float(dtype):
        x = R.astype(x, "f64")
    if axes == []:
        out = R.log(R.exp(x))
    elif isinstance(axes, ir.Value):  # shift by the max of all of x (the axes are not known here)
        top = R.max(x, None, False)
        inf = R.constant(np.array(np.inf, dtype=_np_dtype(top)))
        top = R.where(R.equal(R.abs(top), inf), R.zeros([], _dtype_of(top)), top)
        out = R.add(R.log(R.reduce_axes(R.exp(R.subtract(x, top)), axes, "sum", keepdims)), top)
    else:
        top = R.max(x, axes, True)
        inf = R.constant(np.array(np.inf, dtype=_np_dtype(top)))
        top = R.where(R.equal(R.abs(top), inf), R.zeros([], _dtype_of(top)), top)
        out = R.add(R.log(R.sum(R.exp(R.subtract(x, top)), axes, True)), top)
        if not keepdims:
            out = R.squeeze(out, axes if axes is not None else None)
    return [out if _is_float(dtype) else R.astype(out, dtype)]


def _dtype_of(v: ir.Value) -> str:
    from relax_mlir.dialects.types import relax_type

    return relax_type(v.type).dtype


def _np_dtype(v: ir.Value) -> np.dtype:
    from relax_mlir.frontend.onnx.registry import RELAX_TO_NUMPY

    return RELAX_TO_NUMPY[_dtype_of(v)]


# -- ArgMax / ArgMin -----------------------------------------------------------------------------------


def flip(x: ir.Value, axis: int, dim: Expr | None) -> ir.Value:
    """``x`` reversed along ``axis`` (of size ``dim``)."""
    del dim
    return R.strided_slice(x, [axis], [-1], [-(1 << 62)], [-1])


@converter("ArgMax", "ArgMin")
def _arg(ctx: NodeContext) -> list[Out]:
    rank = ctx.rank(0)
    axis = normalize_axis(ctx.attr("axis", 0), rank)
    keepdims = bool(ctx.attr("keepdims", 1))
    fn = R.argmax if ctx.node.op_type == "ArgMax" else R.argmin
    x = ctx.x(0)
    if ctx.dtype(0) == "i1":
        x = R.astype(x, "i8")
    if not ctx.attr("select_last_index", 0):
        return [fn(x, axis, keepdims)]
    dim = ctx.shape(0)[axis]
    first = fn(flip(x, axis, dim), axis, keepdims)
    last = ctx.value_of(known_dims([dim - 1], shape=()))
    return [R.subtract(last, first)]


# -- CumSum / CumProd ----------------------------------------------------------------------------------


@converter("CumSum", "CumProd")
def _cumulative(ctx: NodeContext) -> list[Out]:
    rank = ctx.rank(0)
    exclusive, reverse = bool(ctx.attr("exclusive", 0)), bool(ctx.attr("reverse", 0))
    if ctx.const(1) is None:  # read at run time
        axis = R.reshape(ctx.x(1), [1])
        axis = R.check_axes(
            axis if ctx.dtype(1) == "i64" else R.astype(axis, "i64"), ctx.x(0), ctx.node.op_type
        )
        kind = "sum" if ctx.node.op_type == "CumSum" else "prod"
        return [R.cumulate_axis(ctx.x(0), axis, kind, exclusive, reverse)]
    axis = normalize_axis(int(ctx.const(1).reshape(-1)[0]), rank)
    fn = R.cumsum if ctx.node.op_type == "CumSum" else R.cumprod
    return [fn(ctx.x(0), axis, exclusive=exclusive, reverse=reverse)]


# -- TopK ----------------------------------------------------------------------------------------------


@converter("TopK")
def _topk(ctx: NodeContext) -> list[Out]:
    rank = ctx.rank(0)
    axis = normalize_axis(ctx.attr("axis", -1), rank)
    if ctx.opset < 10:
        k = int(ctx.attr("k"))
    elif ctx.const(1) is None:  # read at run time: checked, then bound to a symbol the results' types use
        count = R.reshape(ctx.x(1), [1])
        count = count if ctx.dtype(1) == "i64" else R.astype(count, "i64")
        count = R.check_bound(count, ctx.x(0), axis, "K", "TopK")
        (k_dim,) = ctx.importer.runtime_dims(count, f"{ctx.node.output[0]}_k")
        values, indices = R.topk(
            ctx.x(0), R.prim_value(format_dim(k_dim)), axis, bool(ctx.attr("largest", 1))
        )
        return [values, indices]
    else:
        k = int(ctx.const(1).reshape(-1)[0])
    if k < 0:
        raise ConversionError(f"input 'K' = {k} must be non-negative")
    largest = bool(ctx.attr("largest", 1))
    values, indices = R.topk(ctx.x(0), k, axis, largest)
    return [values, indices]


# -- Einsum --------------------------------------------------------------------------------------------


def _parse_einsum(equation: str, ranks: Sequence[int]) -> tuple[list[list[str]], list[str]]:
    """Each input's subscripts and the output's, with ``...`` expanded into letters of its own."""
    eq = equation.replace(" ", "")
    if "->" in eq:
        lhs, out = eq.split("->")
    else:
        lhs, out = eq, None
    terms = lhs.split(",")
    if len(terms) != len(ranks):
        raise ConversionError(
            f"attribute 'equation' = '{equation}' names {len(terms)} inputs, got {len(ranks)}"
        )
    ell_rank = 0
    for t, r in zip(terms, ranks):
        if "..." in t:
            ell_rank = max(ell_rank, r - (len(t) - 3))
    ell = [f"#{i}" for i in range(ell_rank)]

    def expand(term: str, rank: int | None) -> list[str]:
        if "..." not in term:
            letters = list(term)
            if rank is not None and len(letters) != rank:
                raise ConversionError(
                    f"attribute 'equation' = '{equation}': term '{term}' does not match rank {rank}"
                )
            return letters
        head, tail = term.split("...")
        n = ell_rank if rank is None else rank - len(head) - len(tail)
        return list(head) + ell[ell_rank - n :] + list(tail)

    ins = [expand(t, r) for t, r in zip(terms, ranks)]
    for letters in ins:
        for c in letters:
            if not (c.startswith("#") or c.isalpha()):
                raise ConversionError(f"attribute 'equation' = '{equation}' has an invalid subscript '{c}'")
    if out is None:
        counts: dict[str, int] = {}
        for letters in ins:
            for c in letters:
                counts[c] = counts.get(c, 0) + 1
        outs = ell + sorted(c for c, n in counts.items() if n == 1 and not c.startswith("#"))
    else:
        outs = expand(out, None)
    return ins, outs


class _Term:
    """An einsum operand: a relax value with one subscript per axis and the size of each."""

    def __init__(self, value: ir.Value, letters: list[str], dims: list[Expr]) -> None:
        self.value, self.letters, self.dims = value, letters, dims

    def size(self, c: str) -> Expr:
        return self.dims[self.letters.index(c)]


def _diagonals(t: _Term) -> _Term:
    """Repeated subscripts in one operand (``ii``) taken as diagonals: multiply by an eye mask, sum one axis."""
    while len(set(t.letters)) != len(t.letters):
        c = next(c for c in t.letters if t.letters.count(c) > 1)
        a = t.letters.index(c)
        b = t.letters.index(c, a + 1)
        n = t.dims[a]
        r = len(t.letters)
        ia = R.arange(format_dim(n))
        eye = R.equal(
            R.reshape(ia, [format_dim(n) if i == a else 1 for i in range(r)]),
            R.reshape(R.arange(format_dim(n)), [format_dim(n) if i == b else 1 for i in range(r)]),
        )
        masked = R.where(eye, t.value, R.zeros([], _dtype_of(t.value)))
        t = _Term(R.sum(masked, [b]), t.letters[:b] + t.letters[b + 1 :], t.dims[:b] + t.dims[b + 1 :])
    return t


def _sum_out(t: _Term, keep: set[str]) -> _Term:
    axes = [i for i, c in enumerate(t.letters) if c not in keep]
    if not axes:
        return t
    kept = [i for i in range(len(t.letters)) if i not in axes]
    return _Term(R.sum(t.value, axes), [t.letters[i] for i in kept], [t.dims[i] for i in kept])


def _permute(t: _Term, order: list[str]) -> _Term:
    perm = [t.letters.index(c) for c in order]
    if perm == list(range(len(perm))):
        return t
    return _Term(R.permute_dims(t.value, perm), order, [t.dims[i] for i in perm])


def _product(dims: Sequence[Expr]) -> Expr:
    out = const(1)
    for d in dims:
        out = out * d
    return out


def _contract(a: _Term, b: _Term, needed: set[str]) -> _Term:
    """a * b summed over the subscripts they share that are not ``needed`` later, as a batched matmul."""
    batch = [c for c in a.letters if c in b.letters and c in needed]
    summed = [c for c in a.letters if c in b.letters and c not in needed]
    left = [c for c in a.letters if c not in b.letters]
    right = [c for c in b.letters if c not in a.letters]
    dims = {c: a.size(c) for c in a.letters} | {c: b.size(c) for c in b.letters}
    a = _permute(a, batch + left + summed)
    b = _permute(b, batch + summed + right)
    shape = [dims[c] for c in batch]
    m, k, n = (_product([dims[c] for c in g]) for g in (left, summed, right))
    lhs = R.reshape(a.value, [format_dim(d) for d in [*shape, m, k]])
    rhs = R.reshape(b.value, [format_dim(d) for d in [*shape, k, n]])
    out = R.matmul(lhs, rhs)
    letters = batch + left + right
    out = R.reshape(out, [format_dim(dims[c]) for c in letters])
    return _Term(out, letters, [dims[c] for c in letters])


@converter("Einsum")
def _einsum(ctx: NodeContext) -> list[Out]:
    equation = ctx.attr("equation")
    if not isinstance(equation, str):
        raise ConversionError("attribute 'equation' is required")
    n = ctx.num_inputs
    ins, outs = _parse_einsum(equation, [ctx.rank(i) for i in range(n)])
    if len(set(outs)) != len(outs):
        raise ConversionError(f"attribute 'equation' = '{equation}' repeats an output subscript")
    terms = []
    for i, letters in enumerate(ins):
        shape = ctx.shape(i)
        if any(d is None for d in shape):
            raise ConversionError(f"Einsum input #{i} needs known dims, got {shape}")
        terms.append(_diagonals(_Term(ctx.x(i), letters, list(shape))))
    # sum out subscripts used by one operand only, then contract left to right
    for i, t in enumerate(terms):
        others = {c for j, u in enumerate(terms) if j != i for c in u.letters}
        terms[i] = _sum_out(t, others | set(outs))
    acc = terms[0]
    for i in range(1, len(terms)):
        needed = set(outs) | {c for u in terms[i + 1 :] for c in u.letters}
        acc = _contract(acc, terms[i], needed)
        acc = _sum_out(acc, needed)
    missing = [c for c in outs if c not in acc.letters]
    if missing:
        raise ConversionError(
            f"attribute 'equation' = '{equation}': output subscripts {missing} are not inputs'"
        )
    acc = _sum_out(acc, set(outs))
    return [_permute(acc, outs).value]

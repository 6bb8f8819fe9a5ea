"""Shape deduction of the elementwise ops: static, symbolic, unknown dim, unknown rank and errors.

Every expected type below is derived by hand from numpy broadcasting and the rules in the module
docstring of ``relax_mlir.dialects.ops.elementwise``; nothing is computed with the code under test.
"""

from __future__ import annotations

import itertools
import re

import pytest
from mlir import ir

from relax_mlir.dialects import relax as R
from relax_mlir.dialects.ops import casts, elementwise, unary
from relax_mlir.dialects.types import relax_type
from relax_mlir.errors import ShapeError

_FUNC_IDS = itertools.count()


def ty(v: ir.Value) -> str:
    return str(relax_type(v.type))


def t(shape: str, dtype: str = "f32") -> str:
    return f"!relax.tensor<{shape}, {dtype}>"


def err(op: str, message: str) -> str:
    """A regex for the builder's error: the op's name, then the message verbatim."""
    return re.escape(f"relax.{op}: {message}")


ARITH = ["add", "subtract", "multiply", "divide", "floor_divide", "mod", "fmod", "power", "maximum",
         "minimum"]  # fmt: skip
COMPARE = ["equal", "not_equal", "less", "less_equal", "greater", "greater_equal"]
LOGICAL = ["logical_and", "logical_or", "logical_xor"]
INTEGER = ["bitwise_and", "bitwise_or", "bitwise_xor", "left_shift", "right_shift"]
UNARY_FLOAT = [
    "exp",
    "log",
    "sqrt",
    "rsqrt",
    "tanh",
    "sigmoid",
    "erf",
    "gelu",
    "gelu_tanh",
    "silu",
    "sin",
    "cos",
    "tan",
    "asin",
    "acos",
    "atan",
    "sinh",
    "cosh",
    "asinh",
    "acosh",
    "atanh",
    "softplus",
    "mish",
    "floor",
    "ceil",
    "round",
]
UNARY_ANY = ["relu", "neg", "abs", "sign"]

# (op, operand dtype, result dtype) for every binary op.
BINARY = (
    [pytest.param(op, "f32", "f32", id=op) for op in ARITH]
    + [pytest.param(op, "f32", "i1", id=op) for op in COMPARE]
    + [pytest.param(op, "i1", "i1", id=op) for op in LOGICAL]
    + [pytest.param(op, "i32", "i32", id=op) for op in INTEGER]
)

# ----------------------------------------------------------------------------------------------
# Binary ops: numpy broadcasting over symbolic dims

BROADCAST = [
    # static
    pytest.param("[2, 3]", "[2, 3]", "[2, 3]", id="static-same"),
    pytest.param("[2, 1, 4]", "[3, 1]", "[2, 3, 4]", id="static-both-stretch"),
    pytest.param("[5, 7]", "[7]", "[5, 7]", id="static-lower-rank"),
    pytest.param("[]", "[5]", "[5]", id="static-scalar"),
    pytest.param("[]", "[]", "[]", id="static-scalars"),
    pytest.param("[1]", "[7]", "[7]", id="static-one"),
    pytest.param("[1, 1]", "[1]", "[1, 1]", id="static-all-ones"),
    pytest.param("[0, 3]", "[1, 3]", "[0, 3]", id="static-zero-vs-one"),
    pytest.param("[3, 1, 5]", "[3, 9, 1]", "[3, 9, 5]", id="static-odd"),
    # symbolic
    pytest.param('["n", 1, 4]', '["m", 1]', '["n", "m", 4]', id="sym-stretch"),
    pytest.param('["n"]', '["n"]', '["n"]', id="sym-same"),
    pytest.param("[1]", '["n"]', '["n"]', id="sym-one-lhs"),
    pytest.param('["n", 1]', "[1, 1]", '["n", 1]', id="sym-one-rhs"),
    pytest.param('["n", 4]', "[4]", '["n", 4]', id="sym-lower-rank"),
    pytest.param('["b", "s", 512]', "[]", '["b", "s", 512]', id="sym-scalar"),
    pytest.param('["n + 1", "b * s"]', '["1 + n", "s * b"]', '["n + 1", "b * s"]', id="sym-expr-equal"),
    pytest.param('["2 * n"]', '["n + n"]', '["2 * n"]', id="sym-expr-normalized"),
    # a constant against a symbol: the symbol must be 1 or the constant
    pytest.param('["n"]', "[4]", "[4]", id="sym-vs-const"),
    pytest.param("[4]", '["n"]', "[4]", id="const-vs-sym"),
    pytest.param("[0]", '["n"]', "[0]", id="zero-vs-sym"),
    # two symbols not provably equal: either may be 1, so the dim is numpy's choice at run time, max(a, b) *
    # min(a, b, 1) (the lowering checks that they broadcast)
    pytest.param('["n"]', '["m"]', '["max(m, n) * min(min(m, n), 1)"]', id="sym-vs-other-sym"),
    pytest.param(
        '["n", "m"]',
        '["m", "n"]',
        '["max(m, n) * min(min(m, n), 1)", "max(m, n) * min(min(m, n), 1)"]',
        id="sym-swapped",
    ),
    pytest.param('["n", 8]', '["n + 1", 1]', '["n * min(n, 1) + min(n, 1)", 8]', id="sym-vs-expr"),
    # unknown dims
    pytest.param('["?", 4]', "[3, 1]", "[3, 4]", id="unknown-vs-const"),
    pytest.param('["?"]', "[1]", '["?"]', id="unknown-vs-one"),
    pytest.param('["?"]', '["?"]', '["?"]', id="unknown-vs-unknown"),
    pytest.param('["?", "n"]', '[1, "n"]', '["?", "n"]', id="unknown-kept"),
    pytest.param('["n + 2"]', '["?"]', '["n + 2"]', id="never-one-vs-unknown"),
    # unknown rank
    pytest.param('"*"', "[2, 3]", '"*"', id="rank-lhs"),
    pytest.param('["n", 4]', '"*"', '"*"', id="rank-rhs"),
    pytest.param('"*"', '"*"', '"*"', id="rank-both"),
    pytest.param('"*"', "[]", '"*"', id="rank-vs-scalar"),
]


@pytest.mark.parametrize("lhs, rhs, out", BROADCAST)
@pytest.mark.parametrize("op, dtype, out_dtype", BINARY)
def test_binary_broadcast(params, op: str, dtype: str, out_dtype: str, lhs: str, rhs: str, out: str) -> None:
    x, y = params(t(lhs, dtype), t(rhs, dtype))
    assert ty(getattr(R, op)(x, y)) == t(out, out_dtype)


@pytest.mark.parametrize(
    "lhs, rhs, out",
    [
        pytest.param('["?", 3]', '["n", 3]', '["?", 3]', id="unknown-vs-sym"),
        pytest.param('["b", 6]', '["?", 1]', '["?", 6]', id="sym-vs-unknown"),
        pytest.param('["?"]', '["n + m"]', '["?"]', id="unknown-vs-expr"),
    ],
)
@pytest.mark.parametrize("op, dtype, out_dtype", BINARY)
def test_binary_unknown_vs_symbol(params, op: str, dtype: str, out_dtype: str, lhs: str, rhs: str, out: str):
    x, y = params(t(lhs, dtype), t(rhs, dtype))
    assert ty(getattr(R, op)(x, y)) == t(out, out_dtype)


BROADCAST_ERRORS = [
    pytest.param("[2, 3]", "[3, 2]", "'lhs' [2, 3], 'rhs' [3, 2]: dim -2 is 2 vs 3", id="static"),
    pytest.param('["n", 4]', "[3]", "'lhs' [\"n\", 4], 'rhs' [3]: dim -1 is 4 vs 3", id="sym"),
    pytest.param("[0]", "[4]", "'lhs' [0], 'rhs' [4]: dim -1 is 0 vs 4", id="zero"),
    pytest.param(
        '["?", 5]', '["m", 1, 6]', "'lhs' [\"?\", 5], 'rhs' [\"m\", 1, 6]: dim -1 is 5 vs 6", id="unk"
    ),
]


@pytest.mark.parametrize("lhs, rhs, message", BROADCAST_ERRORS)
@pytest.mark.parametrize("op, dtype, out_dtype", BINARY)
def test_binary_broadcast_error(params, op: str, dtype: str, out_dtype: str, lhs: str, rhs: str, message):
    x, y = params(t(lhs, dtype), t(rhs, dtype))
    with pytest.raises(ShapeError, match=err(op, "cannot broadcast " + message)):
        getattr(R, op)(x, y)


def test_binary_broadcast_error_provably_too_big(params) -> None:
    x, y = params(t('["n + 4"]'), t("[3]"))
    with pytest.raises(ShapeError, match="cannot broadcast"):
        R.add(x, y)


# Dtypes: arithmetic keeps the operands' dtype, comparisons and logical ops give i1.
DTYPES = (
    [pytest.param(op, a, b, a if a != "none" else b, id=f"{op}-{a}-{b}") for op in ARITH for a, b in
     [("i32", "i32"), ("f16", "f16"), ("none", "f64"), ("i64", "none"), ("none", "none")]]
    + [pytest.param(op, a, b, "i1", id=f"{op}-{a}-{b}") for op in COMPARE for a, b in
       [("i64", "i64"), ("bf16", "bf16"), ("none", "f32"), ("none", "none"), ("i1", "i1")]]
    + [pytest.param(op, a, b, "i1", id=f"{op}-{a}-{b}") for op in LOGICAL for a, b in
       [("none", "i1"), ("i1", "none"), ("none", "none")]]
)  # fmt: skip


@pytest.mark.parametrize("op, lhs_dtype, rhs_dtype, out_dtype", DTYPES)
def test_binary_dtypes(params, op: str, lhs_dtype: str, rhs_dtype: str, out_dtype: str) -> None:
    x, y = params(t('["n", 1]', lhs_dtype), t("[3]", rhs_dtype))
    assert ty(getattr(R, op)(x, y)) == t('["n", 3]', out_dtype)


@pytest.mark.parametrize("op", ARITH + COMPARE)
def test_binary_dtype_mismatch(params, op: str) -> None:
    x, y = params(t('["n"]', "f32"), t('["n"]', "i32"))
    with pytest.raises(
        ShapeError, match=err(op, "operands 'lhs' (f32) and 'rhs' (i32) have different dtypes")
    ):
        getattr(R, op)(x, y)


@pytest.mark.parametrize("op", LOGICAL)
@pytest.mark.parametrize(
    "lhs, rhs, message",
    [
        pytest.param("f32", "i1", "operand 'lhs' must have dtype i1, got f32", id="lhs-f32"),
        pytest.param("i1", "i32", "operand 'rhs' must have dtype i1, got i32", id="rhs-i32"),
        pytest.param("none", "i8", "operand 'rhs' must have dtype i1, got i8", id="rhs-i8"),
    ],
)
def test_logical_needs_bool(params, op: str, lhs: str, rhs: str, message: str) -> None:
    x, y = params(t('["n"]', lhs), t('["n"]', rhs))
    with pytest.raises(ShapeError, match=err(op, message)):
        getattr(R, op)(x, y)


NON_TENSORS = [
    pytest.param('!relax.shape<["n"]>', id="shape"),
    pytest.param('!relax.prim<"n">', id="prim"),
    pytest.param("!relax.object", id="object"),
    pytest.param('!relax.tuple<[!relax.tensor<["n"], f32>]>', id="tuple"),
]


@pytest.mark.parametrize("other", NON_TENSORS)
@pytest.mark.parametrize("op, dtype, out_dtype", BINARY)
def test_binary_non_tensor(params, op: str, dtype: str, out_dtype: str, other: str) -> None:
    x, s = params(t('["n"]', dtype), other)
    with pytest.raises(ShapeError, match=err(op, f"operand 'rhs' must be a tensor, got {other}")):
        getattr(R, op)(x, s)
    with pytest.raises(ShapeError, match=err(op, f"operand 'lhs' must be a tensor, got {other}")):
        getattr(R, op)(s, x)


# ----------------------------------------------------------------------------------------------
# Unary ops: the result is the operand's type

UNARY_SHAPES = [
    pytest.param("[2, 3]", id="static"),
    pytest.param("[]", id="static-scalar"),
    pytest.param("[0, 1, 7]", id="static-edge"),
    pytest.param('["n + 1", "b * s", 4]', id="symbolic"),
    pytest.param('["(n + 3) floordiv 4"]', id="symbolic-floordiv"),
    pytest.param('["?", 4]', id="unknown-dim"),
    pytest.param('"*"', id="unknown-rank"),
]


@pytest.mark.parametrize("shape", UNARY_SHAPES)
@pytest.mark.parametrize("op", UNARY_FLOAT + UNARY_ANY)
def test_unary_shapes(params, op: str, shape: str) -> None:
    (x,) = params(t(shape))
    assert ty(getattr(R, op)(x)) == t(shape)


@pytest.mark.parametrize("dtype", ["f16", "bf16", "f64", "none"])
@pytest.mark.parametrize("op", UNARY_FLOAT + UNARY_ANY)
def test_unary_float_dtypes(params, op: str, dtype: str) -> None:
    (x,) = params(t('["n"]', dtype))
    assert ty(getattr(R, op)(x)) == t('["n"]', dtype)


@pytest.mark.parametrize("dtype", ["i32", "i64", "i8"])
@pytest.mark.parametrize("op", UNARY_ANY)
def test_unary_any_accepts_ints(params, op: str, dtype: str) -> None:
    (x,) = params(t('["n", 2]', dtype))
    assert ty(getattr(R, op)(x)) == t('["n", 2]', dtype)


@pytest.mark.parametrize("dtype", ["i32", "i64", "i1", "ui8"])
@pytest.mark.parametrize("op", UNARY_FLOAT)
def test_unary_float_rejects_ints(params, op: str, dtype: str) -> None:
    (x,) = params(t('["n"]', dtype))
    with pytest.raises(ShapeError, match=err(op, f"operand 'x' must have a float dtype, got {dtype}")):
        getattr(R, op)(x)


@pytest.mark.parametrize("other", NON_TENSORS)
@pytest.mark.parametrize("op", UNARY_FLOAT + UNARY_ANY + ["logical_not"])
def test_unary_non_tensor(params, op: str, other: str) -> None:
    (s,) = params(other)
    with pytest.raises(ShapeError, match=err(op, f"operand 'x' must be a tensor, got {other}")):
        getattr(R, op)(s)


@pytest.mark.parametrize(
    "shape, dtype",
    [
        pytest.param("[4, 1]", "i1", id="static"),
        pytest.param("[0]", "i1", id="static-zero"),
        pytest.param('["b * s", "n + 1"]', "i1", id="symbolic"),
        pytest.param('["?", "n"]', "i1", id="unknown-dim"),
        pytest.param('"*"', "i1", id="unknown-rank"),
        pytest.param('["n"]', "none", id="unknown-dtype"),
    ],
)
def test_logical_not(params, shape: str, dtype: str) -> None:
    (x,) = params(t(shape, dtype))
    assert ty(R.logical_not(x)) == t(shape, "i1")


@pytest.mark.parametrize("dtype", ["f32", "i32", "i8"])
def test_logical_not_needs_bool(params, dtype: str) -> None:
    (x,) = params(t('["n"]', dtype))
    with pytest.raises(ShapeError, match=err("logical_not", f"operand 'x' must have dtype i1, got {dtype}")):
        R.logical_not(x)


@pytest.mark.parametrize("dtype", ["i8", "ui8", "i64", "none"])
@pytest.mark.parametrize("op", INTEGER)
def test_integer_ops_dtypes(params, op: str, dtype: str) -> None:
    x, y = params(t('["n", 1]', dtype), t("[3]", dtype))
    assert ty(getattr(R, op)(x, y)) == t('["n", 3]', dtype)


@pytest.mark.parametrize("dtype", ["f32", "bf16"])
@pytest.mark.parametrize("op", INTEGER)
def test_integer_ops_reject_floats(params, op: str, dtype: str) -> None:
    x, y = params(t('["n"]', dtype), t('["n"]', dtype))
    with pytest.raises(ShapeError, match=err(op, f"operands must have an integer dtype, got {dtype}")):
        getattr(R, op)(x, y)


@pytest.mark.parametrize("shape, dtype", [("[4, 1]", "i8"), ('["b * s", "?"]', "ui8"), ('"*"', "none")])
def test_bitwise_not(params, shape: str, dtype: str) -> None:
    (x,) = params(t(shape, dtype))
    assert ty(R.bitwise_not(x)) == t(shape, dtype)
    (f,) = params(t(shape, "f32"))
    with pytest.raises(
        ShapeError, match=err("bitwise_not", "operand 'x' must have an integer dtype, got f32")
    ):
        R.bitwise_not(f)


# ----------------------------------------------------------------------------------------------
# Ops with attributes: leaky_relu, clip, astype


@pytest.mark.parametrize("shape", UNARY_SHAPES)
@pytest.mark.parametrize("alpha", [0.01, 0.2, 0.0, -1.5])
def test_leaky_relu(params, shape: str, alpha: float) -> None:
    (x,) = params(t(shape, "f16"))
    y = R.leaky_relu(x, alpha)
    assert ty(y) == t(shape, "f16")
    assert y.owner.opview.alpha == alpha


def test_leaky_relu_errors(params) -> None:
    x, s = params(t('["n"]', "i32"), '!relax.shape<["n"]>')
    with pytest.raises(ShapeError, match=err("leaky_relu", "operand 'x' must have a float dtype, got i32")):
        R.leaky_relu(x, 0.1)
    with pytest.raises(ShapeError, match=err("leaky_relu", "operand 'x' must be a tensor")):
        R.leaky_relu(s)


@pytest.mark.parametrize("shape", UNARY_SHAPES)
@pytest.mark.parametrize(
    "dtype, lo, hi",
    [("f32", 0.0, 6.0), ("i32", -1.0, 1.0), ("f16", 2.5, 2.5), ("none", float("-inf"), float("inf"))],
)
def test_clip(params, shape: str, dtype: str, lo: float, hi: float) -> None:
    (x,) = params(t(shape, dtype))
    y = R.clip(x, lo, hi)
    assert ty(y) == t(shape, dtype)
    assert (y.owner.opview.min, y.owner.opview.max) == (lo, hi)


def test_clip_errors(params) -> None:
    x, s = params(t('["n"]'), "!relax.object")
    with pytest.raises(ShapeError, match=err("clip", "min 1.0 is greater than max 0.0")):
        R.clip(x, 1.0, 0.0)
    with pytest.raises(ShapeError, match=err("clip", "min nan and max 1.0 must not be NaN")):
        R.clip(x, float("nan"), 1.0)
    with pytest.raises(ShapeError, match=err("clip", "min 0.0 and max nan must not be NaN")):
        R.clip(x, 0.0, float("nan"))
    with pytest.raises(ShapeError, match=err("clip", "operand 'x' must be a tensor, got !relax.object")):
        R.clip(s, 0.0, 1.0)


@pytest.mark.parametrize("shape", UNARY_SHAPES)
@pytest.mark.parametrize(
    "src, dst",
    [("f32", "f16"), ("f16", "f32"), ("f32", "i32"), ("i64", "f64"), ("f32", "i1"), ("none", "bf16"),
     ("i32", "i8"), ("i8", "ui8"), ("f32", "f32"), ("i1", "i16"), ("f64", "i64")],
)  # fmt: skip
def test_astype(params, shape: str, src: str, dst: str) -> None:
    (x,) = params(t(shape, src))
    y = R.astype(x, dst)
    assert ty(y) == t(shape, dst)
    assert y.owner.opview.dtype == dst


@pytest.mark.parametrize("dtype", ["float32", "none", "f8", "index", ""])
def test_astype_unknown_dtype(params, dtype: str) -> None:
    (x,) = params(t('["n"]'))
    with pytest.raises(
        ShapeError, match=err("astype", f"unknown dtype '{dtype}'; expected one of bf16, f16")
    ):
        R.astype(x, dtype)


def test_astype_non_tensor(params) -> None:
    (s,) = params('!relax.prim<"n">')
    with pytest.raises(
        ShapeError, match=err("astype", "operand 'x' must be a tensor, got !relax.prim<\"n\">")
    ):
        R.astype(s, "f32")


# ----------------------------------------------------------------------------------------------
# where: three operands broadcast together, cond is i1, x and y share a dtype

WHERE = [
    pytest.param("[2, 3]", "[2, 3]", "[2, 3]", "[2, 3]", id="static"),
    pytest.param("[2, 1]", "[3]", "[1, 1, 1]", "[1, 2, 3]", id="static-three-way"),
    pytest.param("[]", "[4]", "[]", "[4]", id="static-scalars"),
    pytest.param("[0, 1]", "[1, 5]", "[5]", "[0, 5]", id="static-zero"),
    pytest.param('["n", 1]', "[4]", '["m", 1, 1]', '["m", "n", 4]', id="symbolic"),
    pytest.param('["b * s", 1]', '["s * b", "k"]', '[1, "k"]', '["b * s", "k"]', id="symbolic-expr"),
    pytest.param('["n"]', '["m"]', "[1]", '["max(m, n) * min(min(m, n), 1)"]', id="symbolic-unprovable"),
    pytest.param('["n"]', "[3]", '["n"]', "[3]", id="symbolic-vs-const"),
    pytest.param('["?", 4]', "[3, 1]", "[4]", "[3, 4]", id="unknown-dim"),
    pytest.param('["?", 1]', '["?", "n"]', "[1]", '["?", "n"]', id="unknown-dim-kept"),
    pytest.param('"*"', "[3]", "[3]", '"*"', id="unknown-rank-cond"),
    pytest.param("[3]", '"*"', "[3]", '"*"', id="unknown-rank-x"),
    pytest.param("[3]", "[3]", '"*"', '"*"', id="unknown-rank-y"),
]


@pytest.mark.parametrize("cond, x, y, out", WHERE)
def test_where(params, cond: str, x: str, y: str, out: str) -> None:
    c, a, b = params(t(cond, "i1"), t(x), t(y))
    assert ty(R.where(c, a, b)) == t(out)


@pytest.mark.parametrize(
    "cond, x, y, out",
    [("none", "i32", "i32", "i32"), ("i1", "none", "f16", "f16"), ("i1", "none", "none", "none")],
)
def test_where_dtypes(params, cond: str, x: str, y: str, out: str) -> None:
    c, a, b = params(t('["n"]', cond), t("[1]", x), t('["n"]', y))
    assert ty(R.where(c, a, b)) == t('["n"]', out)


def test_where_errors(params) -> None:
    c, fc, a, b, i, s = params(
        t('["n", 4]', "i1"), t('["n", 4]'), t("[3]"), t("[4]"), t("[4]", "i32"), '!relax.shape<["n"]>'
    )
    with pytest.raises(
        ShapeError,
        match=err("where", "cannot broadcast 'cond' [\"n\", 4], 'x' [3], 'y' [4]: dim -1 is 4 vs 3"),
    ):
        R.where(c, a, b)
    with pytest.raises(
        ShapeError,
        match=err("where", "cannot broadcast 'cond' [\"n\", 4], 'x' [4], 'y' [3]: dim -1 is 4 vs 3"),
    ):
        R.where(c, b, a)
    with pytest.raises(ShapeError, match=err("where", "operand 'cond' must have dtype i1, got f32")):
        R.where(fc, b, b)
    with pytest.raises(
        ShapeError, match=err("where", "operands 'x' (f32) and 'y' (i32) have different dtypes")
    ):
        R.where(c, b, i)
    for args, name in (((s, b, b), "cond"), ((c, s, b), "x"), ((c, b, s), "y")):
        with pytest.raises(
            ShapeError, match=err("where", f"operand '{name}' must be a tensor, got !relax.shape")
        ):
            R.where(*args)


def test_where_error_names_the_conflicting_dim(params) -> None:
    c, a, b = params(t("[1]", "i1"), t("[4]"), t("[3]"))
    with pytest.raises(ShapeError, match=re.escape("'y' [3]: dim -1 is 4 vs 3")):
        R.where(c, a, b)


def test_every_op_is_covered() -> None:
    """The tables above name every op of the elementwise, unary and casts modules (a new op must get its own cases)."""
    from relax_mlir.dialects.registry import OPS

    modules = {elementwise.__name__, unary.__name__, casts.__name__}
    mine = {n for n, cls in OPS.items() if cls.__module__ in modules}
    tested = {*ARITH, *COMPARE, *LOGICAL, *INTEGER, *UNARY_FLOAT, *UNARY_ANY, "logical_not", "bitwise_not",
              "leaky_relu"}  # fmt: skip
    assert mine == tested | {"clip", "astype", "where", "bitcast"}


@pytest.mark.parametrize(
    "src, dst, expected",
    [("f32", "i32", '!relax.tensor<["n", 2], i32>'), ("ui16", "f16", '!relax.tensor<["n", 2], f16>')],
)
def test_bitcast(params, src: str, dst: str, expected: str) -> None:
    (x,) = params(f'!relax.tensor<["n", 2], {src}>')
    assert str(R.bitcast(x, dst).type) == expected


@pytest.mark.parametrize(
    "src, dst, message",
    [
        ("f32", "i64", "f32 and i64 have different widths"),
        ("f32", "f8E4M3FN", "cannot bitcast to 'f8E4M3FN'"),
    ],
)
def test_bitcast_errors(params, src: str, dst: str, message: str) -> None:
    (x,) = params(f'!relax.tensor<["n"], {src}>')
    with pytest.raises(ShapeError, match=message):
        R.bitcast(x, dst)

"""Shape deduction of matmul, reductions and the neural-network ops.

Every op is checked with static, symbolic, unknown-dim ("?") and unknown-rank ("*") operands and with
ill-typed operands. Expected types are derived by hand; where an output dim is a symbolic formula, the
canonical spelling is pinned in ``FORMULAS`` and checked there against ``parse_expr`` of the hand-written
formula (independently of the op code).
"""

from __future__ import annotations

import re

import pytest
from mlir import ir

from relax_mlir.dialects.ops import linear_algebra as la
from relax_mlir.dialects.ops import nn
from relax_mlir.dialects.ops import reduce as rd
from relax_mlir.dialects.types import relax_type
from relax_mlir.errors import ShapeError
from relax_mlir.shape_infer.expr import parse_expr


def ty(v: ir.Value) -> str:
    return str(relax_type(v.type))


def t(shape: str, dtype: str = "f32") -> str:
    return f"!relax.tensor<{shape}, {dtype}>"


def raises(op: str, message: str) -> pytest.RaisesContext:
    """A ShapeError at the test's own line, naming the op, with exactly ``message``."""
    return pytest.raises(
        ShapeError, match=r"test_deduce_nn\.py:\d+: relax\." + op + ": " + re.escape(message)
    )


# Hand-written output-size formulas and their canonical spelling (used verbatim in the tables below).
FORMULAS = [
    # conv2d, h, k 3, pads 1 + 1, stride 2
    ("(h + 1 + 1 - 1 * (3 - 1) - 1) floordiv 2 + 1", "(h + 1) floordiv 2"),
    # conv, k 3, no pad, stride 1
    ("(h + 0 + 0 - 1 * (3 - 1) - 1) floordiv 1 + 1", "h - 2"),
    # conv, k 3, dilation 2, no pad, stride 2
    ("(h - 2 * (3 - 1) - 1) floordiv 2 + 1", "(h + 1) floordiv 2 - 2"),
    # conv1d, k 3, dilation 2, pads 1 + 1, stride 2
    ("(l + 1 + 1 - 2 * (3 - 1) - 1) floordiv 2 + 1", "(l + 1) floordiv 2 - 1"),
    # conv on "2 * h", k 2, stride 2; on "w + 1", k 2, stride 2
    ("(2 * h - 1 * (2 - 1) - 1) floordiv 2 + 1", "h"),
    ("(w + 1 - 1 * (2 - 1) - 1) floordiv 2 + 1", "(w + 1) floordiv 2"),
    # symbolic kernel kh, no pad, stride 1
    ("(h - 1 * (kh - 1) - 1) floordiv 1 + 1", "h - kh + 1"),
    # pooling k 2 stride 2
    ("(h - 1 * (2 - 1) - 1) floordiv 2 + 1", "h floordiv 2"),
    # ceil mode: min(ceildiv(span, s) + 1, ceildiv(h + pad_before, s)), the last window starts in the input
    ("min((h - 2) ceildiv 2 + 1, h ceildiv 2)", "(h + 1) floordiv 2"),  # k 2, s 2, no pad
    ("min((h + 2 - 3) ceildiv 2 + 1, (h + 1) ceildiv 2)", "h floordiv 2 + 1"),  # k 3, s 2, pads 1 + 1
    # k 2, s 2, pads 1 + 1: min(h ceildiv 2 + 1, (h + 1) ceildiv 2) = (h + 1) ceildiv 2 (<= h ceildiv 2 + 1)
    ("(h + 1) ceildiv 2", "h floordiv 2 + 1"),
    # k 1, s 3: min((h - 1) ceildiv 3 + 1, h ceildiv 3) = h ceildiv 3 since (h - 1) ceildiv 3 >= h ceildiv 3 - 1
    ("h ceildiv 3", "(h + 2) floordiv 3"),
    # resize by scales 0.5 and 1.5: floor(h * 1 / 2), floor(w * 3 / 2)
    ("(h * 1) floordiv 2", "h floordiv 2"),
    ("(w * 3) floordiv 2", "w + w floordiv 2"),
]


@pytest.mark.parametrize("formula, canonical", FORMULAS)
def test_formula_spelling(formula: str, canonical: str) -> None:
    assert str(parse_expr(formula)) == canonical


# ----------------------------------------------------------------------------------------------
# matmul

MATMUL = [
    # static
    ("[3, 4]", "[4, 5]", "[3, 5]"),
    ("[1, 1]", "[1, 1]", "[1, 1]"),
    ("[2, 7, 3]", "[3, 5]", "[2, 7, 5]"),
    ("[2, 1, 7, 3]", "[6, 3, 5]", "[2, 6, 7, 5]"),
    ("[4]", "[4, 5]", "[5]"),
    ("[3, 4]", "[4]", "[3]"),
    ("[4]", "[4]", "[]"),
    ("[1]", "[1]", "[]"),
    ("[4]", "[2, 4, 5]", "[2, 5]"),
    ("[2, 3, 4]", "[4]", "[2, 3]"),
    # symbolic
    ('["n", 64]', "[64, 16]", '["n", 16]'),
    ('["b", "s", 512]', "[512, 64]", '["b", "s", 64]'),
    ('["b", 8, "s", 64]', '["b", 8, 64, "t"]', '["b", 8, "s", "t"]'),
    ('[1, "s", 4]', '["b", 4, 5]', '["b", "s", 5]'),
    ('["n", "k"]', '["k", "m + 1"]', '["n", "m + 1"]'),
    ('["b * s", "k"]', '["k", 3]', '["b * s", 3]'),
    ('["k"]', '["k"]', "[]"),
    ('["k"]', '["b", "k", "n"]', '["b", "n"]'),
    ('["n", 4]', '["k", 5]', '["n", 5]'),  # k = 4 is checked at run time
    (
        '["b", "n", 4]',
        '["c", 4, 5]',
        '["max(b, c) * min(min(b, c), 1)", "n", 5]',
    ),  # b vs c: equal or one is 1
    # unknown dims
    ('["?", 4]', '[4, "?"]', '["?", "?"]'),
    ('["?", 3, 4]', "[4, 5]", '["?", 3, 5]'),
    ('[3, "?"]', "[4, 5]", "[3, 5]"),
    ('["?"]', '["?"]', "[]"),
    # unknown rank
    ('"*"', "[4, 5]", '"*"'),
    ("[3, 4]", '"*"', '"*"'),
    ('"*"', '"*"', '"*"'),
]


@pytest.mark.parametrize("lhs, rhs, out", MATMUL)
def test_matmul(params, lhs: str, rhs: str, out: str) -> None:
    a, b = params(t(lhs), t(rhs))
    assert ty(la.matmul(a, b)) == t(out)


def test_matmul_dtype(params) -> None:
    a, b = params(t("[3, 4]", "none"), t("[4, 5]", "f16"))
    assert ty(la.matmul(a, b)) == t("[3, 5]", "f16")


MATMUL_ERRORS = [
    ("[3, 4]", "[5, 6]", "contraction dims differ: 'lhs' [3, 4] has 4, 'rhs' [5, 6] has 5"),
    ("[4]", "[5]", "contraction dims differ: 'lhs' [4] has 4, 'rhs' [5] has 5"),
    ('["n", 3]', "[2, 1]", "contraction dims differ: 'lhs' [\"n\", 3] has 3, 'rhs' [2, 1] has 2"),
    ("[4]", "[2, 3, 5]", "contraction dims differ: 'lhs' [4] has 4, 'rhs' [2, 3, 5] has 3"),
    (
        "[2, 3, 4]",
        "[5, 4, 6]",
        "cannot broadcast batch dims [2] of 'lhs' [2, 3, 4] and [5] of 'rhs' [5, 4, 6]",
    ),
    ("[]", "[3]", "operand 'lhs' must have rank >= 1, got a scalar"),
    ("[3]", "[]", "operand 'rhs' must have rank >= 1, got a scalar"),
]


@pytest.mark.parametrize("lhs, rhs, message", MATMUL_ERRORS)
def test_matmul_errors(params, lhs: str, rhs: str, message: str) -> None:
    a, b = params(t(lhs), t(rhs))
    with raises("matmul", message):
        la.matmul(a, b)


def test_matmul_error_kinds(params) -> None:
    a, b, s = params(t("[3, 4]"), t("[4, 5]", "i32"), "!relax.shape<[3, 4]>")
    with raises("matmul", "operands 'lhs' (f32) and 'rhs' (i32) have different dtypes"):
        la.matmul(a, b)
    with raises("matmul", "operand 'rhs' must be a tensor, got !relax.shape<[3, 4]>"):
        la.matmul(a, s)


# ----------------------------------------------------------------------------------------------
# reductions

REDUCTIONS = ["sum", "mean", "max", "min", "prod", "variance"]

REDUCE = [
    # static
    ("[2, 3, 4]", [1], False, "[2, 4]"),
    ("[2, 3, 4]", [1], True, "[2, 1, 4]"),
    ("[2, 3, 4]", [-1], False, "[2, 3]"),
    ("[2, 3, 4]", [0, -1], False, "[3]"),
    ("[2, 3, 4]", [-1, 0], True, "[1, 3, 1]"),
    ("[2, 3, 4]", None, False, "[]"),
    ("[2, 3, 4]", None, True, "[1, 1, 1]"),
    ("[2, 3, 4]", [], False, "[2, 3, 4]"),
    ("[1]", [0], False, "[]"),
    ("[1]", [0], True, "[1]"),
    ("[]", None, False, "[]"),
    ("[]", None, True, "[]"),
    ("[0, 5]", [1], False, "[0]"),
    # symbolic
    ('["n", "m", 4]', [1], False, '["n", 4]'),
    ('["n", "m + 1", "2 * k"]', [-3], True, '[1, "m + 1", "2 * k"]'),
    ('["b * s", 512]', [1], False, '["b * s"]'),
    ('["n", "m"]', None, True, "[1, 1]"),
    # unknown dims
    ('["?", 4, "?"]', [1], False, '["?", "?"]'),
    ('["?", 4]', [0], True, "[1, 4]"),
    ('["?", "?"]', None, False, "[]"),
    # unknown rank
    ('"*"', None, False, "[]"),
    ('"*"', None, True, '"*"'),
    ('"*"', [0], False, '"*"'),
    ('"*"', [0], True, '"*"'),
]


@pytest.mark.parametrize("name", REDUCTIONS)
@pytest.mark.parametrize("shape, axes, keepdims, out", REDUCE)
def test_reduction(params, name: str, shape: str, axes, keepdims: bool, out: str) -> None:
    (x,) = params(t(shape))
    assert ty(getattr(rd, name)(x, axes, keepdims)) == t(out)


REDUCE_ERRORS = [
    ("[2, 3, 4]", [3], "axes 3 is out of range for rank 3"),
    ("[2, 3, 4]", [-4], "axes -4 is out of range for rank 3"),
    ('["n"]', [1], "axes 1 is out of range for rank 1"),
    ("[]", [0], "axes 0 is out of range for rank 0"),
    ("[2, 3, 4]", [0, -3], "axes [0, -3] repeat an axis"),
]


@pytest.mark.parametrize("name", REDUCTIONS)
@pytest.mark.parametrize("shape, axes, message", REDUCE_ERRORS)
def test_reduction_errors(params, name: str, shape: str, axes, message: str) -> None:
    (x,) = params(t(shape))
    with raises(name, message):
        getattr(rd, name)(x, axes)


def test_reduction_keeps_dtype(params) -> None:
    x, y = params(t('["n", 4]', "i32"), t("[3]", "none"))
    assert ty(rd.sum(x, [1])) == t('["n"]', "i32")
    assert ty(rd.variance(y)) == t("[]", "none")


ARG = [
    # static
    ("[2, 3, 4]", 1, False, "[2, 4]"),
    ("[2, 3, 4]", -1, True, "[2, 3, 1]"),
    ("[2, 3, 4]", None, False, "[]"),
    ("[2, 3, 4]", None, True, "[1, 1, 1]"),
    ("[1]", 0, False, "[]"),
    ("[5]", -1, True, "[1]"),
    # symbolic
    ('["n", "m + 1"]', 1, False, '["n"]'),
    ('["n", "m + 1"]', 0, True, '[1, "m + 1"]'),
    # unknown dims
    ('["?", 4]', 1, False, '["?"]'),
    # unknown rank
    ('"*"', 0, False, '"*"'),
    ('"*"', None, False, "[]"),
    ('"*"', None, True, '"*"'),
]


@pytest.mark.parametrize("name", ["argmax", "argmin"])
@pytest.mark.parametrize("shape, axis, keepdims, out", ARG)
def test_arg_reduction(params, name: str, shape: str, axis, keepdims: bool, out: str) -> None:
    (x,) = params(t(shape, "f16"))
    assert ty(getattr(rd, name)(x, axis, keepdims)) == t(out, "i64")


@pytest.mark.parametrize("name", ["argmax", "argmin"])
def test_arg_reduction_errors(params, name: str) -> None:
    x, u = params(t('["n", 4]'), t('"*"'))
    with raises(name, "axis 2 is out of range for rank 2"):
        getattr(rd, name)(x, 2)
    with raises(name, "axis -3 is out of range for rank 2"):
        getattr(rd, name)(x, -3)
    cls = rd.ArgmaxOp if name == "argmax" else rd.ArgminOp
    with raises(name, "axis must hold one axis, got [0, 1]"):
        cls.build([x], {"axis": [0, 1], "keepdims": False})
    with raises(name, "axis must hold one axis, got []"):
        cls.build([u], {"axis": [], "keepdims": False})


CUMSUM = [
    ("[2, 3]", 0, "[2, 3]"),
    ("[2, 3]", -1, "[2, 3]"),
    ("[1]", 0, "[1]"),
    ("[0, 7]", 1, "[0, 7]"),
    ('["n", "m + 1"]', 1, '["n", "m + 1"]'),
    ('["?", 4]', 0, '["?", 4]'),
    ('"*"', 3, '"*"'),
]


@pytest.mark.parametrize("shape, axis, out", CUMSUM)
def test_cumsum(params, shape: str, axis: int, out: str) -> None:
    (x,) = params(t(shape, "i32"))
    assert ty(rd.cumsum(x, axis)) == t(out, "i32")


def test_cumsum_errors(params) -> None:
    x, s = params(t('["n", 4]'), t("[]"))
    with raises("cumsum", "axis 2 is out of range for rank 2"):
        rd.cumsum(x, 2)
    with raises("cumsum", "axis -3 is out of range for rank 2"):
        rd.cumsum(x, -3)
    with raises("cumsum", "axis 0 is out of range for rank 0"):
        rd.cumsum(s, 0)


TOPK = [
    # static
    ("[3, 10]", 3, -1, "[3, 3]"),
    ("[3, 10]", 2, 0, "[2, 10]"),
    ("[3, 10]", 10, 1, "[3, 10]"),
    ("[1]", 1, 0, "[1]"),
    ("[5]", 0, 0, "[0]"),
    # symbolic
    ('["n", 100]', 5, -1, '["n", 5]'),
    ('["n", "m"]', 2, -1, '["n", 2]'),
    ('["n", "m + 1", 7]', 4, 1, '["n", 4, 7]'),
    # unknown dims
    ('["?", "?"]', 4, 1, '["?", 4]'),
    # unknown rank
    ('"*"', 4, 0, '"*"'),
]


@pytest.mark.parametrize("shape, k, axis, out", TOPK)
def test_topk(params, shape: str, k: int, axis: int, out: str) -> None:
    (x,) = params(t(shape, "f16"))
    values, indices = rd.topk(x, k, axis)
    assert ty(values) == t(out, "f16")
    assert ty(indices) == t(out, "i64")


def test_topk_errors(params) -> None:
    x, y = params(t('["n", 4]'), t("[1]"))
    with raises("topk", "k = 5 is larger than dim 1 of size 4"):
        rd.topk(x, 5)
    with raises("topk", "k = 2 is larger than dim 0 of size 1"):
        rd.topk(y, 2, 0)
    with raises("topk", "k must be non-negative, got -1"):
        rd.topk(x, -1)
    with raises("topk", "axis 2 is out of range for rank 2"):
        rd.topk(x, 1, 2)


# ----------------------------------------------------------------------------------------------
# softmax, log_softmax

SOFTMAX = [
    ("[2, 10]", -1),
    ("[2, 10]", 0),
    ("[1]", 0),
    ("[3, 5, 7]", 1),
    ('["b", "s"]', -1),
    ('["b", 8, "s", "s + 1"]', 3),
    ('["?", 4]', 0),
    ('"*"', 5),
]


@pytest.mark.parametrize("name", ["softmax", "log_softmax"])
@pytest.mark.parametrize("shape, axis", SOFTMAX)
def test_softmax(params, name: str, shape: str, axis: int) -> None:
    (x,) = params(t(shape, "bf16"))
    assert ty(getattr(nn, name)(x, axis)) == t(shape, "bf16")


@pytest.mark.parametrize("name", ["softmax", "log_softmax"])
def test_softmax_errors(params, name: str) -> None:
    x, s, i = params(t('["b", 10]'), t("[]"), t("[4]", "i32"))
    with raises(name, "axis 2 is out of range for rank 2"):
        getattr(nn, name)(x, 2)
    with raises(name, "axis -3 is out of range for rank 2"):
        getattr(nn, name)(x, -3)
    with raises(name, "axis -1 is out of range for rank 0"):
        getattr(nn, name)(s)
    with raises(name, "operand 'x' must have a float dtype, got i32"):
        getattr(nn, name)(i)


# ----------------------------------------------------------------------------------------------
# normalizations

LAYER_NORM = [
    # x, gamma and beta, axes
    ("[2, 3, 4]", "[4]", [-1]),
    ("[2, 3, 4]", "[3, 4]", [1, 2]),
    ("[2, 3, 4]", "[3, 4]", [-2, -1]),
    ("[2, 3, 4]", "[2]", [0]),
    ("[1, 1]", "[1]", [1]),
    ('["b", "s", 512]', "[512]", [-1]),
    ('["b", "s", "d"]', '["d"]', [-1]),
    ('["b", "s", "2 * d"]', '["s", "2 * d"]', [1, 2]),
    ('["b", "?"]', "[8]", [-1]),
    ('["b", 8]', '["?"]', [-1]),
    ('["b", 8]', '"*"', [-1]),
    ('"*"', "[8]", [-1]),
    ('"*"', "[3, 8]", [-2, -1]),
]


@pytest.mark.parametrize("x_shape, p_shape, axes", LAYER_NORM)
def test_layer_norm(params, x_shape: str, p_shape: str, axes: list[int]) -> None:
    x, g, b = params(t(x_shape), t(p_shape), t(p_shape))
    assert ty(nn.layer_norm(x, g, b, axes)) == t(x_shape)


@pytest.mark.parametrize("x_shape, p_shape, axes", LAYER_NORM)
def test_rms_norm(params, x_shape: str, p_shape: str, axes: list[int]) -> None:
    x, g = params(t(x_shape), t(p_shape))
    assert ty(nn.rms_norm(x, g, axes)) == t(x_shape)


LAYER_NORM_ERRORS = [
    # x, gamma, beta, axes, message
    ("[2, 3, 4]", "[5]", "[4]", [-1], "'gamma' [5] must have shape [4]"),
    ("[2, 3, 4]", "[4]", "[3]", [-1], "'beta' [3] must have shape [4]"),
    ("[2, 3, 4]", "[4]", "[4]", [1, 2], "'gamma' [4] must have shape [3, 4]"),
    ("[2, 3, 4]", "[3, 4]", "[3, 4]", [-1], "'gamma' [3, 4] must have shape [4]"),
    ('["b", "s", 512]', "[256]", "[512]", [-1], "'gamma' [256] must have shape [512]"),
    ("[2, 3, 4]", "[4]", "[4]", [3], "axes 3 is out of range for rank 3"),
    ("[2, 3, 4]", "[3, 4]", "[3, 4]", [2, -1], "axes [2, -1] repeat an axis"),
    ('"*"', "[8]", "[9]", [-1], "'beta' [9] must have shape [8] (like 'gamma')"),
    ('"*"', "[8]", "[8]", [-2, -1], '\'gamma\' [8] must have shape ["?", "?"]'),
    ('"*"', "[8]", "[8]", [1, 1], "axes [1, 1] repeat an axis"),
]


@pytest.mark.parametrize("x_shape, g_shape, b_shape, axes, message", LAYER_NORM_ERRORS)
def test_layer_norm_errors(params, x_shape, g_shape, b_shape, axes, message: str) -> None:
    x, g, b = params(t(x_shape), t(g_shape), t(b_shape))
    with raises("layer_norm", message):
        nn.layer_norm(x, g, b, axes)


def test_layer_norm_dtypes(params) -> None:
    x, u, n, g, h, i = params(
        t("[2, 4]"), t('"*"'), t("[2, 4]", "none"), t("[4]"), t("[4]", "f16"), t("[2, 4]", "i32")
    )
    with raises("layer_norm", "operands 'x' (f32) and 'beta' (f16) have different dtypes"):
        nn.layer_norm(x, g, h)
    with raises("layer_norm", "operands 'x' (f32) and 'gamma' (f16) have different dtypes"):
        nn.layer_norm(u, h, g)
    with raises("layer_norm", "operands 'gamma' (f32) and 'beta' (f16) have different dtypes"):
        nn.layer_norm(n, g, h)
    with raises("layer_norm", "operand 'x' must have a float dtype, got i32"):
        nn.layer_norm(i, g, g)
    assert ty(nn.layer_norm(n, g, g)) == t("[2, 4]", "none")


RMS_NORM_ERRORS = [
    ("[2, 3, 4]", "[5]", [-1], "'gamma' [5] must have shape [4]"),
    ("[2, 3, 4]", "[4]", [1, 2], "'gamma' [4] must have shape [3, 4]"),
    ('["n", 1]', "[2]", [-1], "'gamma' [2] must have shape [1]"),
    ("[2, 3, 4]", "[4]", [-4], "axes -4 is out of range for rank 3"),
    ('"*"', "[3, 4]", [-1], "'gamma' [3, 4] must have shape [\"?\"]"),
]


@pytest.mark.parametrize("x_shape, g_shape, axes, message", RMS_NORM_ERRORS)
def test_rms_norm_errors(params, x_shape, g_shape, axes, message: str) -> None:
    x, g = params(t(x_shape), t(g_shape))
    with raises("rms_norm", message):
        nn.rms_norm(x, g, axes)


def test_rms_norm_dtypes(params) -> None:
    x, g, i = params(t("[2, 4]", "f16"), t("[4]"), t("[2, 4]", "i64"))
    with raises("rms_norm", "operands 'x' (f16) and 'gamma' (f32) have different dtypes"):
        nn.rms_norm(x, g)
    with raises("rms_norm", "operand 'x' must have a float dtype, got i64"):
        nn.rms_norm(i, g)


GROUP_NORM = [
    # x, gamma and beta, num_groups
    ("[2, 6, 4, 4]", "[6]", 3),
    ("[2, 6, 4, 4]", "[6]", 1),
    ("[2, 6, 4, 4]", "[6]", 6),
    ("[1, 1, 1]", "[1]", 1),
    ("[2, 6]", "[6]", 2),
    ('["n", 32, "h", "w"]', "[32]", 8),
    ('["n", "c", "h"]', '["c"]', 4),
    ('["?", "?", 5]', "[6]", 3),
    ('["?", 6, 5]', '["?"]', 3),
    ('"*"', "[6]", 3),
    ('"*"', '"*"', 5),
]


@pytest.mark.parametrize("x_shape, p_shape, groups", GROUP_NORM)
def test_group_norm(params, x_shape: str, p_shape: str, groups: int) -> None:
    x, g, b = params(t(x_shape), t(p_shape), t(p_shape))
    assert ty(nn.group_norm(x, g, b, groups)) == t(x_shape)


GROUP_NORM_ERRORS = [
    # x, gamma, beta, num_groups, message
    ("[2, 6, 4, 4]", "[6]", "[6]", 4, "6 channels do not divide into 4 groups"),
    ("[2, 5, 3]", "[5]", "[5]", 2, "5 channels do not divide into 2 groups"),
    ("[2, 6, 4, 4]", "[4]", "[6]", 3, "'gamma' [4] must have shape [6]"),
    ("[2, 6, 4, 4]", "[6]", "[6, 1]", 3, "'beta' [6, 1] must have shape [6]"),
    ('["n", 32, "h", "w"]', "[16]", "[32]", 8, "'gamma' [16] must have shape [32]"),
    ("[2, 6, 4, 4]", "[6]", "[6]", 0, "num_groups must be positive, got 0"),
    ("[6]", "[6]", "[6]", 1, "operand 'x' [6] needs a channel dim (rank >= 2)"),
    ('"*"', "[6]", "[7]", 3, "'beta' [7] must have shape [6] (like 'gamma')"),
    ('"*"', "[6]", "[6]", 4, "6 channels do not divide into 4 groups"),
    ('"*"', "[6, 2]", "[6]", 2, "'gamma' [6, 2] must have shape [\"?\"]"),
]


@pytest.mark.parametrize("x_shape, g_shape, b_shape, groups, message", GROUP_NORM_ERRORS)
def test_group_norm_errors(params, x_shape, g_shape, b_shape, groups: int, message: str) -> None:
    x, g, b = params(t(x_shape), t(g_shape), t(b_shape))
    with raises("group_norm", message):
        nn.group_norm(x, g, b, groups)


def test_group_norm_dtypes(params) -> None:
    x, g, h = params(t('"*"'), t("[6]"), t("[6]", "i32"))
    with raises("group_norm", "operands 'x' (f32) and 'beta' (i32) have different dtypes"):
        nn.group_norm(x, g, h, 2)


BATCH_NORM = [
    # x, parameters, axis
    ("[2, 3, 4, 4]", "[3]", 1),
    ("[2, 5, 3]", "[3]", -1),
    ("[1, 1]", "[1]", 1),
    ("[7]", "[7]", 0),
    ('["n", 64, "h", "w"]', "[64]", 1),
    ('["n", "c", "h"]', '["c"]', 1),
    ('["n", "?", "h"]', "[8]", 1),
    ('["n", 8]', '["?"]', 1),
    ('"*"', "[8]", 1),
]


@pytest.mark.parametrize("x_shape, p_shape, axis", BATCH_NORM)
def test_batch_norm(params, x_shape: str, p_shape: str, axis: int) -> None:
    x, g, b, m, v = params(t(x_shape), *[t(p_shape)] * 4)
    assert ty(nn.batch_norm(x, g, b, m, v, axis)) == t(x_shape)


BATCH_NORM_ERRORS = [
    # x, (gamma, beta, mean, var), axis, message
    ("[2, 3, 4, 4]", ("[4]", "[3]", "[3]", "[3]"), 1, "'gamma' [4] must have shape [3]"),
    ("[2, 3, 4, 4]", ("[3]", "[3]", "[4]", "[3]"), 1, "'mean' [4] must have shape [3]"),
    ("[2, 3, 4, 4]", ("[3]", "[3]", "[3]", "[1, 3]"), 1, "'var' [1, 3] must have shape [3]"),
    ("[2, 5, 3]", ("[5]", "[5]", "[5]", "[5]"), -1, "'gamma' [5] must have shape [3]"),
    ("[2, 3]", ("[3]", "[3]", "[3]", "[3]"), 2, "axis 2 is out of range for rank 2"),
    ('"*"', ("[3]", '"*"', "[4]", "[3]"), 1, "'mean' [4] must have shape [3] (like 'gamma')"),
    ('"*"', ("[3]", "[3]", "[3]", "[3, 1]"), 1, "'var' [3, 1] must have shape [3] (like 'gamma')"),
]


@pytest.mark.parametrize("x_shape, p_shapes, axis, message", BATCH_NORM_ERRORS)
def test_batch_norm_errors(params, x_shape: str, p_shapes, axis: int, message: str) -> None:
    x, *ps = params(t(x_shape), *[t(p) for p in p_shapes])
    with raises("batch_norm", message):
        nn.batch_norm(x, *ps, axis=axis)


def test_batch_norm_dtypes(params) -> None:
    x, g, h, i = params(t("[2, 3]"), t("[3]"), t("[3]", "f64"), t("[2, 3]", "i8"))
    with raises("batch_norm", "operands 'x' (f32) and 'var' (f64) have different dtypes"):
        nn.batch_norm(x, g, g, g, h)
    with raises("batch_norm", "operand 'x' must have a float dtype, got i8"):
        nn.batch_norm(i, g, g, g, g)


# ----------------------------------------------------------------------------------------------
# convolutions

CONV2D = [
    # x, weight, strides, padding (top, left, bottom, right or one int), dilation, groups, out
    ("[1, 3, 32, 32]", "[16, 3, 3, 3]", 1, 1, 1, 1, "[1, 16, 32, 32]"),
    ("[2, 3, 7, 7]", "[8, 3, 3, 3]", 2, 0, 1, 1, "[2, 8, 3, 3]"),
    ("[2, 3, 8, 8]", "[8, 3, 3, 3]", 2, 1, 1, 1, "[2, 8, 4, 4]"),
    ("[1, 1, 1, 1]", "[1, 1, 1, 1]", 1, 0, 1, 1, "[1, 1, 1, 1]"),
    ("[1, 1, 1, 1]", "[1, 1, 3, 3]", 1, 1, 1, 1, "[1, 1, 1, 1]"),
    ("[1, 4, 9, 9]", "[4, 4, 3, 3]", 1, 0, 2, 1, "[1, 4, 5, 5]"),
    ("[1, 3, 5, 6]", "[2, 3, 3, 2]", [1, 2], [1, 0, 0, 1], 1, 1, "[1, 2, 4, 3]"),
    ("[1, 6, 5, 5]", "[9, 2, 3, 3]", 1, 0, 1, 3, "[1, 9, 3, 3]"),
    ("[1, 3, 3, 3]", "[4, 3, 3, 3]", 1, 0, 1, 1, "[1, 4, 1, 1]"),
    # symbolic
    (
        '["n", 3, "h", "w"]',
        "[16, 3, 3, 3]",
        2,
        1,
        1,
        1,
        '["n", 16, "(h + 1) floordiv 2", "(w + 1) floordiv 2"]',
    ),
    ('["n", 3, "h", "w"]', "[16, 3, 3, 3]", 1, 1, 1, 1, '["n", 16, "h", "w"]'),
    ('["n", 3, "h", "w"]', "[16, 3, 3, 3]", 1, 0, 1, 1, '["n", 16, "h - 2", "w - 2"]'),
    ('["n", 3, "h", 9]', "[16, 3, 3, 3]", 2, 0, 2, 1, '["n", 16, "(h + 1) floordiv 2 - 2", 3]'),
    ('["b", 3, "2 * h", "w + 1"]', "[4, 3, 2, 2]", 2, 0, 1, 1, '["b", 4, "h", "(w + 1) floordiv 2"]'),
    ('[1, 3, "h", "w"]', '[4, 3, "kh", 1]', 1, 0, 1, 1, '[1, 4, "h - kh + 1", "w"]'),
    ('["n", "c", "h", "w"]', '[8, "c", 1, 1]', 1, 0, 1, 1, '["n", 8, "h", "w"]'),
    ('["n", 8, "h", "w"]', "[8, 1, 3, 3]", 1, 1, 1, 8, '["n", 8, "h", "w"]'),
    ('["n", "c", 5, 5]', '["o", 2, 3, 3]', 1, 0, 1, 2, '["n", "o", 3, 3]'),
    # unknown dims
    ('["?", 3, "?", 5]', "[8, 3, 3, 3]", 1, 0, 1, 1, '["?", 8, "?", 3]'),
    ("[1, 3, 5, 5]", '["?", "?", 3, "?"]', 1, 0, 1, 1, '[1, "?", 3, "?"]'),
    ('[1, "?", 5, 5]', "[8, 3, 3, 3]", 1, 0, 1, 2, "[1, 8, 3, 3]"),
    # unknown rank
    ('"*"', "[8, 3, 3, 3]", 1, 0, 1, 1, '["?", 8, "?", "?"]'),
    ('["n", 3, 5, 5]', '"*"', 1, 0, 1, 1, '["n", "?", "?", "?"]'),
    ('"*"', '"*"', 2, 1, 1, 1, '["?", "?", "?", "?"]'),
]


@pytest.mark.parametrize("x_shape, w_shape, strides, padding, dilation, groups, out", CONV2D)
def test_conv2d(params, x_shape, w_shape, strides, padding, dilation, groups, out: str) -> None:
    x, w = params(t(x_shape), t(w_shape))
    assert ty(nn.conv2d(x, w, strides, padding, dilation, groups)) == t(out)


CONV2D_ERRORS = [
    (
        "[1, 4, 5, 5]",
        "[8, 3, 3, 3]",
        {},
        "input channels of 'x' [1, 4, 5, 5] and 'weight' [8, 3, 3, 3] x groups 1 differ: 4 vs 3",
    ),
    (
        "[1, 6, 5, 5]",
        "[9, 3, 3, 3]",
        {"groups": 3},
        "input channels of 'x' [1, 6, 5, 5] and 'weight' [9, 3, 3, 3] x groups 3 differ: 6 vs 9",
    ),
    ("[1, 6, 5, 5]", "[8, 2, 3, 3]", {"groups": 3}, "8 output channels do not divide into 3 groups"),
    ('"*"', "[8, 2, 3, 3]", {"groups": 3}, "8 output channels do not divide into 3 groups"),
    ("[1, 3, 5, 5]", "[8, 3, 3, 3]", {"groups": 0}, "groups must be positive, got 0"),
    ("[1, 3, 2, 2]", "[8, 3, 3, 3]", {}, "window of size 3 (dilation 1) is larger than the padded input 2"),
    (
        "[1, 3, 5, 5]",
        "[8, 3, 3, 3]",
        {"dilation": 3},
        "window of size 3 (dilation 3) is larger than the padded input 5",
    ),
    ("[1, 3, 5]", "[8, 3, 3, 3]", {}, "operand 'x' [1, 3, 5] must have rank 4"),
    ('"*"', "[8, 3, 3]", {}, "operand 'weight' [8, 3, 3] must have rank 4"),
    ("[1, 3, 5, 5]", "[8, 3, 3, 3]", {"strides": [1, 0]}, "'strides' must be positive, got [1, 0]"),
    ("[1, 3, 5, 5]", "[8, 3, 3, 3]", {"strides": [1, 1, 1]}, "'strides' needs 2 values, got [1, 1, 1]"),
    ("[1, 3, 5, 5]", "[8, 3, 3, 3]", {"padding": -1}, "'padding' must be non-negative, got [-1, -1, -1, -1]"),
    ("[1, 3, 5, 5]", "[8, 3, 3, 3]", {"padding": [1, 1, 1]}, "'padding' needs 4 values, got [1, 1, 1]"),
    ("[1, 3, 5, 5]", "[8, 3, 3, 3]", {"dilation": 0}, "'dilation' must be positive, got [0, 0]"),
]


@pytest.mark.parametrize("x_shape, w_shape, kwargs, message", CONV2D_ERRORS)
def test_conv2d_errors(params, x_shape: str, w_shape: str, kwargs: dict, message: str) -> None:
    x, w = params(t(x_shape), t(w_shape))
    with raises("conv2d", message):
        nn.conv2d(x, w, **kwargs)


def test_conv_dtypes(params) -> None:
    x, w, h, i, n, u = params(
        t("[1, 3, 5, 5]"),
        t("[8, 3, 3, 3]"),
        t("[8, 3, 3, 3]", "f16"),
        t("[1, 3, 5, 5]", "i32"),
        t("[1, 3, 5, 5]", "none"),
        t('"*"', "none"),
    )
    with raises("conv2d", "operands 'x' (f32) and 'weight' (f16) have different dtypes"):
        nn.conv2d(x, h)
    with raises("conv2d", "operand 'x' must have a float dtype, got i32"):
        nn.conv2d(i, w)
    assert ty(nn.conv2d(n, h)) == t("[1, 8, 3, 3]", "f16")
    assert ty(nn.conv2d(n, u)) == t('[1, "?", "?", "?"]', "none")


CONV1D = [
    # x, weight, strides, padding, dilation, groups, out
    ("[1, 4, 10]", "[8, 4, 3]", 1, 0, 1, 1, "[1, 8, 8]"),
    ("[2, 4, 11]", "[6, 4, 3]", 2, 1, 1, 1, "[2, 6, 6]"),
    ("[1, 1, 1]", "[1, 1, 1]", 1, 0, 1, 1, "[1, 1, 1]"),
    ("[1, 2, 7]", "[2, 2, 2]", 3, [0, 1], 1, 1, "[1, 2, 3]"),
    ("[1, 4, 9]", "[4, 2, 3]", 1, 0, 3, 2, "[1, 4, 3]"),
    # symbolic
    ('["n", 16, "l"]', "[32, 16, 3]", 1, 1, 1, 1, '["n", 32, "l"]'),
    ('["n", 16, "l"]', "[32, 16, 3]", 2, 1, 2, 1, '["n", 32, "(l + 1) floordiv 2 - 1"]'),
    ('["n", 4, "l"]', "[4, 1, 3]", 1, 1, 1, 4, '["n", 4, "l"]'),
    ('["n", 4, "s + 2"]', "[5, 4, 3]", 1, 0, 1, 1, '["n", 5, "s"]'),
    # unknown dims
    ('["?", 16, "?"]', "[32, 16, 3]", 1, 0, 1, 1, '["?", 32, "?"]'),
    # unknown rank
    ('"*"', "[32, 16, 3]", 1, 0, 1, 1, '["?", 32, "?"]'),
    ('["n", 16, 9]', '"*"', 1, 0, 1, 1, '["n", "?", "?"]'),
]


@pytest.mark.parametrize("x_shape, w_shape, strides, padding, dilation, groups, out", CONV1D)
def test_conv1d(params, x_shape, w_shape, strides, padding, dilation, groups, out: str) -> None:
    x, w = params(t(x_shape), t(w_shape))
    assert ty(nn.conv1d(x, w, strides, padding, dilation, groups)) == t(out)


CONV1D_ERRORS = [
    (
        '["n", 8, "l"]',
        "[4, 4, 3]",
        {},
        "input channels of 'x' [\"n\", 8, \"l\"] and 'weight' [4, 4, 3] x groups 1 differ: 8 vs 4",
    ),
    (
        '["n", 8, "l"]',
        "[4, 2, 3]",
        {"groups": 2},
        "input channels of 'x' [\"n\", 8, \"l\"] and 'weight' [4, 2, 3] x groups 2 differ: 8 vs 4",
    ),
    ("[1, 8, 5]", "[6, 2, 3]", {"groups": 4}, "6 output channels do not divide into 4 groups"),
    ("[1, 8, 5]", "[6, 8, 3, 3]", {}, "operand 'weight' [6, 8, 3, 3] must have rank 3"),
    ("[1, 8, 2]", "[6, 8, 3]", {}, "window of size 3 (dilation 1) is larger than the padded input 2"),
    ("[1, 8, 5]", "[6, 8, 3]", {"padding": [1, 1, 1]}, "'padding' needs 2 values, got [1, 1, 1]"),
]


@pytest.mark.parametrize("x_shape, w_shape, kwargs, message", CONV1D_ERRORS)
def test_conv1d_errors(params, x_shape: str, w_shape: str, kwargs: dict, message: str) -> None:
    x, w = params(t(x_shape), t(w_shape))
    with raises("conv1d", message):
        nn.conv1d(x, w, **kwargs)


# ----------------------------------------------------------------------------------------------
# pooling

POOL = [
    # x, kernel, strides (None: kernel), padding, dilation, ceil_mode, out
    ("[1, 3, 4, 4]", 2, None, 0, 1, False, "[1, 3, 2, 2]"),
    ("[1, 3, 5, 5]", 2, None, 0, 1, False, "[1, 3, 2, 2]"),
    ("[1, 3, 5, 5]", 2, None, 0, 1, True, "[1, 3, 3, 3]"),
    ("[1, 3, 5, 5]", 2, None, 1, 1, False, "[1, 3, 3, 3]"),
    # ceil mode: a last window starting in the right padding is dropped (4 -> 3)
    ("[1, 3, 5, 5]", 2, None, 1, 1, True, "[1, 3, 3, 3]"),
    ("[1, 1, 6, 6]", 3, 2, 1, 1, True, "[1, 1, 4, 4]"),
    ("[1, 1, 5, 4]", 1, 3, 0, 1, True, "[1, 1, 2, 2]"),
    ("[1, 1, 7, 7]", 3, 1, 0, 2, False, "[1, 1, 3, 3]"),
    ("[1, 1, 1, 1]", 1, None, 0, 1, False, "[1, 1, 1, 1]"),
    ("[1, 1, 1, 1]", 3, 1, 1, 1, True, "[1, 1, 1, 1]"),
    ("[2, 8, 7, 9]", [3, 2], [2, 1], [1, 0, 1, 0], 1, False, "[2, 8, 4, 8]"),
    # symbolic
    ('["n", 8, "h", "w"]', 2, None, 0, 1, False, '["n", 8, "h floordiv 2", "w floordiv 2"]'),
    ('["n", 8, "h", "w"]', 2, None, 0, 1, True, '["n", 8, "(h + 1) floordiv 2", "(w + 1) floordiv 2"]'),
    ('["n", 8, "h", "w"]', 3, 2, 1, 1, False, '["n", 8, "(h + 1) floordiv 2", "(w + 1) floordiv 2"]'),
    ('["n", 8, "h", "w"]', 3, 2, 1, 1, True, '["n", 8, "h floordiv 2 + 1", "w floordiv 2 + 1"]'),
    ('["n", 8, "h", "w"]', 2, 2, 1, 1, True, '["n", 8, "h floordiv 2 + 1", "w floordiv 2 + 1"]'),
    ('["n", "c", "h", 5]', 1, 3, 0, 1, True, '["n", "c", "(h + 2) floordiv 3", 2]'),
    ('["n", 8, "2 * h", "w"]', 2, None, 0, 1, False, '["n", 8, "h", "w floordiv 2"]'),
    ('["n", 8, "h", "w"]', 3, 1, 1, 1, False, '["n", 8, "h", "w"]'),
    # unknown dims
    ('["?", 8, "?", 6]', 2, None, 0, 1, False, '["?", 8, "?", 3]'),
    # unknown rank
    ('"*"', 2, None, 0, 1, False, '["?", "?", "?", "?"]'),
]


@pytest.mark.parametrize("name", ["max_pool2d", "avg_pool2d"])
@pytest.mark.parametrize("x_shape, kernel, strides, padding, dilation, ceil_mode, out", POOL)
def test_pool2d(params, name, x_shape, kernel, strides, padding, dilation, ceil_mode, out: str) -> None:
    (x,) = params(t(x_shape))
    assert ty(getattr(nn, name)(x, kernel, strides, padding, dilation, ceil_mode)) == t(out)


def test_pool2d_dtypes(params) -> None:
    x, n = params(t("[1, 3, 4, 4]", "i8"), t('"*"', "none"))
    assert ty(nn.max_pool2d(x, 2)) == t("[1, 3, 2, 2]", "i8")
    assert ty(nn.avg_pool2d(n, 2, count_include_pad=True)) == t('["?", "?", "?", "?"]', "none")
    with raises("avg_pool2d", "operand 'x' must have a float dtype, got i8"):
        nn.avg_pool2d(x, 2)
    with raises("adaptive_avg_pool2d", "operand 'x' must have a float dtype, got i8"):
        nn.adaptive_avg_pool2d(x, 1)
    assert ty(nn.resize(x, [8, 8])) == t("[1, 3, 8, 8]", "i8")
    with raises("resize", "method 'linear' needs a float dtype, got i8"):
        nn.resize(x, [8, 8], "linear")


POOL_ERRORS = [
    ("[1, 3, 5]", {"kernel": 2}, "operand 'x' [1, 3, 5] must have rank 4 (NCHW)"),
    ("[1, 3, 2, 2]", {"kernel": 3}, "window of size 3 (dilation 1) is larger than the padded input 2"),
    (
        '[1, 3, "h", 2]',
        {"kernel": 2, "dilation": 2},
        "window of size 2 (dilation 2) is larger than the padded input 2",
    ),
    ("[1, 3, 5, 5]", {"kernel": [2, 2, 2], "strides": 1}, "'kernel' needs 2 positive values, got [2, 2, 2]"),
    ("[1, 3, 5, 5]", {"kernel": 0, "strides": 1}, "'kernel' needs 2 positive values, got [0, 0]"),
    ("[1, 3, 5, 5]", {"kernel": 2, "strides": 0}, "'strides' must be positive, got [0, 0]"),
    ('"*"', {"kernel": 2, "padding": [1, 1, 1]}, "'padding' needs 4 values, got [1, 1, 1]"),
]


@pytest.mark.parametrize("name", ["max_pool2d", "avg_pool2d"])
@pytest.mark.parametrize("x_shape, kwargs, message", POOL_ERRORS)
def test_pool2d_errors(params, name: str, x_shape: str, kwargs: dict, message: str) -> None:
    (x,) = params(t(x_shape))
    with raises(name, message):
        getattr(nn, name)(x, **kwargs)


ADAPTIVE = [
    ("[1, 512, 7, 7]", 1, "[1, 512, 1, 1]"),
    ("[2, 3, 10, 9]", [3, 5], "[2, 3, 3, 5]"),
    ("[1, 1, 1, 1]", [2, 3], "[1, 1, 2, 3]"),
    ('["n", "c", "h", "w"]', 2, '["n", "c", 2, 2]'),
    ('["?", 8, "?", "?"]', 7, '["?", 8, 7, 7]'),
    ('"*"', 1, '["?", "?", 1, 1]'),
]


@pytest.mark.parametrize("x_shape, size, out", ADAPTIVE)
def test_adaptive_avg_pool2d(params, x_shape: str, size, out: str) -> None:
    (x,) = params(t(x_shape))
    assert ty(nn.adaptive_avg_pool2d(x, size)) == t(out)


def test_adaptive_avg_pool2d_errors(params) -> None:
    x, y = params(t('["n", 8, 7]'), t('["n", 8, 7, 7]'))
    with raises("adaptive_avg_pool2d", "operand 'x' [\"n\", 8, 7] must have rank 4 (NCHW)"):
        nn.adaptive_avg_pool2d(x, 1)
    with raises("adaptive_avg_pool2d", "'output_size' needs 2 positive values, got [0, 0]"):
        nn.adaptive_avg_pool2d(y, 0)
    with raises("adaptive_avg_pool2d", "'output_size' needs 2 positive values, got [1, 2, 3]"):
        nn.adaptive_avg_pool2d(y, [1, 2, 3])


# ----------------------------------------------------------------------------------------------
# resize

RESIZE = [
    # x, sizes, method, out
    ("[1, 3, 4, 4]", [8, 8], "nearest", "[1, 3, 8, 8]"),
    ("[1, 3, 5, 7]", [3, 11], "linear", "[1, 3, 3, 11]"),
    ("[1, 3, 4, 4]", [1, 1], "linear", "[1, 3, 1, 1]"),
    ('["n", 3, "h", "w"]', ["2 * h", "2 * w"], "nearest", '["n", 3, "2 * h", "2 * w"]'),
    ('["n", 3, "h", "w"]', ["h floordiv 2", 5], "linear", '["n", 3, "h floordiv 2", 5]'),
    ('["?", 3, "?", "?"]', [4, 4], "nearest", '["?", 3, 4, 4]'),
    ('[1, 3, "h", 4]', ["?", 4], "nearest", '[1, 3, "?", 4]'),
    ('"*"', [4, 6], "linear", '["?", "?", 4, 6]'),
]


@pytest.mark.parametrize("x_shape, sizes, method, out", RESIZE)
def test_resize(params, x_shape: str, sizes: list, method: str, out: str) -> None:
    (x,) = params(t(x_shape))
    assert ty(nn.resize(x, sizes, method)) == t(out)


RESIZE_SCALES = [
    # x, scales, out: floor(dim * scale)
    ("[1, 3, 4, 4]", [2.0, 2.0], "[1, 3, 8, 8]"),
    ("[1, 3, 5, 7]", [0.5, 1.5], "[1, 3, 2, 10]"),
    ("[1, 3, 1, 1]", [3, 0.5], "[1, 3, 3, 0]"),
    ('["n", 3, "h", "w"]', [2.0, 2], '["n", 3, "2 * h", "2 * w"]'),
    ('["n", 3, "h", "w"]', [0.5, 1.5], '["n", 3, "h floordiv 2", "w + w floordiv 2"]'),
    ('["?", "?", 3, 5]', [2.0, 1.0], '["?", "?", 6, 5]'),
]


@pytest.mark.parametrize("x_shape, scales, out", RESIZE_SCALES)
def test_resize_scales(params, x_shape: str, scales: list, out: str) -> None:
    (x,) = params(t(x_shape))
    y = nn.resize(x, scales=scales, method="linear")
    assert ty(y) == t(out)


RESIZE_ERRORS = [
    (
        "[1, 3, 4, 4]",
        {"sizes": [8, 8], "method": "cubic"},
        "unknown method 'cubic'; expected nearest or linear",
    ),
    (
        "[1, 3, 4, 4]",
        {"sizes": [8, 8], "coordinate_mode": "tf"},
        "unknown coordinate_mode 'tf'; expected one of align_corners, asymmetric, half_pixel, pytorch_half_pixel",
    ),
    ("[1, 3, 4]", {"sizes": [8, 8]}, "operand 'x' [1, 3, 4] must have rank 4 (NCHW)"),
    ("[1, 3, 4, 4]", {"sizes": [8, 8, 8]}, "'sizes' needs 2 values (h, w), got [8, 8, 8]"),
    ("[1, 3, 4, 4]", {"sizes": [-1, 8]}, "'sizes' must be non-negative, got -1"),
    ("[1, 3, 4, 4]", {"sizes": ["n +", 8]}, "'sizes': cannot parse dim expression \"n +\""),
    ('[1, 3, "?", 4]', {"scales": [2.0, 2.0]}, "'scales' need the spatial dims of 'x' [1, 3, \"?\", 4]"),
    ('"*"', {"scales": [2.0, 2.0]}, "'scales' need the spatial dims of 'x' *"),
    ("[1, 3, 4, 4]", {"scales": [2.0, 0.0]}, "'scales' needs 2 positive values (h, w), got [2.0, 0.0]"),
    ("[1, 3, 4, 4]", {"scales": [2.0]}, "'scales' needs 2 positive values (h, w), got [2.0]"),
]


@pytest.mark.parametrize("x_shape, kwargs, message", RESIZE_ERRORS)
def test_resize_errors(params, x_shape: str, kwargs: dict, message: str) -> None:
    (x,) = params(t(x_shape))
    with raises("resize", message):
        nn.resize(x, **kwargs)


def test_resize_needs_sizes_or_scales(params) -> None:
    (x,) = params(t("[1, 3, 4, 4]"))
    with raises("resize", "give exactly one of 'sizes' and 'scales'"):
        nn.resize(x)
    with raises("resize", "give exactly one of 'sizes' and 'scales'"):
        nn.resize(x, [8, 8], scales=[2.0, 2.0])

"""Shape deduction of the structural, shape-value, creation and data-dependent ops.

Every expected spelling is derived by hand. Per op: static shapes, symbolic shapes, unknown dims ("?"),
unknown rank ("*") and ill-typed cases (ShapeError naming the op). Ops from other modules appear only
as consumers (flatten, add) to show that deduction continues through a match_cast or a shape chain.
"""

from __future__ import annotations

import numpy as np
import pytest
from mlir import ir

from relax_mlir.dialects.ops import create as cr
from relax_mlir.dialects.ops import dynamic as dy
from relax_mlir.dialects.ops import elementwise as ew
from relax_mlir.dialects.ops import manipulate as mp
from relax_mlir.dialects.ops import shape_value as sv
from relax_mlir.dialects.ops import structural as st
from relax_mlir.dialects.registry import is_resource_elements
from relax_mlir.dialects.types import parse_type, relax_type
from relax_mlir.errors import ShapeError


def ty(v: ir.Value) -> str:
    return str(relax_type(v.type))


def T(spelling: str):  # noqa: N802  (reads like a type constructor)
    return parse_type(spelling)


# ----------------------------------------------------------------------------------------------
# match_cast

MATCH_CAST_OK = [
    # static
    ("!relax.tensor<[2, 3], f32>", "!relax.tensor<[2, 3], f32>"),
    ('!relax.tensor<"*", f32>', "!relax.tensor<[1, 0], f32>"),
    ('!relax.tensor<"*", none>', "!relax.tensor<[5], i64>"),
    # symbolic: new symbols, and a symbol where a constant was
    ('!relax.tensor<"*", f32>', '!relax.tensor<["k", "j"], f32>'),
    ('!relax.tensor<["n", 4], f32>', '!relax.tensor<["n", "m"], f32>'),
    ('!relax.tensor<["n", 4], f32>', '!relax.tensor<["2 * n - 1", 4], f32>'),  # n == 1 is possible
    ('!relax.shape<["b", "s"]>', '!relax.shape<["b", "t"]>'),
    ('!relax.prim<"s">', '!relax.prim<"k">'),
    ('!relax.prim<"7">', '!relax.prim<"k">'),
    # unknown dims, both ways
    ('!relax.tensor<["?", 4], f32>', '!relax.tensor<["n", 4], f32>'),
    ('!relax.tensor<["n", 4], f32>', '!relax.tensor<["?", 4], f32>'),
    ('!relax.prim<"?">', '!relax.prim<"3">'),
    # unknown rank, both ways; objects
    ('!relax.tensor<["n", 4], f32>', '!relax.tensor<"*", f32>'),
    ('!relax.shape<"*">', '!relax.shape<["a", 1, 0]>'),
    ("!relax.object", '!relax.tensor<["n"], f16>'),
    ('!relax.tensor<["n"], f32>', "!relax.object"),
    # tuples field by field
    (
        '!relax.tuple<[!relax.tensor<"*", f32>, !relax.prim<"?">]>',
        '!relax.tuple<[!relax.tensor<["a"], f32>, !relax.prim<"b">]>',
    ),
    ("!relax.tuple<[]>", "!relax.tuple<[]>"),
]


@pytest.mark.parametrize("src,dst", MATCH_CAST_OK)
def test_match_cast(params, src: str, dst: str) -> None:
    (x,) = params(src)
    assert ty(st.match_cast(x, T(dst))) == dst


MATCH_CAST_ERRORS = [
    ('!relax.tensor<["n", 4], f32>', '!relax.tensor<["a"], f32>', r'cannot cast rank 2 \["n", 4\] to rank 1'),
    ("!relax.tensor<[2, 3], f32>", "!relax.tensor<[2, 3, 1], f32>", "cannot cast rank 2"),
    ("!relax.tensor<[], f32>", "!relax.tensor<[1], f32>", r"cannot cast rank 0 \[\] to rank 1"),
    ('!relax.tensor<["n", 4], f32>', '!relax.tensor<["n", 5], f32>', "dim 1 is 4"),
    ("!relax.tensor<[0], f32>", "!relax.tensor<[1], f32>", "dim 0 is 0"),
    # dims are >= 0, so n == 2 * n + 1 and n + 1 == 0 can never hold
    ('!relax.tensor<["n", 4], f32>', '!relax.tensor<["2 * n + 1", 4], f32>', "dim 0 is n"),
    ('!relax.tensor<["n + 1"], f32>', "!relax.tensor<[0], f32>", r"dim 0 is n \+ 1"),
    ('!relax.tensor<["n"], f32>', '!relax.tensor<["n"], i32>', "cannot cast dtype f32 to i32"),
    ('!relax.tensor<["n"], f32>', '!relax.shape<["n"]>', "different kinds of value"),
    ('!relax.prim<"n">', '!relax.tensor<"*", f32>', "different kinds of value"),
    ('!relax.shape<[2, "s"]>', '!relax.shape<[3, "s"]>', "dim 0 is 2"),
    ('!relax.prim<"3">', '!relax.prim<"4">', "the values differ"),
    (
        '!relax.tuple<[!relax.tensor<["n"], f32>]>',
        '!relax.tuple<[!relax.tensor<["n"], f32>, !relax.prim<"k">]>',
        "a tuple of 1 fields to one of 2",
    ),
    (
        '!relax.tuple<[!relax.prim<"n">, !relax.tensor<[2], f32>]>',
        '!relax.tuple<[!relax.prim<"n">, !relax.tensor<[3], f32>]>',
        "tuple field #1: cannot cast",
    ),
]


@pytest.mark.parametrize("src,dst,message", MATCH_CAST_ERRORS)
def test_match_cast_errors(params, src: str, dst: str, message: str) -> None:
    (x,) = params(src)
    with pytest.raises(ShapeError, match=r"test_deduce_structural.py:\d+: relax.match_cast: .*" + message):
        st.match_cast(x, T(dst))


def test_match_cast_binds_symbols_for_later_ops(params) -> None:
    x, y = params('!relax.tensor<"*", f32>', '!relax.tensor<["?", "?"], f32>')
    kj = st.match_cast(x, T('!relax.tensor<["k", "j"], f32>'))
    assert ty(mp.flatten(kj)) == '!relax.tensor<["j * k"], f32>'
    assert ty(st.shape_of(kj)) == '!relax.shape<["k", "j"]>'
    k1 = st.match_cast(y, T('!relax.tensor<["k", 1], f32>'))
    assert ty(ew.add(k1, kj)) == '!relax.tensor<["k", "j"], f32>'
    n1 = st.match_cast(y, T('!relax.tensor<["n", 1], f32>'))
    # n or k may be 1: numpy's choice at run time
    assert ty(ew.add(n1, kj)) == '!relax.tensor<["max(k, n) * min(min(k, n), 1)", "j"], f32>'


# ----------------------------------------------------------------------------------------------
# call_tir / call_dps_library (stated results, checked)

CALL_OK = [
    # static, edge sizes
    (["!relax.tensor<[2, 3], f32>"], ["!relax.tensor<[3, 2], f32>"]),
    (["!relax.tensor<[1], f32>"], ["!relax.tensor<[0], f32>", "!relax.tensor<[], i64>"]),
    # symbolic; shape and prim arguments
    (['!relax.tensor<["n", 4], f32>', '!relax.prim<"n">'], ['!relax.tensor<["n + 1", 4], f32>']),
    (['!relax.tensor<["b", "s"], f16>', '!relax.shape<["b", "s"]>'], ['!relax.tensor<["b * s"], f16>']),
    # unknown dims and rank are fine for inputs
    (['!relax.tensor<["?", 4], f32>'], ['!relax.tensor<["m", 4], f32>']),
    (['!relax.tensor<"*", none>'], ["!relax.tensor<[8], f32>"]),
]


@pytest.mark.parametrize("call", [st.call_tir, st.call_dps_library])
@pytest.mark.parametrize("args,outs", CALL_OK)
def test_call_outputs(params, call, args: list[str], outs: list[str]) -> None:
    values = params(*args)
    results = call("kernel", values, [T(o) for o in outs])
    assert [ty(r) for r in results] == outs


UNKNOWN_DIM_OUTPUT = "output #1 needs known dims.*dim 1 is unknown"

CALL_ERRORS = [
    (
        [],
        ['!relax.tensor<"*", f32>'],
        r'output #0 needs a known rank and dtype to be allocated, got !relax.tensor<"\*"',
    ),
    ([], ['!relax.tensor<["n"], none>'], "output #0 needs a known rank and dtype"),
    (
        [],
        ["!relax.tensor<[2], f32>", '!relax.tensor<[2, "?"], f32>'],
        UNKNOWN_DIM_OUTPUT,
    ),
    ([], [], "needs at least one output"),
    ([], ['!relax.shape<["n"]>'], "output #0 must be a tensor"),
    (
        ['!relax.tuple<[!relax.tensor<["n"], f32>]>'],
        ['!relax.tensor<["n"], f32>'],
        "argument #0 must be a tensor",
    ),
    (["!relax.object"], ["!relax.tensor<[1], f32>"], "argument #0 must be a tensor, shape or prim value"),
]


@pytest.mark.parametrize("call,name", [(st.call_tir, "call_tir"), (st.call_dps_library, "call_dps_library")])
@pytest.mark.parametrize("args,outs,message", CALL_ERRORS)
def test_call_errors(params, call, name: str, args: list[str], outs: list[str], message: str) -> None:
    if name == "call_tir" and message == UNKNOWN_DIM_OUTPUT:
        pytest.skip("call_tir allows outputs of unknown dims: its kernel allocates them (tested below)")
    values = params('!relax.tensor<["n"], f32>', *args)[1:]
    with pytest.raises(ShapeError, match=rf"test_deduce_structural.py:\d+: relax.{name}: .*{message}"):
        call("kernel", values, [T(o) for o in outs])


def test_call_dps_library_needs_a_callee(params) -> None:
    (x,) = params('!relax.tensor<["n"], f32>')
    with pytest.raises(ShapeError, match="relax.call_dps_library: callee must be a non-empty"):
        st.call_dps_library("", [x], [T('!relax.tensor<["n"], f32>')])


def test_call_results_feed_deduction(params) -> None:
    (x,) = params('!relax.tensor<["n", 4], f32>')
    (y,) = st.call_tir("k", [x], [T('!relax.tensor<["n", 4], f32>')])
    assert ty(mp.flatten(y)) == '!relax.tensor<["4 * n"], f32>'


# ----------------------------------------------------------------------------------------------
# shape_of

SHAPE_OF = [
    ("!relax.tensor<[2, 3], f32>", "!relax.shape<[2, 3]>"),
    ("!relax.tensor<[1, 0], i8>", "!relax.shape<[1, 0]>"),
    ("!relax.tensor<[], f32>", "!relax.shape<[]>"),
    ('!relax.tensor<["b", "s", 512], f32>', '!relax.shape<["b", "s", 512]>'),
    ('!relax.tensor<["n", "n + 1", "2 * n"], none>', '!relax.shape<["n", "n + 1", "2 * n"]>'),
    ('!relax.tensor<["?", 4], f32>', '!relax.shape<["?", 4]>'),
    ('!relax.tensor<"*", f32>', '!relax.shape<"*">'),
]


@pytest.mark.parametrize("x,expected", SHAPE_OF)
def test_shape_of(params, x: str, expected: str) -> None:
    (v,) = params(x)
    assert ty(st.shape_of(v)) == expected


@pytest.mark.parametrize("x", ['!relax.shape<["n"]>', '!relax.prim<"n">', "!relax.object"])
def test_shape_of_errors(params, x: str) -> None:
    (v,) = params(x)
    with pytest.raises(ShapeError, match=r"relax.shape_of: operand 'x' must be a tensor, got !relax\."):
        st.shape_of(v)


# ----------------------------------------------------------------------------------------------
# make_tuple / tuple_get_item

MAKE_TUPLE = [
    ([], "!relax.tuple<[]>"),
    (["!relax.tensor<[2], f32>", "!relax.shape<[1, 0]>"], None),
    (['!relax.tensor<["n", 4], f32>', '!relax.prim<"n + 1">'], None),
    (['!relax.tensor<["?", 4], f32>', '!relax.tensor<"*", none>', "!relax.object"], None),
    (['!relax.tuple<[!relax.tensor<["n"], f32>]>', '!relax.shape<"*">'], None),
]


@pytest.mark.parametrize("fields,expected", MAKE_TUPLE)
def test_make_tuple(params, fields: list[str], expected: str | None) -> None:
    values = params(*fields)
    expected = expected or "!relax.tuple<[" + ", ".join(fields) + "]>"
    assert ty(st.tuple_(values)) == expected


def test_make_tuple_rejects_non_relax_fields() -> None:
    with pytest.raises(ShapeError, match="field #1 is not a relax value"):
        st.TupleOp.deduce([T("!relax.tensor<[2], f32>"), None], {})


TUPLE = '!relax.tuple<[!relax.tensor<[2, 0], f32>, !relax.tensor<["n", "m + 1"], f32>, ' + (
    '!relax.tensor<["?", 4], i32>, !relax.tensor<"*", f16>, !relax.prim<"n">, !relax.tuple<[]>]>'
)
TUPLE_FIELDS = [
    "!relax.tensor<[2, 0], f32>",
    '!relax.tensor<["n", "m + 1"], f32>',
    '!relax.tensor<["?", 4], i32>',
    '!relax.tensor<"*", f16>',
    '!relax.prim<"n">',
    "!relax.tuple<[]>",
]


@pytest.mark.parametrize("index", range(len(TUPLE_FIELDS)))
def test_tuple_get_item(params, index: int) -> None:
    (t,) = params(TUPLE)
    assert ty(st.tuple_get_item(t, index)) == TUPLE_FIELDS[index]


def test_tuple_round_trip(params) -> None:
    x, s = params('!relax.tensor<["n", 1], f32>', '!relax.shape<["n", 1]>')
    t = st.tuple_([x, s, x])
    assert ty(st.tuple_get_item(t, 2)) == '!relax.tensor<["n", 1], f32>'
    assert ty(sv.get_dim(st.tuple_get_item(t, 1), 0)) == '!relax.prim<"n">'


@pytest.mark.parametrize(
    "t,index,message",
    [
        (TUPLE, 6, "index 6 is out of range for a tuple of 6 fields"),
        (TUPLE, -1, "index -1 is out of range for a tuple of 6 fields"),
        ("!relax.tuple<[]>", 0, "index 0 is out of range for a tuple of 0 fields"),
        ('!relax.tensor<["n"], f32>', 0, "operand 'tuple' must be a tuple, got !relax.tensor"),
    ],
)
def test_tuple_get_item_errors(params, t: str, index: int, message: str) -> None:
    (v,) = params(t)
    with pytest.raises(ShapeError, match=r"relax.tuple_get_item: " + message):
        st.tuple_get_item(v, index)


# ----------------------------------------------------------------------------------------------
# constant (always static: no symbolic, unknown-dim or unknown-rank case exists)

CONSTANTS = [
    (np.arange(6, dtype=np.float32).reshape(2, 3), "!relax.tensor<[2, 3], f32>"),
    (np.float32(2.5), "!relax.tensor<[], f32>"),
    (np.zeros((0, 2), dtype=np.float32), "!relax.tensor<[0, 2], f32>"),
    (np.ones((1,), dtype=np.float64), "!relax.tensor<[1], f64>"),
    (np.array([1, 2, 3], dtype=np.int64), "!relax.tensor<[3], i64>"),
    (np.array([[1], [2]], dtype=np.int32), "!relax.tensor<[2, 1], i32>"),
    (np.array([1, -1], dtype=np.int8), "!relax.tensor<[2], i8>"),
    (np.array([0, 255], dtype=np.uint8), "!relax.tensor<[2], ui8>"),
    (np.ones((1, 1, 5), dtype=np.float16), "!relax.tensor<[1, 1, 5], f16>"),
    (np.array([True, False, True]), "!relax.tensor<[3], i1>"),
    (np.array([1.5, -2.0], dtype=">f4"), "!relax.tensor<[2], f32>"),
]


@pytest.mark.parametrize("value,expected", CONSTANTS)
def test_constant(params, value: np.ndarray, expected: str) -> None:
    params()
    c = st.constant(np.asarray(value))
    assert ty(c) == expected
    assert not is_resource_elements(c.owner.attributes["value"])


def test_constant_values_are_kept(params) -> None:
    params()
    c = st.constant(np.array([1.5, -2.0], dtype=">f4"))
    assert str(c.owner.attributes["value"]) == "dense<[1.500000e+00, -2.000000e+00]> : tensor<2xf32>"
    b = st.constant(np.array([True, False]))
    assert str(b.owner.attributes["value"]) == "dense<[true, false]> : tensor<2xi1>"


@pytest.mark.parametrize(
    "shape,dtype,expected",
    [
        ((129, 128), np.float32, "!relax.tensor<[129, 128], f32>"),  # 66048 bytes > 64 KiB
        ((1, 8193), np.int64, "!relax.tensor<[1, 8193], i64>"),
    ],
)
def test_large_constant_is_a_resource(params, shape, dtype, expected: str) -> None:
    params()
    c = st.constant(np.ones(shape, dtype=dtype))
    assert ty(c) == expected
    assert is_resource_elements(c.owner.attributes["value"])


@pytest.mark.parametrize("value", [np.array(["a"]), np.array([1 + 2j]), np.array([object()])])
def test_constant_errors(params, value: np.ndarray) -> None:
    params()
    with pytest.raises(ShapeError, match="constant of numpy dtype .* is not supported"):
        st.constant(value)


# ----------------------------------------------------------------------------------------------
# get_dim

GET_DIM = [
    ("!relax.shape<[2, 3]>", 0, '!relax.prim<"2">'),
    ("!relax.shape<[2, 3]>", -1, '!relax.prim<"3">'),
    ("!relax.shape<[0, 1]>", 0, '!relax.prim<"0">'),
    ("!relax.shape<[0, 1]>", 1, '!relax.prim<"1">'),
    ('!relax.shape<["b", "s", 512]>', 1, '!relax.prim<"s">'),
    ('!relax.shape<["n + 1", "2 * n"]>', -1, '!relax.prim<"2 * n">'),
    ('!relax.shape<["?", 4]>', 0, '!relax.prim<"?">'),
    ('!relax.shape<["?", 4]>', 1, '!relax.prim<"4">'),
    ('!relax.shape<"*">', 5, '!relax.prim<"?">'),
]


@pytest.mark.parametrize("s,index,expected", GET_DIM)
def test_get_dim(params, s: str, index: int, expected: str) -> None:
    (v,) = params(s)
    assert str(relax_type(sv.get_dim(v, index).type)) == str(T(expected))


@pytest.mark.parametrize(
    "s,index,message",
    [
        ('!relax.shape<["b", "s", 512]>', 3, "index 3 is out of range for rank 3"),
        ('!relax.shape<["b", "s", 512]>', -4, "index -4 is out of range for rank 3"),
        ("!relax.shape<[]>", 0, "index 0 is out of range for rank 0"),
        ('!relax.tensor<["n"], i64>', 0, "operand 'shape' must be a shape value"),
    ],
)
def test_get_dim_errors(params, s: str, index: int, message: str) -> None:
    (v,) = params(s)
    with pytest.raises(ShapeError, match="relax.get_dim: " + message):
        sv.get_dim(v, index)


# ----------------------------------------------------------------------------------------------
# prim_value / prim_binary / make_shape


@pytest.mark.parametrize(
    "value,expected",
    [(0, '!relax.prim<"0">'), (1, '!relax.prim<"1">'), (7, '!relax.prim<"7">'), (-3, '!relax.prim<"-3">')]
    + [("n + 1", '!relax.prim<"n + 1">'), ("n*2", '!relax.prim<"2 * n">'), ("(n+3) floordiv 4", None)],
)
def test_prim_value(params, value, expected: str | None) -> None:
    params()
    assert ty(sv.prim_value(value)) == (expected or '!relax.prim<"(n + 3) floordiv 4">')


@pytest.mark.parametrize(
    "value,message",
    [("?", "got '?'"), ("n +", "cannot parse dim expression"), ("n ** 2", "cannot parse")],
)
def test_prim_value_errors(params, value: str, message: str) -> None:
    params()
    with pytest.raises(ShapeError, match="relax.prim_value: .*" + message):
        sv.prim_value(value)


PRIM_BINARY = [
    # static
    ("add", '!relax.prim<"3">', '!relax.prim<"4">', "7"),
    ("sub", '!relax.prim<"2">', '!relax.prim<"5">', "-3"),
    ("mul", '!relax.prim<"0">', '!relax.prim<"5">', "0"),
    ("floordiv", '!relax.prim<"7">', '!relax.prim<"2">', "3"),
    ("mod", '!relax.prim<"7">', '!relax.prim<"3">', "1"),
    ("min", '!relax.prim<"1">', '!relax.prim<"5">', "1"),
    ("max", '!relax.prim<"1">', '!relax.prim<"5">', "5"),
    # symbolic
    ("add", '!relax.prim<"s">', '!relax.prim<"1">', "s + 1"),
    ("mul", '!relax.prim<"s">', '!relax.prim<"2">', "2 * s"),
    ("mul", '!relax.prim<"b">', '!relax.prim<"s">', "b * s"),
    ("sub", '!relax.prim<"s + 1">', '!relax.prim<"1">', "s"),
    ("sub", '!relax.prim<"s">', '!relax.prim<"s">', "0"),
    ("floordiv", '!relax.prim<"s">', '!relax.prim<"2">', "s floordiv 2"),
    ("floordiv", '!relax.prim<"4 * s">', '!relax.prim<"2">', "2 * s"),
    ("floordiv", '!relax.prim<"s">', '!relax.prim<"1">', "s"),
    ("mod", '!relax.prim<"s">', '!relax.prim<"4">', "s mod 4"),
    ("mod", '!relax.prim<"8 * s">', '!relax.prim<"4">', "0"),
    ("min", '!relax.prim<"s">', '!relax.prim<"4">', "min(s, 4)"),
    ("max", '!relax.prim<"s">', '!relax.prim<"s">', "s"),
    # unknown values
    ("add", '!relax.prim<"?">', '!relax.prim<"1">', "?"),
    ("mul", '!relax.prim<"s">', '!relax.prim<"?">', "?"),
    ("floordiv", '!relax.prim<"s">', '!relax.prim<"?">', "?"),
]


@pytest.mark.parametrize("op,lhs,rhs,expected", PRIM_BINARY)
def test_prim_binary(params, op: str, lhs: str, rhs: str, expected: str) -> None:
    a, b = params(lhs, rhs)
    assert ty(sv.prim_binary(op, a, b)) == f'!relax.prim<"{expected}">'


@pytest.mark.parametrize(
    "op,lhs,rhs,message",
    [
        ("pow", '!relax.prim<"2">', '!relax.prim<"3">', "unknown op 'pow'; expected one of add, sub, mul"),
        ("floordiv", '!relax.prim<"s">', '!relax.prim<"0">', "floordiv by zero"),
        ("mod", '!relax.prim<"s">', '!relax.prim<"0">', "mod by zero"),
        ("add", '!relax.prim<"s">', '!relax.shape<["s"]>', "operands must be symbolic integers"),
        ("add", '!relax.tensor<["s"], i64>', '!relax.prim<"1">', "operands must be symbolic integers"),
    ],
)
def test_prim_binary_errors(params, op: str, lhs: str, rhs: str, message: str) -> None:
    a, b = params(lhs, rhs)
    with pytest.raises(ShapeError, match="relax.prim_binary: " + message):
        sv.prim_binary(op, a, b)


MAKE_SHAPE = [
    ([], "!relax.shape<[]>"),
    (['!relax.prim<"2">', '!relax.prim<"0">', '!relax.prim<"1">'], "!relax.shape<[2, 0, 1]>"),
    (['!relax.prim<"b">', '!relax.prim<"s + 1">'], '!relax.shape<["b", "s + 1"]>'),
    (['!relax.prim<"b">', '!relax.prim<"?">'], '!relax.shape<["b", "?"]>'),
]


@pytest.mark.parametrize("dims,expected", MAKE_SHAPE)
def test_make_shape(params, dims: list[str], expected: str) -> None:
    values = params(*dims)
    assert ty(sv.make_shape(values)) == expected


def test_make_shape_errors(params) -> None:
    a, s = params('!relax.prim<"b">', '!relax.shape<["s"]>')
    with pytest.raises(
        ShapeError, match=r"relax.make_shape: operand #1 must be a symbolic integer, got !relax.shape"
    ):
        sv.make_shape([a, s])


def test_shape_value_chain_stays_symbolic(params) -> None:
    """What a frontend emits for ``x.reshape(b, s, 8, -1)`` written with shape arithmetic."""
    (x,) = params('!relax.tensor<["b", "s", 512], f32>')
    shape = st.shape_of(x)
    b, s = sv.get_dim(shape, 0), sv.get_dim(shape, 1)
    assert ty(s) == '!relax.prim<"s">'
    heads, width = sv.prim_value(8), sv.prim_value(64)
    assert ty(sv.make_shape([b, s, heads, width])) == '!relax.shape<["b", "s", 8, 64]>'
    s1 = sv.prim_binary("add", s, sv.prim_value(1))
    s2 = sv.prim_binary("mul", s, sv.prim_value(2))
    half = sv.prim_binary("floordiv", s2, sv.prim_value(2))
    assert [ty(v) for v in (s1, s2, half)] == [
        '!relax.prim<"s + 1">',
        '!relax.prim<"2 * s">',
        '!relax.prim<"s">',
    ]
    bs = sv.prim_binary("mul", b, s)
    assert ty(sv.make_shape([bs, sv.get_dim(shape, -1)])) == '!relax.shape<["b * s", 512]>'


# ----------------------------------------------------------------------------------------------
# shape_to_tensor / tensor_to_shape

SHAPE_TO_TENSOR = [
    ("!relax.shape<[2, 3]>", "!relax.tensor<[2], i64>"),
    ("!relax.shape<[]>", "!relax.tensor<[0], i64>"),
    ("!relax.shape<[0]>", "!relax.tensor<[1], i64>"),
    ('!relax.shape<["b", "s", 512]>', "!relax.tensor<[3], i64>"),
    ('!relax.shape<["?", 4]>', "!relax.tensor<[2], i64>"),
    ('!relax.shape<"*">', '!relax.tensor<["?"], i64>'),
]


@pytest.mark.parametrize("s,expected", SHAPE_TO_TENSOR)
def test_shape_to_tensor(params, s: str, expected: str) -> None:
    (v,) = params(s)
    assert ty(sv.shape_to_tensor(v)) == expected


def test_shape_to_tensor_errors(params) -> None:
    (x,) = params('!relax.tensor<["n"], i64>')
    with pytest.raises(ShapeError, match="relax.shape_to_tensor: operand 'shape' must be a shape value"):
        sv.shape_to_tensor(x)


TENSOR_TO_SHAPE = [
    ("!relax.tensor<[2], i64>", '!relax.shape<["?", "?"]>'),
    ("!relax.tensor<[1], i32>", '!relax.shape<["?"]>'),
    ("!relax.tensor<[0], i64>", "!relax.shape<[]>"),
    ("!relax.tensor<[3], none>", '!relax.shape<["?", "?", "?"]>'),
    ('!relax.tensor<["n"], i64>', '!relax.shape<"*">'),
    ('!relax.tensor<["?"], i64>', '!relax.shape<"*">'),
    ('!relax.tensor<"*", i64>', '!relax.shape<"*">'),
]


@pytest.mark.parametrize("x,expected", TENSOR_TO_SHAPE)
def test_tensor_to_shape(params, x: str, expected: str) -> None:
    (v,) = params(x)
    assert ty(sv.tensor_to_shape(v)) == expected


@pytest.mark.parametrize(
    "x,message",
    [
        ("!relax.tensor<[2], f32>", "operand 'x' must have an integer dtype, got f32"),
        ("!relax.tensor<[2], i8>", "operand 'x' must have an integer dtype, got i8"),
        ("!relax.tensor<[2, 2], i64>", r"operand 'x' \[2, 2\] must be 1-D"),
        ("!relax.tensor<[], i64>", r"operand 'x' \[\] must be 1-D"),
        ('!relax.shape<["n"]>', "operand 'x' must be a tensor"),
    ],
)
def test_tensor_to_shape_errors(params, x: str, message: str) -> None:
    (v,) = params(x)
    with pytest.raises(ShapeError, match="relax.tensor_to_shape: " + message):
        sv.tensor_to_shape(v)


def test_tensor_shape_round_trip_then_match_cast(params) -> None:
    (x,) = params('!relax.tensor<["b", "s", 512], f32>')
    t = sv.shape_to_tensor(st.shape_of(x))
    assert ty(t) == "!relax.tensor<[3], i64>"
    s = sv.tensor_to_shape(t)
    assert ty(s) == '!relax.shape<["?", "?", "?"]>'
    s = st.match_cast(s, T('!relax.shape<["p", "q", 512]>'))
    assert ty(sv.get_dim(s, 1)) == '!relax.prim<"q">'
    with pytest.raises(ShapeError, match=r"relax.match_cast: cannot cast rank 3"):
        st.match_cast(sv.tensor_to_shape(t), T('!relax.shape<["p"]>'))


# ----------------------------------------------------------------------------------------------
# arange

ARANGE = [
    # static (length ceil((end - start) / step), at least 0)
    ((0, 10, 3), "i64", "[4]"),
    ((10, 0, -3), "i64", "[4]"),
    ((0, 7, 2), "i32", "[4]"),
    ((0, 0, 1), "i64", "[0]"),
    ((5, 0, 1), "i64", "[0]"),
    ((0, 1, 1), "i64", "[1]"),
    ((-3, 3, 1), "i64", "[6]"),
    ((0.0, 1.0, 0.25), "f32", "[4]"),
    ((0.0, 1.0, 0.3), "f32", "[4]"),
    ((1.0, 0.0, -0.5), "f64", "[2]"),
    ((0.5, 3, 1), "f32", "[3]"),
    # symbolic
    ((0, "n", 1), "i64", '["n"]'),
    ((0, "n", 2), "i64", '["(n + 1) floordiv 2"]'),
    ((0, "2 * n", 2), "i64", '["n"]'),
    ((0, "n", 4), "i64", '["(n + 3) floordiv 4"]'),
    ((1, "n + 1", 1), "i64", '["n"]'),
    (("m", "m + n", 1), "i64", '["n"]'),
    (("n", 0, -1), "i64", '["n"]'),
    (("n", 0, -2), "i64", '["(n + 1) floordiv 2"]'),
    ((0, "n", -1), "i64", "[0]"),
    ((5, "n", 1), "i64", '["max(n - 5, 0)"]'),
]


@pytest.mark.parametrize("bounds,dtype,expected", ARANGE)
def test_arange(params, bounds: tuple, dtype: str, expected: str) -> None:
    params()
    assert ty(cr.arange(*bounds, dtype=dtype)) == f"!relax.tensor<{expected}, {dtype}>"


def test_arange_single_bound_is_end(params) -> None:
    params()
    assert ty(cr.arange("n")) == '!relax.tensor<["n"], i64>'
    assert ty(cr.arange(1)) == "!relax.tensor<[1], i64>"
    assert ty(cr.arange(0)) == "!relax.tensor<[0], i64>"


@pytest.mark.parametrize(
    "bounds,dtype,message",
    [
        ((0, 10, 0), "i64", "step must not be 0"),
        ((0, "n", 0), "i64", "step must not be 0"),
        ((0.0, 1.0, 0.0), "f32", "step must not be 0"),
        ((0, "n", "k"), "i64", "step must be a constant, got 'k'"),
        ((0.0, "n", 1), "f32", "a float range needs constant start, end and step"),
        ((0, "?", 1), "i64", "end must be an integer or an expression of defined symbols, got '\\?'"),
        (("?", 4, 1), "i64", "start must be an integer or an expression"),
        ((0, "n +", 1), "i64", "end: cannot parse dim expression"),
        ((0, 4, 1), "f12", "unknown dtype 'f12'"),
    ],
)
def test_arange_errors(params, bounds: tuple, dtype: str, message: str) -> None:
    params()
    with pytest.raises(ShapeError, match="relax.arange: " + message):
        cr.arange(*bounds, dtype=dtype)


# ----------------------------------------------------------------------------------------------
# full / zeros / ones (the shape is an attribute: no unknown-rank case exists)

FULL = [
    ([2, 3], "f32", "[2, 3]"),
    ([], "f32", "[]"),
    ([0, 1], "i32", "[0, 1]"),
    ([1], "bf16", "[1]"),
    (["b", "s"], "f32", '["b", "s"]'),
    (["n + 1", 4], "f16", '["n + 1", 4]'),
    (["b", "s*2"], "i64", '["b", "2 * s"]'),
]


@pytest.mark.parametrize("maker", [lambda s, d: cr.full(s, 3.5, d), cr.zeros, cr.ones])
@pytest.mark.parametrize("shape,dtype,expected", FULL)
def test_full(params, maker, shape: list, dtype: str, expected: str) -> None:
    params()
    assert ty(maker(shape, dtype)) == f"!relax.tensor<{expected}, {dtype}>"


def test_full_value_attribute(params) -> None:
    params()
    op = cr.ones(["n"], "i32").owner.opview
    assert isinstance(op, cr.FullOp) and op.value == 1.0 and op.shape == ["n"] and op.dtype == "i32"


@pytest.mark.parametrize(
    "shape,dtype,message",
    [
        ([2, -1], "f32", "shape entry -1 at position 1 is negative"),
        (
            ["b", "?"],
            "f32",
            "shape entry 1 must be an integer or an expression of defined symbols, got '\\?'",
        ),
        (["n +"], "f32", "shape entry 0: cannot parse dim expression"),
        ([2], "float", "unknown dtype 'float'"),
    ],
)
def test_full_errors(params, shape: list, dtype: str, message: str) -> None:
    params()
    with pytest.raises(ShapeError, match="relax.full: " + message):
        cr.zeros(shape, dtype)


# ----------------------------------------------------------------------------------------------
# unique / nonzero (data-dependent: coarse results)

UNIQUE = [
    ("!relax.tensor<[2, 3], i64>", '!relax.tensor<["?"], i64>'),
    ("!relax.tensor<[0], f32>", '!relax.tensor<["?"], f32>'),
    ("!relax.tensor<[], i32>", '!relax.tensor<["?"], i32>'),
    ('!relax.tensor<["n", 4], f16>', '!relax.tensor<["?"], f16>'),
    ('!relax.tensor<["?", "?"], f32>', '!relax.tensor<["?"], f32>'),
    ('!relax.tensor<"*", i64>', '!relax.tensor<["?"], i64>'),
    ('!relax.tensor<"*", none>', '!relax.tensor<["?"], none>'),
]


@pytest.mark.parametrize("x,expected", UNIQUE)
def test_unique(params, x: str, expected: str) -> None:
    (v,) = params(x)
    assert ty(dy.unique(v)) == expected


NONZERO = [
    ("!relax.tensor<[2, 3], f32>", '!relax.tensor<[2, "?"], i64>'),
    ("!relax.tensor<[0], i32>", '!relax.tensor<[1, "?"], i64>'),
    ("!relax.tensor<[1, 1, 1], i1>", '!relax.tensor<[3, "?"], i64>'),
    ("!relax.tensor<[], f32>", '!relax.tensor<[0, "?"], i64>'),
    ('!relax.tensor<["b", "s", 4], f16>', '!relax.tensor<[3, "?"], i64>'),
    ('!relax.tensor<["?", "?"], none>', '!relax.tensor<[2, "?"], i64>'),
    ('!relax.tensor<"*", f32>', '!relax.tensor<["?", "?"], i64>'),
]


@pytest.mark.parametrize("x,expected", NONZERO)
def test_nonzero(params, x: str, expected: str) -> None:
    (v,) = params(x)
    assert ty(dy.nonzero(v)) == expected


@pytest.mark.parametrize("make,name", [(dy.unique, "unique"), (dy.nonzero, "nonzero")])
@pytest.mark.parametrize("x", ['!relax.shape<["n"]>', '!relax.prim<"n">', "!relax.tuple<[]>"])
def test_dynamic_errors(params, make, name: str, x: str) -> None:
    (v,) = params(x)
    with pytest.raises(ShapeError, match=rf"relax.{name}: operand 'x' must be a tensor, got !relax\."):
        make(v)


def test_dynamic_result_regains_precision_with_match_cast(params) -> None:
    (x,) = params('!relax.tensor<["n", 4], f32>')
    idx = st.match_cast(dy.nonzero(x), T('!relax.tensor<[2, "k"], i64>'))
    assert ty(mp.flatten(idx)) == '!relax.tensor<["2 * k"], i64>'
    with pytest.raises(ShapeError, match="relax.match_cast: .*dim 0 is 2"):
        st.match_cast(dy.nonzero(x), T('!relax.tensor<[3, "k"], i64>'))
    with pytest.raises(ShapeError, match="relax.match_cast: cannot cast dtype i64 to i32"):
        st.match_cast(dy.nonzero(x), T('!relax.tensor<[2, "k"], i32>'))


def test_call_tir_output_of_unknown_dims_is_allocated_by_the_kernel(params) -> None:
    values = params('!relax.tensor<["n"], f32>')
    (out,) = st.call_tir("unique_kernel", values, [T('!relax.tensor<["?"], f32>')])
    assert str(out.type) == '!relax.tensor<["?"], f32>'

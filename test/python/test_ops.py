"""Op classes: IRDL generation, OpView registration, accessors, builders with eager deduction."""

from __future__ import annotations

import numpy as np
import pytest
from mlir import ir
from mlir.dialects import func

from relax_mlir.context import make_context
from relax_mlir.dialects import relax
from relax_mlir.dialects.ops import elementwise as ew
from relax_mlir.dialects.ops import linear_algebra as la
from relax_mlir.dialects.ops import manipulate as mp
from relax_mlir.dialects.ops import reduce as rd
from relax_mlir.dialects.ops import structural as st
from relax_mlir.dialects.ops import unary
from relax_mlir.dialects.registry import OPS, irdl_source, is_resource_elements
from relax_mlir.dialects.types import parse_type, relax_type
from relax_mlir.errors import ShapeError


def ty(v: ir.Value) -> str:
    return str(relax_type(v.type))


def test_irdl_has_every_op() -> None:
    source = irdl_source()
    for name in OPS:
        assert f"irdl.operation @{name} " in source
    for op in [
        "add",
        "subtract",
        "multiply",
        "divide",
        "matmul",
        "exp",
        "relu",
        "reshape",
        "permute_dims",
        "sum",
        "match_cast",
        "call_tir",
        "call_dps_library",
        "shape_of",
        "make_tuple",
        "tuple_get_item",
        "constant",
    ]:
        assert op in OPS


def test_opview_and_accessors(ctx: ir.Context) -> None:
    m = ir.Module.parse(
        """
func.func @f(%x: !relax.tensor<["n", 4], f32>) {
  %0 = "relax.add"(%x, %x) : (!relax.tensor<["n", 4], f32>, !relax.tensor<["n", 4], f32>) -> !relax.tensor<["n", 4], f32>
  %1 = "relax.sum"(%0) {axes = [1], keepdims = true} : (!relax.tensor<["n", 4], f32>) -> !relax.tensor<["n", 1], f32>
  %2 = "relax.permute_dims"(%1) {axes = unit} : (!relax.tensor<["n", 1], f32>) -> !relax.tensor<[1, "n"], f32>
  return
}"""
    )
    ops = list(m.body.operations[0].regions[0].blocks[0].operations)
    add, total, perm = ops[0], ops[1], ops[2]
    assert isinstance(add, ew.AddOp) and isinstance(total, rd.SumOp) and isinstance(perm, mp.PermuteDimsOp)
    assert add.lhs == add.rhs and add.out == add.result
    assert total.axes == [1] and total.keepdims is True
    assert perm.axes is None
    assert isinstance(relax.OPS["add"], type)


def test_elementwise_broadcast(params) -> None:
    x, y, z, u = params(
        '!relax.tensor<["n", 1, 4], f32>',
        '!relax.tensor<["m", 1], f32>',
        "!relax.tensor<[1], f32>",
        '!relax.tensor<"*", f32>',
    )
    assert ty(ew.add(x, y)) == '!relax.tensor<["n", "m", 4], f32>'
    assert ty(ew.multiply(x, z)) == '!relax.tensor<["n", 1, 4], f32>'
    assert ty(ew.subtract(x, u)) == '!relax.tensor<"*", f32>'
    assert ty(ew.divide(z, z)) == "!relax.tensor<[1], f32>"


def test_elementwise_symbolic_pairs(params) -> None:
    a, b, c = params(
        '!relax.tensor<["n", 8], f32>', '!relax.tensor<["m", "?"], f32>', '!relax.tensor<[3, "k"], f32>'
    )
    assert ty(ew.add(a, b)) == '!relax.tensor<["max(m, n) * min(min(m, n), 1)", 8], f32>'
    assert ty(ew.add(a, c)) == "!relax.tensor<[3, 8], f32>"


def test_elementwise_errors(params) -> None:
    a, b, c, s = params(
        '!relax.tensor<["n", 4], f32>',
        "!relax.tensor<[3], f32>",
        "!relax.tensor<[4], i32>",
        '!relax.shape<["n"]>',
    )
    with pytest.raises(ShapeError, match=r"relax.add: cannot broadcast 'lhs' \[\"n\", 4\], 'rhs' \[3\]"):
        ew.add(a, b)
    with pytest.raises(ShapeError, match="different dtypes"):
        ew.add(a, c)
    with pytest.raises(ShapeError, match="operand 'x' must be a tensor"):
        unary.relu(s)
    with pytest.raises(ShapeError, match="must have a float dtype"):
        unary.exp(c)


@pytest.mark.parametrize(
    "lhs, rhs, out",
    [
        ('["n", 64]', "[64, 16]", '["n", 16]'),
        ('["b", "s", 512]', "[512, 64]", '["b", "s", 64]'),
        ('["b", 8, "s", 64]', '["b", 8, 64, "t"]', '["b", 8, "s", "t"]'),
        ("[64]", "[64, 16]", "[16]"),
        ('["n", 64]', "[64]", '["n"]'),
        ("[64]", "[64]", "[]"),
        ('[1, "s", 4]', '["b", 4, 5]', '["b", "s", 5]'),
        ('["n", "k"]', '["k", 3]', '["n", 3]'),
        ('"*"', "[4, 5]", '"*"'),
    ],
)
def test_matmul(params, lhs: str, rhs: str, out: str) -> None:
    a, b = params(f"!relax.tensor<{lhs}, f32>", f"!relax.tensor<{rhs}, f32>")
    assert ty(la.matmul(a, b)) == f"!relax.tensor<{out}, f32>"


def test_matmul_errors(params) -> None:
    a, b, s = params("!relax.tensor<[3, 4], f32>", "!relax.tensor<[5, 6], f32>", "!relax.tensor<[], f32>")
    with pytest.raises(ShapeError, match="contraction dims differ"):
        la.matmul(a, b)
    with pytest.raises(ShapeError, match="rank >= 1"):
        la.matmul(s, a)


@pytest.mark.parametrize(
    "src, shape, out",
    [
        ('["b", "s", 512]', ["b", "s", 8, 64], '["b", "s", 8, 64]'),
        ('["b", "s", 512]', [0, 0, 8, -1], '["b", "s", 8, 64]'),
        ('["b", "s", 512]', [-1, 512], '["b * s", 512]'),
        ('["b", "s", 512]', [-1], '["512 * b * s"]'),
        ("[6, 4]", [3, -1], "[3, 8]"),
        ("[0, 4]", [-1, 2], "[0, 2]"),
        ('["n", 4]', ["2 * n", 2], '["2 * n", 2]'),
        ('["n", "?"]', [-1, 4], '["?", 4]'),
    ],
)
def test_reshape(params, src: str, shape: list, out: str) -> None:
    (x,) = params(f"!relax.tensor<{src}, f32>")
    assert ty(mp.reshape(x, shape)) == f"!relax.tensor<{out}, f32>"


def test_reshape_errors(params) -> None:
    (x,) = params("!relax.tensor<[6, 4], f32>")
    with pytest.raises(
        ShapeError, match=r"cannot reshape \[6, 4\] \(24 elements\) to \[5, 5\] \(25 elements\)"
    ):
        mp.reshape(x, [5, 5])
    with pytest.raises(ShapeError, match="more than one -1"):
        mp.reshape(x, [-1, -1])
    with pytest.raises(ShapeError, match="cannot reshape"):
        mp.reshape(x, [5, -1])
    with pytest.raises(ShapeError, match="negative"):
        mp.reshape(x, [-2, 12])
    with pytest.raises(ShapeError, match="cannot parse dim expression"):
        mp.reshape(x, ["n +", 4])


def test_permute_dims(params) -> None:
    x, u = params('!relax.tensor<["b", "s", 64], f32>', '!relax.tensor<"*", f32>')
    assert ty(mp.permute_dims(x, [0, 2, 1])) == '!relax.tensor<["b", 64, "s"], f32>'
    assert ty(mp.permute_dims(x, [-1, 0, 1])) == '!relax.tensor<[64, "b", "s"], f32>'
    assert ty(mp.permute_dims(x)) == '!relax.tensor<[64, "s", "b"], f32>'
    assert ty(mp.permute_dims(u, [1, 0])) == '!relax.tensor<["?", "?"], f32>'
    with pytest.raises(ShapeError, match="do not match the rank"):
        mp.permute_dims(x, [0, 1])
    with pytest.raises(ShapeError, match="repeat an axis"):
        mp.permute_dims(x, [0, 0, 1])
    with pytest.raises(ShapeError, match="out of range"):
        mp.permute_dims(x, [0, 1, 3])


def test_sum(params) -> None:
    x, u = params('!relax.tensor<["n", "m", 4], f32>', '!relax.tensor<"*", f32>')
    assert ty(rd.sum(x, [1])) == '!relax.tensor<["n", 4], f32>'
    assert ty(rd.sum(x, [-1, 0], keepdims=True)) == '!relax.tensor<[1, "m", 1], f32>'
    assert ty(rd.sum(x)) == "!relax.tensor<[], f32>"
    assert ty(rd.sum(u)) == "!relax.tensor<[], f32>"
    assert ty(rd.sum(u, [0])) == '!relax.tensor<"*", f32>'
    with pytest.raises(ShapeError, match="out of range for rank 3"):
        rd.sum(x, [3])


def test_structural(params) -> None:
    x, u = params('!relax.tensor<["n", 4], f32>', '!relax.tensor<"*", f32>')
    s = st.shape_of(x)
    assert ty(s) == '!relax.shape<["n", 4]>'
    t = st.tuple_([x, s])
    assert ty(t) == '!relax.tuple<[!relax.tensor<["n", 4], f32>, !relax.shape<["n", 4]>]>'
    assert ty(st.tuple_get_item(t, 1)) == '!relax.shape<["n", 4]>'
    with pytest.raises(ShapeError, match="out of range"):
        st.tuple_get_item(t, 2)
    y = st.match_cast(u, parse_type('!relax.tensor<["a", "b"], f32>'))
    assert ty(y) == '!relax.tensor<["a", "b"], f32>'
    with pytest.raises(ShapeError, match="cannot cast rank 2"):
        st.match_cast(x, parse_type('!relax.tensor<["a"], f32>'))
    (out,) = st.call_tir("k", [x], [parse_type('!relax.tensor<["n", 4], f32>')])
    assert isinstance(out.owner.opview, st.CallTirOp) and out.owner.opview.callee == "k"
    with pytest.raises(ShapeError, match="known rank and dtype"):
        st.call_dps_library("sgemm", [x], [parse_type('!relax.tensor<"*", f32>')])


def test_constants(params) -> None:
    params()
    small = st.constant(np.arange(6, dtype=np.float32).reshape(2, 3))
    assert ty(small) == "!relax.tensor<[2, 3], f32>"
    big_array = np.random.default_rng(0).standard_normal((256, 512)).astype(np.float32)
    big = st.constant(big_array, name="w")
    assert ty(big) == "!relax.tensor<[256, 512], f32>"
    attr = big.owner.attributes["value"]
    assert is_resource_elements(attr)
    ints = st.constant(np.array([1, 2], dtype=np.int64))
    assert ty(ints) == "!relax.tensor<[2], i64>"
    with pytest.raises(ShapeError, match="not supported"):
        st.constant(np.array(["a"]))


def test_large_constant_round_trip(ctx: ir.Context, module: ir.Module) -> None:
    array = np.random.default_rng(1).standard_normal((512, 512)).astype(np.float32)
    with ir.InsertionPoint(module.body):
        f = func.FuncOp("w", ([], []))
    with ir.InsertionPoint(f.add_entry_block()):
        st.constant(array, name="weight")
        func.ReturnOp([])
    text = str(module)
    assert "dense_resource<weight>" in text
    again = ir.Module.parse(text, make_context())  # a fresh context: blob names are unique per context
    assert str(again) == text

"""Control flow: the join rule, relax.condition, scf.if / scf.while deduction, builder helpers, lowering."""

from __future__ import annotations

import pytest

from relax_mlir.dialects.join import forget, join, join_all
from relax_mlir.dialects.types import ObjectType, PrimType, ShapeType, TensorType, TupleType, parse_type


def t(text: str):
    return parse_type(text)


# -- the join rule -------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "a, b, expected",
    [
        ('!relax.tensor<["n", 4], f32>', '!relax.tensor<["n", 4], f32>', '!relax.tensor<["n", 4], f32>'),
        ('!relax.tensor<["n", 4], f32>', '!relax.tensor<["2 * n", 4], f32>', '!relax.tensor<["?", 4], f32>'),
        # equal by the symbolic algebra, not by spelling
        (
            '!relax.tensor<["(n + 1) * 2 - 2"], f32>',
            '!relax.tensor<["2 * n"], f32>',
            '!relax.tensor<["2 * n"], f32>',
        ),
        ("!relax.tensor<[3, 4], f32>", "!relax.tensor<[3, 5], f32>", '!relax.tensor<[3, "?"], f32>'),
        ('!relax.tensor<["n"], f32>', '!relax.tensor<["n", 4], f32>', '!relax.tensor<"*", f32>'),
        ('!relax.tensor<"*", f32>', '!relax.tensor<["n"], f32>', '!relax.tensor<"*", f32>'),
        ('!relax.tensor<["n"], f32>', '!relax.tensor<["n"], i32>', '!relax.tensor<["n"], none>'),
        ('!relax.shape<["n", 4]>', '!relax.shape<["m", 4]>', '!relax.shape<["?", 4]>'),
        ('!relax.shape<["n"]>', '!relax.shape<["n", 1]>', '!relax.shape<"*">'),
        ('!relax.prim<"n">', '!relax.prim<"n">', '!relax.prim<"n">'),
        ('!relax.prim<"n">', '!relax.prim<"n + 1">', '!relax.prim<"?">'),
        (
            '!relax.tuple<[!relax.tensor<["n"], f32>, !relax.prim<"k">]>',
            '!relax.tuple<[!relax.tensor<["m"], f32>, !relax.prim<"k">]>',
            '!relax.tuple<[!relax.tensor<["?"], f32>, !relax.prim<"k">]>',
        ),
        ('!relax.tuple<[!relax.prim<"k">]>', "!relax.tuple<[]>", "!relax.object"),
        ('!relax.tensor<["n"], f32>', '!relax.shape<["n"]>', "!relax.object"),
        ('!relax.tensor<["n"], f32>', "!relax.object", "!relax.object"),
    ],
)
def test_join(a: str, b: str, expected: str) -> None:
    assert str(join(t(a), t(b))) == expected
    assert str(join(t(b), t(a))) == expected  # commutative


def test_join_is_an_upper_bound_and_idempotent() -> None:
    a, b = t('!relax.tensor<["n", 4], f32>'), t('!relax.tensor<["n + 1", 4], f32>')
    j = join(a, b)
    assert join(j, a) == j and join(j, b) == j and join(j, j) == j


def test_join_all_reaches_the_loop_fixed_point() -> None:
    # a carried ["n"] that doubles each iteration: init, then 2n, 4n ... joins to ["?"] after one step
    steps = [
        t('!relax.tensor<["n"], f32>'),
        t('!relax.tensor<["2 * n"], f32>'),
        t('!relax.tensor<["4 * n"], f32>'),
    ]
    assert join_all(steps) == TensorType((None,), "f32")
    assert join_all(steps[:1]) == steps[0]


def test_forget_drops_symbols_out_of_scope() -> None:
    x = t('!relax.tuple<[!relax.tensor<["n", "j", "n * j"], f32>, !relax.prim<"j">, !relax.shape<["n"]>]>')
    assert forget(x, {"n"}) == TupleType(
        (
            TensorType((t('!relax.prim<"n">').value, None, None), "f32"),
            PrimType(None),
            ShapeType((t('!relax.prim<"n">').value,)),
        )
    )
    assert forget(ObjectType(), set()) == ObjectType()

"""The Python views of relax types: parsing, printing, caching, symbols."""

from __future__ import annotations

import pytest
from mlir import ir

from relax_mlir.dialects.types import (
    ObjectType,
    PrimType,
    ShapeType,
    TensorType,
    TupleType,
    bare_symbols,
    free_symbols,
    parse_type,
    relax_type,
    to_mlir,
)
from relax_mlir.errors import ParseError
from relax_mlir.shape_infer.expr import parse_expr, sym

SPELLINGS = [
    '!relax.tensor<["n", 4], f32>',
    '!relax.tensor<"*", f32>',
    '!relax.tensor<["n", "?"], none>',
    "!relax.tensor<[], i64>",
    '!relax.tensor<["2 * n + 1", "(n + 3) floordiv 4"], f16>',
    '!relax.shape<["n", 4]>',
    '!relax.shape<"*">',
    '!relax.prim<"n">',
    '!relax.prim<"?">',
    '!relax.tuple<[!relax.tensor<["n", 4], f32>, !relax.object, !relax.tuple<[]>]>',
    "!relax.object",
]


@pytest.mark.parametrize("text", SPELLINGS)
def test_parse_print_round_trip(ctx: ir.Context, text: str) -> None:
    t = parse_type(text)
    assert str(t) == text
    mt = ir.Type.parse(text)
    assert str(mt) == text
    assert relax_type(mt) == t
    assert to_mlir(t) == mt


def test_tensor_view(ctx: ir.Context) -> None:
    t = relax_type(ir.Type.parse('!relax.tensor<["b", "s * 2", "?", 512], f32>'))
    assert isinstance(t, TensorType)
    assert t.shape == (sym("b"), parse_expr("2 * s"), None, parse_expr("512"))
    assert t.dtype == "f32" and t.ndim == 4
    unknown = relax_type(ir.Type.parse('!relax.tensor<"*", none>'))
    assert unknown == TensorType(None, None) and unknown.ndim is None


def test_dims_are_canonicalized(ctx: ir.Context) -> None:
    t = relax_type(ir.Type.parse('!relax.tensor<["n * 4", "(n + 1) * 2 - 2"], f32>'))
    assert str(t) == '!relax.tensor<["4 * n", "2 * n"], f32>'


def test_other_kinds(ctx: ir.Context) -> None:
    assert relax_type(ir.Type.parse('!relax.shape<["n", 4]>')) == ShapeType((sym("n"), parse_expr("4")))
    assert relax_type(ir.Type.parse('!relax.prim<"n + 1">')) == PrimType(parse_expr("n + 1"))
    tup = relax_type(ir.Type.parse('!relax.tuple<[!relax.object, !relax.prim<"?">]>'))
    assert tup == TupleType((ObjectType(), PrimType(None)))
    assert relax_type(ir.F32Type.get()) is None


def test_cache_returns_same_object(ctx: ir.Context) -> None:
    mt = ir.Type.parse('!relax.tensor<["n", 4], f32>')
    assert relax_type(mt) is relax_type(ir.Type.parse('!relax.tensor<["n", 4], f32>'))


@pytest.mark.parametrize(
    "text, message",
    [
        ('!relax.tensor<["n" 4], f32>', "expected ','"),
        ('!relax.tensor<["n + "], f32>', "cannot parse dim expression"),
        ("!relax.tensor<[-1], f32>", "negative dim -1"),
        ("!relax.tensors<[1], f32>", "unknown relax type"),
        ("!relax.tensor<[1]>", "expected ','"),
    ],
)
def test_parse_errors(text: str, message: str) -> None:
    with pytest.raises(ParseError, match=message):
        parse_type(text)


def test_symbols() -> None:
    t = parse_type('!relax.tuple<[!relax.tensor<["n", "m + 1", "k * 2"], f32>, !relax.shape<["b"]>]>')
    assert bare_symbols(t) == {"n", "b"}
    assert free_symbols(t) == {"n", "m", "k", "b"}


def test_type_cache_is_per_context() -> None:
    """The cache keys types by their storage pointer: a dead context's entries must not answer for a new one's."""
    import gc

    from relax_mlir.context import make_context
    from relax_mlir.dialects.types import relax_type

    for i in range(20):
        text = f'!relax.tensor<["n", {i}], f32>'
        ctx = make_context()
        t = ir.Type.parse(text, ctx)
        assert str(relax_type(t)) == text
        assert relax_type(to_mlir(parse_type(text), ctx)) == parse_type(text)
        del t, ctx
        gc.collect()

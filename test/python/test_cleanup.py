"""relax-dce, relax-cse, relax-fold-constants, relax-canonicalize: the models and an ONNX GPT still
compute the same numbers after the passes (against numpy / the unoptimized module) at several shapes,
the passes shrink them, and a second run changes nothing."""

from __future__ import annotations

import numpy as np
import pytest
from mlir import ir, passmanager

import relax_mlir.builder as rb
from relax_mlir.dialects import relax as R
from relax_mlir.examples import reference
from relax_mlir.examples.models import small_cnn, transformer_block
from relax_mlir.examples.onnx_gpt import gpt_model
from relax_mlir.frontend.onnx import from_onnx
from relax_mlir.pipelines import add_pipeline, load_passes, parse_pipeline
from relax_mlir.targets import compile
from relax_mlir.transforms.well_formed import verify_module

CLEANUP = "relax-canonicalize,relax-fold-constants{opt-level=1},relax-cse,relax-dce"
D, HEADS, FF = 64, 4, 96


def run(module: ir.Module, pipeline: str = CLEANUP) -> ir.Module:
    load_passes()
    with module.context:
        pm = passmanager.PassManager("builtin.module")
        add_pipeline(pm, parse_pipeline(pipeline))
        pm.run(module.operation)
    return module


def count_relax_ops(module: ir.Module) -> int:
    n = [0]

    def visit(op: ir.Operation) -> ir.WalkResult:
        n[0] += op.name.startswith("relax.")
        return ir.WalkResult.ADVANCE

    module.operation.walk(visit)
    return n[0]


def optimized(module: ir.Module) -> tuple[ir.Module, int, int]:
    before = count_relax_ops(module)
    run(module)
    text = str(module)
    assert verify_module(module.operation) == []
    run(module)
    assert str(module) == text, "a second run of the cleanup passes changed the module"
    return module, before, count_relax_ops(module)


@pytest.fixture(scope="module")
def block():
    module, before, after = optimized(transformer_block(D, HEADS, FF))
    assert after < before  # shape_of/get_dim die, permute chains merge
    return compile(module, opt_level=1)


@pytest.mark.parametrize("b, s", [(1, 1), (2, 7), (3, 16)])
def test_transformer_block_after_cleanup(block, b: int, s: int) -> None:
    weights = reference.transformer_weights(D, FF, seed=b * 10 + s)
    x = np.random.default_rng(s).standard_normal((b, s, D)).astype(np.float32)
    out = block(x, *weights.values())
    np.testing.assert_allclose(out, reference.transformer_block(x, HEADS, weights), rtol=1e-4, atol=1e-4)


def test_small_cnn_after_cleanup() -> None:
    module, _, _ = optimized(small_cnn())
    cnn = compile(module, opt_level=1)
    for n, h, w in [(1, 8, 8), (2, 9, 13), (1, 3, 5)]:
        image = np.random.default_rng(h * w).standard_normal((n, 3, h, w)).astype(np.float32)
        np.testing.assert_allclose(cnn(image), reference.small_cnn(image), rtol=1e-4, atol=1e-4)


def test_onnx_gpt_after_cleanup() -> None:
    model = gpt_model(layers=1, d=32, heads=2, vocab=50, max_seq=32)
    plain = compile(from_onnx(model), opt_level=1)
    module, before, after = optimized(from_onnx(model))
    assert after < before  # duplicate constants and aranges merge
    cleaned = compile(module, opt_level=1)
    for b, s in [(1, 1), (2, 5), (3, 17)]:
        ids = np.random.default_rng(b * s).integers(0, 50, size=(b, s)).astype(np.int64)
        np.testing.assert_allclose(cleaned(ids), plain(ids), rtol=1e-5, atol=1e-5)


def _build(body, params):
    bb = rb.BlockBuilder()
    with bb.function("main", params) as args:
        with bb.dataflow():
            out = bb.emit_output(body(*args))
        bb.ret(out)
    return bb.module


def test_fold_constants_matches_numpy() -> None:
    """A constant subgraph (matmul, exp, transpose, reduction, comparison, cast) folds to one constant
    whose values numpy gives; the run-time part still follows the input's symbolic shape."""
    rng = np.random.default_rng(0)
    a = rng.standard_normal((5, 3)).astype(np.float32)
    w = rng.standard_normal((3, 7)).astype(np.float32)

    def body(x: ir.Value) -> ir.Value:
        c = R.matmul(R.constant(a), R.constant(w))
        c = R.exp(R.multiply(R.permute_dims(c, [1, 0]), R.full([], 0.1)))
        c = R.add(c, R.astype(R.greater(R.sum(c, [1], keepdims=True), R.full([], 7.0)), "f32"))
        return R.add(x, R.reshape(c, [-1]))

    module = _build(body, {"x": rb.tensor(["n", 35])})
    plain = compile(module, opt_level=1)
    module, _, after = optimized(module)
    names = [
        op.name for op in module.body.operations[0].regions[0].blocks[0].operations[0].regions[0].blocks[0]
    ]
    assert names == ["relax.constant", "relax.add", "scf.yield"], names
    folded = compile(module, opt_level=1)
    c = np.exp((a @ w).T * np.float32(0.1))
    c = c + (c.sum(1, keepdims=True) > 7).astype(np.float32)
    for n in (1, 4, 9):
        x = rng.standard_normal((n, 35)).astype(np.float32)
        np.testing.assert_allclose(folded(x), x + c.reshape(-1), rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(folded(x), plain(x), rtol=1e-6, atol=1e-6)


def test_canonicalize_keeps_numbers() -> None:
    """Every canonicalization rule fires on one function; results equal the unoptimized ones."""

    def body(x: ir.Value) -> ir.Value:
        y = R.astype(x, "f32")
        y = R.reshape(R.reshape(y, [0, 2, -1]), [0, -1])
        y = R.permute_dims(R.permute_dims(y, [1, 0]), [1, 0])
        y = R.squeeze(R.expand_dims(y, [0, 2]), [0, 2])
        y = R.broadcast_to(y, ["n", 12])
        return R.permute_dims(R.reshape(y, ["n", 3, 4]), [0, 2, 1])

    module = _build(body, {"x": rb.tensor(["n", 12])})
    plain = compile(module, opt_level=1)
    module, before, after = optimized(module)
    assert after == 2, str(module)  # one reshape, one permute
    cleaned = compile(module, opt_level=1)
    for n in (1, 2, 7):
        x = np.random.default_rng(n).standard_normal((n, 12)).astype(np.float32)
        np.testing.assert_array_equal(cleaned(x), plain(x))
        np.testing.assert_array_equal(cleaned(x), x.reshape(n, 3, 4).transpose(0, 2, 1))


def test_match_cast_checks_survive_dce() -> None:
    """An unused match_cast that can fail is kept, and still fails at run time."""

    def body(x: ir.Value) -> ir.Value:
        R.match_cast(x, rb.tensor([4, "m"]))
        return R.exp(x)

    module, _, _ = optimized(_build(body, {"x": rb.tensor(["n", "k"])}))
    assert "relax.match_cast" in str(module)
    exe = compile(module, opt_level=1)
    np.testing.assert_allclose(exe(np.zeros((4, 3), np.float32)), np.ones((4, 3)))
    with pytest.raises(Exception, match="match_cast"):
        exe(np.zeros((5, 3), np.float32))

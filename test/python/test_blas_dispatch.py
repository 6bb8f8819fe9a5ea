"""relax-dispatch-blas + call_dps_library host lowering: BLAS results vs numpy, and what stays generated."""

from __future__ import annotations

import numpy as np
import pytest
from mlir import ir, passmanager
from oprun import build_fn, rand

import relax_mlir.builder as rb
from relax_mlir.context import make_context, parse_module
from relax_mlir.dialects import relax as R
from relax_mlir.examples import reference
from relax_mlir.examples.models import transformer_block
from relax_mlir.lowering import blas
from relax_mlir.pipelines import add_pipeline, load_passes, parse_pipeline
from relax_mlir.runtime.executable import Executable
from relax_mlir.targets import compile

pytestmark = pytest.mark.skipif(not blas.available(), reason="numpy's ILP64 OpenBLAS not found")

_COMPILED: dict[str, tuple[str, Executable]] = {}


def dispatch(module: ir.Module | str) -> str:
    """The module's text after relax-dispatch-blas."""
    with make_context(), ir.Location.unknown():
        op = parse_module(str(module), "<test>")
        load_passes()
        pm = passmanager.PassManager("builtin.module")
        add_pipeline(pm, parse_pipeline("relax-dispatch-blas"))
        pm.run(op)
        return str(op)


def compile_dispatched(module: ir.Module) -> tuple[str, Executable]:
    text = str(module)
    if text not in _COMPILED:
        dispatched = dispatch(text)
        _COMPILED[text] = (dispatched, compile(dispatched, opt_level=1))
    return _COMPILED[text]


def gemm_calls(text: str) -> int:
    return text.count('"relax.call_dps_library"')


def mm(params: dict, body) -> tuple[str, Executable]:
    return compile_dispatched(build_fn(params, body))


@pytest.mark.parametrize("dtype, rtol", [("f32", 1e-5), ("f64", 1e-12)])
@pytest.mark.parametrize(
    "m, k, n", [(1, 64, 64), (7, 33, 5), (128, 96, 80), (1, 1, 1), (0, 4, 3), (5, 0, 3), (1, 0, 4)]
)
def test_gemm_symbolic(dtype: str, rtol: float, m: int, k: int, n: int) -> None:
    text, exe = mm({"x": rb.tensor(["m", "k"], dtype), "w": rb.tensor(["k", "n"], dtype)}, R.matmul)
    assert gemm_calls(text) == 1 and '"relax.matmul"' not in text
    np_dtype = np.float32 if dtype == "f32" else np.float64
    x, w = rand((m, k), np_dtype), rand((k, n), np_dtype)
    np.testing.assert_allclose(exe(x, w), x @ w, rtol=rtol, atol=rtol * max(k, 1))


@pytest.mark.parametrize("b, m", [(1, 1), (3, 7), (2, 64)])
def test_batch_folded_into_rows(b: int, m: int) -> None:
    text, exe = mm({"x": rb.tensor(["b", "m", 48]), "w": rb.tensor([48, 17])}, R.matmul)
    assert gemm_calls(text) == 1
    x, w = rand((b, m, 48)), rand((48, 17))
    np.testing.assert_allclose(exe(x, w), x @ w, rtol=1e-5, atol=1e-4)


@pytest.mark.parametrize("b, h, s", [(1, 1, 1), (2, 3, 9), (1, 4, 33)])
def test_batched_gemm(b: int, h: int, s: int) -> None:
    text, exe = mm({"q": rb.tensor(["b", "h", "s", 16]), "k": rb.tensor(["b", "h", 16, "s"])}, R.matmul)
    assert gemm_calls(text) == 1
    q, k = rand((b, h, s, 16)), rand((b, h, 16, s))
    np.testing.assert_allclose(exe(q, k), q @ k, rtol=1e-5, atol=1e-4)


@pytest.mark.parametrize("m", [1, 6, 31])
def test_bias_and_activation(m: int) -> None:
    params = {"x": rb.tensor(["m", 40]), "w": rb.tensor([40, "n"]), "bias": rb.tensor(["n"])}
    text, exe = mm(params, lambda x, w, bias: R.relu(R.add(R.matmul(x, w), bias)))
    assert gemm_calls(text) == 1 and '"relax.add"' not in text and '"relax.relu"' in text
    x, w, bias = rand((m, 40)), rand((40, 9)), rand((9,))
    np.testing.assert_allclose(exe(x, w, bias), np.maximum(x @ w + bias, 0), rtol=1e-5, atol=1e-4)


@pytest.mark.parametrize("b, s", [(1, 1), (2, 5)])
def test_residual_add_is_folded(b: int, s: int) -> None:
    params = {"x": rb.tensor(["b", "s", 32]), "w": rb.tensor([32, 32])}
    text, exe = mm(params, lambda x, w: R.add(x, R.matmul(x, w)))
    assert gemm_calls(text) == 1 and '"relax.add"' not in text
    x, w = rand((b, s, 32)), rand((32, 32))
    np.testing.assert_allclose(exe(x, w), x + x @ w, rtol=1e-5, atol=1e-4)


def test_product_with_two_uses_keeps_its_add() -> None:
    params = {"x": rb.tensor(["m", 8]), "w": rb.tensor([8, 8]), "bias": rb.tensor([8])}
    text, exe = mm(params, lambda x, w, bias: (lambda p: R.multiply(R.add(p, bias), p))(R.matmul(x, w)))
    assert gemm_calls(text) == 1 and '"relax.add"' in text
    x, w, bias = rand((5, 8)), rand((8, 8)), rand((8,))
    p = x @ w
    np.testing.assert_allclose(exe(x, w, bias), (p + bias) * p, rtol=1e-5, atol=1e-4)


@pytest.mark.parametrize(
    "params",
    [
        {"x": rb.tensor(["m", "k"], "i32"), "w": rb.tensor(["k", "n"], "i32")},  # not a BLAS dtype
        {"x": rb.tensor(["m", "k"]), "w": rb.tensor(["k2", "n"])},  # k == k2 only assumed
        {"x": rb.tensor([1, "m", 8]), "w": rb.tensor(["b", 8, "n"])},  # broadcast batch dims
        {"x": rb.tensor([8]), "w": rb.tensor([8, "n"])},  # 1-D operand
    ],
)
def test_unmatched_matmuls_stay(params: dict) -> None:
    text = dispatch(build_fn(params, R.matmul))
    assert gemm_calls(text) == 0 and '"relax.matmul"' in text


D, HEADS, FF = 64, 4, 96


@pytest.fixture(scope="module")
def block() -> tuple[str, Executable]:
    return compile_dispatched(transformer_block(D, HEADS, FF))


@pytest.mark.parametrize("b, s", [(1, 1), (2, 7), (1, 33)])
def test_transformer_block_with_blas(block, b: int, s: int) -> None:
    text, exe = block
    assert gemm_calls(text) == 8 and '"relax.matmul"' not in text
    weights = reference.transformer_weights(D, FF, seed=b * 100 + s)
    x = np.random.default_rng(s).standard_normal((b, s, D)).astype(np.float32)
    expected = reference.transformer_block(x, HEADS, weights)
    np.testing.assert_allclose(exe(x, *weights.values()), expected, rtol=1e-4, atol=1e-4)

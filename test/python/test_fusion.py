"""relax-fuse-ops + relax-fuse-kernels: fused programs compute what unfused ones and numpy compute."""

from __future__ import annotations

import numpy as np
import pytest
from oprun import build_fn, rand

import relax_mlir.builder as rb
from relax_mlir.dialects import relax as R
from relax_mlir.examples import reference
from relax_mlir.examples.models import small_cnn, transformer_block
from relax_mlir.pipelines import load_passes
from relax_mlir.runtime.executable import Executable
from relax_mlir.targets import compile

FUSED = (
    "relax-verify,relax-infer-shapes,relax-fuse-ops,convert-relax-to-linalg,relax-fuse-kernels,"
    "relax-lower-host,relax-schedule-kernels"
)
D, HEADS, FF = 64, 4, 96


def compile_fused(module, **kw) -> Executable:
    """compile() with fusion only (no cleanups, no planning, no BLAS): what these tests isolate."""
    return compile(module, opt_level=1, pipeline=FUSED, **kw)


def kernel_calls(module) -> int:
    """call_tir count after the fused relax-to-host front half."""
    from mlir import passmanager

    from relax_mlir.context import make_context, parse_module
    from relax_mlir.pipelines import add_pipeline, parse_pipeline

    load_passes()
    with make_context():
        op = parse_module(str(module), "<test>")
        pm = passmanager.PassManager("builtin.module")
        add_pipeline(pm, parse_pipeline(FUSED.split(",relax-lower-host")[0]))
        pm.run(op)
        return str(op).count('"relax.call_tir"')


@pytest.fixture(scope="module")
def block() -> Executable:
    return compile_fused(transformer_block(D, HEADS, FF))


@pytest.fixture(scope="module")
def cnn() -> Executable:
    return compile_fused(small_cnn())


@pytest.mark.parametrize("b, s", [(1, 1), (2, 7), (3, 16), (1, 33)])
def test_fused_transformer_block_matches_numpy(block: Executable, b: int, s: int) -> None:
    weights = reference.transformer_weights(D, FF, seed=b * 100 + s)
    x = np.random.default_rng(s).standard_normal((b, s, D)).astype(np.float32)
    out = block(x, *weights.values())
    np.testing.assert_allclose(out, reference.transformer_block(x, HEADS, weights), rtol=1e-4, atol=1e-4)


def test_transformer_block_kernel_count() -> None:
    assert kernel_calls(transformer_block(D, HEADS, FF)) == 16  # 33 without fusion


@pytest.mark.parametrize("n, h, w", [(1, 8, 8), (2, 9, 13), (3, 2, 3)])
def test_fused_small_cnn_matches_numpy(cnn: Executable, n: int, h: int, w: int) -> None:
    image = np.random.default_rng(h * w).standard_normal((n, 3, h, w)).astype(np.float32)
    np.testing.assert_allclose(cnn(image), reference.small_cnn(image), rtol=1e-4, atol=1e-4)


def _gelu(x: np.ndarray) -> np.ndarray:
    from math import erf

    return 0.5 * x * (1 + np.vectorize(erf)(x / np.sqrt(2)).astype(np.float32))


def test_chain_with_match_cast_in_the_middle() -> None:
    """add, exp | match_cast (binds m) | multiply, add, sigmoid: two groups, the check stays between."""

    def body(x, y):
        c = R.match_cast(R.exp(R.add(x, y)), rb.tensor(["m", 3]))
        return R.sigmoid(R.add(R.multiply(c, c), c))

    module = build_fn({"x": rb.tensor(["n", 3]), "y": rb.tensor([3])}, body)
    assert kernel_calls(module) == 2
    exe = compile_fused(module)
    for n in (1, 4, 7):
        x, y = rand((n, 3)), rand((3,))
        a = np.exp(x + y)
        np.testing.assert_allclose(exe(x, y), 1 / (1 + np.exp(-(a * a + a))), rtol=1e-5)


def test_symbolic_reshape_chain_needs_symbol_arguments() -> None:
    """An intermediate sized by ``k``, which no tensor of the fused kernel has as a dim: passed as an index."""

    def body(x, z, b):
        h = R.add(R.reshape(x, ["n", "k", 4]), b)
        return R.sum(R.multiply(h, h), [1])

    module = build_fn({"x": rb.tensor(["n", "k * 4"]), "z": rb.tensor(["k"]), "b": rb.tensor([4])}, body)
    assert kernel_calls(module) == 1
    exe = compile_fused(module)
    for n, k in ((1, 1), (3, 5), (2, 8)):
        x, z, b = rand((n, k * 4)), rand((k,)), rand((4,))
        h = x.reshape(n, k, 4) + b
        np.testing.assert_allclose(exe(x, z, b), (h * h).sum(1), rtol=1e-5)


@pytest.mark.parametrize("static", [False, True])
def test_matmul_epilogue(static: bool) -> None:
    """matmul + bias + gelu + residual in one kernel (dynamic rows); the matmul schedule still applies."""
    n = 33 if static else "n"

    def body(x, w, b, r):
        return R.add(R.gelu(R.add(R.matmul(x, w), b)), r)

    module = build_fn(
        {"x": rb.tensor([n, 40]), "w": rb.tensor([40, 24]), "b": rb.tensor([24]), "r": rb.tensor([n, 24])},
        body,
    )
    assert kernel_calls(module) == (2 if static else 1)  # a static epilogue stays out of the matmul kernel
    exe = compile_fused(module)
    for rows in (33,) if static else (1, 17, 33):
        x, w, b, r = rand((rows, 40)), rand((40, 24)), rand((24,)), rand((rows, 24))
        want = _gelu((x @ w + b).astype(np.float32)) + r
        np.testing.assert_allclose(exe(x, w, b, r), want, rtol=1e-4, atol=1e-4)


def test_elementwise_producers_into_softmax() -> None:
    def body(x, y):
        return R.softmax(R.add(R.multiply(x, y), R.full([], 0.5)))

    module = build_fn({"x": rb.tensor(["b", "s"]), "y": rb.tensor(["s"])}, body)
    assert kernel_calls(module) == 1
    exe = compile_fused(module)
    for b, s in ((1, 1), (2, 9), (3, 16)):
        x, y = rand((b, s)), rand((s,))
        z = x * y + 0.5
        e = np.exp(z - z.max(-1, keepdims=True))
        np.testing.assert_allclose(exe(x, y), e / e.sum(-1, keepdims=True), rtol=1e-5, atol=1e-6)


def test_value_used_outside_the_group_stays_an_output() -> None:
    def body(x):
        a = R.exp(x)
        return R.add(a, R.tanh(a)), a

    module = build_fn({"x": rb.tensor(["n"])}, body)
    assert kernel_calls(module) == 1
    exe = compile_fused(module)
    for n in (1, 5):
        x = rand((n,))
        out, a = exe(x)
        np.testing.assert_allclose(a, np.exp(x), rtol=1e-6)
        np.testing.assert_allclose(out, np.exp(x) + np.tanh(np.exp(x)), rtol=1e-5)


def test_producer_into_layer_norm_with_in_place_generics() -> None:
    """add -> layer_norm, the sum also returned: layer_norm's in-place generics must not be loop-fused."""

    def body(x, y, g, b):
        s = R.add(x, y)
        return R.layer_norm(s, g, b), s

    module = build_fn(
        {"x": rb.tensor(["n", 8]), "y": rb.tensor(["n", 8]), "g": rb.tensor([8]), "b": rb.tensor([8])}, body
    )
    assert kernel_calls(module) == 1
    exe = compile_fused(module)
    for n in (1, 6):
        x, y, g, b = rand((n, 8)), rand((n, 8)), rand((8,)), rand((8,))
        s = x + y
        mean = s.mean(-1, keepdims=True)
        want = (s - mean) / np.sqrt(((s - mean) ** 2).mean(-1, keepdims=True) + 1e-5) * g + b
        out, total = exe(x, y, g, b)
        np.testing.assert_allclose(total, s, rtol=1e-6)
        np.testing.assert_allclose(out, want, rtol=1e-4, atol=1e-5)


def test_reshape_into_permute_dims_reads_the_input_without_a_copy() -> None:
    """The reshape's copy into what became an intermediate is dropped: the fused kernel transposes a view
    of its input (packing a weight used to copy the whole weight first)."""

    def body(x):
        return R.permute_dims(R.reshape(x, ["n", 6, 16]), [1, 0, 2])

    module = build_fn({"x": rb.tensor(["n", 96])}, body)
    host: dict[str, str] = {}
    exe = compile(module, opt_level=2, on_stage=host.__setitem__, use_cache=False)
    kernels = host["host"].split("func.func private @fused_reshape_permute_dims")[1:]
    assert kernels and not any("linalg.copy" in k.split("\n  }")[0] for k in kernels)
    for n in (0, 1, 7, 64):
        x = rand((n, 96))
        np.testing.assert_array_equal(exe(x), x.reshape(n, 6, 16).transpose(1, 0, 2))

"""Vectorizable kernels: inline math approximations, reassociated reductions, row-fused softmax/norms.

Numbers against float64 numpy references at shapes that exercise vector remainders (sizes 1, odd sizes
that are not multiples of any vector width, long rows) and symbolic dims, at O1 (one kernel per op) and
O3 (fused kernels: the scale + mask + softmax of attention become one row-wise kernel).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from oprun import build_fn, rand

import relax_mlir.builder as rb
from relax_mlir.dialects import relax as R
from relax_mlir.runtime.executable import Executable
from relax_mlir.targets import compile

_CACHE: dict[tuple[str, int], Executable] = {}


def compiled(params: dict, body, opt_level: int) -> Executable:
    text = str(build_fn(params, body))
    if (text, opt_level) not in _CACHE:
        _CACHE[text, opt_level] = compile(text, opt_level=opt_level)
    return _CACHE[text, opt_level]


SPECIAL = np.array([np.inf, -np.inf, np.nan, 0.0, -0.0, 1e30, -1e30, 1e-30, -1e-30, 3e-39], np.float32)


def _inputs() -> np.ndarray:
    return np.concatenate(
        [
            np.linspace(-120, 120, 100_003),
            np.linspace(-6, 6, 100_001),
            np.linspace(-1e-3, 1e-3, 10_001),
            SPECIAL,
        ]
    ).astype(np.float32)


ERF = np.vectorize(math.erf)
REFERENCES = {"exp": np.exp, "erf": ERF, "tanh": np.tanh}


@pytest.mark.parametrize("name", sorted(REFERENCES))
def test_math_accuracy(name: str) -> None:
    """exp: 2 ulp where the f32 result is normal, 0 below; erf/tanh: 1e-6 relative or 1e-7 absolute."""
    exe = compiled({"x": rb.tensor(["n"])}, getattr(R, name), 1)
    x = _inputs()
    got = exe(x).astype(np.float64)
    with np.errstate(over="ignore"):
        want = REFERENCES[name](x.astype(np.float64))
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    finite = np.isfinite(want)
    if name == "exp":
        normal = finite & (x >= -87.33) & (want < np.finfo(np.float32).max)
        np.testing.assert_allclose(got[normal], want[normal], rtol=2.4e-7, atol=0)
        assert np.all(got[x > 88.73] == np.inf)
        assert np.all(got[x < -87.33] == 0)  # no denormal results
        tiny = finite & (want <= np.finfo(np.float32).tiny)
        assert np.all(got[tiny] <= np.finfo(np.float32).tiny * 1.01)
    else:
        np.testing.assert_allclose(got[finite], want[finite], rtol=1e-6, atol=1e-7)
        np.testing.assert_array_equal(got[~finite & ~np.isnan(want)], want[~finite & ~np.isnan(want)])


@pytest.mark.parametrize("n", [1, 7, 8, 17, 1000])
def test_math_on_vector_remainders(n: int) -> None:
    """Vector bodies and scalar remainders give the same approximation."""
    exe = compiled({"x": rb.tensor(["n"])}, lambda x: R.multiply(R.exp(x), R.erf(x)), 1)
    x = rand((n,), low=-5, high=5)
    want = np.exp(x.astype(np.float64)) * ERF(x.astype(np.float64))
    np.testing.assert_allclose(exe(x), want, rtol=2e-6, atol=1e-7)


def _gelu(x: np.ndarray) -> np.ndarray:
    x = x.astype(np.float64)
    return 0.5 * x * (1 + ERF(x / math.sqrt(2)))


@pytest.mark.parametrize("opt_level", [1, 3])
def test_gelu_and_sigmoid(opt_level: int) -> None:
    exe = compiled({"x": rb.tensor(["a", "b"])}, lambda x: R.add(R.gelu(x), R.sigmoid(x)), opt_level)
    for shape in [(1, 1), (3, 17), (2, 2048), (5, 9)]:
        x = rand(shape, low=-8, high=8)
        want = _gelu(x) + 1 / (1 + np.exp(-x.astype(np.float64)))
        np.testing.assert_allclose(exe(x), want, rtol=1e-5, atol=1e-6)


def _softmax(x: np.ndarray) -> np.ndarray:
    x = x.astype(np.float64)
    e = np.exp(x - x.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


SHAPES = [(1, 1, 1), (1, 1, 7), (2, 3, 17), (3, 1, 1000), (2, 5, 128), (1, 2, 4099)]


@pytest.mark.parametrize("opt_level", [1, 3])
def test_softmax_rows(opt_level: int) -> None:
    exe = compiled({"x": rb.tensor(["a", "b", "c"])}, lambda x: R.softmax(x, -1), opt_level)
    for shape in SHAPES:
        x = rand(shape, low=-30, high=30)
        np.testing.assert_allclose(exe(x), _softmax(x), rtol=1e-5, atol=1e-7)


def test_softmax_special_values() -> None:
    exe = compiled({"x": rb.tensor(["a", "c"])}, lambda x: R.softmax(x, -1), 3)
    x = np.array(
        [[0, -np.inf, 1, 2, -np.inf], [np.nan, 0, 1, 2, 3], [1e30, 0, -1e30, 3, 4], [-1e9] * 5], np.float32
    )
    got = exe(x)
    np.testing.assert_allclose(got[0], _softmax(x[0]), rtol=1e-6)
    assert np.all(np.isnan(got[1]))
    np.testing.assert_allclose(got[2], [1, 0, 0, 0, 0])
    np.testing.assert_allclose(got[3], [0.2] * 5, rtol=1e-6)


def _attention(scores: np.ndarray, mask: np.ndarray) -> np.ndarray:
    s = np.where(mask, scores.astype(np.float64) / 8, -1e9)
    return _softmax(s)


@pytest.mark.parametrize("opt_level", [1, 3])
def test_scaled_masked_softmax(opt_level: int) -> None:
    """GPT attention's scores -> scale -> causal mask -> softmax, fused into one row-wise kernel at O3."""

    def body(scores, mask):
        scaled = R.divide(scores, R.constant(np.array(8, np.float32)))
        return R.softmax(R.where(mask, scaled, R.constant(np.array(-1e9, np.float32))), -1)

    params = {"scores": rb.tensor(["b", 8, "s", "s"]), "mask": rb.tensor(["s", "s"], "i1")}
    exe = compiled(params, body, opt_level)
    for b, s in [(1, 1), (1, 16), (2, 17), (1, 128)]:
        scores = rand((b, 8, s, s), low=-40, high=40)
        mask = ~np.triu(np.ones((s, s), bool), 1)
        np.testing.assert_allclose(exe(scores, mask), _attention(scores, mask), rtol=1e-5, atol=1e-7)


def _layer_norm(x: np.ndarray, g: np.ndarray, b: np.ndarray | None) -> np.ndarray:
    x = x.astype(np.float64)
    if b is None:
        return x / np.sqrt(np.mean(x * x, -1, keepdims=True) + 1e-5) * g
    c = x - x.mean(-1, keepdims=True)
    return c / np.sqrt(np.mean(c * c, -1, keepdims=True) + 1e-5) * g + b


@pytest.mark.parametrize("opt_level", [1, 3])
@pytest.mark.parametrize("rms", [False, True])
def test_norms_rows(opt_level: int, rms: bool) -> None:
    params = {"x": rb.tensor(["a", "b", "d"]), "g": rb.tensor(["d"])}
    if rms:
        exe = compiled(params, lambda x, g: R.rms_norm(R.add(x, x), g), opt_level)
    else:
        params["beta"] = rb.tensor(["d"])
        exe = compiled(params, lambda x, g, beta: R.layer_norm(R.add(x, x), g, beta), opt_level)
    for shape in [(1, 1, 1), (1, 3, 7), (2, 5, 512), (1, 2, 4099)]:
        x, g, beta = rand(shape, low=-3, high=5), rand(shape[-1:]), rand(shape[-1:])
        args = (x, g) if rms else (x, g, beta)
        want = _layer_norm(2 * x, g, None if rms else beta)
        np.testing.assert_allclose(exe(*args), want, rtol=1e-4, atol=2e-5)


@pytest.mark.parametrize("opt_level", [1, 3])
def test_reductions_rows(opt_level: int) -> None:
    def body(x):
        return R.add(R.sum(x, [-1]), R.max(x, [-1]))

    exe = compiled({"x": rb.tensor(["a", "b"])}, body, opt_level)
    for shape in [(1, 1), (3, 7), (4, 1000), (2, 65537)]:
        x = rand(shape)
        want = x.astype(np.float64).sum(-1) + x.max(-1)
        np.testing.assert_allclose(exe(x), want, rtol=1e-5, atol=1e-5 * math.sqrt(shape[-1]))
    x = np.array([[1, np.nan, 2], [np.inf, 1, 2], [-np.inf, -np.inf, -np.inf]], np.float32)
    got = exe(x)
    assert np.isnan(got[0]) and got[1] == np.inf and got[2] == -np.inf


def test_structure_row_fused_and_no_libm() -> None:
    """At O3 attention's softmax is one row loop (roots marked by the rows schedule) and exp/erf are
    inline arithmetic: the LLVM module declares no expf/erff."""
    stages: dict[str, str] = {}

    def body(scores, mask):
        scaled = R.divide(scores, R.constant(np.array(8, np.float32)))
        probs = R.softmax(R.where(mask, scaled, R.constant(np.array(-1e9, np.float32))), -1)
        return R.gelu(probs)

    params = {"scores": rb.tensor(["b", 8, "s", "s"]), "mask": rb.tensor(["s", "s"], "i1")}
    compile(
        str(build_fn(params, body)),
        opt_level=3,
        use_cache=False,
        on_stage=lambda name, text: stages.__setitem__(name, text),
    )
    host = stages["host"]
    assert "relax.row_tiles = [1, 1, 1, 0]" in host
    assert "scf.for" in host
    llvm = stages["llvm"]
    for fn in ("@expf", "@erff", "@tanhf"):
        assert fn not in llvm

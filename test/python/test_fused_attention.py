"""relax-fuse-attention and relax.attention (flash-style prefill attention) against numpy: causal and not,
explicit masks (rows masked over whole key blocks, fully masked rows), seq 0, 1, odd and over several
query and key blocks, cross-attention; what is and is not fused; the GPU pipelines do not fuse."""

from __future__ import annotations

import numpy as np
import pytest
from isolated import run_isolated

import relax_mlir
import relax_mlir.builder as rb
from relax_mlir.dialects import relax as R
from relax_mlir.dialects.ops.attention import KEY_BLOCK, QUERY_BLOCK
from relax_mlir.errors import ShapeError
from relax_mlir.pipelines.cpu import LEVELS
from relax_mlir.transforms.fuse_attention import fuse_attention

H, D = 3, 8


def _module(kind: str, fill: float = -1e9, scale_op: str = "divide", extra_use: bool = False):  # noqa: ANN202
    """Attention over q [b, H, s, D], k/v [b, H, t, D] written op by op. ``kind``: ``causal`` (mask from
    one arange), ``mask`` (an i1 [s, t] parameter), ``none`` (no where; keys may differ from queries)."""
    bb = rb.BlockBuilder()
    keys = "s" if kind == "causal" else "t"
    params = {
        "q": rb.tensor(["b", H, "s", D]),
        "k": rb.tensor(["b", H, keys, D]),
        "v": rb.tensor(["b", H, keys, D]),
    }
    if kind == "mask":
        params["mask"] = rb.tensor(["s", "t"], "i1")
    bounds = {"b": 4, "s": 4096} | ({} if kind == "causal" else {"t": 4096})
    with bb.function("main", params, upper_bounds=bounds) as a:
        with bb.dataflow():
            scores = R.matmul(a[0], R.permute_dims(a[1], [0, 1, 3, 2]))
            c = R.constant(np.array(1 / np.sqrt(D), np.float32))
            if scale_op == "divide":
                scores = R.divide(scores, R.constant(np.array(np.sqrt(D), np.float32)))
            elif scale_op == "multiply":
                scores = R.multiply(c, scores)
            else:  # as the PyTorch importer writes SDPA: q * c @ kt
                scores = R.matmul(R.multiply(a[0], c), R.permute_dims(a[1], [0, 1, 3, 2]))
            mask = None
            if kind == "causal":
                pos = R.arange(0, "s")
                rows, cols = R.expand_dims(pos, [1]), R.expand_dims(pos, [0])
                if scale_op == "q":
                    mask = R.less_equal(cols, rows)
                else:
                    mask = R.logical_not(R.less(rows, cols))
            elif kind == "mask":
                mask = a[3]
            if mask is not None:
                scores = R.where(mask, scores, R.constant(np.array(fill, np.float32)))
            probs = R.softmax(scores, axis=-1)
            out = R.matmul(probs, a[2])
            if extra_use:  # the probabilities are a result too: the score matrix must exist
                out = bb.emit_output(R.add(out, R.sum(probs, axes=[3], keepdims=True)))
            else:
                out = bb.emit_output(out)
        bb.ret(out)
    return bb.module


def _reference(q, k, v, visible=None, fill: float = -1e9):  # noqa: ANN001, ANN202
    scores = q.astype(np.float64) @ k.astype(np.float64).transpose(0, 1, 3, 2) / np.sqrt(D)
    if visible is not None:
        scores = np.where(visible, scores, fill)
    with np.errstate(invalid="ignore"):
        p = np.exp(scores - scores.max(-1, keepdims=True, initial=-np.inf))
        return (p / p.sum(-1, keepdims=True)) @ v


def _qkv(batch: int, s: int, t: int, seed: int) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    return [
        rng.standard_normal(shape, np.float32)
        for shape in ((batch, H, s, D), (batch, H, t, D), (batch, H, t, D))
    ]


def _fused_text(module) -> str:  # noqa: ANN001
    count = fuse_attention(module.operation)
    assert count == 1
    return str(module)


@pytest.fixture(scope="module")
def causal():  # noqa: ANN201
    return relax_mlir.compile(_module("causal"), opt_level=3)["main"]


@pytest.mark.parametrize(
    ("batch", "seq"),
    [(1, 0), (1, 1), (2, 7), (1, QUERY_BLOCK + 1), (1, KEY_BLOCK + 3), (2, 2 * KEY_BLOCK + QUERY_BLOCK + 5)],
)
def test_causal_matches_numpy(causal, batch: int, seq: int) -> None:  # noqa: ANN001
    q, k, v = _qkv(batch, seq, seq, seq)
    visible = np.tril(np.ones((seq, seq), bool))
    np.testing.assert_allclose(causal(q, k, v), _reference(q, k, v, visible), rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("scale_op", ["divide", "q"])
def test_causal_mask_becomes_the_causal_attribute(scale_op: str) -> None:
    text = _fused_text(_module("causal", scale_op=scale_op))
    assert '"relax.attention"' in text and "causal = true" in text
    for gone in ("relax.softmax", "relax.where", "relax.less", "relax.arange", "relax.multiply"):
        assert gone not in text  # the chain and the mask's ops are gone


def test_causal_mask_with_a_mild_fill_stays_a_mask_operand() -> None:
    """fill -5: masked keys keep a weight; leaving them out (causal) would change the result."""
    text = _fused_text(_module("causal", fill=-5.0))
    assert "causal = false" in text and "relax.less" in text
    f = relax_mlir.compile(_module("causal", fill=-5.0), opt_level=3)["main"]
    q, k, v = _qkv(1, KEY_BLOCK + 9, KEY_BLOCK + 9, 2)
    want = _reference(q, k, v, np.tril(np.ones((KEY_BLOCK + 9,) * 2, bool)), fill=-5.0)
    np.testing.assert_allclose(f(q, k, v), want, rtol=1e-4, atol=1e-5)


def test_scaled_queries_causal_matches_numpy() -> None:
    f = relax_mlir.compile(_module("causal", scale_op="q"), opt_level=3)["main"]
    q, k, v = _qkv(2, 45, 45, 9)
    want = _reference(q, k, v, np.tril(np.ones((45, 45), bool)))
    np.testing.assert_allclose(f(q, k, v), want, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize(("batch", "s", "t"), [(1, 1, 1), (2, 5, 300), (1, 33, 7), (1, 0, 4), (3, 40, 129)])
def test_no_mask_cross_attention_matches_numpy(batch: int, s: int, t: int) -> None:
    f = relax_mlir.compile(_module("none", scale_op="multiply"), opt_level=3)["main"]
    q, k, v = _qkv(batch, s, t, s + t)
    np.testing.assert_allclose(f(q, k, v), _reference(q, k, v), rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("fill", [-1e9, float("-inf")])
def test_explicit_mask_with_masked_key_blocks_and_rows(fill: float) -> None:
    """Row 0 sees only keys past the first key block (its first tiles are all masked: the running max is
    -inf there); row 1 sees nothing (with a finite fill: uniform weights; with -inf: nan, as numpy)."""
    f = relax_mlir.compile(_module("mask", fill=fill), opt_level=3)["main"]
    s, t = 37, KEY_BLOCK + 70
    q, k, v = _qkv(2, s, t, 3)
    mask = np.random.default_rng(4).random((s, t)) < 0.6
    mask[0] = np.arange(t) > KEY_BLOCK + 5
    mask[1] = False
    got, want = f(q, k, v, mask), _reference(q, k, v, mask, fill)
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)
    assert np.isnan(got[:, :, 1]).all() == np.isinf(fill)
    assert '"relax.attention"' in _fused_text(_module("mask", fill=fill))


def test_unfused_when_the_scores_have_another_use() -> None:
    module = _module("causal", extra_use=True)
    assert fuse_attention(module.operation) == 0
    f = relax_mlir.compile(_module("causal", extra_use=True), opt_level=3)["main"]
    q, k, v = _qkv(1, 9, 9, 1)
    want = _reference(q, k, v, np.tril(np.ones((9, 9), bool))) + 1
    np.testing.assert_allclose(f(q, k, v), want, rtol=1e-4, atol=1e-5)


def test_only_cpu_pipelines_fuse() -> None:
    from relax_mlir.pipelines.data import text
    from relax_mlir.pipelines.gpu import relax_to_host_gpu
    from relax_mlir.pipelines.webgpu import relax_to_host_webgpu

    assert "relax-fuse-attention" in LEVELS[2] and "relax-fuse-attention" in LEVELS[3]
    for pipeline in (relax_to_host_gpu(), relax_to_host_webgpu()):
        assert "relax-fuse-attention" not in text(pipeline)


def test_mask_of_the_wrong_shape_is_a_shape_error() -> None:
    bb = rb.BlockBuilder()
    params = {
        "q": rb.tensor([1, H, 4, D]),
        "kt": rb.tensor([1, H, D, 4]),
        "v": rb.tensor([1, H, 4, D]),
        "mask": rb.tensor([4, 5], "i1"),
    }
    with pytest.raises(ShapeError, match="mask columns vs keys"):
        with bb.function("main", params) as a, bb.dataflow():
            R.attention(a[0], a[1], a[2], a[3], 0.5)


@pytest.mark.parametrize(("s", "t", "d"), [(0, 5, 8), (4, 0, 8), (1, 1, 1)])
def test_static_empty_dims_match_numpy(s: int, t: int, d: int) -> None:
    """relax.attention built directly, every dim static, some of them 0 (no keys: zeros, as numpy)."""
    bb = rb.BlockBuilder()
    params = {"q": rb.tensor([2, 3, s, d]), "kt": rb.tensor([2, 3, d, t]), "v": rb.tensor([2, 3, t, 4])}
    with bb.function("main", params) as a:
        with bb.dataflow():
            out = bb.emit_output(R.attention(a[0], a[1], a[2], None, 0.5, causal=False))
        bb.ret(out)
    f = relax_mlir.compile(bb.module, opt_level=3)["main"]
    rng = np.random.default_rng(0)
    q, kt, v = (rng.standard_normal(x, np.float32) for x in ((2, 3, s, d), (2, 3, d, t), (2, 3, t, 4)))
    scores = q @ kt * 0.5
    p = np.exp(scores - scores.max(-1, keepdims=True, initial=-np.inf))
    want = (p / np.maximum(p.sum(-1, keepdims=True), 1e-30)) @ v
    np.testing.assert_allclose(f(q, kt, v), want, rtol=1e-5, atol=1e-6)


def test_only_f32_operands() -> None:
    bb = rb.BlockBuilder()
    params = {
        "q": rb.tensor([1, 1, 2, 4], "f16"),
        "kt": rb.tensor([1, 1, 4, 2], "f16"),
        "v": rb.tensor([1, 1, 2, 4], "f16"),
    }
    with pytest.raises(ShapeError, match="must be f32, got f16"):
        with bb.function("main", params) as a, bb.dataflow():
            R.attention(a[0], a[1], a[2], None, 0.5)


def test_head_dim_0_is_a_shape_error_and_stays_unfused() -> None:
    """A static 0 head dim would need slices at offset 0 of a 0 dim, which MLIR rejects: the op refuses
    it and the pass leaves such a chain to the unfused ops."""
    bb = rb.BlockBuilder()
    params = {"q": rb.tensor([1, 1, 4, 0]), "kt": rb.tensor([1, 1, 0, 5]), "v": rb.tensor([1, 1, 5, 3])}
    with pytest.raises(ShapeError, match="head dim"):
        with bb.function("main", params) as a, bb.dataflow():
            R.attention(a[0], a[1], a[2], None, 0.5)
    bb = rb.BlockBuilder()
    with bb.function("main", params) as a:
        with bb.dataflow():
            out = bb.emit_output(R.matmul(R.softmax(R.matmul(a[0], a[1]), axis=-1), a[2]))
        bb.ret(out)
    assert fuse_attention(bb.module.operation) == 0
    f = relax_mlir.compile(bb.module, opt_level=3)["main"]
    v = np.arange(15, dtype=np.float32).reshape(1, 1, 5, 3)
    got = f(np.zeros((1, 1, 4, 0), np.float32), np.zeros((1, 1, 0, 5), np.float32), v)
    np.testing.assert_allclose(got, np.broadcast_to(v.mean(2, keepdims=True), (1, 1, 4, 3)), rtol=1e-6)


STATIC_ATTENTION = """
import numpy as np
import relax_mlir, relax_mlir.builder as rb
from relax_mlir.dialects import relax as R
s, t, d, e = {dims}
bb = rb.BlockBuilder()
params = {{"q": rb.tensor([2, 3, s, d]), "kt": rb.tensor([2, 3, d, t]), "v": rb.tensor([2, 3, t, e]),
          "mask": rb.tensor([s, t], "i1")}}
with bb.function("main", params) as a:
    with bb.dataflow():
        out = bb.emit_output(R.attention(a[0], a[1], a[2], a[3], 0.5, -1e9, causal=s <= t))
    bb.ret(out)
f = relax_mlir.compile(bb.module, opt_level={level})["main"]
rng = np.random.default_rng(0)
q, kt, v = (rng.standard_normal(x, np.float32) for x in ((2, 3, s, d), (2, 3, d, t), (2, 3, t, e)))
mask = rng.random((s, t)) < 0.7
mask[:, 0] = True
scores = np.where(mask, q @ kt * 0.5, -1e9)
if s <= t:
    scores = np.where(np.arange(t)[None] <= np.arange(s)[:, None] + t - s, scores, -np.inf)
p = np.exp(scores - scores.max(-1, keepdims=True))
print(np.abs(f(q, kt, v, mask) - (p / p.sum(-1, keepdims=True)) @ v).max())
"""


@pytest.mark.parametrize("dims", [(1, 1, 1, 4), (5, 7, 8, 4), (5, 7, 1, 4), (5, 7, 8, 1), (33, 129, 8, 4)])
@pytest.mark.parametrize("level", [1, 3])
def test_static_shapes_compile_and_match_numpy(dims: tuple[int, ...], level: int) -> None:
    """Static sizes fold the blocks' sizes into static tiles: two static matmuls and small static
    reductions in one kernel (once a segfault in the matmul schedule, then an unlowered multi_reduction)."""
    outcome = run_isolated(STATIC_ATTENTION.format(dims=dims, level=level))
    assert outcome.returncode == 0, outcome.stderr
    assert float(outcome.last_line) < 1e-5

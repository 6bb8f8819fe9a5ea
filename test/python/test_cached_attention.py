"""relax.cached_attention against numpy: prefill (several queries, split into blocks of queries over all
cores) and decode (one query, in place), at batch and cache sizes including 0, 1 and odd ones."""

from __future__ import annotations

import numpy as np
import pytest

import relax_mlir
import relax_mlir.builder as rb
from relax_mlir.dialects import relax as R
from relax_mlir.dialects.ops.kv_cache import QUERY_BLOCK


def _module(heads: int, kv_heads: int, dim: int, seq: str | int = "seq"):  # noqa: ANN202
    bb = rb.BlockBuilder()
    cache = rb.tensor([f"kv_len + {seq}", "b", kv_heads, dim])
    params = {"q": rb.tensor(["b", seq, heads, dim]), "k": cache, "v": cache, "kv_len": rb.prim("kv_len")}
    bounds = {"b": 4, "kv_len": 1024} | ({seq: 1024} if isinstance(seq, str) else {})
    with bb.function("main", params, upper_bounds=bounds) as a:
        with bb.dataflow():
            out = bb.emit_output(R.cached_attention(a[0], a[1], a[2]))
        bb.ret(out)
    return bb.module


def _reference(q: np.ndarray, k: np.ndarray, v: np.ndarray, past: int) -> np.ndarray:
    b, s, h, d = q.shape
    group = h // k.shape[2]
    out = np.zeros(q.shape)
    for bi in range(b):
        for hi in range(h):
            kv = hi // group
            scores = q[bi, :, hi].astype(np.float64) @ k[:, bi, kv].T.astype(np.float64) / np.sqrt(d)
            visible = np.arange(k.shape[0])[None, :] <= np.arange(s)[:, None] + past
            scores = np.where(visible, scores, -np.inf)
            p = np.exp(scores - scores.max(-1, keepdims=True))
            out[bi, :, hi] = (p / p.sum(-1, keepdims=True)) @ v[:, bi, kv]
    return out


@pytest.fixture(scope="module")
def prefill():  # noqa: ANN201
    return relax_mlir.compile(_module(6, 2, 8), opt_level=3)["main"]


@pytest.mark.parametrize(
    ("batch", "seq", "past"),
    [
        (1, 0, 3),
        (1, 1, 0),
        (2, 3, 2),
        (3, 17, 5),
        (1, QUERY_BLOCK, 0),
        (2, QUERY_BLOCK + 1, 7),
        (1, 2 * QUERY_BLOCK + 5, 0),
    ],
)
def test_prefill_matches_numpy(prefill, batch: int, seq: int, past: int) -> None:  # noqa: ANN001
    rng = np.random.default_rng(seq + past)
    q = rng.standard_normal((batch, seq, 6, 8), np.float32)
    k, v = (rng.standard_normal((past + seq, batch, 2, 8), np.float32) for _ in range(2))
    np.testing.assert_allclose(prefill(q, k, v, past), _reference(q, k, v, past), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("threads", [1, 2])
def test_prefill_llm_shapes_at_each_thread_count(monkeypatch, threads: int) -> None:  # noqa: ANN001
    """The benchmark model's heads (12 queries on 4 KV heads, dim 64), split over 1 and 2 threads."""
    monkeypatch.setenv("RELAX_MLIR_NUM_THREADS", str(threads))
    f = relax_mlir.compile(_module(12, 4, 64), opt_level=3)["main"]
    rng = np.random.default_rng(threads)
    q = rng.standard_normal((2, 131, 12, 64), np.float32)
    k, v = (rng.standard_normal((140, 2, 4, 64), np.float32) for _ in range(2))
    np.testing.assert_allclose(f(q, k, v, 9), _reference(q, k, v, 9), rtol=1e-5, atol=1e-5)


def test_decode_matches_numpy() -> None:
    f = relax_mlir.compile(_module(6, 2, 8, seq=1), opt_level=3)["main"]
    rng = np.random.default_rng(0)
    for batch, past in [(1, 0), (3, 6)]:
        q = rng.standard_normal((batch, 1, 6, 8), np.float32)
        k, v = (rng.standard_normal((past + 1, batch, 2, 8), np.float32) for _ in range(2))
        np.testing.assert_allclose(f(q, k, v, past), _reference(q, k, v, past), rtol=1e-5, atol=1e-5)


def test_prefill_with_static_shapes_compiles() -> None:
    """Static sizes make both matmuls of a query block static: the matmul schedule once freed the second
    while vectorizing the kernel for the first (a segfault at O1+)."""
    from isolated import run_isolated

    outcome = run_isolated(
        """
        import numpy as np
        import relax_mlir, relax_mlir.builder as rb
        from relax_mlir.dialects import relax as R
        bb = rb.BlockBuilder()
        params = {"q": rb.tensor([1, 5, 6, 8]), "k": rb.tensor([9, 1, 2, 8]), "v": rb.tensor([9, 1, 2, 8])}
        with bb.function("main", params) as a:
            with bb.dataflow():
                out = bb.emit_output(R.cached_attention(a[0], a[1], a[2]))
            bb.ret(out)
        f = relax_mlir.compile(bb.module, opt_level=3)["main"]
        print(f(*(np.ones(x, np.float32) for x in ((1, 5, 6, 8), (9, 1, 2, 8), (9, 1, 2, 8)))).mean())
        """
    )
    assert outcome.returncode == 0, outcome.stderr
    assert float(outcome.last_line) == 1.0


@pytest.mark.parametrize(("heads", "kv_heads", "dim"), [(12, 4, 64), (5, 5, 3), (4, 1, 16)])
def test_decode_one_pass_matches_numpy(heads: int, kv_heads: int, dim: int) -> None:
    """Decode's one pass over the cache (online softmax, every head of a row at once) at batch 0, 1, 3, 4
    and caches of 1 to 300 rows (batch 4's rows are 4 KiB apart at the benchmark model's heads)."""
    f = relax_mlir.compile(_module(heads, kv_heads, dim, seq=1), opt_level=3)["main"]
    rng = np.random.default_rng(heads + dim)
    for batch, past in [(0, 3), (1, 0), (1, 1), (3, 17), (4, 128), (4, 299)]:
        q = rng.standard_normal((batch, 1, heads, dim), np.float32)
        k, v = (rng.standard_normal((past + 1, batch, kv_heads, dim), np.float32) for _ in range(2))
        np.testing.assert_allclose(f(q, k, v, past), _reference(q, k, v, past), rtol=1e-5, atol=1e-5)


def test_decode_kernel_reads_rows_as_vectors() -> None:
    """The decode kernel is one loop over cache rows reading each head's keys and values as one vector,
    with no linalg contraction left (those ran scalar, striding over rows)."""
    stages: dict[str, str] = {}
    relax_mlir.compile(
        _module(12, 4, 64, seq=1),
        opt_level=3,
        use_cache=False,
        on_stage=lambda n, t: stages.__setitem__(n, t),
    )
    kernel = stages["host"].split("func.func private @cached_attention")[1].split("func.func")[0]
    assert "linalg.generic" not in kernel
    assert kernel.count("vector.transfer_read") == 12 + 2 * 4  # the queries, then each KV head's row
    assert "vector.reduction <add>" in kernel and "fastmath<reassoc>" in kernel

"""The Llama-style model: prefill/decode with an in-place KV cache against the numpy reference."""

from __future__ import annotations

import numpy as np
import pytest

from relax_mlir.errors import InputError
from relax_mlir.llm import (
    CausalLM,
    LanguageModel,
    LlamaConfig,
    load_safetensors,
    random_weights,
    reference,
    save_safetensors,
)
from relax_mlir.llm.generate import sample
from relax_mlir.transforms.schedules import host_vector_unit

CFG = LlamaConfig(
    vocab_size=101, hidden_size=48, layers=2, heads=6, kv_heads=2, ffn_size=80, max_context=192, max_batch=4
)


@pytest.fixture(scope="module")
def weights() -> dict[str, np.ndarray]:
    return random_weights(CFG, seed=1, scale=0.15)


@pytest.fixture(scope="module")
def lm(weights: dict[str, np.ndarray]) -> LanguageModel:
    return LanguageModel(CFG, weights)


def _tokens(batch: int, seq: int, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).integers(0, CFG.vocab_size, (batch, seq))


def _close(actual: np.ndarray, expected: np.ndarray) -> None:
    np.testing.assert_allclose(actual, expected, rtol=1e-4, atol=1e-4 * np.abs(expected).max())


@pytest.mark.parametrize("batch, seq", [(1, 1), (2, 7), (1, 128), (3, 16)])
def test_prefill_logits_match_reference(lm: LanguageModel, weights: dict, batch: int, seq: int) -> None:
    tokens = _tokens(batch, seq, seed=seq)
    cache = lm.new_cache(batch)
    logits = lm.prefill(tokens, cache)
    assert logits.shape == (batch, seq, CFG.vocab_size)
    _close(logits, reference.forward(CFG, weights, tokens))
    assert cache.length == seq


@pytest.mark.parametrize("batch, seq, past", [(1, 1, 0), (2, 7, 0), (1, 5, 12)])
def test_prefill_last_only_is_the_last_row(
    lm: LanguageModel, weights: dict, batch: int, seq: int, past: int
) -> None:
    """``last_only`` runs ``prefill_last`` (the LM head on the last token only), after a cached prefix too."""
    tokens = _tokens(batch, past + seq, seed=seq)
    cache = lm.new_cache(batch)
    if past:
        lm.prefill(tokens[:, :past], cache)
    logits = lm.prefill(tokens[:, past:], cache, last_only=True)
    assert logits.shape == (batch, CFG.vocab_size)
    _close(logits, reference.forward(CFG, weights, tokens)[:, -1])
    assert cache.length == past + seq
    with pytest.raises(InputError, match="last_only needs at least one token"):
        lm.prefill(np.zeros((batch, 0), np.int64), lm.new_cache(batch), last_only=True)


def test_32_decode_steps_match_reference_and_greedy_tokens(lm: LanguageModel, weights: dict) -> None:
    prompt = _tokens(2, 5, seed=3)
    cache = lm.new_cache(2)
    logits = lm.prefill(prompt, cache)[:, -1]
    seq = prompt
    for _ in range(32):
        token = logits.argmax(-1)
        expected = reference.forward(CFG, weights, seq)[:, -1]
        _close(logits, expected)
        assert (token == expected.argmax(-1)).all()
        seq = np.concatenate([seq, token[:, None]], axis=1)
        logits = lm.decode(token, cache)
    assert cache.length == 5 + 32
    generated = lm.generate(prompt, 32)
    np.testing.assert_array_equal(generated, seq[:, 5:])


def test_chunked_prefill_continues_the_cache(lm: LanguageModel, weights: dict) -> None:
    tokens = _tokens(1, 20, seed=9)
    cache = lm.new_cache(1)
    lm.prefill(tokens[:, :12], cache)
    logits = lm.prefill(tokens[:, 12:], cache)
    _close(logits, reference.forward(CFG, weights, tokens)[:, 12:])


def test_matmul_weights_are_packed_once_for_both_functions(lm: LanguageModel) -> None:
    """Every linear weight is bound as panels packed at load ([np, k, lanes]: one vector register of this
    machine wide), one copy shared by prefill and decode; the raw linear weights are not kept. Norms and the
    embedding are bound as given."""
    values = lm.params.values
    linear = [n for n in CausalLM(CFG).weights() if n.endswith("proj.weight") or n == "lm_head.weight"]
    assert not set(linear) & set(values)
    packed = {n: v for n, v in values.items() if ":lifted" in n}
    assert {n.split(":")[0] for n in packed} == set(linear)
    lanes = host_vector_unit().lanes
    assert all(v.ndim == 3 and v.shape[2] == lanes for v in packed.values())
    assert values["model.embed_tokens.weight"].shape == (CFG.vocab_size, CFG.hidden_size)
    assert lm.params["prefill"].function.load_time == lm.params["decode"].function.load_time


def test_cache_is_written_in_place(lm: LanguageModel) -> None:
    cache = lm.new_cache(1)
    lm.prefill(_tokens(1, 4), cache)
    assert np.abs(cache.keys[0][:4]).sum() > 0 and np.abs(cache.values[1][:4]).sum() > 0
    assert not cache.keys[0][4:].any()  # rows past the context are untouched
    before = cache.keys[1][:4].copy()
    lm.decode(np.array([3]), cache)
    np.testing.assert_array_equal(cache.keys[1][:4], before)
    assert cache.keys[1][4].any()


def test_memory_stays_flat_over_a_long_generation(lm: LanguageModel) -> None:
    def rss_mib() -> float:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * 4096 / 2**20

    cache = lm.new_cache(1)
    logits = lm.prefill(_tokens(1, 2), cache)[:, -1]
    for _ in range(20):
        logits = lm.decode(logits.argmax(-1), cache)
    start = rss_mib()
    for _ in range(160):
        logits = lm.decode(logits.argmax(-1), cache)
    assert cache.length == 182
    assert rss_mib() - start < 4.0


def test_context_beyond_the_bound_is_a_clear_error(lm: LanguageModel) -> None:
    cache = lm.new_cache(1)
    with pytest.raises(InputError, match="exceeds the model's maximum context 192"):
        lm.prefill(_tokens(1, 193), cache)
    lm.prefill(_tokens(1, 192), cache)
    with pytest.raises(InputError, match=r"context of 193 tokens \(192 cached \+ 1 new\)"):
        lm.decode(np.array([1]), cache)


def test_bad_inputs_are_clear_errors(lm: LanguageModel) -> None:
    with pytest.raises(InputError, match="batch 5 is outside 1..4"):
        lm.new_cache(5)
    cache = lm.new_cache(2)
    with pytest.raises(InputError, match="tokens have batch 1, the cache has 2"):
        lm.prefill(_tokens(1, 3), cache)
    with pytest.raises(InputError, match="token ids must be in 0..100"):
        lm.prefill(np.full((2, 3), 101), cache)
    with pytest.raises(InputError, match="symbol 'kv_len' is -1"):
        lm.params["decode"](np.zeros((2, 1), np.int64), -1, *cache.views(0))
    with pytest.raises(InputError, match="updated in place"):
        views = cache.views(3)
        views[0] = views[0][:, ::-1]  # not contiguous: a copy would lose the update
        lm.params["prefill"](np.zeros((2, 3), np.int64), 0, *views)


def test_safetensors_round_trip(tmp_path, weights: dict) -> None:  # noqa: ANN001
    path = tmp_path / "model.safetensors"
    save_safetensors(weights, path)
    from safetensors.numpy import load_file  # noqa: PLC0415

    raw = load_file(str(path))
    assert raw["model.layers.0.self_attn.q_proj.weight"].shape == (48, 48)  # HF layout [out, in]
    assert raw["model.layers.0.mlp.up_proj.weight"].shape == (80, 48)
    loaded = load_safetensors(CFG, path)
    for name, w in weights.items():
        np.testing.assert_array_equal(loaded[name], w)
    del raw["model.norm.weight"]
    from safetensors.numpy import save_file  # noqa: PLC0415

    save_file(raw, str(path))
    with pytest.raises(InputError, match="missing \\['model.norm.weight'\\]"):
        load_safetensors(CFG, path)


def test_sampling() -> None:
    rng = np.random.default_rng(0)
    logits = rng.standard_normal((3, 50))
    np.testing.assert_array_equal(sample(logits, 1.0, 1, rng), logits.argmax(-1))
    top3 = np.argsort(logits, -1)[:, -3:]
    for _ in range(20):
        picked = sample(logits, 2.0, 3, rng)
        assert all(p in row for p, row in zip(picked, top3))
    a = sample(logits, 0.7, None, np.random.default_rng(5))
    b = sample(logits, 0.7, None, np.random.default_rng(5))
    np.testing.assert_array_equal(a, b)
    with pytest.raises(InputError, match="temperature must be >= 0"):
        sample(logits, -1.0, None, rng)


def test_generate_with_sampling_is_reproducible(lm: LanguageModel) -> None:
    prompt = _tokens(1, 3)
    a = lm.generate(prompt, 6, temperature=0.8, top_k=5, seed=7)
    b = lm.generate(prompt, 6, temperature=0.8, top_k=5, seed=7)
    np.testing.assert_array_equal(a, b)
    assert a.shape == (1, 6) and a.min() >= 0 and a.max() < CFG.vocab_size

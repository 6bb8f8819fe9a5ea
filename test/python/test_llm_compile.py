"""Compiling the LLM: one decoder layer function called per layer, and the compile cache's fast path."""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pytest

from relax_mlir.context import make_context
from relax_mlir.errors import CacheWarning
from relax_mlir.llm import LanguageModel, LlamaConfig, random_weights, reference
from relax_mlir.llm.modules import CausalLM
from relax_mlir.targets import steps

CFG = LlamaConfig(
    vocab_size=67, hidden_size=32, layers=3, heads=4, kv_heads=2, ffn_size=40, max_context=24, max_batch=2
)


@pytest.fixture
def private_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("RELAX_MLIR_CACHE", str(tmp_path))
    return tmp_path


def _logits(lm: LanguageModel, tokens: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    cache = lm.new_cache(tokens.shape[0])
    return lm.prefill(tokens, cache), lm.decode(tokens[:, -1], cache)


def _expected(weights: dict, tokens: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    prefill = reference.forward(CFG, weights, tokens)
    full = reference.forward(CFG, weights, np.concatenate([tokens, tokens[:, -1:]], axis=1))
    return prefill, full[:, -1]


def _close(actual: np.ndarray, expected: np.ndarray) -> None:
    np.testing.assert_allclose(actual, expected, rtol=1e-4, atol=1e-4 * np.abs(expected).max())


@pytest.mark.parametrize("opt_level", [2, 3])
def test_each_layer_calls_one_decoder_layer_function(opt_level: int) -> None:
    """The layer is a call in the host code at O2/O3 (relax-inline keeps it: its copies would be large)."""
    module = CausalLM(CFG).build()
    text = str(module)
    assert text.count("func.func private @decoder_layer") == 1
    entries = 3  # prefill, prefill_last, decode
    assert text.count("{callee = @decoder_layer}") == entries * CFG.layers
    with make_context():
        op = steps.parse(text)
        steps.run(op, f"relax-O{opt_level}")
        host = str(op)
    assert host.count("call @decoder_layer(") == entries * CFG.layers


@pytest.mark.parametrize("batch, seq", [(1, 1), (2, 5), (1, 23)])
def test_called_layers_match_the_reference(batch: int, seq: int) -> None:
    weights = random_weights(CFG, seed=3, scale=0.2)
    lm = LanguageModel(CFG, weights)
    tokens = np.random.default_rng(seq).integers(0, CFG.vocab_size, (batch, seq))
    for got, want in zip(_logits(lm, tokens), _expected(weights, tokens)):  # seq + 1 <= max_context
        _close(got, want)


def test_second_compile_hits_the_cache_and_skips_every_pass(private_cache: Path) -> None:
    weights = random_weights(CFG, seed=4, scale=0.2)
    tokens = np.array([[3, 1, 4, 1, 5]])
    first = LanguageModel(CFG, weights)
    assert not first.executable.stats.cache_hit
    second = LanguageModel(CFG, weights)
    assert second.executable.stats.cache_hit
    assert "relax to host" not in second.executable.stats.stages  # no pass ran
    for a, b in zip(_logits(first, tokens), _logits(second, tokens)):
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("damage", ["truncated object", "garbage metadata", "no object"])
def test_damaged_cache_entry_is_a_miss_not_a_crash(private_cache: Path, damage: str) -> None:
    weights = random_weights(CFG, seed=5, scale=0.2)
    tokens = np.array([[2, 7, 1, 8], [2, 8, 1, 8]])
    LanguageModel(CFG, weights)
    (obj,) = private_cache.glob("*.o")
    if damage == "truncated object":
        obj.write_bytes(obj.read_bytes()[: obj.stat().st_size // 2])
    elif damage == "garbage metadata":
        obj.with_suffix(".json").write_bytes(b"\x00{not json")
    else:
        obj.unlink()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        lm = LanguageModel(CFG, weights)
    assert not lm.executable.stats.cache_hit
    if damage != "no object":  # a missing object with intact metadata is damage too; all three recompile
        assert any(issubclass(w.category, CacheWarning) for w in caught)
    for got, want in zip(_logits(lm, tokens), _expected(weights, tokens)):
        _close(got, want)
    assert LanguageModel(CFG, weights).executable.stats.cache_hit  # rewritten

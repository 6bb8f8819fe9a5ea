"""GGUF files: save/load round trips per tensor type, models from GGUF vs the float64 reference (prefill logits,
32 greedy tokens), llama.cpp's rope row order, and clear errors for files we cannot run.

Tolerances: see test_quant.py (the reference uses the very weights the model reads: float32 rounding only).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from gguf import GGUFReader
from isolated import expect_error
from test_quant import CFG, close, greedy_reference

from relax_mlir.errors import InputError
from relax_mlir.llm import (
    LanguageModel,
    QuantizedWeight,
    load_gguf,
    quantize,
    random_weights,
    reference,
    save_gguf,
)
from relax_mlir.llm.gguf import rope_order

TYPES = ("F32", "F16", "Q8_0", "Q4_0")


@pytest.fixture(scope="module")
def weights() -> dict[str, np.ndarray]:
    return random_weights(CFG, seed=3, scale=0.15)


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory, weights: dict) -> dict[str, Path]:
    out = {}
    for dtype in TYPES:
        out[dtype] = tmp_path_factory.mktemp("gguf") / f"model-{dtype}.gguf"
        save_gguf(CFG, weights, out[dtype], dtype)
    return out


def _linear(name: str) -> bool:
    return name.endswith("_proj.weight") or name == "lm_head.weight"


@pytest.mark.parametrize("dtype", TYPES)
def test_round_trip(files: dict, weights: dict, dtype: str) -> None:
    reader = GGUFReader(files[dtype])
    types = {t.name: t.tensor_type.name for t in reader.tensors}
    assert types["blk.0.attn_q.weight"] == dtype and types["token_embd.weight"] == dtype
    assert types["output_norm.weight"] == "F32"
    assert reader.fields["tokenizer.ggml.model"].contents() == "none"
    cfg, loaded, tokenizer = load_gguf(files[dtype], max_batch=CFG.max_batch, max_context=CFG.max_context)
    assert cfg == CFG and set(loaded) == set(weights) and tokenizer == {"tokenizer.ggml.model": "none"}
    for name, w in weights.items():
        got = loaded[name]
        if dtype in ("F32", "F16"):
            np.testing.assert_array_equal(
                got,
                w.astype({"F32": np.float32, "F16": np.float16}[dtype]) if w.ndim == 2 else w,
                err_msg=name,
            )
        elif _linear(name):  # the same bits as quantizing the [out, in] weight here
            q = quantize(w.T, dtype.lower())
            assert isinstance(got, QuantizedWeight) and got.layout == dtype.lower(), name
            np.testing.assert_array_equal(got.data, q.data, err_msg=name)
            np.testing.assert_array_equal(got.scales, q.scales, err_msg=name)
        elif w.ndim == 2:  # the embedding is dequantized when loaded
            np.testing.assert_array_equal(got, quantize(w, dtype.lower()).dequantize(), err_msg=name)
        else:
            np.testing.assert_array_equal(got, w, err_msg=name)


def test_quantized_weights_are_written_as_they_are(tmp_path: Path, weights: dict) -> None:
    quantized = {n: quantize(w.T, "q4_0") if _linear(n) else w for n, w in weights.items()}
    save_gguf(CFG, quantized, tmp_path / "q.gguf", "Q4_0")
    _, loaded, _ = load_gguf(tmp_path / "q.gguf")
    name = "model.layers.1.self_attn.k_proj.weight"
    np.testing.assert_array_equal(loaded[name].data, quantized[name].data)


def test_default_context_comes_from_the_file(files: dict) -> None:
    cfg, _, _ = load_gguf(files["F32"])
    assert cfg.max_context == CFG.max_context and cfg.max_batch == 8


# -- llama.cpp's rope order ---------------------------------------------------------------------------------
def _hf_to_gguf_permute(w: np.ndarray, n_head: int) -> np.ndarray:
    """convert_hf_to_gguf.py's LlamaModel.permute (n_head: the kv heads for attn_k)."""
    return w.reshape(n_head, 2, w.shape[0] // n_head // 2, *w.shape[1:]).swapaxes(1, 2).reshape(w.shape)


def _rope_adjacent(x: np.ndarray, pos: int, theta: float) -> np.ndarray:
    """llama.cpp's LLAMA rope on one head vector: pairs (2i, 2i+1) rotated by pos * theta^(-2i/hd)."""
    hd = x.shape[-1]
    angle = pos / theta ** (np.arange(0, hd, 2) / hd)
    a, b = x[0::2], x[1::2]
    out = np.empty_like(x)
    out[0::2], out[1::2] = a * np.cos(angle) - b * np.sin(angle), a * np.sin(angle) + b * np.cos(angle)
    return out


def test_rope_order_is_llama_cpps_permutation_and_makes_its_rope_equal_ours() -> None:
    heads, hd, k = 3, 8, 5
    w = np.random.default_rng(0).standard_normal((heads * hd, k))
    order = rope_order(heads * hd, heads, to_gguf=True)
    np.testing.assert_array_equal(w[order], _hf_to_gguf_permute(w, heads))
    np.testing.assert_array_equal(w[order][rope_order(heads * hd, heads, to_gguf=False)], w)
    # one head: llama.cpp's adjacent-pair rope of the GGUF rows = our rotate-half rope of the HF rows, permuted
    x = np.random.default_rng(1).standard_normal(k)
    q_hf, q_gguf = (w @ x)[:hd], (w[order] @ x)[:hd]
    ours = reference._rope(q_hf[None, None, None, :], np.array([5]), 10000.0)[0, 0, 0]
    np.testing.assert_allclose(_rope_adjacent(q_gguf, 5, 10000.0), ours[order[:hd]], rtol=1e-12, atol=1e-12)


# -- models from GGUF files ---------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", ["F32", "Q8_0", "Q4_0"])
def test_model_from_gguf_matches_reference(files: dict, dtype: str) -> None:
    lm = LanguageModel.from_gguf(
        files[dtype], max_batch=CFG.max_batch, max_context=CFG.max_context, opt_level=1
    )
    assert lm.tokenizer_metadata == {"tokenizer.ggml.model": "none"}
    _, w, _ = load_gguf(files[dtype])
    prompt = np.random.default_rng(7).integers(0, CFG.vocab_size, (2, 5))
    close(lm.prefill(prompt, lm.new_cache(2)), reference.forward(CFG, w, prompt))
    np.testing.assert_array_equal(lm.generate(prompt, 32), greedy_reference(CFG, w, prompt, 32))


# -- errors -------------------------------------------------------------------------------------------------
def _patched(src: Path, dst: Path, old: bytes, new: bytes) -> Path:
    """``src`` with the one occurrence of ``old`` replaced by ``new`` (same length)."""
    data = src.read_bytes()
    assert len(old) == len(new) and data.count(old) == 1, old
    dst.write_bytes(data.replace(old, new))
    return dst


def _name(s: str) -> bytes:
    """A GGUF string: u64 length, then the bytes."""
    return len(s).to_bytes(8, "little") + s.encode()


def test_missing_output_ties_the_lm_head_to_the_embedding(tmp_path: Path, files: dict) -> None:
    path = _patched(files["Q8_0"], tmp_path / "tied.gguf", _name("output.weight"), _name("outpuX.weight"))
    _, w, _ = load_gguf(path)
    np.testing.assert_array_equal(w["lm_head.weight"].dequantize(), w["model.embed_tokens.weight"])


def test_errors_name_the_problem(tmp_path: Path, files: dict) -> None:
    src = files["F32"]
    data = src.read_bytes()
    cases = {
        "truncated": (data[: len(data) // 2], "not a readable GGUF file"),
        "header": (data[:10], "not a readable GGUF file"),
        "magic": (b"GGML" + data[4:], "not a readable GGUF file"),
    }
    for label, (content, message) in cases.items():
        (tmp_path / label).write_bytes(content)
        with pytest.raises(InputError, match=message):
            load_gguf(tmp_path / label)
    with pytest.raises(InputError, match="not a readable GGUF file"):
        load_gguf(tmp_path / "absent.gguf")
    arch = _name("general.architecture") + (8).to_bytes(4, "little") + _name("llama")
    wrong = arch[:-5] + b"bloom"
    with pytest.raises(InputError, match="architecture 'bloom' is not supported"):
        load_gguf(_patched(src, tmp_path / "arch.gguf", arch, wrong))
    with pytest.raises(InputError, match=r"tensor\(s\) \['blk.1.ffn_up.weight'\] missing"):
        load_gguf(_patched(src, tmp_path / "missing.gguf", _name("blk.1.ffn_up.weight"), _name("blk.1.ffn_uX.weight")))
    # blk.0.attn_q's type (after its name, n_dims and two dims) F32 (0) -> Q4_1 (3)
    info = _name("blk.0.attn_q.weight") + (2).to_bytes(4, "little") + (64).to_bytes(8, "little") * 2
    with pytest.raises(
        InputError, match="tensor 'blk.0.attn_q.weight' .* has type Q4_1; supported: F32, F16, Q8_0, Q4_0"
    ):
        load_gguf(_patched(src, tmp_path / "type.gguf", info + bytes(4), info + (3).to_bytes(4, "little")))


def _u32_field(key: str, value: int) -> bytes:
    return _name(key) + (4).to_bytes(4, "little") + value.to_bytes(4, "little")


def test_corrupt_metadata_and_shapes_are_input_errors(tmp_path: Path, files: dict) -> None:
    """Found by flipping bytes: a huge block count (it made a name per block before failing: a hang), a
    tensor whose shape disagrees with the metadata, a string that is not UTF-8."""
    src = files["Q4_0"]
    path = _patched(
        src,
        tmp_path / "blocks.gguf",
        _u32_field("llama.block_count", 2),
        _u32_field("llama.block_count", 2**31),
    )
    expect_error(
        f"from relax_mlir.llm import load_gguf; load_gguf({str(path)!r})",
        "InputError",
        match="block_count 2147483648 needs 9 tensors per block, but the file has 21 tensors in all",
        timeout=60,
    )
    # llama.embedding_length 64 -> 96: the tensors no longer fit
    path = _patched(
        src,
        tmp_path / "embd.gguf",
        _u32_field("llama.embedding_length", 64),
        _u32_field("llama.embedding_length", 96),
    )
    with pytest.raises(
        InputError, match=r"tensor 'token_embd.weight' \(model.embed_tokens.weight\) has shape \[80, 64\], "
    ):
        load_gguf(path)
    value = _name("tokenizer.ggml.model") + (8).to_bytes(4, "little") + _name("none")
    path = _patched(src, tmp_path / "utf8.gguf", value, value[:-4] + b"\xcd\xcd\xcd\xcd")
    with pytest.raises(InputError, match="metadata 'tokenizer.ggml.model' cannot be read"):
        load_gguf(path)

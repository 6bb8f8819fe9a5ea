"""Quantized weights: numpy quantization (llama.cpp's bits), their checks, and quantized LLMs vs the reference.

Tolerance of the model tests: the compiled model and the float64 reference use the same dequantized weights,
exactly: a value (q - zero) * scale with |q - zero| <= 128 and an f16 scale has at most 19 significant bits,
so it is exact in float32. What remains is float32 rounding of the activations, the same as for the fp32
model in test_llm.py, hence its tolerance (rtol 1e-4, atol 1e-4 * max |logit|).
"""

from __future__ import annotations

import numpy as np
import pytest
from gguf import GGMLQuantizationType
from gguf import quants as gguf_quants

from relax_mlir.dialects.ops.dequantize import LAYOUTS as OP_LAYOUTS
from relax_mlir.dialects.ops.dequantize_matmul import host_vectors
from relax_mlir.errors import InputError
from relax_mlir.llm import LanguageModel, LlamaConfig, QuantizedWeight, quantize, random_weights, reference
from relax_mlir.llm.quant import LAYOUTS, from_gguf_blocks
from relax_mlir.llm.weights import check_weights

# hidden, heads * head_dim and ffn are multiples of 32 (the group size); shared with test_gguf.py
CFG = LlamaConfig(
    vocab_size=80, hidden_size=64, layers=2, heads=4, kv_heads=2, ffn_size=96, max_context=64, max_batch=2
)
GGML = {"q4_0": GGMLQuantizationType.Q4_0, "q8_0": GGMLQuantizationType.Q8_0}


def close(actual: np.ndarray, expected: np.ndarray) -> None:
    np.testing.assert_allclose(actual, expected, rtol=1e-4, atol=1e-4 * np.abs(expected).max())


def greedy_reference(cfg: LlamaConfig, weights: dict, prompt: np.ndarray, steps: int) -> np.ndarray:
    seq = prompt
    for _ in range(steps):
        seq = np.concatenate([seq, reference.forward(cfg, weights, seq)[:, -1].argmax(-1)[:, None]], axis=1)
    return seq[:, prompt.shape[1] :]


@pytest.mark.parametrize("rows, k", [(0, 32), (1, 32), (7, 96), (16, 64)])
@pytest.mark.parametrize("layout", ["q4_0", "q8_0"])
def test_quantize_has_llama_cpp_bits(layout: str, rows: int, k: int) -> None:
    w = np.random.default_rng(rows + k).standard_normal((rows, k)).astype(np.float32)
    w[:1, :32] = 0.0  # an all-zero group: scale 0
    blocks = gguf_quants.quantize(w, GGML[layout])
    q = quantize(w, layout)
    assert q.shape == (rows, k) and q.data.dtype == LAYOUTS[layout][0] and q.scales.dtype == np.float16
    np.testing.assert_array_equal(q.to_gguf_blocks(), blocks)
    if rows:  # gguf.quants cannot dequantize zero rows
        np.testing.assert_array_equal(q.dequantize(), gguf_quants.dequantize(blocks, GGML[layout]))
    assert q.dequantize().shape == (rows, k)
    back = from_gguf_blocks(blocks, layout)
    np.testing.assert_array_equal(back.data, q.data)
    np.testing.assert_array_equal(back.scales, q.scales)


def test_q4f16_1_quantization_error_is_within_half_a_step() -> None:
    w = np.random.default_rng(0).standard_normal((9, 64)).astype(np.float32)
    q = quantize(w, "q4f16_1")
    assert q.data.dtype == np.uint32 and q.data.shape == (9, 8)
    step = np.repeat(q.scales.astype(np.float32), 32, axis=1)
    assert np.all(np.abs(q.dequantize() - w) <= 0.5 * step * (1 + 1e-3) + 1e-3 * np.abs(w))
    # word w holds values 8w..8w+7 at bits 4 * (i % 8)
    nibbles = (q.data[:, :, None] >> (np.arange(8, dtype=np.uint32) * 4)) & 15
    np.testing.assert_array_equal(q.dequantize(), (nibbles.reshape(9, 64) - 7.0) * step)


def test_layouts_agree_with_the_op() -> None:
    assert {n: (np.dtype(d), p, z) for n, (d, p, z) in LAYOUTS.items()} == {
        n: (np.dtype({"i8": np.int8, "ui8": np.uint8, "ui32": np.uint32}[d]), p, z)
        for n, (d, p, z) in OP_LAYOUTS.items()
    }


def test_quantize_errors() -> None:
    with pytest.raises(InputError, match="k a multiple of 32"):
        quantize(np.zeros((2, 40), np.float32), "q4_0")
    with pytest.raises(InputError, match="unknown quantization layout 'q3'"):
        quantize(np.zeros((2, 32), np.float32), "q3")


def test_check_weights_validates_quantized_entries() -> None:
    w = random_weights(CFG)
    name = "model.layers.0.self_attn.q_proj.weight"
    good = quantize(w[name].T, "q4_0")
    check_weights(CFG, {**w, name: good})
    bad = {
        "has shape \\(64, 32\\) \\(\\[out, in\\]\\), expected \\(64, 64\\)": quantize(
            w[name].T[:, :32], "q4_0"
        ),
        "data must be uint8 and scales float16 or float32, got int8": QuantizedWeight(
            "q4_0", good.data.view(np.int8), good.scales
        ),
        "need data \\[rows, groups \\* 16\\], got scales \\(64, 2\\) and data \\(64, 16\\)": QuantizedWeight(
            "q4_0", good.data[:, :16], good.scales
        ),
        "unknown layout 'q2'": QuantizedWeight("q2", good.data, good.scales),
    }
    for message, q in bad.items():
        with pytest.raises(InputError, match=f"weight '{name}'.*{message}"):
            check_weights(CFG, {**w, name: q})
    with pytest.raises(InputError, match="'model.norm.weight' is quantized, but only linear weights may be"):
        check_weights(CFG, {**w, "model.norm.weight": good})


@pytest.fixture(scope="module")
def fp32() -> LanguageModel:
    return LanguageModel(CFG, random_weights(CFG, seed=2, scale=0.15), opt_level=1)


@pytest.mark.parametrize("layout", ["q8_0", "q4_0", "q4f16_1"])
def test_quantized_model_matches_reference(fp32: LanguageModel, layout: str) -> None:
    lm = fp32.quantize(layout)
    if layout == "q8_0":  # f32 scales: the scales parameters are f32
        weights = {
            n: QuantizedWeight(w.layout, w.data, w.scales.astype(np.float32))
            if isinstance(w, QuantizedWeight)
            else w
            for n, w in lm.weights.items()
        }
        lm = LanguageModel(CFG, weights, opt_level=1)
        assert "tensor<[80, 2], f32>" in str(lm.module)
    for name, w in lm.weights.items():
        linear = name.endswith("_proj.weight") or name == "lm_head.weight"
        assert isinstance(w, QuantizedWeight) == linear, name
    prompt = np.random.default_rng(5).integers(0, CFG.vocab_size, (2, 6))
    close(lm.prefill(prompt, lm.new_cache(2)), reference.forward(CFG, lm.weights, prompt))
    # the weights really are quantized: the fp32 model's logits differ from these
    assert not np.allclose(
        fp32.prefill(prompt, fp32.new_cache(2)), reference.forward(CFG, lm.weights, prompt)
    )
    if layout == "q4_0":
        np.testing.assert_array_equal(lm.generate(prompt, 32), greedy_reference(CFG, lm.weights, prompt, 32))


def test_quantize_needs_group_multiples() -> None:
    cfg = LlamaConfig(
        vocab_size=16, hidden_size=48, layers=1, heads=2, kv_heads=2, ffn_size=64, max_context=8
    )
    lm = LanguageModel.__new__(LanguageModel)  # only the weights are needed: no compile
    lm.cfg, lm.weights, lm.opt_level, lm.tokenizer_metadata = cfg, random_weights(cfg), 0, {}
    with pytest.raises(InputError, match="'model.layers.0.self_attn.q_proj.weight'.*multiple of 32"):
        lm.quantize("q8_0")


def test_safetensors_of_quantized_weights_holds_their_dequantized_values(tmp_path) -> None:  # noqa: ANN001
    from relax_mlir.llm import load_safetensors, save_safetensors

    w = random_weights(CFG)
    name = "model.layers.1.mlp.down_proj.weight"
    q = quantize(w[name].T, "q4_0")
    save_safetensors({**w, name: q}, tmp_path / "m.safetensors")
    loaded = load_safetensors(CFG, tmp_path / "m.safetensors")
    np.testing.assert_array_equal(loaded[name], q.dequantize().T)
    np.testing.assert_array_equal(loaded["model.norm.weight"], w["model.norm.weight"])


@pytest.mark.parametrize("layout", ["q4_0", "q8_0"])
def test_int8_activations_at_decode_stay_close_to_f32(layout: str) -> None:
    """``activations="i8"`` (llama.cpp's numerics) rounds each group of 32 activations of a matmul with at
    most 4 rows to int8: logits stay within 5% of the largest logit of the f32-activation model's."""
    lm = LanguageModel(CFG, random_weights(CFG, seed=3), opt_level=1).quantize(layout)
    lm8 = LanguageModel(CFG, random_weights(CFG, seed=3), opt_level=1, activations="i8").quantize(layout)
    assert lm8.activations == "i8"
    prompt = np.array([[5, 17, 3, 60], [1, 2, 3, 4]])
    caches = lm.new_cache(2), lm8.new_cache(2)
    pairs = [(lm8.prefill(prompt, caches[1]), lm.prefill(prompt, caches[0]))]
    for token in ([7, 79], [0, 1]):
        pairs.append((lm8.decode(np.array(token), caches[1]), lm.decode(np.array(token), caches[0])))
    for got, expected in pairs:
        np.testing.assert_allclose(got, expected, atol=0.05 * np.abs(expected).max())
    if host_vectors().dot is None:  # no VNNI on this host: "i8" runs the f32 kernels (documented)
        assert np.array_equal(pairs[1][0], pairs[1][1])
    else:
        assert not np.array_equal(pairs[1][0], pairs[1][1])  # the int8 path ran at decode


def test_activations_must_be_known() -> None:
    with pytest.raises(InputError, match="activations must be one of f32, i8"):
        LanguageModel(CFG, random_weights(CFG), activations="i4")

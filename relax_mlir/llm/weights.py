"""Model weights: random initialization for tests, and safetensors files (HF Llama names and layouts).

Weights are float32 numpy arrays keyed by the model's dotted names (``CausalLM.weights()``). Linear
weights are ``[in, out]`` here; HF checkpoints store ``[out, in]``, so loading and saving transpose them.
A linear weight may instead be a ``QuantizedWeight`` (``relax_mlir.llm.quant``), ``[out, in]`` like GGUF's.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
from safetensors.numpy import load_file, save_file

from relax_mlir.errors import InputError
from relax_mlir.llm.modules import CausalLM, LlamaConfig
from relax_mlir.llm.quant import QuantizedWeight

Weight = np.ndarray | QuantizedWeight


def is_linear(name: str) -> bool:
    return name.endswith("_proj.weight") or name == "lm_head.weight"


def random_weights(cfg: LlamaConfig, seed: int = 0, scale: float = 0.02) -> dict[str, np.ndarray]:
    """Normal(0, scale) weights (norm weights near 1), reproducible from ``seed``."""
    rng = np.random.default_rng(seed)
    out = {}
    for name, shape in CausalLM(cfg).weights().items():
        if name.endswith("layernorm.weight") or name == "model.norm.weight":
            out[name] = (1.0 + 0.1 * rng.standard_normal(shape)).astype(np.float32)
        else:
            out[name] = (scale * rng.standard_normal(shape)).astype(np.float32)
    return out


def check_weights(cfg: LlamaConfig, weights: dict[str, Weight]) -> dict[str, Weight]:
    """``weights`` as contiguous float32 arrays (quantized linear weights checked and kept); InputError naming
    any missing, extra, misshapen or ill-typed one."""
    expected = CausalLM(cfg).weights()
    missing = sorted(set(expected) - set(weights))
    extra = sorted(set(weights) - set(expected))
    if missing or extra:
        raise InputError(f"weights do not match the config: missing {missing[:5]}, unexpected {extra[:5]}")
    out = {}
    for name, shape in expected.items():
        if isinstance(weights[name], QuantizedWeight):
            if not is_linear(name):
                raise InputError(f"weight '{name}' is quantized, but only linear weights may be")
            out[name] = weights[name].check(name, (shape[1], shape[0]))
            continue
        w = np.asarray(weights[name])
        if w.shape != shape:
            raise InputError(f"weight '{name}' has shape {w.shape}, expected {shape}")
        out[name] = np.ascontiguousarray(w, dtype=np.float32)
    return out


def save_safetensors(weights: dict[str, Weight], path: str | Path) -> None:
    """Write ``weights`` as a safetensors file with HF layouts (linear weights ``[out, in]``; quantized ones
    dequantized: safetensors has no group-quantized type)."""
    save_file(
        {
            n: w.dequantize()
            if isinstance(w, QuantizedWeight)
            else np.ascontiguousarray(w.T if is_linear(n) else w)
            for n, w in weights.items()
        },
        str(path),
    )


def load_safetensors(cfg: LlamaConfig, path: str | Path) -> dict[str, np.ndarray]:
    """Read a Llama-style safetensors file (HF names; linear weights ``[out, in]``; f32/f16/bf16)."""
    raw = load_file(str(path))
    if "lm_head.weight" not in raw and "model.embed_tokens.weight" in raw:
        raw["lm_head.weight"] = raw["model.embed_tokens.weight"]  # tied embeddings
    weights = {n: (w.T if is_linear(n) else w).astype(np.float32) for n, w in raw.items()}
    return check_weights(cfg, weights)

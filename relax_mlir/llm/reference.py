"""A pure-numpy Llama-style forward pass, written from the model description (no cache, no relax)."""

from __future__ import annotations

import numpy as np

from relax_mlir.llm.modules import LlamaConfig
from relax_mlir.llm.quant import QuantizedWeight


def _rms_norm(x: np.ndarray, w: np.ndarray, eps: float) -> np.ndarray:
    return x / np.sqrt(np.mean(x * x, axis=-1, keepdims=True) + eps) * w


def _rope(x: np.ndarray, positions: np.ndarray, theta: float) -> np.ndarray:
    """Rotate-half rotary embedding of ``x [b, s, heads, hd]`` at ``positions [s]``."""
    hd = x.shape[-1]
    inv_freq = 1.0 / theta ** (np.arange(0, hd, 2, dtype=np.float64) / hd)
    angles = positions[:, None].astype(np.float64) * inv_freq[None, :]
    cos = np.cos(np.concatenate([angles, angles], -1))[None, :, None, :]
    sin = np.sin(np.concatenate([angles, angles], -1))[None, :, None, :]
    x1, x2 = x[..., : hd // 2], x[..., hd // 2 :]
    return x * cos + np.concatenate([-x2, x1], -1) * sin


def forward(cfg: LlamaConfig, w: dict[str, np.ndarray | QuantizedWeight], tokens: np.ndarray) -> np.ndarray:
    """Logits ``[b, s, vocab]`` for the whole sequence ``tokens [b, s]`` (float64 inside; quantized linear
    weights ``[out, in]`` are dequantized and transposed to ``[in, out]``)."""
    w = {
        n: v.dequantize().T.astype(np.float64) if isinstance(v, QuantizedWeight) else v.astype(np.float64)
        for n, v in w.items()
    }
    b, s = tokens.shape
    hd, heads, groups = cfg.head_dim, cfg.heads, cfg.heads // cfg.kv_heads
    x = w["model.embed_tokens.weight"][tokens]
    positions = np.arange(s)
    causal = np.triu(np.ones((s, s), bool), 1)
    for i in range(cfg.layers):
        p = f"model.layers.{i}."
        h = _rms_norm(x, w[p + "input_layernorm.weight"], cfg.eps)
        q = (h @ w[p + "self_attn.q_proj.weight"]).reshape(b, s, heads, hd)
        k = (h @ w[p + "self_attn.k_proj.weight"]).reshape(b, s, cfg.kv_heads, hd)
        v = (h @ w[p + "self_attn.v_proj.weight"]).reshape(b, s, cfg.kv_heads, hd)
        q, k = _rope(q, positions, cfg.rope_theta), _rope(k, positions, cfg.rope_theta)
        k, v = np.repeat(k, groups, axis=2), np.repeat(v, groups, axis=2)
        scores = np.einsum("bqhd,bkhd->bhqk", q, k) / np.sqrt(hd)
        scores[:, :, causal] = -np.inf
        probs = np.exp(scores - scores.max(-1, keepdims=True))
        probs /= probs.sum(-1, keepdims=True)
        attn = np.einsum("bhqk,bkhd->bqhd", probs, v).reshape(b, s, heads * hd)
        x = x + attn @ w[p + "self_attn.o_proj.weight"]
        h = _rms_norm(x, w[p + "post_attention_layernorm.weight"], cfg.eps)
        gate = h @ w[p + "mlp.gate_proj.weight"]
        x = (
            x
            + (gate / (1 + np.exp(-gate)) * (h @ w[p + "mlp.up_proj.weight"])) @ w[p + "mlp.down_proj.weight"]
        )
    return _rms_norm(x, w["model.norm.weight"], cfg.eps) @ w["lm_head.weight"]

"""Numpy implementations of the example models, written independently of relax_mlir's lowering."""

from __future__ import annotations

import math

import numpy as np

from relax_mlir.examples.models import cnn_weights


def transformer_weights(d: int, ff: int, seed: int = 0) -> dict[str, np.ndarray]:
    """Random weights for ``models.transformer_block`` (its parameters after ``x``, in order)."""
    rng = np.random.default_rng(seed)

    def w(*shape: int, scale: float = 0.05) -> np.ndarray:
        return (rng.standard_normal(shape) * scale).astype(np.float32)

    return {
        "ln1_g": 1 + w(d),
        "ln1_b": w(d),
        "wq": w(d, d),
        "wk": w(d, d),
        "wv": w(d, d),
        "wo": w(d, d),
        "ln2_g": 1 + w(d),
        "ln2_b": w(d),
        "w1": w(d, ff),
        "b1": w(ff),
        "w2": w(ff, d),
        "b2": w(d),
    }


def _layer_norm(x: np.ndarray, g: np.ndarray, b: np.ndarray, eps: float = 1e-5) -> np.ndarray:
    mean = x.mean(-1, keepdims=True)
    var = ((x - mean) ** 2).mean(-1, keepdims=True)
    return (x - mean) / np.sqrt(var + eps) * g + b


def _erf(x: np.ndarray) -> np.ndarray:
    return np.vectorize(math.erf, otypes=[np.float64])(x)


def transformer_block(x: np.ndarray, heads: int, w: dict[str, np.ndarray]) -> np.ndarray:
    """Pre-LayerNorm causal attention + GELU MLP, in float64."""
    x = x.astype(np.float64)
    w = {k: v.astype(np.float64) for k, v in w.items()}
    b, s, d = x.shape
    hd = d // heads
    h = _layer_norm(x, w["ln1_g"], w["ln1_b"])

    def split(m: np.ndarray) -> np.ndarray:
        return (h @ m).reshape(b, s, heads, hd).transpose(0, 2, 1, 3)

    q, k, v = split(w["wq"]), split(w["wk"]), split(w["wv"])
    scores = q @ k.transpose(0, 1, 3, 2) / np.sqrt(hd)
    scores = scores + np.where(np.arange(s)[None, :] > np.arange(s)[:, None], -1e9, 0.0)
    scores = np.exp(scores - scores.max(-1, keepdims=True))
    probs = scores / scores.sum(-1, keepdims=True)
    ctx = (probs @ v).transpose(0, 2, 1, 3).reshape(b, s, d)
    x1 = x + ctx @ w["wo"]
    z = _layer_norm(x1, w["ln2_g"], w["ln2_b"]) @ w["w1"] + w["b1"]
    gelu = z * (1 + _erf(z / np.sqrt(2))) / 2
    return x1 + gelu @ w["w2"] + w["b2"]


def _conv2d(x: np.ndarray, w: np.ndarray, stride: int, pad: int) -> np.ndarray:
    n, c, hh, ww = x.shape
    o, _, kh, kw = w.shape
    xp = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    oh, ow = (hh + 2 * pad - kh) // stride + 1, (ww + 2 * pad - kw) // stride + 1
    out = np.zeros((n, o, oh, ow))
    for i in range(kh):
        for j in range(kw):
            window = xp[:, :, i : i + stride * oh : stride, j : j + stride * ow : stride]
            out += np.einsum("nchw,oc->nohw", window, w[:, :, i, j])
    return out


def small_cnn(image: np.ndarray, classes: int = 10, seed: int = 0) -> np.ndarray:
    """The small CNN of ``models.small_cnn`` with the same weights, in float64."""
    w = {k: v.astype(np.float64) for k, v in cnn_weights(classes, seed).items()}
    y = _conv2d(image.astype(np.float64), w["conv1"], 1, 1)
    scale = w["bn_gamma"] / np.sqrt(w["bn_var"] + 1e-5)
    y = (y - w["bn_mean"][:, None, None]) * scale[:, None, None] + w["bn_beta"][:, None, None]
    y = np.maximum(y, 0)
    n, c, hh, ww = y.shape
    y = y[:, :, : hh // 2 * 2, : ww // 2 * 2].reshape(n, c, hh // 2, 2, ww // 2, 2).max(axis=(3, 5))
    y = np.maximum(_conv2d(y, w["conv2"], 2, 1), 0)
    y = y.mean(axis=(2, 3))
    return y @ w["fc_w"] + w["fc_b"]

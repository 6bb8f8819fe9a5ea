"""A Llama-style causal LM written as modules over the builder, emitting ``prefill`` and ``decode``.

Every module declares its weights (name -> shape, HF-style dotted names) and emits relax ops for its
forward pass. ``CausalLM.build()`` returns one module with two functions sharing every kernel::

    prefill(tokens [b, seq] i64, kv_len, k_cache.0, v_cache.0, ..., weights...) -> logits [b, seq, vocab]
    decode (tokens [b, 1]   i64, kv_len, k_cache.0, v_cache.0, ..., weights...) -> logits [b, 1, vocab]

Layer ``i``'s caches are ``[kv_len + seq, b, kv_heads, head_dim]`` arrays: the first rows of a
preallocated ``[max_context, b, kv_heads, head_dim]`` buffer (``KVCache``), into whose last ``seq`` rows
the new keys and values are written in place. Linear weights are ``[in, out]`` (``x @ w``); a quantized
linear weight (``CausalLM(cfg, quantized={name: (layout, scale dtype)})``) is two parameters ``<name>.data``
and ``<name>.scales`` in ``[out, in]`` order (``relax.dequantize``), used as ``x @ dequantize(...).T``.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass

import numpy as np
from mlir import ir

import relax_mlir.builder as rb
from relax_mlir.dialects import relax as R
from relax_mlir.dialects.ops.dequantize import GROUP, LAYOUTS


@dataclass(frozen=True)
class LlamaConfig:
    """Sizes of a Llama-style model; ``max_context`` bounds ``kv_len + seq``."""

    vocab_size: int = 32000
    hidden_size: int = 768
    layers: int = 12
    heads: int = 12
    kv_heads: int = 4
    ffn_size: int = 2048
    max_context: int = 2048
    max_batch: int = 8
    rope_theta: float = 10000.0
    eps: float = 1e-5

    def __post_init__(self) -> None:
        if self.hidden_size % self.heads:
            raise ValueError(f"hidden_size {self.hidden_size} is not a multiple of heads {self.heads}")
        if self.heads % self.kv_heads:
            raise ValueError(f"heads {self.heads} is not a multiple of kv_heads {self.kv_heads}")
        if self.head_dim % 2:
            raise ValueError(f"head_dim {self.head_dim} must be even for rotary embeddings")

    @property
    def head_dim(self) -> int:
        return self.hidden_size // self.heads


Weights = dict[str, ir.Value]


class Module:
    """A named piece of the model: its weights (relative names) and its children."""

    def __init__(self, name: str) -> None:
        self.name = name

    def own_weights(self) -> dict[str, tuple[int, ...]]:
        return {}

    def children(self) -> list[Module]:
        return []

    def weights(self) -> dict[str, tuple[int, ...]]:
        """Every weight of this module and its children, by full dotted name."""
        out = {self._full(n): s for n, s in self.own_weights().items()}
        for child in self.children():
            out.update(child.weights())
        return out

    def _full(self, name: str) -> str:
        return f"{self.name}.{name}" if self.name else name

    def w(self, params: Weights, name: str) -> ir.Value:
        return params[self._full(name)]


class Linear(Module):
    """``x @ weight`` with weight ``[in, out]``; quantized (``layout`` set): ``x @ dequantize(data, scales).T``."""

    def __init__(self, name: str, in_features: int, out_features: int) -> None:
        super().__init__(name)
        self.shape = (in_features, out_features)
        self.layout: str | None = None
        self.scale_dtype = "f16"

    def own_weights(self) -> dict[str, tuple[int, ...]]:
        return {"weight": self.shape}

    def parameters(self) -> dict[str, tuple[tuple[int, ...], str]]:
        """The function parameters holding the weight: full name -> (shape, dtype)."""
        name = self._full("weight")
        if self.layout is None:
            return {name: (self.shape, "f32")}
        dtype, per, _ = LAYOUTS[self.layout]
        k, rows = self.shape
        return {
            f"{name}.data": ((rows, k // per), dtype),
            f"{name}.scales": ((rows, k // GROUP), self.scale_dtype),
        }

    def __call__(self, params: Weights, x: ir.Value) -> ir.Value:
        if self.layout is None:
            return R.matmul(x, self.w(params, "weight"))
        data, scales = self.w(params, "weight.data"), self.w(params, "weight.scales")
        return R.matmul(x, R.permute_dims(R.dequantize(data, scales, self.layout)))


class Embedding(Module):
    """Rows of ``weight [vocab, hidden]`` at the token ids."""

    def __init__(self, name: str, vocab: int, hidden: int) -> None:
        super().__init__(name)
        self.shape = (vocab, hidden)

    def own_weights(self) -> dict[str, tuple[int, ...]]:
        return {"weight": self.shape}

    def __call__(self, params: Weights, tokens: ir.Value) -> ir.Value:
        return R.take(self.w(params, "weight"), tokens, axis=0)


class RMSNorm(Module):
    """``x / sqrt(mean(x^2) + eps) * weight`` over the last dim."""

    def __init__(self, name: str, hidden: int, eps: float) -> None:
        super().__init__(name)
        self.hidden, self.eps = hidden, eps

    def own_weights(self) -> dict[str, tuple[int, ...]]:
        return {"weight": (self.hidden,)}

    def __call__(self, params: Weights, x: ir.Value) -> ir.Value:
        return R.rms_norm(x, self.w(params, "weight"), epsilon=self.eps)


class RotaryEmbedding(Module):
    """Rotary position embedding (rotate-half form) at positions ``kv_len .. kv_len + seq``."""

    def __init__(self, head_dim: int, theta: float) -> None:
        super().__init__("")
        self.head_dim = head_dim
        half = np.arange(0, head_dim, 2, dtype=np.float64) / head_dim
        self.inv_freq = (1.0 / theta**half).astype(np.float32)

    def tables(self, past: str, seq: str) -> tuple[ir.Value, ir.Value]:
        """cos and sin, ``[seq, 1, head_dim]``, for the new tokens' positions."""
        pos = R.astype(R.arange(past, f"{past} + {seq}"), "f32")
        angles = R.multiply(R.expand_dims(pos, [1]), R.constant(self.inv_freq))
        angles = R.expand_dims(R.concat([angles, angles], axis=-1), [1])
        return R.cos(angles), R.sin(angles)

    def __call__(self, x: ir.Value, cos: ir.Value, sin: ir.Value) -> ir.Value:
        """``x [b, seq, heads, head_dim]`` rotated."""
        half = self.head_dim // 2
        x1 = R.strided_slice(x, [3], [0], [half])
        x2 = R.strided_slice(x, [3], [half], [self.head_dim])
        rotated = R.concat([R.multiply(x2, R.constant(np.array(-1.0, np.float32))), x1], axis=-1)
        return R.add(R.multiply(x, cos), R.multiply(rotated, sin))


class Attention(Module):
    """Grouped-query self-attention over the KV cache, with rotary embeddings."""

    def __init__(self, name: str, cfg: LlamaConfig) -> None:
        super().__init__(name)
        self.cfg = cfg
        d, hd = cfg.hidden_size, cfg.head_dim
        self.q_proj = Linear(self._full("q_proj"), d, cfg.heads * hd)
        self.k_proj = Linear(self._full("k_proj"), d, cfg.kv_heads * hd)
        self.v_proj = Linear(self._full("v_proj"), d, cfg.kv_heads * hd)
        self.o_proj = Linear(self._full("o_proj"), cfg.heads * hd, d)

    def children(self) -> list[Module]:
        return [self.q_proj, self.k_proj, self.v_proj, self.o_proj]

    def __call__(
        self,
        params: Weights,
        x: ir.Value,
        rope: tuple[RotaryEmbedding, ir.Value, ir.Value],
        k_cache: ir.Value,
        v_cache: ir.Value,
    ) -> ir.Value:
        cfg = self.cfg
        rotary, cos, sin = rope

        def heads(y: ir.Value, n: int) -> ir.Value:
            return R.reshape(y, [0, 0, n, cfg.head_dim])

        q = rotary(heads(self.q_proj(params, x), cfg.heads), cos, sin)
        k = rotary(heads(self.k_proj(params, x), cfg.kv_heads), cos, sin)
        v = heads(self.v_proj(params, x), cfg.kv_heads)
        keys = R.kv_cache_write(k_cache, k)
        values = R.kv_cache_write(v_cache, v)
        out = R.cached_attention(q, keys, values)
        return self.o_proj(params, R.reshape(out, [0, 0, cfg.heads * cfg.head_dim]))


class MLP(Module):
    """SwiGLU: ``down(silu(gate(x)) * up(x))``."""

    def __init__(self, name: str, cfg: LlamaConfig) -> None:
        super().__init__(name)
        d, f = cfg.hidden_size, cfg.ffn_size
        self.gate_proj = Linear(self._full("gate_proj"), d, f)
        self.up_proj = Linear(self._full("up_proj"), d, f)
        self.down_proj = Linear(self._full("down_proj"), f, d)

    def children(self) -> list[Module]:
        return [self.gate_proj, self.up_proj, self.down_proj]

    def __call__(self, params: Weights, x: ir.Value) -> ir.Value:
        return self.down_proj(params, R.multiply(R.silu(self.gate_proj(params, x)), self.up_proj(params, x)))


class DecoderLayer(Module):
    """Pre-norm attention and MLP blocks, each with a residual."""

    def __init__(self, name: str, cfg: LlamaConfig) -> None:
        super().__init__(name)
        self.input_layernorm = RMSNorm(self._full("input_layernorm"), cfg.hidden_size, cfg.eps)
        self.self_attn = Attention(self._full("self_attn"), cfg)
        self.post_attention_layernorm = RMSNorm(
            self._full("post_attention_layernorm"), cfg.hidden_size, cfg.eps
        )
        self.mlp = MLP(self._full("mlp"), cfg)

    def children(self) -> list[Module]:
        return [self.input_layernorm, self.self_attn, self.post_attention_layernorm, self.mlp]

    def __call__(
        self, params: Weights, x: ir.Value, rope: tuple, k_cache: ir.Value, v_cache: ir.Value
    ) -> ir.Value:
        x = R.add(x, self.self_attn(params, self.input_layernorm(params, x), rope, k_cache, v_cache))
        return R.add(x, self.mlp(params, self.post_attention_layernorm(params, x)))


class CausalLM(Module):
    """Embedding, decoder layers, final norm and LM head; ``build()`` emits ``prefill`` and ``decode``."""

    def __init__(self, cfg: LlamaConfig, quantized: Mapping[str, tuple[str, str]] | None = None) -> None:
        """``quantized``: linear weight name -> (layout, scale dtype) for the weights stored quantized."""
        super().__init__("")
        self.cfg = cfg
        self.embed_tokens = Embedding("model.embed_tokens", cfg.vocab_size, cfg.hidden_size)
        self.layers = [DecoderLayer(f"model.layers.{i}", cfg) for i in range(cfg.layers)]
        self.norm = RMSNorm("model.norm", cfg.hidden_size, cfg.eps)
        self.lm_head = Linear("lm_head", cfg.hidden_size, cfg.vocab_size)
        self.rotary = RotaryEmbedding(cfg.head_dim, cfg.rope_theta)
        linears = {f"{m.name}.weight": m for m in self.modules() if isinstance(m, Linear)}
        for name, (layout, scale_dtype) in (quantized or {}).items():
            if name not in linears:
                raise ValueError(f"'{name}' is not a linear weight of the model")
            linears[name].layout, linears[name].scale_dtype = layout, scale_dtype

    def modules(self) -> Iterator[Module]:
        """Every module of the model, depth first."""
        stack: list[Module] = [self]
        while stack:
            m = stack.pop()
            yield m
            stack.extend(reversed(m.children()))

    def parameters(self) -> dict[str, tuple[tuple[int, ...], str]]:
        """The weight parameters of ``prefill``/``decode`` in order: name -> (shape, dtype)."""
        linears = {f"{m.name}.weight": m for m in self.modules() if isinstance(m, Linear)}
        out: dict[str, tuple[tuple[int, ...], str]] = {}
        for name, shape in self.weights().items():
            out.update(linears[name].parameters() if name in linears else {name: (shape, "f32")})
        return out

    def children(self) -> list[Module]:
        return [self.embed_tokens, *self.layers, self.norm, self.lm_head]

    def cache_names(self) -> Iterator[str]:
        for i in range(self.cfg.layers):
            yield f"k_cache.{i}"
            yield f"v_cache.{i}"

    def build(self) -> ir.Module:
        """The module with ``prefill`` (``seq`` symbolic) and ``decode`` (``seq`` = 1)."""
        bb = rb.BlockBuilder()
        self._emit(bb, "prefill", "seq")
        self._emit(bb, "decode", 1)
        return bb.module

    def _emit(self, bb: rb.BlockBuilder, name: str, seq: str | int) -> None:
        cfg = self.cfg
        cache = rb.tensor([f"kv_len + {seq}", "batch", cfg.kv_heads, cfg.head_dim])
        params: dict[str, object] = {"tokens": rb.tensor(["batch", seq], "i64"), "kv_len": rb.prim("kv_len")}
        params.update(dict.fromkeys(self.cache_names(), cache))
        params.update({n: rb.tensor(list(s), dtype) for n, (s, dtype) in self.parameters().items()})
        bounds = {"batch": cfg.max_batch, "kv_len": cfg.max_context - 1}
        if isinstance(seq, str):
            bounds[seq] = cfg.max_context
        with bb.function(name, params, upper_bounds=bounds) as args:
            values = dict(zip(params, args))
            with bb.dataflow():
                cos, sin = self.rotary.tables("kv_len", str(seq))
                rope = (self.rotary, cos, sin)
                x = self.embed_tokens(values, values["tokens"])
                for i, layer in enumerate(self.layers):
                    x = layer(values, x, rope, values[f"k_cache.{i}"], values[f"v_cache.{i}"])
                logits = bb.emit_output(self.lm_head(values, self.norm(values, x)))
            bb.ret(logits)

"""Running the compiled model: a preallocated KV cache, prefill/decode calls and token generation."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

import relax_mlir
from relax_mlir.dialects.ops.dequantize_matmul import ACTIVATIONS
from relax_mlir.errors import InputError
from relax_mlir.llm.modules import CausalLM, LlamaConfig
from relax_mlir.llm.quant import QuantizedWeight, quantize
from relax_mlir.llm.weights import Weight, check_weights, is_linear
from relax_mlir.pipelines.data import P, replace, text
from relax_mlir.targets.cpu import CpuTarget


@dataclass
class KVCache:
    """Per-layer key and value buffers ``[max_context, batch, kv_heads, head_dim]``; ``length`` rows are filled."""

    keys: list[np.ndarray]
    values: list[np.ndarray]
    length: int = 0

    @classmethod
    def allocate(cls, cfg: LlamaConfig, batch: int) -> KVCache:
        shape = (cfg.max_context, batch, cfg.kv_heads, cfg.head_dim)
        return cls(
            [np.zeros(shape, np.float32) for _ in range(cfg.layers)],
            [np.zeros(shape, np.float32) for _ in range(cfg.layers)],
        )

    @property
    def batch(self) -> int:
        return self.keys[0].shape[1]

    def views(self, total: int) -> list[np.ndarray]:
        """The first ``total`` rows of every buffer (contiguous views: the model writes into them)."""
        return [buf[:total] for pair in zip(self.keys, self.values) for buf in pair]


class LanguageModel:
    """A Llama-style model compiled once; ``prefill`` and ``decode`` run at any batch and length. The
    weights are bound once (``Executable.load_params``: matmul weights packed, shared by both); ``weights``
    keeps the checked arrays as given (``quantize()`` reads them)."""

    def __init__(
        self, cfg: LlamaConfig, weights: dict[str, Weight], *, opt_level: int = 3, activations: str = "f32"
    ) -> None:
        """``weights``: float32 arrays by name; linear weights may be ``QuantizedWeight``s. ``activations``:
        ``"i8"`` rounds the activations of quantized matmuls at decode to int8 per group of 32 and uses
        int8 dot products, as llama.cpp does (about 0.5% error; ``relax-fuse-dequantize-matmul``)."""
        if activations not in ACTIVATIONS:
            raise InputError(f"activations must be one of {', '.join(ACTIVATIONS)}, got {activations!r}")
        if activations != "f32" and opt_level < 1:
            raise InputError("activations='i8' needs opt_level >= 1 (the fused quantized matmul)")
        self.cfg = cfg
        self.opt_level = opt_level
        self.activations = activations
        self.weights = check_weights(cfg, weights)
        quantized = {
            n: (w.layout, "f16" if w.scales.dtype == np.float16 else "f32")
            for n, w in self.weights.items()
            if isinstance(w, QuantizedWeight)
        }
        model = CausalLM(cfg, quantized)
        self.module = model.build()
        self.executable = relax_mlir.compile(
            self.module, opt_level=opt_level, pipeline=_pipeline(opt_level, activations)
        )
        # The weights are load-time parameters: packed once here, shared by prefill and decode.
        self.params = self.executable.load_params(self._parameters(model))
        self.tokenizer_metadata: dict[str, Any] = {}

    @classmethod
    def from_gguf(
        cls,
        path: str | Path,
        *,
        max_batch: int = 8,
        max_context: int | None = None,
        opt_level: int = 3,
        activations: str = "f32",
    ) -> LanguageModel:
        """The llama-architecture model in the GGUF file ``path`` (F32/F16/Q8_0/Q4_0 tensors; Q8_0/Q4_0 linear
        weights stay quantized); token ids in and out, the file's tokenizer in ``tokenizer_metadata``."""
        from relax_mlir.llm.gguf import load_gguf

        cfg, weights, tokenizer = load_gguf(path, max_batch=max_batch, max_context=max_context)
        lm = cls(cfg, weights, opt_level=opt_level, activations=activations)
        lm.tokenizer_metadata = tokenizer
        return lm

    def quantize(self, layout: str) -> LanguageModel:
        """A new model whose linear weights (attention, MLP, LM head; not the embedding or norms) are
        quantized in ``layout`` (``q4_0``, ``q8_0``, ``q4f16_1``); already quantized ones are kept."""
        weights = dict(self.weights)
        for name, w in self.weights.items():
            if is_linear(name) and not isinstance(w, QuantizedWeight):
                try:
                    weights[name] = quantize(w.T, layout)
                except InputError as e:
                    raise InputError(
                        f"cannot quantize weight '{name}' ([out, in] {w.T.shape}): {e}"
                    ) from None
        lm = LanguageModel(self.cfg, weights, opt_level=self.opt_level, activations=self.activations)
        lm.tokenizer_metadata = dict(self.tokenizer_metadata)
        return lm

    def _parameters(self, model: CausalLM) -> dict[str, np.ndarray]:
        """The arrays of ``model.parameters()`` by name (a quantized weight is ``.data`` and ``.scales``)."""
        out: dict[str, np.ndarray] = {}
        for name in model.weights():
            w = self.weights[name]
            if isinstance(w, QuantizedWeight):
                out.update({f"{name}.data": w.data, f"{name}.scales": w.scales})
            else:
                out[name] = w
        return out

    def new_cache(self, batch: int = 1) -> KVCache:
        if not 1 <= batch <= self.cfg.max_batch:
            raise InputError(f"batch {batch} is outside 1..{self.cfg.max_batch} (LlamaConfig.max_batch)")
        return KVCache.allocate(self.cfg, batch)

    def prefill(self, tokens: np.ndarray, cache: KVCache, *, last_only: bool = False) -> np.ndarray:
        """Logits ``[b, seq, vocab]`` of ``tokens [b, seq]`` after the ``cache.length`` cached ones; with
        ``last_only``, ``[b, vocab]`` of the last token only (what generation needs: the LM head then runs
        on one row per sequence, as llama.cpp's default)."""
        if not last_only:
            return self._run("prefill", tokens, cache)
        if np.ndim(tokens) == 2 and np.shape(tokens)[1] == 0:
            raise InputError(
                "prefill: last_only needs at least one token per sequence, got tokens of shape "
                f"{np.shape(tokens)}"
            )
        return self._run("prefill_last", tokens, cache)[:, 0]

    def decode(self, tokens: np.ndarray, cache: KVCache) -> np.ndarray:
        """Logits ``[b, vocab]`` of one new token per sequence (``tokens [b]``)."""
        return self._run("decode", np.asarray(tokens).reshape(-1, 1), cache)[:, 0]

    def _run(self, function: str, tokens: np.ndarray, cache: KVCache) -> np.ndarray:
        tokens = np.asarray(tokens)
        if tokens.ndim != 2 or not np.issubdtype(tokens.dtype, np.integer):
            raise InputError(
                f"{function}: tokens must be an integer array [batch, seq], got {tokens.dtype} {tokens.shape}"
            )
        if tokens.shape[0] != cache.batch:
            raise InputError(f"{function}: tokens have batch {tokens.shape[0]}, the cache has {cache.batch}")
        if tokens.size and (tokens.min() < 0 or tokens.max() >= self.cfg.vocab_size):
            raise InputError(f"{function}: token ids must be in 0..{self.cfg.vocab_size - 1}")
        total = cache.length + tokens.shape[1]
        if total > self.cfg.max_context:
            raise InputError(
                f"{function}: context of {total} tokens ({cache.length} cached + {tokens.shape[1]} new) exceeds "
                f"the model's maximum context {self.cfg.max_context} (LlamaConfig.max_context)"
            )
        logits = self.params[function](tokens.astype(np.int64, copy=False), cache.length, *cache.views(total))
        cache.length = total
        return logits

    def generate(
        self,
        prompt: np.ndarray,
        max_new_tokens: int,
        *,
        temperature: float = 0.0,
        top_k: int | None = None,
        seed: int | None = None,
    ) -> np.ndarray:
        """``max_new_tokens`` tokens per prompt row: greedy at temperature 0, else top-k/temperature sampling."""
        prompt = np.asarray(prompt)
        if prompt.ndim != 2 or prompt.shape[1] == 0:
            raise InputError(f"generate: prompt must be [batch, seq] with seq >= 1, got shape {prompt.shape}")
        cache = self.new_cache(prompt.shape[0])
        rng = np.random.default_rng(seed)
        logits = self.prefill(prompt, cache, last_only=True)
        out = []
        for step in range(max_new_tokens):
            token = sample(logits, temperature, top_k, rng)
            out.append(token)
            if step + 1 < max_new_tokens:
                logits = self.decode(token, cache)
        return np.stack(out, axis=1) if out else np.zeros((prompt.shape[0], 0), np.int64)


def _pipeline(opt_level: int, activations: str) -> str | None:
    """The relax pipeline: the CPU target's ``relax-O<opt_level>`` (None), or with int8 activations in
    quantized matmuls."""
    if activations == "f32":
        return None
    fuse = "relax-fuse-dequantize-matmul"
    return text(replace(CpuTarget().relax_pipeline(opt_level), fuse, [P(fuse, activations=activations)]))


def sample(logits: np.ndarray, temperature: float, top_k: int | None, rng: np.random.Generator) -> np.ndarray:
    """One token per row of ``logits [b, vocab]``: argmax at temperature 0, else sampled."""
    if temperature < 0:
        raise InputError(f"temperature must be >= 0, got {temperature}")
    if temperature == 0:
        return logits.argmax(axis=-1).astype(np.int64)
    scaled = logits.astype(np.float64) / temperature
    if top_k is not None:
        if top_k < 1:
            raise InputError(f"top_k must be >= 1, got {top_k}")
        kth = np.sort(scaled, axis=-1)[:, -min(top_k, scaled.shape[-1])][:, None]
        scaled = np.where(scaled < kth, -np.inf, scaled)
    probs = np.exp(scaled - scaled.max(axis=-1, keepdims=True))
    probs /= probs.sum(axis=-1, keepdims=True)
    return np.array([rng.choice(len(p), p=p) for p in probs], np.int64)

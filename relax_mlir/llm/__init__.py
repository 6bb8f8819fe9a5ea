"""LLM decoding: a Llama-style model over the builder, weights, a KV-cached runtime and generation.

from relax_mlir.llm import LlamaConfig, LanguageModel, random_weights
cfg = LlamaConfig(vocab_size=256, hidden_size=64, layers=2, heads=4, kv_heads=2, ffn_size=128)
lm = LanguageModel(cfg, random_weights(cfg))
tokens = lm.generate(np.array([[1, 2, 3]]), max_new_tokens=16)
"""

from relax_mlir.llm.generate import KVCache, LanguageModel
from relax_mlir.llm.modules import CausalLM, LlamaConfig
from relax_mlir.llm.weights import load_safetensors, random_weights, save_safetensors

__all__ = [
    "CausalLM",
    "KVCache",
    "LanguageModel",
    "LlamaConfig",
    "load_safetensors",
    "random_weights",
    "save_safetensors",
]

"""LLM decoding: a Llama-style model over the builder, weights, a KV-cached runtime and generation.

from relax_mlir.llm import LlamaConfig, LanguageModel, random_weights
cfg = LlamaConfig(vocab_size=256, hidden_size=64, layers=2, heads=4, kv_heads=2, ffn_size=128)
lm = LanguageModel(cfg, random_weights(cfg))
tokens = lm.generate(np.array([[1, 2, 3]]), max_new_tokens=16)
q4 = lm.quantize("q4_0")                      # 4-bit linear weights (llama.cpp's Q4_0)
gguf_lm = LanguageModel.from_gguf("model.gguf", max_batch=4, max_context=512)
"""

from relax_mlir.llm.generate import KVCache, LanguageModel
from relax_mlir.llm.gguf import load_gguf, save_gguf
from relax_mlir.llm.modules import CausalLM, LlamaConfig
from relax_mlir.llm.quant import QuantizedWeight, quantize
from relax_mlir.llm.weights import load_safetensors, random_weights, save_safetensors

__all__ = [
    "CausalLM",
    "KVCache",
    "LanguageModel",
    "LlamaConfig",
    "QuantizedWeight",
    "load_gguf",
    "load_safetensors",
    "quantize",
    "random_weights",
    "save_gguf",
    "save_safetensors",
]

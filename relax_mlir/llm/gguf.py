"""GGUF files (llama.cpp's format) for llama-architecture models, read and written with the ``gguf`` package.

Tensor names (llama.cpp's, each with a ``.weight`` suffix) map to the model's as ``token_embd`` ->
``model.embed_tokens``, ``blk.N.attn_q/k/v/output`` ->
``self_attn.q/k/v/o_proj``, ``blk.N.ffn_gate/up/down`` -> ``mlp.*_proj``, ``blk.N.attn_norm``/``ffn_norm`` ->
the layer norms, ``output_norm`` -> ``model.norm``, ``output`` -> ``lm_head`` (absent: tied to the embedding).
GGUF stores linear weights ``[out, in]``; F32/F16 ones become ``[in, out]`` float32 arrays, Q8_0/Q4_0 ones
``QuantizedWeight``s (their blocks split into planar arrays). llama.cpp's rope rotates adjacent pairs
(2i, 2i+1) where the HF model rotates halves, so HF->GGUF conversion permutes the rows of ``attn_q`` and
``attn_k`` within each head; reading undoes that permutation and writing applies it (a row permutation, exact
for quantized weights too: their groups run along ``in``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
from gguf import GGMLQuantizationType, GGUFReader, GGUFWriter
from gguf import quants as gguf_quants

from relax_mlir.errors import InputError
from relax_mlir.llm.modules import CausalLM, LlamaConfig
from relax_mlir.llm.quant import QuantizedWeight, from_gguf_blocks
from relax_mlir.llm.weights import Weight, check_weights, is_linear

_QUANTIZED = {GGMLQuantizationType.Q8_0: "q8_0", GGMLQuantizationType.Q4_0: "q4_0"}
_FLOAT = (GGMLQuantizationType.F32, GGMLQuantizationType.F16)
SAVE_TYPES = ("F32", "F16", "Q8_0", "Q4_0")

_LAYER = {
    "attn_norm": "input_layernorm",
    "attn_q": "self_attn.q_proj",
    "attn_k": "self_attn.k_proj",
    "attn_v": "self_attn.v_proj",
    "attn_output": "self_attn.o_proj",
    "ffn_norm": "post_attention_layernorm",
    "ffn_gate": "mlp.gate_proj",
    "ffn_up": "mlp.up_proj",
    "ffn_down": "mlp.down_proj",
}


def tensor_names(cfg: LlamaConfig) -> dict[str, str]:
    """GGUF tensor name -> model weight name."""
    out = {
        "token_embd.weight": "model.embed_tokens.weight",
        "output_norm.weight": "model.norm.weight",
        "output.weight": "lm_head.weight",
    }
    for i in range(cfg.layers):
        out.update({f"blk.{i}.{g}.weight": f"model.layers.{i}.{m}.weight" for g, m in _LAYER.items()})
    return out


def rope_order(rows: int, heads: int, to_gguf: bool) -> np.ndarray:
    """Row order that turns HF's q/k rows (rotate-half) into GGUF's (adjacent pairs), or back.

    Within a head of ``hd`` rows, GGUF row ``2i + j`` is HF row ``j * hd/2 + i`` (convert_hf_to_gguf's permute).
    """
    hd = rows // heads
    hf = np.arange(rows).reshape(heads, 2, hd // 2)
    gguf_from_hf = hf.swapaxes(1, 2).reshape(rows)  # GGUF row r holds HF row gguf_from_hf[r]
    return gguf_from_hf if to_gguf else np.argsort(gguf_from_hf)


def _field(reader: GGUFReader, key: str, path: Path, default: Any = None) -> Any:
    field = reader.fields.get(key)
    if field is None:
        if default is None:
            raise InputError(f"{path}: metadata '{key}' is missing (needed for a llama model)")
        return default
    try:
        return field.contents()
    except ValueError as e:  # a string that is not UTF-8
        raise InputError(f"{path}: metadata '{key}' cannot be read: {e}") from None


def _f32(value: Any) -> float:
    """A float32 metadata value as the shortest decimal that reads back as it (1e-05, not 9.99999974e-06)."""
    return float(str(np.float32(value)))


def _config(reader: GGUFReader, path: Path, max_batch: int, max_context: int | None) -> LlamaConfig:
    arch = _field(reader, "general.architecture", path)
    if arch != "llama":
        raise InputError(f"{path}: architecture '{arch}' is not supported (only 'llama')")
    embd = next((t for t in reader.tensors if t.name == "token_embd.weight"), None)
    if embd is None:
        raise InputError(f"{path}: tensor 'token_embd' is missing")
    try:
        heads = int(_field(reader, "llama.attention.head_count", path))
        context = int(_field(reader, "llama.context_length", path, 2048))
        cfg = LlamaConfig(
            vocab_size=int(embd.shape[1]),
            hidden_size=int(_field(reader, "llama.embedding_length", path)),
            layers=int(_field(reader, "llama.block_count", path)),
            heads=heads,
            kv_heads=int(_field(reader, "llama.attention.head_count_kv", path, heads)),
            ffn_size=int(_field(reader, "llama.feed_forward_length", path)),
            max_context=max_context if max_context is not None else min(context, 2048),
            max_batch=max_batch,
            rope_theta=_f32(_field(reader, "llama.rope.freq_base", path, 10000.0)),
            eps=_f32(_field(reader, "llama.attention.layer_norm_rms_epsilon", path)),
        )
    except (ValueError, TypeError) as e:
        raise InputError(f"{path}: the llama metadata do not describe a valid model: {e}") from None
    if len(reader.tensors) < len(_LAYER) * cfg.layers + 2:  # before making names for a corrupt block count
        raise InputError(
            f"{path}: block_count {cfg.layers} needs {len(_LAYER)} tensors per block, "
            f"but the file has {len(reader.tensors)} tensors in all"
        )
    return cfg


def _tensor(t: Any, name: str, expected: tuple[int, ...], path: Path) -> np.ndarray | QuantizedWeight:
    """A GGUF tensor in numpy order (``[out, in]`` for 2-D): float32, or quantized."""
    qtype = GGMLQuantizationType(int(t.tensor_type))
    shape = tuple(int(d) for d in reversed(t.shape.tolist()))
    if shape != expected:
        raise InputError(
            f"{path}: tensor '{t.name}' ({name}) has shape {list(shape)}, the metadata's model needs {list(expected)}"
        )
    if qtype in _QUANTIZED and len(shape) == 2:
        return from_gguf_blocks(np.asarray(t.data).reshape(shape[0], -1), _QUANTIZED[qtype])
    if qtype not in _FLOAT:
        raise InputError(
            f"{path}: tensor '{t.name}' ({name}) has type {qtype.name}; supported: F32, F16, Q8_0, Q4_0"
            + (" (Q8_0/Q4_0 only for 2-D tensors)" if qtype in _QUANTIZED else "")
        )
    return np.asarray(t.data, dtype=np.float32).reshape(shape)


def load_gguf(
    path: str | Path, *, max_batch: int = 8, max_context: int | None = None
) -> tuple[LlamaConfig, dict[str, Weight], dict[str, Any]]:
    """(config, weights, tokenizer metadata) of a llama-architecture GGUF file; InputError for anything else."""
    path = Path(path)
    try:
        reader = GGUFReader(path)
    except (OSError, ValueError, KeyError, IndexError, TypeError, EOFError) as e:
        raise InputError(f"{path}: not a readable GGUF file: {e}") from None
    cfg = _config(reader, path, max_batch, max_context)
    names = tensor_names(cfg)
    shapes = {n: s[::-1] if is_linear(n) else s for n, s in CausalLM(cfg).weights().items()}  # GGUF's order
    raw: dict[str, np.ndarray | QuantizedWeight] = {}
    for t in reader.tensors:
        if t.name in names:
            try:
                raw[names[t.name]] = _tensor(t, names[t.name], shapes[names[t.name]], path)
            except (ValueError, IndexError) as e:
                raise InputError(f"{path}: tensor '{t.name}' cannot be read: {e}") from None
    missing = [g for g, n in names.items() if n not in raw and g != "output.weight"]
    if missing:
        raise InputError(f"{path}: tensor(s) {missing[:5]} missing")
    if "lm_head.weight" not in raw:
        raw["lm_head.weight"] = raw["model.embed_tokens.weight"]  # tied embeddings
    embd = raw["model.embed_tokens.weight"]
    if isinstance(embd, QuantizedWeight):  # the embedding is a gather: kept as float32
        raw["model.embed_tokens.weight"] = embd.dequantize()
    weights: dict[str, Weight] = {}
    for name, w in raw.items():
        if ".q_proj." in name or ".k_proj." in name:
            heads = cfg.heads if ".q_proj." in name else cfg.kv_heads
            order = rope_order(w.shape[0], heads, to_gguf=False)
            w = w.take_rows(order) if isinstance(w, QuantizedWeight) else w[order]
        weights[name] = w.T if is_linear(name) and isinstance(w, np.ndarray) else w
    tokenizer = {k: _field(reader, k, path) for k in reader.fields if k.startswith("tokenizer.")}
    return cfg, check_weights(cfg, weights), tokenizer


def save_gguf(cfg: LlamaConfig, weights: dict[str, Weight], path: str | Path, dtype: str = "F32") -> None:
    """Write the model as a llama-architecture GGUF file without a vocabulary (``tokenizer.ggml.model`` =
    ``none``): 2-D tensors in ``dtype`` (F32, F16, Q8_0, Q4_0; norms stay F32), q/k rows in GGUF's rope order.
    Already quantized weights are written as they are when ``dtype`` is their type, else dequantized first."""
    if dtype not in SAVE_TYPES:
        raise InputError(f"save_gguf: dtype must be one of {SAVE_TYPES}, got {dtype!r}")
    weights = check_weights(cfg, weights)
    qtype = GGMLQuantizationType[dtype]
    writer = GGUFWriter(str(path), "llama")
    writer.add_context_length(cfg.max_context)
    writer.add_embedding_length(cfg.hidden_size)
    writer.add_block_count(cfg.layers)
    writer.add_feed_forward_length(cfg.ffn_size)
    writer.add_head_count(cfg.heads)
    writer.add_head_count_kv(cfg.kv_heads)
    writer.add_rope_freq_base(cfg.rope_theta)
    writer.add_layer_norm_rms_eps(cfg.eps)
    writer.add_rope_dimension_count(cfg.head_dim)
    writer.add_vocab_size(cfg.vocab_size)
    writer.add_tokenizer_model("none")
    file_type = {"F32": 0, "F16": 1, "Q4_0": 2, "Q8_0": 7}[dtype]
    writer.add_file_type(file_type)
    for gguf_name, name in tensor_names(cfg).items():
        w = weights[name]
        if isinstance(w, QuantizedWeight):
            if w.layout != dtype.lower():
                w = w.dequantize()
        elif is_linear(name):
            w = np.ascontiguousarray(w.T)  # [out, in]
        if ".q_proj." in name or ".k_proj." in name:
            order = rope_order(w.shape[0], cfg.heads if ".q_proj." in name else cfg.kv_heads, to_gguf=True)
            w = w.take_rows(order) if isinstance(w, QuantizedWeight) else w[order]
        if isinstance(w, QuantizedWeight):
            writer.add_tensor(gguf_name, w.to_gguf_blocks(), raw_dtype=qtype)
        elif w.ndim == 1 or dtype == "F32":
            writer.add_tensor(gguf_name, np.ascontiguousarray(w, dtype=np.float32))
        elif dtype == "F16":
            writer.add_tensor(gguf_name, np.ascontiguousarray(w, dtype=np.float16))
        else:
            writer.add_tensor(
                gguf_name, gguf_quants.quantize(np.ascontiguousarray(w), qtype), raw_dtype=qtype
            )
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()

"""LLM decoding benchmark: a 125M-parameter Llama-style model, relax_mlir vs llama.cpp vs PyTorch eager.

    python3 bench/bench_llm.py                 # 1 and 2 threads; writes bench/LLM_RESULTS.md
    python3 bench/bench_llm.py --threads 1 --small --no-write      # a tiny model, for development
    python3 bench/bench_llm.py --under-load    # decode beside one busy process (its own section)

Each run rewrites only its own section of bench/LLM_RESULTS.md: one per CPU vendor and mode (the
under-load one apart), so one machine family's numbers stay next to the other's.
    python3 bench/bench_llm.py --no-llama-cpp  # without building/running llama.cpp

The config is d=768, 12 layers, 12 query heads, 4 KV heads, ffn 2048, vocab 32000, fp32, max context
1024, max batch 4 (125M parameters). Every engine runs the same random weights:

- relax_mlir compiles ``prefill`` and ``decode`` once (``opt_level=3``) for every batch and length, from
  fp32 weights and from the Q8_0 and Q4_0 GGUF files (``LanguageModel.from_gguf``).
- PyTorch (CPU 2.13, installed with pip if missing: ``torch==2.13.0+cpu``) runs the same model eagerly
  with a preallocated KV cache written in place and ``scaled_dot_product_attention``.
- llama.cpp: built once from the ``llama-cpp-python==0.3.36`` sdist (pip builds llama.cpp with cmake and
  the system g++; a few minutes) into ``~/.cache/relax_mlir/bench/llama_cpp-0.3.36`` and reused; it runs
  the model written as GGUF F32, Q8_0 and Q4_0 files through llama.cpp's C API (ctypes, low level).

It reports prefill latency for 128 and 512 tokens, decode tokens/s at batch 1 and 4 (32 steps after a
128-token prompt), each engine's % of the memory-bandwidth bound (weight bytes read per decode step /
measured copy bandwidth), and memory (weights, KV cache, activations). ``--under-load`` measures decode
(fp32, Q8_0, Q4_0) with one CPU-bound process running beside it, and the load other processes put on the
machine meanwhile; there relax_mlir's row at all cores runs the default (no thread count set: the run-time
count follows the load, ``runtime/libs.ThreadBudget``).
"""

from __future__ import annotations

import argparse
import importlib
import itertools
import json
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import types
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE.parent), str(HERE)]  # relax_mlir and vendor_sections, also when imported as a module

from vendor_sections import machine_family, merge_section  # noqa: E402

TORCH = "torch==2.13.0+cpu"
LLAMA_CPP = "llama-cpp-python==0.3.36"
LLAMA_CPP_DIR = Path.home() / ".cache" / "relax_mlir" / "bench" / "llama_cpp-0.3.36"
GGUF_TYPES = ("F32", "Q8_0", "Q4_0")
STEPS = 32  # decode steps after the prompt
PROMPT = 128


def ensure_torch() -> None:
    try:
        import torch  # noqa: F401, PLC0415
    except ImportError:
        print(f"installing {TORCH} (the benchmark's reference)", flush=True)
        subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", TORCH], check=True)


def ensure_llama_cpp() -> Path | None:
    """The directory holding the built ``llama_cpp`` package (built once, then reused), or None if the build
    failed (with a message saying why and how to skip it)."""
    if (LLAMA_CPP_DIR / "llama_cpp" / "llama_cpp.py").exists():
        return LLAMA_CPP_DIR
    tmp = LLAMA_CPP_DIR.with_name(LLAMA_CPP_DIR.name + ".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    print(f"building {LLAMA_CPP} into {LLAMA_CPP_DIR} (cmake + g++, several minutes; once)", flush=True)
    env = dict(
        os.environ, CMAKE_ARGS="-DLLAVA_BUILD=OFF", CMAKE_BUILD_PARALLEL_LEVEL=str(os.cpu_count() or 1)
    )
    cmd = [sys.executable, "-m", "pip", "install", "--no-deps", "--no-binary", "llama-cpp-python"]
    proc = subprocess.run(
        [*cmd, "--target", str(tmp), LLAMA_CPP], env=env, capture_output=True, text=True, check=False
    )
    if proc.returncode != 0:
        log = LLAMA_CPP_DIR.with_name("llama_cpp-build.log")
        log.write_text(proc.stdout + proc.stderr)
        print(
            f"llama.cpp: building {LLAMA_CPP} failed (pip exit {proc.returncode}; log: {log}); it needs cmake, "
            "g++ and PyPI. Continuing without llama.cpp (--no-llama-cpp skips the build).",
            file=sys.stderr,
        )
        return None
    tmp.rename(LLAMA_CPP_DIR)
    return LLAMA_CPP_DIR


def config(small: bool = False):  # noqa: ANN201
    from relax_mlir.llm import LlamaConfig  # noqa: PLC0415

    if small:  # for development: the same code paths in seconds
        return LlamaConfig(
            vocab_size=2048, hidden_size=256, layers=2, heads=4, kv_heads=2, ffn_size=512, max_context=1024,
            max_batch=4,
        )  # fmt: skip
    return LlamaConfig(
        vocab_size=32000,
        hidden_size=768,
        layers=12,
        heads=12,
        kv_heads=4,
        ffn_size=2048,
        max_context=1024,
        max_batch=4,
    )


def machine() -> str:
    """CPU model, LLVM's name for the host CPU, cores."""
    model = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    try:
        import llvmlite.binding as llvm  # noqa: PLC0415

        llvm_cpu = llvm.get_host_cpu_name()
    except ImportError:
        llvm_cpu = "?"
    return f"{model} (LLVM CPU `{llvm_cpu}`), {os.cpu_count()} cores"


# ---------------------------------------------------------------------------------------------------------
# GGUF files of the same model


def gguf_step_bytes(path: Path) -> tuple[int, int]:
    """(bytes of all tensors, bytes read per decode step: all but the embedding table) of a GGUF file."""
    import gguf  # noqa: PLC0415

    reader = gguf.GGUFReader(str(path))
    total = sum(int(t.n_bytes) for t in reader.tensors)
    embed = sum(int(t.n_bytes) for t in reader.tensors if t.name == "token_embd.weight")
    return total, total - embed


# ---------------------------------------------------------------------------------------------------------
# Engines: start(batch) -> state; prefill(state, tokens [b, s]) -> last logits [b, vocab];
# step(state, tokens [b]) -> logits [b, vocab]


class TorchLlama:
    """The same model in PyTorch eager, with a preallocated ``[b, kv_heads, max_context, head_dim]`` cache."""

    def __init__(self, cfg, weights: dict) -> None:  # noqa: ANN001
        import torch  # noqa: PLC0415

        self.torch, self.cfg = torch, cfg
        self.w = {n: torch.from_numpy(v) for n, v in weights.items()}
        hd = cfg.head_dim
        inv_freq = 1.0 / cfg.rope_theta ** (torch.arange(0, hd, 2, dtype=torch.float64) / hd)
        angles = torch.arange(cfg.max_context, dtype=torch.float64)[:, None] * inv_freq[None, :]
        angles = torch.cat([angles, angles], -1)
        self.cos, self.sin = angles.cos().float(), angles.sin().float()

    def new_cache(self, batch: int) -> list:
        cfg, torch = self.cfg, self.torch
        shape = (batch, cfg.kv_heads, cfg.max_context, cfg.head_dim)
        return [(torch.zeros(shape), torch.zeros(shape)) for _ in range(cfg.layers)]

    def _rms(self, x, w):  # noqa: ANN001, ANN202
        return x * self.torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.cfg.eps) * w

    def _rope(self, x, cos, sin):  # noqa: ANN001, ANN202
        half = x.shape[-1] // 2
        return x * cos + self.torch.cat([-x[..., half:], x[..., :half]], -1) * sin

    def forward(self, tokens, cache: list, past: int, last_only: bool = False):  # noqa: ANN001, ANN201
        torch, cfg, w = self.torch, self.cfg, self.w
        F = torch.nn.functional
        b, s = tokens.shape
        hd, total = cfg.head_dim, past + s
        cos, sin = self.cos[past:total][None, None], self.sin[past:total][None, None]
        x = F.embedding(tokens, w["model.embed_tokens.weight"])
        for i, (kc, vc) in enumerate(cache):
            p = f"model.layers.{i}."
            h = self._rms(x, w[p + "input_layernorm.weight"])
            q = (h @ w[p + "self_attn.q_proj.weight"]).view(b, s, cfg.heads, hd).transpose(1, 2)
            k = (h @ w[p + "self_attn.k_proj.weight"]).view(b, s, cfg.kv_heads, hd).transpose(1, 2)
            v = (h @ w[p + "self_attn.v_proj.weight"]).view(b, s, cfg.kv_heads, hd).transpose(1, 2)
            q, k = self._rope(q, cos, sin), self._rope(k, cos, sin)
            kc[:, :, past:total] = k
            vc[:, :, past:total] = v
            attn = F.scaled_dot_product_attention(  # bool(): a guard under torch.export (SymBool otherwise)
                q, kc[:, :, :total], vc[:, :, :total], is_causal=bool(s > 1), enable_gqa=True
            )
            x = x + attn.transpose(1, 2).reshape(b, s, cfg.heads * hd) @ w[p + "self_attn.o_proj.weight"]
            h = self._rms(x, w[p + "post_attention_layernorm.weight"])
            gate = F.silu(h @ w[p + "mlp.gate_proj.weight"])
            x = x + (gate * (h @ w[p + "mlp.up_proj.weight"])) @ w[p + "mlp.down_proj.weight"]
        if last_only:  # the logits of the last token only, as llama.cpp and relax_mlir's prefill_last
            x = x[:, -1:]
        return self._rms(x, w["model.norm.weight"]) @ w["lm_head.weight"]


class RelaxEngine:
    def __init__(self, lm) -> None:  # noqa: ANN001
        self.lm = lm

    def start(self, batch: int):  # noqa: ANN201
        return self.lm.new_cache(batch)

    def prefill(self, cache, tokens):  # noqa: ANN001, ANN201
        return self.lm.prefill(tokens, cache, last_only=True)

    def step(self, cache, tokens):  # noqa: ANN001, ANN201
        return self.lm.decode(tokens, cache)


class TorchEngine:
    def __init__(self, ref) -> None:  # noqa: ANN001
        self.ref = ref

    def start(self, batch: int) -> dict:
        return {"cache": self.ref.new_cache(batch), "pos": 0}

    def _forward(self, state: dict, tokens):  # noqa: ANN001, ANN202
        torch = self.ref.torch
        with torch.inference_mode():
            out = self.ref.forward(torch.from_numpy(tokens), state["cache"], state["pos"], last_only=True)
            out = out[:, -1].numpy()
        state["pos"] += tokens.shape[1]
        return out

    def prefill(self, state: dict, tokens):  # noqa: ANN001, ANN201
        return self._forward(state, tokens)

    def step(self, state: dict, tokens):  # noqa: ANN001, ANN201
        return self._forward(state, tokens.reshape(-1, 1))


def load_llama_cpp(root: Path) -> types.ModuleType:
    """llama-cpp-python's low-level ctypes module alone (its package ``__init__`` pulls in the high-level
    API and its dependencies, which the benchmark does not need)."""
    pkg = types.ModuleType("llama_cpp")
    pkg.__path__ = [str(root / "llama_cpp")]
    sys.modules["llama_cpp"] = pkg
    return importlib.import_module("llama_cpp.llama_cpp")


class LlamaCppEngine:
    """A GGUF model in llama.cpp: one context (unified KV cache of ``n_ctx`` cells, up to 4 sequences)."""

    def __init__(self, L, path: Path, threads: int, n_ctx: int, vocab: int, extra_bufts: bool) -> None:  # noqa: ANN001
        self.L, self.vocab, self.log = L, vocab, []

        @L.llama_log_callback
        def log(level, text, user_data) -> None:  # noqa: ANN001, ARG001
            self.log.append(text.decode(errors="replace"))

        self._log_cb = log  # kept alive: llama.cpp calls it
        L.llama_log_set(log, None)
        L.llama_backend_init()
        mp = L.llama_model_default_params()
        mp.n_gpu_layers = 0
        mp.use_extra_bufts = extra_bufts
        self.model = L.llama_model_load_from_file(str(path).encode(), mp)
        if not self.model:
            raise RuntimeError(f"llama.cpp could not load {path}: {''.join(self.log)[-2000:]}")
        cp = L.llama_context_default_params()
        cp.n_ctx, cp.n_batch, cp.n_ubatch, cp.n_seq_max = n_ctx, 512, 512, 4
        cp.n_threads = cp.n_threads_batch = threads
        cp.kv_unified = True
        cp.no_perf = True
        self.ctx = L.llama_init_from_model(self.model, cp)
        if not self.ctx:
            raise RuntimeError(f"llama.cpp could not create a context: {''.join(self.log)[-2000:]}")
        self.mem = L.llama_get_memory(self.ctx)
        self.batch = L.llama_batch_init(512, 0, 1)

    def buffers(self) -> dict[str, float]:
        """MiB of llama.cpp's buffers by kind (model, KV, compute), from its load log."""
        out: dict[str, float] = {}
        for kind, mib in re.findall(r"(model|KV|compute) buffer size =\s*([\d.]+) MiB", "".join(self.log)):
            out[kind] = out.get(kind, 0.0) + float(mib)
        return out

    def start(self, batch: int) -> dict:
        self.L.llama_memory_clear(self.mem, True)
        return {"pos": 0}

    def run(self, state: dict, tokens, all_logits: bool = False):  # noqa: ANN001, ANN201
        """Logits of the last token of each sequence (row j of ``tokens`` is sequence j), or of every token."""
        import numpy as np  # noqa: PLC0415

        L, b = self.L, self.batch
        rows, seq = tokens.shape
        pos, flat, wanted = state["pos"], tokens.tolist(), []
        n = 0
        for j in range(rows):
            for i in range(seq):
                b.token[n], b.pos[n], b.n_seq_id[n] = flat[j][i], pos + i, 1
                b.seq_id[n][0] = j
                b.logits[n] = all_logits or i == seq - 1
                if b.logits[n]:
                    wanted.append(n)
                n += 1
        b.n_tokens = n
        rc = L.llama_decode(self.ctx, b)
        if rc != 0:
            raise RuntimeError(f"llama_decode returned {rc}")
        state["pos"] = pos + seq
        return np.stack(
            [np.ctypeslib.as_array(L.llama_get_logits_ith(self.ctx, i), (self.vocab,)) for i in wanted]
        )

    def prefill(self, state: dict, tokens):  # noqa: ANN001, ANN201
        return self.run(state, tokens)

    def step(self, state: dict, tokens):  # noqa: ANN001, ANN201
        return self.run(state, tokens.reshape(-1, 1))

    def close(self) -> None:
        self.L.llama_batch_free(self.batch)
        self.L.llama_free(self.ctx)
        self.L.llama_model_free(self.model)


def median_ms(fn, repeats: int) -> float:  # noqa: ANN001
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times) * 1e3


def measure(engine, vocab: int, prefill: bool = True, seed: int = 0) -> dict:  # noqa: ANN001
    """Prefill ms (128 and 512 tokens, batch 1) and decode tok/s (batch 1 and 4, STEPS greedy steps after
    a PROMPT-token prompt; the median of 3 runs after an untimed one). Every engine gets the same tokens
    (same seed)."""
    import numpy as np  # noqa: PLC0415

    rng = np.random.default_rng(seed)
    out: dict = {"prefill": {}, "decode": {}}
    for seq in (128, 512):
        tokens = rng.integers(0, vocab, (1, seq))
        if not prefill:
            continue

        def run(tokens: np.ndarray = tokens) -> None:
            engine.prefill(engine.start(1), tokens)

        run()
        out["prefill"][seq] = median_ms(run, 5 if seq == 128 else 3)
    for batch in (1, 4):
        prompt = rng.integers(0, vocab, (batch, PROMPT))

        def decode(batch: int = batch, prompt: np.ndarray = prompt) -> float:
            state = engine.start(batch)
            token = engine.prefill(state, prompt).argmax(-1)
            t = time.perf_counter()
            for _ in range(STEPS):
                token = engine.step(state, token).argmax(-1)
            return time.perf_counter() - t

        decode()  # untimed: the first run after loading pays one-time costs (0.75x the rate of later ones)
        out["decode"][batch] = batch * STEPS / statistics.median(decode() for _ in range(3))
    return out


def copy_bandwidth() -> float:
    """Bytes/s of a large numpy copy (read + write counted), best of 5."""
    import numpy as np  # noqa: PLC0415

    src = np.ones(64 << 20, np.float32)
    dst = np.empty_like(src)
    best = min(median_ms(lambda: np.copyto(dst, src), 1) for _ in range(5))
    return 2 * src.nbytes / (best / 1e3)


def activation_plan(module) -> dict[str, str]:  # noqa: ANN001
    """Peak planned activation memory of each function at its declared bounds (relax-O3's plan)."""
    from mlir import passmanager  # noqa: PLC0415

    from relax_mlir.context import make_context, parse_module  # noqa: PLC0415
    from relax_mlir.pipelines import add_pipeline, load_passes, parse_pipeline  # noqa: PLC0415
    from relax_mlir.pipelines.cpu import LEVELS  # noqa: PLC0415
    from relax_mlir.transforms.memory_plan import plan_module  # noqa: PLC0415

    load_passes()
    upto = LEVELS[3].split(",relax-lower-host")[0]
    with make_context():
        op = parse_module(str(module), "<llm>")
        pm = passmanager.PassManager("builtin.module")
        add_pipeline(pm, parse_pipeline(upto))
        pm.run(op)
        out = {}
        for plan in plan_module(op):
            at = plan.at_bounds(plan.peak())
            out[plan.name] = f"{at / 2**20:.1f} MiB" if at is not None else f"unbounded: {plan.peak()}"
        return out


def kv_bytes(cfg, batch: int, itemsize: int = 4) -> int:  # noqa: ANN001
    """Keys and values of every layer at the full context for ``batch`` sequences."""
    return 2 * cfg.layers * cfg.max_context * batch * cfg.kv_heads * cfg.head_dim * itemsize


def relax_child(spec: dict) -> dict:
    """relax_mlir (fp32, and the Q8_0/Q4_0 GGUF files through ``LanguageModel.from_gguf``) and PyTorch eager."""
    import numpy as np  # noqa: PLC0415
    import torch  # noqa: PLC0415

    from relax_mlir.llm import LanguageModel, random_weights  # noqa: PLC0415

    threads, under_load = spec["threads"], spec.get("under_load", False)
    torch.set_num_threads(threads)
    cfg = config(spec["small"])
    weights = random_weights(cfg, seed=0, scale=0.02)
    t = time.perf_counter()
    lm = LanguageModel(cfg, weights)
    compile_s = time.perf_counter() - t
    ref = TorchLlama(cfg, weights)
    prompt = np.random.default_rng(1).integers(0, cfg.vocab_size, (1, 16))
    with torch.inference_mode():
        expected = ref.forward(torch.from_numpy(prompt), ref.new_cache(1), 0).numpy()
    got = lm.prefill(prompt, lm.new_cache(1))
    result: dict = {
        "threads": threads,
        "compile_s": compile_s,
        "max_abs_error": float(np.abs(got - expected).max()),
        "logit_scale": float(np.abs(expected).max()),
        "engines": {},
    }
    total = sum(w.nbytes for w in weights.values())
    step = total - weights["model.embed_tokens.weight"].nbytes
    kv = f"{kv_bytes(cfg, 1) / 2**20:.0f} / {kv_bytes(cfg, 4) / 2**20:.0f} MiB (f32)"
    plan = {} if under_load else activation_plan(lm.module)
    result["engines"]["relax_mlir fp32"] = {
        **measure(RelaxEngine(lm), cfg.vocab_size, prefill=not under_load),
        "step_bytes": step,
        "memory": [f"{total / 2**20:.0f} MiB", kv, ", ".join(f"`{n}` {v}" for n, v in plan.items())],
    }
    result["engines"]["PyTorch fp32 (eager)"] = {
        **measure(TorchEngine(ref), cfg.vocab_size, prefill=not under_load),
        "step_bytes": step,
        "memory": [f"{total / 2**20:.0f} MiB", kv, "not planned (allocator)"],
    }
    if not spec.get("gguf_dir"):
        return result
    kinds = ("f32",) if under_load else ("f32", "i8")
    for dtype, activations in itertools.product(GGUF_TYPES[1:], kinds):  # the files llama.cpp runs
        path = Path(spec["gguf_dir"]) / f"model-{dtype}.gguf"
        t = time.perf_counter()
        qlm = LanguageModel.from_gguf(
            path, max_batch=cfg.max_batch, max_context=cfg.max_context, activations=activations
        )
        compile_q = time.perf_counter() - t
        size, step_q = gguf_step_bytes(path)
        name = f"relax_mlir {dtype}" + (", int8 activations" if activations == "i8" else "")
        result["engines"][name] = {
            **measure(RelaxEngine(qlm), cfg.vocab_size, prefill=not under_load),
            "step_bytes": step_q,
            "compile_s": compile_q,
            "memory": [f"{size / 2**20:.0f} MiB (as the file)", kv, ""],
        }
    return result


def llama_child(spec: dict) -> dict:
    """llama.cpp on the F32, Q8_0 and Q4_0 files: timings, buffers and logits vs the float64 reference."""
    import numpy as np  # noqa: PLC0415

    L = load_llama_cpp(Path(spec["llama_dir"]))
    cfg = config(spec["small"])
    gdir = Path(spec["gguf_dir"])
    prompt = np.load(gdir / "prompt.npy")
    out: dict = {"engines": {}, "extra_bufts": spec["extra_bufts"]}
    for dtype in GGUF_TYPES:
        path = gdir / f"model-{dtype}.gguf"
        eng = LlamaCppEngine(L, path, spec["threads"], cfg.max_context, cfg.vocab_size, spec["extra_bufts"])
        expected = np.load(gdir / f"expected-{dtype}.npy")[0]
        got = eng.run(eng.start(1), prompt, all_logits=True)
        timings = measure(eng, cfg.vocab_size)
        size, step = gguf_step_bytes(path)
        buf = eng.buffers()
        out["engines"][f"llama.cpp {dtype}"] = {
            **timings,
            "step_bytes": step,
            "file_bytes": size,
            "max_abs_error": float(np.abs(got - expected).max()),
            "logit_scale": float(np.abs(expected).max()),
            "argmax_agree": float((got.argmax(-1) == expected.argmax(-1)).mean()),
            "memory": [
                f"{buf.get('model', 0):.0f} MiB",
                f"{buf.get('KV', 0):.0f} MiB (f16, {cfg.max_context} cells shared by the sequences)",
                f"{buf.get('compute', 0):.0f} MiB (compute buffer)",
            ],
        }
        eng.close()
    return out


def write_files(cfg, gdir: Path) -> dict[str, int]:  # noqa: ANN001
    """The model as GGUF F32/Q8_0/Q4_0 files in ``gdir``, a 16-token prompt and, per file, the float64
    reference logits of the weights the file holds. Returns the file sizes."""
    import numpy as np  # noqa: PLC0415

    from relax_mlir.llm import random_weights  # noqa: PLC0415
    from relax_mlir.llm.gguf import load_gguf, save_gguf  # noqa: PLC0415
    from relax_mlir.llm.reference import forward  # noqa: PLC0415

    weights = random_weights(cfg, seed=0, scale=0.02)
    prompt = np.random.default_rng(1).integers(0, cfg.vocab_size, (1, 16))
    np.save(gdir / "prompt.npy", prompt)
    sizes = {}
    for dtype in GGUF_TYPES:
        path = gdir / f"model-{dtype}.gguf"
        save_gguf(cfg, weights, path, dtype)
        _, held, _ = load_gguf(path, max_batch=cfg.max_batch, max_context=cfg.max_context)  # what it holds
        np.save(gdir / f"expected-{dtype}.npy", forward(cfg, held, prompt))
        sizes[dtype] = path.stat().st_size
    return sizes


def write_quantized(cfg, gdir: Path) -> None:  # noqa: ANN001
    """The model as GGUF files of the quantized types (what ``--under-load`` decodes besides fp32)."""
    from relax_mlir.llm import random_weights  # noqa: PLC0415
    from relax_mlir.llm.gguf import save_gguf  # noqa: PLC0415

    weights = random_weights(cfg, seed=0, scale=0.02)
    for dtype in GGUF_TYPES[1:]:
        save_gguf(cfg, weights, gdir / f"model-{dtype}.gguf", dtype)


def _row(name: str, e: dict, bw: float) -> str:
    cells = [name]
    cells += [f"{e['prefill'][s]:.1f}" if s in e["prefill"] else "-" for s in (128, 512)]
    for b in (1, 4):
        tok = e["decode"].get(b)
        bound = b * bw / e["step_bytes"]
        cells += [f"{tok:.1f}", f"{100 * tok / bound:.0f}%"] if tok else ["-", "-"]
    return "| " + " | ".join(cells) + " |"


def report(results: list[dict], spec: dict) -> str:
    import numpy as np  # noqa: PLC0415

    from relax_mlir.llm import CausalLM  # noqa: PLC0415

    cfg = config(spec["small"])
    params = sum(int(np.prod(s)) for s in CausalLM(cfg).weights().values())
    bw = spec["copy_bandwidth"]
    lines = [
        f"## {machine_family()}: {machine()}",
        "",
        f"- model: Llama-style, d={cfg.hidden_size}, {cfg.layers} layers, {cfg.heads} query heads, "
        f"{cfg.kv_heads} KV heads, ffn {cfg.ffn_size}, vocab {cfg.vocab_size}, {params / 1e6:.0f}M parameters; "
        f"max context {cfg.max_context}, max batch {cfg.max_batch}; random weights, the same in every engine",
        f"- date: {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}",
        "- relax_mlir compiles `prefill` and `decode` once (opt_level=3) and runs every batch and length; "
        "PyTorch 2.13 eager (CPU) runs the same weights with the same in-place KV cache.",
        f"- llama.cpp: {LLAMA_CPP} (built from the sdist with Debian's g++, native CPU flags), low-level C "
        "API, GGUF files written by this script (q/k rows permuted to llama.cpp's rope pairs); F16 KV cache "
        "(its default), one context of max-context cells shared by the sequences; "
        + (
            "weight repacking (`use_extra_bufts`) "
            + (
                "on."
                if spec.get("extra_bufts")
                else "off (`use_extra_bufts = False`: it segfaults on some Intel CPUs)."
            )
            if spec.get("llama")
            else "not run."
        ),
        "- prefill: every engine computes the logits of the last prompt token only (relax_mlir's `prefill_last`).",
        f"- bandwidth bound: weight bytes read per decode step (all weights but the embedding table) / "
        f"measured single-process copy bandwidth ({bw / 1e9:.1f} GB/s); decode at batch B reads the "
        "weights once per step, so its bound is B times batch 1's.",
        "",
    ]
    if spec.get("gguf_sizes"):
        lines += [
            "GGUF files: " + ", ".join(f"{d} {s / 2**20:.0f} MiB" for d, s in spec["gguf_sizes"].items()),
            "",
        ]
    for r in results:
        lines += [
            f"### {r['threads']} thread(s)",
            "",
            f"relax_mlir compile (cold or cached): {r['compile_s']:.2f} s. relax_mlir logits vs PyTorch: max abs "
            f"error {r['max_abs_error']:.2e} (logits up to {r['logit_scale']:.2f}).",
            "",
            "| engine | prefill 128 ms | prefill 512 ms | decode b1 tok/s | b1 % of bound | decode b4 tok/s "
            "| b4 % of bound |",
            "| --- | ---: | ---: | ---: | ---: | ---: | ---: |",
        ]
        lines += [_row(name, e, bw) for name, e in r["engines"].items()]
        checks = [
            f"{n}: max abs error {e['max_abs_error']:.2e} (logits up to {e['logit_scale']:.2f}), argmax agrees "
            f"on {100 * e['argmax_agree']:.0f}% of 16 positions"
            for n, e in r["engines"].items()
            if "max_abs_error" in e
        ]
        if checks:
            lines += ["", "llama.cpp logits vs a float64 numpy reference on the weights each file holds: "
                      + "; ".join(checks) + "."]  # fmt: skip
        lines += [
            "",
            "| memory | weights resident | KV cache (batch 1 / 4, full context) | activations |",
            "| --- | --- | --- | --- |",
        ]
        lines += ["| " + " | ".join([n, *e["memory"]]) + " |" for n, e in r["engines"].items()]
        lines.append("")
    return "\n".join(lines)


HEADER = [
    "# LLM decoding: relax_mlir vs llama.cpp vs PyTorch eager",
    "",
    "Generated by `python3 bench/bench_llm.py`; rerun to refresh. One section per CPU vendor and mode: a run "
    "replaces its own and keeps the others.",
    "",
]


def report_under_load(results: list[dict], spec: dict) -> str:
    cores = os.cpu_count()
    lines = [
        f"## {machine_family()}: under load",
        "",
        f"Decode with one CPU-bound process (a Python busy loop) running beside the benchmark on this "
        f"{cores}-core machine ({machine()}; {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}). "
        "Target: 2-thread decode no slower than 1-thread decode. relax_mlir at "
        f"{cores} threads runs the default (no thread count set: the count of each parallel region follows "
        "the load at run time); at fewer, `RELAX_MLIR_NUM_THREADS`. Others' load: the busy cores of all "
        "other processes (the busy loop included) while the run lasted, from /proc/stat.",
        "",
        "| engine | threads | decode b1 tok/s | decode b4 tok/s | others' load (cores) |",
        "| --- | ---: | ---: | ---: | ---: |",
    ]
    for name in results[0]["engines"]:
        for r in results:
            d = r["engines"][name]["decode"]
            lines.append(f"| {name} | {r['threads']} | {d[1]:.1f} | {d[4]:.1f} | {r['others_load']:.2f} |")
    return "\n".join(lines) + "\n"


def write_section(path: Path, text: str, under_load: bool) -> None:
    """Replace this machine's section of ``path`` for this mode (full run or ``--under-load``) by ``text``."""
    key = f"{machine_family()} under load" if under_load else machine_family()
    path.write_text(merge_section(path.read_text() if path.exists() else "", text, key, HEADER))


def machine_busy() -> tuple[float, float] | None:
    """(monotonic time, busy CPU seconds of the whole machine) from /proc/stat, or None."""
    try:
        with open("/proc/stat", "rb") as f:
            fields = [int(v) for v in f.readline().split()[1:]]
    except (OSError, ValueError):
        return None
    return time.monotonic(), (sum(fields[:8]) - fields[3] - fields[4]) / os.sysconf("SC_CLK_TCK")


def busy_loop() -> subprocess.Popen:
    """One CPU-bound process (the 'under load' condition)."""
    return subprocess.Popen([sys.executable, "-c", "while True: pass"])


def run_child(spec: dict) -> dict:
    """Run one engine's child at ``spec["threads"]``; under load, the result also has ``others_load``: the
    cores other processes kept busy meanwhile (the machine's busy time minus the child's CPU time)."""
    threads = spec["threads"]
    env = dict(
        os.environ,
        OPENBLAS_NUM_THREADS=str(threads),
        RELAX_MLIR_BLAS_THREADS=str(threads),
        RELAX_MLIR_NUM_THREADS=str(threads),
        OMP_NUM_THREADS=str(threads),
    )
    if spec.get("under_load") and threads >= (os.cpu_count() or 1):  # the default: adapts to the load
        del env["RELAX_MLIR_NUM_THREADS"], env["OMP_NUM_THREADS"]
    before, child_cpu = machine_busy(), _children_cpu()
    out = subprocess.run(
        [sys.executable, __file__, "--child", json.dumps(spec)],
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    if out.returncode != 0:
        raise RuntimeError(f"{spec['kind']} child failed (exit {out.returncode}):\n{out.stderr[-3000:]}")
    result = json.loads(out.stdout.strip().splitlines()[-1])
    after, child_cpu = machine_busy(), _children_cpu() - child_cpu
    if before is not None and after is not None:
        result["others_load"] = (after[1] - before[1] - child_cpu) / max(after[0] - before[0], 1e-3)
    for e in result["engines"].values():  # JSON object keys are strings: back to token counts and batches
        e["prefill"] = {int(k): v for k, v in e["prefill"].items()}
        e["decode"] = {int(k): v for k, v in e["decode"].items()}
    return result


def _children_cpu() -> float:
    import resource  # noqa: PLC0415

    use = resource.getrusage(resource.RUSAGE_CHILDREN)
    return use.ru_utime + use.ru_stime


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--threads", default="1,2")
    parser.add_argument("--no-write", action="store_true")
    parser.add_argument("--no-llama-cpp", action="store_true", help="do not build or run llama.cpp")
    parser.add_argument("--small", action="store_true", help="a tiny model (development)")
    parser.add_argument("--under-load", action="store_true", help="decode beside one busy process")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        spec = json.loads(args.child)
        print(json.dumps((relax_child if spec["kind"] == "relax" else llama_child)(spec)))
        return 0
    ensure_torch()
    threads = [int(t) for t in args.threads.split(",")]
    base = {"small": args.small}
    out = HERE / "LLM_RESULTS.md"
    if args.under_load:
        with tempfile.TemporaryDirectory(prefix="bench_llm_") as gdir:
            write_quantized(config(args.small), Path(gdir))
            busy = busy_loop()
            try:
                spec = {**base, "kind": "relax", "under_load": True, "gguf_dir": gdir}
                results = [run_child({**spec, "threads": t}) for t in threads]
            finally:
                busy.kill()
                busy.wait()
        text = report_under_load(results, base)
        print(text)
        if not args.no_write:
            write_section(out, text, under_load=True)
        return 0

    llama_dir = None if args.no_llama_cpp else ensure_llama_cpp()
    spec = {**base, "copy_bandwidth": copy_bandwidth(), "llama": llama_dir is not None}
    with tempfile.TemporaryDirectory(prefix="bench_llm_") as gdir:
        spec["gguf_sizes"] = write_files(config(args.small), Path(gdir))
        spec["gguf_dir"] = gdir
        # weight repacking segfaults on some Intel CPUs (DESIGN.md section 6): on elsewhere, retried off
        spec["extra_bufts"] = "intel" not in machine().lower()
        results = []
        for t in threads:
            result = run_child({**spec, "kind": "relax", "threads": t})
            if llama_dir is not None:
                child = {**spec, "kind": "llama", "threads": t, "llama_dir": str(llama_dir)}
                try:
                    llama = run_child(child)
                except RuntimeError as e:
                    if not child["extra_bufts"]:
                        raise
                    print(f"llama.cpp with weight repacking failed, retrying without: {e}", file=sys.stderr)
                    spec["extra_bufts"] = False
                    llama = run_child({**child, "extra_bufts": False})
                result["engines"].update(llama["engines"])
            results.append(result)
    text = report(results, spec)
    print(text)
    if not args.no_write:
        write_section(out, text, under_load=False)
    return 0


if __name__ == "__main__":
    sys.exit(main())

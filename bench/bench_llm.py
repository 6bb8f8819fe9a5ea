"""LLM decoding benchmark: a ~100M-parameter Llama-style model, relax_mlir vs PyTorch eager.

    python3 bench/bench_llm.py                 # 1 and 2 threads; writes bench/LLM_RESULTS.md
    python3 bench/bench_llm.py --threads 1 --no-write

The config is d=768, 12 layers, 12 query heads, 4 KV heads, ffn 2048, vocab 32000, fp32, max context
1024, max batch 4 (125M parameters). Both engines run the same random weights; relax_mlir compiles
``prefill`` and ``decode`` once (``opt_level=3``) for every batch and length. PyTorch (CPU 2.13,
installed by this script with pip if missing: ``torch==2.13.0+cpu``) runs the same model eagerly with a
preallocated KV cache written in place and ``scaled_dot_product_attention``.

It reports prefill latency for 128 and 512 tokens, decode tokens/s at batch 1 and 4 (32 steps after a
128-token prompt), the memory-bandwidth bound (weight bytes read per decode step / measured copy
bandwidth), and the activation memory of the static plan at the declared bounds.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

TORCH = "torch==2.13.0+cpu"


def ensure_torch() -> None:
    try:
        import torch  # noqa: F401, PLC0415
    except ImportError:
        print(f"installing {TORCH} (the benchmark's reference)", flush=True)
        subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", TORCH], check=True)


def config():  # noqa: ANN201
    from relax_mlir.llm import LlamaConfig  # noqa: PLC0415

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

    def forward(self, tokens, cache: list, past: int):  # noqa: ANN001, ANN201
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
        return self._rms(x, w["model.norm.weight"]) @ w["lm_head.weight"]


def median_ms(fn, repeats: int) -> float:  # noqa: ANN001
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times) * 1e3


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


def child(threads: int) -> dict:
    import numpy as np  # noqa: PLC0415
    import torch  # noqa: PLC0415

    from relax_mlir.llm import LanguageModel, random_weights  # noqa: PLC0415

    torch.set_num_threads(threads)
    cfg = config()
    weights = random_weights(cfg, seed=0, scale=0.02)
    t = time.perf_counter()
    lm = LanguageModel(cfg, weights)
    compile_s = time.perf_counter() - t
    ref = TorchLlama(cfg, weights)
    rng = np.random.default_rng(0)
    result: dict = {"threads": threads, "compile_s": compile_s, "prefill": {}, "decode": {}}

    prompt = rng.integers(0, cfg.vocab_size, (1, 16))
    with torch.inference_mode():
        expected = ref.forward(torch.from_numpy(prompt), ref.new_cache(1), 0).numpy()
    got = lm.prefill(prompt, lm.new_cache(1))
    result["max_abs_error"] = float(np.abs(got - expected).max())
    result["logit_scale"] = float(np.abs(expected).max())

    for seq in (128, 512):
        tokens = rng.integers(0, cfg.vocab_size, (1, seq))
        repeats = 5 if seq == 128 else 3

        def relax_prefill(tokens: np.ndarray = tokens) -> None:
            lm.prefill(tokens, lm.new_cache(1))

        def torch_prefill(tokens: np.ndarray = tokens) -> None:
            with torch.inference_mode():
                ref.forward(torch.from_numpy(tokens), ref.new_cache(1), 0)

        relax_prefill(), torch_prefill()
        result["prefill"][seq] = {
            "relax_ms": median_ms(relax_prefill, repeats),
            "torch_ms": median_ms(torch_prefill, repeats),
        }

    steps = 32
    for batch in (1, 4):
        prompt = rng.integers(0, cfg.vocab_size, (batch, 128))

        def relax_decode(batch: int = batch, prompt: np.ndarray = prompt) -> float:
            cache = lm.new_cache(batch)
            token = lm.prefill(prompt, cache)[:, -1].argmax(-1)
            t = time.perf_counter()
            for _ in range(steps):
                token = lm.decode(token, cache).argmax(-1)
            return time.perf_counter() - t

        def torch_decode(batch: int = batch, prompt: np.ndarray = prompt) -> float:
            with torch.inference_mode():
                cache = ref.new_cache(batch)
                token = ref.forward(torch.from_numpy(prompt), cache, 0)[:, -1].argmax(-1)
                t = time.perf_counter()
                for i in range(steps):
                    token = ref.forward(token[:, None], cache, 128 + i)[:, -1].argmax(-1)
                return time.perf_counter() - t

        relax_s = statistics.median(relax_decode() for _ in range(3))
        torch_s = statistics.median(torch_decode() for _ in range(3))
        result["decode"][batch] = {
            "relax_tok_s": batch * steps / relax_s,
            "torch_tok_s": batch * steps / torch_s,
            "relax_ms_per_step": relax_s / steps * 1e3,
        }

    weight_bytes = sum(w.nbytes for n, w in weights.items() if n != "model.embed_tokens.weight")
    result["weight_bytes_per_step"] = weight_bytes
    result["copy_bandwidth"] = copy_bandwidth()
    result["memory_plan"] = activation_plan(lm.module)
    return result


def report(results: list[dict]) -> str:
    import numpy as np  # noqa: PLC0415

    from relax_mlir.llm import CausalLM  # noqa: PLC0415

    cfg = config()
    params = sum(int(np.prod(s)) for s in CausalLM(cfg).weights().values())
    lines = [
        "# LLM decoding: relax_mlir vs PyTorch eager",
        "",
        "Generated by `python3 bench/bench_llm.py`; rerun to refresh.",
        "",
        f"- model: Llama-style, d={cfg.hidden_size}, {cfg.layers} layers, {cfg.heads} query heads, "
        f"{cfg.kv_heads} KV heads, ffn {cfg.ffn_size}, vocab {cfg.vocab_size}, fp32, {params / 1e6:.0f}M parameters; "
        f"max context {cfg.max_context}, max batch {cfg.max_batch}",
        f"- machine: {platform.processor() or platform.machine()}, {os.cpu_count()} cores; "
        f"date {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}",
        "- relax_mlir compiles `prefill` and `decode` once (opt_level=3) and runs every batch and length; "
        "PyTorch 2.13 eager (CPU) runs the same weights with the same in-place KV cache.",
        "- bandwidth bound: weight bytes read per decode step (all weights but the embedding table) / "
        "measured single-process copy bandwidth; decode at batch B reads the weights once per step.",
        "",
    ]
    for r in results:
        bw = r["copy_bandwidth"]
        bound = bw / r["weight_bytes_per_step"]
        lines += [
            f"## {r['threads']} thread(s)",
            "",
            f"Compile (cold or cached): {r['compile_s']:.2f} s. Logits vs PyTorch: max abs error "
            f"{r['max_abs_error']:.2e} (logits up to {r['logit_scale']:.2f}). Copy bandwidth "
            f"{bw / 1e9:.1f} GB/s; weights per step {r['weight_bytes_per_step'] / 2**20:.0f} MiB.",
            "",
            "| prefill | relax_mlir ms | PyTorch ms | relax / PyTorch |",
            "| --- | ---: | ---: | ---: |",
        ]
        for seq, p in r["prefill"].items():
            lines.append(
                f"| {seq} tokens | {p['relax_ms']:.1f} | {p['torch_ms']:.1f} | {p['relax_ms'] / p['torch_ms']:.2f} |"
            )
        lines += [
            "",
            "| decode | relax_mlir tok/s | PyTorch tok/s | speedup vs PyTorch | bandwidth bound tok/s | % of bound |",
            "| --- | ---: | ---: | ---: | ---: | ---: |",
        ]
        for batch, d in r["decode"].items():
            b = int(batch)
            lines.append(
                f"| batch {b} | {d['relax_tok_s']:.1f} | {d['torch_tok_s']:.1f} | {d['relax_tok_s'] / d['torch_tok_s']:.2f}x | "
                f"{b * bound:.1f} | {100 * d['relax_tok_s'] / (b * bound):.0f}% |"
            )
        lines += [
            "",
            "Activation memory of the static plan at the declared bounds: "
            + ", ".join(f"`{n}` {v}" for n, v in r["memory_plan"].items()),
            "",
        ]
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--threads", default="1,2")
    parser.add_argument("--no-write", action="store_true")
    parser.add_argument("--child", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(child(args.child)))
        return 0
    ensure_torch()
    results = []
    for threads in (int(t) for t in args.threads.split(",")):
        env = dict(
            os.environ,
            OPENBLAS_NUM_THREADS=str(threads),
            RELAX_MLIR_BLAS_THREADS=str(threads),
            RELAX_MLIR_NUM_THREADS=str(threads),
            OMP_NUM_THREADS=str(threads),
        )
        out = subprocess.run(
            [sys.executable, __file__, "--child", str(threads)],
            env=env,
            check=True,
            capture_output=True,
            text=True,
        )
        results.append(json.loads(out.stdout.strip().splitlines()[-1]))
    text = report(results)
    print(text)
    if not args.no_write:
        (HERE / "LLM_RESULTS.md").write_text(text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())

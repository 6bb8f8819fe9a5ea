"""Generation with a small Llama-style model: compile once, prefill a prompt, decode token by token.

    python -m relax_mlir.examples.llm                      # greedy, random weights
    python -m relax_mlir.examples.llm --temperature 0.8 --top-k 20 --weights model.safetensors

Tokens are bytes (vocab 256), so the output is printable but meaningless with random weights; pass a
safetensors file with HF Llama names whose sizes match ``--hidden/--layers/...`` to run real weights.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from relax_mlir.llm import LanguageModel, LlamaConfig, load_safetensors, random_weights


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--prompt", default="Relax brings symbolic shapes to MLIR. ")
    parser.add_argument("--tokens", type=int, default=32, help="new tokens to generate")
    parser.add_argument("--temperature", type=float, default=0.0)
    parser.add_argument("--top-k", type=int, default=None)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--weights", help="a safetensors file (HF Llama names)")
    parser.add_argument("--hidden", type=int, default=128)
    parser.add_argument("--layers", type=int, default=2)
    parser.add_argument("--heads", type=int, default=4)
    parser.add_argument("--kv-heads", type=int, default=2)
    parser.add_argument("--ffn", type=int, default=256)
    args = parser.parse_args(argv)

    cfg = LlamaConfig(
        vocab_size=256,
        hidden_size=args.hidden,
        layers=args.layers,
        heads=args.heads,
        kv_heads=args.kv_heads,
        ffn_size=args.ffn,
        max_context=512,
        max_batch=1,
    )
    weights = (
        load_safetensors(cfg, args.weights)
        if args.weights
        else random_weights(cfg, seed=args.seed, scale=0.1)
    )
    start = time.perf_counter()
    lm = LanguageModel(cfg, weights)
    print(f"compiled prefill + decode in {time.perf_counter() - start:.2f} s")
    prompt = np.frombuffer(args.prompt.encode(), np.uint8).astype(np.int64)[None, :]
    start = time.perf_counter()
    out = lm.generate(prompt, args.tokens, temperature=args.temperature, top_k=args.top_k, seed=args.seed)
    elapsed = time.perf_counter() - start
    text = bytes(int(t) for t in out[0]).decode("latin-1")
    print(f"prompt: {args.prompt!r}\ngenerated token ids: {out[0].tolist()}\nas bytes: {text!r}")
    print(
        f"{args.tokens} tokens in {elapsed * 1e3:.1f} ms ({args.tokens / elapsed:.0f} tokens/s, prefill included)"
    )


if __name__ == "__main__":
    main()

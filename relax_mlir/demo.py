"""The quick-start demo: relax-opt on a bundled attention example, good and ill-typed, and the builder.

Run with ``python -m relax_mlir.demo``.
"""

from __future__ import annotations

import contextlib
import io
import re
import tempfile
import time
from pathlib import Path

import numpy as np

from relax_mlir.examples import reference
from relax_mlir.examples.models import transformer_block
from relax_mlir.relax_opt import main as relax_opt
from relax_mlir.shape_infer.expr import parse_expr
from relax_mlir.targets import compile

EXAMPLE = Path(__file__).parent / "examples" / "attention_scores.mlir"


def run_relax_opt(args: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = relax_opt(args)
    return status, out.getvalue(), err.getvalue()


def main() -> int:
    print(f"== relax-opt --relax-verify --canonicalize {EXAMPLE.name}")
    start = time.perf_counter()
    status, out, err = run_relax_opt([str(EXAMPLE), "--relax-verify", "--canonicalize"])
    print(out)
    print(f"exit status {status} in {time.perf_counter() - start:.2f} s")
    if status != 0:
        print(err)
        return 1

    print("== the same program with a weight of the wrong shape ([256, 512] instead of [512, 512])")
    bad = (
        EXAMPLE.read_text()
        .replace("%wk: !relax.tensor<[512, 512], f32>", "%wk: !relax.tensor<[256, 512], f32>")
        .replace(
            '%x, %wk) : (!relax.tensor<["batch", "seq", 512], f32>, !relax.tensor<[512, 512], f32>)',
            '%x, %wk) : (!relax.tensor<["batch", "seq", 512], f32>, !relax.tensor<[256, 512], f32>)',
        )
    )
    with tempfile.NamedTemporaryFile("w", suffix=".mlir", delete=False) as f:
        f.write(bad)
    status, _, err = run_relax_opt([f.name, "--relax-verify"])
    Path(f.name).unlink()
    print(err.replace(f.name, "attention_scores_bad.mlir"))
    print(f"exit status {status} (expected 1)")
    if status != 1:
        return 1

    print("\n== a GPT-style block built with the Python builder: a symbolic type for every value")
    start = time.perf_counter()
    text = str(transformer_block())
    elapsed = time.perf_counter() - start
    types = re.findall(r"!relax\.\w+<[^>]*>", text)
    for t in sorted(set(types), key=types.index)[:12]:
        print(f"  {t}")
    unknown = [t for t in types if '"?"' in t or '"*"' in t]
    print(f"  ... {len(types)} typed values, {len(unknown)} with an unknown dim, built in {elapsed:.2f} s")
    if unknown:
        return 1

    print("\n== symbolic dims are decided by normalization")
    for a, b in [
        ("n * 4", "4 * n"),
        ("(n + 1) * 2 - 2", "2 * n"),
        ("(b * s * 512) floordiv 64", "8 * b * s"),
    ]:
        print(f"  {a:<28} == {b:<12} -> {parse_expr(a) == parse_expr(b)}   (canonical: {parse_expr(a)})")
    return compile_and_run()


def _show(stage: str, text: str, lines: int) -> None:
    all_lines = text.splitlines()
    print(
        f"\n== IR after {stage}: {len(all_lines)} lines"
        + (f", first {lines}:" if len(all_lines) > lines else ":")
    )
    for line in all_lines[:lines]:
        print("  " + line[:150])


def compile_and_run() -> int:
    """Compile a small GPT block once, run it at several (batch, seq) shapes, compare with numpy."""
    d, heads, ff = 64, 4, 128
    module = transformer_block(d, heads, ff)
    _show("the builder (relax)", str(module), 40)
    stages: dict[str, str] = {}
    exe = compile(module, use_cache=False, on_stage=stages.__setitem__)
    _show("relax-to-host (host code + linalg kernels)", stages["host"], 60)
    _show("host-to-llvm (LLVM dialect)", stages["llvm"], 15)
    print("\n== compile time by stage")
    for name, seconds in exe.stats.stages.items():
        print(f"  {name:<16} {seconds * 1000:8.1f} ms")
    weights = reference.transformer_weights(d, ff)
    print("\n== one compilation, run at several shapes, checked against numpy (float64 reference)")
    rng = np.random.default_rng(0)
    for b, s in [(1, 1), (2, 7), (3, 16), (1, 64)]:
        x = rng.standard_normal((b, s, d)).astype(np.float32)
        start = time.perf_counter()
        out = exe(x, *weights.values())
        elapsed = time.perf_counter() - start
        expected = reference.transformer_block(x, heads, weights)
        err = float(np.max(np.abs(out - expected)))
        print(
            f"  batch={b} seq={s:<3} output {out.shape}  max |error| {err:.2e}  run {elapsed * 1000:6.2f} ms"
        )
        if not err < 1e-3:
            return 1
    start = time.perf_counter()
    compile(module)
    print(f"\n== compiling the same module again hits the object cache: {time.perf_counter() - start:.3f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

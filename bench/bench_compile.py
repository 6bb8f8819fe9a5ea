"""Compile time of bench/perf_models.py's models through ``from_onnx``: cold, recompile, warm.

Run: ``python bench/bench_compile.py`` (a few minutes). *cold*: first compile into an empty temporary
``$RELAX_MLIR_CACHE``; *recompile*: the same module again in that process; *warm*: a new process
(which imports relax_mlir and builds the model first, untimed) compiling the same models on the same
cache. Prints seconds per stage (``CompileStats.stages``) and checks each executable against numpy at
the model's first benchmark shape. Issue 21's targets for the 4-layer GPT: cold <= 2 s, warm <= 0.1 s.
Then the 12-layer LLM of ``bench_llm.py`` (``LanguageModel``: build and compile), cold and warm, wall and
CPU seconds (the min of ``--repeat`` runs, default 1; on a busy machine CPU time is the steadier figure);
issue 20's targets: cold <= 5 s, from the cache <= 0.5 s. ``--llm`` measures only the LLM; ``--threads N``
sets ``$RELAX_MLIR_NUM_THREADS`` (kernels are compiled for that many threads; default: the cores).
The cache key covers relax_mlir's sources, so an edit while this runs makes the warm run miss (it
says so); copy ``relax_mlir`` and ``bench`` elsewhere and run the copy to measure a tree in flux.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

GPT4 = "GPT 4 layers"


def compile_all(again: bool) -> dict[str, dict[str, Any]]:
    """Import and compile every model (twice when ``again``); seconds, cache hits and stages."""
    import numpy as np
    import perf_models

    import relax_mlir
    from relax_mlir.frontend.onnx import from_onnx

    out = {}
    for name, (build, reference, shapes) in perf_models.MODELS.items():
        model, weights = build()
        module = from_onnx(model)
        t, c = time.perf_counter(), time.process_time()
        exe = relax_mlir.compile(module, opt_level=3)
        row = {"s": time.perf_counter() - t, "cpu_s": time.process_time() - c, "hit": exe.stats.cache_hit}
        row["stages"] = exe.stats.stages
        if again:
            t = time.perf_counter()
            second = relax_mlir.compile(module, opt_level=3)
            row |= {"again_s": time.perf_counter() - t, "again_hit": second.stats.cache_hit}
        x = np.random.default_rng(0).standard_normal(shapes[0]).astype(np.float32)
        np.testing.assert_allclose(exe(x), reference(x, weights), rtol=2e-3, atol=2e-3)
        out[name] = row
    return out


LLM = "LLM 12 layers"


def compile_llm() -> dict[str, Any]:
    """Build and compile bench_llm's 12-layer model on the current cache: wall and CPU seconds, hit, stages."""
    import bench_llm

    from relax_mlir.llm import LanguageModel, random_weights

    cfg = bench_llm.config()
    weights = random_weights(cfg, seed=0, scale=0.02)
    t, c = time.perf_counter(), time.process_time()
    lm = LanguageModel(cfg, weights)
    row = {"s": time.perf_counter() - t, "cpu_s": time.process_time() - c}
    return row | {"hit": lm.executable.stats.cache_hit, "stages": lm.executable.stats.stages}


def best(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """The fastest run (its stages), with the least CPU time of any run and whether every run hit."""
    fastest = min(rows, key=lambda r: r["s"])
    return fastest | {"cpu_s": min(r["cpu_s"] for r in rows), "hit": all(r["hit"] for r in rows)}


def llm_cold(repeat: int) -> dict[str, Any]:
    """``compile_llm`` into a new empty cache, ``repeat`` times."""
    rows = []
    for _ in range(repeat):
        with tempfile.TemporaryDirectory() as directory:
            os.environ["RELAX_MLIR_CACHE"] = directory
            rows.append(compile_llm())
    return best(rows)


def cpu_name() -> str:
    for line in Path("/proc/cpuinfo").read_text().splitlines() if Path("/proc/cpuinfo").exists() else []:
        if line.startswith("model name"):
            return line.split(":", 1)[1].strip()
    return "unknown CPU"


def run_llm(repeat: int) -> bool:
    """Cold (fresh caches) in this process, warm in a child process on a cache the cold run filled."""
    cold = llm_cold(repeat)
    with tempfile.TemporaryDirectory() as directory:
        os.environ["RELAX_MLIR_CACHE"] = directory
        compile_llm()
        child = subprocess.run(
            [sys.executable, __file__, "--llm-warm", str(repeat)],
            capture_output=True, text=True, check=True, env=os.environ,
        )  # fmt: skip
        warm = json.loads(child.stdout.strip().splitlines()[-1])
    threads = os.environ.get("RELAX_MLIR_NUM_THREADS", "all cores")
    print(
        f"{LLM} (bench_llm.py's config; {cpu_name()}, {os.cpu_count()} cores, threads: {threads}, min of {repeat})"
    )
    print(f"  cold      {cold['s']:7.3f} s  cpu {cold['cpu_s']:6.3f} s  ({_stages(cold['stages'])})")
    print(
        f"  warm      {warm['s']:7.3f} s  cpu {warm['cpu_s']:6.3f} s  (hit: {warm['hit']}; {_stages(warm['stages'])})"
    )
    ok = cold["s"] <= 5 and warm["s"] <= 0.5 and warm["hit"]
    print(
        f"{LLM}: cold {cold['s']:.2f} s (<= 5), cached {warm['s']:.3f} s (<= 0.5): {'met' if ok else 'NOT met'}"
    )
    return ok


def _stages(stages: dict[str, float]) -> str:
    return ", ".join(f"{k} {v:.3f}" for k, v in stages.items() if k != "total")


def main() -> int:
    from relax_mlir.runtime import cache

    if sys.argv[1:] == ["--warm"]:
        print(json.dumps({"compiles": compile_all(again=False), "toolchain": cache._toolchain()}))
        return 0
    if sys.argv[1:2] == ["--llm-warm"]:
        print(json.dumps(best([compile_llm() for _ in range(int(sys.argv[2]))])))
        return 0
    repeat = int(sys.argv[sys.argv.index("--repeat") + 1]) if "--repeat" in sys.argv else 1
    if "--threads" in sys.argv:  # the children inherit it
        os.environ["RELAX_MLIR_NUM_THREADS"] = sys.argv[sys.argv.index("--threads") + 1]
    if "--llm" in sys.argv:
        return 0 if run_llm(repeat) else 1
    with tempfile.TemporaryDirectory() as directory:
        os.environ["RELAX_MLIR_CACHE"] = directory
        cold = compile_all(again=True)
        child = subprocess.run(
            [sys.executable, __file__, "--warm"], capture_output=True, text=True, check=True, env=os.environ
        )
        result = json.loads(child.stdout.strip().splitlines()[-1])
        warm = result["compiles"]
    if result["toolchain"] != cache._toolchain():
        print("note: relax_mlir's sources changed between the two processes, so the warm run could not hit")
    for name, c in cold.items():
        w = warm[name]
        print(f"{name}")
        print(
            f"  cold      {c['s']:7.3f} s  cpu {c['cpu_s']:6.3f} s  (hit: {c['hit']}; {_stages(c['stages'])})"
        )
        print(f"  recompile {c['again_s']:7.3f} s  (hit: {c['again_hit']})")
        print(
            f"  warm      {w['s']:7.3f} s  cpu {w['cpu_s']:6.3f} s  (hit: {w['hit']}; {_stages(w['stages'])})"
        )
    ok = cold[GPT4]["s"] <= 2 and warm[GPT4]["s"] <= 0.1 and warm[GPT4]["hit"]
    print(
        f"4-layer GPT: cold {cold[GPT4]['s']:.2f} s (<= 2), warm {warm[GPT4]['s']:.3f} s (<= 0.1): "
        f"{'met' if ok else 'NOT met'}"
    )
    ok = run_llm(repeat) and ok
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())

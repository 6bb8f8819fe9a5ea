"""Operator fusion on the builder's transformer block: kernels (call_tir) and run time, unfused vs fused.

Run: ``python bench/bench_fusion.py``. Both variants run side by side in one process (one core's
numbers drift; compare the ratio). Fused = relax-fuse-ops before and relax-fuse-kernels after
convert-relax-to-linalg.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from mlir import passmanager  # noqa: E402

from relax_mlir.context import make_context, parse_module  # noqa: E402
from relax_mlir.examples import reference  # noqa: E402
from relax_mlir.examples.models import transformer_block  # noqa: E402
from relax_mlir.pipelines import add_pipeline, load_passes, parse_pipeline  # noqa: E402
from relax_mlir.targets import compile  # noqa: E402

FRONT = "relax-verify,relax-infer-shapes,convert-relax-to-linalg"
FUSED_FRONT = "relax-verify,relax-infer-shapes,relax-fuse-ops,convert-relax-to-linalg,relax-fuse-kernels"
BACK = "relax-lower-host,relax-schedule-kernels"
D, HEADS, FF = 512, 8, 2048
SHAPES = ((1, 32), (1, 128), (4, 128), (1, 512))


def kernel_calls(text: str, front: str) -> int:
    with make_context():
        op = parse_module(text, "<bench>")
        pm = passmanager.PassManager("builtin.module")
        add_pipeline(pm, parse_pipeline(front))
        pm.run(op)
        return str(op).count('"relax.call_tir"')


def best_time(fn, args, repeat: int) -> float:
    fn(*args)
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn(*args)
        times.append(time.perf_counter() - t)
    return min(times)


def main() -> int:
    load_passes()
    text = str(transformer_block(D, HEADS, FF))
    exes = {}
    for name, front in (("unfused", FRONT), ("fused", FUSED_FRONT)):
        exes[name] = compile(text, pipeline=f"{front},{BACK}")
        print(f"{name}: {kernel_calls(text, front)} kernel calls (call_tir)")
    weights = reference.transformer_weights(D, FF)
    print(f"\n{'b x s':>9} {'unfused (ms)':>13} {'fused (ms)':>11} {'speed-up':>9}")
    for b, s in SHAPES:
        x = np.random.default_rng(s).standard_normal((b, s, D)).astype(np.float32)
        args = (x, *weights.values())
        outs = {n: e(*args) for n, e in exes.items()}
        np.testing.assert_allclose(outs["fused"], outs["unfused"], rtol=1e-4, atol=1e-4)
        repeat = 20 if b * s <= 128 else 5
        t = {n: best_time(e, args, repeat) for n, e in exes.items()}
        print(
            f"{f'{b} x {s}':>9} {t['unfused'] * 1e3:13.2f} {t['fused'] * 1e3:11.2f} {t['unfused'] / t['fused']:9.2f}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

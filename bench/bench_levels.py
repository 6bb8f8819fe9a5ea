"""Run time at each optimization level (relax-O0..relax-O3), side by side in one process.

    python3 bench/bench_levels.py

Models: the builder's transformer block (d=512, 8 heads, ff=2048) against its numpy reference, and
the ONNX GPT-style decoder (relax_mlir.examples.onnx_gpt, 2 layers, d=256) against onnxruntime.
One thread everywhere (numpy's OpenBLAS, BLAS dispatch, onnxruntime). Medians after warm-up.
"""

from __future__ import annotations

import os

os.environ.setdefault("RELAX_MLIR_BLAS_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import statistics  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402

from relax_mlir import compile  # noqa: E402
from relax_mlir.examples import reference  # noqa: E402
from relax_mlir.examples.models import transformer_block  # noqa: E402
from relax_mlir.examples.onnx_gpt import gpt_model  # noqa: E402
from relax_mlir.frontend.onnx import from_onnx  # noqa: E402

LEVELS = (0, 1, 2, 3)


def median_ms(fn, repeat: int) -> float:
    fn()
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times) * 1e3


def _row(name: str, times: dict[str, float], base: str) -> str:
    cells = " ".join(f"{times[k]:9.2f}" for k in times)
    return f"{name:>10} {cells}   O3 vs {base}: {times[base] / times['O3']:.2f}x"


def transformer() -> None:
    d, heads, ff = 512, 8, 2048
    module = str(transformer_block(d, heads, ff))
    exes = {f"O{n}": compile(module, opt_level=n) for n in LEVELS}
    weights = list(reference.transformer_weights(d, ff).values())
    w = reference.transformer_weights(d, ff)
    print("transformer block (ms):", " ".join(f"{k:>9}" for k in [*exes, "numpy"]))
    for b, s in ((1, 1), (1, 32), (4, 128)):
        x = np.random.default_rng(s).standard_normal((b, s, d)).astype(np.float32)
        repeat = 20 if b * s <= 32 else 5
        times = {k: median_ms(lambda e=e, x=x: e(x, *weights), repeat) for k, e in exes.items()}
        times["numpy"] = median_ms(lambda x=x: reference.transformer_block(x, heads, w), repeat)
        print(_row(f"{b}x{s}", times, "O0") + f", vs numpy: {times['numpy'] / times['O3']:.2f}x")


def gpt() -> None:
    import onnxruntime as ort

    model = gpt_model(layers=2, d=256, heads=4, vocab=1000)
    module = from_onnx(model)
    exes = {f"O{n}": compile(module, opt_level=n) for n in LEVELS}
    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    session = ort.InferenceSession(model.SerializeToString(), options, providers=["CPUExecutionProvider"])
    print("ONNX GPT, 2 layers d=256 (ms):", " ".join(f"{k:>9}" for k in [*exes, "ort"]))
    for b, s in ((1, 1), (1, 32), (4, 128)):
        ids = np.random.default_rng(s).integers(0, 1000, (b, s), dtype=np.int64)
        repeat = 20 if b * s <= 32 else 5
        times = {k: median_ms(lambda e=e, ids=ids: e(ids), repeat) for k, e in exes.items()}
        times["ort"] = median_ms(lambda ids=ids: session.run(None, {"ids": ids}), repeat)
        print(_row(f"{b}x{s}", times, "O0") + f", vs onnxruntime: {times['ort'] / times['O3']:.2f}x")


if __name__ == "__main__":
    transformer()
    gpt()

"""Single-thread fp32 matmul: generated kernel vs BLAS dispatch (relax-dispatch-blas) vs numpy.

Run: ``python bench/bench_blas.py``. One compilation of ``[m, k] x [k, n]`` (symbolic m, k, n) per path
serves every size; all three run side by side in one process with one OpenBLAS thread
(``$RELAX_MLIR_BLAS_THREADS`` / ``OPENBLAS_NUM_THREADS``). Prints GFLOP/s.
"""

from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # before numpy loads OpenBLAS

import sys  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402
from mlir import ir, passmanager  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import relax_mlir.builder as rb  # noqa: E402
from relax_mlir.context import make_context, parse_module  # noqa: E402
from relax_mlir.dialects import relax as R  # noqa: E402
from relax_mlir.lowering import blas  # noqa: E402
from relax_mlir.pipelines import add_pipeline, load_passes, parse_pipeline  # noqa: E402
from relax_mlir.targets import compile  # noqa: E402

SIZES = [(1024, 1024, 1024), (512, 512, 512), (1, 512, 512), (128, 512, 512)]


def best_time(fn, min_time: float = 0.5) -> float:  # noqa: ANN001
    fn()
    times = []
    start = time.perf_counter()
    while time.perf_counter() - start < min_time or len(times) < 5:
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return float(np.median(times))


def dispatched(text: str) -> str:
    with make_context(), ir.Location.unknown():
        op = parse_module(text, "<bench>")
        load_passes()
        pm = passmanager.PassManager("builtin.module")
        add_pipeline(pm, parse_pipeline("relax-dispatch-blas"))
        pm.run(op)
        return str(op)


def main() -> int:
    if not blas.available():
        print("numpy's ILP64 OpenBLAS not found: nothing to compare")
        return 1
    bb = rb.BlockBuilder()
    with bb.function("main", {"a": rb.tensor(["m", "k"]), "b": rb.tensor(["k", "n"])}) as (a, b):
        bb.ret(R.matmul(a, b))
    text = str(bb.module)
    generated = compile(text)
    library_text = dispatched(text)
    assert "relax_blas_gemm" in library_text
    library = compile(library_text)
    print(f"{'m x k x n':>16} {'generated':>14} {'BLAS dispatch':>14} {'numpy':>12} {'dispatch/numpy':>15}")
    for m, k, n in SIZES:
        rng = np.random.default_rng(0)
        x = rng.standard_normal((m, k), dtype=np.float32)
        y = rng.standard_normal((k, n), dtype=np.float32)
        for exe in (generated, library):
            np.testing.assert_allclose(exe(x, y), x @ y, rtol=2e-3, atol=2e-3)
        flops = 2.0 * m * k * n
        gen = flops / best_time(lambda x=x, y=y: generated(x, y)) / 1e9
        lib = flops / best_time(lambda x=x, y=y: library(x, y)) / 1e9
        ref = flops / best_time(lambda x=x, y=y: x @ y) / 1e9
        print(f"{f'{m}x{k}x{n}':>16} {gen:>9.1f} GF/s {lib:>9.1f} GF/s {ref:>7.1f} GF/s {lib / ref:>14.0%}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

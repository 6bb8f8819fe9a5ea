"""Matmul by constant weights: numpy vs BLAS dispatch vs the generated kernel vs packed weights; GPT vs ORT.

Run: ``python bench/bench_packed.py [--no-gpt]``. One thread everywhere. For each weight shape ``k x n``
one compilation per path serves every row count ``m`` (symbolic):

- ``numpy``: ``x @ W`` (OpenBLAS, which packs ``W`` on every call);
- ``blas``: relax-O3 without ``relax-pack-weights`` (``relax-dispatch-blas`` calls the same OpenBLAS);
- ``generated``: relax-O2 without ``relax-pack-weights`` (``transforms/schedules/matmul.py`` on ``W`` as it is);
- ``packed``: relax-O2 (``relax-pack-weights``: ``W`` packed into column panels at compile time).

Each path is timed in alternation with numpy (median of per-round ratios, since the machine is shared);
GF/s are medians too. Then the 2-layer ONNX GPT of bench/perf_models.py through ``from_onnx``:
relax-O3 with and without ``relax-pack-weights`` against onnxruntime.
"""

from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # before numpy loads OpenBLAS
os.environ.setdefault("RELAX_MLIR_BLAS_THREADS", "1")
os.environ.setdefault("RELAX_MLIR_NUM_THREADS", "1")

import re  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from collections.abc import Callable  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import relax_mlir.builder as rb  # noqa: E402
from relax_mlir.dialects import relax as R  # noqa: E402
from relax_mlir.pipelines.data import text  # noqa: E402
from relax_mlir.targets import compile  # noqa: E402
from relax_mlir.targets.cpu import CpuTarget  # noqa: E402

SHAPES = [(512, 512, [1, 16, 128, 512]), (512, 2048, [1, 16, 128, 512]), (2048, 512, [1, 16, 128, 512])]
SQUARE = (1024, 1024, [1024])


def without_packing(level: int) -> str:
    """``compile()``'s relax-O<level> (this machine's vector registers) without ``relax-pack-weights``."""
    return re.sub(r"relax-pack-weights\{[^}]*\},", "", text(CpuTarget().relax_pipeline(level)))


def paths(w: np.ndarray) -> dict[str, Callable[[np.ndarray], np.ndarray]]:
    k = w.shape[0]
    bb = rb.BlockBuilder()
    with bb.function("main", {"x": rb.tensor(["m", k])}) as (x,):
        bb.ret(R.matmul(x, R.constant(w)))
    return {
        "blas": compile(bb.module, opt_level=3, pipeline=without_packing(3)),
        "generated": compile(bb.module, opt_level=2, pipeline=without_packing(2)),
        "packed": compile(bb.module, opt_level=2),
    }


def versus(ours: Callable[[], object], ref: Callable[[], object], rounds: int = 9) -> tuple[float, float]:
    """(median time of ``ours``, median of ref-time / ours-time over rounds run in alternation)."""
    ours(), ref()
    times, ratios = [], []
    for _ in range(rounds):
        t = time.perf_counter()
        ours()
        a = time.perf_counter() - t
        t = time.perf_counter()
        ref()
        b = time.perf_counter() - t
        times.append(a)
        ratios.append(b / a)
    return float(np.median(times)), float(np.median(ratios))


def matmuls() -> None:
    rng = np.random.default_rng(0)
    print("GF/s (ratio to numpy in alternation; >100% is faster than numpy)")
    print(f"{'m x k x n':>16} {'numpy':>7} {'blas':>14} {'generated':>14} {'packed':>14}")
    for k, n, ms in (*SHAPES, SQUARE):
        w = rng.standard_normal((k, n), dtype=np.float32)
        exes = paths(w)
        for m in ms:
            x = rng.standard_normal((m, k), dtype=np.float32)
            flops = 2.0 * m * k * n
            cells = []
            ref_times = []
            for exe in exes.values():
                np.testing.assert_allclose(exe(x), x @ w, rtol=1e-3, atol=1e-2)
                t, r = versus(lambda exe=exe, x=x: exe(x), lambda x=x, w=w: x @ w)
                ref_times.append(t * r)
                cells.append(f"{flops / t / 1e9:6.1f} ({r:4.0%})")
            numpy_gf = flops / float(np.median(ref_times)) / 1e9
            print(f"{f'{m}x{k}x{n}':>16} {numpy_gf:7.1f} " + " ".join(f"{c:>14}" for c in cells), flush=True)


def gpt() -> None:
    import onnxruntime as ort  # noqa: PLC0415
    from perf_models import gpt as gpt_model  # noqa: PLC0415

    from relax_mlir.frontend.onnx import from_onnx  # noqa: PLC0415

    model, _ = gpt_model(2)
    options = ort.SessionOptions()
    options.intra_op_num_threads = options.inter_op_num_threads = 1
    sess = ort.InferenceSession(model.SerializeToString(), options, providers=["CPUExecutionProvider"])
    exes = {
        "O3 packed": compile(from_onnx(model), opt_level=3),
        "O3 blas": compile(from_onnx(model), opt_level=3, pipeline=without_packing(3)),
    }
    print("\nGPT 2 layers (d=512, ff=2048), ms (onnxruntime time / ours in alternation; >1 is faster)")
    for b, s in [(1, 16), (4, 128), (1, 1)]:
        x = np.random.default_rng(0).standard_normal((b, s, 512), dtype=np.float32)
        ref = sess.run(None, {"x": x})[0]
        cells, ort_times = [], []
        for name, exe in exes.items():
            np.testing.assert_allclose(exe(x), ref, rtol=2e-3, atol=2e-3)
            t, r = versus(lambda exe=exe, x=x: exe(x), lambda x=x: sess.run(None, {"x": x}))
            ort_times.append(t * r)
            cells.append(f"{name} {t * 1e3:7.2f} ms ({r:4.2f}x)")
        print(
            f"{f'{b}x{s}':>6}  ort {float(np.median(ort_times)) * 1e3:7.2f} ms  " + "  ".join(cells),
            flush=True,
        )


if __name__ == "__main__":
    matmuls()
    if "--no-gpt" not in sys.argv:
        gpt()

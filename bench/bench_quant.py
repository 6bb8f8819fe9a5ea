"""The fused quantized-weight kernel (``relax.dequantize_matmul``) against numpy, side by side.

Run: ``python bench/bench_quant.py [--threads 1,2] [--layouts q4_0,q8_0] [--quick] [--dram]``.

- GEMV (decode): ``x`` [b, k] @ W.T (f32 activations, and int8 ones: ``activations="i8"``) for W [n, k] = 2048x768, 768x2048 and 32000x768 (k x n = 768x2048,
  2048x768, 768x32000) at b = 1 and 4: GB/s of weight bytes read (packed data + scales) per call, next to
  numpy's copy bandwidth (bytes read per second by ``np.copyto`` of a 256 MiB array, 1 thread) and, for
  scale, numpy's f32 GEMV (``x @ W_f32.T``, OpenBLAS) in GB/s of its f32 weight bytes.
- ``--dram``: the GEMV at batch 1, int8 activations, with the weight as a runtime parameter (untiled) and
  as a load-time one (tiled by 4 rows at load, as the LLM's weights are: ``relax-fuse-dequantize-matmul``),
  each cycling through copies of the weight that fill 128 MB so every call reads DRAM, as a decode step
  does; interleaved A/B rounds, best round each.
- GEMM (prefill): 128x768x2048 (``m x k x n``) in GFLOP/s against numpy's f32 matmul (OpenBLAS, same threads).

Each figure is the median over rounds of the best of a few calls; one Python call's overhead (~10-20 us) is
included, as the LLM pays it too. The CPU model and LLVM CPU name are printed with the results.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

GEMV = [(768, 2048), (2048, 768), (768, 32000)]  # (k, n)
GEMM = (128, 768, 2048)  # (m, k, n)


def timed(fn: Callable[..., object], args: tuple, rounds: int, calls: int) -> float:
    """Median over ``rounds`` of the best of ``calls`` calls of ``fn(*args)``, in seconds."""
    fn(*args)
    best = []
    for _ in range(rounds):
        times = []
        for _ in range(calls):
            t = time.perf_counter()
            fn(*args)
            times.append(time.perf_counter() - t)
        best.append(min(times))
    return float(np.median(best))


def cpu_names() -> str:
    import llvmlite.binding as llvm

    model = next(
        (line.split(":", 1)[1].strip() for line in open("/proc/cpuinfo") if line.startswith("model name")),
        "?",
    )
    return f"{model}, LLVM cpu {llvm.get_host_cpu_name()}"


def blas_threads(threads: int) -> None:
    """Set numpy's OpenBLAS thread count (its bundled library, found by ``runtime/blas.py``)."""
    import ctypes

    from relax_mlir.runtime.blas import library_path

    path = library_path()
    lib = ctypes.CDLL(path) if path else None
    for name in ("scipy_openblas_set_num_threads64_", "openblas_set_num_threads64_"):
        if lib is not None and hasattr(lib, name):
            getattr(lib, name).argtypes = [ctypes.c_int]
            getattr(lib, name)(threads)
            return


def copy_bandwidth(rounds: int) -> float:
    """GB/s read by np.copyto of a 256 MiB array (one thread)."""
    src = np.ones(64 << 20, np.float32)
    dst = np.empty_like(src)
    return src.nbytes / timed(np.copyto, (dst, src), rounds, 3) / 1e9


def kernel(
    layout: str, k: int, n: int, threads: int, weights: tuple[np.ndarray, np.ndarray], act: str = "f32"
):
    """The compiled ``relax.dequantize_matmul`` on ``x`` [m, k] (symbolic m) at relax-O2 on ``threads``."""
    import relax_mlir.builder as rb
    from relax_mlir.dialects import relax as R
    from relax_mlir.pipelines.cpu import LEVELS
    from relax_mlir.targets import compile

    data, scales = weights
    dtype = {"q8_0": "i8", "q4_0": "ui8", "q4f16_1": "ui32"}[layout]
    bb = rb.BlockBuilder()
    params = {
        "x": rb.tensor(["m", k]),
        "data": rb.tensor(list(data.shape), dtype),
        "scales": rb.tensor(list(scales.shape), "f16"),
    }
    with bb.function("main", params) as (x, d, s):
        with bb.dataflow():
            out = bb.emit_output(R.dequantize_matmul(x, d, s, layout, act))
        bb.ret(out)
    pipe = LEVELS[2].replace(
        "relax-parallelize-kernels", f"relax-parallelize-kernels{{num-threads={threads}}}"
    )
    return compile(bb.module, pipeline=pipe)


def tiled_kernel(layout: str, k: int, n: int, threads: int, act: str = "i8"):
    """``kernel`` with ``data`` and ``scales`` load-time parameters (tiled once per ``load_params``)."""
    import relax_mlir.builder as rb
    from relax_mlir.dialects import relax as R
    from relax_mlir.pipelines.cpu import LEVELS
    from relax_mlir.targets import compile

    dtype = {"q8_0": "i8", "q4_0": "ui8", "q4f16_1": "ui32"}[layout]
    per = {"q8_0": 1, "q4_0": 2, "q4f16_1": 8}[layout]
    bb = rb.BlockBuilder()
    params = {
        "x": rb.tensor(["m", k]),
        "data": rb.tensor([n, k // per], dtype),
        "scales": rb.tensor([n, k // 32], "f16"),
    }
    with bb.function("main", params, load_time=["data", "scales"]) as (x, d, s):
        with bb.dataflow():
            y = R.matmul(x, R.permute_dims(R.dequantize(d, s, layout), [1, 0]))
            out = bb.emit_output(y)
        bb.ret(out)
    fuse = "relax-fuse-dequantize-matmul"
    pipe = (
        LEVELS[2]
        .replace("relax-parallelize-kernels", f"relax-parallelize-kernels{{num-threads={threads}}}")
        .replace(fuse, f"{fuse}{{activations={act}}}")
    )
    return compile(bb.module, pipeline=pipe)


def dram(layouts: list[str], threads: list[int], rounds: int, rng: np.random.Generator) -> None:
    """``--dram``: untiled vs tiled GEMV, batch 1, int8 activations, weights read from DRAM (module doc)."""
    print("\n## GEMV from DRAM, batch 1, int8 activations: GB/s of weight bytes read (untiled / tiled)")
    print("| layout | k x n | " + " | ".join(f"{t}T untiled | {t}T tiled" for t in threads) + " |")
    print("| --- | --- |" + " --- | --- |" * len(threads))
    for layout in layouts:
        for k, n in GEMV[:2]:
            weights = quantized(layout, n, k, rng)
            nbytes = weights[0].nbytes + weights[1].nbytes
            copies = [(weights[0].copy(), weights[1].copy()) for _ in range(max(2, int(128e6 // nbytes)))]
            x = rng.standard_normal((1, k), dtype=np.float32)
            cells = []
            for t in threads:
                untiled = kernel(layout, k, n, t, weights, "i8")
                exe = tiled_kernel(layout, k, n, t)
                loaded = [exe.load_params({"data": d, "scales": s})["main"] for d, s in copies]
                calls = {
                    "untiled": [(untiled, (x, d, s)) for d, s in copies],
                    "tiled": [(f, (x,)) for f in loaded],
                }
                best = dict.fromkeys(calls, float("inf"))
                for _ in range(rounds):
                    for name, fns in calls.items():
                        start = time.perf_counter()
                        for fn, fn_args in fns:
                            fn(*fn_args)
                        best[name] = min(best[name], time.perf_counter() - start)
                cells += [f"{nbytes * len(copies) / best[name] / 1e9:.1f}" for name in calls]
            print(f"| {layout} | {k}x{n} | " + " | ".join(cells) + " |")


def quantized(layout: str, n: int, k: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Random packed weights [n, k] in ``layout`` with f16 scales."""
    scales = (rng.standard_normal((n, k // 32)) * 0.02).astype(np.float16)
    if layout == "q8_0":
        return rng.integers(-127, 128, (n, k), dtype=np.int8), scales
    if layout == "q4_0":
        return rng.integers(0, 256, (n, k // 2), dtype=np.uint8), scales
    return rng.integers(0, 2**32, (n, k // 8), dtype=np.uint32), scales


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", default="1,2")
    parser.add_argument("--layouts", default="q4_0,q8_0")
    parser.add_argument("--quick", action="store_true", help="fewer rounds (a busy machine's smoke test)")
    parser.add_argument("--dram", action="store_true", help="only untiled vs tiled GEMVs from DRAM")
    args = parser.parse_args()
    threads = [int(t) for t in args.threads.split(",")]
    rounds, calls = (3, 5) if args.quick else (9, 20)
    rng = np.random.default_rng(0)
    print(f"CPU: {cpu_names()}; numpy copy bandwidth (1 thread): {copy_bandwidth(rounds):.1f} GB/s read")
    if args.dram:
        dram(args.layouts.split(","), threads, rounds, rng)
        return
    for layout in args.layouts.split(","):
        acts = ("f32", "i8")
        print(f"\n## {layout}: GEMV, GB/s of weight bytes read (numpy f32 GEMV: GB/s of its f32 weight)")
        heads = [f"fused x {a} {t}T" for t in threads for a in acts] + [f"numpy f32 {t}T" for t in threads]
        print("| k x n | batch | " + " | ".join(heads) + " |")
        print("| --- | --- |" + " --- |" * len(heads))
        for k, n in GEMV:
            weights = quantized(layout, n, k, rng)
            nbytes = weights[0].nbytes + weights[1].nbytes
            w32 = rng.standard_normal((n, k), dtype=np.float32)
            exes = {(t, a): kernel(layout, k, n, t, weights, a) for t in threads for a in acts}
            for b in (1, 4):
                x = rng.standard_normal((b, k), dtype=np.float32)
                cells = [
                    f"{nbytes / timed(exes[key], (x, *weights), rounds, calls) / 1e9:.1f}" for key in exes
                ]
                for t in threads:
                    blas_threads(t)
                    cells.append(f"{w32.nbytes / timed(np.matmul, (x, w32.T), rounds, calls) / 1e9:.1f}")
                print(f"| {k}x{n} | {b} | " + " | ".join(cells) + " |")
        m, k, n = GEMM
        weights = quantized(layout, n, k, rng)
        w32 = rng.standard_normal((n, k), dtype=np.float32)
        x = rng.standard_normal((m, k), dtype=np.float32)
        flops = 2 * m * k * n
        print(f"\n## {layout}: prefill GEMM {m}x{k}x{n}, GFLOP/s")
        print("| threads | fused | numpy f32 |\n| --- | --- | --- |")
        for t in threads:
            exe = kernel(layout, k, n, t, weights)
            fused = timed(exe, (x, *weights), rounds, calls // 2 or 1)
            blas_threads(t)
            ref = timed(np.matmul, (x, w32.T), rounds, calls // 2 or 1)
            print(f"| {t} | {flops / fused / 1e9:.1f} | {flops / ref / 1e9:.1f} |")


if __name__ == "__main__":
    main()

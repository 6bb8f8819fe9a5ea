"""Convolutions of the ResNet-style CNN and the MobileNet block's depthwise ones, one by one, and the ResNet-style
CNN as a whole: relax_mlir vs onnxruntime vs numpy.

Run: ``python bench/bench_conv.py [--levels 2,3] [--batches 1,8] [--min-time 0.3]``. Single thread:
``OPENBLAS_NUM_THREADS=1``, ``RELAX_MLIR_BLAS_THREADS=1``, ``RELAX_MLIR_NUM_THREADS=1``, onnxruntime
``intra_op_num_threads=1``. Each
conv is an ONNX ``Conv`` (+ bias) with a symbolic batch, compiled once per level; numpy runs im2col + one
GEMM (``perf_models._np_conv``). Engines alternate in rounds; medians in ms, ratios relax_mlir / other.
"""

from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # before numpy loads OpenBLAS
os.environ.setdefault("RELAX_MLIR_BLAS_THREADS", "1")
os.environ.setdefault("RELAX_MLIR_NUM_THREADS", "1")  # generated kernels (relax-parallelize-kernels)

import argparse  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from collections.abc import Callable  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402
import onnxruntime as ort  # noqa: E402
from onnx import TensorProto, helper  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import perf_models as pm  # noqa: E402

from relax_mlir.frontend.onnx import from_onnx  # noqa: E402
from relax_mlir.targets import compile  # noqa: E402

# (name, in channels, out channels, kernel, stride, input height = width): the CNN's distinct convs
CONVS = (
    ("stem 3->32 k3 s2 @64", 3, 32, 3, 2, 64),
    ("b0 32->32 k3 @32", 32, 32, 3, 1, 32),
    ("b1c1 32->64 k3 s2 @32", 32, 64, 3, 2, 32),
    ("b1proj 32->64 k1 s2 @32", 32, 64, 1, 2, 32),
    ("b1c2 64->64 k3 @16", 64, 64, 3, 1, 16),
    ("b3c1 64->128 k3 s2 @16", 64, 128, 3, 2, 16),
    ("b3proj 64->128 k1 s2 @16", 64, 128, 1, 2, 16),
    ("b3c2 128->128 k3 @8", 128, 128, 3, 1, 8),
)
# depthwise convs of the MobileNet-style blocks (groups = channels): (name, channels, kernel, stride, hw)
DEPTHWISE = (
    ("dw 64 k3 @56", 64, 3, 1, 56),
    ("dw 64 k3 s2 @56", 64, 3, 2, 56),
    ("dw 96 k3 @28", 96, 3, 1, 28),
)


def conv_model(
    c_in: int, c_out: int, k: int, stride: int, hw: int, groups: int = 1
) -> tuple[object, pm.Weights]:
    """One ``Conv`` with bias and 'same' padding k//2 on ``x [batch, c_in, hw, hw]``."""
    g = pm._Graph(0)
    cg = c_in // groups
    w = g.weight("w", c_out, cg, k, k, scale=float(np.sqrt(2 / (cg * k * k))))
    b = g.weight("b", c_out)
    out = (hw - 1) // stride + 1
    pads = [k // 2] * 4
    g.op("Conv", ["x", w, b], out="y", kernel_shape=[k, k], strides=[stride, stride], pads=pads, group=groups)
    model = g.model(
        "conv",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", c_in, hw, hw])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", c_out, out, out])],
    )
    return model, g.weights


def medians(fns: dict[str, Callable[[], object]], min_time: float) -> dict[str, float]:
    """Median ms per engine over 3 rounds of alternating blocks, each block about ``min_time`` s."""
    for fn in fns.values():
        fn()
        fn()
    times: dict[str, list[float]] = {name: [] for name in fns}
    for _ in range(3):
        for name, fn in fns.items():
            start = time.perf_counter()
            while time.perf_counter() - start < min_time / 3 or len(times[name]) < 3:
                t = time.perf_counter()
                fn()
                times[name].append(time.perf_counter() - t)
    return {name: float(np.median(t)) * 1e3 for name, t in times.items()}


def engines(model: object, levels: list[int]) -> tuple[dict[int, object], object]:
    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    session = ort.InferenceSession(model.SerializeToString(), options, providers=["CPUExecutionProvider"])
    exes = {lvl: compile(from_onnx(model), opt_level=lvl) for lvl in levels}
    return exes, session


def row(name: str, x: np.ndarray, exes: dict, session: object, numpy_fn: Callable, min_time: float) -> None:
    want = numpy_fn(x)
    ort_fn = lambda: session.run(None, {"x": x})[0]  # noqa: E731
    fns: dict[str, Callable[[], object]] = {f"O{lvl}": (lambda e=e: e(x)) for lvl, e in exes.items()}
    for label, fn in fns.items():
        got = fn()
        err = float(np.abs(got - want).max() / max(1e-6, np.abs(want).max()))
        if err > 1e-3:
            raise SystemExit(f"{name} batch {x.shape[0]}: relax_mlir {label} differs from numpy: {err:.2e}")
    fns["ort"] = ort_fn
    fns["numpy"] = lambda: numpy_fn(x)
    ms = medians(fns, min_time)
    cells = " ".join(f"{ms[f'O{lvl}']:9.3f}" for lvl in exes)
    ratios = " ".join(f"{ms[f'O{lvl}'] / ms['ort']:7.2f}" for lvl in exes)
    print(f"{name:28} {x.shape[0]:>5} {cells} {ms['ort']:9.3f} {ms['numpy']:9.3f}   {ratios}", flush=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--levels", default="2,3", help="relax_mlir optimization levels (comma-separated)")
    parser.add_argument("--batches", default="1,8")
    parser.add_argument("--min-time", type=float, default=0.3, help="seconds per engine per case")
    parser.add_argument("--only", default="", help="run the cases whose name contains this")
    args = parser.parse_args()
    levels = [int(v) for v in args.levels.split(",")]
    batches = [int(v) for v in args.batches.split(",")]
    lv = " ".join(f"{f'O{lvl} ms':>9}" for lvl in levels)
    rt = " ".join(f"{f'O{lvl}/ort':>7}" for lvl in levels)
    print(f"{'case':28} {'batch':>5} {lv} {'ort ms':>9} {'numpy ms':>9}   {rt}")
    rng = np.random.default_rng(0)
    for name, c_in, c_out, k, stride, hw in CONVS:
        if args.only not in name:
            continue
        model, w = conv_model(c_in, c_out, k, stride, hw)
        exes, session = engines(model, levels)
        for n in batches:
            x = rng.standard_normal((n, c_in, hw, hw), dtype=np.float32)
            row(
                name,
                x,
                exes,
                session,
                lambda x, w=w, s=stride: pm._np_conv(x, w["w"], w["b"], s),
                args.min_time,
            )
    for name, c, k, stride, hw in DEPTHWISE:
        if args.only not in name:
            continue
        model, w = conv_model(c, c, k, stride, hw, groups=c)
        exes, session = engines(model, levels)
        for n in batches:
            x = rng.standard_normal((n, c, hw, hw), dtype=np.float32)
            numpy_fn = lambda x, w=w, s=stride, c=c: (  # noqa: E731
                pm._np_conv_groups(x, w["w"], s, c) + w["b"][None, :, None, None]
            )
            row(name, x, exes, session, numpy_fn, args.min_time)
    if args.only in "ResNet-style CNN":
        model, w = pm.resnet()
        exes, session = engines(model, levels)
        for n in batches:
            x = rng.standard_normal((n, *pm.RESNET_INPUT), dtype=np.float32)
            row("ResNet-style CNN", x, exes, session, lambda x, w=w: pm.resnet_numpy(x, w), args.min_time)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

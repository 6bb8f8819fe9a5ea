"""Non-matmul kernels: relax_mlir against numpy and onnxruntime (one thread), side by side.

    python3 bench/bench_kernels.py              # kernels, then GPT 2-layer at 1x16 and 4x128
    python3 bench/bench_kernels.py --kernels    # kernels only
    python3 bench/bench_kernels.py --only softmax

Everything runs on one thread. Each kernel is a single-node ONNX model with dynamic dims: relax_mlir compiles it once (``from_onnx``,
``opt_level=3``), onnxruntime runs the same model (``intra_op_num_threads=1``), numpy a float32 twin.
Outputs are checked against numpy first. Engines are timed in alternation (rounds of blocks of calls),
and medians are reported with the bandwidth implied by one read of every input and one write of the
output.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("RELAX_MLIR_BLAS_THREADS", "1")
os.environ.setdefault("RELAX_MLIR_NUM_THREADS", "1")  # generated kernels on one core, like onnxruntime here

import numpy as np  # noqa: E402
import onnx  # noqa: E402
import onnxruntime as ort  # noqa: E402
from onnx import TensorProto, helper  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import relax_mlir  # noqa: E402
from relax_mlir.frontend.onnx import from_onnx  # noqa: E402

ROUNDS, BUDGET_S = 5, 1.0


def _erf(x: np.ndarray) -> np.ndarray:
    from perf_models import _np_erf

    return _np_erf(x)


def _model(op: str, n_in: int, rank: int, **attrs: object) -> onnx.ModelProto:
    dims = [f"d{i}" for i in range(rank)]
    names = [f"x{i}" for i in range(n_in)]
    inputs = [helper.make_tensor_value_info(n, TensorProto.FLOAT, dims) for n in names]
    if op == "LayerNormalization":
        inputs[1:] = [helper.make_tensor_value_info(n, TensorProto.FLOAT, [dims[-1]]) for n in names[1:]]
    out_dims = dims[:-1] if op.startswith("Reduce") else dims
    node_inputs = names
    extra = []
    if op.startswith("Reduce"):
        extra = [helper.make_tensor("axes", TensorProto.INT64, [1], [rank - 1])]
        node_inputs = [*names, "axes"]
    node = helper.make_node(op, node_inputs, ["y"], **attrs)
    out = helper.make_tensor_value_info("y", TensorProto.FLOAT, out_dims)
    graph = helper.make_graph([node], op.lower(), inputs, [out], extra)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 20)])
    model.ir_version = 10
    return model


def _np_softmax(x: np.ndarray) -> np.ndarray:
    e = np.exp(x - x.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def _np_layer_norm(x: np.ndarray, g: np.ndarray, b: np.ndarray) -> np.ndarray:
    mean = x.mean(-1, keepdims=True)
    c = x - mean
    return c / np.sqrt(np.mean(c * c, -1, keepdims=True) + 1e-5) * g + b


def _attention_model() -> onnx.ModelProto:
    """GPT attention between the two matmuls: scores / sqrt(64) -> Where(causal mask) -> Softmax."""
    scores = helper.make_tensor_value_info("x0", TensorProto.FLOAT, ["b", 8, "s", "s"])
    mask = helper.make_tensor_value_info("x1", TensorProto.BOOL, ["s", "s"])
    consts = [
        helper.make_tensor("scale", TensorProto.FLOAT, [], [8.0]),
        helper.make_tensor("neg", TensorProto.FLOAT, [], [-1e9]),
    ]
    nodes = [
        helper.make_node("Div", ["x0", "scale"], ["scaled"]),
        helper.make_node("Where", ["x1", "scaled", "neg"], ["masked"]),
        helper.make_node("Softmax", ["masked"], ["y"], axis=-1),
    ]
    out = helper.make_tensor_value_info("y", TensorProto.FLOAT, ["b", 8, "s", "s"])
    graph = helper.make_graph(nodes, "attention", [scores, mask], [out], consts)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 20)])
    model.ir_version = 10
    return model


def _np_attention(scores: np.ndarray, mask: np.ndarray) -> np.ndarray:
    return _np_softmax(np.where(mask, scores / np.float32(8), np.float32(-1e9)))


def _causal(s: int) -> np.ndarray:
    return ~np.triu(np.ones((s, s), bool), 1)


# name -> (model, numpy function, input shapes; a shape given as an array is that input itself)
KERNELS: dict[str, tuple[onnx.ModelProto, Callable[..., np.ndarray], list]] = {
    "add [512,2048]": (_model("Add", 2, 2), np.add, [(512, 2048), (512, 2048)]),
    "gelu [512,2048]": (
        _model("Gelu", 1, 2),
        lambda x: x * (1 + _erf(x * np.float32(1 / np.sqrt(2)))) * np.float32(0.5),
        [(512, 2048)],
    ),
    "softmax [32,128,128]": (_model("Softmax", 1, 3, axis=-1), _np_softmax, [(32, 128, 128)]),
    "softmax [8,512,512]": (_model("Softmax", 1, 3, axis=-1), _np_softmax, [(8, 512, 512)]),
    "softmax [8,16,16]": (_model("Softmax", 1, 3, axis=-1), _np_softmax, [(8, 16, 16)]),
    "layer_norm [512,512]": (
        _model("LayerNormalization", 3, 2, axis=-1, epsilon=1e-5),
        _np_layer_norm,
        [(512, 512), (512,), (512,)],
    ),
    "reduce_sum [512,2048]": (
        _model("ReduceSum", 1, 2, keepdims=0),
        lambda x: x.sum(-1),
        [(512, 2048)],
    ),
    **{
        f"attention [{b},8,{s},{s}]": (_attention_model(), _np_attention, [(b, 8, s, s), _causal(s)])
        for b, s in ((1, 16), (4, 128), (1, 512))
    },
    "reduce_max [512,2048]": (_model("ReduceMax", 1, 2, keepdims=0), lambda x: x.max(-1), [(512, 2048)]),
}


def timed(fns: dict[str, Callable[[], object]]) -> dict[str, float]:
    """Median ms per engine, timed in alternating rounds."""
    for fn in fns.values():
        fn()
    t = time.perf_counter()
    for fn in fns.values():
        fn()
    reps = max(5, int(BUDGET_S / max(time.perf_counter() - t, 1e-6) / ROUNDS))
    times: dict[str, list[float]] = {k: [] for k in fns}
    for _ in range(ROUNDS):
        for k, fn in fns.items():
            fn()
            for _ in range(reps):
                t = time.perf_counter()
                fn()
                times[k].append(time.perf_counter() - t)
    return {k: statistics.median(v) * 1e3 for k, v in times.items()}


def _ort(model: onnx.ModelProto) -> ort.InferenceSession:
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = 1
    opts.inter_op_num_threads = 1
    return ort.InferenceSession(model.SerializeToString(), opts, providers=["CPUExecutionProvider"])


def bench_kernels(only: str | None) -> None:
    rng = np.random.default_rng(0)
    print(
        f"{'kernel':24} {'relax ms':>9} {'numpy ms':>9} {'ort ms':>9} {'relax GB/s':>10} {'/numpy':>7} {'/ort':>6}"
    )
    for name, (model, ref, shapes) in KERNELS.items():
        if only and only not in name:
            continue
        args = [s if isinstance(s, np.ndarray) else rng.standard_normal(s).astype(np.float32) for s in shapes]
        exe = relax_mlir.compile(from_onnx(model))
        sess = _ort(model)
        feeds = {f"x{i}": a for i, a in enumerate(args)}
        want = ref(*args)
        got = exe(*args)
        np.testing.assert_allclose(
            got, want, rtol=1e-4, atol=1e-3 if "reduce" in name else 1e-5, err_msg=name
        )
        ms = timed(
            {
                "relax": lambda exe=exe, args=args: exe(*args),
                "numpy": lambda ref=ref, args=args: ref(*args),
                "ort": lambda sess=sess, feeds=feeds: sess.run(None, feeds),
            }
        )
        nbytes = sum(a.nbytes for a in args) + want.nbytes
        print(
            f"{name:24} {ms['relax']:9.3f} {ms['numpy']:9.3f} {ms['ort']:9.3f} "
            f"{nbytes / ms['relax'] / 1e6:10.1f} {ms['numpy'] / ms['relax']:7.2f} {ms['ort'] / ms['relax']:6.2f}"
        )


def bench_gpt() -> None:
    import perf_models

    model, weights = perf_models.gpt(2)
    exe = relax_mlir.compile(from_onnx(model))
    sess = _ort(model)
    rng = np.random.default_rng(0)
    print(f"{'GPT 2-layer':24} {'relax ms':>9} {'numpy ms':>9} {'ort ms':>9} {'ort/relax':>10}")
    for b, s in ((1, 16), (4, 128)):
        x = rng.standard_normal((b, s, perf_models.GPT_D)).astype(np.float32)
        want = sess.run(None, {"x": x})[0]
        np.testing.assert_allclose(exe(x), want, rtol=1e-3, atol=1e-4)
        ms = timed(
            {
                "relax": lambda x=x: exe(x),
                "numpy": lambda x=x: perf_models.gpt_numpy(x, weights, 2),
                "ort": lambda x=x: sess.run(None, {"x": x}),
            }
        )
        print(
            f"{f'{b}x{s}':24} {ms['relax']:9.3f} {ms['numpy']:9.3f} {ms['ort']:9.3f} {ms['ort'] / ms['relax']:10.2f}"
        )


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--kernels", action="store_true", help="kernels only, no GPT")
    p.add_argument("--gpt", action="store_true", help="GPT only")
    p.add_argument("--only", help="kernels whose name contains this")
    a = p.parse_args()
    if not a.gpt:
        bench_kernels(a.only)
    if not a.kernels and not a.only:
        bench_gpt()


if __name__ == "__main__":
    main()

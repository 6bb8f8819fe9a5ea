"""Prefill attention alone: relax_mlir's fused (flash-style) kernel vs its unfused ops vs onnxruntime vs PyTorch.

Run: ``python bench/bench_attention.py [--seqs 128,256,512,1024,2048] [--threads 1] [--min-time 0.5]``.

The workload is causal self-attention, batch 1, 12 heads, head dim 64: inputs ``q, k, v [1, 12, seq, 64]``.
relax_mlir and onnxruntime run the same ONNX graph, written as exporters write it (``MatMul(q, Transpose(k))
-> Div -> Where(causal mask from Range/Less) -> Softmax -> MatMul(., v)``), compiled once for every seq
(``opt_level=3``; *relax_mlir* fuses the chain into ``relax.attention``, *unfused* drops
``relax-fuse-attention``). onnxruntime also runs the ONNX ``Attention`` op (opset 23, ``is_causal=1``) when
it supports it, and so does relax_mlir (*relax Attention*: the op's decomposition, fused by the same pass);
PyTorch runs ``torch.nn.functional.scaled_dot_product_attention(is_causal=True)``.
Engines alternate in rounds; medians in ms; the CPU (model and LLVM name) is printed first. On a loaded
machine compare the ratios, not the times.
"""

from __future__ import annotations

import os

THREADS = os.environ.get("BENCH_THREADS", "1")
for var in ("OPENBLAS_NUM_THREADS", "RELAX_MLIR_BLAS_THREADS", "RELAX_MLIR_NUM_THREADS", "OMP_NUM_THREADS"):
    os.environ.setdefault(var, THREADS)  # before numpy / torch load their thread pools

import argparse  # noqa: E402
import statistics  # noqa: E402
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

import relax_mlir  # noqa: E402
from relax_mlir.frontend.onnx import from_onnx  # noqa: E402
from relax_mlir.pipelines.data import text  # noqa: E402
from relax_mlir.targets.cpu import CpuTarget  # noqa: E402

HEADS, HEAD_DIM = 12, 64


def _inputs() -> list:
    return [helper.make_tensor_value_info(n, TensorProto.FLOAT, [1, HEADS, "seq", HEAD_DIM]) for n in "qkv"]


def exported_graph():
    """Causal attention as exporters write it (the GPT of ``perf_models``'s attention, alone)."""
    g = pm._Graph(0)
    seq = g.op("Gather", [g.op("Shape", ["q"]), g.const(np.array(2, np.int64))], axis=0)
    pos = g.op("Range", [g.const(np.array(0, np.int64)), seq, g.const(np.array(1, np.int64))])
    rows = g.op("Unsqueeze", [pos, g.const(np.array([1], np.int64))])
    cols = g.op("Unsqueeze", [pos, g.const(np.array([0], np.int64))])
    mask = g.op("Not", [g.op("Less", [rows, cols])])
    scores = g.op("MatMul", ["q", g.op("Transpose", ["k"], perm=[0, 1, 3, 2])])
    scores = g.op("Div", [scores, g.const(np.array(np.sqrt(HEAD_DIM), np.float32))])
    probs = g.op("Softmax", [g.op("Where", [mask, scores, g.const(np.array(-1e9, np.float32))])], axis=-1)
    g.op("MatMul", [probs, "v"], out="y")
    out = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, HEADS, "seq", HEAD_DIM])
    return g.model("attention", _inputs(), [out])


def attention_op_graph():
    """The ONNX ``Attention`` op (opset 23), causal."""
    node = helper.make_node("Attention", ["q", "k", "v"], ["y"], is_causal=1)
    out = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, HEADS, "seq", HEAD_DIM])
    graph = helper.make_graph([node], "attention_op", _inputs(), [out])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 23)])
    model.ir_version = 10
    return model


def reference(q: np.ndarray, k: np.ndarray, v: np.ndarray) -> np.ndarray:
    s = q.shape[2]
    scores = q @ k.transpose(0, 1, 3, 2) / np.float32(np.sqrt(HEAD_DIM))
    scores[..., np.triu(np.ones((s, s), bool), 1)] = -np.inf
    scores = np.exp(scores - scores.max(-1, keepdims=True))
    return (scores / scores.sum(-1, keepdims=True)) @ v


def machine() -> str:
    fields: dict[str, str] = {}
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        key, _, value = line.partition(":")
        fields.setdefault(key.strip(), value.strip())
    try:
        import llvmlite.binding as llvm

        host = llvm.get_host_cpu_name()
    except Exception:  # noqa: BLE001
        host = "?"
    load = Path("/proc/loadavg").read_text().split()[0]
    return f"{fields.get('model name', '?')} (LLVM {host}); {THREADS} thread(s); load average {load}"


def timed(fns: dict[str, Callable[[], object]], min_time: float, rounds: int = 3) -> dict[str, float]:
    """Median ms per engine, engines alternating in ``rounds`` blocks of about ``min_time / rounds`` s."""
    times: dict[str, list[float]] = {k: [] for k in fns}
    for _ in range(rounds):
        for name, fn in fns.items():
            fn()
            end = time.perf_counter() + min_time / rounds
            while True:
                t = time.perf_counter()
                fn()
                times[name].append(time.perf_counter() - t)
                if t > end and len(times[name]) >= 3:
                    break
    return {k: statistics.median(v) * 1e3 for k, v in times.items()}


def engines(q, k, v, fused, op_fused, unfused, sess, op_sess, torch) -> dict[str, Callable[[], object]]:
    """The engines' calls on ``q, k, v`` (the ones available)."""
    feeds = {"q": q, "k": k, "v": v}
    fns: dict[str, Callable[[], object]] = {
        "relax_mlir": lambda: fused(q, k, v),
        "relax Attention": lambda: op_fused(q, k, v),
        "unfused": lambda: unfused(q, k, v),
        "ORT graph": lambda: sess.run(None, feeds)[0],
    }
    if op_sess is not None:
        fns["ORT Attention"] = lambda: op_sess.run(None, feeds)[0]
    if torch is not None:
        tq, tk, tv = (torch.from_numpy(a) for a in (q, k, v))
        sdpa = torch.nn.functional.scaled_dot_product_attention
        fns["torch SDPA"] = lambda: sdpa(tq, tk, tv, is_causal=True)
    return fns


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--seqs", default="128,256,512,1024,2048")
    parser.add_argument("--min-time", type=float, default=0.6, help="seconds per engine per seq")
    args = parser.parse_args()
    print(f"machine: {machine()}")
    threads = int(THREADS)
    model = exported_graph()
    module = from_onnx(model)
    fused = relax_mlir.compile(module, opt_level=3)
    unfused = relax_mlir.compile(
        module, pipeline=text(CpuTarget().relax_pipeline(3)).replace("relax-fuse-attention,", "")
    )
    op_fused = relax_mlir.compile(from_onnx(attention_op_graph()), opt_level=3)
    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    sess = ort.InferenceSession(model.SerializeToString(), options, providers=["CPUExecutionProvider"])
    try:
        op_sess = ort.InferenceSession(
            attention_op_graph().SerializeToString(), options, providers=["CPUExecutionProvider"]
        )
    except Exception as e:  # noqa: BLE001  (older onnxruntime: no opset-23 Attention)
        print(f"onnxruntime Attention op unavailable: {str(e).splitlines()[0]}")
        op_sess = None
    try:
        import torch

        torch.set_num_threads(threads)
    except ImportError:
        torch = None
    cols = ["relax_mlir", "relax Attention", "unfused", "ORT graph", "ORT Attention", "torch SDPA"]
    print("\nms (medians); ratio = relax_mlir / other, <= 1.0 means relax_mlir is faster")
    print(
        f"{'seq':>5} "
        + " ".join(f"{c:>15}" for c in cols)
        + "  r/unfused  r/ORTgraph  r/ORTop  r/torch  rOp/ORTop"
    )
    for seq in (int(s) for s in args.seqs.split(",")):
        rng = np.random.default_rng(seq)
        q, k, v = (rng.standard_normal((1, HEADS, seq, HEAD_DIM)).astype(np.float32) for _ in range(3))
        fns = engines(q, k, v, fused, op_fused, unfused, sess, op_sess, torch)
        want = reference(q, k, v)
        for name, fn in fns.items():
            got = fn()
            got = got.numpy() if hasattr(got, "numpy") else np.asarray(got)
            np.testing.assert_allclose(got, want, rtol=1e-3, atol=1e-4, err_msg=f"{name} at seq {seq}")
        ms = timed(fns, args.min_time)
        r = ms["relax_mlir"]
        ratios = "  ".join(f"{r / ms[c]:9.2f}" if c in ms else f"{'-':>9}" for c in cols[2:])
        op_ratio = (
            f"{ms['relax Attention'] / ms['ORT Attention']:9.2f}" if "ORT Attention" in ms else f"{'-':>9}"
        )
        print(
            f"{seq:>5} "
            + " ".join(f"{ms.get(c, float('nan')):15.3f}" for c in cols)
            + "  "
            + ratios
            + "  "
            + op_ratio,
            flush=True,
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""The CUDA target's kernels, run by a SIMT interpreter (``simt.py``) on numpy arrays: no GPU needed.

The IR is the real pipeline's up to outlining (mapping, shared-memory matmuls, warp reductions, managed
memory); the interpreter steps each block's threads in lockstep at barriers and shuffles, so a missing
barrier or a wrong shuffle shows up as wrong numbers (``test_a_missing_barrier_is_caught``).
"""

from __future__ import annotations

import numpy as np
import pytest
from mlir import ir
from simt import Interpreter

import relax_mlir.builder as rb
from relax_mlir.context import make_context, parse_module
from relax_mlir.dialects import relax as R
from relax_mlir.examples import reference
from relax_mlir.examples.models import transformer_block
from relax_mlir.pipelines.data import text
from relax_mlir.pipelines.gpu import host_to_gpu
from relax_mlir.targets.steps import run
from relax_mlir.transforms.gpu import matmul

# small blocks, so that partial blocks, several blocks and the bounds guards occur at small shapes
UP_TO_OUTLINING = text(host_to_gpu(block_size=64)).split(",gpu-kernel-outlining")[0]
RNG = np.random.default_rng(0)


def _lowered(text: str, pipeline: str) -> tuple[ir.Context, ir.Operation]:
    ctx = make_context()
    with ctx, ir.Location.unknown():
        op = parse_module(text, "<test>")
        run(op, f"builtin.module({pipeline})")
    return ctx, op


MATMULS = {
    "222": ("linalg.matmul", "memref<?x?xf32>, memref<?x?xf32>", "memref<?x?xf32>"),
    "333": ("linalg.batch_matmul", "memref<?x?x?xf32>, memref<?x?x?xf32>", "memref<?x?x?xf32>"),
    "323": (
        "linalg.batch_matmul indexing_maps = [affine_map<(b, m, n, k) -> (b, m, k)>, "
        "affine_map<(b, m, n, k) -> (k, n)>, affine_map<(b, m, n, k) -> (b, m, n)>]",
        "memref<?x?x?xf32>, memref<?x?xf32>",
        "memref<?x?x?xf32>",
    ),
    "233": (
        "linalg.batch_matmul indexing_maps = [affine_map<(b, m, n, k) -> (m, k)>, "
        "affine_map<(b, m, n, k) -> (b, k, n)>, affine_map<(b, m, n, k) -> (b, m, n)>]",
        "memref<?x?xf32>, memref<?x?x?xf32>",
        "memref<?x?x?xf32>",
    ),
}


def _matmul_module(kind: str) -> str:
    op, ins, out = MATMULS[kind]
    a, b = ins.split(", ")
    return (
        f"func.func private @mm(%a: {a}, %b: {b}, %c: {out}) {{\n"
        f"  {op} ins(%a, %b : {ins}) outs(%c : {out})\n  return\n}}\n"
    )


@pytest.mark.parametrize("kind", sorted(MATMULS))
@pytest.mark.parametrize("m, n, k", [(1, 1, 1), (17, 18, 19), (0, 4, 3), (4, 5, 0)])
def test_tiled_matmul(kind: str, m: int, n: int, k: int) -> None:
    ctx, op = _lowered(_matmul_module(kind), "relax-gpu-prepare-kernels")
    batch = 2
    a = RNG.random((batch, m, k) if kind[0] == "3" else (m, k), dtype=np.float32)
    b = RNG.random((batch, k, n) if kind[1] == "3" else (k, n), dtype=np.float32)
    c = RNG.random((batch, m, n) if kind[2] == "3" else (m, n), dtype=np.float32)
    expected = c + np.matmul(a, b)
    with ctx:
        interpreter = Interpreter(op)
        interpreter.call("mm", a, b, c)
    assert interpreter.launches == (1 if m * n else 0)
    np.testing.assert_allclose(c, expected, rtol=1e-5, atol=1e-5)


def test_tiled_matmul_over_several_blocks() -> None:
    """Two blocks down and two across (64 x 64 tiles), three slabs of K, partial tiles at every edge."""
    ctx, op = _lowered(_matmul_module("222"), "relax-gpu-prepare-kernels")
    a, b = RNG.random((70, 33), dtype=np.float32), RNG.random((33, 65), dtype=np.float32)
    c = RNG.random((70, 65), dtype=np.float32)
    expected = c + a @ b
    with ctx:
        Interpreter(op).call("mm", a, b, c)
    np.testing.assert_allclose(c, expected, rtol=1e-5, atol=1e-5)


def test_a_missing_barrier_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    """Without the barrier after the slab's products, threads overwrite shared memory others still read."""
    original = matmul._kernel_text

    def racy(ranks: tuple[int, int, int]) -> str:
        text = original(ranks)
        last = text.rindex("gpu.barrier")
        return text[:last] + text[last + len("gpu.barrier") :]

    monkeypatch.setattr(matmul, "_kernel_text", racy)
    ctx, op = _lowered(_matmul_module("222"), "relax-gpu-prepare-kernels")
    a, b = RNG.random((17, 40), dtype=np.float32), RNG.random((40, 33), dtype=np.float32)
    c = np.zeros((17, 33), np.float32)
    with ctx:
        Interpreter(op).call("mm", a, b, c)
    assert not np.allclose(c, a @ b, rtol=1e-5, atol=1e-5)


def _softmax(x: np.ndarray) -> np.ndarray:
    e = np.exp(x - x.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


REDUCTIONS = {
    "sum": (lambda x: R.sum(x, [1]), lambda x: x.sum(1)),
    "max": (lambda x: R.max(x, [1]), lambda x: x.max(1)),
    "mean": (lambda x: R.mean(x, [1], keepdims=True), lambda x: x.mean(1, keepdims=True)),
    "variance": (lambda x: R.variance(x, [1]), lambda x: x.var(1)),
    "softmax": (lambda x: R.softmax(x, -1), _softmax),
    "log_softmax": (lambda x: R.log_softmax(x, -1), lambda x: np.log(_softmax(x))),
    "column_sum": (lambda x: R.sum(x, [0]), lambda x: x.sum(0)),
}


@pytest.mark.parametrize("name", sorted(REDUCTIONS))
def test_reductions_through_the_whole_host_function(name: str) -> None:
    """A relax program through the GPU pipeline (warp reductions, loop mapping, managed memory) at
    symbolic shapes, one row and one column included."""
    build, expected_of = REDUCTIONS[name]
    bb = rb.BlockBuilder()
    with bb.function("main", {"x": rb.tensor(["n", "k"])}) as (x,):
        with bb.dataflow():
            out = bb.emit_output(build(x))
        bb.ret(out)
    ctx, op = _lowered(str(bb.module), f"relax-to-host-gpu,{UP_TO_OUTLINING}")
    for n, k in [(1, 1), (3, 70), (9, 33), (2, 1)]:
        x = RNG.random((n, k), dtype=np.float32)
        expected = expected_of(x.astype(np.float64))
        out = np.zeros(expected.shape, np.float32)
        status = np.zeros(4, np.int64)
        with ctx:
            Interpreter(op).call("main", x, out, status)
        assert not status.any()
        np.testing.assert_allclose(out, expected, rtol=2e-5, atol=2e-6, err_msg=f"{name} at n={n}, k={k}")


def test_transformer_block_on_the_gpu_path() -> None:
    """The builder's transformer block (tiled projections and attention matmuls, warp-reduced layer norms
    and softmax, managed-memory staging of every argument) against its numpy reference."""
    d, heads, ff = 16, 2, 32
    weights = reference.transformer_weights(d, ff)
    ctx, op = _lowered(
        str(transformer_block(d=d, heads=heads, ff=ff)), f"relax-to-host-gpu,{UP_TO_OUTLINING}"
    )
    x = RNG.random((2, 3, d), dtype=np.float32)
    out = np.zeros_like(x)
    status = np.zeros(4, np.int64)
    with ctx:
        interpreter = Interpreter(op)
        interpreter.call("transformer_block", x, *weights.values(), out, status)
    assert interpreter.launches > 20
    np.testing.assert_allclose(out, reference.transformer_block(x, heads, weights), rtol=1e-4, atol=1e-5)

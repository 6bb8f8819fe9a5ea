"""relax-pack-weights and relax.matmul_packed: results vs numpy at several row counts and shapes."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from mlir import ir, passmanager
from onnx import TensorProto, helper, numpy_helper

import relax_mlir.builder as rb
from relax_mlir.dialects import relax as R
from relax_mlir.errors import ShapeError
from relax_mlir.frontend.onnx import from_onnx
from relax_mlir.pipelines import add_pipeline, load_passes, parse_pipeline
from relax_mlir.targets import compile
from relax_mlir.transforms.pack_weights import ALIGN, WIDTH
from relax_mlir.transforms.schedules.packed_matmul import mark_narrow_blocks, set_share

RNG = np.random.default_rng(7)


def pack(w: np.ndarray) -> np.ndarray:
    """The panels relax-pack-weights computes: [np, k, WIDTH], n zero-padded to WIDTH * ALIGN."""
    k, n = w.shape
    step = WIDTH * ALIGN
    cols = -(-n // step) * step
    padded = np.zeros((k, cols), np.float32)
    padded[:, :n] = w
    return np.ascontiguousarray(padded.reshape(k, cols // WIDTH, WIDTH).transpose(1, 0, 2))


def compiled(module: object, level: int) -> tuple[object, str]:
    stages: dict[str, str] = {}
    exe = compile(module, opt_level=level, on_stage=lambda name, text: stages.__setitem__(name, text))
    return exe, stages["host"]


def rand(*shape: int) -> np.ndarray:
    return RNG.standard_normal(shape, dtype=np.float32)


@pytest.mark.parametrize("level", [1, 2, 3])
@pytest.mark.parametrize(("k", "n"), [(64, 64), (33, 100), (48, 40)])
def test_constant_weight_model(level: int, k: int, n: int) -> None:
    """relu(x @ W + b) with symbolic batch and sequence: packed at every level, numpy's numbers."""
    w, b = rand(k, n), rand(n)
    bb = rb.BlockBuilder()
    with bb.function("main", {"x": rb.tensor(["batch", "seq", k])}) as (x,):
        with bb.dataflow():
            out = bb.emit_output(R.relu(R.add(R.matmul(x, R.constant(w)), R.constant(b))))
        bb.ret(out)
    exe, host = compiled(bb.module, level)
    assert "matmul_packed" in host and "relax_blas_gemm" not in host
    for batch, seq in [(1, 1), (1, 7), (2, 8), (1, 16), (3, 129)]:
        x = rand(batch, seq, k)
        np.testing.assert_allclose(exe(x), np.maximum(x @ w + b, 0), rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize(
    ("rows", "k", "n", "ms"),
    [
        (["m"], 512, 2048, [(1,), (7,), (16,), (129,), (512,)]),
        (["m"], 31, 17, [(1,), (9,), (24,)]),
        (["m"], 2048, 300, [(1,), (9,), (70,), (130,)]),  # cache blocks of 8 panels (20 panels: a tail of 4)
        ([5], 20, 64, [(5,)]),  # a static row count
        (
            ["b", "s"],
            16,
            50,
            [(1, 1), (2, 9), (3, 8), (4, 1), (3, 1), (0, 1), (2, 0)],
        ),  # two symbols: one product per b (all b rows at once when s = 1)
        (["b", 2, "s"], 16, 32, [(2, 2, 3)]),  # more: an untiled generic
    ],
)
def test_matmul_packed_op(rows: list, k: int, n: int, ms: list[tuple[int, ...]]) -> None:
    """The op itself with a packed parameter, at row counts around the 8-row blocks."""
    w = rand(k, n)
    panels = pack(w)
    bb = rb.BlockBuilder()
    with bb.function("main", {"x": rb.tensor([*rows, k]), "p": rb.tensor(list(panels.shape))}) as (x, p):
        bb.ret(R.matmul_packed(x, p, n))
    exe = compile(bb.module, opt_level=2)
    for lead in ms:
        x = rand(*lead, k)
        np.testing.assert_allclose(exe(x, panels), x @ w, rtol=1e-4, atol=1e-3)


@pytest.mark.parametrize(("k", "n"), [(37, 100), (64, 288)])
def test_matmul_packed_every_remainder(k: int, n: int) -> None:
    """Every row count below two row blocks (each remainder r = m mod 8 in blocks of 4, 2 and 1 rows: its
    bits), odd k and n, and m = 0: numpy's numbers."""
    w = rand(k, n)
    panels = pack(w)
    bb = rb.BlockBuilder()
    with bb.function("main", {"x": rb.tensor(["m", k]), "p": rb.tensor(list(panels.shape))}) as (x, p):
        bb.ret(R.matmul_packed(x, p, n))
    exe = compile(bb.module, opt_level=2)
    for m in range(18):
        x = rand(m, k)
        np.testing.assert_allclose(exe(x, panels), x @ w, rtol=1e-4, atol=1e-3, err_msg=f"m = {m}")


def test_onnx_gemm_transposed_weight() -> None:
    """Gemm(transB=1) from ONNX: the transposed constant is packed (relax-fold-constants, then this pass)."""
    k, n = 24, 37
    w, b = rand(n, k), rand(n)
    graph = helper.make_graph(
        [helper.make_node("Gemm", ["x", "w", "b"], ["y"], transB=1)],
        "gemm",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", k])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", n])],
        [numpy_helper.from_array(w, "w"), numpy_helper.from_array(b, "b")],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    onnx.checker.check_model(model)
    exe, host = compiled(from_onnx(model), 3)
    assert "matmul_packed" in host
    for batch in (1, 5, 64):
        x = rand(batch, k)
        np.testing.assert_allclose(exe(x), x @ w.T + b, rtol=1e-4, atol=1e-4)


def test_deduction_errors() -> None:
    bb = rb.BlockBuilder()
    with bb.function("f", {"x": rb.tensor(["m", 8]), "p": rb.tensor([2, 8, 16]), "q": rb.tensor([2, 8])}) as (
        x,
        p,
        q,
    ):
        assert str(R.matmul_packed(x, p, 20).type) == '!relax.tensor<["m", 20], f32>'
        with pytest.raises(ShapeError, match="does not fit 2 panels of width 16"):
            R.matmul_packed(x, p, 33)
        with pytest.raises(ShapeError, match="must be \\[panels, k, width\\]"):
            R.matmul_packed(x, q, 4)
        with pytest.raises(ShapeError, match="contraction dims differ"):
            R.matmul_packed(R.reshape(x, ["m * 2", 4]), p, 20)
        bb.ret(x)


@pytest.mark.parametrize("read_blobs", [True, False])
def test_large_weight_both_packing_paths(read_blobs: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    """A dense_resource weight (> 64 KiB) is packed in numpy from its bytecode blob, or, when the blob
    cannot be read, by compiling the packing ops: the same numbers either way."""
    import relax_mlir.transforms.pack_weights as pw  # noqa: PLC0415

    if not read_blobs:
        monkeypatch.setattr(pw, "_blobs", lambda ops: {})  # no blob could be read
    k, n = 96, 200  # 75 KiB
    w = rand(k, n)
    bb = rb.BlockBuilder()
    with bb.function("main", {"x": rb.tensor(["m", k])}) as (x,):
        bb.ret(R.matmul(x, R.constant(w)))
    exe, host = compiled(bb.module, 2)
    assert "matmul_packed" in host
    for m in (1, 8, 13):
        x = rand(m, k)
        np.testing.assert_allclose(exe(x), x @ w, rtol=1e-4, atol=1e-4)


def test_matmul_packed_writes_its_destination_in_place() -> None:
    """The packed matmul's row blocks and remaining-rows blocks write the caller's output buffer: LLVM code
    with no buffer allocated (relax_malloc) or copied (memrefCopy) in the kernel (an scf.if around a block
    made One-Shot Bufferize copy every chunk's columns in and out: 1.3x the time at 4 rows)."""
    k, n = 96, 512
    w = rand(k, n)
    bb = rb.BlockBuilder()
    with bb.function("main", {"x": rb.tensor(["m", k])}) as (x,):
        bb.ret(R.matmul(x, R.constant(w)))
    stages: dict[str, str] = {}
    exe = compile(
        bb.module, opt_level=2, use_cache=False, on_stage=lambda name, text: stages.setdefault(name, text)
    )
    assert "matmul_packed" in stages["host"]
    assert "llvm.call @memrefCopy" not in stages["llvm"] and "llvm.call @relax_malloc" not in stages["llvm"]
    for m in (0, 4, 7, 13):
        x = rand(m, k)
        np.testing.assert_allclose(exe(x), x @ w, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize(
    ("depth", "panels", "share"),
    [
        (2048, 16, 16),  # every panel starts at the same set (2048 lines apart) and spans sets 0-1023
        (2048, 8, 8),
        (768, 16, 6),  # starts 256 sets apart, each twice; 768 lines span 3 of those starts
        (1024, 16, 8),  # starts 0 and 1024, 8 each, spanning disjoint halves
        (4096, 16, 16),  # DEPTH rows of each panel only: still all from set 0
        (1, 16, 1),  # one line per panel, on consecutive sets
    ],
)
def test_set_share(depth: int, panels: int, share: int) -> None:
    """Lines of one L2 set that a cache block of 64-byte panel rows takes, derived by hand."""
    assert set_share(depth, 64, panels) == share


@pytest.mark.parametrize(("k", "narrow"), [(2048, True), (4096, True), (768, False), (1024, False)])
def test_aliasing_blocks_are_narrow(k: int, narrow: bool) -> None:
    """A product whose panels lie a multiple of the L2's set period apart gets cache blocks of half the
    panels ("main-narrow"); others keep the full blocks."""
    n = 16 * WIDTH
    bb = rb.BlockBuilder()
    with bb.function("main", {"x": rb.tensor(["m", k]), "p": rb.tensor([n // WIDTH, k, WIDTH])}) as (x, p):
        bb.ret(R.matmul_packed(x, p, n))
    module = bb.module
    with module.context, ir.Location.unknown():
        load_passes()
        pm = passmanager.PassManager("builtin.module")
        add_pipeline(pm, parse_pipeline("relax-verify,relax-infer-shapes,convert-relax-to-linalg"))
        pm.run(module.operation)
        mark_narrow_blocks(module.operation)
    text = str(module)
    assert ('relax.packed_matmul = "main-narrow"' in text) is narrow
    assert ('relax.packed_matmul = "main"' in text) is not narrow

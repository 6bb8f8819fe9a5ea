"""The named pipelines relax-O0..relax-O3: each level compiles both builder models and an ONNX GPT
correctly; passes compose in orders other than the default; relax-level pipelines are idempotent;
and every op test also passes at levels 0, 2 and 3 (the suite itself runs at level 1)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from mlir import passmanager

from relax_mlir import compile
from relax_mlir.context import make_context, parse_module
from relax_mlir.errors import CompileError
from relax_mlir.examples import reference
from relax_mlir.examples.models import small_cnn, transformer_block
from relax_mlir.examples.onnx_gpt import gpt_model
from relax_mlir.frontend.onnx import from_onnx
from relax_mlir.pipelines import PIPELINES, add_pipeline, load_passes, parse_pipeline
from relax_mlir.pipelines.cpu import LEVELS, cleanup
from relax_mlir.pipelines.data import text

D, HEADS, FF = 64, 4, 96
ROOT = Path(__file__).resolve().parents[2]
VERIFY = "relax-verify,relax-infer-shapes"
FUSE = "relax-fuse-ops,convert-relax-to-linalg,relax-fuse-kernels"
CLEANUP = text(cleanup(1))

# Orders other than the defaults: cleanups after fusion grouping, BLAS after cleanups without fusion,
# planning without fusion, each pass twice, cleanups repeated around dispatch.
ORDERS = {
    "fuse-then-cleanup": f"{VERIFY},relax-fuse-ops,{CLEANUP},convert-relax-to-linalg,relax-fuse-kernels,"
    "relax-lower-host",
    "blas-plan-no-fusion": f"{VERIFY},relax-dispatch-blas,relax-dce,convert-relax-to-linalg,relax-plan-memory,"
    "relax-lower-host,relax-schedule-kernels",
    "everything-twice": f"{VERIFY},{CLEANUP},{CLEANUP},relax-dispatch-blas,relax-dispatch-blas,"
    "relax-fuse-ops,relax-fuse-ops,convert-relax-to-linalg,relax-fuse-kernels,relax-fuse-kernels,"
    "relax-plan-memory,relax-plan-memory,relax-lower-host,relax-schedule-kernels",
    "cleanup-around-blas": f"{VERIFY},relax-dce,relax-dispatch-blas,relax-cse,relax-canonicalize,{FUSE},"
    "relax-lower-host",
}


def _check_block(exe, shapes=((1, 1), (2, 7), (3, 16))) -> None:
    for b, s in shapes:
        weights = reference.transformer_weights(D, FF, seed=b * 10 + s)
        x = np.random.default_rng(s).standard_normal((b, s, D)).astype(np.float32)
        expected = reference.transformer_block(x, HEADS, weights)
        np.testing.assert_allclose(exe(x, *weights.values()), expected, rtol=1e-4, atol=1e-4)


def _check_cnn(exe, shapes=((1, 8, 8), (2, 9, 13), (1, 2, 3))) -> None:
    for n, h, w in shapes:
        image = np.random.default_rng(h * w).standard_normal((n, 3, h, w)).astype(np.float32)
        np.testing.assert_allclose(exe(image), reference.small_cnn(image), rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("level", [0, 1, 2, 3])
def test_every_level_compiles_the_builder_models(level: int) -> None:
    _check_block(compile(transformer_block(D, HEADS, FF), opt_level=level))
    _check_cnn(compile(small_cnn(), opt_level=level))


@pytest.mark.parametrize("level", [0, 3])
def test_every_level_compiles_an_onnx_gpt(level: int) -> None:
    import onnxruntime as ort

    model = gpt_model(layers=1, d=32, heads=2, vocab=50)
    exe = compile(from_onnx(model), opt_level=level)
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    for b, s in ((1, 1), (2, 9)):
        ids = np.random.default_rng(s).integers(0, 50, (b, s), dtype=np.int64)
        np.testing.assert_allclose(exe(ids), session.run(None, {"ids": ids})[0], rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("order", sorted(ORDERS))
def test_other_pass_orders_stay_correct(order: str) -> None:
    _check_block(compile(transformer_block(D, HEADS, FF), pipeline=ORDERS[order]), shapes=((1, 1), (2, 7)))
    _check_cnn(compile(small_cnn(), pipeline=ORDERS[order]), shapes=((1, 8, 8), (2, 9, 13)))


def _relax_part(level: int) -> str:
    return LEVELS[level].split(",convert-relax-to-linalg")[0]


@pytest.mark.parametrize("level", [1, 2, 3])
def test_relax_level_passes_are_idempotent(level: int) -> None:
    """A second run of the relax-level part of a pipeline changes nothing."""
    load_passes()
    with make_context():
        op = parse_module(str(transformer_block(D, HEADS, FF)), "<test>")
        texts = []
        for _ in range(2):
            pm = passmanager.PassManager("builtin.module")
            add_pipeline(pm, parse_pipeline(_relax_part(level)))
            pm.run(op)
            texts.append(str(op))
    assert texts[0] == texts[1]


def test_levels_are_registered_pipelines() -> None:
    load_passes()
    for level in range(4):
        assert f"relax-O{level}" in PIPELINES
    with pytest.raises(CompileError, match="opt_level must be 0, 1, 2 or 3, got 4"):
        compile(small_cnn(), opt_level=4)


@pytest.mark.parametrize("level", [0, 2, 3])
def test_every_op_test_passes_at_level(level: int, tmp_path: Path) -> None:
    """The op lowering tests (run at level 1 by the suite) again, compiled with relax-O<level>."""
    env = dict(os.environ, RELAX_MLIR_TEST_OPT_LEVEL=str(level))
    files = sorted(str(p) for p in (ROOT / "test/python").glob("test_lower_*.py"))
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-x", "-p", "no:cacheprovider", *files],
        env=env,
        capture_output=True,
        text=True,
        cwd=ROOT / "test/python",
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    assert " passed" in done.stdout and " failed" not in done.stdout


def test_host_to_llvm_lowers_functions_in_parallel_to_the_same_ir() -> None:
    """``host-to-llvm`` runs its function-local passes nested under the functions (MLIR lowers those on all
    cores) and produces exactly the IR of the same passes at module level."""
    from relax_mlir.pipelines.cpu import BUFFERIZE, FUNCTION_LOCAL, TO_LLVM, host_to_llvm
    from relax_mlir.targets import steps

    nested = host_to_llvm()
    assert not FUNCTION_LOCAL & {e.name for e in nested}  # none left at module level
    inner = {p.name for e in nested if e.nested and e.name in ("func.func", "llvm.func") for p in e.nested}
    assert {"expand-strided-metadata", "convert-arith-to-llvm", "convert-ub-to-llvm"} <= inner
    source = steps.source(transformer_block(D, HEADS, FF).operation)
    texts = []
    for pipeline in ([*BUFFERIZE, *TO_LLVM], nested):
        with make_context():
            op = steps.parse(source)
            steps.run(op, LEVELS[3])
            steps.run(op, pipeline)
            texts.append(str(op))
    assert texts[0] == texts[1]

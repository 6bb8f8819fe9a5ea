"""Kernels tiled for a ``VectorUnit`` other than AVX-512's (the wasm32 target's 16 registers of 128 bits),
run on the CPU target so no wasm toolchain is needed: packed panels 4 wide, 4-row register blocks, 4 x 8
matmul and 4 x 4 batch_matmul tiles, against numpy at sizes around the tiles (0, 1, odd, multiples)."""

from __future__ import annotations

import numpy as np
import pytest

import relax_mlir.builder as rb
from relax_mlir.dialects import relax as R
from relax_mlir.errors import CompileError
from relax_mlir.pipelines.data import text
from relax_mlir.targets import compile
from relax_mlir.targets.aot import aot_pipeline
from relax_mlir.transforms.schedules import VectorUnit
from relax_mlir.transforms.schedules.matmul import register_tile

RNG = np.random.default_rng(11)
SIMD128 = VectorUnit(128, 16)


def rand(*shape: int) -> np.ndarray:
    return RNG.standard_normal(shape, dtype=np.float32)


def test_register_tiles() -> None:
    """The default unit gives the CPU's tiles; 16 registers of 128 bits give half the rows, 4-lane vectors."""
    assert register_tile("linalg.matmul", VectorUnit()) == (8, 32, 1)
    assert register_tile("linalg.batch_matmul", VectorUnit()) == (1, 8, 16, 1)
    assert register_tile("linalg.matmul", SIMD128) == (4, 8, 1)
    assert register_tile("linalg.batch_matmul", SIMD128) == (1, 4, 4, 1)


@pytest.mark.parametrize(("k", "n"), [(64, 64), (33, 100), (512, 72)])
def test_simd128_vector_unit(k: int, n: int) -> None:
    """Packed panels and register tiles sized for 16 registers of 128 bits (the wasm32 target's choice):
    4-wide panels, 4-row register blocks inside the 8-row blocks, 1 x 4-panel blocks for the other rows;
    numpy's numbers at row counts around both."""

    w, b = rand(k, n), rand(n)
    bb = rb.BlockBuilder()
    with bb.function("main", {"x": rb.tensor(["m", k])}) as (x,):
        bb.ret(R.add(R.matmul(x, R.constant(w)), R.constant(b)))
    stages: dict[str, str] = {}
    pipeline = text(aot_pipeline(2, SIMD128))
    assert "relax-pack-weights{opt-level=2 vector-bits=128}" in pipeline
    assert "relax-schedule-kernels{vector-bits=128 vector-registers=16 cpu=generic}" in pipeline
    exe = compile(bb.module, pipeline=pipeline, on_stage=lambda name, t: stages.__setitem__(name, t))
    panels = -(-n // 8) * 2
    assert f"tensor<{panels}x{k}x4xf32>" in stages["host"]
    for m in (0, 1, 3, 4, 8, 13, 64):
        x = rand(m, k)
        np.testing.assert_allclose(exe(x), x @ w + b, rtol=1e-4, atol=1e-3)


@pytest.mark.parametrize(
    ("options", "match"),
    [
        (
            "relax-schedule-kernels{vector-bits=100}",
            "multiple of 32 and vector-registers at least 4, got vector-bits=100",
        ),
        ("relax-schedule-kernels{vector-registers=2}", "got vector-bits=512 vector-registers=2"),
        ("relax-pack-weights{vector-bits=0}", "multiple of 32, got 0"),
    ],
)
def test_vector_unit_options_are_checked(options: str, match: str) -> None:
    """A vector unit the tiles cannot be sized for is a CompileError naming the pass and the values."""

    bb = rb.BlockBuilder()
    with bb.function("main", {"x": rb.tensor(["m", 8])}) as (x,):
        bb.ret(R.matmul(x, R.constant(rand(8, 8))))
    with pytest.raises(CompileError, match=match):
        compile(bb.module, pipeline=f"relax-verify,{options},convert-relax-to-linalg,relax-lower-host")


@pytest.mark.parametrize(("m", "k", "n"), [(0, 5, 9), (1, 1, 1), (4, 8, 8), (13, 33, 19), (64, 70, 100)])
def test_simd128_matmul_and_batch_matmul(m: int, k: int, n: int) -> None:
    """Matmuls of two inputs (generated kernels, 4 x 8 register tiles) and batched ones (4 x 4)."""
    bb = rb.BlockBuilder()
    with bb.function("main", {"a": rb.tensor(["m", "k"]), "b": rb.tensor(["k", "n"])}) as (a, b):
        bb.ret(R.matmul(a, b))
    with bb.function("batched", {"a": rb.tensor([3, "m", "k"]), "b": rb.tensor([3, "k", "n"])}) as (a, b):
        bb.ret(R.matmul(a, b))
    stages: dict[str, str] = {}
    pipeline = text(aot_pipeline(2, SIMD128))
    exe = compile(bb.module, pipeline=pipeline, on_stage=lambda name, t: stages.__setitem__(name, t))
    assert "vector<4x8xf32>" in stages["host"] and "vector<1x4x4xf32>" in stages["host"]
    a, b = rand(m, k), rand(k, n)
    np.testing.assert_allclose(exe["main"](a, b), a @ b, rtol=1e-4, atol=1e-3)
    a3, b3 = rand(3, m, k), rand(3, k, n)
    np.testing.assert_allclose(exe["batched"](a3, b3), a3 @ b3, rtol=1e-4, atol=1e-3)

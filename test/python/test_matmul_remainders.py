"""The generated matmul kernels (``transforms/schedules/matmul.py``) at sizes that are not multiples of the
register tile: the peeled remainders are vectorized with masks (no scalar loops), checked against numpy."""

from __future__ import annotations

import numpy as np
import pytest

import relax_mlir.builder as rb
from relax_mlir.dialects import relax as R
from relax_mlir.targets import compile

# (m, k, n): empty, one, odd, around the 8 x 32 register tile and its 16-column remainder tiles, large
MATMUL_SIZES = [
    (0, 5, 7),
    (3, 0, 4),
    (1, 1, 1),
    (1, 512, 512),
    (3, 5, 7),
    (7, 9, 17),
    (8, 32, 32),
    (9, 33, 31),
    (17, 64, 48),
    (127, 255, 129),
    (255, 257, 511),
]
BATCH_SIZES = [(1, 1, 1, 1), (2, 0, 5, 4), (3, 7, 64, 17), (2, 9, 33, 31), (4, 128, 64, 128)]


def _matmul_module(lhs: list, rhs: list) -> rb.BlockBuilder:
    bb = rb.BlockBuilder()
    with bb.function("main", {"a": rb.tensor(lhs), "b": rb.tensor(rhs)}) as (a, b):
        bb.ret(R.matmul(a, b))
    return bb


def _host_ir(bb: rb.BlockBuilder, level: int) -> str:
    stages: dict[str, str] = {}
    compile(
        bb.module, opt_level=level, use_cache=False, on_stage=lambda name, text: stages.update({name: text})
    )
    return stages["host"]


@pytest.mark.parametrize("level", [1, 2])
def test_odd_matmul_sizes_match_numpy(level: int) -> None:
    exe = compile(_matmul_module(["m", "k"], ["k", "n"]).module, opt_level=level)
    rng = np.random.default_rng(0)
    for m, k, n in MATMUL_SIZES:
        x = rng.standard_normal((m, k), dtype=np.float32)
        y = rng.standard_normal((k, n), dtype=np.float32)
        np.testing.assert_allclose(exe(x, y), x @ y, rtol=1e-4, atol=1e-3, err_msg=f"{m}x{k}x{n}")


def test_odd_batch_matmul_sizes_match_numpy() -> None:
    exe = compile(_matmul_module(["b", "m", "k"], ["b", "k", "n"]).module, opt_level=2)
    rng = np.random.default_rng(1)
    for b, m, k, n in BATCH_SIZES:
        x = rng.standard_normal((b, m, k), dtype=np.float32)
        y = rng.standard_normal((b, k, n), dtype=np.float32)
        np.testing.assert_allclose(exe(x, y), x @ y, rtol=1e-4, atol=1e-3, err_msg=f"{b}x{m}x{k}x{n}")


@pytest.mark.parametrize("m,k,n", [(1, 3, 1), (7, 9, 17), (127, 255, 129)])
def test_static_odd_sizes_match_numpy(m: int, k: int, n: int) -> None:
    exe = compile(_matmul_module([m, k], [k, n]).module, opt_level=2)
    rng = np.random.default_rng(2)
    x = rng.standard_normal((m, k), dtype=np.float32)
    y = rng.standard_normal((k, n), dtype=np.float32)
    np.testing.assert_allclose(exe(x, y), x @ y, rtol=1e-4, atol=1e-3)


@pytest.mark.parametrize(
    "lhs,rhs,op",
    [
        (["m", "k"], ["k", "n"], "linalg.matmul"),
        ([127, 255], [255, 129], "linalg.matmul"),
        (["b", "m", "k"], ["b", "k", "n"], "linalg.batch_matmul"),
    ],
)
def test_remainders_are_vectorized_with_masks(lhs: list, rhs: list, op: str) -> None:
    """No contraction is left to scalar loops: every remainder tile became masked vector code."""
    host = _host_ir(_matmul_module(lhs, rhs), 2)
    assert op not in host
    assert "vector.create_mask" in host or "vector.constant_mask" in host

"""Max pooling of windows that tile the input (``conv_kernels.max_pool``: a row read and one shuffle per
window column, per image and channel) against numpy, and the poolings it leaves to the generic loops."""

from __future__ import annotations

import numpy as np
import pytest
from oprun import build_fn

import relax_mlir.builder as rb
from relax_mlir.dialects import relax as R
from relax_mlir.targets import compile

RNG = np.random.default_rng(5)


def compiled(shape: list, dtype: str, **pool: object) -> tuple[object, str]:
    stages: dict[str, str] = {}
    module = build_fn({"x": rb.tensor(shape, dtype)}, lambda x: R.max_pool2d(x, **pool))
    exe = compile(module, opt_level=3, on_stage=stages.__setitem__)
    return exe, stages["host"]


def reference(x: np.ndarray, kh: int, kw: int) -> np.ndarray:
    n, c, h, w = x.shape
    oh, ow = h // kh, w // kw
    return x[:, :, : oh * kh, : ow * kw].reshape(n, c, oh, kh, ow, kw).max(axis=(3, 5))


# (channels, height, width), kernel, batches
CASES = {
    "2x2": ((16, 64, 64), (2, 2), (0, 1, 2)),
    "2x2-odd-input": ((3, 9, 37), (2, 2), (1, 3)),  # the last row and column are not in a window
    "3x3": ((5, 13, 50), (3, 3), (1,)),  # 16 outputs a row, then 0: one vector
    "1x4": ((2, 3, 70), (1, 4), (1, 2)),  # 17 outputs: a vector and one
    "4x1": ((2, 8, 5), (4, 1), (1,)),
    "1x1-width-1": ((4, 3, 1), (1, 1), (1,)),
}


@pytest.mark.parametrize("dtype", ["f32", "f64"])
@pytest.mark.parametrize("case", list(CASES))
def test_max_pool_matches_numpy(case: str, dtype: str) -> None:
    (c, h, w), (kh, kw), batches = CASES[case]
    exe, host = compiled(["n", c, h, w], dtype, kernel=(kh, kw))
    assert "linalg.pooling" not in host and "vector.transfer_read" in host
    for n in batches:
        x = RNG.standard_normal((n, c, h, w)).astype(np.float32 if dtype == "f32" else np.float64)
        np.testing.assert_array_equal(exe(x), reference(x, kh, kw))


def test_max_pool_propagates_nan_and_keeps_inf() -> None:
    exe, _ = compiled(["n", 1, 4, 6], "f32", kernel=(2, 2))
    x = np.zeros((1, 1, 4, 6), np.float32)
    x[0, 0, 0, 0], x[0, 0, 3, 5], x[0, 0, 2, 2] = np.nan, np.inf, -np.inf
    got = exe(x)
    assert np.isnan(got[0, 0, 0, 0]) and got[0, 0, 1, 2] == np.inf and got[0, 0, 1, 1] == 0.0


@pytest.mark.parametrize(
    ("shape", "pool"),
    [
        (["n", 2, 7, 7], {"kernel": 2, "ceil_mode": True}),  # a last window past the input
        (["n", 2, 8, 8], {"kernel": 2, "padding": 1}),
        (["n", 2, 8, 8], {"kernel": 3, "strides": 2}),  # overlapping windows
        (["n", 2, 8, "w"], {"kernel": 2}),  # a symbolic width
    ],
)
def test_other_poolings_keep_the_generic_loops(shape: list, pool: dict) -> None:
    exe, host = compiled(shape, "f32", **pool)
    assert "tensor.pad" in host or "linalg" in host
    x = RNG.standard_normal([2 if d == "n" else 10 if d == "w" else d for d in shape]).astype(np.float32)
    got = exe(x)
    assert got.shape[:2] == (2, 2) and np.isfinite(got).all()

"""ONNX Det against numpy, at several sizes (0 batches, 1x1, odd) and with singular matrices."""

from __future__ import annotations

import numpy as np
import pytest
from onnx import helper
from onnx_util import graph_model, run_ours, value_info


def _det_model(shape: list[int | str], dtype: type = np.float32) -> object:
    node = helper.make_node("Det", ["x"], ["y"])
    g = helper.make_graph([node], "det", [value_info("x", dtype, shape)], [value_info("y", dtype, None)])
    return graph_model(g, 22)


@pytest.mark.parametrize("m", [1, 2, 3, 5])
@pytest.mark.parametrize("batch", [0, 1, 3])
def test_det_against_numpy(m: int, batch: int) -> None:
    x = np.random.default_rng(m * 10 + batch).standard_normal((batch, 2, m, m)).astype(np.float32)
    [got] = run_ours(_det_model(["b", 2, m, m]), x)
    assert got.shape == (batch, 2) and got.dtype == np.float32
    np.testing.assert_allclose(got, np.linalg.det(x.astype(np.float64)), rtol=1e-5, atol=1e-6)


def test_det_singular_pivoting_and_f64() -> None:
    """A zero pivot needs a row swap (sign flip); a singular matrix gives 0, not NaN."""
    x = np.array(
        [
            [[0, 1, 2], [1, 0, 3], [4, -3, 8]],
            [[1, 2, 3], [2, 4, 6], [1, 0, 1]],
            [[0, 0, 0], [0, 0, 0], [0, 0, 0]],
        ],
        np.float64,
    )
    [got] = run_ours(_det_model([3, 3, 3], np.float64), x)
    np.testing.assert_allclose(got, np.linalg.det(x), atol=1e-12)
    assert not np.isnan(got).any()

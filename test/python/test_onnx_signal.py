"""ONNX signal ops (window functions, DFT, STFT) against onnxruntime, at several sizes including 0, 1 and odd."""

from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto, helper
from onnx_util import check_against_ort, graph_model, value_info

import relax_mlir
from relax_mlir.frontend.onnx import from_onnx


@pytest.mark.parametrize("op", ["HannWindow", "HammingWindow", "BlackmanWindow"])
@pytest.mark.parametrize("periodic", [0, 1])
def test_window_with_runtime_size(op: str, periodic: int) -> None:
    """The size is a graph input: one compiled model serves every length."""
    node = helper.make_node(op, ["size"], ["y"], periodic=periodic)
    g = helper.make_graph(
        [node], "w", [value_info("size", np.int64, [])], [value_info("y", np.float32, None)]
    )
    model = graph_model(g, 17)
    for n in (0, 1, 2, 7, 10):
        check_against_ort(model, np.array(n, np.int64), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("n", [1, 5])
def test_window_with_constant_size_is_static(n: int) -> None:
    size = helper.make_tensor("size", TensorProto.INT32, [], [n])
    node = helper.make_node("HannWindow", ["size"], ["y"], output_datatype=TensorProto.DOUBLE)
    g = helper.make_graph([node], "w", [], [value_info("y", np.float64, None)], [size])
    module = from_onnx(graph_model(g, 17))
    assert f"!relax.tensor<[{n}], f64>" in str(module)
    got = relax_mlir.compile(module)()
    np.testing.assert_allclose(got, 0.5 - 0.5 * np.cos(2 * np.pi * np.arange(n) / n), atol=1e-12)

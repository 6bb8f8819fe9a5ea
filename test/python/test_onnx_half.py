"""16-bit float numerics against numpy's (and ONNX's reference), bit for bit.

numpy sums f16 in f32 and rounds once; ml_dtypes' bf16 rounds every step; both divide (one rounding) in a
softmax and multiply-accumulate a matmul or convolution in f32. Several shapes, including 0, 1 and odd.
"""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest
from onnx import TensorProto, helper
from onnx_util import graph_model, run_ours

BF16 = ml_dtypes.bfloat16
ONNX_TYPE = {np.dtype(np.float16): TensorProto.FLOAT16, np.dtype(BF16): TensorProto.BFLOAT16}
rng = np.random.default_rng(0)
SHAPES = [(0, 5), (1, 1), (7, 9), (3, 300)]


def _model(op: str, x: np.ndarray, *extra: np.ndarray, **attrs: object) -> object:
    t = ONNX_TYPE[x.dtype]
    names = ["x"] + [f"in{i}" for i in range(len(extra))]
    inputs = [helper.make_tensor_value_info(n, t, list(a.shape)) for n, a in zip(names, (x, *extra))]
    node = helper.make_node(op, names, ["y"], **attrs)
    out = helper.make_tensor_value_info("y", t, None)
    return graph_model(helper.make_graph([node], op.lower(), inputs, [out]), 21)


def _bits(a: np.ndarray) -> np.ndarray:
    return np.asarray(a).view(np.uint16)


@pytest.mark.parametrize("dtype", [np.float16, BF16])
@pytest.mark.parametrize("shape", SHAPES)
def test_softmax_rounds_like_numpy(dtype: type, shape: tuple[int, int]) -> None:
    """exp rounded to the dtype, summed (f16: in f32), then one division per element."""
    x = (rng.standard_normal(shape) * 3).astype(dtype)
    e = np.exp(x - x.max(-1, keepdims=True, initial=-np.inf))
    want = e / np.sum(e, -1, keepdims=True)
    [got] = run_ours(_model("Softmax", x, axis=-1), x)
    np.testing.assert_array_equal(_bits(got), _bits(want))


@pytest.mark.parametrize("shape", SHAPES)
def test_f16_sum_and_mean_accumulate_in_f32(shape: tuple[int, int]) -> None:
    x = (rng.standard_normal(shape) * 3).astype(np.float16)
    for op, ref in (("ReduceSum", np.sum), ("ReduceMean", np.mean)):
        t = ONNX_TYPE[x.dtype]
        axes = helper.make_tensor("axes", TensorProto.INT64, [1], [1])
        node = helper.make_node(op, ["x", "axes"], ["y"], keepdims=1)
        g = helper.make_graph(
            [node],
            "r",
            [helper.make_tensor_value_info("x", t, list(shape))],
            [helper.make_tensor_value_info("y", t, None)],
            [axes],
        )
        [got] = run_ours(graph_model(g, 21), x)
        if shape[1] == 0:
            continue
        np.testing.assert_array_equal(_bits(got), _bits(ref(x, -1, keepdims=True)), err_msg=op)


@pytest.mark.parametrize("dtype", [np.float16, BF16])
@pytest.mark.parametrize(("length", "kernel"), [(1, 1), (8, 4), (33, 5)])
def test_conv_accumulates_in_f32(dtype: type, length: int, kernel: int) -> None:
    """A depthwise 1-D convolution: products and sums in f32, one rounding (the reference's matmul)."""
    c = 4
    x = rng.standard_normal((2, c, length + kernel - 1)).astype(dtype)
    w = rng.standard_normal((c, 1, kernel)).astype(dtype)
    [got] = run_ours(_model("Conv", x, w, group=c), x, w)
    windows = np.lib.stride_tricks.sliding_window_view(x.astype(np.float32), kernel, axis=2)
    want = np.einsum("bclk,ck->bcl", windows, w[:, 0].astype(np.float32)).astype(dtype)
    np.testing.assert_array_equal(_bits(got), _bits(want))

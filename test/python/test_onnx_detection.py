"""ONNX NonMaxSuppression against onnxruntime: random boxes (many overlapping, some flipped or
degenerate), several batch, class and box counts, thresholds and limits given at run time."""

from __future__ import annotations

import numpy as np
import pytest
from onnx import helper
from onnx_util import graph_model, run_ort, run_ours, value_info


def _model(n: int, center: int, with_score: bool) -> object:
    names = ["boxes", "scores", "limit", "iou"] + (["score"] if with_score else [])
    node = helper.make_node("NonMaxSuppression", names, ["y"], center_point_box=center)
    inputs = [
        value_info("boxes", np.float32, ["b", n, 4]),
        value_info("scores", np.float32, ["b", "c", n]),
        value_info("limit", np.int64, [1]),
        value_info("iou", np.float32, [1]),
    ] + ([value_info("score", np.float32, [1])] if with_score else [])
    return graph_model(helper.make_graph([node], "nms", inputs, [value_info("y", np.int64, None)]), 11)


@pytest.mark.parametrize(
    ("batch", "classes", "n"), [(1, 1, 1), (2, 3, 7), pytest.param(1, 2, 12, marks=pytest.mark.slow)]
)
@pytest.mark.parametrize("center", [0, 1])
def test_nms_against_ort(batch: int, classes: int, n: int, center: int) -> None:
    rng = np.random.default_rng(batch * 100 + n + center)
    boxes = rng.uniform(0, 4, (batch, n, 4)).astype(np.float32)
    if center:
        boxes[..., 2:] = np.abs(boxes[..., 2:])
    boxes[:, ::5] = boxes[:, :1]  # identical boxes
    scores = rng.choice(np.linspace(0, 1, 6), (batch, classes, n)).astype(np.float32)  # ties
    for with_score, limit, iou in ((False, 3, 0.5), (True, 100, 0.2), (True, 0, 0.5)):
        model = _model(n, center, with_score)
        inputs = [boxes, scores, np.array([limit], np.int64), np.array([iou], np.float32)]
        if with_score:
            inputs.append(np.array([0.3], np.float32))
        [got], [want] = run_ours(model, *inputs), run_ort(model, *inputs)
        np.testing.assert_array_equal(got, want)

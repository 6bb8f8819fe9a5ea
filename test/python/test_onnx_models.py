"""Whole ONNX models: a GPT-style decoder with dynamic batch and sequence length (fully symbolic
after import, numbers equal to onnxruntime's at several shapes) and ONNX's light CNN models."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx_util import check_against_ort

from relax_mlir.examples.onnx_gpt import gpt_model
from relax_mlir.frontend.onnx import from_onnx

rng = np.random.default_rng(0)


@pytest.fixture(scope="module")
def gpt() -> onnx.ModelProto:
    return gpt_model(layers=2, d=64, heads=4, vocab=100)


def test_gpt_imports_with_every_shape_symbolic(gpt: onnx.ModelProto) -> None:
    text = str(from_onnx(gpt))
    types = re.findall(r"!relax\.tensor<\[[^\]]*\]", text)
    assert types and not [t for t in types if '"?"' in t]
    assert '-> !relax.tensor<["batch", "seq", 100], f32>' in text
    assert '!relax.tensor<["seq", "seq"], i1>' in text  # the causal mask
    assert '!relax.tensor<["batch", 4, "seq", "seq"], f32>' in text  # attention scores


@pytest.mark.parametrize("batch, seq", [(1, 1), (2, 7), (3, 16), (1, 64)])
def test_gpt_matches_onnxruntime(gpt: onnx.ModelProto, batch: int, seq: int) -> None:
    ids = rng.integers(0, 100, (batch, seq), dtype=np.int64)
    check_against_ort(gpt, ids, rtol=1e-4, atol=1e-4)


LIGHT = Path(onnx.__file__).parent / "backend/test/data/light"


@pytest.mark.parametrize("name", ["light_squeezenet", "light_shufflenet"])
def test_light_model_matches_its_expected_output(name: str) -> None:
    from onnx.backend.test.runner import Runner
    from onnx_util import run_ours

    model = onnx.load(str(LIGHT / f"{name}.onnx"))
    inits = {t.name for t in model.graph.initializer}
    inputs = [Runner.generate_dummy_data(x) for x in model.graph.input if x.name not in inits]
    expected = onnx.TensorProto()
    expected.ParseFromString((LIGHT / f"{name}_output_0.pb").read_bytes())
    (out,) = run_ours(model, *inputs)
    np.testing.assert_allclose(out, onnx.numpy_helper.to_array(expected), rtol=1e-3, atol=1e-5)

"""Helpers for ONNX importer tests: build a one-node (or small) model, run it with relax_mlir and
with onnxruntime (the independent reference)."""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache

import numpy as np
import onnx
from onnx import TensorProto, helper

import relax_mlir
from relax_mlir.frontend.onnx import from_onnx

OPSET = 21
NP_TO_ONNX = {
    np.dtype(np.float32): TensorProto.FLOAT,
    np.dtype(np.float64): TensorProto.DOUBLE,
    np.dtype(np.float16): TensorProto.FLOAT16,
    np.dtype(np.int8): TensorProto.INT8,
    np.dtype(np.int16): TensorProto.INT16,
    np.dtype(np.int32): TensorProto.INT32,
    np.dtype(np.int64): TensorProto.INT64,
    np.dtype(np.uint8): TensorProto.UINT8,
    np.dtype(np.bool_): TensorProto.BOOL,
}


def value_info(
    name: str, dtype: np.dtype | type, shape: Sequence[int | str | None] | None
) -> onnx.ValueInfoProto:
    """A tensor value info; string dims become dim_params, None an unnamed dynamic dim, and a None
    shape an unknown rank (for outputs)."""
    return helper.make_tensor_value_info(
        name, NP_TO_ONNX[np.dtype(dtype)], None if shape is None else list(shape)
    )


def node_model(
    op_type: str,
    inputs: Sequence[onnx.ValueInfoProto],
    outputs: Sequence[onnx.ValueInfoProto],
    initializers: Sequence[onnx.TensorProto] = (),
    opset: int = OPSET,
    **attrs: object,
) -> onnx.ModelProto:
    """A model of one ``op_type`` node from the given inputs (then initializers) to the outputs."""
    node = helper.make_node(
        op_type, [i.name for i in inputs] + [t.name for t in initializers], [o.name for o in outputs], **attrs
    )
    graph = helper.make_graph([node], op_type.lower(), list(inputs), list(outputs), list(initializers))
    return graph_model(graph, opset)


def graph_model(graph: onnx.GraphProto, opset: int = OPSET) -> onnx.ModelProto:
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 10  # what onnxruntime 1.31 reads (outputs of unknown rank skip onnx.checker)
    return model


@lru_cache(maxsize=256)
def _compiled(serialized: bytes) -> object:
    return relax_mlir.compile(from_onnx(onnx.load_from_string(serialized)), opt_level=1)


def run_ours(model: onnx.ModelProto, *inputs: np.ndarray) -> list[np.ndarray]:
    """Import, compile (once per model) and run with relax_mlir; always a list of outputs."""
    result = _compiled(model.SerializeToString())(*inputs)
    return list(result) if isinstance(result, (tuple, list)) else [result]


@lru_cache(maxsize=256)
def _session(serialized: bytes) -> object:
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    return ort.InferenceSession(serialized, options, providers=["CPUExecutionProvider"])


def run_ort(model: onnx.ModelProto, *inputs: np.ndarray) -> list[np.ndarray]:
    """Run with onnxruntime."""
    session = _session(model.SerializeToString())
    names = [i.name for i in session.get_inputs()]
    return session.run(None, dict(zip(names, inputs)))


def check_against_ort(
    model: onnx.ModelProto, *inputs: np.ndarray, rtol: float = 1e-4, atol: float = 1e-5
) -> None:
    """relax_mlir's outputs equal onnxruntime's (shape, dtype and values)."""
    ours, theirs = run_ours(model, *inputs), run_ort(model, *inputs)
    assert len(ours) == len(theirs)
    for a, b in zip(ours, theirs):
        assert a.shape == b.shape, (a.shape, b.shape)
        assert a.dtype == b.dtype, (a.dtype, b.dtype)
        if b.dtype.kind == "f":
            np.testing.assert_allclose(a, b, rtol=rtol, atol=atol, equal_nan=True)
        else:
            np.testing.assert_array_equal(a, b)

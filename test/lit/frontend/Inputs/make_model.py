"""Write a small ONNX model for the importer's lit tests: make_model.py <kind> <out.onnx>."""

import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def heads() -> onnx.GraphProto:
    """[batch, seq, 8] -> [batch, seq, 2, 4] with the target shape built by Shape -> Gather -> Concat,
    and a causal mask [seq, seq] built by Range -> Unsqueeze -> LessOrEqual, as exporters write them."""
    c = lambda name, v: numpy_helper.from_array(np.array(v, np.int64), name)  # noqa: E731
    nodes = [
        helper.make_node("Shape", ["x"], ["shape"]),
        helper.make_node("Gather", ["shape", "i0"], ["b"], axis=0),
        helper.make_node("Gather", ["shape", "i1"], ["s"], axis=0),
        helper.make_node("Unsqueeze", ["b", "ax0"], ["b1"]),
        helper.make_node("Unsqueeze", ["s", "ax0"], ["s1"]),
        helper.make_node("Concat", ["b1", "s1", "hd"], ["target"], axis=0),
        helper.make_node("Reshape", ["x", "target"], ["y"]),
        helper.make_node("Range", ["zero", "s", "one"], ["pos"]),
        helper.make_node("Unsqueeze", ["pos", "ax0"], ["row"]),
        helper.make_node("Unsqueeze", ["pos", "ax1"], ["col"]),
        helper.make_node("LessOrEqual", ["row", "col"], ["mask"]),
    ]
    inits = [c("i0", 0), c("i1", 1), c("ax0", [0]), c("ax1", [1]), c("hd", [2, 4]), c("zero", 0), c("one", 1)]
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", "seq", 8])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, None)
    mask = helper.make_tensor_value_info("mask", TensorProto.BOOL, None)
    return helper.make_graph(nodes, "heads", [x], [y, mask], inits)


def unsupported() -> onnx.GraphProto:
    """Two ops the importer does not know, and one it does."""
    nodes = [
        helper.make_node("Relu", ["x"], ["r"], name="relu"),
        helper.make_node("StringNormalizer", ["r"], ["s"], name="normalize"),
        helper.make_node("TfIdfVectorizer", ["s"], ["y"], name="tfidf"),
    ]
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["n"])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, None)
    return helper.make_graph(nodes, "unsupported", [x], [y])


def negative_dim() -> onnx.GraphProto:
    """A graph input with dim_value -5 (invalid ONNX)."""
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [-5, 3])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, None)
    return helper.make_graph([helper.make_node("Relu", ["x"], ["y"], name="relu")], "negative_dim", [x], [y])


def relu5() -> onnx.GraphProto:
    """A Relu given 5 inputs (its schema takes 1)."""
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["n"])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, None)
    return helper.make_graph([helper.make_node("Relu", ["x"] * 5, ["y"], name="relu")], "relu5", [x], [y])


def main() -> None:
    kind, path = sys.argv[1], sys.argv[2]
    graph = {"heads": heads, "unsupported": unsupported, "negative-dim": negative_dim, "relu5": relu5}[kind]()
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)])
    model.ir_version = 10
    onnx.save(model, path)


if __name__ == "__main__":
    main()

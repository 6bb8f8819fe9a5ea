"""ONNX reductions, normalizations, softmax family, losses, cumulative ops, TopK and Einsum against
onnxruntime: one model per group of ops with symbolic dims, each run at several shapes."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper
from onnx_util import check_against_ort, graph_model, node_model, run_ours, value_info

from relax_mlir.frontend.onnx import OnnxImportError, from_onnx

RNG = np.random.default_rng(0)
SHAPES = [(1, 1), (2, 5), (3, 4)]  # (n, m) of x: [n, 3, m]


def _x(n: int, m: int, lo: float = -2.0, hi: float = 2.0) -> np.ndarray:
    return RNG.uniform(lo, hi, size=(n, 3, m)).astype(np.float32)


def _i64(name: str, values: list[int]) -> onnx.TensorProto:
    return numpy_helper.from_array(np.array(values, dtype=np.int64), name)


def _graph(nodes: list[onnx.NodeProto], inputs, outputs, inits=(), opset: int = 21) -> onnx.ModelProto:
    graph = helper.make_graph(
        nodes, "g", inputs, [helper.make_tensor_value_info(o, e, None) for o, e in outputs], inits
    )
    return graph_model(graph, opset)


def test_reductions() -> None:
    f = TensorProto.FLOAT
    reduce_ops = [
        ("ReduceSum", [1], 0),
        ("ReduceMean", [-1], 1),
        ("ReduceMax", [], 0),
        ("ReduceMin", [0, 2], 1),
        ("ReduceProd", [1], 1),
        ("ReduceL1", [2], 0),
        ("ReduceL2", [-2, -1], 0),
        ("ReduceLogSum", [1], 1),
        ("ReduceLogSumExp", [2], 0),
        ("ReduceSumSquare", [0], 1),
    ]
    nodes, outs, inits = [], [], []
    for i, (op, axes, keep) in enumerate(reduce_ops):
        inputs = ["p"]
        if axes:
            inits.append(_i64(f"axes{i}", axes))
            inputs.append(f"axes{i}")
        nodes.append(helper.make_node(op, inputs, [f"r{i}"], keepdims=keep))
        outs.append((f"r{i}", f))
    nodes = [helper.make_node("Abs", ["x"], ["a"]), helper.make_node("Add", ["a", "one"], ["p"]), *nodes]
    nodes += [
        helper.make_node("ArgMax", ["x"], ["am"], axis=1, select_last_index=1),
        helper.make_node("ArgMin", ["x"], ["an"], axis=-1, keepdims=0),
        helper.make_node("CumSum", ["x", "ax"], ["cs"], exclusive=1, reverse=1),
        helper.make_node("TopK", ["x", "k"], ["tv", "ti"], axis=1, largest=0),
        helper.make_node("ReduceSum", ["x", "empty"], ["noop"], noop_with_empty_axes=1),
    ]
    inits += [
        numpy_helper.from_array(np.array(1.0, np.float32), "one"),
        numpy_helper.from_array(np.array(2, np.int64), "ax"),
        _i64("k", [2]),
        _i64("empty", []),
    ]
    outs += [("am", 7), ("an", 7), ("cs", f), ("tv", f), ("ti", 7), ("noop", f)]
    model = _graph(nodes, [value_info("x", np.float32, ["n", 3, "m"])], outs, inits)
    for n, m in SHAPES:
        x = np.round(_x(n, m), 1)  # ties for the arg reductions
        check_against_ort(model, x, rtol=1e-4, atol=1e-5)


def test_reductions_old_opset_and_int() -> None:
    """Axes as attributes (opset 13), integer inputs."""
    nodes = [
        helper.make_node("ReduceMax", ["x"], ["a"], axes=[1]),
        helper.make_node("ReduceMean", ["x"], ["b"], axes=[0, 2], keepdims=0),
        helper.make_node("ReduceSum", ["x"], ["c"], keepdims=0),
        helper.make_node("ArgMax", ["x"], ["d"], axis=2, keepdims=0),
    ]
    i = TensorProto.INT32
    model = _graph(
        nodes, [value_info("x", np.int32, ["n", 3, "m"])], [("a", i), ("b", i), ("c", i), ("d", 7)], opset=13
    )
    for n, m in SHAPES:
        check_against_ort(model, RNG.integers(-9, 9, size=(n, 3, m)).astype(np.int32))


def test_cumprod_against_numpy() -> None:
    """CumProd (opset 26, newer than onnxruntime here) against numpy."""
    model = node_model(
        "CumProd",
        [value_info("x", np.float32, ["n", "m"])],
        [value_info("y", np.float32, ["n", "m"])],
        [numpy_helper.from_array(np.array(0, np.int64), "axis")],
        opset=26,
        exclusive=1,
    )
    for n, m in [(1, 1), (4, 3)]:
        x = RNG.uniform(0.5, 2, size=(n, m)).astype(np.float32)
        want = np.cumprod(np.concatenate([np.ones((1, m), np.float32), x[:-1]]), axis=0)
        np.testing.assert_allclose(run_ours(model, x)[0], want, rtol=1e-5)


def test_softmax_and_norms() -> None:
    f = TensorProto.FLOAT
    c = np.float32
    inits = [
        numpy_helper.from_array(RNG.uniform(0.5, 1.5, size=(3,)).astype(c), "s3"),
        numpy_helper.from_array(RNG.uniform(-1, 1, size=(3,)).astype(c), "b3"),
        numpy_helper.from_array(RNG.uniform(0.1, 1, size=(3,)).astype(c), "v3"),
        numpy_helper.from_array(RNG.uniform(0.5, 1.5, size=(3, 1)).astype(c), "s31"),
        numpy_helper.from_array(RNG.uniform(-1, 1, size=(3, 1)).astype(c), "b31"),
    ]
    nodes = [
        helper.make_node("Softmax", ["x"], ["sm"], axis=1),
        helper.make_node("LogSoftmax", ["x"], ["lsm"]),
        helper.make_node("Hardmax", ["x"], ["hm"], axis=1),
        helper.make_node("LayerNormalization", ["x", "s31", "b31"], ["ln", "lm", "li"], axis=1, epsilon=1e-3),
        helper.make_node("LayerNormalization", ["x", "w"], ["ln2"], axis=-1),
        helper.make_node("InstanceNormalization", ["x4", "s3", "b3"], ["inn"]),
        helper.make_node("BatchNormalization", ["x", "s3", "b3", "b3", "v3"], ["bn"], epsilon=1e-2),
        helper.make_node("LpNormalization", ["x"], ["lp1"], axis=1, p=1),
        helper.make_node("LpNormalization", ["x"], ["lp2"]),
        helper.make_node("MeanVarianceNormalization", ["x4"], ["mvn"], axes=[0, 1]),
        helper.make_node("GroupNormalization", ["x6", "s6", "b6"], ["gn"], num_groups=3),
        helper.make_node("Unsqueeze", ["x", "a3"], ["x4"]),
        helper.make_node("Concat", ["x", "x"], ["x6"], axis=1),
        helper.make_node("Concat", ["s3", "b3"], ["s6"], axis=0),
        helper.make_node("Concat", ["b3", "s3"], ["b6"], axis=0),
    ]
    inits.append(_i64("a3", [3]))
    # topological order: the helpers first
    nodes = nodes[-4:] + nodes[:-4]
    outs = [
        (o, f) for o in ["sm", "lsm", "hm", "ln", "lm", "li", "ln2", "inn", "bn", "lp1", "lp2", "mvn", "gn"]
    ]
    model = _graph(
        nodes, [value_info("x", c, ["n", 3, "m"]), value_info("w", c, ["m"])], outs, inits, opset=21
    )
    for n, m in SHAPES:
        check_against_ort(model, _x(n, m), RNG.uniform(0.5, 1.5, size=(m,)).astype(c), rtol=1e-3, atol=1e-4)


def test_softmax_opset11_is_2d() -> None:
    nodes = [
        helper.make_node("Softmax", ["x"], ["a"], axis=1),
        helper.make_node("LogSoftmax", ["x"], ["b"], axis=2),
        helper.make_node("Hardmax", ["x"], ["c"]),
    ]
    f = TensorProto.FLOAT
    model = _graph(
        nodes, [value_info("x", np.float32, ["n", 3, "m"])], [("a", f), ("b", f), ("c", f)], opset=11
    )
    for n, m in SHAPES:
        check_against_ort(model, _x(n, m))


def test_rms_norm_and_batchnorm_training() -> None:
    c, f = np.float32, TensorProto.FLOAT
    inits = [
        numpy_helper.from_array(RNG.uniform(0.5, 1.5, size=(3,)).astype(c), n) for n in ("s", "b", "m", "v")
    ]
    inits.append(numpy_helper.from_array(RNG.uniform(0.5, 1.5, size=(3, 1)).astype(c), "s31"))
    nodes = [
        helper.make_node("RMSNormalization", ["x", "s31"], ["rms"], axis=1, epsilon=1e-3),
        helper.make_node(
            "BatchNormalization", ["x", "s", "b", "m", "v"], ["y", "rm", "rv"], training_mode=1, momentum=0.8
        ),
    ]
    model = _graph(
        nodes, [value_info("x", c, ["n", 3, "m"])], [("rms", f), ("y", f), ("rm", f), ("rv", f)], inits, 23
    )
    for n, m in SHAPES:
        check_against_ort(model, _x(n, m), rtol=1e-3, atol=1e-4)


def test_losses() -> None:
    c, f = np.float32, TensorProto.FLOAT
    inits = [numpy_helper.from_array(RNG.uniform(0.5, 1.5, size=(5,)).astype(c), "w")]
    nodes = [
        helper.make_node("SoftmaxCrossEntropyLoss", ["x", "t", "w"], ["l1", "lp"], ignore_index=1),
        helper.make_node("SoftmaxCrossEntropyLoss", ["x", "t"], ["l2"], reduction="sum"),
        helper.make_node("NegativeLogLikelihoodLoss", ["x", "t"], ["l3"], reduction="none", ignore_index=2),
        helper.make_node("NegativeLogLikelihoodLoss", ["x", "t", "w"], ["l4"]),
        helper.make_node("NegativeLogLikelihoodLoss", ["x", "t"], ["l5"], ignore_index=-1),
    ]
    outs = [("l1", f), ("lp", f), ("l2", f), ("l3", f), ("l4", f), ("l5", f)]
    model = _graph(
        nodes, [value_info("x", c, ["n", 5, "d"]), value_info("t", np.int64, ["n", "d"])], outs, inits
    )
    for n, d in [(1, 1), (3, 2), (4, 5)]:
        t = RNG.integers(0, 5, size=(n, d)).astype(np.int64)
        check_against_ort(model, RNG.uniform(-2, 2, size=(n, 5, d)).astype(c), t, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize(
    "equation,shapes",
    [
        ("bij,bjk->bik", [["b", "i", 3], ["b", 3, "k"]]),
        ("...ii->...i", [["b", 4, 4]]),
        ("ij,jk,k", [["i", "j"], ["j", 3], [3]]),
        ("bhid,bhjd->bhij", [["b", 2, "i", 3], ["b", 2, "j", 3]]),
    ],
)
def test_einsum(equation: str, shapes: list[list[int | str]]) -> None:
    inputs = [value_info(f"x{i}", np.float32, s) for i, s in enumerate(shapes)]
    model = node_model("Einsum", inputs, [value_info("y", np.float32, None)], equation=equation)
    for size in (1, 3):
        arrays = [
            RNG.uniform(-1, 1, size=[size if isinstance(d, str) else d for d in s]).astype(np.float32)
            for s in shapes
        ]
        check_against_ort(model, *arrays, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize(
    "op,attrs,message",
    [
        ("LpNormalization", {"p": 3}, "attribute 'p' = 3 is not supported"),
        ("NegativeLogLikelihoodLoss", {"reduction": "avg"}, "attribute 'reduction' = 'avg' is not supported"),
        ("LayerNormalization", {"stash_type": 6}, "attribute 'stash_type' = 6"),
    ],
)
def test_unsupported_attributes(op: str, attrs: dict, message: str) -> None:
    inputs = [value_info("x", np.float32, ["n", 3])]
    if op == "NegativeLogLikelihoodLoss":
        inputs.append(value_info("t", np.int64, ["n"]))
    if op == "LayerNormalization":
        inputs.append(value_info("s", np.float32, [3]))
    model = node_model(op, inputs, [value_info("y", np.float32, None)], **attrs)
    with pytest.raises(OnnxImportError, match=message):
        from_onnx(model)

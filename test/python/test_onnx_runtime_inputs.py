"""ONNX ops whose shape-deciding inputs (axes, k, pads, scales, steps...) are graph inputs read at run time,
never fixed with ``constants=``: results against onnxruntime at several shapes (0, 1, odd sizes), and a
clear InputError for out-of-range values."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from isolated import run_isolated
from onnx import TensorProto, helper
from onnx.reference import ReferenceEvaluator
from onnx_util import check_against_ort, graph_model, run_ours

from relax_mlir.errors import InputError
from relax_mlir.frontend.onnx import from_onnx

RNG = np.random.default_rng(7)
F, I64 = TensorProto.FLOAT, TensorProto.INT64


def _model(
    nodes: list[onnx.NodeProto], inputs: list[tuple], outputs: list[str], opset: int = 21
) -> onnx.ModelProto:
    ins = [helper.make_tensor_value_info(n, t, s) for n, t, s in inputs]
    outs = [helper.make_tensor_value_info(o, F if not o.startswith("i") else I64, None) for o in outputs]
    return graph_model(helper.make_graph(nodes, "g", ins, outs), opset)


def _x(*shape: int) -> np.ndarray:
    return RNG.uniform(-2, 2, size=shape).astype(np.float32)


def _i(*values: int) -> np.ndarray:
    return np.array(values, dtype=np.int64)


def test_reduce_runtime_axes() -> None:
    """Every Reduce* with its axes a graph input: rank from the axes' static length, dims bound at run time;
    the result feeds an elementwise op (unknown dims bound by a match_cast)."""
    ops = ["ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceL1", "ReduceL2",
           "ReduceLogSum", "ReduceLogSumExp", "ReduceSumSquare"]  # fmt: skip
    nodes, outs = [], []
    for i, op in enumerate(ops):
        nodes.append(helper.make_node(op, ["p", "a"], [f"k{i}"], keepdims=1))
        nodes.append(helper.make_node(op, ["p", "a"], [f"r{i}"], keepdims=0))
        nodes.append(helper.make_node("Relu", [f"r{i}"], [f"y{i}"]))
        outs += [f"k{i}", f"y{i}"]
    nodes = [helper.make_node("Abs", ["x"], ["t"]), helper.make_node("Add", ["t", "t"], ["p"]), *nodes]
    model = _model(nodes, [("x", F, ["n", 3, "m"]), ("a", I64, [1])], outs, opset=18)
    assert "constants" not in str(from_onnx(model))  # imports without fixing 'a'
    for shape, axis in [((2, 3, 5), 1), ((1, 3, 1), -1), ((4, 3, 3), 0)]:
        check_against_ort(model, _x(*shape) + 0.5, _i(axis), rtol=1e-4, atol=1e-4)
    for shape, axis in [((0, 3, 2), 2), ((3, 3, 0), -3)]:  # onnxruntime returns empty inputs unreduced
        x = _x(*shape)
        kept, dropped = run_ours(model, x, _i(axis))[:2]
        np.testing.assert_array_equal(kept, np.sum(x, axis=axis, keepdims=True))
        np.testing.assert_array_equal(dropped, np.maximum(np.sum(x, axis=axis), 0))


def test_reduce_runtime_axes_two_and_errors() -> None:
    model = _model(
        [helper.make_node("ReduceSum", ["x", "a"], ["y"], keepdims=0)],
        [("x", F, ["n", "m", 3]), ("a", I64, [2])],
        ["y"],
    )
    for shape, axes in [((2, 5, 3), (0, 2)), ((1, 1, 3), (-1, 1)), ((3, 2, 3), (1, 0))]:
        check_against_ort(model, _x(*shape), _i(*axes))
    with pytest.raises(InputError, match="axis 3 is out of range for rank 3 in ReduceSum"):
        run_ours(model, _x(2, 2, 3), _i(0, 3))
    with pytest.raises(InputError, match="repeats axis"):
        run_ours(model, _x(2, 2, 3), _i(1, -2))


def test_topk_runtime_k() -> None:
    model = _model(
        [helper.make_node("TopK", ["x", "k"], ["v", "i"], axis=1, largest=1)],
        [("x", F, ["n", "m"]), ("k", I64, [1])],
        ["v", "i"],
    )
    for shape, k in [((3, 5), 2), ((1, 1), 1), ((2, 7), 7), ((4, 3), 0)]:
        check_against_ort(model, _x(*shape), _i(k))
    with pytest.raises(InputError, match=r"K = 6 is out of range \[0, 5\] in TopK"):
        run_ours(model, _x(2, 5), _i(6))


def test_cumsum_cumprod_runtime_axis() -> None:
    nodes = [
        helper.make_node("CumSum", ["x", "a"], ["s"], exclusive=1),
        helper.make_node("CumSum", ["x", "a"], ["r"], reverse=1),
    ]
    cumsum = _model(nodes, [("x", F, ["n", "m"]), ("a", I64, [])], ["s", "r"], opset=14)
    cumprod = _model(
        [helper.make_node("CumProd", ["x", "a"], ["p"])],
        [("x", F, ["n", "m"]), ("a", I64, [])],
        ["p"],
        opset=26,
    )
    for shape, axis in [((3, 5), 0), ((3, 5), 1), ((1, 1), -1), ((0, 3), -2), ((4, 0), 1)]:
        x = _x(*shape)
        check_against_ort(cumsum, x, np.array(axis, np.int64))
        got = run_ours(cumprod, x, np.array(axis, np.int64))[0]
        np.testing.assert_allclose(got, np.cumprod(x, axis=axis), rtol=1e-5, atol=1e-6)
    with pytest.raises(InputError, match="out of range for rank 2 in CumSum"):
        run_ours(cumsum, _x(2, 2), np.array(2, np.int64))


def test_squeeze_unsqueeze_runtime_axes() -> None:
    nodes = [
        helper.make_node("Unsqueeze", ["x", "u"], ["y"]),
        helper.make_node("Squeeze", ["y", "u"], ["z"]),
        helper.make_node("Neg", ["z"], ["w"]),
    ]
    inputs = [("x", F, ["n", "m"]), ("u", I64, [2])]
    # returning "y" too aborts in ownership-based-buffer-deallocation at O1 (see test_unsqueeze_output_reused)
    for model in (_model(nodes[:1], inputs, ["y"]), _model(nodes, inputs, ["w"])):
        for shape, axes in [((3, 5), (0, 3)), ((1, 1), (-1, 1)), ((0, 2), (2, 0)), ((3, 1), (1, 2))]:
            check_against_ort(model, _x(*shape), _i(*axes))
    with pytest.raises(InputError, match="axis 4 is out of range for rank 4 in Unsqueeze"):
        run_ours(_model(nodes[:1], inputs, ["y"]), _x(2, 2), _i(0, 4))


def test_unsqueeze_output_reused() -> None:
    """An output that a later op uses after a run-time shape check's branch: compiles without a crash
    (ownership-based-buffer-deallocation aborted, isBeforeInBlock across blocks, before relax-thread-buffers)."""
    out = run_isolated(
        """
        import numpy as np
        from onnx import TensorProto as T, helper
        import relax_mlir
        from relax_mlir.frontend.onnx import from_onnx
        nodes = [helper.make_node("Unsqueeze", ["x", "u"], ["y"]), helper.make_node("Squeeze", ["y", "u"], ["z"]),
                 helper.make_node("Neg", ["z"], ["w"])]
        ins = [helper.make_tensor_value_info("x", T.FLOAT, ["n", "m"]), helper.make_tensor_value_info("u", T.INT64, [2])]
        outs = [helper.make_tensor_value_info(o, T.FLOAT, None) for o in ("y", "w")]
        model = helper.make_model(helper.make_graph(nodes, "g", ins, outs), opset_imports=[helper.make_opsetid("", 21)])
        exe = relax_mlir.compile(from_onnx(model), opt_level=1)
        print([r.shape for r in exe(np.ones((3, 5), np.float32), np.array([0, 3]))])
        """
    )
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.last_line == "[(1, 3, 5, 1), (3, 5)]"


def test_pad_runtime_pads() -> None:
    for mode in ("constant", "reflect", "edge", "wrap"):
        inputs = [("x", F, ["n", "m"]), ("p", I64, [4])]
        names = ["x", "p"]
        if mode == "constant":
            inputs.append(("v", F, []))
            names.append("v")
        model = _model([helper.make_node("Pad", names, ["y"], mode=mode)], inputs, ["y"], opset=19)
        for shape, pads in [((3, 5), (1, 0, 2, 1)), ((1, 1), (0, 0, 0, 0)), ((4, 3), (2, 1, 1, 2))]:
            if mode == "constant":
                check_against_ort(model, _x(*shape), _i(*pads), np.array(1.5, np.float32))
                if min(shape) > 1:  # negative widths crop
                    check_against_ort(model, _x(*shape), _i(-1, 0, 0, -2), np.array(0, np.float32))
            elif mode != "reflect" or min(shape) > max(pads):
                check_against_ort(model, _x(*shape), _i(*pads))


def test_pad_runtime_axes() -> None:
    model = _model(
        [helper.make_node("Pad", ["x", "p", "", "a"], ["y"])],
        [("x", F, ["n", "m", 3]), ("p", I64, [2]), ("a", I64, [1])],
        ["y"],
        opset=19,
    )
    for shape, pads, axis in [((2, 3, 3), (1, 2), -1), ((0, 1, 3), (3, 0), 0), ((1, 5, 3), (0, 1), 1)]:
        check_against_ort(model, _x(*shape), _i(*pads), _i(axis))


def test_slice_runtime_axes_steps() -> None:
    model = _model(
        [helper.make_node("Slice", ["x", "b", "e", "a", "s"], ["y"])],
        [("x", F, ["n", "m"]), *((v, I64, [1]) for v in "beas")],
        ["y"],
    )
    big = 2**62
    cases = [
        ((5, 7), 1, -1, 1, 2),
        ((5, 7), -1, -big, 0, -2),
        ((1, 1), 0, big, -1, 1),
        ((0, 3), 0, 2, 0, 1),
        ((4, 3), 10, 20, 1, 1),
    ]
    for shape, b, e, a, s in cases:
        check_against_ort(model, _x(*shape), _i(b), _i(e), _i(a), _i(s))
    with pytest.raises(InputError, match="a step is 0 .* in Slice") as err:
        run_ours(model, _x(5, 7), _i(0), _i(3), _i(1), _i(0))
    assert "got" not in str(err.value), err.value  # a check_true compares no values


def test_resize_runtime_scales_and_sizes() -> None:
    scales = _model(
        [helper.make_node("Resize", ["x", "", "s"], ["y"], mode="linear")],
        [("x", F, [1, 1, "h", "w"]), ("s", F, [4])],
        ["y"],
        opset=19,
    )
    for hw, s in [((3, 5), (1, 1, 2.0, 0.5)), ((1, 1), (1, 1, 3.0, 1.0)), ((4, 3), (1, 1, 0.6, 1.7))]:
        check_against_ort(scales, _x(1, 1, *hw), np.array(s, np.float32), atol=1e-5)
    sizes = _model(
        [helper.make_node("Resize", ["x", "", "", "z"], ["y"], mode="nearest")],
        [("x", F, [1, 2, "h", "w"]), ("z", I64, [4])],
        ["y"],
        opset=19,
    )
    for hw, z in [((3, 5), (1, 2, 6, 3)), ((1, 1), (1, 2, 1, 4)), ((4, 3), (1, 2, 5, 1))]:
        check_against_ort(sizes, _x(1, 2, *hw), _i(*z))


def test_dropout_runtime_training_mode() -> None:
    model = _model(
        [helper.make_node("Dropout", ["x", "r", "t"], ["y"])],
        [("x", F, ["n"]), ("r", F, []), ("t", TensorProto.BOOL, [])],
        ["y"],
        opset=22,
    )
    x = _x(5)
    np.testing.assert_array_equal(run_ours(model, x, np.array(0.5, np.float32), np.array(False))[0], x)
    np.testing.assert_array_equal(run_ours(model, x, np.array(0.0, np.float32), np.array(True))[0], x)
    with pytest.raises(InputError, match="training mode with a non-zero ratio") as err:
        run_ours(model, x, np.array(0.5, np.float32), np.array(True))
    assert "expected" not in str(err.value), err.value


def test_affine_grid_runtime_size() -> None:
    for align in (0, 1):
        model = _model(
            [helper.make_node("AffineGrid", ["t", "s"], ["g"], align_corners=align)],
            [("t", F, ["n", 2, 3]), ("s", I64, [4])],
            ["g"],
            opset=20,
        )
        for n, h, w in [(2, 3, 5), (1, 4, 2), (3, 2, 2)]:
            check_against_ort(model, _x(n, 2, 3), _i(n, 1, h, w), atol=1e-5)
        # one position: ONNX's reference puts it at -1 (align_corners) or 0; onnxruntime 1.31 differs (+1)
        t = _x(1, 2, 3)
        want = ReferenceEvaluator(model).run(None, {"t": t, "s": _i(1, 1, 1, 1)})[0]
        np.testing.assert_allclose(run_ours(model, t, _i(1, 1, 1, 1))[0], want, rtol=1e-6)


def test_max_unpool_runtime_output_shape() -> None:
    """Read at run time, output_shape gives what the import-time path gives with it folded (ONNX's reference
    semantics: the indices address the default unpooled shape)."""
    node = helper.make_node("MaxUnpool", ["x", "i", "o"], ["y"], kernel_shape=[2, 2], strides=[2, 2])
    inputs = [("x", F, [1, 1, 2, 2]), ("i", I64, [1, 1, 2, 2])]
    runtime = _model([node], [*inputs, ("o", I64, [4])], ["y"], opset=22)
    x, idx = _x(1, 1, 2, 2), np.array([[[[0, 3], [9, 14]]]], np.int64)
    for out in [(1, 1, 4, 4), (1, 1, 5, 5), (1, 1, 4, 7)]:
        folded = _model([node], inputs, ["y"], opset=22)
        folded.graph.initializer.append(onnx.numpy_helper.from_array(_i(*out), "o"))
        np.testing.assert_array_equal(run_ours(runtime, x, idx, _i(*out))[0], run_ours(folded, x, idx)[0])


def test_col2im_runtime_shapes() -> None:
    model = _model(
        [helper.make_node("Col2Im", ["x", "im", "b"], ["y"], strides=[1, 2], pads=[0, 1, 1, 0])],
        [("x", F, [1, "ck", "l"]), ("im", I64, [2]), ("b", I64, [2])],
        ["y"],
        opset=18,
    )
    for image, block, c in [((3, 4), (2, 2), 1), ((5, 3), (1, 3), 2), ((1, 1), (1, 1), 3)]:
        counts = [(image[0] + 1 - block[0]) + 1, (image[1] + 1 - block[1]) // 2 + 1]
        x = _x(1, c * block[0] * block[1], counts[0] * counts[1])
        check_against_ort(model, x, _i(*image), _i(*block), atol=1e-5)


def test_slice_negative_steps_runtime_bounds() -> None:
    node = helper.make_node("Slice", ["x", "b", "e", "a", "s"], ["y"])
    graph = helper.make_graph(
        [node],
        "g",
        [
            helper.make_tensor_value_info(n, t, s)
            for n, t, s in [("x", F, ["n"]), ("b", I64, [1]), ("e", I64, [1])]
        ],
        [helper.make_tensor_value_info("y", F, None)],
        [onnx.numpy_helper.from_array(_i(0), "a"), onnx.numpy_helper.from_array(_i(-2), "s")],
    )
    model = graph_model(graph, 21)
    for n, b, e in [(7, -1, -100), (1, 0, -2), (0, 3, 0), (6, 4, 1)]:
        check_against_ort(model, _x(n), _i(b), _i(e))

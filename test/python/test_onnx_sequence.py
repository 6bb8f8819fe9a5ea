"""ONNX sequence ops (lengths known at import time: relax tuples), against onnxruntime.

Sequence outputs come back as tuples of arrays; sequence inputs get their length from ``shape_dict``.
Each model runs at several shapes, including 0, 1 and odd sizes.
"""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper
from onnx_util import graph_model, run_ort, value_info

import relax_mlir
from relax_mlir.frontend.onnx import OnnxImportError, from_onnx

rng = np.random.default_rng(0)
F32 = np.float32


def _seq(name: str) -> onnx.ValueInfoProto:
    return helper.make_tensor_sequence_value_info(name, TensorProto.FLOAT, None)


def _ours(model: onnx.ModelProto, *inputs: object, shape_dict: dict | None = None) -> list:
    result = relax_mlir.compile(from_onnx(model, shape_dict=shape_dict), opt_level=1)(*inputs)
    return [result] if len(model.graph.output) == 1 else list(result)


def _same(ours: object, theirs: object) -> None:
    if isinstance(theirs, list):
        assert isinstance(ours, (tuple, list)) and len(ours) == len(theirs)
        for a, b in zip(ours, theirs):
            _same(a, b)
        return
    assert np.asarray(ours).shape == theirs.shape and np.asarray(ours).dtype == theirs.dtype
    np.testing.assert_allclose(ours, theirs, rtol=1e-6)


def _const(name: str, value: np.ndarray) -> onnx.NodeProto:
    return helper.make_node("Constant", [], [name], value=onnx.numpy_helper.from_array(value, name))


@pytest.mark.parametrize("n", [0, 1, 5])
def test_construct_insert_erase_at_concat(n: int) -> None:
    """Construct, insert at front and back, erase, take an item and concatenate, all on tuples."""
    nodes = [
        helper.make_node("SequenceConstruct", ["a", "b"], ["s0"]),
        _const("p0", np.array(0, np.int64)),
        helper.make_node("SequenceInsert", ["s0", "c", "p0"], ["s1"]),  # c, a, b
        helper.make_node("SequenceInsert", ["s1", "a"], ["s2"]),  # c, a, b, a
        _const("pm", np.array(-3, np.int64)),
        helper.make_node("SequenceErase", ["s2", "pm"], ["s3"]),  # c, b, a
        helper.make_node("SequenceAt", ["s3", "pm"], ["first"]),  # c
        helper.make_node("SequenceLength", ["s3"], ["len"]),
        helper.make_node("ConcatFromSequence", ["s3"], ["cat"], axis=1),
        helper.make_node("ConcatFromSequence", ["s3"], ["stack"], axis=-1, new_axis=1),
    ]
    ins = [value_info(x, F32, ["n", 3]) for x in "abc"]
    outs = [value_info(y, F32, None) for y in ("first", "cat", "stack")] + [value_info("len", np.int64, None)]
    outs.append(_seq("s3"))
    model = graph_model(helper.make_graph(nodes, "seq", ins, outs))
    xs = [rng.standard_normal((n, 3), dtype=F32) for _ in range(3)]
    ours, theirs = _ours(model, *xs), run_ort(model, *xs)
    for a, b in zip(ours, theirs):
        _same(a, b)


@pytest.mark.parametrize(
    ("shape", "split", "keepdims"), [((4, 3), None, 0), ((5, 1), None, 1), ((7, 2), 3, 1)]
)
def test_split_to_sequence(shape: tuple[int, int], split: int | None, keepdims: int) -> None:
    """No split: parts of size 1 (squeezed without keepdims); a scalar split: equal parts, the last smaller."""
    nodes, inputs = [], ["x"]
    if split is not None:
        nodes.append(_const("k", np.array(split, np.int64)))
        inputs.append("k")
    nodes.append(helper.make_node("SplitToSequence", inputs, ["s"], axis=0, keepdims=keepdims))
    model = graph_model(helper.make_graph(nodes, "split", [value_info("x", F32, list(shape))], [_seq("s")]))
    x = rng.standard_normal(shape, dtype=F32)
    _same(_ours(model, x)[0], run_ort(model, x)[0])


@pytest.mark.parametrize("sizes", [[0, 3], [1, 1, 1], [3]])
def test_split_to_sequence_runtime_sizes(sizes: list[int]) -> None:
    """A 1-D split input known only at run time: its static length is the sequence length."""
    g = helper.make_graph(
        [helper.make_node("SplitToSequence", ["x", "k"], ["s"], axis=1)],
        "split",
        [value_info("x", F32, [2, "m"]), value_info("k", np.int64, [len(sizes)])],
        [_seq("s")],
    )
    model = graph_model(g)
    x, k = rng.standard_normal((2, sum(sizes)), dtype=F32), np.array(sizes, np.int64)
    _same(_ours(model, x, k)[0], run_ort(model, x, k)[0])


@pytest.mark.parametrize("shapes", [[(0,)], [(1,), (4,)], [(3,), (5,), (2,)]])
def test_sequence_input_and_runtime_position(shapes: list[tuple[int]]) -> None:
    """A sequence input (length from shape_dict) passes through; SequenceAt at a run-time position
    on items of one type stacks them and takes the item (negative positions count from the back)."""
    g = helper.make_graph(
        [
            helper.make_node("Identity", ["s"], ["t"]),
            helper.make_node("SequenceConstruct", ["a", "a", "b"], ["u"]),
            helper.make_node("SequenceAt", ["u", "p"], ["y"]),
        ],
        "seq_in",
        [_seq("s"), value_info("a", F32, ["n"]), value_info("b", F32, ["n"]), value_info("p", np.int64, [])],
        [_seq("t"), value_info("y", F32, None)],
    )
    model = graph_model(g)
    s = [rng.standard_normal(sh, dtype=F32) for sh in shapes]
    a, b = rng.standard_normal((3,), dtype=F32), rng.standard_normal((3,), dtype=F32)
    exe = relax_mlir.compile(from_onnx(model, shape_dict={"s": [list(sh) for sh in shapes]}), opt_level=1)
    for p in (-1, 0, 2):
        ours, theirs = exe(s, a, b, np.array(p, np.int64)), run_ort(model, s, a, b, np.array(p, np.int64))
        _same(list(ours[0]), theirs[0])
        _same(ours[1], theirs[1])


@pytest.mark.parametrize("rank", [0, 2])
def test_sequence_input_of_unknown_rank(rank: int) -> None:
    """A sequence input without a length nor an item rank is a run-time list whose rank the items decide
    (the same for every item); an insert of a tensor of known rank fixes it."""
    g = helper.make_graph(
        [helper.make_node("Identity", ["s"], ["t"]), helper.make_node("SequenceInsert", ["s", "x"], ["u"])],
        "g",
        [_seq("s"), value_info("x", F32, ["a"] * rank)],
        [_seq("t"), _seq("u")],
    )
    x = rng.standard_normal((2,) * rank, dtype=F32)
    cases = [[_items([(k + 1,) * rank for k in range(n)]), x] for n in (0, 1, 3)]
    _check_list(graph_model(g), cases)


def _list(name: str, rank: int) -> onnx.ValueInfoProto:
    return helper.make_tensor_sequence_value_info(name, TensorProto.FLOAT, ["?"] * rank)


def _check_list(model: onnx.ModelProto, cases: list[list[np.ndarray]]) -> None:
    """Compile once (a sequence input of run-time length), compare with onnxruntime on every case."""
    exe = relax_mlir.compile(from_onnx(model), opt_level=1)
    for inputs in cases:
        ours, theirs = exe(*inputs), run_ort(model, *inputs)
        ours = [ours] if len(model.graph.output) == 1 else list(ours)
        for a, b in zip(ours, theirs):
            _same(a, b)


def _items(shapes: list[tuple[int, ...]]) -> list[np.ndarray]:
    return [rng.standard_normal(sh, dtype=F32) for sh in shapes]


LISTS = [[], [(1, 3)], [(2, 3), (0, 1), (3, 5)], [(1, 1), (4, 2), (2, 2), (1, 3), (5, 1)]]


def test_runtime_list_insert_at_erase_length() -> None:
    """A list of run-time length: insert, take and erase at run-time positions (negative from the back),
    its length, and the lists themselves as outputs (a Python list of arrays in and out)."""
    nodes = [
        helper.make_node("SequenceInsert", ["s", "x", "p"], ["t"]),
        helper.make_node("SequenceLength", ["t"], ["n"]),
        helper.make_node("SequenceAt", ["t", "q"], ["y"]),
        helper.make_node("SequenceErase", ["t", "q"], ["u"]),
        helper.make_node("SequenceErase", ["t"], ["v"]),  # the last item
    ]
    ins = [_list("s", 2), value_info("x", F32, ["a", "b"])]
    ins += [value_info("p", np.int64, []), value_info("q", np.int64, [])]
    outs = [_seq("t"), value_info("n", np.int64, None), value_info("y", F32, None), _seq("u"), _seq("v")]
    model = graph_model(helper.make_graph(nodes, "list", ins, outs))
    cases = []
    for shapes in LISTS:
        n = len(shapes)
        for p, q in ((0, 0), (n, -1), (-n, n // 2)):
            x = rng.standard_normal((2, 3), dtype=F32)
            cases.append([_items(shapes), x, np.array(p, np.int64), np.array(q, np.int64)])
    _check_list(model, cases)


@pytest.mark.parametrize("rank", [0, 1, 3])
def test_runtime_list_ranks(rank: int) -> None:
    """Items of rank 0, 1 and 3 pass through a run-time list; insert at a run-time position."""
    nodes = [helper.make_node("SequenceInsert", ["s", "x", "p"], ["t"])]
    ins = [_list("s", rank), value_info("x", F32, ["d"] * rank), value_info("p", np.int64, [])]
    model = graph_model(helper.make_graph(nodes, "ranks", ins, [_seq("t")]))
    cases = []
    for n in (0, 1, 3):
        items = [rng.standard_normal((j + 1,) * rank, dtype=F32) for j in range(n)]
        cases.append([items, rng.standard_normal((2,) * rank, dtype=F32), np.array(n // 2, np.int64)])
    _check_list(model, cases)


@pytest.mark.parametrize(("axis", "new_axis"), [(0, 0), (0, 1), (1, 1), (-1, 1)])
def test_runtime_list_concat(axis: int, new_axis: int) -> None:
    """ConcatFromSequence of a run-time list: along axis 0, or stacked on a new axis."""
    node = helper.make_node("ConcatFromSequence", ["s"], ["y"], axis=axis, new_axis=new_axis)
    model = graph_model(helper.make_graph([node], "cat", [_list("s", 2)], [value_info("y", F32, None)]))
    if new_axis:
        cases = [[_items([(2, 3)] * n)] for n in (1, 2, 5)]
    else:
        cases = [[_items([(k, 3) for k in ks])] for ks in ([1], [0, 2], [3, 1, 2])]
    _check_list(model, cases)


def test_runtime_positions_on_a_known_list() -> None:
    """A run-time position on a sequence of known length packs it into a run-time list."""
    nodes = [
        helper.make_node("SequenceConstruct", ["a", "b"], ["s"]),
        helper.make_node("SequenceInsert", ["s", "a", "p"], ["t"]),
        helper.make_node("SequenceErase", ["t", "p"], ["u"]),
    ]
    ins = [value_info("a", F32, ["n", 2]), value_info("b", F32, [3, 2]), value_info("p", np.int64, [])]
    model = graph_model(helper.make_graph(nodes, "known", ins, [_seq("t"), _seq("u")]))
    cases = [
        [_items([(n, 2)])[0], _items([(3, 2)])[0], np.array(p, np.int64)]
        for n, p in ((0, 0), (1, 2), (4, -1))
    ]
    _check_list(model, cases)


def test_runtime_position_out_of_range() -> None:
    from isolated import expect_error

    expect_error(
        """
import numpy as np, onnx
from onnx import TensorProto, helper
import relax_mlir
from relax_mlir.frontend.onnx import from_onnx
s = helper.make_tensor_sequence_value_info("s", TensorProto.FLOAT, ["?"])
g = helper.make_graph([helper.make_node("SequenceAt", ["s", "p"], ["y"])], "g",
    [s, helper.make_tensor_value_info("p", TensorProto.INT64, [])],
    [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
exe = relax_mlir.compile(from_onnx(m), opt_level=1)
print(exe([np.zeros(2, np.float32)], np.array(0)).shape)
exe([np.zeros(2, np.float32)], np.array(1))
""",
        "InputError",
        match="out of range",
    )


def test_sequence_position_out_of_range() -> None:
    g = helper.make_graph(
        [
            helper.make_node("SequenceConstruct", ["a"], ["s"]),
            _const("p", np.array(2, np.int64)),
            helper.make_node("SequenceAt", ["s", "p"], ["y"]),
        ],
        "g",
        [value_info("a", F32, [2])],
        [value_info("y", F32, None)],
    )
    with pytest.raises(OnnxImportError, match="position 2 is out of range for a sequence of 1 items"):
        from_onnx(graph_model(g))


def test_loop_grows_a_list() -> None:
    """A Loop with a run-time trip count inserts a slice per iteration into a list that starts empty
    (SequenceEmpty), then the list is concatenated and returned."""
    one = helper.make_tensor("one", TensorProto.INT64, [1], [1])
    zero = helper.make_tensor("zero", TensorProto.INT64, [1], [0])
    body = helper.make_graph(
        [
            helper.make_node("Identity", ["c"], ["c_out"]),
            helper.make_node("Add", ["i", "one_s"], ["end"]),
            helper.make_node("Reshape", ["end", "one"], ["end1"]),
            helper.make_node("Slice", ["x", "zero", "end1"], ["part"]),
            helper.make_node("SequenceInsert", ["s_in", "part"], ["s_out"]),
        ],
        "body",
        [value_info("i", np.int64, []), value_info("c", np.bool_, []), _seq("s_in")],
        [value_info("c_out", np.bool_, []), _seq("s_out")],
        [one, zero, helper.make_tensor("one_s", TensorProto.INT64, [], [1])],
    )
    nodes = [
        helper.make_node("SequenceEmpty", [], ["empty"], dtype=TensorProto.FLOAT),
        helper.make_node("Loop", ["m", "", "empty"], ["s"], body=body),
        helper.make_node("SequenceLength", ["s"], ["n"]),
        helper.make_node("ConcatFromSequence", ["s"], ["cat"], axis=0),
    ]
    ins = [value_info("m", np.int64, []), value_info("x", F32, ["k"])]
    outs = [_seq("s"), value_info("n", np.int64, None), value_info("cat", F32, None)]
    model = graph_model(helper.make_graph(nodes, "grow", ins, outs))
    x = rng.standard_normal((6,), dtype=F32)
    _check_list(model, [[np.array(m, np.int64), x] for m in (1, 2, 5)])


def test_loop_grows_a_list_zero_iterations() -> None:
    """No iteration: the list stays empty (its items' rank is still unknown)."""
    body = helper.make_graph(
        [
            helper.make_node("Identity", ["c"], ["c_out"]),
            helper.make_node("SequenceInsert", ["s_in", "x"], ["s_out"]),
        ],
        "body",
        [value_info("i", np.int64, []), value_info("c", np.bool_, []), _seq("s_in")],
        [value_info("c_out", np.bool_, []), _seq("s_out")],
    )
    nodes = [
        helper.make_node("SequenceEmpty", [], ["empty"], dtype=TensorProto.FLOAT),
        helper.make_node("Loop", ["m", "", "empty"], ["s"], body=body),
        helper.make_node("SequenceLength", ["s"], ["n"]),
    ]
    ins = [value_info("m", np.int64, []), value_info("x", F32, [2, 3])]
    model = graph_model(helper.make_graph(nodes, "grow0", ins, [_seq("s"), value_info("n", np.int64, None)]))
    x = rng.standard_normal((2, 3), dtype=F32)
    _check_list(model, [[np.array(m, np.int64), x] for m in (0, 3)])


def test_if_of_sequences() -> None:
    """An If whose branches make sequences of different lengths returns a run-time list."""

    def branch(name: str, n: int) -> onnx.GraphProto:
        return helper.make_graph(
            [helper.make_node("SequenceConstruct", ["a"] * n, [f"{name}_s"])], name, [], [_seq(f"{name}_s")]
        )

    g = helper.make_graph(
        [helper.make_node("If", ["c"], ["s"], then_branch=branch("t", 1), else_branch=branch("e", 3))],
        "if",
        [value_info("c", np.bool_, []), value_info("a", F32, ["n", 2])],
        [_seq("s")],
    )
    model = graph_model(g)
    cases = [[np.array(c), rng.standard_normal((n, 2), dtype=F32)] for c in (True, False) for n in (0, 3)]
    _check_list(model, cases)


@pytest.mark.parametrize("known", [True, False])
def test_sequence_map(known: bool) -> None:
    """SequenceMap adds a tensor to each item and collects each item's shape: unrolled when the length is
    known at import time (shape_dict), else a loop over a run-time list."""
    body = helper.make_graph(
        [helper.make_node("Add", ["item", "t"], ["y"]), helper.make_node("Shape", ["item"], ["shape"])],
        "body",
        [value_info("item", F32, ["k", 3]), value_info("t", F32, [3])],
        [value_info("y", F32, None), value_info("shape", np.int64, None)],
    )
    g = helper.make_graph(
        [helper.make_node("SequenceMap", ["s", "t"], ["ys", "shapes"], body=body)],
        "map",
        [helper.make_tensor_sequence_value_info("s", TensorProto.FLOAT, ["k", 3]), value_info("t", F32, [3])],
        [_seq("ys"), helper.make_tensor_sequence_value_info("shapes", TensorProto.INT64, None)],
    )
    model = graph_model(g)
    for shapes in ([(1, 3)], [(2, 3), (0, 3), (5, 3)]):
        items, t = _items(shapes), rng.standard_normal((3,), dtype=F32)
        shape_dict = {"s": [list(sh) for sh in shapes]} if known else None
        exe = relax_mlir.compile(from_onnx(model, shape_dict=shape_dict), opt_level=1)
        ours, theirs = exe(items, t), run_ort(model, items, t)
        for a, b in zip(ours, theirs):
            _same(list(a), b)


@pytest.mark.parametrize(("split", "keepdims"), [(None, 0), (None, 1), (2, 1), ("sizes", 1)])
def test_split_to_runtime_list(split: object, keepdims: int) -> None:
    """SplitToSequence along a dim known only at run time (or by sizes of run-time number): a run-time
    list; no split: parts of 1 (squeezed without keepdims); a scalar: equal parts, the last smaller."""
    nodes, inputs, ins = [], ["x"], [value_info("x", F32, ["n", 3])]
    if split == "sizes":
        inputs.append("k")
        ins.append(value_info("k", np.int64, ["m"]))
    elif split is not None:
        nodes.append(_const("k", np.array(split, np.int64)))
        inputs.append("k")
    nodes.append(helper.make_node("SplitToSequence", inputs, ["s"], axis=0, keepdims=keepdims))
    nodes.append(helper.make_node("SequenceLength", ["s"], ["len"]))
    model = graph_model(
        helper.make_graph(nodes, "split", ins, [_seq("s"), value_info("len", np.int64, None)])
    )
    cases = []
    for n in (1, 4, 5):
        x = rng.standard_normal((n, 3), dtype=F32)
        sizes = [np.array(s, np.int64) for s in ([1], [1, 0, 3], [2, 2, 1])[: 1 + (n > 1) * 2] if sum(s) == n]
        cases += [[x, k] for k in sizes] if split == "sizes" else [[x]]
    _check_list(model, cases)


@pytest.mark.parametrize("axis", [1, 2, -1])
@pytest.mark.parametrize("split", ["chunk", "sizes", None])
def test_split_to_runtime_list_along_inner_axis(axis: int, split: str | None) -> None:
    """SplitToSequence along an inner axis into a run-time list: a run-time chunk size (the sequence
    length depends on its value), run-time sizes of run-time number, or parts of 1 along a run-time dim."""
    shape = ["a", "b", "c"]
    nodes, inputs, ins = [], ["x"], [value_info("x", F32, shape)]
    if split == "chunk":
        inputs.append("k")
        ins.append(value_info("k", np.int64, []))
    elif split == "sizes":
        inputs.append("k")
        ins.append(value_info("k", np.int64, ["m"]))
    nodes.append(helper.make_node("SplitToSequence", inputs, ["s"], axis=axis, keepdims=1 if split else 0))
    nodes.append(helper.make_node("SequenceLength", ["s"], ["len"]))
    model = graph_model(
        helper.make_graph(nodes, "split", ins, [_seq("s"), value_info("len", np.int64, None)])
    )
    cases = []
    for dims in ((2, 3, 5), (1, 1, 1), (3, 0, 4), (0, 2, 3)):
        x = rng.standard_normal(dims, dtype=F32)
        n = dims[axis]
        if split == "chunk":
            cases += [[x, np.array(k, np.int64)] for k in (1, 2, 7)]
        elif split == "sizes":
            cases += [[x, np.array(k, np.int64)] for k in ([n], [0, n], [n // 2, 0, n - n // 2])]
        else:
            cases.append([x])
    _check_list(model, cases)


def test_split_to_runtime_list_nonpositive_chunk_is_input_error() -> None:
    """A run-time chunk size of 0 or less: InputError, not a division by zero."""
    g = helper.make_graph(
        [helper.make_node("SplitToSequence", ["x", "k"], ["s"], axis=1)],
        "split",
        [value_info("x", F32, [2, 6]), value_info("k", np.int64, [])],
        [_seq("s")],
    )
    exe = relax_mlir.compile(from_onnx(graph_model(g)), opt_level=1)
    x = rng.standard_normal((2, 6), dtype=F32)
    for k in (0, -2):
        with pytest.raises(relax_mlir.errors.InputError, match="'split' must be positive"):
            exe(x, np.array(k, np.int64))
    assert [p.shape for p in exe(x, np.array(4, np.int64))] == [(2, 4), (2, 2)]

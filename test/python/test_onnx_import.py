"""The ONNX importer's framework: symbolic input dims, shape chains kept symbolic, run-time shape
inputs, fixed inputs, errors. Numbers are checked against onnxruntime."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper
from onnx_util import check_against_ort, graph_model, node_model, run_ours, value_info

from relax_mlir.errors import InputError, UnsupportedOpError
from relax_mlir.frontend.onnx import OnnxImportError, from_onnx
from relax_mlir.frontend.onnx.cli import main as import_main

ROOT = Path(__file__).resolve().parents[2]
rng = np.random.default_rng(0)


def _heads_model() -> onnx.ModelProto:
    sys.path.insert(0, str(ROOT / "test/lit/frontend/Inputs"))
    from make_model import heads

    return graph_model(heads())


def test_dim_params_become_symbols_and_unnamed_dims_fresh_ones() -> None:
    m = node_model(
        "Relu", [value_info("x", np.float32, ["batch size", None, 3])], [value_info("y", np.float32, None)]
    )
    text = str(from_onnx(m))
    assert '!relax.tensor<["batch_size", "x_d1", 3], f32> {relax.name = "x"}' in text


def test_shape_dict_overrides_the_model() -> None:
    m = node_model("Relu", [value_info("x", np.float32, ["n", 3])], [value_info("y", np.float32, None)])
    assert '!relax.tensor<[2, "m"], f32>' in str(from_onnx(m, shape_dict={"x": [2, "m"]}))
    with pytest.raises(OnnxImportError, match=r"shape_dict names \['z'\], which are not graph inputs"):
        from_onnx(m, shape_dict={"z": [1]})


def test_shape_chain_stays_symbolic_and_matches_onnxruntime() -> None:
    model = _heads_model()
    text = str(from_onnx(model))
    assert '"?"' not in text
    assert '-> (!relax.tensor<["batch", "seq", 2, 4], f32>, !relax.tensor<["seq", "seq"], i1>)' in text
    for b, s in ((1, 1), (2, 7), (3, 16)):
        check_against_ort(model, rng.standard_normal((b, s, 8), dtype=np.float32))


def _runtime_reshape() -> onnx.ModelProto:
    return node_model(
        "Reshape",
        [value_info("x", np.float32, ["n", 6]), value_info("shape", np.int64, [3])],
        [value_info("y", np.float32, None)],
    )


@pytest.mark.parametrize(
    "n, shape", [(1, [2, 3, 1]), (4, [0, -1, 2]), (5, [-1, 2, 3]), (3, [3, 0, 1]), (0, [0, 2, 3])]
)
def test_reshape_to_a_shape_known_only_at_run_time(n: int, shape: list[int]) -> None:
    check_against_ort(_runtime_reshape(), rng.standard_normal((n, 6), dtype=np.float32), np.array(shape))


def test_reshape_to_a_run_time_shape_of_the_wrong_size_is_an_error() -> None:
    x = np.zeros((2, 6), np.float32)
    with pytest.raises(InputError, match="relax.match_cast"):
        run_ours(_runtime_reshape(), x, np.array([5, 1, 1]))


def test_slice_and_range_with_run_time_bounds() -> None:
    slice_model = node_model(
        "Slice",
        [
            value_info(n, t, s)
            for n, t, s in (("x", np.float32, ["n", 5]), ("b", np.int64, [1]), ("e", np.int64, [1]))
        ],
        [value_info("y", np.float32, None)],
        [numpy_helper.from_array(np.array([0]), "axes")],
    )
    x = rng.standard_normal((9, 5), dtype=np.float32)
    for b, e in ((0, 9), (2, -1), (-3, 100), (5, 2), (-100, 4)):
        check_against_ort(slice_model, x, np.array([b]), np.array([e]))
    range_model = node_model(
        "Range",
        [value_info(n, np.int64, []) for n in ("start", "limit", "delta")],
        [value_info("y", np.int64, None)],
    )
    for start, limit, delta in ((0, 5, 1), (10, 1, -3), (2, 2, 1), (-4, 7, 2)):
        check_against_ort(range_model, *(np.array(v) for v in (start, limit, delta)))


def _const_range(start: float, limit: float, delta: float, dtype: type = np.int64) -> onnx.ModelProto:
    inits = [
        numpy_helper.from_array(np.array(v, dtype), n) for n, v in (("s", start), ("l", limit), ("d", delta))
    ]
    return node_model("Range", [], [value_info("y", dtype, None)], inits)


def test_range_of_known_bounds_is_folded_only_when_small() -> None:
    """A huge Range of import-time bounds is left to a kernel (fuzz case 48142: numpy allocated 8 TiB)."""
    assert "-> !relax.tensor<[1125899906842624], i64>" in str(from_onnx(_const_range(0, 2**50, 1)))
    for start, limit, delta in ((0, 7, 3), (5, -1, -2), (3, 3, 1), (0, 9000, 1)):
        (y,) = run_ours(_const_range(start, limit, delta))
        np.testing.assert_array_equal(y, np.arange(start, limit, delta))
    (y,) = run_ours(_const_range(0.0, 1.0, 0.25, np.float32))
    np.testing.assert_array_equal(y, np.arange(0.0, 1.0, 0.25, np.float32))
    with pytest.raises(OnnxImportError, match=r"delta is 0: Range\(0, 5, 0\) would never end"):
        from_onnx(_const_range(0, 5, 0))
    with pytest.raises(OnnxImportError, match=r"Range\(0.0, inf, 1.0\) has no finite length"):
        from_onnx(_const_range(0.0, np.inf, 1.0, np.float32))


def test_expand_to_a_symbolic_shape() -> None:
    nodes = [
        helper.make_node("Shape", ["y"], ["s"]),
        helper.make_node("Expand", ["x", "s"], ["z"]),
    ]
    graph = helper.make_graph(
        nodes,
        "expand",
        [value_info("x", np.float32, ["n", 1]), value_info("y", np.float32, ["b", "n", "m"])],
        [value_info("z", np.float32, None)],
    )
    model = graph_model(graph)
    assert '!relax.tensor<["b", "n", "m"], f32>' in str(from_onnx(model))
    for b, n, m in ((1, 1, 1), (2, 3, 5), (1, 4, 1)):
        check_against_ort(
            model, rng.standard_normal((n, 1), dtype=np.float32), np.zeros((b, n, m), np.float32)
        )


def test_constants_fix_graph_inputs() -> None:
    model = node_model(
        "Unsqueeze",
        [value_info("x", np.float32, ["n"]), value_info("axes", np.int64, [1])],
        [value_info("y", np.float32, None)],
    )
    assert '-> !relax.tensor<["y_shape_1", "y_shape_2"], f32>' in str(
        from_onnx(model)
    )  # axes read at run time
    dropout = node_model(
        "Dropout",
        [value_info("x", np.float32, ["n"]), value_info("ratio", np.float32, [])],
        [value_info("y", np.float32, None)],
        [numpy_helper.from_array(np.array(True), "training")],
    )
    with pytest.raises(OnnxImportError, match=r"input #1 \('ratio', value 'ratio'\) must be known") as info:
        from_onnx(dropout)
    assert info.value.constant_input == "ratio"
    module = from_onnx(model, constants={"axes": np.array([1])})  # folded: the precise type
    assert '-> !relax.tensor<["n", 1], f32>' in str(module)
    with pytest.raises(OnnxImportError, match=r"constants\['axes'\] has dtype int32"):
        from_onnx(model, constants={"axes": np.array([1], np.int32)})


def test_every_unsupported_op_is_listed_at_once() -> None:
    nodes = [
        helper.make_node("Relu", ["x"], ["a"], name="ok"),
        helper.make_node("StringNormalizer", ["a"], ["b"], name="strings"),
        helper.make_node("TfIdfVectorizer", ["b"], ["c"], name="tfidf"),
        helper.make_node("Foo", ["c"], ["y"], name="custom", domain="com.example"),
    ]
    graph = helper.make_graph(
        nodes, "g", [value_info("x", np.float32, [2])], [value_info("y", np.float32, None)]
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)])
    with pytest.raises(UnsupportedOpError) as info:
        from_onnx(model)
    message = str(info.value)
    assert "3 node(s) of unsupported ONNX ops" in message
    for part in (
        "StringNormalizer (node 'strings', opset 21)",
        "TfIdfVectorizer (node 'tfidf', opset 21)",
        "com.example.Foo",
    ):
        assert part in message


def test_bad_models_are_clear_errors(tmp_path: Path) -> None:
    with pytest.raises(OnnxImportError, match="no such file"):
        from_onnx(tmp_path / "missing.onnx")
    garbage = tmp_path / "garbage.onnx"
    garbage.write_bytes(b"\x00\x01not a model")
    with pytest.raises(OnnxImportError, match="not a readable ONNX model"):
        from_onnx(garbage)
    with pytest.raises(OnnxImportError, match="expects an onnx.ModelProto or a path"):
        from_onnx(42)  # type: ignore[arg-type]
    inner = helper.make_sequence_type_proto(helper.make_tensor_type_proto(TensorProto.FLOAT, None))
    seq = helper.make_value_info("s", helper.make_sequence_type_proto(inner))
    graph = helper.make_graph([helper.make_node("Identity", ["s"], ["y"])], "g", [seq], [seq])
    with pytest.raises(OnnxImportError, match="graph input 's' is a sequence of non-tensors"):
        from_onnx(helper.make_model(graph))
    strings = helper.make_tensor_value_info("t", TensorProto.STRING, [2])
    graph = helper.make_graph([helper.make_node("Identity", ["t"], ["y"])], "g", [strings], [strings])
    with pytest.raises(OnnxImportError, match="graph input 't': element type STRING is not supported"):
        from_onnx(helper.make_model(graph))


def test_ill_typed_nodes_name_the_node() -> None:
    model = node_model(
        "Add",
        [value_info("a", np.float32, [3]), value_info("b", np.float32, [4])],
        [value_info("c", np.float32, None)],
    )
    model.graph.node[0].name = "my_add"
    with pytest.raises(OnnxImportError, match=r"ONNX node 'my_add' \(Add, opset 21\): .*\[3\].*\[4\]"):
        from_onnx(model)


def test_wrong_run_time_inputs_are_errors() -> None:
    model = node_model("Relu", [value_info("x", np.float32, ["n", 3])], [value_info("y", np.float32, None)])
    with pytest.raises(InputError, match="dtype float64, expected float32"):
        run_ours(model, np.zeros((2, 3)))
    with pytest.raises(InputError, match="dim 1"):
        run_ours(model, np.zeros((2, 4), np.float32))


def test_cli_writes_the_module(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "m.onnx"
    onnx.save(_heads_model(), str(path))
    assert import_main([str(path), "-o", str(tmp_path / "m.mlir"), "--shape", "x=2,seq,8"]) == 0
    assert '!relax.tensor<[2, "seq", 2, 4], f32>' in (tmp_path / "m.mlir").read_text()
    assert import_main([str(tmp_path / "none.onnx")]) == 1
    assert "no such file" in capsys.readouterr().err


def test_console_script_is_installed() -> None:
    done = subprocess.run(
        [sys.executable, str(ROOT / "tools/relax-import-onnx"), "--help"], capture_output=True, text=True
    )
    assert done.returncode == 0 and "--shape" in done.stdout


@pytest.mark.parametrize("seed", [1, 2])
def test_large_initializers_are_compiled_with_their_own_values(seed: int) -> None:
    """Weights over 64 KiB become dense_resource blobs: they must reach the code, and two models that
    differ only in those values must not share a cached object."""
    w = np.random.default_rng(seed).standard_normal((300, 100)).astype(np.float32)
    model = node_model(
        "Add",
        [value_info("x", np.float32, ["n", 300, 100])],
        [value_info("y", np.float32, None)],
        [numpy_helper.from_array(w, "w")],
    )
    for n in (1, 3):
        check_against_ort(model, rng.standard_normal((n, 300, 100), dtype=np.float32))


def test_import_time_integer_arithmetic_rounds_like_onnx() -> None:
    """Constant integer Div/Mod are evaluated during import; Div truncates toward zero (ONNX), Mod
    takes the divisor's sign."""
    consts = [
        numpy_helper.from_array(np.array([-7, 7, -7, 6]), "a"),
        numpy_helper.from_array(np.array([2, -2, -2, 3]), "b"),
    ]
    nodes = [
        helper.make_node("Div", ["a", "b"], ["q"]),
        helper.make_node("Mod", ["a", "b"], ["r"]),
        helper.make_node("Add", ["x", "q"], ["y"]),
        helper.make_node("Add", ["x", "r"], ["z"]),
    ]
    graph = helper.make_graph(
        nodes,
        "g",
        [value_info("x", np.int64, ["n", 4])],
        [value_info(o, np.int64, None) for o in "yz"],
        consts,
    )
    model = graph_model(graph)
    for n in (1, 3):
        check_against_ort(model, rng.integers(-5, 5, (n, 4)))

"""Models that break the ONNX spec are OnnxImportErrors naming the node, initializer or input: schema
input/output counts, attribute names and types, tensors whose data does not match their dims, negative
dims, and truncated or byte-garbled files (never a protobuf or numpy traceback, never a crash)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import onnx
import pytest
from isolated import run_isolated
from onnx import TensorProto, helper, numpy_helper
from onnx_util import graph_model, node_model, run_ours, value_info

from relax_mlir.frontend.onnx import OnnxImportError, from_onnx

X = value_info("x", np.float32, [2, 3])
Y = value_info("y", np.float32, [2, 3])


def tensor(name: str, dims: list[int], raw: bytes | None = None, floats: list[float] | None = None):
    """A FLOAT TensorProto written field by field (onnx.helper refuses inconsistent ones)."""
    t = TensorProto(name=name, data_type=TensorProto.FLOAT, dims=dims)
    if raw is not None:
        t.raw_data = raw
    if floats is not None:
        t.float_data.extend(floats)
    return t


def add_model(w: TensorProto) -> onnx.ModelProto:
    return graph_model(
        helper.make_graph([helper.make_node("Add", ["x", "w"], ["y"], name="add")], "g", [X], [Y], [w])
    )


def one_node(op_type: str, inputs: list[str], outputs: list[str] = ("y",), **attrs) -> onnx.ModelProto:
    node = helper.make_node(op_type, inputs, list(outputs), name="n1", **attrs)
    outs = [value_info(o, np.float32, [2, 3]) for o in outputs]
    return graph_model(helper.make_graph([node], "g", [X], outs))


@pytest.mark.parametrize(
    "model, message",
    [
        (one_node("Relu", ["x"] * 5), r"ONNX node 'n1' \(Relu, opset 21\): has 5 inputs; Relu-14 takes 1$"),
        (one_node("Relu", ["x"], ["y", "z"]), r"'n1' \(Relu, opset 21\): has 2 outputs; Relu-14 takes 1$"),
        (one_node("Sum", []), r"'n1' \(Sum, opset 21\): has 0 inputs; Sum-13 takes 1 or more"),
        (one_node("Concat", ["", ""], axis=0), r"'n1' \(Concat, opset 21\): needs at least 1 given input\(s\) for 'inputs', got 0"),
        (one_node("Add", ["x", ""]), r"'n1' \(Add, opset 21\): input #1 \('B'\) is required, got the empty name"),
        (one_node("Softmax", ["x"], axis=1.5), r"'n1' \(Softmax, opset 21\): attribute 'axis' must be INT, got FLOAT"),
        (one_node("Relu", ["x"], alpha=1.0), r"'n1' \(Relu, opset 21\): unknown attribute 'alpha' \(Relu-14 has: none\)"),
        (one_node("Cast", ["x"]), r"'n1' \(Cast, opset 21\): required attribute\(s\) to missing"),
        (one_node("Frobnicate", ["x"]), r"'n1' \(Frobnicate, opset 21\): Frobnicate is not an op of ONNX opset 21"),
        (add_model(tensor("w", [-1, 3], raw=b"\0" * 12)), r"initializer 'w': dims must be >= 0, got \[-1, 3\]"),
        (add_model(tensor("w", [2, 3], raw=b"\0" * 8)), r"'w': shape \[2, 3\] of FLOAT needs 24 bytes of raw_data, found 8"),
        (add_model(tensor("w", [2, 3], raw=b"\0" * 28)), r"'w': shape \[2, 3\] of FLOAT needs 24 bytes of raw_data, found 28"),
        (add_model(tensor("w", [2, 3], floats=[1.0] * 5)), r"needs 6 values in float_data, found 5"),
        (add_model(tensor("w", [2, 3])), r"needs 6 values in float_data, found 0"),
        (
            add_model(TensorProto(name="w", data_type=TensorProto.STRING, dims=[1], string_data=[b"a"])),
            r"initializer 'w': element type STRING is not supported",
        ),
        (one_node("Cast", ["x"], to=2**63 - 1), r"'n1' \(Cast, opset 21\): attribute 'to': element type 9223372036854775807 \(not an ONNX element type\) is not supported"),
        (
            node_model("Relu", [helper.make_tensor_value_info("x", 40, [2])], [value_info("y", np.float32, None)]),
            r"graph input 'x': element type 40 \(not an ONNX element type\) is not supported",
        ),
        (
            node_model("Relu", [value_info("x", np.float32, [-5, 3])], [value_info("y", np.float32, None)]),
            r"graph input 'x': dim 0 is -5; dims must be >= 0",
        ),
        (
            node_model("Relu", [value_info("x", np.float32, [5, 3])], [value_info("y", np.float32, [5, -3])]),
            r"graph output 'y': dim 1 is -3; dims must be >= 0",
        ),
        (
            graph_model(
                helper.make_graph(
                    [helper.make_node("Constant", [], ["y"], name="c", value=tensor("v", [2, 3], raw=b"\0" * 4))],
                    "g", [X], [Y],
                )
            ),
            r"ONNX node 'c' \(Constant, opset 21\): attribute 'value': shape \[2, 3\] of FLOAT needs 24 bytes",
        ),
        (  # the checker's part: an output name defined twice
            graph_model(
                helper.make_graph(
                    [helper.make_node("Relu", ["x"], ["y"], name="a"), helper.make_node("Relu", ["x"], ["y"], name="b")],
                    "g", [X], [Y],
                )
            ),
            r"the model is not valid ONNX: .*y",
        ),
        (graph_model(helper.make_graph([helper.make_node("Relu", ["x"], ["y"])], "g", [X], [])), "no outputs"),
    ],
)  # fmt: skip
def test_invalid_model_is_an_import_error(model: onnx.ModelProto, message: str) -> None:
    with pytest.raises(OnnxImportError, match=message):
        from_onnx(model)


def test_negative_shape_dict_dim() -> None:
    with pytest.raises(OnnxImportError, match=r"shape_dict\['x'\] = \[-5, 3\]: dims must be >= 0"):
        from_onnx(one_node("Relu", ["x"]), shape_dict={"x": [-5, 3]})


@pytest.mark.parametrize("n", [0, 1, 7])
def test_valid_models_the_checker_is_stricter_about_still_import(n: int) -> None:
    """Outputs of unknown rank (no shape field: onnx.checker rejects them, ONNX Runtime runs them), an
    empty initializer, and packed int4 data all import and compute the right values."""
    w = np.arange(n * 3, dtype=np.float32).reshape(n, 3)
    q = helper.make_tensor("q", TensorProto.INT4, [3], [1, -2, 3])
    nodes = [
        helper.make_node("Add", ["x", "w"], ["s"]),
        helper.make_node("Cast", ["q"], ["qf"], to=TensorProto.FLOAT),
        helper.make_node("Mul", ["s", "qf"], ["y"]),
    ]
    graph = helper.make_graph(
        nodes,
        "g",
        [value_info("x", np.float32, [n, 3])],
        [value_info("y", np.float32, None)],
        [numpy_helper.from_array(w, "w"), q],
    )
    x = np.random.default_rng(n).standard_normal((n, 3)).astype(np.float32)
    (y,) = run_ours(graph_model(graph), x)
    np.testing.assert_allclose(y, (x + w) * np.array([1, -2, 3], np.float32), rtol=1e-6)


def _saved(tmp_path: Path) -> Path:
    w = numpy_helper.from_array(np.arange(12, dtype=np.float32).reshape(3, 4), "w")
    nodes = [
        helper.make_node("MatMul", ["x", "w"], ["m"], name="mm"),
        helper.make_node("Softmax", ["m"], ["y"], name="sm", axis=-1),
    ]
    graph = helper.make_graph(
        nodes, "g", [value_info("x", np.float32, ["n", 3])], [value_info("y", np.float32, ["n", 4])], [w]
    )
    path = tmp_path / "model.onnx"
    onnx.save(graph_model(graph), path)
    return path


def test_truncated_and_garbled_files_are_import_errors(tmp_path: Path) -> None:
    """Every truncation and 300 single-bit flips of a small model: imported, or an OnnxImportError."""
    path = _saved(tmp_path)
    outcome = run_isolated(
        f"""
        import collections, numpy as np
        from relax_mlir.frontend.onnx import OnnxImportError, from_onnx
        data = open({str(path)!r}, "rb").read()
        rng = np.random.default_rng(0)
        variants = [data[:k] for k in range(len(data))]
        for _ in range(300):
            b = bytearray(data)
            b[rng.integers(len(b))] ^= 1 << int(rng.integers(8))
            variants.append(bytes(b))
        seen = collections.Counter()
        for v in variants:
            open({str(tmp_path / "bad.onnx")!r}, "wb").write(v)
            try:
                from_onnx({str(tmp_path / "bad.onnx")!r})
                seen["ok"] += 1
            except OnnxImportError:
                seen["OnnxImportError"] += 1
        print(dict(seen))
        """
    )
    assert outcome.returncode == 0, outcome.stderr[-3000:]
    seen = eval(outcome.last_line)  # noqa: S307  (our own child's dict)
    assert seen["OnnxImportError"] > 200


def test_cli_rejects_a_negative_input_dim(tmp_path: Path) -> None:
    path = tmp_path / "neg.onnx"
    onnx.save(
        node_model("Relu", [value_info("x", np.float32, [-5, 3])], [value_info("y", np.float32, None)]), path
    )
    out = tmp_path / "out.mlir"
    tool = Path(__file__).resolve().parents[2] / "tools" / "relax-import-onnx"
    done = subprocess.run(
        [sys.executable, str(tool), str(path), "-o", str(out)], capture_output=True, text=True
    )
    assert done.returncode == 1 and not out.exists()
    assert "relax-import-onnx: error: graph input 'x': dim 0 is -5" in done.stderr
    assert "Traceback" not in done.stderr


def test_concat_of_known_values_with_different_ranks_is_an_import_error() -> None:
    """Shape(x) (rank 1) concatenated with a scalar constant: folding it at import time raised numpy's
    ValueError (fuzz case 2095); it is relax.concat's rank mismatch, naming the node."""
    nodes = [
        helper.make_node("Shape", ["x"], ["s"], name="shape"),
        helper.make_node(
            "Constant", [], ["c"], name="c", value=numpy_helper.from_array(np.array(4, np.int64))
        ),
        helper.make_node("Concat", ["s", "c"], ["y"], name="cat", axis=0),
    ]
    model = graph_model(helper.make_graph(nodes, "g", [X], [value_info("y", np.int64, None)]))
    with pytest.raises(OnnxImportError, match=r"ONNX node 'cat' \(Concat, opset 21\)") as info:
        from_onnx(model)
    assert "internal error" not in str(info.value)
    assert "rank" in str(info.value)

"""Parameters of unknown rank (``!relax.tensor<"*", f32>``): compiled once per rank (``relax-specialize-ranks``, or
the ONNX importer per rank), a call dispatched on its arguments' ranks, against numpy and onnxruntime."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest
from isolated import run_isolated
from onnx import TensorProto, helper
from onnx_util import check_against_ort, graph_model
from oprun import compile_fn, rand

import relax_mlir.builder as rb
from relax_mlir.dialects import relax as R
from relax_mlir.errors import InputError

SHAPES = [(), (5,), (2, 3), (2, 1, 3, 4), (0,), (3, 0, 2)]


@pytest.fixture(scope="module")
def unary():
    return compile_fn({"x": rb.tensor(None)}, lambda x: R.multiply(R.exp(R.abs(x)), x))


@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_unary_at_every_rank(unary, shape: tuple[int, ...]) -> None:
    x = rand(shape)
    y = unary(x)
    assert y.shape == shape and y.dtype == np.float32
    np.testing.assert_allclose(y, np.exp(np.abs(x)) * x, rtol=1e-5, atol=1e-6)


def test_unsupported_rank_is_an_input_error(unary) -> None:
    with pytest.raises(
        InputError, match=r"parameter 'x' has rank 5 .* compiled for rank\(s\) 0, 1, 2, 3, 4 only"
    ):
        unary(rand((1, 2, 1, 2, 1)))
    with pytest.raises(InputError, match="parameter 'x' must be a numpy array"):
        unary([1.0, 2.0])
    with pytest.raises(InputError, match="parameter 'x' has dtype float64"):
        unary(np.zeros((2, 2)))
    with pytest.raises(InputError, match="takes 1 argument"):
        unary(rand((2,)), rand((2,)))


def test_dispatch_shows_the_declared_signature(unary) -> None:
    """The dispatching callable describes the function as declared: the parameter's rank is unknown."""
    [x] = unary["main"].inputs
    assert (x.name, str(x.type)) == ("x", '!relax.tensor<"*", f32>')


def test_a_library_call_beside_an_unknown_rank_parameter(tmp_path) -> None:
    """A string callee (an external library function) is not a call of the specialized function."""
    text = """
    func.func @main(%x: !relax.tensor<"*", f32>, %a: !relax.tensor<[2, 3], f32>, %b: !relax.tensor<[3, 2], f32>)
        -> (!relax.tensor<"*", f32>, !relax.tensor<[2, 2], f32>) {
      %0 = "relax.exp"(%x) : (!relax.tensor<"*", f32>) -> !relax.tensor<"*", f32>
      %1 = "relax.call_dps_library"(%a, %b) {callee = "relax_sgemm"}
          : (!relax.tensor<[2, 3], f32>, !relax.tensor<[3, 2], f32>) -> !relax.tensor<[2, 2], f32>
      return %0, %1 : !relax.tensor<"*", f32>, !relax.tensor<[2, 2], f32>
    }
    """
    path = tmp_path / "m.mlir"
    path.write_text(text)
    done = subprocess.run(
        [sys.executable, "-m", "relax_mlir.relax_opt", "--relax-specialize-ranks", str(path)],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    assert "@main__r0" in done.stdout and "@main__r4" in done.stdout and "relax_sgemm" in done.stdout


@pytest.mark.parametrize(
    "a, b", [((), (2, 3)), ((3,), (2, 3)), ((2, 1), (1, 4)), ((4, 1, 2), (3, 1)), ((0, 3), (3,))], ids=str
)
def test_two_parameters_broadcast(a: tuple[int, ...], b: tuple[int, ...]) -> None:
    f = compile_fn({"a": rb.tensor(None), "b": rb.tensor(None)}, lambda a, b: R.add(a, b))
    x, y = rand(a), rand(b)
    np.testing.assert_allclose(f(x, y), x + y, rtol=1e-6)


def test_match_cast_keeps_its_rank_only() -> None:
    f = compile_fn({"x": rb.tensor(None)}, lambda x: R.exp(R.match_cast(x, rb.tensor(["n", 4]))))
    x = rand((3, 4))
    np.testing.assert_allclose(f(x), np.exp(x), rtol=1e-6)
    assert f(rand((0, 4))).shape == (0, 4)
    with pytest.raises(InputError, match=r"parameter 'x' has rank 3 .* compiled for rank\(s\) 2 only"):
        f(rand((3, 4, 1)))
    with pytest.raises(InputError, match="dim 1 .* must be 4, got 5"):
        f(rand((3, 5)))


def _shapeless_model(nodes, out_type=TensorProto.FLOAT, extra_inputs=()):
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, None)  # no shape: unknown rank
    y = helper.make_tensor_value_info("y", out_type, None)
    return graph_model(helper.make_graph(nodes, "g", [x, *extra_inputs], [y]), 17)


@pytest.mark.parametrize("shape", [(), (3,), (2, 3), (1, 4, 3), (0, 3), (2, 1, 2, 3)], ids=str)
def test_onnx_shapeless_input_elementwise(shape: tuple[int, ...]) -> None:
    """Elementwise nodes stay generic over rank (one "*" function, specialized when compiled)."""
    b = helper.make_tensor_value_info("b", TensorProto.FLOAT, [3])
    nodes = [
        helper.make_node("Abs", ["x"], ["a"]),
        helper.make_node("Sigmoid", ["a"], ["s"]),
        helper.make_node("Add", ["s", "b"], ["y"]),
    ]
    check_against_ort(_shapeless_model(nodes, extra_inputs=[b]), rand(shape), rand((3,)))


@pytest.mark.parametrize(
    "node, out_type",
    [
        (helper.make_node("Softmax", ["x"], ["y"]), TensorProto.FLOAT),
        (helper.make_node("ReduceSum", ["x"], ["y"], keepdims=0), TensorProto.FLOAT),
        (helper.make_node("Flatten", ["x"], ["y"], axis=1), TensorProto.FLOAT),
        (helper.make_node("Shape", ["x"], ["y"]), TensorProto.INT64),
    ],
    ids=lambda v: getattr(v, "op_type", ""),
)
@pytest.mark.parametrize("shape", [(4,), (2, 3), (2, 1, 3, 2), (0, 2)], ids=str)
def test_onnx_shapeless_input_rank_dependent(node, out_type, shape: tuple[int, ...]) -> None:
    """Nodes that need their input's rank at import time: the graph is imported once per rank."""
    check_against_ort(_shapeless_model([node], out_type), rand(shape))


def test_onnx_shapeless_input_unsupported_rank() -> None:
    model = _shapeless_model([helper.make_node("Softmax", ["x"], ["y"])])
    from relax_mlir.frontend.onnx import from_onnx
    from relax_mlir.targets import compile

    exe = compile(from_onnx(model), opt_level=1)
    with pytest.raises(
        InputError, match=r"parameter 'x' has rank 6 .* compiled for rank\(s\) 1, 2, 3, 4 only"
    ):
        exe(rand((1,) * 6))


def _local_function_model():
    """A model-local function (generic over rank) on a shapeless input, then a node that needs the rank."""
    fn = helper.make_function(
        "custom",
        "AbsTwice",
        ["a"],
        ["b"],
        [helper.make_node("Abs", ["a"], ["s"]), helper.make_node("Add", ["s", "s"], ["b"])],
        [helper.make_opsetid("", 17)],
    )
    nodes = [
        helper.make_node("AbsTwice", ["x"], ["t"], domain="custom"),
        helper.make_node("Softmax", ["t"], ["y"]),
    ]
    model = _shapeless_model(nodes)
    model.opset_import.append(helper.make_opsetid("custom", 1))
    model.functions.append(fn)
    return model


@pytest.mark.parametrize("shape", [(4,), (2, 3), (1, 2, 3, 2)], ids=str)
def test_onnx_shapeless_input_of_a_local_function(shape: tuple[int, ...]) -> None:
    check_against_ort(_local_function_model(), rand(shape))


def test_onnx_per_rank_import_keeps_only_called_functions() -> None:
    from relax_mlir.frontend.onnx import from_onnx

    text = str(from_onnx(_local_function_model()))
    assert "@main__r0(" not in text  # Softmax of a scalar does not import
    for k in range(1, 5):
        assert f"@main__r{k}(" in text
    # one function per rank that imported; none left from rank 0 (built, then Softmax failed)
    assert text.count("func.func private") == 4


UNARY_TEXT = """
func.func @main(%x: !relax.tensor<"*", f32> {relax.name = "x"}) -> !relax.tensor<"*", f32> {
  %0 = "relax.exp"(%x) : (!relax.tensor<"*", f32>) -> !relax.tensor<"*", f32>
  return %0 : !relax.tensor<"*", f32>
}"""


def test_onnx_shapeless_gpt_token_ids() -> None:
    """A GPT whose token ids have no shape: imported once per rank (its Gather, Shape and Reshape nodes need
    it), each rank compiled at O3 (rank 3's host code aborted MLIR's ownership-based-buffer-deallocation:
    fuzz case 1597), and every call agrees with onnxruntime: the same outputs, or an InputError where
    onnxruntime fails too (rank 1: Gather out of range; ranks 3-4: Add or Reshape sizes)."""
    out = run_isolated(
        """
        import numpy as np, onnxruntime as ort, relax_mlir
        from relax_mlir.errors import InputError
        from relax_mlir.examples.onnx_gpt import gpt_model
        from relax_mlir.frontend.onnx import from_onnx
        m = gpt_model(layers=1, d=16, heads=2, vocab=10)
        m.graph.input[0].type.tensor_type.ClearField("shape")
        exe = relax_mlir.compile(from_onnx(m), opt_level=3, use_cache=False)
        sess = ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"])
        rng = np.random.default_rng(0)
        shapes = [(5,), (1, 1), (2, 7), (3, 1), (2, 1, 1), (2, 3, 4), (1, 2, 1), (2, 1, 2, 3)]
        agreed = []
        for shape in shapes:
            ids = rng.integers(0, 10, shape).astype(np.int64)
            try:
                ref = sess.run(None, {m.graph.input[0].name: ids})[0]
            except Exception:
                ref = None
            try:
                ours = exe(ids)
            except InputError:
                ours = None
            assert (ours is None) == (ref is None), (shape, ours is None, ref is None)
            if ref is not None:
                np.testing.assert_allclose(ours, ref, rtol=1e-4, atol=1e-5)
                agreed.append(len(shape))
        print(sorted(set(agreed)))
        """,
        timeout=600,
    )
    assert out.returncode == 0, out.stderr[-3000:]
    assert out.last_line == "[2, 3]", out.stdout[-2000:]


def test_c_api_dispatches_on_rank(tmp_path) -> None:
    """A library (relax-compile) gets ``relax_main``, which calls the variant for the inputs' ranks."""
    import ctypes
    import platform

    from relax_mlir.runtime.capi import ERRORS
    from relax_mlir.targets import compile_library

    if platform.machine() != "x86_64":
        pytest.skip("the library is built for x86_64")
    lib = compile_library(UNARY_TEXT, tmp_path / "librank.so", target="x86_64")
    assert lib.functions["main"] == "relax_main"
    assert "int relax_main(const relax_tensor *inputs" in lib.header.read_text()

    class Tensor(ctypes.Structure):
        _fields_ = [
            ("data", ctypes.c_void_p),
            ("ndim", ctypes.c_int64),
            ("shape", ctypes.POINTER(ctypes.c_int64)),
            ("dtype", ctypes.c_int32),
        ]

    so = ctypes.CDLL(str(lib.path))
    so.relax_last_error.restype = ctypes.c_char_p

    def tensor(a: np.ndarray) -> Tensor:
        shape = (ctypes.c_int64 * max(a.ndim, 1))(*a.shape)
        t = Tensor(a.ctypes.data, a.ndim, shape, 12)  # RELAX_F32
        t._keep = shape
        return t

    for shape in [(), (3,), (2, 0), (2, 3, 1, 2)]:
        x, y = rand(shape), np.empty(shape, np.float32)
        dims = (ctypes.c_int64 * 4)()
        assert so.relax_main_output_shapes(ctypes.byref(tensor(x)), 1, dims, len(shape)) == 0
        assert tuple(dims[: len(shape)]) == shape
        assert so.relax_main(ctypes.byref(tensor(x)), 1, ctypes.byref(tensor(y)), 1) == 0
        np.testing.assert_allclose(y, np.exp(x), rtol=1e-6)
    x = rand((1, 1, 1, 1, 1))
    code = so.relax_main(ctypes.byref(tensor(x)), 1, ctypes.byref(tensor(x.copy())), 1)
    assert code == {n: v for n, v, _ in ERRORS}["RELAX_ERR_RANK"]
    assert so.relax_last_error().decode() == (
        "@main: parameter 'x' has rank 5, but the function (of unknown-rank parameters) is compiled for "
        "rank(s) 0, 1, 2, 3, 4 only"
    )


def test_wasm_js_dispatches_on_rank(tmp_path) -> None:
    """The wasm32 library's ES module gets ``model.main``, which calls the variant for the arguments' ranks."""
    from test_wasm_js import compile_wasm, from_js, run_node

    wasm = compile_wasm(UNARY_TEXT, tmp_path / "rank.wasm")
    shapes = [(), (3,), (2, 0), (2, 3, 1, 2)]
    calls = [[rand(s)] for s in shapes] + [[rand((1, 1, 1, 1, 1))]]
    answer = run_node(wasm.with_suffix(".mjs"), "main", calls, wasm)
    for (x,), result in zip(calls, answer["results"]):
        if x.ndim == 5:
            assert (
                "parameter 'x' has rank 5, but the function (of unknown-rank parameters) is compiled for "
                in str(result)
            )
            continue
        np.testing.assert_allclose(from_js(result["value"]), np.exp(x), rtol=1e-6)
    assert "main(...args: any[]): any;" in wasm.with_suffix(".d.ts").read_text()


def _softmax(x: np.ndarray) -> np.ndarray:
    e = np.exp(x - x.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


@pytest.mark.parametrize(
    "body, reference, ranks",
    [
        (lambda x: R.softmax(x, -1), _softmax, "1, 2, 3, 4"),  # no axis -1 at rank 0: no variant
        (lambda x: R.permute_dims(x), lambda x: x.T, "0, 1, 2, 3, 4"),
        (lambda x: R.reshape(x, [-1]), lambda x: x.reshape(-1), "0, 1, 2, 3, 4"),
    ],
    ids=["softmax", "permute_dims", "flatten"],
)
def test_rank_dependent_ops(body, reference, ranks: str) -> None:
    f = compile_fn({"x": rb.tensor(None)}, body)
    assert repr(f["main"]).endswith(f"of rank {ranks}>")
    for shape in [(3,), (2, 3), (2, 1, 3, 2), (0, 3)]:
        x = rand(shape)
        np.testing.assert_allclose(f(x), reference(x), rtol=1e-5, atol=1e-6)

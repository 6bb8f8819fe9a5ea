"""ONNX elementwise and activation ops (frontend/onnx/ops/elementwise.py) against onnxruntime.

Ops are bundled: one model per dtype family holds many nodes, each node's output a graph output, with
symbolic input dims; every model runs at several shapes (size 1 and odd sizes included).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import onnx
import pytest
from onnx import helper
from onnx_util import check_against_ort, graph_model, node_model, value_info

from relax_mlir.errors import RelaxError
from relax_mlir.frontend.onnx import from_onnx

SHAPES = ((1, 1), (3, 5), (4, 7))


def bundle(
    nodes: Sequence[tuple[str, Sequence[str], dict]],
    inputs: Sequence[onnx.ValueInfoProto],
    out_dtypes: dict[str, type],
    opset: int = 21,
) -> onnx.ModelProto:
    """A model with one node per ``(op, inputs, attrs)``; node i's output ``y{i}`` is a graph output of
    dtype ``out_dtypes.get(op, inputs' dtype)`` and unknown shape."""
    default = onnx.helper.tensor_dtype_to_np_dtype(inputs[0].type.tensor_type.elem_type)
    graph_nodes, outputs = [], []
    for i, (op, ins, attrs) in enumerate(nodes):
        graph_nodes.append(helper.make_node(op, list(ins), [f"y{i}"], name=f"{op}_{i}", **attrs))
        outputs.append(helper.make_tensor_value_info(
            f"y{i}", onnx.helper.np_dtype_to_tensor_dtype(np.dtype(out_dtypes.get(op, default))), None
        ))  # fmt: skip
    return graph_model(helper.make_graph(graph_nodes, "bundle", list(inputs), outputs), opset)


def rng_floats(rng: np.random.Generator, shape: tuple[int, ...], dtype: type = np.float32) -> np.ndarray:
    x = rng.uniform(-3, 3, size=shape)
    x.flat[:: max(1, x.size // 3)] = 0.5  # ties for Round
    return x.astype(dtype)


def _accepts(op: str, dtype: type, opset: int = 21) -> bool:
    """Whether ``op`` at ``opset`` takes ``dtype`` as its first input."""
    schema = onnx.defs.get_schema(op, opset)
    name = "tensor(float)" if dtype == np.float32 else f"tensor({np.dtype(dtype).name})"
    allowed = {c.type_param_str: c.allowed_type_strs for c in schema.type_constraints}
    return name in allowed[schema.inputs[0].type_str]


UNARY_FLOAT = [
    *((op, {}) for op in (
        "Abs", "Neg", "Exp", "Log", "Sqrt", "Reciprocal", "Sin", "Cos", "Tan", "Asin", "Acos", "Atan",
        "Sinh", "Cosh", "Asinh", "Acosh", "Atanh", "Tanh", "Sigmoid", "Erf", "Floor", "Ceil", "Round",
        "Sign", "Relu", "Softplus", "Softsign", "Mish", "HardSwish", "Elu", "Selu", "Celu",
        "ThresholdedRelu", "HardSigmoid", "LeakyRelu", "Gelu", "Shrink", "Identity",
    )),
    ("Elu", {"alpha": 0.5}),
    ("Selu", {"alpha": 1.5, "gamma": 2.0}),
    ("Celu", {"alpha": 2.0}),
    ("ThresholdedRelu", {"alpha": 0.25}),
    ("HardSigmoid", {"alpha": 0.3, "beta": 0.4}),
    ("LeakyRelu", {"alpha": 0.2}),
    ("Gelu", {"approximate": "tanh"}),
    ("Shrink", {"lambd": 1.0, "bias": 0.5}),
]  # fmt: skip


@pytest.mark.parametrize("dtype", [np.float32, np.float16])
def test_unary_float(dtype: type) -> None:
    """Unary math and activations, NaN and infinities included (IsNaN/IsInf on the same data)."""
    nodes = [(op, ["x"], attrs) for op, attrs in UNARY_FLOAT if _accepts(op, dtype)]
    nodes += [("IsNaN", ["x"], {}), ("IsInf", ["x"], {})]
    nodes += [("IsInf", ["x"], {"detect_negative": 0}), ("IsInf", ["x"], {"detect_positive": 0})]
    outs = {"IsNaN": np.bool_, "IsInf": np.bool_}
    model = bundle(nodes, [value_info("x", dtype, ["n", "m"])], outs)
    rng = np.random.default_rng(0)
    for shape in SHAPES:
        x = rng_floats(rng, shape, dtype)
        # (onnxruntime's f16 Sign makes NaN 0, its f32 Sign keeps it: no NaN in f16 data)
        x.flat[-1] = [np.inf, -np.inf, np.nan if dtype == np.float32 else 2.0][shape[1] % 3]
        tol = {"rtol": 1e-4, "atol": 1e-5} if dtype == np.float32 else {"rtol": 2e-3, "atol": 2e-3}
        check_against_ort(model, x, **tol)


def test_swish() -> None:
    model = bundle(
        [("Swish", ["x"], {}), ("Swish", ["x"], {"alpha": 0.5})], [value_info("x", np.float32, ["n"])], {}, 24
    )
    rng = np.random.default_rng(1)
    for n in (1, 7):
        check_against_ort(model, rng_floats(rng, (n,)))


BINARY_FLOAT = ["Add", "Sub", "Mul", "Div", "Pow", "Max", "Min", "Sum", "Mean", "PRelu"]
COMPARE = ["Equal", "Less", "LessOrEqual", "Greater", "GreaterOrEqual"]


def test_binary_float() -> None:
    """Arithmetic, comparisons, Mod (fmod=1), variadic ops, Where and Clip with broadcasting
    ``[n, m]`` against ``[m]`` and ``[]``."""
    nodes = [(op, ["x", "y"], {}) for op in BINARY_FLOAT + COMPARE]
    nodes += [
        ("Mod", ["x", "y"], {"fmod": 1}),
        ("Sum", ["x", "y", "s"], {}),
        ("Mean", ["x", "y", "s"], {}),
        ("Max", ["x", "y", "s"], {}),
        ("Min", ["s", "y", "x"], {}),
        ("Where", ["c", "x", "y"], {}),
        ("Clip", ["x", "lo", "hi"], {}),
        ("Clip", ["x", "", "hi"], {}),
        ("Clip", ["x", "hi", "lo"], {}),  # min > max: every element is max
    ]
    inputs = [
        value_info("x", np.float32, ["n", "m"]),
        value_info("y", np.float32, ["m"]),
        value_info("s", np.float32, []),
        value_info("c", np.bool_, ["n", 1]),
        value_info("lo", np.float32, []),
        value_info("hi", np.float32, []),
    ]
    model = bundle(nodes, inputs, dict.fromkeys(COMPARE, np.bool_))
    rng = np.random.default_rng(2)
    for n, m in SHAPES:
        x, y = rng_floats(rng, (n, m)), rng_floats(rng, (m,))
        y[0] = x[0, 0]  # equal entries for the comparisons
        s, c = np.array(1.5, np.float32), rng.random((n, 1)) < 0.5
        check_against_ort(model, x, y, s, c, np.array(-1, np.float32), np.array(1.25, np.float32))


INT_NODES = [
    *((op, ["x", "y"], {}) for op in ("Add", "Sub", "Mul", "Div", "Max", "Min", "BitwiseAnd",
                                        "BitwiseOr", "BitwiseXor", *COMPARE)),
    ("Mod", ["x", "y"], {}),
    ("Mod", ["x", "y"], {"fmod": 1}),
    *((op, ["x"], {}) for op in ("Abs", "Neg", "Sign", "Relu", "BitwiseNot", "Shrink", "Identity")),
    ("Shrink", ["x"], {"lambd": 2.0, "bias": 1.5}),
    ("Clip", ["x", "lo", "hi"], {}),
]  # fmt: skip


@pytest.mark.parametrize("dtype", [np.int32, np.int8, np.int64])
def test_int(dtype: type) -> None:
    """Integer arithmetic (Div truncates, Mod signs), bitwise ops, Shrink and Clip; y has no zeros
    (onnxruntime fails on integer division by zero)."""
    ort_lacks = {(np.int64, "Relu")}
    nodes = [n for n in INT_NODES if _accepts(n[0], dtype) and (dtype, n[0]) not in ort_lacks]
    inputs = [
        value_info("x", dtype, ["n", "m"]),
        value_info("y", dtype, [1, "m"]),
        value_info("lo", dtype, []),
        value_info("hi", dtype, []),
    ]
    model = bundle(nodes, inputs, dict.fromkeys(COMPARE, np.bool_))
    rng = np.random.default_rng(3)
    for n, m in SHAPES:
        x = rng.integers(-100, 100, size=(n, m)).astype(dtype)
        y = rng.choice(np.array([-7, -3, -1, 1, 2, 5, 9]), size=(1, m)).astype(dtype)
        check_against_ort(model, x, y, np.array(-20, dtype), np.array(30, dtype))


def test_int_const_clip_and_pow() -> None:
    """Clip with initializer bounds (one relax.clip) and integer Pow with non-negative exponents."""
    init = [helper.make_tensor("lo", onnx.TensorProto.INT64, [], [-5]),
            helper.make_tensor("hi", onnx.TensorProto.INT64, [], [7])]  # fmt: skip
    nodes = [
        helper.make_node("Clip", ["x", "lo", "hi"], ["c"]),
        helper.make_node("Pow", ["x", "p"], ["q"]),
        helper.make_node("Clip", ["x", "", "hi"], ["d"]),
    ]
    graph = helper.make_graph(
        nodes,
        "g",
        [value_info("x", np.int64, ["n"]), value_info("p", np.int64, ["n"])],
        [value_info(o, np.int64, ["n"]) for o in "cqd"],
        init,
    )
    model = graph_model(graph)
    rng = np.random.default_rng(4)
    for n in (1, 9):
        check_against_ort(model, rng.integers(-10, 10, n), rng.integers(0, 6, n))


@pytest.mark.parametrize("x_dtype, y_dtype", [(np.float32, np.int64), (np.int64, np.float32),
                                               (np.int32, np.int64), (np.float32, np.int32)])  # fmt: skip
def test_pow_mixed_dtypes(x_dtype: type, y_dtype: type) -> None:
    """The exponent's dtype may differ from the base's; the result has the base's dtype."""
    model = node_model(
        "Pow",
        [value_info("x", x_dtype, ["n"]), value_info("y", y_dtype, ["n"])],
        [value_info("z", x_dtype, ["n"])],
    )
    for n in (1, 5):
        x = np.arange(1, n + 1).astype(x_dtype)
        y = (np.arange(n) % 4).astype(y_dtype) + (y_dtype(0.5) if y_dtype == np.float32 else 0)
        check_against_ort(model, x, y)


def test_bitshift() -> None:
    nodes = [
        ("BitShift", ["x", "s"], {"direction": "LEFT"}),
        ("BitShift", ["x", "s"], {"direction": "RIGHT"}),
    ]
    model = bundle(nodes, [value_info("x", np.uint8, ["n"]), value_info("s", np.uint8, ["n"])], {})
    rng = np.random.default_rng(5)
    for n in (1, 11):
        x = rng.integers(0, 256, n).astype(np.uint8)
        check_against_ort(model, x, rng.integers(0, 10, n).astype(np.uint8))  # 8 and 9 shift everything out


def test_logical() -> None:
    nodes = [(op, ["a", "b"], {}) for op in ("And", "Or", "Xor", "Equal")]
    nodes += [("Not", ["a"], {})]
    model = bundle(nodes, [value_info("a", np.bool_, ["n", "m"]), value_info("b", np.bool_, ["m"])], {})
    rng = np.random.default_rng(6)
    for n, m in SHAPES:
        check_against_ort(model, rng.random((n, m)) < 0.5, rng.random(m) < 0.5)


def _import(op: str, dtype: type = np.float32, **attrs: object) -> None:
    ins = [value_info("x", dtype, ["n"])] + (
        [value_info("y", dtype, ["n"])] if op in ("Mod", "BitShift") else []
    )
    from_onnx(node_model(op, ins, [value_info("z", dtype, ["n"])], **attrs))


def test_unsupported_attributes_raise() -> None:
    with pytest.raises(RelaxError, match=r"BitShift.*'direction' must be 'LEFT' or 'RIGHT', got 'UP'"):
        _import("BitShift", np.uint8, direction="UP")
    with pytest.raises(RelaxError, match=r"Gelu.*'approximate' must be 'none' or 'tanh', got 'fast'"):
        _import("Gelu", approximate="fast")
    with pytest.raises(RelaxError, match=r"Mod.*'fmod' must be 0 or 1, got 2"):
        _import("Mod", fmod=2)
    with pytest.raises(RelaxError, match=r"Celu.*'alpha' must not be 0"):
        _import("Celu", alpha=0.0)

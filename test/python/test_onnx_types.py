"""Element types end to end (unsigned ints, float8, int4), Cast, and the quantization ops, against
onnxruntime."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest
from onnx import TensorProto, helper
from onnx_util import check_against_ort, node_model, run_ours

from relax_mlir.frontend.onnx import OnnxImportError, from_onnx


def vi(name: str, elem: int, shape: list[int | str]) -> object:
    return helper.make_tensor_value_info(name, elem, shape)


@pytest.mark.parametrize(
    ("elem", "dtype"),
    [(TensorProto.UINT16, np.uint16), (TensorProto.UINT32, np.uint32), (TensorProto.UINT64, np.uint64)],
)
def test_unsigned_add_and_cast(elem: int, dtype: type) -> None:
    model = node_model("Add", [vi("a", elem, ["n", 3]), vi("b", elem, [3])], [vi("y", elem, ["n", 3])])
    info = np.iinfo(dtype)
    for n in (1, 5):
        a = np.random.default_rng(n).integers(0, info.max, (n, 3), dtype=dtype, endpoint=True)
        b = np.array([1, info.max, 7], dtype)
        check_against_ort(model, a, b)


def test_cast_to_float8_saturate_and_not() -> None:
    for saturate in (0, 1):
        model = node_model(
            "Cast",
            [vi("x", TensorProto.FLOAT, ["n"])],
            [vi("y", TensorProto.FLOAT8E4M3FN, ["n"])],
            to=TensorProto.FLOAT8E4M3FN,
            saturate=saturate,
        )
        for x in (
            np.array([0.3], np.float32),
            np.array([1e4, -1e4, 0.0017, -3.3, 464.0, 1e-9, 7], np.float32),
        ):
            [got] = run_ours(model, x)
            want = (
                np.clip(x, -448, 448).astype(ml_dtypes.float8_e4m3fn)
                if saturate
                else x.astype(ml_dtypes.float8_e4m3fn)
            )
            assert got.dtype == want.dtype
            np.testing.assert_array_equal(got.view(np.uint8), want.view(np.uint8))


def test_cast_float8_int4_round_trip() -> None:
    model = helper.make_model(
        helper.make_graph(
            [
                helper.make_node("Cast", ["x"], ["a"], to=TensorProto.FLOAT8E5M2),
                helper.make_node("Cast", ["a"], ["y"], to=TensorProto.FLOAT),
                helper.make_node("Cast", ["x"], ["b"], to=TensorProto.INT4),
                helper.make_node("Cast", ["b"], ["z"], to=TensorProto.FLOAT),
            ],
            "g",
            [vi("x", TensorProto.FLOAT, ["n"])],
            [vi("y", TensorProto.FLOAT, ["n"]), vi("z", TensorProto.FLOAT, ["n"])],
        ),
        opset_imports=[helper.make_opsetid("", 21)],
    )
    x = np.array([1.5, -7.2, 3.0, 100.0, -0.0], np.float32)
    y, z = run_ours(model, x)
    np.testing.assert_array_equal(y, x.astype(ml_dtypes.float8_e5m2).astype(np.float32))
    np.testing.assert_array_equal(z, x.astype(ml_dtypes.int4).astype(np.float32))


def test_quantize_dequantize_per_axis() -> None:
    scale = helper.make_tensor("s", TensorProto.FLOAT, [3], [0.5, 0.1, 2.0])
    zp = helper.make_tensor("z", TensorProto.UINT8, [3], [0, 128, 10])
    q = node_model(
        "QuantizeLinear",
        [vi("x", TensorProto.FLOAT, ["n", 3])],
        [vi("y", TensorProto.UINT8, ["n", 3])],
        [scale, zp],
    )
    dq = node_model(
        "DequantizeLinear",
        [vi("x", TensorProto.UINT8, ["n", 3])],
        [vi("y", TensorProto.FLOAT, ["n", 3])],
        [scale, zp],
    )
    for n in (1, 4):
        x = np.random.default_rng(n).normal(0, 20, (n, 3)).astype(np.float32)
        check_against_ort(q, x)
        check_against_ort(dq, np.random.default_rng(n).integers(0, 255, (n, 3), dtype=np.uint8))


def test_cast_e8m0_round_mode_error() -> None:
    model = node_model(
        "Cast",
        [vi("x", TensorProto.FLOAT, ["n"])],
        [vi("y", TensorProto.FLOAT8E8M0, ["n"])],
        opset=24,
        to=TensorProto.FLOAT8E8M0,
        round_mode="down",
    )
    with pytest.raises(OnnxImportError, match="round_mode"):
        from_onnx(model)


def test_arithmetic_on_storage_types_is_a_clear_error() -> None:
    """float8 tensors hold raw codes in kernels: only astype and data movement may touch them."""
    import relax_mlir
    import relax_mlir.builder as rb
    from relax_mlir.dialects import relax as R
    from relax_mlir.errors import CompileError

    bb = rb.BlockBuilder()
    with bb.function("main", {"x": rb.tensor(["n"], "f8E4M3FN")}) as (x,):
        with bb.dataflow():
            y = bb.emit_output(R.add(x, x))
        bb.ret(y)
    with pytest.raises(CompileError, match=r"relax.add does not compute on f8E4M3FN \(a storage type\)"):
        relax_mlir.compile(bb.module)

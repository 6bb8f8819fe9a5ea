"""relax.dequantize: shape deduction (static, symbolic, unknown, errors) and its generic lowering vs numpy."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from mlir import ir
from oprun import compile_fn

import relax_mlir.builder as rb
from relax_mlir.dialects import relax as R
from relax_mlir.dialects.ops.dequantize import dequantize
from relax_mlir.dialects.types import relax_type
from relax_mlir.errors import InputError, ShapeError


def T(shape: str, dtype: str) -> str:
    return f"!relax.tensor<{shape}, {dtype}>"


OK = [
    # (layout, data type, scales type, expected result shape)
    ("q8_0", T("[4, 64]", "i8"), T("[4, 2]", "f16"), "[4, 64]"),
    ("q4_0", T("[3, 16]", "ui8"), T("[3, 1]", "f32"), "[3, 32]"),
    ("q4f16_1", T("[0, 12]", "ui32"), T("[0, 3]", "f16"), "[0, 96]"),
    ("q4_0", T('["n", 32]', "ui8"), T('["n", 2]', "f16"), '["n", 64]'),
    ("q4_0", T('["n", "16 * g"]', "ui8"), T('["n", "g"]', "f16"), '["n", "32 * g"]'),
    ("q8_0", T('["n", "?"]', "i8"), T('["?", "g"]', "f32"), '["n", "32 * g"]'),
    ("q4f16_1", T('["n", "w"]', "ui32"), T('["n", "?"]', "f16"), '["n", "8 * w"]'),
    ("q4_0", T('"*"', "ui8"), T('"*"', "f16"), '["?", "?"]'),
    ("q4_0", T('"*"', "ui8"), T('["r", 4]', "f16"), '["r", 128]'),
]


@pytest.mark.parametrize("layout, data, scales, expected", OK)
def test_deduce(params, layout: str, data: str, scales: str, expected: str) -> None:
    d, s = params(data, scales)
    assert str(relax_type(dequantize(d, s, layout).type)) == T(expected, "f32")


ERRORS = [
    ("q5_0", T("[4, 32]", "ui8"), T("[4, 2]", "f16"), "unknown layout 'q5_0'"),
    ("q4_0", T("[4, 32]", "i8"), T("[4, 2]", "f16"), "layout q4_0 needs ui8 data, got i8"),
    ("q8_0", T("[4, 64]", "i8"), T("[4, 2]", "bf16"), "scales must be f16 or f32, got bf16"),
    ("q8_0", T("[64]", "i8"), T("[4, 2]", "f16"), "operand 'data' must have rank 2"),
    ("q8_0", T("[4, 64]", "i8"), T("[5, 2]", "f16"), "data has 4 rows but scales have 5"),
    ("q4_0", T("[4, 64]", "ui8"), T("[4, 2]", "f16"), "2 groups of 32 need 32 data columns, got 64"),
    ("q4f16_1", T('["n", "4 * g + 1"]', "ui32"), T('["n", "g"]', "f16"), "need 4 \\* g data columns"),
]


@pytest.mark.parametrize("layout, data, scales, message", ERRORS)
def test_deduce_error(params, layout: str, data: str, scales: str, message: str) -> None:
    d, s = params(data, scales)
    with pytest.raises(ShapeError, match=rf"relax\.dequantize: .*{message}"):
        dequantize(d, s, layout)


# -- numpy reference (independent of relax_mlir.llm.quant) -----------------------------------------------
def reference(layout: str, data: np.ndarray, scales: np.ndarray) -> np.ndarray:
    rows, groups = scales.shape
    s = np.repeat(scales.astype(np.float32), 32, axis=1)
    if layout == "q8_0":
        return data.astype(np.float32) * s
    if layout == "q4_0":
        b = data.reshape(rows, groups, 16)
        q = np.concatenate([b & 15, b >> 4], axis=2).reshape(rows, 32 * groups).astype(np.float32) - 8
        return q * s
    shifts = np.arange(8, dtype=np.uint32) * 4
    q = ((data[:, :, None] >> shifts) & 15).reshape(rows, 32 * groups).astype(np.float32) - 7
    return q * s


def random_quantized(layout: str, rows: int, groups: int, sdtype: str, seed: int) -> tuple[Any, Any]:
    rng = np.random.default_rng(seed)
    scales = rng.uniform(-2, 2, (rows, groups)).astype(sdtype)
    if layout == "q8_0":
        return rng.integers(-128, 128, (rows, 32 * groups)).astype(np.int8), scales
    if layout == "q4_0":
        return rng.integers(0, 256, (rows, 16 * groups)).astype(np.uint8), scales
    return rng.integers(0, 2**32, (rows, 4 * groups), dtype=np.uint32), scales


DTYPES = {"q8_0": "i8", "q4_0": "ui8", "q4f16_1": "ui32"}
PER = {"q8_0": 32, "q4_0": 16, "q4f16_1": 4}


@pytest.mark.parametrize("layout", sorted(DTYPES))
@pytest.mark.parametrize("sdtype", ["float16", "float32"])
def test_symbolic_rows_and_groups_match_numpy(layout: str, sdtype: str) -> None:
    sd = {"float16": "f16", "float32": "f32"}[sdtype]
    exe = compile_fn(
        {"d": rb.tensor(["n", f"{PER[layout]} * g"], DTYPES[layout]), "s": rb.tensor(["n", "g"], sd)},
        lambda d, s: R.dequantize(d, s, layout),
    )
    for rows, groups in ((0, 2), (1, 1), (7, 3), (5, 0), (16, 4)):
        data, scales = random_quantized(layout, rows, groups, sdtype, rows + groups)
        np.testing.assert_array_equal(exe(data, scales), reference(layout, data, scales))


def test_static_shape_matches_numpy() -> None:
    exe = compile_fn(
        {"d": rb.tensor([3, 48], "ui8"), "s": rb.tensor([3, 3], "f16")},
        lambda d, s: R.dequantize(d, s, "q4_0"),
    )
    data, scales = random_quantized("q4_0", 3, 3, "float16", 0)
    np.testing.assert_array_equal(exe(data, scales), reference("q4_0", data, scales))


def test_mismatched_operands_are_checked_at_run_time() -> None:
    """Rows (``n`` vs ``m``) and columns (``c`` vs 16 * ``g``) the deduction could only assume equal."""
    exe = compile_fn(
        {"d": rb.tensor(["n", "c"], "ui8"), "s": rb.tensor(["m", "g"], "f32")},
        lambda d, s: R.dequantize(d, s, "q4_0"),
    )
    data, scales = random_quantized("q4_0", 2, 2, "float32", 1)
    np.testing.assert_array_equal(exe(data, scales), reference("q4_0", data, scales))
    with pytest.raises(InputError):
        exe(data, scales[:1])
    with pytest.raises(InputError):
        exe(data[:, :16], scales)


def test_linear_layer_of_a_quantized_weight() -> None:
    """The pattern the LLM emits: ``x @ dequantize(d, s).T`` with x [b, k]."""

    def build(x: ir.Value, d: ir.Value, s: ir.Value) -> ir.Value:
        return R.matmul(x, R.permute_dims(R.dequantize(d, s, "q8_0")))

    exe = compile_fn(
        {
            "x": rb.tensor(["b", "32 * g"], "f32"),
            "d": rb.tensor([5, "32 * g"], "i8"),
            "s": rb.tensor([5, "g"], "f16"),
        },
        build,
    )
    data, scales = random_quantized("q8_0", 5, 2, "float16", 2)
    x = np.random.default_rng(3).standard_normal((3, 64)).astype(np.float32)
    np.testing.assert_allclose(
        exe(x, data, scales), x @ reference("q8_0", data, scales).T, rtol=1e-5, atol=1e-4
    )

"""Crashes of the CPU runtime found by feeding edge inputs (issue 17), each reproduced in a child process.

- a data-dependent result (nonzero, unique) returned several times: every returned buffer is freed once;
- a CNN (strided conv, batch norm, max pool, residual add, global pool) at batch 0;
- an allocation too large for the machine: a clear OutOfMemoryError instead of a segfault.
"""

from __future__ import annotations

import pytest
from isolated import run_isolated

# -- results returned more than once ---------------------------------------------------------------------

_RETURNED_TWICE = """
import numpy as np
import relax_mlir.builder as rb
from relax_mlir.dialects import relax as R
from relax_mlir.runtime.compiler import compile

def module(params, body, dataflow=True):
    bb = rb.BlockBuilder()
    with bb.function("main", params) as args:
        if dataflow:
            with bb.dataflow():
                outs = body(bb, *args)
        else:
            outs = body(bb, *args)
        bb.ret(*outs)
    return str(bb.module)

def nonzero_views(bb, x):
    nz = bb.emit_output(R.nonzero(x))
    k = bb.emit_output(R.match_cast(nz, rb.tensor([2, "k"], "i64")))
    return [nz, k, bb.emit_output(R.flatten(k)), bb.emit_output(R.permute_dims(k)), nz]

def input_views(bb, x):
    k = R.match_cast(x, rb.tensor(["k", 4]))
    return [x, k, R.flatten(k), x, R.reshape(k, [4, "k"])]

CASES = {
    "nonzero": (
        module({"x": rb.tensor(["n", 4])}, lambda bb, x: [bb.emit_output(R.nonzero(x))] * 2),
        lambda x: [np.stack(np.nonzero(x))] * 2,
    ),
    "unique": (
        module({"x": rb.tensor(["n", 4])}, lambda bb, x: [bb.emit_output(R.unique(x))] * 3),
        lambda x: [np.unique(x)] * 3,
    ),
    "nonzero_views": (
        module({"x": rb.tensor(["n", 4])}, nonzero_views),
        lambda x: [np.stack(np.nonzero(x)), np.stack(np.nonzero(x)), np.stack(np.nonzero(x)).ravel(),
                   np.stack(np.nonzero(x)).T, np.stack(np.nonzero(x))],
    ),
    "param": (module({"x": rb.tensor(["n", 4])}, lambda bb, x: [x, x], False), lambda x: [x, x]),
    "unknown_param": (module({"x": rb.tensor(["?", 4])}, lambda bb, x: [x, x], False), lambda x: [x, x]),
    "param_views": (
        module({"x": rb.tensor(["?", 4])}, input_views, False),
        lambda x: [x, x, x.ravel(), x, x.reshape(4, -1)],
    ),
}
text, reference = CASES[CASE]
f = compile(text, opt_level=LEVEL)
rng = np.random.default_rng(0)
for n in (0, 1, 3, 8, 3):
    x = (rng.standard_normal((n, 4)) * (rng.random((n, 4)) < 0.5)).astype(np.float32)
    before = x.copy()
    outs = f(x)
    want = reference(before)
    assert len(outs) == len(want)
    for got, expected in zip(outs, want):
        assert got.shape == expected.shape and got.dtype == expected.dtype, (got.shape, expected.shape)
        np.testing.assert_array_equal(got, expected)
    outs[0][...] = 7  # every result owns its memory
    for got, expected in zip(outs[1:], want[1:]):
        np.testing.assert_array_equal(got, expected)
    np.testing.assert_array_equal(x, before)
print("OK")
"""


@pytest.mark.parametrize("level", [0, 2])
@pytest.mark.parametrize(
    "case", ["nonzero", "unique", "nonzero_views", "param", "unknown_param", "param_views"]
)
def test_result_returned_twice(case: str, level: int) -> None:
    """``return %0, %0`` of a data-dependent result used to free its buffer twice."""
    code = f"CASE = {case!r}\nLEVEL = {level}\n" + _RETURNED_TWICE
    outcome = run_isolated(code)
    assert outcome.returncode == 0 and outcome.last_line == "OK", outcome.stderr[-3000:]


def test_onnx_output_listed_twice() -> None:
    """An ONNX graph listing one NonZero output twice."""
    code = """
    import numpy as np
    import onnx
    from onnx import helper, TensorProto
    import relax_mlir
    from relax_mlir.frontend.onnx import from_onnx

    node = helper.make_node("NonZero", ["x"], ["y"])
    x_info = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["n", "m"])
    y_info = helper.make_tensor_value_info("y", TensorProto.INT64, None)
    graph = helper.make_graph([node], "g", [x_info], [y_info, y_info])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    f = relax_mlir.compile(from_onnx(model), opt_level=1)
    rng = np.random.default_rng(1)
    for n in (0, 1, 5):
        x = (rng.standard_normal((n, 3)) * (rng.random((n, 3)) < 0.5)).astype(np.float32)
        a, b = f(x)
        np.testing.assert_array_equal(a, np.stack(np.nonzero(x)))
        np.testing.assert_array_equal(b, np.stack(np.nonzero(x)))
    print("OK")
    """
    outcome = run_isolated(code)
    assert outcome.returncode == 0 and outcome.last_line == "OK", outcome.stderr[-3000:]

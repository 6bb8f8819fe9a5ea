"""relax-fold-batch-norm: Conv (+ bias) + BatchNormalization with constant statistics, imported from ONNX,
computes the numbers of a float64 numpy reference after the fold (relax-O3) at several batch sizes and
image sizes (0, 1, odd), for plain, strided, grouped and depthwise 2-D convolutions and a 1-D one; the fold
removes every batch_norm, and batch norms it must not fold (statistics that are inputs, a convolution used
twice) stay and still compute the right numbers."""

from __future__ import annotations

import numpy as np
import pytest
from mlir import ir
from onnx import TensorProto, helper, numpy_helper
from test_cleanup import run
from test_lower_nn import conv2d_ref

from relax_mlir.frontend.onnx import from_onnx
from relax_mlir.targets import compile

RNG = np.random.default_rng(7)
EPS = 1e-3


def _stats(c: int) -> list[np.ndarray]:
    """gamma, beta, mean, var of ``c`` channels (var well away from 0)."""
    return [
        RNG.uniform(0.5, 2.0, c).astype(np.float32),
        RNG.standard_normal(c).astype(np.float32),
        RNG.standard_normal(c).astype(np.float32),
        RNG.uniform(0.1, 3.0, c).astype(np.float32),
    ]


def _conv_ref(x: np.ndarray, w: np.ndarray, stride: int, pad: int, groups: int) -> np.ndarray:
    """NC<spatial> x OI<spatial> convolution in float64 by ``conv2d_ref`` (1-D: a unit height)."""
    if x.ndim == 4:
        return conv2d_ref(x, w, (stride, stride), (pad,) * 4, (1, 1), groups)
    return conv2d_ref(x[:, :, None], w[:, :, None], (1, stride), (0, pad, 0, pad), (1, 1), groups)[:, :, 0]


def _model(
    cin: int, cout: int, k: int, stride: int, groups: int, bias: bool, spatial: int, stats_inputs: bool
):
    pad = k // 2
    w = (
        RNG.standard_normal((cout, cin // groups, *[k] * spatial)) / np.sqrt(cin // groups * k**spatial)
    ).astype(np.float32)
    b = RNG.standard_normal(cout).astype(np.float32)
    stats = _stats(cout)
    names = ["gamma", "beta", "mean", "var"]
    inits = [numpy_helper.from_array(w, "w"), numpy_helper.from_array(b, "b")]
    inputs = [
        helper.make_tensor_value_info(
            "x", TensorProto.FLOAT, ["n", cin, *(["h", "w"][:spatial] if spatial == 2 else ["l"])]
        )
    ]
    if stats_inputs:
        inputs += [helper.make_tensor_value_info(s, TensorProto.FLOAT, [cout]) for s in names]
    else:
        inits += [numpy_helper.from_array(a, s) for s, a in zip(names, stats, strict=True)]
    conv = helper.make_node(
        "Conv",
        ["x", "w", "b"] if bias else ["x", "w"],
        ["c"],
        kernel_shape=[k] * spatial,
        strides=[stride] * spatial,
        pads=[pad] * 2 * spatial,
        group=groups,
    )
    bn = helper.make_node("BatchNormalization", ["c", *names], ["y"], epsilon=EPS)
    graph = helper.make_graph(
        [conv, bn], "conv_bn", inputs, [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], inits
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])

    def reference(x: np.ndarray) -> np.ndarray:
        y = _conv_ref(x, w, stride, pad, groups)
        if bias:
            y += b.astype(np.float64)[:, None, *([None] * (spatial - 1))]
        g, be, m, v = (s.astype(np.float64)[:, None, *([None] * (spatial - 1))] for s in stats)
        return (y - m) / np.sqrt(v + EPS) * g + be

    return model, stats, reference


def _batch_norms_after_fold(model) -> int:
    """The batch_norm, multiply and rsqrt ops left after folding ``model``'s batch norms and constants."""
    module = run(from_onnx(model), "relax-canonicalize,relax-fold-batch-norm,relax-fold-constants,relax-dce")
    count = [0]

    def visit(op: ir.Operation) -> ir.WalkResult:
        count[0] += op.name in ("relax.batch_norm", "relax.multiply", "relax.rsqrt")
        return ir.WalkResult.ADVANCE

    module.operation.walk(visit)
    return count[0]


CASES = [  # cin, cout, k, stride, groups, bias, spatial
    (3, 8, 3, 1, 1, True, 2),
    (4, 6, 3, 2, 1, False, 2),
    (6, 6, 3, 1, 6, True, 2),  # depthwise
    (4, 6, 1, 1, 2, True, 2),  # grouped 1x1
    (16, 32, 1, 1, 1, False, 2),
    (5, 7, 3, 1, 1, True, 1),
]
SIZES = [(1, 5), (3, 1), (0, 4), (2, 17)]  # (batch, image side)


@pytest.mark.parametrize("case", CASES, ids=lambda c: "c{}-f{}-k{}-s{}-g{}-b{}-{}d".format(*c))
def test_folded_matches_reference(case) -> None:
    model, _, reference = _model(*case, stats_inputs=False)
    assert _batch_norms_after_fold(model) == 0  # the statistics, scale and rsqrt are all folded away
    exe = compile(from_onnx(model), opt_level=3)
    cin, spatial = case[0], case[-1]
    for n, side in SIZES:
        x = RNG.standard_normal((n, cin, *[side] * spatial)).astype(np.float32)
        want = reference(x)
        got = np.asarray(exe(x))
        assert got.shape == want.shape
        np.testing.assert_allclose(
            got, want, rtol=1e-4, atol=1e-4 * max(1.0, float(np.abs(want).max(initial=0)))
        )


def test_statistics_from_inputs_are_not_folded() -> None:
    model, stats, reference = _model(3, 8, 3, 1, 1, True, 2, stats_inputs=True)
    assert _batch_norms_after_fold(model) == 1
    exe = compile(from_onnx(model), opt_level=3)
    for n, side in SIZES:
        x = RNG.standard_normal((n, 3, side, side)).astype(np.float32)
        np.testing.assert_allclose(np.asarray(exe(x, *stats)), reference(x), rtol=1e-4, atol=1e-4)


def test_convolution_used_twice_is_not_folded() -> None:
    model, _, reference = _model(3, 4, 3, 1, 1, False, 2, stats_inputs=False)
    model.graph.output.append(helper.make_tensor_value_info("c", TensorProto.FLOAT, None))
    module = from_onnx(model)
    assert _batch_norms_after_fold(model) >= 1
    exe = compile(module, opt_level=3)
    x = RNG.standard_normal((2, 3, 9, 9)).astype(np.float32)
    y, c = (np.asarray(v) for v in exe(x))
    np.testing.assert_allclose(y, reference(x), rtol=1e-4, atol=1e-4)
    assert c.shape == (2, 4, 9, 9)

"""The direct convolution of grouped and depthwise convs (``dialects/ops/conv.py: _direct_conv``) against
numpy: vectors of output columns read in place from the input, borders shuffled next to zeros, tap rows in
the padding skipped, the epilogue fused into its parallel loop."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest
from oprun import build_fn, rand
from test_lower_nn import conv2d_ref

import relax_mlir.builder as rb
from relax_mlir.dialects import relax as R
from relax_mlir.dialects.ops.conv_kernels import _channel_block
from relax_mlir.lowering.vectors import target_registers
from relax_mlir.runtime.executable import Executable
from relax_mlir.targets import compile

TOL = {"rtol": 1e-4, "atol": 1e-4}


F64_LANES = target_registers("host").lanes(64)  # f64 per vector register of this machine


def compiled(params: dict, body: Callable, level: int = 2) -> tuple[Executable, str]:
    stages: dict[str, str] = {}
    text = str(build_fn(params, body))
    exe = compile(text, opt_level=level, on_stage=lambda name, ir: stages.__setitem__(name, ir))
    return exe, stages["host"]


# (channels, height, width), weight shape, groups, strides, pads (top, left, bottom, right), dilation, batches
CASES = {
    "dw-3x3-c1": ((1, 5, 7), (1, 1, 3, 3), 1, (1, 1), (1, 1, 1, 1), (1, 1), (0, 1, 2)),
    "dw-3x3-c3-odd": ((3, 9, 37), (3, 1, 3, 3), 3, (1, 1), (1, 1, 1, 1), (1, 1), (1, 3)),
    "dw-3x3-s2": ((7, 13, 29), (7, 1, 3, 3), 7, (2, 2), (1, 1, 1, 1), (1, 1), (1, 2)),
    "dw-5x5-s2-asym": ((5, 16, 33), (5, 1, 5, 5), 5, (2, 2), (2, 1, 0, 3), (1, 1), (1, 3)),
    "dw-dilated": ((4, 11, 20), (4, 1, 3, 3), 4, (1, 1), (2, 2, 2, 2), (2, 2), (1, 2)),
    "dw-s3-no-pad": ((6, 17, 50), (6, 1, 3, 2), 6, (3, 3), (0, 0, 0, 0), (1, 2), (1,)),
    "dw-wide-rows": ((2, 4, 70), (2, 1, 3, 3), 2, (1, 1), (1, 1, 1, 1), (1, 1), (1, 2)),  # 2 column blocks
    "dw-1x1-image": ((5, 1, 1), (5, 1, 3, 3), 5, (1, 1), (1, 1, 1, 1), (1, 1), (1, 2)),
    "dw-window-beyond-image": ((3, 2, 3), (3, 1, 5, 5), 3, (2, 1), (2, 3, 2, 3), (1, 1), (1,)),
    "dw-multiplier-2": ((3, 8, 18), (6, 1, 3, 3), 3, (1, 2), (1, 1, 1, 1), (1, 1), (1, 2)),
    "grouped-2": ((8, 10, 19), (6, 4, 3, 3), 2, (1, 1), (1, 1, 1, 1), (1, 1), (1, 2)),
    "grouped-4-s2": ((12, 9, 17), (8, 3, 3, 3), 4, (2, 2), (1, 0, 1, 2), (1, 1), (1, 3)),
    "grouped-1x1": ((16, 6, 21), (8, 4, 1, 1), 4, (1, 1), (0, 0, 0, 0), (1, 1), (1, 2)),
    "grouped-many-taps": (
        (10, 8, 23),
        (4, 5, 3, 3),
        2,
        (1, 1),
        (1, 1, 1, 1),
        (1, 1),
        (1, 2),
    ),  # 45 taps: loop
    "grouped-large-work": (
        (32, 32, 32),
        (32, 4, 3, 3),
        8,
        (1, 1),
        (1, 1, 1, 1),
        (1, 1),
        (1, 2),
    ),  # row blocks
    # plain convolutions with few input channels (at most SMALL_CONV_TAPS taps per output)
    "plain-3ch-s2": ((3, 17, 33), (8, 3, 3, 3), 1, (2, 2), (1, 1, 1, 1), (1, 1), (0, 1, 2)),
    "plain-16ch": ((16, 12, 20), (12, 16, 3, 3), 1, (1, 1), (1, 1, 1, 1), (1, 1), (1, 3)),
    "plain-5x5-odd": ((5, 9, 11), (7, 5, 5, 5), 1, (1, 2), (2, 2, 1, 0), (1, 1), (1, 2)),
    "plain-1ch-1x1-image": ((1, 1, 1), (4, 1, 3, 3), 1, (1, 1), (1, 1, 1, 1), (1, 1), (1, 2)),
    # rows of one vector: 8 output channels at once (_channel_block), 40 of them; strided, 13 columns
    "plain-narrow-8-channels": ((32, 9, 16), (40, 32, 3, 3), 1, (1, 1), (1, 1, 1, 1), (1, 1), (0, 1, 3)),
    "plain-narrow-s2": ((8, 11, 25), (24, 8, 3, 3), 1, (2, 2), (1, 1, 1, 1), (1, 1), (1, 2)),
}


@pytest.mark.parametrize("case", list(CASES))
def test_direct_conv(case: str) -> None:
    (c, h, w_), wshape, groups, strides, pads, dilation, batches = CASES[case]
    exe, host = compiled(
        {"x": rb.tensor(["n", c, h, w_]), "w": rb.tensor(list(wshape))},
        lambda x, w: R.conv2d(x, w, strides, pads, dilation, groups),
    )
    w = rand(wshape, low=-1, high=1)
    for n in batches:
        x = rand((n, c, h, w_), low=-1, high=1)
        np.testing.assert_allclose(exe(x, w), conv2d_ref(x, w, strides, pads, dilation, groups), **TOL)
    # vectors of output columns, not MLIR's scalar named depthwise/grouped convolution loops
    assert "vector.fma" in host and "linalg.depthwise" not in host and "linalg.conv_2d" not in host


@pytest.mark.parametrize("level", [1, 3])
def test_direct_conv_levels_and_f64(level: int) -> None:
    exe, host = compiled(
        {"x": rb.tensor(["n", 4, 7, 19], "f64"), "w": rb.tensor([4, 1, 3, 3], "f64")},
        lambda x, w: R.conv2d(x, w, 2, 1, 1, 4),
        level,
    )
    w = rand((4, 1, 3, 3), np.float64, low=-1, high=1)
    for n in (0, 1, 2):
        x = rand((n, 4, 7, 19), np.float64, low=-1, high=1)
        np.testing.assert_allclose(exe(x, w), conv2d_ref(x, w, (2, 2), (1, 1, 1, 1), (1, 1), 4), rtol=1e-12)
    assert f"vector<{F64_LANES}xf64>" in host


def test_direct_conv1d_grouped() -> None:
    exe, host = compiled(
        {"x": rb.tensor(["n", 6, 41]), "w": rb.tensor([6, 2, 3])}, lambda x, w: R.conv1d(x, w, 2, 1, 1, 3)
    )
    w = rand((6, 2, 3), low=-1, high=1)
    for n in (1, 2):
        x = rand((n, 6, 41), low=-1, high=1)
        want = conv2d_ref(x[:, :, None], w[:, :, None], (1, 2), (0, 1, 0, 1), (1, 1), 3)[:, :, 0]
        np.testing.assert_allclose(exe(x, w), want, **TOL)
    assert "vector.fma" in host and "linalg.conv_2d" not in host


def test_depthwise_bias_relu6_residual_fused() -> None:
    """A MobileNet block's depthwise conv + bias + ReLU6 + residual: the epilogue runs inside the conv's
    loop over row blocks (its destination is sized by a ``tensor.dim`` after the loop: moved before it)."""
    c = 16

    def block(x, w, b):  # noqa: ANN001, ANN202
        return R.add(R.clip(R.add(R.conv2d(x, w, 1, 1, 1, c), b), 0.0, 6.0), x)

    params = {"x": rb.tensor(["n", c, 20, 24]), "w": rb.tensor([c, 1, 3, 3]), "b": rb.tensor([c, 1, 1])}
    exe, host = compiled(params, block)
    w, b = rand((c, 1, 3, 3), low=-2, high=2), rand((c, 1, 1), low=-1, high=3)
    for n in (0, 1, 3):
        x = rand((n, c, 20, 24), low=-2, high=2)
        want = np.clip(conv2d_ref(x, w, (1, 1), (1, 1, 1, 1), (1, 1), c) + b, 0, 6) + x
        np.testing.assert_allclose(exe(x, w, b), want, **TOL)
    kernel = host[: host.index("func.func @main")]
    assert kernel.count("scf.forall (") == 1 and "linalg.generic" not in kernel  # vectorized epilogue
    loop = kernel[kernel.index("scf.forall (") : kernel.index("scf.forall.in_parallel")]
    assert "arith.minimumf" in loop and "arith.maximumf" in loop


def test_narrow_rows_block_more_output_channels() -> None:
    """Rows of at most one vector of outputs take up to ``ACCUMULATORS`` output channels per block (one
    accumulator each), wider rows ``MAX_CHANNEL_BLOCK``; always a divisor of the group's channels."""
    assert _channel_block(32, 1) == 8 and _channel_block(40, 1) == 8 and _channel_block(12, 1) == 6
    assert _channel_block(32, 2) == 4 and _channel_block(32, 4) == 4 and _channel_block(7, 1) == 7
    assert _channel_block(1, 1) == 1 and _channel_block(6, 3) == 3


def test_symbolic_width_takes_the_named_convolution() -> None:
    """A grouped convolution of a symbolic width is not direct (its column positions are not static): the
    named linalg convolution, scheduled by ``conv-window``."""
    exe, host = compiled(
        {"x": rb.tensor(["n", 4, 6, "w"]), "w": rb.tensor([4, 1, 3, 3])},
        lambda x, w: R.conv2d(x, w, 1, 1, 1, 4),
    )
    w = rand((4, 1, 3, 3), low=-1, high=1)
    for shape in [(1, 4, 6, 1), (2, 4, 6, 19)]:
        x = rand(shape, low=-1, high=1)
        np.testing.assert_allclose(exe(x, w), conv2d_ref(x, w, (1, 1), (1, 1, 1, 1), (1, 1), 4), **TOL)
    assert "linalg.depthwise_conv_2d_nchw_chw" in host


def test_wide_rows_of_many_taps_take_im2col() -> None:
    """A plain conv of 3 channels with 160 output columns would unroll more than ``MAX_ROW_FMAS`` FMAs per
    row (10 vectors x 4 output channels x 27 taps): im2col + matmul instead (compile time)."""
    exe, host = compiled(
        {"x": rb.tensor(["n", 3, 4, 160]), "w": rb.tensor([8, 3, 3, 3])}, lambda x, w: R.conv2d(x, w, 1, 1)
    )
    w = rand((8, 3, 3, 3), low=-1, high=1)
    x = rand((2, 3, 4, 160), low=-1, high=1)
    np.testing.assert_allclose(exe(x, w), conv2d_ref(x, w, (1, 1), (1, 1, 1, 1), (1, 1), 1), **TOL)
    assert "tensor<3x3x3x4x160xf32>" in host  # the im2col columns

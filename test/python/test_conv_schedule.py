"""Fast convolution and pooling kernels against numpy, at O1-O3: im2col + matmul for plain convs
(``dialects/ops/conv.py``), the sliding-window schedule for grouped/depthwise convs and pooling
(``transforms/schedules/conv.py``), symbolic batch and spatial dims, and fused bias/ReLU/residual epilogues."""

from __future__ import annotations

import re
from collections.abc import Callable

import numpy as np
import pytest
from oprun import build_fn, rand
from test_lower_nn import conv2d_ref, pool_ref

import relax_mlir.builder as rb
from relax_mlir.dialects import relax as R
from relax_mlir.errors import InputError
from relax_mlir.runtime.executable import Executable
from relax_mlir.targets import compile

TOL = {"rtol": 1e-4, "atol": 1e-4}
_CACHE: dict[tuple[str, int], tuple[Executable, str]] = {}


def compiled(params: dict, body: Callable, level: int) -> tuple[Executable, str]:
    """The executable and its host IR (kernels after relax-schedule-kernels), memoized."""
    text = str(build_fn(params, body))
    if (text, level) not in _CACHE:
        stages: dict[str, str] = {}
        exe = compile(text, opt_level=level, on_stage=lambda name, ir: stages.__setitem__(name, ir))
        _CACHE[text, level] = (exe, stages["host"])
    return _CACHE[text, level]


def _pair(v: int | tuple[int, int]) -> tuple[int, int]:
    return (v, v) if isinstance(v, int) else v


def _pads(p: int | tuple[int, ...]) -> tuple[int, int, int, int]:
    if isinstance(p, int):
        return (p, p, p, p)
    return (*p, *p) if len(p) == 2 else p  # type: ignore[return-value]


# x dims (names are symbols), weight shape, strides, padding, dilation, groups, concrete x shapes
CONVS = {
    "3x3": (["n", 3, 16, 16], (8, 3, 3, 3), 1, 1, 1, 1, [(1, 3, 16, 16), (3, 3, 16, 16), (0, 3, 16, 16)]),
    "7x7-s2-odd": (["n", 5, 17, 13], (7, 5, 7, 7), 2, 3, 1, 1, [(1, 5, 17, 13), (2, 5, 17, 13)]),
    "3x3-s3-dilated": (["n", 3, 15, 19], (4, 3, 3, 3), 3, 1, 2, 1, [(1, 3, 15, 19), (2, 3, 15, 19)]),
    "1x1-s2": (["n", 16, 9, 9], (12, 16, 1, 1), 2, 0, 1, 1, [(1, 16, 9, 9), (3, 16, 9, 9)]),
    "symbolic-w": (
        ["n", 4, 12, "w"],
        (6, 4, 3, 3),
        (1, 2),
        (1, 0, 2, 1),
        (2, 1),
        1,
        [(1, 4, 12, 1), (2, 4, 12, 9), (1, 4, 12, 40)],
    ),
    "1x1-s1-symbolic-w": (["n", 6, 7, "w"], (5, 6, 1, 1), 1, 0, 1, 1, [(1, 6, 7, 1), (2, 6, 7, 9)]),
    "symbolic-hw": (["n", 4, "h", "w"], (6, 4, 3, 3), 1, 1, 1, 1, [(1, 4, 5, 7), (2, 4, 11, 3)]),
    "grouped": (["n", 8, 10, 10], (8, 2, 3, 3), 1, 1, 1, 4, [(1, 8, 10, 10), (2, 8, 10, 10)]),
    "depthwise-s2": (["n", 8, 11, 11], (8, 1, 3, 3), 2, 1, 1, 8, [(1, 8, 11, 11), (2, 8, 11, 11)]),
}


@pytest.mark.parametrize("level", [1, 2, 3])
@pytest.mark.parametrize("case", list(CONVS))
def test_conv2d_kernels(case: str, level: int) -> None:
    dims, wshape, strides, padding, dilation, groups, shapes = CONVS[case]
    exe, host = compiled(
        {"x": rb.tensor(dims), "w": rb.tensor(list(wshape))},
        lambda x, w: R.conv2d(x, w, strides, padding, dilation, groups),
        level,
    )
    w = rand(wshape, low=-1, high=1)
    for shape in shapes:
        x = rand(shape, low=-1, high=1)
        want = conv2d_ref(x, w, _pair(strides), _pads(padding), _pair(dilation), groups)
        np.testing.assert_allclose(exe(x, w), want, **TOL)
    if groups == 1:  # im2col + a tiled, vectorized matmul instead of a scalar convolution loop nest
        assert "linalg.conv_2d" not in host and "vector.fma" in host
    if case.startswith("1x1-s1"):  # a pointwise conv multiplies the image itself: no im2col columns
        assert "tensor<6x1x1x7x" not in host


# x shape (n symbolic), weight, strides, pads (top, left, bottom, right), dilation, the im2col columns'
# (over 32 channels of 3x3: fewer run as direct convolutions, ``test_conv_direct.py``)
# type of one block of output rows (MIN_BLOCK_COLUMNS = 256 pixels: several blocks per image; each image
# has at least MIN_SPLIT_WORK multiply-adds, smaller ones are one block)
BLOCKED = {
    # OH 18 x OW 64: 3 blocks of 6 rows; asymmetric and dilated, the first block starts in the padding
    "3x3-dilated": ((36, 20, 64), (8, 36, 3, 3), (1, 1), (2, 1, 0, 3), (2, 2), "tensor<36x3x3x6x64xf32>"),
    # OH 20 x OW 65 (odd): 5 blocks of 4 rows, strided rows
    "3x3-s2-odd": ((36, 40, 130), (8, 36, 3, 3), (2, 2), (1, 1, 1, 1), (1, 1), "tensor<36x3x3x4x65xf32>"),
    # OH 12 x OW 64: 3 blocks of 4 input rows multiplied in place (no columns)
    "1x1": ((16, 12, 64), (24, 16, 1, 1), (1, 1), (0, 0, 0, 0), (1, 1), "tensor<16x4x64xf32>"),
}


@pytest.mark.parametrize("case", list(BLOCKED))
def test_conv2d_row_blocks(case: str) -> None:
    """Each image is split into blocks of output rows, each block one iteration of the kernel's parallel
    loop (so batch 1 runs on several threads) with its own padded rows and columns."""
    (c, h, w_), wshape, strides, pads, dilation, cols = BLOCKED[case]
    exe, host = compiled(
        {"x": rb.tensor(["n", c, h, w_]), "w": rb.tensor(list(wshape))},
        lambda x, w: R.conv2d(x, w, strides, pads, dilation),
        2,
    )
    w = rand(wshape, low=-1, high=1)
    for n in (0, 1, 2):
        x = rand((n, c, h, w_), low=-1, high=1)
        np.testing.assert_allclose(exe(x, w), conv2d_ref(x, w, strides, pads, dilation, 1), **TOL)
    assert cols in host and re.search(r"scf\.forall \(%\w+, %\w+\) in", host)  # images x row blocks


def test_conv1d_symbolic_length() -> None:
    exe, host = compiled(
        {"x": rb.tensor(["n", 6, "l"]), "w": rb.tensor([10, 6, 5])}, lambda x, w: R.conv1d(x, w, 2, 2), 1
    )
    w = rand((10, 6, 5), low=-1, high=1)
    for n, length in [(1, 1), (2, 17), (1, 64)]:
        x = rand((n, 6, length), low=-1, high=1)
        want = conv2d_ref(x[:, :, None], w[:, :, None], (1, 2), (0, 2, 0, 2), (1, 1), 1)[:, :, 0]
        np.testing.assert_allclose(exe(x, w), want, **TOL)
    assert "vector.fma" in host


@pytest.mark.parametrize("level", [2, 3])
def test_conv_bias_relu_residual(level: int) -> None:
    """The CNN's block: conv + bias, ReLU, conv + bias + residual, ReLU (epilogues fuse at O2+, into the
    conv's parallel loop: ``transforms/fuse_epilogue.py``)."""
    c = 16

    def block(x, w1, b1, w2, b2):  # noqa: ANN001, ANN202
        y = R.relu(R.add(R.conv2d(x, w1, 1, 1), b1))
        return R.relu(R.add(R.add(R.conv2d(y, w2, 1, 1), b2), x))

    params = {
        "x": rb.tensor(["n", c, 12, 12]),
        "w1": rb.tensor([c, c, 3, 3]),
        "b1": rb.tensor([c, 1, 1]),
        "w2": rb.tensor([c, c, 3, 3]),
        "b2": rb.tensor([c, 1, 1]),
    }
    exe, host = compiled(params, block, level)
    w1, w2 = rand((c, c, 3, 3), low=-0.3, high=0.3), rand((c, c, 3, 3), low=-0.2, high=0.2)
    b1, b2 = rand((c, 1, 1), low=-1, high=1), rand((c, 1, 1), low=-0.5, high=0.5)
    for n in (0, 1, 3):
        x = rand((n, c, 12, 12), low=-1, high=1)
        y = np.maximum(conv2d_ref(x, w1, (1, 1), (1, 1, 1, 1), (1, 1), 1) + b1, 0)
        want = np.maximum(conv2d_ref(y, w2, (1, 1), (1, 1, 1, 1), (1, 1), 1) + b2 + x, 0)
        np.testing.assert_allclose(exe(x, w1, b1, w2, b2), want, **TOL)
    # each epilogue runs inside its conv's loop over row blocks (one loop per kernel, vectorized on the
    # block: no linalg op left), the bias read once per row and broadcast (no broadcasting transfer_read)
    assert host.count("scf.forall (") == 2 and "linalg.generic" not in host
    assert "permutation_map" not in host and "tensor.extract %" in host


def test_conv_result_used_twice() -> None:
    """A conv result read by its epilogue and also returned stays in its own buffer (not fused into the
    loop, which would overwrite it), at odd sizes and an empty batch."""
    exe, _ = compiled(
        {"x": rb.tensor(["n", 3, 9, 33]), "w": rb.tensor([5, 3, 3, 3]), "b": rb.tensor([5, 1, 1])},
        lambda x, w, b: (lambda y: (R.relu(R.add(y, b)), y))(R.conv2d(x, w, 1, 1)),
        2,
    )
    w, b = rand((5, 3, 3, 3), low=-1, high=1), rand((5, 1, 1), low=-1, high=1)
    for n in (0, 1, 2):
        x = rand((n, 3, 9, 33), low=-1, high=1)
        y = conv2d_ref(x, w, (1, 1), (1, 1, 1, 1), (1, 1), 1)
        got = exe(x, w, b)
        np.testing.assert_allclose(got[0], np.maximum(y + b, 0), **TOL)
        np.testing.assert_allclose(got[1], y, **TOL)


@pytest.mark.parametrize("level", [1, 3])
@pytest.mark.parametrize(
    "kind, kernel, strides, padding", [("max", 3, 2, 1), ("max", 2, 1, 0), ("avg", 3, 1, 1), ("avg", 2, 2, 0)]
)
def test_pool2d_vectorized(kind: str, kernel: int, strides: int, padding: int, level: int) -> None:
    pool = R.max_pool2d if kind == "max" else R.avg_pool2d
    exe, host = compiled(
        {"x": rb.tensor(["n", 4, 19, 19])}, lambda x: pool(x, kernel, strides, padding), level
    )
    for n in (1, 2):
        x = rand((n, 4, 19, 19), low=-1, high=1)
        want = pool_ref(x, (kernel, kernel), (strides, strides), (padding,) * 4, (1, 1), False, kind)
        np.testing.assert_allclose(exe(x), want, **TOL)
    assert "linalg.pooling" not in host  # tiled, decomposed to 1-D windows and vectorized


def test_wide_pool_windows_stay_loops() -> None:
    """A window row wider than MAX_WINDOW_COLUMNS is not vectorized (that unrolls one op per column: a width
    of 2**31 never finished compiling); it computes as loops, and an input too small for it is an
    InputError, not an allocation of a negative size."""
    exe, _ = compiled({"x": rb.tensor(["n", 2, 3, "w"])}, lambda x: R.max_pool2d(x, (2, 70), (1, 1)), 1)
    for w in (70, 71, 100):
        x = rand((1, 2, 3, w), low=-1, high=1)
        want = pool_ref(x, (2, 70), (1, 1), (0, 0, 0, 0), (1, 1), False, "max")
        np.testing.assert_allclose(exe(x), want, **TOL)
    huge, _ = compiled({"x": rb.tensor(["n", 1, 4, "w"])}, lambda x: R.max_pool2d(x, (2, 2**31), (2, 2)), 1)
    with pytest.raises(InputError, match="negative size"):
        huge(rand((1, 1, 4, 8)))

"""The register-blocked matmul of convolutions (``conv_kernels.register_matmul``) against numpy: 1x1 ones
(``pointwise_conv``) as W [F, C] x X [C, H*W] per image on the input in place, others on their im2col
columns; tiles of output channels x vectors of pixels accumulated in registers, the last output channels
and pixels in smaller tiles, the epilogue fused into the parallel loop."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest
from oprun import build_fn, rand
from test_lower_nn import conv2d_ref

import relax_mlir.builder as rb
from relax_mlir.dialects import relax as R
from relax_mlir.lowering.vectors import target_registers
from relax_mlir.runtime.executable import Executable
from relax_mlir.targets import compile

TOL = {"rtol": 1e-4, "atol": 1e-4}
ONE = ((1, 1), (0, 0, 0, 0), (1, 1), 1)  # strides, pads, dilation, groups of a plain 1x1 convolution
TILED_MATMUL = "tensor.insert_slice"  # in a kernel after the matmul schedule: its tiles written back


F64_LANES = target_registers("host").lanes(64)  # f64 per vector register of this machine


def compiled(params: dict, body: Callable, level: int = 2) -> tuple[Executable, str]:
    stages: dict[str, str] = {}
    text = str(build_fn(params, body))
    exe = compile(text, opt_level=level, on_stage=lambda name, ir: stages.__setitem__(name, ir))
    return exe, stages["host"]


def kernels(host: str) -> str:
    return host[: host.index("func.func @main")]


# (in channels, height, width), out channels, batches
CASES = {
    "c1-f1-1x1-image": ((1, 1, 1), 1, (0, 1, 2)),
    "c3-f7-odd": ((3, 5, 7), 7, (1, 3)),
    "c16-f64-tiles": ((16, 8, 12), 64, (1, 2)),  # 96 pixels: three tiles of 32, no tail
    "c24-f11-tails": ((24, 9, 37), 11, (1, 2)),  # 8 + 3 output channels; pixel tail of 333 mod 32
    "c33-f24-channel-loop": ((33, 6, 10), 24, (1, 3)),  # more than MAX_UNROLLED_TAPS channels: a loop
    "c64-f16-row-blocks": ((64, 56, 56), 16, (1,)),  # blocks of output rows (_block_rows)
}


@pytest.mark.parametrize("case", list(CASES))
def test_pointwise_conv(case: str) -> None:
    (c, h, w_), f, batches = CASES[case]
    exe, host = compiled(
        {"x": rb.tensor(["n", c, h, w_]), "w": rb.tensor([f, c, 1, 1])}, lambda x, w: R.conv2d(x, w, 1, 0)
    )
    w = rand((f, c, 1, 1), low=-1, high=1)
    for n in batches:
        x = rand((n, c, h, w_), low=-1, high=1)
        np.testing.assert_allclose(exe(x, w), conv2d_ref(x, w, *ONE), **TOL)
    # register tiles of FMAs on the input in place, not a tiled matmul (whose tiles are inserted slices)
    kernel = kernels(host)
    assert "vector.fma" in kernel and TILED_MATMUL not in kernel


def test_pointwise_f64_and_conv1d() -> None:
    exe, host = compiled(
        {"x": rb.tensor(["n", 5, 41], "f64"), "w": rb.tensor([9, 5, 1], "f64")},
        lambda x, w: R.conv1d(x, w, 1, 0),
        3,
    )
    w = rand((9, 5, 1), np.float64, low=-1, high=1)
    for n in (0, 1, 2):
        x = rand((n, 5, 41), np.float64, low=-1, high=1)
        want = conv2d_ref(x[:, :, None], w[:, :, None], *ONE)[:, :, 0]
        # 5 products of magnitude <= 1 per output: rounding is ~1e-15 absolute, so a sum near 0 needs atol
        np.testing.assert_allclose(exe(x, w), want, rtol=1e-12, atol=1e-14)
    assert f"vector<{F64_LANES}xf64>" in host and TILED_MATMUL not in kernels(host)


def test_pointwise_bias_relu_residual_fused() -> None:
    """A 1x1 conv + bias + ReLU + residual: the epilogue runs vectorized inside the conv's loop."""
    c = 24

    def block(x, w, b):  # noqa: ANN001, ANN202
        return R.add(R.relu(R.add(R.conv2d(x, w, 1, 0), b)), x)

    params = {"x": rb.tensor(["n", c, 14, 15]), "w": rb.tensor([c, c, 1, 1]), "b": rb.tensor([c, 1, 1])}
    exe, host = compiled(params, block)
    w, b = rand((c, c, 1, 1), low=-1, high=1), rand((c, 1, 1), low=-1, high=1)
    for n in (0, 1, 3):
        x = rand((n, c, 14, 15), low=-2, high=2)
        want = np.maximum(conv2d_ref(x, w, *ONE) + b, 0) + x
        np.testing.assert_allclose(exe(x, w, b), want, **TOL)
    kernel = kernels(host)
    assert kernel.count("scf.forall (") == 1 and "linalg.generic" not in kernel
    loop = kernel[kernel.index("scf.forall (") : kernel.index("scf.forall.in_parallel")]
    assert "arith.maximumf" in loop and TILED_MATMUL not in loop


@pytest.mark.parametrize("strides, pads", [((2, 2), (0, 0, 0, 0)), ((1, 1), (1, 0, 1, 2))])
def test_strided_or_padded_1x1_multiply_im2col_columns(strides: tuple, pads: tuple) -> None:
    """Strided or padded 1x1 convolutions copy their input rows into im2col columns first, then the same
    register-blocked matmul multiplies them."""
    exe, host = compiled(
        {"x": rb.tensor(["n", 6, 9, 11]), "w": rb.tensor([5, 6, 1, 1])},
        lambda x, w: R.conv2d(x, w, strides, pads),
    )
    w = rand((5, 6, 1, 1), low=-1, high=1)
    for n in (0, 1, 2):
        x = rand((n, 6, 9, 11), low=-1, high=1)
        np.testing.assert_allclose(exe(x, w), conv2d_ref(x, w, strides, pads, (1, 1), 1), **TOL)
    kernel = kernels(host)
    assert "tensor.empty() : tensor<6x1x1x" in kernel and TILED_MATMUL not in kernel


@pytest.mark.parametrize("level", [2, 3])
def test_im2col_register_matmul_with_epilogue(level: int) -> None:
    """A conv of more taps than the direct kernel takes (40 channels of 3x3), odd sizes, stride 2, with
    bias + ReLU: im2col columns times ``register_matmul``, the epilogue vectorized in the same loop."""
    c, f = 40, 12

    def block(x, w, b):  # noqa: ANN001, ANN202
        return R.relu(R.add(R.conv2d(x, w, 2, 1), b))

    params = {"x": rb.tensor(["n", c, 13, 17]), "w": rb.tensor([f, c, 3, 3]), "b": rb.tensor([f, 1, 1])}
    exe, host = compiled(params, block, level)
    w, b = rand((f, c, 3, 3), low=-1, high=1), rand((f, 1, 1), low=-1, high=1)
    for n in (0, 1, 3):
        x = rand((n, c, 13, 17), low=-1, high=1)
        want = np.maximum(conv2d_ref(x, w, (2, 2), (1, 1, 1, 1), (1, 1), 1) + b, 0)
        np.testing.assert_allclose(exe(x, w, b), want, **TOL)
    kernel = kernels(host)
    assert kernel.count("scf.forall (") == 1 and "linalg.generic" not in kernel and TILED_MATMUL not in kernel
    loop = kernel[kernel.index("scf.forall (") : kernel.index("scf.forall.in_parallel")]
    assert "arith.maximumf" in loop and "vector.fma" in loop

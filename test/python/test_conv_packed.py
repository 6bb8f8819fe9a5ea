"""relax-pack-weights on convolutions, ``relax.conv2d_packed`` (``conv_kernels.packed_conv``: vectors along the
output channels, L x L squares transposed in registers) and ``relax.conv2d_winograd`` (F(2x2, 3x3)) against a
float64 numpy reference."""

from __future__ import annotations

import numpy as np
import pytest
from oprun import build_fn
from test_lower_nn import conv2d_ref

import relax_mlir.builder as rb
from relax_mlir.dialects import relax as R
from relax_mlir.dialects.ops.conv_kernels import transposed
from relax_mlir.errors import ShapeError
from relax_mlir.lowering.kernel import KernelBuilder
from relax_mlir.pipelines.cpu import relax_level
from relax_mlir.pipelines.data import text
from relax_mlir.targets import compile
from relax_mlir.transforms.pack_weights import winograd_weight
from relax_mlir.transforms.schedules import VectorUnit

RNG = np.random.default_rng(11)
TOL = {"rtol": 1e-4, "atol": 1e-4}


def rand(*shape: int) -> np.ndarray:
    return RNG.uniform(-1, 1, shape).astype(np.float32)


def compiled(module: object, pipeline: str | None = None) -> tuple[object, str]:
    stages: dict[str, str] = {}
    exe = compile(
        module, opt_level=3, pipeline=pipeline, use_cache=pipeline is None, on_stage=stages.__setitem__
    )
    return exe, stages["host"]


# (channels, height, width), output channels, kernel (kh, kw), strides, pads (top, left, bottom, right),
# dilation, batches
CASES = {
    "3x3-16ch-narrow": ((16, 12, 10), 16, (3, 3), (1, 1), (1, 1, 1, 1), (1, 1), (0, 1, 3)),
    "3x3-s2-stem": ((3, 17, 33), 32, (3, 3), (2, 2), (1, 1, 1, 1), (1, 1), (1, 2)),
    "3x3-1ch-width-1": ((1, 5, 1), 16, (3, 3), (1, 1), (1, 1, 1, 1), (1, 1), (1, 2)),
    "3x3-odd-width-7": ((5, 6, 7), 48, (3, 3), (1, 1), (1, 1, 1, 1), (1, 1), (1,)),
    "3x3-width-17": ((8, 4, 17), 16, (3, 3), (1, 1), (1, 1, 1, 1), (1, 1), (2,)),  # a tile and 1 pixel
    "5x5-asym-pads": ((4, 9, 11), 32, (5, 5), (1, 2), (2, 2, 1, 0), (1, 1), (1, 2)),
    "1x3-no-pad": ((6, 3, 40), 16, (1, 3), (1, 1), (0, 0, 0, 0), (1, 1), (1,)),
    "2x2-s2": ((7, 10, 10), 16, (2, 2), (2, 2), (0, 0, 0, 0), (1, 1), (1, 3)),
    "1x1-s2-projection": ((32, 8, 9), 32, (1, 1), (2, 2), (0, 0, 0, 0), (1, 1), (1, 2)),
    "1x1-padded": ((3, 4, 5), 16, (1, 1), (1, 1), (1, 1, 1, 1), (1, 1), (1,)),
    "dilated": ((4, 11, 20), 16, (3, 3), (1, 1), (2, 2, 2, 2), (2, 2), (1, 2)),
    "window-beyond-image": ((3, 2, 3), 16, (5, 5), (2, 1), (2, 3, 2, 3), (1, 1), (1,)),
    "row-blocks": ((32, 32, 32), 32, (3, 3), (2, 1), (1, 1, 1, 1), (1, 1), (1, 2)),  # parallel row blocks
    "64ch-7x7": ((64, 7, 7), 64, (3, 3), (1, 1), (1, 1, 1, 1), (1, 1), (1,)),  # 4 tiles a row: not Winograd
    "wide-rows": ((3, 4, 230), 16, (3, 3), (1, 1), (1, 1, 1, 1), (1, 1), (1, 2)),  # a loop over inner tiles
    "wide-s2-7x7": ((3, 9, 301), 32, (7, 7), (2, 2), (3, 3, 3, 3), (1, 1), (1,)),
}

# Winograd F(2x2, 3x3): 3x3, stride 1, >= 16 input channels; (channels, height, width), output channels,
# pads, batches
WINOGRAD = {
    "16ch-32x32": ((16, 32, 32), 16, (1, 1, 1, 1), (0, 1, 3)),  # blocks of tile rows (parallel)
    "odd-height-width": ((16, 13, 31), 32, (1, 1, 1, 1), (1, 2)),  # a last tile row and column of one
    "no-padding": ((24, 10, 34), 16, (0, 0, 0, 0), (1,)),  # 8 x 32 outputs
    "asymmetric-pads": ((16, 9, 30), 16, (2, 0, 1, 1), (1, 2)),
    "two-groups-of-tiles": ((16, 6, 40), 48, (1, 1, 1, 1), (1,)),  # 20 tiles a row: groups of 16 and 4
    "64ch": ((64, 16, 16), 64, (1, 1, 1, 1), (1, 2)),
    "wide": ((16, 5, 150), 16, (1, 1, 1, 1), (1, 2)),  # a loop over 4 whole groups, then 22 columns
    "stacked-8x8": ((128, 8, 8), 32, (1, 1, 1, 1), (1, 2)),  # 4 tile rows of 4 tiles in a group of 16
    "stacked-16x16": ((32, 16, 16), 32, (1, 1, 1, 1), (1, 3)),  # 2 tile rows of 8
    "stacked-odd-width": ((16, 8, 15), 16, (1, 1, 1, 1), (1,)),  # 8 tiles a row, the last of one column
    "stacked-16x4": ((16, 16, 4), 16, (1, 1, 1, 1), (1,)),  # 8 tile rows of 2
    "stacked-tall": ((16, 128, 8), 16, (1, 1, 1, 1), (1, 2)),  # blocks of 2 groups of 4 tile rows
}


def test_wide_images_compile_to_loops() -> None:
    """A 1024-wide image: tiles and Winograd groups inside the row run as loops, so the kernels stay small
    (unrolled, 64 tiles a row were thousands of FMAs per row)."""
    w, wg = rand(16, 3, 3, 3), rand(16, 16, 3, 3) / np.float32(12)
    bb = rb.BlockBuilder()
    with bb.function("main", {"x": rb.tensor(["n", 3, 4, 1024]), "z": rb.tensor(["n", 16, 4, 1024])}) as (
        x,
        z,
    ):
        bb.ret(R.conv2d(x, R.constant(w), 1, 1), R.conv2d(z, R.constant(wg), 1, 1))
    exe, host = compiled(bb.module)
    assert "conv2d_packed" in host and "conv2d_winograd" in host
    assert host.count("vector.fma") < 2000
    x, z = rand(1, 3, 4, 1024), rand(1, 16, 4, 1024)
    got = exe(x, z)
    np.testing.assert_allclose(got[0], conv2d_ref(x, w, (1, 1), (1, 1, 1, 1), (1, 1), 1), **TOL)
    np.testing.assert_allclose(got[1], conv2d_ref(z, wg, (1, 1), (1, 1, 1, 1), (1, 1), 1), **TOL)


def conv_model(c: int, h: int, w_: int, w: np.ndarray, strides, pads, dilation, bias=None):  # noqa: ANN001, ANN201
    def body(x):  # noqa: ANN001, ANN202
        y = R.conv2d(x, R.constant(w), strides, pads, dilation)
        return y if bias is None else R.relu(R.add(y, R.constant(bias)))

    return build_fn({"x": rb.tensor(["n", c, h, w_])}, body)


@pytest.mark.parametrize("case", list(CASES))
def test_packed_conv_matches_numpy(case: str) -> None:
    (c, h, w_), f, (kh, kw), strides, pads, dilation, batches = CASES[case]
    w = rand(f, c, kh, kw)
    exe, host = compiled(conv_model(c, h, w_, w, strides, pads, dilation))
    assert "conv2d_packed" in host and "conv2d_winograd" not in host
    assert "vector.shuffle" in host and "linalg.conv_2d" not in host  # the in-register transposes
    for n in batches:
        x = rand(n, c, h, w_)
        np.testing.assert_allclose(exe(x), conv2d_ref(x, w, strides, pads, dilation, 1), **TOL)


@pytest.mark.parametrize("case", list(WINOGRAD))
def test_winograd_conv_matches_numpy(case: str) -> None:
    """Winograd's transforms reassociate the sums: a few float32 roundings more than direct, well within
    1e-4 of outputs of size ~1 (sums of 144-576 products of uniform [-1, 1] numbers scaled by 1/sqrt(taps))."""
    (c, h, w_), f, pads, batches = WINOGRAD[case]
    w = rand(f, c, 3, 3) / np.float32(np.sqrt(9 * c))
    exe, host = compiled(conv_model(c, h, w_, w, (1, 1), pads, (1, 1)))
    assert "conv2d_winograd" in host and "conv2d_packed" not in host
    for n in batches:
        x = rand(n, c, h, w_)
        np.testing.assert_allclose(exe(x), conv2d_ref(x, w, (1, 1), pads, (1, 1), 1), **TOL)


def test_winograd_weight_transform_by_hand() -> None:
    """``G w G^T`` of a one-hot 3x3 kernel (the centre tap): column 1 of G times its transpose."""
    w = np.zeros((16, 1, 3, 3), np.float32)
    w[:, 0, 1, 1] = 2.0
    u = winograd_weight(w, 16)
    g1 = np.array([0.0, 0.5, -0.5, 0.0])
    np.testing.assert_array_equal(u[:, :, 0, 0, 3], 2.0 * np.outer(g1, g1))
    assert u.shape == (4, 4, 1, 1, 16)


@pytest.mark.parametrize("bits", [256, 128])
def test_packed_conv_other_vector_widths(bits: int) -> None:
    """Blocks of 8 (AVX2) and 4 (SSE, NEON, wasm SIMD128) channels: 8x8 and 4x4 transposes, and tiles of two
    4-pixel squares; the same numbers."""
    lanes = bits // 32
    w, b = rand(2 * lanes, 5, 3, 3), rand(2 * lanes, 1, 1)
    wg = rand(lanes, 16, 3, 3) / np.float32(12)
    bb = rb.BlockBuilder()
    with bb.function("main", {"x": rb.tensor(["n", 5, 7, 13]), "z": rb.tensor(["n", 16, 5, 9])}) as (x, z):
        bb.ret(
            R.relu(R.add(R.conv2d(x, R.constant(w), (2, 1), 1), R.constant(b))),
            R.conv2d(z, R.constant(wg), 1, 1),
        )
    exe, host = compiled(bb.module, text(relax_level(3, VectorUnit(bits, 16))))
    assert f"tensor<2x5x3x3x{lanes}xf32>" in host  # the packed weight
    assert f"tensor<4x4x1x16x{lanes}xf32>" in host  # the Winograd-transformed one
    for n in (0, 1, 2):
        x, z = rand(n, 5, 7, 13), rand(n, 16, 5, 9)
        got = exe(x, z)
        want = np.maximum(conv2d_ref(x, w, (2, 1), (1, 1, 1, 1), (1, 1), 1) + b, 0)
        np.testing.assert_allclose(got[0], want, **TOL)
        np.testing.assert_allclose(got[1], conv2d_ref(z, wg, (1, 1), (1, 1, 1, 1), (1, 1), 1), **TOL)


def test_bias_relu_residual_fused_into_the_packed_conv() -> None:
    """A residual block's conv + bias + residual + ReLU: one kernel, the epilogue inside the conv's loop."""
    c = 16
    w, b = rand(c, c, 3, 3) / np.float32(12), rand(c, 1, 1)

    def block(x):  # noqa: ANN001, ANN202
        return R.relu(R.add(R.add(R.conv2d(x, R.constant(w), 1, 1), R.constant(b)), x))

    exe, host = compiled(build_fn({"x": rb.tensor(["n", c, 9, 40])}, block))
    assert "conv2d_winograd" in host
    kernel = host[: host.index("func.func @main")]
    assert kernel.count("scf.forall (") == 1 and "linalg.generic" not in kernel
    for n in (0, 1, 3):
        x = rand(n, c, 9, 40)
        want = np.maximum(conv2d_ref(x, w, (1, 1), (1, 1, 1, 1), (1, 1), 1) + b + x, 0)
        np.testing.assert_allclose(exe(x), want, **TOL)


@pytest.mark.parametrize(
    ("what", "params", "weight", "groups"),
    [
        ("channels not a multiple of the block", ["n", 8, 6, 6], (24, 8, 3, 3), 1),
        ("grouped", ["n", 16, 6, 6], (16, 8, 3, 3), 2),
        ("pointwise (its own kernel)", ["n", 16, 6, 6], (16, 16, 1, 1), 1),
        ("symbolic width", ["n", 16, 6, "w"], (16, 16, 3, 3), 1),
        ("7x9 taps", ["n", 2, 12, 12], (16, 2, 7, 9), 1),
    ],
)
def test_convolutions_left_unpacked(what: str, params: list, weight: tuple, groups: int) -> None:
    w = rand(*weight)
    pad = 0 if weight[2] == 1 else 1
    module = build_fn({"x": rb.tensor(params)}, lambda x: R.conv2d(x, R.constant(w), 1, pad, 1, groups))
    exe, host = compiled(module)
    assert "conv2d_packed" not in host, what
    shape = [d if isinstance(d, int) else 7 for d in params]
    shape[0] = 2
    x = rand(*shape)
    np.testing.assert_allclose(exe(x), conv2d_ref(x, w, (1, 1), (pad,) * 4, (1, 1), groups), **TOL)


def test_weight_parameter_is_not_packed() -> None:
    """Only constant (or load-time) weights are packed: a weight passed per call keeps conv2d."""
    module = build_fn(
        {"x": rb.tensor(["n", 16, 6, 6]), "w": rb.tensor([16, 16, 3, 3])}, lambda x, w: R.conv2d(x, w, 1, 1)
    )
    exe, host = compiled(module)
    assert "conv2d_packed" not in host
    x, w = rand(1, 16, 6, 6), rand(16, 16, 3, 3)
    np.testing.assert_allclose(exe(x, w), conv2d_ref(x, w, (1, 1), (1, 1, 1, 1), (1, 1), 1), **TOL)


def test_conv2d_packed_deduces_shapes() -> None:
    def deduce(x: list, packed: list, strides=(2, 2), pads=(1, 1, 1, 1)) -> str:  # noqa: ANN001
        module = build_fn(
            {"x": rb.tensor(x), "p": rb.tensor(packed)},
            lambda x, p: R.conv2d_packed(x, p, strides, pads, (1, 1)),
        )
        return str(module)

    assert '!relax.tensor<["n", 32, "(h + 1) floordiv 2", 9], f32>' in deduce(
        ["n", 3, "h", 17], [2, 3, 3, 3, 16]
    )
    with pytest.raises(ShapeError, match="input channels"):
        deduce(["n", 4, 8, 8], [2, 3, 3, 3, 16])
    with pytest.raises(ShapeError, match="constant dims"):
        deduce(["n", 3, 8, 8], [2, 3, 3, 16])
    with pytest.raises(ShapeError, match="constant dims"):
        deduce(["n", 3, 8, 8], ["b", 3, 3, 3, 16])
    with pytest.raises(ShapeError, match="rank 4"):
        deduce(["n", 3, 8], [2, 3, 3, 3, 16])


@pytest.mark.parametrize("n", [1, 2, 4, 8, 16])
def test_transposed_squares(n: int) -> None:
    """``transposed``'s shuffle masks, evaluated in numpy: each stage swaps one bit of row and column."""
    k = KernelBuilder.__new__(KernelBuilder)
    lines: list[str] = []
    names = iter(range(10**6))
    k.typed = lambda text: (lines.append(text), f"%s{next(names)}")[1]  # type: ignore[method-assign]
    rows = [f"%r{i}" for i in range(n)]
    out = transposed(k, rows, "f32")
    values = {f"%r{i}": np.arange(n) + 100 * i for i in range(n)}
    for i, line in enumerate(lines):
        a, b = (s.strip() for s in line.split("vector.shuffle ")[1].split("[")[0].split(","))
        mask = [int(v) for v in line.split("[")[1].split("]")[0].split(",")]
        both = np.concatenate([values[a], values[b]])
        values[f"%s{i}"] = both[mask]
    got = np.stack([values[v] for v in out])
    want = np.stack([values[f"%r{i}"] for i in range(n)]).T
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("axes", [[1, 0, 2, 3], [0, 1, 3, 2], None])
def test_permuted_constant_weight_is_packed_permuted(axes: list | None) -> None:
    """A weight that is a ``permute_dims`` of a constant (not folded: only relax-pack-weights runs) is packed
    from the constant's numbers in the permuted order (any axes; None reverses them all)."""
    from mlir import ir, passmanager

    from relax_mlir.pipelines import add_pipeline, load_passes, parse_pipeline

    raw = rand(16, 16, 3, 3) if axes is not None else rand(3, 3, 16, 16)  # (both axes lists are involutions)
    w = raw.transpose(axes) if axes is not None else raw.T
    module = build_fn(
        {"x": rb.tensor(["n", 16, 6, 7])},
        lambda x: R.conv2d(x, R.permute_dims(R.constant(np.ascontiguousarray(raw)), axes), 1, 1),
    )
    with module.context, ir.Location.unknown():
        load_passes()
        pm = passmanager.PassManager("builtin.module")
        add_pipeline(pm, parse_pipeline("relax-verify,relax-infer-shapes,relax-pack-weights"))
        pm.run(module.operation)
    text = str(module)
    assert "conv2d_packed" in text and "relax.permute_dims" not in text
    exe = compile(text, opt_level=0)
    x = rand(2, 16, 6, 7)
    np.testing.assert_allclose(exe(x), conv2d_ref(x, w, (1, 1), (1, 1, 1, 1), (1, 1), 1), **TOL)

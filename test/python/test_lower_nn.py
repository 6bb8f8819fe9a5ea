"""Kernels of the neural-network ops against numpy references, at several shapes per compilation.

Every reference is written out here with numpy only: convolutions and pooling over explicit windows,
resize with ONNX's coordinate formulas (checked against ONNX's documented examples first).
"""

from __future__ import annotations

import numpy as np
import oprun
import pytest
from isolated import expect_error
from oprun import compile_fn, rand

import relax_mlir.builder as rb
from relax_mlir.dialects import relax as R
from relax_mlir.errors import InputError, RelaxError

F32 = {"rtol": 1e-5, "atol": 1e-5}


def close(actual: np.ndarray, expected: np.ndarray, dtype: str = "f32") -> None:
    assert actual.shape == expected.shape, (actual.shape, expected.shape)
    if dtype == "f64":
        np.testing.assert_allclose(actual, expected, rtol=1e-12, atol=1e-12)
    elif dtype == "f32":
        np.testing.assert_allclose(actual, expected, **F32)
    else:
        np.testing.assert_array_equal(actual, expected)


NP = {"f32": np.float32, "f64": np.float64, "i1": np.bool_, "i8": np.int8, "ui8": np.uint8, "i32": np.int32}


# ----------------------------------------------------------------------------------------------
# softmax, log_softmax


def softmax_ref(x: np.ndarray, axis: int, log: bool) -> np.ndarray:
    x = x.astype(np.float64)
    if x.size == 0:  # numpy has no max of nothing; the result is empty too
        return x
    shifted = x - x.max(axis=axis, keepdims=True)
    total = np.exp(shifted).sum(axis=axis, keepdims=True)
    return shifted - np.log(total) if log else np.exp(shifted) / total


@pytest.mark.parametrize("log", [False, True])
@pytest.mark.parametrize("axis", [-1, 0, 1])
def test_softmax(axis: int, log: bool) -> None:
    op = R.log_softmax if log else R.softmax
    exe = compile_fn({"x": rb.tensor(["a", "b", 5])}, lambda x: op(x, axis))
    for shape in [(1, 1, 5), (2, 3, 5), (3, 7, 5), (0, 2, 5)]:
        x = rand(shape, low=-30, high=30)
        close(exe(x), softmax_ref(x, axis, log))


@pytest.mark.skipif(oprun.TARGET == "webgpu", reason=oprun.F64_MATH)
def test_softmax_is_stable_and_f64() -> None:
    exe = compile_fn({"x": rb.tensor(["n", "m"], "f64")}, lambda x: R.softmax(x, -1))
    for shape in [(1, 1), (3, 9), (4, 2)]:
        x = rand(shape, np.float64) * 400  # exp overflows without subtracting the max
        close(exe(x), softmax_ref(x, -1, False), "f64")
    exe = compile_fn({"x": rb.tensor(["n", "m"])}, lambda x: R.log_softmax(x, 1))
    x = np.array([[1000.0, 0.0, -1000.0]], np.float32)
    close(exe(x), softmax_ref(x, 1, True))


def test_softmax_rank_1() -> None:
    exe = compile_fn({"x": rb.tensor(["n"])}, lambda x: (R.softmax(x), R.log_softmax(x, 0)))
    for n in (1, 2, 9):
        x = rand((n,))
        s, ls = exe(x)
        close(s, softmax_ref(x, 0, False))
        close(ls, softmax_ref(x, 0, True))


# ----------------------------------------------------------------------------------------------
# layer_norm, rms_norm, group_norm, batch_norm


def param_view(p: np.ndarray, rank: int, axes: list[int]) -> np.ndarray:
    """gamma (dims in ``axes``' order) laid out to broadcast against x."""
    axes = [a % rank for a in axes]
    p = np.transpose(p, np.argsort(axes))
    shape = [1] * rank
    for a, d in zip(sorted(axes), p.shape):
        shape[a] = d
    return p.reshape(shape)


def layer_norm_ref(x, g, b, axes, eps, centered=True):
    x = x.astype(np.float64)
    ax = tuple(a % x.ndim for a in axes)
    mean = x.mean(axis=ax, keepdims=True) if centered else 0.0
    var = ((x - mean) ** 2).mean(axis=ax, keepdims=True)
    y = (x - mean) / np.sqrt(var + eps) * param_view(g, x.ndim, axes)
    return y + param_view(b, x.ndim, axes) if b is not None else y


LAYER_NORM = [
    # x dims, axes, gamma dims, shapes to run
    (["b", "s", 6], [-1], [6], [(1, 1, 6), (2, 5, 6), (3, 1, 6), (0, 2, 6)]),
    (["b", "s", 4], [1, 2], ["s", 4], [(1, 1, 4), (2, 3, 4), (3, 7, 4)]),
    (["b", "s", 4], [-1, -2], [4, "s"], [(1, 1, 4), (2, 3, 4), (3, 7, 4)]),
    (["n", 3, "w"], [0, 2], ["n", "w"], [(1, 3, 1), (2, 3, 5), (5, 3, 2)]),
    (["n"], [0], ["n"], [(1,), (2,), (7,)]),
]


@pytest.mark.parametrize("rms", [False, True])
@pytest.mark.parametrize("dims, axes, gdims, shapes", LAYER_NORM)
def test_layer_and_rms_norm(dims, axes, gdims, shapes, rms: bool) -> None:
    params = {"x": rb.tensor(dims), "g": rb.tensor(gdims)}
    if rms:
        exe = compile_fn(params, lambda x, g: R.rms_norm(x, g, axes, 1e-3))
    else:
        exe = compile_fn({**params, "b": rb.tensor(gdims)}, lambda x, g, b: R.layer_norm(x, g, b, axes, 1e-3))
    for shape in shapes:
        x = rand(shape) + 1.5
        gshape = tuple(shape[a % len(shape)] for a in axes)
        g, b = rand(gshape, low=0.5, high=2.0), rand(gshape)
        if rms:
            close(exe(x, g), layer_norm_ref(x, g, None, axes, 1e-3, centered=False))
        else:
            close(exe(x, g, b), layer_norm_ref(x, g, b, axes, 1e-3))


@pytest.mark.skipif(oprun.TARGET == "webgpu", reason=oprun.F64_MATH)
def test_layer_norm_f64_default_epsilon() -> None:
    exe = compile_fn(
        {"x": rb.tensor(["n", 8], "f64"), "g": rb.tensor([8], "f64"), "b": rb.tensor([8], "f64")},
        lambda x, g, b: R.layer_norm(x, g, b),
    )
    for n in (1, 3, 10):
        x, g, b = rand((n, 8), np.float64), rand((8,), np.float64), rand((8,), np.float64)
        close(exe(x, g, b), layer_norm_ref(x, g, b, [-1], 1e-5), "f64")


def group_norm_ref(x, g, b, groups, eps):
    x = x.astype(np.float64)
    n, c = x.shape[:2]
    xg = x.reshape(n, groups, x[0].size // groups if n else 0)
    mean = xg.mean(axis=2, keepdims=True)
    var = ((xg - mean) ** 2).mean(axis=2, keepdims=True)
    y = ((xg - mean) / np.sqrt(var + eps)).reshape(x.shape)
    view = (1, c) + (1,) * (x.ndim - 2)
    return y * g.reshape(view) + b.reshape(view)


GROUP_NORM = [
    # x dims, channel dim of gamma, groups, shapes
    (["n", 6, "h", "w"], 6, 3, [(1, 6, 1, 1), (2, 6, 3, 5), (1, 6, 7, 2)]),
    (["n", "c", "l"], "c", 2, [(1, 2, 1), (2, 6, 5), (3, 4, 3)]),
    (["n", 4], 4, 2, [(1, 4), (3, 4), (8, 4)]),
    (["n", 5, "l"], 5, 1, [(1, 5, 1), (2, 5, 3)]),
]


@pytest.mark.parametrize("dims, channels, groups, shapes", GROUP_NORM)
def test_group_norm(dims, channels, groups: int, shapes) -> None:
    exe = compile_fn(
        {"x": rb.tensor(dims), "g": rb.tensor([channels]), "b": rb.tensor([channels])},
        lambda x, g, b: R.group_norm(x, g, b, groups, 1e-4),
    )
    for shape in shapes:
        x, g, b = rand(shape), rand(shape[1:2]), rand(shape[1:2])
        close(exe(x, g, b), group_norm_ref(x, g, b, groups, 1e-4))


def test_group_norm_checks_channels_divide_into_groups() -> None:
    exe = compile_fn(
        {"x": rb.tensor(["n", "c", "l"]), "g": rb.tensor(["c"]), "b": rb.tensor(["c"])},
        lambda x, g, b: R.group_norm(x, g, b, 2),
    )
    with pytest.raises(InputError, match=r"dim 1 of .* must be 2 \* \(c floordiv 2\), got 5 \(expected 4\)"):
        exe(rand((1, 5, 3)), rand((5,)), rand((5,)))


@pytest.mark.parametrize("dims, axis", [(["n", 3, "h", "w"], 1), (["n", 4], -1), (["c", "n"], 0)])
def test_batch_norm(dims, axis: int) -> None:
    pdim = dims[axis]
    exe = compile_fn(
        {"x": rb.tensor(dims), **{p: rb.tensor([pdim]) for p in ("g", "b", "m", "v")}},
        lambda x, g, b, m, v: R.batch_norm(x, g, b, m, v, axis, 1e-3),
    )
    shapes = {
        1: [(1, 3, 1, 1), (2, 3, 5, 4), (0, 3, 2, 2)],
        -1: [(1, 4), (7, 4)],
        0: [(1, 1), (3, 5), (6, 2)],
    }[axis]
    for shape in shapes:
        c = shape[axis]
        x, g, b, m = rand(shape), rand((c,)), rand((c,)), rand((c,))
        v = rand((c,), low=0.1, high=3.0)
        view = [1] * len(shape)
        view[axis] = c
        expected = (x - m.reshape(view)) / np.sqrt(v.reshape(view) + 1e-3) * g.reshape(view) + b.reshape(view)
        close(exe(x, g, b, m, v), expected)


def test_norm_parameter_mismatch_raises() -> None:
    exe = compile_fn(
        {"x": rb.tensor(["n", "c"]), "g": rb.tensor(["d"]), "b": rb.tensor(["d"])},
        lambda x, g, b: R.layer_norm(x, g, b),
    )
    x, g = rand((2, 3)), rand((3,))
    close(exe(x, g, g), layer_norm_ref(x, g, g, [-1], 1e-5))
    with pytest.raises(InputError, match=r"dim 0 of .* must be c, got 4 \(expected 3\)"):
        exe(x, rand((4,)), rand((4,)))


# ----------------------------------------------------------------------------------------------
# conv1d, conv2d


def conv2d_ref(x, w, strides, pads, dilation, groups):
    """Direct convolution: zero-pad, then one strided window slice per kernel tap."""
    x, w = x.astype(np.float64), w.astype(np.float64)
    (sh, sw), (dh, dw) = strides, dilation
    pt, pl, pb, pr = pads
    xp = np.pad(x, [(0, 0), (0, 0), (pt, pb), (pl, pr)])
    n, c, hp, wp = xp.shape
    o, cg, kh, kw = w.shape
    oh, ow = (hp - dh * (kh - 1) - 1) // sh + 1, (wp - dw * (kw - 1) - 1) // sw + 1
    fg = o // groups
    out = np.zeros((n, o, oh, ow))
    for g in range(groups):
        xs, ws = xp[:, g * cg : (g + 1) * cg], w[g * fg : (g + 1) * fg]
        for i in range(kh):
            for j in range(kw):
                patch = xs[
                    :, :, i * dh : i * dh + sh * (oh - 1) + 1 : sh, j * dw : j * dw + sw * (ow - 1) + 1 : sw
                ]
                out[:, g * fg : (g + 1) * fg] += np.einsum("nchw,fc->nfhw", patch, ws[:, :, i, j])
    return out


def test_conv2d_reference_by_hand() -> None:
    x = np.arange(16, dtype=np.float64).reshape(1, 1, 4, 4)
    w = np.array([[[[1.0, 0.0], [0.0, -1.0]]]])
    # out[i, j] = x[i, j] - x[i + 1, j + 1] = -5 everywhere
    np.testing.assert_array_equal(
        conv2d_ref(x, w, (1, 1), (0, 0, 0, 0), (1, 1), 1), np.full((1, 1, 3, 3), -5.0)
    )
    # stride 2 and one row/column of zero padding on top/left: window (0, 0) only sees -x[0, 0]
    out = conv2d_ref(x, w, (2, 2), (1, 1, 0, 0), (1, 1), 1)
    np.testing.assert_array_equal(out[0, 0], [[-0.0, -2.0], [-8.0, -5.0]])


CONV2D = [
    # weight shape, strides, padding, dilation, groups, input channels
    ((4, 3, 3, 3), 1, 0, 1, 1, 3),
    ((5, 3, 3, 2), (2, 1), (1, 0, 2, 1), (1, 2), 1, 3),
    ((6, 2, 3, 3), 2, 1, 1, 2, 4),
    ((4, 1, 3, 3), 1, 1, 1, 4, 4),  # depthwise
    ((8, 1, 2, 2), (1, 2), 1, 2, 4, 4),  # depthwise, channel multiplier 2
    ((6, 3, 1, 1), 1, 0, 1, 2, 6),
]


def _pads(p, n: int) -> tuple[int, ...]:
    p = [p] * n if isinstance(p, int) else list(p)
    return tuple(p + p if len(p) == n else p)


def _pair(v) -> tuple[int, int]:
    return (v, v) if isinstance(v, int) else tuple(v)


@pytest.mark.parametrize("wshape, strides, padding, dilation, groups, cin", CONV2D)
def test_conv2d(wshape, strides, padding, dilation, groups: int, cin: int) -> None:
    exe = compile_fn(
        {"x": rb.tensor(["n", cin, "h", "w"]), "w": rb.tensor(list(wshape))},
        lambda x, w: R.conv2d(x, w, strides, padding, dilation, groups),
    )
    w = rand(wshape)
    for n, h, wd in [(1, 5, 5), (2, 7, 6), (1, 9, 4), (0, 5, 5)]:
        x = rand((n, cin, h, wd))
        expected = conv2d_ref(x, w, _pair(strides), _pads(padding, 2), _pair(dilation), groups)
        close(exe(x, w), expected)


def test_conv2d_symbolic_weights_f64() -> None:
    exe = compile_fn(
        {"x": rb.tensor(["n", "c", "h", "w"], "f64"), "w": rb.tensor(["o", "c", "kh", "kw"], "f64")},
        lambda x, w: R.conv2d(x, w, 1, 1),
    )
    for xs, ws in [((1, 1, 1, 1), (1, 1, 1, 1)), ((2, 3, 6, 5), (4, 3, 3, 2)), ((1, 2, 3, 3), (5, 2, 3, 3))]:
        x, w = rand(xs, np.float64), rand(ws, np.float64)
        close(exe(x, w), conv2d_ref(x, w, (1, 1), (1, 1, 1, 1), (1, 1), 1), "f64")


def test_conv2d_wrong_channels_raise() -> None:
    exe = compile_fn(
        {"x": rb.tensor(["n", "c", "h", "w"]), "w": rb.tensor(["o", 2, 3, 3])},
        lambda x, w: R.conv2d(x, w, groups=2),
    )
    for c, o in [(4, 2), (4, 6)]:
        x, w = rand((1, c, 5, 5)), rand((o, 2, 3, 3))
        close(exe(x, w), conv2d_ref(x, w, (1, 1), (0, 0, 0, 0), (1, 1), 2))
    with pytest.raises(InputError, match=r"dim 1 of .* must be 4, got 3"):
        exe(rand((1, 3, 5, 5)), rand((2, 2, 3, 3)))
    with pytest.raises(InputError, match=r"dim 0 of .*\"o\".* must be 2 \* \(o floordiv 2\), got 3"):
        exe(rand((1, 4, 5, 5)), rand((3, 2, 3, 3)))


CONV1D = [
    # weight shape, strides, padding, dilation, groups, input channels
    ((4, 3, 3), 1, 0, 1, 1, 3),
    ((6, 2, 3), 2, (2, 1), 2, 2, 4),
    ((4, 1, 5), 1, 2, 1, 4, 4),
]


@pytest.mark.parametrize("wshape, strides, padding, dilation, groups, cin", CONV1D)
def test_conv1d(wshape, strides, padding, dilation, groups: int, cin: int) -> None:
    exe = compile_fn(
        {"x": rb.tensor(["n", cin, "l"]), "w": rb.tensor(list(wshape))},
        lambda x, w: R.conv1d(x, w, strides, padding, dilation, groups),
    )
    w = rand(wshape)
    pl, pr = _pads(padding, 1)
    for n, length in [(1, 5), (2, 8), (3, 11)]:
        x = rand((n, cin, length))
        expected = conv2d_ref(
            x[:, :, None], w[:, :, None], (1, strides), (0, pl, 0, pr), (1, dilation), groups
        )
        close(exe(x, w), expected[:, :, 0])


# ----------------------------------------------------------------------------------------------
# pooling


def pool_out(size: int, k: int, s: int, before: int, after: int, d: int, ceil_mode: bool) -> int:
    """PyTorch's output size (a ceil-mode window must start inside the input or the left padding)."""
    span = size + before + after - d * (k - 1) - 1
    if not ceil_mode:
        return span // s + 1
    out = -(-span // s) + 1
    return out - 1 if (out - 1) * s >= size + before else out


def window_taps(size, out, k, s, before, d):
    """For each output position, the input positions of its taps (may lie outside [0, size))."""
    return [[o * s - before + j * d for j in range(k)] for o in range(out)]


def pool_ref(x, kernel, strides, pads, dilation, ceil_mode, kind, count_include_pad=False):
    n, c, h, w = x.shape
    (kh, kw), (sh, sw), (dh, dw) = kernel, strides, dilation
    pt, pl, pb, pr = pads
    oh, ow = pool_out(h, kh, sh, pt, pb, dh, ceil_mode), pool_out(w, kw, sw, pl, pr, dw, ceil_mode)
    rows, cols = window_taps(h, oh, kh, sh, pt, dh), window_taps(w, ow, kw, sw, pl, dw)
    out = np.zeros((n, c, oh, ow), np.float64 if kind == "avg" else x.dtype)
    for i, taps_h in enumerate(rows):
        for j, taps_w in enumerate(cols):
            inside = [(a, b) for a in taps_h for b in taps_w if 0 <= a < h and 0 <= b < w]
            values = np.stack([x[:, :, a, b] for a, b in inside], axis=-1)
            if kind == "max":
                out[:, :, i, j] = values.max(axis=-1)
                continue
            if count_include_pad:
                padded = [(a, b) for a in taps_h for b in taps_w if -pt <= a < h + pb and -pl <= b < w + pr]
                count = len(padded)
            else:
                count = len(inside)
            out[:, :, i, j] = values.astype(np.float64).sum(axis=-1) / count
    return out


def test_pool_reference_by_hand() -> None:
    x = np.arange(1, 10, dtype=np.float64).reshape(1, 1, 3, 3)
    # 2x2 windows, stride 2, ceil mode: the last window hangs over the border
    assert pool_ref(x, (2, 2), (2, 2), (0, 0, 0, 0), (1, 1), True, "max")[0, 0].tolist() == [[5, 6], [8, 9]]
    avg = pool_ref(x, (2, 2), (2, 2), (0, 0, 0, 0), (1, 1), True, "avg")[0, 0]
    assert avg.tolist() == [[3.0, 4.5], [7.5, 9.0]]
    # 3x3 windows padded by 1: the corner window holds 4 values of 9 taps
    corner = pool_ref(x, (3, 3), (1, 1), (1, 1, 1, 1), (1, 1), False, "avg", count_include_pad=True)[
        0, 0, 0, 0
    ]
    assert corner == (1 + 2 + 4 + 5) / 9
    corner = pool_ref(x, (3, 3), (1, 1), (1, 1, 1, 1), (1, 1), False, "avg")[0, 0, 0, 0]
    assert corner == (1 + 2 + 4 + 5) / 4


POOL = [
    # kernel, strides, padding, dilation, ceil_mode, shapes (h, w)
    (2, None, 0, 1, False, [(2, 2), (5, 4), (7, 9)]),  # windows that tile the input: a generic
    (2, 2, 0, 1, False, [(64, 64), (33, 31), (0, 4), (1, 1)]),
    (3, 3, 1, 1, True, [(1, 1), (7, 8), (12, 9)]),
    (3, 2, 1, 1, True, [(1, 1), (6, 5), (8, 7)]),
    ((3, 2), (2, 1), (1, 0, 1, 1), 1, True, [(2, 1), (5, 6), (9, 3)]),
    (2, 1, 0, 2, False, [(3, 3), (4, 7), (6, 5)]),
    (2, 3, 1, (2, 1), True, [(3, 2), (7, 8), (10, 4)]),
]


@pytest.mark.parametrize("kernel, strides, padding, dilation, ceil_mode, shapes", POOL)
def test_max_pool2d(kernel, strides, padding, dilation, ceil_mode: bool, shapes) -> None:
    exe = compile_fn(
        {"x": rb.tensor(["n", 3, "h", "w"])},
        lambda x: R.max_pool2d(x, kernel, strides, padding, dilation, ceil_mode),
    )
    args = (
        _pair(kernel),
        _pair(strides if strides is not None else kernel),
        _pads(padding, 2),
        _pair(dilation),
    )
    for i, (h, w) in enumerate(shapes):
        x = rand((i + 1, 3, h, w)) - 3.0  # all negative: padding must not win
        close(exe(x), pool_ref(x, *args, ceil_mode, "max"))


@pytest.mark.parametrize("kernel, strides", [(3, 2), (2, 2)])  # overlapping windows; windows that tile
@pytest.mark.parametrize("dtype", ["i1", "i8", "ui8", "i32"])
def test_max_pool2d_ints(dtype: str, kernel: int, strides: int) -> None:
    """Booleans too (found by fuzzing: their lowest value was an i1 constant filling i8 storage)."""
    exe = compile_fn(
        {"x": rb.tensor(["n", "c", "h", "w"], dtype)},
        lambda x: R.max_pool2d(x, kernel, strides, 1, ceil_mode=True),
    )
    low, high = {"i1": (0, 2), "i8": (-128, 128), "ui8": (0, 256), "i32": (-(2**31), 2**31 - 1)}[dtype]
    args = ((kernel, kernel), (strides, strides), (1, 1, 1, 1), (1, 1), True, "max")
    for shape in [(1, 1, 1, 1), (2, 3, 5, 6), (1, 2, 8, 3)]:
        x = rand(shape, NP[dtype], low, high)
        close(exe(x), pool_ref(x, *args), dtype)


@pytest.mark.skipif(oprun.FINITE_ONLY, reason=oprun.NOT_FINITE)
@pytest.mark.parametrize("kernel, strides", [(3, 2), (2, 2)])
def test_max_pool2d_propagates_nan(kernel: int, strides: int) -> None:
    """A NaN in a window makes its maximum NaN (numpy's and ONNX Runtime's), in both lowerings."""
    exe = compile_fn({"x": rb.tensor(["n", 2, "h", "w"])}, lambda x: R.max_pool2d(x, kernel, strides))
    x = rand((1, 2, 6, 7))
    x[0, 1, 2, 3] = np.nan
    want = pool_ref(x, (kernel, kernel), (strides, strides), (0, 0, 0, 0), (1, 1), False, "max")
    got = exe(x)
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    assert np.isnan(want).any()
    close(got[~np.isnan(got)], want[~np.isnan(want)])


@pytest.mark.parametrize("op", ["max_pool2d", "avg_pool2d"])
@pytest.mark.parametrize("kernel", [(2, 2**63 - 1), (2**32, 2**32)])
def test_pool_window_too_large_to_address_is_an_error(op: str, kernel: tuple[int, int]) -> None:
    """Fuzz case 49009: the kernel-shaped window tensor's static size overflowed int64 and MLIR aborted."""
    expect_error(
        f"""
        import relax_mlir, relax_mlir.builder as rb
        from relax_mlir.dialects import relax as R
        bb = rb.BlockBuilder()
        with bb.function("main", {{"x": rb.tensor(["n", "c", "h", "w"], "f32")}}) as (x,):
            bb.ret(R.{op}(x, {kernel}, 2))
        relax_mlir.compile(bb.module, opt_level=1)
        """,
        "CompileError",
        match="than the 2**63 - 1 an address can reach",
    )


@pytest.mark.parametrize("count_include_pad", [False, True])
@pytest.mark.parametrize("kernel, strides, padding, dilation, ceil_mode, shapes", POOL)
def test_avg_pool2d(
    kernel, strides, padding, dilation, ceil_mode: bool, shapes, count_include_pad: bool
) -> None:
    exe = compile_fn(
        {"x": rb.tensor(["n", 3, "h", "w"])},
        lambda x: R.avg_pool2d(x, kernel, strides, padding, dilation, ceil_mode, count_include_pad),
    )
    args = (
        _pair(kernel),
        _pair(strides if strides is not None else kernel),
        _pads(padding, 2),
        _pair(dilation),
    )
    for i, (h, w) in enumerate(shapes):
        x = rand((i + 1, 3, h, w))
        close(exe(x), pool_ref(x, *args, ceil_mode, "avg", count_include_pad))


def adaptive_ref(x, out_h, out_w):
    n, c, h, w = x.shape
    out = np.zeros((n, c, out_h, out_w))
    for i in range(out_h):
        h0, h1 = (i * h) // out_h, -(-((i + 1) * h) // out_h)
        for j in range(out_w):
            w0, w1 = (j * w) // out_w, -(-((j + 1) * w) // out_w)
            out[:, :, i, j] = x[:, :, h0:h1, w0:w1].astype(np.float64).mean(axis=(2, 3))
    return out


@pytest.mark.parametrize("size", [(1, 1), (2, 3), (3, 3)])
def test_adaptive_avg_pool2d(size) -> None:
    exe = compile_fn({"x": rb.tensor(["n", "c", "h", "w"])}, lambda x: R.adaptive_avg_pool2d(x, size))
    for shape in [(1, 1, 1, 1), (2, 3, 7, 5), (1, 2, 4, 9), (0, 2, 3, 3)]:
        x = rand(shape)
        close(exe(x), adaptive_ref(x, *size))


def test_adaptive_avg_pool2d_windows_by_hand() -> None:
    x = np.arange(5, dtype=np.float64).reshape(1, 1, 1, 5)
    # 5 -> 3 windows: [0, 2), [1, 4), [3, 5)
    assert adaptive_ref(x, 1, 3)[0, 0, 0].tolist() == [0.5, 2.0, 3.5]


# ----------------------------------------------------------------------------------------------
# resize


def source_coordinates(in_size: int, out_size: int, mode: str) -> np.ndarray:
    """ONNX Resize's coordinate transformation (scale = out / in), in float64."""
    o = np.arange(out_size, dtype=np.float64)
    if mode == "align_corners":
        return np.zeros(out_size) if out_size == 1 else o * (in_size - 1) / (out_size - 1)
    scale = out_size / in_size
    if mode == "asymmetric":
        return o / scale
    if mode == "pytorch_half_pixel" and out_size <= 1:
        return np.zeros(out_size)
    return (o + 0.5) / scale - 0.5


def resize_ref(x, out_h, out_w, method, mode):
    n, c, h, w = x.shape
    ys, xs = source_coordinates(h, out_h, mode), source_coordinates(w, out_w, mode)
    if method == "nearest":  # round half down (round_prefer_floor), clamp into the input
        rows = np.clip(np.ceil(ys - 0.5).astype(np.int64), 0, h - 1)
        cols = np.clip(np.ceil(xs - 0.5).astype(np.int64), 0, w - 1)
        return x[:, :, rows][:, :, :, cols]
    ys, xs = np.clip(ys, 0, h - 1), np.clip(xs, 0, w - 1)
    y0, x0 = np.floor(ys).astype(np.int64), np.floor(xs).astype(np.int64)
    y1, x1 = np.minimum(y0 + 1, h - 1), np.minimum(x0 + 1, w - 1)
    fy, fx = (ys - y0)[:, None], (xs - x0)[None, :]
    v = x.astype(np.float64)
    top = v[:, :, y0][:, :, :, x0] * (1 - fx) + v[:, :, y0][:, :, :, x1] * fx
    bottom = v[:, :, y1][:, :, :, x0] * (1 - fx) + v[:, :, y1][:, :, :, x1] * fx
    return top * (1 - fy) + bottom * fy


def test_resize_reference_matches_onnx_examples() -> None:
    x = np.array([[[[1.0, 2.0], [3.0, 4.0]]]])
    # ONNX Resize examples: upsample_scales_nearest, upsample_scales_linear(_align_corners)
    nearest = resize_ref(x, 4, 6, "nearest", "half_pixel")[0, 0]
    assert nearest.tolist() == [[1, 1, 1, 2, 2, 2]] * 2 + [[3, 3, 3, 4, 4, 4]] * 2
    linear = resize_ref(x, 4, 4, "linear", "half_pixel")[0, 0]
    expected = [[1, 1.25, 1.75, 2], [1.5, 1.75, 2.25, 2.5], [2.5, 2.75, 3.25, 3.5], [3, 3.25, 3.75, 4]]
    np.testing.assert_allclose(linear, expected)
    corners = resize_ref(x, 4, 4, "linear", "align_corners")[0, 0]
    third = 1 / 3
    np.testing.assert_allclose(corners[0], [1, 1 + third, 2 - third, 2])
    np.testing.assert_allclose(corners[:, 0], [1, 1 + 2 * third, 3 - 2 * third, 3])
    # downsample_sizes_nearest: 2x4 -> 1x2 gives [[1, 3]] (asymmetric would too)
    y = np.arange(1.0, 9.0).reshape(1, 1, 2, 4)
    assert resize_ref(y, 1, 2, "nearest", "half_pixel")[0, 0].tolist() == [[1.0, 3.0]]


RESIZE_MODES = ["half_pixel", "pytorch_half_pixel", "asymmetric", "align_corners"]


@pytest.mark.parametrize("mode", RESIZE_MODES)
@pytest.mark.parametrize("method", ["nearest", "linear"])
def test_resize(method: str, mode: str) -> None:
    exe = compile_fn(
        {"x": rb.tensor(["n", 2, "h", "w"])},
        lambda x: (
            R.resize(x, ["2 * h", "w + 1"], method, mode),
            R.resize(x, ["h floordiv 2 + 1", 3], method, mode),
        ),
    )
    for shape in [(1, 2, 1, 1), (2, 2, 3, 5), (1, 2, 6, 2), (3, 2, 7, 8)]:
        x = rand(shape)
        n, c, h, w = shape
        up, down = exe(x)
        close(up, resize_ref(x, 2 * h, w + 1, method, mode))
        close(down, resize_ref(x, h // 2 + 1, 3, method, mode))


def test_f16_kernels() -> None:
    exe = compile_fn(
        {"x": rb.tensor(["n", 2, "h", "w"], "f16")},
        lambda x: (
            R.softmax(x, -1),
            R.avg_pool2d(x, 3, 2, 1, ceil_mode=True),
            R.adaptive_avg_pool2d(x, 2),
            R.resize(x, ["2 * h", "w"], "linear"),
        ),
    )
    for shape in [(1, 2, 2, 2), (2, 2, 5, 6), (1, 2, 3, 7)]:
        x = rand(shape, np.float16)
        n, c, h, w = shape
        expected = [
            softmax_ref(x, -1, False),
            pool_ref(x, (3, 3), (2, 2), (1, 1, 1, 1), (1, 1), True, "avg"),
            adaptive_ref(x, 2, 2),
            resize_ref(x, 2 * h, w, "linear", "half_pixel"),
        ]
        for got, ref in zip(exe(x), expected):
            assert got.dtype == np.float16
            np.testing.assert_allclose(got.astype(np.float64), ref, rtol=4e-3, atol=4e-3)


def test_resize_nearest_ints() -> None:
    exe = compile_fn(
        {"x": rb.tensor(["n", "c", "h", "w"], "i32")}, lambda x: R.resize(x, ["3 * h", "w floordiv 2 + 1"])
    )
    for shape in [(1, 1, 1, 1), (2, 3, 4, 5), (1, 1, 3, 9)]:
        x = rand(shape, np.int32, -1000, 1000)
        n, c, h, w = shape
        close(exe(x), resize_ref(x, 3 * h, w // 2 + 1, "nearest", "half_pixel"), "i32")


def test_resize_unknown_size_is_a_clear_error() -> None:
    with pytest.raises(RelaxError, match="relax.resize: result .* has unknown dims"):
        compile_fn({"x": rb.tensor(["n", 2, "h", "w"])}, lambda x: R.resize(x, ["?", 4]))


def test_resize_linear_needs_floats() -> None:
    with pytest.raises(RelaxError, match="method 'linear' needs a float dtype, got i32"):
        compile_fn({"x": rb.tensor(["n", 2, "h", "w"], "i32")}, lambda x: R.resize(x, [4, 4], "linear"))


# resize_axis: one axis, every ONNX Resize mode


def keys_cubic(d: np.ndarray, a: float) -> np.ndarray:
    d = np.abs(d)
    near = (a + 2) * d**3 - (a + 3) * d**2 + 1
    far = a * d**3 - 5 * a * d**2 + 8 * a * d - 4 * a
    return np.where(d <= 1, near, np.where(d < 2, far, 0.0))


def resize_axis_ref(
    x, axis, out, method, scale, a=-0.75, exclude=False, nearest="round_prefer_floor", antialias=False
):
    """ONNX Resize along one axis (half_pixel): taps around ceil(coord), weights by distance (antialias:
    a filter widened by 1 / scale when downscaling, its weights normalized)."""
    size = x.shape[axis]
    if out == 0:
        return np.take(x, np.zeros(0, np.int64), axis=axis)
    s = scale or out / size
    coord = (np.arange(out) + 0.5) / s - 0.5
    if method == "nearest":
        pick = {
            "round_prefer_floor": np.ceil(coord - 0.5),
            "round_prefer_ceil": np.floor(coord + 0.5),
            "floor": np.floor(coord),
            "ceil": np.ceil(coord),
        }[nearest]
        return np.take(x, np.clip(pick.astype(np.int64), 0, size - 1), axis=axis)
    reach = 1 if method == "linear" else 2
    narrow = min(s, 1.0) if antialias else 1.0
    taps = 2 * int(np.ceil(reach / narrow))
    base = np.ceil(coord) - taps // 2
    idx = base[:, None] + np.arange(taps)[None, :]
    dist = (idx - coord[:, None]) * narrow
    w = np.maximum(1 - np.abs(dist), 0) if method == "linear" else keys_cubic(dist, a)
    if antialias:
        w = w / w.sum(axis=1, keepdims=True)
    if exclude:
        w = np.where((idx < 0) | (idx > size - 1), 0.0, w)
        w = w / w.sum(axis=1, keepdims=True)
    g = np.take(x.astype(np.float64), np.clip(idx, 0, size - 1).astype(np.int64), axis=axis)
    shape = [1] * x.ndim + [1]
    shape[axis], shape[axis + 1] = out, taps
    return (g * w.reshape(shape)).sum(axis=axis + 1)


def test_resize_axis_matches_resize_and_numpy() -> None:
    exe = compile_fn(
        {"x": rb.tensor(["n", 2, "h", "w"])},
        lambda x: (
            R.resize_axis(R.resize_axis(x, 2, "2 * h", "linear"), 3, "w + 1", "linear"),
            R.resize_axis(x, 3, "w * 2", "cubic", scale=2.0, cubic_a=-0.5, exclude_outside=True),
            R.resize_axis(x, 2, "h + 3", "cubic"),
            R.resize_axis(x, 3, "w + 2", "nearest", nearest_mode="round_prefer_ceil"),
        ),
    )
    for shape in [(1, 2, 1, 1), (2, 2, 3, 5), (1, 2, 6, 2)]:
        x = rand(shape)
        n, c, h, w = shape
        lin, cub, cub2, near = exe(x)
        close(lin, resize_ref(x, 2 * h, w + 1, "linear", "half_pixel"))
        close(cub, resize_axis_ref(x, 3, 2 * w, "cubic", 2.0, a=-0.5, exclude=True))
        close(cub2, resize_axis_ref(x, 2, h + 3, "cubic", 0.0))
        close(near, resize_axis_ref(x, 3, w + 2, "nearest", 0.0, nearest="round_prefer_ceil"))


def test_resize_axis_ints_and_errors() -> None:
    exe = compile_fn(
        {"x": rb.tensor(["n", "l"], "i32")}, lambda x: R.resize_axis(x, 1, "3 * l", nearest_mode="floor")
    )
    for shape in [(1, 1), (2, 5)]:
        x = rand(shape, np.int32, -1000, 1000)
        close(exe(x), resize_axis_ref(x, 1, 3 * shape[1], "nearest", 0.0, nearest="floor"), "i32")
    with pytest.raises(RelaxError, match="method 'cubic' needs a float dtype, got i32"):
        compile_fn({"x": rb.tensor(["n", 4], "i32")}, lambda x: R.resize_axis(x, 1, 8, "cubic"))


def test_resize_axis_antialias_with_a_run_time_scale() -> None:
    """A filter as wide as size / output size needs, chosen at run time."""
    exe = compile_fn(
        {"x": rb.tensor([2, "l"])},
        lambda x: (
            R.resize_axis(x, 1, "l // 3", "linear", antialias=True),
            R.resize_axis(x, 1, "(l + 1) // 2", "cubic", antialias=True, exclude_outside=True),
            R.resize_axis(x, 1, "2 * l", "cubic", antialias=True),
        ),
    )
    for n in [1, 2, 3, 7, 31, 100]:
        x = rand((2, n))
        lin, cub, up = exe(x)
        close(lin, resize_axis_ref(x, 1, n // 3, "linear", 0.0, antialias=True))
        close(cub, resize_axis_ref(x, 1, (n + 1) // 2, "cubic", 0.0, exclude=True, antialias=True))
        close(up, resize_axis_ref(x, 1, 2 * n, "cubic", 0.0, antialias=True))


F32_MAX = float(np.finfo(np.float32).max)
# rows of: about +-max (mixed signs), about +max, denormals, ordinary values
MAGNITUDES = {
    "max mixed": lambda r: np.sign(r - 0.5) * (0.9 + 0.1 * r) * F32_MAX,
    "max positive": lambda r: (0.9 + 0.1 * r) * F32_MAX,
    "denormal": lambda r: r * 1e-40,
    "ordinary": lambda r: 4 * r - 2,
}


@pytest.mark.parametrize("kind", ["layer", "rms", "group"])
@pytest.mark.parametrize("magnitude", list(MAGNITUDES))
def test_norms_do_not_overflow(kind: str, magnitude: str) -> None:
    """Statistics at float32's extremes match a float64 reference (sum and squares overflowed to NaN)."""
    if kind == "group":
        exe = compile_fn(
            {"x": rb.tensor(["n", 4, "l"]), "g": rb.tensor([4]), "b": rb.tensor([4])},
            lambda x, g, b: R.group_norm(x, g, b, 2, 1e-5),
        )
        shapes = [(0, 4, 3), (1, 4, 1), (2, 4, 7)]
    else:
        params = {"x": rb.tensor(["n", "d"]), "g": rb.tensor(["d"])}
        if kind == "rms":
            exe = compile_fn(params, lambda x, g: R.rms_norm(x, g, [-1], 1e-5))
        else:
            exe = compile_fn(
                {**params, "b": rb.tensor(["d"])}, lambda x, g, b: R.layer_norm(x, g, b, [-1], 1e-5)
            )
        shapes = [(0, 5), (1, 1), (1, 7), (3, 512), (2, 1000)]
    rng = np.random.default_rng(0)
    for shape in shapes:
        x = MAGNITUDES[magnitude](rng.random(shape)).astype(np.float32)
        g, b = rand(shape[1:2], low=0.5, high=2.0), rand(shape[1:2])
        with np.errstate(over="ignore"):
            if kind == "group":
                actual, expected = exe(x, g, b), group_norm_ref(x, g, b, 2, 1e-5)
            elif kind == "rms":
                actual, expected = exe(x, g), layer_norm_ref(x, g, None, [-1], 1e-5, centered=False)
            else:
                actual, expected = exe(x, g, b), layer_norm_ref(x, g, b, [-1], 1e-5)
        assert np.isfinite(actual).all(), f"{magnitude} {shape}: non-finite output"
        # at O0 rows are summed in sequence (no reassociation): the mean's rounding, magnified by
        # |mean| / std (about 5 for "max positive" rows), reaches ~5e-5 on 1000-element rows
        np.testing.assert_allclose(actual, expected, rtol=1e-4, atol=1e-4, err_msg=f"{magnitude} {shape}")

"""ONNX signal ops (window functions, DFT, STFT) against onnxruntime, at several sizes including 0, 1 and odd."""

from __future__ import annotations

import numpy as np
import pytest
from onnx import TensorProto, helper
from onnx_util import check_against_ort, graph_model, value_info

import relax_mlir
from relax_mlir.frontend.onnx import from_onnx


@pytest.mark.parametrize("op", ["HannWindow", "HammingWindow", "BlackmanWindow"])
@pytest.mark.parametrize("periodic", [0, 1])
def test_window_with_runtime_size(op: str, periodic: int) -> None:
    """The size is a graph input: one compiled model serves every length."""
    node = helper.make_node(op, ["size"], ["y"], periodic=periodic)
    g = helper.make_graph(
        [node], "w", [value_info("size", np.int64, [])], [value_info("y", np.float32, None)]
    )
    model = graph_model(g, 17)
    for n in (0, 1, 2, 7, 10):
        check_against_ort(model, np.array(n, np.int64), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("n", [1, 5])
def test_window_with_constant_size_is_static(n: int) -> None:
    size = helper.make_tensor("size", TensorProto.INT32, [], [n])
    node = helper.make_node("HannWindow", ["size"], ["y"], output_datatype=TensorProto.DOUBLE)
    g = helper.make_graph([node], "w", [], [value_info("y", np.float64, None)], [size])
    module = from_onnx(graph_model(g, 17))
    assert f"!relax.tensor<[{n}], f64>" in str(module)
    got = relax_mlir.compile(module)()
    np.testing.assert_allclose(got, 0.5 - 0.5 * np.cos(2 * np.pi * np.arange(n) / n), atol=1e-12)


def _dft_model(
    n_in: int, comps: int, opset: int = 17, dft_length: int | None = None, **attrs: object
) -> object:
    inputs = ["x"] + (["L"] if dft_length is not None else [])
    node = helper.make_node("DFT", inputs, ["y"], **attrs)
    ins = [value_info("x", np.float32, ["b", n_in, comps])]
    if dft_length is not None:
        ins.append(value_info("L", np.int64, []))
    return graph_model(helper.make_graph([node], "dft", ins, [value_info("y", np.float32, None)]), opset)


def _complex(y: np.ndarray) -> np.ndarray:
    return np.stack([y.real, y.imag], -1).astype(np.float32)


@pytest.mark.parametrize("n", [1, 2, 7, 10])
@pytest.mark.parametrize("batch", [0, 3])
def test_dft_against_numpy(n: int, batch: int) -> None:
    """fft, ifft, rfft and irfft (its default length 2 (n - 1)) along axis 1, against numpy."""
    rng = np.random.default_rng(n)
    real = rng.standard_normal((batch, n, 1)).astype(np.float32)
    cplx = rng.standard_normal((batch, n, 2)).astype(np.float32)
    z = cplx[..., 0].astype(np.float64) + 1j * cplx[..., 1]
    cases = [
        (_dft_model(n, 1, axis=1), real, _complex(np.fft.fft(real[..., 0], axis=1))),
        (_dft_model(n, 2, axis=1), cplx, _complex(np.fft.fft(z, axis=1))),
        (_dft_model(n, 2, axis=1, inverse=1), cplx, _complex(np.fft.ifft(z, axis=1))),
        (_dft_model(n, 1, axis=1, onesided=1), real, _complex(np.fft.rfft(real[..., 0], axis=1))),
    ]
    if n > 1:
        full = 2 * (n - 1)
        cases.append(
            (_dft_model(n, 2, axis=1, inverse=1, onesided=1), cplx, np.fft.irfft(z, full, 1)[..., None])
        )
    for model, x, want in cases:
        got = relax_mlir.compile(from_onnx(model))(x)
        np.testing.assert_allclose(got, want.astype(np.float32), rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("length", [1, 5, 12])
def test_dft_runtime_length_truncates_or_pads(length: int) -> None:
    """A dft_length graph input shorter or longer than the signal: numpy's fft(x, n=length)."""
    x = np.random.default_rng(length).standard_normal((2, 8, 2)).astype(np.float32)
    exe = relax_mlir.compile(from_onnx(_dft_model(8, 2, dft_length=0, axis=1)))
    got = exe(x, np.array(length, np.int64))
    want = _complex(np.fft.fft(x[..., 0] + 1j * x[..., 1].astype(np.float64), n=length, axis=1))
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)


def _dft_runtime_axis_model(shape: list[int | str], **attrs: object) -> object:
    node = helper.make_node("DFT", ["x", "", "axis"], ["y"], **attrs)
    ins = [value_info("x", np.float32, shape), value_info("axis", np.int64, [])]
    return graph_model(helper.make_graph([node], "dft", ins, [value_info("y", np.float32, None)]), 20)


@pytest.mark.parametrize("dims", [(2, 3, 5), (0, 1, 4), (1, 7, 1)])
def test_dft_runtime_axis_against_numpy(dims: tuple[int, int, int]) -> None:
    """The axis (opset 20) is a graph input: one compiled model transforms along any allowed axis, and
    negative axes count from the back."""
    rng = np.random.default_rng(sum(dims))
    x = rng.standard_normal((*dims, 2)).astype(np.float32)
    z = x[..., 0].astype(np.float64) + 1j * x[..., 1]
    exe = relax_mlir.compile(from_onnx(_dft_runtime_axis_model(["a", "b", "c", 2])))
    inv = relax_mlir.compile(from_onnx(_dft_runtime_axis_model(["a", "b", "c", 2], inverse=1)))
    for axis in (0, 1, 2, -4, -3, -2):
        got = exe(x, np.array(axis, np.int64))
        if x.size == 0:  # numpy has no DFT of length 0
            assert got.shape == x.shape
            continue
        np.testing.assert_allclose(got, _complex(np.fft.fft(z, axis=axis % 4)), rtol=1e-4, atol=1e-4)
        got = inv(x, np.array(axis, np.int64))
        np.testing.assert_allclose(got, _complex(np.fft.ifft(z, axis=axis % 4)), rtol=1e-4, atol=1e-4)


def test_dft_runtime_axis_out_of_range_is_input_error() -> None:
    """The last axis holds the parts, and an axis past the rank does not exist: InputError, not a crash."""
    exe = relax_mlir.compile(from_onnx(_dft_runtime_axis_model([2, 3, 2])))
    x = np.ones((2, 3, 2), np.float32)
    for axis in (2, -1, 3, -4):
        with pytest.raises(relax_mlir.errors.InputError, match=r"'axis' must lie in \[-3, -2\] or \[0, 1\]"):
            exe(x, np.array(axis, np.int64))
    np.testing.assert_allclose(exe(x, np.array(-3, np.int64))[..., 0], [[2, 2, 2], [0, 0, 0]], atol=1e-6)


@pytest.mark.parametrize(("length", "step", "frame"), [(16, 4, 8), (9, 1, 9), (33, 5, 7)])
def test_stft_against_ort(length: int, step: int, frame: int) -> None:
    """Frames and step as graph inputs, with and without a window: onnxruntime's values."""
    x = np.random.default_rng(length).standard_normal((2, length, 1)).astype(np.float32)
    plain = helper.make_node("STFT", ["x", "step", "", "frame"], ["y"])
    g = helper.make_graph(
        [plain],
        "stft",
        [
            value_info("x", np.float32, ["b", "n", 1]),
            value_info("step", np.int64, []),
            value_info("frame", np.int64, []),
        ],
        [value_info("y", np.float32, None)],
    )
    check_against_ort(
        graph_model(g, 17), x, np.array(step, np.int64), np.array(frame, np.int64), rtol=1e-4, atol=1e-4
    )
    windowed = helper.make_node("STFT", ["x", "step", "w"], ["y"], onesided=0)
    g = helper.make_graph(
        [windowed],
        "stft",
        [
            value_info("x", np.float32, ["b", "n", 1]),
            value_info("step", np.int64, []),
            value_info("w", np.float32, [frame]),
        ],
        [value_info("y", np.float32, None)],
    )
    w = np.hanning(frame).astype(np.float32)
    check_against_ort(graph_model(g, 17), x, np.array(step, np.int64), w, rtol=1e-4, atol=1e-4)

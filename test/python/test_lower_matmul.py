"""matmul kernels (numpy semantics: 1-D operands, batch broadcasting) compiled once, run at several shapes.

Which named linalg op each case becomes is pinned by test/lit/conversion/relax-to-linalg-matmul.mlir.
"""

from __future__ import annotations

import numpy as np
import pytest
from oprun import build_fn, compile_fn, rand

import relax_mlir.builder as rb
from relax_mlir import compile
from relax_mlir.dialects import relax as R
from relax_mlir.errors import CompileError, InputError

SIZES = [
    {"n": 1, "b": 1, "s": 1, "k": 1, "m": 1},
    {"n": 7, "b": 2, "s": 7, "k": 5, "m": 3},
    {"n": 33, "b": 3, "s": 33, "k": 64, "m": 17},
    {"n": 0, "b": 2, "s": 0, "k": 3, "m": 2},
]

# (lhs shape, rhs shape): dims are ints or symbols looked up in SIZES
CASES = [
    (["n", 64], [64, 32]),  # 2-D x 2-D: linalg.matmul
    (["b", "s", 64], [64, 48]),  # the transformer case: batch_matmul broadcasting the rhs
    (["n", 5, 64], [64, 48]),  # leading dims collapsed into the rows of one linalg.matmul
    (["b", "n", "k"], ["b", "k", "m"]),  # linalg.batch_matmul
    (["n", "k"], ["b", "k", "m"]),  # batch_matmul broadcasting the lhs
    ([2, "b", "n", "k"], [2, "b", "k", "m"]),  # batch dims collapsed into one
    (["s", "b", "n", "k"], ["s", "b", "k", "m"]),  # two dynamic batch dims: linalg.generic
    (["b", 1, "n", "k"], [3, "k", "m"]),  # broadcast batch dims: linalg.generic
    (["k"], ["k", "m"]),  # 1-D operands get a unit dim
    (["n", "k"], ["k"]),
    (["k"], ["k"]),
    (["k"], ["b", "k", "m"]),
    (["b", "s", "k"], ["k"]),
]


def _concrete(shape: list, sizes: dict[str, int]) -> tuple[int, ...]:
    return tuple(sizes[d] if isinstance(d, str) else d for d in shape)


@pytest.mark.parametrize("lhs,rhs", CASES, ids=[f"{a}x{b}" for a, b in CASES])
def test_matmul_f32(lhs: list, rhs: list) -> None:
    f = compile_fn({"x": rb.tensor(lhs), "w": rb.tensor(rhs)}, lambda x, w: R.matmul(x, w))
    for sizes in SIZES:
        x, w = rand(_concrete(lhs, sizes)), rand(_concrete(rhs, sizes))
        expected = np.matmul(x, w)
        actual = f(x, w)
        assert actual.shape == expected.shape and actual.dtype == np.float32
        np.testing.assert_allclose(actual, expected, rtol=1e-4, atol=1e-4, err_msg=str(sizes))


@pytest.mark.parametrize("dtype", ["i32", "i64", "f64"])
@pytest.mark.parametrize("lhs,rhs", [(["n", "k"], ["k", "m"]), (["b", "n", "k"], ["b", "k", "m"])])
def test_matmul_other_dtypes(lhs: list, rhs: list, dtype: str) -> None:
    f = compile_fn({"x": rb.tensor(lhs, dtype), "w": rb.tensor(rhs, dtype)}, lambda x, w: R.matmul(x, w))
    np_dtype = {"i32": np.int32, "i64": np.int64, "f64": np.float64}[dtype]
    for sizes in SIZES:
        x, w = rand(_concrete(lhs, sizes), np_dtype, -9, 9), rand(_concrete(rhs, sizes), np_dtype, -9, 9)
        if dtype == "f64":
            np.testing.assert_allclose(f(x, w), np.matmul(x, w), rtol=1e-12, atol=1e-10)
        else:
            np.testing.assert_array_equal(f(x, w), np.matmul(x, w))


def test_unequal_contraction_symbols_are_checked_at_run_time() -> None:
    """ "k" and "k2" may differ: the kernel assumes they are equal and the caller checks it."""
    f = compile_fn({"x": rb.tensor(["n", "k"]), "w": rb.tensor(["k2", "m"])}, lambda x, w: R.matmul(x, w))
    for n, k, m in [(1, 1, 1), (4, 6, 3), (9, 64, 5)]:
        x, w = rand((n, k)), rand((k, m))
        np.testing.assert_allclose(f(x, w), x @ w, rtol=1e-4, atol=1e-4)
    with pytest.raises(
        InputError, match=r"relax.match_cast: dim 0 of .*\"k2\".* must be k, got 5 \(expected 4\)"
    ):
        f(rand((3, 4)), rand((5, 2)))


def test_wrong_input_shape_raises() -> None:
    f = compile_fn({"x": rb.tensor(["n", 64]), "w": rb.tensor([64, 32])}, lambda x, w: R.matmul(x, w))
    with pytest.raises(InputError, match="parameter 'w' dim 0 is 63, expected 64"):
        f(rand((2, 64)), rand((63, 32)))
    g = compile_fn(
        {"x": rb.tensor(["b", "n", "k"]), "w": rb.tensor(["b", "k", "m"])}, lambda x, w: R.matmul(x, w)
    )
    with pytest.raises(InputError, match="parameter 'w' dim 0 is 3, but symbol 'b' is 2"):
        g(rand((2, 4, 5)), rand((3, 5, 6)))


def test_unknown_dims() -> None:
    """Unknown ("?") dims: the kernel allocates its result; a known contraction dim is checked on the other."""
    f = compile_fn({"x": rb.tensor(["?", "?"]), "w": rb.tensor([3, 4])}, lambda x, w: R.matmul(x, w))
    for n in [1, 6]:
        x, w = rand((n, 3)), rand((3, 4))
        np.testing.assert_allclose(f(x, w), x @ w, rtol=1e-5, atol=1e-5)
    with pytest.raises(InputError, match="dim 1 of .* must be 3, got 2"):
        f(rand((5, 2)), rand((3, 4)))


def test_unknown_contraction_dims_are_a_clear_error() -> None:
    with pytest.raises(
        CompileError, match="contraction dims .* are unknown: state them with relax.match_cast"
    ):
        compile_fn({"x": rb.tensor(["?"]), "w": rb.tensor(["?"])}, lambda x, w: R.matmul(x, w))


def test_large_static_weight() -> None:
    f = compile_fn({"x": rb.tensor(["n", 512]), "w": rb.tensor([512, 512])}, lambda x, w: R.matmul(x, w))
    for n in [1, 7, 300]:
        x, w = rand((n, 512)), rand((512, 512))
        np.testing.assert_allclose(f(x, w), x @ w, rtol=1e-4, atol=1e-3)


ZERO_CASES = [
    (["b", 0, 16], [16, 8]),  # rows collapsed with a dynamic dim: once an invalid tensor.collapse_shape
    ([0, 8], "const"),  # a constant weight is packed at O1+: once an out-of-bounds tensor.extract_slice
    (["b", 0, 5], ["b", 5, 8]),
    (["b", "s", 0], [0, 8]),  # k = 0: the result is zeros, not empty
]


@pytest.mark.parametrize("level", [0, 1, 2, 3])
@pytest.mark.parametrize("lhs,rhs", ZERO_CASES, ids=[f"{a}x{b}" for a, b in ZERO_CASES])
def test_static_zero_dims(lhs: list, rhs: list | str, level: int) -> None:
    """Static 0 dims compile at every level and give numpy's (empty or zero) result."""
    w = rand((8, 3))
    params = {"x": rb.tensor(lhs)} | ({} if rhs == "const" else {"w": rb.tensor(rhs)})
    body = (lambda x: R.matmul(x, R.constant(w))) if rhs == "const" else (lambda x, w: R.matmul(x, w))
    f = compile(str(build_fn(params, body)), opt_level=level)
    for sizes in SIZES:
        x = rand(_concrete(lhs, sizes))
        args = [x] if rhs == "const" else [x, rand(_concrete(rhs, sizes))]
        expected = np.matmul(x, w if rhs == "const" else args[1])
        actual = f(*args)
        assert actual.shape == expected.shape
        np.testing.assert_allclose(actual, expected, rtol=1e-4, atol=1e-4, err_msg=str(sizes))


def test_empty_result_still_checks_contraction_dims() -> None:
    """An empty result computes nothing, but the kernel's assumption k == k2 is still checked."""
    f = compile_fn({"x": rb.tensor([0, "k"]), "w": rb.tensor(["k2", 3])}, lambda x, w: R.matmul(x, w))
    assert f(rand((0, 4)), rand((4, 3))).shape == (0, 3)
    with pytest.raises(InputError, match=r"must be k, got 5 \(expected 4\)"):
        f(rand((0, 4)), rand((5, 3)))

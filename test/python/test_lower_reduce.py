"""Kernels of reductions, arg reductions, cumsum, topk, arange/full and the data-dependent unique/nonzero.

Each function is compiled once (``compile_fn`` memoizes) and run at several shapes from that one
compilation, the symbolic dims changing between calls (sizes 1, odd, 0 where numpy allows it), and
compared with numpy.
"""

from __future__ import annotations

import warnings

import numpy as np
import oprun
import pytest
from oprun import compile_fn, rand

import relax_mlir.builder as rb
from relax_mlir.dialects import relax as R
from relax_mlir.errors import CompileError, InputError, RelaxError

X = {"x": rb.tensor(["n", 3, "m"])}
SHAPES = [(1, 1), (2, 5), (7, 3)]  # (n, m) of x: [n, 3, m]

NUMPY = {"sum": np.sum, "mean": np.mean, "max": np.max, "min": np.min, "prod": np.prod, "variance": np.var}
AXES = [(None, False), (None, True), ([1], True), ([-1], False), ([0, 2], True), ([-3, -1], False)]


def _axis(axes: list[int] | None) -> tuple[int, ...] | None:
    return None if axes is None else tuple(axes)


def _ties(shape: tuple[int, ...], dtype: type = np.float32) -> np.ndarray:
    """Small integers (as ``dtype``): many equal values, so ties are exercised."""
    rng = np.random.default_rng(sum(shape) + len(shape))
    return rng.integers(-3, 3, size=shape).astype(dtype)


# -- sum, mean, max, min, prod, variance ----------------------------------------------------------------


@pytest.mark.parametrize("axes,keepdims", AXES)
@pytest.mark.parametrize("name", list(NUMPY))
def test_reduction_f32(name: str, axes: list[int] | None, keepdims: bool) -> None:
    f = compile_fn(X, lambda x: getattr(R, name)(x, axes, keepdims))
    shapes = list(SHAPES)
    if name not in ("max", "min") or (axes is not None and 0 not in [a % 3 for a in axes]):
        shapes.append((0, 2))  # numpy has no max/min of an empty set
    for n, m in shapes:
        x = rand((n, 3, m), low=0.5, high=1.5) if name == "prod" else rand((n, 3, m))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # mean/var of nothing is nan
            expected = NUMPY[name](x, axis=_axis(axes), keepdims=keepdims)
        actual = f(x)
        assert actual.shape == expected.shape and actual.dtype == np.float32
        # f32 sums in another order than numpy's pairwise ones differ by up to ~count * eps * sum|x|: a sum
        # that cancels to near 0 is only that close (atol 1e-6 failed by 1.2e-6 on 21 elements summing to 0.006)
        count = x.size // max(1, expected.size)
        np.testing.assert_allclose(
            actual, expected, rtol=1e-5, atol=1e-6 * max(1, count), err_msg=f"n={n} m={m}"
        )


@pytest.mark.parametrize("dtype", ["i32", "i64", "ui8"])
@pytest.mark.parametrize("name", ["sum", "mean", "max", "min", "prod"])
def test_reduction_int(name: str, dtype: str) -> None:
    f = compile_fn(X | {"x": rb.tensor(["n", 3, "m"], dtype)}, lambda x: getattr(R, name)(x, [1, -1]))
    np_dtype = {"i32": np.int32, "i64": np.int64, "ui8": np.uint8}[dtype]
    low = 0 if dtype == "ui8" else -50
    for n, m in [*SHAPES, (0, 4)]:
        x = rand((n, 3, m), np_dtype, low, 50)
        if name == "mean":  # an integer mean rounds toward zero
            expected = np.trunc(x.sum(axis=(1, 2), dtype=np.float64) / (3 * m)).astype(np_dtype)
        else:  # wrapping arithmetic in the dtype itself
            expected = (
                NUMPY[name](x, axis=(1, 2), dtype=np_dtype)
                if name in ("sum", "prod")
                else NUMPY[name](x, axis=(1, 2))
            )
        np.testing.assert_array_equal(f(x), expected, err_msg=f"n={n} m={m}")


@pytest.mark.skipif(oprun.FINITE_ONLY, reason=oprun.NOT_FINITE)
def test_max_min_propagate_nan() -> None:
    f = compile_fn(X, lambda x: (R.max(x, [2]), R.min(x, [2])))
    x = rand((4, 3, 5))
    x[1, 2, 3] = np.nan
    hi, lo = f(x)
    np.testing.assert_array_equal(hi, np.max(x, axis=2))
    np.testing.assert_array_equal(lo, np.min(x, axis=2))


# -- argmax, argmin --------------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", ["f32", "i32"])
@pytest.mark.parametrize("axis,keepdims", [(None, False), (None, True), (1, True), (-1, False), (0, False)])
@pytest.mark.parametrize("name", ["argmax", "argmin"])
def test_arg_reduction(name: str, axis: int | None, keepdims: bool, dtype: str) -> None:
    f = compile_fn({"x": rb.tensor(["n", 3, "m"], dtype)}, lambda x: getattr(R, name)(x, axis, keepdims))
    np_dtype = np.float32 if dtype == "f32" else np.int32
    for n, m in SHAPES:
        x = _ties((n, 3, m), np_dtype)
        if dtype == "f32" and n == 7 and not oprun.FINITE_ONLY:
            x[1, 1, 1] = x[3, 0, 2] = np.nan  # numpy returns the first NaN for both
        expected = getattr(np, name)(x, axis=axis, keepdims=keepdims)
        actual = f(x)
        assert actual.dtype == np.int64 and actual.shape == expected.shape
        np.testing.assert_array_equal(actual, expected, err_msg=f"n={n} m={m}")


# -- cumsum ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", ["f32", "i64"])
@pytest.mark.parametrize("axis", [0, 1, -1])
def test_cumsum(axis: int, dtype: str) -> None:
    f = compile_fn({"x": rb.tensor(["n", 3, "m"], dtype)}, lambda x: R.cumsum(x, axis))
    np_dtype = np.float32 if dtype == "f32" else np.int64
    for n, m in [*SHAPES, (0, 2)]:
        x = rand((n, 3, m), np_dtype, -100, 100)
        np.testing.assert_allclose(f(x), np.cumsum(x, axis=axis, dtype=np_dtype), rtol=1e-5, atol=1e-5)


def _cumulative(x: np.ndarray, axis: int, prod: bool, exclusive: bool, reverse: bool) -> np.ndarray:
    """numpy reference of cumsum/cumprod with exclusive/reverse."""
    fn, start = (np.cumprod, 1) if prod else (np.cumsum, 0)
    y = np.flip(x, axis) if reverse else x
    if exclusive:
        pad = np.full_like(np.take(y, [0], axis=axis), start) if y.shape[axis] else np.take(y, [], axis=axis)
        y = np.concatenate([pad, np.take(y, np.arange(max(y.shape[axis] - 1, 0)), axis=axis)], axis=axis)
        y = y[tuple(slice(0, x.shape[axis]) if i == axis % x.ndim else slice(None) for i in range(x.ndim))]
    y = fn(y, axis=axis, dtype=x.dtype)
    return np.flip(y, axis) if reverse else y


@pytest.mark.parametrize("op", ["cumsum", "cumprod"])
@pytest.mark.parametrize("exclusive,reverse", [(True, False), (False, True), (True, True)])
def test_cumulative_flags(op: str, exclusive: bool, reverse: bool) -> None:
    fn = getattr(R, op)
    for dtype, np_dtype in (("f32", np.float32), ("i32", np.int32)):
        f = compile_fn(
            {"x": rb.tensor(["n", 3, "m"], dtype)}, lambda x: fn(x, -1, exclusive=exclusive, reverse=reverse)
        )
        g = compile_fn(
            {"x": rb.tensor(["n", 3, "m"], dtype)}, lambda x: fn(x, 0, exclusive=exclusive, reverse=reverse)
        )
        for n, m in [*SHAPES, (0, 2)]:
            x = rand((n, 3, m), np_dtype, -3, 3)
            for h, axis in ((f, -1), (g, 0)):
                want = _cumulative(x, axis, op == "cumprod", exclusive, reverse)
                np.testing.assert_allclose(h(x), want, rtol=1e-5, atol=1e-5, err_msg=f"{n=} {m=} {axis=}")


# -- topk --------------------------------------------------------------------------------------------------


def _topk(x: np.ndarray, k: int, axis: int, largest: bool) -> tuple[np.ndarray, np.ndarray]:
    """numpy reference: a stable sort (ties: lower index first; NaN above every number)."""
    key = -x.astype(np.float64) if largest else x.astype(np.float64)
    if largest:
        key[np.isnan(key)] = -np.inf
    order = np.argsort(key, axis=axis, kind="stable")
    indices = np.take(order, np.arange(k), axis=axis)
    return np.take_along_axis(x, indices, axis=axis), indices


@pytest.mark.parametrize("dtype", ["f32", "i32"])
@pytest.mark.parametrize(
    "k,axis,largest", [(2, -1, True), (3, -1, False), (1, 0, True), (3, 1, True), (0, 1, False)]
)
def test_topk(k: int, axis: int, largest: bool, dtype: str) -> None:
    f = compile_fn({"x": rb.tensor(["n", 3, "m"], dtype)}, lambda x: R.topk(x, k, axis, largest))
    np_dtype = np.float32 if dtype == "f32" else np.int32
    for n, m in [(1, 3), (2, 5), (7, 4)]:
        x = _ties((n, 3, m), np_dtype)
        values, indices = f(x)
        want_values, want_indices = _topk(x, k, axis, largest)
        assert indices.dtype == np.int64 and values.dtype == np_dtype
        np.testing.assert_array_equal(indices, want_indices, err_msg=f"n={n} m={m}")
        np.testing.assert_array_equal(values, want_values)


@pytest.mark.parametrize("largest", [True, False])
@pytest.mark.skipif(oprun.FINITE_ONLY, reason=oprun.NOT_FINITE)
def test_topk_nan_sorts_above_numbers(largest: bool) -> None:
    f = compile_fn({"x": rb.tensor(["n", 6])}, lambda x: R.topk(x, 4, 1, largest))
    x = _ties((3, 6))
    x[0, 4] = x[2, 0] = x[2, 3] = np.nan
    values, indices = f(x)
    want_values, want_indices = _topk(x, 4, 1, largest)
    np.testing.assert_array_equal(indices, want_indices)
    np.testing.assert_array_equal(values, want_values)


def test_topk_axis_shorter_than_k_at_run_time() -> None:
    """Past the end of a symbolic axis: index -1 and value 0 (no out-of-bounds reads)."""
    f = compile_fn({"x": rb.tensor(["n", 4])}, lambda x: R.topk(x, 3, 0))
    x = np.array([[1, 5, 3, 3], [2, 4, 3, 0]], np.float32)
    values, indices = f(x)
    np.testing.assert_array_equal(indices, [[1, 0, 0, 0], [0, 1, 1, 1], [-1, -1, -1, -1]])
    np.testing.assert_array_equal(values, [[2, 5, 3, 3], [1, 4, 3, 0], [0, 0, 0, 0]])


# -- arange, full ------------------------------------------------------------------------------------------

CREATE = [
    (lambda x: R.arange("n"), lambda n: np.arange(n)),
    (lambda x: R.arange(2, "n + 3", 2, "i32"), lambda n: np.arange(2, n + 3, 2, dtype=np.int32)),
    (lambda x: R.arange("n", 0, -3), lambda n: np.arange(n, 0, -3)),
    (lambda x: R.arange(0, "2 * n", 1, "f32"), lambda n: np.arange(0, 2 * n, 1, dtype=np.float32)),
    (lambda x: R.arange(0.5, 3.2, 0.25, "f32"), lambda n: np.arange(0.5, 3.2, 0.25, dtype=np.float32)),
    (lambda x: R.add(R.full(["n", 3], 2.5), x), lambda n: np.full((n, 3), 2.5, np.float32)),
    (lambda x: R.full(["n", "n + 1"], -7.9, "i32"), lambda n: np.full((n, n + 1), -7, np.int32)),
    (lambda x: R.zeros([2, "n"], "i64"), lambda n: np.zeros((2, n), np.int64)),
    (lambda x: R.ones([], "f64"), lambda n: np.ones((), np.float64)),
    (lambda x: R.full(["n"], float("-inf")), lambda n: np.full((n,), -np.inf, np.float32)),
]


@pytest.mark.parametrize("case", range(len(CREATE)))
def test_create(case: int) -> None:
    body, reference = CREATE[case]
    f = compile_fn({"x": rb.tensor(["n", 3])}, body)
    for n in [0, 1, 7]:
        actual, expected = f(np.zeros((n, 3), np.float32)), reference(n)
        assert actual.dtype == expected.dtype and actual.shape == expected.shape, (actual, expected)
        np.testing.assert_allclose(actual, expected, rtol=1e-6)


# -- unique, nonzero: outputs of data-dependent size, returned by the compiled code ------------------------


@pytest.mark.parametrize("dtype", ["f32", "i64", "i32"])
def test_unique(dtype: str) -> None:
    f = compile_fn({"x": rb.tensor(["n", 3], dtype)}, lambda x: R.unique(x))
    np_dtype = {"f32": np.float32, "i64": np.int64, "i32": np.int32}[dtype]
    for n in [0, 1, 5, 333]:
        x = rand((n, 3), np_dtype, -20, 20)
        if dtype == "f32":
            x = np.round(x, 1)
            if not oprun.FINITE_ONLY:
                x[1::4, 1] = np.nan  # NaNs sort last and count once (numpy's equal_nan)
        before = x.copy()
        actual = f(x)
        assert actual.dtype == np_dtype
        np.testing.assert_array_equal(actual, np.unique(x), err_msg=f"n={n}")
        np.testing.assert_array_equal(x, before)  # the sort works on a copy


def test_static_shapes() -> None:
    """Static input shapes (and a 0-d one): the counted result dims stay dynamic."""
    f = compile_fn(
        {"x": rb.tensor([3, 4], "i32"), "s": rb.tensor([])},
        lambda x, s: (R.unique(x), R.nonzero(x), R.unique(s)),
    )
    for seed in range(3):
        x = rand((3, 4), np.int32, -2 - seed, 2)
        s = np.array(seed - 0.5, np.float32)
        unique, nonzero, unique_s = f(x, s)
        np.testing.assert_array_equal(unique, np.unique(x))
        np.testing.assert_array_equal(nonzero, np.stack(np.nonzero(x)))
        np.testing.assert_array_equal(unique_s, np.unique(s))


def test_data_dependent_results_feed_further_kernels() -> None:
    """unique's buffer (returned by its kernel) flows into cumsum and sum (relax-split-deallocs)."""
    f = compile_fn({"x": rb.tensor(["n"], "i64")}, lambda x: (R.cumsum(R.unique(x), 0), R.sum(R.unique(x))))
    for n in (1, 5, 40):
        x = rand((n,), np.int64, -3, 4)
        c, s = f(x)
        np.testing.assert_array_equal(c, np.cumsum(np.unique(x)))
        assert s == np.unique(x).sum()


@pytest.mark.parametrize("shape", [["n"], ["n", "m"], ["n", 2, "m"]])
def test_nonzero(shape: list) -> None:
    f = compile_fn({"x": rb.tensor(shape)}, lambda x: R.nonzero(x))
    for n, m in [(0, 3), (1, 1), (4, 5), (9, 3)]:
        concrete = tuple(n if d == "n" else m if d == "m" else d for d in shape)
        x = rand(concrete) * (rand(concrete, low=0, high=1) > 0.6)
        if x.size > 3 and not oprun.FINITE_ONLY:
            x.reshape(-1)[2] = np.nan  # NaN is non-zero
        actual = f(x)
        assert actual.dtype == np.int64
        np.testing.assert_array_equal(actual, np.stack(np.nonzero(x)), err_msg=str(concrete))


def test_nonzero_int() -> None:
    f = compile_fn({"x": rb.tensor(["n", 4], "i32")}, lambda x: R.nonzero(x))
    for n in [1, 3, 8]:
        x = rand((n, 4), np.int32, -1, 2)
        np.testing.assert_array_equal(f(x), np.stack(np.nonzero(x)))


UNKNOWN_CASES = {
    "sum": (lambda x: R.sum(x, [1], True), lambda x: x.sum(1, keepdims=True)),
    "variance": (lambda x: R.variance(x, [0]), lambda x: x.var(0)),
    "argmax": (lambda x: R.argmax(x, 0), lambda x: np.argmax(x, 0)),
    "cumsum": (lambda x: R.cumsum(x, 0), lambda x: np.cumsum(x, 0)),
    "topk": (lambda x: R.topk(x, 2, 1)[1], lambda x: np.argsort(-x, 1, kind="stable")[:, :2]),
}


@pytest.mark.parametrize("name", list(UNKNOWN_CASES))
def test_unknown_dims(name: str) -> None:
    """A "?" dim in a result: the kernel allocates it (sizes read from the input) and returns it."""
    body, reference = UNKNOWN_CASES[name]
    f = compile_fn({"x": rb.tensor(["?", 3])}, body)
    for n in [1, 6]:
        x = rand((n, 3))
        np.testing.assert_allclose(f(x), reference(x), rtol=1e-5, atol=1e-6)


# -- booleans (stored as bytes) ------------------------------------------------------------------------------

BOOL_CASES = {
    "nonzero": (lambda x: R.nonzero(x), lambda x: np.stack(np.nonzero(x))),
    "argmax": (lambda x: R.argmax(x, 1), lambda x: np.argmax(x, 1)),
    "argmin": (lambda x: R.argmin(x), lambda x: np.argmin(x)),
    "max": (lambda x: R.max(x, [1]), lambda x: np.max(x, 1)),
    "min": (lambda x: R.min(x, [0], True), lambda x: np.min(x, 0, keepdims=True)),
    "prod": (lambda x: R.prod(x, [1]), lambda x: np.all(x, 1)),
    "unique": (lambda x: R.unique(x), np.unique),
    "topk": (lambda x: R.topk(x, 2, 1)[1], lambda x: np.argsort(~x, 1, kind="stable")[:, :2]),
    "full": (lambda x: R.full(["n"], 1.0, "i1"), lambda x: np.ones(x.shape[0], np.bool_)),
}


@pytest.mark.parametrize("name", list(BOOL_CASES))
def test_bool(name: str) -> None:
    body, reference = BOOL_CASES[name]
    f = compile_fn({"x": rb.tensor(["n", 5], "i1")}, body)
    for n in [1, 4, 9]:
        x = rand((n, 5), np.bool_)
        actual, expected = f(x), reference(x)
        assert actual.dtype == expected.dtype
        np.testing.assert_array_equal(actual, expected, err_msg=f"n={n}")


# -- errors ------------------------------------------------------------------------------------------------


def test_wrong_input_shape_raises() -> None:
    f = compile_fn(X, lambda x: R.sum(x, [1]))
    with pytest.raises(InputError, match="parameter 'x' dim 1 is 4, expected 3"):
        f(rand((2, 4, 5)))
    g = compile_fn({"x": rb.tensor(["n", 3])}, lambda x: R.arange("n"))
    with pytest.raises(InputError, match="parameter 'x' has rank 1"):
        g(rand((3,)))


@pytest.mark.parametrize(
    "body,message",
    [
        (lambda x: R.variance(x, [1]), "relax.variance: variance of an integer"),
        (lambda x: R.sum(R.astype(x, "i1")), "relax.sum: sum of an i1 tensor"),
    ],
)
def test_unsupported_cases_raise(body, message: str) -> None:  # noqa: ANN001
    with pytest.raises(CompileError, match=message):
        compile_fn({"x": rb.tensor(["n", 3], "i32")}, body)


def test_topk_k_larger_than_static_dim_is_a_shape_error() -> None:
    with pytest.raises(RelaxError, match="k = 5 is larger than dim 1 of size 3"):
        compile_fn({"x": rb.tensor(["n", 3])}, lambda x: R.topk(x, 5, 1))

"""Lowering of the elementwise ops (dialects/ops/elementwise.py, unary.py, casts.py), run against numpy.

Every op is compiled once (alone, or in a bundle of ops of one dtype) and run at several sizes of a
symbolic dim, including 0 and 1. Float data mixes random values with 0, -0, halves, inf and NaN, so the
NaN rules, the signs of mod and the rounding of floor_divide and round are checked exactly.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
import oprun
import pytest
from oprun import compile_fn

import relax_mlir.builder as rb
from relax_mlir.dialects import relax as R
from relax_mlir.dialects.types import NUMPY_DTYPES
from relax_mlir.errors import InputError, RelaxError
from relax_mlir.frontend.onnx.registry import NUMPY_TO_RELAX

SIZES = (0, 1, 5, 9)
COLS = 16
WEBGPU_ATOL = 1e-6  # shader math's absolute accuracy on webgpu (Vulkan: 2^-21 for log and exp near 1)
FLOAT_SPECIALS = (0.0, -0.0, 0.5, -0.5, 1.5, -2.5, 2.0, -3.0, 1.0, -1.0, np.inf, -np.inf, np.nan)

ARITH = ("add", "subtract", "multiply", "divide", "floor_divide", "mod", "fmod", "power", "maximum",
         "minimum")  # fmt: skip
COMPARE = {
    "equal": np.equal,
    "not_equal": np.not_equal,
    "less": np.less,
    "less_equal": np.less_equal,
    "greater": np.greater,
    "greater_equal": np.greater_equal,
}


def np_dtype(dtype: str) -> np.dtype:
    return np.dtype(NUMPY_DTYPES[dtype])


def floats(
    rng: np.random.Generator,
    shape: tuple[int, ...],
    dtype: str = "f32",
    low=-4.0,
    high=4.0,
    specials=FLOAT_SPECIALS,
) -> np.ndarray:
    """Uniform values with about a third replaced by ``specials`` (finite ones only on webgpu)."""
    if oprun.FINITE_ONLY:
        specials = tuple(v for v in specials if np.isfinite(v))
    x = rng.uniform(low, high, size=shape)
    if specials:
        pick = rng.random(shape) < 0.35
        x[pick] = rng.choice(np.array(specials, np.float64), size=int(pick.sum()))
    return x.astype(np_dtype(dtype))


def ints(
    rng: np.random.Generator, shape: tuple[int, ...], dtype: str, low: int, high: int, specials=()
) -> np.ndarray:
    info = np.iinfo(np_dtype(dtype))
    x = rng.integers(max(low, info.min), min(high, info.max), size=shape, endpoint=True)
    if specials:
        pick = rng.random(shape) < 0.25
        x[pick] = rng.choice(
            np.array([s for s in specials if info.min <= s <= info.max]), size=int(pick.sum())
        )
    return x.astype(np_dtype(dtype))


def bools(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    return np.asarray(rng.random(shape) < 0.5)


def results(value: np.ndarray | tuple[np.ndarray, ...]) -> tuple[np.ndarray, ...]:
    """A function's results as a tuple (a single result comes back bare)."""
    return value if isinstance(value, tuple) else (value,)


def assert_same(got: np.ndarray, want: np.ndarray, what: str = "") -> None:
    """Same dtype, shape and values (NaN where numpy has NaN)."""
    assert got.dtype == want.dtype, f"{what}: dtype {got.dtype}, expected {want.dtype}"
    np.testing.assert_array_equal(got, want, err_msg=what, strict=True)


def assert_close(got: np.ndarray, want: np.ndarray, rtol: float, atol: float = 0.0, what: str = "") -> None:
    assert got.dtype == want.dtype, f"{what}: dtype {got.dtype}, expected {want.dtype}"
    np.testing.assert_allclose(got, want, rtol=rtol, atol=atol, equal_nan=True, err_msg=what, strict=True)


def bundle(
    dtype: str, names: tuple[str, ...], operands: int, shapes=(["n", COLS], [COLS], [COLS])
) -> Callable:
    """One compiled function returning every op of ``names`` applied to its first ``operands`` params."""
    params = {f"p{i}": rb.tensor(shapes[i], dtype) for i in range(operands)}
    return compile_fn(params, lambda *args: tuple(getattr(R, name)(*args) for name in names))


# -- binary arithmetic -------------------------------------------------------------------------------------
def _float_ref(name: str) -> Callable:
    return {"add": np.add, "subtract": np.subtract, "multiply": np.multiply, "divide": np.divide,
            "floor_divide": np.floor_divide, "mod": np.mod, "fmod": np.fmod, "power": np.power,
            "maximum": np.maximum, "minimum": np.minimum}[name]  # fmt: skip


@pytest.mark.parametrize("name", ARITH)
def test_binary_f32(name: str) -> None:
    exe = compile_fn({"x": rb.tensor(["n", COLS]), "y": rb.tensor([COLS])}, getattr(R, name))
    rng = np.random.default_rng(1)
    for n in SIZES:
        x, y = floats(rng, (n, COLS)), floats(rng, (COLS,))
        with np.errstate(all="ignore"):
            want = _float_ref(name)(x, y)
        if name == "power":
            assert_close(exe(x, y), want, rtol=1e-6, what=f"power n={n}")
        elif name in ("mod", "fmod") and oprun.TARGET == "webgpu":
            # Vulkan defines a shader's float remainder as x - y * trunc(x / y), not exactly
            assert_close(exe(x, y), want, rtol=1e-6, atol=WEBGPU_ATOL, what=f"{name} n={n}")
        else:
            assert_same(exe(x, y), want, f"{name} n={n}")


@pytest.mark.skipif(oprun.FINITE_ONLY, reason=oprun.NOT_FINITE)
def test_power_special_values() -> None:
    """Every pair of special values against C's pow (numpy): signs, 0 ** 0, negative bases, infinities."""
    exe = compile_fn({"x": rb.tensor(["n", 1]), "y": rb.tensor([1, "m"])}, R.power)
    a = np.array([-np.inf, -2, -1, -0.5, -0.0, 0.0, 0.5, 1, 2, 3.7, np.inf, np.nan], np.float32)[:, None]
    b = np.array([-np.inf, -3, -2, -1.5, -1, -0.5, -0.0, 0.0, 0.5, 1, 2, 3, 2.5, np.inf, np.nan], np.float32)[
        None
    ]
    with np.errstate(all="ignore"):
        want = np.power(a, b)
    got = exe(a, b)
    assert_close(got, want, rtol=1e-6)
    assert (np.signbit(got) == np.signbit(want))[~np.isnan(want)].all()


def _trunc_divide(a: int, b: int) -> int:
    if b == 0:
        return 0
    q = abs(a) // abs(b)
    return q if (a < 0) == (b < 0) else -q


def _int_ref(name: str, x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """numpy's result, except integer divide truncates toward zero (numpy's true divide gives floats);
    x / 0 is 0 and MIN / -1 wraps to MIN, as in the kernel."""
    if name != "divide":
        with np.errstate(all="ignore"):
            return _float_ref(name)(x, y)
    bits = 8 * x.dtype.itemsize
    q = np.frompyfunc(lambda a, b: _trunc_divide(int(a), int(b)) % (1 << bits), 2, 1)(x, y)
    return q.astype(np.uint64).astype(x.dtype)


@pytest.mark.parametrize("dtype", ["i32", "i8", "ui8", "i16", "i64"])
def test_binary_int(dtype: str) -> None:
    """All arithmetic of one int dtype in one function; y holds 0, -1 and the extremes, power takes p >= 0."""
    names = tuple(n for n in ARITH if n != "power")
    params = {
        "x": rb.tensor(["n", COLS], dtype),
        "y": rb.tensor([COLS], dtype),
        "p": rb.tensor([COLS], dtype),
    }
    exe = compile_fn(params, lambda x, y, p: (*(getattr(R, n)(x, y) for n in names), R.power(x, p)))
    info = np.iinfo(np_dtype(dtype))
    extremes = (0, 1, -1, 7, -7, info.min, info.max, info.min + 1)
    rng = np.random.default_rng(2)
    for n in SIZES:
        x = ints(rng, (n, COLS), dtype, -300, 300, extremes)
        y = ints(rng, (COLS,), dtype, -20, 20, extremes)
        p = ints(rng, (COLS,), dtype, 0, 9)
        got = exe(x, y, p)
        for name, value in zip((*names, "power"), got):
            assert_same(value, _int_ref(name, x, p if name == "power" else y), f"{dtype} {name} n={n}")


def test_int_power_negative_exponent() -> None:
    """numpy raises; the kernel gives 1 / x ** -y truncated: 1 for x = 1, +-1 for x = -1, else 0."""
    exe = compile_fn({"x": rb.tensor(["n", 1], "i32"), "y": rb.tensor([1, "m"], "i32")}, R.power)
    x = np.arange(-3, 4, dtype=np.int32)[:, None]
    y = np.arange(-4, 4, dtype=np.int32)[None]
    want = np.where(y >= 0, x ** np.maximum(y, 0), np.where(x == 1, 1, np.where(x == -1, 1 - 2 * (y & 1), 0)))
    assert_same(exe(x, y), want.astype(np.int32))


# -- broadcasting --------------------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", ["f32", "i32"])
def test_broadcasting(dtype: str) -> None:
    """[n, 1] + [1, m] -> [n, m]; rank-0; equal symbolic shapes; static 1s on both sides; sizes 0 and 1."""
    rng = np.random.default_rng(3)

    def data(shape: tuple[int, ...]) -> np.ndarray:
        return floats(rng, shape, dtype) if dtype == "f32" else ints(rng, shape, dtype, -100, 100)

    outer = compile_fn({"x": rb.tensor(["n", 1], dtype), "y": rb.tensor([1, "m"], dtype)}, R.subtract)
    for n, m in [(0, 3), (1, 1), (5, 7), (3, 0), (1, 4)]:
        x, y = data((n, 1)), data((1, m))
        assert_same(outer(x, y), x - y, f"[{n},1] - [1,{m}]")
    scalar = compile_fn({"x": rb.tensor(["n", 3], dtype), "y": rb.tensor([], dtype)}, R.subtract)
    rank0 = compile_fn({"x": rb.tensor([], dtype), "y": rb.tensor(["n", 3], dtype)}, R.subtract)
    equal = compile_fn({"x": rb.tensor(["n", "k"], dtype), "y": rb.tensor(["n", "k"], dtype)}, R.subtract)
    both = compile_fn({"x": rb.tensor(["n", 1, 4], dtype), "y": rb.tensor([3, 1], dtype)}, R.subtract)
    for n in SIZES:
        x, s = data((n, 3)), data(())
        assert_same(scalar(x, s), x - s, f"[{n},3] - []")
        assert_same(rank0(s, x), s - x, f"[] - [{n},3]")
        x, y = data((n, n + 2)), data((n, n + 2))
        assert_same(equal(x, y), x - y, f"[{n},{n + 2}] twice")
        x, y = data((n, 1, 4)), data((3, 1))
        assert_same(both(x, y), x - y, f"[{n},1,4] - [3,1]")


# -- comparisons and logical ops -------------------------------------------------------------------------------
@pytest.mark.parametrize("name", list(COMPARE))
def test_comparison_f32(name: str) -> None:
    """Ordered predicates, except not_equal (true when either side is NaN), as numpy."""
    exe = compile_fn({"x": rb.tensor(["n", COLS]), "y": rb.tensor([COLS])}, getattr(R, name))
    rng = np.random.default_rng(4)
    for n in SIZES:
        x, y = floats(rng, (n, COLS)), floats(rng, (COLS,))
        assert_same(exe(x, y), COMPARE[name](x, y), f"{name} n={n}")


@pytest.mark.parametrize("dtype", ["i32", "ui8", "i1", "f64"])
def test_comparison_other_dtypes(dtype: str) -> None:
    """Signed vs unsigned predicates (ui8 200 > 100; i1 true > false)."""
    exe = bundle(dtype, tuple(COMPARE), 2)
    rng = np.random.default_rng(5)
    for n in SIZES:
        if dtype == "i1":
            x, y = bools(rng, (n, COLS)), bools(rng, (COLS,))
        elif dtype == "f64":
            x, y = floats(rng, (n, COLS), dtype), floats(rng, (COLS,), dtype)
        else:
            x, y = (
                ints(rng, (n, COLS), dtype, -200, 255, (0, 127, 128, 200)),
                ints(rng, (COLS,), dtype, -200, 255),
            )
        for name, got in zip(COMPARE, exe(x, y), strict=True):
            assert_same(got, COMPARE[name](x, y), f"{dtype} {name} n={n}")


def test_logical() -> None:
    exe = compile_fn(
        {"x": rb.tensor(["n", COLS], "i1"), "y": rb.tensor([COLS], "i1")},
        lambda x, y: (R.logical_and(x, y), R.logical_or(x, y), R.logical_xor(x, y), R.logical_not(x)),
    )
    rng = np.random.default_rng(6)
    for n in SIZES:
        x, y = bools(rng, (n, COLS)), bools(rng, (COLS,))
        for got, want in zip(exe(x, y), (x & y, x | y, x ^ y, ~x), strict=True):
            assert_same(got, want, f"n={n}")


BITWISE = {
    "bitwise_and": np.bitwise_and,
    "bitwise_or": np.bitwise_or,
    "bitwise_xor": np.bitwise_xor,
    "left_shift": np.left_shift,
    "right_shift": np.right_shift,
}


@pytest.mark.parametrize("dtype", ["i8", "ui8", "i32", "i64"])
def test_bitwise_int(dtype: str) -> None:
    """Bitwise ops and shifts as numpy: counts past the width (and negative ones, read as unsigned)
    shift everything out (-1 for negative signed values shifted right); bitwise_not is ~x."""
    exe = compile_fn(
        {"x": rb.tensor(["n", COLS], dtype), "y": rb.tensor([COLS], dtype)},
        lambda x, y: (*(getattr(R, name)(x, y) for name in BITWISE), R.bitwise_not(x)),
    )
    info = np.iinfo(np_dtype(dtype))
    bits = info.bits
    rng = np.random.default_rng(17)
    for n in SIZES:
        x = ints(rng, (n, COLS), dtype, -300, 300, (0, 1, -1, info.min, info.max))
        y = ints(rng, (COLS,), dtype, 0, bits + 2, (0, -1, bits - 1, bits, info.max))
        got = exe(x, y)
        for (name, ref), value in zip(BITWISE.items(), got, strict=False):
            assert_same(value, ref(x, y), f"{dtype} {name} n={n}")
        assert_same(got[-1], ~x, f"{dtype} bitwise_not n={n}")


def test_bool_arithmetic() -> None:
    """numpy's bool add is or, multiply is and; maximum/minimum too."""
    names = ("add", "multiply", "maximum", "minimum")
    exe = bundle("i1", names, 2)
    rng = np.random.default_rng(7)
    for n in SIZES:
        x, y = bools(rng, (n, COLS)), bools(rng, (COLS,))
        for name, got in zip(names, exe(x, y), strict=True):
            assert_same(got, _float_ref(name)(x, y), f"{name} n={n}")


# -- unary -------------------------------------------------------------------------------------------------
_erf = np.vectorize(math.erf, otypes=[np.float64])
_GELU_TANH_C = math.sqrt(2 / math.pi)

# name: (numpy reference on float64, data range, rtol, atol); exact when rtol is 0
UNARY = {
    "exp": (np.exp, (-20, 20), 2e-6, 0),
    "log": (np.log, (0, 100), 2e-6, 0),
    "sqrt": (np.sqrt, (0, 100), 0, 0),
    "rsqrt": (lambda x: 1 / np.sqrt(x), (0, 100), 2e-7, 0),
    "tanh": (np.tanh, (-8, 8), 2e-6, 1e-7),
    "sigmoid": (lambda x: 1 / (1 + np.exp(-x)), (-30, 30), 2e-6, 1e-7),
    "erf": (_erf, (-5, 5), 2e-6, 1e-7),
    "gelu": (lambda x: 0.5 * x * (1 + _erf(x / math.sqrt(2))), (-8, 8), 2e-6, 1e-7),
    "gelu_tanh": (
        lambda x: 0.5 * x * (1 + np.tanh(_GELU_TANH_C * (x + 0.044715 * x**3))),
        (-8, 8),
        2e-6,
        1e-7,
    ),
    "silu": (lambda x: x / (1 + np.exp(-x)), (-30, 30), 2e-6, 1e-7),
    "softplus": (lambda x: np.logaddexp(0, x), (-30, 30), 2e-6, 1e-7),
    "mish": (lambda x: x * np.tanh(np.logaddexp(0, x)), (-30, 30), 2e-6, 1e-7),
    "sin": (np.sin, (-8, 8), 2e-6, 1e-7),
    "cos": (np.cos, (-8, 8), 2e-6, 1e-7),
    "tan": (np.tan, (-1.5, 1.5), 2e-6, 1e-7),
    "asin": (np.arcsin, (-1, 1), 2e-6, 1e-7),
    "acos": (np.arccos, (-1, 1), 2e-6, 1e-7),
    "atan": (np.arctan, (-50, 50), 2e-6, 1e-7),
    "sinh": (np.sinh, (-20, 20), 2e-6, 1e-7),
    "cosh": (np.cosh, (-20, 20), 2e-6, 1e-7),
    "asinh": (np.arcsinh, (-1e6, 1e6), 2e-6, 1e-7),
    "acosh": (np.arccosh, (1, 1e6), 2e-6, 1e-7),
    "atanh": (np.arctanh, (-1, 1), 2e-6, 1e-7),
    "floor": (np.floor, (-1e8, 1e8), 0, 0),
    "ceil": (np.ceil, (-1e8, 1e8), 0, 0),
    "round": (np.round, (-20, 20), 0, 0),
    "relu": (lambda x: np.maximum(x, 0), (-4, 4), 0, 0),
    "neg": (np.negative, (-4, 4), 0, 0),
    "abs": (np.abs, (-4, 4), 0, 0),
    "sign": (np.sign, (-4, 4), 0, 0),
}

ROUNDING_SPECIALS = (*FLOAT_SPECIALS, 2.5, 3.5, -0.4, 0.4999999, -1.5, 8388607.5, -8388607.5, 8388609.0)


def _unary_data(rng: np.random.Generator, name: str, shape: tuple[int, ...]) -> np.ndarray:
    """f32 data in the op's range, with the rounding cases for floor, ceil and round."""
    low, high = UNARY[name][1]
    specials = ROUNDING_SPECIALS if name in ("floor", "ceil", "round") else FLOAT_SPECIALS
    return floats(rng, shape, "f32", low, high, specials)


def _unary_check(name: str, got: np.ndarray, x: np.ndarray, what: str) -> None:
    """Exact ops exactly; others to a few ulps (f16: computed per op in f32 and rounded, so ~4e-3)."""
    ref, _, rtol, atol = UNARY[name]
    with np.errstate(all="ignore"):
        want = ref(x.astype(np.float64)).astype(x.dtype)
    if rtol == 0:
        assert_same(got, want, what)
    elif oprun.TARGET == "webgpu" and x.dtype == np.float32:
        # Vulkan holds a driver's log and exp near 1 to 2^-21 absolute, not to ulps (lavapipe: mish's
        # softplus of tiny values)
        assert_close(got, want, rtol=rtol, atol=max(atol, WEBGPU_ATOL), what=what)
    elif x.dtype == np.float16:
        assert_close(got, want, rtol=4e-3, atol=1e-3, what=what)
    else:
        assert_close(got, want, rtol=rtol if x.dtype == np.float32 else 1e-14, atol=atol, what=what)


@pytest.mark.parametrize("name", list(UNARY))
def test_unary_f32(name: str) -> None:
    exe = compile_fn({"x": rb.tensor(["n", COLS])}, getattr(R, name))
    rng = np.random.default_rng(8)
    for n in SIZES:
        x = _unary_data(rng, name, (n, COLS))
        _unary_check(name, exe(x), x, f"{name} n={n}")


def test_round_half_to_even_and_signed_zero() -> None:
    exe = compile_fn({"x": rb.tensor(["n"])}, lambda x: (R.round(x), R.ceil(x), R.floor(x)))
    x = np.array([0.5, 1.5, 2.5, -0.5, -1.5, -2.5, -0.4, -0.0, 0.4999999, 3.5000002], np.float32)
    r, c, f = exe(x)
    assert_same(r, np.round(x))
    assert_same(c, np.ceil(x))
    assert_same(f, np.floor(x))
    assert (np.signbit(r) == np.signbit(np.round(x))).all() and (
        np.signbit(c) == np.signbit(np.ceil(x))
    ).all()


@pytest.mark.parametrize("dtype", ["f64", "f16"])
def test_unary_other_floats(dtype: str) -> None:
    """f64 to about an ulp; f16 computed through f32 per op, so a few f16 ulps."""
    names = tuple(UNARY)
    exe = bundle(dtype, names, 1)
    rng = np.random.default_rng(9)
    for n in SIZES:
        x = floats(rng, (n, COLS), dtype, -6, 6, tuple(s for s in ROUNDING_SPECIALS if abs(s) < 60000))
        for name, got in zip(names, exe(x), strict=True):
            _unary_check(name, got, x, f"{dtype} {name} n={n}")


@pytest.mark.parametrize("dtype", ["f64", "f16"])
def test_binary_other_floats(dtype: str) -> None:
    exe = bundle(dtype, ARITH, 2)
    rng = np.random.default_rng(10)
    specials = tuple(s for s in FLOAT_SPECIALS if abs(s) < 60000)
    for n in SIZES:
        x, y = (
            floats(rng, (n, COLS), dtype, specials=specials),
            floats(rng, (COLS,), dtype, specials=specials),
        )
        for name, got in zip(ARITH, exe(x, y), strict=True):
            with np.errstate(all="ignore"):
                want = _float_ref(name)(x, y)
            if dtype == "f64" and name != "power":
                assert_same(got, want, f"{name} n={n}")
            else:  # numpy computes f16 in f32 and rounds once; the kernel rounds after each f16 op
                assert_close(got, want, rtol=1e-13 if dtype == "f64" else 4e-3, what=f"{dtype} {name} n={n}")


def test_bf16_compiles() -> None:
    """numpy has no bf16 to run with, but every float op must still lower and compile for it."""
    bundle("bf16", ARITH, 2, (["n"], ["n"]))
    bundle("bf16", tuple(UNARY), 1, (["n"],))
    compile_fn(
        {"x": rb.tensor(["n"], "bf16")},
        lambda x: (R.astype(x, "f16"), R.astype(x, "i32"), R.clip(x, -1.0, 2.0)),
    )


@pytest.mark.parametrize("dtype", ["i32", "i8", "ui8", "i64"])
def test_unary_int(dtype: str) -> None:
    """relu, neg, abs and sign on integers (neg and abs wrap at the minimum, like numpy)."""
    names = ("relu", "neg", "abs", "sign")
    exe = bundle(dtype, names, 1)
    info = np.iinfo(np_dtype(dtype))
    rng = np.random.default_rng(11)
    for n in SIZES:
        x = ints(rng, (n, COLS), dtype, -1000, 1000, (0, 1, -1, info.min, info.max))
        for name, got in zip(names, exe(x), strict=True):
            with np.errstate(all="ignore"):
                want = UNARY[name][0](x).astype(x.dtype)
            assert_same(got, want, f"{dtype} {name} n={n}")


# -- ops with attributes -----------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", ["f32", "f64"])
def test_leaky_relu(dtype: str) -> None:
    exe = compile_fn({"x": rb.tensor(["n", COLS], dtype)}, lambda x: (R.leaky_relu(x), R.leaky_relu(x, 0.2)))
    rng = np.random.default_rng(12)
    for n in SIZES:
        x = floats(rng, (n, COLS), dtype)
        for alpha, got in zip((0.01, 0.2), exe(x), strict=True):
            want = np.where(x >= 0, x, x * np_dtype(dtype).type(alpha))
            assert_same(got, want, f"alpha={alpha} n={n}")


CLIPS = {
    "f32": [(0.0, 6.0), (-math.inf, 0.5), (-1.25, math.inf)],
    "f64": [(-0.1, 0.1)],
    "i32": [(-3.5, 2.5), (-1e30, 1e30), (5.0, 5.0)],
    "i8": [(-1000.0, 6.5)],
    "ui8": [(-5.0, 300.0), (10.0, 20.0)],
    "i64": [(-(2.0**40), 3.0)],
}


@pytest.mark.parametrize("dtype", list(CLIPS))
def test_clip(dtype: str) -> None:
    """Floats clamp (NaN stays NaN); integers clamp to [ceil(min), floor(max)] within the dtype's range."""
    bounds = CLIPS[dtype]
    exe = compile_fn(
        {"x": rb.tensor(["n", COLS], dtype)}, lambda x: tuple(R.clip(x, lo, hi) for lo, hi in bounds)
    )
    rng = np.random.default_rng(13)
    for n in SIZES:
        if dtype.startswith("f"):
            x = floats(rng, (n, COLS), dtype)
        else:
            info = np.iinfo(np_dtype(dtype))
            x = ints(rng, (n, COLS), dtype, -300, 300, (0, info.min, info.max))
        for (lo, hi), got in zip(bounds, results(exe(x)), strict=True):
            if dtype.startswith("f"):
                t = np_dtype(dtype).type
                want = np.minimum(np.maximum(x, t(lo)), t(hi))
            else:
                info = np.iinfo(x.dtype)
                want = np.clip(
                    x,
                    max(math.ceil(max(lo, info.min)), info.min),
                    min(math.floor(min(hi, info.max)), info.max),
                )
            assert_same(got, want.astype(x.dtype), f"{dtype} clip({lo}, {hi}) n={n}")


# -- where ---------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", ["f32", "i32", "i1"])
def test_where(dtype: str) -> None:
    """Three-way broadcasting: cond [n, 1], x [n, 4], y [4]; and a rank-0 y with cond [n, 4]."""
    params = {"c": rb.tensor(["n", 1], "i1"), "d": rb.tensor(["n", 4], "i1"), "x": rb.tensor(["n", 4], dtype),
              "y": rb.tensor([4], dtype), "s": rb.tensor([], dtype)}  # fmt: skip
    exe = compile_fn(params, lambda c, d, x, y, s: (R.where(c, x, y), R.where(d, x, s), R.where(d, s, y)))
    rng = np.random.default_rng(14)

    def data(shape: tuple[int, ...]) -> np.ndarray:
        if dtype == "i1":
            return bools(rng, shape)
        return floats(rng, shape, dtype) if dtype == "f32" else ints(rng, shape, dtype, -100, 100)

    for n in SIZES:
        c, d = bools(rng, (n, 1)), bools(rng, (n, 4))
        x, y, s = data((n, 4)), data((4,)), data(())
        got = exe(c, d, x, y, s)
        for g, want in zip(got, (np.where(c, x, y), np.where(d, x, s), np.where(d, s, y))):
            assert_same(g, want, f"n={n}")


# -- astype --------------------------------------------------------------------------------------------------
NUMERIC = ("f16", "f32", "f64", "i8", "i16", "i32", "i64", "ui8")


def _source(rng: np.random.Generator, dtype: str, shape: tuple[int, ...]) -> np.ndarray:
    if dtype == "i1":
        return bools(rng, shape)
    if dtype.startswith("f"):
        return floats(rng, shape, dtype, -200.9, 200.9, (0.0, -0.0, 0.5, -0.5, 127.9, -128.9, 255.9, 1e-3))
    info = np.iinfo(np_dtype(dtype))
    big = tuple(
        v
        for v in (info.min, info.max, 255, 256, -129, 70000, 2**40 + 1, 2**53 + 1)
        if info.min <= v <= info.max
    )
    return ints(rng, shape, dtype, -300, 300, (0, 1, -1, *big))


def _astype_ref(x: np.ndarray, dtype: str) -> np.ndarray:
    """numpy's astype; floats to i8/i16/ui8 truncate through i32 and wrap (numpy on x86 does the same)."""
    target = np_dtype(dtype)
    if x.dtype.kind == "f" and target.kind in "iu" and target.itemsize < 4:
        return x.astype(np.int32).astype(target)
    with np.errstate(all="ignore"):
        return x.astype(target)


@pytest.mark.parametrize("source", NUMERIC)
def test_astype(source: str) -> None:
    """One source dtype to every numeric dtype (the same dtype included)."""
    exe = compile_fn({"x": rb.tensor(["n", COLS], source)}, lambda x: tuple(R.astype(x, t) for t in NUMERIC))
    rng = np.random.default_rng(15)
    for n in SIZES:
        x = _source(rng, source, (n, COLS))
        for target, got in zip(NUMERIC, exe(x), strict=True):
            assert_same(got, _astype_ref(x, target), f"{source} -> {target} n={n}")


def test_astype_bool() -> None:
    """Anything to i1 is != 0 (NaN is true); i1 to anything is 0 or 1."""
    exe_to = compile_fn(
        {f"x{i}": rb.tensor(["n", COLS], s) for i, s in enumerate(NUMERIC)},
        lambda *xs: tuple(R.astype(x, "i1") for x in xs),
    )
    exe_from = compile_fn(
        {"b": rb.tensor(["n", COLS], "i1")}, lambda b: tuple(R.astype(b, t) for t in (*NUMERIC, "i1"))
    )
    rng = np.random.default_rng(16)
    for n in SIZES:
        xs = [_source(rng, s, (n, COLS)) for s in NUMERIC]
        xs[1][:, 0] = np.nan
        for s, x, got in zip(NUMERIC, xs, exe_to(*xs), strict=True):
            assert_same(got, x.astype(bool), f"{s} -> i1 n={n}")
        b = bools(rng, (n, COLS))
        for t, got in zip((*NUMERIC, "i1"), exe_from(b), strict=True):
            assert_same(got, b.astype(np_dtype(t)), f"i1 -> {t} n={n}")


# -- errors ---------------------------------------------------------------------------------------------------
def test_wrong_input_shapes_raise() -> None:
    exe = compile_fn({"x": rb.tensor(["n", 4]), "y": rb.tensor([4])}, R.add)
    with pytest.raises(InputError, match="parameter 'y' dim 0 is 5, expected 4"):
        exe(np.zeros((3, 4), np.float32), np.zeros((5,), np.float32))
    same = compile_fn({"x": rb.tensor(["n"]), "y": rb.tensor(["n"])}, R.multiply)
    with pytest.raises(InputError, match="symbol 'n'"):
        same(np.zeros(3, np.float32), np.zeros(4, np.float32))


def test_symbol_broadcast_against_constant_is_checked() -> None:
    """[n, 4] + [m]: the kernel takes m == 4 (a run-time checked match_cast); m = 1 is not broadcast."""
    exe = compile_fn({"x": rb.tensor(["n", 4]), "y": rb.tensor(["m"])}, R.add)
    x, y = np.ones((3, 4), np.float32), np.arange(4, dtype=np.float32)
    assert_same(exe(x, y), x + y)
    with pytest.raises(InputError, match=r"must be 4, got 3"):
        exe(x, np.zeros(3, np.float32))


def test_integer_ops_reject_floats() -> None:
    with pytest.raises(RelaxError, match=r"relax.bitwise_and: operands must have an integer dtype, got f32"):
        compile_fn({"x": rb.tensor(["n"]), "y": rb.tensor(["n"])}, R.bitwise_and)
    with pytest.raises(
        RelaxError, match=r"relax.bitwise_not: operand 'x' must have an integer dtype, got f32"
    ):
        compile_fn({"x": rb.tensor(["n"])}, R.bitwise_not)
    with pytest.raises(RelaxError, match=r"relax.left_shift: not defined for dtype i1"):
        compile_fn({"x": rb.tensor(["n"], "i1"), "y": rb.tensor(["n"], "i1")}, R.left_shift)


def test_unsupported_cases_raise() -> None:
    with pytest.raises(RelaxError, match=r"relax.subtract: not defined for dtype i1.*relax.astype"):
        compile_fn({"x": rb.tensor(["n"], "i1"), "y": rb.tensor(["n"], "i1")}, R.subtract)


def f32(*shape: int) -> np.ndarray:
    return np.random.default_rng(sum(shape) + len(shape)).standard_normal(shape).astype(np.float32)


def test_two_symbols_broadcast_at_run_time() -> None:
    """``["n"]`` with ``["m"]`` (each may be 1): the result dim is ``max(m, n) * min(min(m, n), 1)``, numpy's
    choice at run time; dims that do not broadcast are an InputError."""
    add = compile_fn({"x": rb.tensor(["n"]), "y": rb.tensor(["m"])}, R.add)
    for n, m in ((1, 5), (5, 1), (5, 5), (0, 1), (1, 0), (0, 0), (1, 1)):
        x, y = f32(n), f32(m)
        got = add(x, y)
        np.testing.assert_array_equal(got, x + y, err_msg=f"({n},) + ({m},)")
    with pytest.raises(InputError, match=r"dims 3 and 4 do not broadcast .* in relax.add"):
        add(f32(3), f32(4))
    # one operand's dim is fixed elsewhere ([k, "n"] with ["m", 1]), three operands (where)
    mul = compile_fn({"x": rb.tensor(["n", 3]), "y": rb.tensor(["m", 1])}, R.multiply)
    for n, m in ((1, 4), (4, 1), (4, 4), (0, 1)):
        x, y = f32(n, 3), f32(m, 1)
        np.testing.assert_allclose(mul(x, y), x * y, rtol=1e-6)
    where = compile_fn(
        {"c": rb.tensor(["a"], "i1"), "x": rb.tensor(["b"]), "y": rb.tensor(["c"])},
        lambda c, x, y: R.where(c, x, y),
    )
    rng = np.random.default_rng(0)
    for a, b, c in ((1, 1, 4), (4, 1, 1), (4, 4, 1), (1, 4, 4), (0, 1, 0)):
        cond, x, y = rng.random(a) < 0.5, f32(b), f32(c)
        np.testing.assert_array_equal(where(cond, x, y), np.where(cond, x, y))
    with pytest.raises(InputError, match="do not broadcast"):
        where(np.ones(2, bool), f32(3), f32(1))
    # an unknown dim against a symbol: the result dim stays "?" and the kernel sizes it at run time
    unknown = compile_fn({"x": rb.tensor(["?"]), "y": rb.tensor(["m"])}, R.add)
    for n, m in ((1, 5), (5, 1), (5, 5), (0, 1), (1, 0)):
        np.testing.assert_array_equal(unknown(f32(n), f32(m)), f32(n) + f32(m), err_msg=f"({n},) + ({m},)")
    with pytest.raises(InputError, match="dims 3 and 4 do not broadcast"):
        unknown(f32(3), f32(4))


@pytest.mark.parametrize(
    "src, dst", [(np.float32, np.int32), (np.int64, np.float64), (np.uint16, np.float16), (np.int8, np.uint8)]
)
def test_bitcast_is_numpy_view(src: type, dst: type) -> None:
    relax_src, relax_dst = (NUMPY_TO_RELAX[np.dtype(t)] for t in (src, dst))
    f = compile_fn({"x": rb.tensor(["n", 3], relax_src)}, lambda x: R.bitcast(x, relax_dst))
    for n in (1, 5):
        x = (np.random.default_rng(n).standard_normal((n, 3)) * 100).astype(src)
        np.testing.assert_array_equal(f(x).view(np.uint8), x.view(dst).view(np.uint8))

"""Indices read from tensors (take, gather_elements, scatter_elements) are checked at run time.

In range (negative ones count from the end) they give numpy's answer; out of range the call raises
InputError naming the index, the axis, its size and the op, as numpy and ONNX Runtime refuse them, instead
of reading or writing outside a buffer. Each op runs at opt_level 0 and 2, at sizes 0, 1 and odd, in a
child process (a write outside a buffer may kill it).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
from isolated import expect_error, run_isolated
from oprun import build_fn

import relax_mlir
import relax_mlir.builder as rb
from relax_mlir.dialects import relax as R
from relax_mlir.errors import InputError

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
T = rb.tensor


def _scatter_ref(axis: int) -> Callable[..., np.ndarray]:
    def ref(x: np.ndarray, i: np.ndarray, u: np.ndarray) -> np.ndarray:
        y = x.copy()
        for pos in np.ndindex(*i.shape):
            at = list(pos)
            at[axis] = i[pos]
            y[tuple(at)] = u[pos]  # in order: a later duplicate wins
        return y

    return ref


# op -> (params, body, numpy reference, axis of x the indices address)
OPS = {
    "take": (
        {"x": T(["n", 3]), "i": T(["k"], "i64")},
        lambda x, i: R.take(x, i, 0),
        lambda x, i: np.take(x, i, 0),
        0,
    ),
    "take_i32_last_axis": (
        {"x": T([2, "n"]), "i": T(["k", 2], "i32")},
        lambda x, i: R.take(x, i, -1),
        lambda x, i: np.take(x, i, -1),
        1,
    ),
    "gather_elements": (
        {"x": T([3, "n"]), "i": T(["q", "k"], "i64")},
        lambda x, i: R.gather_elements(x, i, 1),
        lambda x, i: np.take_along_axis(x[: i.shape[0]], i, 1),
        1,
    ),
    "scatter_elements": (
        {"x": T(["n", 4]), "i": T(["k", "j"], "i64"), "u": T(["k", "j"])},
        lambda x, i, u: R.scatter_elements(x, i, u, 0),
        _scatter_ref(0),
        0,
    ),
}


def _inputs(op: str, n: int, k: int, rng: np.random.Generator, idx: np.ndarray | None = None) -> list:
    """Inputs of ``op`` with dim ``n`` along the indexed axis and ``k`` indices along it (random in range)."""
    params, _, _, axis = OPS[op]
    dtype = np.int32 if "i32" in op else np.int64
    if op == "take":
        shapes = [(n, 3), (k,)]
    elif op == "take_i32_last_axis":
        shapes = [(2, n), (k, 2)]
    elif op == "gather_elements":
        shapes = [(3, n), (2, k)]
    else:
        shapes = [(n, 4), (k, 4), (k, 4)]
    x = rng.standard_normal(shapes[0]).astype(np.float32)
    i = idx if idx is not None else rng.integers(-n, max(n, 1), shapes[1]).astype(dtype)
    rest = [rng.standard_normal(i.shape).astype(np.float32)] if op == "scatter_elements" else []
    return [x, np.asarray(i, dtype), *rest]


def check_op(op: str, level: int) -> None:
    """Run in a child: in-range results against numpy, every bad index an InputError; prints PASS."""
    params, body, ref, axis = OPS[op]
    exe = relax_mlir.compile(str(build_fn(params, body)), opt_level=level)
    rng = np.random.default_rng(7)
    name = "take" if op.startswith("take") else op
    for n in (0, 1, 5):
        for k in (0, 1, 3) if n else (0,):
            args = _inputs(op, n, k, rng)
            np.testing.assert_array_equal(exe(*args), ref(*args), err_msg=f"{op} n={n} k={k}")
        shape = _inputs(op, n, 2, rng)[1].shape
        for bad in (n, n + 2, -n - 1, 2**31 - 1, -(2**31)):
            idx = np.zeros(shape, np.int64)
            idx.flat[-1] = bad
            args = _inputs(op, n, 2, rng, idx)
            expected = f"index {bad} out of range for axis {axis} of size {n} in relax.{name} at "
            with pytest.raises(InputError, match=expected.replace("(", r"\(")):
                exe(*args)
        if n:  # the executable still works after a failed call
            args = _inputs(op, n, 3, rng)
            np.testing.assert_array_equal(exe(*args), ref(*args))
    print("PASS")


@pytest.mark.parametrize("level", [0, 2])
@pytest.mark.parametrize("op", list(OPS))
def test_indices_in_range_match_numpy_and_out_of_range_raise(op: str, level: int) -> None:
    outcome = run_isolated(
        f"import sys; sys.path.insert(0, {str(HERE)!r})\n"
        f"import test_index_bounds as t\nt.check_op({op!r}, {level})"
    )
    assert outcome.returncode == 0 and outcome.last_line == "PASS", outcome.stderr[-4000:]


@pytest.mark.parametrize("level", [0, 2])
def test_indices_larger_than_x_off_the_axis_raise(level: int) -> None:
    """gather/scatter_elements index x with the indices' own position off the axis: those dims must fit."""
    outcome = run_isolated(
        f"""
        import numpy as np, relax_mlir
        import sys; sys.path.insert(0, {str(HERE)!r})
        from test_index_bounds import OPS, build_fn
        from relax_mlir.errors import InputError
        for op, args, message in [
            ("gather_elements", [np.ones((3, 4), np.float32), np.zeros((4, 2), np.int64)],
             "dim 0 of the indices is 4, larger than the input's 3 in relax.gather_elements at "),
            ("scatter_elements", [np.ones((3, 4), np.float32), np.zeros((1, 5), np.int64),
             np.ones((1, 5), np.float32)], "dim 1 of the indices is 5, larger than the input's 4 in "),
        ]:
            params, body, _, _ = OPS[op]
            exe = relax_mlir.compile(str(build_fn(params, body)), opt_level={level})
            try:
                exe(*args)
            except InputError as e:
                assert message in str(e), str(e)
            else:
                raise AssertionError(op + ": no error")
        print("PASS")
        """
    )
    assert outcome.returncode == 0 and outcome.last_line == "PASS", outcome.stderr[-4000:]


def test_scatter_into_an_empty_tensor_raises() -> None:
    """Found by the fuzzer (case 1607 of its corpus then): scatter_elements into a 0-row tensor at O2 wrote
    outside the buffer; any index is out of range there, so it raises InputError."""
    t = '!relax.tensor<["n", 4], f32>'
    expect_error(
        f"""
        import numpy as np, relax_mlir
        exe = relax_mlir.compile('''
        func.func @main(%x: {t}, %i: !relax.tensor<["k", 4], i64>, %u: !relax.tensor<["k", 4], f32>) -> {t} {{
          %0 = "relax.scatter_elements"(%x, %i, %u) {{axis = 0 : i64, reduction = "none"}} :
            ({t}, !relax.tensor<["k", 4], i64>, !relax.tensor<["k", 4], f32>) -> {t}
          return %0 : {t}
        }}''', opt_level=2)
        x, u = np.zeros((3, 4), np.float32), np.ones((2, 4), np.float32)
        assert (exe(x, np.array([[0, 1, 2, 0], [2, 2, 1, 1]]), u).sum(axis=0) == 2).all()  # in range: runs
        exe(np.zeros((0, 4), np.float32), np.zeros((2, 4), np.int64), u)
        """,
        "InputError",
        match="index",
    )


def test_kv_cache_write_of_more_rows_than_the_cache_raises() -> None:
    """A cache with fewer rows than new tokens raises InputError instead of writing before its buffer."""
    cache, new = '!relax.tensor<["t", 1, 2, 4], f32>', '!relax.tensor<[1, "s", 2, 4], f32>'
    expect_error(
        f"""
        import numpy as np, relax_mlir
        exe = relax_mlir.compile('''
        func.func @main(%c: {cache}, %k: {new}) -> {cache} {{
          %0 = "relax.kv_cache_write"(%c, %k) : ({cache}, {new}) -> {cache}
          return %0 : {cache}
        }}''')
        for t, s in ((5, 2), (3, 3), (4, 0)):  # fits: the last s rows are written
            c, k = np.zeros((t, 1, 2, 4), np.float32), np.ones((1, s, 2, 4), np.float32)
            exe(c, k)
            assert (c[: t - s] == 0).all() and (c[t - s :] == 1).all(), (t, s)
        for t, s in ((2, 3), (0, 1)):
            try:
                exe(np.zeros((t, 1, 2, 4), np.float32), np.ones((1, s, 2, 4), np.float32))
            except relax_mlir.errors.InputError as e:
                assert f"{{s}} new rows do not fit in a cache of {{t}} rows" in str(e), str(e)
            else:
                raise AssertionError("no error")
        exe(np.zeros((1, 1, 2, 4), np.float32), np.ones((1, 9, 2, 4), np.float32))
        """,
        "InputError",
        match="9 new rows do not fit in a cache of 1 rows in relax.kv_cache_write at",
    )

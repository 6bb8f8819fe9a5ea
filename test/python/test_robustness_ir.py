"""Bad and edge inputs to the IR, the builder and compile(): a documented error or the right answer, never
a crash (issue 17). Crash reproducers run in a child process (``isolated.py``)."""

from __future__ import annotations

import os

import pytest
from isolated import run_isolated

# -- static 0 dims never reach tiling (item 5) ----------------------------------------------------------

ZERO_DIM_CASES = r"""
import sys
import numpy as np
import relax_mlir
import relax_mlir.builder as rb
from relax_mlir.dialects import relax as R

rng = np.random.default_rng(0)


def f(*shape):
    return rng.standard_normal(shape).astype(np.float32)


def check(name, params, body, inputs, ref):
    bb = rb.BlockBuilder()
    with bb.function("main", {k: rb.tensor(s, "f32") for k, s in params.items()}) as args:
        bb.ret(body(*args))
    exe = relax_mlir.compile(bb.module, opt_level=OPT, use_cache=False)
    got, want = exe["main"](*inputs), ref(*inputs)
    assert got.shape == want.shape, (name, got.shape, want.shape)
    np.testing.assert_allclose(got, want, atol=1e-4, err_msg=name)


def conv_ref(x, w):
    n, _, h, wd = x.shape
    o, _, kh, kw = w.shape
    out = np.zeros((n, o, h - kh + 1, wd - kw + 1), np.float32)
    for i in range(h - kh + 1):
        for j in range(wd - kw + 1):
            out[:, :, i, j] = np.einsum("ncij,ocij->no", x[:, :, i : i + kh, j : j + kw], w)
    return out


def pool_ref(x):
    n, c, h, w = x.shape
    return x[:, :, : h // 2 * 2, : w // 2 * 2].reshape(n, c, h // 2, 2, w // 2, 2).max(axis=(3, 5))


mm = np.matmul
check("k=0", {"a": ["n", "k"], "b": [0, "m"]}, R.matmul, [f(3, 0), f(0, 5)], mm)
check("k=0 large", {"a": ["n", "k"], "b": [0, "m"]}, R.matmul, [f(300, 0), f(0, 501)], mm)
check("n=0", {"a": [0, "k"], "b": ["k", "m"]}, R.matmul, [f(0, 7), f(7, 5)], mm)
check("m=0", {"a": ["n", "k"], "b": ["k", 0]}, R.matmul, [f(300, 71), f(71, 0)], mm)
check("static k=0", {"a": [64, 0], "b": [0, 64]}, R.matmul, [f(64, 0), f(0, 64)], mm)
check(
    "k=0 fused",
    {"a": ["n", "k"], "b": [0, "m"]},
    lambda a, b: R.relu(R.add(R.matmul(a, b), R.matmul(a, b))),
    [f(300, 0), f(0, 500)],
    lambda a, b: np.maximum(2 * (a @ b), 0),
)
check("batch k=0", {"a": ["b", "n", 0], "c": ["b", 0, "m"]}, R.matmul, [f(2, 30, 0), f(2, 0, 50)], mm)
check("batch b=0", {"a": [0, "n", "k"], "c": [0, "k", "m"]}, R.matmul, [f(0, 30, 4), f(0, 4, 50)], mm)
for shape in [(0, 40), (40, 0)]:  # constant weights: packed at O1+
    w = f(*shape)
    check(f"packed {shape}", {"a": ["n", shape[0]]}, lambda a, w=w: R.matmul(a, R.constant(w)),
          [f(9, shape[0])], lambda a, w=w: a @ w)
check("conv C=0", {"x": ["n", 0, 8, 8], "w": [4, 0, 3, 3]}, R.conv2d, [f(2, 0, 8, 8), f(4, 0, 3, 3)], conv_ref)
check("conv N=0", {"x": [0, 3, 8, 8], "w": [4, 3, 3, 3]}, R.conv2d, [f(0, 3, 8, 8), f(4, 3, 3, 3)], conv_ref)
check("conv O=0", {"x": ["n", 3, 8, 8], "w": [0, 3, 3, 3]}, R.conv2d, [f(2, 3, 8, 8), f(0, 3, 3, 3)], conv_ref)
check("pool N=0", {"x": [0, 3, 9, 9]}, lambda x: R.max_pool2d(x, 2), [f(0, 3, 9, 9)], pool_ref)
check("pool C=0", {"x": ["n", 0, 9, 9]}, lambda x: R.max_pool2d(x, 2), [f(2, 0, 9, 9)], pool_ref)
check("softmax rows of 0", {"x": ["n", 0]}, R.softmax, [f(5, 0)], lambda x: x)
check("softmax 0 rows", {"x": [0, "m"]}, R.softmax, [f(0, 6)], lambda x: x)
print("ALL OK")
"""


@pytest.mark.parametrize("opt_level", [0, 1, 2, 3])
def test_static_zero_dims_compile_and_match_numpy(opt_level: int) -> None:
    """A static 0 dim gives numpy's (empty or zero) answer at every level; no tile size comes from it."""
    out = run_isolated(
        f"OPT = {opt_level}\n" + ZERO_DIM_CASES, env={**os.environ, "RELAX_MLIR_NUM_THREADS": "2"}
    )
    assert out.returncode == 0, out.stderr[-3000:]
    assert out.last_line == "ALL OK"

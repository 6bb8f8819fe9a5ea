"""The vectorizing schedules (matmul, packed matmul, conv windows) make no vector larger than a row.

They vectorize every op of a kernel function; an op they do not tile (the fill initializing the
accumulator, an im2col copy) used to become one vector of its whole static shape, which
``convert-vector-to-scf{full-unroll}`` unrolled row by row: a static dim of 2**40 (legal in a type, too
large to run) never finished compiling, and one of 2**40 columns aborted LLVM (a vector of 2**40 lanes).
``vectorize_children_and_apply_patterns`` also made one vector of every static ``tensor.insert_slice``
(the im2col conv's padded planes, rows and columns): a conv with a static width of 2**40 aborted LLVM,
one with 2**40 filters hung, and a 1x8x512x512 conv took over a minute to compile.
"""

from __future__ import annotations

import json
import re

import numpy as np
import pytest
from isolated import run_isolated

import relax_mlir.builder as rb
from relax_mlir.dialects import relax as R
from relax_mlir.targets import compile

HUGE = 2**40


def _fn(params: str, op: str, attrs: str, args: str, arg_types: str, out: str) -> str:
    return (
        f"func.func @main({params}) -> {out} {{\n"
        f'  %0 = "relax.{op}"({args}) {attrs} : ({arg_types}) -> {out}\n'
        f"  return %0 : {out}\n}}"
    )


def _t(*dims: int | str) -> str:
    return f"!relax.tensor<[{', '.join(map(json.dumps, dims))}], f32>"


POOL = "{ceil_mode = false, dilation = [1, 1], kernel = [3, 3], padding = [1, 1, 1, 1], strides = [1, 1]}"
CONV = "{dilation = [1, 1], groups = %d : i64, padding = [1, 1, 1, 1], strides = [1, 1]}"
B = HUGE
HUGE_STATIC = {
    "matmul rows": _fn(f"%x: {_t(B, 8)}, %w: {_t(8, 16)}", "matmul", "", "%x, %w",
                       f"{_t(B, 8)}, {_t(8, 16)}", _t(B, 16)),
    "matmul columns": _fn(f"%x: {_t(4, 8)}, %w: {_t(8, B)}", "matmul", "", "%x, %w",
                          f"{_t(4, 8)}, {_t(8, B)}", _t(4, B)),
    "batch matmul": _fn(f"%x: {_t(2, B, 8)}, %w: {_t(2, 8, 16)}", "matmul", "", "%x, %w",
                        f"{_t(2, B, 8)}, {_t(2, 8, 16)}", _t(2, B, 16)),
    "packed matmul": _fn(f"%x: {_t(B, 8)}, %p: {_t(2, 8, 16)}", "matmul_packed", "{n = 20}", "%x, %p",
                         f"{_t(B, 8)}, {_t(2, 8, 16)}", _t(B, 20)),
    "max pool": _fn(f"%x: {_t(B, 8, 32, 32)}", "max_pool2d", POOL, "%x", _t(B, 8, 32, 32), _t(B, 8, 32, 32)),
    "conv": _fn(f"%x: {_t(B, 8, 32, 32)}, %w: {_t(16, 8, 3, 3)}", "conv2d", CONV % 1, "%x, %w",
                f"{_t(B, 8, 32, 32)}, {_t(16, 8, 3, 3)}", _t(B, 16, 32, 32)),
    "depthwise conv": _fn(f"%x: {_t(B, 8, 32, 32)}, %w: {_t(8, 1, 3, 3)}", "conv2d", CONV % 8, "%x, %w",
                          f"{_t(B, 8, 32, 32)}, {_t(8, 1, 3, 3)}", _t(B, 8, 32, 32)),
}  # fmt: skip


SYM_CONV = CONV % 1
HUGE_CONVS = {
    "conv static width": _fn(f"%x: {_t('n', 2, 3, B)}, %w: {_t(4, 2, 3, 3)}", "conv2d", SYM_CONV,
                             "%x, %w", f"{_t('n', 2, 3, B)}, {_t(4, 2, 3, 3)}", _t("n", 4, 3, B)),
    "conv static filters": _fn(f"%x: {_t('n', 2, 4, 4)}, %w: {_t(B, 2, 3, 3)}", "conv2d", SYM_CONV,
                               "%x, %w", f"{_t('n', 2, 4, 4)}, {_t(B, 2, 3, 3)}", _t("n", B, 4, 4)),
    "conv 1x8x512x512": _fn(f"%x: {_t(1, 8, 512, 512)}, %w: {_t(64, 8, 3, 3)}", "conv2d", SYM_CONV,
                            "%x, %w", f"{_t(1, 8, 512, 512)}, {_t(64, 8, 3, 3)}", _t(1, 64, 512, 512)),
}  # fmt: skip

MAX_VECTOR = """
        def max_vector(ir):
            return max([eval(v.replace("x", "*")) for v in re.findall(r"vector<([0-9x]+)x[a-z]", ir)], default=0)
"""


def test_huge_static_convs_compile_with_bounded_vectors() -> None:
    """im2col convs with a static dim of 2**40 (symbolic batch) and a large image compile at O1 and O2
    (in a child: they aborted, hung or took minutes) with no vector over 2**16 elements."""
    code = f"""
        import re
        import relax_mlir
{MAX_VECTOR}
        for name, text in {HUGE_CONVS!r}.items():
            for level in (1, 2):
                stages = {{}}
                relax_mlir.compile(text, opt_level=level, on_stage=lambda s, ir: stages.__setitem__(s, ir))
                print(name, level, max_vector(stages["host"]) <= 2**16)
    """
    outcome = run_isolated(code, timeout=600)
    assert outcome.returncode == 0, outcome.stderr[-3000:]
    lines = outcome.stdout.split("\n")
    assert len([line for line in lines if line.endswith(" True")]) == 2 * len(HUGE_CONVS), outcome.stdout


@pytest.mark.parametrize("level", [1, 2])
@pytest.mark.parametrize(
    ("n", "c", "h", "w", "f", "k", "pad"),
    [(1, 1, 1, 1, 1, 1, 0), (1, 3, 7, 5, 4, 3, 1), (2, 8, 9, 33, 16, 3, 1), (1, 2, 5, 1030, 3, 3, 2)],
)
def test_static_conv_values(level: int, n: int, c: int, h: int, w: int, f: int, k: int, pad: int) -> None:
    """Fully static convs (padded planes, rows and columns as tensor inserts, not vectors): numpy's values."""
    rng = np.random.default_rng(n * c * h * w)
    x, wt = rng.standard_normal((n, c, h, w), np.float32), rng.standard_normal((f, c, k, k), np.float32)
    bb = rb.BlockBuilder()
    with bb.function("main", {"x": rb.tensor([n, c, h, w]), "w": rb.tensor([f, c, k, k])}) as (xv, wv):
        with bb.dataflow():
            out = bb.emit_output(R.conv2d(xv, wv, 1, pad))
        bb.ret(out)
    xp = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    oh, ow = h + 2 * pad - k + 1, w + 2 * pad - k + 1
    cols = np.stack([xp[:, :, i : i + oh, j : j + ow] for i in range(k) for j in range(k)], axis=2)
    want = np.einsum("ncthw,fct->nfhw", cols, wt.reshape(f, c, k * k))
    got = compile(bb.module, opt_level=level)(x, wt)
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)


def test_huge_static_dims_compile_with_bounded_vectors() -> None:
    """Each case compiles at O1-O3 (in a child: it used to hang or abort), and no vector in the host IR
    (kernels after relax-schedule-kernels) grows with the huge dim: the largest are the schedules' tiles."""
    code = f"""
        import re
        import relax_mlir
        for name, text in {HUGE_STATIC!r}.items():
            for level in (1, 2, 3):
                stages = {{}}
                relax_mlir.compile(text, opt_level=level, on_stage=lambda s, ir: stages.__setitem__(s, ir))
                sizes = [eval(v.replace("x", "*")) for v in re.findall(r"vector<([0-9x]+)x[a-z]", stages["host"])]
                print(name, level, max(sizes, default=0) <= 2**16)
    """
    outcome = run_isolated(code, timeout=600)
    assert outcome.returncode == 0, outcome.stderr[-3000:]
    lines = outcome.stdout.split("\n")
    assert len([line for line in lines if line.endswith(" True")]) == 3 * len(HUGE_STATIC), outcome.stdout


@pytest.mark.parametrize("level", [1, 2, 3])
@pytest.mark.parametrize(("m", "n"), [(1, 1), (7, 1030), (9, 2100)])
def test_static_matmul_with_rows_longer_than_a_tile(level: int, m: int, n: int) -> None:
    """Static matmuls whose initialized rows span several bounded tiles, with a remainder: numpy's values."""
    rng = np.random.default_rng(m * n)
    x, w = rng.standard_normal((m, 5), np.float32), rng.standard_normal((5, n), np.float32)
    bb = rb.BlockBuilder()
    with bb.function("main", {"x": rb.tensor([m, 5]), "w": rb.tensor([5, n])}) as (xv, wv):
        with bb.dataflow():
            out = bb.emit_output(R.matmul(xv, wv))
        bb.ret(out)
    np.testing.assert_allclose(compile(bb.module, opt_level=level)(x, w), x @ w, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("level", [1, 2])
def test_static_pool_with_rows_longer_than_a_tile(level: int) -> None:
    """A max pool over rows of 1030 (its -inf fill is bounded in tiles of a row): numpy's values."""
    x = np.random.default_rng(3).standard_normal((1, 2, 3, 1030), np.float32)
    bb = rb.BlockBuilder()
    with bb.function("main", {"x": rb.tensor([1, 2, 3, 1030])}) as (xv,):
        with bb.dataflow():
            out = bb.emit_output(R.max_pool2d(xv, kernel=(1, 2), strides=(1, 2)))
        bb.ret(out)
    want = x.reshape(1, 2, 3, 515, 2).max(axis=-1)
    np.testing.assert_array_equal(compile(bb.module, opt_level=level)(x), want)


@pytest.mark.parametrize(
    ("shape", "kernel"), [((1, 75, 32, 32), (8, 8)), ((1, 3, 32, 1024), (16, 1)), ((1, 1, 9, 1), (3, 1))]
)
def test_avg_pool_divisor_is_not_unrolled_per_element(
    shape: tuple[int, ...], kernel: tuple[int, int]
) -> None:
    """An average pool's division by the per-position tap counts reads the counts transposed; vectorized
    whole (47k elements: under the element bound), it unrolled into one shuffle per element and took over a
    minute to compile (ONNX's averagepool_3d_default and larger windows). Now row-tiled: no vector of
    over ``MAX_ROWS`` rows, no transpose over ``MAX_TRANSPOSED`` elements, and numpy's values."""
    from relax_mlir.transforms.schedules import MAX_ROWS, MAX_TRANSPOSED

    x = np.random.default_rng(5).standard_normal(shape, np.float32)
    bb = rb.BlockBuilder()
    with bb.function("main", {"x": rb.tensor(list(shape))}) as (xv,):
        with bb.dataflow():
            out = bb.emit_output(R.avg_pool2d(xv, kernel=kernel, strides=1))
        bb.ret(out)
    stages: dict[str, str] = {}
    exe = compile(bb.module, opt_level=1, on_stage=lambda s, ir: stages.__setitem__(s, ir))
    dims = [[int(d) for d in v.split("x")] for v in re.findall(r"vector<([0-9x]+)x[a-z]", stages["host"])]
    assert max(int(np.prod(d[:-1])) for d in dims) <= MAX_ROWS
    transposed = re.findall(r"vector.transpose .* to vector<([0-9x]+)x[a-z]", stages["host"])
    assert (
        max([int(np.prod([int(d) for d in v.split("x")])) for v in transposed], default=0) <= MAX_TRANSPOSED
    )
    windows = np.lib.stride_tricks.sliding_window_view(x, kernel, axis=(2, 3))
    np.testing.assert_allclose(exe(x), windows.mean(axis=(-2, -1)), rtol=1e-5, atol=1e-6)

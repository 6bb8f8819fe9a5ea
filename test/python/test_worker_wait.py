"""OpenMP workers spin while the machine is quiet and sleep at once while other processes are busy, and
parallel regions use only the cores other processes leave free (``runtime/libs.py``: ``ThreadBudget`` sets
libomp's blocktime and thread count from /proc/stat)."""

from __future__ import annotations

import os
import subprocess
import sys
import threading

import pytest
from isolated import run_isolated
from toolchains import missing_toolchain

from relax_mlir.runtime import libs


class _Setter:
    """A stand-in for libomp's ``kmp_set_blocktime`` that records the blocktimes set."""

    def __init__(self) -> None:
        self.argtypes = None
        self.calls: list[int] = []

    def __call__(self, ms: int) -> None:
        self.calls.append(ms)


class _Lib:
    def __init__(self) -> None:
        self.kmp_set_blocktime = _Setter()
        self.omp_set_num_threads = _Setter()


def _budget(monkeypatch: pytest.MonkeyPatch, samples: list, cores: int, threads: int, **kw):  # noqa: ANN202
    """A ThreadBudget made at time 0 whose load samples are ``samples``, its recorded blocktimes and counts."""
    it = iter(samples)
    monkeypatch.setattr(libs, "_cpu_seconds", lambda: next(it))
    monkeypatch.setattr(libs.time, "monotonic", lambda: 0.0)
    lib = _Lib()
    budget = libs.ThreadBudget(lib, cores, threads, **kw)  # type: ignore[arg-type]
    return budget, lib.kmp_set_blocktime.calls, lib.omp_set_num_threads.calls


def _wait(monkeypatch: pytest.MonkeyPatch, samples: list, cores: int, threads: int):  # noqa: ANN202
    """A budget whose count the user fixed: only the blocktime follows the load."""
    return _budget(monkeypatch, samples, cores, threads, count=False)[:2]


def _tick_at(monkeypatch: pytest.MonkeyPatch, wait: libs.ThreadBudget, now: float) -> None:
    monkeypatch.setattr(libs.time, "monotonic", lambda: now)
    wait.tick()


def test_quiet_spins_busy_sleeps_and_back(monkeypatch: pytest.MonkeyPatch) -> None:
    # samples: (time, machine busy CPU s, own CPU s); 2 cores, 2 threads: no spare core
    samples = [(0.0, 0.0, 0.0), (1.0, 1.9, 1.8), (2.0, 3.9, 2.9), (3.0, 5.0, 3.95)]
    wait, calls = _wait(monkeypatch, samples, cores=2, threads=2)
    _tick_at(monkeypatch, wait, 1.0)  # others used 0.1 cores: quiet
    assert calls == [libs.QUIET_BLOCKTIME_MS]
    _tick_at(monkeypatch, wait, 1.1)  # too soon: no sample
    _tick_at(monkeypatch, wait, 2.0)  # others used 0.9 cores: busy
    assert calls == [libs.QUIET_BLOCKTIME_MS, 0]
    _tick_at(monkeypatch, wait, 3.0)  # others 0.05: quiet again
    assert calls == [libs.QUIET_BLOCKTIME_MS, 0, libs.QUIET_BLOCKTIME_MS]


def test_spare_cores_absorb_other_processes(monkeypatch: pytest.MonkeyPatch) -> None:
    """On 8 cores with 2 threads, others keeping 5 cores busy still leave this process its cores."""
    wait, calls = _wait(monkeypatch, [(0.0, 0.0, 0.0), (1.0, 7.0, 2.0), (2.0, 14.5, 4.0)], cores=8, threads=2)
    _tick_at(monkeypatch, wait, 1.0)
    assert calls == [libs.QUIET_BLOCKTIME_MS]
    _tick_at(monkeypatch, wait, 2.0)  # others 5.5 cores, within the 6 spare ones
    assert calls == [libs.QUIET_BLOCKTIME_MS]


def test_no_proc_stat_keeps_workers_sleeping(monkeypatch: pytest.MonkeyPatch) -> None:
    wait, calls = _wait(monkeypatch, [None, None], cores=2, threads=2)  # type: ignore[list-item]
    _tick_at(monkeypatch, wait, 5.0)
    assert calls == []


def test_cpu_seconds_reads_this_machine() -> None:
    sample = libs._cpu_seconds()
    if sample is None:
        pytest.skip("no /proc/stat on this system")
    assert sample[1] > 0 and sample[2] > 0


@pytest.mark.parametrize("env", [{"KMP_BLOCKTIME": "0"}, {"OMP_WAIT_POLICY": "active"}])
def test_a_users_openmp_wait_setting_is_left_alone(env: dict[str, str]) -> None:
    if libs.openmp_library() is None:
        missing_toolchain("libomp.so.5 is not installed (scripts/install-system-deps.sh)")
    code = (
        "from relax_mlir.runtime import libs\n"
        "budget = libs.thread_budget()\n"
        "assert budget is not None and budget._set_blocktime is None, 'adapted a blocktime the user set'\n"
    )
    ours = ("OMP_NUM_THREADS", "KMP_BLOCKTIME", "OMP_WAIT_POLICY")
    clean = {k: v for k, v in os.environ.items() if k not in ours}
    proc = subprocess.run([sys.executable, "-c", code], env=clean | env, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr


def test_busy_machine_lowers_the_thread_count_and_quiet_restores_it(monkeypatch: pytest.MonkeyPatch) -> None:
    """The blocktime then stays the quiet one: the threads keep off busy cores."""
    samples = [(0.0, 0.0, 0.0), (1.0, 1.9, 1.8), (2.0, 3.9, 2.9), (3.0, 5.0, 3.95)]
    budget, blocktimes, counts = _budget(monkeypatch, samples, cores=2, threads=2)
    _tick_at(monkeypatch, budget, 0.01)  # before the first sample: the compiled-for count
    assert counts == [2]
    _tick_at(monkeypatch, budget, 1.0)  # others used 0.1 cores: quiet
    _tick_at(monkeypatch, budget, 2.0)  # others used 0.9 cores: one core left
    assert counts == [2, 1] and budget.count == 1
    _tick_at(monkeypatch, budget, 3.0)  # quiet again
    assert counts == [2, 1, 2] and blocktimes == [libs.QUIET_BLOCKTIME_MS]


def test_count_is_the_free_cores(monkeypatch: pytest.MonkeyPatch) -> None:
    """8 cores, 8 threads: others busy on 2.7 cores leave 5 (others' half-busy cores count as free)."""
    budget, _, counts = _budget(monkeypatch, [(0.0, 0.0, 0.0), (1.0, 10.7, 8.0)], cores=8, threads=8)
    _tick_at(monkeypatch, budget, 1.0)
    assert counts == [5]


@pytest.mark.parametrize("kw", [{"count": False}, {"set_count": False}])
def test_a_users_thread_count_is_kept(monkeypatch: pytest.MonkeyPatch, kw: dict) -> None:
    samples = [(0.0, 0.0, 0.0), (1.0, 1.9, 1.0)]  # others used 0.9 cores
    budget, blocktimes, counts = _budget(monkeypatch, samples, cores=2, threads=2, **kw)
    _tick_at(monkeypatch, budget, 1.0)
    assert blocktimes == [] and counts == ([2] if "count" in kw else [])  # busy: workers sleep at once


def test_counts_are_per_calling_thread(monkeypatch: pytest.MonkeyPatch) -> None:
    """libomp keeps the count per thread: a call from another thread sets it there too."""
    budget, _, counts = _budget(monkeypatch, [(0.0, 0.0, 0.0)], cores=2, threads=2)
    budget.tick()
    budget.tick()
    worker = threading.Thread(target=budget.tick)
    worker.start()
    worker.join()
    assert counts == [2, 2]


def test_parallel_regions_read_libomps_count_when_another_openmp_runtime_came_first() -> None:
    """With GCC's libgomp loaded globally first (as PyTorch does), compiled code still reads libomp's
    thread count (``loader._bind_openmp``): libgomp's count of 1 must not keep a region at 2 threads on
    one thread (it did: every region followed PyTorch's count, never the machine's load)."""
    if libs.openmp_library() is None:
        missing_toolchain("libomp.so.5 is not installed (scripts/install-system-deps.sh)")
    import ctypes.util  # noqa: PLC0415

    gomp = ctypes.util.find_library("gomp")
    if gomp is None:
        pytest.skip("GCC's libgomp is not installed (the other OpenMP runtime this test loads)")
    outcome = run_isolated(
        f"""
        import ctypes, os
        ctypes.CDLL({gomp!r}, mode=ctypes.RTLD_GLOBAL).omp_set_num_threads(1)
        import numpy as np
        import relax_mlir, relax_mlir.builder as rb
        from relax_mlir.dialects import relax as R
        bb = rb.BlockBuilder()
        with bb.function("main", {{"x": rb.tensor(["n", 512]), "w": rb.tensor([512, 512])}}) as (x, w):
            with bb.dataflow():
                out = bb.emit_output(R.matmul(x, w))
            bb.ret(out)
        f = relax_mlir.compile(bb.module, opt_level=2)["main"]
        x, w = np.ones((256, 512), np.float32), np.full((512, 512), 0.5, np.float32)
        before = len(os.listdir("/proc/self/task"))
        y = f(x, w)
        print(float(np.abs(y - 256).max()), len(os.listdir("/proc/self/task")) - before)
        """,
        env=dict(os.environ, RELAX_MLIR_NUM_THREADS="2"),
    )
    assert outcome.returncode == 0, outcome.stderr
    error, workers = outcome.last_line.split()
    assert float(error) == 0.0
    assert int(workers) == 1, "the region ran on libgomp's thread count, not libomp's"

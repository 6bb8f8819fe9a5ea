"""OpenMP workers spin while the machine is quiet and sleep at once while other processes are busy
(``runtime/libs.py``: ``WorkerWait`` sets libomp's blocktime from /proc/stat)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

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


def _wait(monkeypatch: pytest.MonkeyPatch, samples: list, cores: int, threads: int):  # noqa: ANN202
    """A WorkerWait made at time 0 whose load samples are ``samples``, and its recorded blocktimes."""
    it = iter(samples)
    monkeypatch.setattr(libs, "_cpu_seconds", lambda: next(it))
    monkeypatch.setattr(libs.time, "monotonic", lambda: 0.0)
    lib = _Lib()
    return libs.WorkerWait(lib, cores, threads), lib.kmp_set_blocktime.calls  # type: ignore[arg-type]


def _tick_at(monkeypatch: pytest.MonkeyPatch, wait: libs.WorkerWait, now: float) -> None:
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
    code = (
        "from relax_mlir.runtime import libs\n"
        "assert libs.worker_wait() is None, 'adapted a blocktime the user set'\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code], env={**os.environ, **env}, capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 0, proc.stderr

"""bench/gpu_check.py without a GPU: it builds, then exits 2 with a clear error and writes no report; its input
generator, comparison and report run here with the CPU executable standing in for the GPU."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import numpy as np
import pytest

import relax_mlir
from relax_mlir.dialects.op_examples import example_program
from relax_mlir.runtime.executable import Executable
from relax_mlir.targets.cuda import driver_present

SCRIPT = Path(__file__).resolve().parents[2] / "bench" / "gpu_check.py"


@pytest.fixture(scope="module")
def gc() -> ModuleType:
    spec = importlib.util.spec_from_file_location("bench_gpu_check", SCRIPT)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def _cpu(op: str, opt_level: int = 1) -> Executable:
    return relax_mlir.compile(example_program(op), opt_level=opt_level)


@pytest.mark.skipif(driver_present(), reason="a CUDA driver is installed: the script would run on it")
def test_without_a_driver_it_builds_then_exits_2_without_a_report(tmp_path: Path) -> None:
    out = tmp_path / "GPU_CHECK.md"
    env = {**os.environ, "RELAX_MLIR_CACHE": str(tmp_path / "cache")}
    done = subprocess.run(
        [sys.executable, str(SCRIPT), "--ops", "exp,add,sum", "--no-block", "--out", str(out)],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert done.returncode == 2, done.stdout + done.stderr
    assert done.stderr.startswith("error: ") and "libcuda" in done.stderr, done.stderr
    assert "Traceback" not in done.stderr
    assert "built 3 programs" in done.stdout and "for sm_80" in done.stdout
    assert not out.exists()


def test_inputs_follow_the_symbolic_shapes(gc: ModuleType) -> None:
    rng = np.random.default_rng(0)
    # %syms [b, kv_len, seq], q [b, seq, 12, 64], k and v ["kv_len + seq", b, 4, 64]
    args = gc.make_inputs(_cpu("cached_attention").functions["main"], 17, rng)
    assert [a.shape for a in args] == [(17, 17, 17), (17, 17, 12, 64), (34, 17, 4, 64), (34, 17, 4, 64)]
    assert args[0].dtype == np.int8 and args[1].dtype == np.float32
    assert 0.1 <= args[1].min() and args[1].max() <= 0.9
    # prim parameters "b" and "8 * s" are ints; a tuple parameter is nested
    assert gc.make_inputs(_cpu("make_shape").functions["main"], 3, rng)[1:] == [3, 24]
    syms, (x,) = gc.make_inputs(_cpu("tuple_get_item").functions["main"], 3, rng)
    assert x.shape == (3,)
    _, a, b = gc.make_inputs(_cpu("logical_and").functions["main"], 3, rng)
    assert a.dtype == np.bool_ and b.shape == (4,)
    _, a, _ = gc.make_inputs(_cpu("bitwise_and").functions["main"], 17, rng)
    assert a.dtype == np.int32 and set(np.unique(a)) <= {0, 1, 2}


def test_compare_is_exact_for_ints_and_equates_nans(gc: ModuleType) -> None:
    f = np.array([1.0, np.nan, np.inf], np.float32)
    assert gc.compare(f, f.copy(), 1e-4, 1e-5)[:2] == (True, 0.0)
    ok, err, why = gc.compare((f + 1e-3, 2), (f, 2), 1e-4, 1e-5)
    assert not ok and err == pytest.approx(1e-3, rel=1e-3) and why == "result 0 differs"
    assert not gc.compare(np.array([1, 2]), np.array([1, 3]), 1, 1)[0]
    assert not gc.compare(np.zeros(2, np.float32), np.zeros(3, np.float32), 1, 1)[0]
    assert not gc.compare(np.zeros(2, np.float32), (np.zeros(2, np.float32),) * 2, 1, 1)[0]


def test_check_op_and_report_with_the_cpu_standing_in_for_the_gpu(gc: ModuleType, tmp_path: Path) -> None:
    good = gc.check_op(gc.Built("split", _cpu("split", 3), _cpu("split"), 1), repeat=2)
    assert good.passed and set(good.cases) == {"n=3", "n=17"} and good.device_ms and good.cpu_ms
    exp = _cpu("exp")
    bad = gc.check_op(gc.Built("exp", lambda s, x: exp(s, x) * 1.01, exp, 1), repeat=2)
    assert not bad.passed and bad.note == "n=3: result 0 differs" and bad.device_ms is None
    broken = gc.check_op(gc.Built("abs", error="build: CompileError: no"), repeat=2)
    assert not broken.passed
    out = tmp_path / "report.md"
    gc.write_report(out, "sm_80", [good, bad, broken], [], ["--ops", "split,exp,abs"])
    text = out.read_text()
    assert "1/3 ops passed; failed: exp, abs" in text and "- chip: sm_80" in text
    assert "| split | 1 | pass | pass |" in text and "| exp | 1 | **FAIL** | **FAIL** |" in text

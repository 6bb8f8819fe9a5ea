"""Without the OpenMP runtime, relax-parallelize-kernels still rewrites the IR the same way (a pass gives
the same output on every machine), and compile() lowers the chunks to serial loops with one warning."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from oprun import build_fn, rand

import relax_mlir.builder as rb
from relax_mlir.dialects import relax as R
from relax_mlir.pipelines.cpu import LEVELS
from relax_mlir.runtime import libs
from relax_mlir.targets import compile, cpu

PASS = "relax-parallelize-kernels"
PIPELINE = LEVELS[2].replace(PASS, f"{PASS}{{num-threads=2 min-work=0}}")


@pytest.mark.parametrize("n", [0, 1, 300])
def test_missing_libomp_runs_serial_chunks_with_one_warning(monkeypatch: pytest.MonkeyPatch, n: int) -> None:
    monkeypatch.setattr(libs, "openmp_library", lambda: None)
    monkeypatch.setattr(cpu, "_warned_no_openmp", False)
    module = build_fn({"x": rb.tensor(["n", 64])}, lambda x: R.sigmoid(x))
    texts: dict[str, str] = {}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        exe = compile(module, pipeline=PIPELINE, use_cache=False, on_stage=texts.__setitem__)
        compile(module, pipeline=PIPELINE, use_cache=False)
    messages = [str(w.message) for w in caught if issubclass(w.category, RuntimeWarning)]
    assert len(messages) == 1 and "libomp" in messages[0] and "install-system-deps.sh" in messages[0]
    assert "scf.forall" in texts["host"]  # the IR pass split the kernel as it does with OpenMP
    assert "relax.num_threads = 2" in texts["host"]
    assert "omp." not in texts["llvm"] and "__kmpc" not in texts["llvm"]
    x = rand((n, 64))
    np.testing.assert_allclose(exe(x), 1 / (1 + np.exp(-x)), rtol=1e-5)

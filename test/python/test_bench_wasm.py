"""bench/bench_wasm.py runs: its quick mode compiles the MLP for wasm32, runs it in node next to ONNX Runtime
Web and checks both (and the native CPU target) against numpy. No timing assertions.

Needs node and npm (onnxruntime-web is installed by the script into its cache directory) and the wasm
toolchain (``pip install relax_mlir[wasm]``); without them the test skips, unless
``$RELAX_MLIR_REQUIRE_TOOLCHAINS=1``.
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from unittest import mock

from toolchains import missing_toolchain

ROOT = Path(__file__).resolve().parents[2]
BENCH = ROOT / "bench" / "bench_wasm.py"


def _require_tools() -> None:
    for tool in ("node", "npm"):
        if shutil.which(tool) is None:
            missing_toolchain(f"{tool} not found (Debian: apt-get install nodejs npm; node >= 20)")
    if importlib.util.find_spec("ziglang") is None:
        missing_toolchain("the wasm32 target needs the ziglang package: pip install relax_mlir[wasm]")


def test_quick_mode_runs_and_matches_numpy(tmp_path: Path) -> None:
    _require_tools()
    out = tmp_path / "results.json"
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    done = subprocess.run(
        [sys.executable, str(BENCH), "--quick", "--json", str(out)],
        capture_output=True,
        text=True,
        env=env,
        timeout=900,
    )
    if done.returncode == 2 and done.stderr.startswith("error:"):  # node/npm missing or npm install failed
        missing_toolchain(done.stderr.strip())
    assert done.returncode == 0, done.stdout + done.stderr
    results = json.loads(out.read_text())
    assert len(done.stdout.splitlines()) == 1 + len(results)  # the table's header and one row per case
    assert [(r["model"], r["shape"]) for r in results] == [
        ("MLP 784-512-512-10", [1, 784]),
        ("MLP 784-512-512-10", [3, 784]),
    ]
    for r in results:
        # the harness raised if an output was off by more than rtol 1e-3 / atol 1e-4; errors are relative
        # to the output's scale
        for key in ("err_wasm", "err_ort", "err_native"):
            assert 0 <= r[key] < 1e-3, (key, r)
        assert r["wasm_ms"] > 0 and r["ort_ms"] > 0 and r["native_ms"] > 0


def test_markdown_reports_ratios_and_targets() -> None:
    sys.path.insert(0, str(BENCH.parent))
    with mock.patch.dict(os.environ):  # it pins the engines' thread counts to 1 when imported
        import bench_wasm

    rows = [
        {
            "model": "MLP 784-512-512-10",
            "shape": [1, 784],
            "label": "MLP 784-512-512-10 1x784",
            "wasm_ms": 0.1,
        }
        | {"ort_ms": 0.2, "native_ms": 0.05, "others": 0.0, "wasm_compile_s": 3.0},
        {"model": "GPT 2 layers", "shape": [1, 16, 512], "label": "GPT 2 layers 1x16x512", "wasm_ms": 12.0}
        | {"ort_ms": 10.0, "others": 0.5, "wasm_compile_s": 20.0},
    ]
    text = bench_wasm.markdown(rows, {"cpu": "test CPU", "date": "today"}, {"node": "v20"})
    assert "| MLP 784-512-512-10 | 1x784 | 0.100 | 0.200 | 0.50 | 0.050 | 0.50 | 0.141 | 0.00 |" in text
    assert "| GPT 2 layers | 1x16x512 | 12.000 | 10.000 | 1.20 | - | - | 10.1 | 0.50 |" in text
    assert "1 of 2 workloads at <= 1.0x" in text and "worst GPT 2 layers 1x16x512 at 1.20x" in text
    assert "- cpu: test CPU" in text

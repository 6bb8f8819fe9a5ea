"""examples/web: the server compiles the MLP to wasm, headless Chromium runs the page, numpy checks it.

The page computes ``y = mlp(x)`` for a deterministic ``x`` and writes the output's shape, sum, sum of
|y| and 64 sampled values into ``#result``; the test recomputes them with ``bench/perf_models.py``'s
numpy MLP, then keeps a screenshot (``test/artifacts/web_mlp.png``). Chromium is driven over the
DevTools protocol on a pipe (``headless.py``); the server listens on the loopback interface only.
Without chromium, node or the wasm toolchain the test skips, unless ``$RELAX_MLIR_REQUIRE_TOOLCHAINS=1``.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
from headless import Chromium
from toolchains import missing_toolchain

ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = ROOT / "test" / "artifacts"
sys.path.insert(0, str(ROOT))
from bench import perf_models  # noqa: E402


def page_input(shape: tuple[int, ...]) -> np.ndarray:
    """The page's input: x[i] = ((i * 7919) % 1000) / 1000 - 0.5 in row-major order, as float32."""
    i = np.arange(int(np.prod(shape)), dtype=np.int64)
    return (((i * 7919) % 1000) / 1000 - 0.5).astype(np.float32).reshape(shape)


def test_web_page_runs_the_mlp_in_chromium(tmp_path: Path) -> None:
    browser = shutil.which("chromium") or shutil.which("chromium-browser")
    if browser is None:
        missing_toolchain("chromium not found (Debian: chromium; scripts/install-system-deps.sh)")
    from relax_mlir.errors import RelaxError
    from relax_mlir.targets import wasm

    try:
        wasm.zig()
    except RelaxError as e:
        missing_toolchain(str(e))
    server = subprocess.Popen(
        [sys.executable, str(ROOT / "examples" / "web" / "serve.py"), "--port", "0", "--out", str(tmp_path)],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        url = ""
        for line in server.stdout:
            if line.startswith("serving "):
                url = line.split()[1]
                break
        assert url.startswith("http://127.0.0.1:"), f"server did not start (exit {server.poll()})"
        assert (tmp_path / "model.mjs").exists() and (tmp_path / "model.d.ts").exists()
        _, weights = perf_models.mlp()
        with Chromium(browser) as chromium:
            for batch in (1, 3):
                page = chromium.open(f"{url}?batch={batch}&auto=1")
                result = json.loads(page.wait_for("document.getElementById('result').textContent"))
                assert "error" not in result, result
                y = perf_models.mlp_numpy(page_input((batch, 784)), weights)
                assert result["shape"] == [batch, 10]
                np.testing.assert_allclose(result["sum"], y.sum(dtype=np.float64), rtol=1e-4, atol=1e-3)
                np.testing.assert_allclose(result["sumAbs"], np.abs(y).sum(dtype=np.float64), rtol=1e-4)
                index, values = np.array(result["samples"]).T
                np.testing.assert_allclose(values, y.reshape(-1)[index.astype(int)], rtol=1e-4, atol=1e-4)
                assert result["ms"] > 0
            page = chromium.open(f"{url}?batch=2&auto=1")
            page.wait_for("document.getElementById('result').textContent")
            shot = page.screenshot(ARTIFACTS / "web_mlp.png")
        assert shot.stat().st_size > 10_000
    finally:
        server.terminate()
        server.wait(timeout=30)

"""examples/web: the server compiles the MLP or the GPT block to wasm, headless Chromium runs the page,
numpy checks it.

The page computes ``y = model(x)`` for a deterministic ``x`` and writes the output's shape, sum, sum of
|y| and 64 sampled values into ``#result``; the test recomputes them with ``bench/perf_models.py``'s
numpy models, then keeps a screenshot (``test/artifacts/web_<model>.png``). Chromium is driven over the
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
import pytest
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


# model -> (serve.py arguments, the shapes the page runs, numpy reference of (x, weights))
MODELS = {
    "mlp": ([], [(1, 784), (3, 784)], perf_models.mlp, perf_models.mlp_numpy),
    # 14 MB of wasm: browsers refuse to instantiate a module over 8 MB synchronously on the main thread
    "gpt": (["--model", "gpt", "--layers", "1"], [(1, 5, 512), (2, 16, 512)], lambda: perf_models.gpt(1),
            lambda x, w: perf_models.gpt_numpy(x, w, 1)),
}  # fmt: skip


@pytest.mark.parametrize("name", sorted(MODELS))
def test_web_page_runs_the_model_in_chromium(name: str, tmp_path: Path) -> None:
    browser = shutil.which("chromium") or shutil.which("chromium-browser")
    if browser is None:
        missing_toolchain("chromium not found (Debian: chromium; scripts/install-system-deps.sh)")
    from relax_mlir.errors import RelaxError
    from relax_mlir.targets import wasm

    try:
        wasm.zig()
    except RelaxError as e:
        missing_toolchain(str(e))
    args, shapes, build, reference = MODELS[name]
    server = subprocess.Popen(
        [
            sys.executable,
            str(ROOT / "examples" / "web" / "serve.py"),
            *args,
            "--port",
            "0",
            "--out",
            str(tmp_path),
        ],
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
        _, weights = build()
        with Chromium(browser) as chromium:
            for shape in shapes:
                query = f"batch={shape[0]}" + (f"&seq={shape[1]}" if len(shape) == 3 else "")
                page = chromium.open(f"{url}?{query}&auto=1")
                result = json.loads(
                    page.wait_for("document.getElementById('result').textContent", timeout=300)
                )
                assert "error" not in result, result
                y = reference(page_input(shape), weights)
                assert result["shape"] == list(y.shape)
                np.testing.assert_allclose(result["sum"], y.sum(dtype=np.float64), rtol=1e-4, atol=1e-2)
                np.testing.assert_allclose(result["sumAbs"], np.abs(y).sum(dtype=np.float64), rtol=1e-4)
                index, values = np.array(result["samples"]).T
                np.testing.assert_allclose(values, y.reshape(-1)[index.astype(int)], rtol=1e-3, atol=1e-3)
                assert result["ms"] > 0
            shot = page.screenshot(ARTIFACTS / f"web_{name}.png")
        assert shot.stat().st_size > 10_000
    finally:
        server.terminate()
        server.wait(timeout=30)

"""examples/webgpu: headless Chromium runs a compiled kernel's WGSL with WebGPU (SwiftShader), numpy checks it.

``serve.py`` compiles its example ``exp(a + b)`` with ``target="webgpu"`` and writes the kernels with
``wgsl.write_kernels``. The page fills every buffer with ``inputValue`` (recomputed here), passes the
scalars and grid that the host code chose for the same call on lavapipe (recorded from the webgpu
runtime, ``test_wgsl.recorded_launches``), runs the kernel and writes the output's sum, sum of |y|,
samples (and every value up to 4096) and the adapter it got into ``#result``. Headless Chromium has a WebGPU
adapter only with ``--enable-unsafe-webgpu`` (then Dawn's SwiftShader Vulkan, a CPU device); the screenshot
goes to ``test/artifacts/webgpu_example.png``. Without chromium, node + naga-wasm or an adapter the test
skips, unless ``$RELAX_MLIR_REQUIRE_TOOLCHAINS=1``.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
from headless import Chromium
from test_wgsl import EXAMPLE, EXAMPLES, native_launch, only_kernel, page_params, scalars_of
from toolchains import missing_toolchain

from relax_mlir.errors import CompileError, DeviceUnavailableError
from relax_mlir.targets import webgpu_runtime, wgsl

ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = ROOT / "test" / "artifacts"
WEBGPU_FLAGS = ("--enable-unsafe-webgpu", "--use-webgpu-adapter=swiftshader")
SIZES = [0, 1, 63, 1001, 1 << 20]


def check(result: dict, expected: np.ndarray) -> None:
    """The page's summary of its output against numpy's ``expected``."""
    assert "error" not in result, result
    assert result["shape"] == list(expected.shape)
    np.testing.assert_allclose(result["sum"], expected.sum(dtype=np.float64), rtol=1e-5, atol=1e-3)
    np.testing.assert_allclose(result["sumAbs"], np.abs(expected).sum(dtype=np.float64), rtol=1e-5)
    if expected.size <= 4096:
        np.testing.assert_allclose(result["data"], expected, rtol=2e-6)
    index, values = np.array(result["samples"], dtype=np.float64).reshape(-1, 2).T
    np.testing.assert_allclose(values, expected[index.astype(int)], rtol=2e-6)


def test_webgpu_page_runs_the_compiled_kernel_in_chromium(tmp_path: Path) -> None:
    browser = shutil.which("chromium") or shutil.which("chromium-browser")
    if browser is None:
        missing_toolchain("chromium not found (Debian: chromium; scripts/install-system-deps.sh)")
    try:
        wgsl.naga_version()
        webgpu_runtime.device()  # the host code's launches are recorded on lavapipe
    except (CompileError, DeviceUnavailableError) as e:
        missing_toolchain(str(e))
    server = subprocess.Popen(
        [
            sys.executable,
            str(ROOT / "examples" / "webgpu" / "serve.py"),
            "--out",
            str(tmp_path),
            "--port",
            "0",
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        url = next((line.split()[1] for line in server.stdout if line.startswith("serving ")), "")
        assert url.startswith("http://127.0.0.1:"), f"server did not start (exit {server.poll()})"
        key, _ = only_kernel(EXAMPLE)
        entry = json.loads((tmp_path / "kernels.json").read_text())["kernels"][key]
        reference = EXAMPLES["exp_add_f32"][2]
        with Chromium(browser, flags=WEBGPU_FLAGS) as chromium:
            for n in SIZES:
                (a, b), launch = native_launch("exp_add_f32", n)
                scalars = scalars_of(entry, launch)
                grid = launch["grid"] if launch else [0, 1, 1]
                query = f"kernel={key}&n={n}&scalars={','.join(map(str, scalars))}&grid={','.join(map(str, grid))}"
                page = chromium.open(f"{url}?{query}&auto=1")
                result = json.loads(
                    page.wait_for("document.getElementById('result').textContent", timeout=300)
                )
                if "adapter" in result.get("message", "") or "navigator.gpu" in result.get("message", ""):
                    missing_toolchain(f"headless chromium has no WebGPU adapter: {result['message']}")
                adapter = result.get("adapter", {})
                print(f"n={n}: {adapter.get('vendor')} {adapter.get('architecture')}, {result.get('ms')} ms")
                check(result, reference(a, b))
                assert result["params"] == page_params(entry, n, scalars) and result["grid"] == grid
                assert result["adapter"]["vendor"]
            shot = page.screenshot(ARTIFACTS / "webgpu_example.png")
            assert shot.stat().st_size > 10_000
            # without the scalars the host code computes, the page says which it needs
            page = chromium.open(f"{url}?kernel={key}&auto=1")
            result = json.loads(page.wait_for("document.getElementById('result').textContent", timeout=120))
            assert "takes 3 scalar(s) (index, index, index); ?scalars= gave 0" in result["message"], result
    finally:
        server.terminate()
        server.wait(timeout=30)

"""examples/webgpu: headless Chromium runs a kernel's WGSL with WebGPU (SwiftShader), numpy checks it.

The kernels (``spirv_kernels.py``, hand-made with the webgpu target's kernel ABI) are written by
``wgsl.write_kernels``; ``serve.py --kernels`` serves them with the page. The page fills every argument
with ``inputValue`` (recomputed here), runs the kernel and writes the output's sum, sum of |y|, samples
(and every value up to 4096) and the adapter it got into ``#result``. Headless Chromium has a WebGPU
adapter only with ``--enable-unsafe-webgpu`` (then Dawn's SwiftShader Vulkan, a CPU device); the screenshot
goes to ``test/artifacts/webgpu_<kernel>.png``. Without chromium, node + naga-wasm or an adapter the test
skips, unless ``$RELAX_MLIR_REQUIRE_TOOLCHAINS=1``.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import spirv_kernels
from headless import Chromium
from test_wgsl import REFERENCE, inputs
from toolchains import missing_toolchain

from relax_mlir.errors import CompileError
from relax_mlir.targets import wgsl

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


@pytest.mark.parametrize("name", sorted(REFERENCE))
def test_webgpu_page_runs_the_kernel_in_chromium(name: str, tmp_path: Path) -> None:
    browser = shutil.which("chromium") or shutil.which("chromium-browser")
    if browser is None:
        missing_toolchain("chromium not found (Debian: chromium; scripts/install-system-deps.sh)")
    kernels = {f"ew.{k}": spirv_kernels.kernel(k) for k in ("add_exp", "mul_i32", "add_i64")}
    try:
        wgsl.write_kernels(kernels, tmp_path)
    except CompileError as e:
        missing_toolchain(str(e))
    server = subprocess.Popen(
        [
            sys.executable,
            str(ROOT / "examples" / "webgpu" / "serve.py"),
            "--kernels",
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
        with Chromium(browser, flags=WEBGPU_FLAGS) as chromium:
            for n in SIZES:
                page = chromium.open(f"{url}?kernel=ew.{name}&n={n}&auto=1")
                result = json.loads(
                    page.wait_for("document.getElementById('result').textContent", timeout=300)
                )
                if "adapter" in result.get("message", "") or "navigator.gpu" in result.get("message", ""):
                    missing_toolchain(f"headless chromium has no WebGPU adapter: {result['message']}")
                print(
                    f"n={n}: adapter {result.get('adapter', {}).get('architecture')}, {result.get('ms')} ms"
                )
                a, b = inputs(kernels[f"ew.{name}"].args[0]["dtype"], n, 2)
                check(result, REFERENCE[name](a, b))
                assert result["adapter"]["vendor"] and result["grid"] == [-(-n // 64), 1, 1]
            shot = page.screenshot(ARTIFACTS / f"webgpu_{name}.png")
            assert shot.stat().st_size > 10_000
            # a kernel without WGSL: the page says why
            page = chromium.open(f"{url}?kernel=ew.add_i64&auto=1")
            result = json.loads(page.wait_for("document.getElementById('result').textContent", timeout=120))
            assert (
                "has no WGSL" in result["message"]
                and "Int64: WGSL has no 64-bit integers" in result["message"]
            )
    finally:
        server.terminate()
        server.wait(timeout=30)

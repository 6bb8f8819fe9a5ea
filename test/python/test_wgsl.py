"""targets/wgsl.py: SPIR-V kernels to WGSL with naga-wasm (node), kernels.json, and the WGSL run on lavapipe.

The kernels are hand-made with the webgpu target's kernel ABI (``spirv_kernels.py``). The WGSL runs through
the ``wgpu`` wheel (wgpu-native: Vulkan, Metal or D3D12; here Debian's lavapipe, which needs
``$XDG_RUNTIME_DIR``) with the same bindings and params the browser page (``examples/webgpu``) passes,
and is compared with numpy. Without node + naga-wasm (``scripts/install-js-deps.sh``), wgpu or an
adapter the tests skip, unless ``$RELAX_MLIR_REQUIRE_TOOLCHAINS=1``.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
from pathlib import Path

import numpy as np
import pytest
import spirv_kernels
from toolchains import missing_toolchain

from relax_mlir.errors import CompileError, ShaderTranslationError
from relax_mlir.targets import wgsl

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "scripts"))
from check_toolchains import minimal_compute_spirv  # noqa: E402


@pytest.fixture(scope="module")
def naga() -> str:
    try:
        return wgsl.naga_version()
    except CompileError as e:
        missing_toolchain(str(e))


def test_spirv_capabilities_are_read_from_the_module() -> None:
    assert wgsl.spirv_capabilities(minimal_compute_spirv()) == ["Shader"]
    assert "Int64" in wgsl.spirv_capabilities(spirv_kernels.kernel("add_i64").spirv)
    assert wgsl.required_features(["Shader", "Float16", "GroupNonUniformShuffle"]) == [
        "shader-f16",
        "subgroups",
    ]


def test_example_kernel_translates_to_wgsl(naga: str) -> None:
    text = wgsl.spirv_to_wgsl(spirv_kernels.kernel("add_exp").spirv)
    assert "@compute @workgroup_size(64, 1, 1)" in text and "fn add_exp(" in text
    for binding in range(4):  # a, b, c and the params buffer, as the kernel ABI says
        assert f"@group(0) @binding({binding})" in text
    assert "exp(" in text and "array<f32>" in text
    assert wgsl.wgsl_entry_point(text, "add_exp") == "add_exp"


def test_64_bit_kernel_is_refused_with_the_reason(naga: str) -> None:
    with pytest.raises(ShaderTranslationError, match=r"ew.add_i64: .*Int64: WGSL has no 64-bit integers"):
        wgsl.spirv_to_wgsl(spirv_kernels.kernel("add_i64").spirv, name="ew.add_i64")


def test_naga_error_text_is_in_the_error(naga: str) -> None:
    truncated = minimal_compute_spirv()[:-4]  # without OpFunctionEnd
    with pytest.raises(
        ShaderTranslationError, match=r"naga cannot translate it to WGSL: parse error: .*IncompleteData"
    ):
        wgsl.spirv_to_wgsl(truncated)


def test_bytes_that_are_not_spirv_are_refused() -> None:
    with pytest.raises(
        ShaderTranslationError, match="not a SPIR-V module: .* found 5 bytes starting with 68656c6c"
    ):
        wgsl.spirv_to_wgsl(b"hello")


def test_missing_node_is_a_compile_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(wgsl.shutil, "which", lambda name: None)
    with pytest.raises(
        CompileError, match=r"needs node \(>= 20\), not found on PATH: run scripts/install-js-deps.sh"
    ):
        wgsl.spirv_to_wgsl(minimal_compute_spirv())


def test_missing_naga_is_a_compile_error(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    if wgsl.shutil.which("node") is None:
        missing_toolchain("node not found (install node >= 20)")
    monkeypatch.setattr(wgsl, "SCRIPT", tmp_path / "wgsl_naga.mjs")
    with pytest.raises(CompileError, match="needs the naga-wasm npm package, not found .*install-js-deps.sh"):
        wgsl.spirv_to_wgsl(minimal_compute_spirv())


def test_write_kernels(naga: str, tmp_path: Path) -> None:
    kernels = {f"ew.{name}": spirv_kernels.kernel(name) for name in ("add_exp", "mul_i32", "add_i64")}
    manifest = wgsl.write_kernels(kernels, tmp_path)
    assert json.loads((tmp_path / "kernels.json").read_text()) == manifest
    assert manifest["translator"] == f"naga {naga} (naga-wasm)"
    entries = manifest["kernels"]
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "ew.add_exp.spv", "ew.add_exp.wgsl", "ew.add_i64.spv", "ew.mul_i32.spv", "ew.mul_i32.wgsl", "kernels.json"
    ]  # fmt: skip
    assert (tmp_path / "ew.add_exp.spv").read_bytes() == kernels["ew.add_exp"].spirv
    add = entries["ew.add_exp"]
    assert add["entry"] == add["wgsl_entry"] == "add_exp" and add["workgroup_size"] == [64, 1, 1]
    assert add["params_binding"] == 3 and add["params_length"] == 9 and add["features"] == []
    assert add["bindings"][3] == {"binding": 3, "dtype": "i32", "params": True}
    assert entries["ew.mul_i32"]["wgsl_entry"] == "mul_i32_"  # naga renames names ending in a digit
    bad = entries["ew.add_i64"]
    assert bad["wgsl"] is None and "Int64: WGSL has no 64-bit integers" in bad["wgsl_error"]


# -- the WGSL runs through wgpu (wgpu-native) on lavapipe ------------------------------------------------


@pytest.fixture(scope="module")
def device():  # noqa: ANN201
    if not os.environ.get("XDG_RUNTIME_DIR"):  # the Vulkan loader (lavapipe) wants one
        runtime = tempfile.mkdtemp(prefix="relax_xdg_")
        os.environ["XDG_RUNTIME_DIR"] = runtime
    try:
        import wgpu
    except ImportError:
        missing_toolchain("the wgpu package is missing (pip install wgpu==0.32.0)")
    try:
        adapter = wgpu.gpu.request_adapter_sync(power_preference="high-performance")
    except Exception as e:  # noqa: BLE001  (wgpu raises its own errors for a missing driver)
        adapter, problem = None, e
    if adapter is None:
        missing_toolchain(f"wgpu found no adapter (Debian: mesa-vulkan-drivers): {problem}")
    print("wgpu adapter:", adapter.info)
    return adapter.request_device_sync()


def inputs(dtype: str, n: int, count: int) -> list[np.ndarray]:
    """The page's inputs (examples/webgpu/app.mjs ``inputValue``): argument j's element i."""
    i = np.arange(n, dtype=np.int64)
    arrays = []
    for j in range(count):
        h = (i * 7919 + j * 104729) % 1000
        arrays.append(
            (h / 1000 - 0.5).astype(np.float32) if dtype == "f32" else (h % 201 - 100).astype(np.int32)
        )
    return arrays


def run_wgsl(
    device, entry: dict, text: str, arrays: list[np.ndarray], params: np.ndarray, grid
) -> list[np.ndarray]:  # noqa: ANN001
    """Run a kernels.json entry's WGSL on ``arrays`` with an explicit bind group layout (as the page does)."""
    import wgpu

    module = device.create_shader_module(code=text)
    layout = device.create_bind_group_layout(
        entries=[
            {"binding": b["binding"], "visibility": wgpu.ShaderStage.COMPUTE, "buffer": {"type": "storage"}}
            for b in entry["bindings"]
        ]
    )
    pipeline = device.create_compute_pipeline(
        layout=device.create_pipeline_layout(bind_group_layouts=[layout]),
        compute={"module": module, "entry_point": entry["wgsl_entry"]},
    )
    usage = wgpu.BufferUsage.STORAGE | wgpu.BufferUsage.COPY_SRC | wgpu.BufferUsage.COPY_DST
    buffers = []
    for a in [*arrays, params]:
        buffer = device.create_buffer(size=max(4, a.nbytes), usage=usage)  # no empty storage bindings
        if a.nbytes:
            device.queue.write_buffer(buffer, 0, a)
        buffers.append(buffer)
    group = device.create_bind_group(
        layout=layout,
        entries=[
            {"binding": b["binding"], "resource": {"buffer": buf}}
            for b, buf in zip(entry["bindings"], buffers)
        ],
    )
    encoder = device.create_command_encoder()
    compute = encoder.begin_compute_pass()
    compute.set_pipeline(pipeline)
    compute.set_bind_group(0, group)
    compute.dispatch_workgroups(*grid)
    compute.end()
    device.queue.submit([encoder.finish()])
    return [
        np.frombuffer(device.queue.read_buffer(buf), a.dtype)[: a.size].copy()
        for a, buf in zip(arrays, buffers)
    ]


@pytest.fixture(scope="module")
def written(naga: str, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("kernels")
    wgsl.write_kernels({f"ew.{k}": spirv_kernels.kernel(k) for k in ("add_exp", "mul_i32")}, out)
    return out


REFERENCE = {"add_exp": lambda a, b: np.exp(a + b), "mul_i32": lambda a, b: a * b}


@pytest.mark.parametrize("n", [0, 1, 63, 1000, 100_003])
@pytest.mark.parametrize("name", sorted(REFERENCE))
def test_wgsl_kernel_runs_on_wgpu(device, written: Path, name: str, n: int) -> None:  # noqa: ANN001
    entry = json.loads((written / "kernels.json").read_text())["kernels"][f"ew.{name}"]
    dtype = entry["args"][0]["dtype"]
    a, b, c = inputs(dtype, n, 3)
    params = np.array([0, n, 1] * 3, np.int32)  # offset, size, stride of a, b, c
    grid = (-(-n // entry["workgroup_size"][0]), 1, 1)
    out = run_wgsl(device, entry, (written / entry["wgsl"]).read_text(), [a, b, c], params, grid)
    np.testing.assert_array_equal(out[0], a)  # inputs untouched
    np.testing.assert_allclose(out[2], REFERENCE[name](a, b), rtol=2e-6)


def test_wgsl_kernel_follows_params_offsets_and_strides(device, written: Path) -> None:  # noqa: ANN001
    """The params buffer places each argument (element offset and stride) as the kernel ABI says."""
    entry = json.loads((written / "kernels.json").read_text())["kernels"]["ew.add_exp"]
    n = 37
    a, b, c = inputs("f32", 3 * n + 5, 3)
    params = np.array([5, n, 3, 0, n, 2, 1, n, 1], np.int32)
    out = run_wgsl(device, entry, (written / entry["wgsl"]).read_text(), [a, b, c], params, (1, 1, 1))
    expected = c.copy()
    expected[1 : 1 + n] = np.exp(a[5 : 5 + 3 * n : 3] + b[0 : 2 * n : 2])
    np.testing.assert_allclose(out[2], expected, rtol=2e-6)

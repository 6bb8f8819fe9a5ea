"""targets/wgsl.py: SPIR-V kernels to WGSL with naga-wasm (node), kernels.json, and the WGSL run on lavapipe.

The kernels come from ``relax_mlir.compile(..., target="webgpu")``. Their WGSL runs through the ``wgpu``
wheel (the webgpu target's device: lavapipe here) with the bindings and params layout the browser page
(``examples/webgpu``) builds, the scalars and grid the host code chose for the same call (recorded from
the target's runtime), and is compared with numpy. Without node + naga-wasm
(``scripts/install-js-deps.sh``), wgpu or an adapter the tests skip, unless
``$RELAX_MLIR_REQUIRE_TOOLCHAINS=1``.
"""

from __future__ import annotations

import contextlib
import functools
import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from toolchains import missing_toolchain

import relax_mlir
from relax_mlir.errors import CompileError, DeviceUnavailableError, ShaderTranslationError
from relax_mlir.targets import webgpu_runtime, wgsl

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "scripts"))
sys.path.insert(0, str(ROOT / "examples" / "webgpu"))
from check_toolchains import minimal_compute_spirv  # noqa: E402
from serve import EXAMPLE  # noqa: E402  (the page's example: exp(a + b), f32, symbolic n)

BINARY = """
func.func @main(%a: !relax.tensor<["n"], T>, %b: !relax.tensor<["n"], T>) -> !relax.tensor<["n"], T> {
  %0 = "relax.OP"(%a, %b) : (!relax.tensor<["n"], T>, !relax.tensor<["n"], T>) -> !relax.tensor<["n"], T>
  return %0 : !relax.tensor<["n"], T>
}
"""
# name -> (relax source, dtype, numpy reference)
EXAMPLES = {
    "exp_add_f32": (EXAMPLE, "f32", lambda a, b: np.exp(a + b)),
    "mul_i32": (BINARY.replace("OP", "multiply").replace("T>", "i32>"), "i32", lambda a, b: a * b),
}
ADD_I64 = BINARY.replace("OP", "add").replace("T>", "i64>")


@functools.cache
def compiled(source: str) -> relax_mlir.Executable:
    return relax_mlir.compile(source, target="webgpu")


def only_kernel(source: str) -> tuple[str, Any]:
    ((key, kernel),) = compiled(source).kernels.items()
    return key, kernel


@pytest.fixture(scope="module")
def naga() -> str:
    try:
        return wgsl.naga_version()
    except CompileError as e:
        missing_toolchain(str(e))


def test_spirv_capabilities_are_read_from_the_module() -> None:
    assert wgsl.spirv_capabilities(minimal_compute_spirv()) == ["Shader"]
    assert "Int64" in wgsl.spirv_capabilities(only_kernel(ADD_I64)[1].spirv)
    assert wgsl.required_features(["Shader", "Float16", "GroupNonUniformShuffle"]) == [
        "shader-f16",
        "subgroups",
    ]


def test_example_kernel_translates_to_wgsl(naga: str) -> None:
    _, kernel = only_kernel(EXAMPLE)
    text = wgsl.spirv_to_wgsl(kernel.spirv)
    assert f"@compute @workgroup_size({', '.join(map(str, kernel.workgroup_size))})" in text
    assert f"fn {kernel.entry}(" in text
    for binding in range(4):  # a, b, the result and the params buffer, as the kernel ABI says
        assert f"@group(0) @binding({binding})" in text
    assert "exp(" in text and "array<f32>" in text


def test_64_bit_kernel_is_refused_with_the_reason(naga: str) -> None:
    key, kernel = only_kernel(ADD_I64)
    with pytest.raises(ShaderTranslationError, match=rf"{key}: .*Int64: WGSL has no 64-bit integers"):
        wgsl.spirv_to_wgsl(kernel.spirv, name=key)


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


def test_naga_renames_entry_points_ending_in_a_digit() -> None:
    text = "@compute @workgroup_size(64, 1, 1) \nfn mul_i32_(@builtin(workgroup_id) w: vec3<u32>) {}\n"
    assert wgsl.wgsl_entry_point(text, "mul_i32") == "mul_i32_"
    assert wgsl.wgsl_entry_point(text.replace("mul_i32_", "k"), "k") == "k"


def test_write_kernels(naga: str, tmp_path: Path) -> None:
    kernels = dict(compiled(EXAMPLE).kernels) | dict(compiled(ADD_I64).kernels)
    (good, kernel), (bad, _) = kernels.items()
    manifest = wgsl.write_kernels(kernels, tmp_path)
    assert json.loads((tmp_path / "kernels.json").read_text()) == manifest
    assert manifest["translator"] == f"naga {naga} (naga-wasm)"
    names = sorted(p.name for p in tmp_path.iterdir())
    assert names == sorted([f"{good}.spv", f"{good}.wgsl", f"{bad}.spv", "kernels.json"])
    assert (tmp_path / f"{good}.spv").read_bytes() == kernel.spirv
    entry = manifest["kernels"][good]
    assert entry["entry"] == entry["wgsl_entry"] == kernel.entry
    assert entry["workgroup_size"] == list(kernel.workgroup_size) and entry["args"] == kernel.args
    assert (
        entry["params_binding"] == 3 and entry["params_length"] == kernel.params and entry["features"] == []
    )
    assert [b["binding"] for b in entry["bindings"]] == [0, 1, 2, 3]
    assert entry["bindings"][3] == {"binding": 3, "dtype": "i32", "params": True}
    assert manifest["kernels"][bad]["wgsl"] is None
    assert "Int64: WGSL has no 64-bit integers" in manifest["kernels"][bad]["wgsl_error"]


def test_f16_kernel_needs_the_shader_f16_feature(naga: str, tmp_path: Path) -> None:
    key, kernel = only_kernel(BINARY.replace("OP", "add").replace("T>", "f16>"))
    entry = wgsl.write_kernels({key: kernel}, tmp_path)["kernels"][key]
    assert entry["features"] == ["shader-f16"] and "Float16" in entry["capabilities"]
    assert (tmp_path / entry["wgsl"]).read_text().startswith("enable f16;")


# -- the WGSL runs through wgpu (wgpu-native) on the webgpu target's device (lavapipe here) ----------------


@pytest.fixture(scope="module")
def device():  # noqa: ANN201
    try:
        dev = webgpu_runtime.device()
    except DeviceUnavailableError as e:
        missing_toolchain(str(e))
    print("wgpu adapter:", dev.summary)
    return dev.device


def inputs(dtype: str, n: int, bindings: int) -> list[np.ndarray]:
    """The page's inputs (examples/webgpu/app.mjs ``inputValue``): binding b's element i."""
    i = np.arange(n, dtype=np.int64)
    arrays = []
    for b in range(bindings):
        h = (i * 7919 + b * 104729) % 1000
        arrays.append(
            (h / 1000 - 0.5).astype(np.float32) if dtype == "f32" else (h % 201 - 100).astype(np.int32)
        )
    return arrays


@contextlib.contextmanager
def recorded_launches() -> Iterator[list[dict]]:
    """Record each dispatch of the webgpu runtime: kernel key, grid and the params buffer it wrote."""
    launches: list[dict] = []
    launch = webgpu_runtime.Device.launch

    def spy(self: webgpu_runtime.Device, function: int, grid: tuple, params: int, count: int) -> None:
        record = {"key": self.functions[function].key, "grid": list(grid)}
        real = self.device

        class Device:  # the real wgpu device, but the params buffer's data is kept
            def __getattr__(self, name: str) -> Any:
                return getattr(real, name)

            def create_buffer_with_data(self, data: bytes, usage: int) -> Any:
                record["params"] = np.frombuffer(bytes(data), np.int32).tolist()
                return real.create_buffer_with_data(data=data, usage=usage)

        self.device = Device()
        try:
            launch(self, function, grid, params, count)
        finally:
            self.device = real
        if "params" in record:  # an empty grid dispatches nothing
            launches.append(record)

    webgpu_runtime.Device.launch = spy
    try:
        yield launches
    finally:
        webgpu_runtime.Device.launch = launch


def native_launch(name: str, n: int) -> tuple[list[np.ndarray], dict | None]:
    """Run example ``name`` at size ``n`` on the webgpu target; its inputs and its kernel's launch (None: none)."""
    source, dtype, reference = EXAMPLES[name]
    a, b, _ = inputs(dtype, n, 3)
    with recorded_launches() as launches:
        out = compiled(source)(a, b)
    np.testing.assert_allclose(out, reference(a, b), rtol=2e-6)
    assert len(launches) <= 1, launches
    return [a, b], launches[0] if launches else None


def page_params(entry: dict, n: int, scalars: list[int]) -> list[int]:
    """The params buffer the page builds (``paramsFor``): contiguous 1-D arguments of size n, then the scalars."""
    params = [0] * entry["params_length"]
    for arg in entry["args"]:
        at = arg["params_at"]
        if arg["kind"] == "memref":
            params[at : at + 3] = [0, n, 1]
    for arg, value in zip([a for a in entry["args"] if a["kind"] == "scalar"], scalars, strict=True):
        params[arg["params_at"]] = value
    return params


def scalars_of(entry: dict, launch: dict | None) -> list[int]:
    """The scalar arguments the host code passed (zeros where it launched nothing: n = 0)."""
    scalars = [a for a in entry["args"] if a["kind"] == "scalar"]
    return [launch["params"][a["params_at"]] if launch else 0 for a in scalars]


def run_wgsl(
    device, entry: dict, text: str, arrays: list[np.ndarray], params: list[int], grid
) -> list[np.ndarray]:  # noqa: ANN001
    """Run a kernels.json entry's WGSL on ``arrays`` (per binding) as the page does (explicit bind group layout)."""
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
    for a in [*arrays, np.array(params, np.int32)]:
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


@pytest.mark.parametrize("n", [0, 1, 63, 1000, 100_003])
@pytest.mark.parametrize("name", sorted(EXAMPLES))
def test_wgsl_kernel_runs_on_wgpu(device, naga: str, tmp_path: Path, name: str, n: int) -> None:  # noqa: ANN001
    """The WGSL of a compiled kernel, launched as the host code launches its SPIR-V, matches numpy."""
    source, dtype, reference = EXAMPLES[name]
    key, _ = only_kernel(source)
    entry = wgsl.write_kernels(compiled(source).kernels, tmp_path)["kernels"][key]
    (a, b), launch = native_launch(name, n)
    scalars = scalars_of(entry, launch)
    params = page_params(entry, n, scalars)
    if launch is not None:  # the page's layout is the runtime's, for fresh contiguous tensors
        assert launch["params"] == params and launch["key"] == key
    grid = launch["grid"] if launch else [0, 1, 1]
    c = np.zeros(n, a.dtype)
    out = run_wgsl(device, entry, (tmp_path / entry["wgsl"]).read_text(), [a, b, c], params, grid)
    np.testing.assert_array_equal(out[0], a)  # inputs untouched
    np.testing.assert_allclose(out[2], reference(a, b), rtol=2e-6)

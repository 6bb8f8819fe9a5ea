"""The webgpu target run for real: SPIR-V kernels dispatched through wgpu on a WebGPU adapter (in CI, Mesa's
lavapipe, a Vulkan driver on the CPU) and compared with the CPU target, numpy and onnxruntime.

Every op's IR example runs at symbols 1, 3, 17 and 0 (where the op allows it) and at distinct values per
symbol (``test_gpu_emulated.check_program``); ops the target cannot run are refused with a clear error.
Whole models (the transformer block, an MLP, GPT blocks, a ResNet-style CNN, data-dependent outputs) match
numpy or onnxruntime at several symbolic shapes. Tests skip without an adapter (fail in CI).
"""

from __future__ import annotations

import gc
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import onnx
import pytest
from isolated import expect_error, run_isolated
from onnx import TensorProto, helper
from onnx_util import run_ort
from test_gpu_emulated import NAMES, NO_ARRAYS, check_program
from toolchains import missing_toolchain

import relax_mlir
from relax_mlir.dialects.op_examples import example_program
from relax_mlir.dialects.registry import OPS
from relax_mlir.errors import CompileError, DeviceUnavailableError, InputError, OutOfMemoryError
from relax_mlir.examples import reference
from relax_mlir.examples.models import transformer_block
from relax_mlir.examples.onnx_gpt import gpt_model
from relax_mlir.frontend.onnx import from_onnx
from relax_mlir.runtime.executable import Executable
from relax_mlir.targets import webgpu_runtime

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
import perf_models  # noqa: E402

_COMPILED: dict[str, Executable] = {}


@pytest.fixture(scope="module", autouse=True)
def adapter() -> str:
    try:
        return webgpu_runtime.device().summary
    except DeviceUnavailableError as e:
        missing_toolchain(f"{e} (Debian: scripts/install-system-deps.sh installs mesa-vulkan-drivers)")
        raise


def webgpu(program: str) -> Executable:
    if program not in _COMPILED:
        _COMPILED[program] = relax_mlir.compile(program, target="webgpu", opt_level=1)
    return _COMPILED[program]


def _exp_program(dtype: str = "f32") -> str:
    t = f'!relax.tensor<["n"], {dtype}>'
    return (
        f'func.func @main(%x: {t}) -> {t} {{\n  %y = "relax.exp"(%x) : ({t}) -> {t}\n  return %y : {t}\n}}\n'
    )


# -- every op -----------------------------------------------------------------------------------------
# ops the target refuses, and why (each checked below): kernels only the CPU targets lower
REFUSED = {name for name, cls in OPS.items() if cls.CPU_ONLY}
# the op example's embedding table is 50257 x 768 f32 (154 MB): more than lavapipe binds at once (128 MB)
TOO_LARGE_FOR_LAVAPIPE = {"take"}


@pytest.mark.parametrize("name", [n for n in NAMES if n not in REFUSED | TOO_LARGE_FOR_LAVAPIPE])
def test_op_example_on_webgpu_matches_cpu(name: str) -> None:
    seen = check_program(example_program(name), name, build=webgpu)
    assert seen.arrays or seen.errors or name in NO_ARRAYS


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_cpu_only_ops_are_refused_at_compile_time_naming_the_op(name: str) -> None:
    with pytest.raises(CompileError, match=rf"cannot compile 'relax.{name}': its kernel is CPU code"):
        relax_mlir.compile(example_program(name), target="webgpu")


def test_take_runs_on_a_table_the_adapter_binds_and_refuses_one_it_cannot() -> None:
    program = example_program("take").replace("50257", "1000")
    check_program(program, "take", build=webgpu)
    exe = webgpu(example_program("take"))
    fn = exe.functions["main"]
    args = [np.zeros((1, 2), np.int8), np.zeros((50257, 768), np.float32), np.zeros((1, 2), np.int64)]
    limit = webgpu_runtime.device().limits["max-storage-buffer-binding-size"]
    if 50257 * 768 * 4 <= limit:
        pytest.skip(f"this adapter binds {limit} bytes: the 154 MB table fits")
    with pytest.raises(InputError, match="binds 154389504 bytes of one tensor; the adapter binds at most"):
        fn(*args)


# -- math accuracy ------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "op, ref, lo, hi, ulps",
    [
        ("asin", np.arcsin, -1, 1, 3),
        ("acos", np.arccos, -1, 1, 3),
        ("atan", np.arctan, -60, 60, 3),
        ("tanh", np.tanh, -9, 9, 4),
        ("exp", np.exp, -80, 80, None),
    ],
)
def test_shader_math_is_within_a_few_ulp_of_float64(
    op: str, ref, lo: float, hi: float, ulps: float | None
) -> None:
    """Vulkan lets drivers' tanh, asin, acos and atan be far off (lavapipe: asin 4e-4 absolute, tanh 500 ulp
    near 0): those are polynomials in the shader. exp is the driver's, held to Vulkan's 3 + 2|x| ulp."""
    exe = webgpu(_exp_program().replace("relax.exp", f"relax.{op}"))
    x = np.concatenate([np.linspace(lo, hi, 20001), [0.0, -0.0, 1e-30, -1e-8, 0.5, -0.5]]).astype(np.float32)
    got, want = exe(x).astype(np.float64), ref(x.astype(np.float64))
    ulp = np.spacing(np.abs(want).astype(np.float32)).astype(np.float64)
    bound = 3 + 2 * np.abs(x.astype(np.float64)) if ulps is None else ulps
    assert np.all(np.abs(got - want) / ulp <= bound)
    assert np.isnan(exe(np.array([np.nan], np.float32))).all()


# -- shapes, edge sizes and the grid ------------------------------------------------------------------
@pytest.mark.parametrize("n", [0, 1, 255, 257, 65535 * 256 + 1])
def test_elementwise_at_edge_sizes_and_past_one_grid_row(n: int) -> None:
    """65535 * 256 + 1 elements need more workgroups than one grid dimension holds: the grid folds to 2-D."""
    exe = webgpu(_exp_program())
    x = np.random.default_rng(n).uniform(-3, 3, n).astype(np.float32)
    np.testing.assert_allclose(exe(x), np.exp(x), rtol=2e-6)


def test_64_bit_kernels_record_the_features_they_need() -> None:
    exe = webgpu(_exp_program("f64"))
    assert any("shader-f64" in k.features for k in exe.kernels.values())
    x = np.linspace(-3, 3, 101)
    np.testing.assert_allclose(exe(x), np.exp(x), rtol=1e-6)  # computed in f32 by the shader


# -- whole models -------------------------------------------------------------------------------------
D, HEADS, FF = 64, 4, 128


@pytest.mark.parametrize("b, s", [(1, 1), (2, 7), (3, 16)])
def test_transformer_block_matches_numpy(b: int, s: int) -> None:
    exe = webgpu(str(transformer_block(d=D, heads=HEADS, ff=FF)))
    weights = reference.transformer_weights(D, FF, seed=b * 100 + s)
    x = np.random.default_rng(s).standard_normal((b, s, D)).astype(np.float32)
    np.testing.assert_allclose(
        exe(x, *weights.values()), reference.transformer_block(x, HEADS, weights), rtol=1e-4, atol=1e-4
    )


def _onnx_on_webgpu(model: onnx.ModelProto) -> Executable:
    return webgpu(str(from_onnx(model)))


def _check_against_ort(model: onnx.ModelProto, *inputs: np.ndarray, tol: float = 1e-4) -> None:
    ours = _onnx_on_webgpu(model)(*inputs)
    ours = list(ours) if isinstance(ours, tuple) else [ours]
    theirs = run_ort(model, *inputs)
    assert len(ours) == len(theirs)
    for a, b in zip(ours, theirs, strict=True):
        assert a.shape == b.shape and a.dtype == b.dtype, (a.shape, b.shape, a.dtype, b.dtype)
        np.testing.assert_allclose(a, b, rtol=tol, atol=tol)


@pytest.mark.parametrize("batch", [1, 3, 64])
def test_mlp_matches_onnxruntime(batch: int) -> None:
    model, _ = perf_models.mlp()
    _check_against_ort(model, np.random.default_rng(batch).standard_normal((batch, 784)).astype(np.float32))


@pytest.mark.parametrize("batch, seq", [(1, 1), (2, 7), (3, 16)])
def test_gpt_with_symbolic_batch_and_seq_matches_onnxruntime(batch: int, seq: int) -> None:
    model = gpt_model(layers=2, d=64, heads=4, vocab=100)
    _check_against_ort(model, np.random.default_rng(seq).integers(0, 100, (batch, seq), dtype=np.int64))


@pytest.mark.parametrize("batch, seq", [(1, 1), (2, 9)])
def test_gpt_block_d512_matches_onnxruntime(batch: int, seq: int) -> None:
    model, _ = perf_models.gpt(1)
    x = np.random.default_rng(seq).standard_normal((batch, seq, 512)).astype(np.float32)
    _check_against_ort(model, x, tol=2e-4)


@pytest.mark.parametrize("batch", [1, 2])
def test_resnet_style_cnn_matches_onnxruntime(batch: int) -> None:
    model, _ = perf_models.resnet()
    dims = [d.dim_value for d in model.graph.input[0].type.tensor_type.shape.dim[1:]]
    _check_against_ort(model, np.random.default_rng(batch).standard_normal((batch, *dims)).astype(np.float32))


@pytest.mark.parametrize("n", [0, 1, 5, 33])
def test_data_dependent_output_matches_onnxruntime(n: int) -> None:
    """NonZero: its output size is read back from the device before the result is allocated."""
    graph = helper.make_graph(
        [helper.make_node("NonZero", ["x"], ["y"])],
        "nonzero",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["n", 3])],
        [helper.make_tensor_value_info("y", TensorProto.INT64, [2, None])],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 10
    x = (np.random.default_rng(n).random((n, 3)) > 0.5).astype(np.float32)
    _check_against_ort(model, x)


# -- the device, the cache and errors -----------------------------------------------------------------
def test_weights_are_uploaded_once_and_released_with_the_executable() -> None:
    model, _ = perf_models.mlp()
    dev = webgpu_runtime.device()
    before = len(dev.constants)
    exe = relax_mlir.compile(from_onnx(model), target="webgpu", use_cache=False)
    x = np.ones((2, 784), np.float32)
    exe(x)
    uploaded = len(dev.constants)
    assert uploaded > before
    exe(x)
    assert len(dev.constants) == uploaded
    del exe
    gc.collect()
    assert len(dev.constants) == before


def test_a_cached_build_runs_and_a_damaged_entry_is_rebuilt(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("RELAX_MLIR_CACHE", str(tmp_path))
    model, _ = perf_models.mlp()
    module = str(from_onnx(model))
    x = np.random.default_rng(0).standard_normal((3, 784)).astype(np.float32)
    first = relax_mlir.compile(module, target="webgpu")
    second = relax_mlir.compile(module, target="webgpu")
    assert second.stats.cache_hit and not first.stats.cache_hit
    np.testing.assert_array_equal(first(x), second(x))
    for weights in tmp_path.glob("*.weights"):
        weights.write_bytes(b"\0" * 8)
    with pytest.warns(Warning, match="damaged"):
        third = relax_mlir.compile(module, target="webgpu")
    assert not third.stats.cache_hit
    np.testing.assert_array_equal(third(x), first(x))


def test_no_adapter_is_a_device_unavailable_error_after_a_build_that_needs_none() -> None:
    code = f"""
        import numpy as np, relax_mlir
        exe = relax_mlir.compile({_exp_program()!r}, target="webgpu", use_cache=False)
        assert exe.kernels and all(k.spirv[:4] == b"\\x03\\x02\\x23\\x07" for k in exe.kernels.values())
        exe(np.ones(3, np.float32))
    """
    env = {"RELAX_MLIR_WEBGPU_ADAPTER": "no such adapter"}
    expect_error(
        code, "DeviceUnavailableError", match="no WebGPU adapter matching", env={**os.environ, **env}
    )


def test_wrong_inputs_are_refused_before_any_dispatch() -> None:
    exe = webgpu(_exp_program())
    with pytest.raises(InputError, match="dtype"):
        exe(np.ones(3, np.float64))
    with pytest.raises(InputError):
        exe(np.ones((2, 2), np.float32))
    np.testing.assert_allclose(exe(np.zeros(2, np.float32)), [1, 1])  # still works afterwards


def test_host_code_that_writes_device_memory_is_refused_not_run() -> None:
    """No relax op's host code writes device memory today; the pass's refusal is checked on raw IR."""
    outcome = run_isolated(
        """
        from relax_mlir.errors import PassError
        from relax_mlir.targets import steps
        from relax_mlir.context import make_context
        from mlir import ir
        text = '''
        func.func private @k(%m: memref<4xf32>) {
          %c0 = arith.constant 0 : index
          %f = arith.constant 1.0 : f32
          memref.store %f, %m[%c0] : memref<4xf32>
          return
        }
        '''
        with make_context(), ir.Location.unknown():
            op = steps.parse(text, "<t>")
            try:
                steps.run(op, "relax-gpu-device-memory")
            except Exception as e:
                print(type(e).__name__, str(e).splitlines()[0])
        """
    )
    assert "host code writes device memory" in outcome.stdout, outcome.stdout + outcome.stderr


# -- the op tests, on webgpu --------------------------------------------------------------------------
OP_TEST_FILES = ("test_lower_elementwise.py", "test_lower_manipulate.py", "test_lower_reduce.py",
                 "test_lower_nn.py", "test_lower_matmul.py")  # fmt: skip


def test_every_op_test_passes_on_webgpu() -> None:
    """The op lowering tests (``oprun.compile_fn``: every dtype, 0-size and odd shapes) again, compiled for
    webgpu. They skip f16/f64/bf16 kernels the target lowers only in part, and use finite data only
    (``oprun.FINITE_ONLY``: WGSL lets shaders assume no inf or NaN)."""
    env = dict(os.environ, RELAX_MLIR_TEST_TARGET="webgpu")
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-x", "-p", "no:cacheprovider", *OP_TEST_FILES],
        env=env,
        capture_output=True,
        text=True,
        cwd=Path(__file__).resolve().parent,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    assert " passed" in done.stdout and " failed" not in done.stdout
    skipped = int(next((w.split()[0] for w in done.stdout.split(",") if "skipped" in w), "0").split()[-1])
    assert skipped <= 20, done.stdout[-2000:]  # the documented limits, not a silent regression


def test_an_allocation_larger_than_the_adapter_allows_is_an_error_that_leaks_nothing() -> None:
    t_in, t_out = '!relax.tensor<["n", 1], f32>', '!relax.tensor<["n", 4], f32>'
    exe = webgpu(
        f"func.func @main(%x: {t_in}) -> {t_out} {{\n"
        f'  %y = "relax.broadcast_to"(%x) {{shape = ["n", 4]}} : ({t_in}) -> {t_out}\n'
        f"  return %y : {t_out}\n}}\n"
    )
    dev = webgpu_runtime.device()
    exe(np.ones((2, 1), np.float32))
    live = len(dev.buffers)
    n = dev.limits["max-buffer-size"] // 16 + 1  # the input fits, the 4x output does not
    with pytest.raises(OutOfMemoryError, match="cannot allocate .* the adapter's largest buffer is"):
        exe(np.ones((n, 1), np.float32))
    assert len(dev.buffers) == live  # the input staged before the failure was freed
    np.testing.assert_array_equal(exe(np.full((3, 1), 2, np.float32)), np.full((3, 4), 2, np.float32))

"""The CUDA target without a GPU: every op's IR example compiles to PTX that ptxas assembles for sm_80 and
sm_90, kernels are mapped to blocks and threads, and running raises a clear error where no GPU is.

ptxas comes from the ``nvidia-cuda-nvcc-cu12`` wheel (the ``test`` extra) or a CUDA toolkit; without one
the ptxas checks skip, unless ``$RELAX_MLIR_REQUIRE_TOOLCHAINS=1`` (CI) makes that a failure.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from toolchains import missing_toolchain

import relax_mlir
from relax_mlir.dialects.op_examples import NOT_STANDALONE, example_program
from relax_mlir.dialects.registry import OPS
from relax_mlir.errors import DeviceUnavailableError, RelaxError
from relax_mlir.targets.cuda import driver_present
from relax_mlir.transforms.gpu.target import ptxas

CHIPS = ("sm_80", "sm_90")


def _require_ptxas() -> Path:
    path = ptxas()
    if path is None:
        missing_toolchain("ptxas not found (pip install nvidia-cuda-nvcc-cu12, or a CUDA toolkit on PATH)")
    return path


def _assemble(ptx: str, chip: str, tmp_path: Path) -> None:
    source = tmp_path / "kernel.ptx"
    source.write_text(ptx)
    done = subprocess.run(
        [str(_require_ptxas()), f"-arch={chip}", str(source), "-o", str(tmp_path / "kernel.cubin")],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, f"ptxas -arch={chip} rejected the PTX:\n{done.stderr}"


@pytest.mark.parametrize("name", sorted(set(OPS) - NOT_STANDALONE))
def test_every_op_assembles_for_sm80_and_sm90(name: str, tmp_path: Path) -> None:
    program = example_program(name)
    for chip in CHIPS:
        exe = relax_mlir.compile(program, target="cuda", chip=chip)
        host = relax_mlir.compile(program, opt_level=0, use_cache=False)
        for kernel, ptx in exe.ptx.items():
            assert f".target {chip}" in ptx, kernel
            _assemble(ptx, chip, tmp_path)
        if _kernel_count(program) and not OPS[name].CPU_ONLY:  # CPU-only kernels run on the host
            assert exe.ptx, f"relax.{name} has kernels but none runs on the GPU"
        assert host.functions  # the same program is a valid CPU program


def _kernel_count(program: str) -> int:
    """How many kernel functions the CPU lowering makes of ``program`` (0 for host-only ops)."""
    texts: list[str] = []
    relax_mlir.compile(program, opt_level=0, use_cache=False, on_stage=lambda stage, ir: texts.append(ir))
    return len(re.findall(r"func\.func private @\w+\(", texts[0]))


@pytest.mark.skipif(driver_present(), reason="a CUDA driver is installed: bench/gpu_check.py runs the code")
def test_running_without_a_gpu_raises_a_clear_error() -> None:
    program = example_program("exp")
    exe = relax_mlir.compile(program, target="cuda")  # building needs no GPU
    assert exe.ptx and exe.object
    x = np.ones((2, 4), np.float32)
    with pytest.raises(DeviceUnavailableError, match="libcuda.so.1 cannot be loaded"):
        exe(np.zeros((2, 2), np.int8), x) if "%syms" in program else exe(x)
    with pytest.raises(DeviceUnavailableError):
        exe.load()


def test_transformer_block_runs_matmuls_through_shared_memory(tmp_path: Path) -> None:
    """The builder's transformer block (symbolic batch and sequence) compiles for the GPU: its matmuls use
    the tiled kernel (workgroup memory and barriers in the PTX), and every kernel assembles."""
    from relax_mlir.examples.models import transformer_block  # noqa: PLC0415

    exe = relax_mlir.compile(transformer_block(d=64, heads=4, ff=128), target="cuda")
    tiled = [ptx for name, ptx in exe.ptx.items() if name.startswith("relax_gpu_matmul_f32")]
    # projections [b, s, d] x [d, n] (weights broadcast over the batch) and attention [b*h] batches
    assert {name for name in exe.ptx if name.startswith("relax_gpu_matmul")} == {
        "relax_gpu_matmul_f32_323_kernel",
        "relax_gpu_matmul_f32_333_kernel",
    }
    for ptx in tiled:
        assert ".shared .align" in ptx and "bar.sync" in ptx
    for ptx in exe.ptx.values():
        _assemble(ptx, "sm_80", tmp_path)


def test_bad_target_and_chip_are_clear_errors() -> None:
    program = example_program("exp")
    with pytest.raises(
        RelaxError, match="unknown target 'rocm'; available targets: aarch64, cpu, cuda, wasm32, webgpu, x86_64"
    ):
        relax_mlir.compile(program, target="rocm")
    with pytest.raises(RelaxError, match="unknown CUDA chip 'volta'"):
        relax_mlir.compile(program, target="cuda", chip="volta")


FAKE_RUNTIME = Path(__file__).parent.parent / "c" / "fake_cuda_runtime.c"
MATMUL_EXP_SUM = """
func.func @main(%x: !relax.tensor<["n", 64], f32>, %w: !relax.tensor<[64, 32], f32>) -> !relax.tensor<["n"], f32> {
  %0 = "relax.matmul"(%x, %w) : (!relax.tensor<["n", 64], f32>, !relax.tensor<[64, 32], f32>) -> !relax.tensor<["n", 32], f32>
  %1 = "relax.exp"(%0) : (!relax.tensor<["n", 32], f32>) -> !relax.tensor<["n", 32], f32>
  %2 = "relax.sum"(%1) {axes = [1], keepdims = false} : (!relax.tensor<["n", 32], f32>) -> !relax.tensor<["n"], f32>
  return %2 : !relax.tensor<["n"], f32>
}
"""
_RUN = """
import sys, numpy as np, relax_mlir
exe = relax_mlir.compile(open(sys.argv[1]).read(), target="cuda")
print(len(exe.ptx))
w = np.ones((64, 32), np.float32)
for n in (1000, 1, 0):
    with open(sys.argv[2], "a") as log:
        log.write(f"call n={n}\\n")
    y = exe(np.ones((n, 64), np.float32), w)
    assert y.shape == (n,), y.shape
"""


def test_host_side_launches_through_the_runtime_wrappers(tmp_path: Path) -> None:
    """The host code, run against a test double of MLIR's CUDA runtime wrappers (no GPU): every kernel
    module's PTX is loaded once; grids come from the run-time dim n (none for n = 0); every managed
    allocation of a call is freed by the end of the call."""
    gcc = shutil.which("gcc")
    if gcc is None:
        pytest.skip("gcc is needed to build the test double of the CUDA runtime")
    fake = tmp_path / "libfake_cuda_runtime.so"
    subprocess.run([gcc, "-shared", "-fPIC", "-O1", "-o", str(fake), str(FAKE_RUNTIME)], check=True)
    program, log = tmp_path / "program.mlir", tmp_path / "calls.log"
    program.write_text(MATMUL_EXP_SUM)
    env = {**os.environ, "RELAX_MLIR_CUDA_RUNTIME": str(fake), "FAKE_CUDA_LOG": str(log)}
    done = subprocess.run(
        [sys.executable, "-c", _RUN, str(program), str(log)], env=env, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    modules = int(done.stdout.split()[0])
    lines = log.read_text().splitlines()
    loads = [x for x in lines if x.startswith("load ")]
    assert len(loads) == modules and all(x.endswith(" ptx") for x in loads)
    calls: dict[str, list[str]] = {}
    current = ""
    for line in lines:
        if line.startswith("call "):
            current = line.split()[1]
            calls[current] = []
        elif current:
            calls[current].append(line)
    for n, events in calls.items():
        allocs = sum(e.startswith("alloc ") for e in events)
        assert allocs == sum(e == "free" for e in events), f"{n}: leaked managed memory"
        launches = [e.split() for e in events if e.startswith("launch ")]
        grids = {(e[1], tuple(int(v) for v in e[3:6] + e[7:10])) for e in launches}
        count = int(n.split("=")[1])
        if count == 0:
            assert not launches
            continue
        assert ("relax_gpu_matmul_f32_222_kernel", (1, -(-count // 64), 1, 16, 16, 1)) in grids  # 64x64 tiles
        assert ("fused_matmul_exp_0_kernel", (-(-count * 32 // 256), 1, 1, 256, 1, 1)) in grids  # exp, fill
        assert ("sum_0_kernel", (-(-count // 8), 1, 1, 32, 8, 1)) in grids  # a warp per row

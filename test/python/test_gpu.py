"""The CUDA target without a GPU: every op's IR example compiles to PTX that ptxas assembles for sm_80 and
sm_90, kernels are mapped to blocks and threads, and running raises a clear error where no GPU is.

ptxas comes from the ``nvidia-cuda-nvcc-cu12`` wheel (the ``test`` extra) or a CUDA toolkit; without one
the ptxas checks skip, unless ``$RELAX_MLIR_REQUIRE_TOOLCHAINS=1`` (CI) makes that a failure.
"""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import numpy as np
import pytest

import relax_mlir
from relax_mlir.dialects.op_examples import NOT_STANDALONE, example_program
from relax_mlir.dialects.registry import OPS
from relax_mlir.errors import DeviceUnavailableError, RelaxError
from relax_mlir.runtime.gpu.target import ptxas

CHIPS = ("sm_80", "sm_90")


def _require_ptxas() -> Path:
    path = ptxas()
    if path is None:
        message = "ptxas not found (pip install nvidia-cuda-nvcc-cu12, or a CUDA toolkit on PATH)"
        if os.environ.get("RELAX_MLIR_REQUIRE_TOOLCHAINS") == "1":
            pytest.fail(message + " ($RELAX_MLIR_REQUIRE_TOOLCHAINS=1)")
        pytest.skip(message)
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
        if _kernel_count(program):
            assert exe.ptx, f"relax.{name} has kernels but none runs on the GPU"
        assert host.functions  # the same program is a valid CPU program


def _kernel_count(program: str) -> int:
    """How many kernel functions the CPU lowering makes of ``program`` (0 for host-only ops)."""
    texts: list[str] = []
    relax_mlir.compile(program, opt_level=0, use_cache=False, on_stage=lambda stage, ir: texts.append(ir))
    return len(re.findall(r"func\.func private @\w+\(", texts[0]))


def _cuda_driver_present() -> bool:
    import ctypes  # noqa: PLC0415

    try:
        ctypes.CDLL("libcuda.so.1")
    except OSError:
        return False
    return True


@pytest.mark.skipif(
    _cuda_driver_present(), reason="a CUDA driver is installed: bench/gpu_check.py runs the code"
)
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
    with pytest.raises(RelaxError, match="unknown target 'rocm'; available targets: cpu, cuda"):
        relax_mlir.compile(program, target="rocm")
    with pytest.raises(RelaxError, match="unknown CUDA chip 'volta'"):
        relax_mlir.compile(program, target="cuda", chip="volta")

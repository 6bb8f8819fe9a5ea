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

import pytest

import relax_mlir
from relax_mlir.dialects.registry import OPS
from relax_mlir.runtime.gpu.target import ptxas

# ops with no kernel of their own whose example is not a standalone program: calls of a named kernel or
# library function (every other op's lowering exercises them) and a cast from unknown rank
NOT_STANDALONE = {"call_tir", "call_dps_library", "match_cast"}
CHIPS = ("sm_80", "sm_90")


def _split(types: str) -> list[str]:
    """Split a comma-separated type list at the top level."""
    out, depth, current = [], 0, ""
    for ch in types:
        depth += ch in "<[(" and 1 or 0
        depth -= ch in ">])" and 1 or 0
        if ch == "," and depth == 0:
            out.append(current.strip())
            current = ""
        else:
            current += ch
    return [*out, current.strip()] if current.strip() else out


def example_program(name: str) -> str:
    """``@main`` running op ``name``'s docstring IR example on its parameters.

    A leading i8 tensor parameter defines every symbol the example's types use, so examples whose symbols
    come from prim or shape values (``arange``, ``full``) are well-formed programs too."""
    doc = OPS[name].__doc__ or ""
    match = re.search(r"``(%[^`]*)``", doc)
    assert match, f'relax.{name}\'s docstring has no ``%... = "relax.{name}"(...)`` IR example'
    text = " ".join(match.group(1).split())
    parts = re.match(r'(.*?)=\s*"relax\.(\w+)"\((.*?)\)\s*(\{.*\})?\s*:\s*\((.*)\)\s*->\s*(.*)$', text)
    assert parts and parts.group(2) == name, f"relax.{name}: cannot read the IR example {text!r}"
    _, _, operands, attrs, ins, outs = parts.groups()
    ins_t = _split(ins)
    outs = outs.strip()
    outs_t = _split(outs[1:-1] if outs.startswith("(") else outs)
    dims = " ".join(re.findall(r'"([^"]*)"', ins + outs))
    symbols = sorted(set(re.findall(r"[A-Za-z_]\w*", dims)) - {"floordiv", "mod", "ceildiv", "min", "max"})
    params = [f"%a{i}: {t}" for i, t in enumerate(ins_t)]
    if symbols:
        params.insert(0, "%syms: !relax.tensor<[" + ", ".join(f'"{s}"' for s in symbols) + "], i8>")
    params = ", ".join(params)
    args = ", ".join(f"%a{i}" for i in range(len(_split(operands)) if operands.strip() else 0))
    results = [f"%r#{i}" for i in range(len(outs_t))] if len(outs_t) > 1 else ["%r"]
    lhs = f"%r:{len(outs_t)}" if len(outs_t) > 1 else "%r"
    return (
        f"func.func @main({params}) -> ({', '.join(outs_t)}) {{\n"
        f'  {lhs} = "relax.{name}"({args}) {attrs or ""} : ({", ".join(ins_t)}) -> ({", ".join(outs_t)})\n'
        f"  return {', '.join(results)} : {', '.join(outs_t)}\n}}\n"
    )


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

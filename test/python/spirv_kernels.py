"""Hand-made GPU kernels with the webgpu target's kernel ABI, built to SPIR-V by mlir-opt/mlir-translate.

``kernel(name)`` returns a stand-in for the target's ``KernelInfo`` (the same plain attributes). Each
kernel computes ``c = f(a, b)`` over rank-1 memrefs: bindings 0-2 are a, b, c; binding 3 is the i32
params buffer (offset, size, stride of a, then b, then c); the kernel runs over c's size.
"""

from __future__ import annotations

import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from relax_mlir.runtime.toolchain import find_tool

ENV = (
    "#spirv.target_env<#spirv.vce<v1.3, [Shader, Int64, Int16, Int8, Float16, Float64], "
    "[SPV_KHR_storage_buffer_storage_class]>, #spirv.resource_limits<>>"
)
PIPELINE = (
    "builtin.module(gpu.module(convert-math-to-spirv),convert-gpu-to-spirv,"
    "spirv.module(spirv-lower-abi-attrs,spirv-update-vce))"
)
TEMPLATE = """
module attributes {gpu.container_module, spirv.target_env = ENV} {
  gpu.module @ew {
    gpu.func @NAME(%a: memref<?xT>, %b: memref<?xT>, %c: memref<?xT>, %p: memref<?xi32>) kernel
        attributes {spirv.entry_point_abi = #spirv.entry_point_abi<workgroup_size = [64, 1, 1]>} {
CONSTANTS
      %n = memref.load %p[%c7] : memref<?xi32>
      %bid = gpu.block_id x
      %tid = gpu.thread_id x
      %base = arith.muli %bid, %c64 : index
      %i = arith.addi %base, %tid : index
      %i32 = arith.index_cast %i : index to i32
      %ok = arith.cmpi slt, %i32, %n : i32
      scf.if %ok {
INDEX
        %x = memref.load %a[%ia] : memref<?xT>
        %y = memref.load %b[%ib] : memref<?xT>
BODY
        memref.store %z, %c[%ic] : memref<?xT>
      }
      gpu.return
    }
  }
}
"""
# f(a, b) per kernel: (element type, MLIR body computing %z from %x and %y)
BODIES = {
    "add_exp": ("f32", "%s = arith.addf %x, %y : f32\n%z = math.exp %s : f32"),
    "mul_i32": ("i32", "%z = arith.muli %x, %y : i32"),
    "add_i64": ("i64", "%z = arith.addi %x, %y : i64"),
}


def _element_index(name: str, params_at: int) -> str:
    """``%name = offset + i * stride`` with offset and stride read from params."""
    lines = [
        f"%{name}_o32 = memref.load %p[%c{params_at}] : memref<?xi32>",
        f"%{name}_s32 = memref.load %p[%c{params_at + 2}] : memref<?xi32>",
        f"%{name}_o = arith.index_cast %{name}_o32 : i32 to index",
        f"%{name}_s = arith.index_cast %{name}_s32 : i32 to index",
        f"%{name}_is = arith.muli %i, %{name}_s : index",
        f"%{name} = arith.addi %{name}_o, %{name}_is : index",
    ]
    return "\n".join(" " * 8 + line for line in lines)


def _mlir(name: str) -> str:
    """The kernel's MLIR (a ``gpu.module`` with one kernel)."""
    dtype, body = BODIES[name]
    constants = "\n".join(f"      %c{k} = arith.constant {k} : index" for k in (0, 2, 3, 5, 6, 7, 8, 64))
    index = "\n".join(_element_index(v, at) for v, at in (("ia", 0), ("ib", 3), ("ic", 6)))
    text = TEMPLATE.replace("ENV", ENV).replace("NAME", name).replace("T>", f"{dtype}>")
    text = text.replace("CONSTANTS", constants).replace("INDEX", index)
    return text.replace("BODY", "\n".join(" " * 8 + line for line in body.splitlines()))


def spirv_of(mlir_text: str) -> bytes:
    """Serialize the ``spirv.module`` that the pipeline makes of a ``gpu.module`` to SPIR-V bytes."""
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        (work / "k.mlir").write_text(mlir_text)
        opt = [find_tool("mlir-opt"), str(work / "k.mlir"), f"--pass-pipeline={PIPELINE}"]
        lowered = subprocess.run(opt, capture_output=True, text=True, check=True).stdout
        start = lowered.index("spirv.module")
        depth, end = 0, start
        for end in range(lowered.index("{", start), len(lowered)):
            depth += {"{": 1, "}": -1}.get(lowered[end], 0)
            if depth == 0:
                break
        (work / "s.mlir").write_text(lowered[start : end + 1])
        translate = [find_tool("mlir-translate"), "--no-implicit-module", "--serialize-spirv"]
        subprocess.run([*translate, str(work / "s.mlir"), "-o", str(work / "k.spv")], check=True)
        return (work / "k.spv").read_bytes()


@dataclass
class KernelInfo:
    """The webgpu target's per-kernel record (``WEBGPU_CONTRACT``): what ``wgsl.write_kernels`` reads."""

    module: str
    entry: str
    spirv: bytes
    workgroup_size: tuple[int, int, int]
    args: list[dict] = field(default_factory=list)
    capabilities: list[str] = field(default_factory=list)


def kernel(name: str) -> KernelInfo:
    """The hand-made kernel ``name`` (a key of ``BODIES``) as a ``KernelInfo``."""
    dtype = BODIES[name][0]
    args = [{"kind": "memref", "dtype": dtype, "rank": 1, "binding": i, "params_at": 3 * i} for i in range(3)]
    return KernelInfo("ew", name, spirv_of(_mlir(name)), (64, 1, 1), args)

"""From host code and kernels to a host object that launches its kernels through ``mgpu*`` runtime calls.

The CUDA target (``pipelines/gpu.py``'s ``host_to_gpu(chip)``) serializes each ``gpu.module`` to PTX, loaded
by the driver's JIT at run time, so one build runs on the chosen chip and newer ones; ``ptx()`` reads the
PTX back out. The webgpu target serializes SPIR-V, and its runtime (``targets/webgpu_runtime.py``) implements
the same calls under another prefix. ``object_code()`` compiles the host side with ``llc``: the
ExecutionEngine cannot, because it resolves the runtime's symbols when it compiles.
"""

from __future__ import annotations

import re
import subprocess
import tempfile
from pathlib import Path

from mlir import ir
from mlir.dialects import llvm

from relax_mlir.errors import CompileError
from relax_mlir.runtime.toolchain import find_tool
from relax_mlir.targets.codegen import llvm_level


def binaries(module: ir.Operation, kind: str) -> dict[str, str]:
    """The object of every ``gpu.binary`` in a module, by kernel module name: its ``kind = "..."`` string
    (``assembly``: PTX text; ``bin``: SPIR-V bytes as latin-1 characters)."""
    out = {}
    for op in module.regions[0].blocks[0].operations:
        if op.operation.name != "gpu.binary":
            continue
        name = ir.StringAttr(op.operation.attributes["sym_name"]).value
        text = str(op.operation.attributes["objects"])
        match = re.search(kind + r' = "((?:[^"\\]|\\.)*)"', text)
        if match is None:
            raise CompileError(f"gpu.binary @{name} holds no object of kind '{kind}'")
        out[name] = unescape(match.group(1))
    return out


def ptx(module: ir.Operation) -> dict[str, str]:
    """The PTX of every ``gpu.binary`` in an LLVM-level module, by kernel module name."""
    return binaries(module, "assembly")


def unescape(s: str) -> str:
    """MLIR string-attribute escapes (``\\0A``, ``\\09``, ``\\22``, ``\\\\``) back to text."""
    return re.sub(
        r"\\([0-9A-Fa-f]{2}|\\)", lambda m: "\\" if m.group(1) == "\\" else chr(int(m.group(1), 16)), s
    )


LOAD_MODULES = "relax_gpu_load_modules"
UNLOAD_MODULES = "relax_gpu_unload_modules"


def _explicit_constructors(text: str) -> str:
    """Replace ``llvm.global_ctors``/``dtors`` (which load and unload each kernel module) by two exported
    functions, ``LOAD_MODULES`` and ``UNLOAD_MODULES``, that call them in order.

    The object is linked by a JIT linker that runs no constructors of an object file, and loading must wait
    until a GPU has been found anyway (``targets/cuda.py`` calls ``LOAD_MODULES`` then)."""
    out = []
    calls: dict[str, list[str]] = {"ctors": [], "dtors": []}
    for line in text.splitlines():
        match = re.match(r"@llvm\.global_(ctors|dtors) = appending global", line)
        if match is None:
            out.append(line)
            continue
        calls[match.group(1)] = re.findall(r"ptr @([\w.$]+), ptr null", line)
    for name, kind in ((LOAD_MODULES, "ctors"), (UNLOAD_MODULES, "dtors")):
        body = "".join(f"  call void @{f}()\n" for f in calls[kind])
        out.append(f"define void @{name}() {{\n{body}  ret void\n}}")
    return "\n".join(out) + "\n"


def object_code(module: ir.Module, opt_level: int, runtime_prefix: str = "mgpu") -> bytes:
    """The host object of an LLVM-level module (kernels embedded, launched via libmlir_cuda_runtime's
    ``mgpu*`` functions, or the same functions named with ``runtime_prefix``)."""
    text = _explicit_constructors(str(llvm.translate_module_to_llvmir(module.operation)))
    if runtime_prefix != "mgpu":
        text = re.sub(r"@mgpu(\w+)", rf"@{runtime_prefix}\1", text)
    with tempfile.TemporaryDirectory(prefix="relax_mlir_cuda_") as tmp:
        ll, obj = Path(tmp) / "host.ll", Path(tmp) / "host.o"
        ll.write_text(text)
        done = subprocess.run(
            [
                find_tool("llc"),
                f"-O{llvm_level(opt_level)}",
                "-filetype=obj",
                "-relocation-model=pic",
                str(ll),
                "-o",
                str(obj),
            ],
            capture_output=True,
            text=True,
        )
        if done.returncode != 0:
            raise CompileError(f"llc failed on the GPU host code:\n{done.stderr.strip()}")
        return obj.read_bytes()

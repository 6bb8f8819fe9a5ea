"""From host code and kernels on tensors to native code: bufferize, lower to LLVM, JIT.

The passes from the output of ``relax-lower-host`` to the LLVM dialect are ``pipelines/cpu.py``'s
``host-to-llvm``. ``object_code()`` turns that into an ELF object with MLIR's ExecutionEngine (the compile
cache, ``cache.py``, keeps it on disk).
"""

from __future__ import annotations

import ctypes
import functools
import os
import tempfile

from mlir import ir
from mlir.execution_engine import ExecutionEngine

from relax_mlir.errors import CompileError
from relax_mlir.runtime.libs import shared_libs


def llvm_level(opt_level: int) -> int:
    """LLVM's optimization level for ``compile(opt_level=...)``: at most -O2.

    The kernels arrive tiled and vectorized; LLVM's -O3 made them no faster (GPT blocks, MLP) or
    10-12% slower (the ResNet-style CNN's convolutions) than -O2, and compiles longer.
    """
    return min(opt_level, 2)


def object_code(llvm_module: ir.Module, opt_level: int) -> bytes:
    """Compile an LLVM-dialect module to an ELF object (LLVM at ``llvm_level(opt_level)``)."""
    missing = [name for name in external_functions(llvm_module) if not _resolvable(name)]
    if missing:  # the ExecutionEngine aborts the process on a symbol it cannot resolve
        raise CompileError(
            f"undefined external function(s) {', '.join(n.removeprefix('_mlir_ciface_') for n in missing)} "
            f"(C symbols {', '.join(missing)}): a relax.call_dps_library callee that is "
            "not a registered library function must be a C symbol already loaded into the process "
            "(ctypes.CDLL(path, mode=ctypes.RTLD_GLOBAL))"
        )
    try:
        engine = ExecutionEngine(llvm_module, opt_level=llvm_level(opt_level), shared_libs=shared_libs())
    except RuntimeError as e:  # translation to LLVM IR failed (its reason goes to stderr): name the op
        raise CompileError(f"internal error: {untranslatable(llvm_module) or e}") from None
    fd, path = tempfile.mkstemp(suffix=".o", prefix="relax_mlir_")
    os.close(fd)
    try:
        engine.dump_to_object_file(path)
        with open(path, "rb") as f:
            return f.read()
    finally:
        os.unlink(path)


def untranslatable(llvm_module: ir.Module) -> str | None:
    """The first op the LLVM lowering left that MLIR cannot translate to LLVM IR (only llvm and omp
    ops translate), described with its location; None if there is none."""
    found: list[ir.Operation] = []

    def visit(op: ir.Operation) -> ir.WalkResult:
        if op.name.split(".", 1)[0] in ("llvm", "omp") or op.name == "builtin.module":
            return ir.WalkResult.ADVANCE
        found.append(op)
        return ir.WalkResult.INTERRUPT

    llvm_module.operation.walk(visit, ir.WalkOrder.PRE_ORDER)
    if not found:
        return None
    return f"the LLVM lowering left '{found[0].name}' (at {found[0].location}), which does not translate to LLVM IR"


def external_functions(llvm_module: ir.Module) -> list[str]:
    """Names of the functions the module declares without defining (LLVM intrinsics aside)."""
    names = []
    for op in llvm_module.body.operations:
        op = op.operation
        if op.name == "llvm.func" and not op.regions[0].blocks:
            name = ir.StringAttr(op.attributes["sym_name"]).value
            if not name.startswith("llvm."):
                names.append(name)
    return names


@functools.cache
def _libraries() -> list[ctypes.CDLL]:
    return [ctypes.CDLL(None), *(ctypes.CDLL(lib, mode=ctypes.RTLD_GLOBAL) for lib in shared_libs())]


def _resolvable(symbol: str) -> bool:
    """Whether the JIT can link ``symbol``: it is in the process or in one of ``shared_libs()``."""
    return any(hasattr(lib, symbol) for lib in _libraries())

"""Loading compiled object code into the process with llvmlite's JIT linker."""

from __future__ import annotations

import functools
from pathlib import Path

import llvmlite.binding as llvm

from relax_mlir.runtime import blas
from relax_mlir.runtime.libs import shared_libs


@functools.cache
def _initialize() -> None:
    llvm.initialize_native_target()
    llvm.initialize_native_asmprinter()
    for lib in shared_libs():
        llvm.load_library_permanently(lib)


def _target_machine() -> llvm.TargetMachine:
    """A new target machine: an engine owns (and frees) the one it is given."""
    _initialize()
    return llvm.Target.from_default_triple().create_target_machine()


class LoadedObject:
    """An object file linked into the process; symbols stay valid while this object lives."""

    def __init__(self, path: Path) -> None:
        self._engine = llvm.create_mcjit_compiler(llvm.parse_assembly(""), _target_machine())
        blas.prepare()  # once per process: OpenBLAS symbols global, its threads ($RELAX_MLIR_BLAS_THREADS)
        self._engine.add_object_file(str(path))
        self._engine.finalize_object()

    def address(self, symbol: str) -> int:
        address = self._engine.get_function_address(symbol)
        if not address:
            raise KeyError(symbol)
        return address

"""Loading compiled object code into the process with llvmlite's JIT linker."""

from __future__ import annotations

import ctypes
import functools
import os
from collections.abc import Sequence

import llvmlite.binding as llvm

from relax_mlir.runtime import blas
from relax_mlir.runtime.libs import openmp_library, shared_libs

# glibc mallopt parameters (malloc.h)
_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD = -1, -3


# The OpenMP entry points compiled parallel code calls (MLIR's OpenMP lowering, ``relax-lower-parallel``)
# and the API ``libs.ThreadBudget`` sets: all resolved in libomp itself (``_bind_openmp``).
OPENMP_ENTRY_POINTS = (
    "__kmpc_fork_call",
    "__kmpc_global_thread_num",
    "__kmpc_push_num_threads",
    "__kmpc_barrier",
    "__kmpc_for_static_fini",
    *(
        f"{fn}_{suffix}"
        for fn in (
            "__kmpc_for_static_init",
            "__kmpc_dispatch_init",
            "__kmpc_dispatch_next",
            "__kmpc_dispatch_fini",
        )
        for suffix in ("4", "4u", "8", "8u")
    ),
    "omp_get_max_threads",
    "omp_get_num_threads",
    "omp_get_thread_num",
    "omp_set_num_threads",
)


@functools.cache
def _initialize() -> None:
    llvm.initialize_native_target()
    llvm.initialize_native_asmprinter()
    for lib in shared_libs():
        llvm.load_library_permanently(lib)
    _bind_openmp()
    _keep_freed_memory()


def _bind_openmp() -> None:
    """Resolve the OpenMP entry points in libomp, the runtime ``libs.ThreadBudget`` configures.

    LLVM's JIT linker looks a symbol up in the process first: an OpenMP runtime loaded before (PyTorch's
    libgomp, MKL's libiomp5) that defines the same names would take the calls. With PyTorch imported,
    ``omp_get_max_threads`` was libgomp's, so every parallel region ran on PyTorch's thread count, never
    on the one set for the machine's load (the 125M LLM's decode beside a busy process: 34 tok/s at 2
    threads against 67 at 1)."""
    path = openmp_library()
    if path is None:
        return
    lib = ctypes.CDLL(path)
    for name in OPENMP_ENTRY_POINTS:
        function = getattr(lib, name, None)
        if function is not None:
            llvm.add_symbol(name, ctypes.cast(function, ctypes.c_void_p).value)


def _keep_freed_memory() -> None:
    """Keep freed blocks up to 32 MB in glibc's heap instead of returning them to the kernel.

    Compiled code allocates its outputs and large temporaries on every call; by default glibc maps
    blocks of a few MB with mmap and unmaps them on free, so each call page-faults them in again
    (525 faults per call, 4x the time of a stride-2 stem convolution at batch 8). Like ONNX Runtime's
    arena, this trades resident memory for speed. ``$RELAX_MLIR_KEEP_MALLOC=1`` leaves glibc alone.
    """
    if os.environ.get("RELAX_MLIR_KEEP_MALLOC") == "1":
        return
    mallopt = getattr(ctypes.CDLL(None), "mallopt", None)  # glibc only
    if mallopt is None:
        return
    mallopt(_M_MMAP_THRESHOLD, 32 << 20)  # glibc's largest allowed threshold on 64-bit
    mallopt(_M_TRIM_THRESHOLD, 256 << 20)


def _target_machine() -> llvm.TargetMachine:
    """A new target machine: an engine owns (and frees) the one it is given."""
    _initialize()
    return llvm.Target.from_default_triple().create_target_machine()


class LoadedObject:
    """An object file linked into the process; symbols stay valid while this object lives."""

    def __init__(
        self, data: bytes | Sequence[bytes], pointers: dict[str, int] | None = None, memory: object = None
    ) -> None:
        """Link the ELF object ``data``, or several that link together (each must be intact: LLVM crashes on
        a damaged object), then store each address of ``pointers`` in the pointer global it names (weights
        kept outside the object, in ``memory``, which lives as long as this object)."""
        self._engine = llvm.create_mcjit_compiler(llvm.parse_assembly(""), _target_machine())
        blas.prepare()  # once per process: OpenBLAS symbols global, its threads ($RELAX_MLIR_BLAS_THREADS)
        for part in [data] if isinstance(data, bytes) else data:
            self._engine.add_object_file(llvm.ObjectFileRef.from_data(part))
        self._engine.finalize_object()
        self._memory = memory
        for symbol, value in (pointers or {}).items():
            address = self._engine.get_global_value_address(symbol)
            if not address:
                raise KeyError(symbol)
            ctypes.c_void_p.from_address(address).value = value

    def address(self, symbol: str) -> int:
        address = self._engine.get_function_address(symbol)
        if not address:
            raise KeyError(symbol)
        return address

    def global_address(self, symbol: str) -> int:
        address = self._engine.get_global_value_address(symbol)
        if not address:
            raise KeyError(symbol)
        return address

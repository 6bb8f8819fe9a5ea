"""relax_mlir: Relax's first-class symbolic shapes in MLIR, from Python.

``relax_mlir.compile(module, target="cpu")`` compiles a relax module (built with
``relax_mlir.builder`` or written as IR text) into an executable called with numpy arrays;
``relax_mlir.compile_library(module, "libmodel.so", target="x86_64"|"aarch64")`` compiles it ahead of
time into a shared library with a C API (``targets/aot.py``). Both dispatch through the registry of
targets (``relax_mlir.targets``).
"""

from relax_mlir.targets import compile, compile_library  # noqa: A004

__all__ = ["compile", "compile_library"]

"""relax_mlir: Relax's first-class symbolic shapes in MLIR, from Python.

``relax_mlir.compile(module, target="cpu")`` compiles a relax module (built with
``relax_mlir.builder`` or written as IR text) into an executable called with numpy arrays.
"""

from relax_mlir.runtime.compiler import compile  # noqa: A004

__all__ = ["compile"]

"""Targets: ``compile`` and ``compile_library`` dispatch through the registry of ``base.py``.

One module per target: ``cpu.py`` (this machine, JIT-linked), ``cuda.py`` (PTX, run where a GPU is),
``aot.py`` (``x86_64`` and ``aarch64`` shared libraries with a C API), ``wasm.py`` (``wasm32``:
a WebAssembly module with the same C API, run from Python by wasmtime). ``steps.py`` holds the steps they
share. Adding a target is one more module here (imported below) with a ``@register_target`` class.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import TYPE_CHECKING

from mlir import ir

from relax_mlir.runtime.executable import Executable
from relax_mlir.targets.base import TARGETS, CompileStats, JitTarget, Target, get_target, register_target

if TYPE_CHECKING:
    from relax_mlir.targets.aot import Library

# importing a target module registers its targets
import relax_mlir.targets.aot  # noqa: E402, F401  isort: skip
import relax_mlir.targets.cpu  # noqa: E402, F401  isort: skip
import relax_mlir.targets.cuda  # noqa: E402, F401  isort: skip
import relax_mlir.targets.wasm  # noqa: E402, F401  isort: skip
import relax_mlir.targets.webgpu  # noqa: E402, F401  isort: skip

__all__ = ["TARGETS", "CompileStats", "JitTarget", "Target", "compile", "compile_library", "get_target"]
__all__ += ["register_target"]


def compile(  # noqa: A001  (the public name users expect)
    module: ir.Module | ir.Operation | str,
    target: str = "cpu",
    *,
    opt_level: int = 3,
    pipeline: str | None = None,
    use_cache: bool = True,
    on_stage: Callable[[str, str], None] | None = None,
    chip: str = "sm_80",
) -> Executable:
    """Compile every public relax function of ``module`` for ``target`` (``"cpu"``, ``"cuda"``,
    ``"wasm32"``: a WebAssembly module run by wasmtime, ``targets/wasm.py``; or any registered ``JitTarget``).

    ``module`` is a module built with the builder, or relax IR text. ``opt_level`` (0-3) picks the
    relax pipeline ``relax-O<n>`` and LLVM's level; ``pipeline`` replaces the relax-level pipeline
    with any pass list that ends in host code (``"relax-verify,relax-infer-shapes,relax-fuse-ops,
    convert-relax-to-linalg,relax-fuse-kernels,relax-lower-host"``). ``on_stage(name, ir_text)`` is called
    with the IR after each stage run (for printing; it makes a cache hit still run the relax pipeline).
    Returns an ``Executable``. Compiled objects are cached on disk (``$RELAX_MLIR_CACHE``, default
    ``~/.cache/relax_mlir``) keyed by the input module, the target and options (``runtime/cache.py``); a
    hit skips every pass. ``use_cache=False`` compiles anyway (and refreshes the entry). A damaged entry is
    recompiled and rewritten, and a cache that cannot be written is skipped, each with a
    ``relax_mlir.errors.CacheWarning``.

    ``target="cuda"`` builds PTX for ``chip`` (default sm_80) and host code that launches it
    (``targets/cuda.py``; ``pipeline`` then replaces ``relax-to-host-gpu``). It needs no GPU to build; the
    executable loads on its first call and raises ``DeviceUnavailableError`` where no GPU is. Other
    targets ignore ``chip``.
    """
    return get_target(target).compile(
        module, opt_level=opt_level, pipeline=pipeline, use_cache=use_cache, on_stage=on_stage, chip=chip
    )


def compile_library(
    module: ir.Module | ir.Operation | str,
    path: str | os.PathLike,
    target: str = "x86_64",
    *,
    opt_level: int = 2,
    cpu: str | None = None,
    header: str | os.PathLike | None = None,
    prefix: str = "relax",
    emit: str = "so",
    source_name: str = "<relax-compile>",
) -> Library:
    """Compile every public relax function of ``module`` into a shared library at ``path`` for ``target``
    (``"x86_64"`` or ``"aarch64"``: ``targets/aot.py`` documents the options), or into a WebAssembly module
    and its signatures (``"wasm32"``: ``model.wasm`` and ``model.json``, ``targets/wasm.py``)."""
    return get_target(target).compile_library(
        module, path, opt_level=opt_level, cpu=cpu, header=header, prefix=prefix, emit=emit,
        source_name=source_name,
    )  # fmt: skip

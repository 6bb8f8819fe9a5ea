"""``relax_mlir.compile``: a relax module in, an executable that runs at every allowed shape out."""

from __future__ import annotations

import io
import json
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field

from mlir import ir, passmanager

from relax_mlir.context import make_context, parse_module
from relax_mlir.errors import CompileError, RelaxError
from relax_mlir.pipelines import add_pipeline, load_passes, parse_pipeline
from relax_mlir.runtime import cache, codegen, libs, weights
from relax_mlir.runtime.executable import Executable, Function
from relax_mlir.runtime.host import SIGNATURE_ATTR
from relax_mlir.transforms.parallelize import THREADS_ATTR, THREADS_ENV


@dataclass
class CompileStats:
    """Where a compile spent its time (seconds), and whether the compile cache was hit.

    Stages: ``cache key`` (digesting the input), then on a hit ``load``; on a miss ``cache lookup``,
    ``relax to host``, ``to llvm``, ``weights`` (taking large constants out of the object), ``llvm
    codegen`` and ``load`` (writing the cache entry and linking it); ``total``.
    """

    stages: dict[str, float] = field(default_factory=dict)
    cache_hit: bool = False


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
    """Compile every public relax function of ``module`` for ``target`` (``"cpu"`` or ``"cuda"``).

    ``module`` is a module built with the builder, or relax IR text. ``opt_level`` (0-3) picks the
    relax pipeline ``relax-O<n>`` and LLVM's level; ``pipeline`` replaces the relax-level pipeline
    with any pass list that ends in host code (``"relax-verify,relax-infer-shapes,relax-fuse-ops,
    convert-relax-to-linalg,relax-fuse-kernels,relax-lower-host"``). ``on_stage(name, ir_text)`` is called
    with the IR after each stage run (for printing; it makes a cache hit still run the relax pipeline).
    Returns an ``Executable``. Compiled objects are cached on disk (``$RELAX_MLIR_CACHE``, default
    ``~/.cache/relax_mlir``) keyed by the input module and options (``cache.py``); a hit skips every
    pass. ``use_cache=False`` compiles anyway (and refreshes the entry).

    ``target="cuda"`` builds PTX for ``chip`` (default sm_80) and host code that launches it
    (``runtime/gpu``; ``pipeline`` then replaces ``relax-to-host-gpu``). It needs no GPU to build; the
    executable loads on its first call and raises ``DeviceUnavailableError`` where no GPU is. CUDA builds
    are cached like CPU ones (the key adds the chip).
    """
    if target not in ("cpu", "cuda"):
        raise RelaxError(f"unknown target '{target}'; available targets: cpu, cuda")
    if opt_level not in (0, 1, 2, 3):
        raise CompileError(f"opt_level must be 0, 1, 2 or 3, got {opt_level!r}")
    if target == "cuda":
        from relax_mlir.runtime.gpu.executable import compile_cuda  # noqa: PLC0415

        stats = CompileStats()
        start = time.perf_counter()
        op = module if isinstance(module, str) else _bytecode(_operation(module))
        exe = compile_cuda(op, pipeline, opt_level, chip, stats, use_cache)
        stats.stages["total"] = time.perf_counter() - start
        return exe
    stats = CompileStats()
    start = time.perf_counter()
    op = module if isinstance(module, str) else _operation(module)
    relax_pipeline = pipeline or f"relax-O{opt_level}"
    key = cache.cache_key(cache.module_digest(op), relax_pipeline, opt_level)
    stats.stages["cache key"] = time.perf_counter() - start
    functions = None
    if use_cache:
        t = time.perf_counter()
        functions = cache.load(key)
        stats.cache_hit = functions is not None
        stats.stages["cache lookup" if functions is None else "load"] = time.perf_counter() - t
    if functions is None or on_stage:
        source = op if isinstance(op, str) else _bytecode(op)
        functions = _compile(source, relax_pipeline, opt_level, key, stats, on_stage, functions)
    stats.stages["total"] = time.perf_counter() - start
    return Executable(functions, stats)


def _compile(
    source: str | bytes,
    pipeline: str,
    opt_level: int,
    key: str,
    stats: CompileStats,
    on_stage: Callable[[str, str], None] | None,
    functions: dict[str, Function] | None,
) -> dict[str, Function]:
    """Run the passes (the relax pipeline only when ``functions`` came from the cache), then LLVM."""
    with make_context(), ir.Location.unknown():
        t = time.perf_counter()
        try:
            op = parse_module(source, "<compile>")
        except ir.MLIRError as e:
            raise CompileError(_diagnostics(e)) from None
        _run(op, pipeline)
        stats.stages["relax to host"] = time.perf_counter() - t
        if on_stage:
            on_stage("host", str(op))
        if functions is not None:
            return functions
        signatures = _signatures(op)
        t = time.perf_counter()
        _serial_without_openmp(op)
        _run(op, "host-to-llvm")
        stats.stages["to llvm"] = time.perf_counter() - t
        if on_stage:
            on_stage("llvm", str(op))
        t = time.perf_counter()
        llvm_module = _as_module(op)
        blobs = weights.externalize(llvm_module)
        stats.stages["weights"] = time.perf_counter() - t
        t = time.perf_counter()
        data = codegen.object_code(llvm_module, opt_level)
        stats.stages["llvm codegen"] = time.perf_counter() - t
        t = time.perf_counter()
        cache.store(key, data, signatures, blobs)
        functions = cache.open_stored(key)
        stats.stages["load"] = time.perf_counter() - t
    return functions


_warned_no_openmp = False


def _serial_without_openmp(op: ir.Operation) -> None:
    """Where the OpenMP runtime is not installed, drop the module's thread count: ``relax-lower-parallel``
    then runs kernels' parallel chunks as serial loops in the calling thread (with a one-time warning)."""
    global _warned_no_openmp
    if THREADS_ATTR not in op.attributes or libs.openmp_library() is not None:
        return
    del op.attributes[THREADS_ATTR]
    if _warned_no_openmp:
        return
    _warned_no_openmp = True
    warnings.warn(
        f"relax_mlir: the OpenMP runtime (libomp.so.5) was not found, so kernels run on one thread; install "
        f"it with scripts/install-system-deps.sh (Debian: apt-get install libomp5-14), or set "
        f"{THREADS_ENV}=1 to silence this warning",
        RuntimeWarning,
        stacklevel=4,
    )


def _operation(module: ir.Module | ir.Operation) -> ir.Operation:
    """The module's operation, verified: MLIR aborts serializing IR that uses a value outside the region
    defining it (a value of another function or module), which the verifier reports."""
    op = module.operation if isinstance(module, ir.Module) else module
    if not isinstance(op, (ir.Operation, ir.OpView)):
        raise CompileError(
            f"compile() takes an ir.Module, a builtin.module operation or IR text, got {type(module).__name__}"
        )
    try:
        op.operation.verify()
    except ir.MLIRError as e:
        raise CompileError(_diagnostics(e)) from None
    return op.operation


def _bytecode(op: ir.Operation) -> bytes:
    """The module as bytecode: weights as raw bytes, and locations, so errors point at the builder lines."""
    buffer = io.BytesIO()
    op.write_bytecode(buffer)
    return buffer.getvalue()


def _run(op: ir.Operation, pipeline: str) -> None:
    load_passes()
    pm = passmanager.PassManager("builtin.module")
    add_pipeline(pm, parse_pipeline(pipeline))
    try:
        pm.run(op)
    except ir.MLIRError as e:
        raise CompileError(_diagnostics(e)) from None


def _where(loc: ir.Location) -> str:
    if loc.is_a_file():
        return f"{loc.filename}:{loc.start_line}:{loc.start_col}: "
    return ""


def _diagnostics(e: ir.MLIRError) -> str:
    """The error diagnostics of an MLIRError, one per line, without MLIR's generic preamble."""
    lines = [f"{_where(d.location)}{d.message}" for d in e.error_diagnostics]
    return "\n".join(lines) or str(e)


def _signatures(op: ir.Operation) -> dict[str, dict]:
    """The signature of each entry point of lowered host code; CompileError when there is none (LLVM
    would then emit no object, and the JIT aborts on that)."""
    out = {}
    for f in op.regions[0].blocks[0].operations:
        if f.operation.name == "func.func" and SIGNATURE_ATTR in f.operation.attributes:
            name = ir.StringAttr(f.operation.attributes["sym_name"]).value
            out[name] = json.loads(ir.StringAttr(f.operation.attributes[SIGNATURE_ATTR]).value)
    if not out:
        raise CompileError(
            "the module has no relax function to compile (a func.func with !relax types in its signature): "
            "nothing could be called"
        )
    return out


def _as_module(op: ir.Operation) -> ir.Module:
    """Move the body of a ``builtin.module`` operation into an ``ir.Module`` (what the JIT takes)."""
    module = ir.Module.create()
    for inner in list(op.regions[0].blocks[0].operations):
        module.body.append(inner.operation)
    return module

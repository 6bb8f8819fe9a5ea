"""``relax_mlir.compile``: a relax module in, an executable that runs at every allowed shape out."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from mlir import ir, passmanager

from relax_mlir.context import make_context, parse_module
from relax_mlir.errors import CompileError, RelaxError
from relax_mlir.pipelines import add_pipeline, load_passes, parse_pipeline
from relax_mlir.runtime import codegen
from relax_mlir.runtime.executable import Executable, Function
from relax_mlir.runtime.host import SIGNATURE_ATTR
from relax_mlir.runtime.loader import LoadedObject


@dataclass
class CompileStats:
    """Where a compile spent its time (seconds), and whether the object cache was hit."""

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
) -> Executable:
    """Compile every public relax function of ``module`` for ``target`` (``"cpu"``).

    ``module`` is a module built with the builder, or relax IR text. ``opt_level`` (0-3) picks the
    relax pipeline ``relax-O<n>`` and LLVM's level; ``pipeline`` replaces the relax-level pipeline
    with any pass list that ends in host code (``"relax-verify,relax-infer-shapes,relax-fuse-ops,
    convert-relax-to-linalg,relax-fuse-kernels,relax-lower-host"``). ``on_stage(name, ir_text)`` is called with the IR after each stage
    (for printing). Returns an ``Executable``; compiled objects are cached on disk
    (``$RELAX_MLIR_CACHE``, default ``~/.cache/relax_mlir``) keyed by the lowered IR.
    """
    if target != "cpu":
        raise RelaxError(f"unknown target '{target}'; available targets: cpu")
    if opt_level not in (0, 1, 2, 3):
        raise CompileError(f"opt_level must be 0, 1, 2 or 3, got {opt_level!r}")
    stats = CompileStats()
    start = time.perf_counter()
    ctx = make_context()
    with ctx, ir.Location.unknown():
        text = module if isinstance(module, str) else _text_with_locations(module)
        try:
            op = parse_module(text, "<compile>")
        except ir.MLIRError as e:
            raise CompileError(_diagnostics(e)) from None
        _run(op, pipeline or f"relax-O{opt_level}")
        stats.stages["relax to host"] = time.perf_counter() - start
        host_text = str(op)
        if on_stage:
            on_stage("host", host_text)
        signatures = _signatures(op)
        key = codegen.cache_key(host_text, opt_level)
        obj = codegen.cache_dir() / f"{key}.o"
        meta = obj.with_suffix(".json")
        if use_cache and obj.exists() and meta.exists():
            stats.cache_hit = True
        else:
            t = time.perf_counter()
            _run(op, "host-to-llvm")
            stats.stages["to llvm"] = time.perf_counter() - t
            if on_stage:
                on_stage("llvm", str(op))
            t = time.perf_counter()
            codegen.object_code(_as_module(op), opt_level, obj)
            meta.write_text(json.dumps(signatures))
            stats.stages["llvm codegen"] = time.perf_counter() - t
    loaded = LoadedObject(obj)
    functions = {name: Function(name, sig, loaded) for name, sig in json.loads(meta.read_text()).items()}
    stats.stages["total"] = time.perf_counter() - start
    return Executable(functions, stats)


def _text_with_locations(module: ir.Module | ir.Operation) -> str:
    """The module's text with locations, so errors point at the user's builder lines."""
    op = module.operation if isinstance(module, ir.Module) else module
    if not isinstance(op, (ir.Operation, ir.OpView)):
        raise CompileError(
            f"compile() takes an ir.Module, a builtin.module operation or IR text, got {type(module).__name__}"
        )
    return op.get_asm(enable_debug_info=True)


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
    out = {}
    for f in op.regions[0].blocks[0].operations:
        if f.operation.name == "func.func" and SIGNATURE_ATTR in f.operation.attributes:
            name = ir.StringAttr(f.operation.attributes["sym_name"]).value
            out[name] = json.loads(ir.StringAttr(f.operation.attributes[SIGNATURE_ATTR]).value)
    return out


def _as_module(op: ir.Operation) -> ir.Module:
    """Move the body of a ``builtin.module`` operation into an ``ir.Module`` (what the JIT takes)."""
    module = ir.Module.create()
    for inner in list(op.regions[0].blocks[0].operations):
        module.body.append(inner.operation)
    return module

"""What a target is, and the registry of targets that ``compile``, ``compile_library``, ``relax-compile``
and ``relax-opt``'s named pipelines (``--cpu``, ``--gpu``) dispatch through.

A target owns its relax-level pipeline (``relax_pipeline``), its lowering pipeline (``lowering_pipeline``),
both lists of pipeline elements; its code generation (``codegen``, which ``build`` calls after the shared
steps: parse in a fresh context, relax pipeline, signatures, lowering); and what it makes of the result:
an ``Executable`` (a ``JitTarget``: ``compile``, through the compile cache) or a library
(``compile_library``). Adding a target is one module under ``targets/`` with a ``@register_target`` class.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

from mlir import ir

from relax_mlir.context import make_context
from relax_mlir.errors import CompileError, PassError, RelaxError
from relax_mlir.pipelines.data import Pipeline, text
from relax_mlir.pipelines.registry import register_pipeline, uses_pass
from relax_mlir.runtime import cache
from relax_mlir.runtime.executable import Executable
from relax_mlir.targets import steps
from relax_mlir.transforms.parallelize import THREADS_ENV, default_threads

OnStage = Callable[[str, str], None]


@dataclass
class CompileStats:
    """Where a compile spent its time (seconds), and whether the compile cache was hit.

    Stages: ``cache key`` (digesting the input), then on a hit ``load``; on a miss ``cache lookup``,
    ``relax to host``, the target's lowering (``to llvm``; ``to llvm and ptx`` for CUDA), ``weights``
    (CPU: taking large constants out of the object), ``llvm codegen`` and ``load`` (writing the cache entry
    and linking it); ``total``.
    """

    stages: dict[str, float] = field(default_factory=dict)
    cache_hit: bool = False


def check_opt_level(opt_level: int) -> None:
    if opt_level not in (0, 1, 2, 3):
        raise CompileError(f"opt_level must be 0, 1, 2 or 3, got {opt_level!r}")


class Target:
    """One target. Subclasses set ``name`` and ``summary`` and define the pipelines and ``codegen``."""

    name: str  # set by each subclass (or dataclass field)
    summary: str = ""
    lowering_stage = "to llvm"  # the CompileStats stage of the lowering pipeline

    def relax_pipeline(self, opt_level: int) -> Pipeline:
        """Relax to host code at ``opt_level``."""
        raise NotImplementedError

    def lowering_pipeline(self, opt_level: int, **options: Any) -> Pipeline:
        """Host code to what ``codegen`` takes (the LLVM dialect)."""
        raise NotImplementedError

    def named_pipelines(self) -> dict[str, tuple[Pipeline, str]]:
        """Pipelines registered under a name with the target (``relax-opt --<name>``): name -> (pipeline,
        summary)."""
        return {}

    def check_ops(self, op: ir.Operation) -> None:
        """Reject, before any pass, a module using ops the target cannot compile."""

    def check_signatures(self, signatures: dict[str, dict]) -> None:
        """Reject, before lowering, entry points the target cannot expose."""

    def before_lowering(self, op: ir.Operation) -> None:
        """Adjust host code before the lowering pipeline (e.g. drop threads where OpenMP is missing)."""

    def codegen(self, op: ir.Operation, signatures: dict[str, dict], opt_level: int, stats: CompileStats,
                **options: Any) -> Any:  # fmt: skip
        """The artifact of the lowered module (an object, bytecode, ...)."""
        raise NotImplementedError

    def build(
        self,
        source: str | bytes,
        opt_level: int,
        *,
        pipeline: str | Pipeline | None = None,
        stats: CompileStats | None = None,
        on_stage: OnStage | None = None,
        relax_only: bool = False,
        source_name: str = "<compile>",
        **options: Any,
    ) -> Any:
        """Parse ``source`` in a fresh context, run ``pipeline`` (default: ``relax_pipeline``), read the
        signatures, run the lowering pipeline and ``codegen``; None when ``relax_only``."""
        stats = stats if stats is not None else CompileStats()
        with make_context(), ir.Location.unknown():
            t = time.perf_counter()
            op = steps.parse(source, source_name)
            self.check_ops(op)
            steps.run(op, pipeline if pipeline is not None else self.relax_pipeline(opt_level))
            stats.stages["relax to host"] = time.perf_counter() - t
            if on_stage:
                on_stage("host", str(op))
            if relax_only:
                return None
            signatures = steps.signatures(op)
            self.check_signatures(signatures)
            t = time.perf_counter()
            self.before_lowering(op)
            steps.run(op, self.lowering_pipeline(opt_level, **options))
            stats.stages[self.lowering_stage] = time.perf_counter() - t
            if on_stage:
                on_stage("llvm", str(op))
            return self.codegen(op, signatures, opt_level, stats, **options)

    def compile(self, module: Any, **options: Any) -> Executable:
        """An executable of ``module`` (JIT targets)."""
        raise RelaxError(
            f"target '{self.name}' builds shared libraries: use compile_library (relax-compile); "
            f"compile() targets: {', '.join(sorted(n for n, t in TARGETS.items() if isinstance(t, JitTarget)))}"
        )

    def compile_library(self, module: Any, path: Any, **options: Any) -> Any:
        """A shared library of ``module`` (ahead-of-time targets)."""
        raise RelaxError(
            f"target '{self.name}' runs in this process: use compile(); compile_library targets: "
            f"{', '.join(sorted(n for n, t in TARGETS.items() if type(t).compile_library is not Target.compile_library))}"
        )


class JitTarget(Target):
    """A target whose result runs in this process: ``compile`` goes through the compile cache."""

    def cache_tag(self, relax_pipeline: str, **options: Any) -> str:
        """What besides the module and opt level makes the compiled code differ."""
        return f"{self.name}:{relax_pipeline}"

    def load_cached(self, key: str, stats: CompileStats, **options: Any) -> Executable | None:
        """The executable stored under ``key``, or None."""
        raise NotImplementedError

    def executable(self, key: str, artifact: Any, stats: CompileStats, **options: Any) -> Executable:
        """Store ``build``'s artifact under ``key`` and make the executable of it."""
        raise NotImplementedError

    def compile(  # type: ignore[override]
        self,
        module: ir.Module | ir.Operation | str,
        *,
        opt_level: int = 3,
        pipeline: str | None = None,
        use_cache: bool = True,
        on_stage: OnStage | None = None,
        **options: Any,
    ) -> Executable:
        """Compile ``module`` (see ``relax_mlir.compile``): cache lookup, else ``build`` and store."""
        check_opt_level(opt_level)
        stats = CompileStats()
        start = time.perf_counter()
        op = steps.verified(module)
        relax = pipeline or text(self.relax_pipeline(opt_level))
        tag = self.cache_tag(relax, **options) + threads_tag(relax)
        key = cache.cache_key(cache.module_digest(op), tag, opt_level)
        stats.stages["cache key"] = time.perf_counter() - start
        exe = None
        if use_cache:
            t = time.perf_counter()
            exe = self.load_cached(key, stats, **options)
            stats.cache_hit = exe is not None
            stats.stages["cache lookup" if exe is None else "load"] = time.perf_counter() - t
        if exe is None or on_stage:
            artifact = self.build(
                steps.source(op),
                opt_level,
                pipeline=relax,
                stats=stats,
                on_stage=on_stage,
                relax_only=exe is not None,
                **options,
            )
            if exe is None:
                exe = self.executable(key, artifact, stats, **options)
        stats.stages["total"] = time.perf_counter() - start
        return exe


def threads_tag(pipeline: str) -> str:
    """The thread count the code is generated for, when ``pipeline`` splits kernels over threads (else
    nothing: the code is the same for every count, and so is the cache key).

    ``relax-parallelize-kernels`` fixes the chunking at compile time: chunk counts of static dims
    (``min(threads, size)``), packed matmuls' panel tiles, the most threads of an ``omp.parallel`` (the
    run-time count, ``runtime/libs.ThreadBudget``, may only lower it), and with one thread no parallel code
    at all. Chunking by the run-time count would make those static tile shapes dynamic (a slower schedule)
    and give a one-thread build the parallel code, which takes LLVM longer to compile."""
    if not uses_pass(pipeline, "relax-parallelize-kernels"):
        return ""
    try:
        threads = str(default_threads())
    except PassError:  # a malformed $RELAX_MLIR_NUM_THREADS: the pass reports it
        threads = os.environ.get(THREADS_ENV, "")
    return f"\0threads={threads}"


TARGETS: dict[str, Target] = {}
T = TypeVar("T", bound=Target | type)


def register_target(target: T) -> T:
    """Register a target: use as a class decorator (the class is instantiated without arguments) or call
    with an instance. Its named pipelines are registered with it."""
    instance = target() if isinstance(target, type) else target
    if not getattr(instance, "name", ""):
        raise RelaxError(f"target {instance!r} has no name")
    TARGETS[instance.name] = instance
    for name, (pipeline, summary) in instance.named_pipelines().items():
        register_pipeline(name, pipeline, summary)
    return target


def get_target(name: str) -> Target:
    """The registered target ``name``; ``RelaxError`` listing the known ones otherwise."""
    target = TARGETS.get(name)
    if target is None:
        raise RelaxError(f"unknown target '{name}'; available targets: {', '.join(sorted(TARGETS))}")
    return target

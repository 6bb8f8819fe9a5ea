"""Transform-dialect schedules for kernels, and the ``relax-schedule-kernels`` pass that applies them.

A schedule is a function registered with ``@register_schedule(name, ops=...)`` in a module of this
package; it returns the body of a transform sequence over ``%root`` (the module) whose SSA names end in
the given suffix. The pass runs, in registration order (module name order), every schedule whose
trigger ops occur in the module, all in one ``@__transform_main`` and one transform-interpreter run.
A schedule may also give ``prepare(module)``, run before the transform: it marks the ops to match with
attributes, for choices that transform-dialect matchers cannot express.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from mlir import ir, passmanager

from relax_mlir.pipelines.registry import register_pass
from relax_mlir.transforms.empty_loops import fold_empty_loops
from relax_mlir.transforms.fuse_kernels import pin_results
from relax_mlir.transforms.kernel import DESTINATIONS_ATTR


@dataclass(frozen=True)
class Schedule:
    """A named transform-dialect schedule, applied when any of ``ops`` occurs in the module."""

    name: str
    ops: frozenset[str]
    body: Callable[[str], str]
    prepare: Callable[[ir.Operation], None] | None = None


SCHEDULES: dict[str, Schedule] = {}


def register_schedule(
    name: str, *, ops: tuple[str, ...], prepare: Callable[[ir.Operation], None] | None = None
) -> Callable[[Callable[[str], str]], Callable]:
    """Register ``fn(suffix) -> transform IR`` as the schedule ``name``, triggered by ``ops``."""

    def wrap(fn: Callable[[str], str]) -> Callable[[str], str]:
        SCHEDULES[name] = Schedule(name, frozenset(ops), fn, prepare)
        return fn

    return wrap


def vectorize_to_outer_products(extra_patterns: str = "") -> str:
    """Transform IR on a function handle ``%f`` whose contractions are tiled to static register tiles:
    canonicalize the loops, vectorize, hoist the accumulators out of the reduction loops (loop-invariant
    subsets), apply ``extra_patterns`` (pattern ops, one per line), then lower contractions to outer
    products (FMAs). Shared by the matmul schedules."""
    extra = "".join(f"        {line.strip()}\n" for line in extra_patterns.strip().splitlines())
    extra_block = (
        f"""      transform.apply_patterns to %fv {{
{extra}        transform.apply_patterns.canonicalization
      }} : !transform.any_op
"""
        if extra
        else ""
    )
    return f"""      transform.apply_patterns to %f {{
        transform.apply_patterns.scf.for_loop_canonicalization
        transform.apply_patterns.canonicalization
      }} : !transform.any_op
      %fv = transform.structured.vectorize_children_and_apply_patterns %f : (!transform.any_op) -> !transform.any_op
      transform.apply_patterns to %fv {{
        transform.apply_patterns.canonicalization
      }} : !transform.any_op
      %loops = transform.structured.match ops{{["scf.for"]}} in %fv : (!transform.any_op) -> !transform.any_op
      transform.foreach %loops : !transform.any_op {{
      ^bb0(%l: !transform.any_op):
        transform.loop.hoist_loop_invariant_subsets %l : !transform.any_op
      }}
{extra_block}      transform.apply_patterns to %fv {{
        transform.apply_patterns.vector.lower_contraction lowering_strategy = "outerproduct"
        transform.apply_patterns.vector.lower_outerproduct
        transform.apply_patterns.canonicalization
      }} : !transform.any_op
"""


def _present_ops(root: ir.Operation, wanted: set[str]) -> set[str]:
    found: set[str] = set()

    def visit(op: ir.Operation) -> ir.WalkResult:
        if op.name in wanted:
            found.add(op.name)
        return ir.WalkResult.ADVANCE

    root.walk(visit, ir.WalkOrder.PRE_ORDER)
    return found


def transform_text(schedules: list[Schedule]) -> str:
    """The transform module (``@__transform_main``) applying ``schedules`` in order."""
    body = "".join(s.body(f"_{i}") for i, s in enumerate(schedules))
    return (
        "module attributes {transform.with_named_sequence} {\n"
        "  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {"
        f"{body}\n    transform.yield\n  }}\n}}\n"
    )


@register_pass("relax-schedule-kernels")
class ScheduleKernels:
    """Tile and vectorize kernels with the registered transform-dialect schedules (on tensors)."""

    def run(self, module: ir.Operation) -> None:
        fold_empty_loops(module)
        wanted = {op for s in SCHEDULES.values() for op in s.ops}
        present = _present_ops(module, wanted)
        active = [s for s in SCHEDULES.values() if s.ops & present]
        if not active:
            return
        for s in active:
            if s.prepare is not None:
                s.prepare(module)
        body = module.regions[0].blocks[0]
        schedule = ir.Module.parse("module {\n" + transform_text(active) + "}")  # the inner module moves
        transform_module = schedule.body.operations[0].operation
        body.append(transform_module)
        try:
            pm = passmanager.PassManager.parse("builtin.module(transform-interpreter,canonicalize,cse)")
            pm.run(module)
        finally:
            transform_module.erase()
        # canonicalization may fold a kernel's write into its destination away (an identity copy
        # becomes ``return %input``); the host relies on every result being in its destination
        for op in body.operations:
            if DESTINATIONS_ATTR in op.operation.attributes:
                pin_results(op.operation)

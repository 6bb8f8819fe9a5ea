"""Running transform-dialect scripts that passes write as text over the module they transform."""

from __future__ import annotations

from mlir import ir, passmanager


def transform_module(sequence: str) -> str:
    """The transform module whose ``@__transform_main`` runs ``sequence`` (IR over ``%root``, the payload)."""
    return (
        "module attributes {transform.with_named_sequence} {\n"
        "  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {\n"
        f"{sequence}\n    transform.yield\n  }}\n}}\n"
    )


def run_transform_script(module: ir.Operation, sequence: str) -> None:
    """Apply ``sequence`` to ``module`` with the transform interpreter, then canonicalize and cse.

    The transform module is appended to ``module`` for the run (the interpreter looks for it there)
    and erased afterwards, also when the run fails.
    """
    holder = ir.Module.parse(
        "module {\n" + transform_module(sequence) + "}"
    )  # keep alive: its inner module moves
    script = holder.body.operations[0].operation
    module.regions[0].blocks[0].append(script)
    try:
        passmanager.PassManager.parse("builtin.module(transform-interpreter,func.func(canonicalize,cse))").run(module)
    finally:
        script.erase()

"""``relax-cse``: merge identical pure relax ops.

Two ops are identical when they have the same name, the same operand values, the same attributes and
the same result types. An op is replaced by an identical one that dominates it: earlier in the same
block, or earlier in an enclosing block (a dataflow block sees the function body before it; the body
never sees inside a dataflow block). Only pure ops are merged (``PURE``: ``call_dps_library`` never is),
and impure ones whose class is ``IDEMPOTENT``: two ``match_cast`` ops of the same value to the same type
are merged (the second checks and binds nothing new); casts of different values never are, even to the
same type.
"""

from __future__ import annotations

from typing import Any

from mlir import ir

from relax_mlir.transforms.registry import register_pass
from relax_mlir.transforms.relax_ir import functions, is_dataflow, relax_class, replace_op


def op_key(op: ir.Operation) -> tuple[Any, ...]:
    """What makes two ops compute the same values (the location does not count)."""
    attrs = op.attributes
    return (
        op.name,
        tuple(op.operands),
        tuple(sorted((attrs[i].name, str(attrs[i].attr)) for i in range(len(attrs)))),
        tuple(str(r.type) for r in op.results),
    )


def _mergeable(op: ir.Operation) -> bool:
    cls = relax_class(op)
    return cls is not None and (cls.PURE or cls.IDEMPOTENT)


def cse_block(block: ir.Block, seen: dict[tuple[Any, ...], ir.Operation]) -> int:
    """Merge ops of ``block`` with identical dominating ones in ``seen`` (a copy per nested block)."""
    merged = 0
    for op in list(block.operations):
        op = op.operation
        if is_dataflow(op):
            merged += cse_block(op.regions[0].blocks[0], dict(seen))
            continue
        if not _mergeable(op):
            continue
        key = op_key(op)
        earlier = seen.get(key)
        if earlier is None:
            seen[key] = op
            continue
        replace_op(op, list(earlier.results))
        merged += 1
    return merged


def cse(module: ir.Operation) -> int:
    """Run relax-cse on every function of ``module``; the number of ops merged."""
    return sum(cse_block(f.regions[0].blocks[0], {}) for f in functions(module))


@register_pass("relax-cse")
class CommonSubexpressionElimination:
    """Merge identical pure relax ops (same name, operands, attributes, result types) under dominance."""

    def run(self, module: ir.Operation) -> None:
        cse(module)

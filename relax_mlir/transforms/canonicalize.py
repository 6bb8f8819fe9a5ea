"""``relax-canonicalize``: algebraic cleanups that are always exact and drop no run-time check.

Each rule is its op class's ``canonicalize`` classmethod (in the op's module); it keeps the replaced
value's type, so no re-deduction is needed. The rules of the ops defined today:

- ``astype(x)`` to ``x``'s own dtype -> ``x``
- ``reshape(x)`` / ``broadcast_to(x)`` whose result type equals ``x``'s (no unknown dim) -> ``x``
- ``reshape(reshape(x))`` -> one ``reshape(x)`` to the outer result shape, when the inner one provably
  keeps the element count (so its run-time size check is implied by the new one) and no dim is unknown
- ``permute_dims`` by the identity -> ``x``; ``permute_dims(permute_dims(x))`` -> one ``permute_dims``
  (or ``x`` when the composition is the identity)
- ``squeeze(expand_dims(x, axes), axes)`` -> ``x`` (the squeezed dims are the inserted 1s)
- ``match_cast(x)`` to ``x``'s own type -> ``x`` (it checks and binds nothing)

Ops a rule leaves unused are erased. The pass repeats until nothing changes, so a second run is a no-op.
"""

from __future__ import annotations

from mlir import ir

from relax_mlir.transforms.registry import register_pass
from relax_mlir.transforms.relax_ir import (
    erase_dead_producers,
    functions,
    relax_class,
    replace_op,
    walk_relax_ops,
)


def canonicalize(module: ir.Operation, max_rounds: int = 16) -> int:
    """Apply the rules to every function of ``module`` until none applies; the number of rewrites."""
    total = 0
    for _ in range(max_rounds):
        changed = 0
        for f in functions(module):
            for op in walk_relax_ops(f.regions[0].blocks[0]):
                changed += _apply(op)
        total += changed
        if not changed:
            break
    return total


def _apply(op: ir.Operation) -> int:
    cls = relax_class(op)
    value = None if cls is None else cls.canonicalize(op)
    if value is None:
        return 0
    operands = list(op.operands)
    replace_op(op, [value])
    erase_dead_producers(operands)
    return 1


@register_pass("relax-canonicalize")
class Canonicalize:
    """Exact algebraic cleanups: no-op casts/reshapes/permutes/broadcasts, reshape and permute chains."""

    def run(self, module: ir.Operation) -> None:
        canonicalize(module)

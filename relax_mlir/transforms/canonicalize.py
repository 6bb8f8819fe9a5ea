"""``relax-canonicalize``: algebraic cleanups that are always exact and drop no run-time check.

Rules (each keeps the replaced value's type, so no re-deduction is needed):

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

from collections.abc import Callable

from mlir import ir

from relax_mlir.dialects.ops.manipulate import PermuteDimsOp, ReshapeOp
from relax_mlir.dialects.types import TensorType, relax_type
from relax_mlir.pipelines.registry import register_pass
from relax_mlir.shape_infer.dims import normalize_axes, product
from relax_mlir.shape_infer.expr import format_dim
from relax_mlir.transforms.relax_ir import (
    erase_dead_producers,
    functions,
    replace_op,
    walk_relax_ops,
)

Rule = Callable[[ir.Operation], "ir.Value | None"]


def _tensor(v: ir.Value) -> TensorType | None:
    t = relax_type(v.type)
    return t if isinstance(t, TensorType) else None


def _fully_known(t: TensorType | None) -> bool:
    return t is not None and t.shape is not None and t.dtype is not None and None not in t.shape


def _producer(v: ir.Value, name: str) -> ir.Operation | None:
    if not isinstance(v, ir.OpResult) or v.owner.name != f"relax.{name}":
        return None
    return v.owner.operation


def _attr(op: ir.Operation, name: str) -> object:
    return op.opview.attr_values()[name]  # type: ignore[attr-defined]


def _same_type_identity(op: ir.Operation) -> ir.Value | None:
    """reshape / broadcast_to to the operand's own fully known type."""
    x = op.operands[0]
    if _fully_known(_tensor(x)) and x.type == op.results[0].type:
        return x
    return None


def _astype(op: ir.Operation) -> ir.Value | None:
    x = op.operands[0]
    t = _tensor(x)
    if t is not None and t.dtype == _attr(op, "dtype") and x.type == op.results[0].type:
        return x
    return None


def _reshape(op: ir.Operation) -> ir.Value | None:
    same = _same_type_identity(op)
    if same is not None:
        return same
    inner = _producer(op.operands[0], "reshape")
    out = _tensor(op.results[0])
    if inner is None or not _fully_known(out):
        return None
    x = inner.operands[0]
    xt, mid = _tensor(x), _tensor(inner.results[0])
    if not (_fully_known(xt) and _fully_known(mid)) or product(xt.shape) != product(mid.shape):
        return None
    if x.type == op.results[0].type:
        return x
    assert out is not None and out.shape is not None
    if any(d.is_const and d.value == 0 for d in out.shape):
        return None  # a 0 in the shape attribute would mean "copy the input dim"
    shape = [format_dim(d) for d in out.shape]
    with ir.InsertionPoint(op), op.location:
        new = ReshapeOp.build([x], {"shape": shape}, loc=op.location)
    if new.results[0].type != op.results[0].type:  # deduction disagrees: leave the chain alone
        new.operation.erase()
        return None
    return new.results[0]


def _perm(op: ir.Operation, rank: int) -> list[int]:
    axes = _attr(op, "axes")
    return list(reversed(range(rank))) if axes is None else normalize_axes(axes, rank)  # type: ignore[arg-type]


def _permute_dims(op: ir.Operation) -> ir.Value | None:
    x = op.operands[0]
    t = _tensor(x)
    if t is None or t.shape is None:
        return None
    perm = _perm(op, len(t.shape))
    if perm == list(range(len(perm))) and x.type == op.results[0].type:
        return x
    inner = _producer(x, "permute_dims")
    if inner is None:
        return None
    src = inner.operands[0]
    st = _tensor(src)
    if st is None or st.shape is None:
        return None
    first = _perm(inner, len(st.shape))
    composed = [first[p] for p in perm]
    if composed == list(range(len(composed))):
        return src if src.type == op.results[0].type else None
    with ir.InsertionPoint(op), op.location:
        new = PermuteDimsOp.build([src], {"axes": composed}, loc=op.location)
    if new.results[0].type != op.results[0].type:
        new.operation.erase()
        return None
    return new.results[0]


def _squeeze(op: ir.Operation) -> ir.Value | None:
    inner = _producer(op.operands[0], "expand_dims")
    axes = _attr(op, "axes")
    if inner is None or axes is None:
        return None
    x = inner.operands[0]
    mid = _tensor(inner.results[0])
    if mid is None or mid.shape is None:
        return None
    rank = len(mid.shape)
    inserted = sorted(normalize_axes(_attr(inner, "axes"), rank))  # type: ignore[arg-type]
    if sorted(normalize_axes(axes, rank)) != inserted or x.type != op.results[0].type:  # type: ignore[arg-type]
        return None
    return x


def _match_cast(op: ir.Operation) -> ir.Value | None:
    x = op.operands[0]
    return x if x.type == op.results[0].type and relax_type(x.type) is not None else None


RULES: dict[str, Rule] = {
    "relax.astype": _astype,
    "relax.reshape": _reshape,
    "relax.broadcast_to": _same_type_identity,
    "relax.permute_dims": _permute_dims,
    "relax.squeeze": _squeeze,
    "relax.match_cast": _match_cast,
}


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
    rule = RULES.get(op.name)
    if rule is None:
        return 0
    value = rule(op)
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

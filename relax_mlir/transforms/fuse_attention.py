"""``relax-fuse-attention``: ``matmul(softmax(where(mask, matmul(q, kt) / c, fill)), v)`` -> ``relax.attention``.

Exporters write attention as separate ops; lowered one by one, the ``[b, h, s, t]`` score matrix is
written, scaled, masked, normalized and read back (32 MB per layer at 8 heads and seq 1024). The fused
op (``dialects/ops/attention.py``) keeps one tile of scores at a time. Matched, on rank-4 f32 values whose
intermediates have no other use: ``matmul(q, kt)`` (``q`` may be ``multiply(q0, c)``, as PyTorch's SDPA
writes it), then optionally ``divide``/``multiply`` by a scalar constant, then optionally ``where(mask, scores, scalar constant)`` with an i1 ``[s, t]`` mask, then
``softmax`` over the last axis and ``matmul`` with ``v``. A mask that is the causal frontier built from one
``arange`` (``not(less(rows, cols))``, ``greater_equal(rows, cols)`` or ``less_equal(cols, rows)`` with
``rows``/``cols`` its ``expand_dims`` at axes 1/0) and a fill of at most ``CAUSAL_FILL`` becomes ``causal``
(later key blocks are skipped).
The CPU pipelines run it at O2+; other targets keep the unfused ops (the op is CPU_ONLY).
"""

from __future__ import annotations

import numpy as np
from mlir import ir

from relax_mlir.dialects.ops.attention import attention
from relax_mlir.dialects.types import TensorType, relax_type
from relax_mlir.transforms.registry import register_pass
from relax_mlir.transforms.relax_ir import erase_dead_producers, functions, walk_relax_ops

# A causal mask's fill at or below this leaves its keys out exactly as causal=True (-inf) does: the weight
# exp(fill - row max) is 0 in f32 unless the row max is below fill + 104.
CAUSAL_FILL = -1e4


def _producer(v: ir.Value, *names: str) -> ir.Operation | None:
    if not isinstance(v, ir.OpResult):
        return None
    op = v.owner.operation
    return op if op.name in {f"relax.{n}" for n in names} else None


def _single_use(v: ir.Value) -> bool:
    uses = iter(v.uses)
    return next(uses, None) is not None and next(uses, None) is None


def _scalar(v: ir.Value) -> float | None:
    """The value of a rank-0 (or one-element) float ``relax.constant``, else None."""
    op = _producer(v, "constant")
    if op is None:
        return None
    try:
        values = np.array(ir.DenseElementsAttr(op.attributes["value"]))
    except (ValueError, TypeError):
        return None
    return float(values.reshape(-1)[0]) if values.size == 1 and values.dtype.kind == "f" else None


def _f32_rank4(v: ir.Value) -> bool:
    """A rank-4 f32 tensor whose last dim is not a static 0 (relax.attention's operands)."""
    t = relax_type(v.type)
    if not (isinstance(t, TensorType) and t.dtype == "f32" and t.shape is not None and len(t.shape) == 4):
        return False
    last = t.shape[3]
    return last is None or not (last.is_const and last.value == 0)


def _int_list(op: ir.Operation, name: str) -> list[int] | None:
    if name not in op.attributes:
        return None
    try:
        return [ir.IntegerAttr(a).value for a in ir.ArrayAttr(op.attributes[name])]
    except (ValueError, TypeError):
        return None


def _axis_of(v: ir.Value) -> tuple[ir.Value, int] | None:
    """(the arange, axis) when ``v`` is ``expand_dims(arange, [axis])``."""
    op = _producer(v, "expand_dims")
    if op is None or _producer(op.operands[0], "arange") is None:
        return None
    axes = _int_list(op, "axes")
    return (op.operands[0], axes[0]) if axes and len(axes) == 1 else None


def _is_causal(mask: ir.Value) -> bool:
    """``mask[i, j]`` is ``j <= i`` built from one arange: rows = its expand_dims at 1, cols at 0."""
    op = _producer(mask, "logical_not", "greater_equal", "less_equal")
    if op is None:
        return False
    if op.name == "relax.logical_not":  # not(rows < cols)
        op = _producer(op.operands[0], "less")
        if op is None:
            return False
        a, b = op.operands
    elif op.name == "relax.greater_equal":  # rows >= cols
        a, b = op.operands
    else:  # cols <= rows
        b, a = op.operands
    rows, cols = _axis_of(a), _axis_of(b)
    return rows is not None and cols is not None and rows[0] == cols[0] and (rows[1], cols[1]) == (1, 0)


def _match(op: ir.Operation) -> dict | None:
    """The parts of the attention chain ending in the matmul ``op``, or None."""
    probs, v = op.operands
    softmax = _producer(probs, "softmax")
    if softmax is None or not _single_use(probs) or not all(_f32_rank4(x) for x in (probs, v)):
        return None
    axis = ir.IntegerAttr(softmax.attributes["axis"]).value
    if axis not in (3, -1):
        return None
    x, found = softmax.operands[0], {"chain": [softmax], "mask": None, "fill": float("-inf"), "scale": 1.0}
    where = _producer(x, "where")
    if where is not None:
        mask, scores, fill = where.operands
        mt = relax_type(mask.type)
        value = _scalar(fill)
        if not _single_use(x) or value is None or not isinstance(mt, TensorType) or mt.dtype != "i1":
            return None
        if mt.shape is None or len(mt.shape) != 2:
            return None
        found.update(mask=mask, fill=value)
        found["chain"].append(where)
        x = scores
    scaling = _producer(x, "divide", "multiply")
    if scaling is not None:
        a, b = scaling.operands
        c = (
            _scalar(b)
            if _scalar(b) is not None
            else (_scalar(a) if scaling.name == "relax.multiply" else None)
        )
        if c is None or not _single_use(x) or c == 0:
            return None
        x = a if _scalar(b) is not None else b
        found["scale"] = 1 / c if scaling.name == "relax.divide" else c
        found["chain"].append(scaling)
    scores = _producer(x, "matmul")
    if scores is None or not _single_use(x) or not all(_f32_rank4(y) for y in scores.operands):
        return None
    q = scores.operands[0]
    scaled_q = _producer(q, "multiply") if scaling is None else None
    if scaled_q is not None and _single_use(q):  # PyTorch's SDPA scales the queries: q * c @ kt
        a, b = scaled_q.operands
        c, other = (_scalar(b), a) if _scalar(b) is not None else (_scalar(a), b)
        if c is not None and _f32_rank4(other):
            q, found["scale"] = other, c
    found.update(q=q, kt=scores.operands[1], v=v)
    found["chain"].append(scores)
    return found


def fuse_attention(module: ir.Operation) -> int:
    """Rewrite every matched attention chain of ``module``; the number rewritten."""
    total = 0
    for f in functions(module):
        for op in walk_relax_ops(f.regions[0].blocks[0]):
            if op.name != "relax.matmul" or (found := _match(op)) is None:
                continue
            mask, causal = found["mask"], False
            with ir.InsertionPoint(op), op.location:
                if mask is not None and found["fill"] <= CAUSAL_FILL and _is_causal(mask):
                    mask, causal = None, True
                y = attention(
                    found["q"],
                    found["kt"],
                    found["v"],
                    mask,
                    found["scale"],
                    found["fill"],
                    causal,
                    loc=op.location,
                )
            if y.type != op.results[0].type:  # the deduced type must be the matmul's, as spelled
                erase_dead_producers([y])
                continue
            op.results[0].replace_all_uses_with(y)
            op.erase()
            erase_dead_producers([found["chain"][0].results[0]])
            total += 1
    return total


@register_pass("relax-fuse-attention")
class FuseAttention:
    """Attention written as matmul / scale / mask / softmax / matmul becomes relax.attention (flash-style)."""

    def run(self, module: ir.Operation) -> None:
        fuse_attention(module)

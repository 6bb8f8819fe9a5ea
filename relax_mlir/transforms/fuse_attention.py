"""``relax-fuse-attention``: ``matmul(softmax(where(mask, matmul(q, kt) / c, fill)), v)`` -> ``relax.attention``.

Exporters write attention as separate ops; lowered one by one, the ``[b, h, s, t]`` score matrix is
written, scaled, masked, normalized and read back (32 MB per layer at 8 heads and seq 1024). The fused
op (``dialects/ops/attention.py``) keeps one tile of scores at a time. Matched, on rank-4 f32 values whose
intermediates have no other use: ``matmul(q, kt)`` (``q`` may be ``multiply(q0, c)``, as PyTorch's SDPA
writes it), then optionally ``divide``/``multiply`` by a scalar constant, then optionally ``where(mask, scores, scalar constant)`` with an i1 ``[s, t]`` mask, then
``softmax`` over the last axis and ``matmul`` with ``v``. A mask that is the causal frontier built from one
``arange`` (``not(less(rows, cols))``, ``greater_equal(rows, cols)`` or ``less_equal(cols, rows)`` with
``rows``/``cols`` its ``expand_dims`` at axes 1/0) and a fill of at most ``CAUSAL_FILL`` becomes ``causal``
(later key blocks are skipped). ONNX's ``Attention`` (opset 23+) writes the mask as an additive bias
``add(scores, where(mask, 0, -inf))`` and zeroes the rows that see no key (``where(empty, 0, softmax)``):
both are matched. Its causal mask over cached keys (query rows ``arange(p, t)``, key columns
``arange(0, t)``) is ``causal`` too, and then the guard is dropped (no such row); any other guard is
applied to the fused output, whose rows it zeroes.
The CPU pipelines run it at O2+; other targets keep the unfused ops (the op is CPU_ONLY).
"""

from __future__ import annotations

import numpy as np
from mlir import ir

from relax_mlir.dialects.ops.attention import attention
from relax_mlir.dialects.ops.elementwise import where
from relax_mlir.dialects.registry import op_class
from relax_mlir.dialects.types import TensorType, relax_type
from relax_mlir.shape_infer.expr import Expr, const, parse_dim, prove_le
from relax_mlir.transforms.registry import register_pass
from relax_mlir.transforms.relax_ir import erase_dead_producers, functions, single_use, walk_relax_ops

# A causal mask's fill at or below this leaves its keys out exactly as causal=True (-inf) does: the weight
# exp(fill - row max) is 0 in f32 unless the row max is below fill + 104.
CAUSAL_FILL = -1e4


def _producer(v: ir.Value, *names: str) -> ir.Operation | None:
    if not isinstance(v, ir.OpResult):
        return None
    op = v.owner.operation
    return op if op.name in {f"relax.{n}" for n in names} else None


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


def _arange(op: ir.Operation) -> tuple[Expr, Expr] | None:
    """(start, end) of a step-1 integer ``relax.arange``, else None."""
    cls = op_class(op)
    if op.name != "relax.arange" or cls is None:
        return None
    attrs = cls(op).attr_values()
    if attrs["step"] != 1 or any(isinstance(attrs[a], float) for a in ("start", "end")):
        return None
    start, end = parse_dim(attrs["start"]), parse_dim(attrs["end"])
    return None if start is None or end is None else (start, end)


def _positions(v: ir.Value) -> tuple[Expr, Expr, int] | None:
    """(start, end, axis) when ``v`` is a step-1 arange made 2-D with its unit dim at ``axis``: by
    ``expand_dims`` or by a ``reshape`` to ``[n, 1]`` (axis 1) or ``[1, n]`` (axis 0)."""
    op = _producer(v, "expand_dims", "reshape")
    if op is None or (arange := _producer(op.operands[0], "arange")) is None:
        return None
    if (span := _arange(arange)) is None:
        return None
    if op.name == "relax.expand_dims":
        axes = _int_list(op, "axes")
        return (*span, axes[0]) if axes and len(axes) == 1 and axes[0] in (0, 1) else None
    shape = relax_type(v.type).shape
    if shape is None or len(shape) != 2:
        return None
    unit = [a for a in (1, 0) if shape[a] is not None and shape[a].is_const and shape[a].value == 1]
    return (*span, unit[0]) if unit else None


def _causal_offset(mask: ir.Value) -> Expr | None:
    """``t - s`` when ``mask[i, j]`` is ``j <= i + t - s`` (relax.attention's ``causal``, for ``s`` queries over ``t``
    keys): ``cols <= rows`` with ``cols`` = arange(0, t) along the columns and ``rows`` = arange(t - s, t)
    along the rows, as exporters build it (one shared arange when s == t; ONNX's Attention starts the
    rows after the cached keys); else None."""
    op = _producer(mask, "logical_not", "greater_equal", "less_equal")
    if op is None:
        return None
    if op.name == "relax.logical_not":  # not(rows < cols)
        op = _producer(op.operands[0], "less")
        if op is None:
            return None
        a, b = op.operands
    elif op.name == "relax.greater_equal":  # rows >= cols
        a, b = op.operands
    else:  # cols <= rows
        b, a = op.operands
    rows, cols = _positions(a), _positions(b)
    if rows is None or cols is None or (rows[2], cols[2]) != (1, 0):
        return None
    return rows[0] if cols[0] == const(0) and rows[1] == cols[1] else None


def _masked_scores(x: ir.Value) -> tuple[ir.Value, ir.Value, float, ir.Operation] | None:
    """(mask, scores, fill, op) when ``x`` is ``where(mask, scores, fill)`` or ``scores`` plus the additive
    bias ``where(mask, 0, -inf)`` (ONNX's Attention), with an i1 rank-2 ``mask``; else None."""
    op = _producer(x, "where", "add")
    if op is None:
        return None
    if op.name == "relax.where":
        mask, scores, fill_value = op.operands
        fill = _scalar(fill_value)
    else:
        scores, bias = op.operands
        if (where := _producer(bias, "where")) is None:
            scores, bias = bias, scores
            where = _producer(bias, "where")
        if where is None or _scalar(where.operands[1]) != 0.0 or _scalar(where.operands[2]) != float("-inf"):
            return None
        mask, fill = where.operands[0], float("-inf")
    mt = relax_type(mask.type)
    if fill is None or not isinstance(mt, TensorType) or mt.dtype != "i1" or mt.shape is None:
        return None
    rows_cols = relax_type(x.type).shape[2:]
    same = all(m is not None and m == d for m, d in zip(mt.shape, rows_cols)) and len(mt.shape) == 2
    return (mask, scores, fill, op) if same else None


def _empty_row_guard(probs: ir.Value) -> ir.Operation | None:
    """The op when ``probs`` is ``where(empty, 0, p)`` with ``empty`` a row predicate
    (last dim 1): ONNX's Attention zeroes the rows whose keys are all masked."""
    op = _producer(probs, "where")
    if op is None or _scalar(op.operands[1]) != 0.0:
        return None
    empty = op.operands[0]
    shape = relax_type(empty.type).shape
    if shape is None or not shape or shape[-1] is None or not (shape[-1].is_const and shape[-1].value == 1):
        return None
    return op


def _guards_bias(empty: ir.Value, bias_mask: ir.Value) -> bool:
    """Whether ``empty`` is ``equal(max(where(bias_mask, 0, -inf), [-1]), -inf)``: true only for rows that
    see no key, which a causal mask over at least as many keys as queries never has."""
    eq = _producer(empty, "equal")
    if eq is None or _scalar(eq.operands[1]) != float("-inf"):
        return False
    row_max = _producer(eq.operands[0], "max")
    bias = None if row_max is None else _producer(row_max.operands[0], "where")
    return bias is not None and bias.operands[0] == bias_mask


def _match(op: ir.Operation) -> dict | None:
    """The parts of the attention chain ending in the matmul ``op``, or None."""
    probs, v = op.operands
    found = {"chain": [], "mask": None, "fill": float("-inf"), "scale": 1.0, "guard": None}
    if (guard := _empty_row_guard(probs)) is not None and single_use(probs):
        found["guard"], probs = guard, guard.operands[2]
        found["chain"].append(guard)
    softmax = _producer(probs, "softmax")
    if softmax is None or not single_use(probs) or not all(_f32_rank4(x) for x in (probs, v)):
        return None
    axis = ir.IntegerAttr(softmax.attributes["axis"]).value
    if axis not in (3, -1):
        return None
    x = softmax.operands[0]
    found["chain"].append(softmax)
    if (masked := _masked_scores(x)) is not None:
        if not single_use(x):
            return None
        mask, scores, fill, masking = masked
        found.update(mask=mask, fill=fill)
        found["chain"].append(masking)
        x = scores
    scaling = _producer(x, "divide", "multiply")
    if scaling is not None:
        a, b = scaling.operands
        c = (
            _scalar(b)
            if _scalar(b) is not None
            else (_scalar(a) if scaling.name == "relax.multiply" else None)
        )
        if c is None or not single_use(x) or c == 0:
            return None
        x = a if _scalar(b) is not None else b
        found["scale"] = 1 / c if scaling.name == "relax.divide" else c
        found["chain"].append(scaling)
    scores = _producer(x, "matmul")
    if scores is None or not single_use(x) or not all(_f32_rank4(y) for y in scores.operands):
        return None
    q = scores.operands[0]
    scaled_q = _producer(q, "multiply") if scaling is None else None
    if scaled_q is not None and single_use(q):  # PyTorch's SDPA scales the queries: q * c @ kt
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
            mask, guard = found["mask"], found["guard"]
            offset = None if mask is None or found["fill"] > CAUSAL_FILL else _causal_offset(mask)
            if (
                offset is not None
                and guard is not None
                and _guards_bias(guard.operands[0], mask)
                and prove_le(0, offset)
            ):
                guard = None  # a causal row over at least as many keys as queries always sees a key
            with ir.InsertionPoint(op), op.location:
                fused = attention(
                    found["q"],
                    found["kt"],
                    found["v"],
                    None if offset is not None else mask,
                    found["scale"],
                    found["fill"],
                    offset is not None,
                    loc=op.location,
                )
                # the guard's rows attend nothing: their weights, and so their outputs, are 0
                y = fused if guard is None else where(guard.operands[0], guard.operands[1], fused)
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

"""ONNX NonMaxSuppression, vectorized over batches and classes and unrolled over the (static) box count.

Every pair of boxes gets its "suppresses" flag at once (IoU above the threshold, with ONNX's reference
rules for empty intersections and degenerate boxes). The boxes of each (batch, class) are ranked by score
(``topk``: ties keep the lower index first); the greedy pass then walks the ranks: rank r is selected when
its score passes the threshold, fewer than ``max_output_boxes_per_class`` are selected, and no selected
box of a better rank suppresses it. The selected (batch, class, rank) triples come out of ``nonzero`` in
batch, class, rank order (the output's order); the rank becomes the box index. The thresholds and the
output limit may be graph inputs (read at run time).
"""

from __future__ import annotations

import numpy as np
from mlir import ir

from relax_mlir.dialects import relax as R
from relax_mlir.dialects.types import TensorType
from relax_mlir.frontend.onnx.registry import ConversionError, NodeContext, Out, converter, known_dims
from relax_mlir.shape_infer.expr import const, format_dim

MAX_BOXES = 64  # the greedy pass is unrolled: a few ops per box (16 boxes compile in ~25 s)


def _scalar(ctx: NodeContext, i: int, dtype: str) -> ir.Value | None:
    if not ctx.has(i):
        return None
    v = ctx.x(i)
    if ctx.dtype(i) != dtype:
        v = R.astype(v, dtype)
    return R.reshape(v, [])


def _c(value: float, dtype: str = "f32") -> ir.Value:
    return R.constant(np.array(value, dtype=np.float32 if dtype == "f32" else np.int64))


def _corners(boxes: ir.Value, center: bool) -> list[ir.Value]:
    """x_min, x_max, y_min, y_max of each box, (B, N) each."""
    coords = [R.squeeze(R.strided_slice(boxes, [2], [j], [j + 1], [1]), [2]) for j in range(4)]
    if center:
        xc, yc, w, h = coords
        hw, hh = R.divide(w, _c(2.0)), R.divide(h, _c(2.0))
        return [R.subtract(xc, hw), R.add(xc, hw), R.subtract(yc, hh), R.add(yc, hh)]
    y1, x1, y2, x2 = coords
    return [R.minimum(x1, x2), R.maximum(x1, x2), R.minimum(y1, y2), R.maximum(y1, y2)]


def _suppresses(corners: list[ir.Value], iou: ir.Value) -> ir.Value:
    """(B, N, N): box i and box j overlap with an IoU above ``iou`` (ONNX's reference rules)."""
    xmin, xmax, ymin, ymax = corners
    rows = [R.expand_dims(c, [2]) for c in corners]  # box i
    cols = [R.expand_dims(c, [1]) for c in corners]  # box j
    w = R.subtract(R.minimum(rows[1], cols[1]), R.maximum(rows[0], cols[0]))
    h = R.subtract(R.minimum(rows[3], cols[3]), R.maximum(rows[2], cols[2]))
    inter = R.multiply(w, h)
    area = R.multiply(R.subtract(xmax, xmin), R.subtract(ymax, ymin))
    a_i, a_j = R.expand_dims(area, [2]), R.expand_dims(area, [1])
    union = R.subtract(R.add(a_i, a_j), inter)
    zero = _c(0.0)
    ok = R.logical_and(R.greater(w, zero), R.greater(h, zero))
    ok = R.logical_and(ok, R.logical_and(R.greater(inter, zero), R.greater(union, zero)))
    ok = R.logical_and(ok, R.logical_and(R.greater(a_i, zero), R.greater(a_j, zero)))
    ratio = R.divide(inter, R.where(ok, union, _c(1.0)))
    return R.logical_and(ok, R.greater(ratio, iou))


@converter("NonMaxSuppression")
def _nms(ctx: NodeContext) -> list[Out]:
    if ctx.rank(0) != 3 or ctx.rank(1) != 3:
        raise ConversionError(
            f"boxes must be (B, N, 4) and scores (B, C, N), got ranks {ctx.rank(0)}, {ctx.rank(1)}"
        )
    batch, n, four = ctx.shape(0)
    _, classes, _ = ctx.shape(1)
    if four is None or four != 4 or n is None or not n.is_const:
        raise ConversionError(f"boxes must be (B, N, 4) with N known at import time, got {ctx.shape(0)}")
    count = n.value
    if count > MAX_BOXES:
        raise ConversionError(f"{count} boxes are more than the supported {MAX_BOXES}")
    limit = _scalar(ctx, 2, "i64")
    if limit is None or count == 0:  # no limit given: ONNX selects nothing
        return [R.full([0, 3], 0, "i64")]
    boxes, scores = R.astype(ctx.x(0), "f32"), R.astype(ctx.x(1), "f32")
    iou = _scalar(ctx, 3, "f32")
    suppress = _suppresses(
        _corners(boxes, bool(ctx.attr("center_point_box", 0))), _c(0.0) if iou is None else iou
    )
    ranked, order = R.topk(scores, count, -1, True)  # (B, C, N): box index of each rank
    threshold = _scalar(ctx, 4, "f32")
    candidate = R.greater(ranked, threshold) if threshold is not None else None
    # pairs in rank order: sup[b, c, r, q] = suppress[b, order[r], order[q]]
    b, c = format_dim(batch), format_dim(classes)
    by_rank = R.broadcast_to(R.expand_dims(suppress, [1]), [b, c, count, count])
    rows = R.broadcast_to(R.expand_dims(order, [3]), [b, c, count, count])
    cols = R.broadcast_to(R.expand_dims(order, [2]), [b, c, count, count])
    sup = R.gather_elements(R.gather_elements(by_rank, rows, 2), cols, 3)
    # the greedy pass, elementwise only (it fuses): blocked[b, c, r] = a selected better rank suppresses r
    blocked = R.full([b, c, count], 0, "i1")
    chosen = R.full([b, c], 0, "i64")
    takes = []
    for r in range(count):
        take = R.logical_and(
            R.logical_not(R.squeeze(R.strided_slice(blocked, [2], [r], [r + 1], [1]), [2])),
            R.less(chosen, limit),
        )
        if candidate is not None:
            take = R.logical_and(take, R.squeeze(R.strided_slice(candidate, [2], [r], [r + 1], [1]), [2]))
        chosen = R.add(chosen, R.astype(take, "i64"))
        column = R.squeeze(R.strided_slice(sup, [3], [r], [r + 1], [1]), [3])  # ranks that r suppresses
        blocked = R.logical_or(blocked, R.logical_and(R.expand_dims(take, [2]), column))
        takes.append(R.expand_dims(take, [2]))
    selected = takes[0] if count == 1 else R.concat(takes, 2)
    found = R.nonzero(selected)  # (3, K): batch, class, rank
    (k,) = ctx.importer.fresh_symbols(f"{ctx.node.output[0]}_count", 1)
    found = R.match_cast(found, TensorType((const(3), k), "i64"))
    kk = format_dim(k)
    bi, ci, ri = (R.reshape(R.strided_slice(found, [0], [j], [j + 1], [1]), [kk]) for j in range(3))
    flat = R.add(
        R.multiply(
            R.add(R.multiply(bi, ctx.value_of(known_dims([classes], shape=()))), ci), _c(count, "i64")
        ),
        ri,
    )
    box = R.take(R.reshape(order, [-1]), flat, 0)
    return [R.permute_dims(R.concat([R.expand_dims(v, [0]) for v in (bi, ci, box)], 0), [1, 0])]

"""ONNX linear-algebra ops beyond MatMul: Det.

Det is Gaussian elimination with partial pivoting, unrolled over the (static) matrix size and vectorized
over the batch dims: step k picks the row of largest |a[i, k]| (i >= k), swaps it into row k (flipping the
sign), multiplies the determinant by the pivot and eliminates column k below it. It runs in f64 and
rounds once to the input dtype; a zero pivot makes the determinant 0 (the division is guarded).
"""

from __future__ import annotations

import numpy as np
from mlir import ir

from relax_mlir.dialects import relax as R
from relax_mlir.dialects.types import TensorType, relax_type
from relax_mlir.frontend.onnx.registry import ConversionError, NodeContext, Out, converter
from relax_mlir.shape_infer.expr import format_dim

MAX_DET_SIZE = 64  # the elimination is unrolled: one step of a few ops per row


@converter("Det")
def _det(ctx: NodeContext) -> list[Out]:
    shape = ctx.shape(0)
    if len(shape) < 2:
        raise ConversionError(f"the input must be (..., M, M), got rank {len(shape)}")
    m, m2 = shape[-2], shape[-1]
    if m is None or not m.is_const or m != m2:
        raise ConversionError(f"the matrices must be square of a size known at import time, got {shape[-2:]}")
    size = m.value
    if size > MAX_DET_SIZE:
        raise ConversionError(f"matrices of size {size} are larger than the supported {MAX_DET_SIZE}")
    batch = [format_dim(d) for d in shape[:-2]]
    dtype = ctx.dtype(0)
    a = R.reshape(R.astype(ctx.x(0), "f64"), [-1, size, size])  # (B, M, M)
    det = R.full([1], 1.0, "f64")
    rows = R.arange(0, size, 1, "i64")  # (M,)
    zero, one = R.constant(np.array(0.0)), R.constant(np.array(1.0))
    for k in range(size):
        col = R.strided_slice(a, [1, 2], [k, k], [size, k + 1], [1, 1])  # (B, M - k, 1)
        p = R.add(R.argmax(R.abs(col), 1, False), R.constant(np.array([k], np.int64)))  # (B, 1)
        kk = R.constant(np.array(k, np.int64))
        # rows k and p swapped: index[b, i] = p if i == k, k if i == p, else i
        index = R.where(R.equal(rows, kk), p, R.where(R.equal(rows, p), kk, rows))  # (B, M)
        a = R.gather_elements(a, R.broadcast_to(R.expand_dims(index, [2]), _spell(a)), 1)
        swapped = R.not_equal(R.reshape(p, [-1]), kk)
        pivot = R.reshape(R.strided_slice(a, [1, 2], [k, k], [k + 1, k + 1], [1, 1]), [-1])  # (B,)
        det = R.multiply(det, R.where(swapped, R.neg(pivot), pivot))
        if k + 1 == size:
            break
        safe = R.where(R.equal(pivot, zero), one, pivot)
        below = R.greater(rows, kk)  # only rows under the pivot are eliminated
        factors = R.divide(R.strided_slice(a, [2], [k], [k + 1], [1]), R.reshape(safe, [-1, 1, 1]))
        factors = R.where(R.reshape(below, [1, size, 1]), factors, zero)  # (B, M, 1)
        pivot_row = R.strided_slice(a, [1], [k], [k + 1], [1])  # (B, 1, M)
        a = R.subtract(a, R.multiply(factors, pivot_row))
    return [R.astype(R.reshape(det, batch), dtype)]


def _spell(v: ir.Value) -> list[int | str]:
    t = relax_type(v.type)
    assert isinstance(t, TensorType) and t.shape is not None
    return [format_dim(d) for d in t.shape]

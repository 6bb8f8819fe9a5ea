"""ONNX signal ops: the window functions HannWindow, HammingWindow, BlackmanWindow.

A window is ``a0 - a1 cos(2 pi n / D) + a2 cos(4 pi n / D)`` over ``n = 0 .. size - 1``, with ``D = size``
(periodic, the default) or ``size - 1`` (symmetric), computed in f64 and rounded once to
``output_datatype``. ``size`` may be known only at run time: the length is then a fresh symbol.
"""

from __future__ import annotations

import math

import numpy as np
import onnx

from relax_mlir.dialects import relax as R
from relax_mlir.frontend.onnx.registry import (
    ConversionError,
    NodeContext,
    Out,
    converter,
    known_dims,
    relax_dtype,
)
from relax_mlir.shape_infer.expr import Expr, const, format_dim

# op -> (a0, a1, a2)
WINDOWS = {
    "HannWindow": (0.5, 0.5, 0.0),
    "HammingWindow": (25.0 / 46.0, 21.0 / 46.0, 0.0),
    "BlackmanWindow": (0.42, 0.5, 0.08),
}


def scalar_dim(ctx: NodeContext, i: int, what: str) -> Expr:
    """Scalar (or one-element) integer input ``i`` as a dim: its value when known at import time, else a
    fresh symbol bound at run time."""
    exprs = ctx.exprs(i)
    if exprs is not None:
        if exprs.size != 1:
            raise ConversionError(f"'{what}' must hold one value, got {exprs.size}")
        return exprs.reshape(-1)[0]
    x = ctx.x(i)
    if ctx.dtype(i) != "i64":
        x = R.astype(x, "i64")
    (d,) = ctx.importer.runtime_dims(R.reshape(x, [1]), f"{ctx.node.output[0]}_{what}")
    return d


@converter(*WINDOWS)
def _window(ctx: NodeContext) -> list[Out]:
    a0, a1, a2 = WINDOWS[ctx.node.op_type]
    dtype = relax_dtype(ctx.attr("output_datatype", onnx.TensorProto.FLOAT), "attribute 'output_datatype'")
    size = scalar_dim(ctx, 0, "size")
    if size.is_const and size.value < 0:
        raise ConversionError(f"'size' must be >= 0, got {size.value}")
    denominator = size if ctx.attr("periodic", 1) else size - const(1)
    n = R.arange(0, format_dim(size), 1, "f64")
    d = R.astype(ctx.value_of(known_dims([denominator])), "f64")
    phase = R.divide(R.multiply(n, R.constant(np.array(2 * math.pi))), R.reshape(d, []))
    w = R.subtract(R.constant(np.array(a0)), R.multiply(R.constant(np.array(a1)), R.cos(phase)))
    if a2:
        w = R.add(
            w, R.multiply(R.constant(np.array(a2)), R.cos(R.multiply(phase, R.constant(np.array(2.0)))))
        )
    return [w if dtype == "f64" else R.astype(w, dtype)]

"""``relax-fold-batch-norm``: fold an inference ``batch_norm`` with constant statistics into the
convolution before it (ONNX Runtime's Conv+BatchNormalization fusion, TVM's ``FoldScaleAxis``).

``batch_norm(conv(x, W) [+ b], gamma, beta, mean, var)`` along the channel axis, with ``W``, ``b`` and the
four statistics computed from constants only, becomes ``conv(x, W * s) + shift`` with
``s = gamma * rsqrt(var + epsilon)`` per output channel and ``shift = (b - mean) * s + beta`` (``b`` = 0
when absent). The new weight and shift are relax ops on constants, which ``relax-fold-constants`` (run
next) evaluates: the kernel then keeps only the bias add, and the per-row ``rsqrt`` and the three other
operations per element of the normalization disappear. Like every such fold it rounds differently from
the unfolded graph (the product ``W * s`` is rounded once), so it runs from ``relax-O2``. The convolution
(and the bias add) must have no other use, and the weight at most ``MAX_ELEMENTS`` elements,
``relax-fold-constants``' default limit (a larger weight would be rescaled on every call).
"""

from __future__ import annotations

import numpy as np
from mlir import ir

from relax_mlir.dialects import relax as R
from relax_mlir.dialects.dims import normalize_axis
from relax_mlir.dialects.ops.conv import ConvOp
from relax_mlir.dialects.ops.nn import BatchNormOp
from relax_mlir.dialects.types import NUMPY_DTYPES, TensorType, relax_type
from relax_mlir.transforms.fold_constants import MAX_ELEMENTS
from relax_mlir.transforms.registry import register_pass
from relax_mlir.transforms.relax_ir import (
    erase_dead_producers,
    functions,
    is_pure,
    relax_class,
    replace_op,
    single_use,
    walk_relax_ops,
)

MAX_DEPTH = 8  # producer ops followed back to relax.constant


def _constant_derived(v: ir.Value, depth: int = MAX_DEPTH) -> bool:
    """Whether ``v`` is computed by pure ops from ``relax.constant`` values only."""
    if not isinstance(v, ir.OpResult):
        return False
    op = v.owner.operation
    if op.name == "relax.constant":
        return True
    operands = list(op.operands)
    return (
        depth > 0
        and bool(operands)
        and is_pure(op)
        and all(_constant_derived(o, depth - 1) for o in operands)
    )


def _conv_of(v: ir.Value) -> ir.Operation | None:
    """The convolution producing ``v``, if ``v`` is its only use and its weight is constant."""
    if not isinstance(v, ir.OpResult) or not single_use(v):
        return None
    op = v.owner.operation
    cls = relax_class(op)
    if cls is None or not issubclass(cls, ConvOp) or not _constant_derived(op.operands[1]):
        return None
    w = relax_type(op.operands[1].type)
    if not isinstance(w, TensorType) or w.shape is None or not all(d.is_const for d in w.shape):
        return None
    return op if int(np.prod([d.value for d in w.shape])) <= MAX_ELEMENTS else None


def _split_bias(y: ir.Value) -> tuple[ir.Operation, ir.Value | None] | None:
    """``(conv, b)`` for ``y = conv(...) + b`` (``b`` constant, ``y`` of the convolution's type) or
    ``(conv, None)`` for ``y = conv(...)``; None for anything else."""
    conv = _conv_of(y)
    if conv is not None:
        return conv, None
    if not isinstance(y, ir.OpResult) or not single_use(y) or y.owner.operation.name != "relax.add":
        return None
    add = y.owner.operation
    for a, b in (tuple(add.operands), tuple(add.operands)[::-1]):
        conv = _conv_of(a)
        if conv is not None and _constant_derived(b) and a.type == y.type:
            return conv, b
    return None


def _fold(bn: ir.Operation) -> bool:
    """Rewrite one ``batch_norm`` (see the module docstring); whether it was rewritten."""
    x, gamma, beta, mean, var = bn.operands
    t = relax_type(x.type)
    if not isinstance(t, TensorType) or t.shape is None or t.dtype not in NUMPY_DTYPES:
        return False
    rank = len(t.shape)
    if rank < 3 or normalize_axis(ir.IntegerAttr(bn.attributes["axis"]).value, rank) != 1:
        return False
    if not all(_constant_derived(p) for p in (gamma, beta, mean, var)):
        return False
    found = _split_bias(x)
    if found is None:
        return False
    conv, b = found
    epsilon = ir.FloatAttr(bn.attributes["epsilon"]).value
    ones = list(range(1, rank - 1))  # [C] -> [C, 1, ...]: per channel of [N, C, spatial...]
    with ir.InsertionPoint(bn), bn.location:
        eps = R.constant(np.array(epsilon, NUMPY_DTYPES[t.dtype]))
        scale = R.multiply(gamma, R.rsqrt(R.add(var, eps)))
        # per output channel of the OI<spatial> weight
        weight = R.multiply(conv.operands[1], R.expand_dims(scale, list(range(1, rank))))
        attrs = {name: conv.attributes[name] for name in conv.attributes}
        new = ir.Operation.create(
            conv.name, results=[conv.results[0].type], operands=[conv.operands[0], weight], attributes=attrs
        )
        if b is None:
            shift = R.expand_dims(R.subtract(beta, R.multiply(mean, scale)), ones)
        else:
            centered = R.subtract(b, R.expand_dims(mean, ones))
            shift = R.add(R.multiply(centered, R.expand_dims(scale, ones)), R.expand_dims(beta, ones))
        y = R.add(new.results[0], shift)
    replace_op(bn, [y])
    erase_dead_producers([x])
    return True


def fold_batch_norm(module: ir.Operation) -> int:
    """Fold every foldable ``batch_norm`` of ``module``; the number folded."""
    name = f"relax.{BatchNormOp.NAME}"
    return sum(
        _fold(op)
        for f in functions(module)
        for op in walk_relax_ops(f.regions[0].blocks[0])
        if op.name == name
    )


@register_pass("relax-fold-batch-norm")
class FoldBatchNorm:
    """Fold inference batch_norm with constant statistics into the preceding convolution's weight and bias."""

    def run(self, module: ir.Operation) -> None:
        fold_batch_norm(module)

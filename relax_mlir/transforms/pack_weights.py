"""``relax-pack-weights``: matmuls and convolutions by constant weights use weights packed at compile time.

A ``relax.matmul(x, W)`` with ``x`` [..., k] (rank >= 2) and ``W`` a 2-D f32 constant [k, n] (or a
``permute_dims`` of one, as ONNX ``Gemm(transB=1)`` gives) becomes ``relax.matmul_packed(x, P)`` with
``P`` [np, k, w] the column panels of ``W``, one vector wide (``w`` = 16 f32 for AVX-512's 512 bits, 4
for the 128 of wasm's SIMD128: option ``vector-bits``; ``n`` padded with zeros to a multiple of ``2 w``), computed
once at compile time: in numpy when the weight's bytes can be read (inline ``dense``, or a
``dense_resource`` blob read from bytecode), else as relax ops (``pad``, ``reshape``, ``permute_dims``)
evaluated like ``relax-fold-constants`` does. Packed weights stream from consecutive addresses
whatever ``n`` is, and the kernel (``transforms/schedules/packed_matmul.py``) never repacks them per call as BLAS
does. The pipelines run it before ``relax-dispatch-blas``, so constant weights get the packed kernel
and other matmuls are left to BLAS or the generated kernels. A weight that is a load-time parameter
(``relax.load_time_params``) is packed by the same relax ops, left in place for
``relax-lift-load-time-params`` to move to the load step (packed once when the program is loaded).

A ``relax.conv2d`` (one group, f32, static channels and image size) by a constant weight W [F, C, KH, KW]
with F a multiple of ``w`` becomes ``relax.conv2d_packed(x, P)``, P [F/w, C, KH, KW, w] the blocks of ``w``
output channels, whose kernel has vectors along the output channels (``conv_kernels.packed_conv``; measured
on AMD Zen 4, 1 thread: 0.88-0.97x ONNX Runtime's time for 3x3 convolutions of 16-128 channels, against
0.99-1.09x for the NCHW kernels). Not 1x1 ones of stride 1 without padding, whose pointwise kernel is faster,
nor ones of more than ``MAX_PACKED_TAPS`` taps per channel (the tile's loop body is unrolled). A 3x3 one of
stride 1 whose weight's numbers can be read (``_winograd``) becomes ``relax.conv2d_winograd`` on ``G W G^T``
[4, 4, F/w, C, w] instead (Winograd's F(2x2, 3x3): 0.59-0.74x ONNX Runtime's time for 16-64 channels on
16-57 pixel images, AMD Zen 4, 1 thread).
"""

from __future__ import annotations

import io

import numpy as np
from mlir import ir

from relax_mlir.dialects.dims import provably_different
from relax_mlir.dialects.ops.conv import Conv2dOp, conv2d_packed, conv2d_winograd
from relax_mlir.dialects.ops.conv_kernels import winograd_stack
from relax_mlir.dialects.ops.linear_algebra import matmul_packed
from relax_mlir.dialects.ops.manipulate import permute_dims, reshape
from relax_mlir.dialects.ops.pad import pad
from relax_mlir.dialects.ops.structural import constant
from relax_mlir.dialects.registry import is_resource_elements
from relax_mlir.dialects.resources import resource_blobs  # dense_resource blobs from bytecode, not text
from relax_mlir.dialects.types import TensorType, relax_type
from relax_mlir.errors import RelaxError
from relax_mlir.transforms.fold_constants import _Folder
from relax_mlir.transforms.registry import register_pass
from relax_mlir.transforms.relax_ir import erase_dead_producers, functions, walk_relax_ops
from relax_mlir.transforms.well_formed import load_time_names, param_names

VECTOR_BITS = 512  # default vector width: a panel is one AVX-512 vector of f32
WIDTH = VECTOR_BITS // 32  # columns per panel by default
ALIGN = 2  # panels: n is padded to a multiple of width * ALIGN (the kernel's register block)
MAX_PACKED_TAPS = 49  # taps per input channel of a packed convolution (7x7)
WINOGRAD_MIN_CHANNELS = (
    16  # input channels from which a 3x3 stride-1 convolution runs as Winograd F(2x2, 3x3)
)
# G of Winograd's F(2x2, 3x3) (Lavin and Gray): the weight transform G w G^T
WINOGRAD_G = np.array([[1.0, 0.0, 0.0], [0.5, 0.5, 0.5], [0.5, -0.5, 0.5], [0.0, 0.0, 1.0]])


def _tensor(v: ir.Value) -> TensorType | None:
    t = relax_type(v.type)
    return t if isinstance(t, TensorType) and t.shape is not None and t.dtype is not None else None


def _constant_weight(v: ir.Value, load_time: set[ir.Value]) -> bool:
    """``v`` is a relax.constant or a load-time parameter, or a ``permute_dims`` of one."""
    if v in load_time:
        return True
    if not isinstance(v, ir.OpResult):
        return False
    op = v.owner.operation
    if op.name == "relax.constant":
        return True
    return op.name == "relax.permute_dims" and _constant_weight(op.operands[0], load_time)


def _load_time(f: ir.Operation) -> set[ir.Value]:
    """The load-time parameters of ``f`` (``relax.load_time_params``)."""
    names = load_time_names(f) or []
    params = param_names(f)
    args = f.regions[0].blocks[0].arguments
    return {args[params.index(n)] for n in names if n in params}


def _packable(op: ir.Operation, load_time: set[ir.Value]) -> tuple[int, int] | None:
    """(k, n) when ``op`` multiplies by a constant (or load-time) 2-D f32 weight the packed kernel handles."""
    lhs, rhs = _tensor(op.operands[0]), _tensor(op.operands[1])
    if lhs is None or rhs is None or lhs.dtype != "f32" or rhs.dtype != "f32":
        return None
    assert lhs.shape is not None and rhs.shape is not None
    if len(lhs.shape) < 2 or len(rhs.shape) != 2 or not all(d is not None and d.is_const for d in rhs.shape):
        return None
    k, n = (d.value for d in rhs.shape)  # type: ignore[union-attr]
    if k == 0 or n == 0 or provably_different(lhs.shape[-1], rhs.shape[0]):
        return None
    if not _constant_weight(op.operands[1], load_time):
        return None
    return k, n


def _pack(w: ir.Value, k: int, n: int, width: int, loc: ir.Location) -> ir.Value:
    """Relax ops computing the panels [np, k, width] of ``w`` [k, n]."""
    step = width * ALIGN
    cols = -(-n // step) * step
    if cols != n:
        w = pad(w, [0, 0, 0, cols - n], loc=loc)
    return permute_dims(reshape(w, [k, cols // width, width], loc=loc), [1, 0, 2], loc=loc)


def _packable_conv(op: ir.Operation, load_time: set[ir.Value], width: int) -> bool:
    """Whether ``op`` is a ``relax.conv2d`` that ``conv2d_packed`` with blocks of ``width`` channels takes."""
    if op.name != "relax.conv2d":
        return False
    x, w = _tensor(op.operands[0]), _tensor(op.operands[1])
    if (
        x is None
        or w is None
        or x.dtype != "f32"
        or w.dtype != "f32"
        or len(x.shape) != 4
        or len(w.shape) != 4
    ):
        return False
    dims = (*x.shape[1:], *w.shape)
    if not all(d is not None and d.is_const and d.value > 0 for d in dims):
        return False
    attrs = Conv2dOp(op).attr_values()
    f, c, kh, kw = (d.value for d in w.shape)  # type: ignore[union-attr]
    pointwise = kh == kw == 1 and attrs["strides"] == [1, 1] and not any(attrs["padding"])
    if attrs["groups"] != 1 or f % width or c != x.shape[1].value or pointwise or kh * kw > MAX_PACKED_TAPS:
        return False
    return _constant_weight(op.operands[1], load_time)


def _winograd(op: ir.Operation, width: int) -> bool:
    """Whether packable convolution ``op`` runs as Winograd F(2x2, 3x3): 3x3, stride and dilation 1, at
    least ``WINOGRAD_MIN_CHANNELS`` input channels, and at least half of its groups of ``width`` tiles (2x2
    outputs) inside the output, or tile rows stacked into whole groups (``winograd_stack``). (A 7-wide
    output on AVX-512 has 4 tiles for a group of 16: the packed kernel is faster.)"""
    attrs = Conv2dOp(op).attr_values()
    _, c, kh, kw = (d.value for d in _tensor(op.operands[1]).shape)  # type: ignore[union-attr]
    oh, ow = (d.value for d in _tensor(op.results[0]).shape[2:])  # type: ignore[union-attr]
    tiles = -(-ow // 2)
    unit = attrs["strides"] == [1, 1] and attrs["dilation"] == [1, 1]
    full = 2 * tiles >= -(-tiles // width) * width or winograd_stack(oh, ow, width) > 1
    return unit and (kh, kw) == (3, 3) and c >= WINOGRAD_MIN_CHANNELS and full


def winograd_weight(w: np.ndarray, width: int) -> np.ndarray:
    """``G w G^T`` of each (output, input) channel pair of ``w`` [F, C, 3, 3] (in float64), as
    [4, 4, F/width, C, width]."""
    f, c = w.shape[:2]
    u = np.einsum("ai,fcij,bj->abfc", WINOGRAD_G, w.astype(np.float64), WINOGRAD_G)
    return np.ascontiguousarray(u.reshape(4, 4, f // width, width, c).transpose(0, 1, 2, 4, 3), np.float32)


def _pack_convs(f: ir.Operation, width: int, opt_level: int) -> int:
    """Rewrite the packable convolutions of function ``f`` into ``conv2d_winograd`` or ``conv2d_packed``; the
    number rewritten."""
    load_time = _load_time(f)
    ops = [op for op in walk_relax_ops(f.regions[0].blocks[0]) if _packable_conv(op, load_time, width)]
    arrays = _weights([op.operands[1] for op in ops])
    pending: list[ir.Value] = []
    total = 0
    for op in ops:
        weight = op.operands[1]
        f_out, c, kh, kw = (d.value for d in _tensor(weight).shape)  # type: ignore[union-attr]
        blocked = [f_out // width, width, c, kh, kw]
        with ir.InsertionPoint(op), op.location:
            array, p = arrays.get(weight), None
            attrs = Conv2dOp(op).attr_values()
            if array is not None and _winograd(op, width):  # (the transform needs the weight's numbers)
                y = conv2d_winograd(op.operands[0], constant(winograd_weight(array, width)), attrs["padding"])
            else:
                if array is not None:
                    p = constant(np.ascontiguousarray(array.reshape(blocked).transpose(0, 2, 3, 4, 1)))
                else:
                    p = permute_dims(reshape(weight, blocked), [0, 2, 3, 4, 1])
                    if not _depends_on(weight, load_time):  # a load-time weight is packed at load
                        pending.append(p)
                y = conv2d_packed(op.operands[0], p, attrs["strides"], attrs["padding"], attrs["dilation"])
        if not _replace(op, y, weight):
            pending = [v for v in pending if v != p]
            continue
        total += 1
    if pending:
        _evaluate(f, pending, opt_level)
    return total


def pack_weights(module: ir.Operation, opt_level: int = 3, vector_bits: int = VECTOR_BITS) -> int:
    """Rewrite every packable matmul and convolution of ``module`` with panels (blocks of channels) one
    ``vector_bits`` vector wide; the number rewritten."""
    if vector_bits < 32 or vector_bits % 32:
        raise RelaxError(f"vector-bits must be a positive multiple of 32, got {vector_bits}")
    width = vector_bits // 32
    total = 0
    for f in functions(module):
        total += _pack_convs(f, width, opt_level)
        ops = [op for op in walk_relax_ops(f.regions[0].blocks[0]) if op.name == "relax.matmul"]
        load_time = _load_time(f)
        ops = [(op, kn) for op in ops if (kn := _packable(op, load_time)) is not None]
        if not ops:
            continue
        arrays = _weights([op.operands[1] for op, _ in ops])
        pending: list[ir.Value] = []
        for op, (k, n) in ops:
            weight = op.operands[1]
            with ir.InsertionPoint(op), op.location:
                array = arrays.get(weight)
                if array is not None:
                    p = constant(_pack_array(array.reshape(k, n), width), loc=op.location)
                else:
                    p = _pack(weight, k, n, width, op.location)
                    if not _depends_on(weight, load_time):  # a load-time weight is packed at load
                        pending.append(p)
                y = matmul_packed(op.operands[0], p, n, loc=op.location)
            if not _replace(op, y, weight):
                pending = [v for v in pending if v != p]
                continue
            total += 1
        if pending:
            _evaluate(f, pending, opt_level)
    return total


def _replace(op: ir.Operation, y: ir.Value, weight: ir.Value) -> bool:
    """Replace ``op``'s result by ``y`` (the packed op) and drop the unpacked weight if unused, when ``y``'s
    deduced type is the result's as spelled; else erase ``y`` and return False."""
    if y.type != op.results[0].type:
        erase_dead_producers([y])
        return False
    op.results[0].replace_all_uses_with(y)
    op.erase()
    erase_dead_producers([weight])
    return True


def _depends_on(v: ir.Value, load_time: set[ir.Value]) -> bool:
    while (
        v not in load_time and isinstance(v, ir.OpResult) and v.owner.operation.name == "relax.permute_dims"
    ):
        v = v.owner.operation.operands[0]
    return v in load_time


def _pack_array(w: np.ndarray, width: int) -> np.ndarray:
    """``_pack`` in numpy."""
    k, n = w.shape
    step = width * ALIGN
    cols = -(-n // step) * step
    padded = np.zeros((k, cols), np.float32)
    padded[:, :n] = w
    return np.ascontiguousarray(padded.reshape(k, cols // width, width).transpose(1, 0, 2))


def _weights(values: list[ir.Value]) -> dict[ir.Value, np.ndarray]:
    """The data of the weights (constants, or ``permute_dims`` of constants) that can be read directly: inline
    ``dense`` values, and ``dense_resource`` blobs read from bytecode (``runtime/weights.py``); the others
    are packed by compiling relax ops on them (``_evaluate``)."""
    sources: dict[ir.Value, tuple[ir.Operation, list[int] | None]] = {}  # the constant, then its axes order
    for v in values:
        if not isinstance(v, ir.OpResult):
            continue  # a load-time parameter
        op, axes = v.owner.operation, None
        if op.name == "relax.permute_dims":
            attr = op.attributes["axes"]
            axes = [] if isinstance(attr, ir.UnitAttr) else [ir.IntegerAttr(a).value for a in attr]
            if not isinstance(op.operands[0], ir.OpResult):
                continue
            op = op.operands[0].owner.operation
        if op.name == "relax.constant":
            sources[v] = (op, axes)
    resources = [op for op, _ in sources.values() if is_resource_elements(op.attributes["value"])]
    blobs = _blobs(resources) if resources else {}
    arrays: dict[ir.Value, np.ndarray] = {}
    for v, (op, axes) in sources.items():
        attr = op.attributes["value"]
        shape = ir.ShapedType(attr.type).shape
        if is_resource_elements(attr):
            blob = blobs.get(str(attr).removeprefix("dense_resource<").split(">", 1)[0])
            if blob is None or len(blob) != 4 * int(np.prod(shape)):
                continue
            array = np.frombuffer(blob, np.float32).reshape(shape)
        elif (dense := ir.DenseFPElementsAttr(attr)).is_splat:
            array = np.full(shape, ir.FloatAttr(dense.get_splat_value()).value, np.float32)
        else:
            array = np.array(dense, np.float32).reshape(shape)
        # axes [] is permute_dims' default: all of them reversed
        arrays[v] = array if axes is None else array.transpose(axes or None)
    return arrays


def _blobs(ops: list[ir.Operation]) -> dict[str, memoryview]:
    """The blobs of ``dense_resource`` constants ``ops``, by name."""
    holder = ir.Module.create(loc=ir.Location.unknown())
    with ir.InsertionPoint(holder.body):
        for op in ops:
            holder.body.append(op.clone())
    buffer = io.BytesIO()
    holder.operation.write_bytecode(buffer)
    return resource_blobs(buffer.getvalue())


def _evaluate(f: ir.Operation, values: list[ir.Value], opt_level: int) -> None:
    """Replace ``values`` (relax ops on constants) by the constants they compute, compiled like
    ``relax-fold-constants`` does."""
    folder = _Folder(f, 1 << 62, opt_level)
    folder.collect()
    results = folder.evaluate(values)
    if results is None:
        raise RelaxError("relax-pack-weights: evaluating the packed weights failed")
    for v, r in zip(values, results):
        producer = v.owner.operation
        with ir.InsertionPoint(producer), producer.location:
            c = constant(np.ascontiguousarray(r, np.float32), loc=producer.location)
        v.replace_all_uses_with(c)
    erase_dead_producers(values)


@register_pass("relax-pack-weights")
class PackWeights:
    """Matmuls by constant 2-D f32 weights use weights packed into column panels at compile time, convolutions
    by constant weights blocks of output channels (or Winograd-transformed weights)."""

    opt_level: int = 3
    vector_bits: int = VECTOR_BITS

    def run(self, module: ir.Operation) -> None:
        pack_weights(module, self.opt_level, self.vector_bits)

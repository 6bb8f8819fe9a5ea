"""``relax-fuse-dequantize-matmul``: ``matmul(x, permute_dims(dequantize(d, s)))`` -> ``dequantize_matmul``.

A quantized linear layer (issue 20 contract §2) is ``x @ dequantize(data, scales).T``. Lowered op by op it
writes the whole f32 weight (4-8x the packed bytes) and reads it back; ``relax.dequantize_matmul`` reads
the packed weight once (``dialects/ops/dequantize_matmul.py``). The rewrite applies when ``x`` is f32,
the transpose swaps the two axes, ``data`` and ``scales`` have static dims (the kernel's chunks and panels
are sized at compile time) and the fused op's deduced type is the matmul's. The CPU pipelines run it at
O1+ before ``relax-fold-constants`` (which would otherwise dequantize constant weights into f32 ones).
Other targets keep ``relax.dequantize`` (an ordinary op) and the matmul. Option ``activations=i8`` gives the
fused ops that attribute: rows of ``x`` at decode (m <= 4) are quantized to int8 per group of 32 and
multiplied with VNNI dot products where the host has them (module docstring of the op).

Weights that are fixed once loaded (``data`` and ``scales`` both load-time parameters or constants) with
whole tiles (rows a multiple of 4, k of 64 for q8_0 and of 128 for the 4-bit layouts) are *tiled*: relax
ops (reshape, permute_dims) that ``relax-lift-load-time-params`` runs once at load (or constant folding at
compile time) interleave 4 rows by cache line (layout ``<layout>x4``, see the op), and the fused op reads
them so: a decode GEMV then streams the weight from consecutive addresses.
"""

from __future__ import annotations

from mlir import ir

from relax_mlir.dialects.ops.dequantize_matmul import (
    ACTIVATIONS,
    TILE_ROWS,
    can_tile,
    dequantize_matmul,
    piece,
    tile,
)
from relax_mlir.dialects.types import TensorType, relax_type
from relax_mlir.errors import PassError
from relax_mlir.transforms.registry import register_pass
from relax_mlir.transforms.relax_ir import erase_dead_producers, functions, walk_relax_ops
from relax_mlir.transforms.well_formed import load_time_names, param_names


def _producer(v: ir.Value, name: str) -> ir.Operation | None:
    if not isinstance(v, ir.OpResult):
        return None
    op = v.owner.operation
    return op if op.name == f"relax.{name}" else None


def _swaps_axes(op: ir.Operation) -> bool:
    """A ``permute_dims`` of a 2-D value that swaps its axes (default axes reverse them)."""
    axes = op.attributes["axes"] if "axes" in op.attributes else None
    return axes is None or isinstance(axes, ir.UnitAttr) or [ir.IntegerAttr(a).value for a in axes] == [1, 0]


def _static(v: ir.Value) -> bool:
    t = relax_type(v.type)
    return (
        isinstance(t, TensorType)
        and t.shape is not None
        and all(d is not None and d.is_const for d in t.shape)
    )


def _fusable(op: ir.Operation) -> tuple[ir.Operation, ir.Operation] | None:
    """(permute_dims, dequantize) when ``op`` (a relax.matmul) multiplies by a transposed dequantized weight."""
    x = relax_type(op.operands[0].type)
    if not isinstance(x, TensorType) or x.dtype != "f32":
        return None
    transpose = _producer(op.operands[1], "permute_dims")
    if transpose is None or not _swaps_axes(transpose):
        return None
    deq = _producer(transpose.operands[0], "dequantize")
    if deq is None or not all(_static(v) for v in deq.operands):
        return None
    return transpose, deq


def _load_time(f: ir.Operation) -> set[ir.Value]:
    """The load-time parameters of ``f`` (``relax.load_time_params``)."""
    names = load_time_names(f) or []
    params = param_names(f)
    args = f.regions[0].blocks[0].arguments
    return {args[params.index(n)] for n in names if n in params}


def _fixed(v: ir.Value, load_time: set[ir.Value]) -> bool:
    """``v`` is a load-time parameter or a relax.constant: tiling it costs nothing per call."""
    return v in load_time or (isinstance(v, ir.OpResult) and v.owner.operation.name == "relax.constant")


def _tiled(data: ir.Value, scales: ir.Value, layout: str) -> tuple[ir.Value, ir.Value, str] | None:
    """``data`` and ``scales`` in ``<layout>x4`` (relax ops that the load step or constant folding run once),
    when the weight has whole tiles."""
    t = relax_type(scales.type)
    assert isinstance(t, TensorType) and t.shape is not None
    rows, groups = (d.value for d in t.shape)  # type: ignore[union-attr]
    if not can_tile(layout, rows, groups):
        return None
    elements, per = piece(layout)
    return tile(data, elements), tile(scales, per), f"{layout}x{TILE_ROWS}"


def fuse_dequantize_matmul(module: ir.Operation, activations: str = "f32") -> int:
    """Rewrite every fusable matmul of ``module`` (``activations``: the fused ops' attribute); the number
    rewritten."""
    if activations not in ACTIVATIONS:
        raise PassError(
            f"relax-fuse-dequantize-matmul: activations must be one of {', '.join(ACTIVATIONS)}, "
            f"got {activations!r}"
        )
    total = 0
    for f in functions(module):
        load_time = _load_time(f)
        for op in walk_relax_ops(f.regions[0].blocks[0]):
            if op.name != "relax.matmul" or (found := _fusable(op)) is None:
                continue
            transpose, deq = found
            layout = ir.StringAttr(deq.attributes["layout"]).value
            with ir.InsertionPoint(op), op.location:
                x, (data, scales) = op.operands[0], deq.operands
                tiled = None
                if _fixed(data, load_time) and _fixed(scales, load_time):
                    tiled = _tiled(data, scales, layout)
                if tiled is not None:
                    data, scales, layout = tiled
                y = dequantize_matmul(x, data, scales, layout, activations, loc=op.location)
            if y.type != op.results[0].type:  # the deduced type must be the matmul's, as spelled
                erase_dead_producers([y])
                continue
            op.results[0].replace_all_uses_with(y)
            op.erase()
            erase_dead_producers([transpose.results[0]])
            total += 1
    return total


@register_pass("relax-fuse-dequantize-matmul")
class FuseDequantizeMatmul:
    """Matmuls by transposed dequantized weights become relax.dequantize_matmul (reads packed weights once)."""

    activations: str = "f32"  # "i8": decode rows use int8 dot products (llama.cpp's numerics), see the op

    def run(self, module: ir.Operation) -> None:
        fuse_dequantize_matmul(module, self.activations)

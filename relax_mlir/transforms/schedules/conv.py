"""Transform-dialect schedules for sliding-window kernels: pooling, named convolutions, direct convolutions.

Convolutions with static dims become im2col + matmul (the matmul schedule) or direct loops on vectors
(``dialects/ops/conv.py``), whose fused epilogues ``conv-vector`` vectorizes. The named ops here (pooling,
and convolutions with a symbolic dim or for GPU targets; NCHW, one window per output element) are tiled to
one output row segment of ``OW_TILE`` columns and one window row (``kh`` tile 1); the row-segment loop is peeled so main tiles are static;
``transform.structured.decompose`` turns each 2-D tile into a 1-D window op (unit ``oh`` and ``kh``),
which ``vectorize_linalg`` vectorizes along the output row (one FMA or max per
window column, on vectors of ``OW_TILE`` outputs; strided windows are unrolled per output). MLIR 22
decomposes pooling and ``conv_2d_nchw_fchw`` only: depthwise and grouped tiles, and tiles with a
dynamic size, stay (tiled) scalar loops. Windows of a static width above ``MAX_WINDOW_COLUMNS`` are not
taken (vectorizing unrolls a window row into one op per column: 2**31 columns never finished compiling).
"""

from __future__ import annotations

from mlir import ir

from relax_mlir.dialects.ops.conv_kernels import VECTOR_CONV_ATTR
from relax_mlir.transforms.schedules import (
    MARKER_ATTRS,
    VectorUnit,
    bound_vectors,
    register_schedule,
    vectorize_linalg,
)

OW_TILE = 8
# op -> tile sizes over its loops (in linalg's loop order): one output row segment, one window row
WINDOW_OPS = {
    "linalg.depthwise_conv_2d_nchw_chw": (1, 1, OW_TILE, 1, 1, 0),  # n, oh, ow, c, kh, kw
    "linalg.pooling_nchw_max": (1, 1, 1, OW_TILE, 1, 0),  # n, c, oh, ow, kh, kw
    "linalg.pooling_nchw_sum": (1, 1, 1, OW_TILE, 1, 0),
    "linalg.conv_2d_nchw_fchw": (1, 1, 1, OW_TILE, 1, 1, 0),  # n, f, oh, ow, c, kh, kw
    "linalg.conv_2d_ngchw_gfchw": (1, 1, 1, 1, OW_TILE, 1, 1, 0),  # n, g, f, oh, ow, c, kh, kw
}


MAX_WINDOW_COLUMNS = 64  # wider window rows stay loops (vectorizing unrolls one op per window column)
WINDOW_ATTR = "relax.window_schedule"  # on the window ops this schedule takes (``_mark_windows``)
MARKER_ATTRS.add(WINDOW_ATTR)


def _mark_windows(module: ir.Operation) -> None:
    """Mark the window ops this schedule takes: all but those whose window rows (the last dim of the window
    or filter operand) are static and wider than ``MAX_WINDOW_COLUMNS``."""

    def visit(op: ir.Operation) -> ir.WalkResult:
        if op.name in WINDOW_OPS and len(op.operands) >= 2:
            window = op.operands[1].type
            if isinstance(window, ir.ShapedType) and window.rank:
                width = window.shape[-1]
                if ir.ShapedType.is_dynamic_size(width) or width <= MAX_WINDOW_COLUMNS:
                    op.attributes[WINDOW_ATTR] = ir.UnitAttr.get()
        return ir.WalkResult.ADVANCE

    module.walk(visit, ir.WalkOrder.PRE_ORDER)


def _any(n: int) -> str:
    return ", ".join(["!transform.any_op"] * n)


def _schedule(op: str, tiles: tuple[int, ...], i: str) -> str:
    loops = sum(1 for t in tiles if t)
    ow = sum(1 for t in tiles[: tiles.index(OW_TILE)] if t)  # the ow loop's index among the tile loops
    return f"""
    %w{i} = transform.structured.match ops{{["{op}"]}} attributes{{{WINDOW_ATTR}}} in %root : (!transform.any_op) -> !transform.any_op
    transform.foreach %w{i} : !transform.any_op {{
    ^bb0(%op: !transform.any_op):
      %f = transform.get_parent_op %op {{isolated_from_above}} : (!transform.any_op) -> !transform.any_op
{bound_vectors()}      %t, %l:{loops} = transform.structured.tile_using_for %op tile_sizes {list(tiles)}
        : (!transform.any_op) -> ({_any(loops + 1)})
      %c = transform.cast %l#{ow} : !transform.any_op to !transform.op<"scf.for">
      transform.sequence %c : !transform.op<"scf.for"> failures(suppress) {{
      ^bb0(%loop: !transform.op<"scf.for">):
        %m, %r = transform.loop.peel %loop : (!transform.op<"scf.for">) -> ({_any(2)})
      }}
      transform.apply_patterns to %f {{
        transform.apply_patterns.scf.for_loop_canonicalization
        transform.apply_patterns.canonicalization
      }} : !transform.any_op
      %tiles = transform.structured.match ops{{["{op}"]}} in %f : (!transform.any_op) -> !transform.any_op
      transform.foreach %tiles : !transform.any_op {{
      ^bb0(%tile: !transform.any_op):
        transform.sequence %tile : !transform.any_op failures(suppress) {{
        ^bb0(%one: !transform.any_op):
          %d = transform.structured.decompose %one : (!transform.any_op) -> !transform.any_op
        }}
      }}
{vectorize_linalg()}      transform.apply_patterns to %fv {{
        transform.apply_patterns.canonicalization
      }} : !transform.any_op
    }}"""


@register_schedule("conv-window", ops=tuple(WINDOW_OPS), prepare=_mark_windows)
def window_schedule(suffix: str, unit: VectorUnit) -> str:
    """Every depthwise/grouped/symbolic-kernel conv and pooling: row-segment tiles, decomposed to 1-D, vectorized."""
    return "".join(_schedule(op, tiles, f"{suffix}_{j}") for j, (op, tiles) in enumerate(WINDOW_OPS.items()))


MARKER_ATTRS.add(VECTOR_CONV_ATTR)


@register_schedule("conv-vector", ops=("scf.forall",))
def vector_conv_schedule(suffix: str, unit: VectorUnit) -> str:
    """The kernels of direct (vector) convolutions: the linalg ops fused into them (bias, BatchNorm, ReLU,
    residual epilogues) tiled to rows and vectorized, as the matmul schedule does for im2col convolutions."""
    return f"""
    %dc{suffix} = transform.structured.match ops{{["scf.forall"]}} attributes{{{VECTOR_CONV_ATTR}}} in %root : (!transform.any_op) -> !transform.any_op
    transform.foreach %dc{suffix} : !transform.any_op {{
    ^bb0(%op: !transform.any_op):
      %f = transform.get_parent_op %op {{isolated_from_above}} : (!transform.any_op) -> !transform.any_op
{bound_vectors()}      transform.apply_patterns to %f {{
        transform.apply_patterns.scf.for_loop_canonicalization
        transform.apply_patterns.canonicalization
      }} : !transform.any_op
{vectorize_linalg()}      transform.apply_patterns to %fv {{
        transform.apply_patterns.canonicalization
      }} : !transform.any_op
    }}"""

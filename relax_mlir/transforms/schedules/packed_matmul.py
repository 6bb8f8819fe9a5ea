"""Transform-dialect schedule for the packed-weight matmul (``relax.matmul_packed``).

Its lowering (``dialects/ops/linear_algebra.py``) writes ``linalg.generic`` ops marked
``relax.packed_matmul``: ``"main"`` over row blocks ``x`` [m1, 8, k] x panels [np, k, nr] ->
[m1, 8, np, nr] (or ``"main-narrow"``, below), and ``"rest<b>"`` over blocks of ``b`` = 1..4 of the last ``m mod 8`` rows
(selected at run time). Panels are contiguous, so a register
block streams its weights from consecutive addresses whatever the row stride of ``W`` was, and both
ops have static inner dims whatever ``m`` is: nothing falls back to scalar code.

The lowering splits the product along its panels into chunks of one static size (``packed_chunk``: whole
register blocks where the panel count allows), all in one ``scf.forall``; the schedule tiles each chunk's ops.
Each op is blocked for the caches (rows x ``CACHE_COLUMNS`` columns x depth), then tiled into register
blocks (``VectorUnit.tile_rows`` rows, at most the 8 of a row block, x ``_main_panels`` panels for ``main``: 8 x 2 on
AVX-512, 4 x 3 with 16 registers; all ``r`` rows x ``_rest_panels`` panels for ``rest<r>``: 4 x 4 on AVX-512, so
each weight vector loaded feeds ``r`` FMAs and decoding a few tokens streams the weights once; a panel
is one vector wide, ``relax-pack-weights``) with the depth loop innermost; the panel loop is peeled (a cache block that is not a multiple of the register block);
unit dims are folded, the static blocks vectorized, the accumulators hoisted out of the depth loop,
and the products contracted to FMAs (``relax-fuse-multiply-add``). bench/bench_packed.py measures it.

A cache block's panels lie ``k`` rows apart; when that stride is a multiple of the L2's set period (k = 2048:
128 KB), the same depth of every panel falls in one L2 set, and 16 panels overflow its ways (512x2048x768 ran
at 55% of OpenBLAS on emeraldrapids, against 100% with 8 panels). ``mark_narrow_blocks`` (``prepare``)
marks those ops ``"main-narrow"``, tiled into cache blocks of half as many panels.
"""

from __future__ import annotations

from mlir import ir

from relax_mlir.dialects.ops.linear_algebra import PACKED_ATTR, PACKED_PANELS, PACKED_REST_ROWS, PACKED_ROWS
from relax_mlir.transforms.schedules import VectorUnit, register_schedule, vectorize_to_outer_products

ROW_BLOCKS = 8  # row blocks of 8 per cache block
CACHE_COLUMNS = 256  # columns per cache block (16 panels of 16 on AVX-512)
DEPTH = 1024  # depth per cache block
L2_SETS = 2048  # sets of a core's L2 cache: Golden Cove's 2 MB of 16 ways and Zen 4's 1 MB of 8 ways alike
LINE = 64  # bytes of a cache line
SET_SHARE = 8  # most lines of one L2 set a cache block may take (k = 1024 takes 8; 16 ways)
NARROW = "-narrow"  # suffix of the kind of a "main" op whose cache blocks hold half as many panels
PANELS = PACKED_PANELS  # panels per register block (main): tile_rows x 2 vectors of accumulators
# the contractions keep unit dims (one row, one panel): drop them before lowering to outer products
UNIT_DIM_PATTERNS = """
transform.apply_patterns.vector.cast_away_vector_leading_one_dim
transform.apply_patterns.vector.drop_unit_dims_with_shape_cast
"""


def set_share(depth: int, row_bytes: int, panels: int) -> int:
    """The most lines of one L2 set that a cache block of ``panels`` panels (each ``depth`` rows of
    ``row_bytes``, one after another) holds, over ``min(depth, DEPTH)`` rows of each panel."""
    starts = [0] * (L2_SETS + 1)  # panels starting (+1) and ending (-1) at each set, wrapping around
    span = min(depth, DEPTH) * row_bytes
    for p in range(panels):
        first, last = p * depth * row_bytes // LINE, (p * depth * row_bytes + span - 1) // LINE
        a, b = first % L2_SETS, last % L2_SETS
        starts[a] += 1
        starts[b + 1] -= 1
        if a > b:  # wraps past the last set
            starts[0] += 1
            starts[L2_SETS] -= 1
    most = covered = 0
    for step in starts[:L2_SETS]:
        covered += step
        most = max(most, covered)
    return most


def mark_narrow_blocks(module: ir.Operation) -> None:
    """Mark ``"main"`` ops whose cache block of ``CACHE_COLUMNS`` columns would take more than ``SET_SHARE``
    lines of an L2 set (``set_share``) ``"main-narrow"``."""

    def visit(op: ir.Operation) -> ir.WalkResult:
        if op.name != "linalg.generic" or PACKED_ATTR not in op.attributes:
            return ir.WalkResult.ADVANCE
        if ir.StringAttr(op.attributes[PACKED_ATTR]).value != "main":
            return ir.WalkResult.ADVANCE
        w = ir.RankedTensorType(op.operands[1].type)
        _, depth, width = w.shape
        row_bytes = width * w.element_type.width // 8
        if set_share(depth, row_bytes, max(PANELS, CACHE_COLUMNS // width)) > SET_SHARE:
            op.attributes[PACKED_ATTR] = ir.StringAttr.get("main" + NARROW)
        return ir.WalkResult.ADVANCE

    module.walk(visit, ir.WalkOrder.PRE_ORDER)


def _tile_type(loops: int) -> str:
    return f"(!transform.any_op) -> ({', '.join(['!transform.any_op'] * (loops + 1))})"


def _rows(unit: VectorUnit) -> int:
    """Rows of a ``main`` register block: 0 (the whole row block) when ``tile_rows`` covers it, else the
    largest divisor of the row block not above ``tile_rows``."""
    if unit.tile_rows >= PACKED_ROWS:
        return 0
    return max(d for d in range(1, unit.tile_rows + 1) if PACKED_ROWS % d == 0)


def _tile(kind: str, outer: list[int], inner: list[int], peel: int, s: str) -> str:
    """Tile the ops marked ``kind`` twice and peel inner loop ``peel`` (suppressed when nothing to peel)."""
    n1 = sum(1 for t in outer if t)
    n2 = sum(1 for t in inner if t)
    return f"""
    %{kind}{s} = transform.structured.match ops{{["linalg.generic"]}} attributes{{{PACKED_ATTR} = "{kind}"}} in %root : (!transform.any_op) -> !transform.any_op
    transform.foreach %{kind}{s} : !transform.any_op {{
    ^bb0(%op: !transform.any_op):
      %t1, %l1:{n1} = transform.structured.tile_using_for %op tile_sizes {outer} : {_tile_type(n1)}
      %t2, %l2:{n2} = transform.structured.tile_using_for %t1 tile_sizes {inner} : {_tile_type(n2)}
      %c = transform.cast %l2#{peel} : !transform.any_op to !transform.op<"scf.for">
      transform.sequence %c : !transform.op<"scf.for"> failures(suppress) {{
      ^bb1(%loop: !transform.op<"scf.for">):
        %main, %rest = transform.loop.peel %loop : (!transform.op<"scf.for">) -> (!transform.any_op, !transform.any_op)
      }}
    }}"""


def _main_panels(rows: int, unit: VectorUnit) -> int:
    """Panels of a ``main`` register block of ``rows`` rows (0: the whole row block): ``PANELS`` (8 x 2 on
    AVX-512), but with wide tiles and fewer registers than a row block's accumulators need, as many as fit
    beside one broadcast: 4 x 3 with AVX2's 16 (12 accumulators, 3 weight vectors; Zen 3, 1 thread: 1.1-1.5x
    the speed of 4 x 2 at 64-512 rows, whose 8 accumulators just cover 2 FMA units of 4 cycles' latency).
    wasm's SIMD128 keeps 4 x 2: its engine needs a spare register (4 x 3 ran at half the speed in wasmtime)."""
    if not rows or not unit.wide_tiles:
        return PANELS
    return max(PANELS, (unit.registers - 1) // (rows + 1))


def _rest_panels(rows: int, unit: VectorUnit) -> int:
    """Panels of a ``rest<rows>`` register block: the most of 8, 4, 2, 1 (divisors of a cache block's tail,
    so no panel remainder) whose ``rows x panels`` accumulators, panel loads and one broadcast fit."""
    return next(p for p in (8, 4, 2, 1) if rows * p + p + 1 <= unit.registers or p == 1)


@register_schedule("packed_matmul", ops=("linalg.generic",), prepare=mark_narrow_blocks)
def packed_matmul_schedule(s: str, unit: VectorUnit) -> str:
    """The marked generics: cache blocks, peeled register blocks, vectorized to FMAs."""
    rows = _rows(unit)
    block = _main_panels(rows, unit)
    cache_panels = max(block, CACHE_COLUMNS // unit.lanes)
    peel = 2 if rows else 1  # the panel loop among the tiled loops
    main = "".join(
        _tile(kind, [ROW_BLOCKS, 0, panels, 0, DEPTH], [1, rows, block, 0, 1], peel, s)
        for kind, panels in (("main", cache_panels), ("main" + NARROW, max(block, cache_panels // 2)))
    )
    kinds = ["main", "main" + NARROW, *(f"rest{r}" for r in PACKED_REST_ROWS)]
    rest = "".join(
        _tile(f"rest{r}", [0, cache_panels, 0, DEPTH], [0, _rest_panels(r, unit), 0, 1], 0, s)
        for r in PACKED_REST_ROWS
    )
    matches = "".join(
        f"""
    %pk{i}{s} = transform.structured.match ops{{["linalg.generic"]}} attributes{{{PACKED_ATTR} = "{kind}"}} in %root : (!transform.any_op) -> !transform.any_op"""
        for i, kind in enumerate(kinds)
    )
    merged = ", ".join(f"%pk{i}{s}" for i in range(len(kinds)))
    return f"""{main}{rest}{matches}
    %pk{s} = transform.merge_handles {merged} : !transform.any_op
    %pf{s} = transform.get_parent_op %pk{s} {{isolated_from_above, deduplicate}} : (!transform.any_op) -> !transform.any_op
    transform.foreach %pf{s} : !transform.any_op {{
    ^bb0(%f: !transform.any_op):
{vectorize_to_outer_products(UNIT_DIM_PATTERNS)}    }}"""

"""Transform-dialect schedule for matmul-like kernels: two levels of tiling, peeling, vectorization.

Every ``linalg.matmul`` is tiled to 128x128x256 blocks (rows rounded to whole register tiles), then to
register tiles of ``VectorUnit.matmul_rows`` rows of two vectors (8x32 on AVX-512, 12x32 on families with
wide tiles: the table ``CPU_FAMILIES``; 4x8 for SIMD128) whose loops over i and j are peeled so the main
tiles are static. The remainders get no scalar loops: the column remainder is split into tiles of one
vector, vectorized with masked loads and stores; the row remainder is split into single rows (a mask on
rows would read the lhs one guarded element at a time). The depth is tiled by 1 last, innermost; the
tiles are vectorized, the accumulator tile is hoisted out of the k loop (also a masked one), and
contractions become outer products (FMAs; measured against 256x256x512 / 8x16, 6x32 and other blocks in
one process: the 8x32 tile is 1.4-2x faster at 16x512x2048 and odd sizes, equal or better elsewhere).
``linalg.batch_matmul`` (attention) gets 256x256x512 blocks of 8x16 tiles (rows of one vector) with a batch tile of 1:
its n is often 16-64 (heads of 64, short sequences), where a 32-wide tile leaves more to the remainder.
Dynamic dims stay dynamic. bench/bench_matmul.py measures it (127x255x129: 57% of numpy with scalar
remainders, 89% with masked ones, on Zen 4)."""

from __future__ import annotations

from relax_mlir.transforms.schedules import (
    VectorUnit,
    masked_vectorize,
    register_schedule,
    vectorize_to_outer_products,
)

# (op, outer tile sizes); the dims are [batch..., m, n, k]
MATMUL_LIKE = (
    ("linalg.matmul", (128, 128, 256)),
    ("linalg.batch_matmul", (1, 256, 256, 512)),
)


def register_tile(op: str, unit: VectorUnit) -> tuple[int, ...]:
    """The register tile of ``op`` on ``unit``: ``matmul_rows`` rows of two vectors (matmul) or of one
    (batch_matmul, whose n is often a head size of 64 or less): (8, 32, 1) and (1, 8, 16, 1) on AVX-512,
    12 rows on families with wide tiles (``CPU_FAMILIES``)."""
    if op == "linalg.batch_matmul":
        return (1, unit.matmul_rows, unit.lanes, 1)
    return (unit.matmul_rows, 2 * unit.lanes, 1)


def remainder_tiles(op: str, unit: VectorUnit) -> list[tuple[int, ...]]:
    """The masked vector tiles of ``op``'s peeled remainders, tried in order: one row (the row remainder)
    and the register tile's rows (the column remainder), each with columns of one vector, so an odd ``n``
    wastes less than a vector of lanes (129 columns: 4 x 32 + 16, not 5 x 32)."""
    tile = register_tile(op, unit)
    return [(*tile[:-3], 1, unit.lanes, 1), (*tile[:-2], unit.lanes, 1)]


def _any(n: int) -> str:
    return ", ".join(["!transform.any_op"] * n)


def _tile_type(loops: int) -> str:
    return f"(!transform.any_op) -> ({_any(loops + 1)})"


def _peel(loop: str, op: str, split: list[int], name: str) -> str:
    """Peel ``loop`` and tile the ``op`` in its remainder by ``split`` (none when all zero). A loop whose
    trip count is a static multiple of the tile has nothing to peel: that failure is suppressed."""
    tile = (
        f"""
        transform.foreach %r : !transform.any_op {{
        ^bb0(%{name}r: !transform.any_op):
          %{name}o = transform.structured.match ops{{["{op}"]}} in %{name}r : (!transform.any_op) -> !transform.any_op
          transform.foreach %{name}o : !transform.any_op {{
          ^bb0(%{name}x: !transform.any_op):
            %{name}t, %{name}l = transform.structured.tile_using_for %{name}x tile_sizes {split} : {_tile_type(1)}
          }}
        }}"""
        if any(split)
        else ""
    )
    return f"""      %{name} = transform.cast {loop} : !transform.any_op to !transform.op<"scf.for">
      transform.sequence %{name} : !transform.op<"scf.for"> failures(suppress) {{
      ^bb0(%loop: !transform.op<"scf.for">):
        %m, %r = transform.loop.peel %loop : (!transform.op<"scf.for">) -> ({_any(2)}){tile}
      }}
"""


def _schedule(op: str, outer: tuple[int, ...], unit: VectorUnit, i: str) -> str:
    """Tile ``op`` to cache blocks, then to register blocks over m and n; peel the column loop (its
    remainder split into tiles of one vector) and the row loop (its remainder split into single rows, so
    no tile masks rows: a masked row read would be a branch per row); then tile the depth by 1, innermost.
    The static blocks are vectorized as they are, the remainders with masks on the columns."""
    inner = register_tile(op, unit)
    n = len(outer)
    rows, cols = n - 3, n - 2
    # cache blocks of whole register tiles: a block's own row remainder would run as single rows
    outer = tuple(max(t, round(b / t) * t) if d == rows else b for d, (b, t) in enumerate(zip(outer, inner)))
    blocks = [*inner[:-1], 0]
    depth = [0] * (n - 1) + [inner[-1]]
    col_split = [0] * (n - 1)
    col_split[cols] = unit.lanes if inner[cols] > unit.lanes else 0
    row_split = [0] * (n - 1)
    row_split[rows] = 1 if inner[rows] > 1 else 0
    peels = _peel(f"%l{i}b#{cols}", op, col_split, f"pc{i}") + _peel(
        f"%l{i}b#{rows}", op, row_split, f"pr{i}"
    )
    masked = "".join(
        masked_vectorize(op, sizes, tag=str(j)) for j, sizes in enumerate(remainder_tiles(op, unit))
    )
    # Every op is tiled first, then each function holding one is vectorized once: vectorizing (and
    # canonicalizing) a function while other matched ops of it wait would free those ops when patterns
    # rewrite them (two static matmuls in one kernel, as in attention's blocks: a use after free).
    return f"""
    %ops{i} = transform.structured.match ops{{["{op}"]}} in %root : (!transform.any_op) -> !transform.any_op
    %fs{i} = transform.get_parent_op %ops{i} {{deduplicate, isolated_from_above}} : (!transform.any_op) -> !transform.any_op
    transform.foreach %ops{i} : !transform.any_op {{
    ^bb0(%op: !transform.any_op):
      %t{i}a, %l{i}a:{n} = transform.structured.tile_using_for %op tile_sizes {list(outer)} : {_tile_type(n)}
      %t{i}b, %l{i}b:{n - 1} = transform.structured.tile_using_for %t{i}a tile_sizes {blocks} : {_tile_type(n - 1)}
{peels}    }}
    transform.foreach %fs{i} : !transform.any_op {{
    ^bb0(%f: !transform.any_op):
      %k{i} = transform.structured.match ops{{["{op}"]}} in %f : (!transform.any_op) -> !transform.any_op
      transform.foreach %k{i} : !transform.any_op {{
      ^bb0(%k{i}x: !transform.any_op):
        %k{i}t, %k{i}l = transform.structured.tile_using_for %k{i}x tile_sizes {depth} : {_tile_type(1)}
      }}
{vectorize_to_outer_products(masked=masked)}    }}"""


@register_schedule("matmul", ops=tuple(op for op, *_ in MATMUL_LIKE))
def matmul_schedule(suffix: str, unit: VectorUnit) -> str:
    """Every linalg.matmul and linalg.batch_matmul: tiled, peeled, vectorized to outer products."""
    return "".join(_schedule(op, outer, unit, f"{suffix}_{i}") for i, (op, outer) in enumerate(MATMUL_LIKE))

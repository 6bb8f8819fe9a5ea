"""Transform-dialect schedule for matmul-like kernels: two levels of tiling, peeling, vectorization.

Every ``linalg.matmul`` is tiled to 128x128x256 blocks, then to 8x32x1 register tiles (on AVX-512; in
general ``VectorUnit.tile_rows`` rows of two vectors: 4x8 for SIMD128) whose loops
over i and j are peeled so the main tiles are static; the static tiles are vectorized, the
accumulator tile is hoisted out of the k loop, and contractions become outer products (FMAs on
8 x 2 AVX-512 registers; measured against 256x256x512 / 8x16, 6x32 and other blocks in one process:
the 8x32 tile is 1.4-2x faster at 16x512x2048 and odd sizes, equal or better elsewhere).
``linalg.batch_matmul`` (attention) gets 256x256x512 blocks of 8x16 tiles (rows of one vector) with a batch tile of 1:
its n is often 16-64 (heads of 64, short sequences), where a 32-wide tile leaves everything to the
scalar remainder (8x16x64x16: 41% of numpy with 8x16, 19% with 8x32).
Dynamic dims stay dynamic: the peeled remainders handle edges. bench/bench_matmul.py measures it.
"""

from __future__ import annotations

from relax_mlir.transforms.schedules import VectorUnit, register_schedule, vectorize_to_outer_products

# (op, outer tile sizes, indices of the register loops to peel, innermost first)
MATMUL_LIKE = (
    ("linalg.matmul", (128, 128, 256), (1, 0)),
    ("linalg.batch_matmul", (1, 256, 256, 512), (2, 1)),
)


def register_tile(op: str, unit: VectorUnit) -> tuple[int, ...]:
    """The register tile of ``op`` on ``unit``: ``tile_rows`` rows of two vectors (matmul) or of one
    (batch_matmul, whose n is often a head size of 64 or less): (8, 32, 1) and (1, 8, 16, 1) on AVX-512."""
    if op == "linalg.batch_matmul":
        return (1, unit.tile_rows, unit.lanes, 1)
    return (unit.tile_rows, 2 * unit.lanes, 1)


def _any(n: int) -> str:
    return ", ".join(["!transform.any_op"] * n)


def _schedule(op: str, outer: tuple[int, ...], inner: tuple[int, ...], peel: tuple[int, ...], i: str) -> str:
    n = len(outer)
    tile_type = f"(!transform.any_op) -> ({_any(n + 1)})"
    # A loop whose trip count is a static multiple of the tile has nothing to peel: suppress that failure.
    peels = "\n".join(
        f"""      %c{i}_{p} = transform.cast %l{i}b#{p} : !transform.any_op to !transform.op<"scf.for">
      transform.sequence %c{i}_{p} : !transform.op<"scf.for"> failures(suppress) {{
      ^bb0(%loop: !transform.op<"scf.for">):
        %m, %r = transform.loop.peel %loop : (!transform.op<"scf.for">) -> ({_any(2)})
      }}"""
        for p in peel
    )
    # Every op is tiled first, then each function holding one is vectorized once: vectorizing (and
    # canonicalizing) a function while other matched ops of it wait would free those ops when patterns
    # rewrite them (two static matmuls in one kernel, as in attention's blocks: a use after free).
    return f"""
    %ops{i} = transform.structured.match ops{{["{op}"]}} in %root : (!transform.any_op) -> !transform.any_op
    %fs{i} = transform.get_parent_op %ops{i} {{deduplicate, isolated_from_above}} : (!transform.any_op) -> !transform.any_op
    transform.foreach %ops{i} : !transform.any_op {{
    ^bb0(%op: !transform.any_op):
      %t{i}a, %l{i}a:{n} = transform.structured.tile_using_for %op tile_sizes {list(outer)} : {tile_type}
      %t{i}b, %l{i}b:{n} = transform.structured.tile_using_for %t{i}a tile_sizes {list(inner)} : {tile_type}
{peels}
    }}
    transform.foreach %fs{i} : !transform.any_op {{
    ^bb0(%f: !transform.any_op):
{vectorize_to_outer_products()}    }}"""


@register_schedule("matmul", ops=tuple(op for op, *_ in MATMUL_LIKE))
def matmul_schedule(suffix: str, unit: VectorUnit) -> str:
    """Every linalg.matmul and linalg.batch_matmul: tiled, peeled, vectorized to outer products."""
    return "".join(
        _schedule(op, outer, register_tile(op, unit), peel, f"{suffix}_{i}")
        for i, (op, outer, peel) in enumerate(MATMUL_LIKE)
    )

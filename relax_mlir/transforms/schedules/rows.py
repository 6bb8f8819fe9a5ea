"""Row-wise fusion of reductions with their consumers: softmax, layer_norm, rms_norm and fused epilogues.

A kernel such as softmax (max, sum of exp, normalize) or layer_norm (mean, variance, normalize) is a
chain of ``linalg.generic`` ops that reduce the innermost dims and then map over the same rows. Lowered
op by op, every op streams the whole tensor through memory again. This schedule tiles each *root*
(the all-parallel generic whose result leaves the kernel) to one row (tile 1 on the leading dims the
reductions keep, the rest whole) and fuses every producer into that loop
(``transform.structured.fuse``): one pass over the input, and each row's statistics and temporaries
stay in L1. What feeds the root is recomputed per row only as far as the row needs it, so an elementwise
producer (the scale and mask before an attention softmax) is computed once per row and reused by
the max, the sum and the normalization. The loops are then vectorized by LLVM (reductions are marked
reassociable by ``relax-reassociate-reductions``, math is inline by ``relax-approximate-math``).

Which ops are roots is decided in ``mark_row_roots`` (``prepare``), where the IR is easy to inspect: a
kernel qualifies when all its reductions are "rows" (leading dims parallel, trailing dims reduced,
reading their inputs with identity-prefix maps, so not contractions that the matmul schedules own);
its roots get ``relax.row_tiles = [1, .., 1, 0, ..]``. Roots inside ``scf.forall`` (parallel
kernels) qualify like roots at the top of a function.
"""

from __future__ import annotations

from mlir import ir

from relax_mlir.transforms.schedules import VectorUnit, register_schedule

ROW_TILES = "relax.row_tiles"
MAX_RANK = 6
# users that make a generic's result leave its kernel (or its parallel tile)
ROOT_USERS = frozenset({"func.return", "tensor.parallel_insert_slice", "tensor.insert_slice", "scf.yield"})


def _results_of(affine_map: ir.Attribute) -> list[str]:
    text = str(ir.AffineMapAttr(affine_map).value)
    inner = text.split("->", 1)[1].strip()[1:-1].strip()
    return [r.strip() for r in inner.split(",")] if inner else []


def _is_prefix(results: list[str]) -> bool:
    return results == [f"d{i}" for i in range(len(results))]


def _iterators(op: ir.Operation) -> list[bool]:
    """True for each reduction iterator."""
    return ["reduction" in str(a) for a in ir.ArrayAttr(op.attributes["iterator_types"])]


def _row_reduction_kept(op: ir.Operation) -> int | None:
    """The number of leading parallel dims if ``op`` reduces trailing dims of row-shaped inputs, else None."""
    red = _iterators(op)
    kept = red.index(True)
    if not all(red[kept:]):
        return None
    maps = [_results_of(m) for m in ir.ArrayAttr(op.attributes["indexing_maps"])]
    if not all(_is_prefix(m) for m in maps):
        return None
    return kept


def _leaves_kernel(op: ir.Operation) -> bool:
    return any(use.owner.name in ROOT_USERS for r in op.results for use in r.uses)


def mark_row_roots(module: ir.Operation) -> None:
    """Mark the roots of kernels whose reductions are row reductions with ``relax.row_tiles``."""
    for func in module.regions[0].blocks[0].operations:
        if func.operation.name != "func.func":
            continue
        generics: list[ir.Operation] = []

        def visit(op: ir.Operation, found: list[ir.Operation] = generics) -> ir.WalkResult:
            if op.name == "linalg.generic":
                found.append(op)
            return ir.WalkResult.ADVANCE

        func.operation.walk(visit)
        reductions = [g for g in generics if any(_iterators(g))]
        if not reductions:
            continue
        kept = [_row_reduction_kept(g) for g in reductions]
        if any(k is None for k in kept) or min(kept) == 0:
            continue
        k = min(kept)
        for g in generics:
            rank = len(_iterators(g))
            if any(_iterators(g)) or rank <= k or rank > MAX_RANK or not _leaves_kernel(g):
                continue
            tiles = [1] * k + [0] * (rank - k)
            g.attributes[ROW_TILES] = ir.Attribute.parse(f"[{', '.join(f'{t} : i64' for t in tiles)}]")


def _fuse(tiles: list[int], i: str) -> str:
    loops = sum(1 for t in tiles if t)
    types = ", ".join(["!transform.any_op"] * (loops + 1))
    attr = f"[{', '.join(f'{t} : i64' for t in tiles)}]"
    return f"""
    %rows{i} = transform.structured.match ops{{["linalg.generic"]}} attributes {{{ROW_TILES} = {attr}}} in %root
      : (!transform.any_op) -> !transform.any_op
    transform.foreach %rows{i} : !transform.any_op {{
    ^bb0(%op: !transform.any_op):
      transform.sequence %op : !transform.any_op failures(suppress) {{
      ^bb0(%root_op: !transform.any_op):
        %t, %l:{loops} = transform.structured.fuse %root_op tile_sizes {tiles} {{apply_cleanup}}
          : (!transform.any_op) -> ({types})
      }}
    }}"""


@register_schedule("rows", ops=("linalg.generic",), prepare=mark_row_roots)
def rows_schedule(suffix: str, unit: VectorUnit) -> str:
    """Every marked root: tiled to rows with its producers fused (one variant per tiling)."""
    variants = [[1] * k + [0] * (rank - k) for rank in range(2, MAX_RANK + 1) for k in range(1, rank)]
    # the producers now fused into row loops are dead: erase them before later schedules match them
    return (
        "".join(_fuse(tiles, f"{suffix}_{j}") for j, tiles in enumerate(variants))
        + f"""
    %rf{suffix} = transform.structured.match ops{{["func.func"]}} in %root : (!transform.any_op) -> !transform.any_op
    transform.apply_patterns to %rf{suffix} {{
      transform.apply_patterns.canonicalization
    }} : !transform.any_op"""
    )

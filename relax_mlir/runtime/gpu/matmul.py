"""Matmuls on the GPU: f32 ``linalg.matmul`` / ``linalg.batch_matmul`` as a shared-memory tiled kernel.

Each block computes a ``TILE`` x ``TILE`` tile of C (batch in the grid's z), one thread per element. The
K loop walks ``TILE``-wide slabs: the block's threads load one element of A and one of B each into
workgroup (shared) memory, consecutive threads taking consecutive columns (coalesced), then every thread
accumulates its row of the A slab times its column of the B slab from shared memory. Edges are guarded,
so M, N and K are any run-time sizes. ``linalg.matmul`` accumulates into C, as this kernel does::

    linalg.matmul ins(%a, %b : memref<?x64xf32>, memref<64x32xf32>) outs(%c : memref<?x32xf32>)
  ->
    %a2 = memref.cast %a : memref<?x64xf32> to memref<?x?xf32>   (same for %b, %c)
    call @relax_gpu_matmul_f32_222(%a2, %b2, %c2)
"""

from __future__ import annotations

from mlir import ir
from mlir.dialects import func, memref

from relax_mlir.runtime.gpu.ir_util import collect

TILE = 16
_NAMES = {"linalg.matmul": 2, "linalg.batch_matmul": 3}


def _kernel_name(ranks: tuple[int, int, int]) -> str:
    return "relax_gpu_matmul_f32_" + "".join(map(str, ranks))


def _kernel_text(ranks: tuple[int, int, int]) -> str:
    """The tiled kernel for A, B, C of ``ranks`` (C of rank 3 is batched; a rank-2 A or B is broadcast over
    the batch), as a private function."""
    ta, tb, t = (f"memref<{'?x' * r}f32>" for r in ranks)
    batch_a, batch_b, batch = ("%bz, " if r == 3 else "" for r in ranks)
    d = ranks[2] - 2  # position of M in C's dims
    batch_size = (
        "%batch = memref.dim %C, %c0 : " + t if ranks[2] == 3 else "%batch = arith.constant 1 : index"
    )
    smem = f"memref<{TILE}x{TILE}xf32, #gpu.address_space<workgroup>>"
    return f"""
func.func private @{_kernel_name(ranks)}(%A: {ta}, %B: {tb}, %C: {t}) {{
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %tile = arith.constant {TILE} : index
  %zero = arith.constant 0.0 : f32
  {batch_size}
  %cm = arith.constant {d} : index
  %cn = arith.constant {d + 1} : index
  %M = memref.dim %C, %cm : {t}
  %N = memref.dim %C, %cn : {t}
  %ck = arith.constant {ranks[0] - 1} : index
  %K = memref.dim %A, %ck : {ta}
  %gx = arith.ceildivui %N, %tile : index
  %gy = arith.ceildivui %M, %tile : index
  %mn = arith.muli %M, %N : index
  %work = arith.muli %mn, %batch : index
  %nonempty = arith.cmpi ugt, %work, %c0 : index
  scf.if %nonempty {{
    gpu.launch blocks(%bx, %by, %bz) in (%sx = %gx, %sy = %gy, %sz = %batch)
        threads(%tx, %ty, %tz) in (%ox = %tile, %oy = %tile, %oz = %c1)
        workgroup(%As : {smem}, %Bs : {smem}) {{
      %r0 = arith.muli %by, %tile : index
      %row = arith.addi %r0, %ty : index
      %c0_ = arith.muli %bx, %tile : index
      %col = arith.addi %c0_, %tx : index
      %row_in = arith.cmpi ult, %row, %M : index
      %col_in = arith.cmpi ult, %col, %N : index
      %slabs = arith.ceildivui %K, %tile : index
      %acc = scf.for %s = %c0 to %slabs step %c1 iter_args(%sum = %zero) -> (f32) {{
        %k0 = arith.muli %s, %tile : index
        %ka = arith.addi %k0, %tx : index
        %ka_in = arith.cmpi ult, %ka, %K : index
        %a_in = arith.andi %row_in, %ka_in : i1
        %va = scf.if %a_in -> (f32) {{
          %v = memref.load %A[{batch_a}%row, %ka] : {ta}
          scf.yield %v : f32
        }} else {{
          scf.yield %zero : f32
        }}
        memref.store %va, %As[%ty, %tx] : {smem}
        %kb = arith.addi %k0, %ty : index
        %kb_in = arith.cmpi ult, %kb, %K : index
        %b_in = arith.andi %kb_in, %col_in : i1
        %vb = scf.if %b_in -> (f32) {{
          %v = memref.load %B[{batch_b}%kb, %col] : {tb}
          scf.yield %v : f32
        }} else {{
          scf.yield %zero : f32
        }}
        memref.store %vb, %Bs[%ty, %tx] : {smem}
        gpu.barrier
        %partial = scf.for %k = %c0 to %tile step %c1 iter_args(%p = %sum) -> (f32) {{
          %x = memref.load %As[%ty, %k] : {smem}
          %y = memref.load %Bs[%k, %tx] : {smem}
          %xy = arith.mulf %x, %y : f32
          %q = arith.addf %p, %xy : f32
          scf.yield %q : f32
        }}
        gpu.barrier
        scf.yield %partial : f32
      }}
      %out_in = arith.andi %row_in, %col_in : i1
      scf.if %out_in {{
        %old = memref.load %C[{batch}%row, %col] : {t}
        %new = arith.addf %old, %acc : f32
        memref.store %new, %C[{batch}%row, %col] : {t}
      }}
      gpu.terminator
    }}
  }}
  return
}}
"""


def _maps(name: str) -> dict[tuple[int, int, int], str]:
    """The indexing maps each supported operand-rank combination of ``name`` prints with."""
    if name == "linalg.matmul":
        return {(2, 2, 2): "[(d0, d1, d2) -> (d0, d2), (d0, d1, d2) -> (d2, d1), (d0, d1, d2) -> (d0, d1)]"}
    a3, a2 = "(d0, d1, d2, d3) -> (d0, d1, d3)", "(d0, d1, d2, d3) -> (d1, d3)"
    b3, b2 = "(d0, d1, d2, d3) -> (d0, d3, d2)", "(d0, d1, d2, d3) -> (d3, d2)"
    c = "(d0, d1, d2, d3) -> (d0, d1, d2)"
    return {(3, 3, 3): f"[{a3}, {b3}, {c}]", (3, 2, 3): f"[{a3}, {b2}, {c}]", (2, 3, 3): f"[{a2}, {b3}, {c}]"}


def _ranks(op: ir.Operation) -> tuple[int, int, int] | None:
    """The operand ranks when ``op`` is a matmul the tiled kernel computes: f32 memrefs with identity
    layouts in global memory, the default maps or a rank-2 operand broadcast over the batch."""
    if op.name not in _NAMES or len(op.operands) != 3:
        return None
    types = [v.type for v in op.operands]
    for t in types:
        if not isinstance(t, ir.MemRefType) or not isinstance(t.element_type, ir.F32Type):
            return None
        if t != ir.MemRefType.get(t.shape, t.element_type, loc=op.location):  # strided, or not global memory
            return None
    ranks = tuple(t.rank for t in types)
    expected = _maps(op.name).get(ranks)
    if expected is None:
        return None
    maps = str(op.attributes["indexing_maps"]) if "indexing_maps" in op.attributes else None
    if maps is not None and maps.replace("affine_map<", "").replace(">", "") != expected.replace(">", ""):
        return None
    return ranks  # type: ignore[return-value]


def tile_matmuls(module: ir.Operation, func_op: ir.Operation) -> None:
    """Replace each eligible matmul of ``func_op`` by a call to the tiled kernel (added to ``module`` once)."""
    matmuls = [(op, r) for op in collect(func_op, set(_NAMES)) if (r := _ranks(op)) is not None]
    if not matmuls:
        return
    body = module.regions[0].blocks[0]
    defined = {
        ir.StringAttr(op.operation.attributes["sym_name"]).value
        for op in body.operations
        if "sym_name" in op.operation.attributes
    }
    for op, ranks in matmuls:
        name = _kernel_name(ranks)
        if name not in defined:
            for f in ir.Module.parse(_kernel_text(ranks)).body.operations:
                body.append(f.operation)
            defined.add(name)
        with ir.InsertionPoint(op), op.location:
            args = []
            for v, rank in zip(op.operands, ranks, strict=True):
                dynamic = ir.MemRefType.get([ir.ShapedType.get_dynamic_size()] * rank, ir.F32Type.get())
                args.append(v if v.type == dynamic else memref.cast(dynamic, v))
            func.CallOp([], ir.FlatSymbolRefAttr.get(name), args)
        op.erase()

"""Matmuls on the GPU: f32 ``linalg.matmul`` / ``linalg.batch_matmul`` as a shared-memory tiled kernel.

Each block computes a ``TILE`` x ``TILE`` tile of C (batch in the grid's z), one thread per element. The
K loop walks ``TILE``-wide slabs: the block's threads load one element of A and one of B each into
workgroup (shared) memory, consecutive threads taking consecutive columns (coalesced), then every thread
accumulates its row of the A slab times its column of the B slab from shared memory. Edges are guarded,
so M, N and K are any run-time sizes. ``linalg.matmul`` accumulates into C, as this kernel does::

    linalg.matmul ins(%a, %b : memref<?x64xf32>, memref<64x32xf32>) outs(%c : memref<?x32xf32>)
  ->
    %a2 = memref.cast %a : memref<?x64xf32> to memref<?x?xf32>   (same for %b, %c)
    call @relax_gpu_matmul_f32_2d(%a2, %b2, %c2)
"""

from __future__ import annotations

from mlir import ir
from mlir.dialects import func, memref

from relax_mlir.runtime.gpu.ir_util import collect

TILE = 16
_NAMES = {"linalg.matmul": 2, "linalg.batch_matmul": 3}


def _kernel_text(rank: int) -> str:
    """The tiled kernel for operands of ``rank`` (2: matmul, 3: batch_matmul), as a private function."""
    t = f"memref<{'?x' * rank}f32>"
    batch = "%bz, " if rank == 3 else ""
    d = rank - 2  # position of M in C's dims
    batch_size = "%batch = memref.dim %C, %c0 : " + t if rank == 3 else "%batch = arith.constant 1 : index"
    smem = f"memref<{TILE}x{TILE}xf32, #gpu.address_space<workgroup>>"
    return f"""
func.func private @relax_gpu_matmul_f32_{rank}d(%A: {t}, %B: {t}, %C: {t}) {{
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %tile = arith.constant {TILE} : index
  %zero = arith.constant 0.0 : f32
  {batch_size}
  %cm = arith.constant {d} : index
  %cn = arith.constant {d + 1} : index
  %M = memref.dim %C, %cm : {t}
  %N = memref.dim %C, %cn : {t}
  %K = memref.dim %A, %cn : {t}
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
          %v = memref.load %A[{batch}%row, %ka] : {t}
          scf.yield %v : f32
        }} else {{
          scf.yield %zero : f32
        }}
        memref.store %va, %As[%ty, %tx] : {smem}
        %kb = arith.addi %k0, %ty : index
        %kb_in = arith.cmpi ult, %kb, %K : index
        %b_in = arith.andi %kb_in, %col_in : i1
        %vb = scf.if %b_in -> (f32) {{
          %v = memref.load %B[{batch}%kb, %col] : {t}
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


def _eligible(op: ir.Operation) -> bool:
    """A named matmul on f32 memrefs with identity layouts and the default (untransposed) maps."""
    if op.name not in _NAMES:
        return False
    if "indexing_maps" in op.attributes and str(op.attributes["indexing_maps"]) != str(
        _default_maps(op.name)
    ):
        return False
    for v in op.operands:
        t = v.type
        if not isinstance(t, ir.MemRefType) or not isinstance(t.element_type, ir.F32Type):
            return False
        if t != ir.MemRefType.get(t.shape, t.element_type, loc=op.location):  # strided, or not global memory
            return False
    return True


def _default_maps(name: str) -> ir.Attribute:
    if name == "linalg.matmul":
        maps = "(d0, d1, d2) -> (d0, d2)", "(d0, d1, d2) -> (d2, d1)", "(d0, d1, d2) -> (d0, d1)"
    else:
        maps = (
            "(b, d0, d1, d2) -> (b, d0, d2)",
            "(b, d0, d1, d2) -> (b, d2, d1)",
            "(b, d0, d1, d2) -> (b, d0, d1)",
        )
    return ir.Attribute.parse("[" + ", ".join(f"affine_map<{m}>" for m in maps) + "]")


def tile_matmuls(module: ir.Operation, func_op: ir.Operation) -> None:
    """Replace each eligible matmul of ``func_op`` by a call to the tiled kernel (added to ``module`` once)."""
    matmuls = [op for op in collect(func_op, set(_NAMES)) if _eligible(op)]
    if not matmuls:
        return
    body = module.regions[0].blocks[0]
    defined = {
        ir.StringAttr(op.operation.attributes["sym_name"]).value
        for op in body.operations
        if "sym_name" in op.operation.attributes
    }
    for op in matmuls:
        rank = _NAMES[op.name]
        name = f"relax_gpu_matmul_f32_{rank}d"
        if name not in defined:
            for f in ir.Module.parse(_kernel_text(rank)).body.operations:
                body.append(f.operation)
            defined.add(name)
        with ir.InsertionPoint(op), op.location:
            dynamic = ir.MemRefType.get([ir.ShapedType.get_dynamic_size()] * rank, ir.F32Type.get())
            args = [v if v.type == dynamic else memref.cast(dynamic, v) for v in op.operands]
            func.CallOp([], ir.FlatSymbolRefAttr.get(name), args)
        op.erase()

"""Matmuls on the GPU: f32 ``linalg.matmul`` / ``linalg.batch_matmul`` as a shared-memory tiled kernel.

Each block of 16 x 16 threads computes a 64 x 64 tile of C (batch in the grid's z), each thread a 4 x 4
register tile. The K loop walks 16-wide slabs: the block's threads load a 64 x 16 slab of A and a 16 x 64
slab of B into workgroup (shared) memory, four elements each, consecutive threads taking consecutive
columns (coalesced), and after a barrier every thread accumulates its 4 x 4 outer products from shared
memory (16 FMAs per 8 shared loads). Edges are guarded, so M, N and K are any run-time sizes. ``linalg.matmul`` accumulates into C, as this kernel does::

    linalg.matmul ins(%a, %b : memref<?x64xf32>, memref<64x32xf32>) outs(%c : memref<?x32xf32>)
  ->
    %a2 = memref.cast %a : memref<?x64xf32> to memref<?x?xf32>   (same for %b, %c)
    call @relax_gpu_matmul_f32_222(%a2, %b2, %c2)
"""

from __future__ import annotations

from mlir import ir
from mlir.dialects import func, memref

from relax_mlir.transforms.gpu.ir_util import collect

THREADS = 16  # a block is THREADS x THREADS threads
PER_THREAD = 4  # each computes PER_THREAD x PER_THREAD outputs
TILE = THREADS * PER_THREAD  # of C per block, TILE x TILE
SLAB = 16  # K per shared-memory slab
_NAMES = {"linalg.matmul": 2, "linalg.batch_matmul": 3}


def _kernel_name(ranks: tuple[int, int, int]) -> str:
    return "relax_gpu_matmul_f32_" + "".join(map(str, ranks))


def _guarded_load(name: str, memref_: str, indices: str, t: str, conds: tuple[str, str], pad: str) -> str:
    """``%name = A[indices]`` when both conditions hold, else 0 (the tile's edge)."""
    return f"""{pad}%{name}_in = arith.andi %{conds[0]}, %{conds[1]} : i1
{pad}%{name} = scf.if %{name}_in -> (f32) {{
{pad}  %v = memref.load %{memref_}[{indices}] : {t}
{pad}  scf.yield %v : f32
{pad}}} else {{
{pad}  scf.yield %zero : f32
{pad}}}
"""


def _kernel_text(ranks: tuple[int, int, int]) -> str:
    """The tiled kernel for A, B, C of ``ranks`` (C of rank 3 is batched; a rank-2 A or B is broadcast over
    the batch), as a private function.

    Thread (ty, tx) of a block owns rows ``ty + THREADS * i`` and columns ``tx + THREADS * j`` of the
    block's tile (i, j < PER_THREAD): strided, so the threads of a warp read neighbouring shared-memory
    words and store neighbouring columns of C. Per slab it loads PER_THREAD elements of A and of B."""
    ta, tb, t = (f"memref<{'?x' * r}f32>" for r in ranks)
    batch_a, batch_b, batch = ("%bz, " if r == 3 else "" for r in ranks)
    d = ranks[2] - 2  # position of M in C's dims
    batch_size = (
        "%batch = memref.dim %C, %c0 : " + t if ranks[2] == 3 else "%batch = arith.constant 1 : index"
    )
    smem_a = f"memref<{TILE}x{SLAB}xf32, #gpu.address_space<workgroup>>"
    smem_b = f"memref<{SLAB}x{TILE}xf32, #gpu.address_space<workgroup>>"
    n = PER_THREAD
    pad = " " * 8
    rows = "".join(
        f"      %row{i} = arith.addi %r0, %ty{i} : index\n      %row{i}_in = arith.cmpi ult, %row{i}, %M : index\n"
        for i in range(n)
    )
    cols = "".join(
        f"      %col{j} = arith.addi %q0, %tx{j} : index\n      %col{j}_in = arith.cmpi ult, %col{j}, %N : index\n"
        for j in range(n)
    )
    offsets = "".join(
        f"      %ty{i} = arith.addi %ty, %o{i} : index\n      %tx{i} = arith.addi %tx, %o{i} : index\n"
        for i in range(n)
    )
    loads = ""
    for i in range(n):
        loads += _guarded_load(f"a{i}", "A", f"{batch_a}%row{i}, %ka", ta, (f"row{i}_in", "ka_in"), pad)
        loads += f"{pad}memref.store %a{i}, %As[%ty{i}, %tx] : {smem_a}\n"
        loads += _guarded_load(f"b{i}", "B", f"{batch_b}%kb, %col{i}", tb, ("kb_in", f"col{i}_in"), pad)
        loads += f"{pad}memref.store %b{i}, %Bs[%ty, %tx{i}] : {smem_b}\n"
    accs = [f"%acc{i}_{j}" for i in range(n) for j in range(n)]
    carried = [f"%s{i}_{j}" for i in range(n) for j in range(n)]
    types = ", ".join(["f32"] * len(accs))
    inner = [f"%p{i}_{j}" for i in range(n) for j in range(n)]
    products = "".join(f"{pad}  %x{i} = memref.load %As[%ty{i}, %k] : {smem_a}\n" for i in range(n))
    products += "".join(f"{pad}  %y{j} = memref.load %Bs[%k, %tx{j}] : {smem_b}\n" for j in range(n))
    products += "".join(
        f"{pad}  %m{i}_{j} = arith.mulf %x{i}, %y{j} : f32\n{pad}  %q{i}_{j} = arith.addf %p{i}_{j}, %m{i}_{j} : f32\n"
        for i in range(n)
        for j in range(n)
    )
    stores = ""
    for i in range(n):
        for j in range(n):
            stores += f"""      %out{i}_{j} = arith.andi %row{i}_in, %col{j}_in : i1
      scf.if %out{i}_{j} {{
        %old = memref.load %C[{batch}%row{i}, %col{j}] : {t}
        %new = arith.addf %old, %acc{i}_{j} : f32
        memref.store %new, %C[{batch}%row{i}, %col{j}] : {t}
      }}
"""
    init = ", ".join(f"{c} = %zero" for c in carried)
    inner_init = ", ".join(f"{p} = {c}" for p, c in zip(inner, carried, strict=True))
    o_consts = "".join(f"      %o{i} = arith.constant {THREADS * i} : index\n" for i in range(n))
    return f"""
func.func private @{_kernel_name(ranks)}(%A: {ta}, %B: {tb}, %C: {t}) {{
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %threads = arith.constant {THREADS} : index
  %tile = arith.constant {TILE} : index
  %slab = arith.constant {SLAB} : index
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
        threads(%tx, %ty, %tz) in (%ox = %threads, %oy = %threads, %oz = %c1)
        workgroup(%As : {smem_a}, %Bs : {smem_b}) {{
{o_consts}{offsets}      %r0 = arith.muli %by, %tile : index
      %q0 = arith.muli %bx, %tile : index
{rows}{cols}      %slabs = arith.ceildivui %K, %slab : index
      {", ".join(accs)} = scf.for %s = %c0 to %slabs step %c1 iter_args({init}) -> ({types}) {{
        %k0 = arith.muli %s, %slab : index
        %ka = arith.addi %k0, %tx : index
        %ka_in = arith.cmpi ult, %ka, %K : index
        %kb = arith.addi %k0, %ty : index
        %kb_in = arith.cmpi ult, %kb, %K : index
{loads}        gpu.barrier
        {", ".join(f"%r{i}_{j}" for i in range(n) for j in range(n))} = scf.for %k = %c0 to %slab step %c1 iter_args({inner_init}) -> ({types}) {{
{products}          scf.yield {", ".join(f"%q{i}_{j}" for i in range(n) for j in range(n))} : {types}
        }}
        gpu.barrier
        scf.yield {", ".join(f"%r{i}_{j}" for i in range(n) for j in range(n))} : {types}
      }}
{stores}      gpu.terminator
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

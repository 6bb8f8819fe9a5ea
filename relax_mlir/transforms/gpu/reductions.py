"""Row reductions on the GPU: one warp per output element, lanes striding over the reduced dim.

A ``linalg.generic`` whose only reduction is its last loop (sum, max, mean's sum, variance's sum of
squares, softmax's max and sum) would otherwise run one thread per output element, each reading a whole
row: neighbouring threads read addresses a row apart. Here a block of 32 x 8 threads handles 8 outputs,
one warp each; lane ``l`` combines elements ``l, l + 32, ...`` of its row (consecutive lanes read
consecutive elements: coalesced), the 32 partials are combined with ``gpu.shuffle xor``, and lane 0
combines the result into the output, which keeps the generic's semantics (the output holds the initial
value, as after ``linalg.fill``)::

    linalg.generic {iterator_types = ["parallel", "reduction"]} ins(%x : memref<?x?xf32>) outs(%s : memref<?xf32>)
        { %y = arith.addf %out, %in : f32 }
  ->
    gpu.launch blocks(ceildiv(n, 8), 1, 1) threads(32, 8, 1) {
      row = bx * 8 + ty; if row < n {
        p = scf.for k = tx to K step 32 iter_args(p = 0.0) { p + x[row, k] }
        p = p + shuffle_xor(p, 16); ... ; p = p + shuffle_xor(p, 1)
        if tx == 0 { s[row] = s[row] + p } } }

Handled: f32 and i32 combiners with a known identity (add, mul, min, max, and, or, xor), payloads of
arithmetic on the inputs (and ``linalg.index``); the output's map is the identity on the parallel loops,
and the reduced loop is every input's innermost dim (a reduction over an outer dim is already coalesced
one thread per output).
Anything else keeps the one-thread-per-output mapping of ``loops.py``.
"""

from __future__ import annotations

import math

from mlir import ir
from mlir.dialects import affine, arith, gpu, memref, scf

from relax_mlir.transforms.gpu.ir_util import collect, delinearize, index

WARP = 32
WARPS_PER_BLOCK = 8

_FLOAT_IDENTITY = {
    "arith.addf": 0.0,
    "arith.mulf": 1.0,
    "arith.maximumf": -math.inf,
    "arith.maxnumf": -math.inf,
    "arith.minimumf": math.inf,
    "arith.minnumf": math.inf,
}
_INT_IDENTITY = {
    "arith.addi": 0,
    "arith.muli": 1,
    "arith.maxsi": -(2**31),
    "arith.minsi": 2**31 - 1,
    "arith.maxui": 0,
    "arith.minui": -1,
    "arith.andi": -1,
    "arith.ori": 0,
    "arith.xori": 0,
}


class _Match:
    """A row reduction: the generic, its combiner op and the value the combiner folds in."""

    def __init__(
        self, op: ir.Operation, combiner: ir.Operation, folded: ir.Value, identity: float | int
    ) -> None:
        self.op = op
        self.combiner = combiner
        self.folded = folded
        self.identity = identity


def _iterators(op: ir.Operation) -> list[str]:
    return [str(a).split("<")[-1].rstrip(">") for a in ir.ArrayAttr(op.attributes["iterator_types"])]


def _match(op: ir.Operation) -> _Match | None:
    if op.name != "linalg.generic" or len(op.regions[0].blocks) != 1:
        return None
    iterators = _iterators(op)
    if iterators[-1:] != ["reduction"] or "reduction" in iterators[:-1]:
        return None
    maps = [ir.AffineMapAttr(m).value for m in ir.ArrayAttr(op.attributes["indexing_maps"])]
    if op.results or len(maps) != len(op.operands) or len(op.regions[0].blocks[0].arguments) != len(maps):
        return None  # on tensors, or more than one output
    if [str(e) for e in maps[-1].results] != [f"d{i}" for i in range(len(iterators) - 1)]:
        return None
    reduced = f"d{len(iterators) - 1}"
    for amap in maps[:-1]:  # lanes stride the reduced loop: it must be each input's innermost dim
        results = [str(e) for e in amap.results]
        if any(reduced in r for r in results[:-1]) or (
            results and reduced in results[-1] and results[-1] != reduced
        ):
            return None
    if any(not isinstance(v.type, ir.MemRefType) for v in op.operands):
        return None
    body = op.regions[0].blocks[0]
    out_arg = body.arguments[len(body.arguments) - 1]
    element = out_arg.type
    yield_op = body.operations[len(body.operations) - 1]
    result = yield_op.operands[0]
    if not isinstance(result, ir.OpResult):
        return None
    combiner = result.owner
    table = _FLOAT_IDENTITY if isinstance(element, ir.F32Type) else _INT_IDENTITY
    if combiner.name not in table or not (isinstance(element, ir.F32Type) or _is_i32(element)):
        return None
    a, b = combiner.operands
    folded = b if a == out_arg else a if b == out_arg else None
    if folded is None or folded == out_arg or len(list(out_arg.uses)) != 1:
        return None
    for inner in list(body.operations)[:-1]:
        if inner.operation != combiner and inner.operation.regions:
            return None
    return _Match(op, combiner, folded, table[combiner.name])


def _is_i32(t: ir.Type) -> bool:
    return isinstance(t, ir.IntegerType) and t.width == 32


def _bounds(op: ir.Operation, n_loops: int) -> list[ir.Value]:
    """Each loop's size, read from the first operand dim its map sends the loop to."""
    maps = [ir.AffineMapAttr(m).value for m in ir.ArrayAttr(op.attributes["indexing_maps"])]
    sizes: list[ir.Value | None] = [None] * n_loops
    for operand, amap in zip(op.operands, maps, strict=True):
        for pos, expr in enumerate(amap.results):
            name = str(expr)
            if name.startswith("d") and name[1:].isdigit() and sizes[int(name[1:])] is None:
                sizes[int(name[1:])] = memref.dim(operand, index(pos))
    if any(s is None for s in sizes):
        raise ValueError("a loop of the reduction is not the dim of any operand")
    return sizes  # type: ignore[return-value]


def _indices(amap: ir.AffineMap, ivs: list[ir.Value]) -> list[ir.Value]:
    out = []
    for expr in amap.results:
        name = str(expr)
        if name.startswith("d") and name[1:].isdigit():
            out.append(ivs[int(name[1:])])
        else:
            single = ir.AffineMap.get(amap.n_dims, 0, [expr])
            out.append(affine.apply(single, ivs))
    return out


def _payload(m: _Match, ivs: list[ir.Value]) -> ir.Value:
    """Emit the generic's payload (all but the combiner) at the current point; returns the folded value."""
    op = m.op
    body = op.regions[0].blocks[0]
    maps = [ir.AffineMapAttr(a).value for a in ir.ArrayAttr(op.attributes["indexing_maps"])]
    values: dict[ir.Value, ir.Value] = {}
    for arg, operand, amap in zip(list(body.arguments)[:-1], list(op.operands)[:-1], maps[:-1], strict=True):
        values[arg] = memref.load(operand, _indices(amap, ivs))
    for inner in list(body.operations)[:-1]:
        inner = inner.operation
        if inner == m.combiner:
            continue
        if inner.name == "linalg.index":
            values[inner.results[0]] = ivs[ir.IntegerAttr(inner.attributes["dim"]).value]
            continue
        clone = inner.clone()
        for i, v in enumerate(inner.operands):
            if v in values:
                clone.operands[i] = values[v]
        for old, new in zip(inner.results, clone.results, strict=True):
            values[old] = new
    return values.get(m.folded, m.folded)


def _combine(m: _Match, a: ir.Value, b: ir.Value) -> ir.Value:
    return ir.Operation.create(m.combiner.name, results=[a.type], operands=[a, b]).results[0]


def _identity(m: _Match, t: ir.Type) -> ir.Value:
    if isinstance(t, ir.F32Type):
        return arith.constant(t, ir.FloatAttr.get(t, m.identity))
    return arith.constant(t, ir.IntegerAttr.get(t, m.identity))


def _rewrite(m: _Match) -> None:
    op = m.op
    n = len(_iterators(op))
    out = op.operands[len(op.operands) - 1]
    with ir.InsertionPoint(op), op.location:
        sizes = _bounds(op, n)
        rows = index(1)  # a full reduction (rank-0 output) is one row
        for s in sizes[: n - 1]:
            rows = arith.muli(rows, s)
        guard = scf.IfOp(arith.cmpi(arith.CmpIPredicate.ugt, rows, index(0)))
        with ir.InsertionPoint(guard.then_block):
            grid = arith.ceildivui(rows, index(WARPS_PER_BLOCK))
            one = index(1)
            launch = gpu.LaunchOp((grid, one, one), (index(WARP), index(WARPS_PER_BLOCK), one))
            scf.YieldOp([])
        body = launch.regions[0].blocks[0]
        with ir.InsertionPoint(body):
            bx, tx, ty = body.arguments[0], body.arguments[3], body.arguments[4]
            row = arith.addi(arith.muli(bx, index(WARPS_PER_BLOCK)), ty)
            inside = scf.IfOp(arith.cmpi(arith.CmpIPredicate.ult, row, rows))
            gpu.TerminatorOp()
        with ir.InsertionPoint(inside.then_block):
            ivs = delinearize(row, sizes[: n - 1]) if n > 1 else []
            element = out.type.element_type
            loop = scf.ForOp(tx, sizes[n - 1], index(WARP), [_identity(m, element)])
            with ir.InsertionPoint(loop.body):
                folded = _payload(m, [*ivs, loop.induction_variable])
                scf.YieldOp([_combine(m, loop.inner_iter_args[0], folded)])
            partial = loop.results[0]
            for offset in (16, 8, 4, 2, 1):
                width = arith.constant(ir.IntegerType.get_signless(32), WARP)
                shift = arith.constant(ir.IntegerType.get_signless(32), offset)
                other = gpu.ShuffleOp(partial, shift, width, gpu.ShuffleMode.XOR).results[0]
                partial = _combine(m, partial, other)
            first = scf.IfOp(arith.cmpi(arith.CmpIPredicate.eq, tx, index(0)))
            with ir.InsertionPoint(first.then_block):
                old = memref.load(out, ivs)
                memref.store(_combine(m, partial, old), out, ivs)
                scf.YieldOp([])
            scf.YieldOp([])
    op.erase()


def reduce_rows(func: ir.Operation) -> None:
    """Put each row reduction of kernel ``func`` on one warp per output element."""
    for op in collect(func, {"linalg.generic"}):
        m = _match(op)
        if m is not None:
            _rewrite(m)

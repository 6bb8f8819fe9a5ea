"""``relax-gpu-map-loops``: run each kernel's loops on the GPU.

After ``convert-linalg-to-parallel-loops`` a kernel is a sequence of loop nests whose outer loop is an
``scf.parallel`` over the op's parallel dims (reductions are ``scf.for`` inside). Each such loop becomes
one ``gpu.launch`` with one thread per iteration: the iteration space is linearized row-major, so
consecutive threads of a warp take consecutive elements of the innermost dim (coalesced loads and stores
for the usual identity and broadcast maps), ``block-size`` threads per block and as many blocks as
needed, computed from the run-time dims (symbolic shapes stay symbolic). The launch is skipped when the
loop is empty. Any other top-level loop or store of a kernel (scans, sorts, data-dependent kernels) runs
in a one-thread launch, so its data stays on the device::

    scf.parallel (%i, %j) = (%c0, %c0) to (%n, %c64) step (%c1, %c1) { body(%i, %j) }
  ->
    %total = %n * 64
    scf.if (%total > 0) {
      gpu.launch blocks(ceildiv(%total, 256), 1, 1) threads(256, 1, 1) {
        %k = %bx * 256 + %tx
        scf.if (%k < %total) { body(%k floordiv 64, %k mod 64) }
      }
    }

A reduction over outer dims (``scf.for`` around the ``scf.parallel``, e.g. a column sum) is interchanged
first: each thread runs the sequential loop for its output element, reading along rows (coalesced).
Ops whose results the host needs afterwards (a count that sizes an allocation) stay on the host, which
can read the memory because ``relax-gpu-managed-memory`` makes it managed memory.
"""

from __future__ import annotations

from mlir import ir
from mlir.dialects import arith, gpu, memref, scf

from relax_mlir.transforms.gpu.ir_util import collect, delinearize, index, kernels
from relax_mlir.transforms.registry import register_pass

# top-level kernel ops that read or write memory, and so must run on the device
_SERIAL = {"scf.for", "scf.while", "scf.if", "scf.parallel", "memref.store", "affine.for", "affine.store"}


def _launch(
    grid: ir.Value, block: int, loc: ir.Location, grid_y: ir.Value | None = None
) -> tuple[gpu.LaunchOp, ir.Block]:
    """A ``gpu.launch`` with ``grid`` x ``grid_y`` (1) x 1 blocks of ``block`` x 1 x 1 threads; returns it and
    its body."""
    one = index(1)
    launch = gpu.LaunchOp((grid, grid_y or one, one), (index(block), one, one), loc=loc)
    body = launch.regions[0].blocks[0]
    with ir.InsertionPoint(body):
        gpu.TerminatorOp()
    return launch, body


def _guarded_launch(
    total: ir.Value, block: int, max_grid_x: int, loc: ir.Location
) -> tuple[ir.Value, ir.Operation]:
    """At the insertion point, when ``total`` > 0, a launch of one thread per index ``k`` < ``total``, in
    blocks of ``block`` threads; the blocks fold into a 2-D grid of at most ``max_grid_x`` columns when
    that is set (WebGPU allows 65535 workgroups per dimension). Returns ``k`` and the op before which the
    guarded body goes."""
    guard = scf.IfOp(arith.cmpi(arith.CmpIPredicate.ugt, total, index(0)))
    with ir.InsertionPoint(guard.then_block):
        blocks = arith.ceildivui(total, index(block))
        if max_grid_x:
            grid_x = arith.minui(blocks, index(max_grid_x))
            _, body = _launch(grid_x, block, loc, arith.ceildivui(blocks, grid_x))
        else:
            _, body = _launch(blocks, block, loc)
        scf.YieldOp([])
    with ir.InsertionPoint(body.operations[len(body.operations) - 1]):
        block_id = body.arguments[0]
        if max_grid_x:  # block ids (0-2), thread ids (3-5), grid sizes (6-8), block sizes (9-11)
            block_id = arith.addi(arith.muli(body.arguments[1], body.arguments[6]), block_id)
        k = arith.addi(arith.muli(block_id, index(block)), body.arguments[3])
        inside = scf.IfOp(arith.cmpi(arith.CmpIPredicate.ult, k, total))
        with ir.InsertionPoint(inside.then_block):
            yield_op = scf.YieldOp([])
    return k, yield_op


def _map_parallel(loop: ir.Operation, block: int, max_grid_x: int = 0) -> None:
    """Replace an ``scf.parallel`` without reductions by a launch of one thread per iteration."""
    loc = loop.location
    old = loop.regions[0].blocks[0]
    n = len(old.arguments)
    lbs, ubs, steps = (list(loop.operands[i * n : (i + 1) * n]) for i in range(3))
    with ir.InsertionPoint(loop), loc:
        counts = []
        for lb, ub, step in zip(lbs, ubs, steps, strict=True):
            counts.append(arith.ceildivui(arith.subi(ub, lb), step))
        total = counts[0]
        for c in counts[1:]:
            total = arith.muli(total, c)
        k, yield_op = _guarded_launch(total, block, max_grid_x, loc)
        with ir.InsertionPoint(yield_op):
            positions = delinearize(k, counts)
            ivs = [
                arith.addi(lb, arith.muli(p, step)) for lb, p, step in zip(lbs, positions, steps, strict=True)
            ]
    for iv, new in zip(old.arguments, ivs, strict=True):
        iv.replace_all_uses_with(new)
    for op in list(old.operations)[:-1]:  # all but scf.reduce
        op.operation.move_before(yield_op)
    loop.erase()


def launch_copy(source: ir.Value, target: ir.Value, block: int, max_grid_x: int = 0) -> None:
    """Copy the memref ``source`` into ``target`` (same shape, any layouts) with one thread per element, at
    the insertion point (host copies of strided device memory)."""
    t = ir.MemRefType(source.type)
    dims = [memref.dim(source, index(i)) for i in range(t.rank)]
    total = index(1)
    for d in dims:
        total = arith.muli(total, d)
    k, yield_op = _guarded_launch(total, block, max_grid_x, ir.Location.unknown())
    with ir.InsertionPoint(yield_op):
        position = delinearize(k, dims) if dims else []
        memref.store(memref.load(source, position), target, position)


def _map_serial(op: ir.Operation) -> None:
    """Run ``op`` in a one-thread launch."""
    with ir.InsertionPoint(op), op.location:
        _, body = _launch(index(1), 1, op.location)
    op.move_before(body.operations[len(body.operations) - 1])


def _only_op(block: ir.Block) -> ir.Operation | None:
    ops = list(block.operations)
    return ops[0].operation if len(ops) == 2 else None


def _inside(value: ir.Value, op: ir.Operation) -> bool:
    """Whether ``value`` is defined in ``op``'s regions."""
    owner = value.owner if isinstance(value, ir.OpResult) else value.owner.owner
    while owner is not None:
        if owner == op:
            return True
        owner = owner.parent
    return False


def _parallel_inside_loops(loop: ir.Operation) -> ir.Operation | None:
    """Move the parallel loop of ``scf.for ... scf.for { scf.parallel }`` (a reduction over outer dims,
    e.g. a column sum) outside the sequential loops, so its iterations become threads that each run the
    reduction; returns it, or None when ``loop`` is not such a nest."""
    fors, inner = [loop], _only_op(loop.regions[0].blocks[0])
    while inner is not None and inner.name == "scf.for" and not inner.results:
        fors.append(inner)
        inner = _only_op(inner.regions[0].blocks[0])
    if inner is None or inner.name != "scf.parallel" or inner.results or loop.results:
        return None
    if any(_inside(v, loop) for v in inner.operands):
        return None
    par = inner
    par.move_before(loop)
    body = par.regions[0].blocks[0]
    innermost = fors[-1].regions[0].blocks[0]
    yield_op = innermost.operations[len(innermost.operations) - 1]
    for op in list(body.operations)[:-1]:
        op.operation.move_before(yield_op)
    loop.move_before(body.operations[len(body.operations) - 1])
    return par


def _used(value: ir.Value) -> bool:
    return next(iter(value.uses), None) is not None  # ``uses`` is an iterator: always truthy


def _launches(op: ir.Operation) -> bool:
    """Whether ``op`` already launches kernels (a hand-written GPU kernel, ``matmul.py``)."""
    return bool(collect(op, {"gpu.launch"}))


def _has_reductions(op: ir.Operation) -> bool:
    return op.name == "scf.parallel" and len(op.results) > 0


@register_pass("relax-gpu-map-loops")
class GpuMapLoops:
    """Map each kernel's parallel loops to GPU blocks and threads (other loops to one-thread launches)."""

    block_size: int = 256
    max_grid_x: int = 0  # fold the blocks into a 2-D grid of at most this many columns (0: no limit)

    def run(self, module: ir.Operation) -> None:
        for func in kernels(module):
            for op in list(func.regions[0].blocks[0].operations):
                op = op.operation
                if op.name == "scf.for":
                    op = _parallel_inside_loops(op) or op
                if op.name == "scf.parallel" and not _has_reductions(op):
                    _map_parallel(op, self.block_size, self.max_grid_x)
                elif op.name in _SERIAL and not any(_used(r) for r in op.results) and not _launches(op):
                    _map_serial(op)

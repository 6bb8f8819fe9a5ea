"""Run the GPU-mapped program on the CPU: a numeric check of the CUDA target's loop mapping and memory staging.

``test-gpu-launches-on-host`` (a test pass) turns every ``gpu.launch`` (before outlining) into sequential
``scf.for`` loops over grid z/y/x and block z/y/x, with the launch's block arguments (block and thread ids,
grid and block sizes) replaced by the loop variables and sizes and the body inlined; ``gpu.alloc
host_shared`` becomes ``memref.alloc`` and the ``gpu.wait async`` / ``gpu.dealloc async`` / ``gpu.wait``
triple ``memref.dealloc``. Threads then run one after the other, which is what a launch means only when
its threads never wait for each other: a launch with ``gpu.barrier``, warp shuffles, subgroup or block
reductions, or workgroup/private memory is rejected with an error naming it.

``compile_emulated(text, block_size=4)`` compiles a relax program through the CUDA target's passes up to
``relax-gpu-managed-memory``, then this pass, into an ordinary CPU ``Executable``. A small block size makes
small shapes exercise partial blocks, several blocks and the bounds guard. ``reverse=True`` runs blocks and
threads in decreasing id order (a result that changes shows threads depending on each other). Use it with
``llvm_level=0``: at LLVM -O1 the reversed softmax at block size 8 crashes (and at 256 gives wrong numbers)
in an AVX-512 masked load of the ExecutionEngine's code, while the same LLVM IR through ``opt -O1`` and
``llc`` (and at -O0) is right; not explained yet.
"""

from __future__ import annotations

import dataclasses

from mlir import ir
from mlir.dialects import arith, memref, scf

from relax_mlir.context import make_context
from relax_mlir.errors import RelaxError
from relax_mlir.pipelines import load_passes
from relax_mlir.pipelines.cpu import BUFFERIZE, TO_LLVM
from relax_mlir.pipelines.data import text
from relax_mlir.runtime.executable import Executable, Function
from relax_mlir.runtime.loader import LoadedObject
from relax_mlir.targets import codegen, steps
from relax_mlir.transforms.gpu.ir_util import collect, index
from relax_mlir.transforms.registry import PASSES, register_pass

# ops whose meaning depends on the threads of a block running together
NOT_SEQUENTIAL = ("gpu.barrier", "gpu.shuffle", "gpu.subgroup_reduce", "gpu.all_reduce")


def _used(op: ir.Operation) -> bool:
    """Whether a result of ``op`` has a use (``Value.uses`` is an iterator, always truthy)."""
    return any(next(iter(r.uses), None) is not None for r in op.results)


def _where(op: ir.Operation) -> str:
    func = op.parent
    while func is not None and func.name != "func.func":
        func = func.parent
    name = ir.StringAttr(func.attributes["sym_name"]).value if func is not None else "?"
    return f"the gpu.launch in @{name}"


def _check_sequential(launch: ir.Operation) -> None:
    body = launch.regions[0].blocks
    where = _where(launch)
    if len(body) != 1:
        raise RelaxError(f"{where} has {len(body)} blocks; only single-block launch bodies can be emulated")
    args = len(body[0].arguments)
    if args != 12:
        raise RelaxError(
            f"{where} has workgroup or private memory attributions or clusters ({args} block arguments, "
            "12 expected): its threads share memory and cannot run one after the other"
        )
    found = collect(launch, set(NOT_SEQUENTIAL))
    if found:
        raise RelaxError(
            f"{where} uses {found[0].name}: its threads synchronize or communicate, so it cannot be "
            "emulated by running them one after the other"
        )
    if _used(launch):
        raise RelaxError(
            f"{where} is asynchronous (its token is used); only synchronous launches are emulated"
        )


def _loop(lower: ir.Value, upper: ir.Value, step: ir.Value) -> tuple[ir.Value, ir.InsertionPoint]:
    """An ``scf.for`` at the current insertion point; its induction variable and an insertion point
    before its yield."""
    loop = scf.ForOp(lower, upper, step)
    with ir.InsertionPoint(loop.body):
        terminator = scf.YieldOp([])
    return loop.induction_variable, ir.InsertionPoint(terminator)


def _emulate_launch(launch: ir.Operation, reverse: bool) -> None:
    _check_sequential(launch)
    view = launch.opview
    grid = [view.gridSizeX, view.gridSizeY, view.gridSizeZ]
    block = [view.blockSizeX, view.blockSizeY, view.blockSizeZ]
    body = launch.regions[0].blocks[0]
    ids: dict[int, ir.Value] = {}  # block argument position -> loop variable
    with ir.InsertionPoint(launch), launch.location:
        zero, one = index(0), index(1)
        point = None
        # grid z, y, x outside; block z, y, x inside
        for position, sizes in ((0, grid), (3, block)):
            for d in (2, 1, 0):
                if point is None:
                    iv, point = _loop(zero, sizes[d], one)
                else:
                    with point:
                        iv, point = _loop(zero, sizes[d], one)
                ids[position + d] = iv
    if reverse:  # ids counted down: a result that depends on the threads' order shows a race
        with point, launch.location:
            for i in range(6):
                size = (grid + block)[i]
                ids[i] = arith.subi(arith.subi(size, ids[i]), index(1))
    args = list(body.arguments)
    for i in range(6):
        args[i].replace_all_uses_with(ids[i])
    for i, size in enumerate(grid + block):
        args[6 + i].replace_all_uses_with(size)
    ops = list(body.operations)
    terminator = ops[-1]
    if terminator.operation.name != "gpu.terminator":
        raise RelaxError(f"{_where(launch)} ends with {terminator.operation.name}, not gpu.terminator")
    assert point is not None
    yield_op = point.ref_operation
    for op in ops[:-1]:
        op.operation.move_before(yield_op)
    launch.erase()


def _lower_memory(module: ir.Operation) -> None:
    for op in collect(module, {"gpu.alloc"}):
        alloc = op.opview
        if len(op.results) != 1 or len(alloc.asyncDependencies):
            raise RelaxError("an asynchronous gpu.alloc cannot be emulated")
        with ir.InsertionPoint(op), op.location:
            new = memref.alloc(
                ir.MemRefType(op.results[0].type), list(alloc.dynamicSizes), list(alloc.symbolOperands)
            )
        op.results[0].replace_all_uses_with(new)
        op.erase()
    for op in collect(module, {"gpu.dealloc"}):
        dealloc = op.opview
        with ir.InsertionPoint(op), op.location:
            memref.dealloc(dealloc.memref)
        token = op.results[0] if op.results else None
        waits = [u.owner for u in token.uses] if token is not None else []
        starts = [v.owner for v in dealloc.asyncDependencies]
        for wait in waits:
            if wait.name != "gpu.wait" or _used(wait):
                raise RelaxError(f"a gpu.dealloc token is used by {wait.name}, not a plain gpu.wait")
            wait.erase()
        op.erase()
        for start in starts:
            if isinstance(start, ir.OpView | ir.Operation) and start.name == "gpu.wait":
                if not _used(start):
                    start.erase()
    for op in collect(module, {"gpu.wait"}):
        if _used(op):
            raise RelaxError("a gpu.wait token is still used after emulating the deallocations")
        op.erase()


@register_pass("test-gpu-launches-on-host")
class GpuLaunchesOnHost:
    """Test pass: run every gpu.launch as sequential loops on the host and managed memory as host memory."""

    reverse: bool = False  # run blocks and threads in decreasing id order

    def run(self, module: ir.Operation) -> None:
        for launch in collect(module, {"gpu.launch"}):
            _emulate_launch(launch, self.reverse)
        _lower_memory(module)
        left = collect(module, {"gpu.launch_func", "gpu.module", "gpu.memcpy", "gpu.memset"})
        if left:
            raise RelaxError(f"{left[0].name} cannot be emulated on the host")


def _with_options(name: str, **options: object) -> str:
    """Pass ``name`` with those of ``options`` it has (the GPU passes gain options as kernels gain GPU
    schedules: ``reduce_rows`` and ``tile_matmuls`` switch off schedules whose threads cooperate)."""
    load_passes()
    fields = {f.name for f in dataclasses.fields(PASSES[name].cls)}
    text = " ".join(
        f"{key.replace('_', '-')}={str(v).lower()}" for key, v in options.items() if key in fields
    )
    return f"{name}{{{text}}}" if text else name


def emulation_pipeline(block_size: int = 4, reverse: bool = False) -> str:
    """relax to host code for the GPU, the GPU passes up to managed memory (without the schedules whose
    threads cooperate), then the launches on the host."""
    prepare = _with_options("relax-gpu-prepare-kernels", tile_matmuls=False, reduce_rows=False)
    map_loops = _with_options("relax-gpu-map-loops", block_size=block_size, reduce_rows=False)
    return (
        f"relax-to-host-gpu,{text(BUFFERIZE)},{prepare},func.func(convert-linalg-to-parallel-loops),"
        f"{map_loops},relax-gpu-managed-memory,"
        f"test-gpu-launches-on-host{{reverse={str(reverse).lower()}}}"
    )


def compile_emulated(
    program: str | ir.Module | ir.Operation, block_size: int = 4, reverse: bool = False, llvm_level: int = 1
) -> Executable:
    """A CPU executable of ``program`` compiled through the CUDA target's mapping, launches run on the host.

    Not ``compile(program, pipeline=...)``: that runs ``host-to-llvm``, which bufferizes again, and
    ``ownership-based-buffer-deallocation`` rejects the already-deallocated IR ("memory free side-effect on
    MemRef value not supported!"). Like ``compile(target="cuda")``, this goes on with ``TO_LLVM`` only."""
    source = steps.source(steps.verified(program))
    with make_context(), ir.Location.unknown():
        op = steps.parse(source, "<emulated>")
        steps.run(op, emulation_pipeline(block_size, reverse))
        signatures = steps.signatures(op)
        steps.run(op, TO_LLVM)
        data = codegen.object_code(steps.as_module(op), opt_level=llvm_level)
    loaded = LoadedObject(data)
    return Executable({name: Function(name, sig, loaded) for name, sig in signatures.items()})

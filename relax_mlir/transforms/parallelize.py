"""``relax-parallelize-kernels``: split kernels into ``scf.forall`` chunks that OpenMP runs on all cores.

For each kernel (a private ``func.func`` on tensors), every linalg op that produces a result of the
kernel (a *root*) is tiled with ``transform.structured.tile_using_forall`` along its first two output
dims (not the innermost one of a rank >= 2 result when the kernel also has a reduction that is not a
contraction or convolution: softmax, norms and sums reduce along it), and the root's linalg producers
(reductions, fills, matmuls...) are fused into the loop with ``fuse_into_containing_op``; ``cse`` merges
producers fused for several uses after each fusion (else a chain of shared producers is cloned
exponentially: 0.6 s for one layer norm). The number of chunks is decided at run time: ``min(threads, size)``
per tiled dim when the loop's work (the iteration-space sizes of the root and its producers) is at least
``min-work``, else 1. ``relax-lower-parallel`` (in ``host-to-llvm``) runs a single chunk, or every chunk
when the run-time thread count is 1, on the calling thread without entering OpenMP, and otherwise an
``omp.parallel`` of ``min(threads, run-time count, chunks)`` threads.
Kernel schedules (``relax-schedule-kernels``) run after this and match the tiled ops inside the loops.
Ops a kernel already wraps in loops of its own stay outside the chunks (serial).

The thread count is the pass option ``num-threads``; 0 (the default) reads ``$RELAX_MLIR_NUM_THREADS``
and otherwise uses the cores available to the process. With one thread the pass leaves kernels serial.
The chosen count is recorded as the module attribute ``relax.num_threads``, which ``relax-lower-parallel``
(in ``host-to-llvm``) makes the most threads of an ``omp.parallel``; the count used is read at run time
(``omp_get_max_threads``: ``runtime/libs.ThreadBudget`` lowers it while other processes keep cores busy).
The attribute is also set when a kernel's lowering wrote chunk loops of its own
(``relax.matmul_packed``'s ``scf.forall`` over weight panels, ``relax.dequantize_matmul``'s over weight
rows, the convolutions' and attention's), which the pass leaves as they are. The
pass is a pure IR rewrite: whether the OpenMP
runtime is installed matters only where code is loaded (``compile()`` then lowers the chunks serially).
"""

from __future__ import annotations

import os

from mlir import ir, passmanager
from mlir.dialects import arith, func, linalg, scf, tensor

from relax_mlir.dialects.ops.linear_algebra import PACKED_SPLIT_WORK
from relax_mlir.errors import PassError
from relax_mlir.transforms.empty_loops import fold_empty_loops, loop_maps
from relax_mlir.transforms.registry import register_pass
from relax_mlir.transforms.relax_ir import ops_named
from relax_mlir.transforms.transform_script import run_transform_script

THREADS_ENV = "RELAX_MLIR_NUM_THREADS"
THREADS_ATTR = "relax.num_threads"
TAG = "relax.parallel"  # temporary marks naming ops for the transform script
# Work (summed iteration-space sizes; a contraction's or convolution's iterations count 1/4) below which a
# kernel stays serial: waking the second thread costs a few microseconds. The packed matmul applies the
# same rule to its own chunks.
MIN_WORK = PACKED_SPLIT_WORK
CONTRACTION_WEIGHT = 4
_DYNAMIC = -(2**63)  # ShapedType::kDynamic in static bound lists
MAX_TILED_DIMS = 2


def default_threads() -> int:
    """``$RELAX_MLIR_NUM_THREADS`` if set, else the number of cores this process may run on."""
    env = os.environ.get(THREADS_ENV, "").strip()
    if env:
        if not env.isdigit() or int(env) < 1:
            raise PassError(f"${THREADS_ENV} must be a positive integer, got {env!r}")
        return int(env)
    return len(os.sched_getaffinity(0))


_maps = loop_maps


def _is_linalg(op: ir.Operation) -> bool:
    """A structured linalg op on tensors: operands are inputs then one init per result."""
    return _maps(op) is not None


def _is_kernel(func: ir.Operation) -> bool:
    attrs = func.attributes
    if "sym_visibility" not in attrs or ir.StringAttr(attrs["sym_visibility"]).value != "private":
        return False
    if not func.regions or not func.regions[0].blocks:
        return False
    ops = func.regions[0].blocks[0].operations
    return any(_is_linalg(op.operation) for op in ops)


def _reduces_rows(op: ir.Operation) -> bool:
    """A linalg op with reduction loops that is not a contraction or convolution (softmax, norms, sums):
    splitting the innermost dim of a result it feeds would make every chunk redo its whole reduction."""
    maps = _maps(op)
    if maps is None:
        return False
    n_inits = len(op.results)
    kept = {
        e.position for m in maps[len(maps) - n_inits :] for e in m.results if isinstance(e, ir.AffineDimExpr)
    }
    if len(kept) == maps[0].n_dims:
        return False
    return not (linalg.isa_contraction_op(op) or linalg.isa_convolution_op(op))


class _Kernel:
    """One kernel function: picks roots and emits, before each, the run-time chunk counts."""

    def __init__(self, func: ir.Operation, threads: int, min_work: int, ids: list[int]) -> None:
        self.func = func
        self.block = func.regions[0].blocks[0]
        self.threads = threads
        self.min_work = min_work
        self.ids = ids  # a counter shared by every kernel of the module: tags are unique
        self.ops = [op.operation for op in self.block.operations]
        self.index = ir.IndexType.get()

    def tag(self, op: ir.Operation, kind: str) -> str:
        """Mark ``op`` for the transform script (once: a producer of two roots keeps its first tag)."""
        if TAG in op.attributes:
            return ir.StringAttr(op.attributes[TAG]).value
        self.ids[0] += 1
        name = f"{kind}{self.ids[0]}"
        op.attributes[TAG] = ir.StringAttr.get(name)
        return name

    def roots(self) -> list[ir.Operation]:
        ret = self.ops[-1]
        out: list[ir.Operation] = []
        for v in ret.operands:
            owner = v.owner
            if not isinstance(owner, (ir.Operation, ir.OpView)):
                continue
            op = owner.operation
            if _is_linalg(op) and op.parent == self.func and op not in out:
                out.append(op)
        return sorted(out, key=self.ops.index)

    # -- sizes ------------------------------------------------------------------------------------

    def _source(self, v: ir.Value) -> ir.Value:
        """Follow linalg results to their inits (block arguments or tensor.empty), for tensor.dim."""
        while isinstance(v.owner, (ir.Operation, ir.OpView)) and _is_linalg(v.owner.operation):
            op = v.owner.operation
            n_results = len(op.results)
            v = op.operands[len(op.operands) - n_results + ir.OpResult(v).result_number]
        return v

    def dim(self, v: ir.Value, axis: int) -> int | ir.Value:
        t = ir.RankedTensorType(v.type)
        if not t.is_dynamic_dim(axis):
            return t.shape[axis]
        src = self._source(v)
        return tensor.dim(src, arith.constant(self.index, axis))

    def loop_ranges(self, op: ir.Operation) -> list[int | ir.Value] | None:
        """The size of each loop dim of a linalg op, from the first operand that indexes it directly."""
        maps = _maps(op)
        if maps is None:
            return None
        operands = list(op.operands)
        ranges: list[int | ir.Value | None] = [None] * maps[0].n_dims
        for value, amap in zip(operands, maps, strict=True):
            if not isinstance(value.type, ir.RankedTensorType):
                continue
            for axis, expr in enumerate(amap.results):
                if isinstance(expr, ir.AffineDimExpr):
                    d = expr.position
                    if ranges[d] is None:
                        ranges[d] = self.dim(value, axis)
        if any(r is None for r in ranges):
            return None
        return ranges  # type: ignore[return-value]

    def product(self, factors: list[int | ir.Value]) -> int | ir.Value:
        static = 1
        dynamic: ir.Value | None = None
        for f in factors:
            if isinstance(f, int):
                static *= f
            else:
                dynamic = f if dynamic is None else arith.muli(dynamic, f)
        if dynamic is None:
            return static
        return dynamic if static == 1 else arith.muli(dynamic, arith.constant(self.index, static))

    def work(self, ops: list[ir.Operation]) -> int | ir.Value:
        """The summed iteration-space sizes of ``ops`` (what the loop will run; contractions and
        convolutions weighted 1/``CONTRACTION_WEIGHT``)."""
        total: int | ir.Value = 0
        for op in ops:
            ranges = self.loop_ranges(op)
            if ranges is None:
                continue
            vol = self.product(ranges)
            if linalg.isa_contraction_op(op) or linalg.isa_convolution_op(op):  # vectorized FMAs: cheap
                vol = (
                    vol // CONTRACTION_WEIGHT
                    if isinstance(vol, int)
                    else arith.divui(vol, self._value(CONTRACTION_WEIGHT))
                )
            total = self._add(total, vol)
        return total

    def _add(self, a: int | ir.Value, b: int | ir.Value) -> int | ir.Value:
        if isinstance(a, int) and isinstance(b, int):
            return a + b
        return arith.addi(self._value(a), self._value(b))

    def _value(self, x: int | ir.Value) -> ir.Value:
        return arith.constant(self.index, x) if isinstance(x, int) else x

    # -- chunking -----------------------------------------------------------------------------------

    def tiled_dims(self, root: ir.Operation) -> list[tuple[int, int | ir.Value]]:
        """(loop dim, size) of the root's leading output dims worth splitting."""
        maps = _maps(root)
        if maps is None:
            return []
        out_value = root.operands[len(root.operands) - len(root.results)]
        out_map = maps[len(root.operands) - len(root.results)]
        rank = len(out_map.results)
        if any(self.dim(out_value, axis) == 0 for axis in range(rank)):
            return []  # nothing to split (and MLIR 22's tiling asserts on such an op)
        row_reduction = any(_reduces_rows(op) for op in self.ops[: self.ops.index(root) + 1])
        candidates = range(rank - 1 if rank >= 2 and row_reduction else rank)
        dims: list[tuple[int, int | ir.Value]] = []
        for axis in candidates:
            expr = out_map.results[axis]
            if not isinstance(expr, ir.AffineDimExpr):
                continue
            size = self.dim(out_value, axis)
            if isinstance(size, int) and size < 2:
                continue
            dims.append((expr.position, size))
            if len(dims) == MAX_TILED_DIMS:
                break
        return dims

    def chunks(self, root: ir.Operation, producers: list[ir.Operation]) -> list[int | str] | None:
        """Emit the run-time chunk count of each tiled dim before ``root``; per loop dim of the root:
        0 (not tiled), a static count, or the tag of the op computing it. None: leave the root serial."""
        with ir.InsertionPoint(root), root.location:
            dims = self.tiled_dims(root)
            if not dims:
                return None
            work = self.work([root, *producers])
            if isinstance(work, int) and work < self.min_work:
                return None
            counts: list[int | str] = [0] * _maps(root)[0].n_dims  # type: ignore[index]
            for d, size in dims:
                counts[d] = self._chunk_count(size, work)
        if all(counts[d] == 1 for d, _ in dims):
            return None
        return counts

    def _chunk_count(self, size: int | ir.Value, work: int | ir.Value) -> int | str:
        t = self.threads
        if isinstance(size, int) and isinstance(work, int):
            return min(t, size)
        if isinstance(size, int):
            count = self._value(min(t, size))
        else:  # at least 1: a dim of size 0 makes an empty loop, not a division by zero
            count = arith.maxui(arith.minui(size, self._value(t)), self._value(1))
        if not isinstance(work, int):
            big = arith.cmpi(arith.CmpIPredicate.uge, work, self._value(self.min_work))
            count = arith.select(big, count, self._value(1))
        return self.tag(count.owner.operation, "n")

    def producers(self, root: ir.Operation, roots: list[ir.Operation]) -> list[ir.Operation]:
        """The linalg ops of ``root``'s block whose results reach it through linalg ops only, last first."""
        parent = root.parent
        ops = self.ops if parent == self.func else [op.operation for op in root.block.operations]
        found: set[int] = set()
        stack = [root]
        while stack:
            op = stack.pop()
            for v in op.operands:
                owner = v.owner
                if not isinstance(owner, (ir.Operation, ir.OpView)):
                    continue
                p = owner.operation
                if p.parent != parent or not _is_linalg(p) or p in roots:
                    continue
                i = ops.index(p)
                if i not in found:
                    found.add(i)
                    stack.append(p)
        return [ops[i] for i in sorted(found, reverse=True)]

    def script(self, roots: list[ir.Operation]) -> str:
        """Tag the roots worth splitting and their producers; the transform IR that tiles and fuses them."""
        body = ""
        for root in roots:
            producers = self.producers(root, roots)
            counts = self.chunks(root, producers)
            if counts is None:
                continue
            r = self.tag(root, "r")
            handles = [f"%{c}" for c in counts if isinstance(c, str)]
            body += _match(r) + "".join(_match(c) for c in counts if isinstance(c, str))
            sizes = ", ".join(f"%{c}" if isinstance(c, str) else str(c) for c in counts)
            types = ", ".join(["!transform.any_op"] * (1 + len(handles)))
            body += (
                f"    %t{r}, %l{r} = transform.structured.tile_using_forall %{r} num_threads [{sizes}] "
                f": ({types}) -> (!transform.any_op, !transform.any_op)\n"
            )
            for p in producers:
                if TAG in p.attributes:  # shared with an earlier root: fused (cloned) there, kept here
                    continue
                name = self.tag(p, "p")
                body += _match(name) + (
                    f"    transform.sequence %l{r} : !transform.any_op failures(suppress) {{\n"
                    f"    ^bb0(%x: !transform.any_op):\n"
                    f"      %f{name}, %c{name} = transform.structured.fuse_into_containing_op %{name} into %l{r} "
                    f": (!transform.any_op, !transform.any_op) -> (!transform.any_op, !transform.any_op)\n"
                    f"    }}\n"
                    # a producer used by k fused ops is fused k times (a clone per use), and so are its own
                    # producers for each clone: merge the clones before fusing the next producer
                    f"    transform.apply_cse to %l{r} : !transform.any_op\n"
                )
        return body


def _scripts(module: ir.Operation, threads: int, min_work: int) -> tuple[str, bool]:
    """The transform IR for every kernel, and whether any size computation was emitted (to clean up)."""
    ids = [0]
    body = ""
    emitted = False
    for op in module.regions[0].blocks[0].operations:
        func = op.operation
        if func.name != "func.func" or not _is_kernel(func):
            continue
        kernel = _Kernel(func, threads, min_work, ids)
        roots = kernel.roots()
        body += kernel.script(roots)
        emitted |= len(kernel.block.operations) != len(kernel.ops)
    return body, emitted


def _match(tag: str) -> str:
    return (
        f'    %{tag} = transform.structured.match attributes {{{TAG} = "{tag}"}} in %root '
        f": (!transform.any_op) -> !transform.any_op\n"
    )


def _strip_tags(module: ir.Operation) -> None:
    def visit(op: ir.Operation) -> ir.WalkResult:
        if TAG in op.attributes:
            del op.attributes[TAG]
        return ir.WalkResult.ADVANCE

    module.walk(visit)


@register_pass("relax-parallelize-kernels")
class ParallelizeKernels:
    """Tile kernels' leading parallel dims into scf.forall chunks (OpenMP threads), fusing producers."""

    num_threads: int = 0  # 0: $RELAX_MLIR_NUM_THREADS, else the cores available
    min_work: int = MIN_WORK  # kernels doing less (summed iteration-space sizes) stay serial

    def run(self, module: ir.Operation) -> None:
        fold_empty_loops(module)  # on every machine: the IR must not depend on the thread count
        threads = self.num_threads or default_threads()
        if threads <= 1:
            return
        if ops_named(module, "scf.forall"):  # chunk loops a kernel's lowering wrote (dequantize_matmul)
            module.attributes[THREADS_ATTR] = ir.IntegerAttr.get(ir.IntegerType.get_signless(64), threads)
        body, emitted = _scripts(module, threads, self.min_work)
        if not body:
            if emitted:  # sizes computed for kernels left serial
                passmanager.PassManager.parse("builtin.module(canonicalize,cse)").run(module)
            return
        run_transform_script(module, body)
        _strip_tags(module)
        module.attributes[THREADS_ATTR] = ir.IntegerAttr.get(ir.IntegerType.get_signless(64), threads)


def _defined_outside(v: ir.Value, region_op: ir.Operation) -> bool:
    """Whether ``v`` is defined outside ``region_op`` (then, used inside it, it dominates it)."""
    owner = v.owner
    op = owner.owner if isinstance(owner, ir.Block) else owner.operation
    while op is not None and op.name != "builtin.module":
        if op == region_op:
            return False
        op = op.parent
    return True


@register_pass("relax-lower-parallel")
class LowerParallel:
    """Lower scf.forall chunk loops (bufferized) to OpenMP. Each loop's body becomes a function of its
    chunk indices (``_outline_chunk``), called from an ``omp.parallel`` of min(``relax.num_threads``, the
    run-time count ``omp_get_max_threads()``, chunks) threads, or, when that count or the loop's chunk count
    is 1, from serial loops on the calling thread (no OpenMP entry); without the attribute, serial loops.
    Loops whose bodies are the same call one function (``_Chunks``)."""

    def run(self, module: ir.Operation) -> None:
        if not ops_named(module, "scf.forall"):
            return
        attr = module.attributes[THREADS_ATTR] if THREADS_ATTR in module.attributes else None
        threads = ir.IntegerAttr(attr).value if attr is not None else 1
        if threads <= 1:
            passmanager.PassManager.parse("builtin.module(func.func(scf-forall-to-for))").run(module)
            return
        _declare_thread_count(module)
        chunks = _Chunks()
        for i, forall in enumerate(ops_named(module, "scf.forall")):
            _serial_unless_threads(forall, chunks.shared(_outline_chunk(forall, i), forall))
        passmanager.PassManager.parse(
            f"builtin.module(func.func(scf-forall-to-parallel),convert-scf-to-openmp{{num-threads={threads}}})"
        ).run(module)
        for parallel in ops_named(module, "omp.parallel"):
            _fork_only_when_split(parallel, threads)
        for scope in ops_named(module, "memref.alloca_scope"):
            _inline_loop_scope(scope)


RUN_THREADS_FN = "omp_get_max_threads"  # libomp's nthreads ICV: what ``runtime/libs.ThreadBudget`` sets


def _declare_thread_count(module: ir.Operation) -> None:
    """Declare ``omp_get_max_threads() -> i32``: the thread count parallel regions use, set at run time
    (``omp_set_num_threads``, ``$OMP_NUM_THREADS``; else libomp's default, the cores: what an AOT library
    uses without relax_mlir's runtime)."""
    body = module.regions[0].blocks[0]
    if any(
        op.name == "func.func" and _name(op) == RUN_THREADS_FN
        for op in (o.operation for o in body.operations)
    ):
        return
    with ir.InsertionPoint.at_block_begin(body), module.location:
        func.FuncOp(RUN_THREADS_FN, ([], [ir.IntegerType.get_signless(32)]), visibility="private")


def _run_threads() -> ir.Value:
    """The run-time thread count (at least 1), as an index, at the current insertion point."""
    count = func.CallOp([ir.IntegerType.get_signless(32)], RUN_THREADS_FN, []).result
    return arith.index_cast(ir.IndexType.get(), count)


def _inside(op: ir.Operation, region_op: ir.Operation) -> bool:
    """Whether ``op`` is ``region_op`` or nested in it."""
    while op is not None and op.name != "builtin.module":
        if op == region_op:
            return True
        op = op.parent
    return False


def _outline_chunk(forall: ir.Operation, number: int) -> ir.Operation | None:
    """Move the body of ``forall`` (normalized: from 0 by 1, no results) into a private function of its
    chunk indices and the values it uses from outside (constants are cloned in), and call it from the loop:
    the serial and the parallel paths then share one copy of the body (half the code for LLVM). Returns the
    function, or None (loop left as it is)."""
    attrs = forall.attributes
    if any(v != 0 for v in ir.DenseI64ArrayAttr(attrs["staticLowerBound"])) or any(
        v != 1 for v in ir.DenseI64ArrayAttr(attrs["staticStep"])
    ):
        return None
    if len(forall.results) or forall.parent is None:
        return None
    parent = forall.parent
    while parent.name != "func.func":
        parent = parent.parent
    block = forall.regions[0].blocks[0]
    ops = [op.operation for op in block.operations][:-1]
    captured: dict[ir.Value, None] = {}
    constants: dict[ir.Value, None] = {}

    def visit(op: ir.Operation) -> ir.WalkResult:
        for v in op.operands:
            if _defined_outside(v, forall):
                owner = v.owner
                is_const = not isinstance(owner, ir.Block) and owner.name == "arith.constant"
                (constants if is_const else captured)[v] = None
        return ir.WalkResult.ADVANCE

    for op in ops:
        op.walk(visit)
    ivs = list(block.arguments)
    index = ir.IndexType.get()
    name = f"{_name(parent)}_chunk{number}"
    with ir.InsertionPoint(parent), forall.location:
        outlined = func.FuncOp(
            name, ([index] * len(ivs) + [v.type for v in captured], []), visibility="private"
        )
        # not inlined: LLVM inlined chunk functions into their serial and their OpenMP callers alike
        outlined.attributes["passthrough"] = ir.ArrayAttr.get([ir.StringAttr.get("noinline")])
        entry = outlined.add_entry_block()
    with ir.InsertionPoint(entry), forall.location:
        ret = func.ReturnOp([])
    for op in ops:
        op.move_before(ret.operation)
    for iv, arg in zip(ivs, entry.arguments[: len(ivs)], strict=True):
        iv.replace_all_uses_with(arg)  # all its uses moved into the function
    with ir.InsertionPoint(block.operations[0]), forall.location:
        func.CallOp([], name, [*ivs, *captured])
    replacements = list(zip(captured, entry.arguments[len(ivs) :], strict=True))
    with ir.InsertionPoint.at_block_begin(entry):
        for v in constants:
            replacements.append((v, v.owner.clone().result))
    for v, new in replacements:
        for use in list(v.uses):
            owner = use.owner if isinstance(use.owner, ir.Operation) else use.owner.operation
            if owner != new.owner and _inside(owner, outlined.operation):
                owner.operands[use.operand_number] = new
    return outlined.operation


class _Chunks:
    """The outlined chunk functions so far, by signature and op count (cheap to compare), with their
    printed bodies once two share those (only candidates are printed)."""

    def __init__(self) -> None:
        self.by_shape: dict[str, list[list]] = {}  # [function, its text or None]

    def shared(self, function: ir.Operation | None, forall: ir.Operation) -> str | None:
        """The function ``forall`` calls for its outlined chunk ``function``: an earlier one with the same
        body (the call is redirected and ``function`` erased), else ``function``. Kernels that differ only
        outside their loops (a fused epilogue) or in a size the chunk does not read share their chunk:
        13% of the 12-layer LLM's LLVM code at 2 threads."""
        if function is None:
            return None
        name = _name(function)
        entry = function.regions[0].blocks[0]
        candidates = self.by_shape.setdefault(
            f"{function.attributes['function_type']} {len(entry.operations)}", []
        )
        text = _body_text(function) if candidates else None
        for candidate in candidates:
            if candidate[1] is None:
                candidate[1] = _body_text(candidate[0])
            if candidate[1] == text:
                call = next(op for op in forall.regions[0].blocks[0].operations if op.name == "func.call")
                call.attributes["callee"] = ir.FlatSymbolRefAttr.get(_name(candidate[0]))
                function.erase()
                return _name(candidate[0])
        candidates.append([function, text])
        return name


def _name(function: ir.Operation) -> str:
    """A function's symbol name."""
    return ir.StringAttr(function.attributes["sym_name"]).value


def _body_text(function: ir.Operation) -> str:
    """A function as text without its name."""
    return str(function).replace(f"@{_name(function)}(", "@(", 1)


def _serial_unless_threads(forall: ir.Operation, chunk: str | None) -> None:
    """``scf.if threads <= 1 || chunks <= 1 {serial loops calling chunk} else {forall}``: with one run-time
    thread, or a single chunk, the chunks run on the calling thread without entering the OpenMP runtime (whose
    serialized parallel region still costs microseconds: too much for tiny calls)."""
    if chunk is None:
        return
    static = list(ir.DenseI64ArrayAttr(forall.attributes["staticUpperBound"]))
    dynamic = iter(forall.operands)
    index = ir.IndexType.get()
    call = next(op for op in forall.regions[0].blocks[0].operations if op.name == "func.call")
    args = list(call.operands)[len(static) :]
    with ir.InsertionPoint(forall), forall.location:
        one = arith.constant(index, 1)
        uppers = [next(dynamic) if v == _DYNAMIC else arith.constant(index, v) for v in static]
        alone = arith.cmpi(arith.CmpIPredicate.ule, _run_threads(), one)
        if any(v == _DYNAMIC for v in static):
            chunks = uppers[0]
            for v in uppers[1:]:
                chunks = arith.muli(chunks, v)
            alone = arith.ori(alone, arith.cmpi(arith.CmpIPredicate.ule, chunks, one))
        branch = scf.IfOp(alone, [], has_else=True)
        with ir.InsertionPoint(branch.then_block):
            zero, ivs, ip = arith.constant(index, 0), [], None
            for upper in uppers:
                loop = scf.ForOp(zero, upper, one, ip=ip)
                ivs.append(loop.induction_variable)
                with ir.InsertionPoint(loop.body):
                    scf.YieldOp([])
                ip = ir.InsertionPoint(loop.body.operations[0])
            func.CallOp([], chunk, [*ivs, *args], ip=ip)
            scf.YieldOp([])
        with ir.InsertionPoint(branch.else_block):
            scf.YieldOp([])
    forall.move_before(branch.else_block.operations[0])


def _constant(v: ir.Value) -> int:
    """The value of an index constant, else -1."""
    owner = v.owner
    if isinstance(owner, ir.Block) or owner.name != "arith.constant":
        return -1
    return ir.IntegerAttr(owner.attributes["value"]).value


def _inline_loop_scope(scope: ir.Operation) -> None:
    """Inline the ``memref.alloca_scope`` convert-scf-to-openmp wraps each chunk in: it must stay a single
    block, which later loop lowering (``convert-scf-to-cf``) breaks. Its few iterations (chunks) make
    the stack it would release negligible."""
    parent = scope.parent
    if parent is None or parent.name != "omp.loop_nest" or len(scope.results):
        return
    for op in list(scope.regions[0].blocks[0].operations)[:-1]:
        op.operation.move_before(scope)
    scope.erase()


def _fork_only_when_split(parallel: ir.Operation, threads: int) -> None:
    """Give ``omp.parallel`` min(threads, trip count) threads (one runs it on the calling thread, without
    waking the pool); loops over several dims get a dynamic schedule (their chunks may be empty), and so do
    loops of a constant number of chunks larger than the thread count that the threads do not divide (a
    packed matmul of an odd number of chunks): a thread that the OS preempts on a busy machine then delays
    only its current chunk. Other loops (a run-time number of parts: ``dequantize_matmul``'s, up to one per
    32 weight rows, and the packed matmul's; a constant count the threads divide) keep the static schedule, one contiguous block per thread, claimed once: dynamic dispatch claims each chunk with a
    runtime call (Debian's libomp 14 even formats its debug-trace strings there): a 2048x768 Q4_0 GEMV at
    batch 1 on 2 threads took 132 us dynamic, 81 us static, 63 us on 1 thread (min of 2000 calls, loaded
    machine); the 784-512-512-10 MLP at batch 1 on 2 threads 0.046-0.059 ms with 4 chunks per matmul
    dynamic, 0.031 static (znver4)."""
    nests = ops_named(parallel, "omp.loop_nest")
    if len(nests) != 1 or len(parallel.operands) != 1:
        return
    nest = nests[0]
    n = len(nest.regions[0].blocks[0].arguments)
    bounds = list(nest.operands)
    if len(bounds) != 3 * n or not all(_defined_outside(v, parallel) for v in bounds):
        return
    index = ir.IndexType.get()
    with ir.InsertionPoint(parallel), parallel.location:
        trips: ir.Value | None = None
        for lb, ub, step in zip(bounds[:n], bounds[n : 2 * n], bounds[2 * n :], strict=True):
            trip = arith.ceildivui(arith.subi(ub, lb), step)
            trips = trip if trips is None else arith.muli(trips, trip)
        assert trips is not None
        one = arith.constant(index, 1)
        most = arith.minui(_run_threads(), arith.constant(index, threads))
        count = arith.maxui(arith.minui(trips, most), one)
        parallel.operands[0] = arith.index_cast(ir.IntegerType.get_signless(32), count)
    chunks = _constant(bounds[1])
    if n > 1 or (chunks > threads and chunks % threads):
        for wsloop in ops_named(parallel, "omp.wsloop"):
            wsloop.attributes["schedule_kind"] = ir.Attribute.parse("#omp<schedulekind dynamic>")

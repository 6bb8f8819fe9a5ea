"""``relax-plan-memory``: liveness-based storage reuse for the intermediates of relax functions.

Runs after ``convert-relax-to-linalg``, when every intermediate tensor is a ``relax.call_tir`` result.
Per relax function it computes the live range of each intermediate (through the aliases that
``match_cast``, tuples and dataflow blocks make), sizes it in bytes as a symbolic ``Expr``, and assigns
it a *storage* in program order (greedy, best fit):

- a tensor whose size has an upper bound (every symbol in it has a declared ``relax.upper_bounds``
  entry, products of bounded symbols included) is *static*: it goes into a constant-size storage,
  reusing a dead one (which grows to the largest size it holds) or a new one;
- a tensor with an unbounded symbol is never static: it reuses a dead symbolic storage only when its
  size is proven ``<=`` the storage's (or the storage's is proven ``<=`` its, and the storage grows);
  otherwise it gets a new storage sized by its own formula.

Only symbols defined by the parameters take part: their values (and bounds) are checked before the
function runs and are known at entry, where ``relax-lower-host`` allocates every storage once.
Not planned (left to the bufferizer): function outputs and their aliases, results of allocating
(data-dependent) kernels, tensors whose size uses symbols bound later by ``match_cast``, sub-byte
element types, and every tensor defined inside a branch or loop body (``scf.if``/``scf.while``): such an op
counts as one program point where every value from outside that it uses is live, and its results may alias
them, so no storage live across a branch or iteration is reused.

The plan is recorded as attributes that ``relax-lower-host`` reads::

    %1 = "relax.call_tir"(...) {callee = @k, relax.storage = [0]}   // storage per result, -1 = none
    func.func @f(...) attributes {relax.storages = [8192, "n * 2048"]}  // bytes: int or formula

``report(module)`` (or the pass option ``report=true``, printing to stderr) gives per function the
storages, the peak bytes as a formula and at the bounds, against allocating every intermediate
separately and against the best liveness bound (the most bytes live at any program point).
"""

from __future__ import annotations

import sys
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field

from mlir import ir

from relax_mlir.dialects.registry import INPLACE_ATTR, op_class
from relax_mlir.dialects.types import (
    PrimType,
    RelaxType,
    ShapeType,
    TensorType,
    TupleType,
    bare_symbols,
    relax_type,
)
from relax_mlir.lowering.kernel import element
from relax_mlir.shape_infer.expr import Expr, const, parse_expr, prove_le, smax
from relax_mlir.transforms.registry import register_pass
from relax_mlir.transforms.well_formed import DATAFLOW_ATTR, UPPER_BOUNDS_ATTR

STORAGE_ATTR = "relax.storage"
STORAGES_ATTR = "relax.storages"

_BYTES = {"f16": 2, "bf16": 2, "f32": 4, "f64": 8, "i8": 1, "i16": 2, "i32": 4, "i64": 8}


def element_bytes(dtype: str) -> int | None:
    """Bytes per element as kernels store ``dtype`` (None when unknown or not whole bytes)."""
    e = element(dtype)
    if e in _BYTES:
        return _BYTES[e]
    if e.startswith("f8") or e.startswith("f4") or e.startswith("f6"):
        return 1 if e.startswith("f8") else None
    return None


def tensor_bytes(t: RelaxType | None) -> Expr | None:
    """A tensor's size in bytes as a formula, or None when its shape, dtype or width is unknown."""
    if not isinstance(t, TensorType) or t.shape is None or t.dtype is None:
        return None
    width = element_bytes(t.dtype)
    if width is None or any(d is None for d in t.shape):
        return None
    size = const(width)
    for d in t.shape:
        size = size * d
    return size


@dataclass
class Buffer:
    """One intermediate tensor: the call_tir result that defines it, its size and live range."""

    value: ir.Value
    size: Expr
    start: int
    end: int
    reason: str = ""  # why it is not planned ("" when planned)
    storage: int = -1


@dataclass
class Storage:
    """A block of bytes allocated once per call; ``size`` is a constant when static."""

    size: Expr
    static: bool
    buffers: list[int] = field(default_factory=list)


@dataclass
class FunctionPlan:
    """The plan of one relax function, and the numbers the report prints."""

    name: str
    bounds: dict[str, int]
    buffers: list[Buffer]
    storages: list[Storage]
    points: list[Expr]  # bytes live at each program point (planned buffers only)
    skipped: str = ""  # why the whole function is not planned
    # a tensor whose bound is larger gets a storage of its own size, not of its bound (0: no limit)
    max_static_bytes: int = 0

    @property
    def planned(self) -> list[Buffer]:
        return [b for b in self.buffers if not b.reason]

    def peak(self) -> Expr:
        """Bytes held by the storages: the plan's peak for intermediates."""
        return sum((s.size for s in self.storages), const(0))

    def allocate_all(self) -> Expr:
        """Bytes if every planned intermediate had its own buffer for the whole call."""
        return sum((b.size for b in self.planned), const(0))

    def liveness_bound(self) -> Expr:
        """The most bytes live at once (a lower bound for any plan), as a max over program points."""
        kept: list[Expr] = []
        for p in self.points:
            if any(prove_le(p, q) for q in kept):
                continue
            kept = [q for q in kept if not prove_le(q, p)] + [p]
        out = const(0)
        for i, p in enumerate(kept):
            out = p if i == 0 else smax(out, p)
        return out

    def at_bounds(self, e: Expr) -> int | None:
        return e.upper_bound(self.bounds)

    def at(self, e: Expr, env: Mapping[str, int]) -> int:
        return e.evaluate(env)

    def liveness_at(self, env: Mapping[str, int]) -> int:
        return max((p.evaluate(env) for p in self.points), default=0)

    def liveness_at_bounds(self) -> int | None:
        values = [p.upper_bound(self.bounds) for p in self.points]
        return None if any(v is None for v in values) else max(values, default=0)  # type: ignore[type-var]

    def format(self) -> str:
        """A human-readable report."""
        if self.skipped:
            return f"@{self.name}: not planned ({self.skipped})"

        def show(e: Expr, at: int | None) -> str:
            return f"{e} bytes" + ("" if e.is_const else f" = {_num(at)} at the bounds")

        lines = [f"@{self.name}: {len(self.planned)} intermediates in {len(self.storages)} storages"]
        if self.bounds:
            lines.append("  bounds: " + ", ".join(f"{k} <= {v}" for k, v in sorted(self.bounds.items())))
        for i, s in enumerate(self.storages):
            kind = "static" if s.static else "symbolic"
            lines.append(f"  storage {i} ({kind}): {s.size} bytes, holds {len(s.buffers)} tensors")
        peak, every = self.peak(), self.allocate_all()
        lines.append(f"  peak (planned): {show(peak, self.at_bounds(peak))}")
        lines.append(f"  allocate every intermediate: {show(every, self.at_bounds(every))}")
        live = self.liveness_bound()
        lines.append(f"  best liveness bound: {show(live, self.liveness_at_bounds())}")
        for b in self.buffers:
            if b.reason:
                lines.append(f"  not planned: {b.value.get_name()} ({b.reason})")
        return "\n".join(lines)


def _num(v: int | None) -> str:
    return "unbounded" if v is None else f"{v}"


# -- analysis --------------------------------------------------------------------------------------------


def _linear_ops(block: ir.Block) -> Iterator[ir.Operation]:
    """The ops of a body in execution order, through dataflow blocks. A branch or loop (``scf.if``,
    ``scf.while``) is one op: what it uses is live through it, and values defined inside it are not planned."""
    out: list[ir.Operation] = []
    for op in block.operations:
        op = op.operation
        if op.name == "scf.execute_region" and DATAFLOW_ATTR in op.attributes:
            out.extend(_linear_ops(op.regions[0].blocks[0]))
        out.append(op)
    return iter(out)


def _region_operands(op: ir.Operation) -> list[ir.Value]:
    """Every operand of ``op`` and of the ops nested in it (the values from outside are among them)."""
    out: list[ir.Value] = []

    def visit(inner: ir.Operation) -> ir.WalkResult:
        out.extend(inner.operands)
        return ir.WalkResult.ADVANCE

    op.walk(visit, ir.WalkOrder.PRE_ORDER)
    return out


def param_symbols(func: ir.Operation) -> set[str]:
    """Symbols a function's parameters define (their values are known when it is entered)."""
    ftype = ir.FunctionType(ir.TypeAttr(func.attributes["function_type"]).value)
    out: set[str] = set()
    for t in ftype.inputs:
        out |= _param_bare(relax_type(t))
    return out


def _param_bare(t: RelaxType | None) -> set[str]:
    if isinstance(t, TupleType):
        return set().union(*(_param_bare(x) for x in t.fields)) if t.fields else set()
    if isinstance(t, (TensorType, PrimType, ShapeType)):
        return bare_symbols(t)
    return set()


def declared_bounds(func: ir.Operation) -> dict[str, int]:
    """Upper bounds of symbols that the parameters define (the runtime checks these before running)."""
    if UPPER_BOUNDS_ATTR not in func.attributes:
        return {}
    defined = param_symbols(func)
    bounds = {n.name: ir.IntegerAttr(n.attr).value for n in ir.DictAttr(func.attributes[UPPER_BOUNDS_ATTR])}
    return {k: v for k, v in bounds.items() if k in defined}


def _kernels(module: ir.Operation) -> dict[str, ir.FunctionType]:
    out = {}
    for op in module.regions[0].blocks[0].operations:
        op = op.operation
        if op.name == "func.func":
            name = ir.StringAttr(op.attributes["sym_name"]).value
            out[name] = ir.FunctionType(ir.TypeAttr(op.attributes["function_type"]).value)
    return out


def is_relax_function(op: ir.Operation) -> bool:
    if op.name != "func.func" or not len(op.regions[0].blocks):
        return False
    ftype = ir.FunctionType(ir.TypeAttr(op.attributes["function_type"]).value)
    return any(relax_type(t) is not None for t in (*ftype.inputs, *ftype.results))


def inplace_operands(call: ir.Operation) -> list[int]:
    """For each result of a call_tir, the operand it updates in place (``relax.inplace``), or -1."""
    if INPLACE_ATTR not in call.attributes:
        return [-1] * len(call.results)
    return [ir.IntegerAttr(a).value for a in ir.ArrayAttr(call.attributes[INPLACE_ATTR])]


def analyze(func: ir.Operation, kernels: Mapping[str, ir.FunctionType]) -> FunctionPlan:
    """Buffers with live ranges and sizes (storages not yet assigned)."""
    name = ir.StringAttr(func.attributes["sym_name"]).value
    bounds = declared_bounds(func)
    plan = FunctionPlan(name, bounds, [], [], [])
    ops = _linear_ops(func.regions[0].blocks[0])
    known = param_symbols(func)
    roots: dict[ir.Value, frozenset[int]] = {}  # value -> buffers it may alias
    outputs: set[int] = set()
    for i, op in enumerate(ops):
        region = len(op.regions) and op.name != "scf.execute_region"  # a branch or a loop, as one op
        operands = _region_operands(op) if region else op.operands
        used: frozenset[int] = frozenset().union(*(roots.get(v, frozenset()) for v in operands))
        for b in used:
            plan.buffers[b].end = max(plan.buffers[b].end, i)
        if op.name == "func.return":
            outputs |= used
        elif op.name == "scf.yield":
            parent = op.parent
            for r, v in zip(parent.results, op.operands):
                roots[r] = roots.get(v, frozenset())
        elif op.name == "relax.call_tir":
            callee = ir.FlatSymbolRefAttr(op.attributes["callee"]).value
            kernel = kernels.get(callee)
            allocating = kernel is None or len(kernel.inputs) == len(op.operands)
            inplace = inplace_operands(op)
            for r in op.results:
                if inplace[r.result_number] >= 0:  # written into an operand's buffer: an alias of it
                    roots[r] = roots.get(op.operands[inplace[r.result_number]], frozenset())
                    continue
                size = tensor_bytes(relax_type(r.type))
                reason = ""
                if allocating:
                    reason = "allocated by its kernel"
                elif size is None:
                    reason = "size unknown"
                elif not size.free_symbols <= known:
                    reason = "size uses symbols bound inside the function"
                roots[r] = frozenset({len(plan.buffers)})
                plan.buffers.append(Buffer(r, size if size is not None else const(0), i, i, reason))
        elif op.name != "scf.execute_region" and getattr(op_class(op), "ALIASES_OPERANDS", True):
            for r in op.results:  # match_cast, tuples, anything else: results may alias operands
                roots[r] = used
    for b in outputs:
        plan.buffers[b].reason = "function output"
    return plan


def assign(plan: FunctionPlan) -> None:
    """Greedy storage assignment in program order (best fit, static when bounded)."""
    planned = [i for i, b in enumerate(plan.buffers) if not b.reason]
    by_start: dict[int, list[int]] = {}
    for i in planned:
        by_start.setdefault(plan.buffers[i].start, []).append(i)
    free: list[int] = []
    active: list[int] = []
    steps = sorted({plan.buffers[i].start for i in planned} | {plan.buffers[i].end + 1 for i in planned})
    for t in steps:
        still = []
        for i in active:
            b = plan.buffers[i]
            if b.end < t:
                if b.storage not in free:
                    free.append(b.storage)
            else:
                still.append(i)
        active = still
        for i in by_start.get(t, []):
            b = plan.buffers[i]
            b.storage = _choose(plan, b.size, free)
            free = [s for s in free if s != b.storage]
            plan.storages[b.storage].buffers.append(i)
            active.append(i)
        live = [plan.buffers[i].size for i in active]
        if by_start.get(t):
            plan.points.append(sum(live, const(0)))


def _choose(plan: FunctionPlan, size: Expr, free: list[int]) -> int:
    bound = size.upper_bound(plan.bounds)
    if bound is not None and plan.max_static_bytes and bound > plan.max_static_bytes:
        bound = None  # sized by the tensor's own formula, like a tensor of unbounded symbols
    storages = plan.storages
    if bound is not None:
        static = [s for s in free if storages[s].static]
        fits = [s for s in static if storages[s].size.value >= bound]  # type: ignore[operator]
        if fits:
            return min(fits, key=lambda s: storages[s].size.value)  # type: ignore[arg-type,return-value]
        if static:
            s = max(static, key=lambda s: storages[s].size.value)  # type: ignore[arg-type]
            storages[s].size = const(bound)
            return s
        storages.append(Storage(const(bound), True))
        return len(storages) - 1
    dynamic = [s for s in free if not storages[s].static]
    fits = [s for s in dynamic if prove_le(size, storages[s].size, plan.bounds)]
    if fits:
        best = fits[0]
        for s in fits[1:]:
            if prove_le(storages[s].size, storages[best].size, plan.bounds):
                best = s
        return best
    grows = [s for s in dynamic if prove_le(storages[s].size, size, plan.bounds)]
    if grows:
        best = grows[0]
        for s in grows[1:]:
            if prove_le(storages[best].size, storages[s].size, plan.bounds):
                best = s
        storages[best].size = size
        return best
    storages.append(Storage(size, False))
    return len(storages) - 1


def plan_function(
    func: ir.Operation, kernels: Mapping[str, ir.FunctionType], max_static_bytes: int = 0
) -> FunctionPlan:
    plan = analyze(func, kernels)
    plan.max_static_bytes = max_static_bytes
    if not plan.skipped:
        assign(plan)
    return plan


def plan_module(module: ir.Operation) -> list[FunctionPlan]:
    """The plan of every relax function (attributes are not changed)."""
    kernels = _kernels(module)
    return [
        plan_function(op.operation, kernels)
        for op in module.regions[0].blocks[0].operations
        if is_relax_function(op.operation)
    ]


def report(module: ir.Module | ir.Operation) -> str:
    """The memory plan of every relax function of a module lowered to call_tir, as text."""
    op = module.operation if isinstance(module, ir.Module) else module
    return "\n".join(p.format() for p in plan_module(op))


# -- attributes ------------------------------------------------------------------------------------------


def _size_attr(e: Expr) -> ir.Attribute:
    v = e.value
    if v is not None:
        return ir.IntegerAttr.get(ir.IntegerType.get_signless(64), v)
    return ir.StringAttr.get(str(e))


def record(func: ir.Operation, plan: FunctionPlan) -> None:
    """Write the plan onto the function and its call_tir ops (removing any earlier plan)."""
    i64 = ir.IntegerType.get_signless(64)
    per_op: dict[ir.Operation, list[int]] = {}
    for b in plan.buffers:
        owner = b.value.owner.operation
        per_op.setdefault(owner, [-1] * len(owner.results))[b.value.result_number] = b.storage

    def clear(op: ir.Operation) -> ir.WalkResult:
        if op.name == "relax.call_tir" and STORAGE_ATTR in op.attributes:
            del op.attributes[STORAGE_ATTR]
        return ir.WalkResult.ADVANCE

    func.walk(clear)
    if STORAGES_ATTR in func.attributes:
        del func.attributes[STORAGES_ATTR]
    if not plan.storages:
        return
    func.attributes[STORAGES_ATTR] = ir.ArrayAttr.get([_size_attr(s.size) for s in plan.storages])
    for op, ids in per_op.items():
        if any(i >= 0 for i in ids):
            op.attributes[STORAGE_ATTR] = ir.ArrayAttr.get([ir.IntegerAttr.get(i64, i) for i in ids])


def read_storages(func: ir.Operation) -> list[Expr]:
    """The storage sizes a function's plan records (empty when it has none)."""
    if STORAGES_ATTR not in func.attributes:
        return []
    out = []
    for a in ir.ArrayAttr(func.attributes[STORAGES_ATTR]):
        out.append(
            const(ir.IntegerAttr(a).value)
            if isinstance(a, ir.IntegerAttr)
            else parse_expr(ir.StringAttr(a).value)
        )
    return out


def storage_of(op: ir.Operation, result: int) -> int:
    """The storage a call_tir result is planned into, or -1."""
    if STORAGE_ATTR not in op.attributes:
        return -1
    ids = ir.ArrayAttr(op.attributes[STORAGE_ATTR])
    return ir.IntegerAttr(ids[result]).value if result < len(ids) else -1


def check_plan(func: ir.Operation, kernels: Mapping[str, ir.FunctionType]) -> str | None:
    """Why a recorded plan is unsafe (sizes, overlapping live ranges, unplannable values), or None."""
    storages = read_storages(func)
    plan = analyze(func, kernels)
    live: dict[int, list[Buffer]] = {}
    for b in plan.buffers:
        s = storage_of(b.value.owner, b.value.result_number)
        if s < 0:
            continue
        if plan.skipped or b.reason:
            return f"{_named(b)} is planned into storage {s} but cannot be ({plan.skipped or b.reason})"
        if s >= len(storages):
            return f"{_named(b)} is planned into storage {s}, but the function has {len(storages)} storages"
        if not prove_le(b.size, storages[s], plan.bounds):
            return f"{_named(b)} needs {b.size} bytes, more than storage {s} holds ({storages[s]})"
        live.setdefault(s, []).append(b)
    for s, buffers in live.items():  # by start: a live range overlaps an earlier one iff the latest-ending
        latest = None  # of those does not end before it starts (n log n; a pairwise check took seconds)
        for b in sorted(buffers, key=lambda b: b.start):
            if latest is not None and b.start <= latest.end:
                return f"{_named(b)} and {latest.value.get_name()} share storage {s} while both are live"
            if latest is None or b.end > latest.end:
                latest = b
    nested = _nested_storage(func)
    if nested is not None:
        return f"{nested.get_name()} is defined inside a branch or loop body, where nothing is planned"
    known = param_symbols(func)
    for i, e in enumerate(storages):
        if not e.free_symbols <= known:
            return f"storage {i} ({e}) uses symbols the parameters do not define"
    return None


def _named(b: Buffer) -> str:
    return f"{b.value.get_name()} ({relax_type(b.value.type)})"


def _nested_storage(func: ir.Operation) -> ir.Value | None:
    """A result planned into a storage by an op inside an ``scf.if``/``scf.while``, or None."""
    found: list[ir.Value] = []

    def visit(op: ir.Operation) -> ir.WalkResult:
        if op.name in ("scf.if", "scf.while"):
            op.walk(lambda x: _planned(x, found), ir.WalkOrder.PRE_ORDER)
            return ir.WalkResult.SKIP
        return ir.WalkResult.ADVANCE

    func.walk(visit, ir.WalkOrder.PRE_ORDER)
    return found[0] if found else None


def _planned(op: ir.Operation, found: list[ir.Value]) -> ir.WalkResult:
    if STORAGE_ATTR in op.attributes:
        found.extend(r for i, r in enumerate(op.results) if storage_of(op, i) >= 0)
    return ir.WalkResult.ADVANCE


@register_pass("relax-plan-memory")
class PlanMemory:
    """Plan storages for the intermediates of relax functions (liveness, symbolic sizes, upper bounds)."""

    report: bool = False
    # storages sized by upper bounds stay at most this large (0: no limit); a larger bound is planned by
    # the tensor's own size (devices whose buffers are real memory, not lazily mapped: WebGPU)
    max_static_bytes: int = 0

    def run(self, module: ir.Operation) -> None:
        kernels = _kernels(module)
        plans = []
        for op in module.regions[0].blocks[0].operations:
            f = op.operation
            if not is_relax_function(f):
                continue
            plan = plan_function(f, kernels, self.max_static_bytes)
            record(f, plan)
            plans.append(plan)
        if self.report:
            print("\n".join(p.format() for p in plans), file=sys.stderr)

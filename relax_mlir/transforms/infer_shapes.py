"""The ``relax-infer-shapes`` pass: forward deduction over a module, refining result types.

A worklist over functions: each function is walked in program order; every relax op gets its
deduced result types (stated results of match_cast / call_tir / call_dps_library are kept),
dataflow blocks and ``func.call`` results follow their yields and callees, and the function
type follows its returned values. When a function's signature changes, its callers are
walked again. Running the pass twice changes nothing the second time.

Control flow (``relax.condition`` feeding upstream ``scf.if`` / ``scf.while``): an ``scf.if``'s results are the
join of its branches' yields (``dialects/join.py``), an ``scf.while``'s carried values the fixed point of
``join(init, body(T))``; symbols bound by a match_cast inside a branch or body are forgotten at the join. A
value more precise than the joined type is weakened with a ``relax.match_cast`` that cannot fail (no run-time
check), which a later run looks through, so a join can become more precise again.
"""

from __future__ import annotations

from mlir import ir

from relax_mlir.dialects.join import forget, join
from relax_mlir.dialects.ops.structural import DeclaredResultsOp, MatchCastOp, cast_cannot_fail
from relax_mlir.dialects.registry import OPS, RelaxOp, check_types, describe_location
from relax_mlir.dialects.types import RelaxType, bare_symbols, relax_type, to_mlir
from relax_mlir.errors import ShapeError
from relax_mlir.transforms.registry import PassFailed, register_pass
from relax_mlir.transforms.well_formed import DATAFLOW_ATTR, check_results_agree


class _Inference:
    def __init__(self, module: ir.Operation, raise_errors: bool = False) -> None:
        self.module = module
        self.raise_errors = raise_errors  # the builder's: a located ShapeError instead of a diagnostic
        body = module.regions[0].blocks[0]
        self.functions = {
            ir.StringAttr(op.attributes["sym_name"]).value: op.operation
            for op in body.operations
            if op.operation.name == "func.func"
        }
        self.callers: dict[str, set[str]] = {name: set() for name in self.functions}
        self.failed = False
        self.scope: set[str] = set()  # the symbols visible where the walk is (params, match_casts before)
        self.loose = 0  # > 0 inside a loop body being iterated: result types follow the carried types

    def run(self) -> None:
        worklist = list(self.functions)
        queued = set(worklist)
        while worklist:
            name = worklist.pop(0)
            queued.discard(name)
            if self.visit_function(name):
                for caller in sorted(self.callers[name]):
                    if caller not in queued:
                        worklist.append(caller)
                        queued.add(caller)

    def visit_function(self, name: str) -> bool:
        """Refine one function; True when its function type changed."""
        f = self.functions[name]
        if not f.regions[0].blocks:
            return False
        self.scope = set()
        for arg in f.regions[0].blocks[0].arguments:
            t = relax_type(arg.type)
            if t is not None:
                self.scope |= bare_symbols(t)
        for op in f.regions[0].blocks[0].operations:
            self.visit(op.operation, name)
        return self.update_signature(f)

    def visit(self, op: ir.Operation, func_name: str) -> None:
        if op.name in ("scf.if", "scf.while"):
            try:
                (self.visit_if if op.name == "scf.if" else self.visit_while)(op, func_name)
            except ShapeError as e:
                self.error(op, e)
            return
        for region in op.regions:
            for block in region.blocks:
                for inner in block.operations:
                    self.visit(inner.operation, func_name)
        name = op.name
        if name.startswith("relax."):
            cls = OPS.get(name.removeprefix("relax."))
            if cls is not None:
                self.refine_relax_op(cls, op)
        elif name == "scf.execute_region":
            block = op.regions[0].blocks[0]
            terminator = block.operations[len(block.operations) - 1]
            self.set_types(op, [v.type for v in terminator.operands])
        elif name == "func.call":
            callee = ir.FlatSymbolRefAttr(op.attributes["callee"]).value
            if callee in self.functions:
                self.callers[callee].add(func_name)
                ftype = ir.FunctionType(ir.TypeAttr(self.functions[callee].attributes["function_type"]).value)
                self.set_types(op, list(ftype.results))

    def refine_relax_op(self, cls: type[RelaxOp], op: ir.Operation) -> None:
        """Deduced results replace coarser declared ones; stated results (match_cast, calls) are kept.
        Either way, results the operands make impossible are reported."""
        problem = check_types(cls, op)
        if problem is not None:  # wrong kinds of operands: relax-verify reports it (the builder raises)
            if self.raise_errors:
                self.error(op, ShapeError(problem))
            return
        view: RelaxOp = op.opview  # type: ignore[assignment]
        declared = [relax_type(r.type) for r in op.results]
        try:
            if issubclass(cls, DeclaredResultsOp):
                cls.check_results(view.operand_types(), view.attr_values(), declared)
                if cls is MatchCastOp:
                    self.scope |= bare_symbols(declared[0])  # type: ignore[arg-type]
                return
            deduced = cls.deduce(view.operand_types(), view.attr_values())
            if not self.loose:
                check_results_agree(declared, deduced)
        except ShapeError as e:
            self.error(op, e)
            return
        self.set_types(op, [to_mlir(t) for t in deduced])

    def error(self, op: ir.Operation, e: ShapeError) -> None:
        if self.raise_errors:
            raise ShapeError(f"{describe_location(op.location)}'{op.name}' op {e}") from None
        op.location.emit_error(f"'{op.name}' op {e}")
        self.failed = True

    # -- control flow ------------------------------------------------------------------------------
    def visit_block(self, block: ir.Block, func_name: str, outer: set[str]) -> ir.Operation:
        """Refine a branch or loop body in a scope of its own; returns its terminator."""
        self.scope = set(outer)
        for inner in block.operations:
            self.visit(inner.operation, func_name)
        self.scope = outer
        return block.operations[len(block.operations) - 1].operation

    def visit_if(self, op: ir.Operation, func_name: str) -> None:
        """Results of an ``scf.if``: the join of its branches' yields (symbols bound inside forgotten)."""
        outer = self.scope
        yields = [self.visit_block(r.blocks[0], func_name, outer) for r in op.regions if len(r.blocks)]
        if not op.results:
            return
        if len(yields) != 2:
            raise ShapeError("an scf.if with results needs an else branch")
        types = [
            joined_types([precise(y.operands[i]) for y in yields], outer) or r.type
            for i, r in enumerate(op.results)
        ]
        self.set_types(op, types)
        for y in yields:
            coerce_operands(y, 0, types)

    def visit_while(self, op: ir.Operation, func_name: str) -> None:
        """Carried types of an ``scf.while``: the fixed point of join(init, body(T)), which a join reaches
        because it only coarsens. Ops in the body follow the carried types (``loose``)."""
        outer = self.scope
        before, after = op.regions[0].blocks[0], op.regions[1].blocks[0]
        carried = [joined_types([precise(v)], outer) or v.type for v in op.operands]
        self.loose += 1
        try:
            for _ in range(_MAX_ITERATIONS):
                for arg, t in zip(before.arguments, carried):
                    if arg.type != t:
                        arg.set_type(t)
                cond = self.visit_block(before, func_name, outer)
                forwarded = [joined_types([precise(v)], outer) or v.type for v in list(cond.operands)[1:]]
                for arg, t in zip(after.arguments, forwarded):
                    if arg.type != t:
                        arg.set_type(t)
                self.set_types(op, forwarded)
                yielded = self.visit_block(after, func_name, outer)
                new = [joined_types([c, precise(y)], outer) or c for c, y in zip(carried, yielded.operands)]
                if new == carried:
                    break
                carried = new
            else:
                raise ShapeError(f"the loop-carried types do not settle after {_MAX_ITERATIONS} rounds")
        finally:
            self.loose -= 1
        coerce_operands(op, 0, carried)
        coerce_operands(cond, 1, forwarded)
        coerce_operands(yielded, 0, carried)

    @staticmethod
    def set_types(op: ir.Operation, types: list[ir.Type]) -> None:
        for result, t in zip(op.results, types):
            if result.type != t:
                result.set_type(t)

    @staticmethod
    def update_signature(f: ir.Operation) -> bool:
        block = f.regions[0].blocks[0]
        ret = block.operations[len(block.operations) - 1]
        if ret.name != "func.return":
            return False
        ftype = ir.FunctionType(ir.TypeAttr(f.attributes["function_type"]).value)
        results = [v.type for v in ret.operands]
        if list(ftype.results) == results:
            return False
        f.attributes["function_type"] = ir.TypeAttr.get(ir.FunctionType.get(list(ftype.inputs), results))
        return True


_MAX_ITERATIONS = 64


def refine_control_flow(op: ir.Operation) -> None:
    """Deduce the result types of an ``scf.if`` or ``scf.while`` that the builder has just closed (a loop
    body built on the initial types is re-deduced on the joined ones); casts included. Raises a located
    ShapeError when a branch or body is ill-typed."""
    func = op
    while func.name != "func.func":
        func = func.parent
    inference = _Inference(func.parent, raise_errors=True)
    inference.scope = visible_symbols(op)
    name = ir.StringAttr(func.attributes["sym_name"]).value
    (inference.visit_if if op.name == "scf.if" else inference.visit_while)(op, name)


def visible_symbols(op: ir.Operation) -> set[str]:
    """The symbols defined where ``op`` is: by its function's parameters, and by the match_casts before it
    in its block and in each enclosing block (dataflow blocks included, branches and loop bodies not)."""
    out: set[str] = set()
    while op.name != "func.func":
        for other in op.block.operations:
            if other.operation == op:
                break
            out |= _cast_symbols(other.operation)
        op = op.parent
    for arg in op.regions[0].blocks[0].arguments:
        t = relax_type(arg.type)
        if t is not None:
            out |= bare_symbols(t)
    return out


def _cast_symbols(op: ir.Operation) -> set[str]:
    if op.name == "relax.match_cast":
        t = relax_type(op.results[0].type)
        return bare_symbols(t) if t is not None else set()
    if op.name == "scf.execute_region" and DATAFLOW_ATTR in op.attributes:
        return {s for inner in op.regions[0].blocks[0].operations for s in _cast_symbols(inner.operation)}
    return set()


def joined_types(types: list[ir.Type], visible: set[str]) -> ir.Type | None:
    """The join of relax types, with symbols outside ``visible`` forgotten; None if one is not relax."""
    joined: RelaxType | None = None
    for mt in types:
        t = relax_type(mt)
        if t is None:
            return None
        joined = t if joined is None else join(joined, t)
    assert joined is not None
    return to_mlir(forget(joined, visible))


def _weakening_cast(v: ir.Value) -> ir.Value | None:
    """The source of ``v`` when ``v`` is a match_cast that cannot fail used once (one ``coerce_operands``
    makes), else None."""
    if not (isinstance(v, ir.OpResult) and v.owner.name == "relax.match_cast"):
        return None
    src = v.owner.operands[0]
    if next(iter(v.uses), None) is None or len(list(v.uses)) != 1:
        return None
    return src if cast_cannot_fail(relax_type(src.type), relax_type(v.type)) else None


def precise(v: ir.Value) -> ir.Type:
    """The type of ``v``, looking through a weakening cast (so a join can become more precise again)."""
    src = _weakening_cast(v)
    return v.type if src is None else src.type


def coerce_operands(op: ir.Operation, start: int, types: list[ir.Type]) -> None:
    """Make operands ``start...`` of ``op`` (a yield, a loop's inits) have ``types``, weakening a more precise
    value with a ``relax.match_cast`` that cannot fail (its check is dropped); a weakening cast made earlier
    is retyped instead of stacked."""
    for i, t in enumerate(types):
        v = op.operands[start + i]
        if v.type == t:
            continue
        src, target = relax_type(v.type), relax_type(t)
        if src is None or target is None:
            continue  # non-relax values (index, i1) are the user's
        source = _weakening_cast(v)
        if source is not None and cast_cannot_fail(relax_type(source.type), target):
            if source.type == t:
                op.operands[start + i] = source
            else:
                v.set_type(t)
            continue
        if not cast_cannot_fail(src, target):
            raise ShapeError(
                f"operand #{start + i} has type {src}, which the joined type {target} cannot hold"
            )
        cast = MatchCastOp.build([v], result_types=[target], loc=op.location, ip=ir.InsertionPoint(op))
        op.operands[start + i] = cast.result


def infer_shapes(module: ir.Operation) -> bool:
    """Refine every result type in ``module``; False when some op is ill-typed (diagnostics emitted)."""
    inference = _Inference(module)
    inference.run()
    return not inference.failed


@register_pass("relax-infer-shapes")
class InferShapesPass:
    """Refine result types by forward symbolic shape deduction (re-runnable after any pass)."""

    def run(self, module: ir.Operation) -> None:
        if not infer_shapes(module):
            raise PassFailed("shape inference failed")

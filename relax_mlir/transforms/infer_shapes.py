"""The ``relax-infer-shapes`` pass: forward deduction over a module, refining result types.

A worklist over functions: each function is walked in program order; every relax op gets its
deduced result types (stated results of match_cast / call_tir / call_dps_library are kept),
dataflow blocks and ``func.call`` results follow their yields and callees, ``relax.call`` results
instantiate their callee's signature (``ops/call.py``), and the function type follows its returned
values. When a function's signature changes, its callers are walked again, recursive calls included,
until nothing changes (a fixed point over the call graph); a signature that keeps changing (a recursion
whose result grows) is widened: after ``WIDEN_AFTER`` changes, dims that changed become unknown.
Running the pass twice changes nothing the second time.
"""

from __future__ import annotations

from mlir import ir

from relax_mlir.dialects.ops.call import deduce_call
from relax_mlir.dialects.ops.structural import DeclaredResultsOp
from relax_mlir.dialects.registry import OPS, RelaxOp, check_types
from relax_mlir.dialects.types import (
    ObjectType,
    PrimType,
    RelaxType,
    ShapeType,
    TensorType,
    TupleType,
    relax_type,
    to_mlir,
)
from relax_mlir.errors import ShapeError
from relax_mlir.transforms.registry import PassFailed, register_pass
from relax_mlir.transforms.well_formed import check_results_agree

WIDEN_AFTER = 8


class _Inference:
    def __init__(self, module: ir.Operation) -> None:
        self.module = module
        body = module.regions[0].blocks[0]
        self.functions = {
            ir.StringAttr(op.attributes["sym_name"]).value: op.operation
            for op in body.operations
            if op.operation.name == "func.func"
        }
        self.callers: dict[str, set[str]] = {name: set() for name in self.functions}
        self.changes: dict[str, int] = dict.fromkeys(self.functions, 0)
        self.failed = False

    def run(self) -> None:
        worklist = list(self.functions)
        queued = set(worklist)
        while worklist:
            name = worklist.pop(0)
            queued.discard(name)
            if self.visit_function(name):
                self.changes[name] += 1
                for caller in sorted(self.callers[name]):
                    if caller not in queued:
                        worklist.append(caller)
                        queued.add(caller)

    def visit_function(self, name: str) -> bool:
        """Refine one function; True when its function type changed."""
        f = self.functions[name]
        if not f.regions[0].blocks:
            return False
        for op in f.regions[0].blocks[0].operations:
            self.visit(op.operation, name)
        return self.update_signature(f, widen=self.changes[name] >= WIDEN_AFTER)

    def visit(self, op: ir.Operation, func_name: str) -> None:
        for region in op.regions:
            for block in region.blocks:
                for inner in block.operations:
                    self.visit(inner.operation, func_name)
        name = op.name
        if name == "relax.call":
            self.refine_call(op, func_name)
        elif name.startswith("relax."):
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

    def refine_call(self, op: ir.Operation, func_name: str) -> None:
        """A call's results: the callee's signature, instantiated by what the arguments bind."""
        callee = ir.FlatSymbolRefAttr(op.attributes["callee"]).value
        f = self.functions.get(callee)
        if f is None:
            return  # relax-verify reports it
        self.callers[callee].add(func_name)
        ftype = ir.FunctionType(ir.TypeAttr(f.attributes["function_type"]).value)
        try:
            _, deduced = deduce_call(ftype, [relax_type(v.type) for v in op.operands])
            check_results_agree([relax_type(r.type) for r in op.results], deduced)
        except ShapeError as e:
            op.location.emit_error(f"'relax.call' op @{callee}: {e}")
            self.failed = True
            return
        self.set_types(op, [to_mlir(t) for t in deduced])

    def refine_relax_op(self, cls: type[RelaxOp], op: ir.Operation) -> None:
        """Deduced results replace coarser declared ones; stated results (match_cast, calls) are kept.
        Either way, results the operands make impossible are reported."""
        if check_types(cls, op) is not None:
            return  # wrong kinds of operands: relax-verify reports it
        view: RelaxOp = op.opview  # type: ignore[assignment]
        declared = [relax_type(r.type) for r in op.results]
        try:
            if issubclass(cls, DeclaredResultsOp):
                cls.check_results(view.operand_types(), view.attr_values(), declared)
                return
            deduced = cls.deduce(view.operand_types(), view.attr_values())
            check_results_agree(declared, deduced)
        except ShapeError as e:
            op.location.emit_error(f"'{op.name}' op {e}")
            self.failed = True
            return
        self.set_types(op, [to_mlir(t) for t in deduced])

    @staticmethod
    def set_types(op: ir.Operation, types: list[ir.Type]) -> None:
        for result, t in zip(op.results, types):
            if result.type != t:
                result.set_type(t)

    @staticmethod
    def update_signature(f: ir.Operation, widen: bool = False) -> bool:
        block = f.regions[0].blocks[0]
        ret = block.operations[len(block.operations) - 1]
        if ret.name != "func.return":
            return False
        ftype = ir.FunctionType(ir.TypeAttr(f.attributes["function_type"]).value)
        results = [v.type for v in ret.operands]
        if widen and len(results) == len(ftype.results):
            results = [_widen(old, new) for old, new in zip(ftype.results, results)]
        if list(ftype.results) == results:
            return False
        f.attributes["function_type"] = ir.TypeAttr.get(ir.FunctionType.get(list(ftype.inputs), results))
        return True


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


def _widen(old: ir.Type, new: ir.Type) -> ir.Type:
    """A type covering both: dims that differ become unknown, ranks that differ unknown rank."""
    a, b = relax_type(old), relax_type(new)
    if a is None or b is None or a == b:
        return new
    return to_mlir(_widen_types(a, b))


def _widen_types(a: RelaxType, b: RelaxType) -> RelaxType:
    if type(a) is not type(b):
        return ObjectType()
    if isinstance(a, TensorType):
        assert isinstance(b, TensorType)
        return TensorType(_widen_dims(a.shape, b.shape), a.dtype if a.dtype == b.dtype else None)
    if isinstance(a, ShapeType):
        assert isinstance(b, ShapeType)
        return ShapeType(_widen_dims(a.values, b.values))
    if isinstance(a, PrimType):
        return PrimType(a.value if a == b else None)
    if isinstance(a, TupleType):
        assert isinstance(b, TupleType)
        if len(a.fields) == len(b.fields):
            return TupleType(tuple(_widen_types(x, y) for x, y in zip(a.fields, b.fields)))
    return ObjectType() if a != b else a


def _widen_dims(a: tuple | None, b: tuple | None) -> tuple | None:
    if a is None or b is None or len(a) != len(b):
        return None
    return tuple(x if x == y else None for x, y in zip(a, b))

"""Well-formedness of relax IR, and the ``relax-verify`` pass.

Checks, per function with relax types:
- every symbol in a type is defined before use: by appearing alone as a dim of a parameter
  type, or in the result type of a ``relax.match_cast``;
- ``relax.upper_bounds`` names defined symbols with positive integer bounds;
- ``relax.load_time_params`` (parameters bound once at load, ``transforms/lift_load_time_params.py``) is a
  list of distinct names of tensor parameters (``relax.name``, else ``#i``);
- every relax op has operands/attributes of the right kinds and result types that agree with
  its shape deduction (stated results of match_cast/call_tir/call_dps_library must be possible);
- ``call_tir`` callees exist in the module;
- ``relax.call`` callees are relax functions of the module whose parameters the arguments can match, and the
  call's result types agree with the callee's signature instantiated at the call (``ops/call.py``);
- dataflow blocks (``scf.execute_region`` marked ``no_inline`` and ``relax.dataflow``) hold only relax ops
  (no control flow). Their values are visible outside only through the yield: MLIR's dominance check
  enforces that;
- a symbol bound by a match_cast inside a branch (``scf.if``) or loop body (``scf.while``) is visible only
  there: a type after the join that uses it is reported (the join forgets it, ``dialects/join.py``).
"""

from __future__ import annotations

from collections.abc import Iterator

from mlir import ir

from relax_mlir.dialects.dims import fmt_shape, provably_different
from relax_mlir.dialects.ops.call import CallOp, deduce_call
from relax_mlir.dialects.ops.structural import CallTirOp, DeclaredResultsOp
from relax_mlir.dialects.registry import OPS, RelaxOp
from relax_mlir.dialects.types import (
    ObjectType,
    PrimType,
    RelaxType,
    ShapeType,
    TensorType,
    TupleType,
    bare_symbols,
    free_symbols,
    relax_type,
)
from relax_mlir.dialects.verify import Problem, op_structure_problem
from relax_mlir.errors import ShapeError
from relax_mlir.lowering.kernel import element
from relax_mlir.shape_infer.expr import format_dim
from relax_mlir.transforms.registry import PassFailed, register_pass

DATAFLOW_ATTR = "relax.dataflow"
UPPER_BOUNDS_ATTR = "relax.upper_bounds"
LOAD_TIME_ATTR = "relax.load_time_params"
LOAD_OUTPUTS_ATTR = "relax.load_outputs"  # on the load function: the names of its results
PARAM_NAME_ATTR = "relax.name"


def param_names(func: ir.Operation) -> list[str]:
    """Parameter names from ``relax.name`` argument attributes (the builder sets them), else ``#i``."""
    n = len(ir.FunctionType(ir.TypeAttr(func.attributes["function_type"]).value).inputs)
    names = [f"#{i}" for i in range(n)]
    if "arg_attrs" not in func.attributes:
        return names
    for i, attrs in enumerate(ir.ArrayAttr(func.attributes["arg_attrs"])):
        attrs = ir.DictAttr(attrs)
        if PARAM_NAME_ATTR in attrs:
            names[i] = ir.StringAttr(attrs[PARAM_NAME_ATTR]).value
    return names


def load_time_names(func: ir.Operation) -> list[str] | None:
    """The names in ``func``'s ``relax.load_time_params`` (None without the attribute, or when it is not a
    list of strings: ``relax-verify`` reports that)."""
    if LOAD_TIME_ATTR not in func.attributes:
        return None
    attr = func.attributes[LOAD_TIME_ATTR]
    if not isinstance(attr, ir.ArrayAttr) or not all(isinstance(a, ir.StringAttr) for a in attr):
        return None
    return [ir.StringAttr(a).value for a in attr]


def verify_module(module: ir.Operation) -> list[Problem]:
    """Every well-formedness problem of a module, in IR order."""
    problems: list[Problem] = []
    body = module.regions[0].blocks[0]
    functions = {
        str(ir.StringAttr(op.attributes["sym_name"]).value): ir.FunctionType(
            ir.TypeAttr(op.attributes["function_type"]).value
        )
        for op in body.operations
        if _is_func(op)
    }
    for op in body.operations:
        if _is_func(op.operation):
            _FunctionVerifier(op.operation, functions, problems).run()
    return problems


def _is_func(op: ir.Operation | ir.OpView) -> bool:
    return op.operation.name == "func.func"


class _FunctionVerifier:
    def __init__(
        self, func: ir.Operation, functions: dict[str, ir.FunctionType], problems: list[Problem]
    ) -> None:
        self.func = func
        self.functions = functions
        self.problems = problems
        self.defined: set[str] = set()
        self.name = ir.StringAttr(func.attributes["sym_name"]).value

    def report(self, loc: ir.Location, message: str) -> None:
        self.problems.append(Problem(loc, message))

    def run(self) -> None:
        if not self.func.regions[0].blocks:
            return  # a declaration
        args = list(self.func.regions[0].blocks[0].arguments)
        param_types = [relax_type(a.type) for a in args]
        for t in param_types:
            if t is not None:
                self.defined |= bare_symbols(t)
        for i, t in enumerate(param_types):
            if t is None:
                continue
            missing = free_symbols(t) - self.defined
            if missing:
                self.report(
                    args[i].location if hasattr(args[i], "location") else self.func.location,
                    f"parameter #{i} of @{self.name} uses symbol(s) {', '.join(sorted(missing))} that no parameter "
                    "defines (a symbol is defined where it appears alone as a dim)",
                )
        self.check_upper_bounds()
        self.check_load_time(param_types)
        for op in self.func.regions[0].blocks[0].operations:
            self.visit(op.operation)

    def check_upper_bounds(self) -> None:
        if UPPER_BOUNDS_ATTR not in self.func.attributes:
            return
        attr = self.func.attributes[UPPER_BOUNDS_ATTR]
        if not isinstance(attr, ir.DictAttr):
            self.report(self.func.location, f"'{UPPER_BOUNDS_ATTR}' must be a dictionary like {{n = 4096}}")
            return
        for named in attr:
            value = named.attr
            if not isinstance(value, ir.IntegerAttr) or value.value <= 0:
                self.report(
                    self.func.location, f"upper bound of symbol '{named.name}' must be a positive integer"
                )
            elif named.name not in self.defined:
                self.report(
                    self.func.location,
                    f"upper bound names symbol '{named.name}', which no parameter of @{self.name} defines",
                )

    def check_load_time(self, param_types: list[RelaxType | None]) -> None:
        if LOAD_TIME_ATTR not in self.func.attributes:
            return
        names = load_time_names(self.func)
        if names is None:
            self.report(
                self.func.location, f"'{LOAD_TIME_ATTR}' must be a list of parameter names like [\"w\"]"
            )
            return
        params = param_names(self.func)
        for name in names:
            if name not in params:
                self.report(
                    self.func.location,
                    f"'{LOAD_TIME_ATTR}' names '{name}', which is not a parameter of @{self.name} "
                    f"(parameters: {', '.join(params)})",
                )
            elif names.count(name) > 1:
                self.report(self.func.location, f"'{LOAD_TIME_ATTR}' names '{name}' twice")
            elif not isinstance(param_types[params.index(name)], TensorType):
                self.report(
                    self.func.location,
                    f"load-time parameter '{name}' of @{self.name} must be a tensor, "
                    f"got {param_types[params.index(name)]}",
                )

    def visit(self, op: ir.Operation) -> None:
        if op.name == "scf.execute_region" and DATAFLOW_ATTR in op.attributes:
            self.check_dataflow(op)
        cls = OPS.get(op.name.removeprefix("relax.")) if op.name.startswith("relax.") else None
        if cls is not None:
            self.check_relax_op(cls, op)
        elif op.name == "func.return":
            self.check_symbols(op, [v.type for v in op.operands], "returned value")
        scoped = op.name in ("scf.if", "scf.while")  # symbols bound in a branch or loop body stay there
        for region in op.regions:
            outer = set(self.defined)
            for block in region.blocks:
                for inner in block.operations:
                    self.visit(inner.operation)
            if scoped:
                self.defined = outer
        if scoped:
            self.check_symbols(op, [r.type for r in op.results], "result")

    def check_dataflow(self, op: ir.Operation) -> None:
        if "no_inline" not in op.attributes:
            self.report(
                op.location,
                "a relax dataflow block must be marked no_inline "
                "(`scf.execute_region -> T no_inline {...} {relax.dataflow}`), or canonicalize dissolves it",
            )
        for block in op.regions[0].blocks:
            for inner in block.operations:
                name = inner.operation.name
                if not name.startswith("relax.") and name != "scf.yield":
                    self.report(
                        inner.operation.location,
                        f"'{name}' op is not allowed in a relax dataflow block (only pure relax ops are)",
                    )

    def check_relax_op(self, cls: type[RelaxOp], op: ir.Operation) -> None:
        prefix = f"'{op.name}' op "
        message = op_structure_problem(cls, op)
        if message:
            self.report(op.location, prefix + message)
            return
        is_cast = cls.NAME == "match_cast"
        if not is_cast and not self.check_symbols(op, [r.type for r in op.results], "result"):
            return
        view: RelaxOp = op.opview  # type: ignore[assignment]
        operand_types = view.operand_types()
        attrs = view.attr_values()
        declared = [relax_type(r.type) for r in op.results]
        try:
            if cls is CallOp:
                check_results_agree(declared, self.call_results(attrs["callee"], operand_types))
            elif issubclass(cls, DeclaredResultsOp):
                cls.check_results(operand_types, attrs, declared)  # type: ignore[arg-type]
            else:
                deduced = cls.deduce(operand_types, attrs)
                check_results_agree(declared, deduced)
                for i, e in enumerate(deduced):
                    missing = free_symbols(e) - self.defined
                    if missing:
                        raise ShapeError(
                            f"result #{i} would be {e}, which uses undefined symbol(s) {', '.join(sorted(missing))}"
                        )
        except ShapeError as e:
            self.report(op.location, prefix + str(e))
            return
        if cls is CallTirOp:
            kernel = self.functions.get(attrs["callee"])
            problem = (
                f"callee @{attrs['callee']} is not a function of this module"
                if kernel is None
                else kernel_signature_problem(operand_types, declared, kernel)  # type: ignore[arg-type]
            )
            if problem:
                self.report(op.location, prefix + problem)
        if is_cast:
            self.defined |= bare_symbols(declared[0])  # type: ignore[arg-type]
            self.check_symbols(op, [r.type for r in op.results], "result")

    def call_results(self, callee: str, operand_types: list[RelaxType | None]) -> list[RelaxType]:
        """The result types of a ``relax.call`` of ``@callee``; ShapeError naming the problem."""
        ftype = self.functions.get(callee)
        if ftype is None:
            raise ShapeError(f"callee @{callee} is not a function of this module")
        try:
            return deduce_call(ftype, operand_types)[1]
        except ShapeError as e:
            raise ShapeError(f"@{callee}: {e}") from None

    def check_symbols(self, op: ir.Operation, types: list[ir.Type], what: str) -> bool:
        """Report types that use undefined symbols; True when there are none."""
        ok = True
        for i, mt in enumerate(types):
            t = relax_type(mt)
            if t is None:
                continue
            missing = free_symbols(t) - self.defined
            if missing:
                self.report(
                    op.location,
                    f"'{op.name}' op {what} #{i} uses undefined symbol(s) {', '.join(sorted(missing))}: define them "
                    "in a parameter type or with relax.match_cast before use",
                )
                ok = False
        return ok


def kernel_signature_problem(
    args: list[RelaxType | None], outs: list[RelaxType], kernel: ir.FunctionType
) -> str | None:
    """Why a ``call_tir`` kernel ``(args..., outs...) -> outs`` cannot take these values, or None."""
    inputs, results = list(kernel.inputs), list(kernel.results)
    allocating = any(d is None for t in outs if isinstance(t, TensorType) for d in (t.shape or ()))
    if allocating:  # the kernel allocates outputs whose dims are unknown: (args...) -> outs
        if len(inputs) != len(args) or len(results) != len(outs):
            return (
                f"callee takes {len(inputs)} arguments and returns {len(results)} values; an output with "
                f"unknown dims needs a kernel that takes the {len(args)} inputs and returns the {len(outs)} outputs"
            )
        return _argument_problem([*args, *outs], [*inputs, *results], len(args))
    if len(inputs) != len(args) + len(outs):
        return f"callee takes {len(inputs)} arguments, but the call passes {len(args)} inputs and {len(outs)} outputs"
    if len(results) != len(outs) or any(r != i for r, i in zip(results, inputs[len(args) :])):
        return "callee must return its output arguments' types (destination-passing style)"
    return _argument_problem([*args, *outs], inputs, len(args))


def _argument_problem(values: list[RelaxType | None], params: list[ir.Type], n_args: int) -> str | None:
    for i, (t, k) in enumerate(zip(values, params)):
        what = f"argument #{i}" if i < n_args else f"output #{i - n_args}"
        if isinstance(t, (ShapeType, PrimType)):
            if not isinstance(k, (ir.IndexType, ir.IntegerType, ir.ShapedType)):
                return f"{what}: callee parameter {k} cannot take {t}"
            continue
        if not isinstance(t, TensorType) or not isinstance(k, ir.RankedTensorType):
            return f"{what}: callee parameter {k} is not a ranked tensor for {t}"
        if t.dtype is not None and str(k.element_type) != element(t.dtype):
            return f"{what}: callee parameter {k} has element type {k.element_type}, the value is {t.dtype}"
        if t.shape is None:
            continue
        if k.rank != len(t.shape):
            return f"{what}: callee parameter {k} has rank {k.rank}, the value {t} has rank {len(t.shape)}"
        for axis, (d, kd) in enumerate(zip(t.shape, k.shape)):
            if d is not None and d.is_const and not k.is_dynamic_dim(axis) and d.value != kd:
                return f"{what}: dim {axis} is {d.value}, callee parameter {k} has {kd}"
    return None


def check_results_agree(declared: list[RelaxType | None], deduced: list[RelaxType]) -> None:
    """ShapeError unless there are as many declared results as deduced ones, each agreeing."""
    if len(declared) != len(deduced):
        raise ShapeError(f"has {len(declared)} results but its operands and attributes give {len(deduced)}")
    for i, (d, e) in enumerate(zip(declared, deduced)):
        check_agrees(d, e, f"result #{i}")


def check_agrees(declared: RelaxType | None, deduced: RelaxType, what: str) -> None:
    """ShapeError unless the declared type is the deduced one or coarser than it."""
    for problem in _disagreements(declared, deduced):
        raise ShapeError(f"{what} is declared {declared} but the operands give {deduced}: {problem}")


def _disagreements(declared: RelaxType | None, deduced: RelaxType) -> Iterator[str]:
    if isinstance(declared, ObjectType):
        return  # !relax.object is coarser than every type
    if declared is None or type(declared) is not type(deduced):
        yield "different kinds of value"
        return
    if isinstance(declared, TensorType):
        assert isinstance(deduced, TensorType)
        if declared.dtype is not None and declared.dtype != deduced.dtype:
            yield f"dtype {declared.dtype} vs {deduced.dtype}"
        yield from _dims_disagree(declared.shape, deduced.shape)
    elif isinstance(declared, ShapeType):
        assert isinstance(deduced, ShapeType)
        yield from _dims_disagree(declared.values, deduced.values)
    elif isinstance(declared, PrimType):
        assert isinstance(deduced, PrimType)
        yield from _dims_disagree((declared.value,), (deduced.value,))
    elif isinstance(declared, TupleType):
        assert isinstance(deduced, TupleType)
        if len(declared.fields) != len(deduced.fields):
            yield f"{len(declared.fields)} fields vs {len(deduced.fields)}"
            return
        for a, b in zip(declared.fields, deduced.fields):
            yield from _disagreements(a, b)


def _dims_disagree(declared: tuple | None, deduced: tuple | None) -> Iterator[str]:
    if declared is None:
        return
    if deduced is None:
        yield "the rank cannot be deduced (use relax.match_cast to state it)"
        return
    if len(declared) != len(deduced):
        yield f"rank {len(declared)} {fmt_shape(declared)} vs {len(deduced)} {fmt_shape(deduced)}"
        return
    for i, (a, b) in enumerate(zip(declared, deduced)):
        if a is None or a == b:
            continue
        if b is None:
            yield f"dim {i} cannot be deduced (use relax.match_cast to state it)"
        elif provably_different(a, b):
            yield f"dim {i} is {format_dim(a)} vs {format_dim(b)}"
        else:
            yield f"dim {i} is {format_dim(a)}, which is not provably equal to {format_dim(b)}"


@register_pass("relax-verify")
class VerifyPass:
    """Check well-formedness: symbols defined before use, result types agree with deduction, dataflow blocks."""

    def run(self, module: ir.Operation) -> None:
        problems = verify_module(module)
        for p in problems:
            p.loc.emit_error(p.message)
        if problems:
            raise PassFailed(f"{len(problems)} problem(s)")

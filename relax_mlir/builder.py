"""The Python builder API: functions with symbolic parameters, dataflow blocks, eager deduction.

    import relax_mlir.builder as rb
    from relax_mlir.dialects import relax as R

    bb = rb.BlockBuilder()
    with bb.function("main", {"x": rb.tensor(["batch", 512], "f32"), "w": rb.tensor([512, 64], "f32")},
                     upper_bounds={"batch": 64}) as (x, w):
        with bb.dataflow():
            y = R.relu(R.matmul(x, w))
            out = bb.emit_output(y)
        bb.ret(out)
    print(bb.module)

Every op helper deduces its result type when called, so an ill-typed program raises a
ShapeError at the user's own line (the op also gets that line as its location).

Control flow (outside dataflow blocks): a branch on a scalar tensor or prim value (nonzero: then), whose
results have the join of the branches' types; a while loop whose carried values may change shape (their
types are the join over the iterations)::

    with bb.if_(R.greater(s, zero)) as (then, else_):
        with then:
            bb.yield_(R.exp(x))
        with else_:
            bb.yield_(R.concat([x, x], axis=0))
    (y,) = then.results                     # !relax.tensor<["?"], f32>

    with bb.while_(x, i) as loop:           # initial carried values
        with loop.cond as (x, i):
            loop.condition(R.less(i, k))     # stop when false; the carried values become the results
        with loop.body as (x, i):
            bb.yield_(R.concat([x, x], axis=0), R.add(i, one))
    y, i = loop.results
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from mlir import ir
from mlir.dialects import func, scf

from relax_mlir.context import make_context
from relax_mlir.dialects.ops.control_flow import condition
from relax_mlir.dialects.registry import (
    as_dim,
    as_int64,
    as_list,
    caller_location,
    check_operands,
    describe_location,
)
from relax_mlir.dialects.types import (
    Dim,
    ObjectType,
    PrimType,
    RelaxType,
    ShapeType,
    TensorType,
    TupleType,
    check_type,
    parse_type,
    relax_type,
    to_mlir,
)
from relax_mlir.errors import ArgumentError, BuilderError, ShapeError
from relax_mlir.shape_infer.expr import parse_dim
from relax_mlir.transforms.infer_shapes import (
    coerce_operands,
    joined_types,
    refine_control_flow,
    visible_symbols,
)
from relax_mlir.transforms.well_formed import DATAFLOW_ATTR, LOAD_TIME_ATTR, UPPER_BOUNDS_ATTR

DimSpec = int | str


def _dims(values: Sequence[DimSpec] | None, what: str) -> tuple[Dim, ...] | None:
    """Dims from a list of ints and dim strings (``None``: unknown rank); ArgumentError naming ``what``."""
    if values is None:
        return None
    if isinstance(values, str):
        raise ArgumentError(
            f"{what}: expected a list of dims (ints and dim strings) or None, got the string {values!r}; "
            f"write [{values!r}] for one dim"
        )
    try:
        return tuple(parse_dim(as_dim(d)) for d in as_list(values, lambda d: d, "dims"))
    except (TypeError, ValueError) as e:
        raise ArgumentError(f"{what}: {e}") from None


def tensor(shape: Sequence[DimSpec] | None, dtype: str | None = "f32") -> TensorType:
    """A tensor type: ``tensor(["batch", "seq", 512], "f32")``; ``None`` shape = unknown rank.

    ArgumentError for dims that are not ints or dim strings; ShapeError for a negative dim, an unknown
    dtype or static dims too large to address (``types.type_problem``)."""
    if dtype is not None and not isinstance(dtype, str):
        raise ArgumentError(f"tensor(): dtype must be a string like 'f32' or None, got {dtype!r}")
    return check_type(TensorType(_dims(shape, "tensor() shape"), dtype))  # type: ignore[return-value]


def shape(values: Sequence[DimSpec] | None) -> ShapeType:
    """A shape-value type: ``shape(["n", 4])``."""
    return check_type(ShapeType(_dims(values, "shape() values")))  # type: ignore[return-value]


def prim(value: DimSpec = "?") -> PrimType:
    """A symbolic-integer type: ``prim("n")``."""
    return check_type(PrimType(_dims([value], "prim() value")[0]))  # type: ignore[index,return-value]


def tuple_type(*fields: RelaxType) -> TupleType:
    """A tuple type."""
    return TupleType(tuple(fields))


def object_type() -> ObjectType:
    """The type of any value."""
    return ObjectType()


def _param_type(func_name: str, param: str, t: RelaxType | str) -> ir.Type:
    """The MLIR type of parameter ``param``; errors name it."""
    if not isinstance(t, (str, TensorType, ShapeType, PrimType, TupleType, ObjectType)):
        raise ArgumentError(f"parameter '{param}' of @{func_name}: expected a relax type, got {t!r}")
    try:
        return to_mlir(as_type(t))
    except ShapeError as e:
        raise ShapeError(f"parameter '{param}' of @{func_name}: {e}") from None


def _upper_bounds(func_name: str, bounds: Mapping[str, int]) -> dict[str, int]:
    """Upper bounds as positive int64s; ArgumentError naming the symbol otherwise."""
    out = {}
    for symbol, value in bounds.items():
        try:
            out[symbol] = as_int64(value)
        except (TypeError, ValueError) as e:
            raise ArgumentError(f"upper bound of '{symbol}' in @{func_name}: {e}") from None
        if out[symbol] <= 0:
            raise ArgumentError(f"upper bound of '{symbol}' in @{func_name} must be positive, got {value}")
    return out


def kernel_tensor_type(t: TensorType | ir.Type | str) -> ir.Type:
    """The builtin tensor type a kernel uses for ``t``: symbolic and unknown dims become ``?``."""
    if isinstance(t, ir.Type):
        return t
    if isinstance(t, str):
        return ir.Type.parse(t)
    if t.shape is None or t.dtype is None:
        raise BuilderError(f"a kernel tensor needs a known rank and dtype, got {t}")
    dims = [d.value if d is not None and d.is_const else ir.ShapedType.get_dynamic_size() for d in t.shape]
    return ir.RankedTensorType.get(dims, ir.Type.parse(t.dtype))


def as_type(t: RelaxType | str) -> RelaxType:
    """A relax type from a type object or its spelling (``'!relax.tensor<["n"], f32>'``)."""
    return parse_type(t) if isinstance(t, str) else t


class BlockBuilder:
    """Builds a module of relax functions; op helpers called inside ``function`` insert there."""

    def __init__(self, context: ir.Context | None = None) -> None:
        self.context = context or make_context()
        self._stack = contextlib.ExitStack()
        with self.context, ir.Location.unknown():
            self.module = ir.Module.create()
        self._func: func.FuncOp | None = None
        self._dataflow: _Dataflow | None = None
        self._regions: list[_DataflowRegion] = []
        self._returned = False
        self._open: list[_Part] = []  # the branches and loop parts being built, innermost last

    @contextlib.contextmanager
    def function(
        self,
        name: str,
        params: Mapping[str, RelaxType | str],
        *,
        upper_bounds: Mapping[str, int] | None = None,
        private: bool = False,
        results: Sequence[RelaxType | str] | None = None,
        load_time: Sequence[str] = (),
    ) -> Iterator[list[ir.Value]]:
        """Define relax function ``@name``; yields its parameters. Call ``ret`` before leaving.

        ``results`` declares the result types up front, for a function that calls itself (``bb.call``);
        ``ret`` then sets them to the returned values' types. ``load_time`` names tensor parameters that are
        constant once loaded (weights): ``relax-lift-load-time-params`` moves what depends only on them
        (e.g. packing a matmul weight) to a load step run once (``Executable.load_params``)."""
        bounds = _upper_bounds(name, upper_bounds or {})
        for p in load_time:
            if p not in params:
                raise ArgumentError(f"bb.function(@{name}): load_time names '{p}', which is not a parameter")
            if not isinstance(as_type(params[p]), TensorType):
                raise ArgumentError(f"bb.function(@{name}): load-time parameter '{p}' must be a tensor")
        with self.context, ir.Location.unknown():
            types = [_param_type(name, p, t) for p, t in params.items()]
            declared = [_param_type(name, f"result #{i}", t) for i, t in enumerate(results or ())]
        with self._define(name, types, private) as (f, args):
            if declared:
                f.attributes["function_type"] = ir.TypeAttr.get(ir.FunctionType.get(types, declared))
            f.attributes["arg_attrs"] = ir.ArrayAttr.get(
                [ir.DictAttr.get({"relax.name": ir.StringAttr.get(n)}) for n in params]
            )
            if load_time:
                f.attributes[LOAD_TIME_ATTR] = ir.ArrayAttr.get([ir.StringAttr.get(p) for p in load_time])
            if bounds:
                i64 = ir.IntegerType.get_signless(64)
                f.attributes[UPPER_BOUNDS_ATTR] = ir.DictAttr.get(
                    {k: ir.IntegerAttr.get(i64, v) for k, v in bounds.items()}
                )
            yield args
            for region in self._regions:
                region.reroute_uses()

    @contextlib.contextmanager
    def kernel(
        self, name: str, ins: Sequence[TensorType | ir.Type | str], outs: Sequence[TensorType | ir.Type | str]
    ) -> Iterator[list[ir.Value]]:
        """Define a tensor-level kernel for ``relax.call_tir``: ``@name(ins..., outs...) -> outs``.

        Types are builtin tensors (``"tensor<?x4xf32>"``) or relax tensor types, whose symbolic dims
        become dynamic. Yields the inputs then the destinations; write the body with upstream
        dialects (``linalg``, ``tensor``, ``arith``...) and finish with ``bb.ret(results)``.
        """
        with self.context, ir.Location.unknown():
            types = [kernel_tensor_type(t) for t in (*ins, *outs)]
        with self._define(name, types, private=True) as (_, args):
            yield args

    @contextlib.contextmanager
    def _define(
        self, name: str, types: list[ir.Type], private: bool
    ) -> Iterator[tuple[func.FuncOp, list[ir.Value]]]:
        if self._func is not None:
            raise BuilderError(f"cannot define @{name} inside @{self._func.name.value}")
        with self.context, ir.Location.name(name):
            with ir.InsertionPoint(self.module.body):
                f = func.FuncOp(name, (types, []))
            if private:
                f.attributes["sym_visibility"] = ir.StringAttr.get("private")
            block = f.add_entry_block()
            self._func = f
            self._regions = []
            self._returned = False
            try:
                with ir.InsertionPoint(block):
                    yield f, list(block.arguments)
            finally:
                self._func = None
            if not block.operations or block.operations[len(block.operations) - 1].name != "func.return":
                raise BuilderError(f"function @{name} ends without bb.ret(...)")

    def ret(self, *values: ir.Value) -> None:
        """Return ``values`` from the current function (its result types become theirs)."""
        if self._func is None:
            raise BuilderError("bb.ret() outside of bb.function()")
        name = f"{describe_location(caller_location())}bb.ret() of @{self._func.name.value}"
        if self._dataflow is not None:
            raise BuilderError(f"{name} inside a dataflow block; leave the block first")
        if self._open:
            raise BuilderError(
                f"{name} inside a branch or loop body; bb.yield_(...) values out of it instead"
            )
        if self._returned:
            raise BuilderError(f"{name} called twice: a function returns once")
        values = tuple(check_operands(values, [f"#{i}" for i in range(len(values))], name))
        func.ReturnOp(list(values))
        self._returned = True
        inputs = self._func.type.inputs
        self._func.attributes["function_type"] = ir.TypeAttr.get(
            ir.FunctionType.get(inputs, [v.type for v in values])
        )

    def call(self, f: func.FuncOp | str, *args: ir.Value) -> ir.Value | tuple[ir.Value, ...] | None:
        """Call relax function ``f`` (built earlier with ``function``, or its name; the function being built
        when it declared ``results``) with ``args``: ``y = bb.call(sq, x)``. The result types are ``f``'s,
        its symbols bound by the arguments (``dialects/bind.py``). Returns the one result, a tuple of several,
        or None."""
        from relax_mlir.dialects.ops.call import call as call_op

        if self._func is None:
            raise BuilderError("bb.call() outside of bb.function()")
        loc = caller_location()
        name = f.name.value if isinstance(f, func.FuncOp) else f
        if not isinstance(name, str):
            raise ArgumentError(
                f"bb.call(): expected a function built by bb.function() or its name, got {f!r}"
            )
        target = next(
            (
                op.operation
                for op in self.module.body.operations
                if op.operation.name == "func.func"
                and ir.StringAttr(op.operation.attributes["sym_name"]).value == name
            ),
            None,
        )
        if target is None:
            raise BuilderError(f"{describe_location(loc)}bb.call(): no function @{name} in this module")
        values = check_operands(list(args), [f"#{i}" for i in range(len(args))], f"bb.call(@{name})")
        ftype = ir.FunctionType(ir.TypeAttr(target.attributes["function_type"]).value)
        results = call_op(name, ftype, values, loc=loc)
        return results[0] if len(results) == 1 else (tuple(results) if results else None)

    @contextlib.contextmanager
    def dataflow(self) -> Iterator[None]:
        """A dataflow block: pure relax ops whose values leave only through ``emit_output``."""
        if self._func is None:
            raise BuilderError("bb.dataflow() outside of bb.function()")
        if self._dataflow is not None:
            raise BuilderError("dataflow blocks cannot nest")
        block = ir.InsertionPoint.current.block  # the function body, a branch or a loop body
        self._dataflow = _Dataflow(block)
        try:
            yield
            self._regions.append(self._dataflow.close())
        finally:
            self._dataflow = None

    # -- control flow ------------------------------------------------------------------------------
    def _control_flow(self, what: str) -> ir.Location:
        loc = caller_location()
        if self._func is None:
            raise BuilderError(f"{describe_location(loc)}{what} outside of bb.function()")
        if self._dataflow is not None:
            raise BuilderError(
                f"{describe_location(loc)}{what} inside a dataflow block: control flow is not allowed there "
                "(leave the block first)"
            )
        return loc

    def if_(self, cond: ir.Value) -> _If:
        """``with bb.if_(cond) as (then, else_):`` branch on ``cond`` (a scalar tensor or prim value, nonzero is
        true, or an ``i1``); build each branch in ``with then:`` / ``with else_:`` and end it with
        ``bb.yield_(...)``. The results (``then.results``) have the join of the two branches' types."""
        loc = self._control_flow("bb.if_()")
        (cond,) = check_operands([cond], ["cond"], f"{describe_location(loc)}bb.if_()")
        if str(cond.type) != "i1":
            cond = condition(cond, loc=loc)
        return _If(self, cond, loc)

    def while_(self, *init: ir.Value) -> _While:
        """``with bb.while_(*init) as loop:`` a loop carrying ``init``: ``with loop.cond as args:`` computes
        ``loop.condition(c)`` (the loop ends when it is false), ``with loop.body as args:`` yields the next
        values with ``bb.yield_(...)``. ``loop.results`` are the carried values at the end; their types are
        the join over the iterations (a dim that changes becomes ``"?"``)."""
        loc = self._control_flow("bb.while_()")
        init = tuple(check_operands(init, [f"init #{i}" for i in range(len(init))], "bb.while_()"))
        return _While(self, list(init), loc)

    def yield_(self, *values: ir.Value) -> None:
        """The values a branch (``bb.if_``) or loop body (``bb.while_``) produces."""
        where = f"{describe_location(caller_location())}bb.yield_()"
        if not self._open:
            raise BuilderError(f"{where} outside of a branch or loop body")
        values = tuple(check_operands(values, [f"#{i}" for i in range(len(values))], where))
        self._open[-1].set_yield(list(values), where)

    def emit_output(self, value: ir.Value) -> ir.Value:
        """Make a dataflow value visible after the block; returns the value to use there."""
        if self._dataflow is None:
            raise BuilderError("bb.emit_output() outside of bb.dataflow()")
        (value,) = check_operands([value], ["value"], "bb.emit_output()")
        return self._dataflow.add_output(value)


class _Part:
    """A branch or a loop part being built: ops go into its block."""

    def __init__(self, bb: BlockBuilder, block: ir.Block, name: str) -> None:
        self.bb, self.block, self.name = bb, block, name
        self.values: list[ir.Value] | None = None
        self.done = False
        self._ip: ir.InsertionPoint | None = None

    def __enter__(self) -> Any:
        if self.done or self._ip is not None:
            raise BuilderError(f"the {self.name} is built once")
        self._ip = ir.InsertionPoint(self.block)
        self._ip.__enter__()
        self.bb._open.append(self)
        return list(self.block.arguments)

    def __exit__(self, exc_type: Any, exc: Any, tb: Any) -> None:
        assert self._ip is not None
        self._ip.__exit__(exc_type, exc, tb)
        self.bb._open.pop()
        self.done = True

    def set_yield(self, values: list[ir.Value], where: str) -> None:
        if self.values is not None:
            raise BuilderError(f"{where}: the {self.name} already yields; yield once, at its end")
        self.values = values


class _Branch(_Part):
    """``then`` or ``else_`` of ``bb.if_``; ``results`` are the if's."""

    def __init__(self, owner: _If, block: ir.Block, name: str) -> None:
        super().__init__(owner.bb, block, name)
        self.owner = owner

    def __enter__(self) -> _Branch:
        super().__enter__()
        return self

    @property
    def results(self) -> list[ir.Value]:
        return self.owner.results

    @property
    def result(self) -> ir.Value:
        return self.owner.result


class _ResultsOf:
    """``results`` / ``result`` of a closed ``if_`` or ``while_``."""

    _results: list[ir.Value] | None = None
    kind = ""

    @property
    def results(self) -> list[ir.Value]:
        if self._results is None:
            raise BuilderError(f"the results of bb.{self.kind}() exist once its `with` block is closed")
        return self._results

    @property
    def result(self) -> ir.Value:
        if len(self.results) != 1:
            raise BuilderError(f"bb.{self.kind}() has {len(self.results)} results; use .results")
        return self.results[0]


class _If(_ResultsOf):
    """An ``scf.if`` being built; closed (result types joined) when its ``with`` block ends."""

    kind = "if_"

    def __init__(self, bb: BlockBuilder, cond: ir.Value, loc: ir.Location) -> None:
        self.bb, self.cond, self.loc = bb, cond, loc
        with loc:
            self.op = scf.IfOp(cond, [], has_else=True)
        self.then = _Branch(self, self.op.then_block, "then branch")
        self.else_ = _Branch(self, self.op.else_block, "else branch")

    def __enter__(self) -> _If:
        return self

    def __iter__(self) -> Iterator[_Branch]:
        return iter((self.then, self.else_))

    def __exit__(self, exc_type: Any, exc: Any, tb: Any) -> None:
        if exc_type is None:
            self.close()

    def close(self) -> None:
        where = f"{describe_location(self.loc)}bb.if_()"
        if not self.then.done:
            raise BuilderError(f"{where}: build the then branch in `with then:`")
        then, other = self.then.values or [], self.else_.values or []
        if len(then) != len(other):
            raise BuilderError(
                f"{where}: the then branch yields {len(then)} values, the else branch {len(other)}"
            )
        visible = visible_symbols(self.op.operation)
        types = []
        for i, (a, b) in enumerate(zip(then, other)):
            t = joined_types([a.type, b.type], visible)
            if t is None and a.type != b.type:
                raise BuilderError(f"{where}: value #{i} is {a.type} in one branch and {b.type} in the other")
            types.append(t or a.type)
        with self.loc:
            op = scf.IfOp(self.cond, types, has_else=True, ip=ir.InsertionPoint(self.op))
        for old, new, values in (
            (self.op.then_block, op.then_block, then),
            (self.op.else_block, op.else_block, other),
        ):
            for inner in list(old.operations):
                new.append(inner.operation)
            with ir.InsertionPoint(new), self.loc:
                coerce_operands(scf.YieldOp(values).operation, 0, types)
        self.op.operation.erase()
        self.op = op
        self._results = list(op.results)


class _While(_ResultsOf):
    """An ``scf.while`` being built: its body is built on the initial types, then deduced again on the joined
    ones (``refine_control_flow``) when its ``with`` block ends."""

    kind = "while_"

    def __init__(self, bb: BlockBuilder, init: list[ir.Value], loc: ir.Location) -> None:
        self.bb, self.loc = bb, loc
        types = [v.type for v in init]
        with loc:
            self.op = scf.WhileOp(types, init)
            self.cond = _Part(bb, self.op.before.blocks.append(*types), "loop condition")
            self.body = _Part(bb, self.op.after.blocks.append(*types), "loop body")
        self.forwarded: list[ir.Value] | None = None

    def __enter__(self) -> _While:
        return self

    def condition(self, cond: ir.Value, *forward: ir.Value) -> None:
        """Inside ``with loop.cond``: go on while ``cond`` is nonzero, carrying the condition block's arguments
        (or ``forward``) into the body and, at the end, into ``loop.results``."""
        loc = caller_location()
        where = f"{describe_location(loc)}loop.condition()"
        if not self.bb._open or self.bb._open[-1] is not self.cond:
            raise BuilderError(f"{where} outside of `with loop.cond`")
        if self.forwarded is not None:
            raise BuilderError(f"{where} called twice")
        (cond, *values) = check_operands(
            [cond, *forward], ["cond", *[f"#{i}" for i in range(len(forward))]], where
        )
        if str(cond.type) != "i1":
            cond = condition(cond, loc=loc)
        self.forwarded = values or list(self.cond.block.arguments)
        if len(self.forwarded) != len(self.cond.block.arguments):
            raise BuilderError(
                f"{where}: forwards {len(self.forwarded)} values, the loop carries {len(self.cond.block.arguments)}"
            )
        with loc:
            scf.ConditionOp(cond, self.forwarded)

    def __exit__(self, exc_type: Any, exc: Any, tb: Any) -> None:
        if exc_type is None:
            self.close()

    def close(self) -> None:
        where = f"{describe_location(self.loc)}bb.while_()"
        if self.forwarded is None:
            raise BuilderError(f"{where}: the loop needs `with loop.cond:` ending in loop.condition(...)")
        if not self.body.done:
            raise BuilderError(f"{where}: build the loop body in `with loop.body:`")
        values = self.body.values or []
        if len(values) != len(self.op.inits):
            raise BuilderError(
                f"{where}: the body yields {len(values)} values, the loop carries {len(self.op.inits)}"
            )
        with ir.InsertionPoint(self.body.block), self.loc:
            scf.YieldOp(values)
        refine_control_flow(self.op.operation)
        self._results = list(self.op.results)


class _Dataflow:
    """A dataflow block being built: ops go straight into the function body; on exit they move
    into an ``scf.execute_region {relax.dataflow}`` whose results are the emitted outputs."""

    def __init__(self, block: ir.Block) -> None:
        self.block = block
        self.first_index = len(block.operations)
        self.outputs: list[ir.Value] = []

    def add_output(self, value: ir.Value) -> ir.Value:
        self.outputs.append(value)
        return value

    def close(self) -> _DataflowRegion:
        if not self.outputs:
            raise BuilderError("a dataflow block needs at least one bb.emit_output(...)")
        ops = self.block.operations
        body = [ops[i] for i in range(self.first_index, len(ops))]
        with (
            ir.InsertionPoint(body[0]) if body else ir.InsertionPoint(self.block)
        ):  # empty: outputs are params
            region_op = scf.ExecuteRegionOp([v.type for v in self.outputs]).operation
        region_op.attributes[DATAFLOW_ATTR] = ir.UnitAttr.get()
        region_op.attributes["no_inline"] = ir.UnitAttr.get()  # or canonicalize inlines the block
        inner = region_op.regions[0].blocks.append()
        for op in body:
            inner.append(op.operation)
        with ir.InsertionPoint(inner):
            scf.YieldOp(list(self.outputs))
        return _DataflowRegion(region_op, list(self.outputs), body)


class _DataflowRegion:
    """A closed dataflow block; later uses of its outputs are pointed at the region's results."""

    def __init__(self, op: ir.Operation, outputs: list[ir.Value], body: list[ir.Operation]) -> None:
        self.op = op
        self.outputs = outputs
        self.body = body

    def reroute_uses(self) -> None:
        """Uses after the block of an output go to the region result; any other escape is an error."""
        for op in self.body:
            for value in op.results:
                for use in list(value.uses):
                    owner = use.owner.operation
                    if self._encloses(owner):
                        continue
                    index = next((i for i, v in enumerate(self.outputs) if v == value), None)
                    if index is None:
                        raise BuilderError(
                            f"a result of {op.name} at {op.location} is defined in a dataflow block and "
                            "used after it without bb.emit_output(...)"
                        )
                    owner.operands[use.operand_number] = self.op.results[index]

    def _encloses(self, op: ir.Operation) -> bool:
        while op is not None and op.name != "func.func":
            if op == self.op:
                return True
            op = op.parent
        return False


def type_of(value: ir.Value) -> RelaxType | None:
    """The relax type of a value."""
    return relax_type(value.type)

"""``relax-lift-load-time-params``: what depends only on load-time parameters runs once, at load.

A function's ``relax.load_time_params`` names tensor parameters that are constant once the program is loaded
(weights: ``bb.function(..., load_time=[...])``). Every pure relax op whose operands are load-time values
(those parameters, or results of such ops; ``relax.constant`` operands allowed) and whose result type uses
only symbols the load-time parameters define is *lifted* (TVM's LiftTransformParams): the ops move to a load
function, and the function takes what they computed as new load-time parameters instead. The computation is
generic (any pure relax ops); ``relax-pack-weights`` relies on it to pack matmul weights that are load-time
parameters into panels once, at load.

- Public functions share one load function, ``@__load_params`` (public, ``relax.load_outputs`` names its
  results): its parameters are every public function's load-time parameters, united by name (one name, one
  type); equal computations on the same parameters are computed once, so ``prefill`` and ``decode`` taking
  the same weights share one packed copy. A lifted value is named after the first load-time parameter it
  reads, ``<param>:lifted<i>``. After the pass, a function's ``relax.load_time_params`` lists the parameters
  the load step supplies: raw ones still used directly (or whose symbols the lifted ones do not define), then
  the lifted ones. ``Executable.load_params(weights)`` runs the load function once and binds them.
- Calls: a private callee with load-time parameters is split first (callees before callers): it keeps its
  name and takes the lifted values, and a private ``@<callee>__load`` computes them; each call becomes a call
  of ``@<callee>__load`` on the load-time arguments (which must be load-time values of the caller, else
  PassError) and a call of the callee. The ``__load`` call is then lifted out of the caller like any other
  load-time computation, so a model calling ``decoder_layer`` once per layer packs each layer's weights once.
  Load functions equal up to their name are merged.
- Not lifted: ops inside branches and loops, impure ops (``match_cast``, calls of other functions).
The pass runs once per module (a module holding ``@__load_params`` is left alone).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from mlir import ir
from mlir.dialects import func

from relax_mlir.dialects.ops.call import call as call_op
from relax_mlir.dialects.types import bare_symbols, free_symbols, relax_type
from relax_mlir.transforms.registry import PassFailed, register_pass
from relax_mlir.transforms.relax_ir import erase_dead_producers, functions, is_dataflow, is_pure
from relax_mlir.transforms.well_formed import (
    LOAD_OUTPUTS_ATTR,
    LOAD_TIME_ATTR,
    PARAM_NAME_ATTR,
    load_time_names,
    param_names,
)

LOAD_FUNCTION = "__load_params"
LOAD_CALLEE_ATTR = "relax.load_callee"  # on a callee's ``__load`` function (its calls may be lifted)
_LOAD, _CONST = 1, 2


def _fail(loc: ir.Location, message: str) -> None:
    loc.emit_error(f"relax-lift-load-time-params: {message}")
    raise PassFailed(message)


def _name(f: ir.Operation) -> str:
    return ir.StringAttr(f.attributes["sym_name"]).value


def _private(f: ir.Operation) -> bool:
    return (
        "sym_visibility" in f.attributes and ir.StringAttr(f.attributes["sym_visibility"]).value == "private"
    )


def _ftype(f: ir.Operation) -> ir.FunctionType:
    return ir.FunctionType(ir.TypeAttr(f.attributes["function_type"]).value)


def _ops(block: ir.Block) -> list[ir.Operation]:
    """The ops of ``block`` and of dataflow blocks inside it, in program order (other regions not entered)."""
    out: list[ir.Operation] = []
    for op in block.operations:
        op = op.operation
        if is_dataflow(op):
            out.extend(_ops(op.regions[0].blocks[0]))
        else:
            out.append(op)
    return out


def _symbols(types: list[ir.Type]) -> set[str]:
    out: set[str] = set()
    for t in types:
        r = relax_type(t)
        if r is not None:
            out |= free_symbols(r)
    return out


@dataclass
class _Split:
    """What lifting found in one function."""

    kinds: dict[ir.Value, int] = field(default_factory=dict)  # load-time or constant values
    lifted_ops: list[ir.Operation] = field(default_factory=list)  # program order
    lifted: list[ir.Value] = field(default_factory=list)  # load-time values used by the rest


def _analyze(f: ir.Operation, load_args: dict[ir.Value, str], load_callees: set[str]) -> _Split:
    block = f.regions[0].blocks[0]
    split = _Split()
    kinds = split.kinds
    for arg in load_args:
        kinds[arg] = _LOAD
    symbols: set[str] = set()
    for arg in load_args:
        symbols |= bare_symbols(relax_type(arg.type))  # type: ignore[arg-type]
    for op in _ops(block):
        liftable = is_pure(op) or (
            op.name == "relax.call" and ir.FlatSymbolRefAttr(op.attributes["callee"]).value in load_callees
        )
        if not liftable or not op.results:
            continue
        operand_kinds = [kinds.get(v) for v in op.operands]
        if None in operand_kinds:
            continue
        used = _symbols([r.type for r in op.results])
        if _LOAD in operand_kinds:
            if used <= symbols:
                kinds.update((r, _LOAD) for r in op.results)
                split.lifted_ops.append(op)
        elif not used:
            kinds.update((r, _CONST) for r in op.results)
    lifted_set = set(split.lifted_ops)
    for op in split.lifted_ops:
        for r in op.results:
            if any(use.owner.operation not in lifted_set for use in r.uses):
                split.lifted.append(r)
    return split


class _Cloner:
    """Clones load-time computations into a load function, merging equal ops."""

    def __init__(self, load: ir.Operation, args: dict[str, ir.Value]) -> None:
        self.load = load
        self.args = args  # the load function's parameters, by name
        self.seen: dict[tuple, list[ir.Value]] = {}
        block = load.regions[0].blocks[0]
        self.ip = ir.InsertionPoint(block.operations[len(block.operations) - 1])  # before the return

    def clone(self, split: _Split, mapping: dict[ir.Value, ir.Value]) -> None:
        """Clone the lifted ops of ``split`` (``mapping``: their function's load-time parameters to the load
        function's); ``mapping`` gets every cloned value."""
        for op in split.lifted_ops:
            self._clone(op, split, mapping)

    def _clone(self, op: ir.Operation, split: _Split, mapping: dict[ir.Value, ir.Value]) -> None:
        for v in op.operands:
            if v not in mapping and split.kinds.get(v) == _CONST:
                self._clone(v.owner.operation, split, mapping)
        operands = [mapping[v] for v in op.operands]
        named = op.attributes
        attrs = tuple((named[i].name, named[i].attr) for i in range(len(named)))  # uniqued: cheap to hash
        key = (op.name, attrs, tuple(operands), tuple(r.type for r in op.results))
        results = self.seen.get(key)
        if results is None:
            new = op.clone(ip=self.ip)
            for i, v in enumerate(operands):
                new.operands[i] = v
            results = self.seen[key] = list(new.results)
        mapping.update(zip(op.results, results))


def _root(v: ir.Value, roots: dict[str, list[int]]) -> ir.BlockArgument | None:
    """The first parameter ``v`` reads (depth first), through calls of load functions (``roots``: per
    load function, the parameter each result reads first)."""
    work, seen = [v], set()
    while work:
        x = work.pop(0)
        if isinstance(x, ir.BlockArgument):
            return x
        if not isinstance(x, ir.OpResult) or x in seen:
            continue
        seen.add(x)
        op = x.owner.operation
        callee = ir.FlatSymbolRefAttr(op.attributes["callee"]).value if op.name == "relax.call" else None
        if callee in roots and roots[callee][x.result_number] >= 0:
            work.insert(0, op.operands[roots[callee][x.result_number]])
        else:
            work[:0] = list(op.operands)
    return None


def _rewrite(
    f: ir.Operation, split: _Split, load_args: dict[ir.Value, str], new_names: list[str]
) -> list[str]:
    """Make ``f`` take the lifted values (named ``new_names``) instead of computing them; drop the raw
    load-time parameters nothing uses any more. Returns ``f``'s load-time parameter names now."""
    block = f.regions[0].blocks[0]
    loc = f.location
    lifted_symbols: set[str] = set()
    names = param_names(f) + new_names
    for v in split.lifted:
        lifted_symbols |= bare_symbols(relax_type(v.type))  # type: ignore[arg-type]
        v.replace_all_uses_with(block.add_argument(v.type, loc))
    lifted_ops = set(split.lifted_ops)
    read = {
        v
        for op in split.lifted_ops
        for v in op.operands
        if isinstance(v, ir.OpResult) and v.owner.operation not in lifted_ops
    }
    for op in reversed(split.lifted_ops):
        op.erase()
    erase_dead_producers(list(read))  # constants only the lifted ops read
    split.lifted, split.lifted_ops, split.kinds = [], [], {}  # erased
    types = [a.type for a in block.arguments]
    keep_symbols = lifted_symbols | {
        s for a in block.arguments if a not in load_args for s in bare_symbols(relax_type(a.type)) or ()
    }
    attrs = list(ir.ArrayAttr(f.attributes["arg_attrs"])) if "arg_attrs" in f.attributes else []
    attrs = [ir.DictAttr(a) for a in attrs] + [ir.DictAttr.get({}) for _ in range(len(types) - len(attrs))]
    for i in range(len(names) - len(new_names), len(names)):
        attrs[i] = ir.DictAttr.get({PARAM_NAME_ATTR: ir.StringAttr.get(names[i])})
    drop = [
        i
        for i, arg in enumerate(block.arguments)
        if arg in load_args
        and next(iter(arg.uses), None) is None
        and bare_symbols(relax_type(arg.type)) <= keep_symbols  # type: ignore[arg-type]
    ]
    dropped = {names[i] for i in drop}
    for i in reversed(drop):
        block.erase_argument(i)
        del names[i], types[i], attrs[i]
    f.attributes["arg_attrs"] = ir.ArrayAttr.get(attrs)
    f.attributes["function_type"] = ir.TypeAttr.get(ir.FunctionType.get(types, list(_ftype(f).results)))
    raw = set(load_args.values()) - dropped
    load_time = [n for n in names if n in raw] + new_names
    f.attributes[LOAD_TIME_ATTR] = ir.ArrayAttr.get([ir.StringAttr.get(n) for n in load_time])
    return load_time


def _load_args(f: ir.Operation) -> dict[ir.Value, str]:
    names = param_names(f)
    load = load_time_names(f) or []
    block = f.regions[0].blocks[0]
    return {block.arguments[names.index(n)]: n for n in load if n in names}


def _callees(f: ir.Operation) -> set[str]:
    out: set[str] = set()

    def walk(op: ir.Operation) -> None:
        if op.name == "relax.call":
            out.add(ir.FlatSymbolRefAttr(op.attributes["callee"]).value)
        for region in op.regions:
            for block in region.blocks:
                for inner in block.operations:
                    walk(inner.operation)

    walk(f)
    return out


def _order(funcs: dict[str, ir.Operation]) -> list[ir.Operation]:
    """Every function, callees before callers; PassError on recursion."""
    order: list[ir.Operation] = []
    state: dict[str, int] = {}

    def visit(name: str, path: list[str]) -> None:
        if state.get(name) == 2:
            return
        if state.get(name) == 1:
            _fail(funcs[name].location, f"recursive calls ({' -> '.join([*path, name])}) cannot be lifted")
        state[name] = 1
        for callee in sorted(_callees(funcs[name])):
            if callee in funcs:
                visit(callee, [*path, name])
        state[name] = 2
        order.append(funcs[name])

    for name in funcs:
        visit(name, [])
    return order


def _new_function(
    module: ir.Operation, name: str, params: list[tuple[str, ir.Type]], private: bool
) -> ir.Operation:
    body = module.regions[0].blocks[0]
    with ir.InsertionPoint(body), ir.Location.name(name):
        f = func.FuncOp(name, ([t for _, t in params], []))
        block = f.add_entry_block()
        with ir.InsertionPoint(block):
            func.ReturnOp([])
    if private:
        f.attributes["sym_visibility"] = ir.StringAttr.get("private")
    f.attributes["arg_attrs"] = ir.ArrayAttr.get(
        [ir.DictAttr.get({PARAM_NAME_ATTR: ir.StringAttr.get(n)}) for n, _ in params]
    )
    return f.operation


def _finish(load: ir.Operation, values: list[ir.Value]) -> None:
    block = load.regions[0].blocks[0]
    ret = block.operations[len(block.operations) - 1].operation
    with ir.InsertionPoint(ret), ret.location:
        func.ReturnOp(values)
    ret.erase()
    load.attributes["function_type"] = ir.TypeAttr.get(
        ir.FunctionType.get(list(_ftype(load).inputs), [v.type for v in values])
    )


@dataclass
class _Callee:
    load: str  # the ``__load`` function
    load_params: list[int]  # the original parameters it takes, by index
    keep: list[int]  # the original parameters the callee still takes, by index
    names: list[str]  # the names of ``load_params``


def lift_load_time_params(module: ir.Operation) -> int:
    """Lift the load-time computations of every function of ``module``; the number of values lifted."""
    funcs = {_name(f): f for f in functions(module)}
    if LOAD_FUNCTION in funcs or not any(LOAD_TIME_ATTR in f.attributes for f in funcs.values()):
        return 0
    load_callees: set[str] = set()
    split_callees: dict[str, _Callee] = {}
    shared: _Cloner | None = None
    shared_outputs: dict[ir.Value, str] = {}
    order = _order(funcs)
    public = [f for f in order if not _private(f) and LOAD_TIME_ATTR in f.attributes]
    if public:
        params: dict[str, ir.Type] = {}
        for f in public:
            for arg, n in _load_args(f).items():
                if n in params and params[n] != arg.type:
                    _fail(
                        f.location,
                        f"load-time parameter '{n}' of @{_name(f)} has type {arg.type}, but another "
                        f"function's '{n}' has {params[n]} (one name, one weight)",
                    )
                params[n] = arg.type
        load = _new_function(module, LOAD_FUNCTION, list(params.items()), private=False)
        args = dict(zip(params, load.regions[0].blocks[0].arguments))
        shared = _Cloner(load, args)
    total = 0
    counters: dict[str, int] = {}
    roots: dict[str, list[int]] = {}  # per callee load function: the parameter each result reads first
    for f in order:
        _split_calls(f, split_callees)
        if LOAD_TIME_ATTR not in f.attributes or not f.regions[0].blocks:
            continue
        load_args = _load_args(f)
        split = _analyze(f, load_args, load_callees)
        total += len(split.lifted)
        if _private(f):
            if not split.lifted:
                continue
            name = f"{_name(f)}__load"
            while name in funcs:
                name += "_"
            original = param_names(f)
            index = {a: i for i, a in enumerate(f.regions[0].blocks[0].arguments)}
            load = _new_function(module, name, [(n, a.type) for a, n in load_args.items()], private=True)
            load.attributes[LOAD_CALLEE_ATTR] = ir.UnitAttr.get()
            cloner = _Cloner(load, {})
            mapping = dict(zip(load_args, load.regions[0].blocks[0].arguments))
            cloner.clone(split, mapping)
            results = [mapping[v] for v in split.lifted]
            firsts = [a.arg_number if (a := _root(v, roots)) is not None else -1 for v in results]
            _finish(load, results)
            names = [f"lifted{i}" for i in range(len(split.lifted))]
            load_params = [index[a] for a in load_args]
            _rewrite(f, split, load_args, names)
            remaining = set(param_names(f))
            keep = [i for i, n in enumerate(original) if n in remaining]
            name = _merge_equal(module, load, load_callees)
            load_callees.add(name)
            roots[name] = firsts
            split_callees[_name(f)] = _Callee(name, load_params, keep, list(load_args.values()))
            continue
        assert shared is not None
        mapping = {a: shared.args[n] for a, n in load_args.items()}
        shared.clone(split, mapping)
        arg_names = {v: n for n, v in shared.args.items()}
        new_names = []
        for v in split.lifted:
            mapped = mapping[v]
            if mapped not in shared_outputs:
                first = _root(mapped, roots)
                root = arg_names.get(first, "lifted") if first is not None else "lifted"
                shared_outputs[mapped] = f"{root}:lifted{counters.get(root, 0)}"
                counters[root] = counters.get(root, 0) + 1
            new_names.append(shared_outputs[mapped])
        _rewrite(f, split, load_args, new_names)
    if shared is not None and not shared_outputs:
        shared.load.erase()  # nothing lifted: the load step only checks and binds the raw parameters
    elif shared is not None:
        _finish(shared.load, list(shared_outputs))
        shared.load.attributes[LOAD_OUTPUTS_ATTR] = ir.ArrayAttr.get(
            [ir.StringAttr.get(n) for n in shared_outputs.values()]
        )
    return total


def _merge_equal(module: ir.Operation, load: ir.Operation, known: set[str]) -> str:
    """The name of a load function equal to ``load`` up to its name (``load`` erased), else ``load``'s."""
    name = _name(load)
    body = module.regions[0].blocks[0]
    text = _body_text(load)
    for op in body.operations:
        other = op.operation
        if other.name == "func.func" and _name(other) in known and _body_text(other) == text:
            load.erase()
            return _name(other)
    return name


def _body_text(f: ir.Operation) -> str:
    return str(f).replace(f"@{_name(f)}", "@_", 1)


def _split_calls(f: ir.Operation, callees: dict[str, _Callee]) -> None:
    """Replace every call in ``f`` of a split callee by a call of its ``__load`` and a call of the callee."""
    if not callees:
        return
    load_args = set(_load_args(f))
    calls: list[ir.Operation] = []

    def walk(op: ir.Operation) -> None:
        if op.name == "relax.call" and ir.FlatSymbolRefAttr(op.attributes["callee"]).value in callees:
            calls.append(op)
        for region in op.regions:
            for block in region.blocks:
                for inner in block.operations:
                    walk(inner.operation)

    walk(f)
    if not calls:
        return
    body = module_of(f)
    funcs = {_name(g): g for g in functions(body)}
    kinds = _analyze(f, dict.fromkeys(load_args, ""), set()).kinds if load_args else {}
    for op in calls:
        name = ir.FlatSymbolRefAttr(op.attributes["callee"]).value
        c = callees[name]
        args = list(op.operands)
        for i in c.load_params:
            if kinds.get(args[i]) is None:
                _fail(
                    op.location,
                    f"@{_name(f)} passes a value computed at run time to load-time parameter "
                    f"'{c.names[c.load_params.index(i)]}' of @{name}; pass a load-time parameter of "
                    f"@{_name(f)} (its relax.load_time_params) or a value computed from them",
                )
        with ir.InsertionPoint(op), op.location:
            lifted = call_op(c.load, _ftype(funcs[c.load]), [args[i] for i in c.load_params], loc=op.location)
            results = call_op(name, _ftype(funcs[name]), [args[i] for i in c.keep] + lifted, loc=op.location)
        for r, v in zip(op.results, results):
            r.replace_all_uses_with(v)
        op.erase()


def module_of(f: ir.Operation) -> ir.Operation:
    return f.parent  # type: ignore[return-value]


@register_pass("relax-lift-load-time-params")
class LiftLoadTimeParams:
    """Computations that depend only on load-time parameters move to a load function run once."""

    def run(self, module: ir.Operation) -> None:
        lift_load_time_params(module)

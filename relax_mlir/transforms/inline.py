"""``relax-inline``: replace calls of private relax functions by the callee's body.

A ``relax.call`` is inlined when its callee is a private relax function with a body that is not recursive
(no call path leads from it back to itself). The callee's symbols become the caller's: those the arguments
bind (``dialects/bind.py``) are replaced by the caller's expressions; when some must be checked at run time
or cannot be bound, the arguments are first ``match_cast`` to the instantiated parameter types (so the
checks stay, and unbound symbols get fresh names, bound there); symbols a ``match_cast`` inside the callee
binds get fresh names too. Types and dim attributes of the inlined ops are rewritten accordingly. A call
inside a dataflow block gets the callee's dataflow blocks dissolved (blocks do not nest), and is not inlined
when the callee has control flow (a dataflow block holds none). A result more
precise than the call's stated type is weakened with a ``match_cast`` that cannot fail. Private functions
left uncalled are erased.
"""

from __future__ import annotations

import itertools

from mlir import ir

from relax_mlir.dialects.bind import Binding, bind, instantiate
from relax_mlir.dialects.ops.call import callee_signature
from relax_mlir.dialects.registry import ATTR_KINDS, OPS
from relax_mlir.dialects.types import (
    PrimType,
    RelaxType,
    ShapeType,
    TensorType,
    TupleType,
    free_symbols,
    relax_type,
    to_mlir,
)
from relax_mlir.errors import ShapeError
from relax_mlir.shape_infer.expr import Expr, parse_expr, sym
from relax_mlir.transforms.registry import register_pass
from relax_mlir.transforms.relax_ir import functions, is_dataflow

_DIM_ATTRS = ("dims", "dim", "scalar")


def _name(f: ir.Operation) -> str:
    return ir.StringAttr(f.attributes["sym_name"]).value


def _calls(f: ir.Operation) -> list[ir.Operation]:
    found: list[ir.Operation] = []

    def visit(op: ir.Operation) -> ir.WalkResult:
        if op.name == "relax.call":
            found.append(op)
        return ir.WalkResult.ADVANCE

    f.walk(visit, ir.WalkOrder.PRE_ORDER)
    return found


def _callee(op: ir.Operation) -> str:
    return ir.FlatSymbolRefAttr(op.attributes["callee"]).value


def _recursive(graph: dict[str, set[str]]) -> set[str]:
    """Functions from which a call path leads back to themselves."""
    out = set()
    for start in graph:
        seen, work = set(), list(graph[start])
        while work:
            g = work.pop()
            if g == start:
                out.add(start)
                break
            if g in seen or g not in graph:
                continue
            seen.add(g)
            work.extend(graph[g])
    return out


def _module_symbols(module: ir.Operation) -> set[str]:
    names: set[str] = set()

    def visit(op: ir.Operation) -> ir.WalkResult:
        for r in op.results:
            t = relax_type(r.type)
            if t is not None:
                names.update(free_symbols(t))
        for region in op.regions:
            for block in region.blocks:
                for a in block.arguments:
                    t = relax_type(a.type)
                    if t is not None:
                        names.update(free_symbols(t))
        return ir.WalkResult.ADVANCE

    module.walk(visit, ir.WalkOrder.PRE_ORDER)
    return names


class _Inliner:
    def __init__(self, module: ir.Operation) -> None:
        self.module = module
        self.taken = _module_symbols(module)
        self.counter = itertools.count()

    def fresh(self, base: str) -> str:
        while True:
            name = f"{base}_{next(self.counter)}"
            if name not in self.taken:
                self.taken.add(name)
                return name

    def inline(self, call: ir.Operation, callee: ir.Operation) -> None:
        ftype = ir.FunctionType(ir.TypeAttr(callee.attributes["function_type"]).value)
        params, _ = callee_signature(ftype)
        args = list(call.operands)
        binding = bind(params, [relax_type(a.type) for a in args])
        subst = dict(binding.subst)
        for s in sorted(binding.unbound):
            subst[s] = sym(self.fresh(s))
        body = callee.regions[0].blocks[0]
        for s in sorted(_inner_symbols(body) - subst.keys()):
            subst[s] = sym(self.fresh(s))
        every = Binding(subst)
        ip = ir.InsertionPoint(call)
        if binding.checks or binding.unbound:
            # cast the arguments to the instantiated parameter types (checks kept, fresh symbols bound); a
            # dim using a fresh symbol that another argument binds is cast in a second step, once it is bound
            fresh = {str(subst[s]) for s in binding.unbound}
            casts = []
            for a, p in zip(args, params):
                full = instantiate(p, every)
                early = _only_bare(full, fresh)
                v = self.cast(a, early, call.location, ip)
                casts.append((v, full, early))
            args = [v if early == full else self.cast(v, full, call.location, ip) for v, full, early in casts]
        mapping: dict[ir.Value, ir.Value] = dict(zip(body.arguments, args))
        flatten = _in_dataflow(call)
        returned: list[ir.Value] = []
        for op in body.operations:
            op = op.operation
            if op.name == "func.return":
                returned = [mapping.get(v, v) for v in op.operands]
            elif flatten and is_dataflow(op):
                inner = op.regions[0].blocks[0]
                for x in inner.operations:
                    x = x.operation
                    if x.name == "scf.yield":
                        for r, v in zip(op.results, x.operands):
                            mapping[r] = mapping.get(v, v)
                    else:
                        self.clone(x, mapping, every, ip)
            else:
                self.clone(op, mapping, every, ip)
        for r, v in zip(call.results, returned):
            if v.type != r.type:
                v = ir.Operation.create(
                    OPS["match_cast"].OPERATION_NAME, results=[r.type], operands=[v], loc=call.location, ip=ip
                ).result
            r.replace_all_uses_with(v)
        call.erase()

    @staticmethod
    def cast(v: ir.Value, t: RelaxType, loc: ir.Location, ip: ir.InsertionPoint) -> ir.Value:
        return ir.Operation.create(
            OPS["match_cast"].OPERATION_NAME, results=[to_mlir(t)], operands=[v], loc=loc, ip=ip
        ).result

    def clone(
        self, op: ir.Operation, mapping: dict[ir.Value, ir.Value], every: Binding, ip: ir.InsertionPoint
    ) -> None:
        new = op.clone(ip=ip)

        def remap(x: ir.Operation) -> ir.WalkResult:
            for i, v in enumerate(x.operands):
                if v in mapping:
                    x.operands[i] = mapping[v]
            for r in x.results:
                t = relax_type(r.type)
                if t is not None:
                    r.set_type(to_mlir(instantiate(t, every)))
            for region in x.regions:  # loop-carried values (scf.while)
                for block in region.blocks:
                    for a in block.arguments:
                        t = relax_type(a.type)
                        if t is not None:
                            a.set_type(to_mlir(instantiate(t, every)))
            _rewrite_dim_attrs(x, every.subst)
            return ir.WalkResult.ADVANCE

        new.walk(remap, ir.WalkOrder.PRE_ORDER)
        for r, nr in zip(op.results, new.results):
            mapping[r] = nr


def _inner_symbols(block: ir.Block) -> set[str]:
    names: set[str] = set()

    def visit(op: ir.Operation) -> ir.WalkResult:
        for r in op.results:
            t = relax_type(r.type)
            if t is not None:
                names.update(free_symbols(t))
        return ir.WalkResult.ADVANCE

    for op in block.operations:
        op.operation.walk(visit, ir.WalkOrder.PRE_ORDER)
    return names


def _rewrite_dim_attrs(op: ir.Operation, subst: dict[str, Expr]) -> None:
    """Dim attributes (``reshape {shape = ["n", 2]}``) in the caller's symbols."""
    if not op.name.startswith("relax."):
        return
    cls = OPS.get(op.name.removeprefix("relax."))
    if cls is None:
        return
    for a in cls.ATTRS:
        if a.kind not in _DIM_ATTRS or a.name not in op.attributes:
            continue
        kind = ATTR_KINDS[a.kind]
        value = kind.to_py(op.attributes[a.name])
        new = [_subst_dim(x, subst) for x in value] if isinstance(value, list) else _subst_dim(value, subst)
        if new != value:
            op.attributes[a.name] = kind.from_py(new)


def _subst_dim(x: object, subst: dict[str, Expr]) -> object:
    if not isinstance(x, str) or x == "?":
        return x
    try:
        e = parse_expr(x)
    except Exception:  # not an expression (a plain string attribute): left alone
        return x
    e = e.subs(subst)
    return e.value if e.is_const else str(e)


def _only_bare(t: RelaxType, fresh: set[str]) -> RelaxType:
    """``t`` with dims that use a symbol of ``fresh`` other than alone made unknown."""

    def dim(d: Expr | None) -> Expr | None:
        if d is None or not (d.free_symbols & fresh) or str(d) in fresh:
            return d
        return None

    if isinstance(t, TensorType):
        return TensorType(None if t.shape is None else tuple(dim(d) for d in t.shape), t.dtype)
    if isinstance(t, ShapeType):
        return ShapeType(None if t.values is None else tuple(dim(d) for d in t.values))
    if isinstance(t, PrimType):
        return PrimType(dim(t.value))
    if isinstance(t, TupleType):
        return TupleType(tuple(_only_bare(f, fresh) for f in t.fields))
    return t


def _has_control_flow(f: ir.Operation) -> bool:
    found = []

    def visit(op: ir.Operation) -> ir.WalkResult:
        if op.name in ("scf.if", "scf.while"):
            found.append(op)
            return ir.WalkResult.INTERRUPT
        return ir.WalkResult.ADVANCE

    f.walk(visit, ir.WalkOrder.PRE_ORDER)
    return bool(found)


def _in_dataflow(op: ir.Operation) -> bool:
    parent = op.parent
    while parent is not None and parent.name != "func.func":
        if is_dataflow(parent):
            return True
        parent = parent.parent
    return False


def _private(f: ir.Operation) -> bool:
    return (
        "sym_visibility" in f.attributes and ir.StringAttr(f.attributes["sym_visibility"]).value == "private"
    )


def _is_relax(f: ir.Operation) -> bool:
    ftype = ir.FunctionType(ir.TypeAttr(f.attributes["function_type"]).value)
    return any(relax_type(t) is not None for t in (*ftype.inputs, *ftype.results))


def _size(f: ir.Operation) -> int:
    count = [0]

    def visit(op: ir.Operation) -> ir.WalkResult:
        count[0] += 1
        return ir.WalkResult.ADVANCE

    f.walk(visit, ir.WalkOrder.PRE_ORDER)
    return count[0] - 1


def inline_calls(module: ir.Operation, max_ops: int = 0) -> int:
    """Inline every call of a private, non-recursive relax function (with ``max_ops`` > 0: only of those
    called once, or whose copies at all call sites add up to at most ``max_ops`` ops: a model's layer called
    12 times stays one function, compiled once); erase those left uncalled. The number of calls inlined."""
    funcs = {_name(f): f for f in functions(module) if _is_relax(f)}
    graph = {name: {_callee(c) for c in _calls(f)} for name, f in funcs.items()}
    recursive = _recursive(graph)
    sites: dict[str, int] = {}
    for f in funcs.values():
        for c in _calls(f):
            sites[_callee(c)] = sites.get(_callee(c), 0) + 1
    inlinable = {
        n
        for n, f in funcs.items()
        if _private(f)
        and n not in recursive
        and (not max_ops or sites.get(n, 0) <= 1 or _size(f) * sites[n] <= max_ops)
    }
    inliner = _Inliner(module)
    count = 0
    progress = True
    while progress:  # a callee's own calls get inlined too: no recursion, so this ends
        progress = False
        for f in funcs.values():
            for call in _calls(f):
                name = _callee(call)
                if name not in inlinable or (_in_dataflow(call) and _has_control_flow(funcs[name])):
                    continue  # (no control flow in a dataflow block)
                try:
                    inliner.inline(call, funcs[name])
                except ShapeError:  # an ill-typed call: relax-verify reports it, and it stays a call
                    inlinable.discard(name)
                    continue
                count += 1
                progress = True
    still_called = {_callee(c) for f in funcs.values() for c in _calls(f)}
    for name in inlinable - still_called:
        funcs[name].erase()
    return count


@register_pass("relax-inline")
class InlinePass:
    """Inline calls of private, non-recursive relax functions (their symbols bound at each call)."""

    max_ops: int = (
        0  # > 0: only callees called once or of at most this many ops over all call sites (O2+ pipelines)
    )

    def run(self, module: ir.Operation) -> None:
        inline_calls(module, self.max_ops)

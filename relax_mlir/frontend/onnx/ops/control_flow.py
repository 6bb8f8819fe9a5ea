"""Control flow: If, Loop, Scan, as upstream ``scf.if`` / ``scf.while`` over relax values.

A subgraph (branch, loop body) is imported into the op's region by the importer (``subgraph``): names
it does not define are the enclosing graphs' values, which regions see directly. Result types are joins
(``dialects/join.py``): of the two branches, or over the iterations (a fixed point: the body is
imported again with the joined types until they no longer change). Symbols bound inside a region are
forgotten after it (their dims become unknown); unknown dims of a result, or of a loop-carried value
inside the body, are bound to fresh symbols by a ``match_cast``, so the nodes after it stay symbolic.
A scan output accumulates in a loop-carried tensor (``concat`` per iteration) that starts empty.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
import onnx
from mlir import ir
from mlir.dialects import scf

from relax_mlir.dialects import relax as R
from relax_mlir.dialects.dims import normalize_axis
from relax_mlir.dialects.join import forget, join
from relax_mlir.dialects.ops.control_flow import condition
from relax_mlir.dialects.types import (
    Dim,
    RelaxType,
    TensorType,
    relax_type,
    to_mlir,
)
from relax_mlir.frontend.onnx.ops import sequence_list as L
from relax_mlir.frontend.onnx.registry import (
    ConversionError,
    Known,
    NodeContext,
    Out,
    Seq,
    SeqList,
    converter,
    known_dims,
    relax_dtype,
)
from relax_mlir.shape_infer.expr import Expr, format_dim
from relax_mlir.transforms.infer_shapes import visible_symbols

MAX_ROUNDS = 8  # joins only coarsen: a loop's types settle in a few rounds


# -- helpers -------------------------------------------------------------------------------------------


def _value(ctx: NodeContext, out: Out, what: str) -> ir.Value:
    """A subgraph output as a relax value (known contents become a constant)."""
    if out is None:
        raise ConversionError(f"{what} is not supported")
    return ctx.importer.known_value(out) if isinstance(out, Known) else out


def _scalar(v: ir.Value, what: str) -> ir.Value:
    """A rank-0 tensor from a tensor of one element (ONNX allows ``[1]`` for conditions and counts)."""
    t = relax_type(v.type)
    if not isinstance(t, TensorType) or t.shape is None:
        raise ConversionError(f"{what} must be a tensor of known rank, got {t}")
    if len(t.shape) == 0:
        return v
    if any(d is None or d.value != 1 for d in t.shape):
        raise ConversionError(f"{what} must hold one element, got {t}")
    return R.reshape(v, [])


def _weaken(v: ir.Value, t: RelaxType) -> ir.Value:
    """``v`` with type ``t`` (a join of its type: the match_cast cannot fail)."""
    return v if relax_type(v.type) == t else R.match_cast(v, t)


def _refine(ctx: NodeContext, v: ir.Value, prefix: str) -> ir.Value:
    """``v`` with its unknown dims bound to fresh symbols (rank and dtype known), else ``v``."""
    t = relax_type(v.type)
    if not isinstance(t, TensorType) or t.shape is None or t.dtype is None or None not in t.shape:
        return v
    fresh = iter(ctx.importer.fresh_symbols(prefix, t.shape.count(None)))
    return R.match_cast(v, TensorType(tuple(next(fresh) if d is None else d for d in t.shape), t.dtype))


def _flatten(ctx: NodeContext, outs: Sequence[Out], what: str) -> tuple[list[ir.Value], list[str | None]]:
    """Values as relax values, a sequence as the two of a run-time list (its ``data`` and ``shapes``);
    with the dtype of each sequence (None for a tensor), to rebuild them with ``_unflatten``."""
    values: list[ir.Value] = []
    kinds: list[str | None] = []
    for k, o in enumerate(outs):
        if isinstance(o, (Seq, SeqList)):
            seq = L.pack(ctx, o)
            values += [seq.data, seq.shapes]
            kinds.append(seq.dtype)
        else:
            values.append(_value(ctx, o, f"{what} #{k}"))
            kinds.append(None)
    return values, kinds


def _unflatten(values: Sequence[ir.Value], kinds: Sequence[str | None]) -> list[ir.Value | SeqList]:
    """The inverse of ``_flatten``."""
    out: list[ir.Value | SeqList] = []
    it = iter(values)
    for dtype in kinds:
        if dtype is None:
            out.append(next(it))
        else:
            data, shapes = next(it), next(it)
            out.append(SeqList(data, shapes, dtype, L.rank_of(shapes)))
    return out


def _i64(value: int) -> ir.Value:
    return R.constant(np.array(value, dtype=np.int64))


# -- If ------------------------------------------------------------------------------------------------


@converter("If", control_flow=True)
def _if(ctx: NodeContext) -> list[Out]:
    name = ctx.node.output[0] if ctx.node.output else "if"
    branches = [ctx.graph("then_branch"), ctx.graph("else_branch")]
    known = ctx.const(0)
    if known is not None:  # decided at import time: only the branch taken
        taken = branches[0] if bool(known.reshape(-1)[0]) else branches[1]
        return ctx.importer.subgraph(taken, [], f"{name}.{taken.name or 'branch'}")

    kinds: list[list[str | None]] = []

    def branch(graph: onnx.GraphProto) -> Callable[[], list[ir.Value]]:
        def build() -> list[ir.Value]:
            outs = ctx.importer.subgraph(graph, [], f"{name}.{graph.name or 'branch'}")
            values, kind = _flatten(ctx, outs, f"output of branch '{graph.name}'")
            if kinds and kind != kinds[0]:
                raise ConversionError("the branches' outputs differ in which are sequences")
            kinds.append(kind)
            return values

        return build

    results = _build_if(ctx, _scalar(ctx.x(0), "input 'cond'"), branch(branches[0]), branch(branches[1]))
    results = [_refine(ctx, r, f"{name}_d") for r in results]
    outs = _unflatten(results, kinds[0])
    if len(outs) < len(ctx.node.output):
        raise ConversionError(f"the branches have {len(outs)} outputs, the node {len(ctx.node.output)}")
    return outs


def _build_if(
    ctx: NodeContext, cond: ir.Value, then: Callable[[], list[ir.Value]], else_: Callable[[], list[ir.Value]]
) -> list[ir.Value]:
    """``scf.if`` on scalar tensor ``cond`` (the builder's ``if_``: result types are the join)."""
    bb = ctx.importer.bb
    with bb.if_(cond) as (then_part, else_part):
        with then_part:
            bb.yield_(*then())
        with else_part:
            bb.yield_(*else_())
    return then_part.results


# -- loops ---------------------------------------------------------------------------------------------


def _spell(d: Dim) -> int | str:
    """A dim of an empty accumulator: an unknown one is 0 (the first iteration replaces the tensor)."""
    return 0 if d is None else format_dim(d)


def _accumulate(ctx: NodeContext, i: ir.Value, acc: ir.Value, s: ir.Value, prepend: bool) -> ir.Value:
    """``acc`` with scan value ``s`` added along axis 0 (at the front when ``prepend``)."""
    row = R.expand_dims(s, [0])
    t = relax_type(acc.type)
    if None not in t.shape[1:] and t.shape[1:] == relax_type(s.type).shape:
        return R.concat([row, acc] if prepend else [acc, row], axis=0)
    # dims not known to agree (the empty start's are 0): the first iteration starts anew
    first = R.equal(i, _i64(0))
    return _build_if(
        ctx, first, lambda: [row], lambda: [R.concat([row, acc] if prepend else [acc, row], axis=0)]
    )[0]


Step = Callable[[list[ir.Value]], tuple[list[ir.Value], list[ir.Value]]]


def _while(
    ctx: NodeContext,
    inits: list[ir.Value],
    keep_going: Callable[[list[ir.Value]], ir.Value],
    step: Step,
    prepend: Sequence[bool],
    prefix: str,
) -> tuple[list[ir.Value], list[ir.Value]]:
    """An ``scf.while`` over the carried values ``inits`` (the first is the iteration count, an i64
    scalar from 0): ``keep_going(carried)`` is a scalar tensor, ``step(carried) -> (next carried,
    per-iteration scan values)``. Each scan value accumulates along a new leading axis (``prepend`` for
    reverse order) in a carried tensor that starts empty; when its dims are not known before the loop,
    the first iteration starts it anew. Returns the final carried values and scans."""
    types = [relax_type(v.type) for v in inits]
    scan_types: list[TensorType] | None = None  # the accumulators', once the body was seen
    scan_inits: list[ir.Value] = []
    for _ in range(MAX_ROUNDS):
        all_types = types + (scan_types or [])
        mlir_types = [to_mlir(t) for t in all_types]
        entry = [_weaken(v, t) for v, t in zip(inits + scan_inits, all_types)]
        op = scf.WhileOp(mlir_types, entry)
        unknown = ir.Location.unknown()
        before = op.before.blocks.append(*mlir_types, arg_locs=[unknown] * len(mlir_types))
        after = op.after.blocks.append(*mlir_types, arg_locs=[unknown] * len(mlir_types))
        with ir.InsertionPoint(before):
            go = condition(_scalar(keep_going(list(before.arguments)[: len(types)]), "the loop condition"))
            scf.ConditionOp(go, list(before.arguments))
        with ir.InsertionPoint(after):
            args = [_refine(ctx, a, f"{prefix}_d") for a in after.arguments]
            carried, scans = step(args[: len(types)])
            if scan_types is not None:
                accs = args[len(types) :]
                scans = [
                    _accumulate(ctx, args[0], acc, s, first) for s, acc, first in zip(scans, accs, prepend)
                ]
        visible = visible_symbols(op.operation)
        new_types = [forget(join(t, relax_type(v.type)), visible) for t, v in zip(types, carried)]
        if scan_types is None:
            new_scan = []
            for k, s in enumerate(scans):
                t = forget(relax_type(s.type), visible)
                if not isinstance(t, TensorType) or t.shape is None or t.dtype is None:
                    raise ConversionError(f"scan output #{k} has an unknown rank or dtype: {t}")
                new_scan.append(TensorType((None, *t.shape), t.dtype))
        else:
            new_scan = [forget(join(t, relax_type(v.type)), visible) for t, v in zip(scan_types, scans)]
        if new_types == types and (scan_types is not None or not scans) and new_scan == (scan_types or []):
            with ir.InsertionPoint(after):
                scf.YieldOp([_weaken(v, t) for v, t in zip(carried + scans, all_types)])
            results = list(op.results)
            return results[: len(types)], results[len(types) :]
        op.operation.erase()
        for v, w in zip(inits + scan_inits, entry):
            if w != v:  # the weakening casts of this round
                w.owner.erase()
        types = new_types
        if scan_types is None:  # empty accumulators, before the loop
            for v in scan_inits:
                v.owner.erase()
            scan_inits = [R.zeros([0, *(_spell(d) for d in t.shape[1:])], t.dtype) for t in new_scan]
        scan_types = new_scan
    raise ConversionError(f"the loop's types did not settle in {MAX_ROUNDS} rounds")


@converter("Loop", control_flow=True)
def _loop(ctx: NodeContext) -> list[Out]:
    """``for (i = 0; i < M && cond; ++i)``: trip count and condition are optional inputs."""
    body = ctx.graph("body")
    name = ctx.node.output[0] if ctx.node.output else "loop"
    n = ctx.num_inputs - 2
    if len(body.output) < 1 + n:
        raise ConversionError(f"the body has {len(body.output)} outputs, expected at least {1 + n}")
    trip = _scalar(ctx.x(0), "input 'M'") if ctx.has(0) else None
    if trip is not None and ctx.dtype(0) != "i64":
        trip = R.astype(trip, "i64")
    has_cond = ctx.has(1)
    cond0 = _scalar(ctx.x(1), "input 'cond'") if has_cond else R.constant(np.array(True))
    if relax_type(cond0.type).dtype != "i1":
        cond0 = R.not_equal(cond0, ctx.scalar_like(0, relax_type(cond0.type).dtype))
    carried0 = [ctx.seq(2 + j) if ctx.is_seq(2 + j) else ctx.known(2 + j) or ctx.x(2 + j) for j in range(n)]
    flat0, kinds = _flatten(ctx, carried0, "input")
    inits = [_i64(0), cond0, *flat0]

    def keep_going(args: list[ir.Value]) -> ir.Value:
        i, c = args[0], args[1]
        go = R.less(i, trip) if trip is not None else None
        if has_cond:
            go = c if go is None else R.logical_and(go, c)
        return go if go is not None else R.constant(np.array(True))

    def step(args: list[ir.Value]) -> tuple[list[ir.Value], list[ir.Value]]:
        outs = ctx.importer.subgraph(body, [*args[:2], *_unflatten(args[2:], kinds)], f"{name}.body")
        c = _scalar(_value(ctx, outs[0], "body output #0"), "the body's condition output")
        if relax_type(c.type).dtype != "i1":
            c = R.not_equal(c, ctx.scalar_like(0, relax_type(c.type).dtype))
        carried, kind = _flatten(ctx, outs[1 : 1 + n], "body output")
        if kind != kinds:
            raise ConversionError("the body's outputs differ from the loop's inputs in which are sequences")
        ranks[:] = [o.rank if isinstance(o, SeqList) else None for o in _unflatten(carried, kinds)]
        scans = [_value(ctx, o, f"body output #{1 + n + k}") for k, o in enumerate(outs[1 + n :])]
        return [R.add(args[0], _i64(1)), c, *carried], scans

    ranks: list[int | None] = []  # of the lists the body returns (a list that starts empty takes it)
    carried, scans = _while(ctx, inits, keep_going, step, [False] * (len(body.output) - 1 - n), name)
    finals = _unflatten([_refine(ctx, v, f"{name}_d") for v in carried[2:]], kinds)
    finals = [
        L.with_rank(ctx, v, r) if isinstance(v, SeqList) and r is not None else v
        for v, r in zip(finals, ranks)
    ]
    return [*finals, *(_refine(ctx, v, f"{name}_d") for v in scans)]


@converter("Scan", control_flow=True)
def _scan(ctx: NodeContext) -> list[Out]:
    """The body once per slice of the scan inputs (along their axes, either direction), carrying states.
    Scan-8 has a leading batch axis on every input and output: a loop over the batch around the scan."""
    body = ctx.graph("body")
    name = ctx.node.output[0] if ctx.node.output else "scan"
    m = ctx.attr("num_scan_inputs")
    first = 1 if ctx.opset < 9 else 0  # Scan-8's optional sequence_lens
    if first and ctx.has(0):
        raise ConversionError("input 'sequence_lens' is not supported (leave it empty: full lengths)")
    n = ctx.num_inputs - first - m
    k = len(body.output) - n
    if m < 1 or n < 0 or k < 0:
        raise ConversionError(f"num_scan_inputs = {m} does not fit {ctx.num_inputs} inputs")
    states = [ctx.x(first + j) for j in range(n)]
    xs = [ctx.x(first + n + j) for j in range(m)]
    if first:
        in_rev = ctx.attr("directions", [0] * m)
        batch = ctx.shape(first + n)[0]
        if batch is None:
            raise ConversionError(f"the batch axis of input #{first + n} has an unknown length")
        count = ctx.value_of(known_dims([batch], shape=()))

        def step(args: list[ir.Value]) -> tuple[list[ir.Value], list[ir.Value]]:
            b = args[0]
            one = _scan_loop(
                ctx,
                body,
                [R.take(s, b, 0) for s in states],
                [R.take(x, b, 0) for x in xs],
                [0] * m,
                in_rev,
                [0] * k,
                [0] * k,
                name,
            )
            return [R.add(b, _i64(1))], one

        _, stacked = _while(
            ctx, [_i64(0)], lambda args: R.less(args[0], count), step, [False] * (n + k), name
        )
        return [_with_length(ctx, v, batch, name) for v in stacked]
    return _scan_loop(
        ctx,
        body,
        states,
        xs,
        ctx.attr("scan_input_axes", [0] * m),
        ctx.attr("scan_input_directions", [0] * m),
        ctx.attr("scan_output_axes", [0] * k),
        ctx.attr("scan_output_directions", [0] * k),
        name,
    )


def _scan_loop(
    ctx: NodeContext,
    body: onnx.GraphProto,
    states: list[ir.Value],
    xs: list[ir.Value],
    in_axes: Sequence[int],
    in_rev: Sequence[int],
    out_axes: Sequence[int],
    out_rev: Sequence[int],
    name: str,
) -> list[ir.Value]:
    """Scan-9+ on relax values: the final states, then the scan outputs."""
    n = len(states)
    shapes = [relax_type(x.type).shape for x in xs]
    if any(s is None for s in shapes):
        raise ConversionError("the scan inputs must have known ranks")
    in_axes = [normalize_axis(a, len(s)) for a, s in zip(in_axes, shapes)]
    length = shapes[0][in_axes[0]]
    if length is None:
        raise ConversionError("the scan axis of the first scan input has an unknown length")
    count = ctx.value_of(known_dims([length], shape=()))

    def keep_going(args: list[ir.Value]) -> ir.Value:
        return R.less(args[0], count)

    def step(args: list[ir.Value]) -> tuple[list[ir.Value], list[ir.Value]]:
        i = args[0]
        back = R.subtract(R.subtract(count, _i64(1)), i) if any(in_rev) else i
        slices = [R.take(x, back if rev else i, axis) for x, axis, rev in zip(xs, in_axes, in_rev)]
        outs = ctx.importer.subgraph(body, [*args[1:], *slices], f"{name}.body")
        values = [_value(ctx, o, f"body output #{j}") for j, o in enumerate(outs)]
        return [R.add(i, _i64(1)), *values[:n]], values[n:]

    carried, scans = _while(ctx, [_i64(0), *states], keep_going, step, [bool(r) for r in out_rev], name)
    results = [_refine(ctx, v, f"{name}_d") for v in carried[1:]]
    for acc, axis in zip(scans, out_axes):
        acc = _with_length(ctx, acc, length, name)
        t = relax_type(acc.type)
        axis = normalize_axis(axis, len(t.shape))
        if axis != 0:
            order = list(range(1, len(t.shape)))
            order.insert(axis, 0)
            acc = R.permute_dims(acc, order)
        results.append(acc)
    return results


def _with_length(ctx: NodeContext, acc: ir.Value, length: Expr, name: str) -> ir.Value:
    """A stacked scan result whose leading dim is the number of iterations, ``length`` (checked)."""
    t = relax_type(acc.type)
    return _refine(ctx, R.match_cast(acc, TensorType((length, *t.shape[1:]), t.dtype)), f"{name}_d")


# -- SequenceMap ---------------------------------------------------------------------------------------


@converter("SequenceMap", control_flow=True)
def _sequence_map(ctx: NodeContext) -> list[Out]:
    """The body once per item of the input sequence (with the items at the same position of the other
    sequence inputs, and the tensor inputs as they are); each body output collects into a sequence.
    Unrolled when the sequences' lengths are known at import time, else a loop over run-time lists."""
    body = ctx.graph("body")
    name = ctx.node.output[0] if ctx.node.output else "sequence_map"
    inputs = [ctx.seq(i) if ctx.is_seq(i) else ctx.known(i) or ctx.x(i) for i in range(ctx.num_inputs)]
    if not isinstance(inputs[0], (Seq, SeqList)):
        raise ConversionError("input #0 must be a sequence")
    dtypes = [relax_dtype(o.type.tensor_type.elem_type, f"body output '{o.name}'") for o in body.output]
    where = f"{name}.body"
    if all(isinstance(x, Seq) or not isinstance(x, SeqList) for x in inputs):
        n = len(inputs[0].items)
        if any(isinstance(x, Seq) and len(x.items) != n for x in inputs):
            raise ConversionError("the input sequences differ in length")
        results: list[list[Out]] = [[] for _ in body.output]
        for j in range(n):
            args = [x.items[j] if isinstance(x, Seq) else x for x in inputs]
            for k, o in enumerate(ctx.importer.subgraph(body, args, where)):
                results[k].append(o)
        return [Seq(items, dtype) for items, dtype in zip(results, dtypes)]
    lists = [L.pack(ctx, x) if isinstance(x, (Seq, SeqList)) else x for x in inputs]
    count = ctx.value_of(known_dims([L.length(lists[0])], shape=()))
    empty = [L.pack(ctx, Seq([], dtype)) for dtype in dtypes]
    inits, kinds = _flatten(ctx, empty, "output")

    def step(args: list[ir.Value]) -> tuple[list[ir.Value], list[ir.Value]]:
        i = args[0]
        items = [L.at(ctx, x, i) if isinstance(x, SeqList) else x for x in lists]
        outs = ctx.importer.subgraph(body, items, where)
        grown = [L.insert(ctx, acc, o, None) for acc, o in zip(_unflatten(args[1:], kinds), outs)]
        return [R.add(i, _i64(1)), *_flatten(ctx, grown, "body output")[0]], []

    carried, _ = _while(ctx, [_i64(0), *inits], lambda args: R.less(args[0], count), step, [], name)
    return _unflatten([_refine(ctx, v, f"{name}_d") for v in carried[1:]], kinds)

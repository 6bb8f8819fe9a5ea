"""``relax-thread-buffers``: each block of a function uses only buffers it defines (before deallocation).

MLIR 22's ``ownership-based-buffer-deallocation`` sorts the buffers live into a block with a comparator
(``bufferization::ValueComparator``) that calls ``Operation::isBeforeInBlock`` on two op results of one
region and asserts that two arguments of one region with the same number are one value: it aborts the
process ("Expected other operation to have the same parent block") when the buffers live into a block
were defined in two different blocks of one region. The host code branches to a failure block at each
run-time check (a match_cast, a size check in the middle of a function), so buffers defined before a check
(planned storages and views of them, constants' globals, kernels' returned buffers, the function's
arguments) are used after it. This pass makes every block of the function body self-contained:

1. an address computation (a view op, ``memref.get_global``) used in another block is re-created next to
   that user: views keep their base in sight (relax-split-deallocs follows them to it);
2. any other buffer used in a later block (an allocation, a call result, a function argument) reaches it
   along the branches as a block argument (a function argument too: it and a later block's argument with
   its number, both live into a nested region, abort the comparator the same way).

Runs right before ``ownership-based-buffer-deallocation``; a function whose blocks have several
predecessors is left alone (lower_host makes a tree of checks). ``relax-check-deallocation-order`` verifies
the comparator's precondition on every block (nested regions too) and fails with a diagnostic where it does
not hold: every pipeline runs it right before ``ownership-based-buffer-deallocation`` (``add_pipeline``).
"""

from __future__ import annotations

from mlir import ir

from relax_mlir.transforms.registry import PassFailed, register_pass
from relax_mlir.transforms.split_deallocs import VIEWS

_ADDRESSES = VIEWS | {"memref.get_global"}


def _op(owner: ir.Operation | ir.OpView) -> ir.Operation:
    return owner.operation if isinstance(owner, ir.OpView) else owner


def _top_block(op: ir.Operation, region: ir.Region) -> ir.Block | None:
    """The block of ``region`` that holds ``op`` (directly or inside a nested region)."""
    while op.block.region != region:
        if op.parent is None:
            return None
        op = _op(op.parent)
    return op.block


def _terminator(block: ir.Block) -> ir.Operation:
    return _op(block.operations[len(block.operations) - 1])


def _is_memref(v: ir.Value) -> bool:
    return isinstance(v.type, (ir.MemRefType, ir.UnrankedMemRefType))


def _rematerialize(region: ir.Region) -> None:
    """Re-create each address computation used in another block of ``region`` right before that user."""
    work = [_op(op) for b in region.blocks for op in b.operations if _op(op).name in _ADDRESSES]
    while work:
        op = work.pop()
        for i, v in enumerate(op.results):
            for use in list(v.uses):
                user = _op(use.owner)
                if _top_block(user, region) == op.block:
                    continue
                clone = op.clone(ir.InsertionPoint(user))
                user.operands[use.operand_number] = clone.results[i]
                work += [
                    d for s in clone.operands if (d := _defining(s)) is not None and d.name in _ADDRESSES
                ]
        if all(next(iter(v.uses), None) is None for v in op.results):
            op.erase()


def _defining(v: ir.Value) -> ir.Operation | None:
    return None if isinstance(v.owner, ir.Block) else _op(v.owner)


def _thread(func: ir.Operation) -> bool:
    """Pass each buffer used in a later block along the branches as block arguments; False when the
    blocks are not a tree of branches (a join, an unknown terminator)."""
    region = func.regions[0]
    blocks = list(region.blocks)
    preds: dict[ir.Block, list[ir.Block]] = {b: [] for b in blocks}
    for b in blocks:
        term = _terminator(b)
        if term.name not in ("cf.br", "cf.cond_br", "func.return"):
            return False
        succs = list(term.successors)
        if len(set(succs)) != len(succs):
            return False
        for s in succs:
            preds[s].append(b)
    needs: dict[ir.Block, list[ir.Value]] = {b: [] for b in blocks}
    for d in blocks:
        values = [*d.arguments, *(v for op in d.operations for v in op.results)]
        for v in values:
            if not _is_memref(v):
                continue
            for use in list(v.uses):
                x = _top_block(_op(use.owner), region)
                while x is not None and x != d:
                    if len(preds[x]) != 1:
                        return False  # a join (or the entry) between the buffer and its use: not a tree
                    if v not in needs[x]:
                        needs[x].append(v)
                    x = preds[x][0]
    order, seen = [blocks[0]], {blocks[0]}
    for b in order:
        for s in _terminator(b).successors:
            if s not in seen:
                seen.add(s)
                order.append(s)
    local: dict[ir.Block, dict[ir.Value, ir.Value]] = {blocks[0]: {}}
    for b in order[1:]:
        mapping = local[b] = {}
        for v in needs[b]:
            arg = b.add_argument(v.type, ir.Location.unknown(func.context))
            mapping[v] = arg
            for use in list(v.uses):
                if _top_block(_op(use.owner), region) == b:
                    _op(use.owner).operands[use.operand_number] = arg
    for b in blocks:
        term = _terminator(b)
        succs = list(term.successors)
        if not any(needs[s] for s in succs):
            continue
        mapping = local.get(b, {})
        extra = [[mapping.get(v, v) for v in needs[s]] for s in succs]
        _rebuild(term, extra)
    return True


def _rebuild(term: ir.Operation, extra: list[list[ir.Value]]) -> None:
    """Replace branch ``term`` by one that passes ``extra`` values to each successor (after its own)."""
    ops = list(term.operands)
    attrs = {name: term.attributes[name] for name in term.attributes}
    if term.name == "cf.br":
        operands = ops + extra[0]
    else:
        sizes = list(ir.DenseI32ArrayAttr(attrs["operandSegmentSizes"]))
        cond, true_ops = ops[:1], ops[1 : 1 + sizes[1]]
        false_ops = ops[1 + sizes[1] :]
        operands = cond + true_ops + extra[0] + false_ops + extra[1]
        attrs["operandSegmentSizes"] = ir.DenseI32ArrayAttr.get(
            [1, sizes[1] + len(extra[0]), sizes[2] + len(extra[1])], context=term.context
        )
    with term.location, ir.InsertionPoint(term):
        ir.Operation.create(term.name, operands=operands, successors=list(term.successors), attributes=attrs)
    term.erase()


# ----------------------------------------------------------------------------------------------
# The precondition of ownership-based-buffer-deallocation's buffer ordering


def _uses_defs(block: ir.Block) -> tuple[set[ir.Value], set[ir.Value]]:
    """The buffers used in ``block`` (nested regions included) and the values it defines."""
    uses: set[ir.Value] = set()
    defs: set[ir.Value] = set(block.arguments)

    def visit(op: ir.Operation) -> ir.WalkResult:
        uses.update(v for v in op.operands if _is_memref(v))
        defs.update(op.results)
        for r in op.regions:
            for b in r.blocks:
                defs.update(b.arguments)
        return ir.WalkResult.ADVANCE

    for op in block.operations:
        _op(op).walk(visit)
    return uses - defs, defs


def _live_in(region: ir.Region) -> dict[ir.Block, set[ir.Value]]:
    """The buffers live into each block of ``region`` (backward dataflow over its branches)."""
    blocks = list(region.blocks)
    local = {b: _uses_defs(b) for b in blocks}
    live: dict[ir.Block, set[ir.Value]] = {b: set(local[b][0]) for b in blocks}
    changed = True
    while changed:
        changed = False
        for b in reversed(blocks):
            out: set[ir.Value] = set()
            for s in _terminator(b).successors:
                out |= live[s]
            new = live[b] | (out - local[b][1])
            if new != live[b]:
                live[b], changed = new, True
    return live


def _clash(values: set[ir.Value]) -> tuple[ir.Value, ir.Value] | None:
    """Two of ``values`` that MLIR 22's ValueComparator cannot order (it asserts on them), or None."""
    seen: dict[tuple, ir.Value] = {}
    for v in values:
        block = v.owner if isinstance(v.owner, ir.Block) else _op(v.owner).block
        region = block.region.blocks[0]  # (ir.Region compares by identity of its Python object)
        key = (region, ir.BlockArgument(v).arg_number) if isinstance(v.owner, ir.Block) else (region, -1)
        other = seen.setdefault(key, v)
        other_block = other.owner if isinstance(other.owner, ir.Block) else _op(other.owner).block
        if other_block != block:
            return other, v
    return None


def check_deallocation_order(func: ir.Operation) -> None:
    """Emit an error at ``func`` and raise PassFailed where MLIR 22's ``ownership-based-buffer-deallocation``
    would abort on it: the buffers live into some block were defined in two blocks of one region (two op
    results, or two arguments with the same number)."""
    pending = [func.regions[0]]
    while pending:
        region = pending.pop()
        for live in _live_in(region).values():
            clash = _clash(live)
            if clash is not None:
                a, b = sorted(v.get_name() for v in clash)
                name = ir.StringAttr(func.attributes["sym_name"]).value
                func.location.emit_error(
                    f"in @{name}, buffers {a} and {b}, defined in two different blocks, are both live into a "
                    "later block: MLIR 22's ownership-based-buffer-deallocation aborts on that; expected each "
                    "buffer used after a branch to reach it as a block argument (relax-thread-buffers passes "
                    "them so when the blocks form a tree of branches)"
                )
                raise PassFailed("buffers live across blocks")
        for block in region.blocks:
            for op in block.operations:
                pending += [r for r in _op(op).regions if len(r.blocks) > 0]


def _has_branches(func: ir.Operation) -> bool:
    """Whether some region of ``func`` has several blocks (else buffers of one region share a block)."""
    found = len(func.regions[0].blocks) > 1

    def visit(op: ir.Operation) -> ir.WalkResult:
        nonlocal found
        found = found or any(len(r.blocks) > 1 for r in op.regions)
        return ir.WalkResult.INTERRUPT if found else ir.WalkResult.ADVANCE

    if not found:
        func.walk(visit)
    return found


@register_pass("relax-thread-buffers")
class ThreadBuffers:
    """Make each block use only the buffers it defines (before deallocation)."""

    def run(self, module: ir.Operation) -> None:
        for op in _functions(module):
            if len(op.regions[0].blocks) > 1:
                _rematerialize(op.regions[0])
                _thread(op)


@register_pass("relax-check-deallocation-order")
class CheckDeallocationOrder:
    """Fail with a diagnostic where ownership-based-buffer-deallocation would abort (added before it)."""

    def run(self, module: ir.Operation) -> None:
        for op in _functions(module):
            if _has_branches(op):
                check_deallocation_order(op)


def _functions(module: ir.Operation) -> list[ir.Operation]:
    ops = (_op(op) for op in module.regions[0].blocks[0].operations)
    return [op for op in ops if op.name == "func.func" and len(op.regions[0].blocks) > 0]

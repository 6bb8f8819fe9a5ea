"""``relax-thread-buffers``: a buffer used in a later block reaches it as a block argument.

The host code branches to a failure block at each check (a match_cast in the middle of a function), so
buffers allocated in one block are used in later ones. MLIR 22's ``ownership-based-buffer-deallocation``
aborts when the buffers live at a point come from three or more blocks (its value ordering calls
``Operation::isBeforeInBlock`` on operations of different blocks). Passing each such buffer along the
branches as a block argument leaves every block with buffers that are its own arguments or results.
Only allocations are passed (a view of one stays where it is: relax-split-deallocs follows it to its base).
Runs right before ``ownership-based-buffer-deallocation``; functions whose blocks have several
predecessors are left alone (lower_host makes a tree of checks).
"""

from __future__ import annotations

from mlir import ir

from relax_mlir.transforms.registry import register_pass


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


def _thread(func: ir.Operation) -> None:
    region = func.regions[0]
    blocks = list(region.blocks)
    if len(blocks) < 2:
        return
    preds: dict[ir.Block, list[ir.Block]] = {b: [] for b in blocks}
    for b in blocks:
        term = _terminator(b)
        if term.name not in ("cf.br", "cf.cond_br", "func.return"):
            return
        succs = list(term.successors)
        if len(set(succs)) != len(succs):
            return
        for s in succs:
            preds[s].append(b)
    needs: dict[ir.Block, list[ir.Value]] = {b: [] for b in blocks}
    for d in blocks:
        for op in d.operations:
            if _op(op).name != "memref.alloc":  # views stay (relax-split-deallocs follows them to their base)
                continue
            for v in op.results:
                for use in list(v.uses):
                    x = _top_block(_op(use.owner), region)
                    while x is not None and x != d:
                        if len(preds[x]) != 1:
                            return  # a join (or the entry) between the buffer and its use: not a tree
                        if v not in needs[x]:
                            needs[x].append(v)
                        x = preds[x][0]
    # deallocation handles buffers from one earlier block (and passing them would hide the views of a
    # planned storage from relax-split-deallocs): only thread when some block uses buffers of two or more
    if not any(len({_op(v.owner).block for v in vs}) >= 2 for vs in needs.values()):
        return
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


@register_pass("relax-thread-buffers")
class ThreadBuffers:
    """Pass buffers used in later blocks along the branches as block arguments (before deallocation)."""

    def run(self, module: ir.Operation) -> None:
        for op in module.regions[0].blocks[0].operations:
            op = _op(op)
            if op.name == "func.func" and len(op.regions[0].blocks) > 1:
                _thread(op)

"""Elementwise epilogues moved into a kernel's own ``scf.forall`` (used by ``relax-fuse-kernels``).

A kernel whose lowering writes its result block by block in an ``scf.forall`` (the im2col convolution's
images x row blocks) is followed, in a fused kernel, by the group's elementwise epilogue (bias, ReLU,
residual add) as ``linalg.generic`` ops over the whole result. ``fuse_epilogues`` moves each such generic
into the loop: it runs on the block the iteration just computed (in cache; the schedules vectorize it
with the block's static shape) and writes into the epilogue's destination, instead of another pass over
memory in a second parallel loop. The loop's shared output must start as a ``tensor.empty`` (then
nothing depends on its contents, and it can start as the epilogue's destination instead). Never fuses
when unsure: a loop or generic that does not match every condition is left as it is.
"""

from __future__ import annotations

from mlir import ir
from mlir.dialects import tensor

from relax_mlir.transforms.relax_ir import ops_named

_DYNAMIC = -(2**63)  # ShapedType::kDynamic in static offset/size lists


def fuse_epilogues(func: ir.Operation) -> int:
    """Move the elementwise consumers of ``func``'s ``scf.forall`` results into the loops; how many moved."""
    moved = 0
    changed = True
    while changed:
        changed = False
        for op in ops_named(func, "scf.forall"):
            generic = _sole_consumer(op)
            if generic is not None and _fuse(op, generic):
                moved += 1
                changed = True
    return moved


def _sole_consumer(forall: ir.Operation) -> ir.Operation | None:
    if len(forall.results) != 1:
        return None
    uses = list(forall.results[0].uses)
    if len(uses) != 1:
        return None
    user = uses[0].owner
    return user if user.name == "linalg.generic" and user.parent == forall.parent else None


def _identity(m: ir.AffineMap) -> bool:
    return m.n_symbols == 0 and [str(r) for r in m.results] == [f"d{i}" for i in range(m.n_dims)]


def _before(v: ir.Value, op: ir.Operation) -> bool:
    """Whether ``v`` is available right before ``op``: a block argument of an enclosing block, or the
    result of an op earlier in ``op``'s block."""
    owner = v.owner
    if isinstance(owner, ir.Block):
        return True
    block_ops = list(op.parent.regions[0].blocks[0].operations) if op.parent is not None else []
    ops = [o.operation for o in block_ops]
    if owner.operation not in ops or op not in ops:
        return False
    return ops.index(owner.operation) < ops.index(op)


MOVABLE = frozenset({"tensor.empty", "tensor.dim", "arith.constant"})  # side-effect free, cheap to move


def _available(v: ir.Value, op: ir.Operation) -> bool:
    """Whether ``v`` is available before ``op``, after moving its ``tensor.empty`` there if need be (and
    the ``tensor.dim`` sizes it reads: an epilogue's destination may be sized after the loop)."""
    if _before(v, op):
        return True
    owner = v.owner
    if isinstance(owner, ir.Block) or owner.name not in MOVABLE or owner.parent != op.parent:
        return False
    if not all(_available(d, op) for d in owner.operands):
        return False
    owner.move_before(op)
    return True


def _mixed(op: ir.Operation, name: str, dynamic: list[ir.Value]) -> list[int | ir.Value]:
    """A slice op's offsets or sizes: ints where static, the next of ``dynamic`` where not."""
    out: list[int | ir.Value] = []
    for v in ir.DenseI64ArrayAttr(op.attributes[name]):
        out.append(dynamic.pop(0) if v == _DYNAMIC else v)
    return out


def _fuse(forall: ir.Operation, generic: ir.Operation) -> bool:
    result = forall.results[0]
    iterators = [str(a) for a in ir.ArrayAttr(generic.attributes["iterator_types"])]
    maps = [ir.AffineMapAttr(m).value for m in ir.ArrayAttr(generic.attributes["indexing_maps"])]
    operands = list(generic.operands)
    n_in = len(operands) - 1
    if len(generic.results) != 1 or any("parallel" not in it for it in iterators) or n_in < 1:
        return False
    if generic.results[0].type != result.type or operands[-1].type != result.type or not _identity(maps[-1]):
        return False
    payload = generic.regions[0].blocks[0]
    if next(iter(payload.arguments[-1].uses), None) is not None:  # reads its destination
        return False
    init = forall.operands[len(forall.operands) - 1].owner
    if isinstance(init, ir.Block) or init.name != "tensor.empty":  # its contents would change
        return False
    body = forall.regions[0].blocks[0]
    terminator = list(body.operations)[-1].operation
    inserts = [o.operation for o in terminator.regions[0].blocks[0].operations]
    if len(inserts) != 1 or inserts[0].name != "tensor.parallel_insert_slice":
        return False
    insert = inserts[0]
    part = insert.operands[0]
    if insert.operands[1] != body.arguments[-1] or ir.RankedTensorType(part.type).rank != len(iterators):
        return False
    for v, m in zip(operands[:n_in], maps[:n_in], strict=True):
        if v == result:
            if not _identity(m):
                return False
        elif not (isinstance(v.type, ir.RankedTensorType) and _before(v, forall) and _projected(m)):
            return False
    if not _available(operands[-1], forall):
        return False

    segments = list(ir.DenseI32ArrayAttr(insert.attributes["operandSegmentSizes"]))
    dynamic = list(insert.operands)[2:]
    offsets = _mixed(insert, "static_offsets", dynamic[: segments[2]])
    sizes = _mixed(insert, "static_sizes", dynamic[segments[2] : segments[2] + segments[3]])
    keep = [i for i, v in enumerate(operands[:n_in]) if v != result]
    with ir.InsertionPoint(terminator), generic.location:
        ins = [_slice(operands[i], maps[i], offsets, sizes) for i in keep]
        fused = _in_place(generic, keep, [maps[i] for i in keep] + [maps[-1]], ins, part)
    generic.results[0].replace_all_uses_with(result)
    forall.operands[len(forall.operands) - 1] = operands[-1]  # the loop now writes the epilogue's destination
    generic.erase()
    insert.operands[0] = fused
    return True


def _in_place(
    generic: ir.Operation, keep: list[int], maps: list[ir.AffineMap], ins: list[ir.Value], part: ir.Value
) -> ir.Value:
    """A copy of ``generic`` on the block ``part``: inputs ``ins`` (its inputs ``keep``), and ``part`` as
    its destination, read where ``generic`` read the loop's result (in place, so bufferization does not
    copy the block as it would for a generic reading and writing the same tensor)."""
    old = generic.regions[0].blocks[0]
    op = ir.Operation.create(
        "linalg.generic",
        results=[part.type],
        operands=[*ins, part],
        attributes={
            "indexing_maps": ir.ArrayAttr.get([ir.AffineMapAttr.get(m) for m in maps]),
            "iterator_types": generic.attributes["iterator_types"],
            "operandSegmentSizes": ir.DenseI32ArrayAttr.get([len(ins), 1]),
        },
        regions=1,
    )
    element = ir.RankedTensorType(part.type).element_type
    types = [ir.RankedTensorType(v.type).element_type for v in ins] + [element]
    block = op.regions[0].blocks.append(*types)
    out = block.arguments[len(ins)]
    mapping = {old.arguments[i]: block.arguments[j] for j, i in enumerate(keep)}
    for i in range(len(old.arguments)):
        mapping.setdefault(old.arguments[i], out)  # the loop's result and the unread destination
    with ir.InsertionPoint(block):
        for payload_op in old.operations:
            clone = payload_op.operation.clone()
            for k, v in enumerate(clone.operands):
                if v in mapping:
                    clone.operands[k] = mapping[v]
            for a, b in zip(payload_op.results, clone.results, strict=True):
                mapping[a] = b
    return op.results[0]


def _projected(m: ir.AffineMap) -> bool:
    """Each result a loop dim or the constant 0 (a broadcast operand's unit dim)."""
    dims = {f"d{i}" for i in range(m.n_dims)}
    return m.n_symbols == 0 and all(str(r) in dims or str(r) == "0" for r in m.results)


def _slice(
    v: ir.Value, m: ir.AffineMap, offsets: list[int | ir.Value], sizes: list[int | ir.Value]
) -> ir.Value:
    """The part of operand ``v`` (indexed by ``m``) that the block at ``offsets``/``sizes`` reads."""
    offs: list[int | ir.Value] = []
    lens: list[int | ir.Value] = []
    for r in m.results:
        s = str(r)
        if s == "0":
            offs.append(0)
            lens.append(1)
        else:
            j = int(s[1:])
            offs.append(offsets[j])
            lens.append(sizes[j])
    shape = [x if isinstance(x, int) else ir.ShapedType.get_dynamic_size() for x in lens]
    t = ir.RankedTensorType.get(shape, ir.RankedTensorType(v.type).element_type)

    def split(xs: list[int | ir.Value]) -> tuple[list[ir.Value], list[int]]:
        return [x for x in xs if not isinstance(x, int)], [x if isinstance(x, int) else _DYNAMIC for x in xs]

    dyn_o, st_o = split(offs)
    dyn_s, st_s = split(lens)
    return tensor.ExtractSliceOp(t, v, dyn_o, dyn_s, [], st_o, st_s, [1] * len(offs)).result

"""Small helpers shared by the relax cleanup passes (relax-dce, relax-cse, relax-canonicalize,
relax-fold-constants): which ops are pure (the op classes' ``PURE`` trait), walking function bodies and dataflow blocks, replacing ops."""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from mlir import ir
from mlir.dialects import scf

from relax_mlir.dialects.registry import op_class as relax_class
from relax_mlir.transforms.well_formed import DATAFLOW_ATTR


def is_pure(op: ir.Operation) -> bool:
    """A relax op that computes its results from its operands only, with no effect or run-time check
    (its class's ``PURE`` trait): such an op may be removed, merged or evaluated at compile time."""
    cls = relax_class(op)
    return cls is not None and cls.PURE


def is_dataflow(op: ir.Operation) -> bool:
    return op.name == "scf.execute_region" and DATAFLOW_ATTR in op.attributes


def unused(op: ir.Operation) -> bool:
    return all(not list(r.uses) for r in op.results)


def single_use(v: ir.Value) -> bool:
    """Whether ``v`` has exactly one use."""
    uses = iter(v.uses)
    return next(uses, None) is not None and next(uses, None) is None


def functions(module: ir.Operation) -> list[ir.Operation]:
    """The ``func.func`` ops of a module that have a body."""
    body = module.regions[0].blocks[0]
    return [
        op.operation for op in body.operations if op.operation.name == "func.func" and op.regions[0].blocks
    ]


def walk_relax_ops(block: ir.Block) -> Iterator[ir.Operation]:
    """Relax ops of ``block`` and of dataflow blocks inside it, in program order (snapshot)."""
    for op in list(block.operations):
        op = op.operation
        if is_dataflow(op):
            yield from walk_relax_ops(op.regions[0].blocks[0])
        elif relax_class(op) is not None:
            yield op


def replace_op(op: ir.Operation, values: Sequence[ir.Value]) -> None:
    """Point every use of ``op``'s results at ``values`` and erase ``op``."""
    for r, v in zip(op.results, values):
        r.replace_all_uses_with(v)
    op.erase()


def erase_dead_producers(values: Sequence[ir.Value]) -> None:
    """Erase the pure producers of ``values`` (recursively) that no longer have uses."""
    work, erased = list(values), set()
    while work:
        v = work.pop()
        if v in erased or not isinstance(v, ir.OpResult):
            continue
        owner = v.owner.operation
        if is_pure(owner) and unused(owner):
            work.extend(owner.operands)
            erased.update(owner.results)
            owner.erase()


def drop_dataflow_results(op: ir.Operation, keep: list[int]) -> ir.Operation:
    """Rebuild dataflow block ``op`` with only the results at ``keep``; returns the new op."""
    block = op.regions[0].blocks[0]
    terminator = block.operations[len(block.operations) - 1].operation
    with ir.InsertionPoint(op), op.location:
        new = ir.Operation.create("scf.execute_region", results=[op.results[i].type for i in keep], regions=1)
    attrs = op.attributes
    for i in range(len(attrs)):
        new.attributes[attrs[i].name] = attrs[i].attr
    new_block = new.regions[0].blocks.append()
    for inner in list(block.operations):
        new_block.append(inner.operation)
    with ir.InsertionPoint(terminator), terminator.location:
        scf.YieldOp([terminator.operands[i] for i in keep])
    terminator.erase()
    for j, i in enumerate(keep):
        op.results[i].replace_all_uses_with(new.results[j])
    op.erase()
    return new


def ops_named(root: ir.Operation, name: str) -> list[ir.Operation]:
    """Every op called ``name`` under ``root`` (``root`` included), in walk order."""
    found: list[ir.Operation] = []

    def visit(op: ir.Operation) -> ir.WalkResult:
        if op.name == name:
            found.append(op)
        return ir.WalkResult.ADVANCE

    root.walk(visit)
    return found

"""Small helpers for the GPU passes: which functions are kernels, walking, index arithmetic."""

from __future__ import annotations

from collections.abc import Iterator

from mlir import ir
from mlir.dialects import arith

from relax_mlir.transforms.lower_host import SIGNATURE_ATTR


def functions(module: ir.Operation) -> Iterator[ir.Operation]:
    """Every ``func.func`` with a body at the top level of ``module``."""
    for op in module.regions[0].blocks[0].operations:
        op = op.operation
        if op.name == "func.func" and op.regions[0].blocks:
            yield op


def is_host(func: ir.Operation) -> bool:
    """A host function (written by ``relax-lower-host``), as opposed to a kernel it calls."""
    return SIGNATURE_ATTR in func.attributes


def kernels(module: ir.Operation) -> list[ir.Operation]:
    """The kernel functions: private functions with a body that are not host functions."""
    return [f for f in functions(module) if not is_host(f)]


def inside_launch(op: ir.Operation) -> bool:
    """Whether ``op`` is nested in a ``gpu.launch`` (it runs on the device)."""
    parent = op.parent
    while parent is not None and parent.name != "func.func":
        if parent.name == "gpu.launch":
            return True
        parent = parent.parent
    return False


def collect(root: ir.Operation, names: set[str]) -> list[ir.Operation]:
    """The ops named ``names`` nested in ``root``, in pre-order."""
    found: list[ir.Operation] = []

    def visit(op: ir.Operation) -> ir.WalkResult:
        if op.name in names:
            found.append(op)
        return ir.WalkResult.ADVANCE

    root.walk(visit, ir.WalkOrder.PRE_ORDER)
    return found


def producer(value: ir.Value) -> ir.Operation | None:
    """The op defining ``value``; None for a block argument."""
    owner = value.owner
    return None if isinstance(owner, ir.Block) else owner.operation


def index(value: int) -> ir.Value:
    return arith.constant(ir.IndexType.get(), value)


def delinearize(linear: ir.Value, sizes: list[ir.Value]) -> list[ir.Value]:
    """The row-major position of ``linear`` in an iteration space of ``sizes`` (the first size unused)."""
    positions = []
    for size in reversed(sizes[1:]):
        positions.append(arith.remui(linear, size))
        linear = arith.divui(linear, size)
    positions.append(linear)
    return positions[::-1]


def returns(func: ir.Operation) -> list[ir.Operation]:
    """The ``func.return`` ops of ``func`` (one per exit block)."""
    return [
        b.operations[len(b.operations) - 1].operation
        for b in func.regions[0].blocks
        if len(b.operations) and b.operations[len(b.operations) - 1].operation.name == "func.return"
    ]

"""``relax-fold-constants``: evaluate shape computations and constant subgraphs at compile time.

(a) Shape values: a pure op whose result is a symbolic integer of known value (``get_dim``,
``prim_binary``... typed ``!relax.prim<"s * 8">``) becomes ``relax.prim_value`` of that expression, so
the ``shape_of`` chains behind it die; ``shape_to_tensor`` of a shape of constant dims becomes a
``relax.constant``.

(b) Compute ops all of whose operands are ``relax.constant`` (or folded values), with static result
types, are evaluated by relax_mlir's own compiler: the foldable subgraph of each function becomes one
function ``@fold() -> (values...)``, compiled with ``relax_mlir.compile`` (the same lowering as the
program, so folding never changes the semantics) and run once; its results replace the values as
``relax.constant`` ops. Size limits: a folded value has at most ``max-elements`` elements (default
2**20); a value computed only from ``full``/``arange`` (no constant input) is folded only when it has at
most 4096 elements, since folding it would just grow the module. When compiling or running the
subgraph fails, nothing is folded in that function.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import numpy as np
from mlir import ir
from mlir.dialects import func

from relax_mlir.dialects.ops.shape_value import PrimValueOp
from relax_mlir.dialects.ops.structural import constant
from relax_mlir.dialects.registry import ATTR_KINDS
from relax_mlir.dialects.types import NUMPY_DTYPES, PrimType, ShapeType, TensorType, relax_type, to_mlir
from relax_mlir.errors import RelaxError
from relax_mlir.shape_infer.expr import format_dim
from relax_mlir.transforms.registry import register_pass
from relax_mlir.transforms.relax_ir import (
    erase_dead_producers,
    functions,
    is_pure,
    relax_class,
    replace_op,
    walk_relax_ops,
)

# Compiles a module with a ``@fold() -> constants`` function and runs it; set by the CPU target (a pass
# may not import the targets, which run the passes). relax-O0 is enough: the fold function is all
# constants, and the O1-O3 pipelines run this pass.
Evaluator = Callable[[ir.Module, int], Sequence[np.ndarray]]
_evaluator: Evaluator | None = None


def set_evaluator(evaluator: Evaluator) -> None:
    """Set how constant subgraphs are evaluated: ``evaluator(module, opt_level)`` returns ``@fold``'s
    results (``targets/cpu.py`` compiles it at relax-O0 and runs it)."""
    global _evaluator
    _evaluator = evaluator


MAX_ELEMENTS = 1 << 20  # default max-elements: the largest value folded
SMALL_GENERATED = 4096  # elements: largest value folded when no relax.constant feeds it


def fold_shapes(f: ir.Operation) -> int:
    """Replace known symbolic integers by ``prim_value`` and constant shapes-as-tensors by constants."""
    folded = 0
    for op in walk_relax_ops(f.regions[0].blocks[0]):
        if not is_pure(op) or op.name == "relax.prim_value" or len(op.results) != 1:
            continue
        t = relax_type(op.results[0].type)
        if isinstance(t, PrimType) and t.value is not None:
            new = _prim_value(op, t)
        elif op.name == "relax.shape_to_tensor" and _constant_shape(op.operands[0]) is not None:
            with ir.InsertionPoint(op), op.location:
                new = constant(np.array(_constant_shape(op.operands[0]), np.int64), loc=op.location).owner
        else:
            continue
        if new.results[0].type != op.results[0].type:
            new.operation.erase()
            continue
        operands = list(op.operands)
        replace_op(op, list(new.results))
        erase_dead_producers(operands)
        folded += 1
    return folded


def _prim_value(op: ir.Operation, t: PrimType) -> ir.Operation:
    """``relax.prim_value`` of ``t``'s value with ``op``'s result type exactly as spelled (a dataflow
    yield needs the very same type)."""
    assert t.value is not None
    attr = PrimValueOp.ATTRS[0]
    value = ATTR_KINDS[attr.kind].from_py(format_dim(t.value))
    deduced = PrimValueOp.deduce([], {attr.name: format_dim(t.value)})
    results = [op.results[0].type if deduced == [t] else to_mlir(deduced[0])]
    return ir.Operation.create(
        PrimValueOp.OPERATION_NAME,
        results=results,
        attributes={attr.name: value},
        loc=op.location,
        ip=ir.InsertionPoint(op),
    )


def _constant_shape(v: ir.Value) -> list[int] | None:
    t = relax_type(v.type)
    if (
        not isinstance(t, ShapeType)
        or t.values is None
        or not all(d is not None and d.is_const for d in t.values)
    ):
        return None
    return [d.value for d in t.values]


def _static_numel(t: object) -> int | None:
    """Element count of a tensor type with static dims and a runtime-supported dtype, else None."""
    if not isinstance(t, TensorType) or t.shape is None or t.dtype not in NUMPY_DTYPES:
        return None
    if not all(d is not None and d.is_const for d in t.shape):
        return None
    return math.prod(d.value for d in t.shape)


class _Folder:
    """The foldable subgraph of one function and its evaluation."""

    def __init__(self, f: ir.Operation, max_elements: int, opt_level: int) -> None:
        self.f = f
        self.max_elements = max_elements
        self.opt_level = opt_level
        self.known: dict[ir.Value, bool] = {}  # value -> depends on a relax.constant
        self.order: list[ir.Operation] = []  # constants and foldable ops, in program order

    def collect(self) -> None:
        for op in walk_relax_ops(self.f.regions[0].blocks[0]):
            if op.name == "relax.constant":
                self.known[op.results[0]] = True
                self.order.append(op)
                continue
            cls = relax_class(op)
            if not is_pure(op) or not hasattr(cls, "lower") or not all(v in self.known for v in op.operands):
                continue
            sizes = [_static_numel(relax_type(r.type)) for r in op.results]
            if any(n is None or n > self.max_elements for n in sizes):
                continue
            from_constant = any(self.known[v] for v in op.operands)
            for r in op.results:
                self.known[r] = from_constant
            self.order.append(op)

    def targets(self) -> list[ir.Value]:
        """Folded values that something outside the foldable subgraph uses."""
        out = []
        for op in self.order:
            if op.name == "relax.constant":
                continue
            for r in op.results:
                if not self.known[r] and _static_numel(relax_type(r.type)) > SMALL_GENERATED:
                    continue
                if any(not self._in_subgraph(u.owner) for u in r.uses):
                    out.append(r)
        return out

    def _in_subgraph(self, owner: ir.OpView | ir.Operation) -> bool:
        op = owner.operation
        return bool(op.results) and all(r in self.known for r in op.results) and relax_class(op) is not None

    def evaluate(self, targets: list[ir.Value]) -> list[np.ndarray] | None:
        """Compile and run ``@fold() -> targets``; None when that fails."""
        needed = self._needed(targets)
        loc = ir.Location.unknown()
        module = ir.Module.create(loc)
        with ir.InsertionPoint(module.body), loc:
            fn = func.FuncOp("fold", ([], [t.type for t in targets]))
        mapping: dict[ir.Value, ir.Value] = {}
        with ir.InsertionPoint(fn.add_entry_block()), loc:
            for op in self.order:
                if op not in needed:
                    continue
                clone = op.clone()
                for i, v in enumerate(op.operands):
                    clone.operands[i] = mapping[v]
                mapping.update(zip(op.results, clone.results))
            func.ReturnOp([mapping[t] for t in targets])
        if _evaluator is None:
            raise RelaxError("relax-fold-constants needs a target to evaluate constants: import relax_mlir")
        try:
            outs = _evaluator(module, self.opt_level)
        except RelaxError:
            return None
        return [np.asarray(o) for o in outs]

    def _needed(self, targets: list[ir.Value]) -> set[ir.Operation]:
        needed: set[ir.Operation] = set()
        work = [t.owner.operation for t in targets]
        while work:
            op = work.pop()
            if op in needed:
                continue
            needed.add(op)
            work.extend(v.owner.operation for v in op.operands)
        return needed


def fold_compute(f: ir.Operation, max_elements: int, opt_level: int) -> int:
    """Evaluate the constant subgraph of ``f`` and replace its used values by constants."""
    folder = _Folder(f, max_elements, opt_level)
    folder.collect()
    targets = folder.targets()
    if not targets:
        return 0
    values = folder.evaluate(targets)
    if values is None:
        return 0
    folded = 0
    for target, value in zip(targets, values):
        producer = target.owner.operation
        with ir.InsertionPoint(producer), producer.location:
            c = constant(
                value.astype(np.dtype(NUMPY_DTYPES[relax_type(target.type).dtype])), loc=producer.location
            )
        if c.type != target.type:
            c.owner.operation.erase()
            continue
        target.replace_all_uses_with(c)
        folded += 1
    erase_dead_producers(targets)
    return folded


def fold_constants(module: ir.Operation, max_elements: int = MAX_ELEMENTS, opt_level: int = 3) -> int:
    """Run both foldings on every function of ``module``; the number of values folded."""
    total = 0
    for f in functions(module):
        total += fold_shapes(f)
        total += fold_compute(f, max_elements, opt_level)
    return total


@register_pass("relax-fold-constants")
class FoldConstants:
    """Fold known symbolic integers to prim_value and evaluate constant subgraphs (compiled) to constants."""

    max_elements: int = MAX_ELEMENTS
    opt_level: int = 3

    def run(self, module: ir.Operation) -> None:
        fold_constants(module, self.max_elements, self.opt_level)

"""``relax-fuse-kernels``: merge the ``call_tir`` of one fusion group into one call of a fused kernel.

Runs after ``convert-relax-to-linalg`` (which copies ``relax.fusion_group`` from relax-fuse-ops onto
the calls) and before ``relax-lower-host``. For each group, the members' calls become one
``relax.call_tir @fused_<ops>_<n>`` whose kernel calls the members' kernels in order; the calls are
inlined and ``linalg-fuse-elementwise-ops`` (+ canonicalize, cse) merges the elementwise loops, so
intermediates that fuse disappear and the others become ``tensor.empty`` inside the kernel. Elementwise
ops that consume a member's own ``scf.forall`` (the convolution's row blocks) then move into that loop
(``fuse_epilogue.py``).

The fused kernel takes the group's external inputs (tensors, then prim values), an index argument
for every symbol its intermediates' sizes need that it cannot read from a dim of its tensors
(passed as ``relax.prim_value``), then one destination per group value used outside the group.
Shape ops between members that do not depend on the group (the ``match_cast`` checks that
convert-relax-to-linalg inserts, constants...) move above the group; anything else between
members splits the group, as do calls of allocating kernels (unknown result dims). Never fuses
when unsure: the members' calls are left as they are.
"""

from __future__ import annotations

import re

from mlir import ir, passmanager

from relax_mlir.dialects.ops.shape_value import prim_value
from relax_mlir.dialects.ops.structural import call_tir
from relax_mlir.dialects.registry import op_class
from relax_mlir.dialects.types import PrimType, TensorType, relax_type
from relax_mlir.lowering.kernel import KernelBuilder, KernelValue
from relax_mlir.transforms.fuse_epilogue import fuse_epilogues
from relax_mlir.transforms.fuse_ops import GROUP_ATTR, hoistable
from relax_mlir.transforms.registry import register_pass

KERNEL_PIPELINE = "func.func(linalg-fuse-elementwise-ops,canonicalize,cse)"


def _callee(op: ir.Operation) -> str:
    return ir.FlatSymbolRefAttr(op.attributes["callee"]).value


def _group_id(op: ir.Operation) -> int | None:
    if op.name != "relax.call_tir" or GROUP_ATTR not in op.attributes:
        return None
    return ir.IntegerAttr(op.attributes[GROUP_ATTR]).value


def _runs(block: ir.Block, kernels: dict[str, ir.Operation]) -> list[list[ir.Operation]]:
    """Contiguous runs (after moving independent shape ops up) of calls of one group, two or more."""
    runs: list[list[ir.Operation]] = []
    by_id: dict[int, list[ir.Operation]] = {}
    for op in block.operations:
        gid = _group_id(op.operation)
        if gid is not None:
            by_id.setdefault(gid, []).append(op.operation)
    ops = [op.operation for op in block.operations]
    for members in by_id.values():
        run: list[ir.Operation] = []
        inside: set[ir.Value] = set()  # values of the run, or of ops that stay between its members
        for op in ops[ops.index(members[0]) : ops.index(members[-1]) + 1]:
            if op in members and _fusable_call(op, kernels):
                run.append(op)
            elif run and _movable(op) and not any(v in inside for v in op.operands):
                op.move_before(run[0])
                continue
            else:
                if len(run) > 1:
                    runs.append(run)
                run = []
            inside.update(op.results)
        if len(run) > 1:
            runs.append(run)
    return runs


def _movable(op: ir.Operation) -> bool:
    """May move above a run of fused calls it does not use (``HOISTABLE`` or ``HOISTABLE_OVER_KERNELS``)."""
    return hoistable(op) or getattr(op_class(op), "HOISTABLE_OVER_KERNELS", False)


def _fusable_call(op: ir.Operation, kernels: dict[str, ir.Operation]) -> bool:
    kernel = kernels.get(_callee(op))
    if kernel is None:
        return False
    n_inputs = len(ir.FunctionType(ir.TypeAttr(kernel.attributes["function_type"]).value).inputs)
    if n_inputs != len(op.operands) + len(op.results):  # allocating kernel, or a mismatch
        return False
    for v in op.operands:
        if not isinstance(relax_type(v.type), (TensorType, PrimType)):
            return False
    return all(isinstance(relax_type(r.type), TensorType) for r in op.results)


def _signature(kernel: ir.Operation) -> tuple[list[str], list[str]]:
    ft = ir.FunctionType(ir.TypeAttr(kernel.attributes["function_type"]).value)
    return [str(t) for t in ft.inputs], [str(t) for t in ft.results]


def _base(callee: str) -> str:
    return re.sub(r"_\d+$", "", callee)


class _Fusion:
    """Writes one fused kernel for a run of calls and replaces the calls by one call of it."""

    def __init__(self, run: list[ir.Operation], kernels: dict[str, ir.Operation]) -> None:
        self.run = run
        self.kernels = kernels
        members = set(run)
        produced = {r for op in run for r in op.results}
        inputs: list[ir.Value] = []
        for op in run:
            for v in op.operands:
                if v not in produced and v not in inputs:
                    inputs.append(v)
        self.inputs = [v for v in inputs if isinstance(relax_type(v.type), TensorType)]
        self.inputs += [v for v in inputs if isinstance(relax_type(v.type), PrimType)]
        self.outputs = [
            r for op in run for r in op.results if any(u.owner.operation not in members for u in r.uses)
        ]

    def kernel(self) -> tuple[KernelBuilder, list[KernelValue]] | None:
        types = [relax_type(v.type) for v in self.inputs]
        outs = [relax_type(v.type) for v in self.outputs]
        if not self.outputs:
            return None
        k = KernelBuilder("fused", types, outs, {})  # type: ignore[arg-type]
        if k.allocating:
            return None
        values: dict[ir.Value, KernelValue] = dict(zip(self.inputs, k.ins))
        for op in self.run:
            callee = _callee(op)
            params, results = _signature(self.kernels[callee])
            args = [self._cast(k, values[v], t) for v, t in zip(op.operands, params)]
            for r, t in zip(op.results, params[len(op.operands) :]):
                rt = relax_type(r.type)
                assert isinstance(rt, TensorType)
                dest = k.outs[self.outputs.index(r)] if r in self.outputs else k.empty(rt.shape, rt.dtype)
                args.append(self._cast(k, dest, t))
            names = [k.fresh("call") for _ in results]
            lhs = f"{names[0]}:{len(names)}" if len(names) > 1 else names[0]
            k.emit(
                f"{lhs} = func.call @{callee}({', '.join(a.name for a in args)}) : "
                f"({', '.join(params)}) -> ({', '.join(results)})"
            )
            for i, (r, t) in enumerate(zip(op.results, results)):
                name = names[0] if len(names) == 1 else f"{names[0]}#{i}"
                values[r] = KernelValue(name, relax_type(r.type), t)  # type: ignore[arg-type]
        returned = [self._cast(k, values[r], o.mlir) for r, o in zip(self.outputs, k.destinations)]
        return k, returned

    @staticmethod
    def _cast(k: KernelBuilder, v: KernelValue, mlir: str) -> KernelValue:
        if v.mlir == mlir:
            return v
        if v.mlir == "index" or mlir == "index":
            raise ValueError(f"cannot pass {v.mlir} as {mlir}")
        name = k.fresh("cast")
        k.emit(f"{name} = tensor.cast {v.name} : {v.mlir} to {mlir}")
        return KernelValue(name, v.type, mlir)

    def replace(self, callee: str, symbols: list[str]) -> None:
        first = self.run[0]
        with first.location, ir.InsertionPoint(first):
            args = [*self.inputs, *(prim_value(s, loc=first.location) for s in symbols)]
            results = call_tir(callee, args, [relax_type(v.type) for v in self.outputs], loc=first.location)  # type: ignore[misc]
        for old, new in zip(self.outputs, results):
            old.replace_all_uses_with(new)
        for op in reversed(self.run):
            op.erase()


@register_pass("relax-fuse-kernels")
class FuseKernels:
    """Merge the call_tir of each relax.fusion_group into one call of a fused, linalg-fused kernel."""

    def run(self, module: ir.Operation) -> None:
        body = module.regions[0].blocks[0]
        kernels = {
            ir.StringAttr(op.attributes["sym_name"]).value: op.operation
            for op in body.operations
            if op.operation.name == "func.func" and op.regions[0].blocks and not _is_relax(op.operation)
        }
        taken = {
            ir.StringAttr(op.attributes["sym_name"]).value
            for op in body.operations
            if "sym_name" in op.attributes
        }
        texts: dict[str, str] = {}
        new_names: list[str] = []
        for block in _relax_blocks(module):
            for run in _runs(block, kernels):
                fusion = _Fusion(run, kernels)
                written = fusion.kernel()
                if written is None:
                    continue
                k, results = written
                text = k.function_text("__FUSED__", results)
                name = texts.get(text)
                if name is None:
                    name = _fresh("fused_" + "_".join(dict.fromkeys(_base(_callee(op)) for op in run)), taken)
                    texts[text] = name
                    new_names.append(name)
                fusion.replace(name, k.symbol_params)
        for op in body.operations:  # the attribute has done its work (and keeps a rerun a no-op)
            _strip(op.operation)
        if not texts:
            return
        self._append(module, kernels, {n: t for t, n in texts.items()})
        pm = passmanager.PassManager.parse("builtin.module(inline{default-pipeline=})", module.context)
        pm.run(module)
        fused = [
            op.operation
            for op in body.operations
            if "sym_name" in op.attributes and ir.StringAttr(op.attributes["sym_name"]).value in new_names
        ]
        kernel_pm = passmanager.PassManager.parse(KERNEL_PIPELINE, module.context)
        cleanup_pm = passmanager.PassManager.parse("func.func(canonicalize,cse)", module.context)
        for f in fused:
            if _safe_to_fuse_loops(f):
                f = _fuse_loops(f, kernel_pm)
            _forward_copies(f)
            fuse_epilogues(f)
            cleanup_pm.run(f)
            pin_results(f)
        _drop_unused(module, set(kernels))

    @staticmethod
    def _append(module: ir.Operation, kernels: dict[str, ir.Operation], by_name: dict[str, str]) -> None:
        decls = []
        for name, kernel in kernels.items():
            params, results = _signature(kernel)
            decls.append(f"func.func private @{name}({', '.join(params)}) -> ({', '.join(results)})")
        text = "\n".join(decls + [t.replace("@__FUSED__", f"@{n}", 1) for n, t in by_name.items()])
        parsed = ir.Module.parse(text, module.context)
        body = module.regions[0].blocks[0]
        for f in list(parsed.body.operations):
            if ir.StringAttr(f.attributes["sym_name"]).value in by_name:
                body.append(f.operation)


MATMUL_LIKE = ("linalg.matmul", "linalg.batch_matmul", "linalg.conv_")


def _matmuls(f: ir.Operation) -> int:
    n = 0

    def visit(op: ir.Operation) -> ir.WalkResult:
        nonlocal n
        n += op.name.startswith(MATMUL_LIKE)
        return ir.WalkResult.ADVANCE

    f.walk(visit)
    return n


def _fuse_loops(f: ir.Operation, pm: passmanager.PassManager) -> ir.Operation:
    """``f`` with its elementwise loops fused, unless that rewrote a named matmul into a generic.

    linalg-fuse-elementwise-ops also propagates reshapes through linalg ops, which turns
    ``collapse_shape -> batch_matmul -> expand_shape`` into a 5-loop linalg.generic that
    relax-schedule-kernels no longer recognizes (3x slower attention): then keep ``f`` unfused.
    """
    trial = f.clone(ip=ir.InsertionPoint(f))
    pm.run(trial)
    if _matmuls(trial) == _matmuls(f):
        f.erase()
        return trial
    trial.erase()
    return f


def _forward_copies(f: ir.Operation) -> None:
    """Read the source of a ``linalg.copy`` into a ``tensor.empty`` (a member's copy into what became an
    intermediate: a reshape's) where linalg ops only read the copy: the copy of the whole tensor, and its
    buffer, are dropped (``reshape`` then ``permute_dims``, packing a weight, made a copy of it first)."""
    copies: list[ir.Operation] = []

    def visit(op: ir.Operation) -> ir.WalkResult:
        if op.name == "linalg.copy" and len(op.results) == 1:
            copies.append(op)
        return ir.WalkResult.ADVANCE

    f.walk(visit)
    for copy in copies:
        source, init = copy.operands[0], copy.operands[1]
        owner = init.owner
        if source.type != init.type or not isinstance(owner, (ir.Operation, ir.OpView)):
            continue
        if owner.operation.name != "tensor.empty":
            continue
        uses = list(copy.results[0].uses)
        if uses and all(_reads(u.owner, u.operand_number) for u in uses):
            copy.results[0].replace_all_uses_with(source)


def _reads(op: ir.Operation, index: int) -> bool:
    """Whether operand ``index`` of ``op`` is an input of a linalg op (read, never written)."""
    op = op.operation
    return (
        op.name.startswith("linalg.") and len(op.results) > 0 and index < len(op.operands) - len(op.results)
    )


def _safe_to_fuse_loops(f: ir.Operation) -> bool:
    """False when an all-parallel linalg.generic reads its destination (an in-place update).

    linalg-fuse-elementwise-ops keeps such a producer's result as an extra output of the consumer
    with a projected map: in the consumer's larger loop nest it then reads back what it wrote
    (layer_norm's ``var / n`` then ``rsqrt`` on one buffer gave wrong numbers).
    """
    safe = True

    def visit(op: ir.Operation) -> ir.WalkResult:
        nonlocal safe
        if op.name != "linalg.generic" or "reduction" in str(op.attributes["iterator_types"]):
            return ir.WalkResult.ADVANCE
        args = list(op.regions[0].blocks[0].arguments)
        if any(len(list(a.uses)) for a in args[len(args) - len(op.results) :]):
            safe = False
            return ir.WalkResult.INTERRUPT
        return ir.WalkResult.ADVANCE

    f.walk(visit)
    return safe


# op -> the operand its result is written into (insert_slice's dest) or a view of (a reshape's source)
_TIED = {
    "tensor.collapse_shape": 0,
    "tensor.expand_shape": 0,
    "tensor.reshape": 0,
    "tensor.cast": 0,
    "tensor.insert_slice": 1,
}


def _tied_init(v: ir.Value) -> tuple[ir.Operation, int] | None:
    """The op that produced ``v`` and the index of the destination operand tied to it: a linalg op or
    ``scf.forall`` (its shared outputs; both have their destinations last, one per result), an
    ``insert_slice`` (its dest) or a reshape view (its source)."""
    owner = v.owner
    if not isinstance(owner, (ir.Operation, ir.OpView)):
        return None
    op = owner.operation
    if op.name in _TIED:
        return op, _TIED[op.name]
    if not (op.name.startswith("linalg.") or op.name == "scf.forall") or not len(op.results):
        return None
    r = ir.OpResult(v).result_number
    return op, len(op.operands) - len(op.results) + r


def pin_results(f: ir.Operation) -> None:
    """Make each result be written into its destination argument (the host relies on it).

    linalg-fuse-elementwise-ops replaces unread destinations by ``tensor.empty``: follow each
    result's chain of destinations back to that ``tensor.empty`` and put the argument back; when
    the chain does not end there, copy the result into the argument.
    """
    block = f.regions[0].blocks[0]
    ret = block.operations[len(block.operations) - 1].operation
    n_out = len(ret.operands)
    out_args = list(block.arguments)[len(block.arguments) - n_out :]
    for i, arg in enumerate(out_args):
        v = ret.operands[i]
        tied = _tied_init(v)
        while tied is not None:
            op, index = tied
            init = op.operands[index]
            if init == arg:
                break
            if (
                isinstance(init.owner, (ir.Operation, ir.OpView))
                and init.owner.operation.name == "tensor.empty"
            ):
                if init.type == arg.type:
                    op.operands[index] = arg
                    break
                tied = None
                break
            tied = _tied_init(init)
        if tied is not None or v == arg:
            continue
        with ir.InsertionPoint(ret), ret.location:
            copied = ir.Operation.create(
                "linalg.copy",
                results=[arg.type],
                operands=[v, arg],
                attributes={"operandSegmentSizes": ir.DenseI32ArrayAttr.get([1, 1])},
                regions=1,
            )
            blk = copied.regions[0].blocks.append(
                ir.RankedTensorType(arg.type).element_type, ir.RankedTensorType(arg.type).element_type
            )
            with ir.InsertionPoint(blk):
                ir.Operation.create("linalg.yield", operands=[blk.arguments[0]])
        ret.operands[i] = copied.results[0]


def _is_relax(f: ir.Operation) -> bool:
    ft = ir.FunctionType(ir.TypeAttr(f.attributes["function_type"]).value)
    return any(str(t).startswith("!relax.") for t in (*ft.inputs, *ft.results))


def _relax_blocks(module: ir.Operation) -> list[ir.Block]:
    blocks: list[ir.Block] = []

    def visit(op: ir.Operation) -> ir.WalkResult:
        if op.name in ("func.func", "scf.execute_region"):
            for region in op.regions:
                blocks.extend(region.blocks)
        return ir.WalkResult.ADVANCE

    module.walk(visit, ir.WalkOrder.PRE_ORDER)
    return blocks


def _strip(root: ir.Operation) -> None:
    def visit(op: ir.Operation) -> ir.WalkResult:
        if GROUP_ATTR in op.attributes:
            del op.attributes[GROUP_ATTR]
        return ir.WalkResult.ADVANCE

    root.walk(visit)


def _drop_unused(module: ir.Operation, candidates: set[str]) -> None:
    """Erase member kernels that nothing references any more."""
    used: set[str] = set()

    def visit(op: ir.Operation) -> ir.WalkResult:
        callee = op.attributes["callee"] if "callee" in op.attributes else None
        if isinstance(callee, ir.FlatSymbolRefAttr):  # call_tir, func.call (call_dps_library names a string)
            used.add(callee.value)
        return ir.WalkResult.ADVANCE

    module.walk(visit)
    for op in list(module.regions[0].blocks[0].operations):
        if "sym_name" not in op.attributes:
            continue
        name = ir.StringAttr(op.attributes["sym_name"]).value
        if name in candidates and name not in used:
            op.operation.erase()


def _fresh(base: str, taken: set[str]) -> str:
    i = 0
    while f"{base}_{i}" in taken:
        i += 1
    taken.add(f"{base}_{i}")
    return f"{base}_{i}"

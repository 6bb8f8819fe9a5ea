"""``relax-fuse-ops``: group relax compute ops into fusion groups (``relax.fusion_group = N``).

Each op class says how it fuses (``RelaxOp.FUSION``). As in TVM's operator fusion, a group is

- a chain of elementwise / broadcast / injective ops (creation ops such as ``full`` join freely),
- optionally ending in one reduction that takes those producers (``softmax(add(x, mask))``),
- or one matmul / conv / reduction followed by an elementwise / broadcast epilogue (``gelu(mm + b)``).

Groups are built only over ops that are contiguous in program order, and each op after the first
must use a value of the group (or take no operands). Pure shape ops in between that do not depend on
the group (their class is ``HOISTABLE``: ``constant``, ``shape_of``, ``get_dim``, ``prim_value``...) are
moved above the group so it
becomes contiguous: nothing moves above a definition it uses, and ``match_cast`` (which binds symbols)
always ends a group. ``convert-relax-to-linalg`` copies the attribute onto the ``call_tir`` it creates
and ``relax-fuse-kernels`` merges each group into one kernel. Ops outside every group get no attribute.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from mlir import ir

from relax_mlir.dialects.registry import RelaxOp, op_class
from relax_mlir.dialects.types import TensorType, relax_type
from relax_mlir.transforms.registry import register_pass

GROUP_ATTR = "relax.fusion_group"
PRODUCERS = frozenset({"elementwise", "broadcast", "injective"})
EPILOGUE = frozenset({"elementwise", "broadcast"})
ANCHORS = frozenset({"reduction", "matmul"})


def hoistable(op: ir.Operation) -> bool:
    """A pure op that binds no symbol (``RelaxOp.HOISTABLE``): it may move above a group it does not use."""
    return getattr(op_class(op), "HOISTABLE", RelaxOp.HOISTABLE)


def fusion_kind(op: ir.Operation) -> str:
    """The op's fusion class; ``opaque`` for non-relax ops, ops without lowering, unknown result dims."""
    cls = op_class(op)
    if cls is None or not hasattr(cls, "lower") or len(op.regions):
        return "opaque"
    for r in op.results:
        t = relax_type(r.type)
        if not isinstance(t, TensorType) or t.shape is None or t.dtype is None or None in t.shape:
            return "opaque"
    return cls.FUSION


def _static(op: ir.Operation) -> bool:
    return all(d.is_const for r in op.results for d in relax_type(r.type).shape)  # type: ignore[union-attr]


@dataclass
class _Group:
    members: list[ir.Operation] = field(default_factory=list)
    values: set[ir.Value] = field(default_factory=set)
    anchor: str | None = None
    hoist: list[ir.Operation] = field(default_factory=list)  # pure ops to move above the group
    pending: list[ir.Operation] = field(default_factory=list)  # skipped since the last member

    def add(self, op: ir.Operation, kind: str) -> None:
        self.members.append(op)
        self.values.update(op.results)
        if kind in ANCHORS:
            self.anchor = kind
        self.hoist += self.pending
        self.pending = []

    def accepts(self, op: ir.Operation, kind: str) -> bool:
        if len(op.operands) and not any(v in self.values for v in op.operands):
            return False
        if kind in EPILOGUE:
            # relax-schedule-kernels vectorizes every static op of a matmul kernel whole (vector<33x24>,
            # math.erf on vectors that cannot lower): only dynamic epilogues join a matmul.
            return self.anchor != "matmul" or not _static(op)
        if kind == "injective":
            return self.anchor is None
        return kind == "reduction" and self.anchor is None


def fusion_groups(block: ir.Block) -> list[_Group]:
    """The fusion groups (two ops or more) of one block, in program order."""
    groups: list[_Group] = []
    cur: _Group | None = None

    def close() -> None:
        if cur is not None and len(cur.members) > 1:
            groups.append(cur)

    for op in block.operations:
        op = op.operation
        kind = fusion_kind(op)
        if kind != "opaque":
            if cur is not None and cur.accepts(op, kind):
                cur.add(op, kind)
                continue
            close()
            cur = _Group()
            cur.add(op, kind)
            continue
        if cur is not None and hoistable(op) and not any(v in cur.values for v in op.operands):
            cur.pending.append(op)
            continue
        close()
        cur = None
    close()
    return groups


def _blocks(module: ir.Operation) -> list[ir.Block]:
    blocks: list[ir.Block] = []

    def visit(op: ir.Operation) -> ir.WalkResult:
        if op.name == "func.func" or op.name == "scf.execute_region":
            for region in op.regions:
                blocks.extend(region.blocks)
        return ir.WalkResult.ADVANCE

    module.walk(visit, ir.WalkOrder.PRE_ORDER)
    return blocks


@register_pass("relax-fuse-ops")
class FuseOps:
    """Group contiguous fusable relax ops (TVM's rules) and mark each with relax.fusion_group."""

    def run(self, module: ir.Operation) -> None:
        blocks = _blocks(module)
        for block in blocks:
            for op in block.operations:
                if GROUP_ATTR in op.operation.attributes:
                    del op.operation.attributes[GROUP_ATTR]
        i64 = ir.IntegerType.get_signless(64, module.context)
        n = 0
        for block in blocks:
            for group in fusion_groups(block):
                for op in group.hoist:
                    op.move_before(group.members[0])
                for op in group.members:
                    op.attributes[GROUP_ATTR] = ir.IntegerAttr.get(i64, n)
                n += 1

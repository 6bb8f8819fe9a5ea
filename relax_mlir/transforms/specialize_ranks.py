"""``relax-specialize-ranks``: one entry point per rank for a public function with parameters of unknown rank.

Compiled code takes tensors of a known rank (a memref descriptor has one size and stride per dim), so a
public relax function with a tensor parameter of unknown rank (``!relax.tensor<"*", f32>``) is replaced by
variants ``@f__r<k>`` (``@f__r<k>_<m>`` for two such parameters...), one per rank in ``0..max-rank``, where
each such parameter gets that rank, with a fresh symbol per dim (``x_d0``, ``x_d1``...). Each variant is
re-deduced: a variant that does not type-check (a ``match_cast`` to another rank, an op that needs more
dims) or that still holds a value of unknown rank is dropped; the others are the ranks the function
supports. At run time the executable dispatches a call of ``@f`` on the ranks of its arguments
(``runtime/executable.RankDispatch``) and raises InputError for a rank without a variant. Every variant's
signature names ``@f`` and its ranks (``relax.rank_variant``). With several unknown-rank parameters and more
than ``MAX_VARIANTS`` combinations, only the combinations where all of them have the same rank are made.
"""

from __future__ import annotations

import itertools
import json
import re

from mlir import ir

from relax_mlir.dialects.types import TensorType, TupleType, relax_type, to_mlir
from relax_mlir.errors import RelaxError, ShapeError
from relax_mlir.shape_infer.expr import sym
from relax_mlir.transforms.infer_shapes import _Inference
from relax_mlir.transforms.registry import PassFailed, register_pass
from relax_mlir.transforms.relax_ir import functions
from relax_mlir.transforms.well_formed import param_names

RANK_VARIANT_ATTR = "relax.rank_variant"  # JSON {"of": "f", "params": [i...], "ranks": [k...]} on a variant
MAX_RANK = 4  # the default: ranks 0..4 get a variant
MAX_VARIANTS = 25


def _name(f: ir.Operation) -> str:
    return ir.StringAttr(f.attributes["sym_name"]).value


def _is_private(f: ir.Operation) -> bool:
    return (
        "sym_visibility" in f.attributes and ir.StringAttr(f.attributes["sym_visibility"]).value == "private"
    )


def _unknown_rank_params(f: ir.Operation) -> list[int]:
    ftype = ir.FunctionType(ir.TypeAttr(f.attributes["function_type"]).value)
    out = []
    for i, t in enumerate(ftype.inputs):
        rt = relax_type(t)
        if isinstance(rt, TensorType) and rt.shape is None:
            out.append(i)
    return out


def _symbol_prefix(name: str, index: int) -> str:
    return name if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name) else f"arg{index}"


def _has_unknown_rank(t: object) -> bool:
    if isinstance(t, TensorType):
        return t.shape is None
    if isinstance(t, TupleType):
        return any(_has_unknown_rank(x) for x in t.fields)
    return False


class _VariantInference(_Inference):
    """Shape inference that records, instead of reporting, the first error in each function."""

    def __init__(self, module: ir.Operation) -> None:
        super().__init__(module)
        self.errors: dict[str, str] = {}

    def visit_function(self, name: str) -> bool:
        try:
            return super().visit_function(name)
        except RelaxError as e:  # e.g. an op's deduction refusing this rank with another error
            self.errors.setdefault(name, str(e))
            return False

    def error(self, op: ir.Operation, e: ShapeError) -> None:
        parent = op
        while parent is not None and parent.name != "func.func":
            parent = parent.parent
        if parent is not None:
            self.errors.setdefault(_name(parent), f"'{op.name}' op {e}")


def _leftover_unknown_rank(f: ir.Operation) -> str | None:
    """A description of the first op result of ``f`` still of unknown rank, else None."""
    found: list[str] = []

    def visit(op: ir.Operation) -> ir.WalkResult:
        for r in op.results:
            if _has_unknown_rank(relax_type(r.type)):
                found.append(f"'{op.name}' op result {r.type} still has an unknown rank")
                return ir.WalkResult.INTERRUPT
        return ir.WalkResult.ADVANCE

    f.walk(visit, ir.WalkOrder.PRE_ORDER)
    return found[0] if found else None


@register_pass("relax-specialize-ranks")
class SpecializeRanksPass:
    """Replace a public function with unknown-rank tensor parameters by one variant per supported rank."""

    max_rank: int = MAX_RANK

    def run(self, module: ir.Operation) -> None:
        targets = [f for f in functions(module) if not _is_private(f) and _unknown_rank_params(f)]
        if not targets:
            return
        variants: dict[str, list[tuple[ir.Operation, dict]]] = {}
        for f in targets:
            name = _name(f)
            self._check_not_called(module, name)
            params = _unknown_rank_params(f)
            ranks = range(self.max_rank + 1)
            combos = list(itertools.product(ranks, repeat=len(params)))
            if len(combos) > MAX_VARIANTS:
                combos = [(k,) * len(params) for k in ranks]
            names = param_names(f)
            for combo in combos:
                clone = f.clone(ip=ir.InsertionPoint(f))
                suffix = "_".join(str(k) for k in combo)
                clone.attributes["sym_name"] = ir.StringAttr.get(f"{name}__r{suffix}")
                ftype = ir.FunctionType(ir.TypeAttr(clone.attributes["function_type"]).value)
                inputs = list(ftype.inputs)
                args = clone.regions[0].blocks[0].arguments
                for i, k in zip(params, combo):
                    t = relax_type(inputs[i])
                    prefix = _symbol_prefix(names[i], i)
                    ranked = to_mlir(TensorType(tuple(sym(f"{prefix}_d{a}") for a in range(k)), t.dtype))
                    inputs[i] = ranked
                    args[i].set_type(ranked)
                clone.attributes["function_type"] = ir.TypeAttr.get(
                    ir.FunctionType.get(inputs, list(ftype.results))
                )
                info = {"of": name, "params": params, "ranks": list(combo)}
                clone.attributes[RANK_VARIANT_ATTR] = ir.StringAttr.get(json.dumps(info))
                variants.setdefault(name, []).append((clone, info))
        inference = _VariantInference(module)
        inference.run()
        for f in targets:
            name = _name(f)
            kept, reasons = [], []
            for clone, info in variants[name]:
                reason = inference.errors.get(_name(clone)) or _leftover_unknown_rank(clone)
                if reason is None:
                    kept.append(clone)
                else:
                    reasons.append(f"rank {', '.join(map(str, info['ranks']))}: {reason}")
                    clone.erase()
            if not kept:
                f.location.emit_error(
                    f"@{name} has parameters of unknown rank, but no rank in 0..{self.max_rank} type-checks "
                    f"({reasons[0]})"
                )
                raise PassFailed(f"@{name}: no rank of its unknown-rank parameters type-checks")
            f.erase()

    @staticmethod
    def _check_not_called(module: ir.Operation, name: str) -> None:
        """A function called by another cannot be replaced by variants (its callers name it)."""
        calls: list[ir.Operation] = []

        def visit(op: ir.Operation) -> ir.WalkResult:
            if "callee" not in op.attributes:
                return ir.WalkResult.ADVANCE
            callee = op.attributes["callee"]  # a string names an external (packed) function, not a relax one
            if isinstance(callee, ir.FlatSymbolRefAttr) and callee.value == name:
                calls.append(op)
            return ir.WalkResult.ADVANCE

        module.walk(visit, ir.WalkOrder.PRE_ORDER)
        if calls:
            message = (
                f"@{name} has parameters of unknown rank and is called by another function: make it private, "
                "or give its parameters a rank"
            )
            calls[0].location.emit_error(message)
            raise PassFailed(message)

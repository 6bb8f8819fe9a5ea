"""Run-time lists: sequences whose length is known only at run time, as a packed pair of tensors.

A list of tensors of one dtype and rank ``r`` is the tuple ``(data, shapes)``: ``data`` is 1-D and holds
the items' elements back to back, ``shapes`` is ``i64 [length, r]`` with one row per item. The type
``!relax.tuple<[!relax.tensor<["size"], f32>, !relax.tensor<["len", 2], i64>]>`` deduces the element
type (dtype and rank; each item's dims are read at run time). A function marks which parameters and
results are lists (``relax.list_params`` / ``relax.list_results``, indices), so that callers pass and
get a Python list of arrays.
"""

from __future__ import annotations

from collections.abc import Sequence

from mlir import ir

from relax_mlir.dialects.types import RelaxType, TensorType, TupleType
from relax_mlir.shape_infer.expr import Expr, const

LIST_PARAMS_ATTR = "relax.list_params"
LIST_RESULTS_ATTR = "relax.list_results"


def list_type(dtype: str, rank: int | Expr | None, size: Expr | None, length: Expr | None) -> TupleType:
    """The packed type of a list of ``rank``-D items of ``dtype`` (a symbol or None: rank unknown)."""
    width = const(rank) if isinstance(rank, int) else rank
    return TupleType((TensorType((size,), dtype), TensorType((length, width), "i64")))


def list_element(t: RelaxType | None) -> tuple[str, int | None] | None:
    """``(dtype, rank)`` of a packed list type (rank None: unknown), or None when ``t`` is not one."""
    if not isinstance(t, TupleType) or len(t.fields) != 2:
        return None
    data, shapes = t.fields
    if not (isinstance(data, TensorType) and isinstance(shapes, TensorType)):
        return None
    if data.shape is None or len(data.shape) != 1 or shapes.shape is None or len(shapes.shape) != 2:
        return None
    rank = shapes.shape[1]
    if shapes.dtype != "i64" or data.dtype is None:
        return None
    return data.dtype, rank.value if rank is not None and rank.is_const else None


def mark_lists(module: ir.Module, name: str, params: Sequence[int], results: Sequence[int]) -> None:
    """Mark parameters and results of function ``@name`` as lists (nothing to mark: no attribute)."""
    func = next(
        op
        for op in module.body.operations
        if "sym_name" in op.attributes and ir.StringAttr(op.attributes["sym_name"]).value == name
    )
    with module.context:
        i64 = ir.IntegerType.get_signless(64)
        for attr, indices in ((LIST_PARAMS_ATTR, params), (LIST_RESULTS_ATTR, results)):
            if indices:
                func.attributes[attr] = ir.ArrayAttr.get([ir.IntegerAttr.get(i64, i) for i in indices])


def marked_lists(func: ir.Operation, attr: str) -> set[int]:
    """The indices function ``func`` marks with ``attr`` (LIST_PARAMS_ATTR or LIST_RESULTS_ATTR)."""
    if attr not in func.attributes:
        return set()
    return {ir.IntegerAttr(a).value for a in ir.ArrayAttr(func.attributes[attr])}

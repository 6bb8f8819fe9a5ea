"""``from_torch``: export a module with ``torch.export`` and import it, keeping the user's ``Dim`` names."""

from __future__ import annotations

import inspect
from collections.abc import Mapping, Sequence
from typing import Any

import torch
from mlir import ir
from torch.export import Dim

from relax_mlir.frontend.torch.importer import TorchImportError, from_exported_program


def _root(dim: Any) -> Any:
    while hasattr(dim, "root"):  # a derived dim (2 * seq): its root Dim names the symbol
        dim = dim.root
    return dim


def _axis_specs(spec: Any) -> list[tuple[int, Any]]:
    if isinstance(spec, Mapping):
        return list(spec.items())
    if isinstance(spec, (list, tuple)):
        return list(enumerate(spec))
    return []


def dim_names(
    ep: torch.export.ExportedProgram, arg_names: Sequence[str], dynamic_shapes: Any
) -> dict[str, str]:
    """torch's symbol (``s17``) -> the user's ``Dim`` name (``batch``), from the spec given to export."""
    if dynamic_shapes is None:
        return {}
    if isinstance(dynamic_shapes, Mapping):
        specs = [dynamic_shapes.get(n) for n in arg_names]
    else:
        specs = list(dynamic_shapes)
    placeholders = {n.name: n for n in ep.graph.nodes if n.op == "placeholder"}
    users = [placeholders[s.arg.name] for s in ep.graph_signature.input_specs if s.kind.name == "USER_INPUT"]
    names: dict[str, str] = {}
    for node, spec in zip(users, specs):
        val = node.meta.get("val")
        if not isinstance(val, torch.Tensor):
            continue
        for axis, dim in _axis_specs(spec):
            root = _root(dim)
            if not isinstance(root, Dim) or not 0 <= axis < val.dim():
                continue
            size = val.shape[axis]
            if isinstance(size, torch.SymInt):
                free = size.node.expr.free_symbols
                if len(free) == 1:
                    names.setdefault(next(iter(free)).name, root.__name__)
    return names


def from_torch(
    model: torch.nn.Module,
    example_args: Sequence[Any],
    dynamic_shapes: Any = None,
    *,
    params_as: str = "constants",
    strict: bool = False,
) -> ir.Module:
    """``torch.export.export(model, example_args, dynamic_shapes=...)`` imported as a relax module whose
    symbols are named after the ``Dim``s of ``dynamic_shapes`` (see ``from_exported_program``)."""
    if not isinstance(model, torch.nn.Module):
        raise TorchImportError(f"from_torch expects a torch.nn.Module, got {type(model).__name__}")
    args = tuple(example_args)
    ep = torch.export.export(model, args, dynamic_shapes=dynamic_shapes, strict=strict)
    try:
        arg_names = list(inspect.signature(model.forward).bind(*args).arguments)
    except TypeError:
        arg_names = []
    return from_exported_program(ep, params_as=params_as, dim_names=dim_names(ep, arg_names, dynamic_shapes))

"""Walk a ``torch.export`` ExportedProgram and build a relax function ``@main`` with the builder.

Symbolic sizes keep their symbols: torch's ``s0``-style symbols (renamed after the user's ``Dim``s when
``from_torch`` had the spec), derived dims (``2*s0``) as expressions, finite upper bounds of the range
constraints as ``relax.upper_bounds``. The guards torch recorded (lower bounds of the range constraints,
``_assert_scalar`` nodes) become run-time checks: a ``match_cast`` that raises InputError when violated.
Parameters and buffers become constants, or function parameters with ``params_as="parameters"``.
"""

from __future__ import annotations

import importlib
import pkgutil
import re
from collections.abc import Mapping
from typing import Any

import numpy as np
import torch
from mlir import ir
from torch.export import ExportedProgram
from torch.export.graph_signature import InputKind, OutputKind

import relax_mlir.builder as rb
from relax_mlir.dialects import relax as R
from relax_mlir.dialects.registry import default_location
from relax_mlir.dialects.types import ShapeType, TensorType, relax_type
from relax_mlir.errors import RelaxError, UnsupportedOpError
from relax_mlir.frontend.onnx.importer import symbol_name
from relax_mlir.frontend.torch import ops as _ops
from relax_mlir.frontend.torch.registry import (
    NodeContext,
    find_converter,
    relax_dtype,
    target_name,
)
from relax_mlir.frontend.torch.symbols import check_of, guard_checks, spelled, to_expr
from relax_mlir.shape_infer.expr import Expr, const, floordiv, format_dim, smax, sym

# ops that only assert what the relax types already say, or have no effect on values
_IGNORED = {
    "aten._assert_tensor_metadata.default",
    "aten.sym_constrain_range_for_size.default",
    "aten.sym_constrain_range.default",
    "aten._assert_async.msg",
}
_ASSERTS = {"aten._assert_scalar.default"}


class TorchImportError(RelaxError):
    """A program that cannot be imported: names the node, its ATen op and the Python line torch recorded."""


def _load_converters() -> None:
    for info in pkgutil.iter_modules(_ops.__path__):
        importlib.import_module(f"{_ops.__name__}.{info.name}")


def source_line(node: torch.fx.Node) -> str:
    """``file:line: code`` of the innermost user frame torch recorded for ``node`` (or '')."""
    trace = node.meta.get("stack_trace") or ""
    frames = re.findall(r'File "([^"]+)", line (\d+), in \S+\n\s*(.*)', trace)
    if not frames:
        return ""
    file, line, code = frames[-1]
    return f"{file}:{line}: {code.strip()}"


def _location(node: torch.fx.Node, context: ir.Context) -> ir.Location:
    trace = node.meta.get("stack_trace") or ""
    frames = re.findall(r'File "([^"]+)", line (\d+)', trace)
    if frames:
        return ir.Location.file(frames[-1][0], int(frames[-1][1]), 0, context=context)
    return ir.Location.name(node.name, context=context)


def _is_supported(node: torch.fx.Node) -> bool:
    if node.op != "call_function":
        return True
    name = target_name(node.target)
    if name in _IGNORED or name in _ASSERTS or name == "operator.getitem":
        return True
    if isinstance(node.meta.get("val"), (torch.SymInt, torch.SymBool, torch.SymFloat, int, bool, float)):
        return True  # a size computation: taken from the symbolic value torch recorded
    return find_converter(node.target) is not None


def unsupported_nodes(ep: ExportedProgram) -> list[torch.fx.Node]:
    _load_converters()
    return [n for n in ep.graph.nodes if not _is_supported(n)]


def _is_mutating(node: torch.fx.Node) -> bool:
    schema = getattr(node.target, "_schema", None)
    return node.op == "call_function" and schema is not None and schema.is_mutable


def _functionalize(ep: ExportedProgram) -> ExportedProgram:
    """The program without in-place ops on intermediates (``x[:, a:b] = y`` becomes ``slice_scatter``):
    torch's inference IR, with no op decomposed (an empty decomposition table)."""
    if any(_is_mutating(n) for n in ep.graph.nodes):
        ep = ep.run_decompositions({})
    return ep


def _decompose_unsupported(ep: ExportedProgram) -> ExportedProgram:
    """Decompose (with torch's core-ATen table) only the ops that have no converter, until none is left
    or none of those left has a decomposition."""
    for _ in range(4):
        missing = {n.target for n in unsupported_nodes(ep)}
        if not missing:
            return ep
        table = torch.export.default_decompositions()
        chosen = {op: table[op] for op in missing if op in table}
        if not chosen:
            return ep
        ep = ep.run_decompositions(chosen)
    return ep


def _raise_unsupported(nodes: list[torch.fx.Node]) -> None:
    lines = []
    for n in nodes:
        where = source_line(n)
        lines.append(f"  {target_name(n.target)} (node '{n.name}')" + (f" at {where}" if where else ""))
    raise UnsupportedOpError(
        f"the program uses {len(nodes)} node(s) of unsupported ATen ops:\n" + "\n".join(lines)
    )


def from_exported_program(
    ep: ExportedProgram,
    *,
    params_as: str = "constants",
    dim_names: Mapping[str, str] | None = None,
) -> ir.Module:
    """Import a ``torch.export`` program as a relax module with one function ``@main``.

    Its parameters are the program's user inputs, then (``params_as="parameters"``) its parameters and
    buffers, named after their state-dict keys; with ``params_as="constants"`` (the default) those are
    constants in the module. ``dim_names`` renames torch's symbols (``{"s17": "batch"}``).
    """
    if not isinstance(ep, ExportedProgram):
        raise TorchImportError(
            f"from_exported_program expects a torch.export.ExportedProgram, got {type(ep)}"
        )
    if params_as not in ("constants", "parameters"):
        raise TorchImportError(f"params_as must be 'constants' or 'parameters', got {params_as!r}")
    _load_converters()
    ep = _decompose_unsupported(_functionalize(ep))
    missing = unsupported_nodes(ep)
    if missing:
        _raise_unsupported(missing)
    return _Importer(ep, params_as, dict(dim_names or {})).run()


class _Importer:
    def __init__(self, ep: ExportedProgram, params_as: str, names: dict[str, str]) -> None:
        self.ep = ep
        self.params_as = params_as
        self.names = {k: symbol_name(v) for k, v in names.items()}
        self.bb = rb.BlockBuilder()
        self.env: dict[torch.fx.Node, Any] = {}
        self.fresh_dims: dict[str, Expr] = {}  # parameter symbol -> the derived dim it stands for

    # -- inputs ----------------------------------------------------------------------------------------
    def _weight(self, spec: Any) -> torch.Tensor:
        target = spec.target
        if target in self.ep.state_dict:
            return self.ep.state_dict[target]
        if target in self.ep.constants:
            return self.ep.constants[target]
        raise TorchImportError(
            f"the value of {spec.kind.name.lower()} '{target}' is missing from the program"
        )

    def _placeholders(self) -> dict[str, torch.fx.Node]:
        return {n.name: n for n in self.ep.graph.nodes if n.op == "placeholder"}

    def _input_type(self, node: torch.fx.Node, what: str) -> TensorType:
        val = node.meta.get("val")
        if not isinstance(val, torch.Tensor):
            raise TorchImportError(f"{what} is a {type(val).__name__}; only tensor inputs are supported")
        dims = [const(d) if isinstance(d, int) else to_expr(d.node.expr, self.names) for d in val.shape]
        return TensorType(tuple(dims), relax_dtype(val.dtype))

    def run(self) -> ir.Module:
        placeholders = self._placeholders()
        user: list[tuple[str, torch.fx.Node, TensorType]] = []
        weights: list[tuple[str, torch.fx.Node, torch.Tensor, bool]] = []
        for spec in self.ep.graph_signature.input_specs:
            node = placeholders[spec.arg.name]
            if spec.kind == InputKind.USER_INPUT:
                user.append((node.name, node, self._input_type(node, f"input '{node.name}'")))
            elif spec.kind in (InputKind.PARAMETER, InputKind.BUFFER, InputKind.CONSTANT_TENSOR):
                as_param = self.params_as == "parameters" and spec.kind != InputKind.CONSTANT_TENSOR
                weights.append((spec.target, node, self._weight(spec), as_param))
            else:
                raise TorchImportError(f"input '{node.name}' of kind {spec.kind.name} is not supported")
        params: dict[str, TensorType] = {}
        bare = {str(d) for _, _, t in user for d in t.shape if not d.is_const and d.free_symbols == {str(d)}}
        derived: list[tuple[int, TensorType]] = []  # inputs whose dims define no symbol of theirs
        for i, (name, _node, t) in enumerate(user):
            shape = list(t.shape)
            if any(not d.free_symbols <= bare for d in shape):
                shape = [self._fresh_dim(name, a, d, bare) for a, d in enumerate(shape)]
                derived.append((i, t))
            params[name] = TensorType(tuple(shape), t.dtype)
        for target, _, value, as_param in weights:
            if as_param:
                params[target] = TensorType(tuple(const(d) for d in value.shape), relax_dtype(value.dtype))
        bounds = self._upper_bounds(params)
        with self.bb.function("main", params, upper_bounds=bounds) as args:
            with self.bb.dataflow():
                values = dict(zip(params, args))
                for name, node, _ in user:
                    self.env[node] = values[name]
                for i, t in derived:
                    self.env[user[i][1]] = self._derive(values[user[i][0]], user[i][0], t, bare)
                self._range_checks(bare)
                self._guard_code_checks({name: t.shape for name, _, t in user})
                for node in self.ep.graph.nodes:  # guards on the inputs' symbols: checked before any kernel
                    if node.op == "call_function" and target_name(node.target) in _ASSERTS:
                        self._assert(node)
                for target, node, value, as_param in weights:
                    self.env[node] = values[target] if as_param else self._constant(target, value)
                outputs = self._convert_graph()
                outs = [self.bb.emit_output(o) for o in outputs]
            self.bb.ret(*outs)
        return self.bb.module

    def _fresh_dim(self, name: str, axis: int, d: Expr, bare: set[str]) -> Expr:
        """The parameter dim of a derived dim (``8*seq``) whose symbols appear bare nowhere: a new symbol,
        from which ``_derive`` recovers the root symbol."""
        if d.is_const or d.free_symbols <= bare:
            return d
        fresh = symbol_name(f"{name}_d{axis}")
        self.fresh_dims[fresh] = d
        return sym(fresh)

    def _derive(self, x: ir.Value, name: str, t: TensorType, bare: set[str]) -> ir.Value:
        """Bind the root symbols of ``t``'s derived dims (``a*s + c`` gives ``s = (dim - c) floordiv a``),
        then check every dim at run time by a match_cast to ``t``."""
        for axis, d in enumerate(t.shape):
            if d.free_symbols <= bare:
                continue
            if len(d.free_symbols) != 1:
                raise TorchImportError(
                    f"input '{name}' dim {axis} is {format_dim(d)}: no symbol can be solved for"
                )
            (s,) = d.free_symbols
            c = d.subs({s: 0})
            a = d.subs({s: 1}) - c
            if not a.is_const or not c.is_const or d != a * sym(s) + c or a.value <= 0:
                raise TorchImportError(f"input '{name}' dim {axis} is {format_dim(d)}: not linear in {s}")
            root = floordiv(sym(symbol_name(f"{name}_d{axis}")) - c, a)
            R.match_cast(R.make_shape([R.prim_value(format_dim(root))]), ShapeType((sym(s),)))
            bare.add(s)
        loc = ir.Location.file(f"input '{name}' (torch.export shape {t})", 0, 0, context=self.bb.context)
        return R.match_cast(x, t, loc=loc)

    def _range_constraints(self) -> list[tuple[str, Any]]:
        out = []
        for key, vr in self.ep.range_constraints.items():
            if getattr(key, "is_Symbol", False):
                out.append((key.name, vr))
        return out

    def _upper_bounds(self, params: Mapping[str, TensorType]) -> dict[str, int]:
        """The finite upper bounds of the range constraints, for the symbols of the parameter types; a derived
        dim's parameter symbol (``x_d1`` for ``8 * seq``) gets its expression's bound."""
        used = {s for t in params.values() for d in t.shape for s in d.free_symbols}
        bounds = {}
        for name, vr in self._range_constraints():
            upper = vr.upper
            if getattr(upper, "is_finite", False) and upper.is_Integer and int(upper) < 2**62:
                bounds[self.names.get(name, name)] = int(upper)
        for fresh, d in self.fresh_dims.items():
            if d.free_symbols <= set(bounds) and (ub := d.upper_bound(bounds)) is not None:
                bounds[fresh] = ub
        return {k: v for k, v in bounds.items() if k in used}

    def _range_checks(self, bound: set[str]) -> None:
        """A run-time check of each symbol's lower bound above 0 (torch's own guards, e.g. ``s0 >= 2``)."""
        for name, vr in self._range_constraints():
            user = self.names.get(name, name)
            lower = vr.lower
            if user in bound and getattr(lower, "is_Integer", False) and int(lower) > 0:
                self._check(sym(user), smax(sym(user), int(lower)), f"{user} >= {int(lower)}")

    def _guard_code_checks(self, input_dims: Mapping[str, Any]) -> None:
        """Run-time checks of the guards torch kept as Python source (``_guards_code``: ``torch._check``s and
        what tracing assumed, e.g. ``L['x'].size()[1] % 4 == 0``), where they are over the input dims."""
        for code in getattr(self.ep, "_guards_code", None) or []:
            text = re.sub(r"L\['(\w+)'\]\.size\(\)\[(\d+)\]", lambda m: f"{m[1]}.shape[{m[2]}]", code)
            for actual, expected in guard_checks(code, input_dims):
                self._check(actual, expected, text)

    def _check(self, actual: Expr, expected: Expr, text: str, node: torch.fx.Node | None = None) -> None:
        """A run-time check that ``actual == expected``; its InputError names guard ``text``."""
        where = f"torch.export guard {text}"
        if node is not None and source_line(node):
            where += f" from {source_line(node).split(': ', 1)[0]}"
        loc = ir.Location.file(where, 0, 0, context=self.bb.context)
        shape = R.make_shape([R.prim_value(format_dim(actual))], loc=loc)
        R.match_cast(shape, ShapeType((expected,)), loc=loc)

    def _constant(self, target: str, value: torch.Tensor) -> ir.Value:
        array = value.detach().cpu()
        if array.dtype == torch.bfloat16:
            import ml_dtypes  # noqa: PLC0415

            data = array.view(torch.int16).numpy().view(ml_dtypes.bfloat16)
        else:
            data = array.numpy()
        return R.constant(np.ascontiguousarray(data), name=target)

    # -- nodes -----------------------------------------------------------------------------------------
    def _convert_graph(self) -> list[ir.Value]:
        outputs: list[ir.Value] = []
        for node in self.ep.graph.nodes:
            if node.op == "placeholder":
                continue
            if node.op == "output":
                outputs = self._outputs(node)
                continue
            if node.op != "call_function":
                raise TorchImportError(f"node '{node.name}': {node.op} nodes are not supported")
            self.env[node] = self._convert(node)
        return outputs

    def _outputs(self, node: torch.fx.Node) -> list[ir.Value]:
        results = list(node.args[0]) if isinstance(node.args[0], (list, tuple)) else [node.args[0]]
        specs = self.ep.graph_signature.output_specs
        out = []
        for spec, r in zip(specs, results):
            if spec.kind != OutputKind.USER_OUTPUT:
                raise TorchImportError(
                    f"output '{spec.arg.name}' is a {spec.kind.name.lower()}: programs that mutate their inputs "
                    "or buffers are not supported"
                )
            v = self.env.get(r) if isinstance(r, torch.fx.Node) else r
            if not isinstance(v, ir.Value):
                raise TorchImportError(f"output '{spec.arg.name}' is not a tensor ({type(v).__name__})")
            out.append(v)
        return out

    def _convert(self, node: torch.fx.Node) -> Any:
        name = target_name(node.target)
        val = node.meta.get("val")
        if name in _IGNORED:
            return None
        if name in _ASSERTS:
            return None  # emitted at the entry (run)
        if name == "operator.getitem":
            return self.env[node.args[0]][node.args[1]]
        if isinstance(val, (torch.SymInt, int)) and not isinstance(val, bool):
            return const(val) if isinstance(val, int) else to_expr(val.node.expr, self.names)
        if isinstance(val, (torch.SymBool, torch.SymFloat, bool, float)):
            return val
        converter = find_converter(node.target)
        args = torch.fx.node.map_arg(node.args, self.env.__getitem__)
        kwargs = torch.fx.node.map_arg(node.kwargs, self.env.__getitem__)
        ctx = NodeContext(self, node, list(args), dict(kwargs))
        loc = _location(node, self.bb.context)
        try:
            with self.bb.context, loc, default_location(loc):
                result = converter(ctx)  # type: ignore[misc]
                if isinstance(val, (list, tuple)) and isinstance(result, list):
                    return [self._sync(r, v) for r, v in zip(result, val)]
                return self._sync(result, val)
        except RelaxError as e:
            raise TorchImportError(f"{self._where(node)}: {e}") from None
        except Exception as e:  # a converter bug: still name the node
            raise TorchImportError(f"{self._where(node)}: internal error: {type(e).__name__}: {e}") from e

    def _sync(self, value: Any, val: Any) -> Any:
        """``value`` with the type torch recorded (``val``): cast to its dtype, and reshaped where the deduced
        dims are spelled differently (``min(n, 1)`` for a slice that torch's guards prove is 1). A reshape
        checks the element count without branching; a match_cast's branch in the middle of the body would
        make buffers cross it (DESIGN.md section 6)."""
        if not isinstance(value, ir.Value) or not isinstance(val, torch.Tensor):
            return value
        t = relax_type(value.type)
        dims = tuple(const(d) if isinstance(d, int) else to_expr(d.node.expr, self.names) for d in val.shape)
        dtype = relax_dtype(val.dtype)
        if isinstance(t, TensorType) and t.dtype != dtype:
            value = R.astype(value, dtype)
        if not isinstance(t, TensorType) or t.shape != dims:
            value = R.reshape(value, [d.value if d.is_const else format_dim(d) for d in dims])
        return value

    def _where(self, node: torch.fx.Node) -> str:
        where = source_line(node)
        return f"node '{node.name}' ({target_name(node.target)})" + (f" at {where}" if where else "")

    def _assert(self, node: torch.fx.Node) -> None:
        cond = node.args[0]
        val = cond.meta.get("val") if isinstance(cond, torch.fx.Node) else cond
        expr = val.node.expr if isinstance(val, torch.SymBool) else val
        check = check_of(expr, self.names)
        if check is not None:
            with self.bb.context:
                self._check(*check, spelled(expr, self.names), node)

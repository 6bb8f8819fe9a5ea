"""Walk an ONNX graph and build a relax function ``@main`` with the builder (model-local functions become
private relax functions that ``@main`` calls: ``functions.py``).

Graph inputs keep their symbolic dims: a ``dim_param`` becomes a symbol of that name, an unnamed
dynamic dim a fresh symbol (``<input>_d<axis>``), and ``shape_dict`` overrides either. An input without a
shape (unknown rank) is a ``"*"`` tensor, which the compiler specializes per rank (``relax-specialize-ranks``);
when some node needs its input's rank at import time, the graph is imported once per rank instead
(``@main__r<k>``, ``_import_per_rank``): either way the runtime dispatches a call on its arguments' ranks. Initializers
become constants only where a relax op uses them; shape computations (Shape, Gather, Concat,
arithmetic...) are evaluated symbolically at import time, so the shapes they build stay symbolic.
Control-flow nodes (If, Loop, Scan) build ``scf.if`` / ``scf.while`` with their subgraphs imported into
the regions (``subgraph``); the runs of other nodes between them form dataflow blocks.
"""

from __future__ import annotations

import contextlib
import importlib
import itertools
import json
import os
import pkgutil
from collections import ChainMap
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np
import onnx
from mlir import ir

import relax_mlir.builder as rb
from relax_mlir.dialects import relax as R
from relax_mlir.dialects.lists import list_type, mark_lists
from relax_mlir.dialects.registry import default_location
from relax_mlir.dialects.types import ShapeType, TensorType, TupleType, relax_type
from relax_mlir.errors import RelaxError, UnsupportedOpError
from relax_mlir.frontend.onnx import ops as _ops
from relax_mlir.frontend.onnx.functions import LocalFunctions
from relax_mlir.frontend.onnx.registry import (
    CONTROL_FLOW,
    CONVERTERS,
    RELAX_TO_NUMPY,
    ConversionError,
    Known,
    NodeContext,
    Out,
    Seq,
    SeqList,
    relax_dtype,
    symbol_name,
)
from relax_mlir.frontend.onnx.validate import (
    DEFAULT_DOMAINS,
    all_nodes,
    check_names,
    check_tensor,
    is_onnx_op,
    node_name,
    subgraphs,
    validate_model,
)
from relax_mlir.shape_infer.expr import Expr, const, format_dim, sym
from relax_mlir.transforms.specialize_ranks import MAX_RANK, MAX_VARIANTS, RANK_VARIANT_ATTR
from relax_mlir.transforms.well_formed import param_names

MIN_OPSET = 1


class OnnxImportError(RelaxError):
    """A model that cannot be imported: names the node, its op type and the opset.

    ``constant_input`` names the graph input that would have to be fixed (``constants=``) when that
    is the reason."""

    def __init__(self, message: str, constant_input: str | None = None) -> None:
        super().__init__(message)
        self.constant_input = constant_input


class _NoOutputs(Exception):
    """Ends a dataflow block that has no outputs (its ops stay in the function body)."""


def _used_names(node: onnx.NodeProto) -> set[str]:
    """The values ``node`` reads: its inputs and what its subgraphs take from the outer scope."""
    used = {i for i in node.input if i}
    for g in subgraphs(node):
        inner: set[str] = set()
        defined = {vi.name for vi in g.input} | {t.name for t in g.initializer}
        for n in g.node:
            inner |= _used_names(n) - defined
            defined.update(n.output)
        inner |= {o.name for o in g.output} - defined
        used |= inner
    return used


def _load_converters() -> None:
    for info in pkgutil.iter_modules(_ops.__path__):
        importlib.import_module(f"{_ops.__name__}.{info.name}")


def from_onnx(
    model: onnx.ModelProto | str | os.PathLike,
    shape_dict: Mapping[str, Sequence[int | str]] | None = None,
    constants: Mapping[str, np.ndarray] | None = None,
) -> ir.Module:
    """Import an ONNX model (a ModelProto or a path) as a relax module with a function ``@main`` (and a private
    relax function per model-local function it uses, called with ``relax.call``: ``functions.py``).

    ``shape_dict`` maps input names to shapes (ints and symbol names) that replace the model's; a
    sequence input takes its length (an int) or the shape of each item (a list of shapes).
    ``constants`` fixes graph inputs to values (they stop being parameters), for inputs that decide
    ranks or attributes, such as an ``axes`` input.
    """
    if isinstance(model, (str, os.PathLike)):
        path = Path(model)
        if not path.exists():
            raise OnnxImportError(f"{path}: no such file")
        try:
            model = onnx.load(str(path))
        except Exception as e:  # protobuf's DecodeError and friends
            raise OnnxImportError(f"{path}: not a readable ONNX model ({e})") from None
    if not isinstance(model, onnx.ModelProto):
        raise OnnxImportError(f"from_onnx expects an onnx.ModelProto or a path, got {type(model).__name__}")
    _load_converters()
    try:
        try:
            return _Importer(model, dict(shape_dict or {}), dict(constants or {})).run()
        except (
            OnnxImportError
        ) as e:  # a node that needs its input's rank: import once per rank, if any is unknown
            shapeless = _shapeless_inputs(model, shape_dict or {}, constants or {})
            if not shapeless:
                raise
            return _import_per_rank(model, dict(shape_dict or {}), dict(constants or {}), shapeless, e)
    except ConversionError as e:  # raised outside any node: about the graph's inputs or initializers
        raise OnnxImportError(str(e)) from None


def _shapeless_inputs(
    model: onnx.ModelProto, shape_dict: Mapping[str, object], constants: Mapping[str, object]
) -> list[str]:
    """The graph's tensor inputs of unknown rank (no shape, none given) that are parameters."""
    initializers = {t.name for t in model.graph.initializer}
    return [
        vi.name
        for vi in model.graph.input
        if vi.type.WhichOneof("value") == "tensor_type"
        and not vi.type.tensor_type.HasField("shape")
        and vi.name not in shape_dict
        and vi.name not in constants
        and vi.name not in initializers
    ]


def _import_per_rank(
    model: onnx.ModelProto,
    shape_dict: dict[str, Sequence[int | str]],
    constants: dict[str, np.ndarray],
    shapeless: list[str],
    error: OnnxImportError,
) -> ir.Module:
    """``@main`` imported once per rank of its inputs of unknown rank (0..``MAX_RANK``; with several such
    inputs, every combination up to ``MAX_VARIANTS`` of them, else equal ranks), as ``@main__r<k>`` variants
    that the runtime dispatches on (``relax-specialize-ranks``'s convention); ranks that fail to import are
    left out; ``error`` (the import at unknown rank) when none imports."""
    combos = list(itertools.product(range(MAX_RANK + 1), repeat=len(shapeless)))
    if len(combos) > MAX_VARIANTS:
        combos = [(k,) * len(shapeless) for k in range(MAX_RANK + 1)]
    shared = rb.BlockBuilder()
    functions = LocalFunctions(model, shared.module)
    built = 0
    for combo in combos:
        dims = {n: [f"{symbol_name(n)}_d{a}" for a in range(k)] for n, k in zip(shapeless, combo)}
        name = "main__r" + "_".join(map(str, combo))
        importer = _Importer(model, {**shape_dict, **dims}, constants, shared.context, functions, name)
        try:
            module = importer.run()
        except (OnnxImportError, ConversionError):
            continue
        f = next(op.operation for op in module.body.operations)
        names = param_names(f)
        info = {"of": "main", "params": [names.index(n) for n in shapeless], "ranks": list(combo)}
        with shared.context:
            f.attributes[RANK_VARIANT_ATTR] = ir.StringAttr.get(json.dumps(info))
        shared.module.body.append(f)
        built += 1
    if not built:
        raise error
    _erase_uncalled(shared.module)
    return shared.module


def _erase_uncalled(module: ir.Module) -> None:
    """Erase the private functions no other function calls (built for a rank whose import then failed)."""
    while True:
        called = _callees(module)
        dead = [
            op
            for op in module.body.operations
            if "sym_visibility" in op.attributes
            and ir.StringAttr(op.attributes["sym_visibility"]).value == "private"
            and ir.StringAttr(op.attributes["sym_name"]).value not in called
        ]
        if not dead:
            return
        for op in dead:
            op.operation.erase()


def _callees(module: ir.Module) -> set[str]:
    called: set[str] = set()

    def visit(op: ir.Operation) -> ir.WalkResult:
        if "callee" in op.attributes:
            called.add(ir.FlatSymbolRefAttr(op.attributes["callee"]).value)
        return ir.WalkResult.ADVANCE

    module.operation.walk(visit, ir.WalkOrder.PRE_ORDER)
    return called


class _Importer:
    def __init__(
        self,
        model: onnx.ModelProto,
        shape_dict: dict[str, Sequence[int | str]],
        constants: dict[str, np.ndarray],
        context: ir.Context | None = None,
        functions: LocalFunctions | None = None,
        name: str = "main",
    ) -> None:
        """``context``, ``functions``, ``name``: an import of ``@name`` into a shared module (one per rank)."""
        self.model = model
        self.name = name
        self.constants = constants
        self.graph = model.graph
        self.shape_dict = shape_dict
        self.opset = next((o.version for o in model.opset_import if o.domain in ("", "ai.onnx")), None)
        # one map per graph being imported: a subgraph sees the enclosing graphs' values (outer scope)
        self.values: ChainMap[str, ir.Value | Known] = ChainMap()
        self.bb = rb.BlockBuilder(context)
        self._materialized: ChainMap[str, ir.Value] = ChainMap()
        self._fresh = 0
        self._list_inputs: set[str] = set()
        self.functions = functions if functions is not None else LocalFunctions(model, self.bb.module)

    # -- entry -----------------------------------------------------------------------------------
    def run(self) -> ir.Module:
        if self.opset is None:
            raise OnnxImportError("the model imports no version of the default ONNX domain")
        if self.opset < MIN_OPSET:
            raise OnnxImportError(
                f"opset {self.opset} is not supported (the importer handles {MIN_OPSET} and up)"
            )
        check_names(self.graph)
        self._check_supported()
        validate_model(self.model, self.opset)
        initializers = {t.name for t in self.graph.initializer}
        params = {}
        fixed = {}
        for vi in self.graph.input:
            if vi.name in initializers:
                continue
            if vi.name in self.constants:
                fixed[vi.name] = self._fixed_input(vi)
                continue
            params[vi.name] = self._input_type(vi)
        inputs = {vi.name for vi in self.graph.input}
        for what, names in (("shape_dict", self.shape_dict), ("constants", self.constants)):
            unknown = set(names) - inputs
            if unknown:
                raise OnnxImportError(f"{what} names {sorted(unknown)}, which are not graph inputs")
        with self.bb.function(self.name, params) as args:
            for t in self.graph.initializer:
                self.values[t.name] = Known(
                    self.tensor_array(t), relax_dtype(t.data_type, f"initializer '{t.name}'")
                )
            self.values.update(fixed)
            for (name, t), arg in zip(params.items(), args):
                self.values[name] = self._param_value(name, t, arg)
            self.bb.ret(*self._body())
        list_params = [i for i, name in enumerate(params) if name in self._list_inputs]
        list_results = [
            i for i, o in enumerate(self.graph.output) if isinstance(self.values[o.name], SeqList)
        ]
        mark_lists(self.bb.module, self.name, list_params, list_results)
        return self.bb.module

    def _param_value(self, name: str, t: TensorType | TupleType, arg: ir.Value) -> Out:
        """A graph input's value: a tensor, or a sequence (a run-time list, or a tuple's items)."""
        if name in self._list_inputs:
            shapes = R.tuple_get_item(arg, 1)
            width = relax_type(shapes.type).shape[1]
            rank = width.value if width.is_const else None
            data = R.tuple_get_item(arg, 0)
            return SeqList(data, shapes, self._sequence_dtype(name), rank, self._sequence_item_dims(name))
        if isinstance(t, TupleType):
            return Seq([R.tuple_get_item(arg, j) for j in range(len(t.fields))], self._sequence_dtype(name))
        return arg

    def _body(self) -> list[ir.Value]:
        """Convert the graph's nodes; runs of nodes between control-flow nodes form dataflow blocks
        whose outputs are the values used after them. Returns the graph's outputs."""
        nodes = self.graph.node
        last_use: dict[str, float] = {}
        for index, node in enumerate(nodes):
            for name in _used_names(node):
                last_use[name] = index
        for o in self.graph.output:
            last_use[o.name] = float("inf")
        segment: contextlib.ExitStack | None = None
        defined: list[str] = []
        for index, node in enumerate(nodes):
            region = (
                node.op_type in CONTROL_FLOW
                and node.domain in DEFAULT_DOMAINS
                and CONTROL_FLOW[node.op_type](node)
            )
            if region and segment is not None:
                self._close_segment(segment, [n for n in defined if last_use.get(n, -1) >= index])
                segment = None
            if not region and segment is None:
                segment, defined = contextlib.ExitStack(), []
                segment.enter_context(self.bb.dataflow())
            self._convert(index, node)
            defined.extend(o for o in node.output if o)
        outputs = [self._output(o.name) for o in self.graph.output]
        if segment is not None:
            outputs = [self.bb.emit_output(v) for v in outputs]
            segment.close()
        return outputs

    def _close_segment(self, segment: contextlib.ExitStack, live: list[str]) -> None:
        """End a dataflow block, emitting the run-time values of ``live``; without any, its ops stay in
        the function body (a dataflow block needs an output)."""
        emitted = False
        for name in live:
            v = self.values[name]
            parts = [v] if isinstance(v, ir.Value) else []
            if isinstance(v, SeqList):
                parts = [v.data, v.shapes]
            elif isinstance(v, Seq):
                parts = [i for i in v.items if isinstance(i, ir.Value)]
            for part in parts:
                self.bb.emit_output(part)
                emitted = True
        if emitted:
            segment.close()
        else:
            segment.__exit__(_NoOutputs, _NoOutputs(), None)
        self._materialized.maps[0].clear()  # constants made inside the block are not visible after it

    def subgraph(self, graph: onnx.GraphProto, args: Sequence[ir.Value | Known], where: str) -> list[Out]:
        """Convert subgraph ``graph`` (a branch or loop body) at the current insertion point with its
        inputs bound to ``args``; names it does not define are the enclosing graphs' values (outer
        scope). Returns its outputs; what it defines is not visible after it."""
        if len(args) != len(graph.input):
            raise ConversionError(
                f"subgraph '{graph.name}' has {len(graph.input)} inputs, expected {len(args)}"
            )
        outer, outer_materialized = self.values, self._materialized
        # a chain over the enclosing table (a ChainMap or, in a function body, a dict): writes stay here
        self.values, self._materialized = ChainMap({}, outer), ChainMap({}, outer_materialized)
        try:
            for vi, arg in zip(graph.input, args):
                self.values[vi.name] = arg
            for t in graph.initializer:
                self.values[t.name] = Known(
                    self.tensor_array(t), relax_dtype(t.data_type, f"initializer '{t.name}'")
                )
            for index, node in enumerate(graph.node):
                self._convert(index, node, f"{where}/")
            outs: list[Out] = []
            for o in graph.output:
                if o.name not in self.values:
                    raise ConversionError(f"subgraph '{graph.name}': output '{o.name}' is never defined")
                outs.append(self.values[o.name])
            return outs
        finally:
            self.values, self._materialized = outer, outer_materialized

    def _check_supported(self) -> None:
        missing = []
        bodies = [("", self.graph)]
        bodies += [(f" in function '{f.name}'", f) for f in self.model.functions]
        for where, body in bodies:
            for index, node in all_nodes(body):
                if (node.op_type in CONVERTERS and node.domain in DEFAULT_DOMAINS) or self.functions.handles(
                    node
                ):
                    continue
                if node.domain not in DEFAULT_DOMAINS or is_onnx_op(
                    node
                ):  # else not ONNX: validation says so
                    domain = f"{node.domain}." if node.domain not in ("", "ai.onnx") else ""
                    missing.append(
                        f"  {domain}{node.op_type} (node '{node_name(index, node)}'{where}, opset {self.opset})"
                    )
        if missing:
            raise UnsupportedOpError(
                f"the model uses {len(missing)} node(s) of unsupported ONNX ops:\n" + "\n".join(missing)
            )

    # -- inputs ----------------------------------------------------------------------------------
    def _input_type(self, vi: onnx.ValueInfoProto) -> TensorType | TupleType:
        kind = vi.type.WhichOneof("value")
        if kind == "sequence_type":
            return self._sequence_input_type(vi)
        if kind != "tensor_type":
            raise OnnxImportError(f"graph input '{vi.name}' is a {kind}; only tensors are supported")
        tt = vi.type.tensor_type
        dtype = relax_dtype(tt.elem_type, f"graph input '{vi.name}'")
        if vi.name in self.shape_dict:
            return TensorType(self._given_dims(vi.name, self.shape_dict[vi.name]), dtype)
        if not tt.HasField("shape"):  # unknown rank: compiled once per rank (relax-specialize-ranks)
            return TensorType(None, dtype)
        return self._tensor_input_type(vi.name, tt, dtype)

    def _given_dims(self, what: str, spec: Sequence[int | str]) -> tuple[Expr, ...]:
        if any(isinstance(d, int) and d < 0 for d in spec):
            raise OnnxImportError(f"shape_dict['{what}'] = {list(spec)}: dims must be >= 0")
        return tuple(const(d) if isinstance(d, int) else sym(symbol_name(str(d))) for d in spec)

    def _sequence_dtype(self, name: str) -> str:
        vi = next(v for v in self.graph.input if v.name == name)
        elem = vi.type.sequence_type.elem_type
        return relax_dtype(elem.tensor_type.elem_type, f"graph input '{name}'")

    def _sequence_item_dims(self, name: str) -> tuple[Expr | None, ...] | None:
        """The declared dims of a sequence input's items: numbers and named dims (else None)."""
        vi = next(v for v in self.graph.input if v.name == name)
        tt = vi.type.sequence_type.elem_type.tensor_type
        if not tt.HasField("shape"):
            return None
        return tuple(
            const(d.dim_value)
            if d.HasField("dim_value")
            else sym(symbol_name(d.dim_param))
            if d.HasField("dim_param") and d.dim_param.strip()
            else None
            for d in tt.shape.dim
        )

    def _sequence_input_type(self, vi: onnx.ValueInfoProto) -> TupleType:
        """A sequence input is a tuple: its length (and optionally each item's shape) comes from
        ``shape_dict``, as an int or a list of shapes."""
        elem = vi.type.sequence_type.elem_type
        if elem.WhichOneof("value") != "tensor_type":
            raise OnnxImportError(
                f"graph input '{vi.name}' is a sequence of non-tensors, which is not supported"
            )
        dtype = relax_dtype(elem.tensor_type.elem_type, f"graph input '{vi.name}'")
        spec = self.shape_dict.get(vi.name)
        if spec is None:  # a run-time list (of items whose rank may be known)
            self._list_inputs.add(vi.name)
            base = symbol_name(vi.name)
            tt = elem.tensor_type
            rank = len(tt.shape.dim) if tt.HasField("shape") else sym(f"{base}_rank")
            return list_type(dtype, rank, sym(f"{base}_size"), sym(f"{base}_len"))
        if spec is None or not (isinstance(spec, int) or all(isinstance(s, (list, tuple)) for s in spec)):
            raise OnnxImportError(
                f"graph input '{vi.name}' is a sequence whose items have an unknown rank; give its length "
                "in shape_dict (an int) or a list of item shapes"
            )
        if isinstance(spec, int):
            return TupleType(
                tuple(self._tensor_input_type(f"{vi.name}_{j}", elem.tensor_type, dtype) for j in range(spec))
            )
        return TupleType(tuple(TensorType(self._given_dims(vi.name, s), dtype) for s in spec))

    def _tensor_input_type(self, name: str, tt: onnx.TypeProto.Tensor, dtype: str) -> TensorType:
        if not tt.HasField("shape"):
            raise OnnxImportError(f"graph input '{name}' has an unknown rank; give its shape in shape_dict")
        dims = []
        for axis, d in enumerate(tt.shape.dim):
            if d.HasField("dim_value"):
                dims.append(const(d.dim_value))
            elif d.HasField("dim_param") and d.dim_param.strip():
                dims.append(sym(symbol_name(d.dim_param)))
            else:
                dims.append(sym(symbol_name(f"{name}_d{axis}")))
        return TensorType(tuple(dims), dtype)

    def _fixed_input(self, vi: onnx.ValueInfoProto) -> Known:
        dtype = relax_dtype(vi.type.tensor_type.elem_type, f"graph input '{vi.name}'")
        value = np.asarray(self.constants[vi.name])
        if value.dtype != RELAX_TO_NUMPY[dtype]:
            raise OnnxImportError(
                f"constants['{vi.name}'] has dtype {value.dtype}, but the graph input is {RELAX_TO_NUMPY[dtype]}"
            )
        return Known(value, dtype)

    def tensor_array(self, t: onnx.TensorProto) -> np.ndarray:
        """A TensorProto's contents (external data is read by onnx.load)."""
        what = f"tensor '{t.name}'"
        check_tensor(t, what)
        try:
            return onnx.numpy_helper.to_array(t)
        except (ValueError, OSError) as e:  # external data that is missing or of the wrong size
            raise ConversionError(f"{what}: {e}") from None

    # -- nodes -----------------------------------------------------------------------------------
    def _convert(self, index: int, node: onnx.NodeProto, prefix: str = "") -> None:
        name = prefix + node_name(index, node)
        where = f"ONNX node '{name}' ({node.op_type}, opset {self.opset})"
        for i in node.input:
            if i and i not in self.values:
                raise OnnxImportError(f"{where}: input '{i}' is not defined before the node")
        if self.opset < 7 and any(a.name == "broadcast" for a in node.attribute):
            raise OnnxImportError(f"{where}: the legacy 'broadcast' attribute (opset < 7) is not supported")
        ctx = NodeContext(self, node, self.opset)
        loc = ir.Location.name(name, context=self.bb.context)
        try:
            with self.bb.context, loc, default_location(loc):
                if self.functions.handles(node):
                    converted = self.functions.convert(self, node)
                else:
                    converted = CONVERTERS[node.op_type](ctx)
                outs = [self._bind_unknown_dims(v, o) for v, o in zip(converted, node.output)]
        except OnnxImportError:  # from a node of a subgraph: names that node
            raise
        except RelaxError as e:
            message = str(e)
            if message.startswith(f"{name}: "):
                message = message[len(name) + 2 :]
            graph_inputs = {vi.name for vi in self.graph.input}
            constant_input = getattr(e, "input_name", None)
            raise OnnxImportError(
                f"{where}: {message}", constant_input if constant_input in graph_inputs else None
            ) from None
        except Exception as e:  # a converter bug: still name the node
            raise OnnxImportError(f"{where}: internal error: {type(e).__name__}: {e}") from e
        for j, o in enumerate(node.output):
            if not o:
                continue
            if j >= len(outs) or outs[j] is None:
                raise OnnxImportError(f"{where}: output #{j} ('{o}') is not supported")
            self.values[o] = outs[j]

    def _bind_unknown_dims(self, value: ir.Value | Known | None, name: str) -> ir.Value | Known | None:
        """``value``, its unknown dims (a result computed at run time) bound to fresh symbols by a match_cast,
        so later ops (broadcasting, Shape...) see symbolic dims, as Relax does."""
        if not isinstance(value, ir.Value):
            return value
        t = relax_type(value.type)
        if not isinstance(t, TensorType) or t.shape is None or None not in t.shape:
            return value
        fresh = iter(self.fresh_symbols(f"{name}_d", t.shape.count(None)))
        return R.match_cast(
            value, TensorType(tuple(next(fresh) if d is None else d for d in t.shape), t.dtype)
        )

    def _output(self, name: str) -> ir.Value:
        if name not in self.values:
            raise OnnxImportError(f"graph output '{name}' is never defined")
        return self.materialize(name)

    # -- known values ----------------------------------------------------------------------------
    def materialize(self, name: str) -> ir.Value:
        """The relax value of ONNX value ``name``; known contents become a constant or, when
        symbolic, a shape computation (``shape_to_tensor(make_shape(...))``)."""
        v = self.values[name]
        if isinstance(v, SeqList):
            return R.tuple_([v.data, v.shapes])
        if isinstance(v, Seq):
            if name not in self._materialized:
                self._materialized[name] = R.tuple_(
                    [self.known_value(i) if isinstance(i, Known) else i for i in v.items]
                )
            return self._materialized[name]
        if not isinstance(v, Known):
            return v
        if name not in self._materialized:
            self._materialized[name] = self.known_value(v)
        return self._materialized[name]

    def known_value(self, v: Known) -> ir.Value:
        """A relax value holding ``v``: a constant, or a shape computation when symbolic."""
        numbers = v.numbers()
        if numbers is not None:
            return R.constant(numbers)
        flat = v.values.reshape(-1)
        t = R.shape_to_tensor(R.make_shape([R.prim_value(format_dim(e)) for e in flat]))
        if v.values.ndim != 1:
            t = R.reshape(t, list(v.values.shape))
        if v.dtype != "i64":
            t = R.astype(t, v.dtype)
        return t

    def fresh_symbols(self, prefix: str, n: int) -> list[Expr]:
        """``n`` new symbols named after ``prefix`` (bound later by a match_cast)."""
        base = symbol_name(prefix)
        out = []
        for _ in range(n):
            self._fresh += 1
            out.append(sym(f"{base}_{self._fresh}"))
        return out

    def runtime_dims(self, value: ir.Value, prefix: str) -> list[Expr]:
        """The entries of a 1-D integer tensor known only at run time, bound to fresh symbols."""
        shape = R.tensor_to_shape(value)
        t = relax_type(shape.type)
        if not isinstance(t, ShapeType) or t.values is None:
            raise ConversionError(f"the length of '{prefix}' must be known at import time")
        dims = self.fresh_symbols(prefix, len(t.values))
        R.match_cast(shape, ShapeType(tuple(dims)))
        return dims

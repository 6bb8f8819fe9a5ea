"""Walk an ONNX graph and build a relax function ``@main`` with the builder.

Graph inputs keep their symbolic dims: a ``dim_param`` becomes a symbol of that name, an unnamed
dynamic dim a fresh symbol (``<input>_d<axis>``), and ``shape_dict`` overrides either. Initializers
become constants only where a relax op uses them; shape computations (Shape, Gather, Concat,
arithmetic...) are evaluated symbolically at import time, so the shapes they build stay symbolic.
"""

from __future__ import annotations

import importlib
import os
import pkgutil
import re
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np
import onnx
from mlir import ir

import relax_mlir.builder as rb
from relax_mlir.dialects import relax as R
from relax_mlir.dialects.registry import default_location
from relax_mlir.dialects.types import ShapeType, TensorType, relax_type
from relax_mlir.errors import RelaxError, UnsupportedOpError
from relax_mlir.frontend.onnx import ops as _ops
from relax_mlir.frontend.onnx.registry import (
    CONVERTERS,
    RELAX_TO_NUMPY,
    ConversionError,
    Known,
    NodeContext,
    relax_dtype,
)
from relax_mlir.frontend.onnx.validate import (
    DEFAULT_DOMAINS,
    check_names,
    check_tensor,
    is_onnx_op,
    node_name,
    node_where,
    validate_model,
)
from relax_mlir.shape_infer.expr import Expr, const, format_dim, sym

MIN_OPSET = 1


class OnnxImportError(RelaxError):
    """A model that cannot be imported: names the node, its op type and the opset.

    ``constant_input`` names the graph input that would have to be fixed (``constants=``) when that
    is the reason."""

    def __init__(self, message: str, constant_input: str | None = None) -> None:
        super().__init__(message)
        self.constant_input = constant_input


def _load_converters() -> None:
    for info in pkgutil.iter_modules(_ops.__path__):
        importlib.import_module(f"{_ops.__name__}.{info.name}")


def from_onnx(
    model: onnx.ModelProto | str | os.PathLike,
    shape_dict: Mapping[str, Sequence[int | str]] | None = None,
    constants: Mapping[str, np.ndarray] | None = None,
) -> ir.Module:
    """Import an ONNX model (a ModelProto or a path) as a relax module with one function ``@main``.

    ``shape_dict`` maps input names to shapes (ints and symbol names) that replace the model's.
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
        return _Importer(model, dict(shape_dict or {}), dict(constants or {})).run()
    except ConversionError as e:  # raised outside any node: about the graph's inputs or initializers
        raise OnnxImportError(str(e)) from None


_SYMBOL_CHARS = re.compile(r"[^A-Za-z0-9_]")


def symbol_name(text: str) -> str:
    """A valid symbol from a ``dim_param`` (``"batch size"`` -> ``batch_size``)."""
    name = _SYMBOL_CHARS.sub("_", text.strip()) or "d"
    if name[0].isdigit():
        name = "d" + name
    if name in ("floordiv", "ceildiv", "mod"):
        name += "_"
    return name


class _Importer:
    def __init__(
        self,
        model: onnx.ModelProto,
        shape_dict: dict[str, Sequence[int | str]],
        constants: dict[str, np.ndarray],
    ) -> None:
        self.model = model
        self.constants = constants
        self.graph = model.graph
        self.shape_dict = shape_dict
        self.opset = next((o.version for o in model.opset_import if o.domain in ("", "ai.onnx")), None)
        self.values: dict[str, ir.Value | Known] = {}
        self.bb = rb.BlockBuilder()
        self._materialized: dict[str, ir.Value] = {}
        self._fresh = 0

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
        with self.bb.function("main", params) as args:
            for name, arg in zip(params, args):
                self.values[name] = arg
            for t in self.graph.initializer:
                self.values[t.name] = Known(
                    self.tensor_array(t), relax_dtype(t.data_type, f"initializer '{t.name}'")
                )
            self.values.update(fixed)
            with self.bb.dataflow():
                for index, node in enumerate(self.graph.node):
                    self._convert(index, node)
                outputs = [self.bb.emit_output(self._output(o.name)) for o in self.graph.output]
            self.bb.ret(*outputs)
        return self.bb.module

    def _check_supported(self) -> None:
        missing = []
        for index, node in enumerate(self.graph.node):
            if node.op_type in CONVERTERS and node.domain in DEFAULT_DOMAINS:
                continue
            if node.domain not in DEFAULT_DOMAINS or is_onnx_op(node):  # else not ONNX: validation says so
                domain = f"{node.domain}." if node.domain not in ("", "ai.onnx") else ""
                missing.append(
                    f"  {domain}{node.op_type} (node '{node_name(index, node)}', opset {self.opset})"
                )
        if missing:
            raise UnsupportedOpError(
                f"the model uses {len(missing)} node(s) of unsupported ONNX ops:\n" + "\n".join(missing)
            )

    # -- inputs ----------------------------------------------------------------------------------
    def _input_type(self, vi: onnx.ValueInfoProto) -> TensorType:
        kind = vi.type.WhichOneof("value")
        if kind != "tensor_type":
            raise OnnxImportError(f"graph input '{vi.name}' is a {kind}; only tensors are supported")
        tt = vi.type.tensor_type
        dtype = relax_dtype(tt.elem_type, f"graph input '{vi.name}'")
        if vi.name in self.shape_dict:
            dims = [
                const(d) if isinstance(d, int) else sym(symbol_name(str(d))) for d in self.shape_dict[vi.name]
            ]
            if any(isinstance(d, int) and d < 0 for d in self.shape_dict[vi.name]):
                raise OnnxImportError(
                    f"shape_dict['{vi.name}'] = {list(self.shape_dict[vi.name])}: dims must be >= 0"
                )
            return TensorType(tuple(dims), dtype)
        if not tt.HasField("shape"):
            raise OnnxImportError(
                f"graph input '{vi.name}' has an unknown rank; give its shape in shape_dict"
            )
        dims = []
        for axis, d in enumerate(tt.shape.dim):
            if d.HasField("dim_value"):
                dims.append(const(d.dim_value))
            elif d.HasField("dim_param") and d.dim_param.strip():
                dims.append(sym(symbol_name(d.dim_param)))
            else:
                dims.append(sym(symbol_name(f"{vi.name}_d{axis}")))
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
    def _convert(self, index: int, node: onnx.NodeProto) -> None:
        name = node_name(index, node)
        where = node_where(index, node, self.opset)
        for i in node.input:
            if i and i not in self.values:
                raise OnnxImportError(f"{where}: input '{i}' is not defined before the node")
        if self.opset < 7 and any(a.name == "broadcast" for a in node.attribute):
            raise OnnxImportError(f"{where}: the legacy 'broadcast' attribute (opset < 7) is not supported")
        ctx = NodeContext(self, node, self.opset)
        loc = ir.Location.name(name, context=self.bb.context)
        try:
            with self.bb.context, loc, default_location(loc):
                outs = [
                    self._bind_unknown_dims(v, o) for v, o in zip(CONVERTERS[node.op_type](ctx), node.output)
                ]
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

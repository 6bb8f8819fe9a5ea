"""ONNX model-local functions (``FunctionProto``, a domain of the model's own) as private relax functions.

A node whose (domain, op type) names a function of the model becomes a ``relax.call`` of a private relax
function built from the function's body. Its parameter types generalize the call's argument types: every
dim becomes a symbol named after the parameter (``x_d0``), dims equal at the call sharing one symbol, so
one relax function serves calls at different shapes (each call instantiates its symbols, ``dialects/bind.py``).
A body that does not import that generally (an op that needs a static dim) is imported again with the call's
own types. Attribute parameters (``ref_attr_name``) take the calling node's values or the function's
defaults; each distinct set of attribute values is its own relax function. Functions may call functions.
"""

from __future__ import annotations

import types
from collections import ChainMap
from typing import Any

import onnx
from mlir import ir

import relax_mlir.builder as rb
from relax_mlir.dialects.ops.call import call as call_op
from relax_mlir.dialects.types import RelaxType, TensorType, relax_type
from relax_mlir.errors import RelaxError
from relax_mlir.frontend.onnx.registry import ConversionError, symbol_name
from relax_mlir.shape_infer.expr import Expr, sym

# the importer of the graph or function body being converted (``importer._Importer``; not imported: a cycle)
_Importer = Any


class LocalFunctions:
    """The model's functions, and the relax functions built from them so far (shared by nested imports)."""

    def __init__(self, model: onnx.ModelProto, module: ir.Module) -> None:
        self.protos = {(f.domain, f.name): f for f in model.functions}
        self.module = module  # where the relax functions go (the module that holds @main)
        self.built: dict[tuple, tuple[str, ir.FunctionType]] = {}
        self.names: set[str] = set()

    def handles(self, node: onnx.NodeProto) -> bool:
        return (node.domain, node.op_type) in self.protos

    def convert(self, importer: _Importer, node: onnx.NodeProto) -> list[ir.Value]:
        """Call the relax function of ``node``'s ONNX function with its inputs; the call's results."""
        proto = self.protos[(node.domain, node.op_type)]
        if len(node.input) > len(proto.input) or any(not i for i in node.input):
            raise ConversionError(
                f"function {_spell(proto)} takes inputs {list(proto.input)}; the node passes {list(node.input)}"
            )
        if len(node.input) < len(proto.input):
            raise ConversionError(
                f"function {_spell(proto)} takes {len(proto.input)} inputs; the node passes {len(node.input)}"
            )
        args = [importer.materialize(i) for i in node.input]
        arg_types = [relax_type(a.type) for a in args]
        attrs = _attributes(proto, node)
        try:
            name, ftype = self.instance(importer, proto, arg_types, attrs, general=True)
        except RelaxError:
            name, ftype = self.instance(importer, proto, arg_types, attrs, general=False)
        results = call_op(name, ftype, args)
        if len(results) < len([o for o in node.output if o]):
            raise ConversionError(f"function {_spell(proto)} has {len(results)} outputs")
        return results

    def instance(
        self,
        importer: _Importer,
        proto: onnx.FunctionProto,
        arg_types: list[RelaxType | None],
        attrs: dict[str, onnx.AttributeProto],
        general: bool,
    ) -> tuple[str, ir.FunctionType]:
        """The relax function for ``proto`` at these argument types and attribute values (built once)."""
        params = _generalize(arg_types, list(proto.input)) if general else list(arg_types)
        key = (
            proto.domain,
            proto.name,
            tuple(str(t) for t in params),
            tuple(sorted((k, v.SerializeToString()) for k, v in attrs.items())),
        )
        if key not in self.built:
            self.built[key] = self._build(importer, proto, params, attrs)
        return self.built[key]

    def _build(
        self,
        importer: _Importer,
        proto: onnx.FunctionProto,
        params: list[Any],
        attrs: dict[str, onnx.AttributeProto],
    ) -> tuple[str, ir.FunctionType]:
        base = symbol_name(f"{proto.domain}_{proto.name}" if proto.domain else proto.name)
        name, k = base, 0
        while name in self.names:
            k += 1
            name = f"{base}_{k}"
        bb = rb.BlockBuilder(importer.bb.context)
        opset = next((o.version for o in proto.opset_import if o.domain in ("", "ai.onnx")), importer.opset)
        body = type(importer).__new__(type(importer))
        body.__dict__.update(importer.__dict__)
        body.bb, body.opset, body.values, body._materialized = bb, opset, ChainMap(), ChainMap()
        body.graph = types.SimpleNamespace(
            input=[],
            node=[_resolve(n, attrs) for n in proto.node],
            output=[types.SimpleNamespace(name=o) for o in proto.output],
        )
        try:
            with bb.function(name, dict(zip(proto.input, params)), private=True) as args:
                body.values.update(zip(proto.input, args))
                bb.ret(*body._body())  # dataflow blocks between control-flow nodes, as in the main graph
        except RelaxError as e:
            raise ConversionError(f"in function {_spell(proto)}: {e}") from None  # the call node names itself
        f = next(op.operation for op in bb.module.body.operations)
        first = next(iter(self.module.body.operations), None)
        if first is None:
            self.module.body.append(f)
        else:
            f.move_before(first)
        self.names.add(name)
        return name, ir.FunctionType(ir.TypeAttr(f.attributes["function_type"]).value)


def _spell(proto: onnx.FunctionProto) -> str:
    return f"'{proto.domain}.{proto.name}'" if proto.domain else f"'{proto.name}'"


def _generalize(arg_types: list[RelaxType | None], names: list[str]) -> list[Any]:
    """Parameter types: each dim a symbol named after its parameter; dims equal at the call share one."""
    shared: dict[Expr, Expr] = {}
    out: list[Any] = []
    used: set[str] = set()
    for t, name in zip(arg_types, names):
        if not isinstance(t, TensorType) or t.shape is None:
            out.append(t)
            continue
        dims = []
        for axis, d in enumerate(t.shape):
            if d is not None and d in shared:
                dims.append(shared[d])
                continue
            s = symbol_name(f"{name}_d{axis}")
            while s in used:
                s += "_"
            used.add(s)
            dims.append(sym(s))
            if d is not None:
                shared[d] = sym(s)
        out.append(TensorType(tuple(dims), t.dtype))
    return out


def _attributes(proto: onnx.FunctionProto, node: onnx.NodeProto) -> dict[str, onnx.AttributeProto]:
    """The function's attribute parameters: the node's values, else the function's defaults."""
    given = {a.name: a for a in node.attribute}
    known = set(proto.attribute) | {a.name for a in proto.attribute_proto}
    unknown = set(given) - known
    if unknown:
        raise ConversionError(f"function {_spell(proto)} has no attribute(s) {sorted(unknown)}")
    out = {a.name: a for a in proto.attribute_proto}
    out.update(given)
    return out


def _resolve(node: onnx.NodeProto, attrs: dict[str, onnx.AttributeProto]) -> onnx.NodeProto:
    """``node`` with its attributes that refer to the function's (``ref_attr_name``) given their values."""
    if not any(a.ref_attr_name for a in node.attribute):
        return node
    out = onnx.NodeProto()
    out.CopyFrom(node)
    del out.attribute[:]
    for a in node.attribute:
        if not a.ref_attr_name:
            out.attribute.append(a)
        elif a.ref_attr_name in attrs:
            value = onnx.AttributeProto()
            value.CopyFrom(attrs[a.ref_attr_name])
            value.name = a.name
            out.attribute.append(value)
    return out

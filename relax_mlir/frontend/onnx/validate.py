"""Check an ONNX model against the ONNX spec before importing it, so a malformed model is an error naming
what is wrong (node, initializer, graph input), never a converter accepting it or a numpy traceback.

Our own checks come first, for messages that name the node the way the importer does: every node of the
default domain against its ``onnx.defs`` schema at the model's opset (input and output counts, attribute
names and types, required attributes), every tensor (initializers, tensor attributes: supported dtype,
dims >= 0, as many bytes or values as the dims imply) and every graph input and output (dims >= 0).
Then ``onnx.checker.check_model`` (``full_check=False``) catches the rest of the spec (topological
order, duplicate names, opset imports, subgraphs). It runs on the model without its initializers'
contents (checked here already): checking serializes the model, which for 200 MB of weights costs ~1 s.
Where the checker is stricter than ONNX Runtime and the importer, the copy is relaxed: a graph input or
output without a shape (unknown rank; ORT runs such models) is given an empty one.
Shape inference (``full_check=True``) is left out: it rejects models whose stored value_info disagrees
with its inference, which the importer handles (it deduces shapes itself).
"""

from __future__ import annotations

import math
from collections.abc import Iterator

import numpy as np
import onnx

from relax_mlir.frontend.onnx.registry import DTYPES, ConversionError, dtype_name, relax_dtype

DEFAULT_DOMAINS = ("", "ai.onnx")
# element types stored in fewer than 8 bits, packed (in raw_data and in int32_data alike)
_BITS = {
    onnx.TensorProto.INT4: 4,
    onnx.TensorProto.UINT4: 4,
    onnx.TensorProto.FLOAT4E2M1: 4,
    onnx.TensorProto.INT2: 2,
    onnx.TensorProto.UINT2: 2,
}


def node_name(index: int, node: onnx.NodeProto) -> str:
    return node.name or f"{node.op_type}_{index}"


def node_where(index: int, node: onnx.NodeProto, opset: int) -> str:
    """How messages name a node: ``ONNX node 'name' (OpType, opset N)``."""
    return f"ONNX node '{node_name(index, node)}' ({node.op_type}, opset {opset})"


def check_names(graph: onnx.GraphProto) -> None:
    """Every name the importer reads is text (protobuf gives bytes for a string that is not UTF-8)."""
    for index, node in enumerate(graph.node):
        for field in ("name", "op_type", "domain"):
            if not isinstance(getattr(node, field), str):
                raise ConversionError(f"node #{index}: {field} {getattr(node, field)!r} is not UTF-8 text")
        for name in (*node.input, *node.output):
            if not isinstance(name, str):
                raise ConversionError(f"{node_where(index, node, 0)}: value name {name!r} is not UTF-8 text")
    for kind, values in (
        ("initializer", graph.initializer),
        ("input", graph.input),
        ("output", graph.output),
    ):
        for v in values:
            if not isinstance(v.name, str):
                raise ConversionError(f"graph {kind} {v.name!r}: the name is not UTF-8 text")
    for vi in graph.input:
        for d in vi.type.tensor_type.shape.dim:
            if not isinstance(d.dim_param, str):
                raise ConversionError(f"graph input '{vi.name}': dim name {d.dim_param!r} is not UTF-8 text")


def subgraphs(node: onnx.NodeProto) -> Iterator[onnx.GraphProto]:
    """The graphs held by ``node``'s attributes (If branches, Loop and Scan bodies)."""
    for a in node.attribute:
        if a.type == onnx.AttributeProto.GRAPH:
            yield a.g
        elif a.type == onnx.AttributeProto.GRAPHS:
            yield from a.graphs


def all_nodes(graph: onnx.GraphProto) -> Iterator[tuple[int, onnx.NodeProto]]:
    """The nodes of ``graph`` and of its subgraphs, recursively (each with its index in its own graph)."""
    for index, node in enumerate(graph.node):
        yield index, node
        for g in subgraphs(node):
            yield from all_nodes(g)


def is_onnx_op(node: onnx.NodeProto) -> bool:
    """Whether ``node`` is an op of ONNX's default domain at any opset (else validation rejects it)."""
    return node.domain in DEFAULT_DOMAINS and onnx.defs.has(node.op_type, "")


def validate_model(model: onnx.ModelProto, opset: int) -> None:
    """Raise ConversionError for the first way ``model`` breaks the ONNX spec (see the module doc)."""
    graph = model.graph
    if not graph.output:
        raise ConversionError("the graph has no outputs")
    for t in graph.initializer:
        check_tensor(t, f"initializer '{t.name}'")
    for kind, values in (("input", graph.input), ("output", graph.output)):
        for vi in values:
            _check_dims(vi, f"graph {kind} '{vi.name}'")
    for index, node in all_nodes(graph):
        _check_node(node, opset, node_where(index, node, opset))
    try:
        onnx.checker.check_model(_without_weights(model))
    except (onnx.checker.ValidationError, ValueError) as e:
        detail = str(e).strip().replace("\n\n==> Context:", ";")
        raise ConversionError(f"the model is not valid ONNX: {detail}") from None


def check_tensor(t: onnx.TensorProto, what: str) -> None:
    """A tensor of a supported dtype, dims >= 0, and as much data as its dims imply."""
    relax_dtype(t.data_type, what)
    dims = list(t.dims)
    if any(d < 0 for d in dims):
        raise ConversionError(f"{what}: dims must be >= 0, got {dims}")
    if t.data_location == onnx.TensorProto.EXTERNAL:
        return  # not loaded with the model: reading it checks its size
    count = math.prod(dims)
    bits = _BITS.get(t.data_type, np.dtype(DTYPES[t.data_type][1]).itemsize * 8)
    if t.HasField("raw_data"):
        expected, found, unit = math.ceil(count * bits / 8), len(t.raw_data), "bytes of raw_data"
    else:
        field = onnx.helper.tensor_dtype_to_field(t.data_type)
        expected = math.ceil(count * bits / 8) if bits < 8 else count
        found, unit = len(getattr(t, field)), f"values in {field}"
    if found != expected:
        dtype = dtype_name(t.data_type)
        raise ConversionError(f"{what}: shape {dims} of {dtype} needs {expected} {unit}, found {found}")


def _check_dims(vi: onnx.ValueInfoProto, what: str) -> None:
    if vi.type.WhichOneof("value") != "tensor_type" or not vi.type.tensor_type.HasField("shape"):
        return
    for axis, d in enumerate(vi.type.tensor_type.shape.dim):
        if d.HasField("dim_value") and d.dim_value < 0:
            raise ConversionError(f"{what}: dim {axis} is {d.dim_value}; dims must be >= 0")


def _check_node(node: onnx.NodeProto, opset: int, where: str) -> None:
    """``node`` against its schema: input/output counts, attribute names and types, required attributes."""
    for a in node.attribute:
        if a.type == onnx.AttributeProto.TENSOR:
            check_tensor(a.t, f"{where}: attribute '{a.name}'")
    if node.domain not in DEFAULT_DOMAINS:
        return
    try:
        schema = onnx.defs.get_schema(node.op_type, opset, "")
    except onnx.defs.SchemaError:
        raise ConversionError(f"{where}: {node.op_type} is not an op of ONNX opset {opset}") from None
    for kind, n, low, high in (
        ("inputs", len(node.input), schema.min_input, schema.max_input),
        ("outputs", len(node.output), schema.min_output, schema.max_output),
    ):
        if not low <= n <= high:
            allowed = (
                f"{low}" if low == high else f"{low} to {high}" if high < 2**31 - 1 else f"{low} or more"
            )
            raise ConversionError(
                f"{where}: has {n} {kind}; {node.op_type}-{schema.since_version} takes {allowed}"
            )
    _check_required_inputs(node, schema, where)
    seen = set()
    for a in node.attribute:
        if a.name in seen:
            raise ConversionError(f"{where}: attribute '{a.name}' is given twice")
        seen.add(a.name)
        spec = schema.attributes.get(a.name)
        if spec is None:
            known = ", ".join(sorted(schema.attributes)) or "none"
            raise ConversionError(
                f"{where}: unknown attribute '{a.name}' ({node.op_type}-{schema.since_version} has: {known})"
            )
        if a.type != spec.type.value and not a.ref_attr_name:
            found = onnx.AttributeProto.AttributeType.Name(a.type)
            raise ConversionError(f"{where}: attribute '{a.name}' must be {spec.type.name}, got {found}")
    missing = sorted(name for name, spec in schema.attributes.items() if spec.required and name not in seen)
    if missing:
        raise ConversionError(f"{where}: required attribute(s) {', '.join(missing)} missing")


def _check_required_inputs(node: onnx.NodeProto, schema: onnx.defs.OpSchema, where: str) -> None:
    """Inputs the schema requires are given: not the empty name (which marks an absent optional input)."""
    Option = onnx.defs.OpSchema.FormalParameterOption
    for i, formal in enumerate(schema.inputs):
        if formal.option == Option.Variadic:
            given = sum(1 for name in node.input[i:] if name)
            if given < formal.min_arity:
                raise ConversionError(
                    f"{where}: needs at least {formal.min_arity} given input(s) for '{formal.name}', "
                    f"got {given} (an empty name marks an absent optional input)"
                )
            return
        if formal.option == Option.Single and i < len(node.input) and not node.input[i]:
            raise ConversionError(
                f"{where}: input #{i} ('{formal.name}') is required, got the empty name (absent)"
            )


def _without_weights(model: onnx.ModelProto) -> onnx.ModelProto:
    """What ``onnx.checker`` needs of ``model``, with initializers reduced to names and dtypes."""
    light = onnx.ModelProto(ir_version=model.ir_version)
    light.opset_import.extend(model.opset_import)
    light.functions.extend(model.functions)
    light.metadata_props.extend(model.metadata_props)
    src, graph = model.graph, light.graph
    graph.name = src.name
    for field in ("node", "input", "output", "value_info", "sparse_initializer"):
        getattr(graph, field).extend(getattr(src, field))
    for t in src.initializer:
        graph.initializer.add(name=t.name, data_type=t.data_type, dims=[0])
    for vi in (*graph.input, *graph.output):
        if vi.type.WhichOneof("value") == "tensor_type" and not vi.type.tensor_type.HasField("shape"):
            vi.type.tensor_type.shape.SetInParent()  # unknown rank: the checker wants a shape field
    return light

"""``relax-lower-host``: turn each relax function into ordinary ``func`` code that calls its kernels.

After ``convert-relax-to-linalg`` a relax function holds only calls, match_casts, shape and tuple
ops. This pass rewrites it into a function on builtin types with a fixed calling convention::

    func.func @f(<inputs>, <destinations>, %status: memref<4xi64>) -> <data-dependent outputs>
        attributes {llvm.emit_c_interface, relax.signature = "<json>"}

- a tensor parameter is a ``memref`` (contiguous, identity layout); a prim parameter an ``index``;
  a shape parameter one ``index`` per dim; tuple parameters are flattened; a public function's tensor
  parameter of unknown rank never gets here: ``relax-specialize-ranks`` made one variant per rank, whose
  ``relax.signature`` names the function and ranks (``rank_variant``) for the runtime's dispatch;
- every output whose dims are known from the parameters is written into a destination memref that
  the runtime allocates (the last kernel writes there directly); a shape or prim output is written
  into a ``memref<Nxi64>``; an output whose dims depend on data (bound by a ``match_cast`` inside the
  function) is returned as a tensor instead;
- symbols are read from the inputs' dims once; every symbolic size is computed once;
- each ``match_cast`` check branches, on failure, to a block that stores ``[check + 1, actual, expected,
  dim]`` into ``%status`` and returns; a ``relax.check_index`` (indices within their dim) or
  ``relax.check_dim`` stores the same without branching (the first failure wins) and the code goes on:
  the kernels that rely on it keep their accesses inside their buffers. ``relax.signature`` tells the
  runtime what each check means (``executable.format_check``), so a failure comes back to Python as an error;
- ``scf.if`` / ``scf.while`` stay ``scf.if`` / ``scf.while`` on host values (tensors, prim and shape values as
  ``index``es); symbols and sizes computed inside a branch or loop body stay there, a check inside one records
  its failure without branching (a loop then stops after the iteration), and a result whose size differs per
  branch or iteration is a tensor of unknown dims (returned when it is an output).

This module holds the pass and the writer's core (parameters, outputs, body, kernel and library calls); the
writer's other parts are mixins: ``host_checks`` (match_cast casts and run-time checks), ``host_calls``
(``relax.call``) and ``host_regions`` (``scf.if`` / ``scf.while``); ``host_values`` holds the host values.
"""

from __future__ import annotations

import json
from typing import Any

import numpy as np
from mlir import ir

from relax_mlir.dialects.lists import LIST_PARAMS_ATTR, LIST_RESULTS_ATTR, list_element, marked_lists
from relax_mlir.dialects.registry import INPLACE_ATTR, is_resource_elements, op_class
from relax_mlir.dialects.types import (
    PrimType,
    RelaxType,
    ShapeType,
    TensorType,
    TupleType,
    parse_type,
    relax_type,
)
from relax_mlir.errors import RelaxError, UnsupportedOpError
from relax_mlir.lowering import library as lib
from relax_mlir.lowering.index_code import IndexCode
from relax_mlir.lowering.kernel import builtin_tensor, element, is_float
from relax_mlir.transforms import memory_plan
from relax_mlir.transforms.host_calls import CallLowering
from relax_mlir.transforms.host_checks import CheckLowering
from relax_mlir.transforms.host_regions import RegionLowering
from relax_mlir.transforms.host_values import (
    _Constant,
    _Field,
    _Function,
    _Ints,
    _location,
    _OpError,
    _Tensor,
    _Tuple,
    memref_type,
)
from relax_mlir.transforms.registry import PassFailed, register_pass
from relax_mlir.transforms.specialize_ranks import RANK_VARIANT_ATTR
from relax_mlir.transforms.well_formed import (
    DATAFLOW_ATTR,
    LOAD_OUTPUTS_ATTR,
    UPPER_BOUNDS_ATTR,
    load_time_names,
    param_names,
)

SIGNATURE_ATTR = "relax.signature"
RESOURCE_ATTR = "relax.resource"
# the role of a host function's memref argument: "inplace" (read and written), "output" (a destination the
# kernels write) or "host" (written by host code: status, shape outputs); none for a read-only input
ROLE_ATTR = "relax.role"


class _HostWriter(RegionLowering, CallLowering, CheckLowering):
    """Writes one relax function as host code (its casts and checks, calls and control flow in the mixins)."""

    def __init__(
        self,
        func: ir.Operation,
        kernels: dict[str, ir.FunctionType],
        resources: list[ir.Attribute],
        library: dict[str, lib.LibraryFunction] | None = None,
        functions: dict[str, tuple[ir.FunctionType, set[int]]] | None = None,
        checks: list[str] | None = None,
    ) -> None:
        self.func = func
        self.functions = functions if functions is not None else {}  # relax functions: type, in-place params
        self.kernels = kernels
        self.resources = resources  # dense_resource constants, shared by every function
        self.library = library if library is not None else {}  # called library functions, by symbol
        self.name = ir.StringAttr(func.attributes["sym_name"]).value
        self.f = _Function(self.name, checks=checks if checks is not None else [])
        self.env: dict[str, str] = {}
        self.code = IndexCode(self.f.lines, self.f.fresh, self._symbol)
        self.values: dict[ir.Value, Any] = {}
        self.dims: dict[tuple[str, int], str] = {}
        self.direct: dict[ir.Value, str] = {}  # call results written straight into a destination
        self.params: list[str] = []
        self.inplace_memrefs: dict[int, tuple[str, str]] = {}  # in-place parameter -> its memref, type
        self.signature: dict[str, Any] = {"inputs": [], "outputs": [], "checks": self.f.checks}
        if _is_private(func):  # only called by other functions (relax.call): not an entry point
            self.signature["private"] = True
        if RANK_VARIANT_ATTR in func.attributes:  # one rank of a function of unknown-rank parameters
            self.signature["rank_variant"] = json.loads(
                ir.StringAttr(func.attributes[RANK_VARIANT_ATTR]).value
            )
        self.depth = 0  # > 0 inside a branch or loop body: checks record a failure instead of branching
        self.control_flow = False  # after an scf.if / scf.while: checks record a failure too

    def _symbol(self, name: str) -> str:
        if name not in self.env:
            raise UnsupportedOpError(f"@{self.name}: symbol '{name}' is used before it is defined")
        return self.env[name]

    # -- parameters ----------------------------------------------------------------------------
    def bind_params(self) -> None:
        block = self.func.regions[0].blocks[0]
        self.inplace = _inplace_params(self.func, self.functions)
        ftype = ir.FunctionType(ir.TypeAttr(self.func.attributes["function_type"]).value)
        names = param_names(self.func)
        for i, arg in enumerate(block.arguments):
            t = relax_type(ftype.inputs[i])
            if t is None:
                raise UnsupportedOpError(f"@{self.name}: parameter #{i} has non-relax type {ftype.inputs[i]}")
            self.values[arg] = self._param(t, names[i])
        bounds = {}
        if UPPER_BOUNDS_ATTR in self.func.attributes:
            bounds = {
                n.name: ir.IntegerAttr(n.attr).value
                for n in ir.DictAttr(self.func.attributes[UPPER_BOUNDS_ATTR])
            }
        self.signature["upper_bounds"] = bounds
        lists = marked_lists(self.func, LIST_PARAMS_ATTR)
        self.signature["param_structure"] = [
            self._structure(relax_type(t), i in lists) for i, t in enumerate(ftype.inputs)
        ]
        load_time = load_time_names(self.func)
        if load_time:  # parameters the runtime binds from ``Executable.load_params``: [index, name]
            self.signature["load_time"] = [[names.index(n), n] for n in load_time]
        if LOAD_OUTPUTS_ATTR in self.func.attributes:
            outputs = ir.ArrayAttr(self.func.attributes[LOAD_OUTPUTS_ATTR])
            self.signature["load_outputs"] = [ir.StringAttr(a).value for a in outputs]

    def _param(self, t: RelaxType, what: str) -> Any:
        if isinstance(t, TupleType):
            return _Tuple([self._param(x, f"{what}.{j}") for j, x in enumerate(t.fields)])
        if isinstance(t, TensorType):
            builtin_tensor(t, what)
            memref = self.f.fresh("arg")
            tensor = self.f.fresh("in")
            index = len(self.signature["inputs"])
            writable = " writable" if index in self.inplace else ""
            role = f' {{{ROLE_ATTR} = "inplace"}}' if writable else ""
            self.params.append(f"{memref}: {memref_type(t)}{role}")
            if writable:
                self.inplace_memrefs[index] = (memref, memref_type(t))
            self.f.lines.append(
                f"{tensor} = bufferization.to_tensor {memref} restrict{writable} : {memref_type(t)} to "
                f"{builtin_tensor(t)}"
            )
            spec = {"kind": "tensor", "type": str(t), "name": what}
            if writable:
                spec["inplace"] = True
            self.signature["inputs"].append(spec)
            value = _Tensor(tensor, t)
            for axis, d in enumerate(t.shape or ()):
                if d is not None and not d.is_const and len(d.free_symbols) == 1 and str(d) in d.free_symbols:
                    if str(d) not in self.env:
                        self.env[str(d)] = self._dim(value, axis)
            return value
        if isinstance(t, (PrimType, ShapeType)):
            dims = [t.value] if isinstance(t, PrimType) else t.values
            if dims is None:
                raise UnsupportedOpError(f"@{self.name}: {what} {t} needs a known rank")
            names = []
            for d in dims:
                name = self.f.fresh("arg")
                self.params.append(f"{name}: index")
                names.append(name)
                if d is not None and len(d.free_symbols) == 1 and str(d) in d.free_symbols:
                    self.env.setdefault(str(d), name)
            kind = "prim" if isinstance(t, PrimType) else "shape"
            self.signature["inputs"].append({"kind": kind, "type": str(t), "name": what})
            return _Ints(names, isinstance(t, ShapeType))
        raise UnsupportedOpError(f"@{self.name}: {what} of type {t} cannot be passed to compiled code")

    def inplace_buffer(self, v: ir.Value) -> tuple[str, str] | None:
        """The memref and its type of the in-place parameter ``v`` stands for, if it stands for one."""
        arg = _root_param(v)
        return self.inplace_memrefs.get(arg.arg_number) if arg is not None else None

    def _dim(self, value: _Tensor, axis: int) -> str:
        assert value.type.shape is not None
        d = value.type.shape[axis]
        if d is not None and d.is_const:
            return self.code.const(d.value)
        key = (value.name, axis)
        if key not in self.dims:
            name = self.f.fresh("dim")
            self.f.lines.append(f"{name} = tensor.dim {value.name}, {self.code.const(axis)} : {value.mlir}")
            self.dims[key] = name
        return self.dims[key]

    # -- outputs -----------------------------------------------------------------------------------
    def plan_outputs(self) -> list[tuple[ir.Value, RelaxType, str | None]]:
        """Flattened results; destination memrefs for those whose sizes the runtime can compute."""
        ret = self._return_op()
        flat: list[tuple[Any, RelaxType]] = []
        for v in ret.operands:
            flat.extend(self._flatten(v, relax_type(v.type)))
        known = set(self.env)
        planned = []
        for i, (v, t) in enumerate(flat):
            what = f"output #{i}"
            if isinstance(t, TensorType):
                builtin_tensor(t, what)
                dims_known = all(d is not None and d.free_symbols <= known for d in t.shape)  # type: ignore[union-attr]
                if not dims_known:
                    planned.append((v, t, None))
                    self.signature["outputs"].append({"kind": "returned", "type": str(t)})
                    continue
                dest = self.f.fresh("dest")
                self.params.append(f'{dest}: {memref_type(t)} {{{ROLE_ATTR} = "output"}}')
                planned.append((v, t, dest))
                self.signature["outputs"].append({"kind": "tensor", "type": str(t)})
                source = _source(v)
                if (
                    source not in self.direct
                    and isinstance(source, ir.OpResult)
                    and getattr(op_class(source.owner), "DPS_CALL", False)
                ):
                    self.direct[source] = dest
            elif isinstance(t, (PrimType, ShapeType)):
                n = 1 if isinstance(t, PrimType) else t.ndim
                if n is None:
                    raise UnsupportedOpError(f"@{self.name}: {what} {t} needs a known rank")
                dest = self.f.fresh("dest")
                self.params.append(f'{dest}: memref<{n}xi64> {{{ROLE_ATTR} = "host"}}')
                planned.append((v, t, dest))
                self.signature["outputs"].append(
                    {"kind": "prim" if isinstance(t, PrimType) else "shape", "type": str(t)}
                )
            else:
                raise UnsupportedOpError(
                    f"@{self.name}: {what} of type {t} cannot be returned from compiled code"
                )
        lists = marked_lists(self.func, LIST_RESULTS_ATTR)
        self.signature["result_structure"] = [
            self._structure(relax_type(v.type), i in lists) for i, v in enumerate(ret.operands)
        ]
        return planned

    def _structure(self, t: RelaxType | None, is_list: bool = False) -> Any:
        """0 for a tensor or integer, a list per tuple, ``{"list": [dtype, rank]}`` for a run-time list."""
        element = list_element(t) if is_list else None
        if element is not None:
            return {"list": list(element)}
        return [self._structure(x) for x in t.fields] if isinstance(t, TupleType) else 0

    def _flatten(self, v: ir.Value | _Field, t: RelaxType | None) -> list[tuple[Any, RelaxType]]:
        if isinstance(t, TupleType):
            source = _source(v)  # a tuple built inside a dataflow block and yielded out of it
            owner = source.owner if isinstance(source, ir.OpResult) else None
            if owner is not None and owner.name == "relax.make_tuple":
                out = []
                for x in owner.operands:
                    out.extend(self._flatten(x, relax_type(x.type)))
                return out
            # another tuple (a call's result): its fields, resolved later through the value map
            return [x for i, f in enumerate(t.fields) for x in self._flatten(_Field(v, i), f)]
        assert t is not None
        return [(v, t)]

    def _return_op(self) -> ir.Operation:
        block = self.func.regions[0].blocks[0]
        last = list(block.operations)[-1].operation
        if last.name != "func.return":
            raise UnsupportedOpError(f"@{self.name}: the body must end with func.return")
        return last

    # -- body ----------------------------------------------------------------------------------------
    def write(self) -> str:
        self.bind_params()
        status = self.f.fresh("status")
        self.status = status
        planned = self.plan_outputs()
        self.params.append(f'{status}: memref<4xi64> {{{ROLE_ATTR} = "host"}}')
        self.allocate_storages()
        for op in list(self.func.regions[0].blocks[0].operations)[:-1]:
            self.visit(op.operation)
        returned = self.finish_outputs(planned)
        results = ", ".join(r.mlir for r in returned)
        lines = list(self.f.lines)
        if returned:
            lines.append(f"return {', '.join(r.name for r in returned)} : {results}")
        else:
            lines.append("return")
        signature = json.dumps(self.signature).replace("\\", "\\\\").replace('"', '\\"')
        head = (
            f"func.func @{self.name}({', '.join(self.params)})"
            + (f" -> ({results})" if returned else "")
            # host code is glue between kernels: LLVM's -O3 on it costs seconds for big models and gains nothing
            + f' attributes {{llvm.emit_c_interface, passthrough = ["noinline", "optnone"], {SIGNATURE_ATTR} = "{signature}"}} {{'
        )
        body = "\n".join("  " + x if not x.startswith("^") else x for x in lines + self.f.fail_blocks)
        return f"{head}\n{body}\n}}\n"

    def allocate_storages(self) -> None:
        """One byte buffer per storage of the memory plan (``relax-plan-memory``), held for the call.

        Each is allocated where it is first used (``_storage``), not at the entry: a check that branches
        (a match_cast, e.g. a guard on the inputs) before it then has no live buffer to carry across the
        branch, which ownership-based deallocation could only handle through an i1 memref (DESIGN.md 6)."""
        self.storages: list[tuple[str, str] | None] = []
        self.storage_sizes = memory_plan.read_storages(self.func)
        if not self.storage_sizes:
            return
        problem = memory_plan.check_plan(self.func, self.kernels)
        if problem:
            raise UnsupportedOpError(f"@{self.name}: invalid memory plan (relax.storages): {problem}")
        self.storages = [None] * len(self.storage_sizes)

    def _storage(self, storage: int) -> tuple[str, str]:
        """The buffer of planned storage ``storage``, allocated here at its first use."""
        allocated = self.storages[storage]
        if allocated is None:
            e = self.storage_sizes[storage]
            name = self.f.fresh("storage")
            mtype = f"memref<{e.value}xi8>" if e.is_const else "memref<?xi8>"
            size = "" if e.is_const else self.code.value(e)
            self.f.lines.append(f"{name} = memref.alloc({size}) {{alignment = 64 : i64}} : {mtype}")
            allocated = self.storages[storage] = (name, mtype)
        return allocated

    def _storage_view(self, storage: int, t: TensorType) -> str:
        """A destination tensor on a view of a planned storage (at offset 0)."""
        name, mtype = self._storage(storage)
        sizes = [self.code.value(x) for x in t.shape if not x.is_const]  # type: ignore[union-attr]
        view, d = self.f.fresh("view"), self.f.fresh("d")
        self.f.lines += [
            f"{view} = memref.view {name}[{self.code.const(0)}][{', '.join(sizes)}] : {mtype} to {memref_type(t)}",
            f"{d} = bufferization.to_tensor {view} restrict writable : {memref_type(t)} to {builtin_tensor(t)}",
        ]
        return d

    def finish_outputs(self, planned: list[tuple[Any, RelaxType, str | None]]) -> list[_Tensor]:
        returned: list[_Tensor] = []
        for v, t, dest in planned:
            value = self._field(v)
            if dest is None:
                returned.append(value)
            elif isinstance(t, TensorType):
                if getattr(value, "written_to", None) == dest:
                    continue
                self.f.lines.append(
                    f"bufferization.materialize_in_destination {value.name} in restrict writable {dest} : "
                    f"({value.mlir}, {memref_type(t)}) -> ()"
                )
            else:
                for j, name in enumerate(value.names):
                    as_i64 = self.f.fresh("i64_")
                    self.f.lines.append(f"{as_i64} = arith.index_cast {name} : index to i64")
                    self.f.lines.append(
                        f"memref.store {as_i64}, {dest}[{self.code.const(j)}] : memref<{len(value.names)}xi64>"
                    )
        return returned

    def _field(self, v: ir.Value | _Field) -> Any:
        if isinstance(v, _Field):
            value = self._field(v.tuple)
            assert isinstance(value, _Tuple)
            return value.fields[v.index]
        return self.lookup(v)

    def lookup(self, v: ir.Value) -> Any:
        if v in self.values:
            value = self.values[v]
            if isinstance(value, _Constant):  # materialized where used, see _Constant
                name = self.f.fresh("const")
                self.f.lines.append(f"{name} = {value.text}")
                return _Tensor(name, value.type)
            return value
        raise RelaxError(f"@{self.name}: value {v.get_name()} has no lowering")

    def visit(self, op: ir.Operation) -> None:
        name = op.name
        if name == "scf.execute_region" and DATAFLOW_ATTR in op.attributes:
            block = op.regions[0].blocks[0]
            inner = list(block.operations)
            for x in inner[:-1]:
                self.visit(x.operation)
            for r, y in zip(op.results, inner[-1].operation.operands):
                self.values[r] = (
                    self.values[y] if isinstance(self.values.get(y), _Constant) else self.lookup(y)
                )
            return
        if name in ("scf.if", "scf.while"):
            self.control_flow = True
            (self.lower_if if name == "scf.if" else self.lower_while)(op)
            return
        cls = op_class(op)
        if not hasattr(cls, "lower_host"):
            hint = " (run convert-relax-to-linalg first)" if hasattr(cls, "lower") else ""
            raise _OpError(op, f"'{name}' op cannot be lowered to host code{hint}")
        try:
            cls.lower_host(op.opview, self)  # type: ignore[union-attr]
        except _OpError:
            raise
        except RelaxError as e:
            raise _OpError(op, f"'{name}' op: {e}") from None

    # -- what ops' lower_host hooks use (relax_mlir.dialects.host_lowering.HostLowering) ---------------
    def bind(self, v: ir.Value, value: Any) -> None:
        self.values[v] = value

    def fresh(self, prefix: str) -> str:
        return self.f.fresh(prefix)

    def emit(self, line: str) -> None:
        self.f.lines.append(line)

    def tensor(self, t: TensorType, prefix: str = "t") -> _Tensor:
        return _Tensor(self.f.fresh(prefix), t)

    def ints(self, names: list[str], is_shape: bool) -> _Ints:
        return _Ints(names, is_shape)

    def tuple(self, fields: list[Any]) -> _Tuple:
        return _Tuple(fields)

    def dim(self, x: _Tensor, axis: int) -> str:
        return self._dim(x, axis)

    def element(self, dtype: str) -> str:
        return element(dtype)

    def location(self, op: ir.Operation) -> str:
        return _location(op)

    def cast(self, src: Any, target: RelaxType | None, op: ir.Operation) -> Any:
        return self._cast(src, target, op)

    def call_kernel(self, op: ir.Operation) -> None:
        callee = ir.FlatSymbolRefAttr(op.attributes["callee"]).value
        kernel = self.kernels.get(callee)
        if kernel is None:
            raise UnsupportedOpError(f"'relax.call_tir' op: callee @{callee} is not a kernel of this module")
        args, types = [], []
        for v in op.operands:
            x = self.lookup(v)
            if isinstance(x, _Tensor):
                args.append(x.name)
                types.append(x.mlir)
            elif isinstance(x, _Ints) and not x.is_shape:
                args.append(x.names[0])
                types.append("index")
            else:
                raise UnsupportedOpError("only tensor and prim arguments can be passed to kernels")
        outs = [relax_type(r.type) for r in op.results]
        allocating = len(kernel.inputs) == len(op.operands)
        inplace = memory_plan.inplace_operands(op)
        results = []
        for r, t in zip(op.results, outs):
            assert isinstance(t, TensorType)
            value = _Tensor(self.f.fresh("t"), t)
            if not allocating:
                dest = self.direct.get(r)
                if inplace[r.result_number] >= 0:  # the updated parameter's own buffer
                    d = self.lookup(op.operands[inplace[r.result_number]]).name
                elif dest is not None:
                    d = self.f.fresh("d")
                    self.f.lines.append(
                        f"{d} = bufferization.to_tensor {dest} restrict writable : {memref_type(t)} to {value.mlir}"
                    )
                    value.written_to = dest  # type: ignore[attr-defined]
                elif (storage := memory_plan.storage_of(op, r.result_number)) >= 0:
                    d = self._storage_view(storage, t)
                else:
                    d = self.f.fresh("empty")
                    sizes = [self.code.value(x) for x in t.shape if not x.is_const]  # type: ignore[union-attr]
                    # in a branch or loop body, an allocation CSE cannot merge with one outside: a buffer
                    # allocated outside and yielded by one branch defeats the deallocation's splitting
                    empty = "bufferization.alloc_tensor" if self.depth else "tensor.empty"
                    self.f.lines.append(f"{d} = {empty}({', '.join(sizes)}) : {value.mlir}")
                args.append(d)
                types.append(value.mlir)
            results.append(value)
            self.values[r] = value
        lhs = ", ".join(x.name for x in results)
        rtypes = ", ".join(x.mlir for x in results)
        self.f.lines.append(
            f"{lhs} = func.call @{callee}({', '.join(args)}) : ({', '.join(types)}) -> ({rtypes})"
        )

    def call_library(self, op: ir.Operation) -> None:
        """Call a library function (ABI in ``lowering/library.py``): buffers in, destination buffers filled."""
        callee = ir.StringAttr(op.attributes["callee"]).value
        args = [self.lookup(v) for v in op.operands]
        arg_types = [
            x.type if isinstance(x, _Tensor) else relax_type(v.type) for x, v in zip(args, op.operands)
        ]
        outs = [relax_type(r.type) for r in op.results]
        fn = lib.instantiate(callee, arg_types, outs)  # type: ignore[arg-type]
        self.library.setdefault(fn.symbol, fn)
        call_args = []
        for x, param in zip(args, fn.params):
            if isinstance(x, _Tensor):
                buf = self.f.fresh("buf")
                self.f.lines.append(
                    f"{buf} = bufferization.to_buffer {x.name} read_only : {x.mlir} to {memref_type(x.type)}"
                )
                call_args.append(self._memref_cast(buf, memref_type(x.type), param))
            elif isinstance(x, _Ints) and not x.is_shape:
                call_args.append(x.names[0])
            else:
                raise UnsupportedOpError("only tensor and prim arguments can be passed to library functions")
        written = []
        for r, t, param in zip(op.results, outs, fn.params[len(args) :]):
            assert isinstance(t, TensorType)
            value, mem = _Tensor(self.f.fresh("t"), t), memref_type(t)
            dest = self.direct.get(r)
            if dest is None:
                dest = self.f.fresh("buf")
                sizes = [self.code.value(x) for x in t.shape if not x.is_const]  # type: ignore[union-attr]
                self.f.lines.append(
                    f"{dest} = memref.alloc({', '.join(sizes)}) {{alignment = 64 : i64}} : {mem}"
                )
            else:
                value.written_to = dest  # type: ignore[attr-defined]
            call_args.append(self._memref_cast(dest, mem, param))
            written.append((r, value, dest, mem))
        self.f.lines.append(
            f"func.call @{fn.symbol}({', '.join(call_args)}) : ({', '.join(fn.params)}) -> ()"
        )
        for r, value, dest, mem in written:
            self.f.lines.append(
                f"{value.name} = bufferization.to_tensor {dest} restrict writable : {mem} to {value.mlir}"
            )
            self.values[r] = value

    def _memref_cast(self, buf: str, have: str, want: str) -> str:
        if have == want:
            return buf
        cast = self.f.fresh("buf")
        self.f.lines.append(f"{cast} = memref.cast {buf} : {have} to {want}")
        return cast

    def dynamic_types(self) -> list[str]:
        return [builtin_tensor(_t(o["type"])) for o in self.signature["outputs"] if o["kind"] == "returned"]

    def constant(self, attr: ir.Attribute, t: TensorType) -> _Constant:
        """A constant, written where it is used (see ``_Constant``)."""
        if is_resource_elements(attr) and t.dtype is not None and element(t.dtype) == t.dtype:
            # a dense_resource blob cannot go through text: a placeholder gets the attribute back
            # after parsing (``_restore_resources``)
            zero = "0.0" if is_float(t.dtype) else "0"
            text = f"arith.constant {{{RESOURCE_ATTR} = {len(self.resources)} : i64}} dense<{zero}> : {builtin_tensor(t)}"
            self.resources.append(attr)
        else:
            text = f"arith.constant {_storage_constant(str(attr), t)}"
        return _Constant(text, t)


def _restore_resources(funcs: list[ir.Operation], resources: list[ir.Attribute]) -> None:
    """Put the dense_resource attributes back into their placeholder constants."""

    def visit(op: ir.Operation) -> ir.WalkResult:
        if op.name == "arith.constant" and RESOURCE_ATTR in op.attributes:
            op.attributes["value"] = resources[ir.IntegerAttr(op.attributes[RESOURCE_ATTR]).value]
            del op.attributes[RESOURCE_ATTR]
        return ir.WalkResult.ADVANCE

    for f in funcs:
        f.walk(visit)


def _storage_constant(text: str, t: TensorType) -> str:
    """A constant's ``dense<...> : tensor<...>`` text in the element type kernels store ``t``'s dtype as
    (``element``): unsigned ints become signless (same bits, literals still fit), booleans bytes."""
    body, _, _ = text.rpartition(" : ")
    storage = builtin_tensor(t)
    if t.dtype is None or element(t.dtype) == t.dtype:
        return text
    if t.dtype == "i1" and body.startswith('dense<"0x'):  # bit-packed booleans -> one byte each
        n = int(np.prod([d.value for d in t.shape])) if t.shape else 1
        packed = np.frombuffer(bytes.fromhex(body[len('dense<"0x') : -2]), np.uint8)
        unpacked = np.unpackbits(packed, bitorder="little")[: max(n, 1)]
        body = f'dense<"0x{unpacked.tobytes().hex().upper()}">'
    elif t.dtype == "i1":
        body = body.replace("true", "1").replace("false", "0")
    return f"{body} : {storage}"


def _source(v: ir.Value) -> ir.Value:
    """The value a dataflow block's result stands for (the yielded value), through nested blocks."""
    while isinstance(v, ir.OpResult) and v.owner.name == "scf.execute_region":
        op = v.owner
        if DATAFLOW_ATTR not in op.attributes:
            break
        block = op.regions[0].blocks[0]
        v = list(block.operations)[-1].operation.operands[v.result_number]
    return v


def _root(v: ir.Value) -> ir.Value:
    """The value ``v`` stands for through dataflow results and match_casts."""
    while True:
        v = _source(v)
        if not (isinstance(v, ir.OpResult) and v.owner.name == "relax.match_cast"):
            return v
        v = v.owner.operands[0]


def _root_param(v: ir.Value) -> ir.BlockArgument | None:
    """The function parameter ``v`` stands for (through dataflow results and match_casts), if any."""
    r = _root(v)
    return r if isinstance(r, ir.BlockArgument) else None


def _inplace_params(
    func: ir.Operation, functions: dict[str, tuple[ir.FunctionType, set[int]]] | None = None
) -> set[int]:
    """Indices of the parameters that call_tirs update in place (``relax.inplace``), or that are passed to
    a called relax function's in-place parameters (``functions``: each function's type, in-place params).

    Such an operand must be a parameter (through match_casts) that nothing else computes with: the
    kernel writes into the caller's array, and any other reader of the old value would make
    bufferization copy it, silently losing the update.
    """
    entry = func.regions[0].blocks[0]
    functions = functions or {}
    found: set[int] = set()

    updates: list[tuple[ir.Operation, int]] = []  # (op, operand updated in place)
    readers: dict[ir.Value, int] = {}

    def visit(op: ir.Operation) -> ir.WalkResult:
        if getattr(op_class(op), "DPS_CALL", False) or op.name == "relax.call":
            for v in op.operands:
                readers[_root(v)] = readers.get(_root(v), 0) + 1
        if getattr(op_class(op), "DPS_CALL", False) and INPLACE_ATTR in op.attributes:
            updates.extend((op, j) for j in memory_plan.inplace_operands(op) if j >= 0)
        elif op.name == "relax.call":
            _, inplace = functions.get(ir.FlatSymbolRefAttr(op.attributes["callee"]).value, (None, set()))
            updates.extend((op, j) for j in sorted(inplace) if j < len(op.operands))
        return ir.WalkResult.ADVANCE

    func.walk(visit, ir.WalkOrder.PRE_ORDER)
    for op, j in updates:
        v = _root(op.operands[j])
        callee = ir.FlatSymbolRefAttr(op.attributes["callee"]).value
        if not (isinstance(v, ir.BlockArgument) and v.owner == entry):
            raise _OpError(
                op,
                f"'{op.name}' op: @{callee} updates operand #{j} in place, so it must be a "
                "parameter of the function",
            )
        if readers[v] > 1:
            raise _OpError(
                op,
                f"'{op.name}' op: @{callee} updates parameter #{v.arg_number} in place, but "
                "other ops also read it; read the updated value (this op's result) instead",
            )
        found.add(v.arg_number)
    return found


def _t(text: str) -> TensorType:
    t = parse_type(text)
    assert isinstance(t, TensorType)
    return t


def _is_relax_function(op: ir.Operation) -> bool:
    if op.name != "func.func":
        return False
    ftype = ir.FunctionType(ir.TypeAttr(op.attributes["function_type"]).value)
    return any(relax_type(t) is not None for t in (*ftype.inputs, *ftype.results))


@register_pass("relax-lower-host")
class LowerHost:
    """Rewrite relax functions into func code on memrefs that allocates buffers and calls kernels."""

    def run(self, module: ir.Operation) -> None:
        body = module.regions[0].blocks[0]
        funcs = [op.operation for op in body.operations if op.operation.name == "func.func"]
        kernels = {
            ir.StringAttr(f.attributes["sym_name"]).value: ir.FunctionType(
                ir.TypeAttr(f.attributes["function_type"]).value
            )
            for f in funcs
            if not _is_relax_function(f)
        }
        texts, old = [], []
        resources: list[ir.Attribute] = []
        library: dict[str, lib.LibraryFunction] = {}
        checks: list[str] = []  # module-wide: a check failing in a called function reports its own message
        functions = {}
        for f in funcs:
            if _is_relax_function(f) and f.regions[0].blocks:
                name = ir.StringAttr(f.attributes["sym_name"]).value
                functions[name] = (ir.FunctionType(ir.TypeAttr(f.attributes["function_type"]).value), set())
        if any(
            _calls(f) for f in funcs
        ):  # a caller's parameter passed to a callee's in-place one is in place
            changed = True
            while changed:  # to a fixed point over the call graph (the sets only grow)
                changed = False
                for f in funcs:
                    name = ir.StringAttr(f.attributes["sym_name"]).value
                    if name in functions:
                        try:
                            found = _inplace_params(f, functions)
                        except _OpError as e:
                            e.op.location.emit_error(e.message)
                            raise PassFailed("host lowering failed") from None
                        changed |= not found <= functions[name][1]
                        functions[name][1].update(found)
        for f in funcs:
            if not _is_relax_function(f):
                continue
            if not f.regions[0].blocks:
                name = ir.StringAttr(f.attributes["sym_name"]).value
                f.location.emit_error(f"relax function @{name} is declared without a body; define it")
                raise PassFailed("host lowering failed")
            try:
                texts.append(_HostWriter(f, kernels, resources, library, functions, checks).write())
            except _OpError as e:
                e.op.location.emit_error(e.message)
                raise PassFailed("host lowering failed") from None
            except RelaxError as e:
                f.location.emit_error(str(e))
                raise PassFailed("host lowering failed") from None
            old.append(f)
        if not texts:
            return
        declarations = [
            f"func.func private @{name}({', '.join(str(t) for t in ft.inputs)}) -> ({', '.join(str(t) for t in ft.results)})"
            for name, ft in kernels.items()
        ]
        declarations += [f"func.func private @{fn.symbol}({', '.join(fn.params)})" for fn in library.values()]
        parsed = ir.Module.parse("\n".join(declarations + texts))
        for f in old:
            f.erase()
        new_funcs = [op.operation for op in parsed.body.operations if len(op.operation.regions[0].blocks)]
        _restore_resources(new_funcs, resources)
        if len(texts) > 1:
            for f in new_funcs:
                _share_checks(f, checks)
        for f in new_funcs:
            body.append(f)
        _append_library(body, library, set(kernels))


def _is_private(f: ir.Operation) -> bool:
    return (
        "sym_visibility" in f.attributes and ir.StringAttr(f.attributes["sym_visibility"]).value == "private"
    )


def _calls(f: ir.Operation) -> bool:
    found = []

    def visit(op: ir.Operation) -> ir.WalkResult:
        if op.name == "relax.call":
            found.append(op)
            return ir.WalkResult.INTERRUPT
        return ir.WalkResult.ADVANCE

    f.walk(visit)
    return bool(found)


def _share_checks(f: ir.Operation, checks: list[str]) -> None:
    """Give a host function the module-wide list of checks (a failure code may come from a callee)."""
    if SIGNATURE_ATTR not in f.attributes:
        return
    signature = json.loads(ir.StringAttr(f.attributes[SIGNATURE_ATTR]).value)
    signature["checks"] = checks
    f.attributes[SIGNATURE_ATTR] = ir.StringAttr.get(json.dumps(signature))


def _append_library(body: ir.Block, library: dict[str, lib.LibraryFunction], taken: set[str]) -> None:
    """Insert the called library functions (definitions or external declarations) and what they call."""
    texts = dict.fromkeys(x for fn in library.values() for x in fn.externs)
    texts.update(dict.fromkeys(fn.text for fn in library.values()))
    if not texts:
        return
    for op in ir.Module.parse("\n".join(texts)).body.operations:
        name = ir.StringAttr(op.operation.attributes["sym_name"]).value
        if name in taken:
            raise PassFailed(f"library function @{name} clashes with a function of the module")
        body.append(op.operation)

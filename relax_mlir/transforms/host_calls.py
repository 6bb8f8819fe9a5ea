"""``relax.call`` lowering of ``relax-lower-host``: a call to another relax function's host code, with its
arguments' dims checked, its destinations allocated and its flattened results regrouped."""

from __future__ import annotations

from typing import Any

from mlir import ir

from relax_mlir.dialects.bind import Binding, bind, instantiate
from relax_mlir.dialects.ops.call import callee_signature
from relax_mlir.dialects.types import (
    PrimType,
    RelaxType,
    ShapeType,
    TensorType,
    TupleType,
    bare_symbols,
    relax_type,
)
from relax_mlir.errors import UnsupportedOpError
from relax_mlir.lowering.kernel import builtin_tensor
from relax_mlir.shape_infer.expr import Expr, sym
from relax_mlir.transforms.host_values import _Ints, _location, _Tensor, _Tuple, memref_type


class CallLowering:
    """``relax.call``, mixed into the host writer (``lower_host._HostWriter``): uses its ``functions``,
    ``lookup``, ``inplace_buffer``, ``_dim``, ``_memref_cast`` and the checks of ``host_checks.CheckLowering``."""

    def call_function(self, op: ir.Operation) -> None:
        """Call another relax function's host code (``relax.call``): the calling convention above.

        The callee's symbols are bound from the arguments (``dialects/bind.py``); those the types cannot
        bind get fresh names read from the arguments' dims at run time. Each argument dim that is not known
        statically to match the callee's parameter is checked (branching to a failure, as a match_cast does)
        before the call. Destinations are allocated here from the instantiated result types; the callee gets
        this function's status buffer, so a check failing inside it is reported (the codes are module-wide)."""
        callee = ir.FlatSymbolRefAttr(op.attributes["callee"]).value
        where = f"{_location(op)}relax.call @{callee}"
        target = self.functions.get(callee)
        if target is None:
            raise UnsupportedOpError(f"callee @{callee} is not a relax function of this module")
        ftype, inplace = target
        params, results = callee_signature(ftype)
        binding = bind(params, [relax_type(v.type) for v in op.operands])
        full = dict(binding.subst)
        for s in sorted(binding.unbound):
            full[s] = sym(f"_{s}.{self.f.fresh('c')[1:]}")
        every = Binding(full)
        args = [(self.lookup(v), p, instantiate(p, every)) for v, p in zip(op.operands, params)]
        for x, _, inst in args:  # symbols the types could not bind: read from the arguments
            for actual, d, _ in self._arg_dims(x, inst):
                if d is not None and len(d.free_symbols) == 1 and str(d) in d.free_symbols:
                    self.env.setdefault(str(d), actual)
        call_args, call_types = [], []
        checks_before = len(self.f.checks)
        for i, (x, p, inst) in enumerate(args):
            for j, (actual, d, static) in enumerate(self._arg_dims(x, inst)):
                if d is not None and static != d:
                    self._check_dim(actual, d, f"{where}: argument #{i} dim {j}")
            if i in inplace:  # the callee writes into it: this function's own in-place parameter's buffer
                self._pass_inplace(op.operands[i], p, call_args, call_types, where)
            else:
                self._pass_argument(x, p, call_args, call_types)
        outs: list[tuple[str, RelaxType, str | None]] = []
        for r in _flatten_types(results):
            inst = instantiate(r, every)
            if isinstance(r, TensorType):
                if not all(d is not None and d.free_symbols <= _bare(params) for d in r.shape or ()):
                    outs.append(("returned", r, None))
                    continue
                mem = memref_type(r)  # type: ignore[arg-type]
                dest = self.f.fresh("buf")
                sizes = [  # the callee's dynamic dims, in this function's values
                    self.code.value(di)  # type: ignore[arg-type]
                    for dr, di in zip(r.shape, inst.shape)  # type: ignore[arg-type, union-attr]
                    if not dr.is_const  # type: ignore[union-attr]
                ]
                self.f.lines.append(
                    f"{dest} = memref.alloc({', '.join(sizes)}) {{alignment = 64 : i64}} : {mem}"
                )
                call_args.append(dest)
                call_types.append(mem)
                outs.append(("tensor", r, dest))
            elif isinstance(r, (PrimType, ShapeType)):
                if isinstance(r, ShapeType) and r.values is None:
                    raise UnsupportedOpError(f"{where}: result {r} needs a known rank")
                n = 1 if isinstance(r, PrimType) else len(r.values)  # type: ignore[arg-type]
                dest = self.f.fresh("buf")
                self.f.lines.append(f"{dest} = memref.alloca() : memref<{n}xi64>")
                call_args.append(dest)
                call_types.append(f"memref<{n}xi64>")
                outs.append(("ints", r, dest))
            else:
                raise UnsupportedOpError(f"{where}: result of type {r} cannot be returned from compiled code")
        call_args.append(self.status)
        call_types.append("memref<4xi64>")
        returned = [(self.f.fresh("ret"), builtin_tensor(r)) for kind, r, _ in outs if kind == "returned"]
        rtypes = ", ".join(t for _, t in returned)
        text = f"func.call @{callee}({', '.join(call_args)}) : ({', '.join(call_types)}) -> ({rtypes})"
        if self.depth and len(self.f.checks) > checks_before:
            self._guarded_call(text, returned)
        else:
            lhs = f"{', '.join(n for n, _ in returned)} = " if returned else ""
            self.f.lines.append(lhs + text)
        values, next_returned = [], iter(returned)
        for kind, r, dest in outs:
            if kind == "ints":
                names = []
                n = 1 if isinstance(r, PrimType) else len(r.values)  # type: ignore[arg-type, union-attr]
                for j in range(n):
                    word, name = self.f.fresh("i64_"), self.f.fresh("int")
                    self.f.lines += [
                        f"{word} = memref.load {dest}[{self.code.const(j)}] : memref<{n}xi64>",
                        f"{name} = arith.index_cast {word} : i64 to index",
                    ]
                    names.append(name)
                values.append(_Ints(names, isinstance(r, ShapeType)))
                continue
            if kind == "tensor":
                name = self.f.fresh("t")
                self.f.lines.append(
                    f"{name} = bufferization.to_tensor {dest} restrict writable : {memref_type(r)} to "
                    f"{builtin_tensor(r)}"
                )
            else:
                name = next(next_returned)[0]
            values.append(_Tensor(name, r))
        flat = iter(values)
        for res in op.results:
            self.values[res] = self._regroup(relax_type(res.type), flat)

    def _guarded_call(self, text: str, returned: list[tuple[str, str]]) -> None:
        """Inside a branch or loop body a failed argument check is only recorded (no branch out of a region):
        the call runs only while the status holds no failure; otherwise its returned tensors are empty."""
        word, zero, ok = self.f.fresh("st"), self.f.fresh("st"), self.f.fresh("ok")
        self.f.lines += [
            f"{word} = memref.load {self.status}[{self.code.const(0)}] : memref<4xi64>",
            f"{zero} = arith.constant 0 : i64",
            f"{ok} = arith.cmpi eq, {word}, {zero} : i64",
        ]
        if not returned:
            self.f.lines += [f"scf.if {ok} {{", f"  {text}", "}"]
            return
        inner = [self.f.fresh("ret") for _ in returned]
        types = ", ".join(t for _, t in returned)
        self.f.lines += [
            f"{', '.join(n for n, _ in returned)} = scf.if {ok} -> ({types}) {{",
            f"  {', '.join(inner)} = {text}",
            f"  scf.yield {', '.join(inner)} : {types}",
            "} else {",
        ]
        empties = []
        for _, t in returned:
            name, zero_index = self.f.fresh("empty"), self.code.const(0)
            self.f.lines.append(f"  {name} = tensor.empty({', '.join([zero_index] * t.count('?'))}) : {t}")
            empties.append(name)
        self.f.lines += [f"  scf.yield {', '.join(empties)} : {types}", "}"]

    def _regroup(self, t: RelaxType | None, flat: Any) -> Any:
        """A call's flattened results as the caller's values (tuples rebuilt; tensors cast to its types)."""
        if isinstance(t, TupleType):
            return _Tuple([self._regroup(f, flat) for f in t.fields])
        value = next(flat)
        if not isinstance(value, _Tensor):
            return value
        assert isinstance(t, TensorType)
        want = TensorType(t.shape, t.dtype or value.type.dtype)
        if builtin_tensor(want) == value.mlir:
            return _Tensor(value.name, want)
        name = self.f.fresh("cast")
        self.f.lines.append(f"{name} = tensor.cast {value.name} : {value.mlir} to {builtin_tensor(want)}")
        return _Tensor(name, want)

    def _arg_dims(self, x: Any, inst: RelaxType) -> list[tuple[str, Expr | None, Expr | None]]:
        """(actual index name, instantiated parameter dim, the argument's static dim) of each dim."""
        if isinstance(x, _Tuple):
            assert isinstance(inst, TupleType)
            return [d for f, t in zip(x.fields, inst.fields) for d in self._arg_dims(f, t)]
        if isinstance(x, _Tensor):
            if not isinstance(inst, TensorType) or inst.shape is None:
                return []
            assert x.type.shape is not None
            if len(inst.shape) != len(x.type.shape):
                raise UnsupportedOpError(f"rank {len(x.type.shape)} argument for parameter {inst}")
            return [(self._dim(x, a), d, x.type.shape[a]) for a, d in enumerate(inst.shape)]
        if isinstance(x, _Ints):
            dims = [inst.value] if isinstance(inst, PrimType) else getattr(inst, "values", None) or []
            return [(name, d, None) for name, d in zip(x.names, dims)]
        return []

    def _pass_inplace(self, v: ir.Value, p: RelaxType, args: list[str], types: list[str], where: str) -> None:
        """Pass the buffer of the in-place parameter ``v`` stands for (``_inplace_params`` checked that it is
        one, read by nothing else), so the callee's writes land in this function's caller's array."""
        held = self.inplace_buffer(v)
        if held is None or not isinstance(p, TensorType):
            raise UnsupportedOpError(f"{where}: an argument updated in place must be a tensor parameter")
        memref, have = held
        want = memref_type(p)
        args.append(self._memref_cast(memref, have, want))
        types.append(want)

    def _pass_argument(self, x: Any, p: RelaxType, args: list[str], types: list[str]) -> None:
        """Append the callee's parameter(s) for value ``x``: a buffer per tensor, an index per int."""
        if isinstance(x, _Tuple):
            assert isinstance(p, TupleType)
            for f, t in zip(x.fields, p.fields):
                self._pass_argument(f, t, args, types)
        elif isinstance(x, _Tensor):
            assert isinstance(p, TensorType)
            want = memref_type(TensorType(p.shape, p.dtype or x.type.dtype))
            buf = self.f.fresh("buf")
            self.f.lines.append(
                f"{buf} = bufferization.to_buffer {x.name} read_only : {x.mlir} to {memref_type(x.type)}"
            )
            args.append(self._memref_cast(buf, memref_type(x.type), want))
            types.append(want)
        elif isinstance(x, _Ints):
            args.extend(x.names)
            types.extend("index" for _ in x.names)
        else:
            raise UnsupportedOpError(f"a value of type {p} cannot be passed to a relax function")


def _flatten_types(types: list[RelaxType]) -> list[RelaxType]:
    """Tuple results flattened, as a host function's outputs are."""
    out: list[RelaxType] = []
    for t in types:
        out.extend(_flatten_types(list(t.fields)) if isinstance(t, TupleType) else [t])
    return out


def _bare(params: list[RelaxType]) -> set[str]:
    """The symbols a function's parameters define (what its host code reads from its inputs)."""
    out: set[str] = set()
    for t in params:
        out |= bare_symbols(t)
    return out

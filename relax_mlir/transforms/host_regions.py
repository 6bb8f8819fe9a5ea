"""Control flow of ``relax-lower-host``: ``scf.if`` / ``scf.while`` on host values, whose results are carried
across the region boundary as flat SSA values (tensors, and one ``index`` per prim or shape dim)."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

from mlir import ir

from relax_mlir.dialects.types import PrimType, RelaxType, ShapeType, TensorType, TupleType, relax_type
from relax_mlir.lowering.kernel import builtin_tensor
from relax_mlir.transforms.host_values import _Ints, _OpError, _Tensor, _Tuple


class RegionLowering:
    """``scf.if`` / ``scf.while``, mixed into the host writer (``lower_host._HostWriter``): uses its ``visit``,
    ``lookup``, ``values``, function text ``f``, index code ``code`` and ``status`` buffer."""

    @contextlib.contextmanager
    def _region(self) -> Iterator[None]:
        """A branch or loop body: symbols, dims and index values computed inside stay inside."""
        saved = dict(self.env), dict(self.dims), dict(self.code._cache)
        self.depth += 1
        try:
            yield
        finally:
            self.depth -= 1
            self.env, self.dims = saved[0], saved[1]
            self.code._cache = saved[2]

    def _flat_types(self, t: RelaxType | None, op: ir.Operation) -> list[str]:
        """The SSA types a value of relax type ``t`` is carried in across a region boundary."""
        if isinstance(t, TensorType):
            return [builtin_tensor(t)]
        if isinstance(t, PrimType):
            return ["index"]
        if isinstance(t, ShapeType) and t.values is not None:
            return ["index"] * len(t.values)
        if isinstance(t, TupleType):
            return [x for f in t.fields for x in self._flat_types(f, op)]
        raise _OpError(
            op, f"'{op.name}' op: a value of type {t} cannot cross a branch or loop in compiled code"
        )

    def _flat(self, v: ir.Value, t: RelaxType | None, op: ir.Operation) -> list[str]:
        """SSA names of host value ``v`` as a value of relax type ``t`` (tensors cast to its builtin type)."""
        return self._flat_value(self.lookup(v), t, op)

    def _flat_value(self, x: Any, t: RelaxType | None, op: ir.Operation) -> list[str]:
        if isinstance(x, _Tuple) and isinstance(t, TupleType):
            return [n for f, ft in zip(x.fields, t.fields) for n in self._flat_value(f, ft, op)]
        if isinstance(x, _Tensor) and isinstance(t, TensorType):
            want = builtin_tensor(t)
            if x.mlir == want:
                return [x.name]
            name = self.f.fresh("cast")
            self.f.lines.append(f"{name} = tensor.cast {x.name} : {x.mlir} to {want}")
            return [name]
        if isinstance(x, _Ints):
            return list(x.names)
        self._flat_types(t, op)  # raises for kinds that cannot cross
        raise _OpError(
            op, f"'{op.name}' op: a value of type {t} cannot cross a branch or loop in compiled code"
        )

    def _unflat(self, names: list[str], t: RelaxType | None) -> Any:
        """The host value of relax type ``t`` held in SSA ``names`` (consumed from the front)."""
        if isinstance(t, TupleType):
            return _Tuple([self._unflat(names, f) for f in t.fields])
        if isinstance(t, TensorType):
            return _Tensor(names.pop(0), t)
        if isinstance(t, PrimType):
            return _Ints([names.pop(0)], False)
        assert isinstance(t, ShapeType) and t.values is not None
        return _Ints([names.pop(0) for _ in t.values], True)

    def _bind_all(self, values: list[ir.Value], names: list[str]) -> None:
        names = list(names)
        for v in values:
            self.values[v] = self._unflat(names, relax_type(v.type))

    def _region_body(self, block: ir.Block) -> ir.Operation:
        """Lower a region's ops but its terminator, which it returns."""
        ops = list(block.operations)
        for inner in ops[:-1]:
            self.visit(inner.operation)
        return ops[-1].operation

    def _terminator(
        self, keyword: str, values: list[ir.Value], types: list[RelaxType | None], op: ir.Operation
    ) -> str:
        names = [n for v, t in zip(values, types) for n in self._flat(v, t, op)]
        flat = [x for t in types for x in self._flat_types(t, op)]
        return f"{keyword} {', '.join(names)} : {', '.join(flat)}" if names else keyword

    def _unless_failed(self, cond: str) -> str:
        """``cond`` and no check has failed yet: a check inside a loop records its failure and the code goes
        on, so the loop stops at the end of the iteration that failed."""
        status, zero, ok, both = (self.f.fresh("st") for _ in range(4))
        self.f.lines += [
            f"{status} = memref.load {self.status}[{self.code.const(0)}] : memref<4xi64>",
            f"{zero} = arith.constant 0 : i64",
            f"{ok} = arith.cmpi eq, {status}, {zero} : i64",
            f"{both} = arith.andi {cond}, {ok} : i1",
        ]
        return both

    def lower_if(self, op: ir.Operation) -> None:
        """``scf.if`` on host values; results whose size differs per branch are tensors of unknown dims."""
        cond = self.lookup(op.operands[0])
        if not isinstance(cond, str):
            raise _OpError(op, "'scf.if' op: the condition must come from relax.condition")
        types = [relax_type(r.type) for r in op.results]
        flat = [x for t in types for x in self._flat_types(t, op)]
        name = self.f.fresh("if")
        head = f"{name}:{len(flat)} = " if flat else ""
        self.f.lines.append(f"{head}scf.if {cond} -> ({', '.join(flat)}) {{" if flat else f"scf.if {cond} {{")
        for k, region in enumerate(op.regions):
            if not len(region.blocks):
                continue
            if k:
                self.f.lines.append("} else {")
            with self._region():
                term = self._region_body(region.blocks[0])
                self.f.lines.append(self._terminator("scf.yield", list(term.operands), types, op))
        self.f.lines.append("}")
        self._bind_all(list(op.results), [f"{name}#{i}" for i in range(len(flat))])

    def lower_while(self, op: ir.Operation) -> None:
        """``scf.while`` on host values: the carried values (tensors whose size may change per iteration,
        prim and shape values) are SSA values of the loop; the condition region forwards them to the body."""
        before, after = op.regions[0].blocks[0], op.regions[1].blocks[0]
        carried = [relax_type(a.type) for a in before.arguments]
        types = [relax_type(r.type) for r in op.results]
        inits = [n for v, t in zip(op.operands, carried) for n in self._flat(v, t, op)]
        flat_in = [x for t in carried for x in self._flat_types(t, op)]
        flat_out = [x for t in types for x in self._flat_types(t, op)]
        args = [self.f.fresh("wa") for _ in flat_in]
        name = self.f.fresh("while")
        head = f"{name}:{len(flat_out)} = " if flat_out else ""
        pairs = ", ".join(f"{a} = {i}" for a, i in zip(args, inits))
        self.f.lines.append(
            f"{head}scf.while ({pairs}) : ({', '.join(flat_in)}) -> ({', '.join(flat_out)}) {{"
        )
        with self._region():
            self._bind_all(list(before.arguments), args)
            term = self._region_body(before)
            cond = self.lookup(term.operands[0])
            if not isinstance(cond, str):
                raise _OpError(op, "'scf.while' op: the condition must come from relax.condition")
            cond = self._unless_failed(cond)
            self.f.lines.append(
                self._terminator(f"scf.condition({cond})", list(term.operands)[1:], types, op)
            )
        body_args = [self.f.fresh("wb") for _ in flat_out]
        self.f.lines.append("} do {")
        self.f.lines.append(f"^bb0({', '.join(f'{a}: {t}' for a, t in zip(body_args, flat_out))}):")
        with self._region():
            self._bind_all(list(after.arguments), body_args)
            term = self._region_body(after)
            self.f.lines.append(self._terminator("scf.yield", list(term.operands), carried, op))
        self.f.lines.append("}")
        self._bind_all(list(op.results), [f"{name}#{i}" for i in range(len(flat_out))])

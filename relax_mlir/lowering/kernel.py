"""Writing ``call_tir`` kernels: functions on builtin tensors, as MLIR text, one per op instance.

An op class lowers itself with a ``lower(k)`` classmethod that writes the kernel body through a
``KernelBuilder``::

    @classmethod
    def lower(cls, k: KernelBuilder) -> list[str]:
        x, out = k.ins[0], k.outs[0]
        rank = len(out.shape)
        [r] = k.generic([x], [out], [identity(rank)] * 2, ["parallel"] * rank,
                        lambda a: [k.scalar(f"math.exp {a[0]}", out.dtype)])
        return [r]

The kernel takes the op's operands, then index values for symbols it needs but cannot read from a
tensor dim, then one destination tensor per result (``k.outs``), and returns the results. When a
result dim is unknown (data-dependent ops such as ``unique``) the kernel allocates its own results
instead: ``k.allocating`` is True and reading ``k.outs`` is an error (``k.destination(i)`` allocates).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from relax_mlir.dialects.types import DTYPE_BYTES, PrimType, RelaxType, TensorType, type_problem
from relax_mlir.errors import UnsupportedOpError
from relax_mlir.lowering.index_code import IndexCode
from relax_mlir.shape_infer.expr import Expr, as_expr

FLOAT_TYPES = frozenset({"f16", "bf16", "f32", "f64"})


def is_float(dtype: str) -> bool:
    return dtype in FLOAT_TYPES


def is_unsigned(dtype: str) -> bool:
    return dtype.startswith("ui")


def unsigned_order(dtype: str) -> bool:
    """True when ``dtype`` compares and extends as unsigned (ui8, and booleans stored as bytes)."""
    return dtype == "i1" or is_unsigned(dtype)


def element(dtype: str) -> str:
    """The builtin element type kernels store a relax dtype as.

    Unsigned ints are signless in arith. Booleans are stored as bytes (i8 holding 0 or 1, numpy's
    layout): MLIR 22's memref-to-LLVM lowering aborts on stores of i1. Kernels read a boolean with
    ``arith.cmpi ne, %b, 0`` (``trunci`` makes LLVM take seconds per kernel) and write with ``arith.extui``.
    """
    if dtype in ("i1", "i2", "i4", "ui2", "ui4"):  # sub-byte ints: one byte each, value in the low bits
        return "i8"
    return "i" + dtype[2:] if dtype.startswith("ui") else dtype


SUB_BYTE_INTS = {
    "i2": 2,
    "i4": 4,
    "ui2": 2,
    "ui4": 4,
}  # relax dtype -> bits (stored as bytes, ml_dtypes' layout)


def builtin_tensor(t: TensorType, what: str = "value") -> str:
    """The builtin tensor type of a relax tensor type (symbolic dims become ``?``); an error for static dims
    whose size overflows int64 (MLIR's layout computations abort on them), e.g. a kernel's own tensors."""
    if t.shape is None:
        raise UnsupportedOpError(
            f"cannot lower {what} of unknown rank {t}: state its rank with relax.match_cast"
        )
    if t.dtype is None:
        raise UnsupportedOpError(f"cannot lower {what} of unknown dtype {t}: state it with relax.match_cast")
    # kernels' own tensors may hold index values (8 bytes here), which relax tensors do not
    problem = type_problem(t if t.dtype in DTYPE_BYTES else TensorType(t.shape, "i64"))
    if problem is not None:
        raise UnsupportedOpError(f"cannot lower {what} {t}: {problem}")
    dims = ["?" if d is None or not d.is_const else str(d.value) for d in t.shape]
    return "tensor<" + "".join(d + "x" for d in dims) + element(t.dtype) + ">"


def identity(rank: int) -> str:
    """The identity affine map of ``rank`` dims, e.g. ``(d0, d1) -> (d0, d1)``."""
    ds = ", ".join(f"d{i}" for i in range(rank))
    return f"({ds}) -> ({ds})"


@dataclass
class KernelValue:
    """A kernel argument (or result): its SSA name, relax type and builtin type."""

    name: str
    type: RelaxType
    mlir: str

    @property
    def shape(self) -> tuple[Expr | None, ...]:
        assert isinstance(self.type, TensorType) and self.type.shape is not None
        return self.type.shape

    @property
    def dtype(self) -> str:
        assert isinstance(self.type, TensorType) and self.type.dtype is not None
        return self.type.dtype

    @property
    def rank(self) -> int:
        return len(self.shape)


@dataclass(frozen=True)
class IndexCheck:
    """A run-time check a kernel relies on: operand ``indices`` indexes ``axis`` of operand ``x``."""

    indices: int
    x: int
    axis: int
    bounded: tuple[int, ...]  # dims of ``indices`` that must be no larger than the same dims of ``x``


@dataclass(frozen=True)
class DimCheck:
    """A run-time check a kernel relies on: dim ``dim`` of operand ``value`` is at most dim ``bound`` of ``x``."""

    value: int
    dim: int
    x: int
    bound: int
    what: str  # the error, with {actual} and {expected} for the two dims


@dataclass(frozen=True)
class BroadcastCheck:
    """A run-time check a kernel relies on: dim ``dim_a`` of operand ``a`` and dim ``dim_b`` of operand ``b``
    broadcast (they are equal or one of them is 1)."""

    a: int
    dim_a: int
    b: int
    dim_b: int


@dataclass
class KernelBuilder:
    """The kernel being written for one op: arguments, attributes and the body's lines."""

    op_name: str
    operand_types: list[RelaxType]
    result_types: list[TensorType]
    attrs: dict[str, Any]
    # the lowering choices of convert-relax-to-linalg's options (``conv``: "im2col" or "direct")
    choices: dict[str, str] = field(default_factory=dict)
    ins: list[KernelValue] = field(init=False)
    destinations: list[KernelValue] = field(init=False)  # empty when the kernel allocates its results
    allocating: bool = field(init=False)
    assumed: dict[int, TensorType] = field(init=False, default_factory=dict)
    index_checks: list[IndexCheck] = field(init=False, default_factory=list)
    dim_checks: list[DimCheck] = field(init=False, default_factory=list)
    broadcast_checks: list[BroadcastCheck] = field(init=False, default_factory=list)
    sized: dict[int, Expr] = field(init=False, default_factory=dict)  # operand -> its checked element count
    symbol_params: list[str] = field(init=False, default_factory=list)
    # module-level declarations the kernel calls, by symbol (LLVM intrinsics: ``declare``)
    externs: dict[str, str] = field(init=False, default_factory=dict)
    _lines: list[list[str]] = field(init=False)
    _counter: int = field(init=False, default=0)
    _dims: dict[tuple[str, int], str] = field(init=False, default_factory=dict)

    def __post_init__(self) -> None:
        self.ins = [self._value(f"%arg{i}", t, f"operand #{i}") for i, t in enumerate(self.operand_types)]
        self.allocating = any(t.shape is None or None in t.shape for t in self.result_types)
        self.destinations = (
            []
            if self.allocating
            else [self._value(f"%out{i}", t, f"result #{i}") for i, t in enumerate(self.result_types)]
        )
        self._lines = [[]]
        self._index = IndexCode(self._lines[0], self.fresh, self._symbol)

    @property
    def outs(self) -> list[KernelValue]:
        """The destination of each result; an error (located at the op by the caller) when a result dim is
        unknown, so a lowering that needs destinations of known size fails cleanly instead of indexing
        an empty list (lowerings that can allocate use ``destination(i)``)."""
        if self.allocating:
            raise self.fail(
                f"result {', '.join(str(t) for t in self.result_types)} has unknown dims, and this op writes "
                "into a destination of known size: state the input dims with relax.match_cast first"
            )
        return self.destinations

    def _value(self, name: str, t: RelaxType, what: str) -> KernelValue:
        if isinstance(t, PrimType):
            return KernelValue(name, t, "index")
        if not isinstance(t, TensorType):
            raise UnsupportedOpError(f"relax.{self.op_name}: cannot pass {what} of type {t} to a kernel")
        return KernelValue(name, t, builtin_tensor(t, f"relax.{self.op_name} {what}"))

    # -- writing lines -----------------------------------------------------------------------------
    def fresh(self, prefix: str = "v") -> str:
        self._counter += 1
        return f"%{prefix}{self._counter}"

    def emit(self, *lines: str) -> None:
        self._lines[-1].extend(lines)

    def scalar(self, op_text: str, result_type: str) -> str:
        """Emit ``%v = <op_text> : <result_type>`` and return ``%v``."""
        return self.typed(f"{op_text} : {result_type}")

    def typed(self, text: str) -> str:
        """Emit ``%v = <text>`` (an op whose text already ends with its types) and return ``%v``."""
        name = self.fresh()
        self.emit(f"{name} = {text}")
        return name

    def declare(self, symbol: str, arg_types: Sequence[str], result_type: str) -> str:
        """Declare the external function ``symbol`` for the kernel to ``func.call`` (returns ``@"symbol"``).

        A declaration named ``llvm.*`` becomes a call of that LLVM intrinsic (a vector instruction that the
        vector dialect has no op for); ``convert-relax-to-linalg`` adds each symbol once per module."""
        self.externs[symbol] = f'func.func private @"{symbol}"({", ".join(arg_types)}) -> {result_type}'
        return f'@"{symbol}"'

    def fail(self, message: str) -> UnsupportedOpError:
        """An error for a case this op's lowering does not handle (raise it)."""
        return UnsupportedOpError(f"relax.{self.op_name}: {message}")

    # -- assumptions the caller checks at run time --------------------------------------------------
    def assume(self, operand: int, dims: Sequence[Expr | int | str | None]) -> None:
        """State that operand ``operand`` has ``dims``; the caller checks it with a match_cast before the call."""
        t = self.operand_types[operand]
        assert isinstance(t, TensorType)
        refined = TensorType(tuple(None if d is None else as_expr(d) for d in dims), t.dtype)
        if refined == t:
            return
        self.assumed[operand] = refined
        self.operand_types[operand] = refined
        old, self.ins[operand] = (
            self.ins[operand],
            KernelValue(self.ins[operand].name, refined, builtin_tensor(refined)),
        )
        self._retype_dims(old, self.ins[operand])

    def _retype_dims(self, old: KernelValue, new: KernelValue) -> None:
        """Dims already read from argument ``old`` (``tensor.dim`` lines typed as ``old``) read ``new`` instead:
        the same argument, refined by ``assume`` to a type of the same rank that the kernel now declares."""
        if old.mlir == new.mlir:
            return
        lines, suffix = self._lines[0], f" : {old.mlir}"
        for (name, axis), ssa in self._dims.items():
            if name != old.name:
                continue
            line = f"{ssa} = tensor.dim {name}, {self._index.const(axis)}{suffix}"
            lines[lines.index(line)] = line[: -len(suffix)] + f" : {new.mlir}"

    def check_size(self, operand: int, size: Expr) -> None:
        """State that operand ``operand`` has ``size`` elements; the kernel then sees it as a 1-D tensor of
        ``size``, and the caller checks the count (``relax.check_size``, like a match_cast) before the call."""
        t = self.operand_types[operand]
        assert isinstance(t, TensorType)
        flat = TensorType((size,), t.dtype)
        self.sized[operand] = size
        self.operand_types[operand] = flat
        self.ins[operand] = KernelValue(self.ins[operand].name, flat, builtin_tensor(flat))

    def check_indices(self, indices: int, x: int, axis: int, bounded: Sequence[int] = ()) -> None:
        """State that operand ``indices`` holds indices into ``axis`` of operand ``x``, in ``[-dim, dim)``, and
        that its dims ``bounded`` are no larger than ``x``'s; the caller checks it before the call
        (``relax.check_index``) and the call raises when it fails, but the kernel still runs: it must clamp its
        accesses into ``x``."""
        self.index_checks.append(IndexCheck(indices, x, axis, tuple(bounded)))

    def check_dim(self, value: int, dim: int, x: int, bound: int, what: str) -> None:
        """State that dim ``dim`` of operand ``value`` is at most dim ``bound`` of operand ``x``; the caller checks
        it before the call (``relax.check_dim``: a failure raises InputError with ``what``), but the kernel still
        runs: it must keep its accesses inside its buffers when the check fails."""
        self.dim_checks.append(DimCheck(value, dim, x, bound, what))

    # -- sizes -----------------------------------------------------------------------------------------
    def dim(self, value: KernelValue, axis: int) -> str:
        """The size of ``value`` along ``axis`` as an index SSA value (a constant when static)."""
        d = value.shape[axis]
        if d is not None and d.is_const:
            return self._index.const(d.value)
        key = (value.name, axis)
        if key not in self._dims:
            name = self.fresh("dim")
            self._lines[0].append(
                f"{name} = tensor.dim {value.name}, {self._index.const(axis)} : {value.mlir}"
            )
            self._dims[key] = name
        return self._dims[key]

    def index(self, e: Expr | int | str) -> str:
        """An index SSA value for a symbolic expression over the kernel's own dims and symbol params."""
        return self._index.value(e)

    def const(self, value: int) -> str:
        return self._index.const(value)

    def _symbol(self, name: str) -> str:
        for v in (*self.ins, *self.destinations):
            if isinstance(v.type, PrimType):
                if v.type.value is not None and str(v.type.value) == name:
                    return v.name
                continue
            for axis, d in enumerate(v.shape):
                if d is not None and str(d) == name:
                    return self.dim(v, axis)
        if name not in self.symbol_params:
            self.symbol_params.append(name)
        return f"%sym_{_ident(name)}"

    def dynamic_sizes(self, shape: Sequence[Expr | None]) -> list[str]:
        """Index values for the non-constant dims of ``shape`` (tensor.empty's operands)."""
        if any(d is None for d in shape):
            raise self.fail("a result dim is unknown; the lowering must compute it")
        return [self.index(d) for d in shape if not d.is_const]  # type: ignore[union-attr]

    def empty(self, shape: Sequence[Expr | None], dtype: str) -> KernelValue:
        """A new ``tensor.empty`` of ``shape``."""
        t = TensorType(tuple(shape), dtype)
        mlir = builtin_tensor(t, f"a tensor of the relax.{self.op_name} kernel")
        name = self.fresh("empty")
        self.emit(f"{name} = tensor.empty({', '.join(self.dynamic_sizes(shape))}) : {mlir}")
        return KernelValue(name, t, mlir)

    def empty_like(self, value: KernelValue, dtype: str | None = None) -> KernelValue:
        """A new ``tensor.empty`` with ``value``'s sizes (read from its dims)."""
        t = TensorType(value.shape, dtype or value.dtype)
        mlir = builtin_tensor(t)
        sizes = [self.dim(value, i) for i, d in enumerate(value.shape) if d is None or not d.is_const]
        name = self.fresh("empty")
        self.emit(f"{name} = tensor.empty({', '.join(sizes)}) : {mlir}")
        return KernelValue(name, t, mlir)

    # -- linalg ----------------------------------------------------------------------------------------
    def generic(
        self,
        inputs: Sequence[KernelValue],
        outputs: Sequence[KernelValue],
        maps: Sequence[str],
        iterators: Sequence[str],
        body: Callable[[list[str]], list[str]],
    ) -> list[KernelValue]:
        """A ``linalg.generic``; ``body`` gets the block argument names, emits scalar code, returns the yields."""
        args = [self.fresh("a") for _ in (*inputs, *outputs)]
        self._lines.append([])
        yields = body(args)
        region = self._lines.pop()
        element_types = [element(v.dtype) for v in (*inputs, *outputs)]
        results = [KernelValue(self.fresh("r"), o.type, o.mlir) for o in outputs]
        map_attrs = ", ".join(f"affine_map<{m}>" for m in maps)
        its = ", ".join(f'"{i}"' for i in iterators)
        lhs = ", ".join(r.name for r in results)
        ins = (
            f" ins({', '.join(v.name for v in inputs)} : {', '.join(v.mlir for v in inputs)})"
            if inputs
            else ""
        )
        self.emit(
            f"{lhs} = linalg.generic {{indexing_maps = [{map_attrs}], iterator_types = [{its}]}}"
            f"{ins} outs({', '.join(v.name for v in outputs)} : {', '.join(v.mlir for v in outputs)}) {{",
            f"^bb0({', '.join(f'{a}: {t}' for a, t in zip(args, element_types))}):",
            *("  " + line for line in region),
            f"  linalg.yield {', '.join(yields)} : {', '.join(element_types[len(inputs) :])}",
            f"}} -> {_type_list([o.mlir for o in outputs])}",
        )
        return results

    def elementwise(
        self, inputs: Sequence[KernelValue], out: KernelValue, body: Callable[[list[str]], str]
    ) -> KernelValue:
        """A parallel ``linalg.generic`` broadcasting ``inputs`` (numpy rules) to ``out``.

        ``body`` gets one scalar per input and returns the result scalar. A dim of 1 against a
        larger one broadcasts; dims the deduction assumed equal are checked by the caller. A result dim that
        equals none of the operands' dims (``["n"]`` with ``["m"]`` gives ``max(m, n) * min(min(m, n), 1)``,
        ``dims.broadcast_at_run_time``) broadcasts at run time: the caller checks that the dims broadcast
        (``relax.check_broadcast``), and an operand indexed along such a dim is read with ``tensor.extract`` at
        ``min(i, dim - 1)`` (0 where its dim is 1; in bounds even when the check fails). Shapes that prove no
        broadcast keep the plain maps.
        """
        rank = out.rank
        runtime = self._runtime_broadcast(inputs, out)
        self._check_broadcasts(runtime)
        maps, resolved = [], []
        gathered: dict[int, dict[int, str]] = {}  # position in inputs -> {result dim: its dim - 1}
        unknown = self._sole_unknown_providers(inputs, out)
        for position, v in enumerate(inputs):
            offset = rank - v.rank
            exprs, dims = [], list(v.shape)
            for axis, d in enumerate(v.shape):
                o = out.shape[axis + offset]
                if d is None and o is None and unknown.get(axis + offset) is v:
                    exprs.append(f"d{axis + offset}")  # the one operand that gives this unknown dim
                    continue
                if any(g is v for g, _ in runtime.get(axis + offset, ())):
                    last = self.scalar(f"arith.subi {self.dim(v, axis)}, {self._index.const(1)}", "index")
                    gathered.setdefault(position, {})[axis + offset] = last
                    exprs.append(f"d{axis + offset}")
                    continue
                if d is None or o is None:
                    raise self.fail(
                        f"cannot lower broadcasting of {v.type} to {out.type} with unknown dims: "
                        "state them with relax.match_cast first"
                    )
                if d == 1 and o != 1:
                    exprs.append("0")
                    continue
                dims[axis] = o  # deduction allowed a different dim only if equal at run time: checked
                exprs.append(f"d{axis + offset}")
            if v in self.ins and dims != list(v.shape):
                index = self.ins.index(v)
                self.assume(index, dims)
                v = self.ins[index]
            resolved.append(v)
            maps.append(f"({', '.join(f'd{j}' for j in range(rank))}) -> ({', '.join(exprs)})")
        direct = [j for j in range(len(resolved)) if j not in gathered]

        def scalars(args: list[str]) -> str:
            values = dict(zip(direct, args))
            for j, lasts in gathered.items():
                coords = []
                for e in maps[j].split("-> (")[1].rstrip(")").split(", "):
                    if e == "0":
                        coords.append(self._index.const(0))
                        continue
                    i = self.scalar(f"linalg.index {e[1:]}", "index")
                    if (
                        int(e[1:]) in lasts
                    ):  # 0 where the operand's dim is 1 (in bounds if it does not broadcast)
                        i = self.scalar(f"arith.minsi {i}, {lasts[int(e[1:])]}", "index")
                    coords.append(i)
                v = resolved[j]
                values[j] = self.scalar(f"tensor.extract {v.name}[{', '.join(coords)}]", v.mlir)
            return body([values[j] for j in range(len(resolved))])

        [r] = self.generic(
            [resolved[j] for j in direct],
            [out],
            [*(maps[j] for j in direct), identity(rank)],
            ["parallel"] * rank,
            lambda a: [scalars(a[:-1])],
        )
        return r

    @staticmethod
    def _runtime_broadcast(
        inputs: Sequence[KernelValue], out: KernelValue
    ) -> dict[int, list[tuple[KernelValue, int]]]:
        """Per dim of ``out`` that the run time decides: the operands (and their axes) whose dim there is not a
        static 1, when there are several and none has the result's dim (each may be 1: ``["n"]`` with ``["m"]``)."""
        found: dict[int, list[tuple[KernelValue, int]]] = {}
        for i, o in enumerate(out.shape):
            givers = [
                (v, i - (out.rank - v.rank))
                for v in inputs
                if i - (out.rank - v.rank) >= 0 and v.shape[i - (out.rank - v.rank)] != 1
            ]
            if len(givers) > 1 and (o is None or all(v.shape[a] != o for v, a in givers)):
                found[i] = givers
        return found

    def _check_broadcasts(self, runtime: dict[int, list[tuple[KernelValue, int]]]) -> None:
        """State that the dims of each run-time broadcast pairwise broadcast; the caller checks it."""
        for givers in runtime.values():
            for j, (a, da) in enumerate(givers):
                for b, db in givers[j + 1 :]:
                    if a not in self.ins or b not in self.ins:
                        raise self.fail(
                            f"cannot lower broadcasting of {a.type} with {b.type} inside a fused kernel: "
                            "state the operands' dims with relax.match_cast first"
                        )
                    check = BroadcastCheck(self.ins.index(a), da, self.ins.index(b), db)
                    if check not in self.broadcast_checks:
                        self.broadcast_checks.append(check)

    @staticmethod
    def _sole_unknown_providers(inputs: Sequence[KernelValue], out: KernelValue) -> dict[int, KernelValue]:
        """Per unknown dim of ``out``: the operand giving it, when it is the only operand whose dim there is
        not a static 1 (so no broadcasting can happen along it)."""
        found: dict[int, KernelValue] = {}
        for i, o in enumerate(out.shape):
            if o is not None:
                continue
            givers = [
                v for v in inputs if i - (out.rank - v.rank) >= 0 and v.shape[i - (out.rank - v.rank)] != 1
            ]
            if len(givers) == 1 and givers[0].shape[i - (out.rank - givers[0].rank)] is None:
                found[i] = givers[0]
        return found

    def elementwise_sizes(self, inputs: Sequence[KernelValue]) -> list[str | None] | None:
        """Index values for the result's unknown dims of a broadcasting elementwise kernel (``destination``'s
        ``sizes``): read from the one operand that gives it, or, where several operands' dims may each be 1,
        chosen at run time as numpy does (the dim that is not 1; the smallest when they differ, which the
        caller's ``relax.check_broadcast`` reports, so that every read stays inside its operand). None when
        some dim has no operand to read it from."""
        t = self.result_types[0]
        if t.shape is None:
            return None
        probe = KernelValue("", t, "")
        unknown = self._sole_unknown_providers(inputs, probe)
        runtime = self._runtime_broadcast(inputs, probe)
        one = self._index.const(1)
        sizes: list[str | None] = []
        for i, d in enumerate(t.shape):
            if d is not None:
                sizes.append(None)
            elif i in unknown:
                v = unknown[i]
                sizes.append(self.dim(v, i - len(t.shape) + v.rank))
            elif i in runtime:
                size = None
                for v, axis in runtime[i]:
                    dim = self.dim(v, axis)
                    if size is None:
                        size = dim
                        continue
                    least = self.scalar(f"arith.minsi {size}, {dim}", "index")
                    keep = self.scalar(
                        f"arith.select {self.scalar(f'arith.cmpi eq, {dim}, {one}', 'index')}, {size}, {least}",
                        "index",
                    )
                    size = self.scalar(
                        f"arith.select {self.scalar(f'arith.cmpi eq, {size}, {one}', 'index')}, {dim}, {keep}",
                        "index",
                    )
                sizes.append(size)
            else:
                return None
        return sizes

    def op(self, text: str, result: KernelValue | TensorType) -> KernelValue:
        """Emit ``%r = <text>`` producing a tensor of the given type; return it."""
        t = result.type if isinstance(result, KernelValue) else result
        assert isinstance(t, TensorType)
        value = KernelValue(self.fresh("t"), t, builtin_tensor(t))
        self.emit(f"{value.name} = {text}")
        return value

    # -- constants and reshapes ---------------------------------------------------------------------------
    def constant(self, value: float | int | bool, dtype: str) -> str:
        """A scalar ``arith.constant`` of ``dtype`` as kernels store it (``element``: a boolean is an i8
        holding 0 or 1; inf and nan included); returns its SSA name."""
        name = self.fresh("cst")
        self.emit(f"{name} = arith.constant {scalar_literal(value, dtype)}")
        return name

    def flag(self, value: bool) -> str:
        """An i1 ``arith.constant`` (a condition, not a stored boolean); returns its SSA name."""
        name = self.fresh("cst")
        self.emit(f"{name} = arith.constant {'true' if value else 'false'}")
        return name

    def flatten(self, value: KernelValue) -> KernelValue:
        """``value`` as a 1-D tensor (a view)."""
        if value.rank == 1:
            return value
        if value.rank == 0:
            return self.expand(value, [], [1])
        return self.collapse(value, [list(range(value.rank))])

    def collapse(self, value: KernelValue, groups: Sequence[Sequence[int]]) -> KernelValue:
        """``tensor.collapse_shape`` merging each group of consecutive dims (a view, no copy)."""
        t = TensorType(tuple(product(value.shape[i] for i in g) for g in groups), value.dtype)
        into = _reshape_type(t, [any(_dynamic(value.shape[i]) for i in g) for g in groups])
        text = f"tensor.collapse_shape {value.name} {_groups(groups)} : {value.mlir} into {into}"
        if into == builtin_tensor(t):
            return self.op(text, t)
        loose = self.fresh("t")
        self.emit(f"{loose} = {text}")
        return self.op(f"tensor.cast {loose} : {into} to {builtin_tensor(t)}", t)

    def expand(
        self,
        value: KernelValue,
        groups: Sequence[Sequence[int]],
        shape: Sequence[Expr | int | None],
        sizes: Sequence[str | None] | None = None,
    ) -> KernelValue:
        """``tensor.expand_shape`` of ``value`` to ``shape`` (a view, no copy); ``tensor.reshape`` when a group
        expands into several dynamic dims.

        ``sizes`` gives index values for dims of ``shape`` (needed for unknown ones); the others are
        computed from their expressions.
        """
        dims = tuple(None if d is None else as_expr(d) for d in shape)
        out = []
        for i, d in enumerate(dims):
            given = sizes[i] if sizes is not None else None
            if d is not None and d.is_const:
                out.append(str(d.value))
            elif given is not None:
                out.append(given)
            elif d is None:
                raise self.fail(f"expand_shape to {dims}: dim {i} is unknown and no size was given")
            else:
                out.append(self.index(d))
        t = TensorType(dims, value.dtype)
        if any(sum(1 for i in g if _dynamic(dims[i])) > 1 for g in groups):
            # MLIR 22's expand-strided-metadata aborts on a memref.expand_shape with several dynamic dims in
            # one group; tensor.reshape bufferizes to memref.reshape (a view of an identity-layout buffer).
            shape_t = f"tensor<{len(out)}xindex>"
            values = [v if v.startswith("%") else self.const(int(v)) for v in out]
            extents = self.typed(f"tensor.from_elements {', '.join(values)} : {shape_t}")
            return self.op(
                f"tensor.reshape {value.name}({extents}) : ({value.mlir}, {shape_t}) -> {builtin_tensor(t)}",
                t,
            )
        dynamic = [any(_dynamic(dims[i]) for i in g) for g in groups]
        name, source = value.name, value.mlir
        if any(dyn and not _dynamic(d) for d, dyn in zip(value.shape, dynamic, strict=True)):
            source = _reshape_type(value.type, dynamic)
            name = self.fresh("t")
            self.emit(f"{name} = tensor.cast {value.name} : {value.mlir} to {source}")
        text = (
            f"tensor.expand_shape {name} {_groups(groups)} output_shape [{', '.join(out)}] : "
            f"{source} into {builtin_tensor(t)}"
        )
        return self.op(text, t)

    def capture(self, body: Callable[[], Any]) -> tuple[list[str], Any]:
        """Run ``body`` and take the lines it emits (a region's body: scf.for, scf.if); return them and its value.

        Sizes (``dim``, ``index``, ``const``) are still emitted at the top of the kernel.
        """
        self._lines.append([])
        value = body()
        return self._lines.pop(), value

    def destination(self, result: int, sizes: Sequence[str | None] = ()) -> KernelValue:
        """Result ``result``'s destination: ``outs[result]``, or a ``tensor.empty`` when the kernel allocates.

        ``sizes`` gives, per result dim, an index value for dims the result type leaves unknown.
        """
        if not self.allocating:
            return self.outs[result]
        t = self.result_types[result]
        operands = []
        for i, d in enumerate(t.shape or ()):
            if d is not None and d.is_const:
                continue
            if d is not None:
                operands.append(self.index(d))
            elif i < len(sizes) and sizes[i] is not None:
                operands.append(sizes[i])  # type: ignore[arg-type]
            else:
                raise self.fail(
                    f"result #{result} {t} has an unknown dim {i} that the lowering cannot compute"
                )
        value = KernelValue(self.fresh("empty"), t, builtin_tensor(t))
        self.emit(f"{value.name} = tensor.empty({', '.join(operands)}) : {value.mlir}")
        return value

    def unless_empty(self, results: list[KernelValue]) -> list[KernelValue]:
        """``results``, or, when every result has a static 0 dim (no elements) and a destination, the
        destinations with the body dropped: nothing needs computing. The assumptions and symbol
        parameters the lowering stated stay (they are the op's run-time checks). This keeps MLIR 22 away
        from views and slices of empty tensors, which it mishandles: an ``extract_slice`` at offset 0 of
        a 0 dim fails its verifier, and bufferizing the ``collapse_shape`` of a ``?x0`` group gives an
        invalid ``memref.collapse_shape`` (its type inference says 0, its verifier wants ``?``)."""
        empty = all(
            any(d is not None and d.is_const and d.value == 0 for d in t.shape or ())
            for t in self.result_types
        )
        if self.allocating or not empty:
            return results
        self._lines = [[]]
        self._dims.clear()
        self._index = IndexCode(self._lines[0], self.fresh, self._symbol)
        return list(self.destinations)

    # -- copies and loops --------------------------------------------------------------------------------
    def sizes(self, value: KernelValue) -> list[str]:
        """``value``'s sizes for slice ops: ints for static dims, index values (``tensor.dim``) for the rest."""
        return [
            str(d.value) if d is not None and d.is_const else self.dim(value, a)
            for a, d in enumerate(value.shape)
        ]

    def mixed(self, exprs: Sequence[Expr | int]) -> list[str]:
        """Ints for constant ``exprs``, index values for the others (offsets and sizes of slice ops)."""
        return [str(e.value) if e.is_const else self.index(e) for e in map(as_expr, exprs)]

    def copy(self, src: KernelValue, dst: KernelValue) -> KernelValue:
        """``linalg.copy`` of ``src`` into ``dst`` (same builtin type)."""
        return self.op(
            f"linalg.copy ins({src.name} : {src.mlir}) outs({dst.name} : {dst.mlir}) -> {dst.mlir}", dst
        )

    def fill(self, scalar: str, dst: KernelValue) -> KernelValue:
        """``linalg.fill`` of ``dst`` with the scalar SSA value ``scalar`` (of ``dst``'s element type)."""
        t = element(dst.dtype)
        return self.op(f"linalg.fill ins({scalar} : {t}) outs({dst.name} : {dst.mlir}) -> {dst.mlir}", dst)

    def insert(self, src: KernelValue, dst: KernelValue, offsets: Sequence[str]) -> KernelValue:
        """``dst`` with ``src`` copied into the slice at ``offsets`` (ints or index values; unit strides).

        Written as extract_slice / linalg.copy / insert_slice, which bufferizes to a copy into a subview
        of ``dst`` without a temporary buffer.
        """
        where = f"[{', '.join(offsets)}] [{', '.join(self.sizes(src))}] [{', '.join(['1'] * src.rank)}]"
        part = self.op(f"tensor.extract_slice {dst.name}{where} : {dst.mlir} to {src.mlir}", src)
        copied = self.copy(src, part)
        return self.op(
            f"tensor.insert_slice {copied.name} into {dst.name}{where} : {src.mlir} into {dst.mlir}", dst
        )

    def on_rows(
        self, x: KernelValue, out: KernelValue, inner: Callable[[KernelValue, KernelValue, str], KernelValue]
    ) -> KernelValue:
        """For ``x`` [..., k] and ``out`` [..., n]: ``inner(x2, o2, m)`` on the views ``x2`` [m, k] and ``o2``
        [m, n] whose ``m`` rows (an index value) are all the leading dims, its result viewed as ``out``'s
        shape. One call for every row (``[b, 1, k]`` at decode reads the weights once, not ``b`` times)."""
        lead = x.rank - 1
        groups = [list(range(lead)), [lead]]
        x2 = x if lead == 1 else self.collapse(x, groups)
        o2 = out if lead == 1 else self.collapse(out, groups)
        r = inner(x2, o2, self.dim(x2, 0))
        if lead == 1:
            return r
        sizes = [None if d is not None and d.is_const else self.dim(out, i) for i, d in enumerate(out.shape)]
        return self.expand(r, groups, out.shape, sizes)

    def loop(
        self, upper: str, init: KernelValue, body: Callable[[str, KernelValue], KernelValue], step: int = 1
    ) -> KernelValue:
        """``scf.for`` from 0 to ``upper`` (an index value) by ``step`` carrying one tensor that starts as ``init``.

        ``body(iv, acc)`` emits the loop body and returns the updated tensor.
        """
        iv, acc = self.fresh("iv"), KernelValue(self.fresh("acc"), init.type, init.mlir)
        lines, updated = self.capture(lambda: body(iv, acc))
        result = KernelValue(self.fresh("t"), init.type, init.mlir)
        self.emit(
            f"{result.name} = scf.for {iv} = {self.const(0)} to {upper} step {self.const(step)} "
            f"iter_args({acc.name} = {init.name}) -> ({init.mlir}) {{",
            *("  " + line for line in lines),
            f"  scf.yield {updated.name} : {init.mlir}",
            "}",
        )
        return result

    def column_parts(
        self,
        out: KernelValue,
        rows: str,
        chunks: int,
        width: int,
        chunk: Callable[[str, str, KernelValue], KernelValue],
        split: str | None = None,
    ) -> KernelValue:
        """``out`` [rows, columns] (static columns) written by ``chunks`` chunks of ``width`` columns (the
        last one ends at the last column) in an ``scf.forall`` over parts of consecutive chunks, which
        ``relax-lower-parallel`` runs on the module's threads: a part per chunk, or, when ``split`` (an i1
        value decided per call) is false, one part of every chunk (run on the calling thread).

        ``chunk(index, local, dest)`` emits chunk ``index`` into ``dest`` (the part's columns) from its
        column ``local`` and returns the updated ``dest``.
        """
        if split is None:
            parts, per_part = self.const(chunks), self.const(1)
        else:
            parts = self.typed(f"arith.select {split}, {self.const(chunks)}, {self.const(1)} : index")
            per_part = self.typed(f"arith.select {split}, {self.const(1)}, {self.const(chunks)} : index")
        columns = out.shape[1].value  # type: ignore[union-attr]
        part = TensorType((out.shape[0], None), out.dtype)
        c, shared = self.fresh("part"), KernelValue(self.fresh("shared"), out.type, out.mlir)
        result = KernelValue(self.fresh("t"), out.type, out.mlir)

        def body() -> None:
            first = self.typed(f"arith.muli {c}, {per_part} : index")
            after = self.typed(f"arith.addi {first}, {per_part} : index")
            end = self.typed(f"arith.minui {after}, {self.const(chunks)} : index")
            start = self.typed(f"arith.muli {first}, {self.const(width)} : index")
            stop = self.typed(f"arith.muli {end}, {self.const(width)} : index")
            stop = self.typed(f"arith.minui {stop}, {self.const(columns)} : index")
            size = self.typed(f"arith.subi {stop}, {start} : index")
            span = f"[0, {start}] [{rows}, {size}] [1, 1]"
            mine = self.op(
                f"tensor.extract_slice {shared.name}{span} : {out.mlir} to {builtin_tensor(part)}", part
            )

            def step(j: str, dest: KernelValue) -> KernelValue:
                local = self.typed(f"affine.apply affine_map<(d0) -> (d0 * {width})>({j})")
                return chunk(self.typed(f"arith.addi {first}, {j} : index"), local, dest)

            done = self.loop(self.typed(f"arith.subi {end}, {first} : index"), mine, step)
            self.emit(
                "scf.forall.in_parallel {",
                f"  tensor.parallel_insert_slice {done.name} into {shared.name}{span} : {done.mlir} into "
                f"{out.mlir}",
                "}",
            )

        lines, _ = self.capture(body)
        self.emit(
            f"{result.name} = scf.forall ({c}) in ({parts}) shared_outs({shared.name} = {out.name}) -> "
            f"({out.mlir}) {{",
            *("  " + line for line in lines),
            "}",
        )
        return result

    # -- the function ------------------------------------------------------------------------------------
    def function_text(self, name: str, results: Sequence[KernelValue]) -> str:
        """The kernel as a private ``func.func`` named ``name`` returning ``results``."""
        params = [f"{v.name}: {v.mlir}" for v in self.ins]
        params += [f"%sym_{_ident(s)}: index" for s in self.symbol_params]
        params += [f"{v.name}: {v.mlir}" for v in self.destinations]
        result_types = ", ".join(r.mlir for r in results)
        body = "\n".join("  " + line for line in self._lines[0])
        returned = ", ".join(r.name for r in results)
        marker = "" if self.allocating else f" attributes {{{DESTINATIONS_ATTR}}}"
        return (
            f"func.func private @{name}({', '.join(params)}) -> ({result_types}){marker} {{\n{body}\n"
            f"  return {returned} : {result_types}\n}}\n"
        )


DESTINATIONS_ATTR = "relax.destinations"  # on a kernel: its trailing arguments are the results' destinations


def unit_groups(rank: int, units: Sequence[int]) -> list[list[int]]:
    """Reassociation that drops the unit dims ``units`` (each joins its next kept dim, or the last)."""
    groups: list[list[int]] = []
    pending: list[int] = []
    for i in range(rank):
        pending.append(i)
        if i not in units:
            groups.append(pending)
            pending = []
    if pending and groups:
        groups[-1].extend(pending)
    return groups


def _ident(symbol: str) -> str:
    return "".join(c if c.isalnum() else "_" for c in symbol)


def _type_list(types: Sequence[str]) -> str:
    """A result type list: one type bare, several in parentheses."""
    return types[0] if len(types) == 1 else f"({', '.join(types)})"


def _dynamic(d: Expr | None) -> bool:
    return d is None or not d.is_const


def _reshape_type(t: TensorType, dynamic: Sequence[bool]) -> str:
    """The builtin type of the collapsed side of a reshape: MLIR wants a dim dynamic where its group of
    expanded dims holds a dynamic one, even when the group's size is a constant (``n * 0 = 0``)."""
    assert t.shape is not None
    shape = tuple(None if dyn else d for d, dyn in zip(t.shape, dynamic, strict=True))
    return builtin_tensor(TensorType(shape, t.dtype))


def _groups(groups: Sequence[Sequence[int]]) -> str:
    return "[" + ", ".join("[" + ", ".join(str(i) for i in g) + "]" for g in groups) + "]"


def product(dims: Iterable[Expr | None]) -> Expr | None:
    """The product of dims, None if any is unknown."""
    result: Expr | None = as_expr(1)
    for d in dims:
        if d is None:
            return None
        result = result * d
    return result


_SPECIAL_FLOATS = {  # dtype -> bit patterns of (inf, -inf, nan)
    "f16": ("0x7C00", "0xFC00", "0x7E00"),
    "bf16": ("0x7F80", "0xFF80", "0x7FC0"),
    "f32": ("0x7F800000", "0xFF800000", "0x7FC00000"),
    "f64": ("0x7FF0000000000000", "0xFFF0000000000000", "0x7FF8000000000000"),
}


def scalar_literal(value: float | int | bool, dtype: str) -> str:
    """``<literal> : <type>`` for an ``arith.constant`` of ``dtype`` (unsigned values wrap to signless)."""
    t = element(dtype)
    if is_float(dtype):
        v = float(value)
        if math.isnan(v) or math.isinf(v):
            inf, ninf, nan = _SPECIAL_FLOATS[dtype]
            return f"{nan if math.isnan(v) else inf if v > 0 else ninf} : {t}"
        text = repr(v)
        if "." not in text:
            text = text.replace("e", ".0e")
        return f"{text} : {t}"
    bits = int(t[1:])  # booleans and sub-byte ints: stored as bytes (``element``)
    v = int(value) % (1 << bits)
    if v >= 1 << (bits - 1):
        v -= 1 << bits
    return f"{v} : {t}"

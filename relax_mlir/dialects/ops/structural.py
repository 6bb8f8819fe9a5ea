"""Structural ops: match_cast, calls into kernels and libraries, shape values, tuples, constants."""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
from mlir import ir

from relax_mlir.dialects.dims import fmt_shape, normalize_axis, provably_different, tensor_operand
from relax_mlir.dialects.dims import product as dims_product
from relax_mlir.dialects.registry import Attr, Operand, RelaxOp, relax_op
from relax_mlir.dialects.types import (
    ObjectType,
    PrimType,
    RelaxType,
    ShapeType,
    TensorType,
    TupleType,
    relax_type,
)
from relax_mlir.errors import ShapeError
from relax_mlir.shape_infer.expr import const, format_dim, parse_dim

if TYPE_CHECKING:
    from relax_mlir.dialects.host_lowering import HostLowering


class DeclaredResultsOp(RelaxOp):
    """Base of ops whose result types are stated in the IR rather than deduced."""

    @classmethod
    def deduce(cls, operand_types: Sequence[RelaxType | None], attrs: dict[str, Any]) -> list[RelaxType]:
        raise ShapeError(f"relax.{cls.NAME} needs its result types stated")

    @classmethod
    def check_results(
        cls,
        operand_types: Sequence[RelaxType | None],
        attrs: dict[str, Any],
        result_types: Sequence[RelaxType],
    ) -> None:
        """Raise ShapeError when the stated result types cannot hold."""

    @classmethod
    def results_for(
        cls,
        operand_types: Sequence[RelaxType | None],
        attrs: dict[str, Any],
        stated: Sequence[RelaxType] | None,
    ) -> list[RelaxType]:
        if stated is None:
            return cls.deduce(operand_types, attrs)  # raises: the results must be stated
        cls.check_results(operand_types, attrs, stated)
        return list(stated)


@relax_op
class MatchCastOp(DeclaredResultsOp):
    """Refine a value to the stated type, binding the new symbols it names; checked at run time.

    ``%y = "relax.match_cast"(%x) : (!relax.tensor<"*", f32>) -> !relax.tensor<["n", "m"], f32>``
    """

    NAME = "match_cast"
    OPERANDS = (Operand("value", "any"),)
    RESULTS = (Operand("out", "any"),)
    PURE = False  # checks at run time and binds symbols
    IDEMPOTENT = True  # a second cast of the same value to the same type checks and binds nothing new
    HOISTABLE_OVER_KERNELS = True  # the checks convert-relax-to-linalg inserts move above fused calls

    @classmethod
    def check_results(
        cls,
        operand_types: Sequence[RelaxType | None],
        attrs: dict[str, Any],
        result_types: Sequence[RelaxType],
    ) -> None:
        _check_cast(operand_types[0], result_types[0])

    @classmethod
    def canonicalize(cls, op: ir.Operation) -> ir.Value | None:
        """``match_cast(x)`` to ``x``'s own type -> ``x`` (it checks and binds nothing)."""
        x = op.operands[0]
        return x if x.type == op.results[0].type and relax_type(x.type) is not None else None

    def removable_when_unused(self) -> bool:
        """Only when its check cannot fail and it binds no symbol its operand's type does not name."""
        return cast_cannot_fail(relax_type(self.operands[0].type), relax_type(self.results[0].type))

    def lower_host(self, host: HostLowering) -> None:
        target = relax_type(self.results[0].type)
        host.bind(self.results[0], host.cast(host.lookup(self.operands[0]), target, self.operation))


def cast_cannot_fail(src: RelaxType | None, dst: RelaxType | None) -> bool:
    """True when every value of type ``src`` has type ``dst`` (a match_cast from ``src`` to ``dst``
    checks nothing and binds no symbol that ``src`` does not already name)."""
    if isinstance(dst, ObjectType):
        return True
    if src is None or dst is None or type(src) is not type(dst):
        return False
    if isinstance(src, TensorType):
        assert isinstance(dst, TensorType)
        if dst.dtype is not None and dst.dtype != src.dtype:
            return False
        return _dims_implied(src.shape, dst.shape)
    if isinstance(src, ShapeType):
        assert isinstance(dst, ShapeType)
        return _dims_implied(src.values, dst.values)
    if isinstance(src, PrimType):
        assert isinstance(dst, PrimType)
        return dst.value is None or dst.value == src.value
    if isinstance(src, TupleType):
        assert isinstance(dst, TupleType)
        return len(src.fields) == len(dst.fields) and all(
            cast_cannot_fail(a, b) for a, b in zip(src.fields, dst.fields)
        )
    return False


def _dims_implied(src: tuple | None, dst: tuple | None) -> bool:
    if dst is None:
        return True
    if src is None or len(src) != len(dst):
        return False
    return all(b is None or (a is not None and a == b) for a, b in zip(src, dst))


def _check_cast(src: RelaxType | None, dst: RelaxType) -> None:
    """ShapeError when no value of type ``src`` can have type ``dst``."""
    if isinstance(src, ObjectType) or src is None or isinstance(dst, ObjectType):
        return
    if type(src) is not type(dst):
        raise ShapeError(f"cannot cast {src} to {dst}: different kinds of value")
    if isinstance(src, TensorType):
        assert isinstance(dst, TensorType)
        if src.dtype and dst.dtype and src.dtype != dst.dtype:
            raise ShapeError(f"cannot cast dtype {src.dtype} to {dst.dtype}")
        _check_dims(src.shape, dst.shape)
    elif isinstance(src, ShapeType):
        assert isinstance(dst, ShapeType)
        _check_dims(src.values, dst.values)
    elif isinstance(src, PrimType):
        assert isinstance(dst, PrimType)
        if provably_different(src.value, dst.value):
            raise ShapeError(f"cannot cast {src} to {dst}: the values differ")
    elif isinstance(src, TupleType):
        assert isinstance(dst, TupleType)
        if len(src.fields) != len(dst.fields):
            raise ShapeError(f"cannot cast a tuple of {len(src.fields)} fields to one of {len(dst.fields)}")
        for i, (a, b) in enumerate(zip(src.fields, dst.fields)):
            try:
                _check_cast(a, b)
            except ShapeError as e:
                raise ShapeError(f"tuple field #{i}: {e}") from None


def _check_dims(src: tuple | None, dst: tuple | None) -> None:
    if src is None or dst is None:
        return
    if len(src) != len(dst):
        raise ShapeError(f"cannot cast rank {len(src)} {fmt_shape(src)} to rank {len(dst)} {fmt_shape(dst)}")
    for i, (a, b) in enumerate(zip(src, dst)):
        if provably_different(a, b):
            raise ShapeError(f"cannot cast {fmt_shape(src)} to {fmt_shape(dst)}: dim {i} is {format_dim(a)}")


def match_cast(value: ir.Value, target: RelaxType, *, loc: ir.Location | None = None) -> ir.Value:
    """Refine ``value`` to ``target`` (new symbols in ``target`` become defined)."""
    return MatchCastOp.build([value], result_types=[target], loc=loc).result


@relax_op
class CallTirOp(DeclaredResultsOp):
    """Call a tensor-level kernel in destination-passing style; outputs are allocated by the caller.

    When an output dim is unknown (data-dependent ops), the kernel allocates its outputs instead:
    its signature is ``(args...) -> outs`` with no destination parameters.

    ``%y = "relax.call_tir"(%x, %w) {callee = @matmul_kernel} : (!relax.tensor<["n", 64], f32>,
    !relax.tensor<[64, 64], f32>) -> !relax.tensor<["n", 64], f32>``
    """

    NAME = "call_tir"
    OPERANDS = (Operand("args", "any", variadic=True),)
    RESULTS = (Operand("outs", "tensor", variadic=True),)
    ATTRS = (Attr("callee", "symbol"),)
    DPS_CALL = True

    @classmethod
    def check_results(
        cls,
        operand_types: Sequence[RelaxType | None],
        attrs: dict[str, Any],
        result_types: Sequence[RelaxType],
    ) -> None:
        _check_call(operand_types, result_types, allocating_callee=True)

    def lower_host(self, host: HostLowering) -> None:
        host.call_kernel(self.operation)


@relax_op
class CallDpsLibraryOp(DeclaredResultsOp):
    """Call an external library function (by C symbol name) in destination-passing style.

    ``%y = "relax.call_dps_library"(%x, %w) {callee = "relax_sgemm"} : (...) -> !relax.tensor<["n", 64], f32>``
    """

    NAME = "call_dps_library"
    OPERANDS = (Operand("args", "any", variadic=True),)
    RESULTS = (Operand("outs", "tensor", variadic=True),)
    ATTRS = (Attr("callee", "str"),)
    PURE = False  # calls code the compiler cannot see
    DPS_CALL = True

    @classmethod
    def check_results(
        cls,
        operand_types: Sequence[RelaxType | None],
        attrs: dict[str, Any],
        result_types: Sequence[RelaxType],
    ) -> None:
        if not attrs["callee"]:
            raise ShapeError("callee must be a non-empty symbol name")
        _check_call(operand_types, result_types, allocating_callee=False)

    def lower_host(self, host: HostLowering) -> None:
        host.call_library(self.operation)


def _check_call(
    operand_types: Sequence[RelaxType | None], result_types: Sequence[RelaxType], allocating_callee: bool
) -> None:
    """Check a destination-passing call; ``allocating_callee``: outputs of unknown dims are allocated by it."""
    for i, t in enumerate(operand_types):
        if not isinstance(t, (TensorType, ShapeType, PrimType)):
            raise ShapeError(f"argument #{i} must be a tensor, shape or prim value, got {t}")
    for i, t in enumerate(result_types):
        if not isinstance(t, TensorType):
            raise ShapeError(f"output #{i} must be a tensor, got {t}")
        if t.shape is None or t.dtype is None:
            raise ShapeError(f"output #{i} needs a known rank and dtype to be allocated, got {t}")
        unknown = [axis for axis, d in enumerate(t.shape) if d is None]
        if unknown and not allocating_callee:
            raise ShapeError(
                f"output #{i} needs known dims to be allocated, got {t}: dim {unknown[0]} is unknown"
            )
    if not result_types:
        raise ShapeError("a destination-passing call needs at least one output")


def call_tir(
    callee: str, args: Sequence[ir.Value], out_types: Sequence[TensorType], *, loc: ir.Location | None = None
) -> list[ir.Value]:
    """Call kernel ``@callee`` with ``args``; the results have ``out_types``."""
    return list(CallTirOp.build(args, {"callee": callee}, result_types=out_types, loc=loc).results)


def call_dps_library(
    callee: str, args: Sequence[ir.Value], out_types: Sequence[TensorType], *, loc: ir.Location | None = None
) -> list[ir.Value]:
    """Call library function ``callee`` with ``args``; the results have ``out_types``."""
    return list(CallDpsLibraryOp.build(args, {"callee": callee}, result_types=out_types, loc=loc).results)


@relax_op
class ShapeOfOp(RelaxOp):
    """The shape of a tensor as a first-class shape value.

    ``%s = "relax.shape_of"(%x) : (!relax.tensor<["n", 4], f32>) -> !relax.shape<["n", 4]>``
    """

    NAME = "shape_of"
    OPERANDS = (Operand("x"),)
    RESULTS = (Operand("out", "shape"),)
    HOISTABLE = True
    ALIASES_OPERANDS = False

    @classmethod
    def deduce(cls, operand_types: Sequence[RelaxType | None], attrs: dict[str, Any]) -> list[RelaxType]:
        return [ShapeType(tensor_operand(operand_types[0], "x").shape)]

    def lower_host(self, host: HostLowering) -> None:
        x = host.lookup(self.operands[0])
        host.bind(self.results[0], host.ints([host.dim(x, i) for i in range(len(x.type.shape))], True))


def shape_of(x: ir.Value, *, loc: ir.Location | None = None) -> ir.Value:
    """The shape of ``x``."""
    return ShapeOfOp.build([x], loc=loc).result


@relax_op
class TupleOp(RelaxOp):
    """Group values into a tuple.

    ``%t = "relax.make_tuple"(%x, %s) : (!relax.tensor<["n"], f32>, !relax.shape<["n"]>)
    -> !relax.tuple<[!relax.tensor<["n"], f32>, !relax.shape<["n"]>]>``
    """

    NAME = "make_tuple"
    OPERANDS = (Operand("fields", "any", variadic=True),)
    RESULTS = (Operand("out", "tuple"),)

    @classmethod
    def deduce(cls, operand_types: Sequence[RelaxType | None], attrs: dict[str, Any]) -> list[RelaxType]:
        for i, t in enumerate(operand_types):
            if t is None:
                raise ShapeError(f"field #{i} is not a relax value")
        return [TupleType(tuple(operand_types))]  # type: ignore[arg-type]

    def lower_host(self, host: HostLowering) -> None:
        host.bind(self.results[0], host.tuple([host.lookup(v) for v in self.operands]))


def tuple_(fields: Sequence[ir.Value], *, loc: ir.Location | None = None) -> ir.Value:
    """A tuple of ``fields``."""
    return TupleOp.build(list(fields), loc=loc).result


@relax_op
class TupleGetItemOp(RelaxOp):
    """Field ``index`` of a tuple.

    ``%x = "relax.tuple_get_item"(%t) {index = 0} : (!relax.tuple<[!relax.tensor<["n"], f32>]>)
    -> !relax.tensor<["n"], f32>``
    """

    NAME = "tuple_get_item"
    OPERANDS = (Operand("tuple", "tuple"),)
    RESULTS = (Operand("out", "any"),)
    ATTRS = (Attr("index", "int"),)

    @classmethod
    def deduce(cls, operand_types: Sequence[RelaxType | None], attrs: dict[str, Any]) -> list[RelaxType]:
        t, index = operand_types[0], attrs["index"]
        if not isinstance(t, TupleType):
            raise ShapeError(f"operand 'tuple' must be a tuple, got {t}")
        if not 0 <= index < len(t.fields):
            raise ShapeError(f"index {index} is out of range for a tuple of {len(t.fields)} fields")
        return [t.fields[index]]

    def lower_host(self, host: HostLowering) -> None:
        index = ir.IntegerAttr(self.operation.attributes["index"]).value
        host.bind(self.results[0], host.lookup(self.operands[0]).fields[index])


def tuple_get_item(t: ir.Value, index: int, *, loc: ir.Location | None = None) -> ir.Value:
    """Field ``index`` of tuple ``t``."""
    return TupleGetItemOp.build([t], {"index": index}, loc=loc).result


@relax_op
class ConstantOp(RelaxOp):
    """A constant tensor: ``dense<...>`` inline, or ``dense_resource<...>`` for large weights.

    ``%c = "relax.constant"() {value = dense<[1.0, 2.0]> : tensor<2xf32>} : () -> !relax.tensor<[2], f32>``
    """

    NAME = "constant"
    ATTRS = (Attr("value", "elements"),)
    HOISTABLE = True

    @classmethod
    def deduce(cls, operand_types: Sequence[RelaxType | None], attrs: dict[str, Any]) -> list[RelaxType]:
        st = ir.ShapedType(attrs["value"].type)
        if not st.has_static_shape:
            raise ShapeError(f"constant value must have a static shape, got {st}")
        return [TensorType(tuple(const(d) for d in st.shape), str(st.element_type))]

    def lower_host(self, host: HostLowering) -> None:
        t = relax_type(self.results[0].type)
        host.bind(self.results[0], host.constant(self.operation.attributes["value"], t))


_RESOURCE_THRESHOLD = 1 << 16  # bytes; larger constants are stored as dense_resource blobs


def constant(value: np.ndarray, *, name: str | None = None, loc: ir.Location | None = None) -> ir.Value:
    """A constant from a numpy array; arrays over 64 KiB become ``dense_resource`` blobs (one copy)."""
    array = np.asarray(value)
    array = np.ascontiguousarray(array).reshape(array.shape)  # ascontiguousarray makes a 0-d array 1-d
    if not array.dtype.isnative:
        array = array.astype(array.dtype.newbyteorder("="))
    element = _ELEMENT_TYPES.get(array.dtype.name)
    if element is None:
        raise ShapeError(f"constant of numpy dtype {array.dtype} is not supported")
    tensor_type = ir.RankedTensorType.get(list(array.shape), element())
    if array.nbytes > _RESOURCE_THRESHOLD:
        # named by content, so the same weights give the same IR (and compile-cache key) every time
        blob = name or f"constant_{hashlib.blake2b(memoryview(array).cast('B'), digest_size=8).hexdigest()}"
        attr = ir.DenseResourceElementsAttr.get_from_buffer(memoryview(array), blob, tensor_type)
    elif array.dtype == np.bool_:  # the bindings read bool arrays only when they infer the type themselves
        attr = ir.DenseElementsAttr.get(array)
    elif array.dtype.kind == "V":  # ml_dtypes (bf16, float8, int4...): one element per byte or two, raw
        raw = array.view(np.uint8 if array.itemsize == 1 else np.uint16)
        attr = ir.DenseElementsAttr.get(raw, type=tensor_type)
    else:
        attr = ir.DenseElementsAttr.get(array, type=tensor_type)
    return ConstantOp.build([], {"value": attr}, loc=loc).result


def _int(bits: int, signed: bool = True) -> Callable[[], ir.Type]:
    return lambda: ir.IntegerType.get_signless(bits) if signed else ir.IntegerType.get_unsigned(bits)


_ELEMENT_TYPES: dict[str, Callable[[], ir.Type]] = {  # numpy dtype name -> MLIR element type
    "float32": ir.F32Type.get,
    "float64": ir.F64Type.get,
    "float16": ir.F16Type.get,
    "bfloat16": ir.BF16Type.get,
    "float8_e4m3fn": ir.Float8E4M3FNType.get,
    "float8_e4m3fnuz": ir.Float8E4M3FNUZType.get,
    "float8_e5m2": ir.Float8E5M2Type.get,
    "float8_e5m2fnuz": ir.Float8E5M2FNUZType.get,
    "float8_e8m0fnu": ir.Float8E8M0FNUType.get,
    "float4_e2m1fn": ir.Float4E2M1FNType.get,
    "int64": _int(64),
    "int32": _int(32),
    "int16": _int(16),
    "int8": _int(8),
    "int4": _int(4),
    "int2": _int(2),
    "uint64": _int(64, False),
    "uint32": _int(32, False),
    "uint16": _int(16, False),
    "uint8": _int(8, False),
    "uint4": _int(4, False),
    "uint2": _int(2, False),
    "bool": _int(1),
}


@relax_op
class CheckIndexOp(RelaxOp):
    """``indices`` unchanged, checked at run time: every value lies in ``[-d, d)`` for ``d`` = dim ``axis``
    of ``x``, and its dims ``bounded`` are no larger than those of ``x``; ``low`` and ``high`` are the
    indices' min and max (an ``index_range`` kernel's results). convert-relax-to-linalg inserts it before a
    kernel that indexes with ``indices`` (``op`` names that op in the error); a failure raises InputError.

    ``%j = "relax.check_index"(%i, %x, %lo, %hi) {axis = 0 : i64, bounded = [], op = "take"} :
    (!relax.tensor<["k"], i64>, !relax.tensor<["n", 4], f32>, !relax.tensor<[], i64>, !relax.tensor<[], i64>)
    -> !relax.tensor<["k"], i64>``
    """

    NAME = "check_index"
    OPERANDS = (Operand("indices"), Operand("x"), Operand("low"), Operand("high"))
    ATTRS = (Attr("axis", "int"), Attr("bounded", "ints"), Attr("op", "str"))

    @classmethod
    def deduce(cls, operand_types: Sequence[RelaxType | None], attrs: dict[str, Any]) -> list[RelaxType]:
        idx = tensor_operand(operand_types[0], "indices")
        if idx.dtype is not None and idx.dtype not in ("i32", "i64"):
            raise ShapeError(f"operand 'indices' must have an integer dtype (i32 or i64), got {idx.dtype}")
        x = tensor_operand(operand_types[1], "x")
        for name, t in zip(("low", "high"), operand_types[2:]):
            r = tensor_operand(t, name)
            if (r.shape is not None and len(r.shape) != 0) or r.dtype not in (None, "i64"):
                raise ShapeError(f"operand '{name}' must be an i64 scalar tensor, got {r}")
        if x.shape is not None:
            normalize_axis(attrs["axis"], len(x.shape))
            for d in attrs["bounded"]:
                if not 0 <= d < len(x.shape) or (idx.shape is not None and d >= len(idx.shape)):
                    raise ShapeError(f"bounded dim {d} is out of range for 'indices' {idx} and 'x' {x}")
        return [idx]

    def lower_host(self, host: HostLowering) -> None:
        idx, x, low, high = (host.lookup(v) for v in self.operation.operands)
        attrs = self.attr_values()
        where = _where(host, self.operation, attrs["op"])
        for d in attrs["bounded"]:
            actual, expected, ok = host.dim(idx, d), host.dim(x, d), host.fresh("ok")
            host.emit(f"{ok} = arith.cmpi sle, {actual}, {expected} : index")
            message = f"dim {d} of the indices is {{actual}}, larger than the input's {{expected}}{where}"
            host.record_check(ok, actual, expected, message)
        n = host.dim(x, attrs["axis"])
        lo, hi, size, zero, neg, below, above, bad, true, ok, worst, actual = (
            host.fresh("ix") for _ in range(12)
        )
        for line in (
            f"{lo} = tensor.extract {low.name}[] : {low.mlir}",
            f"{hi} = tensor.extract {high.name}[] : {high.mlir}",
            f"{size} = arith.index_cast {n} : index to i64",
            f"{zero} = arith.constant 0 : i64",
            f"{neg} = arith.subi {zero}, {size} : i64",
            f"{below} = arith.cmpi slt, {lo}, {neg} : i64",
            f"{above} = arith.cmpi sge, {hi}, {size} : i64",
            f"{bad} = arith.ori {below}, {above} : i1",
            f"{true} = arith.constant true",
            f"{ok} = arith.xori {bad}, {true} : i1",
            f"{worst} = arith.select {below}, {lo}, {hi} : i64",
            f"{actual} = arith.index_cast {worst} : i64 to index",
        ):
            host.emit(line)
        message = f"index {{actual}} out of range for axis {attrs['axis']} of size {{expected}}{where}"
        host.record_check(ok, actual, n, message)
        host.bind(self.results[0], idx)


@relax_op
class CheckDimOp(RelaxOp):
    """``value`` unchanged, checked at run time: its dim ``dim`` is no larger than dim ``bound`` of ``x``.

    convert-relax-to-linalg inserts it before a kernel that relies on it (``KernelBuilder.check_dim``; ``op``
    names that op); a failure raises InputError with ``what`` (``{actual}``/``{expected}`` are the two dims).

    ``%j = "relax.check_dim"(%new, %cache) {dim = 1 : i64, bound = 0 : i64, op = "kv_cache_write",
    what = "{actual} new rows do not fit in {expected}"} : (!relax.tensor<[1, "s", 2, 4], f32>,
    !relax.tensor<["t", 1, 2, 4], f32>) -> !relax.tensor<[1, "s", 2, 4], f32>``
    """

    NAME = "check_dim"
    OPERANDS = (Operand("value"), Operand("x"))
    ATTRS = (Attr("dim", "int"), Attr("bound", "int"), Attr("op", "str"), Attr("what", "str"))

    @classmethod
    def deduce(cls, operand_types: Sequence[RelaxType | None], attrs: dict[str, Any]) -> list[RelaxType]:
        value, x = tensor_operand(operand_types[0], "value"), tensor_operand(operand_types[1], "x")
        for t, d, name in ((value, attrs["dim"], "dim"), (x, attrs["bound"], "bound")):
            if t.shape is not None and not 0 <= d < len(t.shape):
                raise ShapeError(f"{name} {d} is out of range for {t}")
        return [value]

    def lower_host(self, host: HostLowering) -> None:
        value, x = (host.lookup(v) for v in self.operation.operands)
        attrs = self.attr_values()
        actual, expected, ok = host.dim(value, attrs["dim"]), host.dim(x, attrs["bound"]), host.fresh("ok")
        host.emit(f"{ok} = arith.cmpi sle, {actual}, {expected} : index")
        host.record_check(ok, actual, expected, attrs["what"] + _where(host, self.operation, attrs["op"]))
        host.bind(self.results[0], value)


@relax_op
class CheckBroadcastOp(RelaxOp):
    """``a`` unchanged, checked at run time: its dim ``dim_a`` and dim ``dim_b`` of ``b`` broadcast (they are
    equal, or one of them is 1); else InputError naming ``op``.

    convert-relax-to-linalg inserts it before an elementwise kernel whose result dim only the run time decides
    (``KernelBuilder.elementwise``: ``["n"]`` with ``["m"]``, either of which may be 1).

    ``%y = "relax.check_broadcast"(%x, %z) {dim_a = 0 : i64, dim_b = 0 : i64, op = "add"} :
    (!relax.tensor<["n"], f32>, !relax.tensor<["m"], f32>) -> !relax.tensor<["n"], f32>``
    """

    NAME = "check_broadcast"
    OPERANDS = (Operand("a"), Operand("b"))
    ATTRS = (Attr("dim_a", "int"), Attr("dim_b", "int"), Attr("op", "str"))

    @classmethod
    def deduce(cls, operand_types: Sequence[RelaxType | None], attrs: dict[str, Any]) -> list[RelaxType]:
        a, b = tensor_operand(operand_types[0], "a"), tensor_operand(operand_types[1], "b")
        for t, d, name in ((a, attrs["dim_a"], "dim_a"), (b, attrs["dim_b"], "dim_b")):
            if t.shape is not None and not 0 <= d < len(t.shape):
                raise ShapeError(f"{name} {d} is out of range for {t}")
        return [a]

    def lower_host(self, host: HostLowering) -> None:
        a, b = (host.lookup(v) for v in self.operation.operands)
        attrs = self.attr_values()
        da, db = host.dim(a, attrs["dim_a"]), host.dim(b, attrs["dim_b"])
        same, a1, b1, either, ok = (host.fresh("bc") for _ in range(5))
        one = host.code.const(1)
        for line in (
            f"{same} = arith.cmpi eq, {da}, {db} : index",
            f"{a1} = arith.cmpi eq, {da}, {one} : index",
            f"{b1} = arith.cmpi eq, {db}, {one} : index",
            f"{either} = arith.ori {a1}, {b1} : i1",
            f"{ok} = arith.ori {same}, {either} : i1",
        ):
            host.emit(line)
        message = "dims {actual} and {expected} do not broadcast (each must be 1 or equal)"
        host.record_check(ok, da, db, message + _where(host, self.operation, attrs["op"]))
        host.bind(self.results[0], a)


@relax_op
class CheckSizeOp(RelaxOp):
    """``value`` as a 1-D tensor of ``size`` elements (a symbolic expression over symbols bound earlier),
    checked at run time like a ``match_cast`` of its element count.

    convert-relax-to-linalg inserts it before a kernel that relies on it (``KernelBuilder.check_size``): a
    reshape whose counts are equal only at run time, such as ``[n, w] -> [n, 2]``, which holds at n = 0 for
    any ``w`` (a match_cast of ``w`` to 2 would not).

    ``%y = "relax.check_size"(%x) {size = "n * 2"} : (!relax.tensor<["n", "w"], f32>)
    -> !relax.tensor<["n * 2"], f32>``
    """

    NAME = "check_size"
    OPERANDS = (Operand("value"),)
    ATTRS = (Attr("size", "str"),)

    @classmethod
    def deduce(cls, operand_types: Sequence[RelaxType | None], attrs: dict[str, Any]) -> list[RelaxType]:
        value = tensor_operand(operand_types[0], "value")
        if value.shape is None:
            raise ShapeError(f"operand 'value' {value} must have a known rank")
        return [TensorType((parse_dim(attrs["size"]),), value.dtype)]

    def lower_host(self, host: HostLowering) -> None:
        value = host.lookup(self.operation.operands[0])
        shape = value.type.shape
        size = parse_dim(self.attr_values()["size"])
        count = host.code.const(1)
        for i in range(len(shape)):
            count = host.code.binary("mul", count, host.dim(value, i))
        # checked as a match_cast of a prim value, before the view: at the top level a failure branches out
        # (a branch after the view made ownership-based deallocation abort); inside a region it is recorded
        [checked] = host.cast(host.ints([count], False), PrimType(size), self.operation).names
        flat = host.tensor(
            TensorType((None if None in shape else dims_product(shape),), value.type.dtype), "flat"
        )
        if shape:
            groups = "[[" + ", ".join(str(i) for i in range(len(shape))) + "]]"
            host.emit(
                f"{flat.name} = tensor.collapse_shape {value.name} {groups} : {value.mlir} into {flat.mlir}"
            )
        else:
            host.emit(
                f"{flat.name} = tensor.expand_shape {value.name} [] output_shape [1] : {value.mlir} into {flat.mlir}"
            )
        result = host.tensor(relax_type(self.results[0].type), "sized")
        if checked == count:  # the check branched out on failure
            host.emit(f"{result.name} = tensor.cast {flat.name} : {flat.mlir} to {result.mlir}")
        else:  # a failure was recorded: go on with an uninitialized tensor of the expected count
            ok, empty, cast = host.fresh("ok"), host.fresh("empty"), host.fresh("cast")
            host.emit(f"{ok} = arith.cmpi eq, {count}, {checked} : index")
            host.emit(f"{empty} = tensor.empty({'' if size.is_const else checked}) : {result.mlir}")
            host.emit(f"{cast} = tensor.cast {flat.name} : {flat.mlir} to {result.mlir}")
            host.emit(f"{result.name} = arith.select {ok}, {cast}, {empty} : {result.mlir}")
        host.bind(self.results[0], result)


def _where(host: HostLowering, op: ir.Operation, name: str) -> str:
    """`` in relax.<name> at file:line:col`` for a check's message (``name`` may already hold a dialect)."""
    at = host.location(op).removesuffix(": ")
    name = name if "." in name else f"relax.{name}"
    return f" in {name}" + (f" at {at}" if at else "")

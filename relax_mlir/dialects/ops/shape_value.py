"""Ops on first-class shape values and symbolic integers.

They let a frontend keep "take the shape, pick a dim, compute, build a new shape" chains symbolic:
the types carry the expressions (``!relax.prim<"s + 1">``), so deduction sees through the chain.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from mlir import ir

from relax_mlir.dialects.dims import fmt_shape, normalize_axis
from relax_mlir.dialects.registry import Attr, Operand, RelaxOp, relax_op
from relax_mlir.dialects.types import PrimType, RelaxType, ShapeType, TensorType, relax_type
from relax_mlir.errors import ParseError, ShapeError, UnsupportedOpError
from relax_mlir.shape_infer.expr import Expr, const, floordiv, mod, parse_dim, smax, smin

if TYPE_CHECKING:
    from relax_mlir.dialects.host_lowering import HostLowering


@relax_op
class GetDimOp(RelaxOp):
    """Dim ``index`` of a shape value, as a symbolic integer.

    ``%d = "relax.get_dim"(%s) {index = 1 : i64} : (!relax.shape<["b", "s"]>) -> !relax.prim<"s">``
    """

    NAME = "get_dim"
    OPERANDS = (Operand("shape", "shape"),)
    RESULTS = (Operand("out", "prim"),)
    ATTRS = (Attr("index", "int"),)
    HOISTABLE = True
    ALIASES_OPERANDS = False

    @classmethod
    def deduce(cls, operand_types: Sequence[RelaxType | None], attrs: dict[str, Any]) -> list[RelaxType]:
        s = operand_types[0]
        if not isinstance(s, ShapeType):
            raise ShapeError(f"operand 'shape' must be a shape value, got {s}")
        if s.values is None:
            return [PrimType(None)]
        return [PrimType(s.values[normalize_axis(attrs["index"], len(s.values), "index")])]

    def lower_host(self, host: HostLowering) -> None:
        s = host.lookup(self.operands[0])
        index = ir.IntegerAttr(self.operation.attributes["index"]).value
        host.bind(self.results[0], host.ints([s.names[index]], False))


def get_dim(shape: ir.Value, index: int, *, loc: ir.Location | None = None) -> ir.Value:
    """Dim ``index`` of a shape value."""
    return GetDimOp.build([shape], {"index": index}, loc=loc).result


@relax_op
class MakeShapeOp(RelaxOp):
    """A shape value from symbolic integers.

    ``%s = "relax.make_shape"(%b, %n) : (!relax.prim<"b">, !relax.prim<"s * 8">) -> !relax.shape<["b", "8 * s"]>``
    """

    NAME = "make_shape"
    OPERANDS = (Operand("dims", "prim", variadic=True),)
    RESULTS = (Operand("out", "shape"),)
    HOISTABLE = True

    @classmethod
    def deduce(cls, operand_types: Sequence[RelaxType | None], attrs: dict[str, Any]) -> list[RelaxType]:
        values = []
        for i, t in enumerate(operand_types):
            if not isinstance(t, PrimType):
                raise ShapeError(f"operand #{i} must be a symbolic integer, got {t}")
            values.append(t.value)
        return [ShapeType(tuple(values))]

    def lower_host(self, host: HostLowering) -> None:
        host.bind(self.results[0], host.ints([host.lookup(v).names[0] for v in self.operands], True))


def make_shape(dims: Sequence[ir.Value], *, loc: ir.Location | None = None) -> ir.Value:
    """A shape value from symbolic-integer values."""
    return MakeShapeOp.build(list(dims), loc=loc).result


@relax_op
class PrimValueOp(RelaxOp):
    """A symbolic integer from a constant or an expression of defined symbols.

    ``%n = "relax.prim_value"() {value = "n + 1"} : () -> !relax.prim<"n + 1">``
    """

    NAME = "prim_value"
    OPERANDS = ()
    RESULTS = (Operand("out", "prim"),)
    ATTRS = (Attr("value", "dim"),)
    HOISTABLE = True
    ALIASES_OPERANDS = False

    @classmethod
    def deduce(cls, operand_types: Sequence[RelaxType | None], attrs: dict[str, Any]) -> list[RelaxType]:
        try:
            value = parse_dim(attrs["value"])
        except ParseError as e:
            raise ShapeError(str(e)) from None
        if value is None:
            raise ShapeError("value must be an integer or an expression of defined symbols, got '?'")
        return [PrimType(value)]

    def lower_host(self, host: HostLowering) -> None:
        t = relax_type(self.results[0].type)
        assert isinstance(t, PrimType) and t.value is not None
        host.bind(self.results[0], host.ints([host.code.value(t.value)], False))


def prim_value(value: int | str, *, loc: ir.Location | None = None) -> ir.Value:
    """A symbolic-integer value."""
    return PrimValueOp.build([], {"value": value}, loc=loc).result


_PRIM_OPS = {
    "add": lambda a, b: a + b,
    "sub": lambda a, b: a - b,
    "mul": lambda a, b: a * b,
    "floordiv": floordiv,
    "mod": mod,
    "min": smin,
    "max": smax,
}


@relax_op
class PrimBinaryOp(RelaxOp):
    """Arithmetic on symbolic integers: ``op`` is add, sub, mul, floordiv, mod, min or max.

    ``%m = "relax.prim_binary"(%a, %b) {op = "mul"} : (!relax.prim<"b">, !relax.prim<"s">) -> !relax.prim<"b * s">``
    """

    NAME = "prim_binary"
    OPERANDS = (Operand("lhs", "prim"), Operand("rhs", "prim"))
    RESULTS = (Operand("out", "prim"),)
    ATTRS = (Attr("op", "str"),)
    HOISTABLE = True
    ALIASES_OPERANDS = False

    @classmethod
    def deduce(cls, operand_types: Sequence[RelaxType | None], attrs: dict[str, Any]) -> list[RelaxType]:
        fn = _PRIM_OPS.get(attrs["op"])
        if fn is None:
            raise ShapeError(f"unknown op '{attrs['op']}'; expected one of {', '.join(_PRIM_OPS)}")
        a, b = operand_types
        if not isinstance(a, PrimType) or not isinstance(b, PrimType):
            raise ShapeError(f"operands must be symbolic integers, got {a} and {b}")
        if a.value is None or b.value is None:
            return [PrimType(None)]
        if attrs["op"] in ("floordiv", "mod") and b.value == const(0):
            raise ShapeError(f"{attrs['op']} by zero")
        result: Expr = fn(a.value, b.value)
        return [PrimType(result)]

    def lower_host(self, host: HostLowering) -> None:
        a, b = (host.lookup(v).names[0] for v in self.operands)
        name = host.code.binary(ir.StringAttr(self.operation.attributes["op"]).value, a, b)
        host.bind(self.results[0], host.ints([name], False))


def prim_binary(op: str, lhs: ir.Value, rhs: ir.Value, *, loc: ir.Location | None = None) -> ir.Value:
    """``lhs <op> rhs`` on symbolic integers."""
    return PrimBinaryOp.build([lhs, rhs], {"op": op}, loc=loc).result


@relax_op
class ShapeToTensorOp(RelaxOp):
    """A shape value as a 1-D i64 tensor (ONNX Shape).

    ``%t = "relax.shape_to_tensor"(%s) : (!relax.shape<["b", "s"]>) -> !relax.tensor<[2], i64>``
    """

    NAME = "shape_to_tensor"
    OPERANDS = (Operand("shape", "shape"),)

    @classmethod
    def deduce(cls, operand_types: Sequence[RelaxType | None], attrs: dict[str, Any]) -> list[RelaxType]:
        s = operand_types[0]
        if not isinstance(s, ShapeType):
            raise ShapeError(f"operand 'shape' must be a shape value, got {s}")
        return [TensorType((None if s.values is None else const(len(s.values)),), "i64")]

    def lower_host(self, host: HostLowering) -> None:
        s = host.lookup(self.operands[0])
        casts = []
        for n in s.names:
            c = host.fresh("i64_")
            host.emit(f"{c} = arith.index_cast {n} : index to i64")
            casts.append(c)
        value = host.tensor(relax_type(self.results[0].type))
        host.emit(f"{value.name} = tensor.from_elements {', '.join(casts)} : {value.mlir}")
        host.bind(self.results[0], value)


def shape_to_tensor(shape: ir.Value, *, loc: ir.Location | None = None) -> ir.Value:
    """A shape value as a 1-D i64 tensor."""
    return ShapeToTensorOp.build([shape], loc=loc).result


@relax_op
class TensorToShapeOp(RelaxOp):
    """A 1-D integer tensor as a shape value; the values are known only at run time (use match_cast).

    ``%s = "relax.tensor_to_shape"(%t) : (!relax.tensor<[2], i64>) -> !relax.shape<["?", "?"]>``
    """

    NAME = "tensor_to_shape"
    OPERANDS = (Operand("x"),)
    RESULTS = (Operand("out", "shape"),)

    @classmethod
    def deduce(cls, operand_types: Sequence[RelaxType | None], attrs: dict[str, Any]) -> list[RelaxType]:
        t = operand_types[0]
        if not isinstance(t, TensorType):
            raise ShapeError(f"operand 'x' must be a tensor, got {t}")
        if t.dtype is not None and t.dtype not in ("i32", "i64"):
            raise ShapeError(f"operand 'x' must have an integer dtype, got {t.dtype}")
        if t.shape is None:
            return [ShapeType(None)]
        if len(t.shape) != 1:
            raise ShapeError(f"operand 'x' {fmt_shape(t.shape)} must be 1-D")
        n = t.shape[0]
        return [ShapeType(None if n is None or not n.is_const else (None,) * n.value)]

    def lower_host(self, host: HostLowering) -> None:
        x = host.lookup(self.operands[0])
        n = x.type.shape[0]
        if n is None or not n.is_const:
            raise UnsupportedOpError(
                f"{host.location(self.operation)}relax.tensor_to_shape: the tensor's length must be static"
            )
        names = []
        for j in range(n.value):
            e, c = host.fresh("e"), host.fresh("e")
            host.emit(f"{e} = tensor.extract {x.name}[{host.code.const(j)}] : {x.mlir}")
            host.emit(f"{c} = arith.index_cast {e} : {host.element(x.type.dtype)} to index")
            names.append(c)
        host.bind(self.results[0], host.ints(names, True))


def tensor_to_shape(x: ir.Value, *, loc: ir.Location | None = None) -> ir.Value:
    """A 1-D integer tensor as a shape value."""
    return TensorToShapeOp.build([x], loc=loc).result

"""Defining relax ops from Python: one class per op, IRDL generated from it, registered by decorator.

An op class declares its operands, results and attributes as class attributes::

    @relax_op
    class ExpOp(RelaxOp):
        '''Elementwise e**x.  ``%y = "relax.exp"(%x) : (!relax.tensor<["n"], f32>) -> ...'''
        NAME = "exp"
        OPERANDS = (Operand("x"),)

        @classmethod
        def deduce(cls, operand_types, attrs): ...

``relax_op`` registers the class as the OpView of ``relax.<NAME>``, adds typed accessors for
each operand, result and attribute, and records it so the IRDL for the dialect is generated
from every registered op (``irdl_source()``).
"""

from __future__ import annotations

import contextlib
import numbers
import operator
import sys
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from mlir import ir
from mlir._mlir_libs import _mlir as _cext

from relax_mlir.dialects.types import RelaxType, ShapeType, TensorType, relax_type, to_mlir
from relax_mlir.errors import ArgumentError, BuilderError, ShapeError

DIALECT = "relax"

# Type constraints: a relax type kind, or "any" (any relax type).
# IRDL's any_of cannot be loaded by MLIR 22 (UNREACHABLE in IRDLLoading.cpp), so unions are
# checked in Python by relax-verify instead of by IRDL.
# "i1" is a builtin i1 (a condition for scf.if / scf.condition, from relax.condition).
_TYPE_KINDS = {"tensor", "shape", "prim", "tuple", "object", "any", "i1"}


@dataclass(frozen=True)
class Operand:
    """An operand (or result) slot: its name, type kind and whether it is variadic."""

    name: str
    kind: str = "tensor"
    variadic: bool = False


Result = Operand


@dataclass(frozen=True)
class Attr:
    """An attribute slot. ``kind`` picks the IRDL constraint and the Python conversion."""

    name: str
    kind: str  # int | bool | str | float | symbol | ints | ints_or_none | dims | elements


@dataclass(frozen=True)
class _AttrKind:
    spelling: str  # what the attribute must be, for diagnostics
    irdl: str  # IRDL base name, or "" for irdl.any
    to_py: Callable[[ir.Attribute], Any]
    from_py: Callable[[Any], ir.Attribute]
    check: Callable[[ir.Attribute], bool]
    coerce: Callable[
        [Any], Any
    ]  # a builder's Python value -> what deduce and from_py take; TypeError/ValueError


INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1


def _describe(v: Any) -> str:
    """A value as error messages show it: its type and a short repr."""
    if v is None:
        return "None"
    text = repr(v)
    return f"{type(v).__name__} {text if len(text) <= 60 else text[:57] + '...'}"


def as_int64(v: Any) -> int:
    """A Python int from an integer (numpy's too) that fits in int64; TypeError/ValueError otherwise."""
    if isinstance(v, bool):
        raise TypeError(f"expected an integer, got {_describe(v)}")
    try:
        i = operator.index(v)
    except TypeError:
        raise TypeError(f"expected an integer, got {_describe(v)}") from None
    if not INT64_MIN <= i <= INT64_MAX:
        raise ValueError(f"{i} does not fit in a 64-bit integer")
    return i


def _as_bool(v: Any) -> bool:
    if isinstance(v, bool) or type(v).__name__ == "bool_" or (isinstance(v, int) and v in (0, 1)):
        return bool(v)
    raise TypeError(f"expected a boolean, got {_describe(v)}")


def _as_float(v: Any) -> float:
    if isinstance(v, bool) or not isinstance(v, numbers.Real):
        raise TypeError(f"expected a number, got {_describe(v)}")
    return float(v)


def _as_str(v: Any) -> str:
    if not isinstance(v, str):
        raise TypeError(f"expected a string, got {_describe(v)}")
    return v


def as_list(v: Any, item: Callable[[Any], Any], what: str) -> list[Any]:
    if isinstance(v, (str, bytes)) or not isinstance(v, Iterable):
        raise TypeError(f"expected a list of {what}, got {_describe(v)}")
    out = []
    for i, x in enumerate(v):
        try:
            out.append(item(x))
        except (TypeError, ValueError) as e:
            raise type(e)(f"item #{i}: {e}") from None
    return out


def as_dim(v: Any) -> int | str:
    """A dim as attributes hold it: an int64 or a dim expression string (an ``Expr`` is spelled out)."""
    if isinstance(v, str):
        return v
    if type(v).__name__ == "Expr":
        return str(v)
    try:
        return as_int64(v)
    except TypeError:
        raise TypeError(f"expected an integer or a dim string, got {_describe(v)}") from None


def _as_scalar(v: Any) -> int | float | str:
    if isinstance(v, str):
        return v
    if isinstance(v, numbers.Integral) and not isinstance(v, bool):
        return as_int64(v)
    if isinstance(v, numbers.Real) and not isinstance(v, bool):
        return float(v)
    raise TypeError(f"expected a number or a dim string, got {_describe(v)}")


def _as_elements(v: Any) -> ir.Attribute:
    if not isinstance(v, ir.Attribute):
        raise TypeError(f"expected a dense elements attribute, got {_describe(v)}")
    return v


def _is_int_array(a: ir.Attribute) -> bool:
    return isinstance(a, ir.ArrayAttr) and all(isinstance(x, ir.IntegerAttr) for x in a)


def _dims_to_py(a: ir.Attribute) -> list[int | str]:
    return [x.value if isinstance(x, ir.IntegerAttr) else x.value for x in a]


def _dims_from_py(v: Sequence[int | str]) -> ir.Attribute:
    i64 = ir.IntegerType.get_signless(64)
    return ir.ArrayAttr.get(
        [ir.IntegerAttr.get(i64, x) if isinstance(x, int) else ir.StringAttr.get(str(x)) for x in v]
    )


def _ints_from_py(v: Sequence[int]) -> ir.Attribute:
    i64 = ir.IntegerType.get_signless(64)
    return ir.ArrayAttr.get([ir.IntegerAttr.get(i64, int(x)) for x in v])


def is_resource_elements(a: ir.Attribute) -> bool:
    """True for ``dense_resource<...>`` (the bindings do not down-cast it by themselves)."""
    try:
        ir.DenseResourceElementsAttr(a)
    except ValueError:
        return False
    return True


ATTR_KINDS: dict[str, _AttrKind] = {
    "int": _AttrKind(
        "an integer",
        "#builtin.integer",
        lambda a: ir.IntegerAttr(a).value,
        lambda v: ir.IntegerAttr.get(ir.IntegerType.get_signless(64), int(v)),
        lambda a: isinstance(a, ir.IntegerAttr),
        as_int64,
    ),
    "bool": _AttrKind(
        "a boolean",
        "#builtin.integer",
        lambda a: ir.BoolAttr(a).value,
        lambda v: ir.BoolAttr.get(bool(v)),
        lambda a: isinstance(a, ir.BoolAttr),
        _as_bool,
    ),
    "float": _AttrKind(
        "a float",
        "#builtin.float",
        lambda a: ir.FloatAttr(a).value,
        lambda v: ir.FloatAttr.get_f64(float(v)),
        lambda a: isinstance(a, ir.FloatAttr),
        _as_float,
    ),
    "str": _AttrKind(
        "a string",
        "#builtin.string",
        lambda a: ir.StringAttr(a).value,
        lambda v: ir.StringAttr.get(str(v)),
        lambda a: isinstance(a, ir.StringAttr),
        _as_str,
    ),
    "symbol": _AttrKind(
        "a symbol reference like @name",
        "#builtin.symbol_ref",
        lambda a: ir.FlatSymbolRefAttr(a).value,
        lambda v: ir.FlatSymbolRefAttr.get(str(v)),
        lambda a: isinstance(a, ir.FlatSymbolRefAttr),
        _as_str,
    ),
    "ints": _AttrKind(
        "an array of integers",
        "#builtin.array",
        lambda a: [ir.IntegerAttr(x).value for x in ir.ArrayAttr(a)],
        _ints_from_py,
        _is_int_array,
        lambda v: as_list(v, as_int64, "integers"),
    ),
    # A list of ints, or `unit` for "none" (IRDL has no optional attributes).
    "ints_or_none": _AttrKind(
        "an array of integers or unit",
        "",
        lambda a: None if isinstance(a, ir.UnitAttr) else [ir.IntegerAttr(x).value for x in ir.ArrayAttr(a)],
        lambda v: ir.UnitAttr.get() if v is None else _ints_from_py(v),
        lambda a: isinstance(a, ir.UnitAttr) or _is_int_array(a),
        lambda v: None if v is None else as_list(v, as_int64, "integers"),
    ),
    # A list of dims: integers or strings holding symbolic expressions.
    "dims": _AttrKind(
        "an array of integers and dim strings",
        "#builtin.array",
        lambda a: _dims_to_py(ir.ArrayAttr(a)),
        _dims_from_py,
        lambda a: (
            isinstance(a, ir.ArrayAttr) and all(isinstance(x, (ir.IntegerAttr, ir.StringAttr)) for x in a)
        ),
        lambda v: as_list(v, as_dim, "integers and dim strings"),
    ),
    # One dim: an integer or a string holding a symbolic expression.
    "dim": _AttrKind(
        "an integer or a dim string",
        "",
        lambda a: a.value,
        lambda v: (
            ir.IntegerAttr.get(ir.IntegerType.get_signless(64), v)
            if isinstance(v, int)
            else ir.StringAttr.get(str(v))
        ),
        lambda a: isinstance(a, (ir.IntegerAttr, ir.StringAttr)),
        as_dim,
    ),
    # A number or a symbolic expression: an integer, a float or a string.
    "scalar": _AttrKind(
        "a number or a dim string",
        "",
        lambda a: a.value,
        lambda v: (
            ir.FloatAttr.get_f64(v)
            if isinstance(v, float)
            else ir.IntegerAttr.get(ir.IntegerType.get_signless(64), v)
            if isinstance(v, int)
            else ir.StringAttr.get(str(v))
        ),
        lambda a: isinstance(a, (ir.IntegerAttr, ir.FloatAttr, ir.StringAttr)),
        _as_scalar,
    ),
    # Constant data: dense<...> or dense_resource<...>.
    "elements": _AttrKind(
        "dense<...> or dense_resource<...> elements",
        "",
        lambda a: a,
        lambda v: v,
        lambda a: isinstance(a, ir.DenseElementsAttr) or is_resource_elements(a),
        _as_elements,
    ),
}


INPLACE_ATTR = "relax.inplace"  # on a call_tir: per result, the operand it updates in place (-1: none)


class RelaxOp(ir.OpView):
    """Base of every relax op class."""

    NAME: ClassVar[str]
    OPERATION_NAME: ClassVar[str]
    OPERANDS: ClassVar[tuple[Operand, ...]] = ()
    RESULTS: ClassVar[tuple[Operand, ...]] = (Operand("out"),)
    ATTRS: ClassVar[tuple[Attr, ...]] = ()
    # How relax-fuse-ops may group the op: elementwise | broadcast | injective | reduction | matmul | opaque
    FUSION: ClassVar[str] = "opaque"
    # Results that update an operand in place: INPLACE[i] is the operand result i is written into (its
    # kernel's destination is that operand's buffer; the operand must be a function parameter).
    INPLACE: ClassVar[tuple[int, ...]] = ()
    # Traits the passes read (defaults fit a pure compute op; ``op_class`` finds the class of an op):
    # relax-dce, relax-cse, relax-fold-constants: results depend on operands only; no effect, no run-time check
    PURE: ClassVar[bool] = True
    # relax-cse: an impure op whose second identical instance does nothing the first did not (a check)
    IDEMPOTENT: ClassVar[bool] = False
    # convert-relax-to-linalg: the op only moves bits, so it may touch storage-only dtypes (float8, i4...)
    BIT_MOVING: ClassVar[bool] = False
    # relax-fuse-ops and relax-fuse-kernels: pure and binds no symbol, so it may move above a fusion group
    # whose values it does not use
    HOISTABLE: ClassVar[bool] = False
    # relax-fuse-kernels only: may move above a run of fused kernel calls it does not use (a check)
    HOISTABLE_OVER_KERNELS: ClassVar[bool] = False
    # relax-plan-memory: a result may be (a view of) an operand's buffer
    ALIASES_OPERANDS: ClassVar[bool] = True
    # relax-lower-host: calls a kernel or library function in destination-passing style (it reads its
    # operands' buffers and may write a function output's destination directly)
    DPS_CALL: ClassVar[bool] = False
    # targets that map kernels to GPU threads through flat buffers (webgpu): the op is made only by CPU
    # passes and its kernel views CPU-packed layouts, so the target refuses it before compiling
    CPU_ONLY: ClassVar[bool] = False
    # Hooks, defined only by the classes that have them (like ``lower``, the kernel lowering):
    # ``lower_host(self, host: HostLowering)`` (relax-lower-host) writes the op as host code.
    _ODS_REGIONS = (0, True)
    _ODS_OPERAND_SEGMENTS = None
    _ODS_RESULT_SEGMENTS = None

    @classmethod
    def deduce(cls, operand_types: Sequence[RelaxType | None], attrs: dict[str, Any]) -> list[RelaxType]:
        """Result types from operand types and attributes; raise ShapeError when ill-typed."""
        raise NotImplementedError(f"relax.{cls.NAME} has no shape deduction")

    @classmethod
    def canonicalize(cls, op: ir.Operation) -> ir.Value | None:
        """relax-canonicalize: a value of the same type that ``op``'s result can be replaced by, or None.

        A rule must be exact and drop no run-time check; it may build new ops before ``op``."""
        return None

    def removable_when_unused(self) -> bool:
        """relax-dce: whether the op may be erased when nothing uses its results (pure ops may)."""
        return self.PURE

    # -- reading an op instance -------------------------------------------------------------
    def attr_values(self) -> dict[str, Any]:
        """Python values of the declared attributes."""
        attrs = self.operation.attributes
        return {a.name: ATTR_KINDS[a.kind].to_py(attrs[a.name]) for a in self.ATTRS}

    def operand_types(self) -> list[RelaxType | None]:
        return [relax_type(v.type) for v in self.operation.operands]

    def deduce_results(self) -> list[RelaxType]:
        return self.deduce(self.operand_types(), self.attr_values())

    # -- building ---------------------------------------------------------------------------
    @classmethod
    def results_for(
        cls,
        operand_types: Sequence[RelaxType | None],
        attrs: dict[str, Any],
        stated: Sequence[RelaxType] | None,
    ) -> list[RelaxType]:
        """Result types of a new op: the stated ones if given, else deduced."""
        return list(stated) if stated is not None else cls.deduce(operand_types, attrs)

    @classmethod
    def build(
        cls,
        operands: Sequence[ir.Value],
        attrs: dict[str, Any] | None = None,
        *,
        result_types: Sequence[RelaxType] | None = None,
        loc: ir.Location | None = None,
        ip: ir.InsertionPoint | None = None,
    ) -> RelaxOp:
        """Create the op with the result types ``results_for`` gives; errors name the user's line."""
        attrs = dict(attrs or {})
        if loc is None:
            loc = caller_location()
        where = f"{describe_location(loc)}relax.{cls.NAME}"
        operands = check_operands(operands, _operand_names(cls, len(operands)), where, ip)
        for a in cls.ATTRS:
            if a.name in attrs:
                try:
                    attrs[a.name] = ATTR_KINDS[a.kind].coerce(attrs[a.name])
                except (TypeError, ValueError) as e:
                    raise ArgumentError(f"{where}: attribute '{a.name}': {e}") from None
        with located(cls.NAME, loc):
            result_types = cls.results_for([relax_type(v.type) for v in operands], attrs, result_types)
            mlir_results = [to_mlir(t) for t in result_types]
        mlir_attrs = {a.name: ATTR_KINDS[a.kind].from_py(attrs[a.name]) for a in cls.ATTRS}
        try:
            op = ir.Operation.create(
                cls.OPERATION_NAME,
                results=mlir_results,
                operands=operands,
                attributes=mlir_attrs,
                loc=loc,
                ip=ip,
            )
        except IndexError:  # the block already ends in its terminator
            raise BuilderError(f"{where}: cannot add an op after the function's return (bb.ret)") from None
        return op.opview


def _operand_names(cls: type[RelaxOp], n: int) -> list[str]:
    specs = _expand(cls.OPERANDS, n) if len(cls.OPERANDS) else []
    names, seen = [], {}
    for spec in specs:
        if spec.variadic:
            seen[spec.name] = seen.get(spec.name, -1) + 1
            names.append(f"{spec.name}[{seen[spec.name]}]")
        else:
            names.append(spec.name)
    return names + [f"#{i}" for i in range(len(names), n)]


def _function_of(op: ir.Operation | None) -> ir.Operation | None:
    """The ``func.func`` that holds ``op`` (or is ``op``), or None."""
    while op is not None and op.name != "func.func":
        op = op.parent
    return op


def _defining_function(v: ir.Value) -> ir.Operation | None:
    owner = v.owner
    if isinstance(owner, ir.Block):
        owner = owner.owner
    return None if owner is None else _function_of(owner.operation)


def check_operands(
    values: Sequence[Any], names: Sequence[str], where: str, ip: ir.InsertionPoint | None = None
) -> list[ir.Value]:
    """``values`` as a list, after checking that each is an ``ir.Value`` of the function being built at
    ``ip`` (or the current insertion point): ArgumentError for anything else (None, numbers, arrays...),
    BuilderError for a value of another function or builder (MLIR would abort printing such IR)."""
    if isinstance(values, (ir.Value, str, bytes)) or not isinstance(values, Iterable):
        raise ArgumentError(f"{where}: expected a list of operands, got {_describe(values)}")
    values = list(values)
    target: ir.Operation | None = None
    for value, name in zip(values, names):
        if not isinstance(value, ir.Value):
            hint = (
                " (make constants with R.constant(np.array(...)))"
                if isinstance(value, numbers.Number)
                else ""
            )
            raise ArgumentError(
                f"{where}: operand '{name}' must be a relax value, got {_describe(value)}{hint}"
            )
        if target is None:
            point = ip or ir.InsertionPoint.current
            target = _function_of(point.block.owner.operation if point.block.owner else None)
            if target is None:
                return values
        source = _defining_function(value)
        if source is not None and source != target:
            raise BuilderError(
                f"{where}: operand '{name}' is a value of @{_name(source)}, not of @{_name(target)}, the "
                "function being built (a value can only be used in the function, and builder, that made it)"
            )
    return values


def _name(func: ir.Operation) -> str:
    return ir.StringAttr(func.attributes["sym_name"]).value


_LOCATION_OVERRIDE: list[ir.Location] = []


@contextlib.contextmanager
def default_location(loc: ir.Location) -> Iterator[None]:
    """Ops built inside without an explicit ``loc`` get ``loc`` (a frontend's node location)."""
    _LOCATION_OVERRIDE.append(loc)
    try:
        yield
    finally:
        _LOCATION_OVERRIDE.pop()


def caller_location() -> ir.Location:
    """The location of the first caller outside relax_mlir: the user's own line (or the
    ``default_location`` a frontend set)."""
    if _LOCATION_OVERRIDE:
        return _LOCATION_OVERRIDE[-1]
    frame = sys._getframe(2)
    while frame is not None and frame.f_globals.get("__name__", "").startswith("relax_mlir."):
        frame = frame.f_back
    if frame is None:
        return ir.Location.unknown()
    return ir.Location.file(frame.f_code.co_filename, frame.f_lineno, 0)


@contextlib.contextmanager
def located(op_name: str, loc: ir.Location) -> Iterator[None]:
    """Prefix a ShapeError raised inside with the location and ``relax.<op_name>``."""
    try:
        yield
    except ShapeError as e:
        raise ShapeError(f"{describe_location(loc)}relax.{op_name}: {e}") from None


def describe_location(loc: ir.Location) -> str:
    """``file:line: `` (or ``name: ``) for error messages; empty for unknown locations."""
    if loc.is_a_file():
        return f"{loc.filename}:{loc.start_line}: "
    if loc.is_a_name():
        return f"{loc.name_str}: "
    return ""


OPS: dict[str, type[RelaxOp]] = {}


def op_class(op: ir.Operation | ir.OpView) -> type[RelaxOp] | None:
    """The registered class of a relax op (whose traits the passes read); None for any other op."""
    name = op.name
    return OPS.get(name[len(DIALECT) + 1 :]) if name.startswith(DIALECT + ".") else None


def relax_op(cls: type[RelaxOp]) -> type[RelaxOp]:
    """Register an op class: OpView for ``relax.<NAME>``, typed accessors, IRDL source."""
    cls.OPERATION_NAME = f"{DIALECT}.{cls.NAME}"
    for spec in (*cls.OPERANDS, *cls.RESULTS):
        if spec.kind not in _TYPE_KINDS:
            raise TypeError(f"{cls.__name__}: unknown type kind {spec.kind!r}")
    for a in cls.ATTRS:
        if a.kind not in ATTR_KINDS:
            raise TypeError(f"{cls.__name__}: unknown attribute kind {a.kind!r}")
    _add_accessors(cls)
    _cext.register_operation(RelaxDialect, replace=True)(cls)
    OPS[cls.NAME] = cls
    return cls


def _add_accessors(cls: type[RelaxOp]) -> None:
    def group(specs: tuple[Operand, ...], get: Callable[[RelaxOp], Any]) -> None:
        for i, spec in enumerate(specs):
            n_after = len(specs) - i - 1
            if spec.variadic:
                prop = property(lambda self, i=i, n=n_after: list(get(self))[i : len(get(self)) - n])
            else:
                prop = property(lambda self, i=i: get(self)[i])
            if not hasattr(RelaxOp, spec.name):
                setattr(cls, spec.name, prop)

    group(cls.OPERANDS, lambda op: op.operation.operands)
    group(cls.RESULTS, lambda op: op.operation.results)
    for a in cls.ATTRS:
        kind = ATTR_KINDS[a.kind]
        setattr(cls, a.name, property(lambda self, n=a.name, k=kind: k.to_py(self.operation.attributes[n])))


@_cext.register_dialect
class RelaxDialect(ir.Dialect):
    DIALECT_NAMESPACE = DIALECT


# ----------------------------------------------------------------------------------------------
# IRDL generation

_TYPES_IRDL = """
  irdl.type @tensor {
    %shape = irdl.any
    %dtype = irdl.any
    irdl.parameters(shape: %shape, dtype: %dtype)
  }
  irdl.type @shape {
    %values = irdl.any
    irdl.parameters(values: %values)
  }
  irdl.type @prim {
    %value = irdl.base "#builtin.string"
    irdl.parameters(value: %value)
  }
  irdl.type @tuple {
    %fields = irdl.base "#builtin.array"
    irdl.parameters(fields: %fields)
  }
  irdl.type @object {
    irdl.parameters()
  }
"""


def _constraint(lines: list[str], kind_irdl: str) -> str:
    name = f"%c{len(lines)}"
    if not kind_irdl:
        lines.append(f"    {name} = irdl.any")
    elif kind_irdl == "i1":
        lines.append(f"    {name} = irdl.is i1")
    elif kind_irdl.startswith("@"):
        lines.append(f"    {name} = irdl.base {kind_irdl}")
    else:
        lines.append(f'    {name} = irdl.base "{kind_irdl}"')
    return name


def _type_constraint(kind: str) -> str:
    return {"any": "", "i1": "i1"}.get(kind, f"@{DIALECT}::@{kind}")


def _op_irdl(cls: type[RelaxOp]) -> str:
    lines: list[str] = []
    parts = []
    for keyword, specs in (("operands", cls.OPERANDS), ("results", cls.RESULTS)):
        items = []
        for s in specs:
            c = _constraint(lines, _type_constraint(s.kind))
            items.append(f"{s.name}: {'variadic ' if s.variadic else ''}{c}")
        parts.append(f"    irdl.{keyword}({', '.join(items)})")
    if cls.ATTRS:
        items = [f'"{a.name}" = {_constraint(lines, ATTR_KINDS[a.kind].irdl)}' for a in cls.ATTRS]
        parts.append("    irdl.attributes {" + ", ".join(items) + "}")
    body = "\n".join(lines + parts)
    return f"  irdl.operation @{cls.NAME} {{\n{body}\n  }}"


def irdl_source() -> str:
    """The IRDL module defining the relax dialect: its types and every registered op."""
    ops = "\n".join(_op_irdl(OPS[name]) for name in sorted(OPS))
    return f"irdl.dialect @{DIALECT} {{{_TYPES_IRDL}{ops}\n}}\n"


def attr_spelling(kind: str) -> str:
    """What an attribute of ``kind`` must be, for diagnostics."""
    return ATTR_KINDS[kind].spelling


def check_types(cls: type[RelaxOp], op: ir.Operation) -> str | None:
    """A message when ``op`` has the wrong number or relax kinds of operands/results, else None."""
    for what, specs, values in (("operand", cls.OPERANDS, op.operands), ("result", cls.RESULTS, op.results)):
        fixed = sum(1 for s in specs if not s.variadic)
        variadic = len(specs) != fixed
        if len(values) < fixed or (not variadic and len(values) != fixed):
            expected = f"at least {fixed}" if variadic else str(fixed)
            return f"expects {expected} {what}s, but got {len(values)}"
        kinds = _expand(specs, len(values))
        for i, (spec, v) in enumerate(zip(kinds, values)):
            if spec.kind == "i1":
                if str(v.type) != "i1":
                    return f"{what} #{i} ({spec.name}) must be i1, got {v.type}"
                continue
            t = relax_type(v.type)
            if t is None:
                return f"{what} #{i} ({spec.name}) must be a relax type, got {v.type}"
            if spec.kind != "any" and _kind_of(t) != spec.kind:
                return f"{what} #{i} ({spec.name}) must be !relax.{spec.kind}, got {t}"
    return None


def _expand(specs: tuple[Operand, ...], n: int) -> list[Operand]:
    fixed = sum(1 for s in specs if not s.variadic)
    out: list[Operand] = []
    for s in specs:
        out.extend([s] * (max(n - fixed, 0) if s.variadic else 1))
    return out


def _kind_of(t: RelaxType) -> str:
    if isinstance(t, TensorType):
        return "tensor"
    if isinstance(t, ShapeType):
        return "shape"
    return type(t).__name__.removesuffix("Type").lower()

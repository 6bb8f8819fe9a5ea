"""The C API of an ahead-of-time compiled library: its header and the C wrapper behind it.

Each public relax function ``@f`` of the module gets, in the generated header and wrapper::

    int relax_f(const relax_tensor *inputs, int64_t n_inputs, relax_tensor *outputs, int64_t n_outputs);
    int relax_f_output_shapes(const relax_tensor *inputs, int64_t n_inputs, int64_t *dims, int64_t n_dims);

The wrapper checks the inputs the way the Python runtime does (``executable.py``: count, dtype, rank,
constant dims, one value per symbol, symbolic dims, upper bounds, in that order and with the same
messages), computes the output dims from the symbolic output types, checks the caller's output
buffers against them, builds MLIR memref descriptors and calls the host function
(``_mlir_ciface_f``, calling convention in ``host.py``). A failed ``match_cast`` inside the function
comes back through its status buffer as ``RELAX_ERR_RUNTIME``. ``relax`` is the default prefix of
every exported name (``prefix=``), so two libraries can live in one process.

A function of unknown-rank parameters (compiled once per rank by ``relax-specialize-ranks``) also gets
``relax_f`` / ``relax_f_output_shapes`` that call the ``relax_f__r<k>`` variant for the inputs' ranks.

Supported: tensor, prim and shape parameters and outputs (a prim value is a 0-d ``int64`` tensor, a
shape value a 1-d ``int64`` tensor of its length), tuples (flattened in order), in-place parameters
(the caller's buffer is updated). Rejected at compile time: outputs whose dims depend on data
(returned by the function, e.g. ``nonzero``) and dtypes without a fixed byte layout.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from relax_mlir.dialects.types import PrimType, ShapeType, TensorType, parse_type
from relax_mlir.errors import CompileError, RelaxError
from relax_mlir.shape_infer.expr import Expr, format_dim

# relax dtype -> (C enum name, value). Values are part of the ABI: never renumber.
DTYPES: dict[str, tuple[str, int]] = {
    "i1": ("BOOL", 1),
    "i8": ("I8", 2),
    "i16": ("I16", 3),
    "i32": ("I32", 4),
    "i64": ("I64", 5),
    "ui8": ("U8", 6),
    "ui16": ("U16", 7),
    "ui32": ("U32", 8),
    "ui64": ("U64", 9),
    "f16": ("F16", 10),
    "bf16": ("BF16", 11),
    "f32": ("F32", 12),
    "f64": ("F64", 13),
    "f8E4M3FN": ("F8E4M3FN", 14),
    "f8E5M2": ("F8E5M2", 15),
}
ERRORS = (
    ("RELAX_OK", 0, "success"),
    ("RELAX_ERR_ARG_COUNT", 1, "wrong number of inputs or outputs"),
    ("RELAX_ERR_NULL", 2, "a NULL pointer where data or a shape is needed"),
    ("RELAX_ERR_DTYPE", 3, "a tensor of the wrong dtype"),
    ("RELAX_ERR_RANK", 4, "a tensor of the wrong rank"),
    (
        "RELAX_ERR_SHAPE",
        5,
        "a dim that is negative, differs from a constant, from its symbol's value or "
        "from a symbolic expression, or a symbol above its upper bound; output buffers of the wrong shape",
    ),
    ("RELAX_ERR_RUNTIME", 6, "a check inside the compiled function failed (match_cast, index range)"),
)


@dataclass
class _Value:
    """One flattened parameter or output: a tensor, a prim value or a shape value."""

    kind: str  # tensor, prim, shape
    name: str  # 'x' (parameter name) or output #k
    dtype: str
    dims: list[Expr | None]  # a tensor's dims; a prim's/shape's values (their tensor has len(dims) dims
    # for a shape, none for a prim)
    inplace: bool = False

    @property
    def ndim(self) -> int:
        return len(self.dims) if self.kind == "tensor" else (0 if self.kind == "prim" else 1)


@dataclass
class FunctionApi:
    """What the C API needs to know of one host function (from its ``relax.signature``)."""

    name: str  # the relax function (its host symbol)
    c_name: str  # the identifier used in C names
    inputs: list[_Value]
    outputs: list[_Value]
    checks: list[str]
    upper_bounds: dict[str, int]
    symbols: list[str] = field(default_factory=list)  # in order of definition
    # one rank of a function of unknown-rank parameters (``relax-specialize-ranks``): the function, the flat
    # input indices of those parameters and their ranks here
    rank_variant: tuple[str, list[int], list[int]] | None = None


def c_identifier(name: str) -> str:
    """``name`` with every character C does not allow in identifiers replaced by ``_``."""
    ident = re.sub(r"[^A-Za-z0-9_]", "_", name)
    return "_" + ident if ident[:1].isdigit() else ident


def check_prefix(prefix: str) -> None:
    """The prefix of every exported name must itself be a C identifier."""
    if not re.fullmatch(r"[A-Za-z_]\w*", prefix):
        raise RelaxError(f"prefix {prefix!r} is not a C identifier")


def function_api(name: str, signature: dict[str, Any]) -> FunctionApi:
    """Read a host function's signature; reject what the C API cannot express, naming the function."""
    where = f"@{name}"
    inputs = [
        _value(x["kind"], x["type"], x["name"], where, x.get("inplace", False)) for x in signature["inputs"]
    ]
    outputs = []
    for k, x in enumerate(signature["outputs"]):
        if x["kind"] == "returned":
            raise CompileError(
                f"{where}: output #{k} {x['type']} has dims that depend on the data (bound by a match_cast "
                "inside the function, e.g. after nonzero or unique, or joined by an scf.if/scf.while whose "
                "branches or iterations give different sizes); relax-compile cannot size it before "
                "the call, so the C API does not support it: return a fixed-size result instead"
            )
        outputs.append(_value(x["kind"], x["type"], f"output #{k}", where))
    api = FunctionApi(
        name, c_identifier(name), inputs, outputs, signature["checks"], signature["upper_bounds"]
    )
    variant = signature.get("rank_variant")
    if variant is not None:
        flat = [sum(_leaves(s) for s in signature["param_structure"][:i]) for i in variant["params"]]
        api.rank_variant = (variant["of"], flat, list(variant["ranks"]))
    defined: set[str] = set()
    for v in inputs:
        for d in v.dims:
            if d is not None and not d.is_const and d.free_symbols == {str(d)} and str(d) not in defined:
                defined.add(str(d))
                api.symbols.append(str(d))
    for v in inputs + outputs:
        for d in v.dims:
            missing = (d.free_symbols - defined) if d is not None else set()
            if missing:
                raise CompileError(
                    f"{where}: {v.name} has dim {format_dim(d)} with symbol(s) {', '.join(sorted(missing))} "
                    "that no parameter defines"
                )
    return api


def _leaves(s: Any) -> int:
    """The flattened inputs of one parameter of ``param_structure`` (a run-time list is two)."""
    if s == 0:
        return 1
    if isinstance(s, dict):
        return 2
    return sum(_leaves(x) for x in s)


def _rank_groups(apis: list[FunctionApi]) -> dict[str, list[FunctionApi]]:
    """The rank variants of each function of unknown-rank parameters, by function."""
    groups: dict[str, list[FunctionApi]] = {}
    for api in apis:
        if api.rank_variant is not None:
            groups.setdefault(api.rank_variant[0], []).append(api)
    return groups


def _dispatch_functions(name: str, variants: list[FunctionApi], prefix: str) -> list[str]:
    """``PREFIX_<name>`` and ``PREFIX_<name>_output_shapes``: call the variant for the inputs' ranks."""
    first = variants[0]
    _, flat, _ = first.rank_variant  # type: ignore[misc]
    fn = f"{prefix}_{c_identifier(name)}"
    ranks = ", ".join(f"r{j} = inputs[{i}].ndim" for j, i in enumerate(flat))
    supported = sorted(tuple(v.rank_variant[2]) for v in variants)  # type: ignore[index]
    spelled = ", ".join("x".join(map(str, r)) for r in supported)
    got = ", ".join(f"parameter '{_esc(first.inputs[i].name)}' has rank %lld" for i in flat)
    message = _c_string(
        f"@{_esc(name)}: {got}, but the function (of unknown-rank parameters) is compiled for rank(s) {spelled} only"
    )
    values = ", ".join(f"(long long)r{j}" for j in range(len(flat)))
    lines: list[str] = []
    for suffix, params, args in (
        ("", "relax_tensor *outputs, int64_t n_outputs", "outputs, n_outputs"),
        ("_output_shapes", "int64_t *dims, int64_t n_dims", "dims, n_dims"),
    ):
        lines += [
            f"int {fn}{suffix}(const relax_tensor *inputs, int64_t n_inputs, {params}) {{",
            f"  if (inputs == NULL || n_inputs != {len(first.inputs)})  /* the variant reports it */",
            f"    return {prefix}_{first.c_name}{suffix}(inputs, n_inputs, {args});",
            f"  int64_t {ranks};",
        ]
        for v in variants:
            test = " && ".join(f"r{j} == {k}" for j, k in enumerate(v.rank_variant[2]))  # type: ignore[index]
            lines.append(f"  if ({test}) return {prefix}_{v.c_name}{suffix}(inputs, n_inputs, {args});")
        lines += [
            f"  return relax__fail(RELAX_ERR_RANK, {message}, {values});",
            "}",
            "",
        ]
    return lines


def _value(kind: str, text: str, name: str, where: str, inplace: bool = False) -> _Value:
    t = parse_type(text)
    if kind == "tensor":
        assert isinstance(t, TensorType)
        if t.shape is None or t.dtype is None:
            raise CompileError(f"{where}: {name} {t} needs a known rank and dtype for the C API")
        if t.dtype not in DTYPES:
            raise CompileError(
                f"{where}: {name} has dtype {t.dtype}, which the C API does not support; supported: "
                + ", ".join(DTYPES)
            )
        return _Value(kind, name, t.dtype, list(t.shape), inplace)
    if kind == "prim":
        assert isinstance(t, PrimType)
        return _Value(kind, name, "i64", [t.value])
    if kind == "shape":
        assert isinstance(t, ShapeType)
        if t.values is None:
            raise CompileError(f"{where}: {name} {t} needs a known rank for the C API")
        return _Value(kind, name, "i64", list(t.values))
    raise CompileError(f"{where}: {name} of kind {kind} is not supported by the C API")


def _c_string(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def _esc(text: str) -> str:
    """``text`` as literal text inside a printf format."""
    return text.replace("%", "%%")


def _check_format(check: str) -> tuple[str, ...]:
    """A printf format and its arguments for a failed host check (``executable.format_check`` in C)."""
    values = {"{actual}": "(long long)status[1]", "{expected}": "(long long)status[2]"}
    parts = re.split(r"(\{actual\}|\{expected\})", check)
    return "".join("%lld" if p in values else _esc(p) for p in parts), *(
        values[p] for p in parts if p in values
    )


def _type_text(v: _Value) -> str:
    if v.kind == "tensor":
        dims = ", ".join(str(format_dim(d)) for d in v.dims)
        return f"tensor<[{dims}], {v.dtype}>"
    if v.kind == "prim":
        return f"prim<{format_dim(v.dims[0])}> (a 0-d int64 tensor)"
    return f"shape<[{', '.join(str(format_dim(d)) for d in v.dims)}]> (a 1-d int64 tensor of {len(v.dims)})"


class _ExprWriter:
    """C expressions (int64_t) for symbolic dims; symbols are the wrapper's ``sym[i]``."""

    def __init__(self, symbols: list[str]) -> None:
        self.index = {s: i for i, s in enumerate(symbols)}

    def expr(self, e: Expr) -> str:
        if e.is_const:
            return f"INT64_C({e.value})"
        terms = []
        for _, mono, coeff in e._terms:
            factors = [self._factor(a) for a in mono]
            if coeff != 1 or not factors:
                factors.append(f"INT64_C({coeff})")
            terms.append(" * ".join(factors))
        return "(" + " + ".join(terms) + ")"

    def _factor(self, a: str) -> str:
        if type(a) is str:
            return f"sym[{self.index[a]}]"
        x, y = (self.expr(arg) for arg in a.args)
        return f"relax__{a.op}({x}, {y})"


PRELUDE = r"""
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

static _Thread_local char relax__message[1024];

static int relax__fail(int code, const char *format, ...) {
  va_list args;
  va_start(args, format);
  vsnprintf(relax__message, sizeof relax__message, format, args);
  va_end(args);
  return code;
}

/* Floor semantics, as the symbolic algebra (shape_infer/expr.py) defines them; x / 0 gives 0. */
static inline int64_t relax__floordiv(int64_t a, int64_t b) {
  if (b == 0) return 0;
  int64_t q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}
static inline int64_t relax__ceildiv(int64_t a, int64_t b) { return -relax__floordiv(-a, b); }
static inline int64_t relax__mod(int64_t a, int64_t b) { return b == 0 ? 0 : a - relax__floordiv(a, b) * b; }
static inline int64_t relax__min(int64_t a, int64_t b) { return a < b ? a : b; }
static inline int64_t relax__max(int64_t a, int64_t b) { return a > b ? a : b; }

static const char *relax__dtype_name(int32_t dtype) {
  switch (dtype) {
%DTYPE_CASES%
    default: return "an unknown dtype";
  }
}

/* Checks the pointers, dtype and rank of one value; its dims are checked by the caller. */
static int relax__check(const relax_tensor *t, const char *fn, const char *what, int32_t dtype, int64_t ndim,
                        const char *type) {
  if (t->dtype != dtype)
    return relax__fail(RELAX_ERR_DTYPE, "@%s: %s has dtype %s (%d), expected %s (%d)", fn, what,
                       relax__dtype_name(t->dtype), (int)t->dtype, relax__dtype_name(dtype), (int)dtype);
  if (t->ndim != ndim)
    return relax__fail(RELAX_ERR_RANK, "@%s: %s has rank %lld, expected rank %lld %s", fn, what,
                       (long long)t->ndim, (long long)ndim, type);
  if (ndim > 0 && t->shape == NULL)
    return relax__fail(RELAX_ERR_NULL, "@%s: %s has a NULL shape", fn, what);
  int64_t n = 1;
  for (int64_t i = 0; i < ndim; ++i) {
    if (t->shape[i] < 0)
      return relax__fail(RELAX_ERR_SHAPE, "@%s: %s dim %lld is %lld, expected a size >= 0", fn, what,
                         (long long)i, (long long)t->shape[i]);
    n *= t->shape[i];
  }
  if (t->data == NULL && n > 0)
    return relax__fail(RELAX_ERR_NULL, "@%s: %s has NULL data for %lld element(s)", fn, what, (long long)n);
  return RELAX_OK;
}

static int relax__count(const char *fn, const char *what, const void *values, int64_t n, int64_t expected) {
  if (n != expected)
    return relax__fail(RELAX_ERR_ARG_COUNT, "@%s takes %lld %s, got %lld", fn, (long long)expected, what,
                       (long long)n);
  if (n > 0 && values == NULL)
    return relax__fail(RELAX_ERR_NULL, "@%s: the %s array is NULL", fn, what);
  return RELAX_OK;
}

/* memrefCopy of MLIR's C runner utilities (libmlir_c_runner_utils), which lowered memref.copy calls:
   copies a strided memref of any rank element by element. */
typedef struct { int64_t rank; void *descriptor; } relax__unranked;
void memrefCopy(int64_t elem_size, relax__unranked *src, relax__unranked *dst);
void memrefCopy(int64_t elem_size, relax__unranked *src, relax__unranked *dst) {
  int64_t rank = src->rank;
  char **sp = (char **)src->descriptor, **dp = (char **)dst->descriptor;
  int64_t *s = (int64_t *)(sp + 2), *d = (int64_t *)(dp + 2);
  char *from = sp[1] + s[0] * elem_size, *to = dp[1] + d[0] * elem_size;
  const int64_t *sizes = s + 1, *sstr = s + 1 + rank, *dstr = d + 1 + rank;
  int64_t index[64] = {0}, n = 1;
  for (int64_t i = 0; i < rank; ++i) n *= sizes[i];
  if (n == 0) return;
  if (rank > 64) return;
  for (;;) {
    int64_t so = 0, dof = 0;
    for (int64_t i = 0; i < rank; ++i) {
      so += index[i] * sstr[i];
      dof += index[i] * dstr[i];
    }
    memcpy(to + dof * elem_size, from + so * elem_size, (size_t)elem_size);
    int64_t axis = rank - 1;
    while (axis >= 0 && ++index[axis] == sizes[axis]) index[axis--] = 0;
    if (axis < 0) return;
  }
}
"""


def _descriptor_struct(rank: int) -> str:
    if rank == 0:
        return "typedef struct { void *allocated, *aligned; int64_t offset; } relax__memref0;"
    return (
        f"typedef struct {{ void *allocated, *aligned; int64_t offset, sizes[{rank}], strides[{rank}]; }} "
        f"relax__memref{rank};"
    )


class _WrapperWriter:
    """The C code of one function: argument checks, output dims, descriptors, the call."""

    def __init__(self, api: FunctionApi, prefix: str) -> None:
        self.api = api
        self.prefix = prefix
        self.fn = f"{prefix}_{api.c_name}"
        self.exprs = _ExprWriter(api.symbols)
        self.ranks: set[int] = {1}

    def _fail(self, code: str, message: str, *args: str) -> str:
        extra = "".join(f", {a}" for a in args)
        return f"return relax__fail({code}, {_c_string(_esc(f'@{self.api.name}: ') + message)}{extra});"

    def bind(self) -> list[str]:
        """``static int <fn>__bind(inputs, n_inputs, sym)``: the Python runtime's ``bind``, in its order."""
        api, lines = self.api, []
        name = _c_string(api.name)
        lines.append(
            f"static int {self.fn}__bind(const relax_tensor *inputs, int64_t n_inputs, int64_t *sym) {{"
        )
        lines.append(f'  int rc = relax__count({name}, "input(s)", inputs, n_inputs, {len(api.inputs)});')
        lines += ["  if (rc) return rc;", "  (void)sym;"]
        origin: dict[str, str] = {}  # symbol -> where it was defined
        from_int: set[str] = set()  # symbols defined by a prim/shape value (may be negative)
        pending: list[tuple[Expr, str, str]] = []
        for i, v in enumerate(api.inputs):
            what = f"parameter '{v.name}'"
            dtype = f"RELAX_{DTYPES[v.dtype][0]}"
            lines.append(
                f"  rc = relax__check(&inputs[{i}], {name}, {_c_string(what)}, {dtype}, {v.ndim}, "
                f"{_c_string(_type_text(v))});"
            )
            lines.append("  if (rc) return rc;")
            if v.kind == "shape":
                lines.append(
                    f"  if (inputs[{i}].shape[0] != {len(v.dims)}) "
                    + self._fail(
                        "RELAX_ERR_SHAPE",
                        _esc(what) + f" has %lld values, expected {len(v.dims)}",
                        f"(long long)inputs[{i}].shape[0]",
                    )
                )
            for axis, d in enumerate(v.dims):
                if v.kind == "tensor":
                    actual, where = f"inputs[{i}].shape[{axis}]", f"{what} dim {axis}"
                else:
                    actual = f"((const int64_t *)inputs[{i}].data)[{axis}]"
                    where = f"{what} value #{axis}" if v.kind == "shape" else what
                if d is None:
                    continue
                if d.is_const:
                    message = f"{_esc(where)} is %lld, expected {d.value}"
                    lines.append(
                        f"  if ({actual} != {d.value}) "
                        + self._fail("RELAX_ERR_SHAPE", message, f"(long long){actual}")
                    )
                elif d.free_symbols == {str(d)}:
                    s = str(d)
                    index = api.symbols.index(s)
                    if s not in origin:
                        origin[s] = where
                        if v.kind != "tensor":
                            from_int.add(s)
                        lines.append(f"  sym[{index}] = {actual};")
                        continue
                    message = f"{_esc(where)} is %lld, but symbol '{_esc(s)}' is %lld from {_esc(origin[s])}"
                    lines.append(
                        f"  if ({actual} != sym[{index}]) "
                        + self._fail(
                            "RELAX_ERR_SHAPE", message, f"(long long){actual}", f"(long long)sym[{index}]"
                        )
                    )
                else:
                    pending.append((d, actual, where))
        for d, actual, where in pending:
            expected = self.exprs.expr(d)
            message = f"{_esc(where)} is %lld, expected {_esc(str(format_dim(d)))} = %lld"
            lines.append(
                f"  if ({actual} != {expected}) "
                + self._fail("RELAX_ERR_SHAPE", message, f"(long long){actual}", f"(long long){expected}")
            )
        sizes = {
            x
            for v in api.inputs
            if v.kind == "tensor"
            for d in v.dims
            if d is not None
            for x in d.free_symbols
        }
        for s in api.symbols:
            if s not in sizes or s not in from_int:
                continue
            index = api.symbols.index(s)
            message = f"symbol '{_esc(s)}' is %lld (from {_esc(origin[s])}), but it sizes tensors, so it must be >= 0"
            lines.append(
                f"  if (sym[{index}] < 0) "
                + self._fail("RELAX_ERR_SHAPE", message, f"(long long)sym[{index}]")
            )
        for s, bound in api.upper_bounds.items():
            if s not in origin:
                continue
            index = api.symbols.index(s)
            message = f"symbol '{_esc(s)}' is %lld (from {_esc(origin[s])}), above its upper bound {bound}"
            lines.append(
                f"  if (sym[{index}] > {bound}) "
                + self._fail("RELAX_ERR_SHAPE", message, f"(long long)sym[{index}]")
            )
        lines += ["  return RELAX_OK;", "}", ""]
        return lines

    def output_dims(self) -> list[list[str]]:
        """C expressions of every output's dims (a prim/shape output: its tensor's dims)."""
        dims = []
        for v in self.api.outputs:
            if v.kind == "tensor":
                dims.append([self.exprs.expr(d) for d in v.dims])  # type: ignore[arg-type]
            elif v.kind == "shape":
                dims.append([f"INT64_C({len(v.dims)})"])
            else:
                dims.append([])
        return dims

    def n_symbols(self) -> int:
        return max(len(self.api.symbols), 1)

    def shapes_function(self) -> list[str]:
        api = self.api
        total = sum(len(d) for d in self.output_dims())
        lines = [
            f"int {self.fn}_output_shapes(const relax_tensor *inputs, int64_t n_inputs, int64_t *dims, "
            "int64_t n_dims) {",
            f"  int64_t sym[{self.n_symbols()}];",
            f"  int rc = {self.fn}__bind(inputs, n_inputs, sym);",
            "  if (rc) return rc;",
            f'  rc = relax__count({_c_string(api.name)}, "output dim(s)", dims, n_dims, {total});',
            "  if (rc) return rc;",
        ]
        at = 0
        for exprs in self.output_dims():
            for e in exprs:
                lines.append(f"  dims[{at}] = {e};")
                at += 1
        lines += ["  return RELAX_OK;", "}", ""]
        return lines

    def call_function(self) -> list[str]:
        api = self.api
        lines = [
            f"int {self.fn}(const relax_tensor *inputs, int64_t n_inputs, relax_tensor *outputs, int64_t n_outputs) {{",
            f"  int64_t sym[{self.n_symbols()}];",
            f"  int rc = {self.fn}__bind(inputs, n_inputs, sym);",
            "  if (rc) return rc;",
            f'  rc = relax__count({_c_string(api.name)}, "output(s)", outputs, n_outputs, {len(api.outputs)});',
            "  if (rc) return rc;",
        ]
        args: list[str] = []
        decls: list[str] = []
        for i, v in enumerate(api.inputs):
            if v.kind == "tensor":
                decls += self._descriptor(f"in{i}", f"inputs[{i}]", len(v.dims))
                args.append(f"&in{i}")
            else:
                args += [f"((const int64_t *)inputs[{i}].data)[{j}]" for j in range(len(v.dims))]
        for k, (v, dims) in enumerate(zip(api.outputs, self.output_dims())):
            what = f"output #{k}"
            dtype = f"RELAX_{DTYPES[v.dtype][0]}"
            lines.append(
                f"  rc = relax__check(&outputs[{k}], {_c_string(api.name)}, {_c_string(what)}, {dtype}, {v.ndim}, "
                f"{_c_string(_type_text(v))});"
            )
            lines.append("  if (rc) return rc;")
            shown = [str(format_dim(d)) for d in v.dims] if v.kind == "tensor" else [str(len(v.dims))]
            for axis, (e, text) in enumerate(zip(dims, shown)):
                expected = f"{text} = %lld" if not text.lstrip("-").isdigit() else "%lld"
                lines.append(
                    f"  if (outputs[{k}].shape[{axis}] != {e}) "
                    + self._fail(
                        "RELAX_ERR_SHAPE",
                        f"{what} dim {axis} is %lld, expected {_esc(expected).replace('%%lld', '%lld')}",
                        f"(long long)outputs[{k}].shape[{axis}]",
                        f"(long long){e}",
                    )
                )
            rank = len(v.dims) if v.kind == "tensor" else 1
            if v.kind == "tensor":
                decls += self._descriptor(f"out{k}", f"outputs[{k}]", rank)
            else:
                n = len(v.dims)
                self.ranks.add(1)
                decls.append(
                    f"  relax__memref1 out{k} = {{outputs[{k}].data, outputs[{k}].data, 0, {{{n}}}, {{1}}}};"
                )
            args.append(f"&out{k}")
        lines += decls
        lines.append("  int64_t status[4] = {0, 0, 0, 0};")
        lines.append("  relax__memref1 status_ref = {status, status, 0, {4}, {1}};")
        args.append("&status_ref")
        lines.append(f"  _mlir_ciface_{api.name}({', '.join(args)});")
        if api.checks:
            lines.append("  switch (status[0]) {")
            lines.append("    case 0: break;")
            for j, check in enumerate(api.checks):
                lines.append(f"    case {j + 1}: " + self._fail("RELAX_ERR_RUNTIME", *_check_format(check)))
            lines.append(
                "    default: " + self._fail("RELAX_ERR_RUNTIME", "check %lld failed", "(long long)status[0]")
            )
            lines.append("  }")
        lines += ["  return RELAX_OK;", "}", ""]
        return lines

    def _descriptor(self, name: str, tensor: str, rank: int) -> list[str]:
        """A contiguous, row-major memref descriptor of ``tensor``'s caller buffer."""
        self.ranks.add(rank)
        if rank == 0:
            return [f"  relax__memref0 {name} = {{{tensor}.data, {tensor}.data, 0}};"]
        sizes = ", ".join(f"{tensor}.shape[{a}]" for a in range(rank))
        lines = [f"  relax__memref{rank} {name} = {{{tensor}.data, {tensor}.data, 0, {{{sizes}}}, {{0}}}};"]
        lines.append(f"  {name}.strides[{rank - 1}] = 1;")
        for a in range(rank - 2, -1, -1):
            lines.append(f"  {name}.strides[{a}] = {name}.strides[{a + 1}] * {tensor}.shape[{a + 1}];")
        return lines

    def extern(self) -> str:
        params = []
        for v in self.api.inputs:
            params += [f"relax__memref{len(v.dims)} *"] if v.kind == "tensor" else ["int64_t"] * len(v.dims)
        for v in self.api.outputs:
            params.append(f"relax__memref{len(v.dims) if v.kind == 'tensor' else 1} *")
        params.append("relax__memref1 *")
        return f"void _mlir_ciface_{self.api.name}({', '.join(params)});"


def wrapper_source(apis: list[FunctionApi], header_name: str, prefix: str = "relax") -> str:
    """The C source of the wrapper (compiled into the library next to the model's object)."""
    writers = [_WrapperWriter(api, prefix) for api in apis]
    bodies: list[str] = []
    for w in writers:
        bodies += w.bind() + w.shapes_function() + w.call_function()
    for name, variants in _rank_groups(apis).items():
        bodies += _dispatch_functions(name, variants, prefix)
    ranks = sorted(set().union(*(w.ranks for w in writers)) if writers else {1})
    cases = "\n".join(f'    case RELAX_{c}: return "{d}";' for d, (c, _) in DTYPES.items())
    parts = [
        f"/* Generated by relax-compile: the C API of {header_name}. Do not edit. */",
        f'#include "{header_name}"',
        PRELUDE.replace("%DTYPE_CASES%", cases),
        *(_descriptor_struct(r) for r in ranks),
        "",
        *(w.extern() for w in writers),
        "",
        f"const char *{prefix}_last_error(void) {{ return relax__message; }}",
        "",
        *bodies,
    ]
    return "\n".join(parts)


HEADER_DOC = """\
 * Calling convention. Every value is passed as a relax_tensor: a caller-owned, C-contiguous (row-major)
 * buffer `data` with `ndim` dims `shape` and element type `dtype` (relax_dtype). A prim (integer)
 * parameter or output is a 0-d RELAX_I64 tensor, a shape value a 1-d RELAX_I64 tensor of its length;
 * tuple parameters and results are flattened in order. Booleans are one byte each (0 or 1).
 *
 *   int PREFIX_<fn>(const relax_tensor *inputs, int64_t n_inputs, relax_tensor *outputs, int64_t n_outputs);
 *     Checks the inputs (count, dtype, rank, constant dims, one value per symbol, symbolic dims, upper
 *     bounds) and the output buffers (dtype, rank, dims), then runs the function, writing every output
 *     into the caller's buffer. Output buffers must not overlap the inputs. Parameters marked "updated
 *     in place" are written through their input buffer. Returns RELAX_OK or an error code; the message
 *     (naming the parameter, the symbol and the values) is then PREFIX_last_error().
 *   int PREFIX_<fn>_output_shapes(const relax_tensor *inputs, int64_t n_inputs, int64_t *dims, int64_t n_dims);
 *     Checks the inputs like PREFIX_<fn> and writes the dims of every output, output after output
 *     (PREFIX_<FN>_OUTPUT_DIMS of them), so that the caller can allocate the outputs first.
 *   const char *PREFIX_last_error(void);
 *     The message of the last failed call on this thread (thread-local storage, valid until the next call).
 *
 * Nothing is allocated for the caller and nothing needs freeing; the library needs only libc and libm.
 * Functions may be called from several threads at once."""


def header_source(apis: list[FunctionApi], guard: str, library: str, prefix: str = "relax") -> str:
    """The header of the library: the shared types, then each function's documentation and prototypes."""
    upper = prefix.upper()
    dtypes = "\n".join(f"  RELAX_{c} = {v}, /* {d} */" for d, (c, v) in DTYPES.items())
    errors = "\n".join(f"  {n} = {v}, /* {doc} */" for n, v, doc in ERRORS)
    lines = [
        f"/* {library}: C API of a model compiled ahead of time by relax-compile (relax_mlir). Generated; do not edit.",
        " *",
        HEADER_DOC.replace("PREFIX", prefix),
        " */",
        f"#ifndef {guard}",
        f"#define {guard}",
        "",
        "#include <stdint.h>",
        "",
        "#ifdef __cplusplus",
        'extern "C" {',
        "#endif",
        "",
        "#ifndef RELAX_C_API_TYPES /* shared by the headers of every relax-compile library */",
        "#define RELAX_C_API_TYPES",
        "/* Element types (values are stable across libraries). */",
        "typedef enum relax_dtype {",
        dtypes,
        "} relax_dtype;",
        "",
        "/* Return codes. */",
        "typedef enum relax_status {",
        errors,
        "} relax_status;",
        "",
        "/* A caller-owned buffer: `ndim` dims in `shape`, C-contiguous elements of `dtype` in `data`. */",
        "typedef struct relax_tensor {",
        "  void *data;",
        "  int64_t ndim;",
        "  const int64_t *shape;",
        "  int32_t dtype; /* a relax_dtype */",
        "} relax_tensor;",
        "#endif /* RELAX_C_API_TYPES */",
        "",
        f"const char *{prefix}_last_error(void);",
        "",
    ]
    for api in apis:
        fn, macro = f"{prefix}_{api.c_name}", f"{upper}_{api.c_name.upper()}"
        bounds = ", ".join(f"{k} <= {v}" for k, v in api.upper_bounds.items())
        lines.append(f"/* @{api.name}" + (f", upper bounds: {bounds}" if bounds else ""))
        for i, v in enumerate(api.inputs):
            note = ", updated in place" if v.inplace else ""
            lines.append(f" *   input {i}: {v.name}: {_type_text(v)}{note}")
        for k, v in enumerate(api.outputs):
            lines.append(f" *   output {k}: {_type_text(v)}")
        lines.append(" */")
        dims = [len(v.dims) if v.kind == "tensor" else v.ndim for v in api.outputs]
        lines += [
            f"#define {macro}_N_INPUTS {len(api.inputs)}",
            f"#define {macro}_N_OUTPUTS {len(api.outputs)}",
            f"#define {macro}_INPUT_DTYPES {{{', '.join(f'RELAX_{DTYPES[v.dtype][0]}' for v in api.inputs)}}}",
            f"#define {macro}_INPUT_NDIMS {{{', '.join(str(v.ndim) for v in api.inputs)}}}",
            f"#define {macro}_OUTPUT_DTYPES {{{', '.join(f'RELAX_{DTYPES[v.dtype][0]}' for v in api.outputs)}}}",
            f"#define {macro}_OUTPUT_NDIMS {{{', '.join(str(d) for d in dims)}}}",
            f"#define {macro}_OUTPUT_DIMS {sum(dims)}",
            f"int {fn}(const relax_tensor *inputs, int64_t n_inputs, relax_tensor *outputs, int64_t n_outputs);",
            f"int {fn}_output_shapes(const relax_tensor *inputs, int64_t n_inputs, int64_t *dims, int64_t n_dims);",
            "",
        ]
    for name, variants in _rank_groups(apis).items():
        fn = f"{prefix}_{c_identifier(name)}"
        ranks = ", ".join("x".join(map(str, v.rank_variant[2])) for v in variants)  # type: ignore[index]
        lines += [
            f"/* @{name}: parameters of unknown rank, compiled once per rank ({ranks}): calls the",
            f" * {prefix}_{c_identifier(name)}__r<rank> function above for the inputs' ranks (RELAX_ERR_RANK for another rank). */",
            f"int {fn}(const relax_tensor *inputs, int64_t n_inputs, relax_tensor *outputs, int64_t n_outputs);",
            f"int {fn}_output_shapes(const relax_tensor *inputs, int64_t n_inputs, int64_t *dims, int64_t n_dims);",
            "",
        ]
    lines += ["#ifdef __cplusplus", "}", "#endif", "", f"#endif /* {guard} */", ""]
    return "\n".join(lines)

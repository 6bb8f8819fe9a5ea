"""Calling compiled relax functions with numpy arrays: input checks, output allocation, errors.

Before native code runs, every input is checked against the function's relax signature: count,
kind, dtype, rank, constant dims, one value per symbol across all parameters, symbolic dim
expressions, and declared upper bounds. Non-contiguous arrays are copied. Outputs whose shapes
follow from the inputs are allocated here as numpy arrays and written in place by the compiled code;
data-dependent outputs come back from native code and are copied into numpy arrays, then freed (each
allocation once: results may share one). Native code is entered through its guarded entry
(``transforms/check_allocations.py``): a failed allocation inside it raises ``OutOfMemoryError``, as does an output numpy
cannot allocate.

A call takes a fast path planned when the function is loaded: every dim a check reads is a position
in one tuple (the inputs' shapes and integers, in order), constant dims and repeated symbols are
compared with precomputed getters, and a call's memref descriptors, integer outputs and status words
are packed into one reused int64 buffer (a frame). Whenever the fast path meets anything it does not
accept (a failed check, an ndarray subclass, a value that raises), the call is redone by ``bind``,
the reference implementation of every check: it raises the error (so messages and their order do not
depend on the path) or returns the values to run with.
"""

from __future__ import annotations

import ctypes
import struct
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from itertools import chain
from operator import itemgetter
from typing import Any

import numpy as np

from relax_mlir.dialects.types import NUMPY_DTYPES, PrimType, TensorType, parse_type
from relax_mlir.errors import InputError, OutOfMemoryError
from relax_mlir.runtime import libs
from relax_mlir.runtime.loader import LoadedObject
from relax_mlir.shape_infer.expr import Expr, format_dim
from relax_mlir.transforms.check_allocations import CONTEXT_BYTES, GUARD_PREFIX, KEY_GLOBAL

_libc = ctypes.CDLL(None)
_libc.free.argtypes = [ctypes.c_void_p]
_alloc_key: ctypes.c_uint32 | None = None


def allocation_key() -> int:
    """The process's pthread key naming a thread's allocation context in guarded calls (``transforms/check_allocations.py``)."""
    global _alloc_key
    if _alloc_key is None:
        key = ctypes.c_uint32()
        if _libc.pthread_key_create(ctypes.byref(key), None) != 0:
            raise OSError("pthread_key_create failed")
        _alloc_key = key
    return _alloc_key.value


def format_check(check: str, actual: int, expected: int) -> str:
    """The message of a failed host check: its template with ``{actual}``/``{expected}`` replaced by the two
    values the check recorded (a check that compares no values, such as ``relax.check_true``, has neither)."""
    return check.replace("{actual}", str(actual)).replace("{expected}", str(expected))


_DESCRIPTORS: dict[int, type[ctypes.Structure]] = {}


def descriptor_type(rank: int) -> type[ctypes.Structure]:
    """The ctypes struct of a ranked memref descriptor: pointers, offset, sizes, strides."""
    if rank not in _DESCRIPTORS:
        fields = [("allocated", ctypes.c_void_p), ("aligned", ctypes.c_void_p), ("offset", ctypes.c_int64)]
        if rank:
            fields += [("sizes", ctypes.c_int64 * rank), ("strides", ctypes.c_int64 * rank)]
        _DESCRIPTORS[rank] = type(f"MemRef{rank}D", (ctypes.Structure,), {"_fields_": fields})
    return _DESCRIPTORS[rank]


def numpy_dtype(dtype: str | None, what: str) -> np.dtype:
    if dtype not in NUMPY_DTYPES:
        raise InputError(f"{what}: dtype {dtype} has no numpy equivalent")
    return np.dtype(NUMPY_DTYPES[dtype])


# -- data pointers and strides ---------------------------------------------------------------------
_read_word = ctypes.c_size_t.from_address
_DATA_OFFSET = object.__basicsize__  # PyArrayObject's ``data`` follows PyObject_HEAD (numpy's ABI)


def _address_by_ctypes(array: np.ndarray) -> int:
    return array.ctypes.data


def _address_by_header(array: np.ndarray) -> int:
    return _read_word(id(array) + _DATA_OFFSET).value


def _choose_address() -> Callable[[np.ndarray], int]:
    """Read ``data`` from the array header (8x faster than ``.ctypes.data``) where it is verified."""
    if sys.implementation.name != "cpython":
        return _address_by_ctypes
    base = np.arange(24, dtype=np.float64)
    probes = [base, base[5:], base.reshape(4, 6)[1:, 2:], np.empty(0, np.float32), np.zeros((), np.int8)]
    if all(_address_by_header(a) == a.ctypes.data for a in probes):
        return _address_by_header
    return _address_by_ctypes


data_address = _choose_address()


def _row_major(shape: tuple[int, ...]) -> tuple[int, ...]:
    """Element strides of a C-contiguous array (what an identity-layout memref assumes)."""
    n = len(shape)
    if n < 2:
        return (1,) * n
    if n == 2:
        return (shape[1], 1)
    strides = [1] * n
    for i in range(n - 1, 0, -1):
        strides[i - 1] = strides[i] * shape[i]
    return tuple(strides)


def _free_symbols(shape: Sequence[Expr | None] | None) -> set[str]:
    return {x for d in shape or () if d is not None for x in d.free_symbols}


def _getter(positions: Sequence[int]) -> Callable[[Sequence[Any]], tuple[Any, ...]] | None:
    """``lambda xs: tuple(xs[p] for p in positions)`` (None when there are none), at C speed."""
    if not positions:
        return None
    if len(positions) == 1:
        (p,) = positions
        return lambda xs: (xs[p],)
    return itemgetter(*positions)


def _shape_getter(positions: Sequence[int]) -> Callable[[Sequence[int]], Any]:
    """The ``np.empty`` shape at ``positions`` of the extended dims (an int for rank 1)."""
    if not positions:
        return lambda xs: ()
    return itemgetter(*positions)


# Input kinds of the fast path (_INPLACE: a tensor the function updates in place). _SLOW (no numpy dtype, unknown rank) always goes to ``bind``, which
# rejects every call of such a function, so a _SLOW input never reaches ``_run``. _FIXED: a run of inputs
# fixed for every call (``Fixed``), in the plan of a ``Fixed`` only.
_TENSOR, _PRIM, _SHAPE, _SLOW, _INPLACE, _FIXED = 0, 1, 2, 3, 4, 5
_STATUS_WORDS = 4  # check code, actual, expected, spare
_DESC_WORDS_1D = 5  # allocated, aligned, offset, size, stride


def pack_list(items: Any, dtype: str, rank: int | None, what: str) -> tuple[np.ndarray, np.ndarray]:
    """A list of arrays as a run-time list's ``(data, shapes)`` (see ``relax_mlir.dialects.lists``);
    ``rank`` None: any rank, the same for every item."""
    np_dtype = np.dtype(NUMPY_DTYPES[dtype])
    if not isinstance(items, (list, tuple)):
        raise InputError(f"{what} must be a list of {np_dtype} arrays, got {type(items).__name__}")
    arrays = [np.asarray(x) for x in items]
    if rank is None:
        rank = arrays[0].ndim if arrays else 0
    for j, a in enumerate(arrays):
        if a.ndim != rank or a.dtype != np_dtype:
            raise InputError(
                f"{what}: item #{j} must be a {rank}-D {np_dtype} array, got {a.ndim}-D {a.dtype}"
            )
    data = np.concatenate([a.reshape(-1) for a in arrays]) if arrays else np.zeros(0, np_dtype)
    shapes = np.array([a.shape for a in arrays], np.int64).reshape(len(arrays), rank)
    return data, shapes


def unpack_list(data: np.ndarray, shapes: np.ndarray) -> list[np.ndarray]:
    """A run-time list's ``(data, shapes)`` as a list of arrays (views of ``data``)."""
    sizes = np.prod(shapes, axis=1, dtype=np.int64) if shapes.shape[1] else np.ones(len(shapes), np.int64)
    ends = np.cumsum(sizes)
    return [data[e - n : e].reshape(tuple(row)) for e, n, row in zip(ends, sizes, shapes.tolist())]


def descriptor_words(array: np.ndarray) -> tuple[int, ...]:
    """The memref descriptor of a C-contiguous array: allocated and aligned pointers, offset, sizes, strides
    (``Function._run`` writes the same words inline, for speed)."""
    address = data_address(array)
    return (address, address, 0, *array.shape, *_row_major(array.shape))


@dataclass
class Fixed:
    """Tensor inputs that are the same arrays in every call (``BoundFunction``'s load-time parameters),
    checked once (``Signature.fix``): a call checks and packs only the others.

    ``plan`` is the function's input plan with each run of consecutive fixed inputs as one ``_FIXED`` entry
    (its rank field: the run's index in ``runs``); ``runs`` holds each run's arrays and dims; ``layout``
    is the order of ``Function._run``'s descriptors: an input's position among the tensors, or a fixed
    run's descriptor words."""

    plan: list[tuple[int, Any, int]]
    runs: list[tuple[list[np.ndarray], tuple[int, ...]]]
    layout: list[int | tuple[int, ...]]
    free: int  # the inputs a call passes


@dataclass
class _Input:
    kind: str
    type: Any
    name: str
    inplace: bool = False  # the function writes into this array (e.g. a KV cache): no copy may be made


class _Frame:
    """The reused memory of one call in flight: descriptors, int outputs, status, native arguments."""

    __slots__ = ("buffer", "args", "context")

    def __init__(self, buffer: ctypes.Array, args: list[int], context: ctypes.Array | None) -> None:
        self.buffer = buffer
        self.args = args
        self.context = context  # a guarded call's jmp_buf and failed allocation size


class Signature:
    """A relax function's signature and every check of a call's arguments against it (shared by the
    targets' callables: ``__call__`` checks and flattens the arguments, then hands them to ``_run``)."""

    def __init__(self, name: str, signature: dict[str, Any]) -> None:
        self.name = name
        self.inputs = [
            _Input(x["kind"], parse_type(x["type"]), x["name"], x.get("inplace", False))
            for x in signature["inputs"]
        ]
        self.outputs = [(x["kind"], parse_type(x["type"])) for x in signature["outputs"]]
        self.checks: list[str] = signature["checks"]
        self.upper_bounds: dict[str, int] = signature["upper_bounds"]
        self.param_structure = signature["param_structure"]
        self.result_structure = signature["result_structure"]
        self._flat_results = all(s == 0 for s in self.result_structure)
        # parameters bound by ``Executable.load_params`` ([index, name]), and a load function's result names
        self.load_time: list[tuple[int, str]] = [(int(i), n) for i, n in signature.get("load_time", [])]
        self.load_outputs: list[str] | None = signature.get("load_outputs")
        # one rank of a function of unknown-rank parameters: {"of", "params", "ranks"} (relax-specialize-ranks)
        self.rank_variant: dict[str, Any] | None = signature.get("rank_variant")
        self._plan_inputs()

    def __repr__(self) -> str:
        params = ", ".join(f"{i.name}: {i.type}" for i in self.inputs)
        return f"<compiled @{self.name}({params})>"

    # -- planning the fast path (at load time) --------------------------------------------------------
    def _plan_inputs(self) -> None:
        """Kinds, dtypes and ranks of the inputs, and every dim check as positions in the dims tuple."""
        self._n_params = len(self.param_structure)
        self._flat_params = all(s == 0 for s in self.param_structure)
        plan: list[tuple[int, np.dtype | None, int]] = []
        first: dict[str, int] = {}  # symbol -> position of the dim that defines it
        int_at: set[int] = set()  # positions holding prim/shape values
        const_at: list[int] = []
        const_want: dict[int, int] = {}
        repeat_at: list[int] = []
        repeat_of: list[int] = []
        exprs: list[tuple[Expr, int]] = []
        position = 0
        for spec in self.inputs:
            t = spec.type
            if spec.kind == "tensor":
                dims = t.shape
                dtype = np.dtype(NUMPY_DTYPES[t.dtype]) if t.dtype in NUMPY_DTYPES else None
                if dims is None or dtype is None:
                    plan.append((_SLOW, None, 0))
                    continue
                plan.append((_INPLACE if spec.inplace else _TENSOR, dtype, len(dims)))
            elif spec.kind == "prim":
                dims = (t.value,)
                plan.append((_PRIM, None, 1))
                int_at.add(position)
            else:
                if t.values is None:
                    plan.append((_SLOW, None, 0))
                    continue
                dims = tuple(t.values)
                plan.append((_SHAPE, None, len(dims)))
                int_at.update(range(position, position + len(dims)))
            for d in dims:
                at, position = position, position + 1
                if d is None:
                    continue
                if d.is_const:
                    const_at.append(at)
                    const_want[at] = d.value
                elif d.free_symbols == {str(d)}:
                    if str(d) in first:
                        repeat_at.append(at)
                        repeat_of.append(first[str(d)])
                    else:
                        first[str(d)] = at
                else:
                    exprs.append((d, at))
        self._input_plan = plan
        self._fast = all(kind != _SLOW for kind, _, _ in plan)
        self._const_get = _getter(const_at)
        self._const_want = tuple(const_want[a] for a in const_at)
        self._repeat_get = _getter(repeat_at)
        self._repeat_ref = _getter(repeat_of)
        self._exprs = exprs
        self._symbols = list(first)
        self._symbol_get = _getter(list(first.values()))
        self._bounds: list[tuple[int, int]] = []
        for name, bound in self.upper_bounds.items():
            if name in first:
                self._bounds.append((first[name], bound))
            elif bound < 0:  # ``bind`` rejects an undefined symbol (0) over a negative bound
                self._fast = False
        # symbols that size tensors but may be defined by a prim/shape value: negative values are errors
        self._size_symbols = {
            x for i in self.inputs if i.kind == "tensor" for x in _free_symbols(i.type.shape)
        }
        self._nonnegative = [at for name, at in first.items() if name in self._size_symbols and at in int_at]
        self._n_dims = position

    def _env(self, dims: Sequence[int]) -> dict[str, int]:
        """The symbol values ``bind`` would return, from the dims tuple."""
        return dict(zip(self._symbols, self._symbol_get(dims))) if self._symbol_get else {}

    def fix(self, values: Mapping[int, np.ndarray]) -> Fixed | None:
        """The fast path with the tensor inputs ``values`` (flat input index -> array) fixed, or None when
        the function has no fast path or an array would not take it (calls then check every input)."""
        if not (self._fast and self._flat_params) or not values:
            return None
        plan: list[tuple[int, Any, int]] = []
        runs: list[tuple[list[np.ndarray], tuple[int, ...]]] = []
        layout: list[int | tuple[int, ...]] = []
        free = 0
        tensors = 0
        for i, (kind, dtype, rank) in enumerate(self._input_plan):
            if i not in values:
                plan.append((kind, dtype, rank))
                free += 1
                if kind in (_TENSOR, _INPLACE):
                    layout.append(tensors)
                    tensors += 1
                continue
            value = values[i]
            if kind != _TENSOR or type(value) is not np.ndarray or value.dtype != dtype or value.ndim != rank:
                return None
            if not value.flags.c_contiguous:
                return None
            words = descriptor_words(value)
            if plan and plan[-1][0] == _FIXED:
                arrays, dims = runs[-1]
                runs[-1] = ([*arrays, value], dims + value.shape)
                layout[-1] = layout[-1] + words  # type: ignore[operator]
            else:
                plan.append((_FIXED, None, len(runs)))
                runs.append(([value], value.shape))
                layout.append(words)
            tensors += 1
        return Fixed(plan, runs, layout, free)

    def call_fixed(self, fixed: Fixed, args: Sequence[Any], full: Callable[[], list[Any]]) -> Any:
        """``call_all`` with ``fixed``'s inputs and ``args`` for the others (in their order); ``full()``
        gives every argument, for ``bind``'s checks and errors when the fast path declines."""
        gathered = None
        if len(args) == fixed.free:
            try:
                gathered = self._gather(args, fixed)
            except Exception:  # noqa: BLE001 (``bind`` raises it again, in its order)
                gathered = None
        if gathered is None:
            return self.call_all(*full())
        return self._run(*gathered, fixed)

    # -- checking inputs ---------------------------------------------------------------------------
    def _flatten(self, args: Sequence[Any]) -> list[Any]:
        if len(args) != len(self.param_structure):
            raise InputError(f"@{self.name} takes {len(self.param_structure)} argument(s), got {len(args)}")
        flat: list[Any] = []

        def walk(value: Any, structure: Any, what: str) -> None:
            if structure == 0:
                flat.append(value)
                return
            if isinstance(structure, dict):  # a run-time list: packed into (data, shapes)
                flat.extend(pack_list(value, *structure["list"], f"@{self.name}: {what}"))
                return
            if not isinstance(value, (tuple, list)) or len(value) != len(structure):
                raise InputError(f"@{self.name}: {what} must be a tuple of {len(structure)} values")
            for j, (v, s) in enumerate(zip(value, structure)):
                walk(v, s, f"{what}.{j}")

        for i, (a, s) in enumerate(zip(args, self.param_structure)):
            walk(a, s, f"argument #{i}")
        return flat

    def bind(self, args: Sequence[Any]) -> tuple[list[Any], dict[str, int]]:
        """Check the arguments; return them as contiguous arrays/ints and the symbol values.

        The reference for every check: the fast path of ``__call__`` accepts a subset of what this
        accepts and hands everything else here, so errors always come from this code.
        """
        flat = self._flatten(args)
        env: dict[str, int] = {}
        origin: dict[str, str] = {}
        values: list[Any] = []
        pending: list[tuple[Expr, int, str]] = []

        def dim(d: Expr | None, actual: int, what: str) -> None:
            if d is None:
                return
            if d.is_const:
                if d.value != actual:
                    raise InputError(f"@{self.name}: {what} is {actual}, expected {d.value}")
                return
            name = str(d)
            if d.free_symbols == {name}:
                if name in env and env[name] != actual:
                    raise InputError(
                        f"@{self.name}: {what} is {actual}, but symbol '{name}' is {env[name]} from {origin[name]}"
                    )
                env.setdefault(name, actual)
                origin.setdefault(name, what)
                return
            pending.append((d, actual, what))

        for spec, value in zip(self.inputs, flat):
            where = f"parameter '{spec.name}'"
            if spec.kind == "tensor":
                array = self._array(value, spec, where)
                for axis, (d, actual) in enumerate(zip(spec.type.shape, array.shape)):
                    dim(d, actual, f"{where} dim {axis}")
                values.append(array)
            else:
                ints = self._ints(value, spec, where)
                dims = [spec.type.value] if isinstance(spec.type, PrimType) else list(spec.type.values)
                for j, (d, actual) in enumerate(zip(dims, ints)):
                    dim(d, actual, f"{where} value #{j}" if spec.kind == "shape" else where)
                values.extend(ints)
        for d, actual, what in pending:
            expected = d.evaluate(env)
            if expected != actual:
                raise InputError(f"@{self.name}: {what} is {actual}, expected {format_dim(d)} = {expected}")
        for name in self._size_symbols:
            if env.get(name, 0) < 0:
                raise InputError(
                    f"@{self.name}: symbol '{name}' is {env[name]} (from {origin[name]}), but it sizes tensors, "
                    "so it must be >= 0"
                )
        for name, bound in self.upper_bounds.items():
            if env.get(name, 0) > bound:
                raise InputError(
                    f"@{self.name}: symbol '{name}' is {env[name]} (from {origin[name]}), above its upper bound {bound}"
                )
        return values, env

    def _array(self, value: Any, spec: _Input, where: str) -> np.ndarray:
        t: TensorType = spec.type
        if not isinstance(value, np.ndarray):
            raise InputError(
                f"@{self.name}: {where} must be a numpy array of {t}, got {type(value).__name__}"
            )
        expected = numpy_dtype(t.dtype, where)
        if value.dtype != expected:
            raise InputError(
                f"@{self.name}: {where} has dtype {value.dtype}, expected {expected} ({t.dtype})"
            )
        if value.ndim != len(t.shape):
            raise InputError(
                f"@{self.name}: {where} has rank {value.ndim} (shape {value.shape}), expected rank {len(t.shape)} {t}"
            )
        if spec.inplace and not (value.flags.c_contiguous and value.flags.writeable):
            raise InputError(
                f"@{self.name}: {where} is updated in place, so it must be a C-contiguous, writeable array "
                f"(a copy would lose the update); got strides {value.strides}, writeable={value.flags.writeable}"
            )
        return self._contiguous(value, where)

    def _contiguous(self, value: np.ndarray, where: str) -> np.ndarray:
        """``value`` as a C-contiguous array: a copy when it is a strided or broadcast view."""
        if value.flags.c_contiguous:
            return value
        try:
            return np.ascontiguousarray(value)
        except MemoryError:
            raise InputError(
                f"@{self.name}: {where} (shape {value.shape}, strides {value.strides}) is not C-contiguous, and "
                f"its contiguous copy of {value.nbytes} bytes ({value.nbytes / 2**30:.1f} GiB) cannot be "
                "allocated; pass a C-contiguous array"
            ) from None

    def _ints(self, value: Any, spec: _Input, where: str) -> list[int]:
        if spec.kind == "prim":
            if not isinstance(value, (int, np.integer)):
                raise InputError(f"@{self.name}: {where} must be an integer, got {value!r}")
            return [int(value)]
        n = len(spec.type.values)
        if not isinstance(value, (tuple, list)) or len(value) != n:
            raise InputError(f"@{self.name}: {where} must be a shape of {n} integers, got {value!r}")
        return [int(v) for v in value]

    def _gather(
        self, flat: Sequence[Any], fixed: Fixed | None = None
    ) -> tuple[list[np.ndarray], tuple[int, ...], list[int]] | None:
        """The fast path's ``bind``: contiguous arrays, dims tuple and ints, or None to defer to ``bind``;
        with ``fixed``, ``flat`` holds the other inputs only."""
        arrays: list[np.ndarray] = []
        dims: tuple[int, ...] = ()
        ints: list[int] = []
        given = iter(flat)
        for kind, dtype, rank in self._input_plan if fixed is None else fixed.plan:
            if kind == _FIXED:
                run_arrays, run_dims = fixed.runs[rank]  # type: ignore[union-attr]
                arrays += run_arrays
                dims += run_dims
                continue
            value = next(given)
            if kind == _TENSOR or kind == _INPLACE:
                if type(value) is not np.ndarray:
                    return None
                actual = value.dtype
                if (actual is not dtype and actual != dtype) or value.ndim != rank:
                    return None
                if not value.flags.c_contiguous:
                    if kind == _INPLACE:
                        return None
                    try:
                        value = np.ascontiguousarray(value)
                    except MemoryError:  # ``bind`` raises the error, after the checks that come first
                        return None
                elif kind == _INPLACE and not value.flags.writeable:
                    return None
                arrays.append(value)
                dims += value.shape
            elif kind == _PRIM:
                if not isinstance(value, (int, np.integer)):
                    return None
                value = int(value)
                ints.append(value)
                dims += (value,)
            else:  # _SHAPE
                if not isinstance(value, (tuple, list)) or len(value) != rank:
                    return None
                values = [int(v) for v in value]
                ints += values
                dims += tuple(values)
        if self._const_get is not None and self._const_get(dims) != self._const_want:
            return None
        if self._repeat_get is not None and self._repeat_get(dims) != self._repeat_ref(dims):
            return None
        for at, bound in self._bounds:
            if dims[at] > bound:
                return None
        for at in self._nonnegative:
            if dims[at] < 0:
                return None
        if self._exprs:
            env = self._env(dims)
            for d, at in self._exprs:
                if d.evaluate(env) != dims[at]:
                    return None
        return arrays, dims, ints

    def _rebind(self, args: Sequence[Any]) -> tuple[list[np.ndarray], tuple[int, ...], list[int]]:
        """``bind`` (raising its errors), its values as ``_gather`` returns them."""
        values, _ = self.bind(args)
        arrays: list[np.ndarray] = []
        dims: list[int] = []
        ints: list[int] = []
        it = iter(values)
        for spec in self.inputs:
            if spec.kind == "tensor":
                array = next(it)
                if not spec.type.shape:
                    array = array.reshape(())  # np.ascontiguousarray makes a 0-d array 1-d
                arrays.append(array)
                dims.extend(array.shape)
            else:
                n = 1 if spec.kind == "prim" else len(spec.type.values)
                values_ = [next(it) for _ in range(n)]
                ints += values_
                dims += values_
        return arrays, tuple(dims), ints

    # -- calling -------------------------------------------------------------------------------------------
    def __call__(self, *args: Any) -> Any:
        if self.load_time:
            names = ", ".join(n for _, n in self.load_time)
            raise InputError(
                f"@{self.name} takes load-time parameters ({names}): bind them once with "
                f"params = exe.load_params(weights), then call params['{self.name}'](...) with the others"
            )
        return self.call_all(*args)

    def call_all(self, *args: Any) -> Any:
        """Call with every parameter, load-time ones included (``BoundFunction`` supplies those)."""
        if self._flat_params:
            if len(args) != self._n_params:
                self._flatten(args)  # raises the argument count error
            flat: Sequence[Any] = args
        else:
            flat = self._flatten(args)
        gathered = None
        if self._fast:
            try:
                gathered = self._gather(flat)
            except Exception:  # noqa: BLE001 (``bind`` raises it again, in its order)
                gathered = None
        if gathered is None:
            gathered = self._rebind(args)
        return self._run(*gathered)

    def _run(
        self, arrays: list[np.ndarray], dims: tuple[int, ...], ints: list[int], fixed: Fixed | None = None
    ) -> Any:
        """Run the function on checked inputs (contiguous arrays, the dims tuple, the ints; ``fixed``: the
        ``Fixed`` some of the arrays come from)."""
        raise NotImplementedError

    def _structure(self, flat: list[Any]) -> Any:
        it = iter(flat)

        def build(s: Any) -> Any:
            if s == 0:
                return next(it)
            if isinstance(s, dict):  # a run-time list
                return unpack_list(next(it), next(it))
            return tuple(build(x) for x in s)

        out = [build(s) for s in self.result_structure]
        return out[0] if len(out) == 1 else tuple(out)


class Function(Signature):
    """One compiled relax function; call it with numpy arrays (and ints for prim/shape parameters)."""

    def __init__(self, name: str, signature: dict[str, Any], loaded: LoadedObject) -> None:
        super().__init__(name, signature)
        self._returned = [t for kind, t in self.outputs if kind == "returned"]
        self._result_struct = (
            type(
                f"{name}_results",
                (ctypes.Structure,),
                {
                    "_fields_": [
                        (f"r{i}", descriptor_type(len(t.shape))) for i, t in enumerate(self._returned)
                    ]
                },
            )
            if self._returned
            else None
        )
        self._guarded = _guarded_entry(loaded, name)
        self._lead = 1 if self._guarded else 0  # the guarded entry takes its context first
        argtypes: list[Any] = [ctypes.c_void_p] * (self._lead + (1 if self._returned else 0))
        for spec in self.inputs:
            if spec.kind == "tensor":
                argtypes.append(ctypes.c_void_p)
            else:
                argtypes += [ctypes.c_int64] * (1 if spec.kind == "prim" else len(spec.type.values))
        argtypes += [ctypes.c_void_p] * (len(self.outputs) - len(self._returned) + 1)
        if self._guarded:
            self._fn = ctypes.CFUNCTYPE(ctypes.c_int32, *argtypes)(self._guarded)
        else:
            self._fn = ctypes.CFUNCTYPE(None, *argtypes)(loaded.address(f"_mlir_ciface_{name}"))
        self._loaded = loaded  # keeps the code alive
        self._workers = libs.thread_budget()  # threads and their spinning follow the machine's load
        self._plan_outputs()
        self._frames: list[_Frame] = []  # idle frames; a call pops one (or makes one) and returns it

    def _plan_outputs(self) -> None:
        """Output shapes as getters of the dims tuple, and the layout of a frame's buffer."""
        first = dict(zip(self._symbols, self._symbol_get(range(self._n_dims)))) if self._symbol_get else {}
        consts: list[int] = []
        exprs: list[Expr] = []
        tensors: list[tuple[Callable[[Sequence[int]], Any], np.dtype | None, str | None, int]] = []
        shapes: list[list[tuple[str, Any]]] = []
        for kind, t in self.outputs:
            if kind != "tensor":
                continue
            where: list[tuple[str, Any]] = []
            for d in t.shape:
                if d.is_const:
                    where.append(("const", len(consts)))
                    consts.append(d.value)
                elif d.free_symbols == {str(d)} and str(d) in first:
                    where.append(("dim", first[str(d)]))
                else:
                    where.append(("expr", len(exprs)))
                    exprs.append(d)
            shapes.append(where)
        n_dims, n_consts = self._n_dims, len(consts)
        offset = {"dim": 0, "const": n_dims, "expr": n_dims + n_consts}
        tensor_outputs = [t for kind, t in self.outputs if kind == "tensor"]
        for t, where in zip(tensor_outputs, shapes):
            getter = _shape_getter([offset[k] + i for k, i in where])
            dtype = np.dtype(NUMPY_DTYPES[t.dtype]) if t.dtype in NUMPY_DTYPES else None
            tensors.append((getter, dtype, t.dtype, len(t.shape)))
        self._out_consts = tuple(consts)
        self._out_exprs = exprs
        self._out_tensors = tensors
        self._only_tensors = all(kind == "tensor" for kind, _ in self.outputs)

        # A frame: [tensor descriptors, inputs then outputs][int outputs][status][descriptors of both].
        ranks = [len(spec.type.shape or ()) for spec in self.inputs if spec.kind == "tensor"]
        ranks += [rank for _, _, _, rank in tensors]
        self._desc_at: list[int] = []
        words = 0
        for rank in ranks:
            self._desc_at.append(words)
            words += 3 + 2 * rank
        self._int_outputs: list[tuple[int, int]] = []  # (first word, count) per prim/shape output
        int_words = words
        for kind, t in self.outputs:
            if kind in ("prim", "shape"):
                n = 1 if kind == "prim" else len(t.values)
                self._int_outputs.append((int_words, n))
                int_words += n
        self._status_at = int_words
        packed = int_words + _STATUS_WORDS
        self._zeros = (0,) * (packed - words)
        self._pack = struct.Struct(f"={packed}q").pack_into
        self._frame_words = packed + _DESC_WORDS_1D * (len(self._int_outputs) + 1)
        self._int_slots: list[int] = []  # native argument indices of prim and shape values
        at = self._lead + (1 if self._returned else 0)
        for spec in self.inputs:
            n = 1 if spec.kind in ("tensor", "prim") else len(spec.type.values)
            if spec.kind != "tensor":
                self._int_slots.extend(range(at, at + n))
            at += n

    def _new_frame(self) -> _Frame:
        buffer = (ctypes.c_int64 * self._frame_words)()
        base = ctypes.addressof(buffer)
        desc = iter(self._desc_at)
        context = (ctypes.c_int64 * (CONTEXT_BYTES // 8))() if self._guarded else None
        args: list[int] = [ctypes.addressof(context)] if context is not None else []
        args += [0] if self._returned else []
        for spec in self.inputs:
            if spec.kind == "tensor":
                args.append(base + 8 * next(desc))
            else:
                args += [0] * (1 if spec.kind == "prim" else len(spec.type.values))
        constant_at = self._status_at + _STATUS_WORDS
        ints = iter([*self._int_outputs, (self._status_at, _STATUS_WORDS)])

        def constant_descriptor() -> int:
            nonlocal constant_at
            data, n = next(ints)
            at, constant_at = constant_at, constant_at + _DESC_WORDS_1D
            buffer[at] = buffer[at + 1] = base + 8 * data
            buffer[at + 2], buffer[at + 3], buffer[at + 4] = 0, n, 1
            return base + 8 * at

        for kind, _ in self.outputs:
            if kind == "tensor":
                args.append(base + 8 * next(desc))
            elif kind != "returned":
                args.append(constant_descriptor())
        args.append(constant_descriptor())
        return _Frame(buffer, args, context)

    def _run(
        self, arrays: list[np.ndarray], dims: tuple[int, ...], ints: list[int], fixed: Fixed | None = None
    ) -> Any:
        """Allocate the outputs, pack the descriptors into a frame (``fixed``'s words as they are), call the
        native code."""
        if self._workers is not None:
            self._workers.tick()
        extended = dims + self._out_consts if self._out_consts else dims
        if self._out_exprs:
            env = self._env(dims)
            extended += tuple(d.evaluate(env) for d in self._out_exprs)
        try:
            outs = [
                np.empty(shape(extended), dtype if dtype is not None else numpy_dtype(name, "output"))
                for shape, dtype, name, _ in self._out_tensors
            ]
        except MemoryError:
            raise self._output_oom(extended) from None
        except ValueError:  # a negative size: checks in the native code would refuse these inputs
            raise self._negative_output(extended) from None
        frames = self._frames
        frame = frames.pop() if frames else self._new_frame()
        try:
            words: list[int] = []
            tensors = arrays if fixed is None else [arrays[a] if type(a) is int else a for a in fixed.layout]
            for array in chain(tensors, outs):
                if type(array) is tuple:  # a fixed run's descriptors
                    words += array
                    continue
                address = data_address(array)
                sizes = array.shape
                words += (address, address, 0)
                words += sizes
                words += _row_major(sizes)
            buffer = frame.buffer
            self._pack(buffer, 0, *words, *self._zeros)
            c_args = frame.args
            returned = None
            if self._int_slots or self._returned:
                c_args = c_args.copy()
                for slot, value in zip(self._int_slots, ints):
                    c_args[slot] = value
                if self._result_struct is not None:
                    returned = self._result_struct()
                    c_args[self._lead] = ctypes.addressof(returned)
            if self._fn(*c_args):
                self._free(returned)
                raise out_of_memory(self.name, frame.context[0])
            status = self._status_at
            if buffer[status]:
                code, actual, expected = buffer[status : status + 3]
                self._free(returned)
                raise InputError(f"@{self.name}: {format_check(self.checks[code - 1], actual, expected)}")
            if self._only_tensors:
                results: list[Any] = outs
            else:
                results = self._collect(outs, buffer, returned)
        finally:
            frames.append(frame)
        if self._flat_results:
            return results[0] if len(results) == 1 else tuple(results)
        return self._structure(results)

    def _output_oom(self, extended: tuple[int, ...]) -> OutOfMemoryError:
        for i, (shape, dtype, name, _) in enumerate(self._out_tensors):
            dims = shape(extended)
            dims = dims if isinstance(dims, tuple) else (dims,)
            size = int(np.prod(dims, dtype=object)) * numpy_dtype(name, "output").itemsize
            try:
                np.empty(dims, dtype if dtype is not None else numpy_dtype(name, "output"))
            except MemoryError:
                return OutOfMemoryError(
                    f"@{self.name}: out of memory: output #{i} of shape {dims} needs {_bytes(size)}"
                )
        return OutOfMemoryError(f"@{self.name}: out of memory allocating its outputs")

    def _negative_output(self, extended: tuple[int, ...]) -> InputError:
        for i, (shape, _, _, _) in enumerate(self._out_tensors):
            dims = shape(extended)
            dims = dims if isinstance(dims, tuple) else (dims,)
            if any(d < 0 for d in dims):
                return InputError(
                    f"@{self.name}: the inputs' shapes give output tensor #{i} a negative size {dims}: these "
                    "inputs do not fit the function"
                )
        return InputError(f"@{self.name}: the inputs' shapes give an output a negative size")

    def _collect(
        self, outs: list[np.ndarray], buffer: ctypes.Array, returned: ctypes.Structure | None
    ) -> list[Any]:
        """Every output in order: arrays, ints and shapes from the frame, copies of returned arrays."""
        tensors = iter(outs)
        ints = iter(self._int_outputs)
        copies = iter(self._copy_returned(returned)) if returned is not None else iter(())
        results: list[Any] = []
        for kind, _ in self.outputs:
            if kind == "tensor":
                results.append(next(tensors))
            elif kind == "returned":
                results.append(next(copies))
            else:
                at, n = next(ints)
                results.append(buffer[at] if kind == "prim" else tuple(buffer[at : at + n]))
        return results

    def _copy_returned(self, returned: ctypes.Structure) -> list[np.ndarray]:
        arrays = []
        for i, t in enumerate(self._returned):
            d = getattr(returned, f"r{i}")
            shape = tuple(d.sizes) if len(t.shape) else ()
            dtype = numpy_dtype(t.dtype, "output")
            n = int(np.prod(shape)) if shape else 1
            out = np.empty(shape, dtype)
            if n and d.aligned:
                src = (ctypes.c_char * (n * dtype.itemsize)).from_address(
                    d.aligned + d.offset * dtype.itemsize
                )
                out.reshape(-1).view(np.uint8)[:] = np.frombuffer(src, np.uint8)
            arrays.append(out)
        self._free(returned)
        return arrays

    def _free(self, returned: ctypes.Structure | None) -> None:
        """Free the buffers of the returned memrefs, each allocation once.

        The caller owns every returned buffer, but several results may share one allocation: the same
        value returned twice (``return %0, %0``) or views of one buffer.
        """
        if returned is None:
            return
        freed: set[int] = set()
        for i in range(len(self._returned)):
            d = getattr(returned, f"r{i}")
            if d.allocated and d.allocated not in freed:
                freed.add(d.allocated)
                _libc.free(d.allocated)
            d.allocated = d.aligned = None


def _guarded_entry(loaded: LoadedObject, name: str) -> int:
    """The address of ``name``'s guarded entry (``transforms/check_allocations.py``), with the object's allocation key set;
    0 when the object has none (CUDA host code)."""
    try:
        address = loaded.address(GUARD_PREFIX + name)
        key_at = loaded.global_address(KEY_GLOBAL)
    except (KeyError, AttributeError):
        return 0
    ctypes.c_uint32.from_address(key_at).value = allocation_key()
    return address


def _bytes(n: int) -> str:
    return f"{n} bytes ({n / 2**30:.1f} GiB)" if n >= 2**30 else f"{n} bytes"


def out_of_memory(name: str, size: int) -> OutOfMemoryError:
    return OutOfMemoryError(
        f"@{name}: out of memory: compiled code could not allocate {_bytes(size)} (malloc failed); "
        "reduce the input sizes"
    )


class BoundFunction:
    """A function whose load-time parameters are bound (``LoadedParams[name]``): call it with the others,
    in their order."""

    def __init__(self, function: Signature, values: Mapping[str, np.ndarray]) -> None:
        self.function = function
        self.name = function.name
        # views: reshaping the caller's array objects later cannot change what the function reads
        self._at = [(i, values[n].view()) for i, n in sorted(function.load_time)]
        # the load-time arrays checked once: a call checks and packs the other arguments only
        self._fixed = function.fix(dict(self._at)) if isinstance(function, Signature) else None

    def __repr__(self) -> str:
        return f"<bound {self.function!r}>"

    def __call__(self, *args: Any) -> Any:
        if self._fixed is not None:
            return self.function.call_fixed(self._fixed, args, lambda: self._full(args))
        return self.function.call_all(*self._full(args))

    def _full(self, args: Sequence[Any]) -> list[Any]:
        """Every argument: ``args`` with the load-time ones inserted."""
        full = list(args)
        for i, value in self._at:
            if i > len(full):
                break  # too few arguments: the count error names the function
            full.insert(i, value)
        if len(full) != len(self.function.param_structure):
            n = len(self.function.param_structure) - len(self._at)
            raise InputError(
                f"@{self.name} takes {n} argument(s) besides its load-time ones, got {len(args)}"
            )
        return full


class LoadedParams:
    """Load-time parameters bound once (``Executable.load_params``): ``params["decode"](...)`` calls a
    function with them; ``params(...)`` calls ``main`` (or the only function). ``values`` holds the arrays
    the functions read (packed weights, raw ones used as they are), shared by every function."""

    def __init__(self, executable: Executable, values: dict[str, np.ndarray]) -> None:
        self.executable = executable
        self.values = values
        self._bound: dict[str, BoundFunction] = {}

    def __getitem__(self, name: str) -> BoundFunction | Signature:
        """``@name`` with its load-time parameters bound (a function without any, as it is)."""
        f = self.executable[name]
        if not f.load_time:
            return f
        if name not in self._bound:
            self._bound[name] = BoundFunction(f, self.values)
        return self._bound[name]

    def __call__(self, *args: Any) -> Any:
        return self[self.executable.entry_name()](*args)

    @property
    def nbytes(self) -> int:
        """The bytes of the bound arrays (each once)."""
        return sum({id(a): a.nbytes for a in self.values.values()}.values())


class RankDispatch:
    """A function of unknown-rank tensor parameters, compiled once per supported rank
    (``relax-specialize-ranks``): a call runs the variant for the ranks of its arguments."""

    load_outputs = None
    load_time: list[tuple[int, str]] = []
    rank_variant = None

    def __init__(self, name: str, variants: list[Signature]) -> None:
        self.name = name
        self.params: list[int] = variants[0].rank_variant["params"]  # type: ignore[index]
        self.variants = {tuple(v.rank_variant["ranks"]): v for v in variants}  # type: ignore[index]
        # the parameters as declared: those of unknown rank are tensor<"*", dtype>
        first = variants[0]
        unknown = {_flat_index(first, i) for i in self.params}
        self.inputs = [
            replace(x, type=TensorType(None, x.type.dtype)) if j in unknown else x
            for j, x in enumerate(first.inputs)
        ]
        self.upper_bounds = first.upper_bounds

    def __repr__(self) -> str:
        ranks = ", ".join("x".join(map(str, r)) for r in sorted(self.variants))
        return f"<compiled @{self.name}, unknown-rank parameter(s) of rank {ranks}>"

    def __call__(self, *args: Any) -> Any:
        first = next(iter(self.variants.values()))
        if len(args) != len(first.param_structure):
            return first(*args)  # raises the argument count error
        ranks = []
        for i in self.params:
            if not isinstance(args[i], np.ndarray):
                return first(*args)  # raises the error naming the parameter and its type
            ranks.append(args[i].ndim)
        variant = self.variants.get(tuple(ranks))
        if variant is None:
            supported = (
                sorted({r[0] for r in self.variants}) if len(self.params) == 1 else sorted(self.variants)
            )
            got = ", ".join(
                f"parameter '{first.inputs[_flat_index(first, i)].name}' has rank {args[i].ndim} (shape {args[i].shape})"
                for i in self.params
            )
            raise InputError(
                f"@{self.name}: {got}, but the function (of unknown-rank parameters) is compiled for "
                f"rank(s) {', '.join(map(str, supported))} only"
            )
        return variant(*args)


def rank_dispatches(functions: Mapping[str, Any]) -> dict[str, RankDispatch]:
    """One ``RankDispatch`` per function of unknown-rank parameters, over its compiled rank variants."""
    groups: dict[str, list[Signature]] = {}
    for f in functions.values():
        if getattr(f, "rank_variant", None) is not None:
            groups.setdefault(f.rank_variant["of"], []).append(f)
    return {name: RankDispatch(name, variants) for name, variants in groups.items()}


class Executable:
    """The compiled functions of a module: ``exe(*arrays)`` calls ``main`` (or the only function).

    Functions with load-time parameters (``relax.load_time_params``: weights) are called through
    ``params = exe.load_params(weights)``: it checks the weights, runs the load step once (packing matmul
    weights, ``relax-lift-load-time-params``) and returns ``params``, whose ``params["decode"](...)`` takes
    only the per-call arguments. Every function bound by one ``params`` shares its arrays (one packed copy
    for ``prefill`` and ``decode``); the caller may drop the raw weights.
    """

    def __init__(self, functions: dict[str, Function], stats: Any = None) -> None:
        self.functions: dict[str, Any] = {**functions, **rank_dispatches(functions)}
        self.stats = stats  # relax_mlir.targets.base.CompileStats

    def __getitem__(self, name: str) -> Function:
        if name not in self.functions:
            raise KeyError(f"no compiled function @{name}; functions: {', '.join(sorted(self.functions))}")
        return self.functions[name]

    def entry_name(self) -> str:
        """``main``, or the only function (the load function aside)."""
        names = [n for n, f in self.functions.items() if f.load_outputs is None and f.rank_variant is None]
        if "main" in names:
            return "main"
        if len(names) == 1:
            return names[0]
        raise InputError(f"the module has no @main; call one of {', '.join(sorted(names))} by name")

    def __call__(self, *args: Any) -> Any:
        return self.functions[self.entry_name()](*args)

    def load_params(self, weights: Mapping[str, np.ndarray]) -> LoadedParams:
        """Bind the load-time parameters of every function from ``weights`` (by parameter name): each is
        checked (InputError naming it), the load step runs once, and the result calls the functions with
        the other arguments only (``LoadedParams``)."""
        if not isinstance(weights, Mapping):
            raise InputError(
                f"load_params: expected a mapping of parameter names to arrays, got {type(weights).__name__}"
            )
        users = {f.name: f for f in self.functions.values() if f.load_time}
        if not users:
            raise InputError("load_params: no function of this module has load-time parameters")
        loader = next((f for f in self.functions.values() if f.load_outputs is not None), None)
        load_inputs = [i.name for i in loader.inputs] if loader is not None else []
        raw: dict[str, tuple[Signature, _Input]] = {}  # load-time parameters the functions read as they are
        for f in users.values():
            for index, name in f.load_time:
                if loader is not None and name in loader.load_outputs:
                    continue
                raw.setdefault(name, (f, f.inputs[_flat_index(f, index)]))
        needed = dict.fromkeys([*load_inputs, *raw])
        missing = [n for n in needed if n not in weights]
        if missing:
            raise InputError(
                f"load_params: missing load-time parameter(s) {', '.join(repr(n) for n in missing)}"
            )
        unknown = [n for n in weights if n not in needed]
        if unknown:
            raise InputError(
                f"load_params: {', '.join(repr(n) for n in unknown)} is not a load-time parameter of any "
                f"function (expected {', '.join(needed)})"
            )
        values: dict[str, np.ndarray] = {}
        for name, (f, spec) in raw.items():
            check = Signature(
                f.name,
                {
                    "inputs": [{"kind": "tensor", "type": str(spec.type), "name": name}],
                    "outputs": [],
                    "checks": [],
                    "upper_bounds": {},
                    "param_structure": [0],
                    "result_structure": [],
                },
            )
            values[name] = check.bind([weights[name]])[0][0]
        if loader is not None:
            outs = loader.call_all(*[weights[n] for n in load_inputs])
            outs = outs if isinstance(outs, tuple) else (outs,)
            values.update(zip(loader.load_outputs, outs))
        return LoadedParams(self, values)


def _flat_index(f: Signature, index: int) -> int:
    """The input (flattened) of top-level parameter ``index``, a tensor."""
    flat = 0
    for s in f.param_structure[:index]:
        flat += 2 if isinstance(s, dict) else _leaves(s)
    return flat


def _leaves(s: Any) -> int:
    if s == 0:
        return 1
    if isinstance(s, dict):
        return 2
    return sum(_leaves(x) for x in s)

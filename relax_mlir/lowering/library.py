"""Library functions behind ``relax.call_dps_library``: their ABI, a registry, and their host-side call.

The ABI. ``%y = "relax.call_dps_library"(%a, %n) {callee = "name"}`` becomes, in host code,
``func.call @<symbol>(%a_buf, %n, %y_buf) : (memref<?x?xf32>, index, memref<?x?xf32>) -> ()``:

- inputs first, then one destination per output, which the callee fills (nothing is returned);
- a tensor is passed as a contiguous ``memref`` (identity layout, offset 0) of its rank and element
  type with every dim dynamic, so one function serves every shape; a prim value is an ``index``;
- the callee may assume its destinations alias no input.

Two kinds of callee:

- a *registered* library function (``@register_library("relax_blas_gemm")``, see ``blas.py``) gives the
  MLIR text of ``@<symbol>`` for the argument types; relax-lower-host inserts it into the module, so no C
  compiler is needed (BLAS wrappers call the ``cblas`` symbols of numpy's OpenBLAS directly);
- any other callee is an external C function, declared with ``llvm.emit_c_interface``: its C symbol is
  ``void _mlir_ciface_<callee>(StridedMemRefType<T, R> *in..., int64_t prim..., StridedMemRefType<T, R> *out...)``
  and its library must be loaded into the process with ``RTLD_GLOBAL`` before the module is compiled.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from relax_mlir.dialects.types import PrimType, RelaxType, TensorType
from relax_mlir.errors import UnsupportedOpError
from relax_mlir.lowering.kernel import builtin_tensor, element


@dataclass(frozen=True)
class LibraryFunction:
    """One instance of a library function: the symbol to call, its parameter types, its MLIR text."""

    symbol: str
    params: tuple[str, ...]
    text: str  # the func.func of ``symbol``: a definition, or an external declaration
    externs: tuple[str, ...] = ()  # declarations of what a definition calls (shared between instances)


LibraryFactory = Callable[[Sequence[RelaxType], Sequence[TensorType]], LibraryFunction]
LIBRARIES: dict[str, LibraryFactory] = {}


def register_library(name: str) -> Callable[[LibraryFactory], LibraryFactory]:
    """Register ``factory(arg_types, out_types) -> LibraryFunction`` as callee ``name``."""

    def wrap(factory: LibraryFactory) -> LibraryFactory:
        LIBRARIES[name] = factory
        return factory

    return wrap


def abi_type(t: RelaxType | None, what: str) -> str:
    """The ABI type of an argument: an all-dynamic memref for a tensor, ``index`` for a prim value."""
    if isinstance(t, PrimType):
        return "index"
    if not isinstance(t, TensorType):
        raise UnsupportedOpError(f"{what} of type {t} cannot be passed to a library function")
    builtin_tensor(t, what)  # known rank and dtype
    assert t.shape is not None and t.dtype is not None
    return "memref<" + "?x" * len(t.shape) + element(t.dtype) + ">"


def instantiate(
    callee: str, arg_types: Sequence[RelaxType], out_types: Sequence[TensorType]
) -> LibraryFunction:
    """The function a ``call_dps_library`` of ``callee`` calls, for these argument and output types."""
    factory = LIBRARIES.get(callee)
    if factory is not None:
        return factory(arg_types, out_types)
    params = tuple(abi_type(t, f"argument #{i}") for i, t in enumerate(arg_types)) + tuple(
        abi_type(t, f"output #{i}") for i, t in enumerate(out_types)
    )
    text = f"func.func private @{callee}({', '.join(params)}) attributes {{llvm.emit_c_interface}}"
    return LibraryFunction(callee, params, text)

"""BLAS library functions for ``relax.call_dps_library``, on numpy's bundled OpenBLAS.

numpy 2.x wheels ship OpenBLAS as ``numpy.libs/libscipy_openblas64_-<hash>.so`` with ILP64 (64-bit int)
``cblas`` entry points named ``scipy_cblas_sgemm64_``/``scipy_cblas_dgemm64_``. The wrappers here are
MLIR functions (inserted by relax-lower-host, see ``library.py`` for the ABI) that call those symbols with
pointers taken from their memrefs; no C compiler is involved. The loader makes the symbols resolvable
(``runtime/libs.shared_libs``; ``openblas`` here finds the library) and, the first time it loads an object,
``runtime/blas.py`` sets OpenBLAS's thread count to ``$RELAX_MLIR_BLAS_THREADS`` when set (``1`` runs BLAS on one thread like the generated kernels; unset
or ``0`` leaves OpenBLAS's own setting). numpy uses the same OpenBLAS, so setting it also sets numpy's
matmul threads in the process.

Callee ``relax_blas_gemm(lhs, rhs[, bias]) -> out`` (f32/f64, row-major, contiguous):

- ``lhs [..., m, k] x rhs [k, n]``: the lhs batch dims are folded into ``m`` (one gemm);
- ``lhs [b..., m, k] x rhs [b..., k, n]`` (same batch dims): one gemm per batch;
- ``bias`` is ``[n]`` (added to every row) or the output's shape (a residual): it is copied into the
  output and the gemm accumulates onto it (``beta = 1``).
"""

from __future__ import annotations

import ctypes
import functools
import glob
from collections.abc import Sequence
from pathlib import Path

from relax_mlir.dialects.types import RelaxType, TensorType
from relax_mlir.errors import UnsupportedOpError
from relax_mlir.lowering.library import LibraryFunction, abi_type, register_library

GEMM = "relax_blas_gemm"
DTYPES = {"f32": ("s", 4), "f64": ("d", 8)}
_ROW_MAJOR, _NO_TRANS, _TRANS = 101, 111, 112


# numpy 2.x wheels bundle an ILP64 OpenBLAS; its cblas symbols have one of these forms ({} = s or d).
OPENBLAS_SYMBOL_FORMS = ("scipy_cblas_{}gemm64_", "cblas_{}gemm64_")


@functools.cache
def openblas() -> tuple[str, str] | None:
    """(path of numpy's OpenBLAS, cblas symbol pattern), or None when there is no usable one (``blas.py``
    builds the gemm wrappers on it)."""
    try:
        import numpy  # noqa: PLC0415
    except ImportError:
        return None
    libs = Path(numpy.__file__).parent.parent / "numpy.libs"
    for path in sorted(glob.glob(str(libs / "lib*openblas*64*.so*"))):
        try:
            lib = ctypes.CDLL(path, mode=ctypes.RTLD_GLOBAL)
        except OSError:
            continue
        for form in OPENBLAS_SYMBOL_FORMS:
            names = [form.format(t).replace("gemm", r) for t in "sd" for r in ("gemm", "gemv")]
            if all(hasattr(lib, name) for name in names):
                return path, form
    return None


def available() -> bool:
    """Whether numpy's ILP64 OpenBLAS was found (the BLAS dispatch is a no-op without it)."""
    return openblas() is not None


def gemm_symbol(dtype: str, routine: str = "gemm") -> str:
    """The cblas symbol of ``routine`` (gemm, gemv) for ``dtype``."""
    found = openblas()
    if found is None:
        raise UnsupportedOpError("BLAS is not available: numpy's ILP64 OpenBLAS (numpy.libs) was not found")
    return found[1].format(DTYPES[dtype][0]).replace("gemm", routine)


# -- relax_blas_gemm ------------------------------------------------------------------------------------


@register_library(GEMM)
def gemm(arg_types: Sequence[RelaxType], out_types: Sequence[TensorType]) -> LibraryFunction:
    """The gemm wrapper for these ranks and dtype (see the module docstring)."""
    if len(arg_types) not in (2, 3) or len(out_types) != 1:
        raise UnsupportedOpError(f"{GEMM} takes (lhs, rhs[, bias]) -> out")
    types = [*arg_types, out_types[0]]
    if not all(isinstance(t, TensorType) and t.shape is not None for t in types):
        raise UnsupportedOpError(f"{GEMM} takes tensors of known rank")
    dtypes = sorted({str(t.dtype) for t in types})  # type: ignore[union-attr]
    dtype = dtypes[0]
    if len(dtypes) != 1 or dtype not in DTYPES:
        raise UnsupportedOpError(f"{GEMM} takes f32 or f64 tensors of one dtype, got {', '.join(dtypes)}")
    ranks = [len(t.shape) for t in types]  # type: ignore[union-attr, arg-type]
    ra, rb, rc = ranks[0], ranks[1], ranks[-1]
    bias = ranks[2] if len(arg_types) == 3 else None
    if ra < 2 or rb < 2 or (rb > 2 and rb != ra) or rc != ra or bias not in (None, 1, rc):
        raise UnsupportedOpError(f"{GEMM}: unsupported ranks {ranks}")
    params = tuple(abi_type(t, f"argument #{i}") for i, t in enumerate(types))
    symbol = f"{GEMM}_{dtype}_{ra}_{rb}" + (f"_bias{bias}" if bias else "")
    cblas, gemv = gemm_symbol(dtype), gemm_symbol(dtype, "gemv")
    text = _gemm_text(symbol, params, (cblas, gemv), dtype, ra, rb, bias)
    return LibraryFunction(symbol, params, text, _cblas_decls(cblas, gemv, dtype))


def _cblas_decls(gemm: str, gemv: str, f: str) -> tuple[str, ...]:
    return (
        f"func.func private @{gemm}(i32, i32, i32, i64, i64, i64, {f}, !llvm.ptr, i64, !llvm.ptr, i64, {f}, "
        "!llvm.ptr, i64)",
        f"func.func private @{gemv}(i32, i32, i64, i64, {f}, !llvm.ptr, i64, !llvm.ptr, i64, {f}, !llvm.ptr, i64)",
    )


class _Text:
    """SSA-text emitter for one wrapper function."""

    def __init__(self) -> None:
        self.lines: list[str] = []
        self.n = 0
        self.consts: dict[tuple[int, str], str] = {}

    def __call__(self, rhs: str) -> str:
        self.n += 1
        name = f"%v{self.n}"
        self.lines.append(f"{name} = {rhs}")
        return name

    def const(self, value: int | float, t: str = "index") -> str:
        key = (value, t)
        if key not in self.consts:
            self.consts[key] = self(f"arith.constant {value} : {t}")
        return self.consts[key]

    def product(self, values: list[str]) -> str:
        out = self.const(1)
        for v in values:
            out = self(f"arith.muli {out}, {v} : index")
        return out


def _gemm_text(
    symbol: str,
    params: tuple[str, ...],
    routines: tuple[str, str],
    dtype: str,
    ra: int,
    rb: int,
    bias: int | None,
) -> str:
    cblas, gemv = routines
    e = _Text()
    zero, unit = e.const(0), e.const(1)
    a, b, c = "%a", "%b", "%c"
    ta, tb, tc = params[0], params[1], params[-1]
    dims_a = [e(f"memref.dim {a}, {e.const(i)} : {ta}") for i in range(ra)]
    n = e(f"memref.dim {b}, {e.const(rb - 1)} : {tb}")
    k = dims_a[-1]
    if rb == 2:  # fold the lhs batch dims into m
        m, batch = e.product(dims_a[:-1]), e.const(1)
    else:
        m, batch = dims_a[-2], e.product(dims_a[:-2])
    beta = 0.0
    if bias == 1:
        rows = e.product([batch, m])
        flat = c
        if ra > 2:
            groups = "[" + ", ".join(str(i) for i in range(ra - 1)) + f"], [{ra - 1}]"
            flat = e(f"memref.collapse_shape {c} [{groups}] : {tc} into memref<?x?x{dtype}>")
        e.lines += [
            f"scf.for %r = {zero} to {rows} step {unit} {{",
            f"  scf.for %j = {zero} to {n} step {unit} {{",
            f"    %x = memref.load %bias[%j] : {params[2]}",
            f"    memref.store %x, {flat}[%r, %j] : memref<?x?x{dtype}>",
            "  }",
            "}",
        ]
        beta = 1.0
    elif bias is not None:
        e.lines.append(f"memref.copy %bias, {c} : {params[2]} to {tc}")
        beta = 1.0
    size = DTYPES[dtype][1]
    i64 = [e(f"arith.index_cast {x} : index to i64") for x in (m, n, k)]
    one = e.const(1, "i64")
    lda, ldb, ldc = (e(f"arith.maxsi {x}, {one} : i64") for x in (i64[2], i64[1], i64[1]))
    bases = [
        e(f"memref.extract_aligned_pointer_as_index {x} : {t} -> index")
        for x, t in ((a, ta), (b, tb), (c, tc))
    ]
    es = e.const(size)
    strides = [
        e.product([m, k, es]),
        e.product([k, n, es]) if rb > 2 else e.const(0),
        e.product([m, n, es]),
    ]
    layout, trans = e.const(_ROW_MAJOR, "i32"), e.const(_NO_TRANS, "i32")
    alpha_v, beta_v = e.const(1.0, dtype), e.const(beta, dtype)
    transpose = e.const(_TRANS, "i32")
    is_row = e(f"arith.cmpi eq, {m}, {unit} : index")
    has_k = e(f"arith.cmpi sgt, {k}, {zero} : index")
    gemv_ok = e(f"arith.andi {is_row}, {has_k} : i1")
    head = e.lines
    e.lines = []
    ptrs = []
    for base, stride in zip(bases, strides):
        off = e(f"arith.muli %i, {stride} : index")
        addr = e(f"arith.addi {base}, {off} : index")
        as_int = e(f"arith.index_cast {addr} : index to i64")
        ptrs.append(e(f"llvm.inttoptr {as_int} : i64 to !llvm.ptr"))
    m64, n64, k64 = i64
    f = dtype
    e.lines += [
        # one row: gemv (y = B^T x), which OpenBLAS runs faster than a 1-row gemm; not for k = 0, where
        # gemv returns without writing y
        f"scf.if {gemv_ok} {{",
        f"  func.call @{gemv}({layout}, {transpose}, {k64}, {n64}, {alpha_v}, {ptrs[1]}, {ldb}, {ptrs[0]}, {one}, "
        f"{beta_v}, {ptrs[2]}, {one}) : (i32, i32, i64, i64, {f}, !llvm.ptr, i64, !llvm.ptr, i64, {f}, !llvm.ptr, "
        "i64) -> ()",
        "} else {",
        f"  func.call @{cblas}({layout}, {trans}, {trans}, {m64}, {n64}, {k64}, {alpha_v}, {ptrs[0]}, {lda}, "
        f"{ptrs[1]}, {ldb}, {beta_v}, {ptrs[2]}, {ldc}) : (i32, i32, i32, i64, i64, i64, {f}, !llvm.ptr, "
        f"i64, !llvm.ptr, i64, {f}, !llvm.ptr, i64) -> ()",
        "}",
    ]
    loop = [f"scf.for %i = {zero} to {batch} step {unit} {{", *("  " + x for x in e.lines), "}"]
    names = ["%a", "%b"] + (["%bias"] if bias else []) + ["%c"]
    args = ", ".join(f"{x}: {t}" for x, t in zip(names, params))
    body = "\n".join("  " + x for x in head + loop + ["return"])
    return f"func.func private @{symbol}({args}) {{\n{body}\n}}"

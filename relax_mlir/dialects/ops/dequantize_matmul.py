"""``relax.dequantize_matmul``: ``x @ dequantize(data, scales).T`` as one kernel that reads the packed weight
once (made by ``relax-fuse-dequantize-matmul``; layouts as ``relax.dequantize``'s, issue 20 contract §1).

The kernel splits the weight rows (the result's columns) into chunks of ``CHUNK`` rows, an ``scf.forall``
that ``relax-lower-parallel`` runs on the module's threads (a contiguous block of chunks per thread); a call
of fewer than ``MIN_SPLIT_WORK`` multiply-adds runs them all on the calling thread instead (one part). Per chunk, on the run-time row count ``m`` of
``x``:

- ``m <= 4`` (decode, a GEMV): each group of 32 weights is unpacked in registers (integer nibble/byte
  unpacking, convert, one FMA with the scale) and multiplied into ``m x NB`` vector accumulators (a variant
  for 1 row, so batch 1 does no wasted work, and one for 4); nothing but the packed bytes and ``x`` is read.
- ``m > 4`` (prefill, a GEMM): the chunk's rows are unpacked once into an f32 panel [CHUNK, k] that stays in
  L2, and a register-blocked micro-kernel (4 rows of ``x`` x ``NB`` weight rows of vector accumulators over
  ``k``, horizontal sums at the end) runs over it for all ``m`` rows.

With ``activations = "i8"`` on a host with VNNI (AVX512-VNNI or AVX-VNNI, from LLVM's host features), the
GEMV path first quantizes the (at most 4) rows of ``x`` per group of 32 to int8 (scale ``max|x| / 127``, round
to nearest even: llama.cpp's Q8_0, its numerics for Q4_0 and Q8_0 weights) and multiplies unsigned bytes by
signed ones with ``vpdpbusd`` (8 i32 lanes of 4 products each): a 4-bit layout's nibbles by x, started at
the zero point's term; q8_0's bytes flipped to unsigned ones (``w ^ 0x80``, zero point 128) likewise, two
groups (a 64-byte cache line) per 512-bit dot product when AVX512-VNNI allows (``block_q8``: 2048x768 Q8_0
at batch 1, 1 thread, cache-resident: 27 -> 40 GB/s). Then both scales apply
in f32: about half the instructions per weight byte of the f32 path, for an activation rounding error of
at most half a step (``max|x_group| / 254``) per element. The 4-bit layouts go further when the number of
groups allows: a *superblock* of 4 groups (512-bit VNNI) or 2 (256-bit) is one load of packed bytes, whose
low and high nibbles are each one ``vpdpbusd`` against x's bytes stored in the same order (4 i32 lanes per
group, started at the zero point's term), then one FMA with both scales per lane: 2x faster than a
dot product per group (2048x768 Q4_0 at batch 1, 1 thread: 63 -> 31 us). Otherwise, and always for m > 4 (prefill),
activations stay f32.

The GEMV paths prefetch, per group and weight row, the packed bytes of the next block of weight rows: a
block reads its ``NB`` rows as short interleaved streams that the hardware prefetcher misses (the 125M
model's decode step at 1 thread, AMD Zen 4, int8 activations: Q8_0 16.0 -> 11.8 ms, Q4_0 6.1 -> 5.9 ms;
f32 activations: Q8_0 17.4 -> 11.4 ms, Q4_0 11.9 -> 10.0 ms; both int8 steps now read ~12-13 GB/s, one
core's DRAM bandwidth).

Tiled layouts (``<layout>x4``, made by ``relax-fuse-dequantize-matmul`` for weights fixed at load): row
``i`` of ``data`` holds weight rows ``4i..4i+3`` as consecutive 64-byte pieces (piece ``p`` of row 4i, of
4i+1, ..., then piece ``p+1``), and ``scales`` the same per piece. The untiled layout reads a block of 4 rows
as 4 short streams of a row each (plus 4 of scales), which the hardware prefetcher follows badly; tiled, a
block is one stream (the 125M model's decode step, 1 thread, int8 activations, AMD Zen 4 under load:
Q8_0 12.4 -> 6.8 ms, Q4_0 5.1 -> 3.5 ms). Every read of the weight goes through ``tiled_index``, so the GEMM
path and every layout share it.

Vectors are ``VectorShape.lanes`` f32 wide: 16 when LLVM reports AVX-512 on the host, else 8 (AVX2 and
others, with fewer accumulators for 16 registers). Rows past the end of a chunk or of ``x`` are clamped to
the last one (their results are masked out of the write), so the inner loops hold no bounds checks.
Both choices follow ``convert-relax-to-linalg``'s ``target-features``: the compiling host's CPU for
``compile()``; ``portable`` for code compiled for another machine (AOT, wasm32): vector code that any LLVM
target compiles, with f32 activations even where ``activations = "i8"``.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from mlir import ir

from relax_mlir.dialects.dims import fmt_shape, provably_different, tensor_operand
from relax_mlir.dialects.ops.dequantize import GROUP, LAYOUTS, DequantizeOp
from relax_mlir.dialects.ops.manipulate import permute_dims, reshape
from relax_mlir.dialects.registry import Attr, Operand, RelaxOp, relax_op
from relax_mlir.dialects.types import RelaxType, TensorType, relax_type
from relax_mlir.errors import ShapeError
from relax_mlir.lowering.kernel import KernelBuilder, KernelValue, builtin_tensor
from relax_mlir.lowering.vectors import host_cpu, target_features
from relax_mlir.shape_infer.expr import as_expr, format_dim


@relax_op
class DequantizeMatmulOp(RelaxOp):
    """``x @ W.T`` for a group-quantized weight ``W`` [rows, k] (``data``, ``scales`` in ``layout``), without
    materializing ``W``. CPU kernel; made by ``relax-fuse-dequantize-matmul``.

    ``%y = "relax.dequantize_matmul"(%x, %d, %s) {activations = "f32", layout = "q4_0"} :
    (!relax.tensor<["b", 768], f32>,
    !relax.tensor<[2048, 384], ui8>, !relax.tensor<[2048, 24], f16>) -> !relax.tensor<["b", 2048], f32>``
    """

    NAME = "dequantize_matmul"
    FUSION = "opaque"
    CPU_ONLY = True
    OPERANDS = (Operand("x"), Operand("data"), Operand("scales"))
    ATTRS = (Attr("layout", "str"), Attr("activations", "str"))

    @classmethod
    def deduce(cls, operand_types: Sequence[RelaxType | None], attrs: dict[str, Any]) -> list[RelaxType]:
        x = tensor_operand(operand_types[0], "x")
        layout, tiled = split_layout(attrs["layout"])
        operands = untiled_types(operand_types[1:], layout) if tiled else operand_types[1:]
        [weight] = DequantizeOp.deduce(operands, {**attrs, "layout": layout})
        assert isinstance(weight, TensorType) and weight.shape is not None
        rows, k = weight.shape
        if attrs["activations"] not in ACTIVATIONS:
            raise ShapeError(
                f"activations must be one of {', '.join(ACTIVATIONS)}, got {attrs['activations']!r}"
            )
        if x.dtype is not None and x.dtype != "f32":
            raise ShapeError(f"operand 'x' must be f32, got {x.dtype}")
        if x.shape is None:
            return [TensorType(None, "f32")]
        if len(x.shape) == 0:
            raise ShapeError("operand 'x' must have rank >= 1, got a scalar")
        if provably_different(x.shape[-1], k):
            raise ShapeError(
                f"contraction dims differ: 'x' {fmt_shape(x.shape)} has {format_dim(x.shape[-1])}, "
                f"the weight has k = {format_dim(k)}"
            )
        return [TensorType((*x.shape[:-1], rows), "f32")]

    @classmethod
    def lower(cls, k: KernelBuilder) -> list[KernelValue]:
        """The chunked GEMV/GEMM kernel (module docstring); needs static ``data``/``scales`` dims."""
        x, data, scales = k.ins
        layout = k.attrs["layout"]
        for v, name in ((data, "data"), (scales, "scales")):
            if not all(d is not None and d.is_const for d in v.shape):
                raise k.fail(f"operand '{name}' {v.type} must have static dims")
        rows, groups = (d.value for d in scales.shape)  # type: ignore[union-attr]
        if split_layout(layout)[1]:
            rows, groups = rows * TILE_ROWS, groups // TILE_ROWS
        if x.shape[-1] != as_expr(groups * GROUP):
            k.assume(0, (*x.shape[:-1], groups * GROUP))
            x = k.ins[0]
        out = k.destination(0)
        if rows == 0:
            return [out]
        if groups == 0:
            return [k.fill(k.constant(0, "f32"), out)]
        lead = x.rank - 1
        vs = target_vectors(k.choices.get("target_features", "host"))
        if lead == 0:
            x2 = k.expand(x, [[0, 1]], [1, x.shape[0]])
            o2 = k.expand(out, [[0, 1]], [1, rows])
            r = _Kernel(k, layout, rows, groups, vs, k.attrs["activations"]).emit(
                x2, data, scales, o2, k.dim(x2, 0)
            )
            return [k.collapse(r, [[0, 1]])]
        kernel = _Kernel(k, layout, rows, groups, vs, k.attrs["activations"])
        return [k.on_rows(x, out, lambda xs, os_, count: kernel.emit(xs, data, scales, os_, count))]


def dequantize_matmul(
    x: ir.Value,
    data: ir.Value,
    scales: ir.Value,
    layout: str,
    activations: str = "f32",
    *,
    loc: ir.Location | None = None,
) -> ir.Value:
    """``x @ dequantize(data, scales, layout).T`` in one kernel; ``activations="i8"`` lets decode rows use
    int8 dot products (module docstring)."""
    attrs = {"layout": layout, "activations": activations}
    return DequantizeMatmulOp.build([x, data, scales], attrs, loc=loc).result


# -- tiled layouts ---------------------------------------------------------------------------------------

TILE_ROWS = 4  # weight rows a tiled layout interleaves
PIECE_BYTES = 64  # bytes of one row in a piece of a tile: a cache line


def split_layout(layout: str) -> tuple[str, bool]:
    """(the storage layout, whether tiled): ``<layout>x4`` is ``<layout>``'s data and scales tiled."""
    if layout.endswith(f"x{TILE_ROWS}") and layout[:-2] in LAYOUTS:
        return layout[:-2], True
    return layout, False


def piece(layout: str) -> tuple[int, int]:
    """(data elements, scales) per row in one piece of a tile of ``layout``: 64 bytes of data (a cache
    line; q8_0: 2 groups, q4_0 and q4f16_1: 4 groups) and their scales."""
    dtype, per, _ = LAYOUTS[layout]
    elements = PIECE_BYTES // (4 if dtype == "ui32" else 1)
    return elements, elements * per // GROUP


def can_tile(layout: str, rows: int, groups: int) -> bool:
    """Whether a [rows, 32 * groups] weight in ``layout`` (untiled) has a tiled form: whole tiles and pieces."""
    return rows > 0 and rows % TILE_ROWS == 0 and groups > 0 and groups % piece(layout)[1] == 0


def untiled_types(types: Sequence[RelaxType | None], layout: str) -> list[RelaxType | None]:
    """The (data, scales) types of the untiled layout for those of ``<layout>x4``: ``tile`` inverted on the
    shapes (static dims only)."""
    out: list[RelaxType | None] = []
    for t, per, name in zip(types, piece(layout), ("data", "scales")):
        t = tensor_operand(t, name)
        if t.shape is None or len(t.shape) != 2 or not all(d is not None and d.is_const for d in t.shape):
            raise ShapeError(f"a tiled layout needs a static 2-D '{name}', got {t}")
        rows, cols = (d.value for d in t.shape)  # type: ignore[union-attr]
        if cols % (TILE_ROWS * per):
            raise ShapeError(
                f"tiled '{name}' needs columns in pieces of {TILE_ROWS} x {per}, got {cols} columns"
            )
        out.append(TensorType((as_expr(rows * TILE_ROWS), as_expr(cols // TILE_ROWS)), t.dtype))
    return out


def tile(v: ir.Value, per: int, *, loc: ir.Location | None = None) -> ir.Value:
    """Relax ops tiling a static [rows, cols] ``data`` or ``scales`` (``per`` columns per piece): row
    ``rows / 4`` of the result holds, for each piece of ``per`` columns, that piece of 4 rows one after the
    other, so a GEMV that works on 4 rows at a time reads one contiguous stream."""
    t = relax_type(v.type)
    assert isinstance(t, TensorType) and t.shape is not None
    rows, cols = (d.value for d in t.shape)  # type: ignore[union-attr]
    v = reshape(v, [rows // TILE_ROWS, TILE_ROWS, cols // per, per], loc=loc)
    v = permute_dims(v, [0, 2, 1, 3], loc=loc)
    return reshape(v, [rows // TILE_ROWS, cols * TILE_ROWS], loc=loc)


# -- lowering --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class VectorShape:
    """Vector width and register blocks of the kernel: ``lanes`` f32 per vector, ``nb`` weight rows per
    block (x rows: up to 4), sized so accumulators and operands fit the registers."""

    lanes: int
    nb: int
    dot: str | None = (
        None  # the LLVM intrinsic of vpdpbusd on 256 bits (u8 x s8 -> i32), when the host has one
    )
    dot512: str | None = None  # ... on 512 bits (AVX512-VNNI)


@functools.cache
def host_vectors() -> VectorShape:
    """The vector shape for the compiling host's CPU features (``features_vectors``)."""
    return features_vectors(host_cpu()[1])


def target_vectors(features: str) -> VectorShape:
    """The vector shape for ``convert-relax-to-linalg``'s ``target-features`` (``lowering/vectors.py``'s
    ``target_features``: ``host``, ``portable`` or an LLVM feature list)."""
    if features == "host":
        return host_vectors()
    return features_vectors(target_features(features))


def features_vectors(features: dict[str, bool]) -> VectorShape:
    """16 lanes and 4 weight rows per block with AVX-512 (32 registers), else 8 lanes and 2 rows (AVX2's 16);
    the int8 dot product of AVX512-VNNI (with VL) or AVX-VNNI if ``features`` (LLVM's names) has either."""
    dot = dot512 = None
    if features.get("avx512vnni", False) and features.get("avx512vl", False):
        dot, dot512 = "llvm.x86.avx512.vpdpbusd.256", "llvm.x86.avx512.vpdpbusd.512"
    elif features.get("avxvnni", False):
        dot = "llvm.x86.avxvnni.vpdpbusd.256"
    if features.get("avx512f", False):
        return VectorShape(16, 4, dot, dot512)
    return VectorShape(8, 2, dot)


CHUNK = 32  # weight rows per parallel chunk (and per f32 panel of the GEMM path)
# Multiply-adds (m x rows x k) below which a call runs its chunks on the calling thread. The layer GEMVs of
# the 125M LLM (768x2048, 2048x768: ~1.6M multiply-adds, 31-60 us) split: with workers spinning on a quiet
# machine (libs.ThreadBudget) 2-thread Q4_0 decode went from 215 to 293 tok/s at 2^20 (2^22 split only the
# LM head; AMD EPYC Zen 4). On a busy machine, waking a sleeping worker costs ~40 us, as long as such a GEMV.
MIN_SPLIT_WORK = 1 << 20
MB = 4  # x rows per register block
SMALL = 4  # m up to this takes the GEMV path ...
GEMV_ROWS = (1, 4)  # ... in a variant for blocks of this many x rows (the first that holds m; fewer variants
# compile faster: 2 and 3 rows run as 4, the last row repeated)
ACTIVATIONS = ("f32", "i8")


class _Kernel:
    """Writes the 2-D kernel ``o`` [m, rows] = ``x`` [m, k] @ W.T as MLIR text (scf + vector on tensors)."""

    def __init__(
        self, k: KernelBuilder, layout: str, rows: int, groups: int, vs: VectorShape, activations: str
    ) -> None:
        base, self.tiled = split_layout(layout)
        self.k, self.layout, self.rows, self.groups, self.vs = k, base, rows, groups, vs
        self.piece = piece(base)
        # int8 dot products at decode, on hosts with VNNI
        self.int8 = activations == "i8" and vs.dot is not None
        self.sb = self.superblock()
        self.depth = groups * GROUP
        self.lanes = vs.lanes
        self.vec = f"vector<{vs.lanes}xf32>"
        self.slices = GROUP // vs.lanes

    # -- small emitters ------------------------------------------------------------------------------
    def t(self, text: str) -> str:
        return self.k.typed(text)

    def c(self, value: int) -> str:
        return self.k.const(value)

    def fconst(self, value: float, vec: bool = False) -> str:
        ty = self.vec if vec else "f32"
        lit = f"dense<{value:e}> : {ty}" if vec else f"{value:e} : f32"
        return self.t(f"arith.constant {lit}")

    def imin(self, a: str, b: str) -> str:
        return self.t(f"arith.minsi {a}, {b} : index")

    # -- pieces --------------------------------------------------------------------------------------
    def scale(self, scales: KernelValue, n: str, g: str, vec: str | None = None) -> str:
        """The scale of row ``n``, group ``g`` as an f32 broadcast vector."""
        s = self.t(f"tensor.extract {scales.name}[{self.sca(n, g)}] : {scales.mlir}")
        if scales.dtype == "f16":
            s = self.t(f"arith.extf {s} : f16 to f32")
        return self.t(f"vector.broadcast {s} : f32 to {vec or self.vec}")

    def weights(self, data: KernelValue, scales: KernelValue, n: str, g: str) -> list[str]:
        """The 32 values of row ``n``, group ``g``, dequantized: ``slices`` f32 vectors in k order."""
        lanes, name = self.lanes, self.layout
        s = self.scale(scales, n, g)
        if name == "q8_0":
            out = []
            for j in range(self.slices):
                col = self.t(f"affine.apply affine_map<(d0) -> (d0 * 32 + {j * lanes})>({g})")
                q = self.t(
                    f"vector.transfer_read {data.name}[{self.dat(n, col)}], {self.izero('i8')} {{in_bounds = [true]}} "
                    f": {data.mlir}, vector<{lanes}xi8>"
                )
                f = self.t(f"arith.sitofp {q} : vector<{lanes}xi8> to {self.vec}")
                out.append(self.t(f"arith.mulf {f}, {s} : {self.vec}"))
            return out
        v16 = "vector<16xi8>"
        if name == "q4_0":
            col = self.t(f"affine.apply affine_map<(d0) -> (d0 * 16)>({g})")
            b = self.t(
                f"vector.transfer_read {data.name}[{self.dat(n, col)}], {self.izero('i8')} {{in_bounds = [true]}} "
                f": {data.mlir}, {v16}"
            )
        else:  # q4f16_1: 4 words, value i at bits 4 * (i % 8) of word i / 8
            col = self.t(f"affine.apply affine_map<(d0) -> (d0 * 4)>({g})")
            w = self.t(
                f"vector.transfer_read {data.name}[{self.dat(n, col)}], {self.izero('i32')} {{in_bounds = [true]}} "
                f": {data.mlir}, vector<4xi32>"
            )
            b = self.t(f"vector.bitcast {w} : vector<4xi32> to {v16}")
        offset = float(LAYOUTS[name][2])
        mask = self.t(f"arith.constant dense<15> : {v16}")
        four = self.t(f"arith.constant dense<4> : {v16}")
        lo = self.t(f"arith.andi {b}, {mask} : {v16}")
        hi = self.t(f"arith.shrui {b}, {four} : {v16}")
        if name == "q4f16_1":  # bytes hold values (2j, 2j+1): interleave into k order
            lo, hi = (
                self.t(
                    f"vector.shuffle {lo}, {hi} [{', '.join(f'{i}, {i + 16}' for i in range(h * 8, h * 8 + 8))}]"
                    f" : {v16}, {v16}"
                )
                for h in (0, 1)
            )
        bias = self.t(f"arith.mulf {s}, {self.fconst(-offset, vec=True)} : {self.vec}")
        out = []
        for half in (lo, hi):
            for j in range(16 // lanes):
                part = half
                if lanes < 16:
                    part = self.t(
                        f"vector.extract_strided_slice {half} {{offsets = [{j * lanes}], sizes = [{lanes}], "
                        f"strides = [1]}} : {v16} to vector<{lanes}xi8>"
                    )
                f = self.t(f"arith.uitofp {part} : vector<{lanes}xi8> to {self.vec}")
                out.append(self.t(f"vector.fma {f}, {s}, {bias} : {self.vec}"))
        return out

    def izero(self, ty: str) -> str:
        return self.t(f"arith.constant 0 : {ty}")

    def read_x(self, x: KernelValue, i: str, g: str) -> list[str]:
        out = []
        for j in range(self.slices):
            col = self.t(f"affine.apply affine_map<(d0) -> (d0 * 32 + {j * self.lanes})>({g})")
            out.append(
                self.t(
                    f"vector.transfer_read {x.name}[{i}, {col}], {self.fconst(0.0)} {{in_bounds = [true]}} "
                    f": {x.mlir}, {self.vec}"
                )
            )
        return out

    def block(
        self,
        x: KernelValue,
        xrows: list[str],
        wrows: list[str],
        w_of: Any,
        dest: KernelValue,
        at: tuple[str, str],
    ) -> KernelValue:
        """Accumulate ``x[xrows] . W[wrows]`` over k and write the [len(xrows), len(wrows)] block into ``dest`` at
        ``at`` (masked at its bounds). ``w_of(j, g)`` emits the weight vectors of block row ``j``, group ``g``."""
        vec = self.vec
        mb, nb = len(xrows), len(wrows)

        def step(g: str, accs: list[str]) -> list[str]:
            xs = [self.read_x(x, r, g) for r in xrows]
            new = list(accs)
            for j in range(nb):
                ws = w_of(j, g)
                for i in range(mb):
                    a = new[i * nb + j]
                    for s in range(self.slices):
                        a = self.t(f"vector.fma {xs[i][s]}, {ws[s]}, {a} : {vec}")
                    new[i * nb + j] = a
            return new

        return self.accumulate(mb, nb, vec, step, dest, at)

    def accumulate(
        self,
        mb: int,
        nb: int,
        vec: str,
        step: Any,
        dest: KernelValue,
        at: tuple[str, str],
        trips: int | None = None,
    ) -> KernelValue:
        """The k loop of an [mb, nb] block of ``vec`` accumulators (``step(g, accs) -> accs`` emits one group,
        or one of ``trips`` superblocks), their horizontal sums written into ``dest`` at ``at`` (masked at its
        bounds)."""
        k = self.k
        zero = self.t(f"arith.constant dense<0.0> : {vec}")
        accs = [k.fresh("acc") for _ in range(mb * nb)]
        g = k.fresh("g")
        lines, new = k.capture(lambda: step(g, accs))
        results = k.fresh("sums")
        types = ", ".join([vec] * len(accs))
        iters = ", ".join(f"{a} = {zero}" for a in accs)
        k.emit(
            f"{results}:{len(accs)} = scf.for {g} = {self.c(0)} to {self.c(trips or self.groups)} step {self.c(1)} "
            f"iter_args({iters}) -> ({types}) {{",
            *("  " + line for line in lines),
            f"  scf.yield {', '.join(new)} : {types}",
            "}",
        )
        sums = [
            self.t(f"vector.reduction <add>, {results}#{i} fastmath<reassoc> : {vec} into f32")
            for i in range(len(accs))
        ]
        block = self.t(f"vector.from_elements {', '.join(sums)} : vector<{mb}x{nb}xf32>")
        return k.op(
            f"vector.transfer_write {block}, {dest.name}[{at[0]}, {at[1]}] : vector<{mb}x{nb}xf32>, {dest.mlir}",
            dest,
        )

    def branch(self, cond: str, ty: str, then: Any, other: Any) -> str:
        """``scf.if`` yielding one tensor of type ``ty``; ``then()``/``other()`` emit and return its value."""
        k = self.k
        a_lines, a = k.capture(then)
        b_lines, b = k.capture(other)
        r = k.fresh("t")
        k.emit(
            f"{r} = scf.if {cond} -> ({ty}) {{",
            *("  " + line for line in a_lines),
            f"  scf.yield {a} : {ty}",
            "} else {",
            *("  " + line for line in b_lines),
            f"  scf.yield {b} : {ty}",
            "}",
        )
        return r

    # -- int8 activations (decode) -------------------------------------------------------------------
    def order(self) -> list[int]:
        """The k order of a group's 32 nibbles as ``nibbles`` returns them (x is quantized in this order)."""
        if self.layout == "q4f16_1":  # low nibbles hold the even values, high nibbles the odd ones
            return [*range(0, GROUP, 2), *range(1, GROUP, 2)]
        return list(range(GROUP))

    def nibbles(self, data: KernelValue, n: str, g: str) -> str:
        """Row ``n``, group ``g`` of a 4-bit layout as 32 unsigned bytes (low nibbles, then high nibbles)."""
        v16 = "vector<16xi8>"
        if self.layout == "q4_0":
            col = self.t(f"affine.apply affine_map<(d0) -> (d0 * 16)>({g})")
            b = self.t(
                f"vector.transfer_read {data.name}[{self.dat(n, col)}], {self.izero('i8')} {{in_bounds = [true]}} "
                f": {data.mlir}, {v16}"
            )
        else:
            col = self.t(f"affine.apply affine_map<(d0) -> (d0 * 4)>({g})")
            w = self.t(
                f"vector.transfer_read {data.name}[{self.dat(n, col)}], {self.izero('i32')} {{in_bounds = [true]}} "
                f": {data.mlir}, vector<4xi32>"
            )
            b = self.t(f"vector.bitcast {w} : vector<4xi32> to {v16}")
        lo = self.t(f"arith.andi {b}, {self.t(f'arith.constant dense<15> : {v16}')} : {v16}")
        hi = self.t(f"arith.shrui {b}, {self.t(f'arith.constant dense<4> : {v16}')} : {v16}")
        return self.t(f"vector.shuffle {lo}, {hi} [{', '.join(map(str, range(32)))}] : {v16}, {v16}")

    def weight_bytes(self, data: KernelValue, n: str, g: str) -> tuple[str, str]:
        """Row ``n``, group ``g`` as (unsigned bytes for vpdpbusd, the signed bytes): the nibbles of a 4-bit
        layout (twice), or q8_0's magnitudes and its bytes."""
        if self.layout != "q8_0":
            b = self.nibbles(data, n, g)
            return b, b
        col = self.t(f"affine.apply affine_map<(d0) -> (d0 * 32)>({g})")
        w = self.t(
            f"vector.transfer_read {data.name}[{self.dat(n, col)}], {self.izero('i8')} {{in_bounds = [true]}} "
            f": {data.mlir}, vector<32xi8>"
        )
        flip = self.t("arith.constant dense<-128> : vector<32xi8>")
        return self.t(f"arith.xori {w}, {flip} : vector<32xi8>"), w

    def quantize_x(self, x: KernelValue, m: str) -> tuple[KernelValue, KernelValue, KernelValue]:
        """The first ``min(m, 4)`` rows of ``x`` quantized per group of 32 to int8 (round to nearest even of
        ``x * 127 / max|x|``, llama.cpp's Q8_0): the bytes [m', k] in ``order()``, the scales [m', groups] and,
        per 4 bytes, ``-zero * sum`` [m', k / 4] (i32: the zero point's term, the dot products' start)."""
        k, groups = self.k, self.groups
        zero_point = self.zero_point()
        rows = self.t(f"arith.minui {m}, {self.c(SMALL)} : index")
        nibbles = self.sb and self.layout != "q8_0"  # 4-bit superblocks: x in ``store_superblock_x``'s order
        per = 4 if nibbles else 1  # ... and x scales and offsets per i32 lane of the dot products
        q_t = TensorType((None, as_expr(groups * GROUP)), "i8")
        d_t = TensorType((None, as_expr(groups * per)), "f32")
        o_t = TensorType((None, as_expr(groups * (per if nibbles else 8))), "i32")
        inits = [k.op(f"tensor.empty({rows}) : {builtin_tensor(t)}", t) for t in (q_t, d_t, o_t)]
        v32, i32v = "vector<32xf32>", "vector<32xi32>"

        def group(i: str, g: str, vals: list[KernelValue]) -> list[KernelValue]:
            q_acc, d_acc, o_acc = vals
            col = self.t(f"affine.apply affine_map<(d0) -> (d0 * 32)>({g})")
            xv = self.t(
                f"vector.transfer_read {x.name}[{i}, {col}], {self.fconst(0.0)} {{in_bounds = [true]}} "
                f": {x.mlir}, {v32}"
            )
            amax = self.t(f"vector.reduction <maxnumf>, {self.t(f'math.absf {xv} : {v32}')} : {v32} into f32")
            d = self.t(f"arith.divf {amax}, {self.fconst(127.0)} : f32")
            positive = self.t(f"arith.cmpf ogt, {amax}, {self.fconst(0.0)} : f32")
            inv = self.t(f"arith.divf {self.fconst(127.0)}, {amax} : f32")
            inv = self.t(f"arith.select {positive}, {inv}, {self.fconst(0.0)} : f32")
            scaled = self.t(f"arith.mulf {xv}, {self.t(f'vector.broadcast {inv} : f32 to {v32}')} : {v32}")
            magic = self.t(f"arith.constant dense<1.2582912e+07> : {v32}")  # 1.5 * 2**23: rounds to even
            rounded = self.t(f"arith.subf {self.t(f'arith.addf {scaled}, {magic} : {v32}')}, {magic} : {v32}")
            qi = self.t(f"arith.fptosi {rounded} : {v32} to {i32v}")
            if self.order() != list(range(GROUP)):
                qi = self.t(
                    f"vector.shuffle {qi}, {qi} [{', '.join(map(str, self.order()))}] : {i32v}, {i32v}"
                )
            q8 = self.t(f"arith.trunci {qi} : {i32v} to vector<32xi8>")
            if nibbles:
                return self.store_superblock_x(i, g, q8, d, qi, (q_acc, d_acc, o_acc))
            q_acc = k.op(
                f"vector.transfer_write {q8}, {q_acc.name}[{i}, {col}] {{in_bounds = [true]}} : "
                f"vector<32xi8>, {q_acc.mlir}",
                q_acc,
            )
            d_acc = k.op(f"tensor.insert {d} into {d_acc.name}[{i}, {g}] : {d_acc.mlir}", d_acc)
            fours = [
                self.t(
                    f"vector.shuffle {qi}, {qi} [{', '.join(str(4 * j + r) for j in range(8))}] : {i32v}, {i32v}"
                )
                for r in range(4)
            ]
            total = fours[0]
            for part in fours[1:]:
                total = self.t(f"arith.addi {total}, {part} : vector<8xi32>")
            neg = self.t(f"arith.constant dense<{-zero_point}> : vector<8xi32>")
            start = self.t(f"arith.muli {total}, {neg} : vector<8xi32>")
            col8 = self.t(f"affine.apply affine_map<(d0) -> (d0 * 8)>({g})")
            o_acc = k.op(
                f"vector.transfer_write {start}, {o_acc.name}[{i}, {col8}] {{in_bounds = [true]}} : "
                f"vector<8xi32>, {o_acc.mlir}",
                o_acc,
            )
            return [q_acc, d_acc, o_acc]

        def row(i: str, vals: list[KernelValue]) -> list[KernelValue]:
            return self.loops(self.c(0), self.c(groups), vals, lambda g, v: group(i, g, v))

        q, d, o = self.loops(self.c(0), rows, inits, row)
        return q, d, o

    def loops(self, lower: str, upper: str, inits: list[KernelValue], body: Any) -> list[KernelValue]:
        """``scf.for`` by 1 over [lower, upper) carrying several tensors; ``body(iv, accs) -> accs``."""
        k = self.k
        iv = k.fresh("iv")
        accs = [KernelValue(k.fresh("acc"), v.type, v.mlir) for v in inits]
        lines, updated = k.capture(lambda: body(iv, accs))
        name = k.fresh("t")
        types = ", ".join(v.mlir for v in inits)
        iters = ", ".join(f"{a.name} = {v.name}" for a, v in zip(accs, inits))
        k.emit(
            f"{name}:{len(inits)} = scf.for {iv} = {lower} to {upper} step {self.c(1)} iter_args({iters}) -> "
            f"({types}) {{",
            *("  " + line for line in lines),
            f"  scf.yield {', '.join(u.name for u in updated)} : {types}",
            "}",
        )
        return [KernelValue(f"{name}#{i}", v.type, v.mlir) for i, v in enumerate(inits)]

    def zero_point(self) -> int:
        """The weights' zero point in the int8 path: q8_0's signed bytes become unsigned ones (``w ^ 0x80``,
        vpdpbusd's operand type) whose zero point is 128."""
        return 128 if self.layout == "q8_0" else LAYOUTS[self.layout][2]

    def block_q8(
        self,
        quantized: tuple[KernelValue, KernelValue, KernelValue],
        xrows: list[str],
        data: KernelValue,
        scales: KernelValue,
        wrows: list[str],
        dest: KernelValue,
        at: tuple[str, str],
    ) -> KernelValue:
        """``block_i8`` for q8_0 over superblocks of 2 groups: per weight row, one load of 64 bytes (a cache
        line), flipped to unsigned (``w ^ 0x80``), one 512-bit dot product with x's bytes started at the zero
        point's term (8 i32 lanes per group), then per lane both scales in f32."""
        xq, dx, off = quantized
        vec, ivec, bvec = "vector<16xf32>", "vector<16xi32>", "vector<64xi8>"
        callee = self.k.declare(self.vs.dot512, (ivec, bvec, bvec), ivec)  # type: ignore[arg-type]
        signature = f"({ivec}, {bvec}, {bvec}) -> {ivec}"
        nb = len(wrows)
        expand = ", ".join(str(i // 8) for i in range(16))

        read = self.read_vector

        def step(s: str, accs: list[str]) -> list[str]:
            col = self.t(f"affine.apply affine_map<(d0) -> (d0 * 64)>({s})")
            ocol = self.t(f"affine.apply affine_map<(d0) -> (d0 * 16)>({s})")
            scol = self.t(f"affine.apply affine_map<(d0) -> (d0 * 2)>({s})")
            xs = []
            for r in xrows:
                d = read(dx, r, scol, "vector<2xf32>", self.fconst(0.0))
                xs.append(
                    (
                        read(xq, r, col, bvec, self.izero("i8")),
                        read(off, r, ocol, ivec, self.izero("i32")),
                        self.t(f"vector.shuffle {d}, {d} [{expand}] : vector<2xf32>, vector<2xf32>"),
                    )
                )
            new = list(accs)
            flip = self.t(f"arith.constant dense<-128> : {bvec}")
            for j in range(nb):
                self.prefetch(wrows[j], s, nb, 64)
                w = self.t(
                    f"arith.xori {self.read_data(data, wrows[j], col, bvec, self.izero('i8'))}, {flip} : {bvec}"
                )
                ws = self.row_scales(scales, wrows[j], scol, 2, expand)
                for i, (xb, o, d) in enumerate(xs):
                    p = self.t(f"func.call {callee}({o}, {w}, {xb}) : {signature}")
                    f = self.t(f"arith.sitofp {p} : {ivec} to {vec}")
                    both = self.t(f"arith.mulf {ws}, {d} : {vec}")
                    new[i * nb + j] = self.t(f"vector.fma {f}, {both}, {new[i * nb + j]} : {vec}")
            return new

        return self.accumulate(len(xrows), nb, vec, step, dest, at, trips=self.groups // 2)

    def superblock(self) -> int:
        """Groups per int8 dot product of a 4-bit layout's decode path: 4 on 512 bits, 2 on 256 (the
        number of groups must be a multiple); 0: one group per dot product (``block_i8``)."""
        if not self.int8:
            return 0
        if self.layout == "q8_0":  # 2 groups of 32 bytes per 512-bit dot product (``block_q8``)
            return 2 if self.vs.dot512 is not None and self.groups % 2 == 0 else 0
        for count, dot in ((4, self.vs.dot512), (2, self.vs.dot)):
            if dot is not None and self.groups % count == 0:
                return count
        return 0

    def store_superblock_x(
        self, i: str, g: str, q8: str, d: str, qi: str, accs: tuple[KernelValue, ...]
    ) -> list[KernelValue]:
        """Write group ``g`` of quantized x row ``i`` for ``block_sb``: in superblock ``g / S`` (S = ``sb``
        groups), its 16 low-nibble partners at byte ``16 * (g % S)`` and its high ones ``16 * S`` later; its
        scale and ``-zero * sum`` of each dot-product lane's 8 bytes (4 low, 4 high) at lanes ``4g..4g+3``."""
        k, sb = self.k, self.sb
        q_acc, d_acc, o_acc = accs
        v16, v4 = "vector<16xi8>", "vector<4xi32>"
        lo_col = self.t(
            f"affine.apply affine_map<(d0) -> ((d0 floordiv {sb}) * {32 * sb} + (d0 mod {sb}) * 16)>({g})"
        )
        hi_col = self.t(f"affine.apply affine_map<(d0) -> (d0 + {16 * sb})>({lo_col})")
        for half, col in ((0, lo_col), (1, hi_col)):
            part = self.t(
                f"vector.extract_strided_slice {q8} {{offsets = [{16 * half}], sizes = [16], strides = [1]}} "
                f": vector<32xi8> to {v16}"
            )
            q_acc = k.op(
                f"vector.transfer_write {part}, {q_acc.name}[{i}, {col}] {{in_bounds = [true]}} : "
                f"{v16}, {q_acc.mlir}",
                q_acc,
            )
        col4 = self.t(f"affine.apply affine_map<(d0) -> (d0 * 4)>({g})")
        dv = self.t(f"vector.broadcast {d} : f32 to vector<4xf32>")
        d_acc = k.op(
            f"vector.transfer_write {dv}, {d_acc.name}[{i}, {col4}] {{in_bounds = [true]}} : "
            f"vector<4xf32>, {d_acc.mlir}",
            d_acc,
        )
        # lane r sums bytes 4r..4r+3 of each half: values order()[4r..4r+3] and order()[16+4r..16+4r+3]
        i32v = "vector<32xi32>"
        total = None
        for half in (0, 16):
            for b in range(4):
                idx = ", ".join(str(half + 4 * r + b) for r in range(4))
                part = self.t(f"vector.shuffle {qi}, {qi} [{idx}] : {i32v}, {i32v}")
                total = part if total is None else self.t(f"arith.addi {total}, {part} : {v4}")
        zero_point = self.zero_point()
        start = self.t(f"arith.muli {total}, {self.t(f'arith.constant dense<{-zero_point}> : {v4}')} : {v4}")
        o_acc = k.op(
            f"vector.transfer_write {start}, {o_acc.name}[{i}, {col4}] {{in_bounds = [true]}} : "
            f"{v4}, {o_acc.mlir}",
            o_acc,
        )
        return [q_acc, d_acc, o_acc]

    def block_sb(
        self,
        quantized: tuple[KernelValue, KernelValue, KernelValue],
        xrows: list[str],
        data: KernelValue,
        scales: KernelValue,
        wrows: list[str],
        dest: KernelValue,
        at: tuple[str, str],
    ) -> KernelValue:
        """``block_i8`` over superblocks of ``sb`` groups of a 4-bit layout: per weight row, one load of
        ``16 * sb`` bytes, their low and high nibbles each one dot product (``4 * sb`` i32 lanes, 4 per
        group) with x's bytes in the same order, then per lane both scales in f32."""
        xq, dx, off = quantized
        sb = self.sb
        lanes, nbytes = 4 * sb, 16 * sb
        vec, ivec, bvec = f"vector<{lanes}xf32>", f"vector<{lanes}xi32>", f"vector<{nbytes}xi8>"
        dot = self.vs.dot512 if sb == 4 else self.vs.dot
        callee = self.k.declare(dot, (ivec, bvec, bvec), ivec)  # type: ignore[arg-type]
        signature = f"({ivec}, {bvec}, {bvec}) -> {ivec}"
        nb = len(wrows)
        expand = ", ".join(str(i // 4) for i in range(lanes))

        read = self.read_vector

        def step(s: str, accs: list[str]) -> list[str]:
            xcol = self.t(f"affine.apply affine_map<(d0) -> (d0 * {32 * sb})>({s})")
            xcol_hi = self.t(f"affine.apply affine_map<(d0) -> (d0 * {32 * sb} + {16 * sb})>({s})")
            lcol = self.t(f"affine.apply affine_map<(d0) -> (d0 * {lanes})>({s})")
            xs = [
                (
                    read(xq, r, xcol, bvec, self.izero("i8")),
                    read(xq, r, xcol_hi, bvec, self.izero("i8")),
                    read(off, r, lcol, ivec, self.izero("i32")),
                    read(dx, r, lcol, vec, self.fconst(0.0)),
                )
                for r in xrows
            ]
            new = list(accs)
            for j in range(nb):
                self.prefetch(wrows[j], s, nb, self.group_elements() * sb)
                if self.layout == "q4_0":
                    col = self.t(f"affine.apply affine_map<(d0) -> (d0 * {nbytes})>({s})")
                    b = self.read_data(data, wrows[j], col, bvec, self.izero("i8"))
                else:  # q4f16_1: 4 words per group
                    col = self.t(f"affine.apply affine_map<(d0) -> (d0 * {4 * sb})>({s})")
                    w = self.read_data(data, wrows[j], col, f"vector<{4 * sb}xi32>", self.izero("i32"))
                    b = self.t(f"vector.bitcast {w} : vector<{4 * sb}xi32> to {bvec}")
                lo = self.t(f"arith.andi {b}, {self.t(f'arith.constant dense<15> : {bvec}')} : {bvec}")
                hi = self.t(f"arith.shrui {b}, {self.t(f'arith.constant dense<4> : {bvec}')} : {bvec}")
                scol = self.t(f"affine.apply affine_map<(d0) -> (d0 * {sb})>({s})")
                ws = self.row_scales(scales, wrows[j], scol, sb, expand)
                for i, (xlo, xhi, o, d) in enumerate(xs):
                    p = self.t(f"func.call {callee}({o}, {lo}, {xlo}) : {signature}")
                    p = self.t(f"func.call {callee}({p}, {hi}, {xhi}) : {signature}")
                    f = self.t(f"arith.sitofp {p} : {ivec} to {vec}")
                    both = self.t(f"arith.mulf {ws}, {d} : {vec}")
                    new[i * nb + j] = self.t(f"vector.fma {f}, {both}, {new[i * nb + j]} : {vec}")
            return new

        return self.accumulate(len(xrows), nb, vec, step, dest, at, trips=self.groups // sb)

    def block_i8(
        self,
        quantized: tuple[KernelValue, KernelValue, KernelValue],
        xrows: list[str],
        data: KernelValue,
        scales: KernelValue,
        wrows: list[str],
        dest: KernelValue,
        at: tuple[str, str],
    ) -> KernelValue:
        """``block`` for x rows ``xrows`` (of the first 4) with int8 dot products: per group, (x bytes . nibbles) starting from
        the zero point's term, times the x scale and the weight scale."""
        xq, dx, off = quantized
        vec, nb = "vector<8xf32>", len(wrows)
        operands = ("vector<8xi32>", "vector<32xi8>", "vector<32xi8>")
        callee = self.k.declare(self.vs.dot, operands, "vector<8xi32>")  # type: ignore[arg-type]
        signature = f"({', '.join(operands)}) -> vector<8xi32>"

        def step(g: str, accs: list[str]) -> list[str]:
            col = self.t(f"affine.apply affine_map<(d0) -> (d0 * 32)>({g})")
            col8 = self.t(f"affine.apply affine_map<(d0) -> (d0 * 8)>({g})")
            xs = []
            for r in xrows:
                q = self.t(
                    f"vector.transfer_read {xq.name}[{r}, {col}], {self.izero('i8')} {{in_bounds = [true]}} "
                    f": {xq.mlir}, vector<32xi8>"
                )
                o = self.t(
                    f"vector.transfer_read {off.name}[{r}, {col8}], {self.izero('i32')} {{in_bounds = [true]}} "
                    f": {off.mlir}, vector<8xi32>"
                )
                d = self.t(f"tensor.extract {dx.name}[{r}, {g}] : {dx.mlir}")
                xs.append((q, o, self.t(f"vector.broadcast {d} : f32 to {vec}")))
            new = list(accs)
            for j in range(nb):
                self.prefetch(wrows[j], g, nb, self.group_elements())
                w = self.weight_bytes(data, wrows[j], g)
                s = self.scale(scales, wrows[j], g, vec)
                for i, (q, o, d) in enumerate(xs):
                    p = self.t(f"func.call {callee}({o}, {w[0]}, {q}) : {signature}")
                    f = self.t(f"arith.sitofp {p} : vector<8xi32> to {vec}")
                    both = self.t(f"arith.mulf {s}, {d} : {vec}")
                    new[i * nb + j] = self.t(f"vector.fma {f}, {both}, {new[i * nb + j]} : {vec}")
            return new

        return self.accumulate(len(xrows), nb, vec, step, dest, at)

    def group_elements(self) -> int:
        """Data elements per group of 32 weights (bytes for q8_0 and q4_0, words for q4f16_1)."""
        return GROUP // LAYOUTS[self.layout][1]

    def read_vector(self, t: KernelValue, r: str, col: str, ty: str, pad: str) -> str:
        """An in-bounds ``vector.transfer_read`` of type ``ty`` from row ``r`` of 2-D ``t`` at column ``col``."""
        return self.t(
            f"vector.transfer_read {t.name}[{r}, {col}], {pad} {{in_bounds = [true]}} : {t.mlir}, {ty}"
        )

    def read_data(self, data: KernelValue, r: str, col: str, ty: str, pad: str) -> str:
        """``read_vector`` of weight row ``r``'s packed data from column ``col`` (of the untiled layout)."""
        return self.t(
            f"vector.transfer_read {data.name}[{self.dat(r, col)}], {pad} {{in_bounds = [true]}} : "
            f"{data.mlir}, {ty}"
        )

    def dat(self, n: str, col: str) -> str:
        """The indices of ``data`` that hold weight row ``n``'s element ``col`` (``tiled_index``)."""
        return self.tiled_index(n, col, self.piece[0])

    def sca(self, n: str, g: str) -> str:
        """The indices of ``scales`` that hold weight row ``n``'s scale ``g``."""
        return self.tiled_index(n, g, self.piece[1])

    def tiled_index(self, n: str, col: str, per: int) -> str:
        """``n, col`` in an untiled layout; in a tiled one, its place in row ``n / TILE_ROWS``: piece
        ``col / per`` of the ``TILE_ROWS`` rows one after the other (``tile``)."""
        if not self.tiled:
            return f"{n}, {col}"
        r = self.t(f"affine.apply affine_map<(d0) -> (d0 floordiv {TILE_ROWS})>({n})")
        c = self.t(
            f"affine.apply affine_map<(d0, d1) -> ((d1 floordiv {per}) * {per * TILE_ROWS} "
            f"+ (d0 mod {TILE_ROWS}) * {per} + d1 mod {per})>({n}, {col})"
        )
        return f"{r}, {c}"

    def row_scales(self, scales: KernelValue, row: str, col: str, n: int, expand: str) -> str:
        """The ``n`` scales of weight row ``row`` from column ``col``, as f32, each repeated over its lanes of
        the dot products (``expand``: the shuffle's lane-to-scale indices)."""
        zero = self.t(f"arith.constant 0.0 : {scales.dtype}")
        ty = f"vector<{n}x{scales.dtype}>"
        sv = self.t(
            f"vector.transfer_read {scales.name}[{self.sca(row, col)}], {zero} {{in_bounds = [true]}} : "
            f"{scales.mlir}, {ty}"
        )
        if scales.dtype == "f16":
            sv = self.t(f"arith.extf {sv} : vector<{n}xf16> to vector<{n}xf32>")
        return self.t(f"vector.shuffle {sv}, {sv} [{expand}] : vector<{n}xf32>, vector<{n}xf32>")

    def prefetch(self, row: str, g: str, ahead: int, per: int) -> None:
        """Prefetch the packed bytes that row ``row + ahead`` (clamped) holds at group (or superblock) ``g``
        of ``per`` data elements: the GEMV's next block of weight rows, so that the rows, which the block
        reads in ``nb`` interleaved short streams, arrive from DRAM before they are needed (module docstring)."""
        r = self.imin(self.t(f"arith.addi {row}, {self.c(ahead)} : index"), self.last_row)
        col = self.t(f"affine.apply affine_map<(d0) -> (d0 * {per})>({g})")
        self.k.emit(
            f"memref.prefetch {self.buffer}[{self.dat(r, col)}], read, locality<3>, data : {self.buffer_type}"
        )

    # -- the kernel ----------------------------------------------------------------------------------
    def emit(
        self, x: KernelValue, data: KernelValue, scales: KernelValue, o: KernelValue, m: str
    ) -> KernelValue:
        """The kernel on ``x`` [m, k] (``m`` its row count as an index value, defined at the top)."""
        k, rows = self.k, self.rows
        chunks = -(-rows // CHUNK)
        last = self.c(rows - 1)
        chunk = TensorType((None, None), "f32")
        cty = builtin_tensor(chunk)
        quantized = self.quantize_x(x, m) if self.int8 else None
        self.buffer = k.fresh("wbuf")
        self.buffer_type = builtin_tensor(data.type).replace("tensor<", "memref<", 1)
        k.emit(
            f"{self.buffer} = bufferization.to_buffer {data.name} read_only : {data.mlir} to {self.buffer_type}"
        )
        self.last_row = last
        # parts: every chunk its own when the call is big enough to split, else one part of all chunks
        work = self.t(f"arith.muli {m}, {self.c(rows * self.depth)} : index")
        split = self.t(f"arith.cmpi uge, {work}, {self.c(MIN_SPLIT_WORK)} : index")

        # ``o`` is [m, n] (``KernelBuilder.on_rows``); it may be defined in a loop, so its row count is ``m``
        d = o.shape[0]
        m_size = str(d.value) if d is not None and d.is_const else m
        part = TensorType((d, None), "f32")  # a chunk of columns of ``o``

        def where(first: str, size: str) -> str:
            return f"[0, {first}] [{m_size}, {size}] [1, 1]"

        def one_chunk(index: str, local: str, dest: KernelValue) -> KernelValue:
            """Chunk ``index`` (weight rows from ``CHUNK * index``) computed into ``dest`` (the part) at
            column ``local``."""
            n0 = self.t(f"affine.apply affine_map<(d0) -> (d0 * {CHUNK})>({index})")
            nc = self.t(f"affine.min affine_map<(d0) -> ({CHUNK}, {rows} - d0)>({n0})")
            at = where(local, nc)
            os_ = k.op(f"tensor.extract_slice {dest.name}{at} : {dest.mlir} to {builtin_tensor(part)}", part)
            if os_.mlir != cty:
                os_ = k.op(f"tensor.cast {os_.name} : {os_.mlir} to {cty}", chunk)

            def wrow(n: str) -> str:
                return self.imin(self.t(f"arith.addi {n0}, {n} : index"), last)

            def gemv(mb: int) -> str:
                # rows past m (2 or 3 rows in a block of 4) repeat the last one; their results are not written
                last_row = self.t(f"arith.subi {m}, {self.c(1)} : index")
                xrows = [self.imin(self.c(i), last_row) if i else self.c(0) for i in range(mb)]
                # superblocks of 512 bits hold 4 x rows' operands in registers: fewer weight rows per block
                wide = self.sb * 8 * (32 if self.layout == "q8_0" else 16) == 512
                nb = self.vs.nb // 2 if wide and mb > 1 else self.vs.nb

                def nblock(nb_: str, acc: KernelValue) -> KernelValue:
                    wrows = [wrow(self.t(f"arith.addi {nb_}, {self.c(j)} : index")) for j in range(nb)]
                    if quantized is not None and self.sb and self.layout == "q8_0":
                        return self.block_q8(quantized, xrows, data, scales, wrows, acc, (self.c(0), nb_))
                    if quantized is not None and self.sb:
                        return self.block_sb(quantized, xrows, data, scales, wrows, acc, (self.c(0), nb_))
                    if quantized is not None:
                        return self.block_i8(quantized, xrows, data, scales, wrows, acc, (self.c(0), nb_))

                    def w_of(j: int, g: str) -> list[str]:
                        self.prefetch(wrows[j], g, nb, self.group_elements())
                        return self.weights(data, scales, wrows[j], g)

                    return self.block(x, xrows, wrows, w_of, acc, (self.c(0), nb_))

                return self.k.loop(nc, os_, nblock, step=nb).name

            def gemm() -> str:
                panel_t = TensorType((as_expr(CHUNK), as_expr(self.depth)), "f32")
                panel0 = k.op(f"tensor.empty() : {builtin_tensor(panel_t)}", panel_t)

                def unpack(n: str, p: KernelValue) -> KernelValue:
                    nn = wrow(n)

                    def group(g: str, q: KernelValue) -> KernelValue:
                        for j, w in enumerate(self.weights(data, scales, nn, g)):
                            col = self.t(
                                f"affine.apply affine_map<(d0) -> (d0 * 32 + {j * self.lanes})>({g})"
                            )
                            q = k.op(
                                f"vector.transfer_write {w}, {q.name}[{n}, {col}] {{in_bounds = [true]}} : "
                                f"{self.vec}, {q.mlir}",
                                q,
                            )
                        return q

                    return self.k.loop(self.c(self.groups), p, group)

                panel = self.k.loop(self.c(CHUNK), panel0, unpack)
                last_x = self.t(f"arith.subi {m}, {self.c(1)} : index")

                def xblock(i0: str, acc: KernelValue) -> KernelValue:
                    xrows = [
                        self.imin(self.t(f"arith.addi {i0}, {self.c(i)} : index"), last_x) for i in range(MB)
                    ]

                    def nblock(nb_: str, acc2: KernelValue) -> KernelValue:
                        prow = [self.t(f"arith.addi {nb_}, {self.c(j)} : index") for j in range(self.vs.nb)]

                        def w_of(j: int, g: str) -> list[str]:
                            return self.read_x(panel, prow[j], g)

                        return self.block(x, xrows, prow, w_of, acc2, (i0, nb_))

                    return self.k.loop(nc, acc, nblock, step=self.vs.nb)

                return self.k.loop(m, os_, xblock, step=MB).name

            def small(variants: tuple[int, ...]) -> Any:
                mb, *rest = variants
                if not rest:
                    return lambda: gemv(mb)
                fits = self.t(f"arith.cmpi ule, {m}, {self.c(mb)} : index")
                return lambda: self.branch(fits, cty, lambda: gemv(mb), small(tuple(rest)))

            def decode() -> str:
                empty = self.t(f"arith.cmpi eq, {m}, {self.c(0)} : index")
                return self.branch(empty, cty, lambda: os_.name, small(GEMV_ROWS))

            big = self.t(f"arith.cmpi ugt, {m}, {self.c(SMALL)} : index")
            r = KernelValue(self.branch(big, cty, gemm, decode), chunk, cty)
            if r.mlir != builtin_tensor(part):
                r = k.op(f"tensor.cast {r.name} : {r.mlir} to {builtin_tensor(part)}", part)
            return k.op(
                f"tensor.insert_slice {r.name} into {dest.name}{at} : {r.mlir} into {dest.mlir}", dest
            )

        return k.column_parts(o, m_size, chunks, CHUNK, one_chunk, split)

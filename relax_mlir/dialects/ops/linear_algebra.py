"""Linear algebra ops."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from mlir import ir

from relax_mlir.dialects.dims import (
    broadcast_shapes,
    fmt_shape,
    join_dtype,
    provably_different,
    tensor_operand,
)
from relax_mlir.dialects.registry import Attr, Operand, RelaxOp, relax_op
from relax_mlir.dialects.types import RelaxType, TensorType
from relax_mlir.errors import ShapeError
from relax_mlir.lowering.kernel import (
    KernelBuilder,
    KernelValue,
    builtin_tensor,
    element,
    is_float,
    unit_groups,
)
from relax_mlir.shape_infer.expr import Expr, as_expr, format_dim


@relax_op
class MatmulOp(RelaxOp):
    """Matrix product with numpy semantics: batched, broadcasting batch dims, 1-D operands promoted.

    ``%z = "relax.matmul"(%x, %w) : (!relax.tensor<["b", "s", 512], f32>, !relax.tensor<[512, 64], f32>)
    -> !relax.tensor<["b", "s", 64], f32>``
    """

    NAME = "matmul"
    FUSION = "matmul"
    OPERANDS = (Operand("lhs"), Operand("rhs"))

    @classmethod
    def deduce(cls, operand_types: Sequence[RelaxType | None], attrs: dict[str, Any]) -> list[RelaxType]:
        lhs = tensor_operand(operand_types[0], "lhs")
        rhs = tensor_operand(operand_types[1], "rhs")
        dtype = join_dtype(lhs, rhs, ("lhs", "rhs"))
        for name, t in (("lhs", lhs), ("rhs", rhs)):
            if t.ndim == 0:
                raise ShapeError(f"operand '{name}' must have rank >= 1, got a scalar")
        if lhs.shape is None or rhs.shape is None:
            return [TensorType(None, dtype)]
        a = lhs.shape if len(lhs.shape) > 1 else (None,) + lhs.shape
        b = rhs.shape if len(rhs.shape) > 1 else rhs.shape + (None,)
        k_lhs, k_rhs = a[-1], b[-2]
        if provably_different(k_lhs, k_rhs):
            raise ShapeError(
                f"contraction dims differ: 'lhs' {fmt_shape(lhs.shape)} has {format_dim(k_lhs)}, "
                f"'rhs' {fmt_shape(rhs.shape)} has {format_dim(k_rhs)}"
            )
        try:
            batch = broadcast_shapes([a[:-2], b[:-2]], ["lhs", "rhs"])
        except ShapeError:
            raise ShapeError(
                f"cannot broadcast batch dims {fmt_shape(a[:-2])} of 'lhs' {fmt_shape(lhs.shape)} "
                f"and {fmt_shape(b[:-2])} of 'rhs' {fmt_shape(rhs.shape)}"
            ) from None
        out = list(batch)
        if len(lhs.shape) > 1:
            out.append(a[-2])
        if len(rhs.shape) > 1:
            out.append(b[-1])
        return [TensorType(tuple(out), dtype)]

    @classmethod
    def lower(cls, k: KernelBuilder) -> list[KernelValue]:
        """Named linalg ops, so that later tiling can match them.

        1-D operands get a unit dim (expand_shape). Then: no rhs batch dims -> the lhs batch dims are
        collapsed into its rows (and the destination's): one ``linalg.matmul``; equal batch dims ->
        collapsed into one: ``linalg.batch_matmul``; broadcast batch dims -> a ``linalg.generic``.
        Reshapes are views: nothing is copied. Dims the deduction only assumed equal (``k`` vs ``k2``,
        a batch dim ``b`` vs 3) are checked by the caller (``k.assume``).
        """
        if k.ins[0].dtype == "i1":
            raise k.fail("matmul of i1 tensors is not lowered: convert them with relax.astype first")
        _assume_contraction(k)
        lhs, rhs = k.ins
        a = lhs if lhs.rank > 1 else k.expand(lhs, [[0, 1]], [1, lhs.shape[0]], [None, k.dim(lhs, 0)])
        b = rhs if rhs.rank > 1 else k.expand(rhs, [[0, 1]], [rhs.shape[0], 1], [k.dim(rhs, 0), None])
        batch = _batch_dims(k, a, b)
        out = k.destination(0, _out_sizes(k, a, b, lhs.rank > 1, rhs.rank > 1))
        units = ([len(batch)] if lhs.rank == 1 else []) + ([len(batch) + 1] if rhs.rank == 1 else [])
        shape2 = (*batch, a.shape[-2], b.shape[-1])
        c = out
        if units:
            sizes = _sizes_with_units(k, out, units, len(shape2))
            c = k.expand(out, unit_groups(len(shape2), units), shape2, sizes)
        r = _contract(k, a, b, c)
        return [k.collapse(r, unit_groups(len(shape2), units)) if units else r]


def matmul(lhs: ir.Value, rhs: ir.Value, *, loc: ir.Location | None = None) -> ir.Value:
    """Matrix product (numpy.matmul semantics)."""
    return MatmulOp.build([lhs, rhs], loc=loc).result


@relax_op
class MatmulPackedOp(RelaxOp):
    """``lhs @ W`` with ``W`` [k, n] stored as column panels: ``packed`` [np, k, nr] holds
    ``W[:, p*nr:(p+1)*nr]`` at ``packed[p]`` (the last panels zero-padded). Internal: made by
    ``relax-pack-weights``, not by frontends. Leading dims of ``lhs`` are batch rows, as in matmul.

    ``%z = "relax.matmul_packed"(%x, %wp) {n = 2000} : (!relax.tensor<["b", "s", 512], f32>,
    !relax.tensor<[126, 512, 16], f32>) -> !relax.tensor<["b", "s", 2000], f32>``
    """

    NAME = "matmul_packed"
    FUSION = "matmul"
    CPU_ONLY = True
    OPERANDS = (Operand("lhs"), Operand("packed"))
    ATTRS = (Attr("n", "int"),)

    @classmethod
    def deduce(cls, operand_types: Sequence[RelaxType | None], attrs: dict[str, Any]) -> list[RelaxType]:
        lhs = tensor_operand(operand_types[0], "lhs")
        packed = tensor_operand(operand_types[1], "packed")
        dtype = join_dtype(lhs, packed, ("lhs", "packed"))
        n = attrs["n"]
        if (
            packed.shape is None
            or len(packed.shape) != 3
            or not all(d is not None and d.is_const for d in packed.shape)
        ):
            raise ShapeError(f"operand 'packed' must be [panels, k, width] with constant dims, got {packed}")
        panels, k, width = (d.value for d in packed.shape)
        if not 0 < n <= panels * width:
            raise ShapeError(f"n = {n} does not fit {panels} panels of width {width}")
        if lhs.shape is None:
            return [TensorType(None, dtype)]
        if len(lhs.shape) < 2:
            raise ShapeError(f"operand 'lhs' must have rank >= 2, got {fmt_shape(lhs.shape)}")
        if provably_different(lhs.shape[-1], packed.shape[1]):
            raise ShapeError(
                f"contraction dims differ: 'lhs' {fmt_shape(lhs.shape)} has {format_dim(lhs.shape[-1])}, "
                f"'packed' {fmt_shape(packed.shape)} has {k}"
            )
        return [TensorType((*lhs.shape[:-1], as_expr(n)), dtype)]

    @classmethod
    def lower(cls, k: KernelBuilder) -> list[KernelValue]:
        """``linalg.generic`` ops on the rows (all leading dims collapsed into one, ``KernelBuilder.on_rows``)
        that ``transforms/schedules/packed_matmul.py`` tiles into register blocks (``_packed_2d``)."""
        lhs, packed = k.ins
        if lhs.shape[-1] != packed.shape[1]:
            k.assume(0, (*lhs.shape[:-1], packed.shape[1]))
            lhs = k.ins[0]
        out = k.destination(0)
        n = k.attrs["n"]
        return [k.on_rows(lhs, out, lambda xs, os_, rows: _packed_2d(k, xs, packed, os_, n, rows))]


def matmul_packed(lhs: ir.Value, packed: ir.Value, n: int, *, loc: ir.Location | None = None) -> ir.Value:
    """``lhs @ W`` for ``W`` [k, n] packed as column panels ``packed`` [np, k, nr]."""
    return MatmulPackedOp.build([lhs, packed], {"n": n}, loc=loc).result


# -- lowering helpers ------------------------------------------------------------------------------------


def _assume_contraction(k: KernelBuilder) -> None:
    """Make both operands' contraction dims the same expression (a constant if either is one)."""
    lhs, rhs = k.ins
    kr_axis = rhs.rank - 2 if rhs.rank > 1 else 0
    kl, kr = lhs.shape[-1], rhs.shape[kr_axis]
    if kl == kr and kl is not None:
        return
    if kl is None and kr is None:
        raise k.fail(
            f"the contraction dims of {lhs.type} and {rhs.type} are unknown: state them with relax.match_cast"
        )
    if kl is None or (kr is not None and kr.is_const):
        k.assume(0, (*lhs.shape[:-1], kr))
    else:
        k.assume(1, tuple(kl if i == kr_axis else d for i, d in enumerate(rhs.shape)))


def _batch_dims(k: KernelBuilder, a: KernelValue, b: KernelValue) -> list[Expr | None]:
    """The result's batch dims; operand batch dims that are not a broadcast 1 are assumed equal to them."""
    ba, bb = list(a.shape[:-2]), list(b.shape[:-2])
    rank = max(len(ba), len(bb))
    ba, bb = [None] * (rank - len(ba)) + ba, [None] * (rank - len(bb)) + bb  # None here: absent
    out: list[Expr | None] = []
    for i, (x, y) in enumerate(zip(ba, bb)):
        absent_x, absent_y = i < rank - (a.rank - 2), i < rank - (b.rank - 2)
        dims = [d for d, absent in ((x, absent_x), (y, absent_y)) if not absent and d != 1]
        known = [d for d in dims if d is not None]
        if not dims:
            out.append(as_expr(1))
        elif not known:
            if len(dims) > 1:
                raise k.fail(
                    f"batch dim {i} of {a.type} and {b.type} is unknown: state it with relax.match_cast"
                )
            out.append(None)
        else:
            out.append(next((d for d in known if d.is_const), known[0]))
    for index, v in ((0, a), (1, b)):
        offset = rank - (v.rank - 2)
        dims = list(v.shape)
        for j in range(v.rank - 2):
            if dims[j] != 1 and dims[j] != out[j + offset]:
                dims[j] = out[j + offset]
        _assume_operand(k, index, v, dims)
    return out


def _assume_operand(k: KernelBuilder, index: int, v: KernelValue, dims: list[Expr | None]) -> None:
    """``k.assume`` on the operand behind ``v`` (which may be its 1-D operand expanded)."""
    if dims == list(v.shape):
        return
    original = k.ins[index]
    if original.rank == v.rank:
        k.assume(index, dims)  # type: ignore[arg-type]
        v.type, v.mlir = k.ins[index].type, k.ins[index].mlir
        return
    raise k.fail(
        f"cannot reconcile the dims of operand #{index} {original.type}"
    )  # 1-D operands have no batch


def _out_sizes(
    k: KernelBuilder, a: KernelValue, b: KernelValue, has_m: bool, has_n: bool
) -> list[str | None]:
    """Index values of the result dims, read from the operands (only when the kernel allocates)."""
    if not k.allocating:
        return []
    rank = max(a.rank, b.rank) - 2
    sizes: list[str | None] = []
    for i in range(rank):
        size = None
        for v in (a, b):
            j = i - (rank - (v.rank - 2))
            if j >= 0 and v.shape[j] != 1:
                size = k.dim(v, j)
        sizes.append(size)
    if has_m:
        sizes.append(k.dim(a, a.rank - 2))
    if has_n:
        sizes.append(k.dim(b, b.rank - 1))
    return sizes


def _sizes_with_units(k: KernelBuilder, out: KernelValue, units: list[int], rank: int) -> list[str | None]:
    sizes: list[str | None] = []
    j = 0
    for i in range(rank):
        if i in units:
            sizes.append(None)
            continue
        d = out.shape[j]
        sizes.append(None if d is not None and d.is_const else k.dim(out, j))
        j += 1
    return sizes


def _fill_zero(k: KernelBuilder, dest: KernelValue) -> KernelValue:
    return k.fill(k.constant(0, dest.dtype), dest)


def _named(
    k: KernelBuilder, op: str, a: KernelValue, b: KernelValue, c: KernelValue, maps: str = ""
) -> KernelValue:
    c = _fill_zero(k, c)
    return k.op(
        f"linalg.{op} {maps}ins({a.name}, {b.name} : {a.mlir}, {b.mlir}) outs({c.name} : {c.mlir}) -> {c.mlir}",
        c,
    )


def _dynamic(dims: Sequence[Expr | None]) -> int:
    return sum(1 for d in dims if d is None or not d.is_const)


def _leading(k: KernelBuilder, v: KernelValue, count: int) -> tuple[KernelValue, list[list[int]]]:
    """``v`` with its first ``count`` dims collapsed into one (when there are several)."""
    if count == 1:
        return v, []
    groups = [list(range(count))] + [[i] for i in range(count, v.rank)]
    return k.collapse(v, groups), groups


def _restore(k: KernelBuilder, r: KernelValue, like: KernelValue, groups: list[list[int]]) -> KernelValue:
    if not groups:
        return r
    sizes = [None if d is not None and d.is_const else k.dim(like, i) for i, d in enumerate(like.shape)]
    return k.expand(r, groups, like.shape, sizes)


def _contract(k: KernelBuilder, a: KernelValue, b: KernelValue, c: KernelValue) -> KernelValue:
    """``c = a @ b`` for ``a`` [..., m, k], ``b`` [..., k, n], ``c`` [..., m, n] (batch dims resolved).

    A collapsed group of the destination holds at most one dynamic dim: ``memref.expand_shape`` back
    to several dynamic dims aborts ``expand-strided-metadata`` in MLIR 22. So [b, s, k] x [k, n] with
    symbolic b and s is a ``linalg.batch_matmul`` whose rhs map broadcasts, not one 2-D matmul.
    """
    nb = c.rank - 2
    batch = c.shape[:nb]
    if b.rank == 2 and _dynamic(c.shape[:-1]) <= 1:
        a2, _ = _leading(k, a, a.rank - 1)
        c2, groups = _leading(k, c, c.rank - 1)
        return _restore(k, _named(k, "matmul", a2, b, c2), c, groups)
    full = [v.rank == c.rank and all(x == y for x, y in zip(v.shape[:nb], batch)) for v in (a, b)]
    if not all(f or v.rank == 2 for f, v in zip(full, (a, b))) or (nb > 1 and _dynamic(batch) > 1):
        return _broadcast_matmul(k, a, b, _fill_zero(k, c))
    a2 = _leading(k, a, nb)[0] if full[0] else a
    b2 = _leading(k, b, nb)[0] if full[1] else b
    c2, groups = _leading(k, c, nb)
    maps = ""
    if not all(full):
        head = "affine_map<(d0, d1, d2, d3) -> "
        lhs_map = head + ("(d0, d1, d3)>" if full[0] else "(d1, d3)>")
        rhs_map = head + ("(d0, d3, d2)>" if full[1] else "(d3, d2)>")
        maps = f"indexing_maps = [{lhs_map}, {rhs_map}, {head}(d0, d1, d2)>] "
    return _restore(k, _named(k, "batch_matmul", a2, b2, c2, maps), c, groups)


def _broadcast_matmul(k: KernelBuilder, a: KernelValue, b: KernelValue, c: KernelValue) -> KernelValue:
    """A ``linalg.generic`` matmul whose operands broadcast batch dims (size 1, or absent)."""
    nb = c.rank - 2
    dims = [f"d{i}" for i in range(nb + 3)]
    m, n, red = dims[nb], dims[nb + 1], dims[nb + 2]

    def batch_exprs(v: KernelValue) -> list[str]:
        offset = nb - (v.rank - 2)
        return [
            "0" if v.shape[j] == 1 and c.shape[j + offset] != 1 else dims[j + offset]
            for j in range(v.rank - 2)
        ]

    head = f"({', '.join(dims)}) -> "
    maps = [
        head + f"({', '.join([*batch_exprs(a), m, red])})",
        head + f"({', '.join([*batch_exprs(b), red, n])})",
        head + f"({', '.join([*dims[:nb], m, n])})",
    ]
    t = element(c.dtype)
    mul, add = ("arith.mulf", "arith.addf") if is_float(c.dtype) else ("arith.muli", "arith.addi")

    def body(x: list[str]) -> list[str]:
        return [k.scalar(f"{add} {x[2]}, {k.scalar(f'{mul} {x[0]}, {x[1]}', t)}", t)]

    [r] = k.generic([a, b], [c], maps, ["parallel"] * (nb + 2) + ["reduction"], body)
    return r


PACKED_ROWS = 8  # rows of a register block of the packed matmul (transforms/schedules/packed_matmul.py)
# the last r = m mod PACKED_ROWS rows: a block of PACKED_REST_BLOCK (half a row block) when r reaches it, then
# one of the r mod PACKED_REST_BLOCK left; the static row counts of those blocks:
PACKED_REST_BLOCK = PACKED_ROWS // 2
PACKED_REST_ROWS = tuple(range(1, PACKED_REST_BLOCK + 1))
PACKED_PANELS = 2  # panels of its register block
PACKED_ATTR = "relax.packed_matmul"  # marks its linalg.generic ops: "main" or "main-narrow" (row blocks) or "rest<r>" (r rows)
# Work (m * k * n / 4 for the multiply-adds, plus the m * n zeros written and the weight's elements, read on
# every call) from which a packed matmul runs its chunks on all threads; relax-parallelize-kernels' MIN_WORK
# for other kernels.
PACKED_SPLIT_WORK = 1 << 18


def packed_chunk(panels: int) -> int:
    """Panels per parallel chunk of the packed matmul: a divisor of ``panels``, so that every chunk has
    one static size (a partial last chunk compiled each generic to 2-6x the code). The largest power of
    two up to 32 (whole register blocks, and cache blocks of ``schedules/packed_matmul.py`` without a
    remainder) that leaves an even count of at least 4 chunks (2 or 4 threads take equal shares); else the
    largest leaving 2 or more; else the largest divisor up to 16 leaving 2 or more (an odd panel count:
    each chunk peels its last register block); else all ``panels`` (a prime count: one chunk)."""
    powers = [c for c in (32, 16, 8, 4, 2) if panels % c == 0]
    even = [c for c in powers if panels // c >= 4 and panels // c % 2 == 0]
    some = [c for c in powers if panels // c >= 2]
    odd = [c for c in range(16, 1, -1) if panels % c == 0 and panels // c >= 2]
    return (even or some or odd or [panels])[0]


def _packed_2d(
    k: KernelBuilder,
    x: KernelValue,
    w: KernelValue,
    o: KernelValue,
    n: int,
    size: str,
) -> KernelValue:
    """``o`` [m, n] = ``x`` [m, k] @ panels ``w`` [np, k, nr]; ``size`` is ``m`` as an index value.

    The panels are split into chunks of ``packed_chunk`` panels, each computed by ``_packed_columns``; an
    ``scf.forall`` runs them in parts on the module's threads (``KernelBuilder.column_parts``): one part per
    chunk when the call's work reaches ``PACKED_SPLIT_WORK`` (decided at compile time when the weight alone
    does or the row count is static), else one part of every chunk. One loop for every row count and
    register block, so the kernel is outlined once for OpenMP. When ``n`` is not a multiple of ``nr`` the
    chunks write a padded temporary that is copied into ``o``.
    """
    panels, depth, width = (d.value for d in w.shape)  # type: ignore[union-attr]
    cols = panels * width
    padded = n != cols

    def tt(columns: int) -> TensorType:
        return TensorType((None, as_expr(columns)), o.dtype)

    od, o2 = builtin_tensor(tt(n)), builtin_tensor(tt(cols))
    dest = o if o.mlir == od else k.op(f"tensor.cast {o.name} : {o.mlir} to {od}", tt(n))
    target = k.op(f"tensor.empty({size}) : {o2}", tt(cols)) if padded else dest
    blocks = k.typed(f"arith.divui {size}, {k.const(PACKED_ROWS)} : index")
    main = k.typed(f"arith.muli {blocks}, {k.const(PACKED_ROWS)} : index")
    rows = Rows(blocks, main, k.typed(f"arith.subi {size}, {main} : index"))
    chunk = packed_chunk(panels)
    count = panels // chunk
    weight = panels * depth * width
    per_row = cols * depth // 4 + cols
    m = x.shape[0]
    static_rows = m is not None and m.is_const
    if count == 1 or (static_rows and m.value * per_row + weight < PACKED_SPLIT_WORK):
        target = _packed_columns(k, x, w, target, rows)
    else:
        split = None  # always: the rows are static, or the weight alone is work enough
        if not static_rows and weight < PACKED_SPLIT_WORK:  # decided per call
            work = k.typed(f"arith.muli {size}, {k.const(per_row)} : index")
            work = k.typed(f"arith.addi {work}, {k.const(weight)} : index")
            split = k.typed(f"arith.cmpi uge, {work}, {k.const(PACKED_SPLIT_WORK)} : index")
        w_chunk = TensorType((as_expr(chunk), as_expr(depth), as_expr(width)), w.dtype)
        o_chunk = tt(chunk * width)

        def one_chunk(index: str, local: str, part: KernelValue) -> KernelValue:
            first = k.typed(f"affine.apply affine_map<(d0) -> (d0 * {chunk})>({index})")
            wj = k.op(
                f"tensor.extract_slice {w.name}[{first}, 0, 0] [{chunk}, {depth}, {width}] [1, 1, 1] : "
                f"{w.mlir} to {builtin_tensor(w_chunk)}",
                w_chunk,
            )
            at = f"[0, {local}] [{size}, {chunk * width}] [1, 1]"
            oj = k.op(
                f"tensor.extract_slice {part.name}{at} : {part.mlir} to {builtin_tensor(o_chunk)}", o_chunk
            )
            done = _packed_columns(k, x, wj, oj, rows)
            return k.op(
                f"tensor.insert_slice {done.name} into {part.name}{at} : {done.mlir} into {part.mlir}", part
            )

        target = k.column_parts(target, size, count, chunk * width, one_chunk, split)
    if padded:
        view = k.op(f"tensor.extract_slice {target.name}[0, 0] [{size}, {n}] [1, 1] : {o2} to {od}", tt(n))
        target = k.copy(view, dest)
    return k.op(f"tensor.cast {target.name} : {od} to {o.mlir}", o.type) if o.mlir != od else target


@dataclass(frozen=True)
class Rows:
    """The row count ``m`` of a packed matmul as index values: its blocks of ``PACKED_ROWS`` rows, the rows
    they hold and the rest."""

    blocks: str
    main: str
    rest: str


def _packed_columns(
    k: KernelBuilder, x: KernelValue, w: KernelValue, target: KernelValue, rows: Rows
) -> KernelValue:
    """``target`` [m, np * nr] = ``x`` [m, k] @ panels ``w`` [np, k, nr]: ``linalg.generic`` ops on views,
    all with static inner dims whatever ``m`` is: the first ``8 * (m floordiv 8)`` rows as blocks
    [m1, 8, np, nr] (``"main"``), then the last ``r = m mod 8`` rows as a block of 4 rows when r >= 4 and
    one of ``r mod 4`` rows (``"rest<b>"``: ``b`` static rows, all in one register block, so decoding up to
    4 tokens streams the weights once), each chosen by an ``scf.index_switch``. Four remaining-rows ops
    instead of one per ``r``: they were most of the kernel's code (LLVM's time); 5 to 7 rows stream the
    weights twice (the second time from cache, this chunk's panels being just read)."""
    panels, depth, width = (d.value for d in w.shape)  # type: ignore[union-attr]
    cols = panels * width
    t = element(target.dtype)

    def ty(*dims: int | str) -> str:
        return "tensor<" + "".join(f"{d if isinstance(d, int) else '?'}x" for d in dims) + t + ">"

    def op(text: str, *dims: int | str) -> KernelValue:
        return k.op(
            text, TensorType(tuple(as_expr(d) if isinstance(d, int) else None for d in dims), target.dtype)
        )

    o2, x2 = ty("?", cols), ty("?", depth)

    def part(v: str, v_type: str, count: str, columns: int | str) -> KernelValue:
        return op(
            f"tensor.extract_slice {v}[0, 0] [{count}, {columns}] [1, 1] : {v_type} to {ty('?', columns)}",
            "?",
            columns,
        )

    def contract(xv: KernelValue, ov: KernelValue, kind: str) -> KernelValue:
        lead = ov.rank - 2
        dims = [f"d{i}" for i in range(lead + 3)]
        rows_, n1, n0, red = dims[:lead], dims[lead], dims[lead + 1], dims[lead + 2]
        head = f"({', '.join(dims)}) -> "
        maps = [
            head + f"({', '.join([*rows_, red])})",
            head + f"({n1}, {red}, {n0})",
            head + f"({', '.join([*rows_, n1, n0])})",
        ]
        its = ", ".join(['"parallel"'] * (lead + 2) + ['"reduction"'])
        zero = _fill_zero(k, ov)
        a, b, c = k.fresh("a"), k.fresh("a"), k.fresh("a")
        r = KernelValue(k.fresh("r"), ov.type, ov.mlir)
        mul, add = k.fresh("v"), k.fresh("v")
        map_attrs = ", ".join(f"affine_map<{m}>" for m in maps)
        k.emit(
            f"{r.name} = linalg.generic {{indexing_maps = [{map_attrs}], iterator_types = [{its}], "
            f'{PACKED_ATTR} = "{kind}"}} ins({xv.name}, {w.name} : {xv.mlir}, {w.mlir}) '
            f"outs({zero.name} : {zero.mlir}) {{",
            f"^bb0({a}: {t}, {b}: {t}, {c}: {t}):",
            f"  {mul} = arith.mulf {a}, {b} : {t}",
            f"  {add} = arith.addf {c}, {mul} : {t}",
            f"  linalg.yield {add} : {t}",
            f"}} -> {ov.mlir}",
        )
        return r

    # row blocks
    xm = part(x.name, x.mlir, rows.main, depth)
    xm3 = op(
        f"tensor.expand_shape {xm.name} [[0, 1], [2]] output_shape [{rows.blocks}, {PACKED_ROWS}, {depth}] : "
        f"{x2} into {ty('?', PACKED_ROWS, depth)}",
        "?",
        PACKED_ROWS,
        depth,
    )
    om = part(target.name, target.mlir, rows.main, cols)
    om4 = op(
        f"tensor.expand_shape {om.name} [[0, 1], [2, 3]] output_shape [{rows.blocks}, {PACKED_ROWS}, {panels}, "
        f"{width}] : {o2} into {ty('?', PACKED_ROWS, panels, width)}",
        "?",
        PACKED_ROWS,
        panels,
        width,
    )
    rm = contract(xm3, om4, "main")
    rm2 = op(f"tensor.collapse_shape {rm.name} [[0, 1], [2, 3]] : {rm.mlir} into {o2}", "?", cols)
    target = op(
        f"tensor.insert_slice {rm2.name} into {target.name}[0, 0] [{rows.main}, {cols}] [1, 1] : {o2} into {o2}",
        "?",
        cols,
    )
    # remaining rows r: a block of 4 rows when r >= 4, then one of r mod 4 rows (static row counts, each
    # block streaming the weights once)
    half = PACKED_REST_BLOCK
    block = k.typed(f"arith.andi {rows.rest}, {k.const(half)} : index")  # half or 0 rows
    target = _rest_switch(k, x, w, target, block, rows.main, (half,))
    start = k.typed(f"arith.addi {rows.main}, {block} : index")
    tail = k.typed(f"arith.andi {rows.rest}, {k.const(half - 1)} : index")
    return _rest_switch(k, x, w, target, tail, start, PACKED_REST_ROWS[:-1])


def _rest_switch(
    k: KernelBuilder,
    x: KernelValue,
    w: KernelValue,
    target: KernelValue,
    count: str,
    start: str,
    cases: tuple[int, ...],
) -> KernelValue:
    """``target`` with ``count`` rows from ``start`` computed (``_rest_rows``) by an ``scf.index_switch`` with
    one case per row count of ``cases`` (else unchanged). A switch, not an ``scf.if``: One-Shot Bufferize
    copies the chunk's destination around an ``scf.if`` whose else branch yields it."""
    lines = []
    for r in cases:
        body, done = k.capture(lambda r=r: _rest_rows(k, x, target, w, start, r, kind=f"rest{r}"))
        lines += [
            f"case {r} {{",
            *("  " + line for line in body),
            f"  scf.yield {done.name} : {target.mlir}",
            "}",
        ]
    switched = KernelValue(k.fresh("t"), target.type, target.mlir)
    k.emit(
        f"{switched.name} = scf.index_switch {count} -> {target.mlir}",
        *lines,
        "default {",
        f"  scf.yield {target.name} : {target.mlir}",
        "}",
    )
    return switched


def _rest_rows(
    k: KernelBuilder, x: KernelValue, target: KernelValue, w: KernelValue, start: str, r: int, kind: str
) -> KernelValue:
    """``target`` with rows [start, start + r) = ``x`` rows @ panels ``w``: one generic of ``r`` static
    rows (marked ``kind``), whose register block holds every row (the weights stream once)."""
    panels, depth, width = (d.value for d in w.shape)  # type: ignore[union-attr]
    cols = panels * width
    t = element(target.dtype)
    x_r = TensorType((as_expr(r), as_expr(depth)), x.dtype)
    o_r = TensorType((as_expr(r), as_expr(cols)), target.dtype)
    o_r3 = TensorType((as_expr(r), as_expr(panels), as_expr(width)), target.dtype)
    xs = k.op(
        f"tensor.extract_slice {x.name}[{start}, 0] [{r}, {depth}] [1, 1] : {x.mlir} to {builtin_tensor(x_r)}",
        x_r,
    )
    os_ = k.op(
        f"tensor.extract_slice {target.name}[{start}, 0] [{r}, {cols}] [1, 1] : {target.mlir} to "
        f"{builtin_tensor(o_r)}",
        o_r,
    )
    o3 = k.op(
        f"tensor.expand_shape {os_.name} [[0], [1, 2]] output_shape [{r}, {panels}, {width}] : "
        f"{os_.mlir} into {builtin_tensor(o_r3)}",
        o_r3,
    )
    zero = _fill_zero(k, o3)
    res = KernelValue(k.fresh("r"), o3.type, o3.mlir)
    a, b, c, mul, add = (k.fresh(p) for p in "aaavv")
    maps = (
        "affine_map<(d0, d1, d2, d3) -> (d0, d3)>, affine_map<(d0, d1, d2, d3) -> (d1, d3, d2)>, "
        "affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>"
    )
    k.emit(
        f"{res.name} = linalg.generic {{indexing_maps = [{maps}], iterator_types = "
        f'["parallel", "parallel", "parallel", "reduction"], {PACKED_ATTR} = "{kind}"}} '
        f"ins({xs.name}, {w.name} : {xs.mlir}, {w.mlir}) outs({zero.name} : {zero.mlir}) {{",
        f"^bb0({a}: {t}, {b}: {t}, {c}: {t}):",
        f"  {mul} = arith.mulf {a}, {b} : {t}",
        f"  {add} = arith.addf {c}, {mul} : {t}",
        f"  linalg.yield {add} : {t}",
        f"}} -> {o3.mlir}",
    )
    flat = k.op(f"tensor.collapse_shape {res.name} [[0], [1, 2]] : {res.mlir} into {os_.mlir}", o_r)
    return k.op(
        f"tensor.insert_slice {flat.name} into {target.name}[{start}, 0] [{r}, {cols}] [1, 1] : "
        f"{flat.mlir} into {target.mlir}",
        target,
    )

"""The CPU kernels of a convolution (NCHW input, OIHW weight; a 1-D one comes as a unit height): im2col +
``linalg.matmul`` per block of output rows (``im2col_conv``), the direct loop on vectors of output
columns that reads the input in place (``direct_conv``, for grouped, depthwise and few-channel
convolutions: ``direct_fits``), and the register-blocked matmul of a 1x1 convolution on the input in place
(``pointwise_conv``: ``pointwise_fits``). All run in an ``scf.forall`` over images x blocks of output rows.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from relax_mlir.dialects.ops.window import fill_tensor
from relax_mlir.dialects.types import TensorType
from relax_mlir.lowering.kernel import KernelBuilder, KernelValue, builtin_tensor, element
from relax_mlir.lowering.vectors import Registers, target_registers
from relax_mlir.shape_infer.expr import Expr, as_expr


def _padded_rows(
    k: KernelBuilder,
    x: KernelValue,
    n: str,
    r0: str,
    rows_in: Expr,
    pads: Sequence[int],
    stride: int,
    zero: str,
) -> KernelValue:
    """Rows ``r0 * stride`` .. ``+ rows_in`` of image ``n`` of ``x`` [N, C, H, W] after zero padding, as
    [C, rows_in, W + left + right]: a view of ``x`` without padding, else a zero fill and one copy per
    input row that falls inside the block.

    (``tensor.pad`` of the whole batch bufferizes to a ``memref.copy`` into a strided view, which runs
    as a slow generic loop; rows of static width are vectorized by the schedules.)
    """
    c, h, w = x.shape[1:]
    c_s, h_s, w_s = k.sizes(x)[1:]
    top, left, bottom, right = pads
    (rin_s,) = k.mixed([rows_in])
    if not any(pads):
        block = TensorType((c, rows_in, w), x.dtype)
        y0 = k.typed(f"affine.apply affine_map<(d0) -> (d0 * {stride})>({r0})")
        return k.op(
            f"tensor.extract_slice {x.name}[{n}, 0, {y0}, 0] [1, {c_s}, {rin_s}, {w_s}] [1, 1, 1, 1] : "
            f"{x.mlir} to {builtin_tensor(block)}",
            block,
        )
    image = TensorType((c, h, w), x.dtype)
    x_n = k.op(
        f"tensor.extract_slice {x.name}[{n}, 0, 0, 0] [1, {c_s}, {h_s}, {w_s}] [1, 1, 1, 1] : "
        f"{x.mlir} to {builtin_tensor(image)}",
        image,
    )
    wp = w + left + right  # type: ignore[operator]
    padded = k.fill(zero, k.empty((c, rows_in, wp), x.dtype))
    line = TensorType((as_expr(1), as_expr(1), w), x.dtype)
    # block rows [lo, hi) hold input rows; the others are padding
    rin, h_i = k.index(rows_in), k.dim(x, 2)
    lo = k.typed(f"affine.max affine_map<(d0) -> (0, {top} - d0 * {stride})>({r0})")
    hi = k.typed(
        f"affine.min affine_map<(d0)[s0, s1] -> (s1, s0 + {top} - d0 * {stride})>({r0})[{h_i}, {rin}]"
    )
    count = k.typed(f"affine.max affine_map<(d0, d1) -> (0, d1 - d0)>({lo}, {hi})")

    def channel(ci: str, padded: KernelValue) -> KernelValue:
        def row(j: str, padded: KernelValue) -> KernelValue:
            y = k.typed(
                f"affine.apply affine_map<(d0, d1, d2) -> (d0 * {stride} + d1 + d2 - {top})>({r0}, {lo}, {j})"
            )
            src = k.op(
                f"tensor.extract_slice {x_n.name}[{ci}, {y}, 0] [1, 1, {w_s}] [1, 1, 1] : "
                f"{x_n.mlir} to {builtin_tensor(line)}",
                line,
            )
            i = k.typed(f"affine.apply affine_map<(d0, d1) -> (d0 + d1)>({lo}, {j})")
            where = f"[{ci}, {i}, {left}] [1, 1, {w_s}] [1, 1, 1]"
            part = k.op(f"tensor.extract_slice {padded.name}{where} : {padded.mlir} to {src.mlir}", line)
            copied = k.copy(src, part)
            return k.op(
                f"tensor.insert_slice {copied.name} into {padded.name}{where} : {src.mlir} into {padded.mlir}",
                padded,
            )

        return k.loop(count, padded, row)

    return k.loop(k.dim(x, 1), padded, channel)


def _write(k: KernelBuilder, value: str, vector: str, dest: KernelValue, at: Sequence[str]) -> KernelValue:
    """``dest`` with ``value`` (of type ``vector``) written in bounds at the indices ``at``."""
    return k.op(
        f"vector.transfer_write {value}, {dest.name}[{', '.join(at)}] {{in_bounds = [true]}} : {vector}, "
        f"{dest.mlir}",
        dest,
    )


def _forall(
    k: KernelBuilder,
    uppers: Sequence[str],
    init: KernelValue,
    body: Callable[[list[str], KernelValue], tuple[KernelValue, str]],
    marker: str | None = None,
) -> KernelValue:
    """``scf.forall`` over ``uppers`` (one loop dim each) of independent iterations sharing ``init``.

    ``body(ivs, shared)`` emits one iteration and returns its part and where it goes in ``shared``
    (``[offsets] [sizes] [strides]``), written back with ``tensor.parallel_insert_slice``, which
    bufferizes in place. (An ``scf.for`` would need a ``tensor.insert_slice`` that the schedules'
    vectorization turns into a whole-part vector read and write, unrolled at compile time.)
    ``relax-lower-parallel`` runs the iterations on OpenMP threads when kernels are parallel (with a
    dynamic schedule for several dims, so that a preempted thread delays only its current iteration).
    ``marker`` names a unit attribute for the loop (for a schedule to find it).
    """
    ivs, shared = [k.fresh("iv") for _ in uppers], KernelValue(k.fresh("o"), init.type, init.mlir)
    lines, (part, where) = k.capture(lambda: body(ivs, shared))
    result = KernelValue(k.fresh("t"), init.type, init.mlir)
    k.emit(
        f"{result.name} = scf.forall ({', '.join(ivs)}) in ({', '.join(uppers)}) "
        f"shared_outs({shared.name} = {init.name}) "
        f"-> ({init.mlir}) {{",
        *("  " + line for line in lines),
        "  scf.forall.in_parallel {",
        f"    tensor.parallel_insert_slice {part.name} into {shared.name}{where} : {part.mlir} into {init.mlir}",
        "  }",
        "}" if marker is None else f"}} {{{marker}}}",
    )
    return result


MIN_BLOCK_COLUMNS = 256  # output pixels per row block of a convolution (the matmul's n), at least ...
MIN_SPLIT_COLUMNS = 32  # ... or, for a small image, at least one register tile's width, in two or more blocks
MIN_SPLIT_WORK = 1 << 18  # multiply-adds per image below which it stays one block (a fork costs more)
MAX_BLOCK_ROWS = 1 << 12  # row counts tried per block (an output 2**31 rows high must not try them all)


def _block_rows(oh: Expr | None, ow: Expr | None, work: int) -> Expr:
    """Output rows per block of an im2col convolution: the fewest that divide ``oh`` and give at least
    ``MIN_BLOCK_COLUMNS`` pixels, so that blocks run on several threads and their columns stay in cache;
    for a smaller image the most that still split it, down to ``MIN_SPLIT_COLUMNS`` pixels (so that batch
    1 uses several threads), of at most ``MAX_BLOCK_ROWS``. All of ``oh`` for an image of less than
    ``MIN_SPLIT_WORK`` multiply-adds (``work``, 0 if unknown) or when a dim is dynamic (one dynamic: the
    whole image; both: one row, as ``memref.expand_shape`` of one dim into two dynamic ones aborts MLIR 22)."""
    static = [d is not None and d.is_const for d in (oh, ow)]
    if not any(static):
        return as_expr(1)
    if not all(static) or work < MIN_SPLIT_WORK:
        return oh  # type: ignore[return-value]
    h, w = oh.value, ow.value  # type: ignore[union-attr]
    divisors = [r for r in range(1, min(h, MAX_BLOCK_ROWS + 1)) if h % r == 0]
    rows = next((r for r in divisors if r * w >= MIN_BLOCK_COLUMNS), None)
    if rows is None:
        rows = next((r for r in reversed(divisors) if r * w >= MIN_SPLIT_COLUMNS), max(h, 1))
    return as_expr(rows)


def im2col_conv(
    k: KernelBuilder,
    x: KernelValue,
    w: KernelValue,
    out: KernelValue,
    strides: Sequence[int],
    dilation: Sequence[int],
    pads: Sequence[int],
    zero: str,
) -> KernelValue:
    """``out = conv(x, w)`` as im2col + one matmul per block of output rows: W [F, C*KH*KW] x cols
    [C*KH*KW, rows*OW], in an ``scf.forall`` over images x blocks (``_block_rows``), so that one image
    runs on several threads.

    Each block pads the input rows it reads on its own (``_padded_rows``), zero-fills its part of ``out``
    and fills its ``cols`` [C, KH, KW, rows, OW] row by row, one row copy per kernel tap, so all stay in
    cache; the schedules vectorize the copies when OW is static, and strided rows are one contiguous
    vector read and a shuffle. A 1x1 stride-1 convolution without padding multiplies the input rows
    themselves. With every dim but the batch static the contraction is ``register_matmul`` (measured on
    AMD Zen 4, loaded: 0.97-1.0x the time of the scheduled matmul for 32-128 channels of 3x3, 0.9-1.0x for
    strided 1x1; the loop is marked ``VECTOR_CONV_ATTR`` for the epilogue), else a ``linalg.matmul`` that
    the matmul schedule tiles and vectorizes.
    """
    c, f = x.shape[1], out.shape[1]
    kh, kw = w.shape[2:]
    oh, ow = out.shape[2:]
    assert kh is not None and kw is not None and kh.is_const and kw.is_const
    static = all(d is not None and d.is_const for d in (c, f, oh, ow))
    work = c.value * f.value * kh.value * kw.value * oh.value * ow.value if static else 0  # type: ignore[union-attr]
    rows = _block_rows(oh, ow, work)
    whole = rows == oh
    top, _, bottom, _ = pads
    if whole:  # also when oh is dynamic: rows may then be 0
        rows_in = x.shape[2] + top + bottom  # type: ignore[operator]
    else:
        rows_in = (rows - 1) * strides[0] + (kh.value - 1) * dilation[0] + 1
    block = TensorType((as_expr(1), f, rows, ow), out.dtype)  # not rank-reduced: epilogues fuse into it
    line = TensorType((as_expr(1), as_expr(1), ow), x.dtype)
    f_s, oh_s, ow_s = k.sizes(out)[1:]
    rows_s = oh_s if whole else str(rows.value)
    pointwise = kh == 1 and kw == 1 and list(strides) == [1, 1] and not any(pads)
    registers = static and x.dtype in DIRECT_DTYPES  # register_matmul, else linalg.matmul (the schedule)
    w2 = k.collapse(w, [[0], [1, 2, 3]])

    # A strided row of static width: one contiguous vector read and a shuffle picking every stride-th
    # element (a strided transfer_read would become one scalar load per element).
    span = strides[1] * (ow.value - 1) + 1 if ow is not None and ow.is_const else 0
    deinterleave = strides[1] > 1 and 0 < span <= 256
    c0, pad = k.const(0), k.constant(0.0, x.dtype)

    def strided_row(
        x_b: KernelValue, ci: str, y: str, x0: int, at: Sequence[str], cols: KernelValue
    ) -> KernelValue:
        t = element(x.dtype)
        v = k.typed(
            f"vector.transfer_read {x_b.name}[{ci}, {y}, {k.const(x0)}], {pad} {{in_bounds = [true]}} : "
            f"{x_b.mlir}, vector<{span}x{t}>"
        )
        mask = ", ".join(str(strides[1] * e) for e in range(ow.value))  # type: ignore[union-attr]
        picked = k.typed(f"vector.shuffle {v}, {v} [{mask}] : vector<{span}x{t}>, vector<{span}x{t}>")
        return _write(k, picked, f"vector<{ow.value}x{t}>", cols, at)  # type: ignore[union-attr]

    def fill_row(x_b: KernelValue, ci: str, r: str, cols: KernelValue) -> KernelValue:
        """Row ``r`` of every tap of channel ``ci`` in ``cols``, from the block's padded rows ``x_b``."""
        for i in range(kh.value):  # type: ignore[union-attr]
            y = k.typed(f"affine.apply affine_map<(d0) -> (d0 * {strides[0]} + {i * dilation[0]})>({r})")
            for j in range(kw.value):  # type: ignore[union-attr]
                if deinterleave:
                    cols = strided_row(x_b, ci, y, j * dilation[1], [ci, k.const(i), k.const(j), r, c0], cols)
                    continue
                src = k.op(
                    f"tensor.extract_slice {x_b.name}[{ci}, {y}, {j * dilation[1]}] [1, 1, {ow_s}] "
                    f"[1, 1, {strides[1]}] : {x_b.mlir} to {builtin_tensor(line)}",
                    line,
                )
                where = f"[{ci}, {i}, {j}, {r}, 0] [1, 1, 1, 1, {ow_s}] [1, 1, 1, 1, 1]"
                part = k.op(f"tensor.extract_slice {cols.name}{where} : {cols.mlir} to {src.mlir}", line)
                copied = k.copy(src, part)
                cols = k.op(
                    f"tensor.insert_slice {copied.name} into {cols.name}{where} : {src.mlir} into {cols.mlir}",
                    cols,
                )
        return cols

    blocks = k.dim(out, 2) if rows == 1 and not (oh is not None and oh.is_const) else None
    if blocks is None:
        blocks = k.const(1 if whole else oh.value // rows.value)  # type: ignore[union-attr]

    def one_block(ivs: list[str], shared: KernelValue) -> tuple[KernelValue, str]:
        n, b = ivs
        r0 = c0 if whole else k.typed(f"affine.apply affine_map<(d0) -> (d0 * {rows_s})>({b})")
        x_b = _padded_rows(k, x, n, r0, rows_in, pads, strides[0], zero)
        if pointwise:  # the input rows are the columns [C, rows*OW]
            cols2 = k.collapse(x_b, [[0], [1, 2]])
        else:
            rows_count = k.index(rows) if not whole else k.dim(out, 2)

            def channel(ci: str, cols: KernelValue) -> KernelValue:
                return k.loop(rows_count, cols, lambda r, cols: fill_row(x_b, ci, r, cols))

            cols = k.loop(k.dim(x, 1), k.empty((c, kh, kw, rows, ow), x.dtype), channel)
            cols2 = k.collapse(cols, [[0, 1, 2], [3, 4]])
        where = f"[{n}, 0, {r0}, 0] [1, {f_s}, {rows_s}, {ow_s}] [1, 1, 1, 1]"
        o_b = k.op(
            f"tensor.extract_slice {shared.name}{where} : {shared.mlir} to {builtin_tensor(block)}", block
        )
        if registers:
            r2 = register_matmul(k, w2, cols2, k.collapse(o_b, [[0, 1], [2, 3]]))
        else:
            o2 = k.collapse(fill_tensor(k, zero, o_b), [[0, 1], [2, 3]])
            r2 = k.op(
                f"linalg.matmul ins({w2.name}, {cols2.name} : {w2.mlir}, {cols2.mlir}) "
                f"outs({o2.name} : {o2.mlir}) -> {o2.mlir}",
                o2,
            )
        sizes = [
            None if d is not None and d.is_const else v
            for d, v in zip(block.shape, ("1", f_s, rows_s, ow_s), strict=True)
        ]
        return k.expand(r2, [[0, 1], [2, 3]], block.shape, sizes), where

    return _forall(k, [k.dim(out, 0), blocks], out, one_block, VECTOR_CONV_ATTR if registers else None)


DIRECT_DTYPES = {"f32": 32, "f64": 64}  # element types of the direct and pointwise convolutions: their bits
MAX_UNROLLED_TAPS = 32  # taps per output channel unrolled (more: a loop over the group's input channels)
ACCUMULATORS = 8  # vectors of outputs accumulated at once: output channels x vectors of columns
MAX_CHANNEL_BLOCK = 4  # output channels that share each input read
# plain convolutions with at most this many taps per output (32 channels of 3x3) run direct: measured
# (bench_conv.py, AMD Zen 4, loaded) 0.8-0.95x the time of im2col + matmul for 8-32 channels; 1x1 ones
# are not direct (up to 1.8x slower) but pointwise_conv; 64 channels of 3x3 direct: as fast as im2col
SMALL_CONV_TAPS = 288
MAX_ROW_FMAS = 640  # FMAs unrolled per output row (8192 took 23 s to compile); more: im2col or a named op
# on the loop of a direct convolution: the conv schedules vectorize the epilogue fused into it
VECTOR_CONV_ATTR = "relax.vector_conv"


def _registers(k: KernelBuilder) -> Registers:
    """The vector registers of the CPU the kernel is for (``convert-relax-to-linalg{target-features}``)."""
    return target_registers(k.choices.get("target_features", "host"))


def _lanes(k: KernelBuilder, dtype: str) -> int:
    """Elements of ``dtype`` (one of ``DIRECT_DTYPES``) per vector register of the kernel's CPU."""
    return _registers(k).lanes(DIRECT_DTYPES[dtype])


def direct_fits(k: KernelBuilder, x: KernelValue, w: KernelValue, out: KernelValue, groups: int) -> bool:
    """Whether ``direct_conv`` takes this convolution: f32/f64, every dim static but the batch, at most
    ``MAX_ROW_FMAS`` unrolled per output row; grouped, or with few input channels (at most
    ``SMALL_CONV_TAPS`` taps per output, not 1x1), where it was faster than im2col + matmul."""
    dims = (*x.shape[1:], *w.shape, *out.shape[1:])
    if x.dtype not in DIRECT_DTYPES or not all(d is not None and d.is_const for d in dims):
        return False
    f, cg, kh, kw = (d.value for d in w.shape)  # type: ignore[union-attr]
    if not (groups > 1 or (kh * kw > 1 and cg * kh * kw <= SMALL_CONV_TAPS)):
        return False
    taps = cg * kh * kw if cg * kh * kw <= MAX_UNROLLED_TAPS else kh * kw
    chunks = -(-out.shape[3].value // _lanes(k, x.dtype))  # type: ignore[union-attr]
    return chunks * _channel_block(f // groups, chunks) * taps <= MAX_ROW_FMAS


def _channel_block(per_group: int, chunks: int) -> int:
    """Output channels of one group computed together: the most that divide the group's, up to
    ``MAX_CHANNEL_BLOCK``, or for rows of fewer than two vectors (``chunks``) as many as fill the
    ``ACCUMULATORS`` (one accumulator each cannot hide the FMA latency)."""
    most = max(MAX_CHANNEL_BLOCK, ACCUMULATORS // max(chunks, 1))
    return max(q for q in range(1, most + 1) if per_group % q == 0)


def _region(
    k: KernelBuilder, head: str, types: list[str], inits: list[str], body: Callable[[], list[str]]
) -> list[str]:
    """``scf.for`` (``head`` with its iter_args) or ``scf.if`` (``head`` is the condition; the else branch
    yields ``inits``) whose results are the vectors ``body`` yields."""
    lines, updated = k.capture(body)
    names, ts = [k.fresh("v") for _ in types], ", ".join(types)
    is_if = not head.startswith("scf.for")
    k.emit(
        f"{', '.join(names)} = {'scf.if ' if is_if else ''}{head} -> ({ts}) {{",
        *("  " + line for line in lines),
        f"  scf.yield {', '.join(updated)} : {ts}",
        *(["} else {", f"  scf.yield {', '.join(inits)} : {ts}"] if is_if else []),
        "}",
    )
    return names


def direct_conv(
    k: KernelBuilder,
    x: KernelValue,
    w: KernelValue,
    out: KernelValue,
    strides: Sequence[int],
    dilation: Sequence[int],
    pads: Sequence[int],
    groups: int,
) -> KernelValue:
    """``out = conv(x, w)`` as a direct loop on vectors of output columns, reading ``x`` in place (no
    padded copy, no im2col columns): per block of output channels (up to ``MAX_CHANNEL_BLOCK`` of one
    group) and output row, ``ACCUMULATORS`` vectors of outputs accumulate one FMA per output channel, input
    channel of the group and tap, of the tap's input row segment (read once for the channel block) and
    the tap's weight broadcast. Column positions are static: a segment is one contiguous read (strided:
    a read and a shuffle), at the left and right borders shuffled next to zeros; a tap row in the top or
    bottom padding is skipped (``scf.if``, only for tap rows that can fall there). Up to
    ``MAX_UNROLLED_TAPS`` taps per output channel are unrolled, more loop over the group's channels; a
    depthwise convolution (one output channel per group) broadcasts its weights once per channel.

    Same parallel structure as ``_im2col_conv``: an ``scf.forall`` over images x blocks of output rows,
    each writing its part of ``out``, into which ``relax-fuse-kernels`` moves the bias/ReLU/residual
    epilogue (vectorized by the ``conv-vector`` schedule, which finds the loop by ``VECTOR_CONV_ATTR``).
    (MLIR 22's named NCHW depthwise and grouped convolutions stay scalar loops.)
    """
    t = element(x.dtype)
    lanes = _lanes(k, x.dtype)
    h, wd = (d.value for d in x.shape[2:])  # type: ignore[union-attr]
    f, cg, kh, kw = (d.value for d in w.shape)  # type: ignore[union-attr]
    oh, ow = (d.value for d in out.shape[2:])  # type: ignore[union-attr]
    per_group = f // groups
    fb = _channel_block(per_group, -(-ow // lanes))
    rows = _block_rows(out.shape[2], out.shape[3], f * cg * kh * kw * oh * ow).value  # type: ignore[union-attr]
    top, left = pads[0], pads[1]
    (sy, sx), (dy, dx) = strides, dilation
    block = TensorType((as_expr(1), as_expr(f), as_expr(rows), as_expr(ow)), out.dtype)
    c0, c_h = k.const(0), k.const(h)
    chunks = [(s, min(lanes, ow - s)) for s in range(0, ow, lanes)]
    per_block = max(1, ACCUMULATORS // fb)
    column_blocks = [chunks[i : i + per_block] for i in range(0, len(chunks), per_block)]
    unrolled = cg * kh * kw <= MAX_UNROLLED_TAPS
    held = unrolled and fb == 1
    # tap rows that some output row reads in the top or bottom padding
    guarded = {i for i in range(kh) if i * dy < top or (oh - 1) * sy + i * dy - top > h - 1}
    pad = k.constant(0.0, x.dtype)

    def vec(n: int) -> str:
        return f"vector<{n}x{t}>"

    def segment(n_img: str, c: str, y: str, start: int, n: int, j: int) -> str | None:
        """Input columns of tap column ``j`` for output columns ``start`` .. ``start + n`` of row ``y``,
        zeros where they fall in the padding; None when all do. One read of a multiple of ``n`` elements
        (moved inside the row at the borders) and at most one shuffle, which picks every stride-th element
        and the zeros (odd-sized reads and shuffles of two types lower to one instruction per element)."""
        base = start * sx + j * dx - left
        valid = [e for e in range(n) if 0 <= base + sx * e < wd]
        if not valid:
            return None
        span = sx * (n - 1) + 1
        size = next((m for m in (-(-span // n) * n, span) if m <= wd), None)
        if size is None:  # a row narrower than the segment: read the valid part only
            size, at = sx * (len(valid) - 1) + 1, base + sx * valid[0]
        else:
            at = min(max(base, 0), wd - size)
        v = k.typed(
            f"vector.transfer_read {x.name}[{n_img}, {c}, {y}, {k.const(at)}], {pad} "
            f"{{in_bounds = [true]}} : {x.mlir}, {vec(size)}"
        )
        picks = [base + sx * e - at if e in valid else size for e in range(n)]
        if picks == list(range(size)):
            return v
        other = v if len(valid) == n else k.typed(f"arith.constant dense<0.0> : {vec(size)}")
        return k.typed(
            f"vector.shuffle {v}, {other} [{', '.join(map(str, picks))}] : {vec(size)}, {vec(size)}"
        )

    def one_block(ivs: list[str], shared: KernelValue) -> tuple[KernelValue, str]:
        n_img, b = ivs
        r0 = k.typed(f"affine.apply affine_map<(d0) -> (d0 * {rows})>({b})")
        where = f"[{n_img}, 0, {r0}, 0] [1, {f}, {rows}, {ow}] [1, 1, 1, 1]"
        o_b = k.op(
            f"tensor.extract_slice {shared.name}{where} : {shared.mlir} to {builtin_tensor(block)}", block
        )

        def channels(f0: str, part: KernelValue, fb: int = fb) -> KernelValue:
            fos = [f0] + [k.typed(f"affine.apply affine_map<(d0) -> (d0 + {q})>({f0})") for q in range(1, fb)]
            c_first = k.typed(f"affine.apply affine_map<(d0) -> ((d0 floordiv {per_group}) * {cg})>({f0})")
            held_w: dict[tuple[int, int, int], str] = {}  # (channel of the group, tap, lanes) -> weights

            def weight(fo: str, ci: str, i: int, j: int, n: int) -> str:
                s = k.typed(f"tensor.extract {w.name}[{fo}, {ci}, {k.const(i)}, {k.const(j)}] : {w.mlir}")
                return k.typed(f"vector.broadcast {s} : {t} to {vec(n)}")

            if held:  # broadcast each weight once per output channel, before the row loop
                for ci in range(cg):
                    for tap in range(kh * kw):
                        for n in sorted({n for _, n in chunks}):
                            held_w[ci, tap, n] = weight(f0, k.const(ci), tap // kw, tap % kw, n)

            def taps(
                c: str, ci: int | str, r: str, cols: list[tuple[int, int]], accs: list[str]
            ) -> list[str]:
                """``accs`` ([output channel][vector of columns]) plus the taps of input channel ``c`` (``ci``
                of the group) for the columns ``cols`` of output row ``r``."""
                for i in range(kh):
                    y = k.typed(f"affine.apply affine_map<(d0) -> (d0 * {sy} + {i * dy - top})>({r})")

                    def tap_row(i: int = i, y: str = y, accs: list[str] = accs) -> list[str]:
                        accs = list(accs)
                        for a, (start, n) in enumerate(cols):
                            for j in range(kw):
                                v = segment(n_img, c, y, start, n, j)
                                for q in range(fb if v is not None else 0):
                                    if held:
                                        wv = held_w[ci, i * kw + j, n]  # type: ignore[index]
                                    else:
                                        ci_s = k.const(ci) if isinstance(ci, int) else ci
                                        wv = weight(fos[q], ci_s, i, j, n)
                                    at = q * len(cols) + a
                                    accs[at] = k.typed(f"vector.fma {v}, {wv}, {accs[at]} : {vec(n)}")
                        return accs

                    if i not in guarded:
                        accs = tap_row()
                        continue
                    lo = k.typed(f"arith.cmpi sge, {y}, {c0} : index")
                    hi = k.typed(f"arith.cmpi slt, {y}, {c_h} : index")
                    inside = k.typed(f"arith.andi {lo}, {hi} : i1")
                    accs = _region(k, inside, [vec(n) for _ in range(fb) for _, n in cols], accs, tap_row)
                return accs

            def row(r_local: str, part: KernelValue) -> KernelValue:
                r = k.typed(f"affine.apply affine_map<(d0, d1) -> (d0 + d1)>({r0}, {r_local})")
                for cols in column_blocks:
                    types = [vec(n) for _ in range(fb) for _, n in cols]
                    accs = [k.typed(f"arith.constant dense<0.0> : {ty}") for ty in types]
                    if unrolled:
                        for ci in range(cg):
                            c = k.typed(f"affine.apply affine_map<(d0) -> (d0 + {ci})>({c_first})")
                            accs = taps(c, ci, r, cols, accs)
                    else:
                        ci, carried = k.fresh("iv"), [k.fresh("acc") for _ in types]

                        def body(ci: str = ci, carried: list[str] = carried, cols=cols) -> list[str]:
                            c = k.typed(f"affine.apply affine_map<(d0, d1) -> (d0 + d1)>({c_first}, {ci})")
                            return taps(c, ci, r, cols, carried)

                        inits = ", ".join(f"{a} = {v}" for a, v in zip(carried, accs, strict=True))
                        head = f"scf.for {ci} = {c0} to {k.const(cg)} step {k.const(1)} iter_args({inits})"
                        accs = _region(k, head, types, accs, body)
                    for q in range(fb):
                        for a, (start, n) in enumerate(cols):
                            at = [c0, fos[q], r_local, k.const(start)]
                            part = _write(k, accs[q * len(cols) + a], vec(n), part, at)
                return part

            return k.loop(k.const(rows), part, row)

        return k.loop(k.const(f), o_b, channels, step=fb), where

    return _forall(k, [k.dim(out, 0), k.const(oh // rows)], out, one_block, VECTOR_CONV_ATTR)


POINTWISE_VECTORS = 2  # vectors of pixels of a 1x1 convolution's register tile, by ``pointwise_channels``


def pointwise_channels(registers: Registers) -> int:
    """Output channels of a 1x1 convolution's register tile: a quarter of the registers, so that with
    ``POINTWISE_VECTORS`` vectors each half of them accumulate (the matmul schedule's 8 x 32 tile on
    AVX-512, 4 x 16 on AVX2: more would spill)."""
    return max(1, registers.count // 4)


def pointwise_fits(
    x: KernelValue, w: KernelValue, out: KernelValue, strides: Sequence[int], pads: Sequence[int], groups: int
) -> bool:
    """Whether ``pointwise_conv`` takes this convolution: 1x1, stride 1, no padding, one group, f32/f64,
    every dim static but the batch."""
    dims = (*x.shape[1:], *w.shape, *out.shape[1:])
    if x.dtype not in DIRECT_DTYPES or not all(d is not None and d.is_const for d in dims):
        return False
    kh, kw = (d.value for d in w.shape[2:])  # type: ignore[union-attr]
    return groups == 1 and kh == kw == 1 and list(strides) == [1, 1] and not any(pads)


def register_matmul(k: KernelBuilder, w2: KernelValue, x2: KernelValue, o2: KernelValue) -> KernelValue:
    """``o2 = w2 @ x2`` (W [F, C] x X [C, P] into [F, P], all static; ``o2``'s contents are not read),
    register-blocked as the matmul schedule's tiles are: ``pointwise_channels`` output channels x
    ``POINTWISE_VECTORS`` vectors of pixels accumulate in registers over the C input channels (one vector
    read per channel and vector of pixels, one weight broadcast per channel and output channel) and are
    written once: no zero fill, no accumulator reads. The last output channels (F mod
    ``pointwise_channels``) take a tile of fewer rows, the last pixels vectors of the lanes left."""
    t = element(x2.dtype)
    lanes = _lanes(k, x2.dtype)
    f, c = (d.value for d in w2.shape)  # type: ignore[union-attr]
    pixels = x2.shape[1].value  # type: ignore[union-attr]
    fb = min(f, pointwise_channels(_registers(k)))
    width = POINTWISE_VECTORS * lanes
    full = pixels // width * width
    tail = [(s, min(lanes, pixels - s)) for s in range(full, pixels, lanes)]
    pad = k.constant(0.0, x2.dtype)

    def vec(n: int) -> str:
        return f"vector<{n}x{t}>"

    def channels(f0: str, part: KernelValue, fb: int = fb) -> KernelValue:
        fos = [f0] + [k.typed(f"affine.apply affine_map<(d0) -> (d0 + {q})>({f0})") for q in range(1, fb)]

        def tile(p0: str, cols: list[tuple[int, int]], part: KernelValue) -> KernelValue:
            """Output channels ``fos`` x pixels ``p0 + start`` .. ``+ n`` for each (start, n) of ``cols``."""
            ps = [k.typed(f"affine.apply affine_map<(d0) -> (d0 + {s})>({p0})") for s, _ in cols]
            types = [vec(n) for _ in range(fb) for _, n in cols]
            accs = [k.typed(f"arith.constant dense<0.0> : {ty}") for ty in types]

            def channel(ci: str, accs: list[str]) -> list[str]:
                vs = [
                    k.typed(
                        f"vector.transfer_read {x2.name}[{ci}, {p}], {pad} {{in_bounds = [true]}} : "
                        f"{x2.mlir}, {vec(n)}"
                    )
                    for p, (_, n) in zip(ps, cols, strict=True)
                ]
                accs = list(accs)
                for q in range(fb):
                    s = k.typed(f"tensor.extract {w2.name}[{fos[q]}, {ci}] : {w2.mlir}")
                    for a, (v, (_, n)) in enumerate(zip(vs, cols, strict=True)):
                        wv = k.typed(f"vector.broadcast {s} : {t} to {vec(n)}")
                        at = q * len(cols) + a
                        accs[at] = k.typed(f"vector.fma {v}, {wv}, {accs[at]} : {vec(n)}")
                return accs

            if c <= MAX_UNROLLED_TAPS:
                for ci in range(c):
                    accs = channel(k.const(ci), accs)
            else:
                ci, carried = k.fresh("iv"), [k.fresh("acc") for _ in types]
                inits = ", ".join(f"{a} = {v}" for a, v in zip(carried, accs, strict=True))
                head = f"scf.for {ci} = {k.const(0)} to {k.const(c)} step {k.const(1)} iter_args({inits})"
                accs = _region(k, head, types, accs, lambda: channel(ci, carried))
            for q in range(fb):
                for a, (p, (_, n)) in enumerate(zip(ps, cols, strict=True)):
                    part = _write(k, accs[q * len(cols) + a], vec(n), part, [fos[q], p])
            return part

        body = [(s, lanes) for s in range(0, width, lanes)]
        if full:
            part = k.loop(k.const(full), part, lambda p0, part: tile(p0, body, part), step=width)
        if tail:
            part = tile(k.const(0), tail, part)
        return part

    r2 = k.loop(k.const(f - f % fb), o2, channels, step=fb)
    if f % fb:  # the last output channels: a tile of fewer rows
        r2 = channels(k.const(f - f % fb), r2, f % fb)
    return r2


def pointwise_conv(k: KernelBuilder, x: KernelValue, w: KernelValue, out: KernelValue) -> KernelValue:
    """``out = conv(x, w)`` for a 1x1 convolution (``pointwise_fits``): per image, the matmul W [F, C] x
    X [C, H*W] on the input in place (``register_matmul``) over blocks of output rows (contiguous at
    stride 1, so a row's end leaves no remainder).

    Same parallel structure as ``direct_conv`` (an ``scf.forall`` over images x blocks of output rows,
    ``_block_rows``, marked ``VECTOR_CONV_ATTR``), into which ``relax-fuse-kernels`` moves the epilogue.
    """
    c, h, wd = (d.value for d in x.shape[1:])  # type: ignore[union-attr]
    f = w.shape[0].value  # type: ignore[union-attr]
    rows = _block_rows(out.shape[2], out.shape[3], f * c * h * wd).value  # type: ignore[union-attr]
    block = TensorType((as_expr(1), as_expr(f), as_expr(rows), as_expr(wd)), out.dtype)
    x_block = TensorType((as_expr(c), as_expr(rows), as_expr(wd)), x.dtype)
    w2 = k.collapse(w, [[0], [1, 2, 3]])

    def one_block(ivs: list[str], shared: KernelValue) -> tuple[KernelValue, str]:
        n_img, b = ivs
        r0 = k.typed(f"affine.apply affine_map<(d0) -> (d0 * {rows})>({b})")
        x_b = k.op(
            f"tensor.extract_slice {x.name}[{n_img}, 0, {r0}, 0] [1, {c}, {rows}, {wd}] [1, 1, 1, 1] : "
            f"{x.mlir} to {builtin_tensor(x_block)}",
            x_block,
        )
        where = f"[{n_img}, 0, {r0}, 0] [1, {f}, {rows}, {wd}] [1, 1, 1, 1]"
        o_b = k.op(
            f"tensor.extract_slice {shared.name}{where} : {shared.mlir} to {builtin_tensor(block)}", block
        )
        r2 = register_matmul(k, w2, k.collapse(x_b, [[0], [1, 2]]), k.collapse(o_b, [[0, 1], [2, 3]]))
        return k.expand(r2, [[0, 1], [2, 3]], block.shape), where

    return _forall(k, [k.dim(out, 0), k.const(h // rows)], out, one_block, VECTOR_CONV_ATTR)


MIN_TILE_PIXELS = 8  # output pixels per tile of ``packed_conv``: accumulators (one vector of channels each)
MAX_UNROLLED_TILES = 4  # tiles inside a row unrolled (more: a loop; 2 as a loop: CNN 32ch 3% slower)


def transposed(k: KernelBuilder, rows: Sequence[str], t: str) -> list[str]:
    """The transpose of the square matrix whose rows are the ``len(rows)`` vectors ``rows`` (a power of
    two, one element each per row): log2(n) stages of two-source ``vector.shuffle`` ops, each swapping one
    bit of the row index with the same bit of the column index (one instruction per shuffle on AVX-512 and
    AVX2, which have two-source permutes)."""
    n = len(rows)
    out, vt, b = list(rows), f"vector<{n}x{t}>", n // 2
    while b:
        low = ", ".join(str(c if not c & b else n + c - b) for c in range(n))
        high = ", ".join(str(c + b if not c & b else n + c) for c in range(n))
        for i in (i for i in range(n) if not i & b):
            top, bottom = out[i], out[i + b]
            out[i] = k.typed(f"vector.shuffle {top}, {bottom} [{low}] : {vt}, {vt}")
            out[i + b] = k.typed(f"vector.shuffle {top}, {bottom} [{high}] : {vt}, {vt}")
        b //= 2
    return out


def write_transposed(
    k: KernelBuilder,
    part: KernelValue,
    pixels: Sequence[str],
    lanes: int,
    n: int,
    at: tuple[str, str, str],
    zero: str,
) -> KernelValue:
    """Write ``pixels`` (at most ``lanes`` vectors of ``lanes`` output channels, one per pixel) into ``part``
    [1, F, rows, W] at ``at`` = (first channel, row, column) as ``n`` columns of each of the channels: the
    square, padded with ``zero`` vectors, transposed in registers (``transposed``)."""
    t = element(part.dtype)
    f0, row, col = at
    square = transposed(k, [*pixels, *[zero] * (lanes - len(pixels))], t)
    for q, v in enumerate(square):
        if n < lanes:
            v = k.typed(
                f"vector.extract_strided_slice {v} {{offsets = [0], sizes = [{n}], strides = [1]}} "
                f": vector<{lanes}x{t}> to vector<{n}x{t}>"
            )
        fq = k.typed(f"affine.apply affine_map<(d0) -> (d0 + {q})>({f0})")
        part = _write(k, v, f"vector<{n}x{t}>", part, [k.const(0), fq, row, col])
    return part


def packed_conv(
    k: KernelBuilder,
    x: KernelValue,
    packed: KernelValue,
    out: KernelValue,
    strides: Sequence[int],
    dilation: Sequence[int],
    pads: Sequence[int],
) -> KernelValue:
    """``out = conv(x, w)`` (one group) on the weight packed at compile time into blocks of output
    channels, ``packed`` [F/L, C, KH, KW, L] (``relax-pack-weights``), with vectors along the output
    channels, as ONNX Runtime's NCHWc and oneDNN's blocked kernels have, while ``x`` and ``out`` stay NCHW.

    Per block of L output channels and output row, a tile of pixels (at least ``MIN_TILE_PIXELS``, one
    vector of L channels each) accumulates over the input channels (an ``scf.for``) the taps' weight
    vector times the input element broadcast (read in place: no padded copy, no im2col columns; a tap in
    the left or right padding is left out at compile time, a tap row in the top or bottom padding is
    skipped by an ``scf.if``). Each L x L square of the tile is then transposed in registers
    (``transposed``) into rows of pixels per channel and written to ``out``. No shuffles in the loop, so
    strided convolutions cost no more per product than others; the weight vector streams from
    consecutive addresses.

    Same parallel structure as ``direct_conv`` (an ``scf.forall`` over images x blocks of output rows,
    marked ``VECTOR_CONV_ATTR``), into which ``relax-fuse-kernels`` moves the bias/ReLU/residual epilogue.
    """
    t = element(x.dtype)
    lanes = packed.shape[4].value  # type: ignore[union-attr]
    h, wd = (d.value for d in x.shape[2:])  # type: ignore[union-attr]
    blocks, cg, kh, kw = (d.value for d in packed.shape[:4])  # type: ignore[union-attr]
    f, oh, ow = (d.value for d in out.shape[1:])  # type: ignore[union-attr]
    rows = _block_rows(out.shape[2], out.shape[3], f * cg * kh * kw * oh * ow).value  # type: ignore[union-attr]
    top, left = pads[0], pads[1]
    (sy, sx), (dy, dx) = strides, dilation
    block = TensorType((as_expr(1), as_expr(f), as_expr(rows), as_expr(ow)), out.dtype)
    c0, c_h = k.const(0), k.const(h)
    vt = f"vector<{lanes}x{t}>"
    per_tile = -(-MIN_TILE_PIXELS // lanes) * lanes
    tiles = [(s, min(per_tile, ow - s)) for s in range(0, ow, per_tile)]
    guarded = {i for i in range(kh) if i * dy < top or (oh - 1) * sy + i * dy - top > h - 1}
    pad = k.constant(0.0, x.dtype)
    zero = k.typed(f"arith.constant dense<0.0> : {vt}")
    # the run of whole tiles whose taps all fall inside the row: from tiles[first], ``inner`` of them
    within = [
        n == per_tile and s * sx - left >= 0 and (s + n - 1) * sx + (kw - 1) * dx - left < wd
        for s, n in tiles
    ]
    first = within.index(True) if True in within else len(tiles)
    inner = next((i for i, w in enumerate(within[first:]) if not w), len(tiles) - first)
    if inner <= MAX_UNROLLED_TILES:  # a narrow row stays unrolled
        first, inner = len(tiles), 0

    def offset(start: int | str, shift: int) -> str:
        if isinstance(start, int):
            return k.const(start + shift)
        return k.typed(f"affine.apply affine_map<(d0) -> (d0 + {shift})>({start})")

    def one_block(ivs: list[str], shared: KernelValue) -> tuple[KernelValue, str]:
        n_img, b = ivs
        r0 = k.typed(f"affine.apply affine_map<(d0) -> (d0 * {rows})>({b})")
        where = f"[{n_img}, 0, {r0}, 0] [1, {f}, {rows}, {ow}] [1, 1, 1, 1]"
        o_b = k.op(
            f"tensor.extract_slice {shared.name}{where} : {shared.mlir} to {builtin_tensor(block)}", block
        )

        def channels(fb: str, part: KernelValue) -> KernelValue:
            f0 = k.typed(f"affine.apply affine_map<(d0) -> (d0 * {lanes})>({fb})")

            def row(r_local: str, part: KernelValue) -> KernelValue:
                r = k.typed(f"affine.apply affine_map<(d0, d1) -> (d0 + d1)>({r0}, {r_local})")
                for start, count in tiles[:first]:
                    part = tile(fb, f0, r, r_local, start, count, part)
                # tiles whose taps all fall inside the row: a loop (a wide row unrolls no more code)
                if inner:

                    def inside(i: str, part: KernelValue) -> KernelValue:
                        start = k.typed(f"affine.apply affine_map<(d0) -> (d0 + {tiles[first][0]})>({i})")
                        return tile(fb, f0, r, r_local, start, per_tile, part)

                    part = k.loop(k.const(inner * per_tile), part, inside, step=per_tile)
                for start, count in tiles[first + inner :]:
                    part = tile(fb, f0, r, r_local, start, count, part)
                return part

            return k.loop(k.const(rows), part, row)

        def tile(
            fb: str, f0: str, r: str, r_local: str, start: int | str, count: int, part: KernelValue
        ) -> KernelValue:
            """Output channels ``f0`` .. ``+ L`` x pixels ``start`` .. ``+ count`` of output row ``r``
            (``start`` an SSA index: a tile whose taps all fall inside the row)."""
            types = [vt] * count
            ci, carried = k.fresh("iv"), [k.fresh("acc") for _ in types]

            def channel() -> list[str]:
                accs = list(carried)
                for i in range(kh):
                    y = k.typed(f"affine.apply affine_map<(d0) -> (d0 * {sy} + {i * dy - top})>({r})")

                    def tap_row(i: int = i, y: str = y, accs: list[str] = accs) -> list[str]:
                        accs = list(accs)
                        for j in range(kw):
                            wv = k.typed(
                                f"vector.transfer_read {packed.name}[{fb}, {ci}, {k.const(i)}, {k.const(j)}, "
                                f"{c0}], {pad} {{in_bounds = [true]}} : {packed.mlir}, {vt}"
                            )
                            for p in range(count):
                                if isinstance(start, str):
                                    at = k.typed(
                                        f"affine.apply affine_map<(d0) -> (d0 * {sx} + {p * sx + j * dx - left})>"
                                        f"({start})"
                                    )
                                else:
                                    col = (start + p) * sx + j * dx - left
                                    if not 0 <= col < wd:
                                        continue
                                    at = k.const(col)
                                s = k.typed(f"tensor.extract {x.name}[{n_img}, {ci}, {y}, {at}] : {x.mlir}")
                                v = k.typed(f"vector.broadcast {s} : {t} to {vt}")
                                accs[p] = k.typed(f"vector.fma {v}, {wv}, {accs[p]} : {vt}")
                        return accs

                    if i not in guarded:
                        accs = tap_row()
                        continue
                    lo = k.typed(f"arith.cmpi sge, {y}, {c0} : index")
                    hi = k.typed(f"arith.cmpi slt, {y}, {c_h} : index")
                    inside = k.typed(f"arith.andi {lo}, {hi} : i1")
                    accs = _region(k, inside, types, accs, tap_row)
                return accs

            inits = ", ".join(f"{a} = {zero}" for a in carried)
            head = f"scf.for {ci} = {c0} to {k.const(cg)} step {k.const(1)} iter_args({inits})"
            accs = _region(k, head, types, [zero] * count, channel)
            for g in range(0, count, lanes):
                n = min(lanes, count - g)
                part = write_transposed(
                    k, part, accs[g : g + n], lanes, n, (f0, r_local, offset(start, g)), zero
                )
            return part

        return k.loop(k.const(blocks), o_b, channels), where

    return _forall(k, [k.dim(out, 0), k.const(oh // rows)], out, one_block, VECTOR_CONV_ATTR)


def winograd_stack(oh: int, ow: int, lanes: int) -> int:
    """Tile rows (2x2 outputs) per group of ``lanes`` tiles of ``winograd_conv``: 1 (a group along one tile
    row), or for rows of at most half a group of tiles, as many whole rows as fill the group exactly (an
    8-wide output on AVX-512: 4 rows of 4 tiles), when the image's tile rows are whole groups of them."""
    th, tw = -(-oh // 2), -(-ow // 2)
    if 2 * tw > lanes or lanes % tw or oh % 2 or th % (lanes // tw):
        return 1
    return lanes // tw


def winograd_conv(
    k: KernelBuilder, x: KernelValue, u: KernelValue, out: KernelValue, pads: Sequence[int]
) -> KernelValue:
    """``out = conv(x, w)`` for a 3x3 convolution of stride 1 (one group) by Winograd's F(2x2, 3x3): each
    2x2 block of outputs is ``A^T [(G w G^T) * (B^T d B)] A`` of its 4x4 input patch ``d``, 16 products per
    input and output channel instead of 36. ``u`` [4, 4, F/L, C, L] is ``G w G^T`` packed at compile time
    into blocks of L output channels (``relax-pack-weights``).

    Per image and block of tile rows (an ``scf.forall``, marked ``VECTOR_CONV_ATTR`` for the epilogue), the
    input rows are zero-padded once (``_padded_rows``, wide enough for whole groups of tiles); per tile row
    and group of L tiles: (1) the input transform of each input channel, on vectors of the L tiles (two
    reads of a row and four shuffles give the four tap columns), into V [4, 4, C, L]; (2) per block of L
    output channels, 16 products V[xi, nu] (C x L tiles) by U[xi, nu] (L channels x C): L accumulators of
    L channels over an ``scf.for`` on the input channels, the tile's element broadcast, as in
    ``packed_conv``, into M [16, L, L]; (3) the output transform of each tile on vectors of L channels, L x
    L squares of pixels transposed in registers (``transposed``) and written to ``out`` NCHW. An odd output
    height takes one block per image and a last tile row of one output row; an odd width a last tile of one
    column (the tiles beyond are computed on zeros and not written). A narrow image stacks several tile rows
    in a group (``winograd_stack``), so that its L tiles are all inside.
    """
    t = element(x.dtype)
    lanes = u.shape[4].value  # type: ignore[union-attr]
    c = x.shape[1].value  # type: ignore[union-attr]
    h, wd = (d.value for d in x.shape[2:])  # type: ignore[union-attr]
    blocks = u.shape[2].value  # type: ignore[union-attr]
    f, oh, ow = (d.value for d in out.shape[1:])  # type: ignore[union-attr]
    th, tw = -(-oh // 2), -(-ow // 2)  # tile rows and columns
    stack = winograd_stack(oh, ow, lanes)  # tile rows per group
    span = lanes // stack  # tiles per tile row of a group
    groups = -(-tw // span)  # groups per tile row (stacked: 1)
    whole = ow // (2 * lanes) if stack == 1 else 0  # groups whose 2L output columns are all inside
    wp = 2 * groups * span + 2  # padded input width: every group whole
    top, left = pads[0], pads[1]
    padding = [top, left, 2 * th + 2 - h - top, wp - wd - left]
    work = f * c * 9 * oh * ow
    if oh % 2:
        rows = th
    else:  # blocks of whole groups of stacked tile rows
        groups_rows = _block_rows(as_expr(th // stack), as_expr(2 * stack * ow), work).value  # type: ignore[union-attr]
        rows = stack * groups_rows
    out_rows = min(2 * rows, oh)
    block = TensorType((as_expr(1), as_expr(f), as_expr(out_rows), as_expr(ow)), out.dtype)
    c0 = k.const(0)
    vt, vs, wide = f"vector<{lanes}x{t}>", f"vector<{span}x{t}>", f"vector<{2 * span}x{t}>"
    zero = k.typed(f"arith.constant dense<0.0> : {vt}")
    pad = k.constant(0.0, x.dtype)
    evens = ", ".join(str(2 * e) for e in range(span))
    odds = ", ".join(str(2 * e + 1) for e in range(span))

    def arith(op: str, a: str, b: str, ty: str = vt) -> str:
        return k.typed(f"arith.{op} {a}, {b} : {ty}")

    def b_t(d: list[str]) -> list[str]:
        """``B^T d`` along one axis of a 4x4 patch, on vectors of tiles."""
        ops = (("subf", 0, 2), ("addf", 1, 2), ("subf", 2, 1), ("subf", 1, 3))
        return [arith(op, d[a], d[b], vs) for op, a, b in ops]

    def a_t(m: list[str]) -> list[str]:
        """``A^T m`` along one axis of a tile's 4x4 products, on vectors of channels."""
        return [
            arith("addf", arith("addf", m[0], m[1]), m[2]),
            arith("subf", arith("subf", m[1], m[2]), m[3]),
        ]

    def one_block(ivs: list[str], shared: KernelValue) -> tuple[KernelValue, str]:
        n_img, b = ivs
        r0 = k.typed(f"affine.apply affine_map<(d0) -> (d0 * {rows})>({b})")
        y0 = k.typed(f"affine.apply affine_map<(d0) -> (d0 * {2 * rows})>({b})")
        xp = _padded_rows(k, x, n_img, r0, as_expr(2 * rows + 2), padding, 2, pad)
        where = f"[{n_img}, 0, {y0}, 0] [1, {f}, {out_rows}, {ow}] [1, 1, 1, 1]"
        o_b = k.op(
            f"tensor.extract_slice {shared.name}{where} : {shared.mlir} to {builtin_tensor(block)}", block
        )

        def column(tx0: int | str, shift: int) -> str:
            """The padded input column (or output column) ``2 * tx0 + shift``."""
            if isinstance(tx0, int):
                return k.const(2 * tx0 + shift)
            return k.typed(f"affine.apply affine_map<(d0) -> (d0 * 2 + {shift})>({tx0})")

        def input_transform(ty: str, tx0: int | str, ci: str, v: KernelValue) -> KernelValue:
            """V[:, :, ci] of the group's tiles: ``B^T d B`` on vectors of the tiles of each tile row."""
            for r in range(stack):
                v = row_transform(ty, r, tx0, ci, v)
            return v

        def row_transform(ty: str, r: int, tx0: int | str, ci: str, v: KernelValue) -> KernelValue:
            """V[:, :, ci, r * span :] of tile row ``ty + r``'s tiles of the group."""
            rows_e = []
            for i in range(4):
                y = k.typed(f"affine.apply affine_map<(d0) -> (d0 * 2 + {2 * r + i})>({ty})")
                a, a2 = (
                    k.typed(
                        f"vector.transfer_read {xp.name}[{ci}, {y}, {column(tx0, s)}], {pad} "
                        f"{{in_bounds = [true]}} : {xp.mlir}, {wide}"
                    )
                    for s in (0, 2)
                )
                d = [
                    k.typed(f"vector.shuffle {v_}, {v_} [{m}] : {wide}, {wide}")
                    for v_ in (a, a2)
                    for m in (evens, odds)
                ]
                rows_e.append(b_t(d))
            for j in range(4):
                for xi, value in enumerate(b_t([row[j] for row in rows_e])):
                    v = _write(k, value, vs, v, [k.const(xi), k.const(j), ci, k.const(r * span)])
            return v

        def products(v: KernelValue, fb: str) -> KernelValue:
            """M [16, L tiles, L channels] of output channel block ``fb``: U[xi, nu, fb] times V[xi, nu]."""
            m = k.empty((as_expr(16), as_expr(lanes), as_expr(lanes)), x.dtype)
            for q in range(16):
                xi, nu = k.const(q // 4), k.const(q % 4)
                ci, carried = k.fresh("iv"), [k.fresh("acc") for _ in range(lanes)]

                def channel(
                    ci: str = ci, carried: list[str] = carried, xi: str = xi, nu: str = nu
                ) -> list[str]:
                    w = k.typed(
                        f"vector.transfer_read {u.name}[{xi}, {nu}, {fb}, {ci}, {c0}], {pad} "
                        f"{{in_bounds = [true]}} : {u.mlir}, {vt}"
                    )
                    accs = []
                    for tile, acc in enumerate(carried):
                        s = k.typed(f"tensor.extract {v.name}[{xi}, {nu}, {ci}, {k.const(tile)}] : {v.mlir}")
                        bv = k.typed(f"vector.broadcast {s} : {t} to {vt}")
                        accs.append(k.typed(f"vector.fma {bv}, {w}, {acc} : {vt}"))
                    return accs

                inits = ", ".join(f"{a} = {zero}" for a in carried)
                head = f"scf.for {ci} = {c0} to {k.const(c)} step {k.const(1)} iter_args({inits})"
                accs = _region(k, head, [vt] * lanes, [zero] * lanes, channel)
                for tile, acc in enumerate(accs):
                    m = _write(k, acc, vt, m, [k.const(q), k.const(tile), c0])
            return m

        def output_transform(
            m: KernelValue, f0: str, ty: str, tx0: int | str, valid: int, part: KernelValue
        ) -> KernelValue:
            """``A^T M A`` of each tile of the group, written as ``valid`` output rows of pixels per channel
            and tile row."""
            pixels: list[list[list[str]]] = [
                [[], []] for _ in range(stack)
            ]  # [tile row][output row]: vectors
            for tile in range(lanes):
                mv = [
                    k.typed(
                        f"vector.transfer_read {m.name}[{k.const(q)}, {k.const(tile)}, {c0}], {pad} "
                        f"{{in_bounds = [true]}} : {m.mlir}, {vt}"
                    )
                    for q in range(16)
                ]
                s = [a_t(mv[nu::4]) for nu in range(4)]  # s[nu][a]
                for a in range(2):
                    pixels[tile // span][a].extend(a_t([s[nu][a] for nu in range(4)]))
            for r, a in ((r, a) for r in range(stack) for a in range(valid)):
                y = k.typed(f"affine.apply affine_map<(d0) -> (d0 * 2 + {2 * r + a})>({ty})")
                for sq in range(-(-2 * span // lanes)):
                    n = lanes if isinstance(tx0, str) else min(lanes, ow - 2 * tx0 - sq * lanes)
                    if n <= 0:
                        continue
                    vectors = pixels[r][a][sq * lanes : (sq + 1) * lanes]
                    part = write_transposed(
                        k, part, vectors, lanes, n, (f0, y, column(tx0, sq * lanes)), zero
                    )
            return part

        def group(ty: str, tx0: int | str, valid: int, part: KernelValue) -> KernelValue:
            """The L tiles from tile column ``tx0`` (an SSA index: a group whose outputs are all inside) of
            tile rows ``ty`` .. ``+ stack``."""
            v = k.empty((as_expr(4), as_expr(4), as_expr(c), as_expr(lanes)), x.dtype)
            v = k.loop(k.const(c), v, lambda ci, v: input_transform(ty, tx0, ci, v))

            def channel_block(fb: str, part: KernelValue) -> KernelValue:
                f0 = k.typed(f"affine.apply affine_map<(d0) -> (d0 * {lanes})>({fb})")
                return output_transform(products(v, fb), f0, ty, tx0, valid, part)

            return k.loop(k.const(blocks), part, channel_block)

        def tile_row(ty: str, valid: int, part: KernelValue) -> KernelValue:
            looped = whole if whole > 1 else 0  # groups run by a loop: a wide image unrolls no more code
            if looped:
                part = k.loop(
                    k.const(looped * lanes), part, lambda g, part: group(ty, g, valid, part), step=lanes
                )
            for g in range(looped, groups):
                part = group(ty, g * span, valid, part)
            return part

        full = th - 1 if oh % 2 else rows  # tile rows of two output rows in the block
        part = o_b
        if full:
            part = k.loop(k.const(full), part, lambda ty, part: tile_row(ty, 2, part), step=stack)
        if oh % 2:
            part = tile_row(k.const(th - 1), 1, part)
        return part, where

    return _forall(k, [k.dim(out, 0), k.const(th // rows)], out, one_block, VECTOR_CONV_ATTR)


MAX_POOL_TAPS = 16  # window taps of a vectorized max pooling (``max_pool_fits``)


def max_pool_fits(x: KernelValue, out: KernelValue, attrs: dict) -> bool:
    """Whether ``max_pool`` takes this pooling: f32/f64, windows that tile the input (stride = kernel, no
    dilation, no padding, all inside the input) of at most ``MAX_POOL_TAPS`` taps, every dim static but the
    batch."""
    dims = (*x.shape[1:], *out.shape[1:])
    if x.dtype not in DIRECT_DTYPES or not all(d is not None and d.is_const for d in dims):
        return False
    kh, kw = attrs["kernel"]
    disjoint = list(attrs["strides"]) == [kh, kw] and list(attrs["dilation"]) == [1, 1]
    (h, w), (oh, ow) = (d.value for d in x.shape[2:]), (d.value for d in out.shape[2:])  # type: ignore[union-attr]
    inside = oh * kh <= h and ow * kw <= w  # (a ceil_mode window may go past the input)
    return disjoint and inside and not any(attrs["padding"]) and kh * kw <= MAX_POOL_TAPS


def max_pool(k: KernelBuilder, x: KernelValue, out: KernelValue, kernel: Sequence[int]) -> KernelValue:
    """``out = max_pool(x)`` for windows that tile the input (``max_pool_fits``), per image and channel (an
    ``scf.forall``): per output row and vector of output columns, one contiguous read of each window row's
    inputs and a shuffle per window column (every kw-th element), combined with ``arith.maximumf`` (NaN
    propagates). (The generic loop nest, which LLVM vectorizes, ran 2x2 windows on [1, 16, 64, 64] in 12.8
    us against onnxruntime's 5, AMD Zen 4.)"""
    t = element(x.dtype)
    lanes = _lanes(k, x.dtype)
    c, oh, ow = (d.value for d in out.shape[1:])  # type: ignore[union-attr]
    kh, kw = kernel
    plane = TensorType((as_expr(1), as_expr(1), as_expr(oh), as_expr(ow)), out.dtype)
    chunks = [(s, min(lanes, ow - s)) for s in range(0, ow, lanes)]
    pad, c0 = k.constant(0.0, x.dtype), k.const(0)

    def one_plane(ivs: list[str], shared: KernelValue) -> tuple[KernelValue, str]:
        n_img, ci = ivs
        where = f"[{n_img}, {ci}, 0, 0] [1, 1, {oh}, {ow}] [1, 1, 1, 1]"
        part = k.op(
            f"tensor.extract_slice {shared.name}{where} : {shared.mlir} to {builtin_tensor(plane)}", plane
        )

        def row(y: str, part: KernelValue) -> KernelValue:
            for start, n in chunks:
                span, best = n * kw, None
                for i in range(kh):
                    yi = k.typed(f"affine.apply affine_map<(d0) -> (d0 * {kh} + {i})>({y})")
                    v = k.typed(
                        f"vector.transfer_read {x.name}[{n_img}, {ci}, {yi}, {k.const(start * kw)}], {pad} "
                        f"{{in_bounds = [true]}} : {x.mlir}, vector<{span}x{t}>"
                    )
                    for j in range(kw):
                        picks = ", ".join(str(j + kw * e) for e in range(n))
                        p = (
                            v
                            if kw == 1
                            else k.typed(
                                f"vector.shuffle {v}, {v} [{picks}] : vector<{span}x{t}>, vector<{span}x{t}>"
                            )
                        )
                        best = p if best is None else k.typed(f"arith.maximumf {best}, {p} : vector<{n}x{t}>")
                part = _write(k, best, f"vector<{n}x{t}>", part, [c0, c0, y, k.const(start)])
            return part

        return k.loop(k.const(oh), part, row), where

    return _forall(k, [k.dim(out, 0), k.const(c)], out, one_plane, VECTOR_CONV_ATTR)

"""Key/value-cache ops for decoding: an in-place cache append and attention that reads the cache directly.

A layer's cache is one array ``[kv_len + seq, batch, kv_heads, head_dim]`` (sequence-major, so the
caller can pass the first ``kv_len + seq`` rows of a preallocated ``[max_ctx, ...]`` buffer without a
copy). ``kv_cache_write`` writes the new tokens' keys or values into its last ``seq`` rows in place;
``cached_attention`` reads all rows with a causal mask shifted by ``kv_len``. Nothing copies the cache.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

from mlir import ir

from relax_mlir.dialects.dims import join_dtype, same_dim, tensor_operand
from relax_mlir.dialects.ops.elementwise import FLOAT_DTYPES
from relax_mlir.dialects.registry import Attr, Operand, RelaxOp, relax_op
from relax_mlir.dialects.types import RelaxType, TensorType, relax_type
from relax_mlir.errors import ShapeError
from relax_mlir.lowering.kernel import KernelBuilder, KernelValue, builtin_tensor, element, identity
from relax_mlir.shape_infer.expr import Expr, as_expr, prove_le


def _rank4(t: RelaxType | None, name: str) -> TensorType:
    x = tensor_operand(t, name)
    if x.shape is None or len(x.shape) != 4:
        raise ShapeError(f"operand '{name}' must be a rank-4 tensor, got {x}")
    if x.dtype is not None and x.dtype not in FLOAT_DTYPES:
        raise ShapeError(f"operand '{name}' must have a float dtype, got {x.dtype}")
    return x


def _past(cache: TensorType, new_seq: Any) -> Expr | None:
    """``kv_len``: the cache rows before the new tokens (cache rows minus the new tokens)."""
    if cache.shape[0] is None or new_seq is None:
        return None
    return as_expr(cache.shape[0]) - as_expr(new_seq)


@relax_op
class KVCacheWriteOp(RelaxOp):
    """Write ``new`` ([b, s, g, d]) into the last ``s`` rows of ``cache`` ([t, b, g, d]) in place.

    ``%c1 = "relax.kv_cache_write"(%cache, %k) : (!relax.tensor<["kv_len + seq", "b", 4, 64], f32>,
    !relax.tensor<["b", "seq", 4, 64], f32>) -> !relax.tensor<["kv_len + seq", "b", 4, 64], f32>``

    The result is ``cache``'s buffer: ``cache`` must be a function parameter read by nothing else, and
    the caller's array sees the new rows after the call.
    """

    NAME = "kv_cache_write"
    OPERANDS = (Operand("cache"), Operand("new"))
    INPLACE = (0,)

    @classmethod
    def deduce(cls, operand_types: Sequence[RelaxType | None], attrs: dict[str, Any]) -> list[RelaxType]:
        cache, new = _rank4(operand_types[0], "cache"), _rank4(operand_types[1], "new")
        dtype = join_dtype(cache, new, ("cache", "new"))
        for axis, (c, n) in enumerate(zip(cache.shape[1:], (new.shape[0], *new.shape[2:])), start=1):
            same_dim(c, n, f"kv_cache_write: cache dim {axis} vs new")
        past = _past(cache, new.shape[1])
        if past is not None and past.is_const and past.value < 0:
            raise ShapeError(
                f"kv_cache_write: new has {new.shape[1]} rows, more than the cache's {cache.shape[0]}"
            )
        # the result is the cache's buffer (in place): its type, not one refined from ``new``
        return [TensorType(cache.shape, dtype)]

    @classmethod
    def lower(cls, k: KernelBuilder) -> list[KernelValue]:
        """A transposing copy of ``new`` into the subview of rows [kv_len, kv_len + s) of the destination."""
        new, out = k.ins[1], k.outs[0]
        seq = new.shape[1]
        past = _past(out.type, seq)
        if past is None:
            raise k.fail("the cache and new-token dims must be known")
        if prove_le(as_expr(seq), as_expr(out.shape[0])):
            rows = TensorType((seq, *out.shape[1:]), out.dtype)
            sizes = [*k.sizes(new)[1:2], *k.sizes(out)[1:]]
            where = f"[{k.index(past)}, 0, 0, 0] [{', '.join(sizes)}] [1, 1, 1, 1]"
        else:  # more new rows than the cache has: an error (checked), and the kernel writes the last ones only
            k.check_dim(1, 1, 0, 0, "{actual} new rows do not fit in a cache of {expected} rows")
            size = k.scalar(f"arith.minsi {k.dim(new, 1)}, {k.dim(out, 0)}", "index")
            start = k.scalar(f"arith.subi {k.dim(out, 0)}, {size}", "index")
            rows = TensorType((None, *out.shape[1:]), out.dtype)
            sizes = [size, *k.sizes(out)[1:]]
            where = f"[{start}, 0, 0, 0] [{', '.join(sizes)}] [1, 1, 1, 1]"
            fits = TensorType((new.shape[0], None, *new.shape[2:]), new.dtype)
            src = f"[0, 0, 0, 0] [{k.sizes(new)[0]}, {size}, {', '.join(k.sizes(new)[2:])}] [1, 1, 1, 1]"
            new = k.op(f"tensor.extract_slice {new.name}{src} : {new.mlir} to {builtin_tensor(fits)}", fits)
        part = k.op(f"tensor.extract_slice {out.name}{where} : {out.mlir} to {builtin_tensor(rows)}", rows)
        [copied] = k.generic(
            [new], [part], ["(s, b, g, d) -> (b, s, g, d)", identity(4)], ["parallel"] * 4, lambda a: [a[0]]
        )
        return [
            k.op(
                f"tensor.insert_slice {copied.name} into {out.name}{where} : {part.mlir} into {out.mlir}", out
            )
        ]


def kv_cache_write(cache: ir.Value, new: ir.Value, *, loc: ir.Location | None = None) -> ir.Value:
    """``cache`` with ``new``'s rows written over its last rows, in place."""
    return KVCacheWriteOp.build([cache, new], loc=loc).result


@relax_op
class CachedAttentionOp(RelaxOp):
    """Causal (grouped-query) attention of the new tokens' queries over every cached key and value.

    ``q`` is [b, s, h, d]; ``k`` and ``v`` are caches [t, b, g, d] whose last ``s`` rows hold the new tokens
    (``kv_len = t - s`` earlier ones); query ``i`` sees keys ``0 .. kv_len + i``. Query head ``j`` uses
    key/value head ``j // (h / g)``. Scores are scaled by ``scale``.

    ``%o = "relax.cached_attention"(%q, %k, %v) {scale = 0.125 : f64} : (!relax.tensor<["b", "seq", 12, 64], f32>,
    !relax.tensor<["kv_len + seq", "b", 4, 64], f32>, !relax.tensor<["kv_len + seq", "b", 4, 64], f32>)
    -> !relax.tensor<["b", "seq", 12, 64], f32>``
    """

    NAME = "cached_attention"
    OPERANDS = (Operand("q"), Operand("k"), Operand("v"))
    ATTRS = (Attr("scale", "float"),)

    @classmethod
    def deduce(cls, operand_types: Sequence[RelaxType | None], attrs: dict[str, Any]) -> list[RelaxType]:
        q, k, v = (_rank4(t, n) for t, n in zip(operand_types, ("q", "k", "v")))
        dtype = join_dtype(q, k, ("q", "k"))
        join_dtype(k, v, ("k", "v"))
        for axis in range(4):
            same_dim(k.shape[axis], v.shape[axis], f"cached_attention: k dim {axis} vs v")
        batch = same_dim(q.shape[0], k.shape[1], "cached_attention: q batch vs k batch")
        head_dim = same_dim(q.shape[3], k.shape[3], "cached_attention: q head dim vs k head dim")
        heads, groups = q.shape[2], k.shape[2]
        if heads is None or groups is None or not (heads.is_const and groups.is_const):
            raise ShapeError(
                f"cached_attention: head counts must be static, got q heads {heads}, kv heads {groups}"
            )
        if heads.value % groups.value:
            raise ShapeError(
                f"cached_attention: q heads ({heads.value}) must be a multiple of kv heads ({groups.value})"
            )
        past = _past(k, q.shape[1])
        if past is not None and past.is_const and past.value < 0:
            raise ShapeError(f"cached_attention: {q.shape[1]} queries but only {k.shape[0]} cached rows")
        if not math.isfinite(attrs["scale"]):
            raise ShapeError(f"cached_attention: scale must be finite, got {attrs['scale']}")
        return [TensorType((batch, q.shape[1], heads, head_dim), dtype)]

    @classmethod
    def lower(cls, k: KernelBuilder) -> list[KernelValue]:
        """One query row (decode): read the cache in place. Several: batch matmuls on transposed copies."""
        q = k.ins[0]
        if q.shape[1] is not None and q.shape[1] == 1:
            d = q.shape[3]
            if q.dtype == "f32" and d is not None and d.is_const and 0 < d.value <= MAX_VECTOR_DIM:
                return [_attend_one_query(k)]
            return [_attend_in_place(k)]
        if k.choices.get("conv") == "direct":  # GPU pipelines: no loops on the host (see legalize.py)
            return [_attend_by_batch_matmul(k)]
        return [_attend_by_blocks(k)]


def _softmax_rows(
    k: KernelBuilder,
    scores: KernelValue,
    visible: Callable[[], str],
    normalize: bool = True,
    sizes: Sequence[str] | None = None,
) -> tuple[KernelValue, KernelValue]:
    """Masked softmax over the last dim of ``scores`` (rank >= 2); ``visible()`` emits the i1 mask. Returns
    the probabilities and the row sums; unnormalized (``exp(s - max)``) unless ``normalize``, for a caller
    that divides the (smaller) product with the values instead."""
    t = element(scores.dtype)
    rank = scores.rank
    ds = [f"d{i}" for i in range(rank)]
    full = f"({', '.join(ds)}) -> ({', '.join(ds)})"
    row = f"({', '.join(ds)}) -> ({', '.join(ds[:-1])})"
    reduce_last = ["parallel"] * (rank - 1) + ["reduction"]
    scale = k.constant(k.attrs["scale"], scores.dtype)
    neg_inf = k.constant(float("-inf"), scores.dtype)

    def masked(score: str) -> str:
        return k.scalar(
            f"arith.select {visible()}, {k.scalar(f'arith.mulf {score}, {scale}', t)}, {neg_inf}", t
        )

    rows = scores.shape[:-1]

    def new(shape: tuple, dyn: Sequence[str] | None) -> KernelValue:
        """A tensor.empty; ``sizes`` (inside a loop): index values of ``scores``' dims, all unknown."""
        if dyn is None:
            return k.empty(shape, scores.dtype)
        t = TensorType(shape, scores.dtype)
        return k.op(f"tensor.empty({', '.join(dyn)}) : {builtin_tensor(t)}", t)

    def new_rows() -> KernelValue:
        return new(rows, None if sizes is None else sizes[:-1])

    top = k.fill(neg_inf, new_rows())
    [top] = k.generic(
        [scores],
        [top],
        [full, row],
        reduce_last,
        lambda a: [k.scalar(f"arith.maximumf {masked(a[0])}, {a[1]}", t)],
    )
    probs = new(scores.shape, sizes)
    [probs] = k.generic(
        [scores, top],
        [probs],
        [full, row, full],
        ["parallel"] * rank,
        lambda a: [k.scalar(f"math.exp {k.scalar(f'arith.subf {masked(a[0])}, {a[1]}', t)}", t)],
    )
    total = k.fill(k.constant(0.0, scores.dtype), new_rows())
    [total] = k.generic(
        [probs], [total], [full, row], reduce_last, lambda a: [k.scalar(f"arith.addf {a[0]}, {a[1]}", t)]
    )
    if not normalize:
        return probs, total
    [probs] = k.generic(
        [total],
        [probs],
        [row, full],
        ["parallel"] * rank,
        lambda a: [k.scalar(f"arith.divf {a[1]}, {a[0]}", t)],
    )
    return probs, total


MAX_VECTOR_DIM = 256  # decode reads a head's key or value row as one vector up to this many f32 lanes


def _attend_one_query(k: KernelBuilder) -> KernelValue:
    """Decode: per sequence, one pass over the cache rows in place with an online softmax (running max, sum
    and weighted values per query head): each row's keys and values of every KV head (``[g, d]``,
    contiguous) are read once, ``d`` lanes at a time, for all the heads of its group. No score buffer, and
    consecutive addresses: ``_attend_in_place``'s generic contractions ran scalar, their reduction over rows
    striding by ``b * g * d`` floats (4 KiB at batch 4: a new page per row, 10x slower than batch 1)."""
    (q, key, value), out = k.ins, k.outs[0]
    t = element(q.dtype)
    heads, d = out.shape[2].value, out.shape[3].value  # type: ignore[union-attr]
    kv_heads = key.shape[2].value  # type: ignore[union-attr]
    group = heads // kv_heads
    vt = f"vector<{d}x{t}>"
    c0, c1, rows = k.const(0), k.const(1), k.dim(key, 0)
    zero, one = k.constant(0.0, q.dtype), k.constant(1.0, q.dtype)
    neg_inf = k.constant(float("-inf"), q.dtype)
    scale = k.typed(f"vector.broadcast {k.constant(k.attrs['scale'], q.dtype)} : {t} to {vt}")
    zeros = k.typed(f"vector.broadcast {zero} : {t} to {vt}")

    def read(v: KernelValue, *at: str) -> str:
        return k.typed(
            f"vector.transfer_read {v.name}[{', '.join(at)}], {zero} {{in_bounds = [true]}} : {v.mlir}, {vt}"
        )

    def per_sequence(b: str, acc: KernelValue) -> KernelValue:
        hs = [k.const(h) for h in range(heads)]
        qs = [k.typed(f"arith.mulf {read(q, b, c0, h, c0)}, {scale} : {vt}") for h in hs]
        j = k.fresh("j")
        state = [(k.fresh("m"), k.fresh("l"), k.fresh("a")) for _ in hs]

        def row() -> list[str]:
            updated = []
            for h, (qx, (m, l_, a)) in enumerate(zip(qs, state, strict=True)):
                if h % group == 0:
                    g = k.const(h // group)
                    kj, vj = read(key, j, b, g, c0), read(value, j, b, g, c0)
                dot = k.typed(f"arith.mulf {qx}, {kj} : {vt}")
                s = k.typed(f"vector.reduction <add>, {dot} fastmath<reassoc> : {vt} into {t}")
                top = k.scalar(f"arith.maximumf {m}, {s}", t)
                c = k.scalar(f"math.exp {k.scalar(f'arith.subf {m}, {top}', t)}", t)
                p = k.scalar(f"math.exp {k.scalar(f'arith.subf {s}, {top}', t)}", t)
                total = k.scalar(f"arith.addf {k.scalar(f'arith.mulf {l_}, {c}', t)}, {p}", t)
                kept = k.typed(f"arith.mulf {a}, {k.typed(f'vector.broadcast {c} : {t} to {vt}')} : {vt}")
                pv = k.typed(f"vector.broadcast {p} : {t} to {vt}")
                updated += [top, total, k.typed(f"vector.fma {pv}, {vj}, {kept} : {vt}")]
            return updated

        lines, updated = k.capture(row)
        res = k.fresh("run")
        inits = ", ".join(f"{m} = {neg_inf}, {l_} = {zero}, {a} = {zeros}" for m, l_, a in state)
        types = ", ".join([t, t, vt] * heads)
        k.emit(
            f"{res}:{3 * heads} = scf.for {j} = {c0} to {rows} step {c1} iter_args({inits}) -> ({types}) {{",
            *("  " + line for line in lines),
            f"  scf.yield {', '.join(updated)} : {types}",
            "}",
        )
        for x, h in enumerate(hs):
            inv = k.scalar(f"arith.divf {one}, {res}#{3 * x + 1}", t)
            o = k.typed(
                f"arith.mulf {res}#{3 * x + 2}, {k.typed(f'vector.broadcast {inv} : {t} to {vt}')} : {vt}"
            )
            acc = k.op(
                f"vector.transfer_write {o}, {acc.name}[{b}, {c0}, {h}, {c0}] {{in_bounds = [true]}} : {vt}, "
                f"{acc.mlir}",
                acc,
            )
        return acc

    return k.loop(k.dim(q, 0), out, per_sequence)


def _attend_in_place(k: KernelBuilder) -> KernelValue:
    """Decode: contractions that read the cache in its own layout (nothing copied). The product with the
    values runs over positions outside and the head dim inside (contiguous in ``v``: a vector loop; 4x
    faster than positions innermost, 12 heads over 150 positions)."""
    (q, key, value), out = k.ins, k.outs[0]
    t = element(q.dtype)
    batch, seq, heads, _ = out.shape
    group = heads.value // key.shape[2].value
    kv_len = k.index(_past(key.type, q.shape[1]))
    kv = f"j, b, h floordiv {group}, e"

    def mac(a: list[str]) -> list[str]:
        return [k.scalar(f"arith.addf {a[2]}, {k.scalar(f'arith.mulf {a[0]}, {a[1]}', t)}", t)]

    scores = k.fill(k.constant(0.0, q.dtype), k.empty((batch, heads, seq, key.shape[0]), q.dtype))
    [scores] = k.generic(
        [q, key],
        [scores],
        ["(b, h, i, j, e) -> (b, i, h, e)", f"(b, h, i, j, e) -> ({kv})", "(b, h, i, j, e) -> (b, h, i, j)"],
        ["parallel"] * 4 + ["reduction"],
        mac,
    )

    def visible() -> str:
        i, j = k.scalar("linalg.index 2", "index"), k.scalar("linalg.index 3", "index")
        return k.scalar(f"arith.cmpi sle, {j}, {k.scalar(f'arith.addi {i}, {kv_len}', 'index')}", "index")

    probs, _ = _softmax_rows(k, scores, visible)
    result = k.fill(k.constant(0.0, q.dtype), out)
    [result] = k.generic(
        [probs, value],
        [result],
        ["(b, i, h, j, e) -> (b, h, i, j)", f"(b, i, h, j, e) -> ({kv})", "(b, i, h, j, e) -> (b, i, h, e)"],
        ["parallel"] * 3 + ["reduction", "parallel"],
        mac,
    )
    return result


# Query positions per chunk of prefill attention (x the group's heads = score rows). Measured on Zen 4 at
# seq 512, one thread, 12 heads on 4: 16 -> 10.8 ms, 32 -> 9.8, 64 -> 10.4, 128 -> 11.4.
def _transposed(k: KernelBuilder, src: KernelValue, shape: tuple, src_map: str) -> KernelValue:
    """A copy of ``src`` in a new layout: result element ``shape`` index -> ``src`` at ``src_map``."""
    [r] = k.generic(
        [src],
        [k.empty(shape, src.dtype)],
        [src_map, identity(len(shape))],
        ["parallel"] * len(shape),
        lambda a: [a[0]],
    )
    return r


def _attend_by_batch_matmul(k: KernelBuilder) -> KernelValue:
    """Prefill on GPU targets: per (batch, kv head), the group's queries times the keys as
    ``linalg.batch_matmul`` (whole-tensor ops, which the GPU mapping puts on threads; ``_attend_by_blocks``
    loops on the host).

    The cache's rows are copied once, transposed, per call: O(kv_len) next to the O(seq * kv_len) math.
    """
    (q, key, value), out = k.ins, k.outs[0]
    batch, seq, heads, dim = out.shape
    kv_heads = key.shape[2]
    group = heads.value // kv_heads.value
    rows = key.shape[0]
    kv_len = k.index(_past(key.type, q.shape[1]))
    seq_size = k.dim(q, 1)

    # [b, g, G, s, d] <- q[b, s, g * G + G_i, d]; [b, g, d, t] <- key[t, b, g, d]; [b, g, t, d] <- value
    qg = _transposed(
        k, q, (batch, kv_heads, as_expr(group), seq, dim), f"(b, g, x, i, e) -> (b, i, g * {group} + x, e)"
    )
    kt = _transposed(k, key, (batch, kv_heads, dim, rows), "(b, g, e, j) -> (j, b, g, e)")
    vt = _transposed(k, value, (batch, kv_heads, rows, dim), "(b, g, j, e) -> (j, b, g, e)")
    qg = k.collapse(qg, [[0, 1], [2, 3], [4]])
    kt = k.collapse(kt, [[0, 1], [2], [3]])
    vt = k.collapse(vt, [[0, 1], [2], [3]])
    zero = k.constant(0.0, q.dtype)
    scores = k.fill(zero, k.empty((qg.shape[0], qg.shape[1], rows), q.dtype))
    scores = k.op(
        f"linalg.batch_matmul ins({qg.name}, {kt.name} : {qg.mlir}, {kt.mlir}) outs({scores.name} : {scores.mlir})"
        f" -> {scores.mlir}",
        scores,
    )

    def visible() -> str:  # row r of a group's stacked queries is query r mod seq
        r, j = k.scalar("linalg.index 1", "index"), k.scalar("linalg.index 2", "index")
        i = k.scalar(f"arith.remui {r}, {seq_size}", "index")
        return k.scalar(f"arith.cmpi sle, {j}, {k.scalar(f'arith.addi {i}, {kv_len}', 'index')}", "index")

    probs, _ = _softmax_rows(k, scores, visible)
    ctx = k.fill(zero, k.empty((qg.shape[0], qg.shape[1], dim), q.dtype))
    ctx = k.op(
        f"linalg.batch_matmul ins({probs.name}, {vt.name} : {probs.mlir}, {vt.mlir}) outs({ctx.name} : {ctx.mlir})"
        f" -> {ctx.mlir}",
        ctx,
    )
    ctx = k.expand(ctx, [[0, 1], [2, 3], [4]], (batch, kv_heads, group, seq, dim))
    [result] = k.generic(
        [ctx],
        [out],
        [f"(b, i, h, e) -> (b, h floordiv {group}, h mod {group}, i, e)", identity(4)],
        ["parallel"] * 4,
        lambda a: [a[0]],
    )
    return result


QUERY_BLOCK = 32


def _attend_by_blocks(k: KernelBuilder) -> KernelValue:
    """Prefill: an ``scf.forall`` over (batch x kv head, block of ``QUERY_BLOCK`` queries), run on all cores.

    A chunk multiplies its queries (the group's heads stacked, ``[rows, d]``) by the keys they may see
    (``kv_len + last query + 1``: the causal mask skips the later keys' work) with ``linalg.matmul``,
    takes the masked softmax of that ``[rows, keys]`` block (it stays in cache) and divides its product
    with the values by the row sums, then writes its ``[1, block, group, d]`` slice of the result. The
    keys and values are copied once, transposed, per call: O(kv_len) next to the O(seq * kv_len) math.
    """
    (q, key, value), out = k.ins, k.outs[0]
    t = element(q.dtype)
    batch, seq, heads, dim = out.shape
    kv_heads = key.shape[2]
    group = heads.value // kv_heads.value
    rows = key.shape[0]
    kv_len = k.index(_past(key.type, q.shape[1]))
    seq_size = k.dim(q, 1)

    # [b, g, s, G, d] <- q[b, s, g * G + G_i, d] (query-major rows); [b, g, d, t] <- key; [b, g, t, d] <- value
    qg = _transposed(
        k, q, (batch, kv_heads, seq, as_expr(group), dim), f"(b, g, i, x, e) -> (b, i, g * {group} + x, e)"
    )
    kt = _transposed(k, key, (batch, kv_heads, dim, rows), "(b, g, e, j) -> (j, b, g, e)")
    vt = _transposed(k, value, (batch, kv_heads, rows, dim), "(b, g, j, e) -> (j, b, g, e)")
    qg = k.collapse(qg, [[0, 1], [2, 3], [4]])
    kt = k.collapse(kt, [[0, 1], [2], [3]])
    vt = k.collapse(vt, [[0, 1], [2], [3]])
    d = str(dim.value) if dim.is_const else k.dim(q, 3)
    heads_kv = k.dim(kt, 0)
    zero = k.constant(0.0, q.dtype)

    def aff(text: str) -> str:  # an affine.apply/min (no type suffix) as an index value
        name = k.fresh("v")
        k.emit(f"{name} = {text}")
        return name

    blocks = aff(f"affine.apply affine_map<()[s0] -> (s0 ceildiv {QUERY_BLOCK})>()[{seq_size}]")
    c, blk = k.fresh("bg"), k.fresh("blk")
    shared = KernelValue(k.fresh("shared"), out.type, out.mlir)
    result = KernelValue(k.fresh("t"), out.type, out.mlir)
    dyn2 = TensorType((None, None), q.dtype)
    ctx_t = TensorType((None, dim), q.dtype)
    block4 = TensorType((as_expr(1), None, as_expr(group), dim), q.dtype)

    def body() -> None:
        i0 = aff(f"affine.apply affine_map<(d0) -> (d0 * {QUERY_BLOCK})>({blk})")
        n = aff(f"affine.min affine_map<(d0)[s0] -> ({QUERY_BLOCK}, s0 - d0)>({i0})[{seq_size}]")
        r0 = aff(f"affine.apply affine_map<(d0) -> (d0 * {group})>({i0})")
        nr = aff(f"affine.apply affine_map<(d0) -> (d0 * {group})>({n})")
        keys = aff(f"affine.apply affine_map<(d0, d1)[s0] -> (d0 + d1 + s0)>({i0}, {n})[{kv_len}]")
        qs = k.op(
            f"tensor.extract_slice {qg.name}[{c}, {r0}, 0] [1, {nr}, {d}] [1, 1, 1] : {qg.mlir} to "
            f"{builtin_tensor(ctx_t)}",
            ctx_t,
        )
        kst = TensorType((dim, None), q.dtype)
        ks = k.op(
            f"tensor.extract_slice {kt.name}[{c}, 0, 0] [1, {d}, {keys}] [1, 1, 1] : {kt.mlir} to "
            f"{builtin_tensor(kst)}",
            kst,
        )
        vs = k.op(
            f"tensor.extract_slice {vt.name}[{c}, 0, 0] [1, {keys}, {d}] [1, 1, 1] : {vt.mlir} to "
            f"{builtin_tensor(ctx_t)}",
            ctx_t,
        )
        mty = builtin_tensor(dyn2)
        scores = k.op(f"tensor.empty({nr}, {keys}) : {mty}", dyn2)
        scores = k.fill(zero, scores)
        scores = k.op(
            f"linalg.matmul ins({qs.name}, {ks.name} : {qs.mlir}, {ks.mlir}) outs({scores.name} : {mty}) -> {mty}",
            dyn2,
        )

        def visible() -> str:  # row r is query i0 + r floordiv group; it sees keys 0 .. kv_len + i
            r, j = k.scalar("linalg.index 0", "index"), k.scalar("linalg.index 1", "index")
            last = aff(
                f"affine.apply affine_map<(d0, d1)[s0] -> (d0 + d1 floordiv {group} + s0)>({i0}, {r})[{kv_len}]"
            )
            return k.scalar(f"arith.cmpi sle, {j}, {last}", "index")

        probs, total = _softmax_rows(k, scores, visible, normalize=False, sizes=[nr, keys])
        sizes = f"{nr}" if dim.is_const else f"{nr}, {d}"
        ctx = k.op(f"tensor.empty({sizes}) : {builtin_tensor(ctx_t)}", ctx_t)
        ctx = k.fill(zero, ctx)
        ctx = k.op(
            f"linalg.matmul ins({probs.name}, {vs.name} : {probs.mlir}, {vs.mlir}) outs({ctx.name} : {ctx.mlir}) -> {ctx.mlir}",
            ctx_t,
        )
        [ctx] = k.generic(
            [total],
            [ctx],
            ["(r, e) -> (r)", "(r, e) -> (r, e)"],
            ["parallel", "parallel"],
            lambda a: [k.scalar(f"arith.divf {a[1]}, {a[0]}", t)],
        )
        part = k.expand(ctx, [[0, 1, 2], [3]], block4.shape, ["1", n, str(group), d])
        b = aff(f"affine.apply affine_map<(d0) -> (d0 floordiv {kv_heads.value})>({c})")
        h0 = aff(f"affine.apply affine_map<(d0) -> ((d0 mod {kv_heads.value}) * {group})>({c})")
        where = f"[{b}, {i0}, {h0}, 0] [1, {n}, {group}, {d}] [1, 1, 1, 1]"
        k.emit(
            "scf.forall.in_parallel {",
            f"  tensor.parallel_insert_slice {part.name} into {shared.name}{where} : {part.mlir} into {out.mlir}",
            "}",
        )

    lines, _ = k.capture(body)
    k.emit(
        f"{result.name} = scf.forall ({c}, {blk}) in ({heads_kv}, {blocks}) shared_outs({shared.name} = "
        f"{out.name}) -> ({out.mlir}) {{",
        *("  " + line for line in lines),
        "}",
    )
    return result


def cached_attention(
    q: ir.Value, k: ir.Value, v: ir.Value, scale: float | None = None, *, loc: ir.Location | None = None
) -> ir.Value:
    """Causal attention of ``q`` over the caches ``k`` and ``v`` (scale defaults to 1/sqrt(head_dim))."""
    if scale is None:
        head_dim = _rank4(relax_type(k.type), "k").shape[3]
        if head_dim is None or not head_dim.is_const:
            raise ShapeError(f"cached_attention: give the scale explicitly; the head dim is {head_dim}")
        scale = 1.0 / math.sqrt(head_dim.value)
    return CachedAttentionOp.build([q, k, v], {"scale": scale}, loc=loc).result

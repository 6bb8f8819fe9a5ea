"""Fused (flash-style) attention for prefill: ``softmax(mask(q @ kt * scale)) @ v`` without the score matrix.

``relax-fuse-attention`` (``transforms/fuse_attention.py``) makes this op from the unfused chain that
ONNX exporters write (``MatMul -> Div -> Where -> Softmax -> MatMul``); the CPU pipelines run it. The
kernel walks one block of queries at a time over blocks of keys with an online softmax (running row max,
row sum and a rescaled accumulator), so only a ``[QUERY_BLOCK, KEY_BLOCK]`` tile of scores exists at
once, and a causal mask skips the key blocks a query block cannot see.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from mlir import ir

from relax_mlir.dialects.dims import join_dtype, same_dim, tensor_operand
from relax_mlir.dialects.registry import Attr, Operand, RelaxOp, relax_op
from relax_mlir.dialects.types import RelaxType, TensorType
from relax_mlir.errors import ShapeError
from relax_mlir.lowering.kernel import KernelBuilder, KernelValue, builtin_tensor, element

# Queries per block (rows of one score tile) and keys per inner step (its columns): the tile (16 KB)
# stays in L1 next to the block's accumulator.
QUERY_BLOCK = 32
KEY_BLOCK = 128


def _rank4(t: RelaxType | None, name: str) -> TensorType:
    x = tensor_operand(t, name)
    if x.shape is None or len(x.shape) != 4:
        raise ShapeError(f"attention: operand '{name}' must be a rank-4 tensor, got {x}")
    if x.dtype != "f32":  # the kernel's tiles and matmul schedules are written for f32
        raise ShapeError(f"attention: operand '{name}' must be f32, got {x.dtype}")
    return x


@relax_op
class AttentionOp(RelaxOp):
    """Attention of ``q`` [b, h, s, d] over keys ``kt`` [b, h, d, t] (transposed) and values ``v`` [b, h, t, e].

    Scores ``q @ kt * scale`` are replaced by ``mask_value`` where the optional ``mask`` ([s, t] i1) is
    false; with ``causal``, keys ``j > i + t - s`` are left out (as with a ``-inf`` score: a query that sees
    no key, only possible when t < s, gets nan, as numpy would). Softmax over the keys, times ``v``.

    ``%o = "relax.attention"(%q, %kt, %v) {scale = 0.125 : f64, mask_value = -1.0e9 : f64,
    causal = true} : (!relax.tensor<["b", 8, "s", 64], f32>, !relax.tensor<["b", 8, 64, "s"], f32>,
    !relax.tensor<["b", 8, "s", 64], f32>) -> !relax.tensor<["b", 8, "s", 64], f32>``
    """

    NAME = "attention"
    OPERANDS = (Operand("q"), Operand("kt"), Operand("v"), Operand("mask", variadic=True))
    ATTRS = (Attr("scale", "float"), Attr("mask_value", "float"), Attr("causal", "bool"))
    CPU_ONLY = True  # made by relax-fuse-attention, a CPU pass; its kernel loops on the host

    @classmethod
    def deduce(cls, operand_types: Sequence[RelaxType | None], attrs: dict[str, Any]) -> list[RelaxType]:
        q, kt, v = (_rank4(t, n) for t, n in zip(operand_types, ("q", "kt", "v")))
        dtype = join_dtype(q, kt, ("q", "kt"))
        join_dtype(kt, v, ("kt", "v"))
        batch = [same_dim(q.shape[a], kt.shape[a], f"attention: q dim {a} vs kt") for a in (0, 1)]
        for a in (0, 1):
            same_dim(q.shape[a], v.shape[a], f"attention: q dim {a} vs v")
        head = same_dim(q.shape[3], kt.shape[2], "attention: q head dim vs kt dim 2")
        if head is not None and head.is_const and head.value == 0:  # MLIR cannot slice a static 0 dim
            raise ShapeError("attention: the head dim (q dim 3) must not be 0")
        same_dim(kt.shape[3], v.shape[2], "attention: kt keys (dim 3) vs v keys (dim 2)")
        if len(operand_types) > 4:
            raise ShapeError(f"attention: at most one mask, got {len(operand_types) - 3}")
        if len(operand_types) == 4:
            mask = tensor_operand(operand_types[3], "mask")
            if mask.dtype != "i1" or mask.shape is None or len(mask.shape) != 2:
                raise ShapeError(f"attention: mask must be an i1 tensor [s, t], got {mask}")
            same_dim(mask.shape[0], q.shape[2], "attention: mask rows vs queries")
            same_dim(mask.shape[1], kt.shape[3], "attention: mask columns vs keys")
        for name in ("scale", "mask_value"):
            if math.isnan(attrs[name]) or (name == "scale" and math.isinf(attrs[name])):
                raise ShapeError(f"attention: {name} must be a number, got {attrs[name]}")
        return [TensorType((*batch, q.shape[2], v.shape[3]), dtype)]

    @classmethod
    def lower(cls, k: KernelBuilder) -> list[KernelValue]:
        return k.unless_empty([_flash(k)])


def _flash(k: KernelBuilder) -> KernelValue:
    """An ``scf.forall`` over (batch, head, query block); per block an ``scf.for`` over key blocks carrying
    the accumulator [n, e], the row maxima and the row sums (online softmax)."""
    (q, kt, v, *masks), out = k.ins, k.outs[0]
    t = element(q.dtype)
    causal, has_mask = bool(k.attrs["causal"]), bool(masks)
    mask = masks[0] if masks else None
    d, e = k.sizes(q)[3], k.sizes(v)[3]
    seq, keys_total = k.dim(q, 2), k.dim(kt, 3)
    zero, neg_inf = k.constant(0.0, q.dtype), k.constant(float("-inf"), q.dtype)
    scale, fill = k.constant(k.attrs["scale"], q.dtype), k.constant(k.attrs["mask_value"], q.dtype)

    def aff(text: str) -> str:
        name = k.fresh("v")
        k.emit(f"{name} = {text}")
        return name

    blocks = aff(f"affine.apply affine_map<()[s0] -> (s0 ceildiv {QUERY_BLOCK})>()[{seq}]")
    # no keys at all: the product with no values is 0 (as numpy's), not 0 / 0
    no_keys = k.scalar(f"arith.cmpi eq, {keys_total}, {k.const(0)}", "index")
    bi, hi, blk = k.fresh("b"), k.fresh("h"), k.fresh("blk")
    shared = KernelValue(k.fresh("shared"), out.type, out.mlir)
    result = KernelValue(k.fresh("t"), out.type, out.mlir)
    rows_t = TensorType((None,), q.dtype)
    tile_t = TensorType((None, None), q.dtype)
    qs_t = TensorType((None, q.shape[3]), q.dtype)
    ks_t = TensorType((kt.shape[2], None), q.dtype)
    acc_t = TensorType((None, v.shape[3]), q.dtype)
    rows_m, tile_m, acc_m = builtin_tensor(rows_t), builtin_tensor(tile_t), builtin_tensor(acc_t)

    def new(ty: TensorType, *sizes: str) -> KernelValue:
        dyn = [s for s, dim in zip(sizes, ty.shape) if dim is None or not dim.is_const]
        return k.op(f"tensor.empty({', '.join(dyn)}) : {builtin_tensor(ty)}", ty)

    def body() -> None:
        i0 = aff(f"affine.apply affine_map<(d0) -> (d0 * {QUERY_BLOCK})>({blk})")
        n = aff(f"affine.min affine_map<(d0)[s0] -> ({QUERY_BLOCK}, s0 - d0)>({i0})[{seq}]")
        # keys this block can see: with a causal mask, up to its last query's frontier
        keys = (
            aff(
                f"affine.min affine_map<(d0, d1)[s0, s1] -> (s1, d0 + d1 + s1 - s0)>({i0}, {n})[{seq}, {keys_total}]"
            )
            if causal
            else keys_total
        )
        qs = k.op(
            f"tensor.extract_slice {q.name}[{bi}, {hi}, {i0}, 0] [1, 1, {n}, {d}] [1, 1, 1, 1] : {q.mlir} to "
            f"{builtin_tensor(qs_t)}",
            qs_t,
        )
        acc0 = k.fill(zero, new(acc_t, n, e))
        m0 = k.fill(neg_inf, new(rows_t, n))
        l0 = k.fill(zero, new(rows_t, n))
        j0 = k.fresh("j")
        acc, m, l_ = (
            KernelValue(k.fresh(p), x.type, x.mlir) for p, x in (("acc", acc0), ("m", m0), ("l", l0))
        )

        def step() -> tuple[KernelValue, KernelValue, KernelValue]:
            kb = aff(f"affine.min affine_map<(d0)[s0] -> ({KEY_BLOCK}, s0 - d0)>({j0})[{keys}]")
            ks = k.op(
                f"tensor.extract_slice {kt.name}[{bi}, {hi}, 0, {j0}] [1, 1, {d}, {kb}] [1, 1, 1, 1] : {kt.mlir} "
                f"to {builtin_tensor(ks_t)}",
                ks_t,
            )
            vs = k.op(
                f"tensor.extract_slice {v.name}[{bi}, {hi}, {j0}, 0] [1, 1, {kb}, {e}] [1, 1, 1, 1] : {v.mlir} "
                f"to {acc_m}",
                acc_t,
            )
            s0 = k.fill(zero, new(tile_t, n, kb))
            s = k.op(
                f"linalg.matmul ins({qs.name}, {ks.name} : {qs.mlir}, {ks.mlir}) outs({s0.name} : {tile_m}) "
                f"-> {tile_m}",
                tile_t,
            )
            ins = [s]
            if has_mask:
                mt = TensorType((None, None), "i1")
                ins.append(
                    k.op(
                        f"tensor.extract_slice {mask.name}[{i0}, {j0}] [{n}, {kb}] [1, 1] : {mask.mlir} to "
                        f"{builtin_tensor(mt)}",
                        mt,
                    )
                )

            def masked(a: list[str]) -> list[str]:
                val = k.scalar(f"arith.mulf {a[0]}, {scale}", t)
                if causal:  # key j0 + c is visible from query i0 + r when j0 + c <= i0 + r + t - s
                    r, c = k.scalar("linalg.index 0", "index"), k.scalar("linalg.index 1", "index")
                    vis = aff(
                        f"affine.apply affine_map<(d0, d1, d2, d3)[s0, s1] -> (d0 + d1 + s1 - s0 - d2 - d3)>"
                        f"({i0}, {r}, {j0}, {c})[{seq}, {keys_total}]"
                    )
                    ok = k.scalar(f"arith.cmpi sge, {vis}, {k.const(0)}", "index")
                    val = k.scalar(f"arith.select {ok}, {val}, {neg_inf}", t)  # as the skipped key blocks
                if has_mask:  # booleans are stored as bytes
                    ok = k.scalar(f"arith.cmpi ne, {a[1]}, {k.constant(0, 'i8')}", "i8")
                    val = k.scalar(f"arith.select {ok}, {val}, {fill}", t)
                return [val]

            maps2 = ["(r, c) -> (r, c)"] * (len(ins) + 1)
            [s] = k.generic(ins, [s], maps2, ["parallel", "parallel"], masked)
            # every carried value is updated in its own buffer (outs = the iter_arg), so the loop yields
            # the buffers it was given and bufferization adds no per-iteration ownership bookkeeping
            [top] = k.generic(
                [s],
                [k.fill(neg_inf, new(rows_t, n))],
                ["(r, c) -> (r, c)", "(r, c) -> (r)"],
                ["parallel", "reduction"],
                lambda a: [k.scalar(f"arith.maximumf {a[0]}, {a[1]}", t)],
            )

            def rescale(a: list[str]) -> list[str]:  # a[0] tile max, a[1] running max (updated)
                m_new = k.scalar(f"arith.maximumf {a[0]}, {a[1]}", t)
                # a row that is fully masked so far has max -inf: subtract 0 instead (exp gives 0, not nan)
                is_inf = k.scalar(f"arith.cmpf oeq, {m_new}, {neg_inf}", t)
                safe = k.scalar(f"arith.select {is_inf}, {zero}, {m_new}", t)
                return [m_new, safe, k.scalar(f"math.exp {k.scalar(f'arith.subf {a[1]}, {safe}', t)}", t)]

            m_new, safe, alpha = k.generic(
                [top], [m, new(rows_t, n), new(rows_t, n)], ["(r) -> (r)"] * 4, ["parallel"], rescale
            )
            [p] = k.generic(
                [safe],
                [s],
                ["(r, c) -> (r)", "(r, c) -> (r, c)"],
                ["parallel", "parallel"],
                lambda a: [k.scalar(f"math.exp {k.scalar(f'arith.subf {a[1]}, {a[0]}', t)}", t)],
            )
            [total] = k.generic(
                [p],
                [k.fill(zero, new(rows_t, n))],
                ["(r, c) -> (r, c)", "(r, c) -> (r)"],
                ["parallel", "reduction"],
                lambda a: [k.scalar(f"arith.addf {a[0]}, {a[1]}", t)],
            )
            [l_new] = k.generic(
                [alpha, total],
                [l_],
                ["(r) -> (r)"] * 3,
                ["parallel"],
                lambda a: [k.scalar(f"arith.addf {k.scalar(f'arith.mulf {a[2]}, {a[0]}', t)}, {a[1]}", t)],
            )
            [acc_scaled] = k.generic(
                [alpha],
                [acc],
                ["(r, c) -> (r)", "(r, c) -> (r, c)"],
                ["parallel", "parallel"],
                lambda a: [k.scalar(f"arith.mulf {a[1]}, {a[0]}", t)],
            )
            acc_new = k.op(
                f"linalg.matmul ins({p.name}, {vs.name} : {tile_m}, {acc_m}) outs({acc_scaled.name} : {acc_m}) "
                f"-> {acc_m}",
                acc_t,
            )
            return acc_new, m_new, l_new

        lines, (acc1, m1, l1) = k.capture(step)
        accf, mf, lf = (KernelValue(k.fresh("f"), x.type, x.mlir) for x in (acc0, m0, l0))
        k.emit(
            f"{accf.name}, {mf.name}, {lf.name} = scf.for {j0} = {k.const(0)} to {keys} step {k.const(KEY_BLOCK)} "
            f"iter_args({acc.name} = {acc0.name}, {m.name} = {m0.name}, {l_.name} = {l0.name}) -> "
            f"({acc_m}, {rows_m}, {rows_m}) {{",
            *("  " + line for line in lines),
            f"  scf.yield {acc1.name}, {m1.name}, {l1.name} : {acc_m}, {rows_m}, {rows_m}",
            "}",
        )
        [ctx] = k.generic(
            [lf],
            [accf],
            ["(r, c) -> (r)", "(r, c) -> (r, c)"],
            ["parallel", "parallel"],
            lambda a: [
                k.scalar(f"arith.select {no_keys}, {zero}, {k.scalar(f'arith.divf {a[1]}, {a[0]}', t)}", t)
            ],
        )
        where = f"[{bi}, {hi}, {i0}, 0] [1, 1, {n}, {e}] [1, 1, 1, 1]"
        k.emit(
            "scf.forall.in_parallel {",
            f"  tensor.parallel_insert_slice {ctx.name} into {shared.name}{where} : {acc_m} into {out.mlir}",
            "}",
        )

    lines, _ = k.capture(body)
    k.emit(
        f"{result.name} = scf.forall ({bi}, {hi}, {blk}) in ({k.dim(q, 0)}, {k.dim(q, 1)}, {blocks}) "
        f"shared_outs({shared.name} = {out.name}) -> ({out.mlir}) {{",
        *("  " + line for line in lines),
        "}",
    )
    return result


def attention(
    q: ir.Value,
    kt: ir.Value,
    v: ir.Value,
    mask: ir.Value | None,
    scale: float,
    mask_value: float = float("-inf"),
    causal: bool = False,
    *,
    loc: ir.Location | None = None,
) -> ir.Value:
    """``softmax(where(mask, q @ kt * scale, mask_value)) @ v`` (``causal``: also hide later keys)."""
    attrs = {"scale": scale, "mask_value": mask_value, "causal": causal}
    return AttentionOp.build([q, kt, v, *([] if mask is None else [mask])], attrs, loc=loc).result

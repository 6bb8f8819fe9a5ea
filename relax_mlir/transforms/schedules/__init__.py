"""Transform-dialect schedules for kernels, and the ``relax-schedule-kernels`` pass that applies them.

A schedule is a function registered with ``@register_schedule(name, ops=...)`` in a module of this
package; it returns the body of a transform sequence over ``%root`` (the module) whose SSA names end in
the given suffix. The pass runs, in registration order (module name order), every schedule whose
trigger ops occur in the module, all in one ``@__transform_main`` and one transform-interpreter run.
A schedule may also give ``prepare(module)``, run before the transform: it marks the ops to match with
attributes, for choices that transform-dialect matchers cannot express.

The vectorizing schedules vectorize every linalg op of a kernel function (``vectorize_linalg``; tensor
inserts and pads stay tensor ops), including those they do not tile (the
fill that initializes an accumulator, copies, elementwise ops): such an op would become one vector as
large as its static shape, which ``convert-vector-to-scf{full-unroll}`` unrolls into one operation per
row at compile time (a dim of 2**40 never finishes; one over 2**32 aborts LLVM). ``bound_vectors`` tiles
those with a static operand of more than ``MAX_VECTOR`` elements first, to one row of at most
``ROW_TILE`` elements per vector (smaller ones unroll into few vector ops, which compile and run faster).

Register tiles are sized for a ``VectorUnit`` (the pass options ``vector-bits`` and ``vector-registers``):
by default AVX-512's 32 registers of 512 bits; ``compile()``'s CPU target passes its host's (``host_vector_unit``:
AVX2's 16 of 256 bits on a CPU without AVX-512), and the wasm32 target SIMD128's 128 bits and the 16
registers engines give it (x86's xmm0-15), so that tiles do not spill.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from mlir import ir, passmanager
from mlir.dialects import tensor, vector

from relax_mlir.errors import PassError
from relax_mlir.lowering.kernel import DESTINATIONS_ATTR
from relax_mlir.lowering.vectors import feature_registers, host_cpu, parse_features
from relax_mlir.transforms.empty_loops import fold_empty_loops
from relax_mlir.transforms.fuse_kernels import pin_results
from relax_mlir.transforms.registry import register_pass
from relax_mlir.transforms.transform_script import run_transform_script


@dataclass(frozen=True)
class VectorUnit:
    """The vector registers that register tiles are sized for: their width in bits, how many there are, and
    whether the CPU family's matmul tiles are the wide ones (``wide_tiles``, from ``CPU_FAMILIES``).

    The default is AVX-512 (32 registers of 16 f32 lanes). A register tile keeps half the registers as
    accumulators (``tile_rows`` rows of two vectors), the rest holds operands; wide tiles have more rows
    (``matmul_rows``): more independent accumulators hide the FMA latency of a core with two FMA units,
    and each loaded weight vector feeds more of them."""

    bits: int = 512
    registers: int = 32
    wide_tiles: bool = False

    def __post_init__(self) -> None:
        if self.bits < 32 or self.bits % 32 or self.registers < 4:
            raise PassError(
                "vector-bits must be a positive multiple of 32 and vector-registers "
                f"at least 4, got vector-bits={self.bits} vector-registers={self.registers}"
            )

    @property
    def lanes(self) -> int:
        """f32 lanes per vector."""
        return self.bits // 32

    @property
    def tile_rows(self) -> int:
        """Rows of a register tile of two vectors per row (8 for AVX-512, 4 for 16 registers)."""
        return max(1, self.registers // 4)

    @property
    def matmul_rows(self) -> int:
        """Rows of the generated matmul's register tile: ``tile_rows``; wide tiles: as many rows of two
        accumulators as fit beside two weight vectors and one broadcast (12 on AVX-512)."""
        if not self.wide_tiles:
            return self.tile_rows
        return max(self.tile_rows, min(3 * self.tile_rows // 2, (self.registers - 3) // 2))


@dataclass(frozen=True)
class CpuFamily:
    """A family of AVX-512 cores: its LLVM CPU names, features that identify it whatever name LLVM gives
    the host, and whether its matmul register tiles are the wide ones (``VectorUnit.wide_tiles``)."""

    name: str
    cpus: frozenset[str]
    features: frozenset[str]
    wide_tiles: bool


# The CPU families the register tiles are chosen for (``cpu_family``; 512-bit vectors only: other hosts
# and targets keep ``VectorUnit``'s defaults). The matmul register tile is ``VectorUnit.matmul_rows`` rows
# of two vectors, batch_matmul's that many rows of one vector:
#
# | family        | LLVM CPU names (or features)                 | 512-bit FMA/cycle  | matmul tile | batch tile |
# | ------------- | -------------------------------------------- | ------------------ | ----------- | ---------- |
# | zen4          | znver4                                       | 1 (double-pumped)  | 8 x 32      | 8 x 16     |
# | zen5          | znver5                                       | 2                  | 12 x 32     | 12 x 16    |
# | intel-server  | skylake-avx512 ... graniterapids, or any CPU | 2 (ports 0 and 5)  | 8 x 32      | 8 x 16     |
# |               | with amx-tile or avx512fp16 (a Xeon that     |                    |             |            |
# |               | LLVM 22 calls rocketlake)                    |                    |             |            |
# | intel-client  | icelake-client, tigerlake, rocketlake, ...   | 1                  | 8 x 32      | 8 x 16     |
# | (other)       | any other CPU, AOT and wasm targets          | 1                  | 8 x 32      | 8 x 16     |
#
# Measured, one thread, tiles compiled side by side in one process: on Zen 4 (8 x 32 against 6 x 32, 8 x 16
# and others; 12 x 32 ran at 57-90% of numpy where 8 x 32 ran at 84-106%) and on an Intel Xeon
# (emeraldrapids): 12 x 32 ran at 0.49-1.0x the speed of 8 x 32 over 12 sizes (0.49x at 32x768x768, 0.65x at
# 128x768x3072, 0.82x at 1024^3), and 6 x 64, 4 x 64 and 10 x 32 were no faster than 8 x 32; its batch
# tiles 12 x 16 and 8 x 16 were within 15% either way. Zen 5's wide tiles follow from the FMA latency
# (4 cycles x 2 units = 8 FMAs in flight; 12 x 2 = 24 independent accumulators) and are not measured on
# such a machine yet (``relax-schedule-kernels{cpu=znver5}`` compiles them on any machine).
CPU_FAMILIES = (
    CpuFamily("zen4", frozenset({"znver4"}), frozenset(), False),
    CpuFamily("zen5", frozenset({"znver5"}), frozenset(), True),
    CpuFamily(
        "intel-server",
        frozenset(
            {
                "skylake-avx512",
                "cascadelake",
                "cooperlake",
                "icelake-server",
                "sapphirerapids",
                "emeraldrapids",
                "graniterapids",
                "graniterapids-d",
                "diamondrapids",
            }
        ),
        frozenset({"amx-tile", "avx512fp16"}),
        False,
    ),
    CpuFamily(
        "intel-client",
        frozenset({"cannonlake", "icelake-client", "tigerlake", "rocketlake"}),
        frozenset(),
        False,
    ),
)
GENERIC = CpuFamily("generic", frozenset(), frozenset(), False)


def cpu_family(cpu: str, features: Mapping[str, bool]) -> CpuFamily:
    """The family of LLVM CPU ``cpu`` with ``features`` (LLVM's names, e.g. ``{"amx-tile": True}``):
    identifying features first (a Xeon with AMX is a server core whatever LLVM calls it), then the name."""
    for family in CPU_FAMILIES:
        if any(features.get(f, False) for f in family.features):
            return family
    return next((family for family in CPU_FAMILIES if cpu in family.cpus), GENERIC)


def vector_unit(bits: int, registers: int, cpu: str = "host", features: str = "") -> VectorUnit:
    """The ``VectorUnit`` for ``bits``-wide vectors on LLVM CPU ``cpu`` (``host``: this machine; its
    ``features`` when given, else the host's for ``host``): the family's wide tiles apply to 512-bit vectors;
    256-bit ones (AVX2) always have them, every such core having two FMA units of 256 bits."""
    name, found = host_cpu() if cpu == "host" else (cpu, {})
    flags = parse_features(features) if features else found
    wide = bits == 256 or (bits == 512 and cpu_family(name, flags).wide_tiles)
    return VectorUnit(bits, registers, wide)


def host_vector_unit() -> VectorUnit:
    """The ``VectorUnit`` of this machine's vector registers (``lowering/vectors.py``: AVX-512's, else AVX's
    16 of 256 bits...) and CPU family: what ``compile()`` tiles for."""
    registers = feature_registers(host_cpu()[1])
    return vector_unit(registers.bits, registers.count)


@dataclass(frozen=True)
class Schedule:
    """A named transform-dialect schedule, applied when any of ``ops`` occurs in the module; ``body(suffix,
    unit)`` returns its transform IR for the vector unit ``unit``."""

    name: str
    ops: frozenset[str]
    body: Callable[[str, VectorUnit], str]
    prepare: Callable[[ir.Operation], None] | None = None


SCHEDULES: dict[str, Schedule] = {}
BOUND_ATTR = "relax.bound_vector"  # on an op no schedule claims: its loop count, for ``bound_vectors``
BOUND_OPS = frozenset({"linalg.fill", "linalg.copy", "linalg.generic"})
MAX_BOUND_RANK = 8
ROW_TILE = 1024  # innermost elements per vector of a bounded op; the other dims get tile 1
MAX_VECTOR = 64 * ROW_TILE  # static ops up to this many elements are vectorized whole ...
MAX_ROWS = 64  # ... and up to this many rows (full unrolling makes one op per row) ...
MAX_TRANSPOSED = 1024  # ... and elements, when an operand is read transposed (unrolled per element)


def register_schedule(
    name: str, *, ops: tuple[str, ...], prepare: Callable[[ir.Operation], None] | None = None
) -> Callable[[Callable[[str, VectorUnit], str]], Callable]:
    """Register ``fn(suffix, unit) -> transform IR`` as the schedule ``name``, triggered by ``ops``."""

    def wrap(fn: Callable[[str, VectorUnit], str]) -> Callable[[str, VectorUnit], str]:
        SCHEDULES[name] = Schedule(name, frozenset(ops), fn, prepare)
        return fn

    return wrap


def mark_unclaimed(module: ir.Operation) -> None:
    """Mark the fills, copies and generics that no schedule claimed (none has a ``relax.`` attribute)
    with their loop count (``BOUND_ATTR``), for ``bound_vectors``."""
    i64 = ir.IntegerType.get_signless(64)

    def visit(op: ir.Operation) -> ir.WalkResult:
        if (
            op.name in BOUND_OPS
            and len(op.results) == 1
            and isinstance(op.results[0].type, ir.RankedTensorType)
        ):
            if not any(name.startswith("relax.") for name in op.attributes) and _large(op):
                if op.name == "linalg.generic":
                    loops = len(ir.ArrayAttr(op.attributes["iterator_types"]))
                else:
                    loops = op.results[0].type.rank
                if 1 <= loops <= MAX_BOUND_RANK:
                    op.attributes[BOUND_ATTR] = ir.IntegerAttr.get(i64, loops)
        return ir.WalkResult.ADVANCE

    module.walk(visit, ir.WalkOrder.PRE_ORDER)


def _large(op: ir.Operation) -> bool:
    """Whether an operand or result of ``op`` is static and has more than ``MAX_VECTOR`` elements or
    ``MAX_ROWS`` rows (dynamic ones are not vectorized whole; small ones unroll into few vector ops,
    which compile faster than row loops). Rows count too: a ``vector<75x25x25xf32>`` has few elements
    but unrolls into thousands of row operations, and a transposed read into one per element."""
    limit = MAX_TRANSPOSED if _transposes(op) else MAX_VECTOR
    for v in [*op.operands, *op.results]:
        t = v.type
        if not (isinstance(t, ir.RankedTensorType) and t.has_static_shape):
            continue
        if math.prod(t.shape) > limit or math.prod(t.shape[:-1]) > MAX_ROWS:
            return True
    return False


def _transposes(op: ir.Operation) -> bool:
    """Whether vectorizing generic ``op`` whole transposes a vector: an operand indexed by other than
    the trailing loops in order (a broadcast adds leading dims only; any other placement is a transpose)."""
    if op.name != "linalg.generic":
        return False
    loops = len(ir.ArrayAttr(op.attributes["iterator_types"]))
    for m in ir.ArrayAttr(op.attributes["indexing_maps"]):
        results = [str(r) for r in ir.AffineMapAttr(m).value.results]
        if results != [f"d{i}" for i in range(loops - len(results), loops)]:
            return True
    return False


MARKER_ATTRS = {BOUND_ATTR}  # attributes the schedules set for their matches (``unmark`` removes them)


def unmark(module: ir.Operation) -> None:
    def visit(op: ir.Operation) -> ir.WalkResult:
        for name in MARKER_ATTRS:
            if name in op.attributes:
                del op.attributes[name]
        return ir.WalkResult.ADVANCE

    module.walk(visit, ir.WalkOrder.PRE_ORDER)


def bound_vectors(f: str = "%f") -> str:
    """Transform IR tiling the marked ops (``mark_unclaimed``) of function ``f`` to rows of at most
    ``ROW_TILE`` elements, so that vectorizing ``f`` makes no vector larger than that."""
    out = []
    for r in range(1, MAX_BOUND_RANK + 1):
        tiles = [1] * (r - 1) + [ROW_TILE]
        out.append(f"""      %vb{r} = transform.structured.match attributes{{{BOUND_ATTR} = {r} : i64}} in {f} : (!transform.any_op) -> !transform.any_op
      transform.foreach %vb{r} : !transform.any_op {{
      ^bb0(%vbop: !transform.any_op):
        %vbt, %vbl:{r} = transform.structured.tile_using_for %vbop tile_sizes {tiles} : (!transform.any_op) -> ({", ".join(["!transform.any_op"] * (r + 1))})
      }}
""")
    return "".join(out)


def vectorize_linalg(f: str = "%f", fv: str = "%fv") -> str:
    """Transform IR vectorizing the linalg ops of function ``f`` that have static shapes (others stay
    loops), then the clean-up patterns of ``vectorize_children_and_apply_patterns``; ``fv`` names ``f``.

    Not ``vectorize_children_and_apply_patterns`` itself: it also vectorizes every ``tensor.insert_slice``
    and ``tensor.pad`` of static shape into one vector of the whole slice (the im2col conv's padded
    planes and rows: a ``vector<64x512x512xf32>``, or one of 2**40 lanes that aborts LLVM). Left as
    tensor ops, they bufferize to copies of subviews."""
    return f"""      %vl = transform.structured.match interface{{LinalgOp}} in {f} : (!transform.any_op) -> !transform.any_op
      transform.foreach %vl : !transform.any_op {{
      ^bb0(%vlop: !transform.any_op):
        transform.sequence %vlop : !transform.any_op failures(suppress) {{
        ^bb0(%vlone: !transform.any_op):
          transform.structured.vectorize %vlone : !transform.any_op
        }}
      }}
      transform.apply_patterns to {f} {{
        transform.apply_patterns.vector.transfer_permutation_patterns
        transform.apply_patterns.vector.reduction_to_contract
        transform.apply_patterns.vector.sink_ops
        transform.apply_patterns.tensor.fold_tensor_subset_ops_into_vector_transfers
        transform.apply_patterns.canonicalization
      }} : !transform.any_op
      {fv} = transform.cast {f} : !transform.any_op to !transform.any_op
"""


def vectorize_to_outer_products(extra_patterns: str = "", masked: str = "") -> str:
    """Transform IR on a function handle ``%f`` whose contractions are tiled to static register tiles:
    canonicalize the loops, apply ``masked`` (transform IR vectorizing the dynamic remainder tiles with
    masks, ``masked_vectorize``), vectorize, hoist the accumulators out of the reduction loops (loop-invariant
    subsets), apply ``extra_patterns`` (pattern ops, one per line), then lower contractions to outer
    products (FMAs) and the multi-reductions of small static generics next to them (a softmax row block)
    to reductions of rows. Shared by the matmul schedules."""
    extra = "".join(f"        {line.strip()}\n" for line in extra_patterns.strip().splitlines())
    extra_block = (
        f"""      transform.apply_patterns to %fv {{
{extra}        transform.apply_patterns.canonicalization
      }} : !transform.any_op
"""
        if extra
        else ""
    )
    # a masked tile's size and mask are computed in the loop body: move them out, so that its subsets are
    # loop-invariant and the accumulator is hoisted like a static tile's
    licm = "        transform.apply_licm to %l : !transform.any_op\n" if masked else ""
    return f"""{bound_vectors()}      transform.apply_patterns to %f {{
        transform.apply_patterns.scf.for_loop_canonicalization
        transform.apply_patterns.canonicalization
      }} : !transform.any_op
{masked}{vectorize_linalg()}      transform.apply_patterns to %fv {{
        transform.apply_patterns.canonicalization
      }} : !transform.any_op
      %loops = transform.structured.match ops{{["scf.for"]}} in %fv : (!transform.any_op) -> !transform.any_op
      transform.foreach %loops : !transform.any_op {{
      ^bb0(%l: !transform.any_op):
{licm}        transform.loop.hoist_loop_invariant_subsets %l : !transform.any_op
      }}
{extra_block}      transform.apply_patterns to %fv {{
        transform.apply_patterns.vector.lower_contraction lowering_strategy = "outerproduct"
        transform.apply_patterns.vector.lower_outerproduct
        transform.apply_patterns.vector.lower_multi_reduction lowering_strategy = "innerreduction"
        transform.apply_patterns.canonicalization
      }} : !transform.any_op
"""


def masked_vectorize(op: str, sizes: tuple[int, ...], f: str = "%f", tag: str = "") -> str:
    """Transform IR vectorizing every ``op`` of function ``f`` to vectors of ``sizes`` (its register
    tile), masked where a dim is dynamic: the peeled remainder tiles of an odd-sized matmul (at most one
    register tile each) become masked loads, FMAs and stores instead of scalar loops. An op whose dims
    have no such bound stays as it is (``vectorize_linalg`` then leaves it to loops)."""
    h = op.replace("linalg.", "") + tag
    return f"""      %mv_{h} = transform.structured.match ops{{["{op}"]}} in {f} : (!transform.any_op) -> !transform.any_op
      transform.foreach %mv_{h} : !transform.any_op {{
      ^bb0(%mvop: !transform.any_op):
        transform.sequence %mvop : !transform.any_op failures(suppress) {{
        ^bb0(%mvone: !transform.any_op):
          transform.structured.vectorize %mvone vector_sizes {list(sizes)} {{create_named_contraction}} : !transform.any_op
        }}
      }}
      transform.apply_patterns to {f} {{
        transform.apply_patterns.vector.lower_masked_transfers
        transform.apply_patterns.tensor.fold_tensor_subset_ops_into_vector_transfers
        transform.apply_patterns.canonicalization
      }} : !transform.any_op
"""


def scalar_broadcast_reads(module: ir.Operation) -> int:
    """Replace each ``vector.transfer_read`` of a tensor that reads one element and broadcasts it (a bias
    per channel, read for a row of outputs: ``(d0, d1, d2) -> (d0, 0, 0)`` into ``vector<1x1x64xf32>``) by
    ``tensor.extract`` + ``vector.broadcast``. ``convert-vector-to-scf`` would lower the read to one
    scalar load per lane. Returns how many were replaced."""
    reads: list[ir.Operation] = []

    def visit(op: ir.Operation) -> ir.WalkResult:
        if op.name == "vector.transfer_read" and _reads_one_element(op):
            reads.append(op)
        return ir.WalkResult.ADVANCE

    module.walk(visit)
    for op in reads:
        source, *rest = list(op.operands)
        rank = ir.RankedTensorType(source.type).rank
        with ir.InsertionPoint(op), op.location:
            scalar = tensor.ExtractOp(source, rest[:rank]).result
            op.results[0].replace_all_uses_with(vector.BroadcastOp(op.results[0].type, scalar).result)
        op.erase()
    return len(reads)


def _reads_one_element(op: ir.Operation) -> bool:
    """Whether transfer_read ``op`` of a tensor, unmasked and in bounds, has a vector dim per map result
    that is either a broadcast (result ``0``) or of size 1, with at least one broadcast."""
    source = op.operands[0].type
    if not isinstance(source, ir.RankedTensorType) or len(op.operands) != 2 + source.rank:
        return False  # a mask operand, or not a tensor
    m = ir.AffineMapAttr(op.attributes["permutation_map"]).value
    shape = ir.VectorType(op.results[0].type).shape
    results = [str(r) for r in m.results]
    in_bounds = [ir.BoolAttr(b).value for b in ir.ArrayAttr(op.attributes["in_bounds"])]
    if "0" not in results or not all(in_bounds):
        return False
    return all(r == "0" or n == 1 for r, n in zip(results, shape, strict=True))


def _present_ops(root: ir.Operation, wanted: set[str]) -> set[str]:
    found: set[str] = set()

    def visit(op: ir.Operation) -> ir.WalkResult:
        if op.name in wanted:
            found.add(op.name)
        return ir.WalkResult.ADVANCE

    root.walk(visit, ir.WalkOrder.PRE_ORDER)
    return found


@register_pass("relax-schedule-kernels")
class ScheduleKernels:
    """Tile and vectorize kernels with the registered transform-dialect schedules (on tensors)."""

    vector_bits: int = VectorUnit.bits
    vector_registers: int = VectorUnit.registers
    cpu: str = "host"  # the LLVM CPU name whose family (``CPU_FAMILIES``) the tiles are chosen for
    cpu_features: str = ""  # its LLVM features (``+amx-tile,...``), when not the host's

    def run(self, module: ir.Operation) -> None:
        unit = vector_unit(self.vector_bits, self.vector_registers, self.cpu, self.cpu_features)
        fold_empty_loops(module)
        wanted = {op for s in SCHEDULES.values() for op in s.ops}
        present = _present_ops(module, wanted)
        active = [s for s in SCHEDULES.values() if s.ops & present]
        if not active:
            return
        for s in active:
            if s.prepare is not None:
                s.prepare(module)
        # fold sizes known as constants into static shapes first: the sizes ``mark_unclaimed`` judges
        passmanager.PassManager.parse("builtin.module(func.func(canonicalize))").run(module)
        mark_unclaimed(module)
        try:
            run_transform_script(module, "".join(s.body(f"_{i}", unit) for i, s in enumerate(active)))
        finally:
            unmark(module)
        scalar_broadcast_reads(module)
        # canonicalization may fold a kernel's write into its destination away (an identity copy
        # becomes ``return %input``); the host relies on every result being in its destination
        for op in module.regions[0].blocks[0].operations:
            if DESTINATIONS_ATTR in op.operation.attributes:
                pin_results(op.operation)

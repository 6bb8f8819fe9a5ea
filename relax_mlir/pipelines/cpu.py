"""The CPU pipelines: relax to host code at each optimization level, host code to LLVM, and both.

| level | relax-level passes (around ``relax-lower-host``) |
| --- | --- |
| ``relax-O0`` | verify, infer shapes, lift load-time computations (``relax-lift-load-time-params``), lower
  every op to a kernel |
| ``relax-O1`` | + cleanups (canonicalize, fold constants, CSE, DCE), matmuls by quantized weights fused
  (``relax-fuse-dequantize-matmul``), constant weights packed at compile time (``relax-pack-weights``;
  load-time parameter weights at load: ``relax-lift-load-time-params``), kernels scheduled
  (``relax-schedule-kernels``: matmuls, packed matmuls, convs, pooling, row reductions) |
| ``relax-O2`` | + small or once-called private relax functions inlined (``relax-inline``), fusion
  (``relax-fuse-ops`` / ``relax-fuse-kernels``; attention chains to flash-style ``relax.attention``:
  ``relax-fuse-attention``), static memory planning, kernels split over threads
  (``relax-parallelize-kernels``, OpenMP) |
| ``relax-O3`` | + other matmuls (and their bias) offloaded to OpenBLAS (``relax-dispatch-blas``) |

Every level's LLVM lowering (``host-to-llvm``) also vectorizes reductions and inlines exp/erf/tanh
(``relax-reassociate-reductions``, ``relax-approximate-math``). ``compile(opt_level=n)`` runs
``relax-O<n>`` then ``host-to-llvm`` (LLVM at -O<n>, at most -O2: ``codegen.llvm_level``);
``relax-to-host`` is ``relax-O3``; the ``cpu`` pipeline (``relax-to-host,host-to-llvm``) is registered by
the CPU target (``targets/cpu.py``). Every pipeline here is a list of elements (``data.py``).
"""

from __future__ import annotations

from relax_mlir.pipelines.data import P, Pipeline, passes, text
from relax_mlir.pipelines.registry import register_pipeline
from relax_mlir.transforms.schedules import VectorUnit

VERIFY = passes("relax-verify", "relax-specialize-ranks", "relax-infer-shapes", "relax-bind-region-dims")


INLINE_MAX_OPS = 64


def cleanup(opt_level: int) -> Pipeline:
    """Relax-level cleanups; constants are folded by compiling them at ``opt_level``. From O2, small (or
    once-called) private relax functions are inlined first, so fusion sees across the call, and batch norms
    with constant statistics are folded into the convolutions before them (not exact: a rounding differs)."""
    inline = [P("relax-inline", max_ops=INLINE_MAX_OPS)] if opt_level >= 2 else []
    fold_bn = [P("relax-fold-batch-norm")] if opt_level >= 2 else []
    return [
        *inline,
        P("relax-canonicalize"),
        *fold_bn,
        P("relax-fold-constants", opt_level=opt_level),
        P("relax-cse"),
        P("relax-dce"),
    ]


def relax_level(opt_level: int, vectors: VectorUnit | None = None, cpu: str | None = None) -> Pipeline:
    """``relax-O<opt_level>``: relax to host code (kernels scheduled, parallelized, BLAS as the level says).

    ``vectors``: the vector registers that packed weights and register tiles are sized for, when they are
    not the default (AVX-512's); e.g. the host's for ``compile()`` (``host_vector_unit``), ``VectorUnit(128,
    16)`` for wasm32's SIMD128.
    ``cpu``: the LLVM CPU whose family the register tiles are chosen for, when not this host
    (``relax-schedule-kernels{cpu=...}``; ``generic`` for code meant for other machines)."""
    lift = P("relax-lift-load-time-params")
    if opt_level == 0:
        return [*VERIFY, lift, *passes("convert-relax-to-linalg", "relax-lower-host")]
    unit = {} if vectors is None or vectors == VectorUnit() else {"vector_bits": vectors.bits}
    tiles = unit and {**unit, "vector_registers": vectors.registers}  # type: ignore[union-attr]
    pack = [P("relax-pack-weights", opt_level=opt_level, **unit)]
    schedule = P("relax-schedule-kernels", **tiles, **({"cpu": cpu} if cpu else {}))
    # before relax-fold-constants, which would dequantize constant weights into f32 ones
    fuse = passes("relax-fuse-dequantize-matmul")
    if opt_level == 1:
        return [
            *VERIFY,
            *fuse,
            *cleanup(1),
            *pack,
            lift,
            *passes("convert-relax-to-linalg", "relax-lower-host"),
            schedule,
        ]
    blas = passes("relax-dispatch-blas") if opt_level >= 3 else []
    return [
        *VERIFY,
        *fuse,
        *cleanup(opt_level),
        *passes("relax-fuse-attention"),
        *pack,
        lift,
        *blas,
        *passes(
            "relax-fuse-ops",
            "convert-relax-to-linalg",
            "relax-fuse-kernels",
            "relax-plan-memory",
            "relax-lower-host",
            "relax-parallelize-kernels",
        ),
        schedule,
    ]


BUFFERIZE: Pipeline = [
    P(
        "one-shot-bufferize",
        bufferize_function_boundaries=True,
        function_boundary_type_conversion="identity-layout-map",
        allow_return_allocs_from_loops=True,  # an scf.while carries tensors whose size changes per iteration
    ),
    P("canonicalize"),
    # temporaries of row-fused kernels (transforms/schedules/rows.py) are allocated once, not once per row
    P("func.func", nested=passes("buffer-loop-hoisting")),
    P("relax-return-destinations"),  # a kernel's destination viewed back through a reshape: the argument
    P("drop-equivalent-buffer-results"),
    # buffer-deallocation-pipeline, spelled out to split multi-buffer deallocs (relax-split-deallocs)
    P("expand-realloc", emit_deallocs=False),
    *passes(
        "canonicalize",
        "relax-thread-buffers",  # each block uses only its own buffers (deallocation aborts otherwise)
        "ownership-based-buffer-deallocation",
        "canonicalize",
        "buffer-deallocation-simplification",
        "relax-split-deallocs",
        "bufferization-lower-deallocations",
        "cse",
        "canonicalize",
        "canonicalize",
    ),
]

TO_LLVM: Pipeline = [
    *passes(
        "relax-lower-parallel",
        "relax-reassociate-reductions",
        "convert-linalg-to-loops",
        "relax-approximate-math",
    ),
    P("convert-vector-to-scf", full_unroll="true"),
    P("relax-fuse-multiply-add"),
    # before the vector lowering: libm calls on vectors (f64 erf) are unrolled into vector.extract/insert
    P("math-expand-ops", ops="rsqrt,exp2,fpowi"),
    *passes(
        "convert-math-to-libm",
        "convert-vector-to-llvm",
        "convert-bufferization-to-memref",
        "relax-check-llvm-lowerable",
        "lower-affine",
        "convert-scf-to-cf",
        "expand-strided-metadata",
        "lower-affine",
        "finalize-memref-to-llvm",
        "convert-math-to-llvm",
        "convert-arith-to-llvm",
        "convert-index-to-llvm",
        "convert-cf-to-llvm",
        "convert-func-to-llvm",
        "convert-ub-to-llvm",
        "convert-openmp-to-llvm",
        "reconcile-unrealized-casts",
    ),
]


# Upstream passes that rewrite each function on its own (no symbols added, nothing outside the function
# read): ``per_function`` nests them under the functions, which MLIR then lowers on all cores.
FUNCTION_LOCAL = frozenset(
    {
        "canonicalize",
        "cse",
        "buffer-deallocation-simplification",
        "convert-linalg-to-loops",
        "convert-vector-to-scf",
        "math-expand-ops",
        "lower-affine",
        "convert-scf-to-cf",
        "expand-strided-metadata",
        "convert-math-to-llvm",
        "convert-arith-to-llvm",
        "convert-index-to-llvm",
        "convert-ub-to-llvm",
    }
)


def per_function(pipeline: Pipeline) -> Pipeline:
    """``pipeline`` with each run of consecutive ``FUNCTION_LOCAL`` passes nested under the functions
    (``func.func``, ``llvm.func`` after ``convert-func-to-llvm``): MLIR runs a nested pipeline on the
    functions in parallel, on its context's threads, and the IR it produces is the same as at module level
    (a module-level run of these passes only visits the functions one after the other). The lowering of a
    model's kernels is most of ``host-to-llvm``'s time (the 12-layer LLM: about 1.2 of 2.1 s)."""
    out: Pipeline = []
    run: Pipeline = []
    anchor = "func.func"
    for element in [*pipeline, None]:
        if element is not None and element.name in FUNCTION_LOCAL and element.nested is None:
            run.append(element)
            continue
        if element is not None and element.name == anchor and element.nested is not None:
            run.extend(element.nested)  # already nested: one pipeline per function with its neighbours
            continue
        if run:
            out.append(P(anchor, nested=run))
            run = []
        if element is not None:
            out.append(element)
            if element.name == "convert-func-to-llvm":
                anchor = "llvm.func"
    return out


def host_to_llvm() -> Pipeline:
    """The upstream passes from host code and tensor kernels to the LLVM dialect, function-local ones on
    each function in parallel (``per_function``)."""
    return per_function([*BUFFERIZE, *TO_LLVM])


LEVELS = {n: text(relax_level(n)) for n in range(4)}  # as text, for tests and benchmarks that edit it
SUMMARIES = {
    0: "Relax to host code without optimizations: every op its own kernel, untiled",
    1: "Relax to host code with relax-level cleanups, packed constant weights and scheduled kernels",
    2: "O1 plus operator fusion, static memory planning and multi-threaded kernels",
    3: "O2 plus offload of the remaining matmuls to OpenBLAS (numpy's)",
}

for _level in range(4):
    register_pipeline(f"relax-O{_level}", relax_level(_level), SUMMARIES[_level])
register_pipeline(
    "relax-to-host", [P("relax-O3")], "Lower relax functions to host code calling kernels (relax-O3)"
)
register_pipeline(
    "host-to-llvm",
    [P("builtin.module", nested=host_to_llvm())],
    "Bufferize host code and kernels and lower them to LLVM",
)

"""The CPU pipelines: relax to host code at each optimization level, host code to LLVM, and both.

| level | relax-level passes (around ``relax-lower-host``) |
| --- | --- |
| ``relax-O0`` | verify, infer shapes, lower every op to a kernel |
| ``relax-O1`` | + cleanups (canonicalize, fold constants, CSE, DCE), constant weights packed at compile time
  (``relax-pack-weights``), kernels scheduled (``relax-schedule-kernels``: matmuls, packed matmuls, convs,
  pooling, row reductions) |
| ``relax-O2`` | + fusion (``relax-fuse-ops`` / ``relax-fuse-kernels``), static memory planning, kernels split
  over threads (``relax-parallelize-kernels``, OpenMP) |
| ``relax-O3`` | + other matmuls (and their bias) offloaded to OpenBLAS (``relax-dispatch-blas``) |

Every level's LLVM lowering (``host-to-llvm``) also vectorizes reductions and inlines exp/erf/tanh
(``relax-reassociate-reductions``, ``relax-approximate-math``). ``compile(opt_level=n)`` runs
``relax-O<n>`` then ``host-to-llvm`` (LLVM at -O<n>, at most -O2: ``codegen.llvm_level``);
``relax-to-host`` is ``relax-O3`` and ``cpu`` is ``relax-to-host,host-to-llvm``.
"""

from __future__ import annotations

from relax_mlir.pipelines.registry import register_pipeline
from relax_mlir.runtime.codegen import llvm_pipeline

VERIFY = "relax-verify,relax-infer-shapes"


def cleanup(opt_level: int) -> str:
    """Relax-level cleanups; constants are folded by compiling them at ``opt_level``."""
    return f"relax-canonicalize,relax-fold-constants{{opt-level={opt_level}}},relax-cse,relax-dce"


LEVELS = {
    0: f"{VERIFY},convert-relax-to-linalg,relax-lower-host",
    1: f"{VERIFY},{cleanup(1)},relax-pack-weights{{opt-level=1}},convert-relax-to-linalg,relax-lower-host,relax-schedule-kernels",
    2: (
        f"{VERIFY},{cleanup(2)},relax-pack-weights{{opt-level=2}},relax-fuse-ops,convert-relax-to-linalg,relax-fuse-kernels,relax-plan-memory,"
        "relax-lower-host,relax-parallelize-kernels,relax-schedule-kernels"
    ),
    3: (
        f"{VERIFY},{cleanup(3)},relax-pack-weights{{opt-level=3}},relax-dispatch-blas,relax-fuse-ops,convert-relax-to-linalg,relax-fuse-kernels,"
        "relax-plan-memory,relax-lower-host,relax-parallelize-kernels,relax-schedule-kernels"
    ),
}
SUMMARIES = {
    0: "Relax to host code without optimizations: every op its own kernel, untiled",
    1: "Relax to host code with relax-level cleanups, packed constant weights and scheduled kernels",
    2: "O1 plus operator fusion, static memory planning and multi-threaded kernels",
    3: "O2 plus offload of the remaining matmuls to OpenBLAS (numpy's)",
}

for _level, _pipeline in LEVELS.items():
    register_pipeline(f"relax-O{_level}", _pipeline, SUMMARIES[_level])
register_pipeline(
    "relax-to-host", "relax-O3", "Lower relax functions to host code calling kernels (relax-O3)"
)
register_pipeline("host-to-llvm", llvm_pipeline(), "Bufferize host code and kernels and lower them to LLVM")
register_pipeline(
    "cpu", "relax-to-host,host-to-llvm", "Everything from relax to the LLVM dialect, for the CPU"
)

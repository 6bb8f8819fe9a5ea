"""``relax-gpu-prepare-kernels``: kernels in a form the loop mapping puts on the GPU.

A copy inside a kernel (``memref.copy``, from bufferization) would run on the host as a ``memcpy``; it
becomes a ``linalg.copy``, which ``convert-linalg-to-parallel-loops`` turns into a parallel loop. Matmul-like
ops on f32 become the shared-memory tiled kernel of ``matmul.py``; row reductions run one warp per output
(``reductions.py``).
"""

from __future__ import annotations

from mlir import ir
from mlir.dialects import linalg

from relax_mlir.transforms.gpu import matmul, reductions
from relax_mlir.transforms.gpu.ir_util import collect, kernels
from relax_mlir.transforms.registry import register_pass


@register_pass("relax-gpu-prepare-kernels")
class GpuPrepareKernels:
    """Kernel copies to linalg.copy, f32 matmuls to shared-memory tiles, row reductions to one warp per row."""

    tile_matmuls: bool = True
    reduce_rows: bool = True

    def run(self, module: ir.Operation) -> None:
        for func in kernels(module):
            for op in collect(func, {"memref.copy"}):
                with ir.InsertionPoint(op), op.location:
                    linalg.copy(op.operands[0], outs=[op.operands[1]])
                op.erase()
            if self.tile_matmuls:
                matmul.tile_matmuls(module, func)
            if self.reduce_rows:
                reductions.reduce_rows(func)

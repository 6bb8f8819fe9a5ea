"""The WebGPU pipeline: host code to LLVM host code with SPIR-V kernels (``targets/webgpu.py``).

The relax level and the loop mapping are the CUDA target's (``pipelines/gpu.py``: ``relax-to-host-gpu``,
kernels to launches of ``block_size`` threads). What differs: buffers are device memory the host cannot
address (``relax-gpu-device-memory``), kernels take flat storage buffers and one params buffer
(``relax-spirv-kernel-abi``), and each ``gpu.module`` is lowered to SPIR-V 1.3 for the Vulkan/WebGPU
shader environment (``convert-gpu-to-spirv``: 32-bit indices) and serialized into a ``gpu.binary`` that the
host loads through ``mgpuModuleLoad`` (``targets/webgpu_runtime.py`` implements the ``mgpu*`` calls on wgpu).

Sub-32-bit integers are emulated in 32-bit words (WGSL has no 8-bit storage); 16-bit floats, 64-bit
integers and floats are used as SPIR-V capabilities, which the runtime checks against the adapter's features.
"""

from __future__ import annotations

from relax_mlir.pipelines.cpu import BUFFERIZE
from relax_mlir.pipelines.data import P, Pipeline, passes
from relax_mlir.pipelines.gpu import host_to_llvm_gpu
from relax_mlir.pipelines.registry import register_pipeline
from relax_mlir.transforms.gpu.memory import MAX_GRID_X

# what the SPIR-V lowering may use; spirv-update-vce keeps what each kernel needs
CAPABILITIES = (
    "Shader,Int64,Float16,Float64,StorageBuffer16BitAccess,GroupNonUniform,GroupNonUniformArithmetic,"
    "GroupNonUniformShuffle"
)
EXTENSIONS = "SPV_KHR_storage_buffer_storage_class,SPV_KHR_16bit_storage"

KERNELS_TO_SPIRV = P(
    "relax-gpu-kernels-to-spirv", version="v1.3", capabilities=CAPABILITIES, extensions=EXTENSIONS
)


def host_to_webgpu(block_size: int = 256) -> Pipeline:
    """The passes from host code and tensor kernels to LLVM host code with SPIR-V ``gpu.binary``s."""
    return [
        *BUFFERIZE,
        P("relax-gpu-prepare-kernels", reduce_rows=False),
        P("func.func", nested=passes("convert-linalg-to-parallel-loops")),
        P("relax-gpu-map-loops", block_size=block_size, max_grid_x=MAX_GRID_X),
        P("relax-gpu-device-memory"),
        P("gpu-kernel-outlining"),
        KERNELS_TO_SPIRV,
        *host_to_llvm_gpu(),
    ]


register_pipeline(
    "host-to-webgpu",
    host_to_webgpu(),
    "Map kernels to workgroups, device memory, SPIR-V kernels (WebGPU ABI) and LLVM host code",
)

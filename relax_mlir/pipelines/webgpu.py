"""The WebGPU pipeline: host code to LLVM host code with SPIR-V kernels (``targets/webgpu.py``).

The relax level and the loop mapping are the CUDA target's (``pipelines/gpu.py``: ``relax-to-host-gpu``,
kernels to launches of ``block_size`` threads). What differs: buffers are device memory the host cannot
address (``relax-gpu-device-memory``), kernels take flat storage buffers and one params buffer
(``relax-spirv-kernel-abi``), and each ``gpu.module`` is lowered to SPIR-V 1.3 for the Vulkan/WebGPU
shader environment (``convert-gpu-to-spirv``: 32-bit indices) and serialized into a ``gpu.binary`` that the
host loads through ``mgpuModuleLoad`` (``targets/webgpu_runtime.py`` implements the ``mgpu*`` calls on wgpu).

8- and 16-bit integers are emulated in 32-bit words (WGSL has neither, nor does naga take them from SPIR-V);
16-bit floats, 64-bit integers and floats are used as SPIR-V capabilities, which the runtime checks against the
adapter's features. A kernel gets 16-bit storage only when it holds f16 (it cannot then also hold i16).
"""

from __future__ import annotations

from relax_mlir.pipelines.cpu import BUFFERIZE
from relax_mlir.pipelines.data import P, Pipeline, passes, replace
from relax_mlir.pipelines.gpu import host_to_llvm_gpu, relax_to_host_gpu
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


# WebGPU's default maxStorageBufferBindingSize: storages sized by upper bounds stay below it (a buffer is real
# memory on a GPU, not a lazily mapped range as on the CPU or in CUDA's managed memory)
MAX_STATIC_BYTES = 128 << 20


def relax_to_host_webgpu() -> Pipeline:
    """The CUDA target's relax level, with memory planned for real device buffers: a tensor whose upper
    bound is over ``MAX_STATIC_BYTES`` (attention scores at b=16, s=2048: 2 GiB) gets its actual size."""
    return replace(
        relax_to_host_gpu(), "relax-plan-memory", [P("relax-plan-memory", max_static_bytes=MAX_STATIC_BYTES)]
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
    "relax-to-host-webgpu",
    relax_to_host_webgpu(),
    "Relax to host code for WebGPU: the GPU relax level, storages of bounded size",
)
register_pipeline(
    "host-to-webgpu",
    host_to_webgpu(),
    "Map kernels to workgroups, device memory, SPIR-V kernels (WebGPU ABI) and LLVM host code",
)

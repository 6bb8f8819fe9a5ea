"""The CUDA target: kernels mapped to GPU blocks and threads, memory the host and device share, PTX.

``loops.py`` (``relax-gpu-map-loops``) and ``matmul.py`` (``relax-gpu-prepare-kernels``) put kernels on the
GPU, ``memory.py`` (``relax-gpu-managed-memory``) gives them memory, ``target.py`` finds the CUDA toolkit
pieces (libdevice, ptxas) and attaches the NVVM target, and ``codegen.py`` holds the pipelines and builds
the object code. ``compile(module, target="cuda")`` (``targets/cuda.py``) uses all of them.
"""

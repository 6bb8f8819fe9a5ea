"""Serve a page that runs a relax_mlir kernel with WebGPU in the browser (WGSL translated from SPIR-V by naga).

    python examples/webgpu/serve.py --kernels DIR     # a directory written by relax_mlir.targets.wgsl.write_kernels
    python examples/webgpu/serve.py --port 0          # compiles the example below with target="webgpu"

Without ``--kernels`` the example relax function ``exp(a + b)`` (symbolic length ``n``) is compiled with
``relax_mlir.compile(..., target="webgpu")`` and its kernels are written with ``write_kernels`` (a temporary
directory unless ``--out``). A tiny static server on the loopback interface serves ``index.html`` and
``app.mjs`` from this folder and the kernels under ``/kernels/``; open the printed URL in a browser with
WebGPU (headless Chromium needs ``--enable-unsafe-webgpu``). The page takes the kernel's scalar arguments
as the host code computes them (``?scalars=``): the example's one kernel loops ``for i in range(start,
bound, step)`` and takes ``bound, step, start``, so ``?n=1000&scalars=1000,1,0`` runs it on 1000 elements.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
from static_server import serve  # noqa: E402

EXAMPLE = """
func.func @main(%a: !relax.tensor<["n"], f32>, %b: !relax.tensor<["n"], f32>) -> !relax.tensor<["n"], f32> {
  %0 = "relax.add"(%a, %b) : (!relax.tensor<["n"], f32>, !relax.tensor<["n"], f32>) -> !relax.tensor<["n"], f32>
  %1 = "relax.exp"(%0) : (!relax.tensor<["n"], f32>) -> !relax.tensor<["n"], f32>
  return %1 : !relax.tensor<["n"], f32>
}
"""


def build(out: Path) -> dict:
    """Compile ``EXAMPLE`` for the webgpu target and write its kernels (SPIR-V, WGSL, kernels.json) to ``out``."""
    import relax_mlir
    from relax_mlir.targets import wgsl

    exe = relax_mlir.compile(EXAMPLE, target="webgpu")
    return wgsl.write_kernels(exe.kernels, out)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument(
        "--kernels", type=Path, help="serve this write_kernels directory (default: build the example)"
    )
    p.add_argument("--out", type=Path, help="write the example's kernels to this directory")
    p.add_argument("--host", default="127.0.0.1", help="interface to listen on (default: loopback only)")
    p.add_argument("--port", type=int, default=8000, help="port (0: any free port)")
    args = p.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="relax_webgpu_") as tmp:
        kernels = args.kernels
        if kernels is None:
            kernels = args.out or Path(tmp)
            manifest = build(kernels)
            print(f"wrote {len(manifest['kernels'])} kernel(s) to {kernels}", flush=True)
            print("the example's kernel on 1000 elements: ?n=1000&scalars=1000,1,0", flush=True)
        if not (kernels / "kernels.json").exists():
            print(
                f"error: {kernels / 'kernels.json'} not found (write it with wgsl.write_kernels)",
                file=sys.stderr,
            )
            return 1
        serve(args.host, args.port, HERE, "kernels", kernels)
    return 0


if __name__ == "__main__":
    sys.exit(main())

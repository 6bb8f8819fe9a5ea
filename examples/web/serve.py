"""Serve a page that runs a relax model compiled to WebAssembly in the browser.

    python examples/web/serve.py                    # the MLP 784-512-512-10; prints the page's URL
    python examples/web/serve.py --model gpt --layers 1 --port 8000 --out build/web

On start, the model (``bench/perf_models.py``: ``mlp`` or ``gpt``) is imported with ``from_onnx`` and
compiled with ``compile_library(..., target="wasm32")`` into ``model.wasm``, ``model.mjs`` and
``model.d.ts`` (a temporary directory unless ``--out``). A tiny static server on the loopback interface
then serves ``index.html``/``app.mjs`` from this folder and the model under ``/model/``; the page
loads the model with the generated ES module, runs it on the batch (and sequence) size you choose, and
shows the output summary and the time per call. ``?batch=3&seq=5&auto=1`` runs on load (the tests use it).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(HERE.parent))
from static_server import serve  # noqa: E402


def build(model: str, layers: int, out: Path, opt_level: int) -> dict:
    """Compile the model to ``out/model.wasm`` (+ .mjs, .d.ts, .json); return the page's info on it."""
    sys.path.insert(0, str(ROOT))  # bench/ is not part of the installed package
    import relax_mlir
    from bench import perf_models
    from relax_mlir.frontend.onnx import from_onnx

    onnx_model, _ = perf_models.mlp() if model == "mlp" else perf_models.gpt(layers)
    t = time.perf_counter()
    relax_mlir.compile_library(
        from_onnx(onnx_model), out / "model.wasm", target="wasm32", opt_level=opt_level
    )
    dims = [d.dim_param or d.dim_value for d in onnx_model.graph.input[0].type.tensor_type.shape.dim]
    info = {"model": model if model == "mlp" else f"gpt ({layers} layer(s))", "input": dims}
    info["compile_seconds"] = round(time.perf_counter() - t, 1)
    (out / "info.json").write_text(json.dumps(info))
    return info


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--model", choices=("mlp", "gpt"), default="mlp")
    p.add_argument("--layers", type=int, default=1, help="GPT blocks (--model gpt)")
    p.add_argument("--host", default="127.0.0.1", help="interface to listen on (default: loopback only)")
    p.add_argument("--port", type=int, default=8000, help="port (0: any free port)")
    p.add_argument("--out", type=Path, help="keep the compiled model in this directory")
    p.add_argument("-O", dest="opt_level", type=int, default=2, choices=range(4))
    args = p.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="relax_web_") as tmp:
        out = args.out or Path(tmp)
        out.mkdir(parents=True, exist_ok=True)
        info = build(args.model, args.layers, out, args.opt_level)
        print(f"compiled {info['model']} to {out / 'model.wasm'} in {info['compile_seconds']} s", flush=True)
        serve(args.host, args.port, HERE, "model", out)
    return 0


if __name__ == "__main__":
    sys.exit(main())

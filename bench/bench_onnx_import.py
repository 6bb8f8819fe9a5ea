"""ONNX import cost for large weights: a model with 100 MB of initializers.

    python3 bench/bench_onnx_import.py

Prints the time of onnx.load and of from_onnx, and how much each adds to the process's resident
memory (weights become dense_resource constants that share the loaded buffers instead of copies).
"""

from __future__ import annotations

import gc
import resource
import tempfile
import time
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def _rss_mb() -> float:
    """Resident memory now (Linux)."""
    return int(Path("/proc/self/statm").read_text().split()[1]) * resource.getpagesize() / 2**20


def _write_model(path: Path, mb: int = 100, layers: int = 4) -> None:
    d = int(np.sqrt(mb * 2**20 / 4 / layers))
    rng = np.random.default_rng(0)
    nodes, inits, x = [], [], "x"
    for i in range(layers):
        inits.append(numpy_helper.from_array(rng.standard_normal((d, d), dtype=np.float32), f"w{i}"))
        nodes.append(helper.make_node("MatMul", [x, f"w{i}"], [f"h{i}"]))
        x = f"h{i}"
    graph = helper.make_graph(
        nodes,
        "big",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["n", d])],
        [helper.make_tensor_value_info(x, TensorProto.FLOAT, ["n", d])],
        inits,
    )
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)]), str(path))


def main() -> None:
    from relax_mlir.frontend.onnx import from_onnx

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "big.onnx"
        _write_model(path)
        gc.collect()
        size = path.stat().st_size / 2**20
        base = _rss_mb()
        t0 = time.perf_counter()
        model = onnx.load(str(path))
        t1 = time.perf_counter()
        loaded = _rss_mb()
        module = from_onnx(model)
        t2 = time.perf_counter()
        imported = _rss_mb()
        del module
    print(f"model file: {size:.0f} MB")
    print(f"onnx.load: {t1 - t0:.2f} s, resident memory +{loaded - base:.0f} MB")
    print(f"from_onnx: {t2 - t1:.2f} s, resident memory +{imported - loaded:.0f} MB")


if __name__ == "__main__":
    main()

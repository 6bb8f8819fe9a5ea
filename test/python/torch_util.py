"""Helpers of the PyTorch frontend tests: import a module once, run it at several shapes against eager."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pytest
from mlir import ir

torch = pytest.importorskip("torch", reason="PyTorch is not installed (pip install -e '.[torch]')")

import relax_mlir  # noqa: E402
from relax_mlir.builder import type_of  # noqa: E402
from relax_mlir.frontend.torch import from_torch  # noqa: E402


def main_types(module: Any) -> list[str]:
    """The spelled parameter and result types of ``@main``."""
    for op in module.body.operations:
        op = op.operation
        if op.name == "func.func" and op.attributes["sym_name"].value == "main":
            ftype = ir.FunctionType(ir.TypeAttr(op.attributes["function_type"]).value)
            return [str(type_of_type(t)) for t in (*ftype.inputs, *ftype.results)]
    raise AssertionError("no @main")


def type_of_type(t: Any) -> Any:
    from relax_mlir.dialects.types import relax_type  # noqa: PLC0415

    return relax_type(t)


def assert_symbolic(module: Any) -> None:
    """Every relax type in the module is fully known: no ``"?"`` dim, no unknown rank."""
    text = str(module)
    assert '"?"' not in text and "<*" not in text, text


def run_eager(model: torch.nn.Module, args: Sequence[torch.Tensor]) -> list[np.ndarray]:
    with torch.no_grad():
        out = model(*args)
    outs = out if isinstance(out, (tuple, list)) else (out,)
    return [o.detach().numpy() for o in outs]


def compare(
    exe: Any, model: torch.nn.Module, args: Sequence[torch.Tensor], rtol: float = 1e-4, atol: float = 1e-5
) -> None:
    """``exe`` and eager ``model`` agree on ``args`` (numpy inputs to ``exe``)."""
    got = exe(*[a.numpy() for a in args])
    got = got if isinstance(got, (tuple, list)) else (got,)
    want = run_eager(model, args)
    assert len(got) == len(want)
    for i, (g, w) in enumerate(zip(got, want)):
        assert g.shape == w.shape, f"output #{i}: shape {g.shape}, expected {w.shape}"
        assert g.dtype == w.dtype, f"output #{i}: dtype {g.dtype}, expected {w.dtype}"
        np.testing.assert_allclose(g, w, rtol=rtol, atol=atol, err_msg=f"output #{i}")


def import_and_compile(
    model: torch.nn.Module, example: Sequence[torch.Tensor], dynamic_shapes: Any, **kwargs: Any
) -> tuple[Any, Any]:
    """(module, executable) of ``model`` exported at ``example`` with ``dynamic_shapes``."""
    module = from_torch(model.eval(), tuple(example), dynamic_shapes=dynamic_shapes, **kwargs)
    assert_symbolic(module)
    return module, relax_mlir.compile(module)


_ = type_of

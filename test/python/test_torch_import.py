"""The PyTorch importer's interface: torch's own symbol names, guards as run-time checks (InputError), symbol
equalities, weights as constants or parameters, and the errors for what it cannot import."""

from __future__ import annotations

import re

import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="PyTorch is not installed (pip install -e '.[torch]')")

from torch.export import Dim, export  # noqa: E402
from torch_util import assert_symbolic, compare, main_types  # noqa: E402

import relax_mlir  # noqa: E402
from relax_mlir.errors import InputError, UnsupportedOpError  # noqa: E402
from relax_mlir.frontend.torch import TorchImportError, from_exported_program, from_torch  # noqa: E402


class Checked(torch.nn.Module):
    def forward(self, x, y):
        torch._check(x.shape[1] % 4 == 0)
        torch._check(x.shape[0] <= x.shape[1])
        return x * 2 + y


def test_auto_dims_keep_torch_names_and_guards_are_checked() -> None:
    """Dim.AUTO symbols keep torch's names (s27...); the guards torch kept (torch._check, its own range
    assumptions) raise InputError naming the guard; equal dims share one symbol."""
    auto = {0: Dim.AUTO, 1: Dim.AUTO}
    ep = export(Checked(), (torch.randn(2, 8), torch.randn(2, 8)), dynamic_shapes={"x": auto, "y": auto})
    module = from_exported_program(ep)
    assert_symbolic(module)
    x_type, y_type, _ = main_types(module)
    assert x_type == y_type and re.fullmatch(r'!relax.tensor<\["s\d+", "s\d+"\], f32>', x_type), x_type
    exe = relax_mlir.compile(module)
    for b, n in [(2, 4), (3, 8), (5, 12)]:
        compare(exe, Checked(), (torch.randn(b, n), torch.randn(b, n)))
    cases = [
        ((2, 6), r"guard \(x.shape\[1\] % 4\) == 0"),
        ((9, 8), r"guard x.shape\[0\] <= x.shape\[1\]"),
        ((1, 8), r"guard s\d+ >= 2"),  # torch specializes size 1: its range starts at 2
    ]
    for shape, message in cases:
        with pytest.raises(InputError, match=message):
            exe(np.ones(shape, np.float32), np.ones(shape, np.float32))
    with pytest.raises(InputError, match="symbol 's\\d+' is 8"):  # x and y share their symbols
        exe(np.ones((2, 8), np.float32), np.ones((2, 12), np.float32))


class Affine(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc = torch.nn.Linear(4, 3)
        self.register_buffer("shift", torch.arange(3, dtype=torch.float32))

    def forward(self, x):
        return self.fc(x) + self.shift


def test_params_as_parameters() -> None:
    """``params_as="parameters"``: weights and buffers are parameters after the inputs, named by state-dict key."""
    model = Affine().eval()
    n = Dim("n", max=32)
    module = from_torch(model, (torch.randn(3, 4),), {"x": {0: n}}, params_as="parameters")
    text = str(module)
    assert all(f'relax.name = "{k}"' in text for k in ("x", "fc.weight", "fc.bias", "shift")), text
    assert "dense<" not in text  # no weight became a constant
    exe = relax_mlir.compile(module)
    weights = [t.detach().numpy() for t in (model.fc.weight, model.fc.bias, model.shift)]
    x = torch.randn(5, 4)
    np.testing.assert_allclose(exe(x.numpy(), *weights), model(x).detach().numpy(), rtol=1e-5, atol=1e-6)
    constants = from_torch(model, (torch.randn(3, 4),), {"x": {0: n}})
    assert main_types(constants) == ['!relax.tensor<["n", 4], f32>', '!relax.tensor<["n", 3], f32>']


class Sorted(torch.nn.Module):
    def forward(self, x):
        values, _ = torch.sort(x)  # no converter, no decomposition
        return values.flip(0) + 1


def test_unsupported_ops_are_listed_with_their_source_line() -> None:
    ep = export(Sorted(), (torch.randn(3, 4),))
    with pytest.raises(UnsupportedOpError) as info:
        from_exported_program(ep)
    message = str(info.value)
    assert "2 node(s) of unsupported ATen ops" in message, message
    assert "aten.sort.default (node 'sort') at " in message and "test_torch_import.py:" in message, message
    assert "values, _ = torch.sort(x)" in message and "aten.flip.default" in message, message


def test_bad_arguments() -> None:
    ep = export(Affine().eval(), (torch.randn(3, 4),))
    with pytest.raises(TorchImportError, match="params_as must be 'constants' or 'parameters'"):
        from_exported_program(ep, params_as="weights")
    with pytest.raises(TorchImportError, match="expects a torch.export.ExportedProgram"):
        from_exported_program(Affine())
    with pytest.raises(TorchImportError, match="expects a torch.nn.Module"):
        from_torch(lambda x: x, (torch.randn(2),))

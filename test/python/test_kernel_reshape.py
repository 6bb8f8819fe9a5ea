"""KernelBuilder's reshape views give IR that MLIR verifies, also when a group's size is a constant only
because it holds a 0 (``n * 0 = 0``): MLIR wants such a dim dynamic on the collapsed side."""

from __future__ import annotations

from mlir import ir

from relax_mlir.context import make_context
from relax_mlir.dialects.types import TensorType
from relax_mlir.lowering.kernel import KernelBuilder
from relax_mlir.shape_infer.expr import as_expr


def _tensor(*dims: int | str) -> TensorType:
    return TensorType(tuple(as_expr(d) for d in dims), "f32")


def _verified(k: KernelBuilder, result) -> str:
    text = k.function_text("kernel", [result])
    with make_context():
        ir.Module.parse(text)  # raises MLIRError on invalid IR
    return text


def test_collapse_of_a_zero_and_a_dynamic_dim() -> None:
    k = KernelBuilder("test", [_tensor("n", 0, 16)], [_tensor(0, 16)], {})
    r = k.collapse(k.ins[0], [[0, 1], [2]])
    assert r.mlir == "tensor<0x16xf32>"
    text = _verified(k, r)
    assert "tensor<?x0x16xf32> into tensor<?x16xf32>" in text and "tensor.cast" in text


def test_expand_into_a_zero_and_a_dynamic_dim() -> None:
    k = KernelBuilder("test", [_tensor(0, 16)], [_tensor("n", 0, 16)], {})
    r = k.expand(k.ins[0], [[0, 1], [2]], [as_expr("n"), 0, 16], [k.dim(k.outs[0], 0), None, None])
    assert r.mlir == "tensor<?x0x16xf32>"
    assert "tensor<?x16xf32> into tensor<?x0x16xf32>" in _verified(k, r)


def test_static_groups_need_no_cast() -> None:
    k = KernelBuilder("test", [_tensor("n", 4, 16)], [_tensor("4 * n", 16)], {})
    text = _verified(k, k.collapse(k.ins[0], [[0, 1], [2]]))
    assert "tensor.cast" not in text

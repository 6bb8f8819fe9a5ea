"""Passes read op properties from the op class (``RelaxOp`` traits), not from name lists: an op defined
here, in a test module, is handled by relax-dce, relax-cse, convert-relax-to-linalg, relax-fuse-ops,
relax-plan-memory, relax-canonicalize and relax-lower-host through its traits alone. Each trait is shown
both ways (a twin class with the default), so the trait is what makes the difference."""

from __future__ import annotations

import ast
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from mlir import ir, passmanager

from relax_mlir.context import make_context, parse_module
from relax_mlir.dialects.dims import tensor_operand
from relax_mlir.dialects.registry import OPS, Operand, RelaxOp, relax_op
from relax_mlir.dialects.types import PrimType, RelaxType
from relax_mlir.lowering.kernel import KernelBuilder, KernelValue
from relax_mlir.pipelines import add_pipeline, load_passes, parse_pipeline
from relax_mlir.shape_infer.expr import const
from relax_mlir.targets import compile
from relax_mlir.transforms.memory_plan import analyze

ROOT = Path(__file__).resolve().parents[2] / "relax_mlir"


class _TestOp(RelaxOp):
    """Base of the test ops: ``%y = "relax.trait_test_*"(%x)``, ``y`` of ``x``'s type, copied by its kernel."""

    OPERANDS = (Operand("x"),)

    @classmethod
    def deduce(cls, operand_types: Sequence[RelaxType | None], attrs: dict[str, Any]) -> list[RelaxType]:
        return [tensor_operand(operand_types[0], "x")]

    @classmethod
    def lower(cls, k: KernelBuilder) -> list[KernelValue]:
        return [k.copy(k.ins[0], k.destination(0))]


class PureOp(_TestOp):
    NAME = "trait_test_pure"


class ImpureOp(_TestOp):
    NAME = "trait_test_impure"
    PURE = False


class BitMovingOp(_TestOp):
    NAME = "trait_test_bit_moving"
    BIT_MOVING = True


class IdentityOp(_TestOp):
    """Canonicalizes to its operand."""

    NAME = "trait_test_identity"

    @classmethod
    def canonicalize(cls, op: ir.Operation) -> ir.Value | None:
        return op.operands[0]


class _ConstOp(RelaxOp):
    """``%n = "relax.trait_test_*"()`` : the prim value 7 (no operands: never depends on a group)."""

    OPERANDS = ()
    RESULTS = (Operand("out", "prim"),)

    @classmethod
    def deduce(cls, operand_types: Sequence[RelaxType | None], attrs: dict[str, Any]) -> list[RelaxType]:
        return [PrimType(const(7))]


class HoistableOp(_ConstOp):
    NAME = "trait_test_hoistable"
    HOISTABLE = True


class PinnedOp(_ConstOp):
    NAME = "trait_test_pinned"


class _DimOp(RelaxOp):
    """``%n = "relax.trait_test_*"(%x)``: dim 0 of ``x`` as a prim value, lowered on the host."""

    OPERANDS = (Operand("x"),)
    RESULTS = (Operand("out", "prim"),)

    @classmethod
    def deduce(cls, operand_types: Sequence[RelaxType | None], attrs: dict[str, Any]) -> list[RelaxType]:
        x = tensor_operand(operand_types[0], "x")
        return [PrimType(None if not x.shape else x.shape[0])]

    def lower_host(self, host: Any) -> None:
        host.bind(self.results[0], host.ints([host.dim(host.lookup(self.operands[0]), 0)], False))


class NotAliasingOp(_DimOp):
    NAME = "trait_test_not_aliasing"
    ALIASES_OPERANDS = False


class AliasingOp(_DimOp):
    NAME = "trait_test_aliasing"


TEST_OPS = (
    PureOp,
    ImpureOp,
    BitMovingOp,
    IdentityOp,
    HoistableOp,
    PinnedOp,
    NotAliasingOp,
    AliasingOp,
)


@pytest.fixture(scope="module", autouse=True)
def registered() -> Iterator[None]:
    """Register the test ops with the decorator the real ops use; unregister them afterwards so no other
    test (which may list every op) sees them."""
    for cls in TEST_OPS:
        assert cls.NAME not in OPS
        relax_op(cls)
    yield
    for cls in TEST_OPS:
        del OPS[cls.NAME]


T = '!relax.tensor<["n"], f32>'


def _func(body: str, result: str = T, arg: str = T) -> str:
    return f"func.func @f(%x: {arg}) -> {result} {{\n{body}\n}}\n"


def _run(text: str, pipeline: str) -> str:
    with make_context(), ir.Location.unknown():
        load_passes()
        module = parse_module(text, "<test>")
        pm = passmanager.PassManager("builtin.module")
        add_pipeline(pm, parse_pipeline(pipeline))
        pm.run(module)
        return str(module)


def _twice(name: str, used: bool) -> str:
    """Two identical ``name`` ops on ``%x``; the function returns the second (or ``%x``)."""
    ret = "%b" if used else "%x"
    return _func(
        f'  %a = "relax.{name}"(%x) : ({T}) -> {T}\n  %b = "relax.{name}"(%x) : ({T}) -> {T}\n'
        f"  return {ret} : {T}"
    )


def test_dce_drops_unused_pure_ops_and_keeps_impure_ones() -> None:
    assert "relax.trait_test_pure" not in _run(_twice("trait_test_pure", used=False), "relax-dce")
    assert _run(_twice("trait_test_impure", used=False), "relax-dce").count("relax.trait_test_impure") == 2


def test_cse_merges_pure_ops_only() -> None:
    assert _run(_twice("trait_test_pure", used=True), "relax-cse").count("relax.trait_test_pure") == 1
    assert _run(_twice("trait_test_impure", used=True), "relax-cse").count("relax.trait_test_impure") == 2


def test_legalize_lets_only_bit_moving_ops_touch_storage_dtypes() -> None:
    i4 = '!relax.tensor<["n"], i4>'

    def text(name: str) -> str:
        return _func(f'  %y = "relax.{name}"(%x) : ({i4}) -> {i4}\n  return %y : {i4}', i4, i4)

    assert "call_tir" in _run(text("trait_test_bit_moving"), "convert-relax-to-linalg")
    with pytest.raises(ir.MLIRError, match="relax.trait_test_pure does not compute on i4"):
        _run(text("trait_test_pure"), "convert-relax-to-linalg")


def test_fuse_ops_hoists_only_hoistable_ops_out_of_a_group() -> None:
    def text(name: str) -> str:
        return _func(
            f'  %a = "relax.exp"(%x) : ({T}) -> {T}\n'
            f'  %n = "relax.{name}"() : () -> !relax.prim<"7">\n'
            f'  %b = "relax.exp"(%a) : ({T}) -> {T}\n'
            f"  return %b : {T}"
        )

    hoisted = _run(text("trait_test_hoistable"), "relax-fuse-ops")
    assert hoisted.count("relax.fusion_group = 0") == 2
    assert hoisted.index("relax.trait_test_hoistable") < hoisted.index("relax.exp")
    pinned = _run(text("trait_test_pinned"), "relax-fuse-ops")
    assert "relax.fusion_group" not in pinned


def test_memory_plan_reads_aliasing_from_the_op_class() -> None:
    def reasons(name: str) -> list[str]:
        text = _func(
            f'  %t = "relax.exp"(%x) : ({T}) -> {T}\n'
            f'  %n = "relax.{name}"(%t) : ({T}) -> !relax.prim<"n">\n'
            '  return %n : !relax.prim<"n">',
            '!relax.prim<"n">',
        )
        with make_context(), ir.Location.unknown():
            load_passes()
            module = parse_module(text, "<test>")
            pm = passmanager.PassManager("builtin.module")
            add_pipeline(pm, parse_pipeline("relax-infer-shapes,convert-relax-to-linalg"))
            pm.run(module)
            funcs = [op.operation for op in module.regions[0].blocks[0].operations]
            kernels = {
                ir.StringAttr(f.attributes["sym_name"]).value: ir.FunctionType(
                    ir.TypeAttr(f.attributes["function_type"]).value
                )
                for f in funcs
                if ir.StringAttr(f.attributes["sym_name"]).value != "f"
            }
            main = next(f for f in funcs if ir.StringAttr(f.attributes["sym_name"]).value == "f")
            return [b.reason for b in analyze(main, kernels).buffers]

    assert reasons("trait_test_aliasing") == ["function output"]  # the prim may be a view of %t
    assert reasons("trait_test_not_aliasing") == [""]


def test_canonicalize_applies_the_rule_on_the_op_class() -> None:
    text = _func(f'  %y = "relax.trait_test_identity"(%x) : ({T}) -> {T}\n  return %y : {T}')
    assert "relax.trait_test_identity" not in _run(text, "relax-canonicalize")
    assert "relax.trait_test_pure" in _run(text.replace("identity", "pure"), "relax-canonicalize")


@pytest.mark.parametrize("n", [0, 1, 5])
def test_host_lowering_calls_the_op_classes_hook(n: int) -> None:
    text = _func(
        f'  %n = "relax.trait_test_not_aliasing"(%x) : ({T}) -> !relax.prim<"n">\n  return %n : !relax.prim<"n">',
        '!relax.prim<"n">',
    )
    exe = compile(text, opt_level=0, use_cache=False)
    assert exe(np.zeros(n, np.float32)) == n


def _relax_op_names() -> set[str]:
    return set(OPS) - {cls.NAME for cls in TEST_OPS}


def _name_lists(tree: ast.AST, names: set[str]) -> list[tuple[int, list[str]]]:
    """Collection literals (set, frozenset, tuple, list, dict keys) holding a ``relax.<op>`` string, or
    two or more strings that are all bare op names."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.Set, ast.Tuple, ast.List)):
            items = node.elts
        elif isinstance(node, ast.Dict):
            items = [k for k in node.keys if k is not None]
        else:
            continue
        strings = [x.value for x in items if isinstance(x, ast.Constant) and isinstance(x.value, str)]
        prefixed = [s for s in strings if s.startswith("relax.") and s[len("relax.") :] in names]
        bare = len(strings) >= 2 and len(strings) == len(items) and all(s in names for s in strings)
        if prefixed or bare:
            found.append((node.lineno, strings))
    return found


def test_no_pass_keeps_a_list_of_op_names() -> None:
    """Op properties are traits on the op class: passes must not list op names (a new op would have to
    edit them)."""
    names = _relax_op_names()
    files = sorted((ROOT / "transforms").rglob("*.py"))  # every pass, relax-lower-host included
    problems = [
        f"{path.relative_to(ROOT.parent)}:{line}: {strings}"
        for path in files
        for line, strings in _name_lists(ast.parse(path.read_text()), names)
    ]
    assert not problems, "op name lists in passes (declare a trait on the op class instead):\n" + "\n".join(
        problems
    )


def test_the_name_list_check_finds_a_list() -> None:
    names = _relax_op_names()
    tree = ast.parse('X = frozenset({"relax.shape_of", "relax.get_dim"})\nY = {"reshape", "astype"}\n')
    assert sorted(line for line, _ in _name_lists(tree, names)) == [1, 2]

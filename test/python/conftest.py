"""Shared fixtures: an MLIR context with relax loaded, a fresh module, and function parameters to build on."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest
from mlir import ir
from mlir.dialects import func

from relax_mlir.context import make_context
from relax_mlir.dialects.types import parse_type, to_mlir


@pytest.fixture(scope="module")
def ctx() -> Iterator[ir.Context]:
    """One context per test file (creating one per test would dominate the run time)."""
    context = make_context()
    with context, ir.Location.unknown():
        yield context


@pytest.fixture
def module(ctx: ir.Context) -> ir.Module:
    return ir.Module.create()


@pytest.fixture
def params(module: ir.Module) -> Iterator[Callable[..., list[ir.Value]]]:
    """``params('!relax.tensor<...>', ...)`` -> block arguments of a fresh function, ready to build into."""
    entered: list[ir.InsertionPoint] = []

    def make(*types: str) -> list[ir.Value]:
        if entered:  # leave the previous function first: insertion points must not stay stacked
            entered.pop().__exit__(None, None, None)
        with ir.InsertionPoint(module.body):
            f = func.FuncOp(f"f{len(module.body.operations)}", ([to_mlir(parse_type(t)) for t in types], []))
        block = f.add_entry_block()
        entered.append(ir.InsertionPoint(block))
        entered[0].__enter__()
        return list(block.arguments)

    yield make
    if entered:
        entered.pop().__exit__(None, None, None)

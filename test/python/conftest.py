"""Shared fixtures: an MLIR context with relax loaded, and an insertion point inside a function."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from mlir import ir

from relax_mlir.context import make_context


@pytest.fixture
def ctx() -> Iterator[ir.Context]:
    context = make_context()
    with context, ir.Location.unknown():
        yield context


@pytest.fixture
def module(ctx: ir.Context) -> ir.Module:
    return ir.Module.create()

"""Tests that need a native toolchain skip without it, unless ``$RELAX_MLIR_REQUIRE_TOOLCHAINS=1`` (CI)."""

from __future__ import annotations

import os

import pytest

REQUIRE = os.environ.get("RELAX_MLIR_REQUIRE_TOOLCHAINS") == "1"


def missing_toolchain(message: str) -> None:
    """Skip the test for ``message`` (what is missing and how to install it); fail instead in CI."""
    if REQUIRE:
        pytest.fail(message + " ($RELAX_MLIR_REQUIRE_TOOLCHAINS=1)")
    pytest.skip(message)

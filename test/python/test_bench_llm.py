"""bench/bench_llm.py: each mode rewrites only its own section of LLM_RESULTS.md (a full run used to drop
the under-load section)."""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "bench"))

import bench_llm  # noqa: E402

FULL = "# LLM results\n\n| table |\n"
LOAD = f"{bench_llm.UNDER_LOAD}\n\nDecode beside a busy process.\n"


def test_a_full_run_keeps_the_under_load_section() -> None:
    old = FULL + "\n" + LOAD
    new = bench_llm.merge_results(old, "# LLM results\n\n| new table |\n", under_load=False)
    assert new == "# LLM results\n\n| new table |\n\n" + LOAD


def test_an_under_load_run_keeps_the_rest() -> None:
    text = f"{bench_llm.UNDER_LOAD}\n\nnew numbers\n"
    assert bench_llm.merge_results(FULL + "\n" + LOAD, text, under_load=True) == FULL + "\n" + text
    assert bench_llm.merge_results(FULL, text, under_load=True) == FULL + "\n" + text
    assert bench_llm.merge_results("", text, under_load=True) == text

"""bench/bench_llm.py and bench/perf.py rewrite only their own section of their results file: one per CPU
vendor and mode (a full LLM run used to drop the under-load section; an Intel run, the AMD numbers)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "bench"))

import bench_llm  # noqa: E402
from vendor_sections import markers, merge_section  # noqa: E402


def _write(path: Path, monkeypatch: pytest.MonkeyPatch, vendor: str, text: str, under_load: bool) -> str:
    monkeypatch.setattr(bench_llm, "machine_family", lambda: vendor)
    bench_llm.write_section(path, text, under_load=under_load)
    return path.read_text()


def test_each_vendor_and_mode_keeps_the_others(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    out = tmp_path / "LLM_RESULTS.md"
    text = _write(out, monkeypatch, "AMD", "## AMD\n\n| amd table |\n", under_load=False)
    assert text.startswith("\n".join(bench_llm.HEADER)) and "| amd table |" in text
    _write(out, monkeypatch, "AMD", "## AMD: under load\n\nbusy\n", under_load=True)
    _write(out, monkeypatch, "Intel", "## Intel\n\n| intel table |\n", under_load=False)
    text = _write(out, monkeypatch, "AMD", "## AMD\n\n| new amd table |\n", under_load=False)
    assert "| amd table |" not in text
    order = ["| new amd table |", "busy", "| intel table |"]
    assert [text.index(t) for t in order] == sorted(text.index(t) for t in order)
    for key in ("AMD", "AMD under load", "Intel"):
        begin, end = markers(key)
        assert text.count(begin) == 1 and text.count(end) == 1


def test_notes_after_the_marker_are_kept() -> None:
    notes = "<!-- notes -->"
    old = merge_section("", "## AMD\n", "AMD", ["# title", ""]) + f"\n{notes}\nhand-written\n"
    new = merge_section(old, "## Intel\n", "Intel", ["# title", ""], notes)
    assert new.index("## AMD") < new.index("## Intel") < new.index(notes) < new.index("hand-written")
    assert merge_section(new, "## Intel 2\n", "Intel", [], notes).count("hand-written") == 1

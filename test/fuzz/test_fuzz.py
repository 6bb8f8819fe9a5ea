"""Fuzz relax_mlir for a bounded time (``fuzzlib.py``): no input may crash, hang or raise an undocumented
exception.

    RELAX_FUZZ_SECONDS=60 RELAX_FUZZ_START=0 python3 -m pytest test/fuzz

``RELAX_FUZZ_SECONDS`` (default 60) bounds the run; cases are numbered from ``RELAX_FUZZ_START``
(default 0, so a run is deterministic: the same cases in the same order); ``RELAX_FUZZ_CASES`` (default:
no limit) stops after that many cases, so that CI runs the same cases on a faster or slower machine; ``RELAX_FUZZ_CASE_TIMEOUT``
(default 120 s) is the hang limit of one case. A failure lists each distinct cause once, with the
command that replays its first case.
"""

from __future__ import annotations

import os
import sys
from collections import defaultdict

import fuzzlib


def test_fuzz() -> None:
    seconds = float(os.environ.get("RELAX_FUZZ_SECONDS", "60"))
    start = int(os.environ.get("RELAX_FUZZ_START", "0"))
    timeout = float(os.environ.get("RELAX_FUZZ_CASE_TIMEOUT", "120"))
    cases = os.environ.get("RELAX_FUZZ_CASES")
    stop = start + int(cases) if cases else sys.maxsize
    ran, failures = fuzzlib.campaign(seconds, start, timeout, stop)
    groups = defaultdict(list)
    for f in failures:
        groups[f.signature()].append(f)
    report = [f"{ran} cases from {start}, {len(failures)} failed, {len(groups)} distinct causes:"]
    for signature, fs in sorted(groups.items(), key=lambda g: -len(g[1])):
        first = fs[0]
        report += [
            f"\n== {len(fs)}x {signature}",
            f"   cases: {' '.join(str(f.case) for f in fs[:20])}",
            f"   first: {first.what}",
            f"   replay: python3 test/fuzz/fuzzlib.py {first.case} --show",
            "   " + first.detail.strip()[-1200:].replace("\n", "\n   "),
        ]
    print("\n".join(report))
    assert not failures, "\n".join(report)
    assert ran > 0, "no case ran"


def test_mutate_args_changes_rank_of_any_array() -> None:
    """The "rank" mutation changes the rank of empty, scalar and ordinary arrays alike (it once raised on
    an empty array)."""
    import random

    import numpy as np

    for x in (
        np.zeros((0, 3), np.float32),
        np.zeros(0, np.float32),
        np.ones((2, 3), np.float32),
        np.ones(()),
    ):
        ranks = set()
        for seed in range(200):
            args, what, _ = fuzzlib.mutate_args([x], random.Random(seed))
            if what == "rank(arg0)":
                ranks.add(args[0].ndim)
        assert x.ndim + 1 in ranks and x.ndim not in ranks and (x.ndim == 0 or min(ranks) < x.ndim), ranks

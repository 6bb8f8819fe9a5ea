"""Throughput of symbolic dim expressions: canonical ops, uncached parsing, equality checks.

Run: ``python bench/bench_symbolic.py``. Exits 1 when canonical ops/s falls below 100,000.
"""

from __future__ import annotations

import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from relax_mlir.shape_infer.expr import Expr, const, parse_expr, sym  # noqa: E402

parse_uncached = parse_expr.__wrapped__

SEED = 20240601
SYMS = ["b", "s", "n", "h"]
MIN_OPS_PER_S = 100_000


def random_expr(rng: random.Random) -> Expr:
    """A dim-like polynomial of 1-4 terms of degree <= 2 over b, s, n, h."""
    e = const(0)
    for _ in range(rng.randint(1, 4)):
        term = const(rng.choice([1, 1, 2, 3, 4, 8, 16, 64, 512, -1]))
        for _ in range(rng.choice([0, 1, 1, 1, 2])):
            term = term * sym(rng.choice(SYMS))
        e = e + term
    return e


def timed(fn, reps: int) -> float:
    """The best per-call time in seconds over ``reps`` timings of ``fn`` (which returns its op count)."""
    best = float("inf")
    for _ in range(reps):
        t0 = time.perf_counter()
        n = fn()
        best = min(best, (time.perf_counter() - t0) / n)
    return best


def bench_ops(rng: random.Random) -> float:
    pool = [random_expr(rng) for _ in range(400)]
    work = []
    for _ in range(20_000):
        op = rng.choice("+-*/")
        work.append((op, rng.choice(pool), rng.choice(pool) if op != "/" else rng.choice([2, 4, 8, 64, 3])))

    def run() -> int:
        for op, a, b in work:
            if op == "+":
                a + b
            elif op == "-":
                a - b
            elif op == "*":
                a * b
            else:
                a // b
        return len(work)

    return 1.0 / timed(run, 3)


def bench_parse(rng: random.Random) -> float:
    texts = []
    for _ in range(3000):
        e = random_expr(rng)
        r = rng.random()
        if r < 0.3:
            e = e // rng.choice([2, 3, 4, 7])
        elif r < 0.4:
            e = e + (random_expr(rng) % 5)
        elif r < 0.5:
            e = e - (random_expr(rng) // sym("h"))
        texts.append(str(e))

    def run() -> int:
        for t in texts:
            parse_uncached(t)
        return len(texts)

    assert all(parse_expr(t) == parse_uncached(t) for t in texts[:100])
    return 1.0 / timed(run, 3)


def bench_eq(rng: random.Random) -> float:
    exprs = [random_expr(rng) for _ in range(500)]
    # Equal pairs are distinct objects (built by different rewrites), so `is` never short-cuts.
    pairs = []
    for _ in range(50_000):
        a = rng.choice(exprs)
        b = (a + sym("n")) - sym("n") if rng.random() < 0.5 else rng.choice(exprs)
        pairs.append((a, b))

    def run() -> int:
        for a, b in pairs:
            a == b  # noqa: B015
        return len(pairs)

    return 1.0 / timed(run, 3)


def main() -> int:
    rng = random.Random(SEED)
    t0 = time.perf_counter()
    rows = [
        ("canonical ops (+ - * //)", bench_ops(rng)),
        ("parse_expr (uncached)", bench_parse(rng)),
        ("equality checks", bench_eq(rng)),
    ]
    print(f"{'benchmark':<28} {'per second':>14} {'us/op':>8}")
    for name, rate in rows:
        print(f"{name:<28} {rate:>14,.0f} {1e6 / rate:>8.2f}")
    print(f"(seed {SEED}, total {time.perf_counter() - t0:.1f} s)")
    ops = rows[0][1]
    if ops < MIN_OPS_PER_S:
        print(f"FAIL: {ops:,.0f} canonical ops/s < {MIN_OPS_PER_S:,}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

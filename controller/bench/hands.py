"""`croupier bench hands`: poker hand evaluations per second, scalar and batch, against treys on the same hands."""

from __future__ import annotations

import argparse
import time
from typing import Any, Callable

HELP = "poker hand evaluation speed: 5- and 7-card, scalar and batch, and the treys reference"
DEFAULT_SEED = 20261121


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--hands", type=int, default=1_000_000, help="hands in the fixed set (default 1,000,000)")
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED, help="seed of the hand set")
    parser.add_argument("--threads", type=int, default=None, help="threads for the batch path (default: CPUs)")


def _rate(count: int, seconds: float) -> float:
    return count / seconds if seconds > 0 else float("inf")


def _timed(fn: Callable[[], Any]) -> tuple[float, Any]:
    t0 = time.perf_counter()
    result = fn()
    return time.perf_counter() - t0, result


def run(args: argparse.Namespace, say: Callable[[str], None]) -> dict[str, Any]:
    import numpy as np

    from controller.batch import hands as batch
    from controller.cli import CliError
    from controller.hands import poker
    from controller.rng import SeededRng, deal_hands

    if args.hands < 1:
        raise CliError("--hands must be at least 1")
    n = args.hands
    say(f"dealing {n:,} seeded 7-card hands (seed {args.seed}); 5-card figures use each hand's first five cards")
    sevens = deal_hands(SeededRng(args.seed).numpy(), n, 7).astype(np.int64)
    fives = np.ascontiguousarray(sevens[:, :5])
    rows7, rows5 = sevens.tolist(), fives.tolist()

    build_s, _ = _timed(batch._tables)
    ours: dict[str, float] = {}

    eval5, eval7 = poker.eval5, poker.eval7
    t, scalar5 = _timed(lambda: [eval5(*r) for r in rows5])
    ours["eval5_scalar"] = _rate(n, t)
    t, scalar7 = _timed(lambda: [eval7(*r) for r in rows7])
    ours["eval7_scalar"] = _rate(n, t)
    t, batch5 = _timed(lambda: batch.evaluate(fives, check=False, threads=1))
    ours["eval5_batch_1thread"] = _rate(n, t)
    t, batch7 = _timed(lambda: batch.evaluate(sevens, check=False, threads=1))
    ours["eval7_batch_1thread"] = _rate(n, t)
    t, batch5 = _timed(lambda: batch.evaluate(fives, check=False, threads=args.threads))
    ours["eval5_batch"] = _rate(n, t)
    t, batch7 = _timed(lambda: batch.evaluate(sevens, check=False, threads=args.threads))
    ours["eval7_batch"] = _rate(n, t)
    identical = bool(np.array_equal(batch5, np.array(scalar5)) and np.array_equal(batch7, np.array(scalar7)))

    treys: dict[str, float] | None = None
    try:
        from treys import Card as TreysCard
        from treys import Evaluator
    except ImportError:
        say("treys is not installed (pip install -e '.[bench]'): no reference figures")
    else:
        evaluator = Evaluator()
        to_treys = [TreysCard.new("23456789TJQKA"[i >> 2] + "cdhs"[i & 3]) for i in range(52)]
        t5 = [[to_treys[i] for i in r] for r in rows5]
        t7 = [[to_treys[i] for i in r] for r in rows7]
        ev = evaluator.evaluate
        treys = {}
        t, _ = _timed(lambda: [ev(h[:2], h[2:]) for h in t5])
        treys["eval5_scalar"] = _rate(n, t)
        t, _ = _timed(lambda: [ev(h[:2], h[2:]) for h in t7])
        treys["eval7_scalar"] = _rate(n, t)

    say("")
    say(f"{'evaluations per second':<28}{'ours':>14}{'treys':>14}{'ours/treys':>12}")
    for key, label in (("eval5_scalar", "5-card scalar"), ("eval7_scalar", "7-card scalar"),
                       ("eval5_batch_1thread", "5-card batch, 1 thread"), ("eval7_batch_1thread", "7-card batch, 1 thread"),
                       ("eval5_batch", "5-card batch"), ("eval7_batch", "7-card batch")):
        ref = treys.get(key) if treys else None
        ratio = f"{ours[key] / ref:>11.1f}x" if ref else f"{'-':>12}"
        say(f"{label:<28}{ours[key]:>14,.0f}{(f'{ref:,.0f}' if ref else '-'):>14}{ratio}")
    say(f"batch tables built in {build_s * 1000:.0f} ms; batch equals scalar on every hand: {identical}")
    ratios = {k: ours[k] / v for k, v in treys.items()} if treys else None
    if ratios:
        say(f"goals: 7-card scalar >= 3x treys: {ratios['eval7_scalar']:.1f}x; "
            f"7-card batch >= 5,000,000/s: {ours['eval7_batch']:,.0f}/s")
    return {
        "hands": n,
        "seed": args.seed,
        "batch_threads": args.threads,
        "batch_equals_scalar": identical,
        "batch_table_build_ms": round(build_s * 1000, 1),
        "ours": {k: round(v) for k, v in ours.items()},
        "treys": {k: round(v) for k, v in treys.items()} if treys else None,
        "ratio_ours_over_treys": {k: round(v, 2) for k, v in ratios.items()} if ratios else None,
    }

"""`croupier bench apalerts_tune`: how the alerts' thresholds were chosen: every look of each test at a flat and a random bettor, with no alert raised, on the tuning seeds (never the reported ones).

Each test's statistic is recorded every time it is looked at (the bet ramp's LR after each shoe, the wonging and
insurance p-values at each entry or offer, the hole-card z at each decision), over null tables (a flat and a random
bettor only, so every look is a false alert's chance). A threshold is then read off as the value reached at about
one look in a thousand or less: `controller/apalerts.py`'s Thresholds took ramp_lr 10.8 (chi-square p = 0.001; the
largest LR over 1,000 looks was 12.9), wong_p 0.001 (smallest p over 10,284 looks: 0.0044), insurance_p 0.001
(smallest: 0.0097 over 2,266), hole_z 3.5 (largest: 3.02 over 47,464), from 120 sessions of 20 shoes at 75%, seeds
1,075,000 to 1,075,119. `croupier bench apalerts` reports on other seeds (penetration x 100,000 + i).
"""

from __future__ import annotations

import argparse
from contextlib import contextmanager
from typing import Any, Callable, Iterator

from controller import apalerts
from controller.bench.apalerts import TUNE_SEEDS, simulate

HELP = "the advantage-play tests' statistics at every look at null bettors on the tuning seeds (how thresholds were set)"

_NEVER = apalerts.Thresholds(ramp_lr=float("inf"), wong_p=-1.0, wong_min=1, insurance_p=-1.0, insurance_min=1,
                             hole_z=float("inf"), hole_min=1)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--sessions", type=int, default=120)
    parser.add_argument("--shoes", type=int, default=20)
    parser.add_argument("--penetration", type=int, default=75)


@contextmanager
def _recording(looks: dict[str, list[float]]) -> Iterator[None]:
    """apalerts' statistics recorded as the fold computes them (this process only; put back after)."""
    names = {"ramp_lr": "bet_ramp", "binomial_tail": "wonging", "fisher_greater": "insurance", "cmh_z": "hole_card"}
    saved = {name: getattr(apalerts, name) for name in names}

    def wrap(name: str, kind: str) -> Callable[..., Any]:
        def recorded(*args: Any) -> Any:
            value = saved[name](*args)
            looks[kind].append(value[0] if isinstance(value, tuple) else value)
            return value
        return recorded

    try:
        for name, kind in names.items():
            setattr(apalerts, name, wrap(name, kind))
        yield
    finally:
        for name, fn in saved.items():
            setattr(apalerts, name, fn)


def run(args: argparse.Namespace, say: Callable[[str], None]) -> dict[str, Any]:
    looks: dict[str, list[float]] = {k: [] for k in apalerts.KINDS}
    shoes = 0
    first = TUNE_SEEDS + args.penetration * 1000
    with _recording(looks):
        for i in range(args.sessions):
            shoes += simulate(first + i, args.shoes, args.penetration, thresholds=_NEVER,
                              players=("flat", "random")).shoes
    out: dict[str, Any] = {"seeds": [first, first + args.sessions - 1], "shoes": shoes, "tests": {}}
    for kind, values in looks.items():
        worst = (min(values) if kind in ("wonging", "insurance") else max(values)) if values else None
        out["tests"][kind] = {"looks": len(values), "most_extreme": worst}
        say(f"{kind:<10} {len(values):>7} looks over {shoes} shoes; most extreme statistic {worst}")
    return out

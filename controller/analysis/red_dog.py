"""Red dog's math report, exact: every ordered three-rank deal from the shoe, with the raise strategy that maximises
the expectation (raise the whole ante exactly when the raise alone is worth more than nothing).

Method. Suits do not matter, so a deal is an ordered triple of ranks weighted by its exact probability from a
`decks`-deck shoe (4d cards a rank, drawn without replacement). The raise is worth p(k) x pay(k) - (1 - p(k)) per
credit on a spread of k, so it is made on every spread where that is positive (7 and up on the usual paytable,
for any number of decks). `round_net` is the vectorised twin of the engine's settlement (a test steps the engine
on the same seeded cards and compares round by round).

Published figures (oddsshark.com, "Red Dog odds", after Wizard of Odds): house edge 3.15% with one deck, 3.077% two,
2.88% four, 2.80% six, 2.75% eight; "raise only on spreads of 7 or more" (wizardofodds.com/reddog, whose six-deck
table of the chance of winning by spread, 0.077419 for a spread of 1 ..., this report repeats). This report:
3.1554% (1 deck), 3.0766% (2), 2.8838% (4), 2.7978% (6), 2.7509% (8).
"""

from __future__ import annotations

from dataclasses import replace
from fractions import Fraction
from typing import Any, Callable

import numpy as np

from controller.analysis import report
from controller.games.red_dog import Rules, spread_pays

__all__ = ["analyse", "exact", "raises_on", "round_net"]

RANKS = 13


def raises_on(rules: Rules) -> tuple[int, ...]:
    """The spreads on which raising the whole ante has a positive expectation."""
    n = 52 * rules.decks
    out = []
    for gap in range(1, 12):
        win = Fraction(4 * rules.decks * gap, n - 2)
        pays = spread_pays(rules, gap)
        if win * Fraction(pays.win, pays.per) - (1 - win) > 0:
            out.append(gap)
    return tuple(out)


def exact(rules: Rules) -> dict[str, Fraction]:
    """Exact probabilities of every first-two-card case and the expectation per credit of ante, with and without
    the optimal raise."""
    d = rules.decks
    n = 4 * d                            # cards of one rank
    total = 52 * d
    two = Fraction(1, total * (total - 1))
    out: dict[str, Fraction] = {}
    out["pair"] = RANKS * n * (n - 1) * two
    out["three_of_a_kind"] = out["pair"] * Fraction(n - 2, total - 2)
    out["consecutive"] = 2 * (RANKS - 1) * n * n * two
    trips = rules.three_of_a_kind
    ev = ev_no_raise = out["three_of_a_kind"] * Fraction(trips.win, trips.per)
    raised = Fraction(0)
    raise_on = raises_on(rules)
    for gap in range(1, 12):
        p = 2 * (RANKS - 1 - gap) * n * n * two
        win = Fraction(n * gap, total - 2)
        pays = spread_pays(rules, gap)
        value = win * Fraction(pays.win, pays.per) - (1 - win)       # per credit on the layout
        out[f"spread_{gap}"] = p
        out[f"spread_{gap}_wins"] = win
        ev_no_raise += p * value
        ev += p * value * (2 if gap in raise_on else 1)
        if gap in raise_on:
            raised += p
    out["ev"], out["ev_no_raise"], out["raise"] = ev, ev_no_raise, raised
    return out


def round_net(rules: Rules, first: np.ndarray, second: np.ndarray, third: np.ndarray, ante: int,
              raised: np.ndarray) -> np.ndarray:
    """Net credits of an ante of `ante` plus a raise of `raised` (0 where the spot stood) per round, from the ranks
    of the three cards (2..14), settled as the engine settles it."""
    first, second, third = (np.asarray(a, dtype=np.int64) for a in (first, second, third))
    raised = np.asarray(raised, dtype=np.int64)
    gap = np.abs(first - second) - 1
    low, high = np.minimum(first, second), np.maximum(first, second)
    inside = (low < third) & (third < high)
    net = np.zeros(first.shape, dtype=np.int64)
    trips = (gap == -1) & (third == first)
    net[trips] = rules.three_of_a_kind.on(ante)
    for k in range(1, 12):
        pays = spread_pays(rules, k)
        at = gap == k
        win_ante, win_raise = pays.on(ante), np.array([pays.on(int(r)) for r in raised[at]], dtype=np.int64)
        net[at] = np.where(inside[at], win_ante + win_raise, -ante - raised[at])
    return net


def analyse(rules: Rules, rounds: int | None, seed: int, say: Callable[[str], None]) -> dict[str, Any]:
    say(f"red dog: exact expectation for {rules.decks} deck(s), raising on spreads {raises_on(rules)}")
    figures = exact(rules)
    probabilities = {k: float(v) for k, v in figures.items() if k not in ("ev", "ev_no_raise")}
    house_edge = {"ante": float(figures["ev"]), "ante_never_raising": float(figures["ev_no_raise"])}
    by_decks = {str(d): float(exact(replace(rules, decks=d))["ev"]) for d in range(1, 9)}
    return report("red-dog", rules.to_json(), "exact", None, probabilities, house_edge, None,
                  raise_on_spreads=list(raises_on(rules)),
                  element_of_risk=float(figures["ev"] / (1 + figures["raise"])),
                  by_decks=by_decks,
                  note="per credit of ante; the raise is the whole ante on the spreads listed (the best play)")

"""Let it ride math, exact: the optimal take-back strategy and the house edge by enumerating all 2,598,960 five-card hands.

Method. A bet still riding wins r (the paytable's ratio) or loses 1, on the final five cards alone; the
cards are dealt before any decision, so a decision changes only which bets ride, never the hand.
Therefore each bet is worth, independently of the others:
- bet 3 (never taken back): E[r] over all five-card hands;
- bet 2 (decided on the player's three cards and the first community card): max(0, E[r | four cards]),
  averaged over all 270,725 four-card sets (each has 48 completions);
- bet 1 (decided on the three cards): max(0, E[r | three cards]), averaged over all 22,100 three-card sets
  (each has 1,176 completions).
Riding when the conditional expectation is not negative is the optimal strategy (at exactly zero the
house edge is the same either way; the published strategy rides, e.g. on four to an outside straight,
and so does this one). `strategy` gives those decisions as tables, and `settle` settles rounds with them exactly as the engine does (a test
compares the two round by round on seeded cards). Sums are integers and the result a Fraction, so the
figures are exact.

House edge is a fraction of one unit (one of the three equal bets), the published convention.
Published figures (Wizard of Odds, "Let It Ride", wizardofodds.com/games/let-it-ride/), paytable
1000-200-50-11-8-5-3-2-1: house edge 3.506% of one unit; 500:1 on the royal, 3.737%. With 1.23 units
wagered on average the element of risk is 2.85% (John Grochowski, "Let It Ride Redux", Casino City
Times, 2020).
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from math import comb
from typing import Any, Callable

import numpy as np

from controller.analysis import report
from controller.analysis._enumerate import colex, combinations, lcm_of_pers
from controller.batch.hands import evaluate
from controller.games.let_it_ride import LINES, Rules
from controller.hands import poker

__all__ = ["analyse", "Strategy", "strategy", "line_index", "settle", "decisions"]

SUBSETS3 = [(a, b, c) for a in range(5) for b in range(a + 1, 5) for c in range(b + 1, 5)]
SUBSETS4 = [tuple(i for i in range(5) if i != skip) for skip in range(5)]


def line_index(values: np.ndarray) -> np.ndarray:
    """The index in LINES of each five-card value's paytable line, -1 for a losing hand (same as `controller.games.let_it_ride.line_of`)."""
    cat = values >> 20
    top = (values >> 16) & 0xF
    out = np.full(values.shape, -1, dtype=np.int64)
    by_category = {poker.FOUR_OF_A_KIND: "four_of_a_kind", poker.FULL_HOUSE: "full_house", poker.FLUSH: "flush",
                   poker.STRAIGHT: "straight", poker.THREE_OF_A_KIND: "three_of_a_kind", poker.TWO_PAIR: "two_pair"}
    for category, name in by_category.items():
        out[cat == category] = LINES.index(name)
    out[(cat == poker.STRAIGHT_FLUSH) & (top == 14)] = LINES.index("royal_flush")
    out[(cat == poker.STRAIGHT_FLUSH) & (top != 14)] = LINES.index("straight_flush")
    out[(cat == poker.PAIR) & (top >= 10)] = LINES.index("tens_or_better")
    return out


def _nets(values: np.ndarray, rules: Rules, stake: int) -> np.ndarray:
    """Net credits of one bet of `stake` on each hand: its line's winnings, or -stake."""
    win = np.array([stake * p.win // p.per if (p := rules.paytable.get(name)) else -stake for name in LINES] + [-stake],
                   dtype=np.int64)
    return win[line_index(values)]  # index -1 picks the last entry: a losing hand


@dataclass(frozen=True)
class Strategy:
    """Optimal take-back decisions: ride bet 1 on three-card set i when ride1[i], bet 2 on four-card set j
    when ride2[j] (sets indexed by `colex`). `sum3`/`sum4` are the integer sums of r behind them."""

    ride1: np.ndarray
    ride2: np.ndarray
    sum3: np.ndarray
    sum4: np.ndarray
    sum5: int          # r summed over every five-card set
    stake: int


_CACHE: dict[str, Strategy] = {}


def strategy(rules: Rules) -> Strategy:
    """The optimal strategy for these rules' paytable (a few seconds; cached per paytable)."""
    key = repr(sorted((k, str(v)) for k, v in rules.paytable.items()))
    if key not in _CACHE:
        stake = lcm_of_pers(rules.paytable)
        hands = combinations(5)
        nets = _nets(evaluate(hands, check=False).astype(np.int64), rules, stake)
        sum3 = np.zeros(comb(52, 3), dtype=np.int64)
        for sub3 in SUBSETS3:
            sum3 += np.bincount(colex(hands[:, sub3]), weights=nets, minlength=len(sum3)).astype(np.int64)
        sum4 = np.zeros(comb(52, 4), dtype=np.int64)
        for sub4 in SUBSETS4:
            sum4 += np.bincount(colex(hands[:, sub4]), weights=nets, minlength=len(sum4)).astype(np.int64)
        _CACHE[key] = Strategy(sum3 >= 0, sum4 >= 0, sum3, sum4, int(nets.sum()), stake)
    return _CACHE[key]


def decisions(cards: np.ndarray, plan: Strategy) -> tuple[np.ndarray, np.ndarray]:
    """(ride bet 1, ride bet 2) for rounds of cards laid out as (player 3, first community, second community)."""
    cards = np.asarray(cards, dtype=np.int64)
    return (plan.ride1[colex(np.sort(cards[:, :3], axis=1))], plan.ride2[colex(np.sort(cards[:, :4], axis=1))])


def settle(cards: np.ndarray, stake: int, rules: Rules, plan: Strategy) -> np.ndarray:
    """Net credits of each round for one spot betting `stake` three times and playing `plan`, as the engine
    settles it (with the rules' payout cap)."""
    ride1, ride2 = decisions(cards, plan)
    values = evaluate(np.asarray(cards), check=False).astype(np.int64)
    each = _nets(values, rules, stake)
    riding = 1 + ride1.astype(np.int64) + ride2
    net = riding * each
    if rules.payout_cap is not None:
        net = np.where(each > 0, np.minimum(net, rules.payout_cap), net)
    return net


def analyse(rules: Rules, rounds: int | None, seed: int, say: Callable[[str], None]) -> dict[str, Any]:
    """The exact report; `rounds` and `seed` do not apply (exact method). The payout cap is in credits and
    depends on the stake, so the report, per unit, does not apply it (it says so when one is set)."""
    say("let it ride: evaluating all 2,598,960 five-card hands and the optimal take-backs")
    plan = strategy(rules)
    n5, n4, n3 = comb(52, 5), comb(52, 4), comb(52, 3)
    bet3 = Fraction(plan.sum5, n5 * plan.stake)
    bet2 = Fraction(int(plan.sum4[plan.ride2].sum()), n4 * 48 * plan.stake)
    bet1 = Fraction(int(plan.sum3[plan.ride1].sum()), n3 * comb(49, 2) * plan.stake)
    edge = bet1 + bet2 + bet3
    ride1, ride2 = Fraction(int(plan.ride1.sum()), n3), Fraction(int(plan.ride2.sum()), n4)
    wagered = 1 + ride1 + ride2

    hands = combinations(5)
    lines = np.bincount(line_index(evaluate(hands, check=False).astype(np.int64)) + 1, minlength=len(LINES) + 1)
    probabilities = {f"hand: {name.replace('_', ' ')}": lines[i + 1] / n5 for i, name in enumerate(LINES)}
    probabilities["hand: no win"] = lines[0] / n5
    probabilities |= {"ride bet 1": float(ride1), "ride bet 2": float(ride2)}
    extra: dict[str, Any] = {}
    if rules.payout_cap is not None:
        extra["notes"] = f"payout_cap {rules.payout_cap} credits is not applied: the figures are per unit bet"
    return report("let-it-ride", rules.to_json(), "exact", None, {k: float(v) for k, v in probabilities.items()},
                  {"base": float(edge)}, None,
                  strategy="optimal: let a bet ride when its expected return on the cards seen is not negative",
                  bets={"bet_1": float(bet1), "bet_2": float(bet2), "bet_3": float(bet3)},
                  element_of_risk={"base": float(edge / wagered)}, average_units_wagered=float(wagered), **extra)


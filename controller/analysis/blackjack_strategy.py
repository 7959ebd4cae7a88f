"""Blackjack basic strategy for the configured rules: the published multi-deck chart with its H17, DAS and
late-surrender cells, as tables both the engine-driving tests and the numpy fast path read.

The chart is the total-dependent basic strategy for 4 to 8 decks (Thorp/Griffin; Wizard of Odds' charts):
on 1 and 2 decks a few cells differ, so the figures for those shoes are slightly pessimistic (a few
hundredths of a percent). Insurance is never taken.

Codes: a hard or soft cell is H (hit), S (stand), D (double, else hit), X (double, else stand),
R (surrender, else hit) or Q (surrender, else stand); a pair cell is P (split), - (play the total) or
V (surrender, else split).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from controller.cards import Card
from controller.hands.points import blackjack_total, blackjack_value

__all__ = ["Chart", "chart", "decide", "basic_strategy", "UPCARDS"]

UPCARDS = (2, 3, 4, 5, 6, 7, 8, 9, 10, 1)   # the chart's column order: 2..10, then the ace (value 1)

# rows: dealer up 2 3 4 5 6 7 8 9 T A
_HARD = {
    **{t: "HHHHHHHHHH" for t in range(4, 9)},
    9: "HDDDDHHHHH",
    10: "DDDDDDDDHH",
    11: "DDDDDDDDDH",
    12: "HHSSSHHHHH",
    13: "SSSSSHHHHH",
    14: "SSSSSHHHHH",
    15: "SSSSSHHHRH",
    16: "SSSSSHHRRR",
    **{t: "SSSSSSSSSS" for t in range(17, 22)},
}
_SOFT = {
    12: "HHHHHHHHHH",
    13: "HHHDDHHHHH",
    14: "HHHDDHHHHH",
    15: "HHDDDHHHHH",
    16: "HHDDDHHHHH",
    17: "HDDDDHHHHH",
    18: "SXXXXSSHHH",
    **{t: "SSSSSSSSSS" for t in range(19, 22)},
}
_PAIRS_DAS = {1: "PPPPPPPPPP", 10: "----------", 9: "PPPPP-PP--", 8: "PPPPPPPPPP", 7: "PPPPPP----",
              6: "PPPPP-----", 5: "----------", 4: "---PP-----", 3: "PPPPPP----", 2: "PPPPPP----"}
_PAIRS_NO_DAS = {**_PAIRS_DAS, 6: "-PPPP-----", 4: "----------", 3: "--PPPP----", 2: "--PPPP----"}
# Dealer hits soft 17: double 11 and A,8 against 6 and A,7 against 2; surrender 15, 17 and 8,8 against an ace.
_H17_HARD = {11: "DDDDDDDDDD", 15: "SSSSSHHHRR", 17: "SSSSSSSSSQ"}
_H17_SOFT = {18: "XXXXXSSHHH", 19: "SSSSXSSSSS"}


@dataclass(frozen=True, slots=True)
class Chart:
    """hard[total][up], soft[total][up], pairs[value][up]: one-letter codes, `up` a blackjack value 1..10."""

    hard: dict[int, dict[int, str]]
    soft: dict[int, dict[int, str]]
    pairs: dict[int, dict[int, str]]


def _columns(rows: dict[int, str]) -> dict[int, dict[int, str]]:
    return {total: dict(zip(UPCARDS, row)) for total, row in rows.items()}


def chart(dealer_hits_soft_17: bool, double_after_split: bool) -> Chart:
    """The chart for these rules (surrender cells are there; they read as hit or stand when it is not offered)."""
    hard, soft = dict(_HARD), dict(_SOFT)
    pairs = dict(_PAIRS_DAS if double_after_split else _PAIRS_NO_DAS)
    if dealer_hits_soft_17:
        hard.update(_H17_HARD)
        soft.update(_H17_SOFT)
        pairs[8] = "PPPPPPPPPV"
    return Chart(_columns(hard), _columns(soft), _columns(pairs))


def decide(c: Chart, total: int, soft: bool, pair: int, up: int, can_double: bool, can_split: bool,
           can_surrender: bool) -> str:
    """The basic-strategy action for a hand (`pair` is the value of a splittable pair, else 0)."""
    if pair and can_split:
        cell = c.pairs[pair][up]
        if cell == "P" or (cell == "V" and not can_surrender):
            return "split"
        if cell == "V":
            return "surrender"
    code = (c.soft if soft else c.hard)[total][up]
    if code in "RQ":
        return "surrender" if can_surrender else ("hit" if code == "R" else "stand")
    if code in "DX":
        return "double" if can_double else ("hit" if code == "D" else "stand")
    return "hit" if code == "H" else "stand"


def basic_strategy(c: Chart, cards: Sequence[Card], up: Card, legal: Sequence[str]) -> str:
    """The action for a hand of the engine, among its legal actions (what a basic-strategy player does)."""
    t = blackjack_total(cards)
    values = [blackjack_value(x) for x in cards]
    pair = values[0] if len(values) == 2 and values[0] == values[1] else 0
    if "hit" not in legal:  # a split ace: resplit another ace when allowed, else it stands
        return "split" if "split" in legal and pair == 1 else "stand"
    return decide(c, t.total, t.soft, pair, blackjack_value(up),
                  "double" in legal, "split" in legal, "surrender" in legal)

"""Pai gow poker hand values: the five-card back hand (joker as a bug, A-2-3-4-5 second-best straight) and the two-card front hand."""

from __future__ import annotations

from typing import Sequence

from controller.cards import ACE, Card
from controller.hands.poker import HIGH_CARD, PAIR, JokerRule, best_value, pack

__all__ = ["back_value", "front_value", "is_foul"]


def back_value(cards: Sequence[Card]) -> int:
    """Value of a five-card back hand, in the same scale as `front_value`.

    000_* (pai gow poker): the joker is "a bug": an ace, or the fifth card of a straight, flush or
    straight flush; hands run from five aces down; A-2-3-4-5 is the next-highest straight after
    A-K-Q-J-T. (The seed's Philippine variant, joker also as J/Q/K, is not the default and not built.)
    """
    if len(cards) != 5:
        raise ValueError(f"a pai gow back hand has 5 cards, got {len(cards)}")
    return best_value(cards, JokerRule.BUG, wheel_second=True)


def front_value(cards: Sequence[Card]) -> int:
    """Value of a two-card front hand: a pair or high cards only (straights and flushes do not count).

    The joker plays as an ace. The value is on the five-card scale with empty kicker fields, so a back
    hand always compares directly (a back pair of aces with kickers outranks a front pair of aces).
    """
    if len(cards) != 2:
        raise ValueError(f"a pai gow front hand has 2 cards, got {len(cards)}")
    if cards[0] == cards[1]:
        raise ValueError(f"duplicate card {cards[0]} in one hand")
    hi, lo = sorted((ACE if c.joker else c.rank for c in cards), reverse=True)
    if hi == lo:
        return pack(PAIR, [hi])
    return pack(HIGH_CARD, [hi, lo])


def is_foul(back: Sequence[Card], front: Sequence[Card]) -> bool:
    """A setting is foul when the back hand does not outrank the front hand."""
    return back_value(back) <= front_value(front)

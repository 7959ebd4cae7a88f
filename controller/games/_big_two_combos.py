"""Big two's cards and combinations: the rank and suit order, the legal plays (singles, pairs, triples, five-card
hands), the straight orders of the variants, and which play beats which (the rules are in big_two's docstring)."""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Sequence

from controller.cards import Card

if TYPE_CHECKING:
    from controller.games.big_two import Rules

__all__ = ["Straights", "Combo", "combo", "beats", "rank_value", "card_key", "lowest_card", "SINGLE", "PAIR", "TRIPLE",
           "FIVE", "STRAIGHT", "FLUSH", "FULL_HOUSE", "FOUR", "STRAIGHT_FLUSH", "FIVE_NAMES", "STRAIGHT_ORDERS",
           "straight_position"]

SINGLE, PAIR, TRIPLE, FIVE = "single", "pair", "triple", "five"
STRAIGHT, FLUSH, FULL_HOUSE, FOUR, STRAIGHT_FLUSH = range(5)
FIVE_NAMES = ("straight", "flush", "full house", "four of a kind", "straight flush")


class Straights(enum.Enum):
    """The straight orders the seed lists, lowest first."""

    HONG_KONG = "hong_kong"              # 34567 < ... < TJQKA < 23456 < A2345 (the seed's main text)
    MALAYSIAN = "malaysian"              # 34567 < ... < TJQKA < A2345 < 23456
    INDONESIAN = "indonesian"            # 34567 < ... < TJQKA < JQKA2
    ACE_LOW = "ace_low"                  # 23456 < 34567 < ... < TJQKA < A2345 (suit of the ace breaks ties)
    ACE_FIVE_SECOND = "ace_five_second"  # 23456 < ... < 9TJQK < A2345 < TJQKA (suit of the ace)
    VIETNAMESE = "vietnamese"            # 34567 < ... < TJQKA


def _run(low: int) -> frozenset[int]:
    return frozenset(((low + k - 2) % 13) + 2 for k in range(5))   # ranks 2..14 wrapping past the ace


_MIDDLE = [_run(low) for low in range(3, 11)]            # 3-4-5-6-7 .. 10-J-Q-K-A
STRAIGHT_ORDERS = {
    Straights.HONG_KONG: _MIDDLE + [_run(2), _run(14)],
    Straights.MALAYSIAN: _MIDDLE + [_run(14), _run(2)],
    Straights.INDONESIAN: _MIDDLE + [_run(11)],
    Straights.ACE_LOW: [_run(2)] + _MIDDLE + [_run(14)],
    Straights.ACE_FIVE_SECOND: [_run(2)] + _MIDDLE[:-1] + [_run(14), _MIDDLE[-1]],
    Straights.VIETNAMESE: _MIDDLE,
}


def rank_value(rank: int) -> int:
    """3 -> 0 .. K -> 10, A -> 11, 2 -> 12."""
    return (rank - 3) % 13


def card_key(card: Card, rules: Rules) -> int:
    return rank_value(card.rank) * 4 + rules.suit_value(card.suit)  # type: ignore[arg-type]


def lowest_card(cards: Sequence[Card], rules: Rules) -> Card:
    return min(cards, key=lambda c: card_key(c, rules))


@dataclass(frozen=True, order=True)
class Combo:
    """A legal play: its size, five-card category (0 below five cards) and the key that orders plays alike."""

    size: int
    category: int
    key: tuple[int, ...]
    name: str = field(compare=False)


def combo(cards: Sequence[Card], rules: Rules) -> Combo | None:
    """The combination these cards make under the rules, or None when they make none."""
    if len(set(cards)) != len(cards) or any(c.joker for c in cards):
        return None
    ranks = sorted((rank_value(c.rank) for c in cards), reverse=True)
    top = max(cards, key=lambda c: card_key(c, rules))
    n = len(cards)
    if n == 1:
        return Combo(1, 0, (card_key(top, rules),), SINGLE)
    if n in (2, 3) and len(set(ranks)) == 1:
        if n == 3 and not rules.triples:
            return None
        return Combo(n, 0, (ranks[0], rules.suit_value(top.suit)) if n == 2 else (ranks[0],),  # type: ignore[arg-type]
                     PAIR if n == 2 else TRIPLE)
    if n != 5:
        return None
    counts = sorted(((ranks.count(r), r) for r in set(ranks)), reverse=True)
    flush = len({c.suit for c in cards}) == 1
    position = straight_position(cards, rules)
    if position is not None:
        tie = rules.suit_value(_straight_top(cards, rules).suit)  # type: ignore[arg-type]
        if flush:
            return Combo(5, STRAIGHT_FLUSH, (position, tie), FIVE_NAMES[STRAIGHT_FLUSH])
        return Combo(5, STRAIGHT, (position, tie), FIVE_NAMES[STRAIGHT])
    if counts[0][0] == 4:
        return Combo(5, FOUR, (counts[0][1],), FIVE_NAMES[FOUR])
    if counts[0][0] == 3 and counts[1][0] == 2:
        return Combo(5, FULL_HOUSE, (counts[0][1],), FIVE_NAMES[FULL_HOUSE])
    if flush and rules.flushes:
        suit = rules.suit_value(cards[0].suit)  # type: ignore[arg-type]
        key = (suit, *ranks) if rules.flush_by_suit else (*ranks, suit)
        return Combo(5, FLUSH, key, FIVE_NAMES[FLUSH])
    return None


def straight_position(cards: Sequence[Card], rules: Rules) -> int | None:
    """Where these five cards stand in the rules' order of straights, or None when they make no straight."""
    ranks = frozenset(c.rank for c in cards)
    if len(ranks) != 5:
        return None
    order = STRAIGHT_ORDERS[rules.straights]
    return order.index(ranks) if ranks in order else None


def _straight_top(cards: Sequence[Card], rules: Rules) -> Card:
    """The card whose suit breaks a tie between equal straights: the biggest by big two's ranks, or for the
    ace-low orders the ace (else the highest in poker order), as the seed says for each."""
    if rules.straights in (Straights.ACE_LOW, Straights.ACE_FIVE_SECOND):
        return max(cards, key=lambda c: c.rank)
    return max(cards, key=lambda c: card_key(c, rules))


def beats(play: Combo, last: Combo) -> bool:
    """Does `play` beat `last` (same number of cards; five-card hands by category, then key)?"""
    return play.size == last.size and (play.category, play.key) > (last.category, last.key)

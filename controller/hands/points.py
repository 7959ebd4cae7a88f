"""Point counts: baccarat points and blackjack totals (hard/soft, blackjack)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from controller.cards import ACE, TEN, Card

__all__ = ["baccarat_value", "baccarat_points", "BlackjackTotal", "blackjack_value", "blackjack_total"]


def _no_joker(card: Card, game: str) -> None:
    if card.joker:
        raise ValueError(f"a joker has no value in {game}")


def baccarat_value(card: Card) -> int:
    """Ace 1, two to nine their pips, tens and faces 0."""
    _no_joker(card, "baccarat")
    if card.rank == ACE:
        return 1
    return 0 if card.rank >= TEN else card.rank


def baccarat_points(cards: Sequence[Card]) -> int:
    """The hand's points: the sum of card values, tens dropped (0..9)."""
    return sum(baccarat_value(c) for c in cards) % 10


def blackjack_value(card: Card) -> int:
    """A card's hard value: ace 1, tens and faces 10."""
    _no_joker(card, "blackjack")
    if card.rank == ACE:
        return 1
    return min(card.rank, 10)


@dataclass(frozen=True, slots=True)
class BlackjackTotal:
    total: int       # best total: an ace counts 11 when that does not bust the hand
    soft: bool       # an ace is counted as 11 in `total`
    blackjack: bool  # ace and a ten-card as the first two cards (the game decides if it pays as one)
    bust: bool       # total over 21

    def __str__(self) -> str:
        if self.blackjack:
            return "blackjack"
        if self.bust:
            return f"{self.total} bust"
        return f"soft {self.total}" if self.soft else str(self.total)


def blackjack_total(cards: Sequence[Card]) -> BlackjackTotal:
    hard = sum(blackjack_value(c) for c in cards)
    soft = hard + 10 <= 21 and any(c.rank == ACE for c in cards)
    total = hard + 10 if soft else hard
    return BlackjackTotal(total=total, soft=soft, blackjack=len(cards) == 2 and total == 21, bust=total > 21)

"""What the pot games (in-between, the high-card pool) share: the pot that carries from round to round, the antes
that fill it when it is empty, and the deal that goes round the table.

A round is one player's turn. The pot belongs to no player and no house: every credit a player puts in (an ante, a
lost bet, a forfeit) is a stake of the round settled "to the pot", every credit taken out is a win paid from it,
and the round's `Settlement` carries `pot_in` (the pot when the round opened, before any ante) and `pot_out`. So
each round: stakes = returned + (pot_out - pot_in), with no house take.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from controller.games.base import BoxResult, Effect, Effects, Settlement, StakeChanged
from controller.games.bets import Bets

__all__ = ["Pot", "DealerChanged", "turn_order", "ANTE"]

ANTE = "ante"


@dataclass(frozen=True, slots=True)
class DealerChanged(Effect):
    """The deal passed to `spot` (every player has had a turn)."""
    KIND: ClassVar[str] = "dealer_changed"
    spot: int
    reason: str


def turn_order(spots: int, dealer: int) -> tuple[int, ...]:
    """The players in turn for one deal: from the dealer's left round to the dealer, who plays last."""
    return tuple((dealer + i - 1) % spots + 1 for i in range(1, spots + 1))


@dataclass(frozen=True, slots=True)
class Pot:
    """The pot now (`chips`), when this round opened (`at_open`), and the antes this round put in."""

    chips: int = 0
    at_open: int = 0
    antes: Bets = Bets()

    def open(self, spots: int, ante: int) -> tuple[Pot, Effects]:
        """A round opens: an empty pot is filled by an ante from every player."""
        if self.chips:
            return Pot(self.chips, self.chips), ()
        antes = Bets(tuple((s, ANTE, ante) for s in range(1, spots + 1)))
        return Pot(ante * spots, 0, antes), tuple(StakeChanged(s, ANTE, ante, ante) for s in range(1, spots + 1))

    def void(self) -> tuple[Pot, Effects]:
        """The round is cancelled: the antes go back and the pot is what it was when the round opened."""
        return Pot(self.at_open, self.at_open), tuple(StakeChanged(s, b, 0, -a) for s, b, a in self.antes)

    def settle(self, results: tuple[BoxResult, ...]) -> tuple[Pot, Settlement]:
        """The round's settlement (the antes first) and the pot that carries on: every credit of `results` not
        returned goes into the pot, every credit paid comes out of it."""
        out = self.chips + sum(r.stake - r.returned for r in results)
        if out < 0:  # pragma: no cover - the games pay at most what the pot holds
            raise ValueError(f"the pot cannot pay {-out} more than it holds")
        antes = tuple(BoxResult(s, ANTE, a, "ante", 0, 0, 0, "ante: to the pot") for s, _, a in self.antes)
        return Pot(out, out), Settlement(antes + results, pot_in=self.at_open, pot_out=out)

    def json(self) -> dict[str, int]:
        return {"chips": self.chips, "at_open": self.at_open, "antes": self.antes.total}

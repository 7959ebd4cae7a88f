"""What the shoe games (blackjack, baccarat, chemin de fer, and table games III) share: the shoe as the table tracks
it (a card it cannot hold is refused, the cut card, reshuffles), a round's betting and voiding, the check of a card's
destination and of a decision.

Pure and immutable like the games themselves. `cut` counts the cards dealt before the cut card comes out
(as `controller.cards.Shoe.cut`): once that many are dealt the game emits `ShuffleDue` and asks for a
`NewShoe` when the round is over.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Collection, Iterable, Mapping

from controller.cards import Card, Composition
from controller.games.base import (
    CardDealt, CardPlaced, CloseBets, Decision, Effects, Expected, IllegalEvent, NewShoe, PlaceBet, RemoveBet,
    RoundVoided, RulesError, ShuffleDue, StakeChanged, Waiting,
)
from controller.games.bets import Bets, Limit

__all__ = ["ShoeState", "load_shoe", "betting_step", "voided", "card_target", "deal_from_shoe", "check_decision",
           "check_range"]


@dataclass(frozen=True, slots=True)
class ShoeState:
    """Cards left in the shoe in play; `left` is None until the first shoe is loaded."""

    decks: int = 0
    cut: int = 0
    dealt: int = 0
    left: Composition | None = None

    @property
    def loaded(self) -> bool:
        return self.left is not None

    @property
    def remaining(self) -> int:
        return 0 if self.left is None else self.left.size

    @property
    def cut_reached(self) -> bool:
        return self.left is not None and self.dealt >= self.cut

    def take(self, card: Card) -> tuple[ShoeState, Effects]:
        """The shoe after `card` came out of it; a card it cannot hold (a ninth ace of spades in an 8-deck shoe,
        a joker) is refused, because it was not dealt from this shoe."""
        if self.left is None:
            raise IllegalEvent("no shoe is in play: load a new shoe first")
        if card.joker:
            raise IllegalEvent("a joker cannot come from this shoe: it holds no jokers")
        if self.left.count(card) == 0:
            if self.left.size == 0:
                raise IllegalEvent("the shoe is empty: reshuffle (new shoe) before dealing on")
            raise IllegalEvent(f"{card} cannot come from this shoe: every {card} of its {self.decks} deck(s) is "
                               "already out (a foreign card, or a misread)")
        new = replace(self, dealt=self.dealt + 1, left=self.left.remove(card))
        if new.dealt == self.cut:
            return new, (ShuffleDue("cut card reached: this is the last round of the shoe"),)
        if new.left is not None and new.left.size == 0:
            return new, (ShuffleDue("the shoe is empty: reshuffle before the next card"),)
        return new, ()

    def json(self) -> dict[str, int | bool]:
        """Public shoe figures: counts only (the composition left would tell a face-down card)."""
        return {"decks": self.decks, "dealt": self.dealt, "cut": self.cut, "remaining": self.remaining,
                "cut_reached": self.cut_reached}


def load_shoe(event: NewShoe, decks: int, cards_behind_cut: int, on_table: Iterable[Card] = (),
              min_behind: int = 1, min_cut: int = 1) -> ShoeState:
    """A freshly shuffled shoe of `decks` decks. `cards_behind_cut` places the cut card when the event does not;
    cards still on the table (a reshuffle in the middle of a round) stay out of the new shoe."""
    if isinstance(event.decks, bool) or event.decks != decks:
        raise IllegalEvent(f"this table plays {decks} deck(s), not {event.decks!r}")
    left = Composition.of(decks)
    try:
        left = left.remove_all(on_table)
    except ValueError as exc:  # pragma: no cover - the table's cards all came out of the previous shoe
        raise IllegalEvent(str(exc)) from None
    size = left.size
    cut = size - cards_behind_cut if event.cut is None else event.cut
    if isinstance(cut, bool) or not isinstance(cut, int) or not min_cut <= cut <= size - min_behind:
        raise IllegalEvent(f"the cut card must come after card {min_cut} and leave at least {min_behind} card(s) "
                           f"behind it in a shoe of {size}, not at {cut!r}")
    return ShoeState(decks, cut, 0, left)


def voided(round_: int, stakes: Iterable[tuple[int, str, int]], reason: str) -> Effects:
    """A voided round's effects: every stake (spot, box, amount) handed back, then the void with their total."""
    stakes = tuple(stakes)
    back = tuple(StakeChanged(spot, box, 0, -amount) for spot, box, amount in stakes)
    return back + (RoundVoided(round_, reason, sum(amount for _, _, amount in stakes)),)


def betting_step(bets: Bets, event: PlaceBet | RemoveBet | CloseBets, is_open: bool, spots: int,
                 limits: Mapping[str, Limit]) -> tuple[Bets, Effects]:
    """A bet placed or taken back within the limits, or the close of betting (bets there, over the minimums)."""
    if not is_open:
        raise IllegalEvent("bets are not open")
    if isinstance(event, CloseBets):
        if not bets:
            raise IllegalEvent("no bets on the table")
        bets.check_minimums(limits)
        return bets, ()
    new, changed = (bets.place if isinstance(event, PlaceBet) else bets.remove)(event, spots, limits)  # type: ignore[arg-type]
    return new, (changed,)


def card_target(expected: Expected, event: CardDealt) -> str:
    """Where a dealt card goes: where the game expects one; a card now, or for elsewhere, is refused."""
    if expected.card_to is None:
        raise IllegalEvent(f"no card expected now: {expected.text}")
    if event.target is not None and event.target != expected.card_to:
        raise IllegalEvent(f"the next card goes to {expected.card_to}, not {event.target}")
    return expected.card_to


def deal_from_shoe(shoe: ShoeState, expected: Expected, event: CardDealt) -> tuple[str, ShoeState, Effects]:
    """A dealt card where the game expects one (`card_target`), out of `shoe`: where it goes, the shoe after it, and
    its effects (the card placed, face up as expected, then any `ShuffleDue`)."""
    to = card_target(expected, event)
    after, shuffle = shoe.take(event.card)
    return to, after, (CardPlaced(event.card, to, bool(expected.face_up)),) + shuffle


def check_decision(expected: Expected, event: Decision, amount_actions: Collection[str] = ()) -> None:
    """A decision is legal now: one is expected, from this actor, for this hand, one of the actions offered; an
    action in `amount_actions` takes an amount within `expected.amount_range`, any other takes none."""
    if expected.phase is not Waiting.DECIDING:
        raise IllegalEvent(f"no decision expected now: {expected.text}")
    if event.actor != expected.actor:
        raise IllegalEvent(f"the decision is {expected.actor}'s, not {event.actor}'s")
    if event.hand != expected.hand:
        raise IllegalEvent(f"the hand in play is hand {expected.hand + 1}, not hand {event.hand + 1}")
    if event.action not in expected.actions:
        raise IllegalEvent(f"{event.action!r} is not allowed now ({expected.text})")
    if event.action in amount_actions:
        assert expected.amount_range is not None
        lo, hi = expected.amount_range
        if isinstance(event.amount, bool) or not isinstance(event.amount, int) or not lo <= event.amount <= hi:
            raise IllegalEvent(f"{event.action} takes {lo} to {hi} credits now, not {event.amount!r}")
    elif event.amount:
        raise IllegalEvent(f"{event.action} takes no amount")


def check_range(key: str, value: int, low: int, high: int, what: str = "") -> None:
    """Rules validation: `value` of rules key `key` within [low, high], or a RulesError naming the key."""
    if not low <= value <= high:
        raise RulesError(f"rules.{key}: {low} to {high}{what}, got {value}")

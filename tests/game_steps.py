"""Helpers for table-driven game tests: apply a list of events, collect the effects, find the settlement."""

from __future__ import annotations

from typing import Any, Iterable

from controller.cards import Card, parse_cards, shoe
from controller.games.base import CardDealt, Effect, Event, GameSpec, NewShoe, RoundSettled, Settlement, StakeChanged
from controller.rng import SeededRng


def run(game: GameSpec, state: Any, events: Iterable[Event]) -> tuple[Any, list[Effect]]:
    """Apply `events` in order; every effect they produced, in order."""
    effects: list[Effect] = []
    for event in events:
        state, out = game.apply(state, event)
        effects.extend(out)
    return state, effects


def deal(text: str) -> list[CardDealt]:
    """CardDealt events for 'AS KD 9H ...' (each goes where the game expects it)."""
    return [CardDealt(card) for card in parse_cards(text)]


def settlement(effects: Iterable[Effect]) -> Settlement:
    found = [e.settlement for e in effects if isinstance(e, RoundSettled)]
    assert len(found) == 1, f"expected one settlement, got {len(found)}"
    return found[0]


def committed(effects: Iterable[Effect]) -> int:
    """Credits put on the layout (the sum of StakeChanged deltas)."""
    return sum(e.delta for e in effects if isinstance(e, StakeChanged))


def results(effects: Iterable[Effect]) -> dict[tuple[int, str], tuple[str, int, str]]:
    """(spot, box) -> (outcome, net, line) of the round's settlement."""
    return {(r.spot, r.box): (r.outcome, r.net, r.line) for r in settlement(effects).results}


class SeededShoes:
    """Deals an engine from seeded shuffled shoes: a fresh shoe whenever the game asks for one, then its cards
    in order (for tests that step an engine and a fast path on the same cards)."""

    def __init__(self, game: GameSpec, decks: int, seed: int) -> None:
        self.game, self.decks, self.rng = game, decks, SeededRng(seed)
        self.cards: list[Card] = []
        self.pos = 0

    def new_shoe(self, state: Any) -> Any:
        self.cards, self.pos = self.rng.shuffled(shoe(self.decks)), 0
        return self.game.apply(state, NewShoe(self.decks))[0]

    def deal(self, state: Any) -> tuple[Any, tuple[Effect, ...]]:
        self.pos += 1
        return self.game.apply(state, CardDealt(self.cards[self.pos - 1]))

    def since(self, start: int, then: int) -> list[Card]:
        """The cards dealt from position `start`, followed by the next `then` cards still in the shoe."""
        return self.cards[start:self.pos + then]

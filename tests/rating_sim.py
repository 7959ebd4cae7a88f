"""A seeded simulation of rated play through the table's pure fold (tablestate.step): the dealer, the shoe and
the players as journal records, for the rating and paperwork tests and `croupier bench rating`."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

from controller.cards import Card, shoe
from controller.games import get_game
from controller.games.base import (CardDealt, CloseBets, Decision, NewShoe, OpenBets, PlaceBet, Settle, Waiting,
                                   parse_spot_actor)
from controller.rng import Rng
from controller.tablerecords import Game, RatingStart, RatingStop
from controller.tablestate import TableState, new_state, step

# (game state, seat's hand cards, dealer up card, legal actions) -> action
Strategy = Callable[[Any, tuple[Card, ...], Card, tuple[str, ...]], str]


@dataclass
class Sim:
    """A table folded record by record, with a shoe shuffled by `rng` and every record kept."""

    game: str
    rng: Rng
    rules: dict[str, Any] = field(default_factory=dict)
    records: list[dict[str, Any]] = field(default_factory=list)
    clock: int = 1_700_000_000

    def __post_init__(self) -> None:
        self.spec = get_game(self.game)
        self.state: TableState = new_state(f"{self.game}-1", self.spec, self.spec.rules(self.rules))
        self.cards: list[Card] = []
        self.settled: list[Any] = []   # every RoundSettled effect

    def add(self, record: dict[str, Any]) -> tuple[Any, ...]:
        self.state, effects = step(self.state, record)
        self.records.append(record)
        self.clock += 1
        for eff in effects:
            if eff.KIND == "round_settled":
                self.settled.append(eff)
        return effects

    def event(self, event: Any, via: str = "dealer") -> tuple[Any, ...]:
        return self.add(Game(event.to_json(), via).to_json())

    def new_shoe(self) -> None:
        decks = getattr(self.state.game.rules, "decks", 1)
        self.cards = self.rng.shuffled(list(shoe(decks)))
        self.event(NewShoe(decks))

    def rate(self, spot: int, player: str) -> None:
        self.add(RatingStart(spot, player, self.clock, "pit").to_json())

    def unrate(self, spot: int) -> None:
        self.add(RatingStop(spot, self.clock, "pit").to_json())

    def round(self, bets: dict[int, dict[str, int]], strategies: dict[int, Strategy]) -> None:
        """One round: open, the bets, close, deal, each spot's decisions by its strategy, settle."""
        exp = self.spec.expected_next(self.state.game)
        if exp.phase == Waiting.SHUFFLING or self.state.shoe.shuffle_due or not self.cards:
            self.new_shoe()
        while self.spec.expected_next(self.state.game).card_to is not None:   # a burn after the shuffle
            self.event(CardDealt(self.cards.pop(), "shoe"), "shoe")
        self.event(OpenBets())
        for spot, boxes in bets.items():
            for box, amount in boxes.items():
                self.event(PlaceBet(spot, box, amount), f"spot:{spot}")
        self.event(CloseBets())
        for _ in range(200):
            exp = self.spec.expected_next(self.state.game)
            if exp.phase == Waiting.IDLE or exp.phase == Waiting.SHUFFLING:
                return
            if exp.card_to is not None:
                if not self.cards:
                    self.new_shoe()
                self.event(CardDealt(self.cards.pop(), "shoe"), "shoe")
            elif exp.phase == Waiting.SETTLING:
                self.event(Settle())
            elif exp.actor is not None:
                spot = parse_spot_actor(exp.actor)
                actions = tuple(exp.actions)
                if "insure" in actions or "decline" in actions:
                    action = "decline"
                else:
                    g = self.state.game
                    from controller.games.blackjack import current_hand

                    si, hi = current_hand(g)
                    hand = g.seats[si].hands[hi]
                    assert spot is not None
                    action = strategies[spot](g, hand.cards, g.dealer[0], actions)
                self.event(Decision(exp.actor, action, 0, exp.hand or 0), exp.actor)
            else:
                raise AssertionError(f"the simulation does not know what to do: {exp}")
        raise AssertionError("a round took more than 200 steps")


def basic(state: Any, cards: tuple[Card, ...], up: Card, legal: tuple[str, ...]) -> str:
    """Basic strategy (the published chart for the rules), as the demo's players play."""
    from controller.analysis.blackjack_strategy import basic_strategy, chart

    r = state.rules
    return basic_strategy(chart(r.dealer_hits_soft_17, r.double_after_split), cards, up, legal)


def weak(state: Any, cards: tuple[Card, ...], up: Card, legal: tuple[str, ...]) -> str:
    """Basic strategy, except: always stand on a hard 12 to 16, never double."""
    from controller.hands.points import blackjack_total

    t = blackjack_total(cards)
    if not t.soft and 12 <= t.total <= 16 and "stand" in legal:
        return "stand"
    action = basic(state, cards, up, tuple(a for a in legal if a != "double"))
    return action

"""The round skeleton every table game shares (new shoe, void, open bets, bets, close bets, cards, decisions, settle),
written once: a game gives its own steps and `Round.apply` routes each event to its step in the same order.

Pure like the games: a step takes the state and its event and returns the new state and its effects, or raises
`IllegalEvent`. The phases compared here are the game's own `Phase` members, handed over by the game.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from enum import StrEnum
from typing import Any, Callable, Generic, Iterable, Protocol, TypeVar

from controller.games._shoe import betting_step, load_shoe, voided
from controller.games.base import (
    BetsClosed, BetsOpened, CardDealt, CloseBets, Decision, Effects, Event, Expected, IllegalEvent, NewShoe, OpenBets,
    PlaceBet, RemoveBet, Settle, VoidRound,
)
from controller.games.bets import Bets

__all__ = ["Round", "Phased", "Step", "open_round", "opens", "shoe_bets", "bet_steps", "shoe_between_rounds",
           "void_step"]


class Phased(Protocol):
    """A game's state as far as the skeleton goes (read-only, as frozen dataclasses are)."""

    @property
    def phase(self) -> StrEnum: ...

    @property
    def round(self) -> int: ...


S = TypeVar("S", bound=Phased)
E = TypeVar("E", bound=Event)
Step = Callable[[S, E], tuple[S, Effects]]
BetEvent = PlaceBet | RemoveBet | CloseBets


@dataclass(frozen=True)
class Round(Generic[S]):
    """A game's steps for the events of a round. A step left out makes its event not part of the game;
    `settling`, when given, is the phase Settle is legal in (the game's `settle` step then checks nothing)."""

    game: str | Callable[[S], str]                 # "blackjack": what "... is not part of" names
    expected_next: Callable[[S], Expected]
    settle: Callable[[S], tuple[S, Effects]]
    settling: StrEnum | None = None
    new_shoe: Step[S, NewShoe] | None = None
    void: Step[S, VoidRound] | None = None
    open_bets: Step[S, OpenBets] | None = None
    bets: Step[S, BetEvent] | None = None
    card: Step[S, CardDealt] | None = None
    decision: Step[S, Decision] | None = None

    def apply(self, state: S, event: Event) -> tuple[S, Effects]:
        """The round's next state: `event` handed to its step, or refused naming the game."""
        step: Step[S, Any] | None = None
        if isinstance(event, NewShoe):
            step = self.new_shoe
        elif isinstance(event, VoidRound):
            step = self.void
        elif isinstance(event, OpenBets):
            step = self.open_bets
        elif isinstance(event, (PlaceBet, RemoveBet, CloseBets)):
            step = self.bets
        elif isinstance(event, CardDealt):
            step = self.card
        elif isinstance(event, Decision):
            step = self.decision
        elif isinstance(event, Settle):
            if self.settling is not None and state.phase is not self.settling:
                raise IllegalEvent(f"cannot settle now: {self.expected_next(state).text}")
            return self.settle(state)
        if step is None:
            game = self.game if isinstance(self.game, str) else self.game(state)
            raise IllegalEvent(f"{event.KIND} is not part of {game}")
        return step(state, event)


def open_round(state: S, expected_next: Callable[[S], Expected], idle: StrEnum, to: StrEnum,
               **changes: Any) -> tuple[S, Effects]:
    """OpenBets: only between rounds (phase `idle`); the next round's number, and the round in phase `to`."""
    if state.phase is not idle:
        raise IllegalEvent(f"cannot open bets now: {expected_next(state).text}")
    number = state.round + 1
    return replace(state, round=number, phase=to, **changes), (BetsOpened(number),)  # type: ignore[type-var]


def opens(expected_next: Callable[[S], Expected], idle: StrEnum, opened: StrEnum) -> Step[S, OpenBets]:
    """The open-bets step of `open_round`."""
    return lambda state, _: open_round(state, expected_next, idle, opened)


def shoe_bets(betting: StrEnum, close: Callable[[S, Bets], S],
              check: Callable[[S, BetEvent], None] | None = None) -> Step[S, BetEvent]:
    """The bets step of a game whose state has `bets` and whose rules have `spots` and `limits`: bets placed and
    taken back while the phase is `betting`; CloseBets makes the table `close(state, bets)`. `check`, when given,
    refuses a bet first (a game's own rule, such as the banker not betting against the bank)."""
    def step(state: S, event: BetEvent) -> tuple[S, Effects]:
        if check is not None:
            check(state, event)
        s: Any = state
        bets, effects = betting_step(s.bets, event, state.phase is betting, s.rules.spots, s.rules.limits)
        if isinstance(event, CloseBets):
            return close(state, bets), (BetsClosed(state.round),)
        return replace(s, bets=bets), effects
    return step


def bet_steps(place: Step[S, PlaceBet], remove: Step[S, RemoveBet],
              close: Callable[[S], tuple[S, Effects]]) -> Step[S, BetEvent]:
    """The bets step of a game with its own placing, taking back and closing."""
    def step(state: S, event: BetEvent) -> tuple[S, Effects]:
        if isinstance(event, PlaceBet):
            return place(state, event)
        if isinstance(event, RemoveBet):
            return remove(state, event)
        return close(state)
    return step


def shoe_between_rounds(between: tuple[StrEnum, ...], idle: StrEnum, refusal: str,
                        min_behind: int = 1) -> Step[S, NewShoe]:
    """The new-shoe step of a game whose shoe is changed only between rounds (phases `between`), the table then
    `idle`; its rules have `decks` and `cards_behind_cut`."""
    def step(state: S, event: NewShoe) -> tuple[S, Effects]:
        if state.phase not in between:
            raise IllegalEvent(refusal)
        r: Any = getattr(state, "rules")
        shoe = load_shoe(event, r.decks, r.cards_behind_cut, min_behind=min_behind)
        return replace(state, phase=idle, shoe=shoe), ()  # type: ignore[type-var]
    return step


def void_step(in_round: Iterable[StrEnum], after: Callable[[S], S], refusal: str,
              stakes: Callable[[S], Iterable[tuple[int, str, int]]] | None = None) -> Step[S, VoidRound]:
    """The void of a game whose every stake goes back: refused (`refusal`) outside the phases `in_round`, else each
    stake (the state's `bets`, or `stakes(state)`) handed back and the table `after(state)`."""
    phases = frozenset(in_round)

    def step(state: S, event: VoidRound) -> tuple[S, Effects]:
        if state.phase not in phases:
            raise IllegalEvent(refusal)
        back = stakes(state) if stakes is not None else getattr(state, "bets")
        return after(state), voided(state.round, back, event.reason)
    return step

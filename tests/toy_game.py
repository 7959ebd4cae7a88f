"""A toy table game (high card against the dealer) that exercises the game contract and the test harness."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import Any

from controller.cards import Card
from controller.games.base import (
    BetsClosed, BetsOpened, BoxResult, CardDealt, CardPlaced, CardsRevealed, CloseBets, Effects, Event, Expected,
    GameSpec, IllegalEvent, OpenBets, Payout, Placed, PlaceBet, RemoveBet, RoundSettled, RoundVoided, RulesBase,
    RulesError, Settle, Settlement, StakeChanged, VoidRound,
)
from controller.games.bets import Bets, Limit, check_limits

BOXES = ("main",)


@dataclass(frozen=True)
class Rules(RulesBase):
    spots: int = 3
    pays: Payout = Payout(1, 1)
    limits: dict[str, Limit] = field(default_factory=lambda: MappingProxyType({"main": Limit(1, 100)}))

    def validate(self) -> None:
        if not 1 <= self.spots <= 7:
            raise RulesError(f"rules.spots: 1 to 7, got {self.spots}")
        check_limits(self.limits, BOXES)


@dataclass(frozen=True)
class State:
    rules: Rules
    round: int = 0
    phase: str = "idle"
    bets: Bets = Bets()
    cards: tuple[tuple[str, Placed], ...] = ()  # (position, card) in deal order


def new_table(rules: Rules) -> State:
    return State(rules)


def _positions(state: State) -> list[str]:
    return [f"spot:{s}" for s in state.bets.spots()] + ["dealer"]


def expected_next(state: State) -> Expected:
    if state.phase == "idle":
        return Expected("idle", "open bets", actions=("open_bets",))
    if state.phase == "betting":
        return Expected("betting", "bets open", actions=("place_bet", "remove_bet", "close_bets"))
    if state.phase == "dealing":
        to = _positions(state)[len(state.cards)]
        up = to != "dealer"
        return Expected("dealing", f"card to {to}, face {'up' if up else 'down'}", card_to=to, face_up=up)
    return Expected("settling", "settle the round", actions=("settle",))


def apply(state: State, event: Event) -> tuple[State, Effects]:
    r = state.rules
    if isinstance(event, VoidRound):
        if state.phase == "idle":
            raise IllegalEvent("no round to void")
        back = state.bets.total
        return State(r, state.round), tuple(StakeChanged(s, b, 0, -a) for s, b, a in state.bets) + (
            RoundVoided(state.round, event.reason, back),)
    if isinstance(event, OpenBets):
        if state.phase != "idle":
            raise IllegalEvent("a round is already in progress")
        return State(r, state.round + 1, "betting"), (BetsOpened(state.round + 1),)
    if isinstance(event, (PlaceBet, RemoveBet)):
        if state.phase != "betting":
            raise IllegalEvent("bets are not open")
        op = state.bets.place if isinstance(event, PlaceBet) else state.bets.remove
        bets, eff = op(event, r.spots, r.limits)  # type: ignore[arg-type]
        return replace(state, bets=bets), (eff,)
    if isinstance(event, CloseBets):
        if state.phase != "betting":
            raise IllegalEvent("bets are not open")
        if not state.bets:
            raise IllegalEvent("no bets on the table")
        state.bets.check_minimums(r.limits)
        return replace(state, phase="dealing"), (BetsClosed(state.round),)
    if isinstance(event, CardDealt):
        exp = expected_next(state)
        if exp.card_to is None:
            raise IllegalEvent(f"no card expected now ({exp.text})")
        if event.target is not None and event.target != exp.card_to:
            raise IllegalEvent(f"card expected for {exp.card_to}, not {event.target}")
        cards = state.cards + ((exp.card_to, Placed(event.card, bool(exp.face_up))),)
        done = len(cards) == len(_positions(state))
        return replace(state, cards=cards, phase="settling" if done else "dealing"), (
            CardPlaced(event.card, exp.card_to, bool(exp.face_up)),)
    if isinstance(event, Settle):
        if state.phase != "settling":
            raise IllegalEvent(f"cannot settle now ({expected_next(state).text})")
        dealer = dict(state.cards)["dealer"].card
        results = []
        for spot, box, stake in state.bets:
            mine = dict(state.cards)[f"spot:{spot}"].card
            if mine.rank > dealer.rank:
                paid = r.pays.on(stake)
                results.append(BoxResult(spot, box, stake, "win", paid, 0, stake + paid, f"high card {r.pays}"))
            elif mine.rank == dealer.rank:
                results.append(BoxResult(spot, box, stake, "push", 0, 0, stake, "tie pushes"))
            else:
                results.append(BoxResult(spot, box, stake, "lose", 0, 0, 0, "dealer higher"))
        settlement = Settlement(tuple(results))
        return State(r, state.round), (CardsRevealed("dealer", (dealer,)), RoundSettled(state.round, settlement))
    raise IllegalEvent(f"{event.KIND} is not part of this game")


def snapshot(state: State) -> dict[str, Any]:
    snap: dict[str, Any] = {"game": "toy", "round": state.round, "phase": state.phase, "bets": state.bets.json(),
                            "cards": [{"to": to, **p.json()} for to, p in state.cards]}
    return snap


GAME = GameSpec("toy", "High card (toy)", Rules, new_table, apply, expected_next, snapshot, BOXES)


def legal_bets(rules: Rules, rng: Any) -> list[Event]:
    spots = [s for s in range(1, rules.spots + 1) if rng.randbelow(2)] or [1]
    return [PlaceBet(s, "main", 1 + rng.randbelow(100)) for s in spots]


__all__ = ["GAME", "Rules", "State", "legal_bets", "Card"]

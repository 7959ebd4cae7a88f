"""Red dog: the casino in-between, banked by the house. Every spot plays the same three cards: a pay by the spread,
consecutive cards a push, a pair then three of a kind paying 11:1, and the raise once the spread is announced.

Rules as casinos deal it (rules text 000_* describes the home game, in-between, of which this is the casino
variant; the paytable is the usual one, Wizard of Odds "Red Dog", and each line is configurable):

- A shoe of `decks` decks (six by default), aces high, suits irrelevant. Each spot bets its ante; the dealer
  turns two cards up.
- Consecutive cards: every ante pushes. A pair: a third card is turned at once (no raise); three of a kind pays
  11:1, anything else pushes.
- Otherwise the dealer announces the spread (ranks strictly between, 1 to 11). Each spot in turn may raise up
  to its ante, or stand. The third card: strictly between pays ante and raise by the spread, 5:1 for 1, 4:1 for
  2, 2:1 for 3, 1:1 for 4 or more; outside, or matching either card, both lose.
- The cut card `cards_behind_cut` from the end of the shoe; the round that brings it out is the last.
"""

from __future__ import annotations

from enum import StrEnum

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import Any

from controller.cards import Card
from controller.games._round import Round, opens, shoe_bets, shoe_between_rounds, void_step
from controller.games._shoe import ShoeState, check_decision, check_range, deal_from_shoe
from controller.games.base import (
    BoxResult, CardDealt, Decision, Effects, Event, Expected, GameSpec, Payout, PlaceBet, Placed,
    RoundSettled, RulesBase, Settlement, StakeChanged, Waiting, parse_spot_actor, spot_actor,
)
from controller.games.bets import Bets, Limit, check_limits
from controller.games.in_between import between, spread

__all__ = ["GAME", "Rules", "State", "Phase", "BOXES", "new_table", "apply", "expected_next", "snapshot",
           "legal_bets", "RAISE", "STAND", "spread_pays"]

BOXES = ("ante",)
RAISE, STAND = "raise", "stand"


@dataclass(frozen=True)
class Rules(RulesBase):
    decks: int = 6
    spots: int = 7
    spread_1: Payout = Payout(5, 1)
    spread_2: Payout = Payout(4, 1)
    spread_3: Payout = Payout(2, 1)
    spread_4_plus: Payout = Payout(1, 1)
    three_of_a_kind: Payout = Payout(11, 1)
    cards_behind_cut: int = 26
    limits: Mapping[str, Limit] = field(default_factory=lambda: MappingProxyType({"ante": Limit(5, 1_000)}))

    def validate(self) -> None:
        check_range("decks", self.decks, 1, 8, " decks")
        check_range("spots", self.spots, 1, 9, " spots")
        check_range("cards_behind_cut", self.cards_behind_cut, 3, self.decks * 26, " (a round needs three cards)")
        check_limits(self.limits, BOXES)


def spread_pays(rules: Rules, gap: int) -> Payout:
    """The paytable line for a spread of `gap` (1 to 11)."""
    return (rules.spread_1, rules.spread_2, rules.spread_3)[gap - 1] if gap <= 3 else rules.spread_4_plus


class Phase(StrEnum):
    """Where the round stands (the values are those of the journal, the snapshots and the views)."""

    SHUFFLING = "shuffling"
    IDLE = "idle"
    BETTING = "betting"
    DEALING = "dealing"
    DECIDING = "deciding"
    SETTLING = "settling"


@dataclass(frozen=True)
class State:
    rules: Rules
    round: int = 0
    phase: Phase = Phase.SHUFFLING
    bets: Bets = Bets()         # antes, then raises
    decided: tuple[int, ...] = ()   # spots that have raised or stood
    cards: tuple[Card, ...] = ()
    shoe: ShoeState = ShoeState()


def new_table(rules: Rules) -> State:
    return State(rules)


def _antes(state: State) -> list[tuple[int, int]]:
    return [(s, a) for s, b, a in state.bets if b == "ante"]


def _to_decide(state: State) -> list[tuple[int, int]]:
    return [(s, a) for s, a in _antes(state) if s not in state.decided]


def expected_next(state: State) -> Expected:
    r = state.rules
    if state.phase is Phase.SHUFFLING:
        return Expected(Waiting.SHUFFLING, f"load a new shoe of {r.decks} decks", actions=("new_shoe",))
    if state.phase is Phase.IDLE:
        return Expected(Waiting.IDLE, "open bets", actions=("open_bets", "new_shoe"))
    if state.phase is Phase.BETTING:
        return Expected(Waiting.BETTING, "bets open: antes", actions=("place_bet", "remove_bet", "close_bets"))
    if state.phase is Phase.DEALING:
        n = len(state.cards)
        what = ("the first card", "the second card", "the third card")[n]
        return Expected(Waiting.DEALING, f"{what}, face up", card_to=("first", "second", "third")[n], face_up=True)
    if state.phase is Phase.DECIDING:
        spot, ante = _to_decide(state)[0]
        gap = spread(*state.cards)
        return Expected(
            Waiting.DECIDING, f"spread of {gap} pays {spread_pays(r, gap)}: spot {spot} raises up to {ante} "
            "or stands", actor=spot_actor(spot), actions=(RAISE, STAND), amount_range=(1, ante))
    return Expected(Waiting.SETTLING, _result_text(state) + ": settle", actions=("settle",))


def _result_text(state: State) -> str:
    first, second = state.cards[:2]
    gap = spread(first, second)
    if gap == 0:
        return "consecutive: push"
    third = state.cards[2]
    if gap == -1:
        return "three of a kind" if third.rank == first.rank else "pair, no three of a kind: push"
    return f"{third.rank_char} {'between' if between(third, first, second) else 'not between'}, spread of {gap}"


def apply(state: State, event: Event) -> tuple[State, Effects]:
    return _ROUND.apply(state, event)


def _card(state: State, event: CardDealt) -> tuple[State, Effects]:
    to, shoe, placed = deal_from_shoe(state.shoe, expected_next(state), event)
    new = replace(state, shoe=shoe, cards=state.cards + (event.card,))
    if len(new.cards) == 3 or (len(new.cards) == 2 and spread(*new.cards) == 0):
        new = replace(new, phase=Phase.SETTLING)
    elif len(new.cards) == 2 and spread(*new.cards) > 0:
        new = replace(new, phase=Phase.DECIDING)
    return new, placed


def _settle(state: State) -> tuple[State, Effects]:
    return _after_round(state), (RoundSettled(state.round, settle_round(state)),)


def _after_round(state: State) -> State:
    return State(state.rules, state.round, Phase.SHUFFLING if state.shoe.cut_reached else Phase.IDLE, shoe=state.shoe)


def _decide(state: State, event: Decision) -> tuple[State, Effects]:
    check_decision(expected_next(state), event, (RAISE,))
    spot = parse_spot_actor(event.actor)
    assert spot is not None
    effects: Effects = ()
    bets = state.bets
    if event.action == RAISE:
        bets = bets.with_amount(spot, RAISE, event.amount)
        effects = (StakeChanged(spot, RAISE, event.amount, event.amount),)
    new = replace(state, bets=bets, decided=state.decided + (spot,))
    if not _to_decide(new):
        new = replace(new, phase=Phase.DEALING)
    return new, effects


def settle_round(state: State) -> Settlement:
    r = state.rules
    first, second = state.cards[:2]
    gap = spread(first, second)
    results = []
    for spot, box, stake in state.bets:
        if gap == 0:
            results.append(BoxResult(spot, box, stake, "push", 0, 0, stake,
                                     f"{first.rank_char}-{second.rank_char} consecutive: push"))
        elif gap == -1:
            if state.cards[2].rank == first.rank:
                paid = r.three_of_a_kind.on(stake)
                results.append(BoxResult(spot, box, stake, "win", paid, 0, stake + paid,
                                         f"three of a kind {r.three_of_a_kind}"))
            else:
                results.append(BoxResult(spot, box, stake, "push", 0, 0, stake,
                                         f"pair of {first.rank_char}s, no three of a kind: push"))
        elif between(state.cards[2], first, second):
            pays = spread_pays(r, gap)
            paid = pays.on(stake)
            results.append(BoxResult(spot, box, stake, "win", paid, 0, stake + paid, f"spread of {gap} pays {pays}"))
        else:
            results.append(BoxResult(spot, box, stake, "lose", 0, 0, 0,
                                     f"{state.cards[2].rank_char} not between {first.rank_char} and "
                                     f"{second.rank_char}"))
    return Settlement(tuple(results))


def snapshot(state: State) -> dict[str, Any]:
    """Every card is face up; the spread and its payout once announced."""
    gap = spread(*state.cards[:2]) if len(state.cards) >= 2 else None
    return {"game": "red-dog", "round": state.round, "phase": expected_next(state).phase.value,
            "stage": state.phase.value, "bets": state.bets.json(),
            "cards": [Placed(c, True).json() for c in state.cards], "spread": gap,
            "pays": str(spread_pays(state.rules, gap)) if gap is not None and gap > 0 else None,
            "shoe": state.shoe.json()}


_ROUND: Round[State] = Round(
    "red dog", expected_next, _settle, Phase.SETTLING,
    new_shoe=shoe_between_rounds((Phase.SHUFFLING, Phase.IDLE), Phase.IDLE, "a new shoe goes in between rounds"),
    void=void_step((Phase.BETTING, Phase.DEALING, Phase.DECIDING, Phase.SETTLING), _after_round,
                   "no round in progress to void"),
    open_bets=opens(expected_next, Phase.IDLE, Phase.BETTING),
    bets=shoe_bets(Phase.BETTING, lambda s, _: replace(s, phase=Phase.DEALING)), card=_card, decision=_decide)
GAME = GameSpec("red-dog", "Red dog", Rules, new_table, apply, expected_next, snapshot, BOXES + (RAISE,))


def legal_bets(rules: Rules, rng: Any) -> list[Event]:
    """Antes a table might see in one round (for the property-test harness)."""
    limit = rules.limits["ante"]
    spots = [s for s in range(1, rules.spots + 1) if rng.randbelow(2)] or [1]
    return [PlaceBet(s, "ante", limit.min + rng.randbelow(max(1, min(limit.max - limit.min, 9 * limit.min)))) for s in
            spots]

"""Let it ride: three equal bets on the player's three cards plus two community cards, two chances to take a bet back (seeds 000_*, 001_*, 004_*).

Round (000_*/001_*): three equal bets -> three cards face down to each spot and two face down to the
community (in front of the dealer) -> each spot takes its first bet back ("pull") or lets it ride ->
the first community card is turned up -> each spot pulls its second bet or lets it ride -> the second
community card is turned up with the players' hands -> settle. The third bet always stays. A pulled bet
goes back to the player at once (a StakeChanged with a negative delta) and settles no row.

Every bet still on the layout is paid at the 004_* odds on the player's five-card hand (royal flush
1000:1 ... tens or better 1:1); any other hand loses. There is no dealer hand to beat.

A bet on any of the three circles is a bet on all three (the seed's "three equal bets"): placing or
removing 10 on `bet_1` puts or takes 10 on each, so the bets cannot become unequal.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import Any, Mapping

from controller.cards import TEN
from controller.games._house_poker import (
    Deal, DealPlan, Phase, State, check_paytable, check_spots, deal_plan, deal_then, expect, house_round, reveal,
    set_stake, snapshot_of, take_decision,
)
from controller.games.base import (
    BoxResult, Decision, Effects, Event, Expected, GameSpec, IllegalEvent, Payout, PlaceBet, RemoveBet,
    RulesBase, RulesError, Settlement,
)
from controller.games.bets import Bets, Limit
from controller.hands import poker

__all__ = ["GAME", "Rules", "State", "Deal", "LINES", "BOXES", "line_of", "apply", "expected_next", "snapshot",
           "new_table"]

NAME = "let-it-ride"
BOXES = ("bet_1", "bet_2", "bet_3")   # bet_1 may be pulled at the first decision, bet_2 at the second
LINES = ("royal_flush", "straight_flush", "four_of_a_kind", "full_house", "flush", "straight", "three_of_a_kind",
         "two_pair", "tens_or_better")
ACTIONS = {"pull": 0, "ride": 0}


def line_of(value: int) -> str | None:
    """The paytable line of a five-card value, or None for a hand below a pair of tens."""
    cat = poker.category(value)
    top = (value >> 16) & 0xF   # the straight's top card, or the rank of the pair
    if cat == poker.STRAIGHT_FLUSH:
        return "royal_flush" if top == 14 else "straight_flush"
    if cat == poker.PAIR:
        return "tens_or_better" if top >= TEN else None
    if cat == poker.HIGH_CARD:
        return None
    return poker.CATEGORY_NAMES[cat].replace(" ", "_")


@dataclass(frozen=True)
class Rules(RulesBase):
    """Let it ride rules; defaults are 004_*'s paytable and the standard casino game."""

    spots: int = 7
    deal: Deal = Deal.ROUNDS
    limit: Limit = Limit(1, 1_000)   # each of the three equal bets
    paytable: Mapping[str, Payout] = field(default_factory=lambda: MappingProxyType({
        "royal_flush": Payout(1000), "straight_flush": Payout(200), "four_of_a_kind": Payout(50),
        "full_house": Payout(11), "flush": Payout(8), "straight": Payout(5), "three_of_a_kind": Payout(3),
        "two_pair": Payout(2), "tens_or_better": Payout(1)}))
    # Many casinos post an aggregate payout limit per spot and round; none is standard, so none by default.
    payout_cap: int | None = None

    @property
    def limits(self) -> Mapping[str, Limit]:
        return MappingProxyType({box: self.limit for box in BOXES})

    def validate(self) -> None:
        check_spots(self.spots, 7)
        check_paytable(self.paytable, LINES, "rules.paytable")
        if not self.paytable:
            raise RulesError("rules.paytable: the paytable pays no hand")
        if self.payout_cap is not None and self.payout_cap < 1:
            raise RulesError(f"rules.payout_cap: at least 1 credit, got {self.payout_cap}")


def new_table(rules: Rules) -> State:
    return State(rules)


def _plan(state: State) -> DealPlan:
    return deal_plan([(f"spot:{s}", (False,) * 3) for s in state.bets.spots()] + [("community", (False, False))],
                     state.rules.deal)


def expected_next(state: State) -> Expected:
    return expect(state, _plan(state), state.bets.spots(), lambda _: ACTIONS)


def _place_all(rules: Rules, bets: Bets, event: PlaceBet | RemoveBet) -> tuple[Bets, Effects]:
    """One bet on the three circles at once (see the module docstring)."""
    if event.box not in BOXES:
        raise IllegalEvent(f"no box {event.box!r} in this game (boxes: {', '.join(BOXES)})")
    effects = []
    for box in BOXES:
        each = type(event)(event.spot, box, event.amount)
        op = bets.place if isinstance(each, PlaceBet) else bets.remove
        bets, eff = op(each, rules.spots, rules.limits)  # type: ignore[arg-type]
        effects.append(eff)
    return bets, tuple(effects)


def apply(state: State, event: Event) -> tuple[State, Effects]:
    return _ROUND.apply(state, event)


def _decide(state: State, event: Decision) -> tuple[State, Effects]:
    state, spot, action = take_decision(state, event, state.bets.spots(), lambda _: ACTIONS)
    effects: Effects = ()
    if action == "pull":
        state, effects = set_stake(state, spot, BOXES[state.stage], 0)
    if any(state.decision(s) is None for s in state.bets.spots()):
        return state, effects
    if state.stage == 0:
        state, shown = reveal(state, ["community"], first=1)
        return replace(state, stage=1), effects + shown
    state, shown = reveal(state, ["community"] + [f"spot:{s}" for s in state.bets.spots()])
    return replace(state, phase=Phase.SETTLING), effects + shown

def settle(state: State) -> Settlement:
    """Each bet still riding wins the paytable line of the spot's five cards or loses; a payout cap, when
    set, limits a spot's winnings for the round, paid box by box in order."""
    r: Rules = state.rules
    community = state.hand("community")
    results: list[BoxResult] = []
    for spot in state.bets.spots():
        value = poker.best_value(state.hand(f"spot:{spot}") + community)
        line = line_of(value)
        pays = r.paytable.get(line) if line else None
        room = r.payout_cap
        for box in BOXES:
            stake = state.bets.get(spot, box)
            if not stake:
                continue
            if pays is None:
                results.append(BoxResult(spot, box, stake, "lose", 0, 0, 0, f"{poker.describe(value)} does not pay"))
                continue
            paid = pays.on(stake)
            text = f"{line.replace('_', ' ')} {pays}"  # type: ignore[union-attr]
            if room is not None:
                if paid > room:
                    paid, text = room, f"{text}, capped at the table's payout limit of {r.payout_cap}"
                room -= paid
            results.append(BoxResult(spot, box, stake, "win", paid, 0, stake + paid, text))
    return Settlement(tuple(results))


def _names(state: State) -> dict[str, tuple[str, bool]]:
    community = state.placed("community")
    names = {}
    if len(community) == 2:
        for spot in state.bets.spots():
            mine = state.placed(f"spot:{spot}")
            if len(mine) == 3:
                cards = mine + community
                names[f"spot:{spot}"] = (poker.describe(poker.best_value([p.card for p in cards])),
                                         all(p.up for p in cards))
    return names


def snapshot(state: State) -> dict[str, Any]:
    return snapshot_of(state, NAME, _names(state))


_ROUND = house_round(expected_next, settle, deal_then(_plan), _decide,
                     place=lambda s: lambda bets, ev: _place_all(s.rules, bets, ev))
GAME = GameSpec(NAME, "Let It Ride", Rules, new_table, apply, expected_next, snapshot, BOXES)

"""Caribbean stud poker: an ante, then call (twice the ante) or fold against the dealer's five cards, one of them face up (seed 000_*, issue 3).

Round (000_*): antes -> five cards face down to each spot and to the dealer, the dealer's last card face
up -> each spot calls or folds -> the dealer's hand and the calling hands are turned up -> settle.

The seed's copy says the call bet equals the ante; that is a garble of the standard game (and of the
issue), where the call is twice the ante: this module follows the standard rule.

Settlement (standard rules):
- the dealer qualifies with ace-king or better. Not qualifying: the ante pays 1:1 and the call pushes.
- qualifying: a player who beats the dealer is paid 1:1 on the ante and the call's paytable line on
  the call (royal flush 100:1 ... pair 1:1, ace-king 1:1); a dealer win takes both bets; a tie pushes
  both.
- `call_payout_cap`: casinos post a maximum payout on the call bet (often tied to the progressive
  jackpot or a fixed sum); none is standard, so none by default. A capped call names the cap in its line.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from controller.cards import ACE, KING
from controller.games._house_poker import (
    Deal, DealPlan, State, against_dealer, check_paytable, check_spots, deal_plan, deal_then, expect,
    house_round, raise_or_fold, showdown_snapshot,
)
from controller.games.base import (
    BoxResult, Effects, Event, Expected, GameSpec, Payout, RulesBase, RulesError, Settlement,
)
from controller.games.bets import Limit, check_limits
from controller.hands import poker

__all__ = ["GAME", "Rules", "State", "Deal", "LINES", "BOXES", "BET_BOXES", "QUALIFIER", "line_of", "apply",
           "expected_next", "snapshot", "new_table"]

NAME = "caribbean-stud"
BET_BOXES = ("ante",)
BOXES = ("ante", "call")
LINES = ("royal_flush", "straight_flush", "four_of_a_kind", "full_house", "flush", "straight", "three_of_a_kind",
         "two_pair", "pair", "high_card")
# Ace-king is the worst qualifying hand: A-K-4-3-2 of mixed suits.
QUALIFIER = poker.pack(poker.HIGH_CARD, (ACE, KING, 4, 3, 2))
DEALER_HAND = (False, False, False, False, True)   # 000_*: "The dealer's last card is turned face up"


def line_of(value: int) -> str:
    """The call paytable line of a five-card value."""
    if poker.hand_name(value) == "royal flush":
        return "royal_flush"
    return poker.CATEGORY_NAMES[poker.category(value)].replace(" ", "_")


@dataclass(frozen=True)
class Rules(RulesBase):
    """Caribbean stud rules; defaults are the standard raise paytable of the issue."""

    spots: int = 7
    deal: Deal = Deal.ROUNDS
    limits: Mapping[str, Limit] = field(default_factory=lambda: MappingProxyType({"ante": Limit(1, 1_000)}))
    paytable: Mapping[str, Payout] = field(default_factory=lambda: MappingProxyType({
        "royal_flush": Payout(100), "straight_flush": Payout(50), "four_of_a_kind": Payout(20),
        "full_house": Payout(7), "flush": Payout(5), "straight": Payout(4), "three_of_a_kind": Payout(3),
        "two_pair": Payout(2), "pair": Payout(1), "high_card": Payout(1)}))
    call_payout_cap: int | None = None

    def validate(self) -> None:
        check_spots(self.spots, 7)
        check_limits(self.limits, BET_BOXES)
        check_paytable(self.paytable, LINES, "rules.paytable", complete=True)
        if self.call_payout_cap is not None and self.call_payout_cap < 1:
            raise RulesError(f"rules.call_payout_cap: at least 1 credit, got {self.call_payout_cap}")


def new_table(rules: Rules) -> State:
    return State(rules)


def _plan(state: State) -> DealPlan:
    return deal_plan([(f"spot:{s}", (False,) * 5) for s in state.bets.spots()] + [("dealer", DEALER_HAND)],
                     state.rules.deal)


def _actions(state: State, spot: int) -> dict[str, int]:
    return {"call": 2 * state.bets.get(spot, "ante"), "fold": 0}


def expected_next(state: State) -> Expected:
    return expect(state, _plan(state), state.bets.spots(),
                  lambda spot: _actions(state, spot))


def apply(state: State, event: Event) -> tuple[State, Effects]:
    return _ROUND.apply(state, event)


def settle(state: State) -> Settlement:
    r: Rules = state.rules
    dealer = poker.best_value(state.hand("dealer"))
    results: list[BoxResult] = []
    for spot in state.bets.spots():
        ante, call = state.bets.get(spot, "ante"), state.bets.get(spot, "call")
        if state.decision(spot) == "fold":
            results.append(BoxResult(spot, "ante", ante, "lose", 0, 0, 0, "fold"))
            continue
        mine = poker.best_value(state.hand(f"spot:{spot}"))
        line = line_of(mine)
        pays = r.paytable[line]
        paid, text = pays.on(call), f"call {line.replace('_', ' ')} {pays}"
        if r.call_payout_cap is not None and paid > r.call_payout_cap:
            paid, text = r.call_payout_cap, f"{text}, capped at the table's call payout limit of {r.call_payout_cap}"
        results += against_dealer(spot, ante, "call", call, mine, dealer, dealer >= QUALIFIER, (paid, text))
    return Settlement(tuple(results))


def snapshot(state: State) -> dict[str, Any]:
    return showdown_snapshot(state, NAME, 5, poker.best_value, poker.describe, QUALIFIER)


_ROUND = house_round(expected_next, settle, deal_then(_plan), raise_or_fold(lambda s: s.bets.spots(), _actions))
GAME = GameSpec(NAME, "Caribbean Stud Poker", Rules, new_table, apply, expected_next, snapshot, BOXES)

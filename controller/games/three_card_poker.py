"""Three card poker: ante, play and pair plus against the dealer's three cards, with the ante bonus (seed 003_*).

Round: bets (ante and/or pair plus) -> three cards face down to each spot with a bet and to the dealer ->
each spot with an ante plays (a play bet equal to the ante) or folds -> the dealer's hand and the
playing hands are turned up -> settle.

Settlement (003_*, the standard rules):
- the dealer qualifies with queen high or better. Not qualifying: the ante pays 1:1 and the play bet
  pushes, whatever the player holds. Qualifying: the higher hand wins ante and play 1:1; a tie pushes
  both (suits never break ties).
- the ante bonus pays on a straight or better whenever the player played, even when the dealer wins; it
  is settled as its own row, box "ante_bonus" with stake 0, so each credit names its paytable line.
- pair plus pays on the player's hand alone; a fold forfeits it as the seed says (`fold_loses_pair_plus`).
A spot may bet pair plus without an ante (the proprietor's rules allow either); it has no decision.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import Any

from controller.cards import QUEEN
from controller.games._house_poker import (
    Deal, DealPlan, Phase, State, accept_card, against_dealer, check_paytable, check_spots, deal_plan, expect,
    house_round, raise_or_fold, showdown, showdown_snapshot,
)
from controller.games.base import (
    BoxResult, CardDealt, Effects, Event, Expected, GameSpec, Payout, RulesBase, RulesError, Settlement,
)
from controller.games.bets import Limit, check_limits
from controller.hands import three_card

__all__ = ["GAME", "Rules", "State", "Deal", "LINES", "BET_BOXES", "BOXES", "QUALIFIER", "line_of", "apply",
           "expected_next", "snapshot", "new_table"]

NAME = "three-card-poker"
BET_BOXES = ("ante", "pair_plus")            # placed while bets are open
BOXES = ("ante", "play", "pair_plus")        # every box of a spot; the play bet comes with the decision
LINES = tuple(n.replace(" ", "_") for n in three_card.CATEGORY_NAMES[1:])  # pair .. straight_flush
# Queen high is the worst qualifying hand: Q-3-2 of mixed suits (003_*: "queen high or better").
QUALIFIER = three_card.reference_value((QUEEN, 3, 2), False)


def line_of(value: int) -> str:
    """The paytable line of a three-card hand value: 'pair' .. 'straight_flush', or 'high_card'."""
    return three_card.CATEGORY_NAMES[three_card.category(value)].replace(" ", "_")


@dataclass(frozen=True)
class Rules(RulesBase):
    """Three card poker rules; defaults are the seed's (003_*) paytables and the standard casino game."""

    spots: int = 7
    deal: Deal = Deal.ROUNDS
    limits: Mapping[str, Limit] = field(default_factory=lambda: MappingProxyType(
        {"ante": Limit(1, 1_000), "pair_plus": Limit(1, 1_000)}))
    # 003_*: pair plus 40 / 30 / 6 / 3 / 1 (house edge 7.28%), ante bonus 5 / 4 / 1.
    pair_plus: Mapping[str, Payout] = field(default_factory=lambda: MappingProxyType({
        "straight_flush": Payout(40), "three_of_a_kind": Payout(30), "straight": Payout(6), "flush": Payout(3),
        "pair": Payout(1)}))
    ante_bonus: Mapping[str, Payout] = field(default_factory=lambda: MappingProxyType({
        "straight_flush": Payout(5), "three_of_a_kind": Payout(4), "straight": Payout(1)}))
    fold_loses_pair_plus: bool = True

    def validate(self) -> None:
        check_spots(self.spots, 7)
        check_limits(self.limits, BET_BOXES)
        check_paytable(self.pair_plus, LINES, "rules.pair_plus")
        check_paytable(self.ante_bonus, LINES, "rules.ante_bonus")
        if not self.pair_plus:
            raise RulesError("rules.pair_plus: the paytable pays no hand")


def new_table(rules: Rules) -> State:
    return State(rules)


def _plan(state: State) -> DealPlan:
    return deal_plan([(f"spot:{s}", (False,) * 3) for s in state.bets.spots()] + [("dealer", (False,) * 3)],
                     state.rules.deal)


def _deciders(state: State) -> tuple[int, ...]:
    return tuple(s for s in state.bets.spots() if state.bets.get(s, "ante"))


def _actions(state: State, spot: int) -> dict[str, int]:
    return {"play": state.bets.get(spot, "ante"), "fold": 0}


def expected_next(state: State) -> Expected:
    return expect(state, _plan(state), _deciders(state),
                  lambda spot: _actions(state, spot))


def apply(state: State, event: Event) -> tuple[State, Effects]:
    return _ROUND.apply(state, event)


def _card(state: State, event: CardDealt) -> tuple[State, Effects]:
    state, effects, dealt = accept_card(state, event, _plan(state))
    if not dealt:
        return state, effects
    if _deciders(state):
        return replace(state, phase=Phase.DECIDING), effects
    state, shown = showdown(state, state.bets.spots())   # pair plus bets only: nobody decides
    return state, effects + shown


def settle(state: State) -> Settlement:
    """Every box of every spot, each credit traced to its line (see the module docstring)."""
    r: Rules = state.rules
    dealer = three_card.value3(state.hand("dealer"))
    results: list[BoxResult] = []
    for spot in state.bets.spots():
        mine = three_card.value3(state.hand(f"spot:{spot}"))
        line = line_of(mine)
        words = line.replace("_", " ")
        ante, play, pair_plus = (state.bets.get(spot, b) for b in BOXES)
        folded = state.decision(spot) == "fold"
        if ante and folded:
            results.append(BoxResult(spot, "ante", ante, "lose", 0, 0, 0, "fold"))
        elif ante:
            results += against_dealer(spot, ante, "play", play, mine, dealer, dealer >= QUALIFIER,
                                      (play, "player beats dealer: play 1:1"))
            bonus = r.ante_bonus.get(line)
            if bonus is not None:
                paid = bonus.on(ante)
                results.append(BoxResult(spot, "ante_bonus", 0, "bonus", paid, 0, paid, f"ante bonus {words} {bonus}"))
        if pair_plus:
            pays = r.pair_plus.get(line)
            if folded and r.fold_loses_pair_plus:
                results.append(BoxResult(spot, "pair_plus", pair_plus, "lose", 0, 0, 0, "fold: pair plus lost"))
            elif pays is not None:
                paid = pays.on(pair_plus)
                results.append(BoxResult(spot, "pair_plus", pair_plus, "win", paid, 0, pair_plus + paid,
                                         f"pair plus {words} {pays}"))
            else:
                results.append(BoxResult(spot, "pair_plus", pair_plus, "lose", 0, 0, 0, f"pair plus: {words} does not pay"))
    return Settlement(tuple(results))


def snapshot(state: State) -> dict[str, Any]:
    return showdown_snapshot(state, NAME, 3, three_card.value3, three_card.category_name, QUALIFIER)


_ROUND = house_round(expected_next, settle, _card, raise_or_fold(_deciders, _actions))
GAME = GameSpec(NAME, "Three Card Poker", Rules, new_table, apply, expected_next, snapshot, BOXES)

"""Red dog (casino in-between): the paytable by spread, consecutive pushes, a pair then three of a kind, the raise
after the spread, refusals, random play, and the exact math against the engine and the published figures."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from controller.analysis.red_dog import analyse, exact, raises_on, round_net
from controller.games.base import (
    CloseBets, Decision, Event, IllegalEvent, NewShoe, OpenBets, PlaceBet, RulesError, Settle, StakeChanged,
)
from controller.games.red_dog import GAME, State, legal_bets
from controller.rng import Rng
from tests.game_harness import play_rounds
from tests.game_steps import SeededShoes, deal, results, run, settlement


def dealt(cards: str, antes: tuple[tuple[int, int], ...] = ((1, 10), (2, 25)),
          rules: dict[str, Any] | None = None) -> State:
    r = GAME.rules(rules or {})
    state, _ = run(GAME, GAME.new_table(r), [NewShoe(r.decks), OpenBets()] + [PlaceBet(s, "ante", a) for s, a in antes]
                   + [CloseBets()] + deal(cards))
    return state


def decide(state: Any, exp: Any, rng: Rng) -> Event:
    action = rng.choice(exp.actions)
    return Decision(exp.actor, action, 1 + rng.randbelow(exp.amount_range[1]) if action == "raise" else 0)


@pytest.mark.parametrize("cards, gap, line, net", [
    ("5C 7H 6D", 1, "spread of 1 pays 5:1", 50), ("5C 8H 6D", 2, "spread of 2 pays 4:1", 40),
    ("5C 9H 8D", 3, "spread of 3 pays 2:1", 20), ("5C TH 9D", 4, "spread of 4 pays 1:1", 10),
    ("2C AH KD", 11, "spread of 11 pays 1:1", 10),
    ("5C 9H 9D", 3, "9 not between 5 and 9", -10), ("5C 9H 3D", 3, "3 not between 5 and 9", -10),
])
def test_the_spread_pays_by_its_width(cards: str, gap: int, line: str, net: int) -> None:
    state = dealt(cards[:5])
    exp = GAME.expected_next(state)
    assert exp.phase == "deciding" and exp.text.startswith(f"spread of {gap} pays")
    state, _ = run(GAME, state, [Decision("spot:1", "stand"), Decision("spot:2", "stand")] + deal(cards[6:]))
    state, effects = run(GAME, state, [Settle()])
    assert results(effects)[(1, "ante")] == ("win" if net > 0 else "lose", net, line)


def test_the_raise_after_the_spread_is_paid_with_the_ante() -> None:
    state = dealt("5C 9H")
    exp = GAME.expected_next(state)
    assert (exp.actor, exp.actions, exp.amount_range) == ("spot:1", ("raise", "stand"), (1, 10))
    with pytest.raises(IllegalEvent, match="raise takes 1 to 10"):
        GAME.apply(state, Decision("spot:1", "raise", 11))
    state, effects = run(GAME, state, [Decision("spot:1", "raise", 10)])
    assert effects == [StakeChanged(1, "raise", 10, 10)]
    assert GAME.expected_next(state).actor == "spot:2"
    state, _ = run(GAME, state, [Decision("spot:2", "raise", 7)] + deal("7D"))
    state, effects = run(GAME, state, [Settle()])
    got = results(effects)
    assert got[(1, "ante")][:2] == ("win", 20) and got[(1, "raise")][:2] == ("win", 20)
    assert got[(2, "ante")][:2] == ("win", 50) and got[(2, "raise")][:2] == ("win", 14)


def test_consecutive_cards_push_with_no_third_card() -> None:
    state = dealt("KC AH")
    assert GAME.expected_next(state).phase == "settling"
    _, effects = run(GAME, state, [Settle()])
    assert results(effects)[(1, "ante")] == ("push", 0, "K-A consecutive: push")


@pytest.mark.parametrize("third, outcome, net, line", [
    ("8D", "win", 110, "three of a kind 11:1"), ("9D", "push", 0, "pair of 8s, no three of a kind: push"),
])
def test_a_pair_on_the_spread_deals_a_third_card_with_no_raise(third: str, outcome: str, net: int, line: str) -> None:
    state = dealt("8C 8H")
    exp = GAME.expected_next(state)
    assert (exp.phase, exp.card_to) == ("dealing", "third")               # no raise on a pair
    with pytest.raises(IllegalEvent, match="no decision expected"):
        GAME.apply(state, Decision("spot:1", "raise", 5))
    state, effects = run(GAME, state, deal(third) + [Settle()])
    assert results(effects)[(1, "ante")] == (outcome, net, line)


def test_standing_takes_no_amount_and_decisions_go_in_order() -> None:
    state = dealt("5C 9H")
    for event, reason in [(Decision("spot:1", "stand", 3), "no amount"), (Decision("spot:2", "stand"), "spot:1's"),
                          (Decision("spot:1", "double"), "is not allowed now"), (Settle(), "cannot settle"),
                          (PlaceBet(3, "ante", 10), "not open"), (NewShoe(6), "between rounds")]:
        before = repr(state)
        with pytest.raises(IllegalEvent, match=reason):
            GAME.apply(state, event)
        assert repr(state) == before


def test_the_paytable_is_configurable() -> None:
    state = dealt("5C 7H", rules={"spread_1": "6:1", "three_of_a_kind": "12:1"})
    state, effects = run(GAME, state, [Decision("spot:1", "stand"), Decision("spot:2", "stand")] + deal("6D")
                         + [Settle()])
    assert results(effects)[(1, "ante")][1] == 60
    with pytest.raises(RulesError, match="rules.spots"):
        GAME.rules({"spots": 12})


@pytest.mark.parametrize("rules", [{}, {"decks": 1, "cards_behind_cut": 3}])
def test_random_play_conserves_money_refuses_cleanly_and_replays(rules: dict[str, Any]) -> None:
    state = play_rounds(GAME, GAME.rules(rules), legal_bets, seed=6, rounds=400, void_chance=30, fresh_shoes=True,
                        decide=decide)
    assert state.round >= 400


@settings(max_examples=10)
@given(seed=st.integers(0, 2 ** 32))
def test_random_play_property(seed: int) -> None:
    play_rounds(GAME, GAME.rules({"decks": 2}), legal_bets, seed=seed, rounds=30, void_chance=15, fresh_shoes=True,
                decide=decide)


# ---------------------------------------------------------------------------------------------------
# Math


def test_the_best_raise_is_on_spreads_of_seven_and_up_for_any_shoe() -> None:
    for decks in (1, 2, 4, 6, 8):
        assert raises_on(GAME.rules({"decks": decks})) == (7, 8, 9, 10, 11)


@pytest.mark.parametrize("decks, edge", [(1, 0.03155), (2, 0.03077), (4, 0.02884), (6, 0.02798), (8, 0.02751)])
def test_house_edge_agrees_with_the_published_figures(decks: int, edge: float) -> None:
    # oddsshark.com "Red Dog odds" (after Wizard of Odds): 3.15%, 3.077%, 2.88%, 2.80%, 2.75%
    got = -float(exact(GAME.rules({"decks": decks}))["ev"])
    assert got == pytest.approx(edge, abs=6e-5)


def test_report_shape() -> None:
    report = analyse(GAME.rules({}), None, 1, lambda _: None)
    assert report["method"] == "exact" and report["raise_on_spreads"] == [7, 8, 9, 10, 11]
    assert report["probabilities"]["spread_1_wins"] == pytest.approx(0.077419, abs=1e-6)   # Wizard's 6-deck table
    assert report["house_edge"]["ante"] == pytest.approx(-0.0279783, abs=1e-7)
    total = sum(v for k, v in report["probabilities"].items() if k.startswith("spread_") and not k.endswith("wins"))
    assert total + report["probabilities"]["pair"] + report["probabilities"]["consecutive"] == pytest.approx(1.0)


def test_fast_path_equals_the_engine_round_by_round(request: pytest.FixtureRequest) -> None:
    rounds = 100_000 if request.config.getoption("--long") else 3_000
    rules = GAME.rules({})
    raise_on = raises_on(rules)
    shoes = SeededShoes(GAME, rules.decks, seed=23)
    state = shoes.new_shoe(GAME.new_table(rules))
    ranks, raised, nets = [], [], []
    for _ in range(rounds):
        if GAME.expected_next(state).phase == "shuffling":
            state = shoes.new_shoe(state)
        state, _ = run(GAME, state, [OpenBets(), PlaceBet(1, "ante", 10), CloseBets()])
        up = 0
        while GAME.expected_next(state).phase != "settling":
            exp = GAME.expected_next(state)
            if exp.phase == "deciding":
                gap = abs(state.cards[0].rank - state.cards[1].rank) - 1
                up = 10 if gap in raise_on else 0
                state, _ = run(GAME, state, [Decision("spot:1", "raise", up) if up else Decision("spot:1", "stand")])
            else:
                state, _ = shoes.deal(state)
        cards = state.cards + (state.cards[0],) * (3 - len(state.cards))   # a third card that settles nothing
        ranks.append([c.rank for c in cards])
        raised.append(up)
        state, effects = run(GAME, state, [Settle()])
        nets.append(sum(r.net for r in settlement(effects).results))
    r = np.array(ranks)
    assert round_net(rules, r[:, 0], r[:, 1], r[:, 2], 10, np.array(raised)).tolist() == nets

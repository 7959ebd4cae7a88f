"""Math reports of three card poker, let it ride and caribbean stud: published figures, strategies, and the fast paths settling exactly as the engines do, round by round on seeded cards.

The engine comparisons run 2,000 rounds per game and rules variant by default and 100,000 per game with
`pytest -m long --long`.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from controller.analysis import caribbean_stud as cs_math
from controller.analysis import let_it_ride as lir_math
from controller.analysis import three_card_poker as tcp_math
from controller.batch.hands import evaluate, evaluate3
from controller.cards import parse_cards
from controller.cli import main
from controller.games import caribbean_stud, let_it_ride, three_card_poker
from controller.games.base import Decision, PlaceBet
from controller.rng import SeededRng, deal_hands
from tests.poker_tables import engine_nets


def quiet(_: str) -> None:
    pass


# ---------------------------------------------------------------------------------------------------
# Published figures (sources in each analysis module's docstring)

@pytest.mark.slow
def test_three_card_poker_matches_published_figures() -> None:
    game = three_card_poker.GAME
    r = tcp_math.analyse(game.rules({}), None, 1, quiet)
    assert r["method"] == "exact" and r["ci95"] is None and r["rounds"] is None
    assert r["house_edge"]["pair_plus"] == -1608 / 22100                 # 7.28%, 40-30-6-3-1
    assert round(r["house_edge"]["ante_play"], 4) == -0.0337              # 3.37% of the ante
    assert round(r["element_of_risk"]["ante_play"], 4) == -0.0201         # 2.01% of the total wager
    assert sum(v for k, v in r["probabilities"].items() if k.startswith("hand: ")) == pytest.approx(1)
    played = [v for k, v in r["probabilities"].items() if k.startswith("played, ")]
    assert sum(played) == pytest.approx(r["probabilities"]["play (Q-6-4 or better)"])
    four_to_one = game.rules({"pair_plus": {"straight_flush": 40, "three_of_a_kind": 30, "straight": 6, "flush": 4,
                                            "pair": 1}})
    assert round(tcp_math.analyse(four_to_one, None, 1, quiet)["house_edge"]["pair_plus"], 4) == -0.0232


@pytest.mark.slow
def test_let_it_ride_matches_published_figures() -> None:
    game = let_it_ride.GAME
    r = lir_math.analyse(game.rules({}), None, 1, quiet)
    assert round(r["house_edge"]["base"], 5) == -0.03506                 # 3.506% of one unit
    assert round(r["element_of_risk"]["base"], 4) == -0.0285 and round(r["average_units_wagered"], 2) == 1.23
    assert sum(r["bets"].values()) == pytest.approx(r["house_edge"]["base"], abs=1e-15)
    assert r["probabilities"]["hand: royal flush"] == 4 / 2_598_960
    paytable = {k: str(v) for k, v in game.rules({}).paytable.items()} | {"royal_flush": 500}
    assert round(lir_math.analyse(game.rules({"paytable": paytable}), None, 1, quiet)["house_edge"]["base"], 5) == -0.03737


def test_caribbean_stud_simulation_covers_the_published_edge() -> None:
    r = cs_math.analyse(caribbean_stud.GAME.rules({}), 400_000, 7, quiet)
    assert r["method"] == "simulation" and r["rounds"] == 400_000
    edge, half = r["house_edge"]["ante"], r["ci95"]["ante"]
    assert 0.005 < half < 0.01
    assert edge - half < -0.05225 < edge + half   # Wizard of Odds: 5.225% with this strategy, 5.224% optimal


@pytest.mark.slow
def test_math_command_prints_the_json_report(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["math", "three-card-poker", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["game"] == "three-card-poker" and set(out["house_edge"]) == {"pair_plus", "ante_play"}
    assert main(["math", "caribbean-stud", "--rounds", "1000", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert set(out["house_edge"]) == {"ante"} and set(out["ci95"]) == {"ante"} and out["rounds"] == 1000


# ---------------------------------------------------------------------------------------------------
# Strategies

@pytest.mark.parametrize("cards, ride", [
    ("TS TH 2C", True), ("9S 9H 2C", False), ("3S 4S 5S", True), ("2S 3S 4S", False), ("AS 2S 3S", False),
    ("8C 9C JC", True), ("7C 8C TC", True), ("5C 6C 8C", False), ("8D TD QD", True), ("7D 9D JD", False),
    ("AS KD 2C", False),
])
def test_let_it_ride_first_decision_is_the_published_strategy(cards: str, ride: bool) -> None:
    plan = lir_math.strategy(let_it_ride.GAME.rules({}))
    idx = np.array([[c.index for c in parse_cards(cards)] + [0, 1]])   # the community does not matter here
    assert bool(lir_math.decisions(idx, plan)[0][0]) is ride


@pytest.mark.parametrize("cards, ride", [
    ("TS TH 2C 5D", True), ("9S 9H 2C 5D", False), ("2S 5S 9S JS", True), ("5S 6D 7C 8H", True),
    ("AS 2D 3C 4H", False), ("TS JD KC AH", True), ("5S 6D 8C 9H", False), ("2S 3D 4C 5H", True),
])
def test_let_it_ride_second_decision_is_the_published_strategy(cards: str, ride: bool) -> None:
    plan = lir_math.strategy(let_it_ride.GAME.rules({}))
    idx = np.array([[c.index for c in parse_cards(cards)] + [0]])
    assert bool(lir_math.decisions(idx, plan)[1][0]) is ride


@pytest.mark.parametrize("player, up, call", [
    ("2S 2D 7C 9H JS", "AH", True),       # any pair
    ("AS QD JC 9H 7S", "2H", False),      # below ace-king
    ("AS KD 8C 5H 2S", "8H", True),       # a: up card 2..Q matches
    ("AS KD 8C 5H 2S", "9H", False),
    ("AS KD 8C 5H 2S", "AH", False),      # an ace up matching the player's ace is no reason (rule b needs Q or J)
    ("AS KD JC 5H 2S", "AH", True),       # b
    ("AS KD QC 7H 2S", "6H", True),       # c: no match, a queen, up card below the fourth-highest card
    ("AS KD QC 7H 2S", "8H", False),
])
def test_caribbean_stud_strategy(player: str, up: str, call: bool) -> None:
    cards = np.array([[c.index for c in parse_cards(player)]])
    values = evaluate(cards).astype(np.int64)
    assert bool(cs_math.calls(cards, values, np.array([parse_cards(up)[0].index]))[0]) is call


def test_fast_path_lines_match_the_engines_line_names() -> None:
    hands = deal_hands(SeededRng(3).numpy(), 20_000, 5)
    values = evaluate(hands).astype(np.int64)
    lir = lir_math.line_index(values)
    cs = cs_math.line_index(values)
    for v, i, j in zip(values.tolist(), lir.tolist(), cs.tolist()):
        assert let_it_ride.line_of(v) == (let_it_ride.LINES[i] if i >= 0 else None)
        assert caribbean_stud.line_of(v) == caribbean_stud.LINES[j]


# ---------------------------------------------------------------------------------------------------
# Fast path == engine, round by round

ROUNDS = 2_000
LONG = 100_000


def _three_card_poker(rounds: int, rules_data: dict, ante: int, pair_plus: int, seed: int) -> None:
    game = three_card_poker.GAME
    rules = game.rules(rules_data)
    rows = deal_hands(SeededRng(seed).numpy(), rounds, 6)
    player, dealer = evaluate3(rows[:, :3]).astype(np.int64), evaluate3(rows[:, 3:]).astype(np.int64)
    play = tcp_math.plays(player)
    a, p = tcp_math.settle(player, dealer, play, ante, pair_plus, rules)
    bets = [PlaceBet(1, "ante", ante), PlaceBet(1, "pair_plus", pair_plus)]
    nets = engine_nets(game, rules, bets, rows, {"spot:1": slice(0, 3), "dealer": slice(3, 6)},
                       lambda i, state, exp: Decision(exp.actor, "play" if play[i] else "fold"))
    assert nets == (a + p).tolist()


def _let_it_ride(rounds: int, rules_data: dict, stake: int, seed: int) -> None:
    game = let_it_ride.GAME
    rules = game.rules(rules_data)
    plan = lir_math.strategy(rules)
    rows = deal_hands(SeededRng(seed).numpy(), rounds, 5)
    ride = lir_math.decisions(rows, plan)
    fast = lir_math.settle(rows, stake, rules, plan)
    nets = engine_nets(game, rules, [PlaceBet(1, "bet_1", stake)], rows,
                       {"spot:1": slice(0, 3), "community": slice(3, 5)},
                       lambda i, state, exp: Decision(exp.actor, "ride" if ride[state.stage][i] else "pull"))
    assert nets == fast.tolist()


def _caribbean_stud(rounds: int, rules_data: dict, ante: int, seed: int) -> None:
    game = caribbean_stud.GAME
    rules = game.rules(rules_data)
    rows = deal_hands(SeededRng(seed).numpy(), rounds, 10)
    player, dealer = evaluate(rows[:, :5]).astype(np.int64), evaluate(rows[:, 5:]).astype(np.int64)
    call = cs_math.calls(rows[:, :5], player, rows[:, 9])   # the dealer's fifth card is the one face up
    fast = cs_math.settle(player, dealer, call, ante, rules)
    nets = engine_nets(game, rules, [PlaceBet(1, "ante", ante)], rows, {"spot:1": slice(0, 5), "dealer": slice(5, 10)},
                       lambda i, state, exp: Decision(exp.actor, "call" if call[i] else "fold"))
    assert nets == fast.tolist()


@pytest.mark.parametrize("rules, ante, pair_plus", [
    ({}, 10, 5),
    ({"deal": "hands", "pair_plus": {"pair": "3:2", "flush": "5:2", "straight_flush": 40},
      "ante_bonus": {"straight": "1:2", "three_of_a_kind": 4}, "fold_loses_pair_plus": False}, 7, 3),
])
def test_three_card_poker_fast_path_settles_like_the_engine(rules: dict, ante: int, pair_plus: int) -> None:
    _three_card_poker(ROUNDS, rules, ante, pair_plus, seed=21)


@pytest.mark.parametrize("rules, stake", [
    ({}, 10),
    ({"deal": "hands", "payout_cap": 250, "paytable": {"royal_flush": 1000, "straight_flush": 200, "four_of_a_kind": 50,
                                                       "full_house": 11, "flush": 8, "straight": 5,
                                                       "three_of_a_kind": "5:2", "two_pair": 2,
                                                       "tens_or_better": "3:2"}}, 7),
])
@pytest.mark.slow
def test_let_it_ride_fast_path_settles_like_the_engine(rules: dict, stake: int) -> None:
    _let_it_ride(ROUNDS, rules, stake, seed=22)


@pytest.mark.parametrize("rules, ante", [
    ({}, 10),
    ({"deal": "hands", "call_payout_cap": 300,
      "paytable": {"royal_flush": 100, "straight_flush": 50, "four_of_a_kind": 20, "full_house": 7, "flush": 5,
                   "straight": 4, "three_of_a_kind": 3, "two_pair": "5:2", "pair": "5:4", "high_card": 1}}, 3),
])
@pytest.mark.slow
def test_caribbean_stud_fast_path_settles_like_the_engine(rules: dict, ante: int) -> None:
    _caribbean_stud(ROUNDS, rules, ante, seed=23)


@pytest.mark.long
def test_three_card_poker_fast_path_settles_like_the_engine_long() -> None:
    _three_card_poker(LONG, {}, 10, 5, seed=31)


@pytest.mark.long
def test_let_it_ride_fast_path_settles_like_the_engine_long() -> None:
    _let_it_ride(LONG, {}, 10, seed=32)


@pytest.mark.long
def test_caribbean_stud_fast_path_settles_like_the_engine_long() -> None:
    _caribbean_stud(LONG, {}, 10, seed=33)

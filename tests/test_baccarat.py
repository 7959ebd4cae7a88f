"""Baccarat (punto banco): every tableau cell, naturals, commission rounding, the no-commission variant, ties,
the burn and the cut card, refusals, random play, the exact math against published figures, and the
vectorised coup settling exactly as the engine on the same seeded cards."""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from controller.analysis.baccarat import analyse, box_net, coup, exact_counts
from controller.cards import Card, parse_card
from controller.cli import main
from controller.games.base import (
    CardDealt, CardPlaced, CloseBets, Event, IllegalEvent, NewShoe, OpenBets, PlaceBet, RoundVoided, RulesError,
    Settle, ShuffleDue, VoidRound,
)
from controller.games.baccarat import GAME, State, banker_draws, burn_count, legal_bets
from controller.hands.points import baccarat_points
from tests.game_harness import play_rounds
from tests.game_steps import SeededShoes, committed, deal, results, run

# The banker's third-card chart as printed on the layout: rows banker total 0-7, columns the player's third
# card 0-9; D draws, S stands. (Written out cell by cell, apart from the engine's own table.)
CHART = {0: "DDDDDDDDDD", 1: "DDDDDDDDDD", 2: "DDDDDDDDDD", 3: "DDDDDDDDSD",
         4: "SSDDDDDDSS", 5: "SSSSDDDDSS", 6: "SSSSSSDDSS", 7: "SSSSSSSSSS"}

VALUE_CARD = {0: "K", 1: "A", 2: "2", 3: "3", 4: "4", 5: "5", 6: "6", 7: "7", 8: "8", 9: "9"}


def card(value: int, suit: str = "S") -> str:
    return VALUE_CARD[value] + suit


def table(rules: dict[str, Any] | None = None, bets: list[tuple[int, str, int]] | None = None,
          cut: int | None = None) -> State:
    """Bets closed on a fresh shoe (burn off unless asked for), ready for the coup."""
    r = GAME.rules({"burn": False, **(rules or {})})
    events: list[Event] = [NewShoe(r.decks, cut), OpenBets()]
    events += [PlaceBet(*bet) for bet in (bets or [(1, "player", 10), (2, "banker", 20), (3, "tie", 5)])]
    state, _ = run(GAME, GAME.new_table(r), events + [CloseBets()])
    return state


def coup_of(cards: str, rules: dict[str, Any] | None = None,
            bets: list[tuple[int, str, int]] | None = None) -> tuple[State, list[Any]]:
    """Deal `cards` (player, banker, player, banker, ...) and settle."""
    state, effects = run(GAME, table(rules, bets), deal(cards))
    assert GAME.expected_next(state).phase == "settling", GAME.expected_next(state).text
    state, more = run(GAME, state, [Settle()])
    return state, effects + more


@pytest.mark.parametrize("banker", range(8))
@pytest.mark.parametrize("third", range(10))
def test_every_tableau_cell(banker: int, third: int) -> None:
    draws = CHART[banker][third] == "D"
    assert banker_draws(banker, third) is draws
    # through the engine: player 2+2 = 4 draws the third card; the banker holds `banker` on two cards
    state, _ = run(GAME, table(), deal(f"2C {card(banker)} 2D KD {card(third, 'H')}"))
    exp = GAME.expected_next(state)
    assert (exp.card_to == "banker") is draws, exp.text


@pytest.mark.parametrize("banker", range(8))
@pytest.mark.parametrize("player", (6, 7))
def test_when_the_player_stands_the_banker_draws_on_0_to_5(banker: int, player: int) -> None:
    state, _ = run(GAME, table(), deal(f"{card(player)} {card(banker)} KC KD"))
    assert (GAME.expected_next(state).card_to == "banker") is (banker <= 5)
    assert banker_draws(banker, None) is (banker <= 5)


def test_banker_three_stands_against_a_player_third_card_of_eight() -> None:
    state, effects = coup_of("2C 3S 2D KD 8H")                 # player 4+8 = 2, banker 3: no draw
    assert len(state.player) == 0  # the table is cleared for the next coup
    got = results(effects)
    assert got[(2, "banker")][:2] == ("win", 19) and got[(1, "player")][:2] == ("lose", -10)
    state, _ = run(GAME, table(), deal("2C 3S 2D KD 9H"))       # ... but draws against a 9
    assert GAME.expected_next(state).card_to == "banker"


@pytest.mark.parametrize("cards, player, banker", [
    ("8S 7H KD KC", 8, 7),          # player natural 8: nobody draws
    ("4S 9H KD KC", 4, 9),          # banker natural 9: the player does not draw on 4
    ("9S 8H KD KC", 9, 8),          # natural 9 beats natural 8
    ("5S 4H 3D 4C", 8, 8),          # natural against natural: a tie
    ("6S 2H KD KC 5C", 6, 7),       # player stands on 6; banker 2 draws a 5
    ("7S 6H KD KC", 7, 6),          # banker 6 stands when the player stood
    ("AS 6H 2D KC 9C", 2, 6),       # player draws on 3 (a 9: 2); banker 6 stands against a 9
    ("AS 6H 2D KC 6C 6D", 9, 2),    # ... but draws against a 6 (6+6 = 2)
])
def test_coups(cards: str, player: int, banker: int) -> None:
    state, _ = run(GAME, table(), deal(cards))
    assert GAME.expected_next(state).phase == "settling"
    assert (baccarat_points(state.player), baccarat_points(state.banker)) == (player, banker)


@pytest.mark.parametrize("rounding, stake, net", [
    ("up", 20, 19), ("up", 15, 14), ("up", 10, 9), ("up", 30, 28),
    ("down", 15, 15), ("down", 10, 10), ("down", 30, 29), ("down", 40, 38),
    ("half_up", 10, 9), ("half_up", 15, 14), ("half_up", 30, 28), ("half_up", 29, 28),
])
def test_commission_rounding(rounding: str, stake: int, net: int) -> None:
    _, effects = coup_of("2C 7S 3D KD KC", {"commission_rounding": rounding}, [(1, "banker", stake)])
    assert results(effects)[(1, "banker")][:2] == ("win", net)


def test_commission_is_reported_and_named() -> None:
    _, effects = coup_of("2C 7S 3D KD KC", bets=[(1, "banker", 15)])
    (r,) = [e.settlement for e in effects if hasattr(e, "settlement")][0].results
    assert (r.paid, r.commission, r.returned) == (15, 1, 29)
    assert r.line.startswith("banker 1:1 less 5% commission")


@pytest.mark.parametrize("cards, stake, net, line", [
    ("2C 6S 3D KD KC", 15, 7, "banker wins on 6 pays 1:2 (no commission)"),   # banker 6 against 5
    ("2C 4S 2D KD 7C 2H", 10, 5, "banker wins on 6 pays 1:2 (no commission)"),  # three-card 6 against 1
    ("2C 7S 3D KD KC", 15, 15, "banker 1:1 (no commission)"),
    ("6C 6S KD KD", 15, 0, "tie 6 to 6: banker bet pushes"),
])
def test_no_commission_variant(cards: str, stake: int, net: int, line: str) -> None:
    _, effects = coup_of(cards, {"no_commission": True}, [(1, "banker", stake)])
    outcome, got, text = results(effects)[(1, "banker")]
    assert got == net and text.startswith(line)


@pytest.mark.parametrize("tie_pays, net", [("8:1", 40), ("9:1", 45)])
def test_tie_pays_and_pushes_the_sides(tie_pays: str, net: int) -> None:
    _, effects = coup_of("5S 4H 3D 4C", {"tie_pays": tie_pays})
    got = results(effects)
    assert got[(3, "tie")][:2] == ("win", net) and got[(3, "tie")][2] == f"tie {tie_pays}"
    assert got[(1, "player")][:2] == ("push", 0) and got[(2, "banker")][:2] == ("push", 0)


def test_player_win_pays_even_money() -> None:
    _, effects = coup_of("9S 7H KD KC")
    got = results(effects)
    assert got[(1, "player")][:2] == ("win", 10) and got[(2, "banker")][:2] == ("lose", -20)
    assert got[(3, "tie")][:2] == ("lose", -5)


# ---------------------------------------------------------------------------------------------------
# The shoe: burn, cut card, a foreign card


@pytest.mark.parametrize("first, burned", [("5H", 5), ("KD", 10), ("TC", 10), ("AS", 1), ("9C", 9)])
def test_burn_at_the_start_of_a_shoe(first: str, burned: int) -> None:
    state, _ = run(GAME, GAME.new_table(GAME.rules({})), [NewShoe(8)])
    exp = GAME.expected_next(state)
    assert (exp.card_to, exp.face_up) == ("burn", True)
    with pytest.raises(IllegalEvent, match="cannot open bets"):
        GAME.apply(state, OpenBets())
    with pytest.raises(IllegalEvent, match="no round in progress"):
        GAME.apply(state, VoidRound("oops"))
    state, effects = run(GAME, state, [CardDealt(parse_card(first))])
    assert effects == [CardPlaced(parse_card(first), "burn", True)]
    assert burn_count(parse_card(first)) == burned
    for burn in deal("2C 3C 4C 5C 6C 7C 8C 9C TC JC")[:burned]:
        exp = GAME.expected_next(state)
        assert (exp.card_to, exp.face_up) == ("burn", False)
        state, _ = run(GAME, state, [burn])
    assert GAME.expected_next(state).phase == "idle"
    snap = GAME.snapshot(state)
    assert [b["up"] for b in snap["burned"]] == [True] + [False] * burned
    assert state.shoe.dealt == burned + 1
    state, _ = run(GAME, state, [OpenBets()])


def test_cut_card_makes_the_coup_the_last_of_the_shoe() -> None:
    state = table(cut=3)
    state, effects = run(GAME, state, deal("9S 7H KD"))
    assert any(isinstance(e, ShuffleDue) for e in effects)
    state, _ = run(GAME, state, deal("KC") + [Settle()])
    assert GAME.expected_next(state).phase == "shuffling"
    with pytest.raises(IllegalEvent, match="cannot open bets"):
        GAME.apply(state, OpenBets())


@pytest.mark.parametrize("event, reason", [
    (NewShoe(6), "plays 8 deck"), (NewShoe(8, cut=413), "at least 6 card"), (NewShoe(8, cut=5), "after card 11"),
])
def test_new_shoe_refusals(event: NewShoe, reason: str) -> None:
    with pytest.raises(IllegalEvent, match=reason):
        GAME.apply(GAME.new_table(GAME.rules({})), event)


def test_a_card_the_shoe_cannot_hold_is_refused() -> None:
    state, _ = run(GAME, table({"decks": 1}), deal("AS"))
    with pytest.raises(IllegalEvent, match="AS cannot come from this shoe"):
        GAME.apply(state, CardDealt(parse_card("AS")))
    with pytest.raises(IllegalEvent, match="joker"):
        GAME.apply(state, CardDealt(parse_card("JK")))


@pytest.mark.parametrize("cards, event, reason", [
    ("", CardDealt(parse_card("2C"), target="banker"), "goes to player, not banker"),
    ("9S 7H KD KC", CardDealt(parse_card("2C")), "no card expected"),
    ("9S", Settle(), "cannot settle"),
    ("9S", PlaceBet(4, "tie", 5), "not open"),
    ("9S", NewShoe(8), "between coups"),
])
def test_refusals_say_why_and_change_nothing(cards: str, event: Event, reason: str) -> None:
    state, _ = run(GAME, table(), deal(cards) if cards else [])
    before = repr(state)
    with pytest.raises(IllegalEvent, match=reason):
        GAME.apply(state, event)
    assert repr(state) == before


def test_void_returns_every_stake() -> None:
    state, effects = run(GAME, table(), deal("9S 7H"))
    state, effects = run(GAME, state, [VoidRound("card misread")])
    voided = [e for e in effects if isinstance(e, RoundVoided)]
    assert voided[0].returned == 35 and committed(effects) == -35
    assert GAME.expected_next(state).phase == "idle" and not state.player


def test_close_needs_bets_over_the_minimum() -> None:
    state, _ = run(GAME, GAME.new_table(GAME.rules({"burn": False})), [NewShoe(8), OpenBets()])
    with pytest.raises(IllegalEvent, match="no bets"):
        GAME.apply(state, CloseBets())
    with pytest.raises(IllegalEvent, match="spot 2 tie: 1 is under the table minimum of 5"):
        GAME.apply(state, PlaceBet(2, "tie", 1))   # refused when placed: it never reaches the close


@pytest.mark.parametrize("data, message", [
    ({"decks": 0}, "rules.decks"), ({"spots": 15}, "rules.spots"), ({"commission_percent": 30}, "commission"),
    ({"tie_pays": "0:1"}, "rules.tie_pays"), ({"cards_behind_cut": 3}, "rules.cards_behind_cut"),
    ({"commission_rounding": "sideways"}, "commission_rounding"), ({"squeeze": True}, "unknown key"),
    ({"limits": {"player": {"min": 10, "max": 100}}}, "no limit for box banker"),
])
def test_rules_errors_name_the_key(data: dict[str, Any], message: str) -> None:
    with pytest.raises(RulesError, match=message):
        GAME.rules(data)


def test_snapshot_shows_the_coup() -> None:
    state, _ = run(GAME, table(), deal("9S 7H"))
    snap = GAME.snapshot(state)
    assert snap["player"] == {"cards": [{"card": "9S", "up": True}], "points": 9}
    assert snap["phase"] == "dealing" and snap["bets"][0] == {"spot": 1, "box": "player", "amount": 10}
    json.dumps(snap)


# ---------------------------------------------------------------------------------------------------
# Random play


RULE_SETS = [{}, {"no_commission": True, "decks": 6, "commission_rounding": "down"},
             {"decks": 1, "burn": False, "spots": 3}]


@pytest.mark.parametrize("rules", RULE_SETS)
def test_random_play_conserves_money_refuses_cleanly_and_replays(rules: dict[str, Any]) -> None:
    state = play_rounds(GAME, GAME.rules(rules), legal_bets, seed=3, rounds=300, void_chance=40, fresh_shoes=True)
    assert state.round >= 300


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 2 ** 32))
def test_random_play_property(seed: int) -> None:
    play_rounds(GAME, GAME.rules({}), legal_bets, seed=seed, rounds=25, void_chance=20, fresh_shoes=True)


# ---------------------------------------------------------------------------------------------------
# The math


@pytest.mark.parametrize("rules, banker, player, tie", [
    ({"decks": 8}, -0.010579, -0.012351, -0.143596),          # Wizard of Odds, baccarat, 8 decks
    ({"decks": 6}, -0.010558, -0.012374, -0.144382),          # 6 decks
    ({"decks": 1}, -0.010117, -0.012864, -0.157461),          # 1 deck
    ({"decks": 8, "no_commission": True}, -0.014581, -0.012351, -0.143596),
    ({"decks": 8, "tie_pays": "9:1"}, -0.010579, -0.012351, -0.048440),
])
def test_exact_house_edges_match_published_figures(rules: dict[str, Any], banker: float, player: float,
                                                   tie: float) -> None:
    rep = analyse(GAME.rules(rules), None, 1, lambda _: None)
    assert rep["method"] == "exact" and rep["rounds"] is None and rep["ci95"] is None
    edge = rep["house_edge"]
    assert (round(edge["banker"], 6), round(edge["player"], 6), round(edge["tie"], 6)) == (banker, player, tie)
    assert abs(sum(rep["probabilities"][k] for k in ("banker", "player", "tie")) - 1) < 1e-12


def test_enumeration_counts_every_deal() -> None:
    counts, total = exact_counts(2)
    assert total == 104 * 103 * 102 * 101 * 100 * 99 and int(counts.sum()) == total


def test_math_command_prints_json(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["math", "baccarat", "--decks", "6", "--json"]) == 0
    rep = json.loads(capsys.readouterr().out)
    assert rep["game"] == "baccarat" and rep["rules"]["decks"] == 6
    assert set(rep["house_edge"]) == {"banker", "player", "tie"}


def engine_coups(rules: dict[str, Any], coups: int, seed: int) -> tuple[list[list[Card]], list[int],
                                                                       list[dict[str, int]]]:
    """Step the engine through seeded shoes (burn and cut card included): each coup's first six cards out of
    the shoe (its own, then those that followed), how many it used, and the net of a player, a banker and a
    tie bet."""
    r = GAME.rules(rules)
    shoes = SeededShoes(GAME, r.decks, seed)
    bets = [PlaceBet(1, "player", 10), PlaceBet(2, "banker", 15), PlaceBet(3, "tie", 5)]
    state = GAME.new_table(r)
    rows: list[list[Card]] = []
    used: list[int] = []
    nets: list[dict[str, int]] = []
    while len(rows) < coups:
        exp = GAME.expected_next(state)
        if exp.phase == "shuffling":
            state = shoes.new_shoe(state)
        elif exp.card_to == "burn":
            state, _ = shoes.deal(state)
        else:
            state, _ = run(GAME, state, [OpenBets(), *bets, CloseBets()])
            start = shoes.pos
            while GAME.expected_next(state).phase == "dealing":
                state, _ = shoes.deal(state)
            state, effects = run(GAME, state, [Settle()])
            row = shoes.since(start, 6)[:6]
            rows.append(row + [parse_card("KS")] * (6 - len(row)))   # the shoe's end: any card, unused
            used.append(shoes.pos - start)
            nets.append({box: net for (_, box), (_, net, _) in results(effects).items()})
    return rows, used, nets


@pytest.mark.slow
@pytest.mark.parametrize("rules", [{}, {"no_commission": True, "decks": 6}, {"commission_rounding": "half_up"}])
def test_fast_path_settles_as_the_engine(rules: dict[str, Any]) -> None:
    assert_coups_match(rules, 3_000, seed=2)


@pytest.mark.long
@pytest.mark.parametrize("rules", [{}, {"no_commission": True, "decks": 6}])
def test_fast_path_settles_as_the_engine_long(rules: dict[str, Any]) -> None:
    assert_coups_match(rules, 100_000, seed=3)


def assert_coups_match(rules: dict[str, Any], coups: int, seed: int) -> None:
    rows, engine_used, nets = engine_coups(rules, coups, seed)
    values = np.array([[baccarat_points((c,)) for c in row] for row in rows])
    player, banker, used = coup(values)
    r = GAME.rules(rules)
    stakes = {"player": 10, "banker": 15, "tie": 5}
    for box, stake in stakes.items():
        assert (box_net(r, box, player, banker, stake) == np.array([n[box] for n in nets])).all(), box
    assert (used == np.array(engine_used)).all()

"""Let it ride: bets pulled back, every paytable line, the payout cap, community cards revealed in turn, refusals, rules config, harness properties."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from controller.cards import parse_card
from controller.games.base import (
    CardDealt, CardsRevealed, CloseBets, Decision, Event, IllegalEvent, OpenBets, PlaceBet, RemoveBet, RoundVoided,
    RulesError, Settle, StakeChanged, VoidRound,
)
from controller.games.let_it_ride import GAME, Rules, line_of
from controller.hands.poker import best_value
from controller.cards import parse_cards
from tests.game_harness import play_rounds
from tests.poker_tables import deal_by_position, play

BET = PlaceBet(1, "bet_1", 10)


def rows(results: dict) -> dict:
    return {box: (r.outcome, r.paid, r.returned, r.line) for (spot, box), r in results.items()}


@pytest.mark.parametrize("player, community, line, paid", [
    ("AS KS QS", "JS TS", "royal flush 1000:1", 10_000),
    ("9H TH JH", "QH KH", "straight flush 200:1", 2_000),
    ("AS 2S 3S", "4S 5S", "straight flush 200:1", 2_000),     # the wheel in one suit is no royal
    ("7S 7H 7D", "7C 2S", "four of a kind 50:1", 500),
    ("7S 7H 7D", "2C 2S", "full house 11:1", 110),
    ("2D 9D KD", "5D 7D", "flush 8:1", 80),
    ("AS 2D 3C", "4H 5S", "straight 5:1", 50),
    ("TS JD QC", "KH AS", "straight 5:1", 50),
    ("4S 4H 4D", "9C KS", "three of a kind 3:1", 30),
    ("2S 2H 5D", "5C KS", "two pair 2:1", 20),
    ("JS JH 5D", "8C KS", "tens or better 1:1", 10),
    ("TS 3H 5D", "TC KS", "tens or better 1:1", 10),
])
def test_every_paytable_line_on_every_bet(player: str, community: str, line: str, paid: int) -> None:
    _, _, results = play(GAME, [BET], {"spot:1": player, "community": community}, [(1, "ride"), (1, "ride")])
    assert rows(results) == {box: ("win", paid, 10 + paid, line) for box in ("bet_1", "bet_2", "bet_3")}


@pytest.mark.parametrize("player, community, line", [
    ("9S 9H 5D", "8C KS", "pair of nines does not pay"),
    ("AS 9H 5D", "8C KS", "ace high does not pay"),
    ("AS 2S 3S", "4S 9D", "ace high does not pay"),
])
def test_hands_below_tens_lose(player: str, community: str, line: str) -> None:
    _, _, results = play(GAME, [BET], {"spot:1": player, "community": community}, [(1, "ride"), (1, "ride")])
    assert rows(results) == {box: ("lose", 0, 0, line) for box in ("bet_1", "bet_2", "bet_3")}


@pytest.mark.parametrize("decisions, taken_back, settled", [
    (["pull", "pull"], ["bet_1", "bet_2"], ["bet_3"]),
    (["pull", "ride"], ["bet_1"], ["bet_2", "bet_3"]),
    (["ride", "pull"], ["bet_2"], ["bet_1", "bet_3"]),   # the second bet may go back though the first rode
    (["ride", "ride"], [], ["bet_1", "bet_2", "bet_3"]),
])
def test_bets_pulled_back(decisions: list, taken_back: list, settled: list) -> None:
    _, effects, results = play(GAME, [BET], {"spot:1": "JS JH 5D", "community": "8C KS"},
                               [(1, d) for d in decisions])
    back = [e for e in effects if isinstance(e, StakeChanged) and e.delta < 0]
    assert back == [StakeChanged(1, box, 0, -10) for box in taken_back]
    assert sorted(box for _, box in results) == settled
    assert all(r.outcome == "win" and r.returned == 20 for r in results.values())


def test_one_bet_covers_all_three_circles_so_they_stay_equal() -> None:
    state = GAME.new_table(GAME.rules({}))
    state, _ = GAME.apply(state, OpenBets())
    state, effects = GAME.apply(state, PlaceBet(2, "bet_3", 15))
    assert effects == tuple(StakeChanged(2, box, 15, 15) for box in ("bet_1", "bet_2", "bet_3"))
    state, effects = GAME.apply(state, RemoveBet(2, "bet_1", 5))
    assert effects == tuple(StakeChanged(2, box, 10, -5) for box in ("bet_1", "bet_2", "bet_3"))
    assert [(s, b, a) for s, b, a in state.bets] == [(2, "bet_1", 10), (2, "bet_2", 10), (2, "bet_3", 10)]
    with pytest.raises(IllegalEvent, match="no box 'bet_4'"):
        GAME.apply(state, PlaceBet(2, "bet_4", 5))
    with pytest.raises(IllegalEvent, match="over the table maximum of 1000"):
        GAME.apply(state, PlaceBet(2, "bet_2", 991))


def test_payout_cap_limits_a_spots_winnings_box_by_box() -> None:
    _, _, results = play(GAME, [BET], {"spot:1": "AS KS QS", "community": "JS TS"}, [(1, "ride"), (1, "ride")],
                         rules={"payout_cap": 15_000})
    capped = "royal flush 1000:1, capped at the table's payout limit of 15000"
    assert rows(results) == {"bet_1": ("win", 10_000, 10_010, "royal flush 1000:1"),
                             "bet_2": ("win", 5_000, 5_010, capped), "bet_3": ("win", 0, 10, capped)}


def test_community_cards_turn_up_one_decision_at_a_time() -> None:
    state = GAME.new_table(GAME.rules({}))
    for event in [OpenBets(), PlaceBet(1, "bet_1", 5), PlaceBet(3, "bet_1", 5), CloseBets()]:
        state, _ = GAME.apply(state, event)
    hands = {"spot:1": "JS JH 5D", "spot:3": "2C 7D 9H", "community": "8C KS"}
    state, effects = deal_by_position(GAME, state, {k: list(parse_cards(v)) for k, v in hands.items()})
    assert [e.to for e in effects] == ["spot:1", "spot:3", "community"] * 2 + ["spot:1", "spot:3"]
    public = {k: v for k, v in GAME.snapshot(state).items() if k != "audit"}
    assert all(not c["up"] for h in public["hands"] for c in h["cards"]) and all("hand" not in h for h in public["hands"])
    assert GAME.snapshot(state)["audit"]["hands"] == {"spot:1": "pair of jacks", "spot:3": "king high"}

    state, effects = GAME.apply(state, Decision("spot:3", "pull"))
    assert effects == (StakeChanged(3, "bet_1", 0, -5),)
    state, effects = GAME.apply(state, Decision("spot:1", "ride"))
    assert effects == (CardsRevealed("community", (parse_card("8C"),)),)
    community = next(h for h in GAME.snapshot(state)["hands"] if h["to"] == "community")
    assert community["cards"] == [{"card": "8C", "up": True}, {"card": "KS", "up": False}]
    assert GAME.expected_next(state).text == "spot 1: pull or ride; 1 more to decide"

    state, _ = GAME.apply(state, Decision("spot:1", "ride"))
    state, effects = GAME.apply(state, Decision("spot:3", "ride"))
    assert CardsRevealed("community", (parse_card("KS"),)) in effects
    public = {k: v for k, v in GAME.snapshot(state).items() if k != "audit"}
    assert {h["to"]: h.get("hand") for h in public["hands"]} == {
        "spot:1": "pair of jacks", "spot:3": "king high", "community": None}
    state, effects = GAME.apply(state, Settle())
    settlement = effects[0].settlement
    assert (settlement.stakes, settlement.returned) == (15 + 10, 30)   # jacks win three bets, king high loses two


@pytest.mark.parametrize("event, reason", [
    (Decision("spot:1", "fold"), "spot 1 may pull or ride, not 'fold'"),
    (Decision("spot:1", "pull", amount=10), "spot 1: pull costs 0, not 10"),
    (Decision("spot:2", "pull"), "spot 2 has no decision"),
    (Decision("dealer", "ride"), "only a player decides"),
    (CardDealt(parse_card("2D")), "no card expected now"),
    (Settle(), "cannot settle now"),
    (PlaceBet(1, "bet_1", 5), "bets are not open"),
])
def test_illegal_events_are_refused_and_change_nothing(event: Event, reason: str) -> None:
    state = GAME.new_table(GAME.rules({}))
    for e in [OpenBets(), BET, CloseBets()]:
        state, _ = GAME.apply(state, e)
    state, _ = deal_by_position(GAME, state, {"spot:1": list(parse_cards("JS JH 5D")),
                                              "community": list(parse_cards("8C KS"))})
    before = repr(state)
    with pytest.raises(IllegalEvent, match=reason):
        GAME.apply(state, event)
    assert repr(state) == before


def test_a_decision_counts_once_per_stage() -> None:
    state = GAME.new_table(GAME.rules({}))
    for e in [OpenBets(), BET, PlaceBet(2, "bet_1", 5), CloseBets()]:
        state, _ = GAME.apply(state, e)
    state, _ = deal_by_position(GAME, state, {"spot:1": list(parse_cards("JS JH 5D")), "spot:2": list(parse_cards("2C 3C 4C")),
                                              "community": list(parse_cards("8C KS"))})
    state, _ = GAME.apply(state, Decision("spot:1", "pull"))
    with pytest.raises(IllegalEvent, match="spot 1 already chose pull"):
        GAME.apply(state, Decision("spot:1", "ride"))


def test_void_after_a_pull_returns_what_is_still_on_the_layout() -> None:
    state = GAME.new_table(GAME.rules({}))
    for e in [OpenBets(), BET, CloseBets()]:
        state, _ = GAME.apply(state, e)
    state, _ = deal_by_position(GAME, state, {"spot:1": list(parse_cards("JS JH 5D")),
                                              "community": list(parse_cards("8C KS"))})
    state, _ = GAME.apply(state, Decision("spot:1", "pull"))
    _, effects = GAME.apply(state, VoidRound("misdeal"))
    assert [e for e in effects if isinstance(e, StakeChanged)] == [StakeChanged(1, "bet_2", 0, -10),
                                                                    StakeChanged(1, "bet_3", 0, -10)]
    assert effects[-1] == RoundVoided(1, "misdeal", 20)


def test_line_of_matches_the_paytable_names() -> None:
    assert line_of(best_value(parse_cards("TS TH 2C 3D 4S"))) == "tens_or_better"
    assert line_of(best_value(parse_cards("9S 9H 2C 3D 4S"))) is None
    assert line_of(best_value(parse_cards("AS KS QS JS TS"))) == "royal_flush"


def test_default_paytable_is_the_seeds() -> None:
    rules = GAME.rules({})
    assert isinstance(rules, Rules)
    assert [(k, str(v)) for k, v in rules.paytable.items()] == [
        ("royal_flush", "1000:1"), ("straight_flush", "200:1"), ("four_of_a_kind", "50:1"), ("full_house", "11:1"),
        ("flush", "8:1"), ("straight", "5:1"), ("three_of_a_kind", "3:1"), ("two_pair", "2:1"),
        ("tens_or_better", "1:1")]


@pytest.mark.parametrize("data, message", [
    ({"paytable": {"pair": 1}}, r"rules.paytable.pair: no such line"),
    ({"paytable": {}}, r"pays no hand"),
    ({"payout_cap": 0}, r"rules.payout_cap: at least 1"),
    ({"limit": {"min": 0, "max": 5}}, r"rules.limit"),
    ({"limits": {"bet_1": {"min": 1, "max": 5}}}, r"unknown key.*limits"),
    ({"spots": 0}, r"rules.spots"),
])
def test_rules_errors_name_the_key(data: dict, message: str) -> None:
    with pytest.raises(RulesError, match=message):
        GAME.rules(data)


def legal_bets(rules: Rules, rng) -> list[Event]:  # type: ignore[no-untyped-def]
    low, high = rules.limit.min, rules.limit.max // 4
    bets: list[Event] = [PlaceBet(s, rng.choice(["bet_1", "bet_2", "bet_3"]), rng.randint(low, high))
                         for s in range(1, rules.spots + 1) if rng.randbelow(2)]
    return bets or [PlaceBet(1 + rng.randbelow(rules.spots), "bet_1", low)]


@pytest.mark.parametrize("rules", [{}, {"deal": "hands", "spots": 2, "payout_cap": 300},
                                   {"paytable": {"tens_or_better": "3:2", "two_pair": "5:2"},
                                    "limit": {"min": 3, "max": 40}}])
@pytest.mark.slow
def test_harness_properties(rules: dict) -> None:
    play_rounds(GAME, GAME.rules(rules), legal_bets, seed=5, rounds=250, void_chance=30, deck_per_round=True)


@settings(max_examples=8, deadline=None)
@given(seed=st.integers(0, 2 ** 32))
def test_harness_properties_any_seed(seed: int) -> None:
    play_rounds(GAME, GAME.rules({}), legal_bets, seed=seed, rounds=25, void_chance=15, deck_per_round=True)

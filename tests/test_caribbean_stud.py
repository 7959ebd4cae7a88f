"""Caribbean stud: the qualifying dealer, every raise paytable line, ties, folds, the call cap, the dealer's up card, refusals, rules config, harness properties."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from controller.cards import parse_card, parse_cards
from controller.games.base import (
    CardDealt, CloseBets, Decision, Event, IllegalEvent, OpenBets, PlaceBet, RulesError, Settle, StakeChanged,
    VoidRound,
)
from controller.games.caribbean_stud import GAME, Rules
from tests.game_harness import play_rounds
from tests.poker_tables import deal_by_position, play

ANTE = PlaceBet(1, "ante", 10)
DEALER_AK = "AD KC 8H 6S 3C"   # ace-king: qualifies, barely


def rows(results: dict) -> dict:
    return {box: (r.outcome, r.paid, r.returned, r.line) for (spot, box), r in results.items()}


@pytest.mark.parametrize("player, line, paid", [
    ("AS KS QS JS TS", "call royal flush 100:1", 2_000),
    ("9H TH JH QH KH", "call straight flush 50:1", 1_000),
    ("7S 7H 7D 7C 2S", "call four of a kind 20:1", 400),
    ("7S 7H 7D 2C 2S", "call full house 7:1", 140),
    ("2D 9D JD 5D 7D", "call flush 5:1", 100),
    ("4S 5D 6C 7H 8S", "call straight 4:1", 80),
    ("4S 4H 4D 9C QS", "call three of a kind 3:1", 60),
    ("2S 2H 5D 5C QS", "call two pair 2:1", 40),
    ("JS JH 5D 8C 9S", "call pair 1:1", 20),
    ("AS KH QD 9C 4S", "call high card 1:1", 20),
])
def test_every_call_paytable_line(player: str, line: str, paid: int) -> None:
    _, _, results = play(GAME, [ANTE], {"spot:1": player, "dealer": DEALER_AK}, [(1, "call")])
    assert rows(results) == {"ante": ("win", 10, 20, "player beats dealer: ante 1:1"),
                             "call": ("win", paid, 20 + paid, line)}


@pytest.mark.parametrize("player, dealer, expected", [
    # ace-queen high does not qualify: ante 1:1 and the call pushes, whatever the player holds
    ("2C 4D 7H 9S JC", "AH QD 9C 5S 3H", {"ante": ("win", 10, 20, "dealer does not qualify: ante 1:1"),
                                          "call": ("push", 0, 20, "dealer does not qualify: call pushes")}),
    ("2C 4D 7H 9S JC", "AH KD 4C 3S 2H", {"ante": ("lose", 0, 0, "dealer beats player"),
                                          "call": ("lose", 0, 0, "dealer beats player")}),
    ("JS JH 5D 8C 9S", "QD QC 8H 6S 3C", {"ante": ("lose", 0, 0, "dealer beats player"),
                                          "call": ("lose", 0, 0, "dealer beats player")}),
    ("AS KH 8D 6C 3H", DEALER_AK, {"ante": ("push", 0, 10, "tie: ante pushes"), "call": ("push", 0, 20, "tie: call pushes")}),
    # the wheel is the lowest straight
    ("AS 2H 3D 4C 5H", "6D 7C 8H 9S TC", {"ante": ("lose", 0, 0, "dealer beats player"),
                                          "call": ("lose", 0, 0, "dealer beats player")}),
])
def test_dealer_qualifies_and_compares(player: str, dealer: str, expected: dict) -> None:
    _, _, results = play(GAME, [ANTE], {"spot:1": player, "dealer": dealer}, [(1, "call")])
    assert rows(results) == expected


def test_fold_loses_the_ante_only() -> None:
    _, effects, results = play(GAME, [ANTE], {"spot:1": "AS KS QS JS TS", "dealer": "AH QD 9C 5S 3H"}, [(1, "fold")])
    assert rows(results) == {"ante": ("lose", 0, 0, "fold")}
    assert not [e for e in effects if isinstance(e, StakeChanged) and e.box == "call"]


def test_call_is_twice_the_ante() -> None:
    _, effects, results = play(GAME, [PlaceBet(2, "ante", 7)], {"spot:2": "JS JH 5D 8C 9S", "dealer": DEALER_AK},
                               [(2, "call")])
    assert StakeChanged(2, "call", 14, 14) in effects and results[(2, "call")].stake == 14


def test_call_payout_cap() -> None:
    _, _, results = play(GAME, [ANTE], {"spot:1": "AS KS QS JS TS", "dealer": DEALER_AK}, [(1, "call")],
                         rules={"call_payout_cap": 500})
    assert rows(results)["call"] == ("win", 500, 520,
                                     "call royal flush 100:1, capped at the table's call payout limit of 500")


def test_the_dealers_last_card_is_dealt_face_up_and_only_it_shows() -> None:
    state = GAME.new_table(GAME.rules({}))
    for e in [OpenBets(), ANTE, PlaceBet(4, "ante", 5), CloseBets()]:
        state, _ = GAME.apply(state, e)
    faces = []
    cards = iter(parse_cards("2C 3C 4C 5C 6C 7C 8C 9C TC JC QC KC AC 2D 3D"))
    while (exp := GAME.expected_next(state)).card_to is not None:
        faces.append((exp.card_to, exp.face_up))
        state, _ = GAME.apply(state, CardDealt(next(cards)))
    assert faces == [("spot:1", False), ("spot:4", False), ("dealer", False)] * 4 + [
        ("spot:1", False), ("spot:4", False), ("dealer", True)]
    snap = GAME.snapshot(state)
    dealer = next(h for h in snap["hands"] if h["to"] == "dealer")
    assert [c["up"] for c in dealer["cards"]] == [False] * 4 + [True] and dealer["cards"][4]["card"] == "3D"
    assert "dealer_qualifies" not in snap and all("hand" not in h for h in snap["hands"])
    assert snap["audit"]["dealer_qualifies"] is False   # king high: for operators only until it is turned up
    state, _ = GAME.apply(state, Decision("spot:4", "fold"))
    state, _ = GAME.apply(state, Decision("spot:1", "call"))
    public = {k: v for k, v in GAME.snapshot(state).items() if k != "audit"}
    assert public["dealer_qualifies"] is False
    assert {h["to"]: h.get("hand") for h in public["hands"]} == {
        "spot:1": "ace-high flush", "spot:4": None, "dealer": "king high"}   # the folded hand stays down


@pytest.mark.parametrize("event, reason", [
    (Decision("spot:1", "raise"), "spot 1 may call or fold, not 'raise'"),
    (Decision("spot:1", "call", amount=10), "spot 1: call costs 20, not 10"),
    (Decision("spot:3", "call"), "spot 3 has no decision"),
    (CardDealt(parse_card("2D")), "no card expected now"),
    (Settle(), "cannot settle now"),
    (CloseBets(), "bets are not open"),
])
def test_illegal_events_are_refused_and_change_nothing(event: Event, reason: str) -> None:
    state = GAME.new_table(GAME.rules({}))
    for e in [OpenBets(), ANTE, CloseBets()]:
        state, _ = GAME.apply(state, e)
    state, _ = deal_by_position(GAME, state, {"spot:1": list(parse_cards("JS JH 5D 8C 9S")),
                                              "dealer": list(parse_cards(DEALER_AK))})
    before = repr(state)
    with pytest.raises(IllegalEvent, match=reason):
        GAME.apply(state, event)
    assert repr(state) == before


def test_void_returns_ante_and_call() -> None:
    state = GAME.new_table(GAME.rules({}))
    for e in [OpenBets(), ANTE, PlaceBet(2, "ante", 4), CloseBets()]:
        state, _ = GAME.apply(state, e)
    state, _ = deal_by_position(GAME, state, {"spot:1": list(parse_cards("JS JH 5D 8C 9S")),
                                              "spot:2": list(parse_cards("2S 3S 4S 5S 7H")),
                                              "dealer": list(parse_cards(DEALER_AK))})
    state, _ = GAME.apply(state, Decision("spot:1", "call"))
    _, effects = GAME.apply(state, VoidRound("camera disagrees with shoe"))
    assert [e for e in effects if isinstance(e, StakeChanged)] == [
        StakeChanged(1, "ante", 0, -10), StakeChanged(1, "call", 0, -20), StakeChanged(2, "ante", 0, -4)]
    assert effects[-1].returned == 34


@pytest.mark.parametrize("data, message", [
    ({"paytable": {"pair": 1}}, r"rules.paytable: no payout for royal_flush"),
    ({"paytable": {"mini_royal": 1}}, r"rules.paytable.mini_royal: no such line"),
    ({"call_payout_cap": -5}, r"rules.call_payout_cap: at least 1"),
    ({"limits": {"ante": {"min": 10, "max": 5}}}, r"rules.limits.ante"),
    ({"limits": {"call": {"min": 1, "max": 5}}}, r"no such box call"),
])
def test_rules_errors_name_the_key(data: dict, message: str) -> None:
    with pytest.raises(RulesError, match=message):
        GAME.rules(data)


def test_default_paytable_is_the_issues() -> None:
    rules = GAME.rules({})
    assert isinstance(rules, Rules) and rules.call_payout_cap is None
    assert [str(p) for p in rules.paytable.values()] == ["100:1", "50:1", "20:1", "7:1", "5:1", "4:1", "3:1", "2:1",
                                                         "1:1", "1:1"]


def legal_bets(rules: Rules, rng) -> list[Event]:  # type: ignore[no-untyped-def]
    bets: list[Event] = [PlaceBet(s, "ante", 1 + rng.randbelow(100)) for s in range(1, rules.spots + 1)
                         if rng.randbelow(2)]
    return bets or [PlaceBet(1 + rng.randbelow(rules.spots), "ante", 5)]


@pytest.mark.parametrize("rules", [{}, {"deal": "hands", "spots": 4, "call_payout_cap": 150},
                                   {"paytable": {**{k: str(v) for k, v in Rules().paytable.items()},
                                                 "pair": "3:2", "straight": "9:2"}}])
@pytest.mark.slow
def test_harness_properties(rules: dict) -> None:
    play_rounds(GAME, GAME.rules(rules), legal_bets, seed=3, rounds=250, void_chance=30, deck_per_round=True)


@pytest.mark.slow
@settings(max_examples=8, deadline=None)
@given(seed=st.integers(0, 2 ** 32))
def test_harness_properties_any_seed(seed: int) -> None:
    play_rounds(GAME, GAME.rules({}), legal_bets, seed=seed, rounds=25, void_chance=15, deck_per_round=True)

"""Three card poker: every settlement rule and paytable line, refusals that change nothing, hidden cards, rules config, harness properties."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from controller.cards import JOKER, parse_card
from controller.games.base import (
    CardDealt, CloseBets, Decision, Event, IllegalEvent, OpenBets, PlaceBet, RemoveBet, RoundVoided, RulesError, Settle,
    StakeChanged, VoidRound,
)
from controller.games.three_card_poker import GAME, Rules
from tests.game_harness import play_rounds
from tests.poker_tables import deal_by_position, play

ANTE, PP = PlaceBet(1, "ante", 10), PlaceBet(1, "pair_plus", 10)


def rows(results: dict) -> dict:
    return {box: (r.outcome, r.paid, r.returned, r.line) for (spot, box), r in results.items()}


@pytest.mark.parametrize("player, dealer, expected", [
    # dealer below queen high: the ante pays and the play pushes, even though the dealer's hand is higher
    ("8S 6H 2C", "JH 9C 4D", {"ante": ("win", 10, 20, "dealer does not qualify: ante 1:1"),
                              "play": ("push", 0, 10, "dealer does not qualify: play pushes")}),
    # queen high is the worst qualifying hand
    ("JS 9H 8C", "QH 3C 2D", {"ante": ("lose", 0, 0, "dealer beats player"),
                              "play": ("lose", 0, 0, "dealer beats player")}),
    ("AS AH 3C", "KH QD 9S", {"ante": ("win", 10, 20, "player beats dealer: ante 1:1"),
                              "play": ("win", 10, 20, "player beats dealer: play 1:1")}),
    ("QS 7H 5C", "KH KD 2S", {"ante": ("lose", 0, 0, "dealer beats player"),
                              "play": ("lose", 0, 0, "dealer beats player")}),
    # an exact tie pushes both bets; suits never break it
    ("KS 8H 3C", "KD 8C 3H", {"ante": ("push", 0, 10, "tie: ante pushes"), "play": ("push", 0, 10, "tie: play pushes")}),
    # the ante bonus is paid even when the dealer wins
    ("4S 5H 6C", "7D 7C 7H", {"ante": ("lose", 0, 0, "dealer beats player"),
                              "play": ("lose", 0, 0, "dealer beats player"),
                              "ante_bonus": ("bonus", 10, 10, "ante bonus straight 1:1")}),
    # A-2-3 is the lowest straight: it loses to 2-3-4 and beats any flush
    ("AS 2H 3C", "2D 3S 4H", {"ante": ("lose", 0, 0, "dealer beats player"),
                              "play": ("lose", 0, 0, "dealer beats player"),
                              "ante_bonus": ("bonus", 10, 10, "ante bonus straight 1:1")}),
    ("AS 2H 3C", "KD 9D 4D", {"ante": ("win", 10, 20, "player beats dealer: ante 1:1"),
                              "play": ("win", 10, 20, "player beats dealer: play 1:1"),
                              "ante_bonus": ("bonus", 10, 10, "ante bonus straight 1:1")}),
    # a pair beats any high card; pairs compare by the pair, then the kicker
    ("5S 5H 2C", "AD KD 9C", {"ante": ("win", 10, 20, "player beats dealer: ante 1:1"),
                              "play": ("win", 10, 20, "player beats dealer: play 1:1")}),
    ("9S 9H 4C", "9D 9C 5S", {"ante": ("lose", 0, 0, "dealer beats player"),
                              "play": ("lose", 0, 0, "dealer beats player")}),
])
def test_ante_and_play(player: str, dealer: str, expected: dict) -> None:
    _, _, results = play(GAME, [ANTE], {"spot:1": player, "dealer": dealer}, [(1, "play")])
    assert rows(results) == expected


@pytest.mark.parametrize("player, pair_plus, ante_bonus", [
    ("5H 6H 7H", ("win", 400, 410, "pair plus straight flush 40:1"), ("bonus", 50, 50, "ante bonus straight flush 5:1")),
    ("QH KH AH", ("win", 400, 410, "pair plus straight flush 40:1"), ("bonus", 50, 50, "ante bonus straight flush 5:1")),
    ("8S 8H 8C", ("win", 300, 310, "pair plus three of a kind 30:1"),
     ("bonus", 40, 40, "ante bonus three of a kind 4:1")),
    ("AS 2H 3C", ("win", 60, 70, "pair plus straight 6:1"), ("bonus", 10, 10, "ante bonus straight 1:1")),
    ("2S 9S KS", ("win", 30, 40, "pair plus flush 3:1"), None),
    ("TS TH 2C", ("win", 10, 20, "pair plus pair 1:1"), None),
    ("AS KH 5C", ("lose", 0, 0, "pair plus: high card does not pay"), None),
])
def test_every_paytable_line(player: str, pair_plus: tuple, ante_bonus: tuple | None) -> None:
    _, _, results = play(GAME, [ANTE, PP], {"spot:1": player, "dealer": "JD 9C 4D"}, [(1, "play")])
    got = rows(results)
    assert got["pair_plus"] == pair_plus
    assert got.get("ante_bonus") == ante_bonus
    assert results[(1, "ante_bonus")].stake == 0 if ante_bonus else (1, "ante_bonus") not in results


def test_fold_loses_ante_and_pair_plus_and_no_bonus() -> None:
    _, effects, results = play(GAME, [ANTE, PP], {"spot:1": "4S 5H 6C", "dealer": "2D 3D 9S"}, [(1, "fold")])
    assert rows(results) == {"ante": ("lose", 0, 0, "fold"), "pair_plus": ("lose", 0, 0, "fold: pair plus lost")}
    assert not [e for e in effects if isinstance(e, StakeChanged) and e.box == "play"]


def test_fold_keeps_pair_plus_when_the_rules_say_so() -> None:
    _, _, results = play(GAME, [ANTE, PP], {"spot:1": "4S 5H 6C", "dealer": "2D 3D 9S"}, [(1, "fold")],
                         rules={"fold_loses_pair_plus": False})
    assert rows(results)["pair_plus"] == ("win", 60, 70, "pair plus straight 6:1")


def test_pair_plus_alone_needs_no_decision_and_ignores_the_dealer() -> None:
    _, _, results = play(GAME, [PlaceBet(2, "pair_plus", 5)], {"spot:2": "TS TH 2C", "dealer": "AD AC AH"})
    assert rows(results) == {"pair_plus": ("win", 5, 10, "pair plus pair 1:1")}


def test_play_bet_is_a_stake_change_equal_to_the_ante() -> None:
    _, effects, results = play(GAME, [PlaceBet(3, "ante", 7)], {"spot:3": "AS AH 3C", "dealer": "KH QD 9S"},
                               [(3, "play")])
    assert StakeChanged(3, "play", 7, 7) in effects
    assert results[(3, "play")].stake == 7


def test_configured_paytables() -> None:
    rules = {"pair_plus": {"straight_flush": 40, "three_of_a_kind": 30, "straight": 6, "flush": 4, "pair": 1},
             "ante_bonus": {"straight_flush": 5, "three_of_a_kind": 3, "straight": "1:2"}}
    _, _, results = play(GAME, [PlaceBet(1, "ante", 5), PlaceBet(1, "pair_plus", 5)],
                         {"spot:1": "2S 9S KS", "dealer": "JD 9C 4D"}, [(1, "play")], rules=rules)
    assert rows(results)["pair_plus"] == ("win", 20, 25, "pair plus flush 4:1")
    _, _, results = play(GAME, [PlaceBet(1, "ante", 5)], {"spot:1": "4S 5H 6C", "dealer": "JD 9C 2D"}, [(1, "play")],
                         rules=rules)
    assert rows(results)["ante_bonus"] == ("bonus", 2, 2, "ante bonus straight 1:2")  # 2.5 rounds down


def test_several_spots_settle_independently() -> None:
    bets = [PlaceBet(1, "ante", 10), PlaceBet(4, "ante", 20), PlaceBet(4, "pair_plus", 5), PlaceBet(6, "pair_plus", 1)]
    hands = {"spot:1": "2C 7D 9H", "spot:4": "AS AH KC", "spot:6": "3S 4S 5S", "dealer": "QD JS 8C"}
    _, _, results = play(GAME, bets, hands, [(4, "play"), (1, "fold")])
    assert {k: (r.outcome, r.returned) for k, r in results.items()} == {
        (1, "ante"): ("lose", 0), (4, "ante"): ("win", 40), (4, "play"): ("win", 40), (4, "pair_plus"): ("win", 10),
        (6, "pair_plus"): ("win", 41)}


# ---------------------------------------------------------------------------------------------------
# Refusals

def _at(phase: str) -> tuple:
    """A state in `phase`: spot 1 ante 10 + pair plus, spot 2 pair plus only, spot 3 ante (deciding: 3 played)."""
    state = GAME.new_table(GAME.rules({}))
    if phase == "idle":
        return state, {}
    state, _ = GAME.apply(state, OpenBets())
    if phase == "betting":
        return state, {}
    for bet in [ANTE, PP, PlaceBet(2, "pair_plus", 5), PlaceBet(3, "ante", 10)]:
        state, _ = GAME.apply(state, bet)
    state, _ = GAME.apply(state, CloseBets())
    state, _ = GAME.apply(state, CardDealt(parse_card("AS")))
    if phase == "dealing":
        return state, {}
    hands = {"spot:1": "KS QS", "spot:2": "2H 3H 4H", "spot:3": "9C 9D 9H", "dealer": "5C 6D 7S"}
    state, _ = deal_by_position(GAME, state, {k: [parse_card(c) for c in v.split()] for k, v in hands.items()})
    state, _ = GAME.apply(state, Decision("spot:3", "play"))
    return state, {}


@pytest.mark.parametrize("phase, event, reason", [
    ("idle", PlaceBet(1, "ante", 5), "bets are not open"),
    ("idle", CardDealt(parse_card("AS")), "no card expected now"),
    ("idle", Decision("spot:1", "play"), "no decision expected now"),
    ("idle", Settle(), "cannot settle now"),
    ("idle", VoidRound("x"), "no round to void"),
    ("betting", OpenBets(), "already in progress"),
    ("betting", PlaceBet(1, "play", 5), "no box 'play'"),
    ("betting", PlaceBet(8, "ante", 5), "no spot 8"),
    ("betting", PlaceBet(1, "ante", 1001), "over the table maximum of 1000"),
    ("betting", RemoveBet(1, "ante", 5), "holds 0"),
    ("betting", CloseBets(), "no bets on the table"),
    ("betting", CardDealt(parse_card("AS")), "no card expected now"),
    ("dealing", CardDealt(parse_card("AS")), "AS is already on the table this round"),
    ("dealing", CardDealt(JOKER), "joker"),
    ("dealing", CardDealt(parse_card("KD"), target="dealer"), "card expected for spot:2, not dealer"),
    ("dealing", PlaceBet(1, "ante", 5), "bets are not open"),
    ("dealing", Decision("spot:1", "play"), "no decision expected now"),
    ("dealing", Settle(), "cannot settle now"),
    ("deciding", Decision("spot:2", "play"), "spot 2 has no decision to make now"),
    ("deciding", Decision("spot:5", "fold"), "spot 5 has no decision to make now"),
    ("deciding", Decision("dealer", "play"), "only a player decides here"),
    ("deciding", Decision("spot:3", "fold"), "spot 3 already chose play"),
    ("deciding", Decision("spot:1", "raise"), "spot 1 may play or fold, not 'raise'"),
    ("deciding", Decision("spot:1", "play", amount=7), "spot 1: play costs 10, not 7"),
    ("deciding", Decision("spot:1", "fold", amount=10), "spot 1: fold costs 0, not 10"),
    ("deciding", Decision("spot:1", "play", hand=1), "one hand"),
    ("deciding", CardDealt(parse_card("2D")), "no card expected now"),
    ("deciding", Settle(), "cannot settle now"),
    ("deciding", CloseBets(), "bets are not open"),
])
def test_illegal_events_are_refused_and_change_nothing(phase: str, event: Event, reason: str) -> None:
    state, _ = _at(phase)
    before = repr(state)
    with pytest.raises(IllegalEvent, match=reason):
        GAME.apply(state, event)
    assert repr(state) == before


def test_a_bet_under_the_minimum_is_refused_when_placed() -> None:
    state = GAME.new_table(GAME.rules({"limits": {"ante": {"min": 5, "max": 100}, "pair_plus": {"min": 1, "max": 50}}}))
    state, _ = GAME.apply(state, OpenBets())
    with pytest.raises(IllegalEvent, match="spot 1 ante: 4 is under the table minimum of 5"):
        GAME.apply(state, PlaceBet(1, "ante", 4))


def test_void_returns_every_stake_including_the_play_bet() -> None:
    state, _ = _at("deciding")
    _, effects = GAME.apply(state, VoidRound("shoe jam"))
    deltas = {(e.spot, e.box): e.delta for e in effects if isinstance(e, StakeChanged)}
    assert deltas == {(1, "ante"): -10, (1, "pair_plus"): -10, (2, "pair_plus"): -5, (3, "ante"): -10,
                      (3, "play"): -10}
    assert [e for e in effects if isinstance(e, RoundVoided)] == [RoundVoided(1, "shoe jam", 45)]


# ---------------------------------------------------------------------------------------------------
# What screens may see

def _public(snap: dict) -> dict:
    return {k: v for k, v in snap.items() if k != "audit"}


def test_hole_cards_and_what_they_imply_stay_in_audit_until_revealed() -> None:
    state, _ = _at("deciding")
    snap = GAME.snapshot(state)
    public = _public(snap)
    assert all(not c["up"] for h in public["hands"] for c in h["cards"])
    assert "dealer_qualifies" not in public and all("hand" not in h for h in public["hands"])
    assert snap["audit"]["hands"]["dealer"] == "straight" and snap["audit"]["dealer_qualifies"] is True

    state, effects = GAME.apply(state, Decision("spot:1", "fold"))
    public = _public(GAME.snapshot(state))
    by_to = {h["to"]: h for h in public["hands"]}
    assert all(c["up"] for c in by_to["dealer"]["cards"]) and by_to["dealer"]["hand"] == "straight"
    assert public["dealer_qualifies"] is True
    assert all(not c["up"] for c in by_to["spot:1"]["cards"]) and "hand" not in by_to["spot:1"]  # folded: mucked
    assert by_to["spot:3"]["hand"] == "three of a kind"


def test_expected_next_walks_the_round() -> None:
    state = GAME.new_table(GAME.rules({"deal": "hands"}))
    assert GAME.expected_next(state).actions == ("open_bets",)
    state, _ = GAME.apply(state, OpenBets())
    for bet in [PlaceBet(2, "ante", 5), PlaceBet(5, "ante", 5)]:
        state, _ = GAME.apply(state, bet)
    state, _ = GAME.apply(state, CloseBets())
    order = []
    for card in "2C 3C 4C 5D 6D 7D 8H 9H TH".split():
        exp = GAME.expected_next(state)
        order.append(exp.card_to)
        assert exp.face_up is False
        state, _ = GAME.apply(state, CardDealt(parse_card(card)))
    assert order == ["spot:2"] * 3 + ["spot:5"] * 3 + ["dealer"] * 3   # a hand-forming shuffler's order
    exp = GAME.expected_next(state)
    assert (exp.phase, exp.actor, exp.actions, exp.text) == (
        "deciding", "spot:2", ("play", "fold"), "spot 2: play (5) or fold; 1 more to decide")
    state, _ = GAME.apply(state, Decision("spot:5", "fold"))  # players may decide in any order
    assert GAME.expected_next(state).actor == "spot:2"
    state, _ = GAME.apply(state, Decision("spot:2", "play", amount=5))
    assert GAME.expected_next(state).phase == "settling"


# ---------------------------------------------------------------------------------------------------
# Rules as configuration

def test_default_rules_are_the_seeds() -> None:
    rules = GAME.rules({})
    assert isinstance(rules, Rules)
    assert {k: str(v) for k, v in rules.pair_plus.items()} == {
        "straight_flush": "40:1", "three_of_a_kind": "30:1", "straight": "6:1", "flush": "3:1", "pair": "1:1"}
    assert {k: str(v) for k, v in rules.ante_bonus.items()} == {
        "straight_flush": "5:1", "three_of_a_kind": "4:1", "straight": "1:1"}


@pytest.mark.parametrize("data, message", [
    ({"spots": 8}, r"rules.spots: 1 to 7"),
    ({"deal": "shuffled"}, r"rules.deal"),
    ({"pair_plus": {"royal": 50}}, r"rules.pair_plus.royal: no such line"),
    ({"ante_bonus": {"pair": 0}}, r"rules.ante_bonus.pair: a line pays more than 0"),
    ({"pair_plus": {}}, r"rules.pair_plus: the paytable pays no hand"),
    ({"limits": {"ante": {"min": 0, "max": 5}, "pair_plus": {"min": 1, "max": 5}}}, r"rules.limits.ante"),
    ({"limits": {"ante": {"min": 1, "max": 5}}}, r"no limit for box pair_plus"),
    ({"limits": {"ante": {"min": 1, "max": 5}, "pair_plus": {"min": 1, "max": 5}, "play": {"min": 1, "max": 5}}},
     r"no such box play"),
    ({"fold_loses_pair_plus": 1}, r"rules.fold_loses_pair_plus: expected true or false"),
])
def test_rules_errors_name_the_key(data: dict, message: str) -> None:
    with pytest.raises(RulesError, match=message):
        GAME.rules(data)


# ---------------------------------------------------------------------------------------------------
# Properties: money conserved, refusals change nothing, replay rebuilds the state

def legal_bets(rules: Rules, rng) -> list[Event]:  # type: ignore[no-untyped-def]
    bets: list[Event] = []
    for spot in range(1, rules.spots + 1):
        kind = rng.randbelow(4)
        if kind & 1:
            bets.append(PlaceBet(spot, "ante", 1 + rng.randbelow(60)))
        if kind & 2:
            bets.append(PlaceBet(spot, "pair_plus", 1 + rng.randbelow(60)))
    return bets or [PlaceBet(1 + rng.randbelow(rules.spots), "ante", 5)]


@pytest.mark.parametrize("rules", [{}, {"deal": "hands", "spots": 3, "fold_loses_pair_plus": False},
                                   {"pair_plus": {"pair": "3:2", "flush": "5:2"}, "ante_bonus": {"straight": "1:2"}}])
@pytest.mark.slow
def test_harness_properties(rules: dict) -> None:
    play_rounds(GAME, GAME.rules(rules), legal_bets, seed=11, rounds=250, void_chance=30, deck_per_round=True)


@pytest.mark.slow
@settings(max_examples=8, deadline=None)
@given(seed=st.integers(0, 2 ** 32))
def test_harness_properties_any_seed(seed: int) -> None:
    play_rounds(GAME, GAME.rules({}), legal_bets, seed=seed, rounds=25, void_chance=15, deck_per_round=True)

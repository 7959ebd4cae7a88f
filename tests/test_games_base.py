"""The shared game contract: payout ratios and rounding, event JSON round trips, rules loading errors, the registry."""

from __future__ import annotations

from dataclasses import dataclass, field
from types import MappingProxyType
from typing import ClassVar

import pytest
from hypothesis import given
from hypothesis import strategies as st

from controller.cards import from_index
from controller.games import game_names, get_game
from controller.games.base import (
    BoxResult, CardDealt, Decision, Event, OpenBets, Payout, PlaceBet, Rounding, RulesBase, RulesError,
    Settlement, VoidRound, event_from_json, parse_spot_actor, rules_from_mapping, spot_actor,
)


@pytest.mark.parametrize("text, win, per", [("3:2", 3, 2), ("6:5", 6, 5), ("8", 8, 1), (8, 8, 1), ("8 to 1", 8, 1),
                                            (" 1 : 1 ", 1, 1)])
def test_payout_parse(text: object, win: int, per: int) -> None:
    assert Payout.parse(text) == Payout(win, per)  # type: ignore[arg-type]


@pytest.mark.parametrize("bad", ["", "3:", "a:b", "1:2:3", "-1:1", "3:0", 1.5, None, True])
def test_payout_rejects(bad: object) -> None:
    with pytest.raises(ValueError):
        Payout.parse(bad)  # type: ignore[arg-type]


def test_payout_rounding() -> None:
    assert Payout(3, 2).on(10) == 15
    assert Payout(3, 2).on(5) == 7                      # 7.5 paid down: the house keeps the half credit
    assert Payout(3, 2).on(5, Rounding.HALF_UP) == 8
    assert Payout(6, 5).on(12) == 14
    assert Rounding.UP.divide(15 * 5, 100) == 1          # 5% of 15 = 0.75 commission, rounded up
    assert Rounding.DOWN.divide(15 * 5, 100) == 0
    assert Rounding.HALF_UP.divide(50, 100) == 1 and Rounding.HALF_UP.divide(49, 100) == 0
    with pytest.raises(ValueError):
        Rounding.DOWN.divide(-1, 2)


events = st.one_of(
    st.builds(OpenBets),
    st.builds(PlaceBet, spot=st.integers(1, 7), box=st.sampled_from(["main", "ante", "pair_plus"]),
              amount=st.integers(1, 10 ** 9)),
    st.builds(CardDealt, card=st.integers(0, 52).map(from_index), source=st.sampled_from(["shoe", "camera"]),
              target=st.none() | st.just("dealer")),
    st.builds(Decision, actor=st.integers(1, 7).map(spot_actor), action=st.sampled_from(["hit", "stand"]),
              amount=st.integers(0, 100), hand=st.integers(0, 3)),
    st.builds(VoidRound, reason=st.text(max_size=40)),
)


@given(events)
def test_events_round_trip_through_json(event: Event) -> None:
    import json

    assert event_from_json(json.loads(json.dumps(event.to_json()))) == event


@pytest.mark.parametrize("data, message", [
    ({}, "kind"), ({"kind": "nope"}, "unknown event kind"), ({"kind": "place_bet", "spot": 1, "box": "main"}, "amount"),
    ({"kind": "place_bet", "spot": "1", "box": "main", "amount": 5}, "whole number"),
    ({"kind": "place_bet", "spot": 1, "box": "main", "amount": 5, "extra": 1}, "unknown field"),
    ({"kind": "card_dealt", "card": "ZZ"}, "not a card"),
    ({"kind": "place_bet", "spot": True, "box": "main", "amount": 5}, "whole number"),
    ("place_bet", "kind"),
])
def test_malformed_events_are_refused_clearly(data: object, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        event_from_json(data)  # type: ignore[arg-type]


def test_event_kinds_are_unique() -> None:
    with pytest.raises(TypeError, match="already taken"):
        @dataclass(frozen=True)
        class Clash(Event):
            KIND: ClassVar[str] = "place_bet"


@dataclass(frozen=True)
class ToyRules(RulesBase):
    decks: int = 6
    blackjack_pays: Payout = Payout(3, 2)
    rounding: Rounding = Rounding.DOWN
    surrender: bool = False
    paytable: dict[str, Payout] = field(default_factory=lambda: MappingProxyType({"pair": Payout(1)}))

    def validate(self) -> None:
        if not 1 <= self.decks <= 8:
            raise RulesError(f"rules.decks: 1 to 8 decks, got {self.decks}")


def test_rules_defaults_and_overrides() -> None:
    assert rules_from_mapping(ToyRules, {}) == ToyRules()
    r = rules_from_mapping(ToyRules, {"decks": 8, "blackjack_pays": "6:5", "rounding": "half_up",
                                      "paytable": {"pair": "1:1", "flush": 4}})
    assert r.decks == 8 and r.blackjack_pays == Payout(6, 5) and r.rounding is Rounding.HALF_UP
    assert dict(r.paytable) == {"pair": Payout(1), "flush": Payout(4)}
    assert r.to_json()["paytable"] == {"pair": "1:1", "flush": "4:1"}


@pytest.mark.parametrize("data, message", [
    ({"deks": 6}, "unknown key.*deks.*known: blackjack_pays, decks"),
    ({"decks": "six"}, "rules.decks: expected a whole number"),
    ({"decks": 6.0}, "rules.decks"),
    ({"decks": 9}, "1 to 8 decks"),
    ({"blackjack_pays": "3-2"}, "rules.blackjack_pays"),
    ({"surrender": "yes"}, "rules.surrender: expected true or false"),
    ({"rounding": "sideways"}, "rules.rounding"),
    ({"paytable": {"pair": "x"}}, "rules.paytable.pair"),
])
def test_rules_errors_name_the_key(data: dict, message: str) -> None:
    with pytest.raises(RulesError, match=message):
        rules_from_mapping(ToyRules, data)


def test_settlement_arithmetic() -> None:
    s = Settlement((
        BoxResult(1, "main", 10, "blackjack", 15, 0, 25, "blackjack 3:2"),
        BoxResult(2, "main", 10, "lose", 0, 0, 0, "dealer 20 beats 18"),
        BoxResult(3, "banker", 20, "win", 20, 1, 39, "banker 1:1 less 5%"),
    ))
    assert (s.stakes, s.returned, s.commission, s.house_win) == (40, 64, 1, -24)
    assert [r.net for r in s.results] == [15, -10, 19]
    with pytest.raises(ValueError, match="non-negative"):
        BoxResult(1, "main", 10, "win", -1, 0, 9, "x")


def test_settlement_carries_open_bets_a_pot_and_a_player_bank() -> None:
    plain = Settlement((BoxResult(1, "main", 10, "lose", 0, 0, 0, "x"),))
    assert plain.json() == {"results": [_encode_result(plain.results[0])], "stakes": 10, "returned": 0,
                            "commission": 0, "house_win": 10}
    pot = Settlement((BoxResult(1, "ante", 1, "ante", 0, 0, 0, "to the pot"),
                      BoxResult(1, "bet", 4, "win", 4, 0, 8, "1:1 from the pot")), pot_in=9, pot_out=6)
    assert (pot.stakes, pot.returned, pot.house_win) == (5, 8, 0)          # the pot paid, not the house
    assert pot.json()["pot_in"] == 9 and "carried_in" not in pot.json()
    assert Settlement((), carried_in=5, carried_out=5, banker=3).json()["banker"] == 3
    with pytest.raises(ValueError, match="pot_out"):
        Settlement((), pot_out=-1)


def _encode_result(r: BoxResult) -> dict:
    return {"spot": r.spot, "box": r.box, "stake": r.stake, "outcome": r.outcome, "paid": r.paid,
            "commission": r.commission, "returned": r.returned, "line": r.line}


def test_spot_actor() -> None:
    assert spot_actor(3) == "spot:3" and parse_spot_actor("spot:3") == 3
    assert parse_spot_actor("dealer") is None and parse_spot_actor("spot:x") is None


def test_registry_refuses_unknown_games() -> None:
    with pytest.raises(ValueError, match="unknown game"):
        get_game("roulette")
    with pytest.raises(ValueError, match="unknown game"):
        get_game("base")
    assert "base" not in game_names()


def test_registry_lists_only_games() -> None:
    names = game_names()
    assert "bets" not in names and not any(n.startswith("-") for n in names)
    for name in names:
        assert get_game(name).name == name

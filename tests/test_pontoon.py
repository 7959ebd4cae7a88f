"""Pontoon: the burn, the deal with face-down cards, naturals paid and collected double, ties to the dealer, the
five-card charlie and its doubling, three sevens and 8-7-6, the dealer's free draw, splits and doubles with a hidden
card, the bank passing to a natural, the reshuffle at the burned card, hidden cards off the screens, random play."""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from controller.cards import Composition, parse_cards
from controller.games._shoe import ShoeState
from controller.games.base import (
    CardDealt, CardPlaced, CardsRevealed, CloseBets, Decision, Event, IllegalEvent, NewShoe, OpenBets, PlaceBet,
    RulesError,
    Settle, StakeChanged, VoidRound,
)
from controller.games.blackjack import Hand
from controller.games.chemin_de_fer import BankerChanged
from controller.games.pontoon import GAME, Phase, State, bonus, legal_bets, playable
from controller.rng import Rng
from controller.tablestate import new_state, step
from controller.views import leaks, project
from tests.game_harness import play_rounds
from tests.game_steps import deal, results, run, settlement


def dealt(cards: str, bets: dict[int, int] | None = None, rules: dict[str, Any] | None = None,
          burn: str = "2C") -> tuple[State, list[Any]]:
    """A fresh pack (burning `burn`), bets against spot 1's bank, and the deal: `cards` go round twice, first face
    down then face up, players from the dealer's left (spot 2, 3, ...) and the dealer last."""
    r = GAME.rules({"spots": 4, **(rules or {})})
    bets = bets or {2: 2}
    state, _ = run(GAME, GAME.new_table(r), [NewShoe(1)] + deal(burn) + [OpenBets()]
                   + [PlaceBet(s, "main", a) for s, a in bets.items()] + [CloseBets()])
    return run(GAME, state, deal(cards))


def act(state: State, *actions: str, spot: int = 2, hand: int = 0) -> State:
    return run(GAME, state, [Decision(f"spot:{spot}", a, 0, hand) for a in actions])[0]


def dealer(state: State, *actions: str) -> State:
    return run(GAME, state, [Decision(f"spot:{state.banker}", a) for a in actions])[0]


def decide(state: Any, exp: Any, rng: Rng) -> Event:
    actions = playable(state) if state.phase is Phase.PLAY else exp.actions
    return Decision(exp.actor, rng.choice(actions), 0, exp.hand)


def settle(state: State) -> dict[tuple[int, str], tuple[str, int, str]]:
    _, effects = run(GAME, state, [Settle()])
    return results(effects)


# ---------------------------------------------------------------------------------------------------
# The deal


def test_the_burn_card_is_shown_and_put_at_the_bottom() -> None:
    state, effects = run(GAME, GAME.new_table(GAME.rules({})), [NewShoe(1)] + deal("9D"))
    assert effects == [CardPlaced(parse_cards("9D")[0], "burn", True)]
    assert GAME.snapshot(state)["burned"] == {"card": "9D", "up": True} and state.shoe.remaining == 51
    assert GAME.expected_next(state).phase == "idle"


def test_the_deal_is_one_card_down_then_one_up_and_nothing_hidden_reaches_a_screen() -> None:
    state, effects = dealt("9S 5H 7C KD 6D 8H", {2: 2, 3: 1})
    placed = [(e.to, e.up) for e in effects if isinstance(e, CardPlaced)]
    assert placed == [("spot:2", False), ("spot:3", False), ("dealer", False),
                      ("spot:2", True), ("spot:3", True), ("dealer", True)]
    exp = GAME.expected_next(state)
    assert exp.actor == "spot:2" and exp.text == "spot 2: hit, stand, double, split"
    view = project({"game": GAME.snapshot(state)}, "public")
    assert leaks(view) == []
    text = json.dumps(view)
    for hidden in ("9S", "5H", "7C"):
        assert hidden not in text
    assert '"total": null' in text and GAME.snapshot(state)["audit"]["hands"][0]["total"] == "19"


def test_the_banker_does_not_bet_against_his_own_bank() -> None:
    state, _ = run(GAME, GAME.new_table(GAME.rules({})), [NewShoe(1)] + deal("2C") + [OpenBets()])
    with pytest.raises(IllegalEvent, match="holds the bank"):
        GAME.apply(state, PlaceBet(1, "main", 2))


# ---------------------------------------------------------------------------------------------------
# Naturals


def test_a_dealers_natural_collects_double_and_a_natural_only_the_bet() -> None:
    state, effects = dealt("9S AH AC 5H KD KH", {2: 2, 3: 3})   # spot 2: 9 5; spot 3: A K; dealer: A K
    assert StakeChanged(2, "main", 4, 2) in effects                     # spot 2 puts a second bet down
    assert not any(isinstance(e, StakeChanged) and e.spot == 3 for e in effects)
    assert {e.to for e in effects if isinstance(e, CardsRevealed)} == {"dealer", "spot:2", "spot:3"}
    assert GAME.expected_next(state).phase == "settling"
    got = settle(state)
    assert got[(2, "main")] == ("lose", -4, "the dealer's natural collects 2 bets")
    assert got[(3, "main")] == ("lose", -3, "natural against the dealer's natural: collects 1 bet(s)")
    state, _ = dealt("9S AH AC 5H KD KH", {2: 2, 3: 3}, {"natural_against_natural_collects": 0})
    assert settle(state)[(3, "main")][:2] == ("push", 0)


def test_a_players_natural_is_paid_double_and_takes_the_bank() -> None:
    state, effects = dealt("AS 9H 8C KD KC 9D", {2: 2, 3: 2})       # spot 2 natural; spot 3 19; dealer 17
    assert CardsRevealed("spot:2", tuple(parse_cards("AS KD"))) in effects
    assert GAME.expected_next(state).actor == "spot:3"
    state = act(state, "stand", spot=3)
    state = dealer(state, "stand")
    _, effects = run(GAME, state, [Settle()])
    got = results(effects)
    assert got[(2, "main")] == ("natural", 4, "natural 2:1") and got[(3, "main")][:2] == ("win", 2)
    assert BankerChanged(2, "spot 2 was dealt a natural against a dealer without one") in effects
    assert settlement(effects).banker == 1 and settlement(effects).house_win == -6


def test_meters_credit_the_player_bank_not_the_house() -> None:
    table = new_state("t", GAME, GAME.rules({"spots": 4}))
    events = [NewShoe(1), *deal("2C"), OpenBets(), PlaceBet(2, "main", 2), PlaceBet(3, "main", 2), CloseBets(),
              *deal("AS 9H 8C KD KC 9D"), Decision("spot:3", "stand"), Decision("spot:1", "stand"), Settle()]
    for event in events:
        table, _ = step(table, {"kind": "game", "event": event.to_json()})
    m = table.meters
    assert (m.handle, m.returned, m.banked, m.house_win) == (4, 10, -6, 0)


def test_the_first_natural_from_the_dealers_left_takes_the_bank() -> None:
    state, _ = dealt("AS AH 8C KD QC 9D", {2: 2, 3: 2}, {"first_banker": 1})
    _, effects = run(GAME, state, [Settle()])
    assert [e.spot for e in effects if isinstance(e, BankerChanged)] == [2]


# ---------------------------------------------------------------------------------------------------
# Play and settlement


@pytest.mark.parametrize("hits, dealer_cards, line, net", [
    ("2H 3D 2S", "", "five-card charlie 2:1", 4),                       # 4+5+2+3+2 = 16 in five cards
    ("2H 3D 2S AD", "", "6-card charlie 4:1", 8),
    ("2H 3D 2S AD AC", "", "7-card charlie 8:1", 16),
])
def test_a_five_card_charlie_pays_double_and_each_card_more_doubles_again(hits: str, dealer_cards: str, line: str,
                                                                         net: int) -> None:
    state, _ = dealt("4S 9H 5C KD", {2: 2})                  # spot 2: 4 5; dealer: 9 K = 19
    for card in parse_cards(hits):
        state = act(state, "hit")
        state, _ = run(GAME, state, [CardDealt(card)])
    state = act(state, "stand")
    assert GAME.expected_next(state).phase == "settling"     # a bonus hand does not play against the dealer
    assert settle(state)[(2, "main")] == ("bonus", net, line)


def test_a_five_card_charlie_beats_a_dealer_21() -> None:
    state, _ = dealt("4S 2H 5C KD 5D 9D", {2: 2, 3: 2})        # spot 2: 4 5, spot 3: 2 5 ... dealer 5 9 (hidden 5)
    state = act(state, "hit")
    state, _ = run(GAME, state, deal("2D"))
    state = act(state, "hit")
    state, _ = run(GAME, state, deal("3D"))
    state = act(state, "hit")
    state, _ = run(GAME, state, deal("AH"))                    # 4 5 2 3 A = 15 in five cards
    state = act(state, "stand")
    state = act(state, "stand", spot=3)
    state = dealer(state, "hit")
    state, _ = run(GAME, state, deal("7H"))                    # dealer 5 9 7 = 21
    state = dealer(state, "stand")
    got = settle(state)
    assert got[(2, "main")] == ("bonus", 4, "five-card charlie 2:1")
    assert got[(3, "main")][:2] == ("lose", -2)


@pytest.mark.parametrize("first, second, hit, line, net", [
    ("7S", "7H", "7D", "three sevens 3:1", 6), ("8S", "7H", "6D", "8-7-6 2:1", 4), ("6S", "8H", "7D", "8-7-6 2:1", 4),
])
def test_three_sevens_and_8_7_6(first: str, second: str, hit: str, line: str, net: int) -> None:
    state, _ = dealt(f"{first} 9C {second} KD", {2: 2})
    state = act(state, "hit")
    state, _ = run(GAME, state, deal(hit))
    state = act(state, "stand")
    assert settle(state)[(2, "main")] == ("bonus", net, line)


def test_ties_pay_the_dealer_and_the_dealer_draws_as_he_likes() -> None:
    state, _ = dealt("KS 8C 3H 9D 8H 9C", {2: 2, 3: 2})       # spot 2: K 9 = 19; spot 3: 8 8 = 16; dealer 3 9 = 12
    state = act(state, "stand")
    state = act(state, "stand", spot=3)
    exp = GAME.expected_next(state)
    assert (exp.actor, exp.actions) == ("spot:1", ("hit", "stand")) and "with 12" in exp.text
    state = dealer(state, "hit")
    state, _ = run(GAME, state, deal("7C"))                   # dealer 19: free to stand or hit again
    state = dealer(state, "stand")
    got = settle(state)
    assert got[(2, "main")] == ("lose", -2, "ties pay the dealer: 19 each")
    assert got[(3, "main")] == ("lose", -2, "lose, 19 beats 16")


def test_a_dealer_bust_pays_those_who_stood_and_a_player_bust_shows_and_loses() -> None:
    state, _ = dealt("KS 8C 6H 6D 8H KC", {2: 2, 3: 2})       # spot 2: K 6; spot 3: 8 8; dealer 6 K = 16
    state = act(state, "hit")
    state, effects = run(GAME, state, deal("QH"))             # spot 2 busts and turns his card up
    assert CardsRevealed("spot:2", tuple(parse_cards("KS 6D QH"))) in effects
    state = act(state, "stand", spot=3)
    state = dealer(state, "hit")
    state, _ = run(GAME, state, deal("9C"))
    assert GAME.expected_next(state).phase == "settling"
    got = settle(state)
    assert got[(2, "main")] == ("lose", -2, "bust with 26") and got[(3, "main")] == (
        "win", 2, "win 1:1, the dealer busts with 25")


def test_a_double_is_allowed_on_9_to_11_and_a_hidden_card_is_not_told() -> None:
    state, _ = dealt("5S 9C 4H KD", {2: 2})                   # 5 4 = 9
    assert "double" in GAME.expected_next(state).actions
    state, effects = run(GAME, state, [Decision("spot:2", "double")])
    assert effects == [StakeChanged(2, "main", 4, 2)]
    state, _ = dealt("8S 9C 4H KD", {2: 2})                   # 8 4 = 12: offered, refused when asked
    assert "double" in GAME.expected_next(state).actions and "double" not in playable(state)
    with pytest.raises(IllegalEvent, match="^double is not allowed with this hand$"):
        GAME.apply(state, Decision("spot:2", "double"))


def test_a_split_turns_the_hidden_card_up() -> None:
    state, _ = dealt("8S 9C 8H KD", {2: 2})
    state, effects = run(GAME, state, [Decision("spot:2", "split")])
    assert StakeChanged(2, "split:1", 2, 2) in effects
    assert CardsRevealed("spot:2", tuple(parse_cards("8S 8H"))) in effects
    assert GAME.expected_next(state).card_to == "spot:2/hand:0"
    assert all(c["up"] for h in GAME.snapshot(state)["spots"][0]["hands"] for c in h["cards"])
    state, _ = dealt("8S 9C 7H KD", {2: 2})
    with pytest.raises(IllegalEvent, match="not allowed with this hand"):
        GAME.apply(state, Decision("spot:2", "split"))


# ---------------------------------------------------------------------------------------------------
# The pack, the bank, refusals


def test_the_burned_card_reached_mid_deal_means_a_new_shuffle_and_burn() -> None:
    state, _ = dealt("4S 9H 5C KD", {2: 2})
    state = replace(state, shoe=ShoeState(1, 99, 51, Composition((0,) * 53)))      # the pack is used up
    state = act(state, "hit")
    exp = GAME.expected_next(state)
    assert exp.phase == "shuffling" and "burned card is reached" in exp.text
    state, _ = run(GAME, state, [NewShoe(1)] + deal("QC"))
    assert state.shoe.remaining == 52 - 4 - 1 and GAME.expected_next(state).card_to == "spot:2"
    with pytest.raises(IllegalEvent, match="4S cannot come"):
        GAME.apply(state, CardDealt(parse_cards("4S")[0]))


def test_the_banker_may_pass_the_bank() -> None:
    state, _ = run(GAME, GAME.new_table(GAME.rules({"spots": 3})), [NewShoe(1)] + deal("2C"))
    with pytest.raises(IllegalEvent, match="only the banker"):
        GAME.apply(state, Decision("spot:2", "pass"))
    state, effects = run(GAME, state, [Decision("spot:1", "pass"), Decision("dealer", "pass")])
    assert [e.spot for e in effects if isinstance(e, BankerChanged)] == [2, 3] and state.banker == 3


def test_void_gives_back_every_stake_including_a_double() -> None:
    state, _ = dealt("5S 9C 4H KD", {2: 2})
    state, _ = run(GAME, state, [Decision("spot:2", "double")])
    state, effects = run(GAME, state, [VoidRound("misdeal")])
    assert effects[-1].returned == 4 and GAME.expected_next(state).phase == "idle"


@pytest.mark.parametrize("event, reason", [
    (Decision("spot:3", "hit"), "spot:2's"), (Decision("spot:2", "hit", 5), "no amount"),
    (Decision("spot:2", "surrender"), "is not allowed now"), (Settle(), "cannot settle"),
    (NewShoe(1), "between rounds"),
    (Decision("spot:1", "pass"), "spot:2's"),
])
def test_refusals_say_why_and_change_nothing(event: Event, reason: str) -> None:
    state, _ = dealt("9S 5H 7C KD 6D 8H", {2: 2, 3: 1})
    before = repr(state)
    with pytest.raises(IllegalEvent, match=reason):
        GAME.apply(state, event)
    assert repr(state) == before


@pytest.mark.parametrize("data, message", [({"decks": 2}, "rules.decks"), ({"late_surrender": True}, "no surrender"),
                                           ({"first_banker": 9}, "first_banker"), ({"spots": 1}, "rules.spots")])
def test_rules_errors_name_the_key(data: dict[str, Any], message: str) -> None:
    with pytest.raises(RulesError, match=message):
        GAME.rules(data)


def test_bonus_lines() -> None:
    r = GAME.rules({})
    assert bonus(r, Hand("main", tuple(parse_cards("2S 3S 4S 5S 7S")), 1, done="stood"))[1] == "five-card charlie"
    assert bonus(r, Hand("main", tuple(parse_cards("2S 3S 4S 5S")), 1, done="stood")) is None
    assert bonus(r, Hand("main", tuple(parse_cards("7S 7C 7D")), 1, done="stood"))[1] == "three sevens"
    assert bonus(r, Hand("main", tuple(parse_cards("7S 7C 6D")), 1, done="stood")) is None
    assert bonus(r, Hand("main", tuple(parse_cards("KS 3S 4S 5S 7S")), 1, done="bust")) is None


# ---------------------------------------------------------------------------------------------------
# Random play


@pytest.mark.parametrize("rules", [{}, {"spots": 10, "double": "any", "max_hands": 4, "resplit_aces": True,
                                        "double_after_split": True, "natural_against_natural_collects": 0}])
@pytest.mark.slow
def test_random_play_conserves_money_refuses_cleanly_and_replays(rules: dict[str, Any]) -> None:
    state = play_rounds(GAME, GAME.rules(rules), legal_bets, seed=12, rounds=250, void_chance=30, fresh_shoes=True,
                        decide=decide, bets_from_state=True)
    assert state.round >= 250


@settings(max_examples=10)
@given(seed=st.integers(0, 2 ** 32))
def test_random_play_property(seed: int) -> None:
    play_rounds(GAME, GAME.rules({"spots": 3}), legal_bets, seed=seed, rounds=25, void_chance=15, fresh_shoes=True,
                decide=decide, bets_from_state=True)

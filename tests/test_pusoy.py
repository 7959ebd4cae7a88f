"""Pusoy: the four participants and the deal, hand values and fouls, single and double wins and losses, ties to the dealer, surrender and royalties, refusals that change nothing, harness properties."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from controller.cards import deck, format_cards, parse_cards
from controller.games.base import (
    CardDealt, CardsRevealed, CloseBets, Decision, Event, IllegalEvent, OpenBets, PlaceBet, RoundSettled, RulesError,
    Settle, StakeChanged,
)
from controller.games.pusoy import GAME, State, front_value, five_value, is_foul, legal_bets, royalty, simple_setting
from controller.rng import Rng, SeededRng
from tests.game_harness import play_rounds
from tests.poker_tables import deal_by_position

DEALER = "9S 9H 9D 4C 4D/KS KH 7C 6D 2S/QH 8C 3S"     # full house, pair of kings, queen high


def random_decide(state: State, exp: Any, rng: Rng) -> Event:
    """A random setting (often out of order), the simple way, or a variant when offered and possible."""
    hand = state.hand(exp.actor)
    roll = rng.randbelow(8)
    if roll == 0 and "surrender" in exp.actions:
        return Decision(exp.actor, "surrender")
    if roll == 1 and "royalty" in exp.actions and royalty(hand):
        return Decision(exp.actor, "royalty")
    if roll < 4:
        return Decision(exp.actor, "house_way")
    cards = rng.shuffled(list(hand))
    return Decision(exp.actor, f"set:{format_cards(cards[:5])}/{format_cards(cards[5:10])}/{format_cards(cards[10:])}")


def cards_of(setting: str) -> str:
    return setting.replace("/", " ")


def play(players: dict[int, str], dealer: str = DEALER, rules: dict | None = None, stake: int = 10,
         order: list[int] | None = None) -> tuple[dict, list]:
    """One round: the named spots' settings (or 'surrender'/'royalty:<13 cards>'), the others' cards from the rest
    of the pack set the simple way; the dealer's setting (or 'surrender:<13 cards>')."""
    state = GAME.new_table(GAME.rules(rules or {}))
    spots = range(1, state.rules.spots + 1)
    hands: dict[str, str] = {}
    actions: dict[str, str] = {}
    for spot, what in players.items():
        kind, _, cards = what.partition(":") if what.startswith(("surrender:", "royalty:")) else ("set", "", what)
        hands[f"spot:{spot}"] = cards_of(cards)
        actions[f"spot:{spot}"] = "set:" + cards if kind == "set" else kind
    kind, _, cards = dealer.partition(":") if dealer.startswith("surrender:") else ("set", "", dealer)
    hands["dealer"] = cards_of(cards)
    actions["dealer"] = "set:" + cards if kind == "set" else kind
    used = {c for text in hands.values() for c in parse_cards(text)}
    rest = [c for c in deck() if c not in used]
    for spot in spots:
        if f"spot:{spot}" not in hands:
            hands[f"spot:{spot}"] = format_cards(rest[:13])
            actions[f"spot:{spot}"] = "house_way"
            rest = rest[13:]
    effects = []
    for event in [OpenBets(), *[PlaceBet(s, "main", stake) for s in spots], CloseBets()]:
        state, eff = GAME.apply(state, event)
        effects += eff
    state, eff = deal_by_position(GAME, state, {to: parse_cards(text) for to, text in hands.items()})
    effects += eff
    for to in [f"spot:{s}" for s in (order or spots)] + ["dealer"]:
        state, eff = GAME.apply(state, Decision(to, actions[to]))
        effects += eff
    state, eff = GAME.apply(state, Settle())
    effects += eff
    settlement = next(e for e in effects if isinstance(e, RoundSettled)).settlement
    return {(r.spot, r.box): r for r in settlement.results}, effects


# ---------------------------------------------------------------------------------------------------
# Hands


def test_hand_values() -> None:
    assert five_value(parse_cards("2S 3H 4D 5C AS")) < five_value(parse_cards("2S 3H 4D 5C 6S"))  # A-5 lowest
    assert front_value(parse_cards("AS AH AD")) > front_value(parse_cards("KS KH AD")) > front_value(
        parse_cards("AS KH QD")) > front_value(parse_cards("4S 3H 2D"))
    assert front_value(parse_cards("5H 6H 7H")) == front_value(parse_cards("7S 6D 5C"))   # no straights, flushes
    # a middle pair with kickers outranks the same pair in front
    assert five_value(parse_cards("7S 7D AC 3H 2S")) > front_value(parse_cards("7H 7C AD"))


@pytest.mark.parametrize("setting, foul", [
    ("AS AH AD 2C 2D/KS QS JS TS 8S/7H 5C 3D", False),
    ("KS QS JS TS 8S/AS AH AD 2C 2D/7H 5C 3D", True),      # the back below the middle
    ("AS AH AD 2C 2D/KS QD 8C 6H 4S/7H 7C 3D", True),      # the middle below the front
    ("9S 8D 7C 6H 4S/9H 8C 7D 6C 4D/5D 3C 2S", True),      # an equal back and middle are not in order
])
def test_fouls(setting: str, foul: bool) -> None:
    assert is_foul([parse_cards(p) for p in setting.split("/")]) is foul


@pytest.mark.parametrize("hand, found", [
    ("2S 3S 4S 5S 6S 9H 9D KC KD 7H 8C JD QH", "straight flush"),
    ("7S 7H 7D 7C 2S 9H 3D KC QD 5H 8C JD AH", "four of a kind"),
    ("2S 2H 4D 4C 6S 6H 8D 8C TS TH QD QC AH", "six pairs"),
    ("2S 2H 4D 4C 6S 6H 8D 8C TS TH QD KC AH", None),
])
def test_royalties(hand: str, found: str | None) -> None:
    assert royalty(parse_cards(hand)) == found


@settings(max_examples=150)
@given(st.permutations(list(deck())).map(lambda cards: cards[:13]))
def test_the_simple_way_is_always_in_order(cards: list) -> None:
    hands = simple_setting(cards)
    assert [len(h) for h in hands] == [5, 5, 3] and set().union(*hands) == set(cards)
    assert not is_foul(hands)


# ---------------------------------------------------------------------------------------------------
# Settlement


@pytest.mark.parametrize("player, outcome, net, words", [
    # all three won: double ("pusoy")
    ("TS TH TD TC 2C/AS AH 5C 5D 3C/AD AC 2H", "win", 20, "all three hands won"),
    # two of three: single
    ("JS JH JD 6C 6H/QS QD 8S 8D 5S/JC 7S 3D", "win", 10, "back and middle won"),
    # one of three: the bet is lost
    ("TS TH TD TC 2C/AS KD 8D 5C 3C/JC 7S 3D", "lose", -10, "only the back won"),
    # none: double the bet is lost
    ("8S 8D 8H 2C 2D/AS KD JC 5C 3C/TC 7S 6S", "lose", -20, "all three hands lost"),
    # exact ties go to the dealer: the back wins, the middle and front tie
    ("TS TH TD TC 2C/KC KD 7H 6H 2H/QC 8D 3C", "lose", -10, "only the back won"),
    # out of order: double loss whatever the hands would have won
    ("AS KD JC 5C 3C/8S 8D 8H 2C 2D/TC 7S 6S", "lose", -20, "foul"),
])
def test_settlement(player: str, outcome: str, net: int, words: str) -> None:
    rows, effects = play({1: player})
    got = [r for (spot, _), r in rows.items() if spot == 1]
    assert got[0].outcome == outcome and words in got[0].line
    assert sum(r.net for r in got) == net
    if net == -20:
        # the second unit goes on the layout as the dealer collects it
        assert StakeChanged(1, "pusoy", 10, 10) in effects and rows[(1, "pusoy")].stake == 10


IN_ORDER = "8S 8D 8H 2C 2D/AS KD JC 5C 3C/TC 7S 6S"      # loses all three to DEALER
FOULED = "AH QD JD 5D 3D/TS TH TD 6H 6C/QC 7D 5S"        # ace high behind a full house


def test_a_fouled_dealer_pays_double_to_every_hand_in_order() -> None:
    rows, _ = play({1: IN_ORDER, 2: FOULED}, dealer="KS KH 7C 6D 2S/9S 9H 9D 4C 4D/QH 8C 3S")
    assert (rows[(1, "main")].outcome, rows[(1, "main")].net) == ("win", 20)
    assert "out of order" in rows[(1, "main")].line
    assert rows[(2, "main")].outcome == "lose" and rows[(2, "pusoy")].stake == 10   # his own foul counts first


def test_every_hand_is_turned_up_after_the_dealer_sets() -> None:
    _, effects = play({1: "JS JH JD 6C 6H/QS QD 8S 8D 5S/JC 7S 3D"})
    shown = [e.to for e in effects if isinstance(e, CardsRevealed)]
    assert shown == ["spot:1", "spot:2", "spot:3", "dealer"]


# ---------------------------------------------------------------------------------------------------
# Variants


VARIANTS = {"surrender": True, "royalties": True}


def test_a_player_surrenders_the_single_bet_unseen() -> None:
    rows, effects = play({1: "surrender:" + cards_of(IN_ORDER)}, rules=VARIANTS)
    assert (rows[(1, "main")].outcome, rows[(1, "main")].net) == ("surrender", -10)
    assert "spot:1" not in [e.to for e in effects if isinstance(e, CardsRevealed)]


def test_the_dealer_surrenders_to_every_player_still_in() -> None:
    rows, _ = play({1: "surrender:" + cards_of(IN_ORDER), 2: "TS TH TD 6H 6C/AH QD JD 5D 3D/QC 7D 5S",
                    3: "QS JS 4S 7H 2H/AD AC KC 9C 5H/JH 4H 3H"},
                   dealer="surrender:" + cards_of(DEALER), rules=VARIANTS)
    assert (rows[(1, "main")].outcome, rows[(1, "main")].net) == ("surrender", -10)
    assert (rows[(2, "main")].outcome, rows[(2, "main")].net) == ("win", 10)
    assert "the dealer surrenders" in rows[(2, "main")].line
    assert rows[(3, "main")].net + rows[(3, "pusoy")].net == -20       # a foul loses double all the same


def test_royalties_win_single_at_once() -> None:
    rows, effects = play({1: "royalty:" + "5S 5H 5D 5C AS AH KC QC JC TC TH 2H 3H"}, rules=VARIANTS)
    assert (rows[(1, "main")].outcome, rows[(1, "main")].net) == ("win", 10)
    assert "four of a kind" in rows[(1, "main")].line
    assert effects.index(next(e for e in effects if isinstance(e, CardsRevealed) and e.to == "spot:1")) < \
        effects.index(next(e for e in effects if isinstance(e, CardsRevealed) and e.to == "dealer"))


def test_royalties_need_a_royal_hand_and_the_rule() -> None:
    state = _dealt(VARIANTS)
    with pytest.raises(IllegalEvent, match="holds no royalty"):
        GAME.apply(state, Decision("spot:1", "royalty"))
    state = _dealt({})
    for action in ("royalty", "surrender"):
        with pytest.raises(IllegalEvent, match="may set or house_way"):
            GAME.apply(state, Decision("spot:1", action))


def _dealt(rules: dict) -> State:
    state = GAME.new_table(GAME.rules(rules))
    for event in [OpenBets(), *[PlaceBet(s, "main", 10) for s in (1, 2, 3)], CloseBets()]:
        state, _ = GAME.apply(state, event)
    for card in SeededRng(2).shuffled(list(deck())):
        state, _ = GAME.apply(state, CardDealt(card))
    assert royalty(state.hand("spot:1")) is None
    return state


# ---------------------------------------------------------------------------------------------------
# The table, the deal and refusals


def test_casino_play_needs_all_four_participants() -> None:
    state = GAME.new_table(GAME.rules({}))
    for event in [OpenBets(), PlaceBet(1, "main", 10), PlaceBet(2, "main", 10)]:
        state, _ = GAME.apply(state, event)
    with pytest.raises(IllegalEvent, match="needs all 4 participants: no bet on spot 3"):
        GAME.apply(state, CloseBets())
    with pytest.raises(IllegalEvent, match="no spot 4"):
        GAME.apply(state, PlaceBet(4, "main", 10))


@pytest.mark.parametrize("participants, seats", [(2, ["spot:1", "dealer"]), (3, ["spot:1", "spot:2", "dealer"]),
                                                 (4, ["spot:1", "spot:2", "spot:3", "dealer"])])
def test_home_games_of_two_or_three_deal_thirteen_each(participants: int, seats: list[str]) -> None:
    state = GAME.new_table(GAME.rules({"participants": participants}))
    for event in [OpenBets(), *[PlaceBet(s, "main", 10) for s in range(1, participants)], CloseBets()]:
        state, _ = GAME.apply(state, event)
    targets = []
    for card in deck()[:13 * participants]:
        targets.append(GAME.expected_next(state).card_to)
        state, _ = GAME.apply(state, CardDealt(card))
    assert targets == seats * 13               # one at a time from the dealer's left, the dealer last
    assert GAME.expected_next(state).actor == "spot:1"
    with pytest.raises(RulesError, match="participants"):
        GAME.rules({"participants": 5})


@pytest.mark.parametrize("event, reason", [
    (Decision("dealer", "house_way"), "the dealer sets last"),
    (Decision("spot:1", "set:AS"), "back/middle/front"),
    (Decision("spot:1", "set:AS KS QS JS TS/AH KH QH JH TH/AD KD QD"), "own thirteen cards"),
    (Decision("spot:4", "house_way"), "has no hand"),
    (Decision("spot:1", "fold"), "may set or house_way"),
    (Decision("spot:1", "house_way", amount=3), "takes no amount"),
    (CardDealt(parse_cards("2C")[0]), "no card expected"),
    (Settle(), "cannot settle"),
])
def test_refusals_change_nothing(event: Event, reason: str) -> None:
    state = _dealt({})
    before = repr(state)
    with pytest.raises(IllegalEvent, match=reason):
        GAME.apply(state, event)
    assert repr(state) == before


def test_setting_twice_is_refused() -> None:
    state = _dealt({})
    state, _ = GAME.apply(state, Decision("spot:2", "house_way"))
    with pytest.raises(IllegalEvent, match="already set"):
        GAME.apply(state, Decision("spot:2", "house_way"))


def test_hands_stay_hidden_until_turned_up() -> None:
    state = _dealt({})
    state, _ = GAME.apply(state, Decision("spot:1", "house_way"))
    snap = GAME.snapshot(state)
    seat = snap["hands"][0]
    assert all(not c["up"] for c in seat["cards"] + seat["back"]) and "foul" not in seat
    assert set(snap["audit"]["hands"]["spot:1"]) == {"back_hand", "middle_hand", "front_hand", "foul"}


def test_turned_up_hands_show_their_names_beside_their_cards() -> None:
    state = _dealt({})
    for to in ("spot:1", "spot:2", "spot:3", "dealer"):
        state, _ = GAME.apply(state, Decision(to, "house_way"))
    seat = GAME.snapshot(state)["hands"][0]
    assert len(seat["back"]) == 5 and all(c["up"] for c in seat["back"]) and isinstance(seat["back_hand"], str)


@pytest.mark.parametrize("rules", [{}, VARIANTS, {"participants": 2, "deal": "hands"}, {"participants": 3}])
def test_money_is_conserved_and_refusals_change_nothing(rules: dict) -> None:
    play_rounds(GAME, GAME.rules(rules), legal_bets, seed=6, rounds=80, decide=random_decide, deck_per_round=True,
                void_chance=40)


@settings(max_examples=12, deadline=None)
@given(st.integers(0, 2**31 - 1), st.sampled_from([{}, {"surrender": True, "royalties": True}, {"participants": 2}]))
def test_any_seed_conserves_money(seed: int, rules: dict) -> None:
    """Hypothesis picks the seeds and the variant: stakes settled equal stakes placed, refusals change nothing."""
    play_rounds(GAME, GAME.rules(rules), legal_bets, seed=seed, rounds=3, decide=random_decide, deck_per_round=True,
                void_chance=20)

"""Big two: card and combination rankings with the seed's variants, the deal and the opening, passing and tricks, scoring and payments with the seed's examples, refusals that change nothing, harness properties."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from controller.cards import Card, deck, format_cards, parse_cards
from controller.games.base import (
    CardDealt, CardsRevealed, CloseBets, Decision, Event, IllegalEvent, OpenBets, PlaceBet, RoundSettled, RulesError,
    Settle, StakeChanged,
)
from controller.games.bets import Bets
from controller.games.big_two import GAME, Phase, Rules, State, beats, combo, legal_bets, legal_plays, points, settle
from controller.games.base import Placed
from controller.rng import Rng
from tests.game_harness import play_rounds


def rules(**kw: Any) -> Rules:
    return GAME.rules(kw)


def c(text: str, r: Rules | None = None) -> Any:
    made = combo(parse_cards(text), r or rules())
    assert made is not None, text
    return made


def random_decide(state: State, exp: Any, rng: Rng) -> Event:
    plays = legal_plays(state, state.turn)
    if "pass" in exp.actions and (not plays or rng.randbelow(4) == 0):
        return Decision(exp.actor, "pass")
    return Decision(exp.actor, "play:" + format_cards(plays[rng.randbelow(len(plays))]))


# ---------------------------------------------------------------------------------------------------
# Rankings


@pytest.mark.parametrize("low, high", [
    ("3D", "3C"), ("3C", "3H"), ("3H", "3S"), ("3S", "4D"), ("KS", "AD"), ("AS", "2D"), ("2H", "2S"),
    ("KS KH", "AD AC"),                                 # pairs by rank
    ("KH KD", "KS KC"),                                 # then by the higher suit (the seed's example)
    ("3D 3C 3H", "4D 4C 4H"), ("AS AH AD", "2D 2C 2H"),
    # five-card hands: straight < flush < full house < four of a kind + 1 < straight flush
    ("3D 4C 5H 6S 7D", "2C 5C 8C JC KC"), ("AS KS QS 9S 7S", "3D 3C 3H 4D 4C"),
    ("AD AC AH KD KC", "3D 3C 3H 3S 4D"), ("2D 2C 2H 2S AD", "3D 4D 5D 6D 7D"),
    # straights (hong kong, the seed's main text): 3-7 lowest ... 10-A < 2-6 < A-5
    ("3D 4C 5H 6S 7D", "4D 5C 6H 7S 8D"), ("TD JC QH KS AD", "2D 3C 4H 5S 6D"), ("2D 3C 4H 5S 6D", "AD 2C 3H 4S 5D"),
    ("9D TC JH QS KD", "TD JC QH KS AD"),
    ("3D 4C 5H 6S 7D", "3C 4D 5S 6H 7H"),               # equal straights: the suit of the biggest card
    # flushes: by the cards, high to low, then the suit
    ("3S 5S 7S 9S JS", "4D 5D 7D 9D JD"), ("4D 5D 7D 9D JD", "4C 5C 7C 9C JC"),
    ("AS KS QS JS 9S", "2D 4D 5D 6D 8D"),               # a 2 is the biggest card
    # full houses and fours by their set
    ("KD KC KH 2D 2C", "AD AC AH 3D 3C"), ("KD KC KH KS 2D", "AD AC AH AS 3D"),
    ("3D 4D 5D 6D 7D", "3S 4S 5S 6S 7S"), ("TD JD QD KD AD", "2S 3S 4S 5S 6S"),
])
def test_rankings(low: str, high: str) -> None:
    assert beats(c(high), c(low)) and not beats(c(low), c(high))


@pytest.mark.parametrize("text", ["3D 4C", "3D 3C 4H", "3D 4C 5H 6S", "3D 4C 5H 6S 8D", "JD QC KH AS 2D",
                                  "QD KC AH 2S 3D", "KD AC 2H 3S 4D", "3D 3C 3H 3S"])
def test_not_plays(text: str) -> None:
    assert combo(parse_cards(text), rules()) is None      # no wrapping straights but A-2-3-4-5 and 2-3-4-5-6


@pytest.mark.parametrize("variant, order", [
    ("hong_kong", ["3D 4C 5H 6S 7D", "TD JC QH KS AD", "2D 3C 4H 5S 6D", "AD 2C 3H 4S 5D"]),
    ("malaysian", ["3D 4C 5H 6S 7D", "TD JC QH KS AD", "AD 2C 3H 4S 5D", "2D 3C 4H 5S 6D"]),
    ("indonesian", ["3D 4C 5H 6S 7D", "TD JC QH KS AD", "JD QC KH AS 2D"]),
    ("ace_low", ["2D 3C 4H 5S 6D", "3D 4C 5H 6S 7D", "TD JC QH KS AD", "AD 2C 3H 4S 5D"]),
    ("ace_five_second", ["2D 3C 4H 5S 6D", "9D TC JH QS KD", "AD 2C 3H 4S 5D", "TD JC QH KS AD"]),
    ("vietnamese", ["3D 4C 5H 6S 7D", "TD JC QH KS AD"]),
])
def test_straight_orders_of_the_seed(variant: str, order: list[str]) -> None:
    r = rules(straights=variant)
    made = [c(text, r) for text in order]
    assert all(beats(b, a) for a, b in zip(made, made[1:]))
    if variant == "vietnamese":
        assert combo(parse_cards("AD 2C 3H 4S 5D"), r) is None and combo(parse_cards("2D 3C 4H 5S 6D"), r) is None


def test_straight_ties_follow_the_variants_tie_card() -> None:
    # hong kong: the 2's suit decides between two 2-3-4-5-6; ace-low: the ace's suit decides A-2-3-4-5
    assert beats(c("2S 3D 4C 5D 6D"), c("2H 3S 4S 5S 6S"))
    r = rules(straights="ace_low")
    assert beats(c("AS 2D 3D 4D 5D", r), c("AH 2S 3S 4S 5S", r))


@pytest.mark.parametrize("order, low, high", [
    ("SHCD", "3D", "3C"), ("SHDC", "3C", "3D"),          # bridge order: the 3 of clubs is the lowest card
    ("DHSC", "3S", "3D"),                                 # Hawaii: diamonds high
])
def test_suit_orders(order: str, low: str, high: str) -> None:
    r = rules(suit_order=order)
    assert beats(c(high, r), c(low, r))


def test_flush_variants() -> None:
    by_suit = rules(flush_by_suit=True)
    assert beats(c("3S 4S 6S 8S TS", by_suit), c("AD KD QD JD 9D", by_suit))   # the seed: spades flush wins
    assert combo(parse_cards("3S 4S 6S 8S TS"), rules(flushes=False)) is None
    assert combo(parse_cards("3S 3H 3D"), rules(triples=False)) is None
    assert combo(parse_cards("3S 3H 3D 4S 4H"), rules(triples=False)) is not None


def test_rules_validation_names_the_key() -> None:
    with pytest.raises(RulesError, match="suit_order"):
        rules(suit_order="SHC")
    with pytest.raises(RulesError, match="spots"):
        rules(spots=5)


# ---------------------------------------------------------------------------------------------------
# The deal and the play


def start(spots: list[int], r: dict | None = None, stake: int = 1, cards: list[Card] | None = None) -> State:
    state = GAME.new_table(GAME.rules(r or {}))
    for event in [OpenBets(), *[PlaceBet(s, "play", stake) for s in spots], CloseBets()]:
        state, _ = GAME.apply(state, event)
    for card in cards if cards is not None else deck():
        if GAME.expected_next(state).card_to is None:
            break
        state, _ = GAME.apply(state, CardDealt(card))
    return state


def go(state: State, *moves: tuple[int, str]) -> State:
    for spot, action in moves:
        state, _ = GAME.apply(state, Decision(f"spot:{spot}", action))
    return state


def test_the_deal_and_the_three_of_diamonds_leads() -> None:
    # the pack in order deals spot 1 every club, spot 2 every diamond, spot 3 hearts, spot 4 spades
    state = start([1, 2, 3, 4])
    assert {s: {c.suit.letter for c in state.hand(s)} for s in (1, 2, 3, 4)} == {1: {"C"}, 2: {"D"}, 3: {"H"},
                                                                                 4: {"S"}}
    exp = GAME.expected_next(state)
    assert (exp.actor, exp.actions) == ("spot:2", ("play",))
    with pytest.raises(IllegalEvent, match="must include the three of diamonds"):
        go(state, (2, "play:4D"))
    state = go(state, (2, "play:3D 4D 5D 6D 7D"))
    assert GAME.expected_next(state).actor == "spot:3"


def test_with_two_players_the_lowest_card_dealt_leads() -> None:
    cards = [c for c in deck() if c.rank >= 4]           # no threes dealt: the four of diamonds is the lowest
    state = start([2, 4], cards=cards)
    assert len(state.hand(2)) == len(state.hand(4)) == 13
    lead = GAME.expected_next(state).actor
    assert parse_cards("4D")[0] in state.hand(int(lead[5:]))


def test_a_whole_pack_for_three_gives_the_odd_card_to_the_lowest_card() -> None:
    state = start([1, 2, 3], {"deal_all": True})
    sizes = sorted(len(state.hand(s)) for s in (1, 2, 3))
    assert sizes == [17, 17, 18]
    holder = next(s for s in (1, 2, 3) if parse_cards("3D")[0] in state.hand(s))
    assert len(state.hand(holder)) == 18


def test_passing_and_the_end_of_a_trick() -> None:
    state = start([1, 2, 3, 4])
    state = go(state, (2, "play:3D"), (3, "play:5H"), (4, "pass"), (1, "pass"), (2, "pass"))
    exp = GAME.expected_next(state)
    assert (exp.actor, exp.actions) == ("spot:3", ("play",))          # spot 3 leads a new trick
    state = go(state, (3, "play:6H 7H 8H 9H TH"))                       # anything: a new trick
    assert GAME.expected_next(state).actions == ("play", "pass")


def test_a_pass_does_not_stop_a_later_play_unless_the_rules_say_so() -> None:
    moves = [(2, "play:3D"), (3, "pass"), (4, "play:4S"), (1, "play:5C"), (2, "pass")]
    state = go(start([1, 2, 3, 4]), *moves)
    assert GAME.expected_next(state).actor == "spot:3"                # passed before, may play now
    state = go(start([1, 2, 3, 4], {"pass_is_final": True}), *moves)
    assert GAME.expected_next(state).actor == "spot:4"                # spot 3 is out of this trick
    state = go(state, (4, "pass"))
    assert GAME.expected_next(state).actor == "spot:1"                # all the others passed: spot 1 leads
    assert GAME.expected_next(state).actions == ("play",)


@pytest.mark.parametrize("move, reason", [
    ((3, "play:4H"), "spot 2 is to play"),
    ((2, "pass"), "leads and must play"),
    ((2, "play:3D 4D"), "is not a big two play"),
    ((2, "play:3D 3C"), "does not hold 3C"),
    ((2, "play:ZZ"), "not a card"),
    ((2, "fold"), "may play"),
])
def test_refusals_change_nothing(move: tuple[int, str], reason: str) -> None:
    state = start([1, 2, 3, 4])
    before = repr(state)
    with pytest.raises(IllegalEvent, match=reason):
        go(state, move)
    assert repr(state) == before


def test_a_play_must_beat_the_last_one_with_as_many_cards() -> None:
    state = go(start([1, 2, 3, 4]), (2, "play:3D"))
    with pytest.raises(IllegalEvent, match="does not beat"):
        go(state, (3, "play:4H 5H 6H 7H 8H"))
    state = go(state, (3, "play:3H"), (4, "play:3S"))
    with pytest.raises(IllegalEvent, match="does not beat 3S"):
        go(state, (1, "play:3C"))


@pytest.mark.parametrize("allowed", [True, False])
def test_going_out_on_a_two_can_be_forbidden(allowed: bool) -> None:
    r = GAME.rules({"spots": 2, "may_end_with_two": allowed})
    mine, theirs = parse_cards("2S"), parse_cards("3D 4D 5D")
    cards = tuple((f"spot:{s}", Placed(c, False)) for s, hand in ((1, mine), (2, theirs)) for c in hand)
    state = State(r, 1, Phase.PLAYING, Bets(((1, "play", 1), (2, "play", 1))), cards, plays=((2, ()),), trick=1, turn=1)
    if allowed:
        state = go(state, (1, "play:2S"))
        # 3 cards, none played: tripled; doubled again: out on a 2
        assert state.phase is Phase.SETTLING and points(state, 2)[0] == 18
    else:
        with pytest.raises(IllegalEvent, match="may not go out on a single 2"):
            go(state, (1, "play:2S"))


# ---------------------------------------------------------------------------------------------------
# Scoring and payments


def ended(left: dict[int, str], last: str, winner: int = 1, r: dict | None = None, stake: int = 1,
          none_played: tuple[int, ...] = ()) -> State:
    """A finished game: each loser's cards left, the winner's last play; every loser played something
    (his other cards are in `plays`) unless listed in `none_played`."""
    rl = GAME.rules(r or {})
    used = {c for text in left.values() for c in parse_cards(text)} | set(parse_cards(last))
    spare = [c for c in deck() if c not in used]
    cards, plays = [], []
    for spot, text in left.items():
        held = list(parse_cards(text))
        extra = [] if spot in none_played else [spare.pop() for _ in range(13 - len(held))]
        cards += [(f"spot:{spot}", Placed(c, True)) for c in held + extra]
        if extra:
            plays.append((spot, tuple(extra)))
    won = list(parse_cards(last))
    earlier = [spare.pop() for _ in range(13 - len(won))]
    cards += [(f"spot:{winner}", Placed(c, True)) for c in earlier + won]
    plays += [(winner, tuple(earlier)), (winner, tuple(won))]
    bets = Bets(tuple(sorted((s, "play", stake) for s in [winner, *left])))
    return State(rl, 1, "settling", bets, tuple(cards), tuple(plays), winner=winner)


def test_the_seeds_first_example() -> None:
    # North (1) wins; East, West, South hold 3, 11 and 8 cards: they pay 3, 22 and 8; North gets 33
    state = ended({2: "3D 5C 7H", 3: "3C 4D 5D 6C 7C 8D 9C TD JC QD KC", 4: "3H 4H 6H 8H 9H JH QH KS"}, "AS")
    topups, settlement = settle(state)
    assert [r.net for r in settlement.results] == [-3, -22, -8, 33]
    assert settlement.house_win == 0
    assert [t.delta for t in topups] == [2, 21, 7]     # the first point was posted before the deal


def test_the_seeds_second_example() -> None:
    # North goes out on a 2: every loser's points double; West holds an unused straight flush, South a 2
    state = ended({2: "3D 5C 7H", 3: "3S 4S 5S 6S 7S 9D TC JD QC", 4: "2H 4H 6H 8C 9H TH JH QH"}, "2S")
    _, settlement = settle(state)
    assert [r.net for r in settlement.results] == [-6, -36, -32, 74]
    assert "doubled for a straight flush" in settlement.results[1].line


@pytest.mark.parametrize("doublings, points_due", [("each", 13 * 3 * 4), ("once", 13 * 3 * 2), ("none", 13 * 3)])
def test_none_played_triples_and_unused_twos_double(doublings: str, points_due: int) -> None:
    state = ended({2: "2D 2C 3D 4C 5H 7S 8D 9C JH QS KD AC AH"}, "3S", r={"doublings": doublings}, none_played=(2,))
    assert points(state, 2)[0] == points_due


def test_rake_on_the_winnings_with_a_cap() -> None:
    state = ended({2: "3D 5C 7H", 3: "4D 6C 8H 9S TD"}, "AS", r={"rake_percent": 10, "rake_cap": 2}, stake=5)
    topups, settlement = settle(state)
    win = settlement.results[-1]
    assert (win.paid, win.commission, win.returned) == (40, 2, 43)
    assert settlement.house_win == 2 and settlement.stakes == settlement.returned + 2
    assert StakeChanged(2, "play", 15, 10) in topups


def test_a_whole_game_settles_with_the_hands_shown() -> None:
    state = start([1, 2])
    rng_moves = 0
    while GAME.expected_next(state).phase == "deciding":
        plays = legal_plays(state, state.turn)
        action = "play:" + format_cards(plays[-1]) if plays else "pass"
        state, effects = GAME.apply(state, Decision(f"spot:{state.turn}", action))
        rng_moves += 1
    assert any(isinstance(e, CardsRevealed) for e in effects)
    snap = GAME.snapshot(state)
    assert all(card["up"] for p in snap["players"] for card in p["cards"])
    state, effects = GAME.apply(state, Settle())
    assert any(isinstance(e, RoundSettled) for e in effects) and rng_moves > 1


def test_stakes_must_be_alike_and_two_to_four_play() -> None:
    state = GAME.new_table(GAME.rules({}))
    for event in [OpenBets(), PlaceBet(1, "play", 2)]:
        state, _ = GAME.apply(state, event)
    with pytest.raises(IllegalEvent, match="two to four"):
        GAME.apply(state, CloseBets())
    state, _ = GAME.apply(state, PlaceBet(3, "play", 3))
    with pytest.raises(IllegalEvent, match="same stake"):
        GAME.apply(state, CloseBets())


def test_hands_are_hidden_and_plays_are_shown() -> None:
    state = go(start([1, 2, 3, 4]), (2, "play:3D"))
    snap = GAME.snapshot(state)
    assert all(not card["up"] for p in snap["players"] for card in p["cards"])
    assert snap["trick"] == [{"spot": 2, "pass": False, "cards": [{"card": "3D", "up": True}], "play": "single"}]
    assert [p["count"] for p in snap["players"]] == [13, 12, 13, 13]


@pytest.mark.parametrize("r", [{}, {"pass_is_final": True, "may_end_with_two": False, "rake_percent": 5,
                                    "rake_cap": 10},
                               {"spots": 3, "deal_all": True, "straights": "ace_low", "suit_order": "DHSC",
                                "doublings": "once"},
                               {"spots": 2, "triples": False, "flushes": False, "flush_by_suit": True}])
@pytest.mark.slow
def test_money_is_conserved_and_refusals_change_nothing(r: dict) -> None:
    play_rounds(GAME, GAME.rules(r), legal_bets, seed=9, rounds=25, decide=random_decide, deck_per_round=True,
                void_chance=80)


@pytest.mark.slow
@settings(max_examples=12, deadline=None)
@given(st.integers(0, 2**31 - 1), st.sampled_from([{}, {"pass_is_final": True, "rake_percent": 5}, {"spots": 3, "deal_all": True}]))
def test_any_seed_conserves_money(seed: int, rules: dict) -> None:
    """Hypothesis picks the seeds and the variant: stakes settled equal stakes placed, refusals change nothing."""
    play_rounds(GAME, GAME.rules(rules), legal_bets, seed=seed, rounds=2, decide=random_decide, deck_per_round=True,
                void_chance=40)

"""Pai gow poker's house way: a table of seven-card holdings with the setting the documented rules give, the configurable choices, and that it never fouls."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from controller.cards import deck, parse_cards
from controller.games._house_way import HouseWay, Keep, house_way, setting_kind
from controller.hands.paigow import back_value, front_value, is_foul

# (seven cards, the front hand the house way plays, what it plays the hand as). Where equal cards could
# swap (two of three aces), any setting of the same back and front values is the same setting.
TABLE = [
    # no pair: the highest card behind, the next two in front
    ("AS KD 9C 7H 5S 3D 2C", "KD 9C", "no pair"),
    ("KS QD 9C 7H 5S 3D 2C", "QD 9C", "no pair"),
    ("JK QD 9C 7H 5S 3D 2C", "QD 9C", "no pair"),          # the joker is the ace behind
    ("AS KS 9S 7S 4H 3D 2C", "KS 9S", "no pair"),          # four spades are no flush
    # one pair: behind, with the next two highest in front
    ("9S 9D AC KH 7S 5D 2C", "AC KH", "one pair"),
    ("2S 2D AC KH 7S 5D 3C", "AC KH", "one pair"),
    ("JK AD KC QH 7S 5D 3C", "KC QH", "one pair"),          # joker and ace: a pair of aces
    ("QS QD JK 8H 7S 5D 3C", "JK 8H", "one pair"),
    # two pair
    ("AS AD 3C 3H KS 9D 5C", "3C 3H", "two pair"),          # aces and any pair: split
    ("KS KD JC JH AS 9D 5C", "JC JH", "two pair"),          # high and high: split, even with an ace
    ("QS QD 8C 8H AS 9D 5C", "8C 8H", "two pair"),          # high and medium: split
    ("KS KD 4C 4H AS 9D 5C", "AS 9D", "two pair"),          # high and low: together with an ace
    ("KS KD 4C 4H QS 9D 5C", "4C 4H", "two pair"),          # ... else split
    ("TS TD 8C 8H AS 9D 5C", "AS 9D", "two pair"),          # medium and medium: together with an ace
    ("TS TD 8C 8H KS 9D 5C", "8C 8H", "two pair"),
    ("9S 9D 3C 3H KS 8D 5C", "KS 8D", "two pair"),          # medium and low: together with a king
    ("9S 9D 3C 3H QS 8D 5C", "3C 3H", "two pair"),
    ("6S 6D 3C 3H AS 8D 5C", "AS 8D", "two pair"),          # low and low: together with a king or ace
    ("6S 6D 3C 3H QS 8D 5C", "3C 3H", "two pair"),
    ("6S 6D 3C 3H JK 8D 5C", "JK 8D", "two pair"),          # the joker plays as the ace in front
    ("JK 4S 5S 5D 6H 7S 7D", "JK 6H", "two pair"),          # the seed's example, over the joker's straight
    ("TS TD 8C 8H JK 9D 5C", "JK 9D", "two pair"),
    ("8S 8D 5S 5C KS 9S 2S", "KS 9S", "two pair"),          # over a flush that leaves no pair in front
    ("JS JD 2C 2H KS 9D 5C", "2C 2H", "two pair"),          # high and low, a king only: split
    # three pair: the highest pair in front
    ("KS KD JC JH 7S 7D 5C", "KS KD", "three pair"),
    ("AS AD 4C 4H 3S 3D KC", "AS AD", "three pair"),
    ("JK AD 9C 9H 2S 2D 6C", "JK AD", "three pair"),
    # three of a kind
    ("8S 8D 8C AH KS 5D 2C", "AH KS", "three of a kind"),
    ("AS AD AC KH QS 5D 2C", "AC KH", "three aces"),        # split: a pair of aces behind
    ("JK AD AC KH QS 5D 2C", "JK KH", "three aces"),
    ("9S 9D 9C 5H 5S 5D 2C", "9S 9D", "two sets of three"),
    # full house: the pair in front
    ("QS QD QC 7H 7S 5D 2C", "7H 7S", "full house"),
    ("QS QD QC 7H 7S 5D 5C", "7H 7S", "full house"),        # the higher pair in front
    ("QS QD QC 2H 2S AD KC", "AD KC", "full house"),        # 2s with an ace and a king: kept whole
    ("QS QD QC 2H 2S AD JC", "2H 2S", "full house"),
    ("AS JK QS QH QD 7S 2S", "AS JK", "full house"),        # over the ace-high flush (the usual house way)
    # four of a kind
    ("5S 5D 5C 5H AS KD 2C", "AS KD", "four of a kind"),    # 2-6: together
    ("9S 9D 9C 9H KS 7D 2C", "KS 7D", "four of a kind"),    # 7-10: together with a king or ace
    ("9S 9D 9C 9H QS 7D 2C", "9C 9H", "four of a kind"),
    ("JS JD JC JH AS 7D 2C", "AS 7D", "four of a kind"),    # J-K: together with an ace
    ("JS JD JC JH KS 7D 2C", "JC JH", "four of a kind"),
    ("AS AD AC AH KS QD 2C", "AD AC", "four of a kind"),    # aces: split
    ("7S 7D 7C 7H KS KD 2C", "KS KD", "four of a kind"),    # with a pair: the pair in front
    ("4S 4D 4C 4H 9S 9D 9C", "9S 9D", "four of a kind"),
    # five aces
    ("AS AD AC AH JK 9S 2C", "AC JK", "five aces"),
    ("AS AD AC AH JK KS KC", "KS KC", "five aces"),
    ("AS AD AC AH JK QS QC", "AC JK", "five aces"),
    # straights, flushes, straight flushes: the highest front that leaves one behind
    ("2S 3D 4C 5H 6S 7D 8C", "8C 7D", "straight"),
    ("9S TD JC QH KS KD 4C", "KD 4C", "straight"),          # one pair: the straight, king-four in front
    ("5S 6D 7C 8H 9S QD QC", "QD QC", "straight"),          # ... the pair in front when it can
    ("AS 9S 7S 4S 2S KD QC", "KD QC", "flush"),
    ("AS KS 9S 7S 4S 2S QD", "AS QD", "flush"),             # six to a flush: the ace in front
    ("AS AD JK 5S 8S 9S KS", "AS AD", "flush"),             # three aces: the flush with aces in front
    ("AS AD AC 5S 8S 9S KS", "AD AC", "flush"),
    ("7S 7D 7C 8H 9S TD JC", "7D 7C", "straight"),          # three of a kind: the straight, a pair in front
    ("5H 6H 7H 8H 9H AS KD", "AS KD", "straight flush"),
    ("JK 2S 3D 4C 5H KS QD", "KS QD", "straight"),          # the joker completes the wheel
    ("JK 2S 5S 9S QS AD KD", "AD KD", "flush"),             # the joker completes the flush
    ("AS 2D 3C 4H 5S 6D KC", "AS KC", "straight"),          # the six-high straight, ace-king in front
]


@pytest.mark.parametrize("hand, front, kind", TABLE)
def test_house_way_table(hand: str, front: str, kind: str) -> None:
    cards = parse_cards(hand)
    want_front = parse_cards(front)
    want_back = [c for c in cards if c not in want_front]
    back, got_front = house_way(cards)
    assert sorted(back + got_front) == sorted(cards)
    assert (back_value(back), front_value(got_front)) == (back_value(want_back), front_value(want_front)), \
        f"{hand}: set {' '.join(map(str, back))} / {' '.join(map(str, got_front))}"
    assert setting_kind(cards) == kind
    assert not is_foul(back, got_front)


def test_the_table_is_big_enough_and_distinct() -> None:
    assert len(TABLE) >= 50
    assert len({frozenset(parse_cards(h)) for h, _, _ in TABLE}) == len(TABLE)


@pytest.mark.parametrize("way, hand, front", [
    (HouseWay(two_pair_low_low=Keep.SPLIT), "6S 6D 3C 3H AS 8D 5C", "3C 3H"),
    (HouseWay(two_pair_high_high=Keep.ACE), "KS KD JC JH AS 9D 5C", "AS 9D"),
    (HouseWay(two_pair_aces=Keep.KEEP), "AS AD 3C 3H KS 9D 5C", "KS 9D"),
    (HouseWay(two_pair_medium_low=Keep.QUEEN), "9S 9D 3C 3H QS 8D 5C", "QS 8D"),
    (HouseWay(medium_pair_top=12), "QS QD 8C 8H AS 9D 5C", "AS 9D"),   # queens medium: medium-medium keeps
    (HouseWay(three_aces_split=False), "AS AD AC KH QS 5D 2C", "KH QS"),
    (HouseWay(full_house_keep_twos=False), "QS QD QC 2H 2S AD KC", "2H 2S"),
    (HouseWay(four_low_top=9), "9S 9D 9C 9H QS 7D 2C", "QS 7D"),
    (HouseWay(four_aces=Keep.KING), "AS AD AC AH KS QD 2C", "KS QD"),
    (HouseWay(five_aces_keep_with_kings=False), "AS AD AC AH JK KS KC", "AC JK"),
    (HouseWay(straight_flush_over_two_pair=False), "AS AD AC 5S 8S 9S KS", "AC KS"),
])
def test_house_way_is_configurable(way: HouseWay, hand: str, front: str) -> None:
    cards = parse_cards(hand)
    want_front = parse_cards(front)
    back, got = house_way(cards, way)
    want_back = [c for c in cards if c not in want_front]
    assert (back_value(back), front_value(got)) == (back_value(want_back), front_value(want_front))


def test_bad_pair_classes_are_refused() -> None:
    with pytest.raises(ValueError, match="low_pair_top"):
        HouseWay(low_pair_top=10, medium_pair_top=9)
    with pytest.raises(ValueError, match="seven cards|7 cards"):
        house_way(parse_cards("AS KD"))


@pytest.mark.slow
@settings(max_examples=400)
@given(st.permutations(list(deck(1))).map(lambda cards: cards[:7]))
def test_house_way_never_fouls_and_uses_the_hand(cards: list) -> None:
    back, front = house_way(cards)
    assert len(back) == 5 and len(front) == 2 and set(back) | set(front) == set(cards)
    assert not is_foul(back, front)

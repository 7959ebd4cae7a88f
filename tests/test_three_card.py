"""Three-card poker values: all 22,100 hands against the known counts and the seed's ranking."""

from __future__ import annotations

from collections import Counter
from itertools import combinations

import pytest

from controller.cards import parse_cards
from controller.hands import three_card
from controller.hands.three_card import (
    FLUSH, HIGH_CARD, PAIR, STRAIGHT, STRAIGHT_FLUSH, THREE_OF_A_KIND, category, category_name, eval3, value3,
)


def v(text: str) -> int:
    return value3(parse_cards(text))


@pytest.mark.exhaustive
def test_all_22100_hands() -> None:
    counts = Counter(category(eval3(*hand)) for hand in combinations(range(52), 3))
    assert counts == {STRAIGHT_FLUSH: 48, THREE_OF_A_KIND: 52, STRAIGHT: 720, FLUSH: 1_096, PAIR: 3_744,
                      HIGH_CARD: 16_440}
    assert sum(counts.values()) == 22_100


def test_fast_path_matches_the_reference_on_every_hand() -> None:
    for a, b, c in combinations(range(52), 3):
        ranks = ((a >> 2) + 2, (b >> 2) + 2, (c >> 2) + 2)
        assert eval3(a, b, c) == three_card.reference_value(ranks, a & 3 == b & 3 == c & 3)


@pytest.mark.parametrize("better, worse", [
    ("2S 3S 4S", "AS AD AC"),    # straight flush over three of a kind
    ("2S 2D 2C", "AS KD QC"),    # three of a kind over straight
    ("2S 3D 4C", "AS KS 9S"),    # straight over flush (rarer with three cards)
    ("5S 3S 2S", "AS AD KC"),    # flush over pair
    ("2S 2D 3C", "AS KD JC"),    # pair over high card
    ("AS KD QC", "KS QD JC"),    # A-K-Q is the top straight
    ("2S 3D 4C", "AS 2D 3C"),    # A-2-3 is the lowest straight
    ("KS KD 3C", "QS QD AC"),    # pairs by rank first
    ("KS KD 4C", "KH KC 3D"),    # then the kicker
    ("AS 7D 3C", "AH 7C 2D"),    # high cards: top, second, lowest
    ("AS 7S 3S", "AH 7H 2H"),
])
def test_orderings(better: str, worse: str) -> None:
    assert v(better) > v(worse)


def test_ties_and_names() -> None:
    assert v("AS 7D 3C") == v("AH 7C 3D")  # a tie: the dealer and player push on equal hands
    assert category_name(v("AS 2S 3S")) == "straight flush"
    assert category_name(v("QS KS AS")) == "straight flush"
    assert category_name(v("AS 2D 3C")) == "straight"
    assert category_name(v("KS AD 2C")) == "high card"  # no wrap-around straight


@pytest.mark.parametrize("cards, message", [
    ("AS KD", "3 cards"), ("AS KD QC JH", "3 cards"), ("AS AS KD", "duplicate"), ("JK AS KD", "joker"),
])
def test_bad_hands(cards: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        v(cards)

"""Five-card poker values: exhaustive against known counts and an independent evaluator, tie-breaks, jokers."""

from __future__ import annotations

import random
from collections import Counter
from itertools import combinations

import pytest

from controller.cards import parse_cards
from controller.hands import poker
from controller.hands.poker import (
    FIVE_OF_A_KIND, FLUSH, FOUR_OF_A_KIND, FULL_HOUSE, HIGH_CARD, PAIR, STRAIGHT, STRAIGHT_FLUSH, THREE_OF_A_KIND,
    TWO_PAIR, JokerRule, best_five, best_value, category, describe, eval5, eval7, eval_indices, hand_name, kickers,
)
from tests.naive_poker import naive5, naive_best


def v(text: str, joker: JokerRule = JokerRule.NONE, wheel_second: bool = False) -> int:
    return best_value(parse_cards(text), joker, wheel_second)


def decoded(value: int) -> tuple[int, tuple[int, ...]]:
    return category(value), kickers(value)


# ------------------------------------------------------------------------------- exhaustive checks

def _rank_vectors(size: int) -> list[tuple[int, ...]]:
    return list(poker._count_vectors(size))


def test_every_five_card_rank_pattern_matches_the_independent_evaluator() -> None:
    # A five-card value depends only on the ranks and on whether the suits match: check every case.
    for vec in _rank_vectors(5):
        ranks = [r + 2 for r, n in enumerate(vec) for _ in range(n)]
        key = sum(n * 5 ** i for i, n in enumerate(vec))
        assert decoded(poker.NONFLUSH[key]) == naive5(ranks, False), ranks
        if len(set(ranks)) == 5:
            mask = sum(1 << (r - 2) for r in ranks)
            assert decoded(poker.FLUSH_TABLE[mask]) == naive5(ranks, True), ranks


@pytest.mark.slow
@pytest.mark.exhaustive
def test_all_2598960_five_card_hands() -> None:
    counts: Counter[int] = Counter()
    values: set[int] = set()
    for hand in combinations(range(52), 5):
        value = eval5(*hand)
        counts[category(value)] += 1
        values.add(value)
    assert sum(counts.values()) == 2_598_960
    assert counts == {
        STRAIGHT_FLUSH: 40, FOUR_OF_A_KIND: 624, FULL_HOUSE: 3_744, FLUSH: 5_108, STRAIGHT: 10_200,
        THREE_OF_A_KIND: 54_912, TWO_PAIR: 123_552, PAIR: 1_098_240, HIGH_CARD: 1_302_540}
    assert len(values) == 7_462  # the known number of distinct five-card hand values


@pytest.mark.slow
@pytest.mark.exhaustive
def test_every_six_and_seven_card_rank_pattern_against_brute_force() -> None:
    for size in (6, 7):
        for vec in _rank_vectors(size):
            ranks = [r + 2 for r, n in enumerate(vec) for _ in range(n)]
            key = sum(n * 5 ** i for i, n in enumerate(vec))
            best = max(naive5(list(five), False) for five in set(combinations(sorted(ranks), 5)))
            assert decoded(poker.NONFLUSH[key]) == best, ranks
    for mask in range(1 << 13):
        ranks = [r + 2 for r in range(13) if mask >> r & 1]
        if 5 <= len(ranks) <= 7:
            best = max(naive5(list(five), True) for five in combinations(ranks, 5))
            assert decoded(poker.FLUSH_TABLE[mask]) == best, ranks


@pytest.mark.slow
def test_best_of_seven_against_all_21_subsets_on_a_random_sample() -> None:
    rnd = random.Random(20261121)
    for _ in range(200_000):
        hand = rnd.sample(range(52), 7)
        brute = max(eval5(*five) for five in combinations(hand, 5))
        assert eval7(*hand) == brute == eval_indices(hand)
        six = hand[:6]
        assert eval_indices(six) == max(eval5(*five) for five in combinations(six, 5))


def test_best_of_seven_against_the_independent_evaluator() -> None:
    rnd = random.Random(7)
    for _ in range(5_000):
        hand = rnd.sample(range(52), 7)
        assert decoded(eval7(*hand)) == naive_best([((i >> 2) + 2, i & 3) for i in hand])


# ------------------------------------------------------------------------------- table-driven rules

@pytest.mark.parametrize("better, worse", [
    ("AS AD KC QH JS", "AS AH KC QH TS"),      # pair: the last kicker decides
    ("KS KD 2C 2H 3S", "QS QD JC JH AS"),      # two pair: the higher pair first
    ("KS KD 7C 7H 9S", "KH KC 7S 7D 8S"),      # two pair: then the kicker
    ("QS QD QC KH KS", "2S 2D 2C AH AS"),      # full house: trips before pair
    ("3S 3D 3C 3H 2S", "2S 2D 2C 2H AS"),      # quads: the quad rank before the kicker
    ("6S 5D 4C 3H 2S", "AS 2D 3C 4H 5S"),      # the wheel is the lowest straight
    ("AS KD QC JH TS", "KS QD JC TH 9S"),
    ("AH QH 9H 5H 3H", "AD QD 9D 5D 2D"),      # flush: every card counts
    ("2S 3S 4S 5S 6S", "AS AD AC AH KS"),      # straight flush over quads
    ("AS 2S 3S 4S 5S", "KS KD KC KH QS"),      # even the steel wheel
    ("2S 2D 2C 3H 4S", "AS AD KC KH QS"),      # trips over two pair
    ("2S 3D 4C 5H 6S", "AS AD AC KH QS"),      # straight over trips
    ("2H 3H 4H 5H 7H", "AS KD QC JH TS"),      # flush over straight
    ("2S 2D 3C 3H 3S", "AH KH QH JH 9H"),      # full house over flush
])
def test_orderings(better: str, worse: str) -> None:
    assert v(better) > v(worse)


def test_equal_hands_in_other_suits_tie() -> None:
    assert v("AS KD QC JH 9S") == v("AH KC QD JS 9D")
    assert v("2S 2D 7C 7H KS") == v("2H 2C 7S 7D KD")


@pytest.mark.parametrize("cards, name", [
    ("AS KS QS JS TS", "royal flush"),
    ("9S KS QS JS TS", "king-high straight flush"),
    ("AS 2S 3S 4S 5S", "five-high straight flush"),
    ("7S 7D 7C 7H 2S", "four sevens"),
    ("KS KD KC 7H 7S", "full house, kings over sevens"),
    ("AH QH 9H 5H 3H", "ace-high flush"),
    ("AS 2D 3C 4H 5S", "five-high straight"),
    ("QS QD QC 7H 2S", "three queens"),
    ("KS KD 7C 7H 9S", "two pair, kings and sevens"),
    ("6S 6D 7C 2H 9S", "pair of sixes"),
    ("AS 9D 7C 4H 2S", "ace high"),
    # six and seven cards
    ("KS KD KC 5H 5S 5D", "full house, kings over fives"),
    ("AS AD KC KH QS QD 2C", "two pair, aces and kings"),
    ("AS 2D 3C 4H 5S 6D 9C", "six-high straight"),
    ("AH KH 9H 5H 3H 2H JD", "ace-high flush"),
    ("AH KH 9H 5H 3H 2H AD", "ace-high flush"),
    ("9H TH JH QH KH 8H AD", "king-high straight flush"),
])
def test_descriptions(cards: str, name: str) -> None:
    assert describe(v(cards)) == name


def test_seven_card_details() -> None:
    assert kickers(v("AS AD KC KH QS QD 2C")) == (14, 13, 12)  # the third pair plays as the kicker
    assert kickers(v("AH KH 9H 5H 3H 2H JD")) == (14, 13, 9, 5, 3)  # six hearts: the best five
    assert v("AS KD QC JH 9S 2D 3C") == v("AS KD QC JH 9S")  # the board plays
    assert hand_name(v("AS KS QS JS TS 2D 3C")) == "royal flush"
    assert best_five(parse_cards("AS AD KC KH QS QD 2C")) == parse_cards("AS AD KH KC QS")


# ------------------------------------------------------------------------------- jokers

@pytest.mark.parametrize("cards, rule, name", [
    # The bug (pai gow, 000_*): an ace, or the fifth card of a straight, flush or straight flush.
    ("JK AS AD AC AH", JokerRule.BUG, "five aces"),
    ("JK KS KD 2C 3H", JokerRule.BUG, "pair of kings"),      # plays as an ace kicker
    ("JK AS KD 2C 3H", JokerRule.BUG, "pair of aces"),
    ("JK 2S 3D 4C 5H", JokerRule.BUG, "six-high straight"),
    ("JK 9S 9D 9C 9H", JokerRule.BUG, "four nines"),         # no five nines with a bug
    ("JK KS QS JS 9S", JokerRule.BUG, "king-high straight flush"),
    ("JK KS QS JS TS", JokerRule.BUG, "royal flush"),
    ("JK AS KS 7S 4S", JokerRule.BUG, "ace-high flush"),
    ("JK KD KS 8C 8H", JokerRule.BUG, "two pair, kings and eights"),
    ("JK 7S 7D 7C 2H", JokerRule.BUG, "three sevens"),
    ("JK 4S 5D 5C 6H 7S 7D", JokerRule.BUG, "eight-high straight"),  # the seed's example holding
    # Fully wild: any card, five of a kind possible.
    ("JK 9S 9D 9C 9H", JokerRule.WILD, "five nines"),
    ("JK 2S 2D 2C 2H", JokerRule.WILD, "five twos"),
    ("JK KD KS 8C 8H", JokerRule.WILD, "full house, kings over eights"),
    ("JK 7S 7D 7C 2H", JokerRule.WILD, "four sevens"),
    ("JK AS KS QS JS", JokerRule.WILD, "royal flush"),
    ("JK KS KD 2C 3H", JokerRule.WILD, "three kings"),
])
def test_joker_rules(cards: str, rule: JokerRule, name: str) -> None:
    assert describe(v(cards, rule)) == name


def test_joker_details() -> None:
    assert kickers(v("JK KS KD 2C 3H", JokerRule.BUG)) == (13, 14, 3, 2)
    assert kickers(v("JK AS KS 7S 4S", JokerRule.BUG)) == (14, 13, 12, 7, 4)  # the highest missing spade
    assert category(v("JK AS AD AC AH", JokerRule.WILD)) == FIVE_OF_A_KIND
    assert v("JK AS AD AC AH", JokerRule.BUG) > v("AS KS QS JS TS")  # five aces top pai gow's ranks


def test_pai_gow_wheel_is_the_second_best_straight() -> None:
    wheel = v("AS 2D 3C 4H 5S", wheel_second=True)
    assert v("KS QD JC TH 9S", wheel_second=True) < wheel < v("AS KD QC JH TS", wheel_second=True)
    steel = v("AS 2S 3S 4S 5S", wheel_second=True)
    assert v("KS QS JS TS 9S", wheel_second=True) < steel < v("AS KS QS JS TS", wheel_second=True)
    assert describe(wheel) == "five-high straight (wheel)"
    # A hand holding both plays the wheel under this ranking, the six-high straight otherwise.
    assert v("AS 2D 3C 4H 5S 6D 9C", wheel_second=True) == wheel
    assert describe(v("AS 2D 3C 4H 5S 6D 9C")) == "six-high straight"
    # With a bug, 2-3-4-5 plays as the wheel (joker as ace) rather than six-high.
    assert v("JK 2S 3D 4C 5H", JokerRule.BUG, wheel_second=True) == wheel


@pytest.mark.parametrize("cards, rule, message", [
    ("AS KD QC JH", JokerRule.NONE, "5 to 7 cards"),
    ("AS KD QC JH TS 9S 8S 7S", JokerRule.NONE, "5 to 7 cards"),
    ("AS AS QC JH TS", JokerRule.NONE, "duplicate card AS"),
    ("JK KD QC JH TS", JokerRule.NONE, "joker is not allowed"),
    ("JK JK QC JH TS", JokerRule.WILD, "duplicate card JK"),
])
def test_bad_hands(cards: str, rule: JokerRule, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        v(cards, rule)


def test_bad_members() -> None:
    with pytest.raises(ValueError, match="not a card"):
        best_value(["AS", "KD", "QC", "JH", "TS"])  # type: ignore[list-item]

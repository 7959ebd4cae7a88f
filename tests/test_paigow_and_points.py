"""Pai gow front/back hands and fouls, baccarat points, blackjack totals."""

from __future__ import annotations

import pytest

from controller.cards import parse_card, parse_cards
from controller.hands.paigow import back_value, front_value, is_foul
from controller.hands.points import baccarat_points, baccarat_value, blackjack_total


def front(text: str) -> int:
    return front_value(parse_cards(text))


def back(text: str) -> int:
    return back_value(parse_cards(text))


def test_front_hand_is_pairs_and_high_cards_only() -> None:
    assert front("AS AD") > front("KS KD") > front("2S 2D") > front("AS KD") > front("AS QD") > front("3S 2D")
    assert front("2S 3S") == front("2D 3C")  # no flushes or straights in two cards
    assert front("JK KD") == front("AS KD")  # the joker plays as an ace
    assert front("JK AD") == front("AS AD")


def test_back_hand_ranking() -> None:
    assert back("AS 2D 3C 4H 5S") > back("KS QD JC TH 9S")  # A-2-3-4-5 second only to A-K-Q-J-T
    assert back("JK AS AD AC AH") > back("AS KS QS JS TS")  # five aces is the top hand
    with pytest.raises(ValueError, match="5 cards"):
        back("AS KD QC JH")


def test_fouls() -> None:
    assert is_foul(parse_cards("2S 3D 5C 8H 9D"), parse_cards("AS AD"))
    assert is_foul(parse_cards("AS QD 8C 5H 3D"), parse_cards("AH KC"))  # ace-queen high behind ace-king
    assert not is_foul(parse_cards("AS KD 8C 5H 3D"), parse_cards("AH QC"))
    assert not is_foul(parse_cards("AS AD 8C 5H 3D"), parse_cards("JK KC"))  # pair beats ace-king
    # The seed's example: two pair behind, joker-six in front (ace-six), rather than a straight.
    assert not is_foul(parse_cards("7S 7D 5C 5H 4S"), parse_cards("JK 6D"))
    # Equal pairs: the back's kickers make it the higher hand, so it is not foul.
    assert not is_foul(parse_cards("JK AS KD 8C 5H"), parse_cards("AH AC"))


@pytest.mark.parametrize("cards, points", [
    ("AS", 1), ("9D", 9), ("TS", 0), ("KD", 0), ("9S 8D", 7), ("5S 5D", 0), ("AS 8D", 9), ("7C 7D 7H", 1),
    ("QS KD JC", 0),
])
def test_baccarat_points(cards: str, points: int) -> None:
    assert baccarat_points(parse_cards(cards)) == points


@pytest.mark.parametrize("cards, total, soft, blackjack, bust", [
    ("AS KD", 21, True, True, False),
    ("AS TD", 21, True, True, False),
    ("AS 6D", 17, True, False, False),
    ("AS 6D 9C", 16, False, False, False),
    ("AS AD", 12, True, False, False),
    ("AS AD 9C", 21, True, False, False),
    ("TS 6D 9C", 25, False, False, True),
    ("7S 7D 7C", 21, False, False, False),
    ("AS 5D 5C", 21, True, False, False),  # 21 in three cards is not a blackjack
    ("KS QD", 20, False, False, False),
])
def test_blackjack_totals(cards: str, total: int, soft: bool, blackjack: bool, bust: bool) -> None:
    t = blackjack_total(parse_cards(cards))
    assert (t.total, t.soft, t.blackjack, t.bust) == (total, soft, blackjack, bust)


def test_jokers_have_no_points() -> None:
    with pytest.raises(ValueError, match="baccarat"):
        baccarat_value(parse_card("JK"))
    with pytest.raises(ValueError, match="blackjack"):
        blackjack_total(parse_cards("JK AS"))

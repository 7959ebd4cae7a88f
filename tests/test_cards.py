"""Cards: parsing and formatting both ways, orderings, indices, decks, shoes and compositions."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from controller.cards import (
    ACE, JOKER, KING, TEN, Card, Composition, EmptyShoeError, Shoe, Suit, ace_low_key, deck, format_cards,
    from_index, parse_card, parse_cards, rank_key, shoe,
)


@pytest.mark.parametrize("text, rank, suit", [
    ("AS", ACE, Suit.SPADES), ("as", ACE, Suit.SPADES), ("Td", TEN, Suit.DIAMONDS), ("10h", TEN, Suit.HEARTS),
    ("10H", TEN, Suit.HEARTS), ("Q♠", 12, Suit.SPADES), ("K♥", KING, Suit.HEARTS), ("2♣", 2, Suit.CLUBS),
    ("9♦", 9, Suit.DIAMONDS), (" 7c ", 7, Suit.CLUBS), ("J♤", 11, Suit.SPADES), ("A♡", ACE, Suit.HEARTS),
])
def test_parse(text: str, rank: int, suit: Suit) -> None:
    card = parse_card(text)
    assert (card.rank, card.suit, card.joker) == (rank, suit, False)


@pytest.mark.parametrize("text", ["JK", "jk", "Joker", "🃏"])
def test_parse_joker(text: str) -> None:
    assert parse_card(text) is JOKER
    assert JOKER.joker and JOKER.rank == 0 and JOKER.suit is None and JOKER.index == 52


@pytest.mark.parametrize("text", ["", "A", "S", "1S", "11S", "AX", "ASS", "0h", "T", "JKS", "A S", "♠A", "1OH", None, 14])
def test_parse_rejects_with_a_clear_message(text: object) -> None:
    with pytest.raises(ValueError, match="not a card"):
        parse_card(text)  # type: ignore[arg-type]


def test_format() -> None:
    assert str(parse_card("10h")) == "TH"
    assert parse_card("10h").symbol == "T♥"
    assert str(JOKER) == "JK"
    assert repr(parse_card("as")) == "Card('AS')"
    assert parse_card("QS").name == "queen of spades"
    assert format_cards(parse_cards("AS, 10d 2c"), symbols=True) == "A♠ T♦ 2♣"


@given(st.integers(0, 52))
def test_index_round_trip(i: int) -> None:
    card = from_index(i)
    assert card.index == i
    assert parse_card(str(card)) == card
    assert parse_card(card.symbol) == card
    if not card.joker:
        assert card.index == (card.rank - 2) * 4 + card.suit


def test_indices_cover_the_deck_once() -> None:
    cards = deck()
    assert [c.index for c in cards] == list(range(52))
    assert len(set(cards)) == 52
    assert deck(jokers=1)[-1] is JOKER


@pytest.mark.parametrize("bad", [-1, 53, "1", 1.0])
def test_from_index_rejects(bad: object) -> None:
    with pytest.raises(ValueError, match="card index"):
        from_index(bad)  # type: ignore[arg-type]


def test_card_constructor_validates() -> None:
    with pytest.raises(ValueError, match="rank"):
        Card(1, Suit.SPADES)
    with pytest.raises(ValueError, match="suit"):
        Card(5, None)
    with pytest.raises(ValueError, match="joker"):
        Card(5, Suit.SPADES, joker=True)


def test_orderings() -> None:
    a, two, k, jk = parse_cards("AS 2C KD JK")
    assert sorted([jk, a, k, two]) == [two, k, a, jk]
    assert sorted([a, two, k], key=ace_low_key) == [a, two, k]
    assert sorted([a, two, k], key=rank_key) == [two, k, a]
    assert parse_card("AC") < parse_card("AD") < parse_card("AH") < parse_card("AS")


def test_shoe_composition() -> None:
    six = shoe(6)
    assert len(six) == 312
    assert all(six.count(c) == 6 for c in deck())
    assert len(shoe(2, jokers=1)) == 106
    comp = Composition.of(8)
    assert comp.size == 416
    after = comp.remove(parse_card("AS"))
    assert after.count(parse_card("AS")) == 7 and after.size == 415
    assert Composition.from_cards(six) == Composition.of(6)


def test_foreign_card_is_caught() -> None:
    comp = Composition.of(1).remove_all(parse_cards("AS KD"))
    with pytest.raises(ValueError, match="no AS left"):
        comp.remove(parse_card("AS"))
    with pytest.raises(ValueError, match="no JK left"):
        Composition.of(1).remove(JOKER)


@pytest.mark.parametrize("decks", [0, -1, 1.5, "2"])
def test_empty_or_bad_deck_count(decks: object) -> None:
    with pytest.raises(ValueError, match="at least 1 deck"):
        shoe(decks)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="jokers"):
        shoe(1, jokers=-1)


def test_dealing_shoe_runs_out_cleanly() -> None:
    s = Shoe(parse_cards("AS KD"), cut=1)
    c1, s = s.draw()
    assert c1 == parse_card("AS") and s.cut_reached and s.remaining == 1
    c2, s = s.draw()
    assert c2 == parse_card("KD") and s.remaining == 0
    with pytest.raises(EmptyShoeError, match="empty"):
        s.draw()
    with pytest.raises(EmptyShoeError):
        Shoe(()).draw()

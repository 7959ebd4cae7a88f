"""Playing cards: the Card type, parsing and formatting, orderings, decks, shoes and their composition."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import IntEnum
from functools import total_ordering
from typing import Iterable, Iterator, Sequence

__all__ = [
    "Suit", "Card", "JOKER", "ACE", "KING", "QUEEN", "JACK", "TEN", "RANKS",
    "parse_card", "parse_cards", "format_cards", "from_index", "deck", "shoe",
    "Composition", "Shoe", "EmptyShoeError", "ace_low_key", "rank_key", "indices", "JOKER_INDEX",
]


class Suit(IntEnum):
    """Suits in bridge order (clubs lowest); a game that ranks suits differently says so itself."""

    CLUBS = 0
    DIAMONDS = 1
    HEARTS = 2
    SPADES = 3

    @property
    def letter(self) -> str:
        return "CDHS"[self]

    @property
    def symbol(self) -> str:
        return "♣♦♥♠"[self]

    @property
    def is_red(self) -> bool:
        return self in (Suit.DIAMONDS, Suit.HEARTS)


TEN, JACK, QUEEN, KING, ACE = 10, 11, 12, 13, 14
RANKS: tuple[int, ...] = tuple(range(2, 15))
JOKER_INDEX = 52

_RANK_CHARS = {r: str(r) for r in range(2, 10)} | {TEN: "T", JACK: "J", QUEEN: "Q", KING: "K", ACE: "A"}
_RANK_NAMES = {2: "two", 3: "three", 4: "four", 5: "five", 6: "six", 7: "seven", 8: "eight", 9: "nine",
               TEN: "ten", JACK: "jack", QUEEN: "queen", KING: "king", ACE: "ace"}
_PARSE_RANK = {str(r): r for r in range(2, 10)} | {"T": TEN, "10": TEN, "J": JACK, "Q": QUEEN, "K": KING,
                                                   "A": ACE}
_PARSE_SUIT = {"C": Suit.CLUBS, "D": Suit.DIAMONDS, "H": Suit.HEARTS, "S": Suit.SPADES,
               "♣": Suit.CLUBS, "♦": Suit.DIAMONDS, "♥": Suit.HEARTS, "♠": Suit.SPADES,
               "♧": Suit.CLUBS, "♢": Suit.DIAMONDS, "♡": Suit.HEARTS, "♤": Suit.SPADES}
_JOKER_SPELLINGS = {"JK", "JOKER", "🃏"}


@total_ordering
@dataclass(frozen=True, slots=True, eq=True, repr=False)
class Card:
    """One card. `rank` is 2..14 (ace high) and `suit` a Suit; the joker has rank 0, no suit, joker=True.

    The natural order is the index order: by rank, then suit, the joker last.
    """

    rank: int
    suit: Suit | None
    joker: bool = False
    index: int = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if self.joker:
            if self.rank != 0 or self.suit is not None:
                raise ValueError("the joker has rank 0 and no suit")
            object.__setattr__(self, "index", JOKER_INDEX)
            return
        if not isinstance(self.rank, int) or not 2 <= self.rank <= 14:
            raise ValueError(f"card rank must be 2..14 (ace high), got {self.rank!r}")
        if self.suit is None or self.suit not in (0, 1, 2, 3):
            raise ValueError(f"card suit must be a Suit, got {self.suit!r}")
        object.__setattr__(self, "suit", Suit(self.suit))
        # Rank-major: sorting indices sorts by rank; index // 4 is rank - 2, index % 4 the suit.
        object.__setattr__(self, "index", (self.rank - 2) * 4 + int(self.suit))

    def __lt__(self, other: Card) -> bool:
        if not isinstance(other, Card):
            return NotImplemented
        return self.index < other.index

    def __repr__(self) -> str:
        return f"Card({str(self)!r})"

    def __str__(self) -> str:
        if self.joker:
            return "JK"
        return _RANK_CHARS[self.rank] + self.suit.letter  # type: ignore[union-attr]

    @property
    def symbol(self) -> str:
        """The card with a suit symbol, e.g. 'A♠' (the joker is 'JK')."""
        if self.joker:
            return "JK"
        return _RANK_CHARS[self.rank] + self.suit.symbol  # type: ignore[union-attr]

    @property
    def rank_char(self) -> str:
        return "JK" if self.joker else _RANK_CHARS[self.rank]

    @property
    def name(self) -> str:
        """Spoken name, e.g. 'ace of spades'."""
        if self.joker:
            return "joker"
        return f"{_RANK_NAMES[self.rank]} of {self.suit.name.lower()}"  # type: ignore[union-attr]


_ALL: tuple[Card, ...] = tuple(Card(r, Suit(s)) for r in RANKS for s in range(4)) + (Card(0, None, True),)
JOKER: Card = _ALL[JOKER_INDEX]
_BY_TEXT: dict[str, Card] = {}
for _c in _ALL[:JOKER_INDEX]:
    for _rank_text in [k for k, v in _PARSE_RANK.items() if v == _c.rank]:
        for _suit_text in [k for k, v in _PARSE_SUIT.items() if v == _c.suit]:
            _BY_TEXT[_rank_text + _suit_text] = _c
del _c, _rank_text, _suit_text


def from_index(index: int) -> Card:
    """The card with this index (0..51, 52 for the joker)."""
    if not isinstance(index, int) or not 0 <= index <= JOKER_INDEX:
        raise ValueError(f"card index must be 0..52, got {index!r}")
    return _ALL[index]


def parse_card(text: str) -> Card:
    """Parse 'AS', 'Td', '10h', 'Q♠' or 'JK' (the joker). Case and surrounding spaces do not matter."""
    if not isinstance(text, str):
        raise ValueError(f"not a card: {text!r} (expected a string like 'AS')")
    key = text.strip().upper()
    if key in _JOKER_SPELLINGS:
        return JOKER
    card = _BY_TEXT.get(key)
    if card is None:
        raise ValueError(
            f"not a card: {text!r} (expected a rank 2-9, T or 10, J, Q, K, A followed by a suit "
            f"S, H, D, C or ♠ ♥ ♦ ♣, or JK for the joker)")
    return card


def parse_cards(text: str | Iterable[str]) -> tuple[Card, ...]:
    """Parse several cards: 'AS KD 10h' (spaces or commas) or an iterable of card strings."""
    if isinstance(text, str):
        parts = text.replace(",", " ").split()
    else:
        parts = list(text)
    return tuple(parse_card(p) for p in parts)


def format_cards(cards: Iterable[Card], symbols: bool = False) -> str:
    return " ".join(c.symbol if symbols else str(c) for c in cards)


def rank_key(card: Card) -> tuple[int, int]:
    """Sort key: rank with ace high, then suit; the joker above everything."""
    return (15, 0) if card.joker else (card.rank, int(card.suit))  # type: ignore[arg-type]


def ace_low_key(card: Card) -> tuple[int, int]:
    """Sort key: rank with ace low (A=1), then suit; the joker above everything."""
    if card.joker:
        return (15, 0)
    return (1 if card.rank == ACE else card.rank, int(card.suit))  # type: ignore[arg-type]


def deck(jokers: int = 0) -> tuple[Card, ...]:
    """One 52-card pack in index order, plus `jokers` jokers (0 or more)."""
    return shoe(1, jokers)


def shoe(decks: int, jokers: int = 0) -> tuple[Card, ...]:
    """`decks` packs of 52 (and `jokers` jokers per pack) in index order, ready to shuffle."""
    return Composition.of(decks, jokers).cards()


@dataclass(frozen=True, slots=True)
class Composition:
    """How many of each card a shoe holds: `counts[i]` for card index i (52 = joker)."""

    counts: tuple[int, ...]

    def __post_init__(self) -> None:
        if len(self.counts) != JOKER_INDEX + 1 or any((not isinstance(n, int)) or n < 0 for n in self.counts):
            raise ValueError("a composition has 53 non-negative integer counts (52 cards and the joker)")

    @classmethod
    def of(cls, decks: int = 1, jokers: int = 0) -> Composition:
        if not isinstance(decks, int) or decks < 1:
            raise ValueError(f"a shoe needs at least 1 deck, got {decks!r}")
        if not isinstance(jokers, int) or jokers < 0:
            raise ValueError(f"jokers per deck must be 0 or more, got {jokers!r}")
        return cls((decks,) * JOKER_INDEX + (decks * jokers,))

    @classmethod
    def from_cards(cls, cards: Iterable[Card]) -> Composition:
        counts = [0] * (JOKER_INDEX + 1)
        for c in cards:
            counts[c.index] += 1
        return cls(tuple(counts))

    @property
    def size(self) -> int:
        return sum(self.counts)

    def __len__(self) -> int:
        return self.size

    def count(self, card: Card) -> int:
        return self.counts[card.index]

    def cards(self) -> tuple[Card, ...]:
        """Every card in the composition, in index order."""
        return tuple(_ALL[i] for i, n in enumerate(self.counts) for _ in range(n))

    def remove(self, card: Card) -> Composition:
        """The composition after `card` is dealt; a card with none left is an error (a foreign card)."""
        n = self.counts[card.index]
        if n == 0:
            raise ValueError(f"no {card} left in this shoe: the card cannot have come from it")
        counts = list(self.counts)
        counts[card.index] = n - 1
        return Composition(tuple(counts))

    def remove_all(self, cards: Iterable[Card]) -> Composition:
        counts = list(self.counts)
        for c in cards:
            if counts[c.index] == 0:
                raise ValueError(f"no {c} left in this shoe: the card cannot have come from it")
            counts[c.index] -= 1
        return Composition(tuple(counts))


class EmptyShoeError(ValueError):
    """Raised when a card is drawn from a shoe with none left."""


@dataclass(frozen=True, slots=True)
class Shoe:
    """A shuffled sequence of cards being dealt, with an optional cut card position. Pure: draw returns a new Shoe."""

    cards: tuple[Card, ...]
    position: int = 0
    cut: int | None = None

    def __post_init__(self) -> None:
        if not 0 <= self.position <= len(self.cards):
            raise ValueError(f"shoe position {self.position} outside 0..{len(self.cards)}")
        if self.cut is not None and not 0 <= self.cut <= len(self.cards):
            raise ValueError(f"cut card position {self.cut} outside 0..{len(self.cards)}")

    @property
    def remaining(self) -> int:
        return len(self.cards) - self.position

    @property
    def cut_reached(self) -> bool:
        return self.cut is not None and self.position >= self.cut

    def draw(self) -> tuple[Card, Shoe]:
        if self.position >= len(self.cards):
            raise EmptyShoeError(f"the shoe is empty: all {len(self.cards)} cards have been dealt")
        return self.cards[self.position], Shoe(self.cards, self.position + 1, self.cut)

    def __iter__(self) -> Iterator[Card]:
        return iter(self.cards[self.position:])


def indices(cards: Sequence[Card]) -> list[int]:
    return [c.index for c in cards]

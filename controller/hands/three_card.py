"""Three-card poker hand values: straight flush > three of a kind > straight > flush > pair > high card."""

from __future__ import annotations

from typing import Sequence

from controller.cards import ACE, Card

__all__ = [
    "HIGH_CARD", "PAIR", "FLUSH", "STRAIGHT", "THREE_OF_A_KIND", "STRAIGHT_FLUSH", "CATEGORY_NAMES",
    "value3", "eval3", "category", "category_name", "reference_value",
]

# With three cards a straight is rarer than a flush, so it ranks higher (the seed's order, 003_*).
HIGH_CARD, PAIR, FLUSH, STRAIGHT, THREE_OF_A_KIND, STRAIGHT_FLUSH = range(6)
CATEGORY_NAMES: tuple[str, ...] = ("high card", "pair", "flush", "straight", "three of a kind", "straight flush")


def _pack(cat: int, ranks: Sequence[int]) -> int:
    v = cat
    for i in range(3):
        v = (v << 4) | (ranks[i] if i < len(ranks) else 0)
    return v


def category(value: int) -> int:
    return value >> 12


def category_name(value: int) -> str:
    return CATEGORY_NAMES[value >> 12]


def _straight_top(desc: Sequence[int]) -> int:
    if desc[0] - desc[2] == 2 and desc[0] != desc[1] != desc[2]:
        return desc[0]
    if list(desc) == [ACE, 3, 2]:  # A-2-3 is the lowest straight (003_*: "A-2-3 is a valid straight")
        return 3
    return 0


def reference_value(ranks: Sequence[int], flush: bool) -> int:
    """Value of three cards from their ranks and whether they share a suit."""
    desc = sorted(ranks, reverse=True)
    top = _straight_top(desc)
    if top and flush:
        return _pack(STRAIGHT_FLUSH, [top])
    if desc[0] == desc[2]:
        return _pack(THREE_OF_A_KIND, [desc[0]])
    if top:
        return _pack(STRAIGHT, [top])
    if flush:
        return _pack(FLUSH, desc)
    if desc[0] == desc[1] or desc[1] == desc[2]:
        pair = desc[1]  # the middle card always belongs to the pair
        kicker = desc[2] if desc[0] == desc[1] else desc[0]
        return _pack(PAIR, [pair, kicker])
    return _pack(HIGH_CARD, desc)


# rank of card index i is (i >> 2) + 2; a 52 * 52 * 52 table would be 140k entries, the packed key is
# small: base-5 rank counts plus a flag nibble per suit.
_SUIT_SHIFT = 32
_PACKED = [5 ** (i >> 2) + (1 << (_SUIT_SHIFT + 4 * (i & 3))) for i in range(52)]
_TABLE: dict[int, int] = {}
for _a in range(52):
    for _b in range(_a + 1, 52):
        for _c in range(_b + 1, 52):
            _k = _PACKED[_a] + _PACKED[_b] + _PACKED[_c]
            if _k not in _TABLE:
                _TABLE[_k] = reference_value(((_a >> 2) + 2, (_b >> 2) + 2, (_c >> 2) + 2),
                                             _a & 3 == _b & 3 == _c & 3)
del _a, _b, _c, _k


def eval3(a: int, b: int, c: int) -> int:
    """Value of three distinct cards given by index."""
    return _TABLE[_PACKED[a] + _PACKED[b] + _PACKED[c]]


def value3(cards: Sequence[Card]) -> int:
    """Value of a three-card hand (no jokers, no duplicates)."""
    if len(cards) != 3:
        raise ValueError(f"a three-card poker hand has 3 cards, got {len(cards)}")
    if any(c.joker for c in cards):
        raise ValueError("a joker is not allowed in three card poker")
    a, b, c = (card.index for card in cards)
    if a == b or b == c or a == c:
        raise ValueError("duplicate card in one hand")
    return eval3(a, b, c)

"""Five-card poker hand values: one comparable integer per hand, best five of five to seven cards, joker rules.

A value is `category << 20` followed by up to five ranks in 4-bit fields, most significant first, so a
higher integer is a better hand and equal integers tie. Ranks are 2..14 (ace high); a wheel straight
(A-2-3-4-5) is five-high unless the caller asks for pai gow's ranking, where it is the second-best straight.

Fast paths take card indices (`Card.index`, 0..51): each card maps to a packed integer whose sum holds
the rank counts (base 5, one digit per rank) and the suit counts (one nibble per suit), so a hand is
a handful of additions and one table lookup.
"""

from __future__ import annotations

from enum import Enum
from itertools import combinations
from typing import Iterable, Iterator, Sequence

from controller.cards import ACE, JOKER_INDEX, Card, from_index

__all__ = [
    "HIGH_CARD", "PAIR", "TWO_PAIR", "THREE_OF_A_KIND", "STRAIGHT", "FLUSH", "FULL_HOUSE",
    "FOUR_OF_A_KIND", "STRAIGHT_FLUSH", "FIVE_OF_A_KIND", "CATEGORY_NAMES", "JokerRule",
    "category", "category_name", "hand_name", "describe", "kickers", "pack",
    "best_value", "best_five", "eval5", "eval7", "eval_indices",
]

(HIGH_CARD, PAIR, TWO_PAIR, THREE_OF_A_KIND, STRAIGHT, FLUSH, FULL_HOUSE, FOUR_OF_A_KIND, STRAIGHT_FLUSH,
 FIVE_OF_A_KIND) = range(10)
CATEGORY_NAMES: tuple[str, ...] = (
    "high card", "pair", "two pair", "three of a kind", "straight", "flush", "full house",
    "four of a kind", "straight flush", "five of a kind")

# Pai gow ranks A-2-3-4-5 just below A-K-Q-J-T: encoded as a king-high straight plus one in the
# otherwise unused low field, so it beats K-Q-J-T-9 and loses to the ace-high straight.
_WHEEL_SECOND_TAG = 1


class JokerRule(Enum):
    """What a joker may stand for."""

    NONE = "none"  # no joker allowed: a joker in the hand is an error
    BUG = "bug"    # pai gow: an ace, or any card that completes a straight, flush or straight flush
    WILD = "wild"  # any card; four of a kind plus the joker is five of a kind


def pack(cat: int, ranks: Sequence[int]) -> int:
    """The value of a hand of category `cat` whose deciding ranks are `ranks` (most significant first)."""
    v = cat
    for i in range(5):
        v = (v << 4) | (ranks[i] if i < len(ranks) else 0)
    return v


def category(value: int) -> int:
    return value >> 20


def category_name(value: int) -> str:
    return CATEGORY_NAMES[value >> 20]


def kickers(value: int) -> tuple[int, ...]:
    """The deciding ranks packed in a value, most significant first, without the unused fields."""
    out = tuple((value >> s) & 0xF for s in (16, 12, 8, 4, 0))
    return tuple(r for r in out if r >= 2)


def _is_wheel_second(value: int) -> bool:
    return (value >> 20) in (STRAIGHT, STRAIGHT_FLUSH) and (value & 0xFFFF) == _WHEEL_SECOND_TAG


def hand_name(value: int) -> str:
    """The category name, with the royal flush (ace-high straight flush) named as such."""
    if value >> 20 == STRAIGHT_FLUSH and (value >> 16) & 0xF == ACE and not _is_wheel_second(value):
        return "royal flush"
    return category_name(value)


_PLURAL = {2: "twos", 3: "threes", 4: "fours", 5: "fives", 6: "sixes", 7: "sevens", 8: "eights", 9: "nines",
           10: "tens", 11: "jacks", 12: "queens", 13: "kings", 14: "aces"}
_SINGULAR = {2: "two", 3: "three", 4: "four", 5: "five", 6: "six", 7: "seven", 8: "eight", 9: "nine",
             10: "ten", 11: "jack", 12: "queen", 13: "king", 14: "ace"}


# A dealer's words for each category: {p[i]} is the i-th deciding rank in the plural, {s[i]} in the singular.
_WORDS = {FIVE_OF_A_KIND: "five {p[0]}", STRAIGHT_FLUSH: "{s[0]}-high straight flush", FOUR_OF_A_KIND: "four {p[0]}",
          FULL_HOUSE: "full house, {p[0]} over {p[1]}", FLUSH: "{s[0]}-high flush", STRAIGHT: "{s[0]}-high straight",
          THREE_OF_A_KIND: "three {p[0]}", TWO_PAIR: "two pair, {p[0]} and {p[1]}", PAIR: "pair of {p[0]}",
          HIGH_CARD: "{s[0]} high"}


def describe(value: int) -> str:
    """A dealer's words for the hand: 'full house, kings over sevens', 'five-high straight'."""
    cat = value >> 20
    r = kickers(value)
    if _is_wheel_second(value):
        return ("five-high straight flush" if cat == STRAIGHT_FLUSH else "five-high straight") + " (wheel)"
    if cat == STRAIGHT_FLUSH and r[0] == ACE:
        return "royal flush"
    return _WORDS[cat].format(p=[_PLURAL[k] for k in r], s=[_SINGULAR[k] for k in r])


# ---------------------------------------------------------------------------------------------------
# The reference: the best five-card value from rank counts (no flush possible) or from a flush suit.


def _straight_top(ranks: set[int] | frozenset[int]) -> int:
    """The top rank of the best straight among these ranks (5 for the wheel), or 0."""
    for top in range(ACE, 5, -1):
        if top in ranks and top - 1 in ranks and top - 2 in ranks and top - 3 in ranks and top - 4 in ranks:
            return top
    if ACE in ranks and 2 in ranks and 3 in ranks and 4 in ranks and 5 in ranks:
        return 5
    return 0


def best_of_counts(counts: Sequence[int]) -> int:
    """Best value of five or more cards given `counts[rank]` (rank 2..14), when no flush is possible.

    Cards that cannot be in one five-card hand are ignored: a six-card full house plays its best pair.
    """
    present = [r for r in range(ACE, 1, -1) if counts[r]]  # descending
    by_count = {n: [r for r in present if counts[r] == n] for n in (1, 2, 3, 4, 5)}
    if by_count[5]:
        return pack(FIVE_OF_A_KIND, [by_count[5][0]])
    if by_count[4]:
        q = by_count[4][0]
        return pack(FOUR_OF_A_KIND, [q, next(r for r in present if r != q)])
    trips, pairs = by_count[3], by_count[2]
    if trips and (len(trips) > 1 or pairs):
        t = trips[0]
        return pack(FULL_HOUSE, [t, max(trips[1:] + pairs)])
    top = _straight_top(set(present))
    if top:
        return pack(STRAIGHT, [top])
    if trips:
        t = trips[0]
        return pack(THREE_OF_A_KIND, [t] + [r for r in present if r != t][:2])
    if len(pairs) >= 2:
        hi, lo = pairs[0], pairs[1]
        return pack(TWO_PAIR, [hi, lo, next(r for r in present if r != hi and r != lo)])
    if pairs:
        p = pairs[0]
        return pack(PAIR, [p] + [r for r in present if r != p][:3])
    return pack(HIGH_CARD, present[:5])


def best_of_flush(ranks: Iterable[int]) -> int:
    """Best value of five or more distinct ranks of one suit: a straight flush or a flush."""
    ranks = sorted(set(ranks), reverse=True)
    top = _straight_top(set(ranks))
    if top:
        return pack(STRAIGHT_FLUSH, [top])
    return pack(FLUSH, ranks[:5])


# ---------------------------------------------------------------------------------------------------
# Fast tables. With at most seven distinct cards, five of one suit leave too few cards for four of a
# kind or a full house, so a flush, when present, is the best hand and the rank counts decide otherwise.

_SUIT_SHIFT = 32
_FLUSH_TEST = 0x3333  # + 3 in each suit nibble sets its high bit exactly when the suit holds 5..7 cards
_RANK_MASK = (1 << _SUIT_SHIFT) - 1
_PACKED: list[int] = [5 ** (i >> 2) + (1 << (_SUIT_SHIFT + 4 * (i & 3))) for i in range(52)]


def _count_vectors(total: int, ranks: int = 13, cap: int = 4) -> Iterator[tuple[int, ...]]:
    """Every tuple of `ranks` counts, each 0..cap, summing to `total`."""
    if ranks == 1:
        if total <= cap:
            yield (total,)
        return
    for n in range(min(cap, total), -1, -1):
        for rest in _count_vectors(total - n, ranks - 1, cap):
            yield (n,) + rest


def _build_nonflush() -> dict[int, int]:
    # Five-card hands from the reference; a six- or seven-card hand is worth its best hand with one
    # card fewer, so each larger layer is the maximum over its one-card-smaller neighbours.
    layer = {sum(n * 5 ** i for i, n in enumerate(vec)): best_of_counts((0, 0) + vec) for vec in _count_vectors(5)}
    table = dict(layer)
    powers = [5 ** r for r in range(13)]
    for _size in (6, 7):
        bigger: dict[int, int] = {}
        for key, value in layer.items():
            for p in powers:
                if (key // p) % 5 < 4:  # room for one more card of this rank
                    if bigger.get(key + p, -1) < value:
                        bigger[key + p] = value
        table.update(bigger)
        layer = bigger
    return table


def _build_flush() -> list[int]:
    table = [0] * (1 << 13)
    for mask in range(1 << 13):
        if bin(mask).count("1") >= 5:
            table[mask] = best_of_flush(r + 2 for r in range(13) if mask >> r & 1)
    return table


NONFLUSH: dict[int, int] = _build_nonflush()  # base-5 rank-count key -> value, for 5..7 cards
FLUSH_TABLE: list[int] = _build_flush()       # 13-bit rank mask of the flush suit -> value


def _flush_value(idx: Sequence[int], suits: int) -> int:
    for s in range(4):
        if (suits >> (4 * s)) & 0xF >= 5:
            mask = 0
            for i in idx:
                if i & 3 == s:
                    mask |= 1 << (i >> 2)
            return FLUSH_TABLE[mask]
    raise AssertionError("flush test passed without a flush suit")


def eval5(a: int, b: int, c: int, d: int, e: int) -> int:
    """Value of five distinct cards given by index."""
    k = _PACKED[a] + _PACKED[b] + _PACKED[c] + _PACKED[d] + _PACKED[e]
    if ((k >> _SUIT_SHIFT) + _FLUSH_TEST) & 0x8888:
        return FLUSH_TABLE[(1 << (a >> 2)) | (1 << (b >> 2)) | (1 << (c >> 2)) | (1 << (d >> 2)) | (1 << (e >> 2))]
    return NONFLUSH[k & _RANK_MASK]


def eval7(a: int, b: int, c: int, d: int, e: int, f: int, g: int) -> int:
    """Value of the best five of seven distinct cards given by index."""
    k = _PACKED[a] + _PACKED[b] + _PACKED[c] + _PACKED[d] + _PACKED[e] + _PACKED[f] + _PACKED[g]
    suits = k >> _SUIT_SHIFT
    if (suits + _FLUSH_TEST) & 0x8888:
        return _flush_value((a, b, c, d, e, f, g), suits)
    return NONFLUSH[k & _RANK_MASK]


def eval_indices(idx: Sequence[int]) -> int:
    """Value of the best five of 5..7 distinct cards given by index (no joker)."""
    k = 0
    for i in idx:
        k += _PACKED[i]
    suits = k >> _SUIT_SHIFT
    if (suits + _FLUSH_TEST) & 0x8888:
        return _flush_value(idx, suits)
    return NONFLUSH[k & _RANK_MASK]


# ---------------------------------------------------------------------------------------------------
# The public path over Card objects: validation, jokers, pai gow's wheel.


def _wheel_second(value: int) -> int:
    if (value >> 20) in (STRAIGHT, STRAIGHT_FLUSH) and (value >> 16) & 0xF == 5:
        return pack(value >> 20, [13]) | _WHEEL_SECOND_TAG
    return value


def _natural_value(idx: list[int], wheel_second: bool) -> int:
    if not wheel_second:
        return eval_indices(idx)
    if len(idx) == 5:
        return _wheel_second(eval_indices(idx))
    # A hand holding both a wheel and a six-high straight plays the wheel under pai gow ranking.
    return max(_wheel_second(eval5(*five)) for five in combinations(idx, 5))


_BUG_CATEGORIES = (STRAIGHT, FLUSH, STRAIGHT_FLUSH)


def _validate(cards: Sequence[Card], joker: JokerRule) -> tuple[list[int], int]:
    if not 5 <= len(cards) <= 7:
        raise ValueError(f"a poker hand needs 5 to 7 cards, got {len(cards)}")
    idx = []
    for c in cards:
        if not isinstance(c, Card):
            raise ValueError(f"not a card: {c!r}")
        idx.append(c.index)
    if len(set(idx)) != len(idx):
        dup = next(str(c) for c in cards if idx.count(c.index) > 1)
        raise ValueError(f"duplicate card {dup} in one hand")
    jokers = idx.count(JOKER_INDEX)
    if jokers and joker is JokerRule.NONE:
        raise ValueError("a joker is not allowed in this game's hands")
    if jokers > 1:
        raise ValueError("at most one joker per hand")
    return [i for i in idx if i != JOKER_INDEX], jokers


def best_value(cards: Sequence[Card], joker: JokerRule = JokerRule.NONE, wheel_second: bool = False) -> int:
    """Value of the best five-card hand among 5 to 7 cards.

    `joker` says what a joker may stand for; `wheel_second` ranks A-2-3-4-5 as the second-highest
    straight (pai gow poker) instead of the lowest.
    """
    naturals, jokers = _validate(cards, joker)
    if not jokers:
        return _natural_value(naturals, wheel_second)
    present = set(naturals)
    best = -1
    for sub in range(52):
        if sub in present:
            continue
        v = _natural_value(naturals + [sub], wheel_second)
        if joker is JokerRule.BUG and (sub >> 2) + 2 != ACE and (v >> 20) not in _BUG_CATEGORIES:
            continue  # the bug is an ace unless it fills a straight or a flush
        if v > best:
            best = v
    for r in range(2, ACE + 1):
        # The only hand a substitution from the unseen cards cannot make: the joker as a fifth card of
        # a rank whose four cards are all in the hand.
        if sum(1 for i in naturals if (i >> 2) + 2 == r) == 4 and (joker is JokerRule.WILD or r == ACE):
            best = max(best, pack(FIVE_OF_A_KIND, [r]))
    return best


def best_five(cards: Sequence[Card], joker: JokerRule = JokerRule.NONE, wheel_second: bool = False) -> tuple[Card, ...]:
    """The five cards that make the best hand (for display at showdown), best value first among equals."""
    target = best_value(cards, joker, wheel_second)
    for five in combinations(cards, 5):
        if best_value(five, joker, wheel_second) == target:
            return tuple(sorted(five, reverse=True))
    raise AssertionError("no five cards make the best hand")


def value_of(text: str, joker: JokerRule = JokerRule.NONE, wheel_second: bool = False) -> int:
    """Convenience for tests and tools: `value_of('AS KS QS JS TS')`."""
    from controller.cards import parse_cards

    return best_value(parse_cards(text), joker, wheel_second)


def cards_of(indices: Iterable[int]) -> tuple[Card, ...]:
    return tuple(from_index(i) for i in indices)

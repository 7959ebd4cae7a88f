"""An independent, deliberately plain five-card evaluator used only to check the fast one."""

from __future__ import annotations

from collections import Counter
from itertools import combinations
from typing import Sequence

# category numbers as in controller.hands.poker: high card 0 .. straight flush 8
HIGH, PAIR, TWO_PAIR, TRIPS, STRAIGHT, FLUSH, FULL, QUADS, SF = range(9)


def naive5(ranks: Sequence[int], flush: bool) -> tuple[int, tuple[int, ...]]:
    """(category, deciding ranks) of five cards from their ranks and whether they share a suit."""
    counts = Counter(ranks)
    # ranks ordered by how many there are, then by rank: the order in which poker compares them
    grouped = tuple(sorted(counts, key=lambda r: (counts[r], r), reverse=True))
    shape = sorted(counts.values(), reverse=True)
    distinct = sorted(counts, reverse=True)
    straight_top = 0
    if len(distinct) == 5:
        if distinct[0] - distinct[4] == 4:
            straight_top = distinct[0]
        elif distinct == [14, 5, 4, 3, 2]:
            straight_top = 5
    if straight_top and flush:
        return SF, (straight_top,)
    if shape == [4, 1]:
        return QUADS, grouped
    if shape == [3, 2]:
        return FULL, grouped
    if flush:
        return FLUSH, grouped
    if straight_top:
        return STRAIGHT, (straight_top,)
    if shape == [3, 1, 1]:
        return TRIPS, grouped
    if shape == [2, 2, 1]:
        return TWO_PAIR, grouped
    if shape == [2, 1, 1, 1]:
        return PAIR, grouped
    return HIGH, grouped


def naive_best(cards: Sequence[tuple[int, int]]) -> tuple[int, tuple[int, ...]]:
    """Best of every five-card subset of (rank, suit) pairs."""
    return max(naive5([r for r, _ in five], len({s for _, s in five}) == 1) for five in combinations(cards, 5))

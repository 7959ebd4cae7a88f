"""Enumeration helpers for the exact math reports: every k-card set of a deck, and a dense index of each set."""

from __future__ import annotations

import itertools
from functools import cache
from math import comb, lcm
from typing import Mapping

import numpy as np

from controller.games.base import Payout

__all__ = ["combinations", "colex", "lcm_of_pers"]


@cache
def combinations(k: int, n: int = 52) -> np.ndarray:
    """Every k-card set of an n-card deck as a read-only (C(n,k), k) int8 array, each row ascending."""
    rows = np.fromiter(itertools.chain.from_iterable(itertools.combinations(range(n), k)), dtype=np.int8,
                       count=comb(n, k) * k).reshape(-1, k)
    rows.flags.writeable = False
    return rows


def colex(rows: np.ndarray) -> np.ndarray:
    """The colexicographic rank of each ascending row of card indices: a dense index 0..C(52,k)-1 of k-sets."""
    rows = np.asarray(rows, dtype=np.int64)
    out = np.zeros(rows.shape[0], dtype=np.int64)
    for j in range(rows.shape[1]):
        # C(c, j+1) for every card c, as a lookup table (c < 52)
        table = np.array([comb(c, j + 1) for c in range(52)], dtype=np.int64)
        out += table[rows[:, j]]
    return out


def lcm_of_pers(*paytables: Mapping[str, Payout]) -> int:
    """The least stake on which every ratio of these paytables pays whole credits (1 for x:1 tables)."""
    return lcm(*(p.per for table in paytables for p in table.values()))

"""Batch hand evaluation for the math tools: numpy arrays of card indices in, arrays of values out, identical to the scalar evaluators."""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor
from functools import cache

import numpy as np

from controller.hands import poker, three_card

__all__ = ["evaluate", "evaluate3", "check_cards"]

# Each card packs three fields into one int64 so that one gather and one sum give all a hand needs:
#   bits  0..19  base-5 counts of ranks 2..8   (at most 5**7 - 1)
#   bits 20..39  base-5 counts of ranks 9..A   (at most 5**6 - 1)
#   bits 40..55  one 4-bit count per suit
# Splitting the 13-digit rank key in two keeps the lookup a dense 2-D table of ~4.7M entries instead
# of a 5**13 one: each half maps to a compact index first.
_LOW_DIGITS = 7
_HIGH_SHIFT = 20
_SUIT_SHIFT = 40
_FIELD = (1 << 20) - 1


@cache
def _tables() -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, int]:
    rank = np.arange(52) >> 2
    suit = np.arange(52) & 3
    low = np.where(rank < _LOW_DIGITS, 5 ** np.minimum(rank, _LOW_DIGITS), 0)
    high = np.where(rank >= _LOW_DIGITS, 5 ** np.maximum(rank - _LOW_DIGITS, 0), 0)
    pack = (low | (high << _HIGH_SHIFT) | (1 << (_SUIT_SHIFT + 4 * suit))).astype(np.int64)

    keys = np.fromiter(poker.NONFLUSH.keys(), dtype=np.int64, count=len(poker.NONFLUSH))
    values = np.fromiter(poker.NONFLUSH.values(), dtype=np.int32, count=len(poker.NONFLUSH))
    lo, hi = keys % 5 ** _LOW_DIGITS, keys // 5 ** _LOW_DIGITS
    lo_ids, hi_ids = np.unique(lo), np.unique(hi)
    dense_lo = np.full(5 ** _LOW_DIGITS, -1, dtype=np.int64)
    dense_lo[lo_ids] = np.arange(len(lo_ids))
    dense_hi = np.full(5 ** (13 - _LOW_DIGITS), -1, dtype=np.int64)
    dense_hi[hi_ids] = np.arange(len(hi_ids))
    stride = len(hi_ids)
    table = np.full(len(lo_ids) * stride, -1, dtype=np.int32)
    table[dense_lo[lo] * stride + dense_hi[hi]] = values
    flush = np.array(poker.FLUSH_TABLE, dtype=np.int32)
    return pack, dense_lo, dense_hi, table, flush, stride


def check_cards(cards: np.ndarray, sizes: tuple[int, ...]) -> np.ndarray:
    """Validate an (N, k) array of card indices: integer, k allowed, each 0..51, no card twice in a row."""
    cards = np.asarray(cards)
    if cards.ndim != 2 or cards.shape[1] not in sizes:
        raise ValueError(f"expected an (N, k) array of card indices with k in {sizes}, got shape {cards.shape}")
    if not np.issubdtype(cards.dtype, np.integer):
        raise ValueError(f"card indices must be integers, got dtype {cards.dtype}")
    if cards.size and (cards.min() < 0 or cards.max() > 51):
        raise ValueError("card indices must be 0..51 (the batch path takes no joker)")
    ordered = np.sort(cards, axis=1)
    dup = np.nonzero((ordered[:, 1:] == ordered[:, :-1]).any(axis=1))[0]
    if dup.size:
        raise ValueError(f"row {int(dup[0])} holds the same card twice: {cards[dup[0]].tolist()}")
    return cards


def _evaluate_chunk(cards: np.ndarray) -> np.ndarray:
    pack, dense_lo, dense_hi, table, flush, stride = _tables()
    k = pack[cards].sum(axis=1)
    out = table[dense_lo[k & _FIELD] * stride + dense_hi[(k >> _HIGH_SHIFT) & _FIELD]]
    suits = k >> _SUIT_SHIFT
    rows = np.nonzero((suits + 0x3333) & 0x8888)[0]
    if rows.size:
        sub = cards[rows].astype(np.int64)  # small index dtypes would overflow in the shifts below
        s = suits[rows]
        flush_suit = np.zeros(rows.size, dtype=np.int64)
        for suit in range(1, 4):
            flush_suit[((s >> (4 * suit)) & 0xF) >= 5] = suit
        in_suit = (sub & 3) == flush_suit[:, None]
        mask = np.where(in_suit, 1 << (sub >> 2), 0).sum(axis=1)  # distinct ranks: the sum is the OR
        out[rows] = flush[mask]
    return out


def evaluate(cards: np.ndarray, check: bool = True, threads: int | None = None, chunk: int = 1 << 16) -> np.ndarray:
    """Values of the best five of each row's 5..7 cards: an (N, k) integer array in, an (N,) int32 array out.

    Identical to `controller.hands.poker.eval_indices` row by row. `check=False` skips validation
    for inputs already known to be valid (distinct cards 0..51). Chunks run on `threads` threads
    (default: the CPU count); numpy releases the GIL inside the gathers and sums.
    """
    if check:
        cards = check_cards(cards, (5, 6, 7))
    cards = np.asarray(cards)
    _tables()
    n = cards.shape[0]
    if n <= chunk:
        return _evaluate_chunk(cards)
    out = np.empty(n, dtype=np.int32)
    starts = range(0, n, chunk)

    def run(start: int) -> None:
        out[start:start + chunk] = _evaluate_chunk(cards[start:start + chunk])

    workers = threads or os.cpu_count() or 1
    if workers == 1:
        for start in starts:
            run(start)
    else:
        with ThreadPoolExecutor(workers) as pool:
            list(pool.map(run, starts))
    return out


@cache
def _table3() -> np.ndarray:
    # A direct 52**3 table: 140,608 int32 entries, every ordered triple of distinct cards filled.
    table = np.full(52 ** 3, -1, dtype=np.int32)
    for a in range(52):
        for b in range(52):
            if a == b:
                continue
            for c in range(52):
                if c != a and c != b:
                    table[(a * 52 + b) * 52 + c] = three_card.eval3(a, b, c)
    return table


def evaluate3(cards: np.ndarray, check: bool = True) -> np.ndarray:
    """Three-card poker values of an (N, 3) array of card indices; identical to `three_card.eval3`."""
    if check:
        cards = check_cards(cards, (3,))
    cards = np.asarray(cards, dtype=np.int64)
    return _table3()[(cards[:, 0] * 52 + cards[:, 1]) * 52 + cards[:, 2]]

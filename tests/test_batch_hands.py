"""The numpy batch path gives exactly the scalar values: every 5-card hand, every 7-card hand's category count, random 6/7-card sets."""

from __future__ import annotations

from itertools import combinations
from math import comb

import numpy as np
import pytest

from controller.batch import hands as batch
from controller.hands import poker, three_card
from controller.rng import SeededRng, deal_hands


def colex_combinations(n: int, k: int) -> np.ndarray:
    """All k-subsets of range(n) in colexicographic order, so the subsets of range(m) are a prefix."""
    rows = np.arange(n, dtype=np.int8)[:, None]
    for j in range(2, k + 1):
        rows = np.concatenate([
            np.hstack([rows[:comb(top, j - 1)], np.full((comb(top, j - 1), 1), top, dtype=np.int8)])
            for top in range(j - 1, n)])
    return rows


@pytest.mark.slow
@pytest.mark.exhaustive
def test_all_five_card_hands_batch_equals_scalar() -> None:
    hands = np.array(list(combinations(range(52), 5)), dtype=np.int8)
    values = batch.evaluate(hands)
    scalar = np.fromiter((poker.eval5(*h) for h in hands.tolist()), dtype=np.int32, count=len(hands))
    assert np.array_equal(values, scalar)


@pytest.mark.slow
@pytest.mark.exhaustive
def test_all_133784560_seven_card_hands() -> None:
    # The known counts of best-five categories over every seven-card hand, through the batch path.
    sixes = colex_combinations(51, 6)
    counts = np.zeros(10, dtype=np.int64)
    for low in range(46):
        rest = sixes[:comb(51 - low, 6)] + np.int8(low + 1)
        hands = np.hstack([np.full((len(rest), 1), low, dtype=np.int8), rest])
        counts += np.bincount(batch.evaluate(hands, check=False) >> 20, minlength=10)
    assert counts.sum() == comb(52, 7) == 133_784_560
    assert counts.tolist() == [23_294_460, 58_627_800, 31_433_400, 6_461_620, 6_180_020, 4_047_644,
                               3_473_184, 224_848, 41_584, 0]


@pytest.mark.parametrize("size", [5, 6, 7])
def test_random_hands_batch_equals_scalar(size: int) -> None:
    hands = deal_hands(SeededRng(size).numpy(), 100_000, size)
    values = batch.evaluate(hands)
    assert values.dtype == np.int32
    assert values.tolist() == [poker.eval_indices(h) for h in hands.tolist()]
    # threads and chunking change nothing
    assert np.array_equal(batch.evaluate(hands, threads=1, chunk=1000), values)
    assert np.array_equal(batch.evaluate(hands, threads=2, chunk=777), values)


def test_three_card_batch_equals_scalar_on_every_hand() -> None:
    hands = np.array(list(combinations(range(52), 3)), dtype=np.int64)
    shuffled = SeededRng(3).numpy().permuted(hands, axis=1)  # order within a hand does not matter
    values = batch.evaluate3(shuffled)
    assert values.tolist() == [three_card.eval3(*h) for h in hands.tolist()]


@pytest.mark.parametrize("cards, message", [
    (np.zeros((3, 4), dtype=np.int64), "shape"),
    (np.zeros((3, 8), dtype=np.int64), "shape"),
    (np.zeros(5, dtype=np.int64), "shape"),
    (np.array([[0, 1, 2, 3, 52]]), "0..51"),
    (np.array([[0, 1, 2, 3, -1]]), "0..51"),
    (np.array([[0, 1, 2, 3, 3]]), "row 0 holds the same card twice"),
    (np.array([[0.0, 1, 2, 3, 4]]), "integers"),
])
def test_bad_batches(cards: np.ndarray, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        batch.evaluate(cards)


def test_empty_batch() -> None:
    assert batch.evaluate(np.zeros((0, 7), dtype=np.int64)).shape == (0,)

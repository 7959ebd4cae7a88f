"""Randomness: unbiased ranges and uniform shuffles (chi-square at 99%), seeding only on request, clear errors."""

from __future__ import annotations

import itertools
from collections import Counter
from typing import Callable

import numpy as np
import pytest

from controller import rng as rng_module
from controller.rng import Rng, SeededRng, SystemRng, deal_hands, system_rng
from tests.stats import chi_square, chi_square_critical_99

AWKWARD = [3, 37, 100, 2 ** 31 + 1]


def randbelow_fits(draw: Callable[[int], int], n: int, samples: int = 60_000, bins: int = 60) -> bool:
    """Chi-square of `samples` draws in [0, n), binned (by value range, or by value when n <= bins), at 99%."""
    nbins = min(n, bins)
    counts = Counter(draw(n) * nbins // n for _ in range(samples))
    # A bin covers floor or ceil of n/nbins values: its expected count is exact, not assumed equal.
    sizes = [((b + 1) * n + nbins - 1) // nbins - (b * n + nbins - 1) // nbins for b in range(nbins)]
    expected = [samples * s / n for s in sizes]
    return chi_square([counts[b] for b in range(nbins)], expected) < chi_square_critical_99(nbins - 1)


def low_bits_fit(draw: Callable[[int], int], n: int, samples: int = 60_000, modulus: int = 64) -> bool:
    """The same test on v % modulus, where a bad reduction of a huge range would show."""
    modulus = min(modulus, n)
    counts = Counter(draw(n) % modulus for _ in range(samples))
    sizes = [len(range(r, n, modulus)) for r in range(modulus)]
    expected = [samples * s / n for s in sizes]
    return chi_square([counts[r] for r in range(modulus)], expected) < chi_square_critical_99(modulus - 1)


@pytest.mark.parametrize("n", AWKWARD)
def test_seeded_randbelow_is_uniform(n: int) -> None:
    r = SeededRng(1234 + n)
    assert randbelow_fits(r.randbelow, n)
    assert low_bits_fit(r.randbelow, n)


@pytest.mark.parametrize("n", AWKWARD)
def test_system_randbelow_is_uniform(n: int) -> None:
    # The system source is not repeatable, so a 99% test would fail 1 run in 100 by chance; two
    # independent batches both failing happens 1 in 10,000 for a fair source.
    r = system_rng()
    assert randbelow_fits(r.randbelow, n) or randbelow_fits(r.randbelow, n)


def test_the_uniformity_check_catches_modulo_bias() -> None:
    # The classic mistake, a byte reduced modulo 100, over-weights 0..55: the same check must reject it.
    r = SeededRng(7)
    assert not randbelow_fits(lambda n: r.randbits(8) % n, 100)


class ScriptedBits(Rng):
    def __init__(self, values: list[int]) -> None:
        self.values, self.asked = list(values), []

    def randbits(self, k: int) -> int:
        self.asked.append(k)
        return self.values.pop(0)


def test_randbelow_rejects_out_of_range_draws_instead_of_reducing() -> None:
    r = ScriptedBits([99, 64, 37, 36])
    assert r.randbelow(37) == 36  # 99, 64 and 37 are >= 37 and are drawn again, never folded back
    assert r.asked == [6, 6, 6, 6]  # just enough bits for 36


def test_randbelow_edges() -> None:
    r = SeededRng(1)
    assert r.randbelow(1) == 0
    assert {r.randbelow(2) for _ in range(200)} == {0, 1}
    assert all(0 <= r.randbelow(2 ** 64 + 3) < 2 ** 64 + 3 for _ in range(100))
    for bad in (0, -5, 2.5, True, "3"):
        with pytest.raises(ValueError, match="positive integer"):
            r.randbelow(bad)  # type: ignore[arg-type]


def test_randint_and_dice() -> None:
    r = SeededRng(2)
    assert {r.randint(1, 6) for _ in range(500)} == set(range(1, 7))
    assert r.randint(4, 4) == 4
    with pytest.raises(ValueError, match="low <= high"):
        r.randint(5, 4)
    rolls = r.dice(3)
    assert len(rolls) == 3 and all(1 <= d <= 6 for d in rolls)
    with pytest.raises(ValueError):
        r.dice(0)


def test_shuffle_card_positions_are_uniform() -> None:
    # Every card equally likely at every position: the 52 x 52 table of counts after 26,000 shuffles,
    # (52-1)**2 degrees of freedom as for a contingency table with fixed margins.
    r = SeededRng(99)
    n, shuffles = 52, 26_000
    table = np.zeros((n, n), dtype=np.int64)
    cards = list(range(n))
    for _ in range(shuffles):
        r.shuffle(cards)
        table[np.arange(n), cards] += 1
    expected = shuffles / n
    stat = float(((table - expected) ** 2 / expected).sum())
    assert stat < chi_square_critical_99((n - 1) ** 2)


@pytest.mark.parametrize("source", ["seeded", "system"])
def test_shuffle_every_order_of_five_is_equally_likely(source: str) -> None:
    # All 120 orders of five cards, 36,000 shuffles: a biased swap (j over the whole list) fails this.
    def fits(r: Rng) -> bool:
        counts = Counter(tuple(r.shuffled(range(5))) for _ in range(36_000))
        orders = list(itertools.permutations(range(5)))
        return chi_square([counts[o] for o in orders], [300.0] * 120) < chi_square_critical_99(119)

    if source == "seeded":
        assert fits(SeededRng(5))
    else:
        assert fits(system_rng()) or fits(system_rng())


def test_the_order_check_catches_a_naive_shuffle() -> None:
    class Naive(SeededRng):
        def shuffle(self, items: list) -> None:  # type: ignore[override]
            for i in range(len(items)):
                j = self.randbelow(len(items))  # the well-known biased variant
                items[i], items[j] = items[j], items[i]

    r = Naive(5)
    counts = Counter(tuple(r.shuffled(range(5))) for _ in range(36_000))
    orders = list(itertools.permutations(range(5)))
    assert chi_square([counts[o] for o in orders], [300.0] * 120) > chi_square_critical_99(119)


def test_shuffle_errors_and_results() -> None:
    r = SeededRng(3)
    with pytest.raises(ValueError, match="empty"):
        r.shuffle([])
    with pytest.raises(ValueError, match="empty"):
        r.shuffled([])
    with pytest.raises(ValueError, match="empty"):
        r.choice([])
    items = list(range(10))
    out = r.shuffled(items)
    assert sorted(out) == items and items == list(range(10))
    one = [42]
    r.shuffle(one)
    assert one == [42]


def test_seeded_is_repeatable_and_must_be_asked_for() -> None:
    a, b = SeededRng(11), SeededRng(11)
    assert [a.randbelow(1000) for _ in range(50)] == [b.randbelow(1000) for _ in range(50)]
    assert a.shuffled(range(52)) == b.shuffled(range(52))
    assert SeededRng(12).shuffled(range(52)) != SeededRng(11).shuffled(range(52))
    # Pinned: the seeded stream must not change under us, or recorded simulations stop replaying.
    assert SeededRng(2026).shuffled(range(10)) == [2, 9, 6, 3, 0, 8, 7, 4, 5, 1]
    assert SeededRng(2026).randbelow(10 ** 9) == 127904006
    with pytest.raises(ValueError, match="integer"):
        SeededRng("abc")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="integer"):
        SeededRng(None)  # type: ignore[arg-type]
    assert isinstance(system_rng(), SystemRng)
    assert "SeededRng" not in repr(system_rng())
    # The product's only entry points: nothing else in the module hands out generators.
    assert set(rng_module.__all__) == {"Rng", "SystemRng", "SeededRng", "system_rng", "deal_hands"}


def test_deal_hands_rows_are_distinct_and_uniform() -> None:
    hands = deal_hands(SeededRng(8).numpy(), 52_000, 7)
    assert hands.shape == (52_000, 7)
    assert (np.sort(hands, axis=1)[:, 1:] != np.sort(hands, axis=1)[:, :-1]).all()
    counts = np.bincount(hands[:, 0], minlength=52)
    assert chi_square(counts.tolist(), [1000.0] * 52) < chi_square_critical_99(51)
    assert np.array_equal(deal_hands(SeededRng(8).numpy(), 100, 5), deal_hands(SeededRng(8).numpy(), 100, 5))
    with pytest.raises(ValueError):
        deal_hands(SeededRng(8).numpy(), 10, 53)

"""The product's only source of randomness: unbiased ranges and Fisher-Yates shuffles over secrets, or a seeded stream for simulation and tests."""

from __future__ import annotations

import random
import secrets
from abc import ABC, abstractmethod
from typing import TYPE_CHECKING, MutableSequence, Sequence, TypeVar

if TYPE_CHECKING:  # numpy is only needed by simulations; the rules never import it
    import numpy

__all__ = ["Rng", "SystemRng", "SeededRng", "system_rng", "deal_hands"]

T = TypeVar("T")


class Rng(ABC):
    """Every draw reduces to `randbits`; ranges use rejection sampling, so no value is favoured (no modulo bias)."""

    @abstractmethod
    def randbits(self, k: int) -> int:
        """k uniformly random bits as a non-negative int (0 when k == 0)."""

    def randbelow(self, n: int) -> int:
        """Uniform integer in [0, n)."""
        if not isinstance(n, int) or isinstance(n, bool) or n < 1:
            raise ValueError(f"randbelow needs a positive integer bound, got {n!r}")
        k = (n - 1).bit_length()
        while True:
            # Draw just enough bits to cover n-1 and reject the overflow: every value in [0, n) has the
            # same 1/2**k chance per try, and each try succeeds with probability > 1/2.
            r = self.randbits(k)
            if r < n:
                return r

    def randint(self, low: int, high: int) -> int:
        """Uniform integer in [low, high], both ends included (a die is randint(1, 6))."""
        if high < low:
            raise ValueError(f"randint needs low <= high, got {low} > {high}")
        return low + self.randbelow(high - low + 1)

    def choice(self, items: Sequence[T]) -> T:
        if not items:
            raise ValueError("cannot choose from an empty sequence")
        return items[self.randbelow(len(items))]

    def shuffle(self, items: MutableSequence[T]) -> None:
        """Fisher-Yates (Durstenfeld) in place: each of the n! orders equally likely."""
        n = len(items)
        if n == 0:
            raise ValueError("cannot shuffle an empty list: there are no cards to shuffle")
        for i in range(n - 1, 0, -1):
            j = self.randbelow(i + 1)
            items[i], items[j] = items[j], items[i]

    def shuffled(self, items: Sequence[T]) -> list[T]:
        """A shuffled copy of `items`."""
        out = list(items)
        self.shuffle(out)
        return out

    def dice(self, count: int = 1, sides: int = 6) -> tuple[int, ...]:
        """Roll `count` dice of `sides` sides."""
        if count < 1 or sides < 2:
            raise ValueError(f"need at least one die of two or more sides, got {count}d{sides}")
        return tuple(1 + self.randbelow(sides) for _ in range(count))

    def numpy(self) -> numpy.random.Generator:
        """A numpy Generator for batch simulation (math reports), seeded from this stream."""
        import numpy as np

        return np.random.Generator(np.random.PCG64(self.randbits(128)))


class SystemRng(Rng):
    """Production randomness: the operating system's CSPRNG through `secrets` (os.urandom)."""

    def randbits(self, k: int) -> int:
        return secrets.randbits(k) if k else 0

    def __repr__(self) -> str:
        return "SystemRng()"


class SeededRng(Rng):
    """Deterministic stream for simulation and tests only. Never used unless asked for by name with a seed.

    The bits come from Python's Mersenne Twister seeded with an integer, whose output is stable across
    Python versions; every range and shuffle is computed by the same code as the production Rng.
    """

    def __init__(self, seed: int) -> None:
        if not isinstance(seed, int) or isinstance(seed, bool):
            raise ValueError(f"a simulation seed must be an integer, got {seed!r}")
        self.seed = seed
        self._mt = random.Random(seed)

    def randbits(self, k: int) -> int:
        return self._mt.getrandbits(k) if k else 0

    def __repr__(self) -> str:
        return f"SeededRng({self.seed})"


_SYSTEM = SystemRng()


def system_rng() -> SystemRng:
    """The production generator."""
    return _SYSTEM


def deal_hands(generator: numpy.random.Generator, count: int, size: int, deck_size: int = 52) -> numpy.ndarray:
    """`count` independent deals of `size` distinct cards from a full deck of `deck_size`, as an int8 array.

    For batch simulations: each row is the first `size` cards of its own uniformly shuffled deck.
    """
    import numpy as np

    if not 1 <= size <= deck_size <= 127:
        raise ValueError(f"cannot deal {size} cards from a deck of {deck_size}")
    if count < 0:
        raise ValueError(f"cannot deal {count} hands")
    decks = np.broadcast_to(np.arange(deck_size, dtype=np.int8), (count, deck_size))
    return generator.permuted(decks, axis=1)[:, :size].copy()

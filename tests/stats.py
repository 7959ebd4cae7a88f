"""Small statistics helpers for tests: chi-square statistics and critical values without scipy."""

from __future__ import annotations

import math
from typing import Sequence

Z_99 = 2.3263478740408408  # standard normal quantile at 0.99


def chi_square(observed: Sequence[int], expected: Sequence[float]) -> float:
    return sum((o - e) ** 2 / e for o, e in zip(observed, expected, strict=True))


def chi_square_critical_99(df: int) -> float:
    """The 99% quantile of chi-square with `df` degrees of freedom (Wilson-Hilferty; within 0.5% for df >= 2)."""
    h = 2.0 / (9.0 * df)
    return df * (1.0 - h + Z_99 * math.sqrt(h)) ** 3

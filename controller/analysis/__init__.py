"""Game math reports behind `croupier math GAME`: exact enumeration or seeded simulation, one module per game.

A module `controller/analysis/<game_module>.py` defines

    def analyse(rules, rounds: int | None, seed: int, say) -> dict

returning `report(...)`'s shape; a simulation also takes `progress=`, a `progress(done, total)` callback it calls
as rounds are done (`croupier math` passes a progress bar, controller/progress.py). It may use numpy and
`controller.batch`; it must settle exactly as the game engine does (each module has a test that steps the engine
on the same seeded cards).
"""

from __future__ import annotations

import math
from typing import Any, Mapping

__all__ = ["report", "mean_and_ci95"]


def report(game: str, rules: Mapping[str, Any], method: str, rounds: int | None,
           probabilities: Mapping[str, float], house_edge: Mapping[str, float],
           ci95: Mapping[str, float] | None, **extra: Any) -> dict[str, Any]:
    """The JSON shape of every math report (issue: Table games I). House edge is a fraction of the
    initial wager, negative when the player loses."""
    if method not in ("exact", "simulation"):
        raise ValueError(f"method is 'exact' or 'simulation', got {method!r}")
    if (method == "simulation") != (ci95 is not None):
        raise ValueError("a simulation reports ci95 half-widths; an exact report has none")
    return {"game": game, "rules": dict(rules), "method": method, "rounds": rounds,
            "probabilities": dict(probabilities), "house_edge": dict(house_edge),
            "ci95": dict(ci95) if ci95 is not None else None, **extra}


def mean_and_ci95(total: float, total_sq: float, n: int) -> tuple[float, float]:
    """Mean and 95% confidence half-width of a per-round result from its sum and sum of squares."""
    if n < 2:
        raise ValueError("a confidence interval needs at least two rounds")
    mean = total / n
    var = max(total_sq / n - mean * mean, 0.0) * n / (n - 1)
    return mean, 1.959963984540054 * math.sqrt(var / n)

"""Seeded simulations through the vectorised path (proven equal to spin() in test_slots_batch) agree with the exact PAR sheets: a short run by default, at least 10,000,000 spins per title with --long."""

from __future__ import annotations

from statistics import NormalDist

import pytest

from controller.analysis.par import simulate_sheet
from controller.slots import all_titles, get_title

TITLES = sorted(t.id for t in all_titles())
# Extra runs: the other paytables of Operation M.Y.O.W. and the "never cash in" policy of It's Good to be Bad,
# under which its 29-loss progressive can be won.
EXTRA = [("operation-myow", {"paytable": k}) for k in range(1, 5)] + [("its-good-to-be-bad", {"cash_in_at": 0})]
RUNS = [(t, {}) for t in TITLES] + EXTRA


def _z_bound(checks: int, family: float = 0.05) -> float:
    """Two-sided bound on z so that all `checks` runs pass together with probability 1 - family (Bonferroni)."""
    return NormalDist().inv_cdf(1 - family / (2 * checks))


def _agrees(sheet: dict, bound: float) -> None:
    assert abs(sheet["z"]) < bound, sheet
    se_hit = (sheet["exact_hit_frequency"] * (1 - sheet["exact_hit_frequency"]) / sheet["spins"]) ** 0.5
    assert abs(sheet["hit_frequency"] - sheet["exact_hit_frequency"]) < 5 * se_hit, sheet
    expected = sheet["progressive_expected"]
    assert abs(sheet["progressive_hits"] - expected) <= 4 * expected ** 0.5 + 3, sheet


@pytest.mark.slow
@pytest.mark.parametrize("title_id,options", RUNS, ids=[f"{t}{'-' + str(o) if o else ''}" for t, o in RUNS])
def test_a_short_simulation_agrees_with_the_par_sheet(title_id: str, options: dict) -> None:
    sheet = simulate_sheet(get_title(title_id), 300_000, seed=20261121, machines=100, **options)
    assert sheet["spins"] >= 300_000
    _agrees(sheet, _z_bound(len(RUNS), family=0.001))


@pytest.mark.long
@pytest.mark.parametrize("title_id,options", RUNS, ids=[f"{t}{'-' + str(o) if o else ''}" for t, o in RUNS])
def test_ten_million_spins_agree_with_the_par_sheet(title_id: str, options: dict) -> None:
    sheet = simulate_sheet(get_title(title_id), 10_000_000, seed=1, machines=200, **options)
    print(f"\n{title_id} {options}: simulated RTP {sheet['rtp']:.5f} +- {sheet['ci95']:.5f} (95%), exact "
          f"{sheet['exact_rtp']:.5f}, z {sheet['z']:+.2f}; hit {sheet['hit_frequency']:.5f} / "
          f"{sheet['exact_hit_frequency']:.5f}; volatility {sheet['volatility']:.3f} / {sheet['exact_volatility']:.3f}; "
          f"progressive {sheet['progressive_hits']} / {sheet['progressive_expected']:.2f} expected")
    assert sheet["spins"] >= 10_000_000
    # All runs together within 95%: each within its Bonferroni-corrected interval.
    _agrees(sheet, _z_bound(len(RUNS)))
    assert sheet["volatility"] == pytest.approx(sheet["exact_volatility"], rel=0.1)

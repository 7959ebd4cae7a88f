"""Bets on the layout: limits, removals and refusals with readable reasons."""

from __future__ import annotations

import pytest

from controller.games.base import IllegalEvent, PlaceBet, RemoveBet, RulesError
from controller.games.bets import Bets, Limit, check_limits

LIMITS = {"ante": Limit(5, 100), "pair_plus": Limit(1, 25)}


def test_place_build_up_and_remove() -> None:
    bets, eff = Bets().place(PlaceBet(2, "ante", 5), 7, LIMITS)
    bets, eff = bets.place(PlaceBet(2, "ante", 5), 7, LIMITS)
    assert bets.get(2, "ante") == 10 and (eff.stake, eff.delta) == (10, 5)
    bets, eff = bets.remove(RemoveBet(2, "ante", 4), 7, LIMITS)
    assert bets.get(2, "ante") == 6 and eff.delta == -4
    bets, _ = bets.place(PlaceBet(1, "pair_plus", 2), 7, LIMITS)
    assert bets.spots() == (1, 2) and bets.total == 8 and bets.spot_total(2) == 6
    assert bets.json() == [{"spot": 1, "box": "pair_plus", "amount": 2}, {"spot": 2, "box": "ante", "amount": 6}]
    bets, _ = bets.remove(RemoveBet(1, "pair_plus", 2), 7, LIMITS)
    assert bets.spots() == (2,)


@pytest.mark.parametrize("event, message", [
    (PlaceBet(8, "ante", 5), "no spot 8"),
    (PlaceBet(0, "ante", 5), "no spot 0"),
    (PlaceBet(1, "main", 5), "no box 'main'"),
    (PlaceBet(1, "ante", 0), "above zero"),
    (PlaceBet(1, "ante", -5), "above zero"),
    (PlaceBet(1, "ante", 101), "over the table maximum of 100"),
    (RemoveBet(1, "ante", 1), "holds 0"),
])
def test_refusals(event: PlaceBet | RemoveBet, message: str) -> None:
    bets = Bets()
    op = bets.place if isinstance(event, PlaceBet) else bets.remove
    with pytest.raises(IllegalEvent, match=message):
        op(event, 7, LIMITS)  # type: ignore[arg-type]


def test_minimum_checked_at_close() -> None:
    bets = Bets().with_amount(3, "ante", 4)   # a stake set by other means than place (the guard at close)
    with pytest.raises(IllegalEvent, match="spot 3 ante: 4 is under the table minimum of 5"):
        bets.check_minimums(LIMITS)


def test_a_bet_under_the_minimum_is_refused_when_placed() -> None:
    """Issue 43 point 20: a bet under the table minimum is refused by place_bet itself, with the reason."""
    with pytest.raises(IllegalEvent, match=r"^spot 3 ante: 4 is under the table minimum of 5$"):
        Bets().place(PlaceBet(3, "ante", 4), 7, LIMITS)
    bets, _ = Bets().place(PlaceBet(3, "ante", 5), 7, LIMITS)
    bets, _ = bets.place(PlaceBet(3, "ante", 1), 7, LIMITS)          # raised, still within the limits
    assert bets.get(3, "ante") == 6
    with pytest.raises(IllegalEvent, match=r"^spot 3 ante: 101 would be over the table maximum of 100$"):
        bets.place(PlaceBet(3, "ante", 95), 7, LIMITS)
    with pytest.raises(IllegalEvent, match=r"^spot 3 ante: taking back 2 would leave 4, under the table minimum of "
                                           r"5 \(take back all 6, or at most 1\)$"):
        bets.remove(RemoveBet(3, "ante", 2), 7, LIMITS)
    left, _ = bets.remove(RemoveBet(3, "ante", 1), 7, LIMITS)
    assert left.get(3, "ante") == 5
    gone, _ = bets.remove(RemoveBet(3, "ante", 6), 7, LIMITS)
    assert not gone


def test_limit_config_errors() -> None:
    with pytest.raises(ValueError):
        Limit(0, 5)
    with pytest.raises(ValueError):
        Limit(10, 5)
    with pytest.raises(RulesError, match="no such box main"):
        check_limits({"main": Limit()}, ("ante",))
    with pytest.raises(RulesError, match="no limit for box play"):
        check_limits({"ante": Limit()}, ("ante", "play"))

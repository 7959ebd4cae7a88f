"""A spin whose feature pays (an award on the spin itself, not a pick) is folded: its credits are won and the feature's meter counts it."""

from __future__ import annotations

from controller.cabinetstate import new_state, step
from controller.rng import SeededRng
from controller.slots.catalog import get_title
from controller.slots.engine import draw_stops
from controller.slots.title import Bet


def test_a_spin_that_fills_the_piggy_bank_counts_the_award_on_the_feature_meter() -> None:
    title = get_title("bank-on-it")
    state = new_state("cab-1", title, title.denominations[0])
    state, _ = step(state, {"kind": "credit", "credits": 100_000, "source": "operator"})
    bet = Bet(title.max_coins, 1)
    state, _ = step(state, {"kind": "bet", "coins": bet.coins, "lines": bet.lines})
    rng = SeededRng(1)  # seed 1 fills the piggy bank on game 289, a spin no bonus pick interrupts before it
    awarded = 0
    for game in range(1, 290):
        stops = draw_stops(state.slot, rng)
        state, effects = step(state, {"kind": "spin", "game": game, "stops": list(stops), "bet": bet.to_json()})
        awarded += sum(a.credits for e in effects for a in getattr(getattr(e, "outcome", None), "awards", ()))
    assert awarded == 210
    assert dict(state.meters.features) == {"piggy_bank": (1, 210)}

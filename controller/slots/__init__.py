"""Slot math for 3-reel cabinets: titles as data, the pure spin, features with persistent meters.

What the cabinet runtime calls (every input below is journaled before it takes effect; replaying the
inputs from a journaled state rebuilds the same states and outcomes):

    title = get_title("bank-on-it")             # or load_title(path); title.bets(), title.max_bet,
                                                # title.denominations (cents per credit)
    state = new_state(title)                     # or State.from_json(journaled) (refused if the file changed)
    stops = draw_stops(state, rng)               # rng: controller.rng (system_rng() in production)
    state, outcome = spin(state, stops, bet)     # outcome.cost / .won in credits, .line_wins, .awards,
                                                 # .meters (every change), .free_spins_left, .pending
    # a pick bonus (El Toro's bullfight) waits in state.pending: no spin until it is settled
    draw = draw_pick(state, rng); state, outcome = pick(state, "matador" | "bull", draw)
    state, outcome = cash_in(state)              # It's Good to be Bad's Cash In! button
    state, outcome = next_paytable(state)        # Operation M.Y.O.W.'s Next Paytable (select_paytable(state, i))

While `state.free` is set the next spins are free, at `state.free.bet`. Meters are credits of the
denomination played, so a cabinet keeps one state per title and denomination. A system-wide
progressive (title.progressive: reset_cents, contribution_bp; reset_credits(denomination)) is flagged by
`outcome.progressive_hit` and paid by the runtime from its own meter, which each qualifying spin feeds
with `outcome.progressive_contribution` whole credits (the fraction is carried in the state). Hit rates,
returns and reset values per denomination are in the PAR sheet (controller.analysis.par.par_sheet).
"""

from controller.slots.catalog import all_titles, get_title, load_title, title_ids
from controller.slots.engine import (
    Award, FreeSpins, LineWin, MeterChange, Outcome, State, cash_in, draw_pick, draw_stops, new_state, next_paytable,
    pick, select_paytable, spin,
)
from controller.slots.title import Bet, SlotError, Title, TitleError

__all__ = [
    "Award", "Bet", "FreeSpins", "LineWin", "MeterChange", "Outcome", "SlotError", "State", "Title", "TitleError",
    "all_titles", "cash_in", "draw_pick", "draw_stops", "get_title", "load_title", "new_state", "next_paytable",
    "pick", "select_paytable", "spin", "title_ids",
]

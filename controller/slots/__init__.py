"""Slot math for 3-reel cabinets: titles as data, the pure spin, features with persistent meters.

The cabinet runtime calls, in order:
    title = get_title("bank-on-it")            # or load_title(path); title.bets(), title.max_bet
    state = new_state(title)                    # or State.from_json(journaled, title)
    stops = draw_stops(state, rng)              # rng from controller/rng.py; journal (stops, bet) first
    state, outcome = spin(state, stops, bet)    # outcome.cost, .won, .line_wins, .awards, .meters, ...
    if state.pending: choice from the player; draw = draw_pick(state, rng); state, o = pick(state, choice, draw)
    state, o = cash_in(state)                   # It's Good to be Bad's Cash In! button
    state, o = next_paytable(state)             # Operation M.Y.O.W.'s Next Paytable button
While `state.free` is set, the next spins are free and must use `state.free.bet`.
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

"""Hold'em's betting arithmetic: the streets, the betting structures, the bet to call, the smallest full raise,
re-opening (TDA rule 47) and the options of the player to act (the rules are in texas_holdem's docstring)."""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from controller.games.texas_holdem import State

__all__ = ["PREFLOP", "FLOP", "TURN", "RIVER", "Structure", "Options", "call_level", "full_raise", "reopened",
           "options"]

PREFLOP, FLOP, TURN, RIVER = range(4)


class Structure(enum.Enum):
    NO_LIMIT = "no_limit"
    POT_LIMIT = "pot_limit"
    FIXED_LIMIT = "fixed_limit"


def call_level(state: State) -> int:
    """The bet to call this round: the highest bet, and preflop at least the full big blind."""
    top = max(state.street_bets)
    return max(top, state.rules.big_blind) if state.street == PREFLOP else top


def full_raise(state: State) -> int:
    """The smallest full bet or raise now: the bet size in fixed limit, else the last full raise (at least
    the big blind)."""
    r = state.rules
    if r.structure is Structure.FIXED_LIMIT:
        return r.bet_size(state.street)
    return max(state.last_full, r.big_blind)


def reopened(state: State, p: int) -> bool:
    """May player `p` raise as far as re-opening goes (TDA rule 47)? Yes until he has acted since the last full
    bet or raise; after that only when he faces at least a full raise in all (short all-ins add up), or in
    fixed limit at least half a bet."""
    if not state.acted[p]:
        return True
    owe = call_level(state) - state.street_bets[p]
    if state.rules.structure is Structure.FIXED_LIMIT:
        return 2 * owe >= full_raise(state)
    return owe >= full_raise(state)


@dataclass(frozen=True)
class Options:
    """What the player to act may do: `min_to`/`max_to` bound a bet or raise (the round's bet after it)."""

    player: int
    spot: int
    actions: tuple[str, ...]
    call_to: int       # the player's bet after calling (all in when short)
    min_to: int = 0
    max_to: int = 0
    all_in_to: int = 0

    @property
    def raise_name(self) -> str | None:
        return next((a for a in self.actions if a in ("bet", "raise")), None)


def options(state: State) -> Options:
    """The legal actions and amounts of the player to act (in Phase.ACTING)."""
    r = state.rules
    p = state.queue[0]
    spot = state.players[p]
    stack, bet = state.stack(spot), state.street_bets[p]
    level = call_level(state)
    owe = max(0, level - bet)
    all_in_to = bet + stack
    actions = ["fold", "call"] if owe else ["check"]
    top = max(state.street_bets)
    responders = any(i != p and not state.folded[i] and state.stack(state.players[i]) > 0
                     and state.stack(state.players[i]) + state.street_bets[i] > top for i in range(len(state.players)))
    cap = r.raise_cap + (0 if state.street == PREFLOP else 1)
    can_raise = (stack > owe and responders
                 and (r.structure is not Structure.FIXED_LIMIT or state.raises < cap) and reopened(state, p))
    min_to = max_to = 0
    if can_raise:
        min_to = level + full_raise(state)
        if r.structure is Structure.NO_LIMIT:
            max_to = all_in_to
        elif r.structure is Structure.POT_LIMIT:
            max_to = level + sum(state.put) + owe
        else:
            max_to = min_to
        min_to, max_to = min(min_to, all_in_to), min(max_to, all_in_to)
        actions.append("bet" if top == 0 else "raise")
    if stack and (stack <= owe or (can_raise and all_in_to <= max_to)):
        actions.append("all_in")
    return Options(p, spot, tuple(actions), bet + min(owe, stack), min_to, max_to, all_in_to)

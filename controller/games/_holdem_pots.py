"""Hold'em's pots and settlement: main and side pots from each seat's chips in, split pots and their odd chips, the
rake, and the order of the showdown (the rules are in texas_holdem's docstring)."""

from __future__ import annotations

import enum
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Sequence

from controller.games.base import BoxResult, Settlement
from controller.hands import poker

if TYPE_CHECKING:
    from controller.games.texas_holdem import State

__all__ = ["OddChip", "Pot", "pots", "split", "settle", "showdown_order", "hand_value"]


class OddChip(enum.Enum):
    LEFT_OF_BUTTON = "left_of_button"
    HIGH_CARD = "high_card"


@dataclass(frozen=True)
class Pot:
    name: str
    amount: int
    eligible: tuple[int, ...]          # players (indices) in for it, not folded
    shares: tuple[int, ...]            # each player's chips in it


def pots(put: Sequence[int], folded: Sequence[bool]) -> list[Pot]:
    """Main and side pots from each player's chips in the pot: one per all-in level, consecutive levels
    with the same players merged (a folded player's chips count but win nothing)."""
    found: list[Pot] = []
    prev = 0
    for level in sorted(set(a for a in put if a > 0)):
        shares = tuple(min(a, level) - min(a, prev) for a in put)
        eligible = tuple(i for i, a in enumerate(put) if a >= level and not folded[i])
        if found and found[-1].eligible == eligible:
            last = found.pop()
            shares = tuple(x + y for x, y in zip(last.shares, shares))
        found.append(Pot("", sum(shares), eligible, shares))
        prev = level
    return [replace(p, name="main_pot" if k == 0 else f"side_pot_{k}") for k, p in enumerate(found)]


def _rake(state: State) -> int:
    """The house's rake on this hand (see the module docstring of texas_holdem)."""
    r = state.rules
    if r.no_flop_no_drop and len(state.board) < 3:
        return 0
    return min(r.rake_cap, sum(state.put) * r.rake_percent // 100)


def _odd_chip_order(state: State, winners: list[int]) -> list[int]:
    if state.rules.odd_chip is OddChip.HIGH_CARD:
        return sorted(winners, key=lambda i: max(state.hole(state.players[i])), reverse=True)
    return winners   # players are in order from the first seat left of the button


def split(amount: int, order: Sequence[int]) -> dict[int, int]:
    """Equal shares of `amount` among `order`; the odd chips one each, in that order (no one gets two)."""
    share, odd = divmod(amount, len(order))
    return {i: share + (1 if k < odd else 0) for k, i in enumerate(order)}


def hand_value(state: State, i: int) -> int:
    """Player `i`'s best five of his hole cards and the board, as `poker.eval7` ranks it."""
    return poker.eval7(*(c.index for c in state.hole(state.players[i]) + state.board))


def settle(state: State) -> Settlement:
    """Every seat's chips in every pot: the winners' shares less the rake (see the module docstring)."""
    live = state.live()
    showdown = len(live) > 1
    values = {i: hand_value(state, i) for i in live} if showdown else {}
    rake_left = _rake(state)
    results: list[BoxResult] = []
    for pot in pots(state.put, state.folded):
        rake = min(rake_left, pot.amount)
        rake_left -= rake
        if not showdown:
            winners = live
        else:
            best = max(values[i] for i in pot.eligible)
            winners = [i for i in pot.eligible if values[i] == best]
        order = _odd_chip_order(state, winners)
        shares, fees = split(pot.amount - rake, order), split(rake, order)
        odd = (pot.amount - rake) % len(winners)
        spots = ", ".join(f"spot {state.players[i]}" for i in winners)
        how = f"{poker.describe(values[winners[0]])}" if showdown and len(pot.eligible) > 1 else "uncontested"
        chips_to = ", ".join(f"spot {state.players[i]}" for i in order[:odd])
        to = f" split {len(winners)} ways ({spots}){f', odd chips to {chips_to}' if odd else ''}" \
            if len(winners) > 1 else f" to spot {state.players[winners[0]]}"
        taken = f", rake {rake}" if rake else ""
        words = pot.name.replace("_", " ")
        for i, chips in enumerate(pot.shares):
            if not chips:
                continue
            spot = state.players[i]
            if i in winners:
                outcome = "win" if len(winners) == 1 else "split"
                results.append(BoxResult(spot, pot.name, chips, outcome, shares[i] + fees[i], fees[i], shares[i],
                                         f"{words} {pot.amount}: {how}{to}{taken}"))
            else:
                outcome = "fold" if state.folded[i] else "lose"
                why = "folded" if state.folded[i] else f"loses to {how}"
                results.append(BoxResult(spot, pot.name, chips, outcome, 0, 0, 0, f"{words} {pot.amount}: {why}"))
    return Settlement(tuple(results))


def showdown_order(state: State) -> list[int]:
    """Spots in the order their hands are shown: the river's last bettor first, else the first seat left of
    the button, then clockwise."""
    live = state.live()
    start = state.river_aggressor if state.river_aggressor in live else live[0]
    n = len(state.players)
    return [state.players[(start + k) % n] for k in range(n) if (start + k) % n in live]

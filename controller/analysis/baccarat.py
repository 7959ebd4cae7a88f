"""Baccarat's math report, exact for any number of decks: every ordered sequence of six card values from the
shoe, weighted by how many card sequences give it, goes through the vectorised coup (`coup`).

A coup uses at most six cards and its result is a function of the first six cards out of the shoe, so
summing integer weights (falling products of the counts left) over all 10**6 value sequences counts every
ordered deal exactly. `coup` is the fast path the tests hold to the engine, round by round.
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any, Callable

import numpy as np

from controller.analysis import report
from controller.games.baccarat import Rules

__all__ = ["analyse", "coup", "exact_counts", "box_net", "exact_stake", "BANKER_DRAWS"]

# BANKER_DRAWS[banker points, player's third card] for a player who drew (the tableau, as in the engine)
BANKER_DRAWS = np.zeros((10, 10), bool)
BANKER_DRAWS[0:3, :] = True
BANKER_DRAWS[3, [0, 1, 2, 3, 4, 5, 6, 7, 9]] = True
BANKER_DRAWS[4, 2:8] = True
BANKER_DRAWS[5, 4:8] = True
BANKER_DRAWS[6, 6:8] = True


def coup(values: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Rows of the first six card values out of the shoe (player, banker, player, banker, then third cards) ->
    (player points, banker points, cards used) per row."""
    v = np.asarray(values, dtype=np.int64)
    player = (v[:, 0] + v[:, 2]) % 10
    banker = (v[:, 1] + v[:, 3]) % 10
    natural = (player >= 8) | (banker >= 8)
    player_draws = ~natural & (player <= 5)
    third = v[:, 4]
    banker_draws = ~natural & np.where(player_draws, BANKER_DRAWS[banker, third], banker <= 5)
    banker_card = np.where(player_draws, v[:, 5], v[:, 4])
    player_final = np.where(player_draws, (player + third) % 10, player)
    banker_final = np.where(banker_draws, (banker + banker_card) % 10, banker)
    return player_final, banker_final, 4 + player_draws + banker_draws


def exact_counts(decks: int) -> tuple[np.ndarray, int]:
    """counts[player points, banker points]: the number of ordered six-card deals from the shoe ending so,
    and their total (decks * 52 falling to decks * 52 - 5)."""
    per_value = np.array([16 * decks] + [4 * decks] * 9, np.int64)  # value 0: tens and faces
    grid = np.indices((10,) * 6).reshape(6, -1).T                   # all 10**6 value sequences
    weight = np.ones(len(grid), np.int64)
    for i in range(6):
        left = per_value[grid[:, i]] - (grid[:, :i] == grid[:, [i]]).sum(axis=1)
        weight *= np.maximum(left, 0)
    player, banker, _ = coup(grid)
    counts = np.zeros(100, np.int64)
    np.add.at(counts, player * 10 + banker, weight)
    total = 1
    for k in range(6):
        total *= 52 * decks - k
    if int(counts.sum()) != total:  # int64 is exact up to 8 decks; this guards the arithmetic
        raise ArithmeticError(f"the enumeration counted {int(counts.sum())} deals, not {total}")
    return counts.reshape(10, 10), total


def box_net(rules: Rules, box: str, player: np.ndarray, banker: np.ndarray, stake: int) -> np.ndarray:
    """The player's net in credits on a `box` bet of `stake` for each coup result, settled as the engine
    settles it (commission and payouts rounded per the rules)."""
    player, banker = np.asarray(player), np.asarray(banker)
    if box == "tie":
        return np.where(player == banker, rules.tie_pays.on(stake), -stake)
    if box == "player":
        return np.sign(player - banker) * stake
    if rules.no_commission:
        win = np.where(banker == 6, rules.banker_six_pays.on(stake), stake)
    else:
        win = np.full(np.shape(banker), stake - rules.commission_rounding.divide(stake * rules.commission_percent, 100))
    return np.where(banker > player, win, np.where(banker < player, -stake, 0))


def exact_stake(rules: Rules) -> int:
    """A stake on which every payout and the commission are whole credits, so no rounding enters the edge."""
    commission_unit = 100 // math.gcd(100, rules.commission_percent) if rules.commission_percent else 1
    return math.lcm(commission_unit, rules.tie_pays.per, rules.banker_six_pays.per)


def analyse(rules: Rules, rounds: int | None, seed: int, say: Callable[[str], None]) -> dict[str, Any]:
    say(f"baccarat: enumerating every deal of {rules.decks} deck(s)")
    counts, total = exact_counts(rules.decks)
    player, banker = np.indices((10, 10))
    stake = exact_stake(rules)
    edges = {box: Fraction(int((counts * box_net(rules, box, player, banker, stake)).sum()), total * stake)
             for box in ("banker", "player", "tie")}
    probabilities = {"banker": int(np.triu(counts, 1).sum()) / total,   # counts[player, banker]: banker higher
                     "player": int(np.tril(counts, -1).sum()) / total,
                     "tie": int(np.trace(counts)) / total,
                     "banker_wins_on_6": int(counts[:6, 6].sum()) / total}
    note = (f"commission at exactly {rules.commission_percent}% (on whole credits it is rounded "
            f"{rules.commission_rounding.value}: a given stake may pay up to a credit less per winning banker bet)")
    return report("baccarat", rules.to_json(), "exact", None, probabilities,
                  {name: float(edge) for name, edge in edges.items()}, None,
                  deals=total, commission_note=None if rules.no_commission else note)

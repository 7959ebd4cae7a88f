"""Pai gow poker math by seeded simulation: the house edge of a player and of a player-banker when every hand is set by the house way, with 95% intervals.

Method. Each simulated round is a fresh shuffle of the 53 cards: the first 49 make seven hands of seven
(the dealer's, then six players'). Every hand is set by the configured house way
(`controller/games/_house_way.py`) and settled as the engine settles it: each hand against the banker's
like hand, copies to the banker, both won pays 1:1 less the commission, one each pushes.

- `player`: a player's bet against the house-banked dealer (mean over the six players of a round).
- `banker`: a player who banks against one other player, both by the house way: the banker wins what
  the player loses, pays what the player wins and pays the commission on a net win (the same seven
  cards: the dealer's hand is the banker's).
- `banker_six_players`: the same bank against all six players of the round, netted before the
  commission, per unit of action covered.
House edges are per unit bet from the bettor's side (negative: the bettor loses), as `report` wants.
The commission is computed on a stake on which it is exact (20 credits for 5%), so no rounding enters.

Published figures to compare (Wizard of Odds, "Pai Gow Poker: No-Push Pai Gow", wizardofodds.com/games/
pai-gow-poker/appendix/4/, both sides by the Trump Plaza house way, random simulation): player wins both
28.55%, push 41.47%, banker wins both 29.98%, and "the house edge in regular pai gow poker as the player
is 2.85%". A banker one on one is then about even (0.2998 x 0.95 - 0.2855 = -0.07% for the banker).

Speed. A hand that cannot make a flush is set from its ranks alone, so its values are cached by ranks;
the rest (about 4% of hands) run the house way in full. Chunks run on up to two processes, each chunk with
its own generator taken in order from `SeededRng(seed)`, so the figures do not depend on the processes.
"""

from __future__ import annotations

import math
from functools import lru_cache
from typing import Any, Callable

import numpy as np

from controller.analysis import mean_and_ci95, report
from controller.analysis._parallel import map_chunks
from controller.cards import JOKER, JOKER_INDEX, Card, Suit, from_index
from controller.games._house_way import HouseWay, house_way
from controller.games.pai_gow import Rules, _commission
from controller.hands.paigow import back_value, front_value
from controller.rng import SeededRng, deal_hands

__all__ = ["analyse", "simulate", "hand_values", "outcomes", "ROUNDS", "CHUNK"]

ROUNDS = 1_000_000
CHUNK = 50_000
PLAYERS = 6


@lru_cache(maxsize=None)
def _rank_values(codes: bytes, way: HouseWay) -> tuple[int, int]:
    # Stand-in cards of the hand's ranks, suits dealt round-robin (two of a suit at most: no flush), set by
    # the house way: equal-ranked hands that cannot make a flush set and score alike.
    cards = [JOKER if c == 27 else Card(c // 2, Suit(i % 4)) for i, c in enumerate(codes)]
    back, front = house_way(cards, way)
    return back_value(back), front_value(front)


def _codes(rows: np.ndarray) -> np.ndarray:
    """Each card as a sortable rank code (2 x rank; the joker 27, just under the aces), hands sorted high first."""
    rows = np.asarray(rows, dtype=np.int64)
    codes = np.where(rows == JOKER_INDEX, 27, ((rows >> 2) + 2) * 2)
    return np.sort(codes, axis=1)[:, ::-1].astype(np.uint8)


def _may_flush(rows: np.ndarray) -> np.ndarray:
    rows = np.asarray(rows, dtype=np.int64)
    natural = rows != JOKER_INDEX
    suits = np.stack([((rows & 3) == s) & natural for s in range(4)], axis=1).sum(axis=2)
    return suits.max(axis=1) + (~natural).sum(axis=1) >= 5


def hand_values(rows: np.ndarray, way: HouseWay) -> tuple[np.ndarray, np.ndarray]:
    """Back and front values of the house way's setting of each seven-card row of card indices (the joker 52)."""
    rows = np.asarray(rows)
    backs = np.empty(len(rows), dtype=np.int64)
    fronts = np.empty(len(rows), dtype=np.int64)
    flush = _may_flush(rows)
    codes = _codes(rows)
    for i in range(len(rows)):
        if flush[i]:
            back, front = house_way([from_index(int(c)) for c in rows[i]], way)
            backs[i], fronts[i] = back_value(back), front_value(front)
        else:
            backs[i], fronts[i] = _rank_values(codes[i].tobytes(), way)
    return backs, fronts


def outcomes(backs: np.ndarray, fronts: np.ndarray) -> np.ndarray:
    """Per round (rows of seven hands: the dealer's first), each player's result against the dealer's hand:
    +1 both won, 0 one each, -1 both lost (copies go to the banker)."""
    b, f = backs.reshape(-1, 7), fronts.reshape(-1, 7)
    won = (b[:, 1:] > b[:, :1]).astype(np.int64) + (f[:, 1:] > f[:, :1])
    return won - 1


def _chunk(job: tuple[Any, int, HouseWay, int, int]) -> dict[str, int]:
    generator, n, way, stake, fee = job
    rows = deal_hands(generator, n, 49, deck_size=53).reshape(-1, 7)
    backs, fronts = hand_values(rows, way)
    out = outcomes(backs, fronts)                        # (n, 6)
    win, lose = stake - fee, -stake
    player = np.where(out == 1, win, np.where(out == -1, lose, 0)).sum(axis=1)   # six players' credits
    one = np.where(out[:, 0] == -1, win, np.where(out[:, 0] == 1, lose, 0))      # banker against player 1
    gross = -out.sum(axis=1) * stake                     # the bank's net against all six, before commission
    six = gross - np.where(gross > 0, gross * fee // stake, 0)
    b, f = backs.reshape(-1, 7), fronts.reshape(-1, 7)
    return {"rounds": n, "player": int(player.sum()), "player_sq": int((player * player).sum()),
            "banker": int(one.sum()), "banker_sq": int((one * one).sum()),
            "six": int(six.sum()), "six_sq": int((six * six).sum()),
            "wins": int((out == 1).sum()), "pushes": int((out == 0).sum()), "losses": int((out == -1).sum()),
            "copy_back": int((b[:, 1:] == b[:, :1]).sum()), "copy_front": int((f[:, 1:] == f[:, :1]).sum()),
            "fouls": int((b <= f).sum())}


def simulate(rules: Rules, rounds: int, seed: int, say: Callable[[str], None] = lambda _: None,
             processes: int | None = None, progress: Callable[[int, int], None] | None = None) -> dict[str, int]:
    """Totals over `rounds` seeded rounds (deterministic for a seed, whatever the number of processes)."""
    stake = 100 // math.gcd(100, rules.commission_percent)   # the commission is whole on this stake
    fee = _commission(rules, stake)
    rng = SeededRng(seed)
    jobs = []
    left = rounds
    while left:
        n = min(CHUNK, left)
        jobs.append((rng.numpy(), n, rules.house_way, stake, fee))
        left -= n
    totals: dict[str, int] = {"stake": stake}
    for part in map_chunks(_chunk, jobs, processes):
        for k, v in part.items():
            totals[k] = totals.get(k, 0) + v
        if progress is not None:
            progress(totals["rounds"], rounds)
    return totals


def analyse(rules: Rules, rounds: int | None, seed: int, say: Callable[[str], None],
            progress: Callable[[int, int], None] | None = None) -> dict[str, Any]:
    rounds = rounds or ROUNDS
    say(f"pai gow: simulating {rounds:,} rounds of seven hands by the house way, seed {seed}")
    t = simulate(rules, rounds, seed, say, progress=progress)
    stake = t["stake"]
    player, player_ci = mean_and_ci95(t["player"] / (PLAYERS * stake), t["player_sq"] / (PLAYERS * stake) ** 2, rounds)
    banker, banker_ci = mean_and_ci95(t["banker"] / stake, t["banker_sq"] / stake ** 2, rounds)
    six, six_ci = mean_and_ci95(t["six"] / (PLAYERS * stake), t["six_sq"] / (PLAYERS * stake) ** 2, rounds)
    hands = PLAYERS * rounds
    probabilities = {"player wins both": t["wins"] / hands, "push": t["pushes"] / hands,
                     "banker wins both": t["losses"] / hands, "back hands copy": t["copy_back"] / hands,
                     "front hands copy": t["copy_front"] / hands}
    assert t["fouls"] == 0, "the house way fouled a hand"
    return report("pai-gow", rules.to_json(), "simulation", rounds, probabilities,
                  {"player": player, "banker": banker, "banker_six_players": six},
                  {"player": player_ci, "banker": banker_ci, "banker_six_players": six_ci}, seed=seed,
                  strategy="every hand (players, dealer, banker) set by the configured house way",
                  published={"source": "Wizard of Odds, wizardofodds.com/games/pai-gow-poker/appendix/4/ "
                                       "(Trump Plaza house way, both sides)",
                             "player wins both": 0.2855, "push": 0.4147, "banker wins both": 0.2998,
                             "player house edge": -0.0285})

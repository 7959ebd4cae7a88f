"""Caribbean stud math by seeded simulation: the house edge on the ante with a near-optimal call strategy, with a 95% interval.

Method. Each simulated round deals ten cards from its own shuffled deck (`controller.rng.deal_hands`):
five to the player and five to the dealer, the dealer's last card face up. `calls` decides, `settle`
settles exactly as the engine does (a test steps the engine on the same seeded cards and compares
round by round). The mean net per unit ante is the house edge; its 95% half-width comes from the
per-round variance.

Strategy (Wizard of Odds' simple strategy for Caribbean stud, wizardofodds.com/games/caribbean-stud-poker/,
which he reports as within about 0.001% of the full optimal strategy):
- call with a pair or better; fold below ace-king;
- with ace-king (no pair), call when any of these holds:
  a. the dealer's up card is 2..queen and matches the rank of one of the player's cards;
  b. the dealer's up card is an ace or king and the player holds a queen or a jack;
  c. the up card matches none of the player's cards, the player holds a queen, and the up card ranks
     below the player's fourth-highest card.
Published figure (same source): house edge 5.224% of the ante under optimal strategy (element of risk
2.56%), paytable 100-50-20-7-5-4-3-2-1, no progressive, no payout cap.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any, Callable

import numpy as np

from controller.analysis import mean_and_ci95, report
from controller.analysis._enumerate import lcm_of_pers
from controller.batch.hands import evaluate
from controller.games.caribbean_stud import LINES, QUALIFIER, Rules
from controller.hands import poker
from controller.rng import SeededRng, deal_hands

__all__ = ["analyse", "calls", "settle", "line_index", "ROUNDS", "CHUNK"]

ROUNDS = 10_000_000
CHUNK = 250_000
ACE_KING_LOW = poker.pack(poker.HIGH_CARD, (14, 13, 4, 3, 2))   # the worst ace-king hand (also the qualifier)
ACE_KING_HIGH = poker.pack(poker.HIGH_CARD, (14, 13, 12, 11, 9))  # the best


def line_index(values: np.ndarray) -> np.ndarray:
    """The index in LINES of each five-card value's call paytable line (same as the game's `line_of`)."""
    cat = values >> 20
    top = (values >> 16) & 0xF
    by_category = ["high_card", "pair", "two_pair", "three_of_a_kind", "straight", "flush", "full_house",
                   "four_of_a_kind", "straight_flush"]
    out = np.array([LINES.index(name) for name in by_category], dtype=np.int64)[cat]
    out[(cat == poker.STRAIGHT_FLUSH) & (top == 14)] = LINES.index("royal_flush")
    return out


def calls(player: np.ndarray, values: np.ndarray, up: np.ndarray) -> np.ndarray:
    """The simple strategy above: player cards (N, 5), their values (N,), the dealer's up card (N,)."""
    ranks = np.sort((np.asarray(player, dtype=np.int64) >> 2) + 2, axis=1)[:, ::-1]   # descending
    up_rank = (np.asarray(up, dtype=np.int64) >> 2) + 2
    ace_king = (values >= ACE_KING_LOW) & (values <= ACE_KING_HIGH)
    matches = (ranks == up_rank[:, None]).any(axis=1)
    holds = lambda rank: (ranks == rank).any(axis=1)  # noqa: E731
    a = (up_rank <= 12) & matches
    b = (up_rank >= 13) & (holds(12) | holds(11))
    c = ~matches & holds(12) & (up_rank < ranks[:, 3])
    return (values >= poker.pack(poker.PAIR, ())) | (ace_king & (a | b | c))


def settle(player: np.ndarray, dealer: np.ndarray, call: np.ndarray, ante: int, rules: Rules) -> np.ndarray:
    """Net credits of each round for one spot with `ante`, as the engine settles it (player/dealer are
    five-card values; the call is twice the ante; the rules' call payout cap applies)."""
    line = line_index(player)
    win = np.array([2 * ante * rules.paytable[n].win // rules.paytable[n].per for n in LINES], dtype=np.int64)[line]
    if rules.call_payout_cap is not None:
        win = np.minimum(win, rules.call_payout_cap)
    qualifies = dealer >= QUALIFIER
    duel = np.where(player > dealer, ante + win, np.where(player < dealer, -3 * ante, 0))
    return np.where(call, np.where(qualifies, duel, ante), -ante)


def analyse(rules: Rules, rounds: int | None, seed: int, say: Callable[[str], None],
            progress: Callable[[int, int], None] | None = None) -> dict[str, Any]:
    """Simulate `rounds` rounds (default 10,000,000) from `seed`. The call payout cap is in credits and the
    report is per unit ante, so it is not applied (the report says so when one is set)."""
    rounds = rounds or ROUNDS
    per_unit = replace(rules, call_payout_cap=None)
    stake = lcm_of_pers(rules.paytable)   # whole credits on every line, so the fast path is exact
    generator = SeededRng(seed).numpy()
    total = total_sq = 0.0
    counts = {"call": 0, "called, dealer does not qualify": 0, "called, player wins": 0, "called, dealer wins": 0,
              "called, tie": 0}
    lines = np.zeros(len(LINES), dtype=np.int64)   # winning calls by paytable line
    done = 0
    while done < rounds:
        n = min(CHUNK, rounds - done)
        cards = deal_hands(generator, n, 10)
        player = evaluate(cards[:, :5], check=False).astype(np.int64)
        dealer = evaluate(cards[:, 5:], check=False).astype(np.int64)
        call = calls(cards[:, :5], player, cards[:, 9])
        net = settle(player, dealer, call, stake, per_unit) / stake
        total += float(net.sum())
        total_sq += float((net * net).sum())
        q = dealer >= QUALIFIER
        wins = call & q & (player > dealer)
        counts["call"] += int(call.sum())
        counts["called, dealer does not qualify"] += int((call & ~q).sum())
        counts["called, player wins"] += int(wins.sum())
        counts["called, dealer wins"] += int((call & q & (player < dealer)).sum())
        counts["called, tie"] += int((call & q & (player == dealer)).sum())
        lines += np.bincount(line_index(player[wins]), minlength=len(LINES))
        done += n
        if progress is not None:
            progress(done, rounds)
    edge, half = mean_and_ci95(total, total_sq, rounds)
    probabilities = {"call": counts["call"] / rounds, "fold": 1 - counts["call"] / rounds}
    probabilities |= {k: v / rounds for k, v in counts.items() if k != "call"}
    probabilities |= {f"called and won: {name.replace('_', ' ')}": int(lines[i]) / rounds for i, name in enumerate(LINES)}
    wagered = 1 + 2 * counts["call"] / rounds
    extra: dict[str, Any] = {}
    if rules.call_payout_cap is not None:
        extra["notes"] = f"call_payout_cap {rules.call_payout_cap} credits is not applied: the figures are per unit ante"
    return report("caribbean-stud", rules.to_json(), "simulation", rounds, probabilities, {"ante": edge},
                  {"ante": half}, seed=seed,
                  strategy="call a pair or better; fold below ace-king; ace-king by Wizard of Odds' simple rules",
                  element_of_risk={"ante": edge / wagered}, average_units_wagered=wagered, **extra)

"""Trente et quarante's math report, exact: the joint distribution of the noir and rouge totals of the first coup
of a freshly shuffled shoe, by a dynamic programme over card values (no sampling, no infinite-deck shortcut).

Method. A row is a prefix of cards summing to at most 30 followed by the card that takes it to 31-40; the
probability of a whole coup (prefix 1, last card 1, prefix 2, last card 2) depends only on how many cards of each
value it uses: orderings of each prefix x prod over values of falling factorials of the counts / (N)_cards. For each
pair of last-card values the programme runs over the ten values, carrying (prefix-1 sum, prefix-1 cards, prefix-2
sum, prefix-2 cards), so every deal is counted once, with its exact weight (floating point, relative error ~1e-13).
The formula is symmetric in the two rows, so noir and rouge win equally often even with the effect of removal;
the colour of the noir row's first card is independent of every value, so couleur and inverse do too.

Published figures (gamblinginamerica.name, "Trente et quarante": "a 2.19% chance" of a refait de trente et un;
"the house takes half of all bets, giving the house a small edge of about 1.1%"; beatablegames.com, "Il 31 après":
"ad inizio mazzo il vantaggio del banco è pari a circa 1,096%"). This report: six decks, P(31 refait) 0.0218914,
edge 1.0946% on each of the four bets with the half-take. The seed's "about once in 40 coups" is looser (1 in 45.7).
"""

from __future__ import annotations

from functools import cache
from math import factorial
from typing import Any, Callable, Sequence

import numpy as np

from controller.analysis import mean_and_ci95, report
from controller.games.trente_et_quarante import TARGET, Rules

__all__ = ["analyse", "joint_totals", "shoe_counts", "edges", "simulate", "coup_totals"]


def shoe_counts(decks: int) -> tuple[int, ...]:
    """Cards of each count 1..10 in a shoe (tens and faces all count 10)."""
    return (4 * decks,) * 9 + (16 * decks,)


def _falling(n: int, k: int) -> int:
    out = 1
    for i in range(k):
        out *= n - i
    return out


def _step(f: np.ndarray, v: int, n: int, d: int) -> np.ndarray:
    """The state after the cards of value v: a to prefix 1, b to prefix 2, d (0-2) as last cards, out of n."""
    size, length = f.shape[0], f.shape[1]
    g = np.zeros_like(f)
    if n < d:
        return g
    for a in range(min((size - 1) // v, length - 1, n - d) + 1):
        for b in range(min((size - 1) // v, length - 1, n - d - a) + 1):
            w = _falling(n, a + b + d) / (factorial(a) * factorial(b))
            g[v * a:, a:, v * b:, b:] += w * f[:size - v * a, :length - a, :size - v * b, :length - b]
    return g


def _longest_prefix(counts: Sequence[int], target: int) -> int:
    """The most cards a row can hold before its last card (smallest values first, sum under `target`)."""
    cards = room = 0
    for value, n in enumerate(counts, start=1):
        take = min(n, (target - 1 - room) // value)
        cards, room = cards + take, room + take * value
    return cards


@cache
def joint_totals(counts: tuple[int, ...], target: int = TARGET) -> np.ndarray:
    """J[t1, t2]: the probability that the first row (noir) ends on t1 and the second (rouge) on t2, for the first
    coup dealt from a shoe holding counts[v - 1] cards of value v (values 1..len(counts)). Rows run to `target`.

    The state after values 1..k is shared by every pair of last-card values above k (and, per first last-card
    value, by every second one above k), so each value is processed about 11 times rather than 55."""
    values = len(counts)
    size = target                              # prefix sums 0..target-1
    length = _longest_prefix(counts, target) + 1   # prefix lengths 0..length-1
    total = sum(counts)
    top = target + values
    joint = np.zeros((top, top))
    fact = np.array([float(factorial(i)) for i in range(length)])
    inv = np.array([[1.0 / _falling(total, a + b + 2) if a + b + 2 <= total else 0.0 for b in range(length)]
                    for a in range(length)])
    finish = fact[:, None] * fact[None, :] * inv      # orderings of each prefix / (N)_cards, by prefix lengths

    def finish_pair(f: np.ndarray, c1: int, c2: int, after: int) -> None:
        for v in range(after + 1, values + 1):
            f = _step(f, v, counts[v - 1], 0)
        by_sums = np.einsum("panb,ab->pn", f, finish)   # (prefix-1 sum, prefix-2 sum)
        part = np.zeros((top, top))
        lo1, lo2 = max(target - c1, 0), max(target - c2, 0)
        part[lo1 + c1:size + c1, lo2 + c2:size + c2] = by_sums[lo1:, lo2:]
        joint[:] += part
        if c1 != c2:
            joint[:] += part.T

    none = np.zeros((size, length, size, length))
    none[0, 0, 0, 0] = 1.0                     # no value processed, no last card chosen
    for c1 in range(1, values + 1):
        finish_pair(_step(none, c1, counts[c1 - 1], 2), c1, c1, c1)
        one = _step(none, c1, counts[c1 - 1], 1)       # values 1..c1 done, the first last card is a c1
        for c2 in range(c1 + 1, values + 1):
            finish_pair(_step(one, c2, counts[c2 - 1], 1), c1, c2, c2)
            if c2 < values:
                one = _step(one, c2, counts[c2 - 1], 0)
        if c1 < values:
            none = _step(none, c1, counts[c1 - 1], 0)
    joint.flags.writeable = False
    return joint


def edges(joint: np.ndarray, target: int = TARGET) -> dict[str, float]:
    """The coup's probabilities and each even-money bet's house edge under the half-take and the en-prison rule."""
    refait_31 = float(joint[target, target])
    refait = float(np.trace(joint))
    noir = float(np.triu(joint, 1).sum())     # joint[noir, rouge]: noir lower wins
    rouge = float(np.tril(joint, -1).sum())
    # en prison: released on a win, lost on a loss or a second 31 refait, held over a plain refait
    released = noir / (noir + rouge + refait_31)
    return {"noir": noir, "rouge": rouge, "refait": refait, "refait_31": refait_31, "refait_other": refait - refait_31,
            "edge_half": refait_31 / 2, "edge_prison": refait_31 * (1 - released)}


# ---------------------------------------------------------------------------------------------------
# Simulation (the cross-check, and the fast path the engine is held to)


def coup_totals(values: np.ndarray, target: int = TARGET) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Rows of card counts in shoe order (enough cards for both rows) -> (noir total, rouge total, cards used)."""
    v = np.asarray(values, dtype=np.int64)
    cum = np.cumsum(v, axis=1)
    end1 = np.argmax(cum >= target, axis=1)
    rows = np.arange(len(v))
    t1 = cum[rows, end1]
    after = cum - t1[:, None]
    after[np.arange(v.shape[1])[None, :] <= end1[:, None]] = 0
    end2 = np.argmax(after >= target, axis=1)
    if not (cum[:, -1] - t1 >= target).all():
        raise ValueError("not enough cards in a row to finish both rows")
    return t1, after[rows, end2], end2 + 1


def simulate(decks: int, rounds: int, seed: int, chunk: int = 50_000) -> dict[str, Any]:
    """The first coup of `rounds` freshly shuffled shoes, seeded: P(31 refait) and P(refait) with 95% intervals."""
    from controller.rng import SeededRng

    gen = SeededRng(seed).numpy()
    counts = shoe_counts(decks)
    shoe = np.repeat(np.arange(1, 11, dtype=np.int8), counts)
    keep = min(len(shoe), 60)                  # 60 cards always finish both rows
    hits = {"refait_31": 0, "refait": 0, "noir": 0}
    done = 0
    while done < rounds:
        n = min(chunk, rounds - done)
        cards = gen.permuted(np.broadcast_to(shoe, (n, len(shoe))), axis=1)[:, :keep]
        noir, rouge, _ = coup_totals(cards)
        hits["refait_31"] += int(((noir == TARGET) & (rouge == TARGET)).sum())
        hits["refait"] += int((noir == rouge).sum())
        hits["noir"] += int((noir < rouge).sum())
        done += n
    out: dict[str, Any] = {"rounds": rounds, "seed": seed}
    for name, k in hits.items():
        mean, ci = mean_and_ci95(k, k, rounds)     # a 0/1 outcome: the sum of squares is the count
        out[name] = mean
        out[name + "_ci95"] = ci
    return out


def analyse(rules: Rules, rounds: int | None, seed: int, say: Callable[[str], None]) -> dict[str, Any]:
    say(f"trente et quarante: exact coup distribution for a fresh shoe of {rules.decks} decks (a few seconds)")
    figures = edges(joint_totals(shoe_counts(rules.decks)))
    probabilities = {"noir": figures["noir"], "rouge": figures["rouge"], "couleur": figures["noir"],
                     "inverse": figures["rouge"], "refait": figures["refait"], "refait_31": figures["refait_31"],
                     "refait_other": figures["refait_other"]}
    # the report's convention: the player's expectation per unit staked (negative: the player loses)
    edge = {box: -figures["edge_half"] for box in ("rouge", "noir", "couleur", "inverse")}
    extra: dict[str, Any] = {
        "en_prison": {box: -figures["edge_prison"] for box in edge},
        "note": ("first coup of a freshly shuffled shoe; the house takes exactly half on a 31 refait (on whole "
                 f"credits the odd credit of an odd stake is rounded {rules.half_rounding.value}); couleur and "
                 "inverse win as often as noir and rouge; en_prison: the edge for a spot that puts its bets en "
                 "prison (released on a win, lost on a loss or a second 31 refait)"),
    }
    if rounds:
        say(f"trente et quarante: simulating {rounds:,} first coups as a cross-check")
        extra["simulation"] = simulate(rules.decks, rounds, seed)
    return report("trente-et-quarante", rules.to_json(), "exact", None, probabilities, edge, None, **extra)

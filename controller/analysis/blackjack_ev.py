"""Blackjack's exact expected values per decision (stand, hit, double, split, surrender) for the rules in force, composition-dependent.

The composition is the full shoe less the cards of the hand and the dealer's up card (the basis of
composition-dependent basic strategy and of the game's house edge): a decision's EVs depend only on the rules,
the hand's cards and the up card, so they are cached and a rating never waits on them twice. The dealer's
final total is exact for that composition, every card the dealer draws taken out as it is drawn, and, with a
ten or an ace up, conditioned on no dealer blackjack (the dealer peeks before anyone plays). The dealer's draw
sequences are enumerated once per up card (each multiset of cards with its number of valid orders), so a
composition's distribution is one weighted sum over them.

Exact: stand, hit (then the best of hit and stand on every later card), double, surrender. A split is valued
as two hands each starting with one card of the pair, with both cards of the pair out of the shoe, each played
best (double after split as the rules allow; split aces take one card), a pair resplit while `max_hands`
allows (each resplit counted as one more hand for every hand), without the hands' cards taking from each other:
the one approximation here (hundredths of a percent of the game's edge; exact with no splits). EVs are per unit
of the hand's bet before any double or split, from the player's side.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Iterator

import numpy as np

from controller.games.blackjack import Rules

__all__ = ["EvRules", "action_evs", "house_edge", "insurance_edge", "full_shoe"]

Comp = tuple[int, ...]   # cards left per blackjack value 1 (ace) .. 10 (ten-cards)
_OUTCOMES = 6            # dealer ends on 17, 18, 19, 20, 21, or busts


@dataclass(frozen=True, slots=True)
class EvRules:
    """What the EVs and the fast path (controller.analysis.blackjack) depend on: hashable for the caches, picklable
    for worker processes."""

    decks: int
    h17: bool
    bj_win: int
    bj_per: int
    double: str
    das: bool
    max_hands: int
    resplit_aces: bool
    surrender: bool

    @classmethod
    def of(cls, rules: Rules) -> EvRules:
        return cls(rules.decks, rules.dealer_hits_soft_17, rules.blackjack_pays.win, rules.blackjack_pays.per,
                   rules.double, rules.double_after_split, rules.max_hands, rules.resplit_aces,
                   rules.late_surrender)


def full_shoe(decks: int) -> Comp:
    return tuple([4 * decks] * 9 + [16 * decks])


def _less(comp: Comp, *values: int) -> Comp:
    out = list(comp)
    for v in values:
        out[v - 1] -= 1
    return tuple(out)


def _draws(comp: Comp) -> Iterator[tuple[int, float, Comp]]:
    """Each card value the shoe still holds: the value, its chance of coming next, and the shoe without it."""
    n = sum(comp)
    for v in range(1, 11):
        if comp[v - 1]:
            yield v, comp[v - 1] / n, _less(comp, v)


def _total(hard: int, ace: bool) -> int:
    return hard + 10 if ace and hard <= 11 else hard


@lru_cache(maxsize=20)
def _dealer_sequences(up: int, h17: bool) -> tuple[tuple[tuple[int, ...], int, int], ...]:
    """Every multiset of cards the dealer can draw after the up card (hole card first) with the number of orders
    in which the dealer draws exactly those and stops, and where the dealer ends (0..4: 17..21, 5: bust)."""
    def drawing(m: tuple[int, ...]) -> bool:
        hard = up + sum((v + 1) * k for v, k in enumerate(m))
        ace = up == 1 or m[0] > 0
        t = _total(hard, ace)
        if not any(m):
            return True
        return t < 17 or (h17 and t == 17 and ace and hard <= 7)

    ways: dict[tuple[int, ...], int] = {(0,) * 10: 1}
    frontier: list[tuple[int, ...]] = [(0,) * 10]
    final: list[tuple[tuple[int, ...], int, int]] = []
    while frontier:
        nxt: dict[tuple[int, ...], int] = {}
        for m in frontier:
            for v in range(10):
                child = m[:v] + (m[v] + 1,) + m[v + 1:]
                nxt.setdefault(child, 0)
        for child in nxt:
            # orders of `child` whose every proper prefix still draws: the last card is any of its values
            n = sum(ways.get(child[:v] + (child[v] - 1,) + child[v + 1:], 0)
                    for v in range(10) if child[v] and drawing(child[:v] + (child[v] - 1,) + child[v + 1:]))
            nxt[child] = n
        frontier = []
        for child, n in nxt.items():
            if not n:
                continue
            ways[child] = n
            if drawing(child):
                frontier.append(child)
            else:
                hard = up + sum((v + 1) * k for v, k in enumerate(child))
                t = _total(hard, up == 1 or child[0] > 0)
                final.append((child, n, 5 if t > 21 else t - 17))
    return tuple(final)


@lru_cache(maxsize=20)
def _sequence_arrays(up: int, h17: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The dealer's sequences as arrays: cards per value (K x 10), orders, cards drawn, where each ends
    (one-hot, K x 6); the dealer's blackjack left out (the peek rules it out)."""
    rows = [(m, ways, where) for m, ways, where in _dealer_sequences(up, h17)
            if not (sum(m) == 1 and ((up == 1 and m[9]) or (up == 10 and m[0])))]
    m = np.array([r[0] for r in rows], np.int64)
    ends = np.zeros((len(rows), _OUTCOMES))
    ends[np.arange(len(rows)), [r[2] for r in rows]] = 1.0
    return m, np.array([float(r[1]) for r in rows]), m.sum(axis=1), ends


@lru_cache(maxsize=500_000)
def dealer_outcomes(comp: Comp, up: int, h17: bool) -> tuple[float, ...]:
    """P(dealer ends on 17..21, busts) for the up card and the composition left (the up card already out), given
    no dealer blackjack when a ten or an ace is up."""
    m, ways, count, ends = _sequence_arrays(up, h17)
    depth = m.shape[1] and int(m.max()) + 1
    c = np.array(comp, np.float64)
    # falling[v, j] = comp[v] (comp[v] - 1) ... (comp[v] - j + 1): the ways to draw j cards of value v in order
    falling = np.cumprod(np.maximum(c[:, None] - np.arange(depth)[None, :], 0.0), axis=1)
    falling = np.concatenate([np.ones((10, 1)), falling[:, :-1]], axis=1)
    n = float(sum(comp))
    drawn = np.cumprod(np.concatenate([[1.0], n - np.arange(int(count.max()))]))
    w = ways * falling[np.arange(10)[None, :], m].prod(axis=1) / drawn[count]
    out = w @ ends
    return tuple(float(x) for x in out / out.sum())


def _stand(comp: Comp, up: int, total: int, h17: bool) -> float:
    if total > 21:
        return -1.0
    d = dealer_outcomes(comp, up, h17)
    win = d[5] + sum(d[i] for i in range(5) if 17 + i < total)
    lose = sum(d[i] for i in range(5) if 17 + i > total)
    return win - lose


@lru_cache(maxsize=200_000)
def _hit(comp: Comp, hard: int, ace: bool, up: int, h17: bool) -> float:
    """EV of taking a card and then playing best (hit or stand) on every later card."""
    ev = 0.0
    for v, p, rest in _draws(comp):
        h, a = hard + v, ace or v == 1
        t = _total(h, a)
        if t > 21:
            e = -1.0
        elif t == 21:
            e = _stand(rest, up, 21, h17)   # a hand reaching 21 stands by itself
        elif t >= 17 and not (a and h <= 11):
            e = _stand(rest, up, t, h17)    # a hard 17 or more stands (hitting it is never better near a full shoe)
        else:
            e = max(_stand(rest, up, t, h17), _hit(rest, h, a, up, h17))
        ev += p * e
    return ev


def _double(comp: Comp, hard: int, ace: bool, up: int, h17: bool) -> float:
    return 2 * sum(p * _stand(rest, up, _total(hard + v, ace or v == 1), h17) for v, p, rest in _draws(comp))


def _may_double(r: EvRules, total: int, split: bool) -> bool:
    if split and not r.das:
        return False
    return r.double == "any" or (9 if r.double == "9-11" else 10) <= total <= 11


@lru_cache(maxsize=2_000)
def _split(r: EvRules, pair: int, up: int, hands: int = 2) -> float:
    """Two hands, each one card of the pair and then a card of its own, each played best, resplitting a pair again
    while the table allows `max_hands` (each resplit counted as one more hand for both)."""
    one = 0.0
    for v, p, rest in _draws(_less(full_shoe(r.decks), pair, pair, up)):
        hard, ace = pair + v, pair == 1 or v == 1
        t = _total(hard, ace)
        if pair == 1:
            e = _stand(rest, up, t, r.h17)      # a split ace takes one card (21 pays even money)
        elif t == 21:
            e = _stand(rest, up, 21, r.h17)
        else:
            e = max(_stand(rest, up, t, r.h17), _hit(rest, hard, ace, up, r.h17))
            if _may_double(r, t, True):
                e = max(e, _double(rest, hard, ace, up, r.h17))
        if v == pair and hands < r.max_hands and (pair != 1 or r.resplit_aces):
            e = max(e, _split(r, pair, up, hands + 1))   # resplit: this hand becomes two, as a split with one more hand
        one += p * e
    return 2 * one


def action_evs(r: EvRules, values: tuple[int, ...], up: int, legal: tuple[str, ...]) -> dict[str, float]:
    """The EV of each legal action (of hit, stand, double, split, surrender) for a hand of these card values
    (ace 1, ten-cards 10) against the up card, per unit of the hand's bet, after the dealer's peek."""
    comp = _less(full_shoe(r.decks), *values, up)
    hard, ace = sum(values), 1 in values
    t = _total(hard, ace)
    out: dict[str, float] = {}
    for action in legal:
        if action == "stand":
            out[action] = _stand(comp, up, t, r.h17)
        elif action == "hit":
            out[action] = _hit(comp, hard, ace, up, r.h17)
        elif action == "double":
            out[action] = _double(comp, hard, ace, up, r.h17)
        elif action == "surrender":
            out[action] = -0.5
        elif action == "split" and len(values) == 2 and values[0] == values[1]:
            out[action] = _split(r, values[0], up)
    return out


@lru_cache(maxsize=64)
def house_edge(r: EvRules) -> float:
    """The house's edge per unit of the initial bet against the best play of every first two cards (the
    composition-dependent strategy above, splits as said there), dealer peek, a blackjack paid bj_win:bj_per:
    a positive number when the house wins."""
    shoe = full_shoe(r.decks)
    n = sum(shoe)
    ev = 0.0
    for p1 in range(1, 11):
        for up in range(1, 11):
            for p2 in range(1, 11):
                c1 = shoe[p1 - 1]
                c_up = shoe[up - 1] - (up == p1)
                c2 = shoe[p2 - 1] - (p2 == p1) - (p2 == up)
                if c1 <= 0 or c_up <= 0 or c2 <= 0:
                    continue
                p = c1 / n * c_up / (n - 1) * c2 / (n - 2)
                rest = _less(shoe, p1, up, p2)
                m = sum(rest)
                hole_bj = (rest[9] if up == 1 else rest[0] if up == 10 else 0) / m
                natural = {p1, p2} == {1, 10}
                if natural:
                    ev += p * (1 - hole_bj) * r.bj_win / r.bj_per
                    continue
                legal = ["hit", "stand"]
                if _may_double(r, _total(p1 + p2, 1 in (p1, p2)), False):
                    legal.append("double")
                if r.max_hands > 1 and p1 == p2:
                    legal.append("split")
                if r.surrender:
                    legal.append("surrender")
                best = max(action_evs(r, (p1, p2), up, tuple(legal)).values())
                ev += p * (hole_bj * -1 + (1 - hole_bj) * best)
    return -ev


def insurance_edge(decks: int) -> float:
    """The house's edge on insurance (pays 2:1) with the full shoe less the dealer's ace."""
    tens = 16 * decks / (52 * decks - 1)
    return -(3 * tens - 1)

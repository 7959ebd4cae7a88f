"""Blackjack's math report: a seeded simulation of one basic-strategy spot, each round from a freshly shuffled
shoe, played by a numpy fast path that settles exactly as the engine (tests step both on the same cards).

A round's cards are a row: player, dealer up, player, hole, then every further card in the order the
engine deals them (the player's hands left to right, split hands as they are made, then the dealer).
Rows are the first cards of independent Fisher-Yates shuffles of the whole shoe (the published house
edges assume a full shoe for every hand: no cut-card effect). Chunks of rounds run on up to two processes;
each chunk draws from its own generator taken in order from `SeededRng(seed)`, so the figures do not
depend on how many processes ran.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from controller.analysis import mean_and_ci95, report
from controller.analysis._parallel import map_chunks
from controller.analysis.blackjack_ev import EvRules
from controller.analysis.blackjack_strategy import chart, decide
from controller.games.blackjack import Rules
from controller.rng import SeededRng

__all__ = ["analyse", "FastRules", "play", "deal_rows", "shoe_values", "simulate", "DEFAULT_ROUNDS"]

DEFAULT_ROUNDS = 10_000_000
CHUNK = 100_000
ROW = 24            # cards drawn per round up front; the rare longer round is replayed on its whole shuffled shoe

HIT, STAND, DOUBLE, SPLIT, SURRENDER = 0, 1, 2, 3, 4
_CODES = {"hit": HIT, "stand": STAND, "double": DOUBLE, "split": SPLIT, "surrender": SURRENDER}
_STOOD, _BUST, _SURRENDERED = 1, 2, 3


# What the fast path needs of the rules is what the exact EVs depend on: one frozen record serves both (hashable,
# and picklable for worker processes).
FastRules = EvRules


def _action_tables(r: FastRules) -> tuple[np.ndarray, np.ndarray]:
    """decide() tabulated: plain[soft, total, up, can_double, can_surrender] and
    pair[value, up, can_double, can_surrender] (a pair that may be split), both action codes."""
    c = chart(r.h17, r.das)
    plain = np.full((2, 22, 11, 2, 2), STAND, np.int8)
    pair = np.full((11, 11, 2, 2), STAND, np.int8)
    for up in range(1, 11):
        for cd in (0, 1):
            for cs in (0, 1):
                for total in range(4, 22):
                    plain[0, total, up, cd, cs] = _CODES[decide(c, total, False, 0, up, bool(cd), False, bool(cs))]
                for total in range(12, 22):
                    plain[1, total, up, cd, cs] = _CODES[decide(c, total, True, 0, up, bool(cd), False, bool(cs))]
                for v in range(1, 11):
                    total, soft = (12, True) if v == 1 else (2 * v, False)
                    pair[v, up, cd, cs] = _CODES[decide(c, total, soft, v, up, bool(cd), True, bool(cs))]
    return plain, pair


@dataclass
class Outcome:
    """Per round: the player's net in credits, cards used, and what happened."""

    net: np.ndarray
    used: np.ndarray
    overflow: np.ndarray
    player_bj: np.ndarray
    dealer_bj: np.ndarray
    doubled: np.ndarray
    split: np.ndarray
    surrendered: np.ndarray


def play(cards: np.ndarray, r: FastRules, stake: int, tables: tuple[np.ndarray, np.ndarray] | None = None) -> Outcome:
    """Play every row of `cards` (blackjack values 1..10, ace 1) as one basic-strategy spot betting `stake`.
    A row too short for its round is flagged in `overflow` (its other results are then meaningless)."""
    plain, pair_act = tables if tables is not None else _action_tables(r)
    cards = np.asarray(cards, dtype=np.int64)
    n_rows, width = cards.shape
    ptr = np.full(n_rows, 4, np.int64)
    overflow = np.zeros(n_rows, bool)

    def draw(rows: np.ndarray) -> np.ndarray:
        at = ptr[rows]
        over = at >= width
        if over.any():
            overflow[rows[over]] = True
            at = np.minimum(at, width - 1)
        ptr[rows] = at + 1
        return cards[rows, at]

    p1, up, p2, hole = cards[:, 0], cards[:, 1], cards[:, 2], cards[:, 3]
    player_bj = ((p1 == 1) & (p2 == 10)) | ((p1 == 10) & (p2 == 1))
    dealer_bj = ((up == 1) & (hole == 10)) | ((up == 10) & (hole == 1))
    net = np.zeros(n_rows, np.int64)
    net[dealer_bj & ~player_bj] = -stake
    net[player_bj & ~dealer_bj] = stake * r.bj_win // r.bj_per
    play_rows = ~(player_bj | dealer_bj)

    hands = r.max_hands
    n_hands = np.ones(n_rows, np.int64)
    totals = np.zeros((n_rows, hands), np.int64)
    status = np.zeros((n_rows, hands), np.int8)
    mult = np.ones((n_rows, hands), np.int64)
    doubled = np.zeros(n_rows, bool)
    for slot in range(hands):
        rows = np.flatnonzero(play_rows & (n_hands > slot))
        if rows.size == 0:
            break
        first = p1[rows]
        if slot == 0:
            second, is_split = p2[rows], np.zeros(rows.size, bool)
        else:  # a hand split off earlier: one card of the pair, its second card comes now
            second, is_split = draw(rows), np.ones(rows.size, bool)
        hard = first + second
        ace = (first == 1) | (second == 1)
        count = np.full(rows.size, 2, np.int64)
        c1, c2 = first.copy(), second.copy()
        m = np.ones(rows.size, np.int64)
        st = np.zeros(rows.size, np.int8)
        act = np.arange(rows.size)
        while act.size:
            rr = rows[act]
            soft = ace[act] & (hard[act] <= 11)
            total = hard[act] + 10 * soft
            two = count[act] == 2
            split_aces = is_split[act] & (c1[act] == 1)
            room = n_hands[rr] < hands
            # Hands that finish by themselves: bust, a double's card, 21, a split ace without a resplit.
            bust = total > 21
            resplit_ace = split_aces & two & (c2[act] == 1) & r.resplit_aces & room
            done = bust | (m[act] == 2) | (total == 21) | (split_aces & ~resplit_ace)
            st[act[done]] = np.where(bust[done], _BUST, _STOOD)
            keep = ~done
            act, rr, soft, total, two, split_aces, room, resplit_ace = (
                x[keep] for x in (act, rr, soft, total, two, split_aces, room, resplit_ace))
            if act.size == 0:
                break
            if r.double == "any":
                rule_ok = np.ones(act.size, bool)
            else:
                low = 9 if r.double == "9-11" else 10
                rule_ok = (total >= low) & (total <= 11)
            can_double = two & ~split_aces & (~is_split[act] | r.das) & rule_ok
            can_surr = two & r.surrender & ~is_split[act] & (n_hands[rr] == 1)
            can_split = two & (c1[act] == c2[act]) & room & (~split_aces | r.resplit_aces)
            cd, cs = can_double.astype(np.int64), can_surr.astype(np.int64)
            action = np.where(can_split, pair_act[c1[act], up[rr], cd, cs], plain[soft.astype(np.int64), total, up[rr], cd, cs])
            action = np.where(split_aces, np.where(resplit_ace, SPLIT, STAND), action)

            stand = action == STAND
            st[act[stand]] = _STOOD
            surr = action == SURRENDER
            st[act[surr]] = _SURRENDERED
            dbl = action == DOUBLE
            m[act[dbl]] = 2
            doubled[rr[dbl]] = True
            spl = action == SPLIT
            n_hands[rr[spl]] += 1
            hard[act[spl]] = c1[act[spl]]
            ace[act[spl]] = c1[act[spl]] == 1
            count[act[spl]] = 1
            is_split[act[spl]] = True
            drawing = ~(stand | surr)
            act, rr = act[drawing], rr[drawing]
            card = draw(rr)
            hard[act] += card
            ace[act] |= card == 1
            count[act] += 1
            c2[act] = card
        totals[rows, slot] = hard + 10 * (ace & (hard <= 11))
        status[rows, slot] = st
        mult[rows, slot] = m

    # The dealer draws only when a hand is still live (stood or doubled, not bust or surrendered).
    live = (status == _STOOD).any(axis=1)
    d_hard = up + hole
    d_ace = (up == 1) | (hole == 1)
    act = np.flatnonzero(play_rows & live)
    while act.size:
        soft = d_ace[act] & (d_hard[act] <= 11)
        total = d_hard[act] + 10 * soft
        need = (total < 17) | (r.h17 & (total == 17) & soft)
        act = act[need]
        card = draw(act)
        d_hard[act] += card
        d_ace[act] |= card == 1
    dealer = d_hard + 10 * (d_ace & (d_hard <= 11))
    dealer = np.where(dealer > 21, 0, dealer)[:, None]  # a bust dealer loses to every live hand

    stakes = stake * mult
    win = (status == _STOOD) & (totals > dealer)
    lose = ((status == _STOOD) & (totals < dealer)) | (status == _BUST)
    hand_net = np.where(win, stakes, 0) - np.where(lose, stakes, 0)
    hand_net += np.where(status == _SURRENDERED, stake // 2 - stake, 0)
    net += np.where(play_rows, hand_net.sum(axis=1), 0)
    return Outcome(net, ptr, overflow, player_bj, dealer_bj, doubled, n_hands > 1,
                   (status == _SURRENDERED).any(axis=1))


def shoe_values(decks: int) -> np.ndarray:
    """A shoe's cards as blackjack values (ace 1, tens and faces 10)."""
    one = np.array([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 10, 10, 10] * 4, np.int8)
    return np.tile(one, decks)


def deal_rows(gen: np.random.Generator, rounds: int, decks: int, width: int = ROW) -> tuple[np.ndarray, np.ndarray]:
    """Each row the first `width` cards of its own uniformly shuffled shoe (partial Fisher-Yates); also the
    shoes themselves, whose remaining positions `finish_rows` can shuffle on for a longer round."""
    shoes = np.tile(shoe_values(decks), (rounds, 1))
    _fisher_yates(gen, shoes, np.arange(rounds), 0, width)
    return shoes[:, :width], shoes


def _fisher_yates(gen: np.random.Generator, shoes: np.ndarray, rows: np.ndarray, start: int, stop: int) -> None:
    size = shoes.shape[1]
    for i in range(start, min(stop, size - 1)):
        j = gen.integers(i, size, size=rows.size)
        held = shoes[rows, i].copy()
        shoes[rows, i] = shoes[rows, j]
        shoes[rows, j] = held


def _chunk(args: tuple[np.random.Generator, int, FastRules, int]) -> dict[str, int]:
    gen, rounds, r, stake = args
    cards, shoes = deal_rows(gen, rounds, r.decks)
    tables = _action_tables(r)
    out = play(cards, r, stake, tables)
    long_rows = np.flatnonzero(out.overflow)
    if long_rows.size:  # finish those shuffles and replay the rounds on their whole shoes
        _fisher_yates(gen, shoes, long_rows, ROW, shoes.shape[1])
        again = play(shoes[long_rows], r, stake, tables)
        for name in ("net", "doubled", "split", "surrendered"):
            getattr(out, name)[long_rows] = getattr(again, name)
    net = out.net
    return {"rounds": rounds, "sum": int(net.sum()), "sum_sq": int((net * net).sum()),
            "win": int((net > 0).sum()), "push": int((net == 0).sum()), "lose": int((net < 0).sum()),
            "player_blackjack": int(out.player_bj.sum()), "dealer_blackjack": int(out.dealer_bj.sum()),
            "double": int(out.doubled.sum()), "split": int(out.split.sum()),
            "surrender": int(out.surrendered.sum()), "long_rounds": int(long_rows.size)}


def simulate(rules: Rules, rounds: int, seed: int, say: Callable[[str], None] = lambda _: None,
             processes: int | None = None, progress: Callable[[int, int], None] | None = None) -> dict[str, int]:
    """Totals over `rounds` seeded rounds (deterministic for a seed, whatever the number of processes)."""
    r = FastRules.of(rules)
    stake = 2 * r.bj_per  # every payout (3:2, 6:5, a surrendered half) is then a whole number of credits
    rng = SeededRng(seed)
    jobs = []
    left = rounds
    while left:
        n = min(CHUNK, left)
        jobs.append((rng.numpy(), n, r, stake))
        left -= n
    totals: dict[str, int] = {}
    done = 0
    for part in map_chunks(_chunk, jobs, processes):
        for k, v in part.items():
            totals[k] = totals.get(k, 0) + v
        done += part["rounds"]
        if progress is not None:
            progress(done, rounds)
    totals["stake"] = stake
    return totals


def analyse(rules: Rules, rounds: int | None, seed: int, say: Callable[[str], None],
            progress: Callable[[int, int], None] | None = None) -> dict[str, Any]:
    rounds = DEFAULT_ROUNDS if rounds is None else rounds
    say(f"blackjack: simulating {rounds:,} rounds of basic strategy, seed {seed}")
    t = simulate(rules, rounds, seed, say, progress=progress)
    stake = t["stake"]
    mean, half = mean_and_ci95(t["sum"] / stake, t["sum_sq"] / stake ** 2, rounds)
    names = ("win", "push", "lose", "player_blackjack", "dealer_blackjack", "double", "split", "surrender")
    probabilities = {name: t[name] / rounds for name in names}
    return report("blackjack", rules.to_json(), "simulation", rounds, probabilities, {"base": mean}, {"base": half},
                  strategy="basic strategy (multi-deck chart for these rules), never insurance",
                  shoe="a freshly shuffled shoe for every round", seed=seed)

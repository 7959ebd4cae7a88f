"""Vectorised slot math: every stop combination of a title as numpy tables, and a simulator that plays many cabinets in lockstep, giving exactly what `spin()` gives on the same stops.

Tables. A combination is one physical stop per reel (index `(p0 * n1 + p1) * n2 + p2`), weighted by the
product of the three stops' virtual weights, so summing over combinations is summing over every
virtual stop combination. Each payline of a combination shows a symbol triple; every distinct triple is
evaluated once by the title's own scalar evaluator (`Title.line_eval`, `Feature.line_fact`), so the
tables hold exactly what a spin reads.

Simulation. `simulate` plays `machines` independent cabinets for `spins` paid spins each (free spins are
played as they come and are not counted as spins), every cabinet keeping its own meters. `play` runs
the same step on given stops, which is how the tests prove it equal to `spin()` outcome by outcome.
Player choices are a policy: the bullfight pick (the draw decides, the pick cannot matter), Cash In!
when `cash_in_at` free winning spins are banked (0: never), and the paytable played.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cache
from typing import Any

import numpy as np

from controller.slots.title import LINES, Title

__all__ = ["Tables", "tables", "SimResult", "simulate", "play", "Policy"]


@dataclass(frozen=True)
class Tables:
    title: Title
    sizes: tuple[int, int, int]          # physical stops per reel
    weights: np.ndarray                  # (C,) virtual stop combinations behind each combination
    cycle: int                           # total virtual combinations (the product of the virtual reel sizes)
    to_physical: tuple[np.ndarray, ...]  # per reel: virtual stop -> physical stop
    triples: np.ndarray                  # (lines, C) triple id shown on each payline
    symbols: int                         # symbol count S: triple id = (a * S + b) * S + c
    pay: np.ndarray                      # (paytables, coins, T) credits for a triple at coins (with wilds)
    row: np.ndarray                      # (paytables, coins, T) paying row index, -1 for none
    mult: np.ndarray                     # (paytables, coins, T) wild multiplier of that row
    facts: tuple[np.ndarray, ...]        # per feature: (T,) its line fact for each triple
    _derived: dict = field(default_factory=dict, repr=False)  # arrays made from the above on first use

    @property
    def probability(self) -> np.ndarray:
        """(C,) the chance of each combination."""
        if "probability" not in self._derived:
            self._derived["probability"] = self.weights / self.cycle
        return self._derived["probability"]

    def line_pay(self, paytable: int, coins: int) -> np.ndarray:
        """(lines, C) credits each payline pays at `coins` coins per line."""
        key = (paytable, coins)
        if key not in self._derived:
            self._derived[key] = self.pay[paytable, coins - 1][self.triples]
        return self._derived[key]

    def spin_pay(self, paytable: int, coins: int, lines: int) -> np.ndarray:
        """(C,) credits the paylines 1..lines pay together."""
        return self.line_pay(paytable, coins)[:lines].sum(axis=0)

    def fact(self, feature: int) -> np.ndarray:
        """(C,) the feature's fact on the centre payline of every combination."""
        return self.facts[feature][self.triples[0]]

    def combination(self, virtual_stops: np.ndarray) -> np.ndarray:
        """Combination index of each row of an (N, 3) array of virtual stops."""
        p = [self.to_physical[r][virtual_stops[..., r]] for r in range(3)]
        return (p[0] * self.sizes[1] + p[1]) * self.sizes[2] + p[2]


@cache
def tables(title: Title) -> Tables:
    codes = title.codes
    s = len(codes)
    sizes = (title.reels[0].size, title.reels[1].size, title.reels[2].size)
    shown = [np.array([[title.index[reel.shown(p, row)] for p in range(reel.size)] for row in range(3)])
             for reel in title.reels]
    weights = np.einsum("i,j,k->ijk", *[np.array(r.weights, dtype=np.int64) for r in title.reels]).ravel()
    triples = np.stack([
        (shown[0][a][:, None, None] * s * s + shown[1][b][None, :, None] * s + shown[2][c][None, None, :]).ravel()
        for a, b, c in LINES[:title.lines]])
    used = np.unique(triples)
    n_pt, coins = len(title.paytables), title.max_coins
    pay = np.zeros((n_pt, coins, s ** 3), dtype=np.int64)
    row = np.full((n_pt, coins, s ** 3), -1, dtype=np.int64)
    mult = np.zeros((n_pt, coins, s ** 3), dtype=np.int64)
    facts = tuple(np.zeros(s ** 3, dtype=np.int64) for _ in title.features)
    for tid in used.tolist():
        triple = (codes[tid // (s * s)], codes[tid // s % s], codes[tid % s])
        for pt in range(n_pt):
            for k, best in enumerate(title.line_eval(triple, pt).by_coins):
                if best is not None:
                    pay[pt, k, tid], row[pt, k, tid], mult[pt, k, tid] = best.credits, best.row, best.multiplier
        for f, feature in enumerate(title.features):
            facts[f][tid] = feature.line_fact(triple)
    to_physical = tuple(np.array(r.physical, dtype=np.int64) for r in title.reels)
    cycle = int(np.prod([r.virtual_size for r in title.reels]))
    return Tables(title, sizes, weights, cycle, to_physical, triples, s, pay, row, mult, facts)


# ---------------------------------------------------------------------------------------------------
# Simulation


@dataclass(frozen=True)
class Policy:
    """The player's choices in a simulation."""

    paytable: int = 0
    cash_in_at: int = 1       # Cash In! as soon as this many free winning spins are banked (0: never)
    pick: str = "matador"     # the bullfight pick (cannot change the odds: the fight is a fair draw)


@dataclass(frozen=True)
class SimResult:
    bet: int                       # credits per paid spin
    paid: np.ndarray               # (machines,) paid spins counted on each machine
    won: np.ndarray                # (machines,) credits won, free spins and features included
    won_sq: float                  # sum over paid spins of (credits the spin and its free spins won)^2
    hits: int                      # paid spins that paid something on the spin itself
    progressive_hits: int
    progressive_contribution: int  # whole credits fed to the progressive meter

    @property
    def spins(self) -> int:
        return int(self.paid.sum())

    @property
    def machines(self) -> int:
        return len(self.paid)

    @property
    def rtp(self) -> float:
        """Return without the progressive jackpot (the runtime pays it from its meter)."""
        return float(self.won.sum()) / (self.spins * self.bet)

    def ci95(self) -> float:
        """95% half-width of the RTP, a ratio of sums over independent machines (delta method), so the
        meters' spin-to-spin correlation is accounted for."""
        stake = self.paid.astype(np.float64) * self.bet
        residual = self.won - self.rtp * stake
        return float(1.959963984540054 * residual.std(ddof=1) / np.sqrt(self.machines) / stake.mean())


def _winning_combinations(t: Tables, paytable: int, coins: int, lines: int) -> tuple[np.ndarray, np.ndarray]:
    pays = t.spin_pay(paytable, coins, lines)
    winners = np.nonzero(pays > 0)[0]
    return winners, np.cumsum(t.weights[winners])


class _Sim:
    """The lockstep state of `m` cabinets of one title at one bet. Each feature kind has a step method
    below that mirrors its scalar rule in controller/slots/features.py."""

    def __init__(self, title: Title, coins: int, lines: int, m: int, policy: Policy) -> None:
        if len(title.features) > 1:
            raise ValueError("the batch simulator plays titles with at most one feature")
        self.t = tables(title)
        self.title = title
        self.m, self.policy = m, policy
        self.bet = coins * lines
        self.max_bet = coins == title.max_coins and lines == title.lines
        self.pays = self.t.spin_pay(policy.paytable, coins, lines)
        self.centre = self.t.line_pay(policy.paytable, coins)[0]
        self.feature: Any = title.features[0] if title.features else None
        self.kind = self.feature.kind if self.feature else ""
        self.active = self.max_bet or (self.feature is not None and not self.feature.max_bet_only)
        self.fact = self.t.fact(0) if self.feature else None
        self.meters = {name: np.full(m, value, dtype=np.int64)
                       for name, value in (self.feature.meters.items() if self.feature else ())}
        self.free = np.zeros(m, dtype=np.int64)  # free spins left
        # the only free spins of these kinds are free *winning* spins (drawn among winning combinations)
        self.guaranteed_kind = self.kind in ("free_winning_spins", "loss_meter")
        self.carry = np.zeros(m, dtype=np.int64)
        self.winners, self.cum = _winning_combinations(self.t, policy.paytable, coins, lines)

    def keep(self, rows: np.ndarray) -> None:
        """Go on with the machines of `rows` (a boolean mask) only."""
        self.m = int(rows.sum())
        self.free, self.carry = self.free[rows], self.carry[rows]
        self.meters = {name: meter[rows] for name, meter in self.meters.items()}

    def draw_winning(self, gen: np.random.Generator, n: int) -> np.ndarray:
        """n combinations drawn uniformly among the winning virtual stop combinations."""
        return self.winners[np.searchsorted(self.cum, gen.integers(0, int(self.cum[-1]), size=n), side="right")]

    def step(self, combo: np.ndarray, pick_draw: np.ndarray | None = None) -> tuple[np.ndarray, ...]:
        """Play one spin on every machine at combinations `combo`. Returns (paid, won, hit, progressive, fed):
        whether the spin was paid, credits won, whether it won anything, progressive hits, credits fed."""
        paid = self.free == 0
        self.free = np.where(paid, self.free, self.free - 1)
        won = self.pays[combo]
        progressive = np.zeros(self.m, dtype=bool)
        if self.kind:
            assert self.fact is not None  # a feature's kind: its facts were built
            won, jackpot = getattr(self, "_" + self.kind)(self.fact[combo], paid, won, self.centre[combo], pick_draw)
            progressive = progressive | jackpot
        fed = np.zeros(self.m, dtype=np.int64)
        if self.title.progressive is not None and self.max_bet:
            self.carry = self.carry + np.where(paid, self.bet * self.title.progressive.contribution_bp, 0)
            fed, self.carry = np.divmod(self.carry, 10_000)
        return paid, won, (won > 0) | progressive, progressive, fed

    def _piggy_bank(self, fact, paid, won, line, draw):
        if self.active:
            bank = self.meters["piggy_bank"]
            win = fact == self.feature.WIN
            won = won + np.where(win, bank, 0)
            bank = np.where(fact == self.feature.FILL, bank + self.bet, bank)
            self.meters["piggy_bank"] = np.where(win, self.feature.start, bank)
        return won, False

    def _safe(self, fact, paid, won, line, draw):
        if self.active:
            f = self.feature
            bonus = f.bonus[self.bet - 1]
            after = self.meters["safe_clicks"] + fact
            three = fact == 3
            crack = ~three & (after >= f.clicks)
            won = won + np.where(three, f.three_dials * bonus, 0) + np.where(crack, bonus, 0)
            self.meters["safe_clicks"] = np.where(three | crack, 0, after)
        return won, False

    def _free_winning_spins(self, fact, paid, won, line, draw):
        f = self.feature
        self.free = np.where(~paid & ((fact & 4) != 0), 0, self.free)
        if self.active:
            count = fact & 3
            self.free = np.where(paid & (count == 3), f.for_three, np.where(paid & (count == 2), f.for_two, self.free))
        return won, False

    def _dragon_respins(self, fact, paid, won, line, draw):
        progressive = False
        if self.active:
            add = np.array((0,) + self.feature.respins)[fact]
            self.free = self.free + add
            total = self.meters["respins_total"] + add
            progressive = total >= self.feature.jackpot_at
            self.meters["respins_total"] = np.where(progressive | (self.free == 0), 0, total)
        return won, progressive

    def _bullfight(self, fact, paid, won, line, draw):
        if self.active:
            f = self.feature
            if draw is None:
                raise ValueError("the bullfight needs a pick draw per machine")
            right = draw == f.choices.index(self.policy.pick)
            won = won + np.where(fact == 1, np.where(right, f.win, f.lose), 0)
        return won, False

    def _snowman(self, fact, paid, won, line, draw):
        if self.active:
            f = self.feature
            count = self.meters["snowman"] + (fact >> 2)
            moved = np.minimum(fact & 3, count)
            count = count - moved
            bonus = self.meters["snowman_bonus"] + moved
            done = count >= f.target
            won = won + np.where(done, bonus, 0)
            self.meters["snowman"] = np.where(done, 0, count)
            self.meters["snowman_bonus"] = np.where(done, f.bonus, bonus)
        return won, False

    def _loss_meter(self, fact, paid, won, line, draw):
        lost = line == 0
        losses, banked = self.meters["loss_meter"], self.meters["free_winning_spins"]
        progressive = np.zeros(self.m, dtype=bool)
        clear = ~lost
        if self.active:
            counted = lost & paid
            losses = losses + counted
            progressive = counted & (losses >= self.feature.jackpot_at)
            banked = banked + (counted & np.isin(losses, np.array(self.feature.free_spin_at)))
            clear |= progressive
        self.meters["loss_meter"] = np.where(clear, 0, losses)
        self.meters["free_winning_spins"] = np.where(clear, 0, banked)
        return won, progressive

    def _light_speed(self, fact, paid, won, line, draw):
        progressive = False
        if self.active:
            f = self.feature
            level = np.minimum(f.top, self.meters["light_speed"] + (fact & 3))
            progressive = ((fact & 4) != 0) & (level == f.top)
            won = np.where(progressive, won - line, won * level)
            self.meters["light_speed"] = np.where(progressive | (won > 0), 1, level)
        return won, progressive

    def cash_in(self) -> None:
        """The policy's Cash In!: between spins, when enough free winning spins are banked."""
        at = self.policy.cash_in_at
        if self.kind != "loss_meter" or at <= 0:
            return
        banked = self.meters["free_winning_spins"]
        go = (self.free == 0) & (banked >= at)
        self.free = np.where(go, banked, self.free)
        self.meters["free_winning_spins"] = np.where(go, 0, banked)
        self.meters["loss_meter"] = np.where(go, 0, self.meters["loss_meter"])


def simulate(title: Title, spins: int, seed: int, machines: int = 200, coins: int | None = None,
             lines: int | None = None, policy: Policy = Policy()) -> SimResult:
    """Play `machines` cabinets at the given bet (default: max bet), seeded through controller/rng.py.

    Regenerative: every machine starts from a fresh state and, once it has played its share of `spins`
    paid spins, goes on to the next paid spin at which its meters are back at their starting values (a
    piggy bank just won, a safe just cracked, ...). So every machine plays whole cycles of its meters and
    the RTP has no start-up or cut-off bias. Each paid spin is a "session": its own win plus the free
    spins it leads to."""
    from controller.rng import SeededRng

    coins = title.max_coins if coins is None else coins
    lines = title.lines if lines is None else lines
    sim = _Sim(title, coins, lines, machines, policy)
    gen = SeededRng(seed).numpy()
    virtual = np.array([r.virtual_size for r in title.reels])
    target = max(1, spins // machines)
    fresh = {name: int(meter[0]) for name, meter in sim.meters.items()}
    # Per machine still playing (finished machines leave the arrays, so a long tail costs little):
    ids = np.arange(machines)                      # which machine each row is
    paid_spins = np.zeros(machines, dtype=np.int64)
    session = np.zeros(machines, dtype=np.int64)   # credits of the current session so far
    won = np.zeros(machines, dtype=np.int64)
    out_paid = np.zeros(machines, dtype=np.int64)
    out_won = np.zeros(machines, dtype=np.int64)
    won_sq = 0.0
    hits = prog = fed_total = 0
    while True:
        sim.cash_in()
        paid_next = sim.free == 0
        finishing = paid_next & (paid_spins >= target)
        for name, value in fresh.items():
            finishing &= sim.meters[name] == value
        if finishing.any():
            won_sq += float((session[finishing].astype(np.float64) ** 2).sum())
            out_paid[ids[finishing]], out_won[ids[finishing]] = paid_spins[finishing], won[finishing]
            keep = ~finishing
            sim.keep(keep)
            ids, paid_spins, session, won, paid_next = ids[keep], paid_spins[keep], session[keep], won[keep], paid_next[keep]
            if not len(ids):
                break
        combo = sim.t.combination(gen.integers(0, virtual, size=(len(ids), 3)))
        need = np.nonzero(~paid_next)[0] if sim.guaranteed_kind else ()
        if len(need):
            combo[need] = sim.draw_winning(gen, len(need))
        draws = gen.integers(0, 2, size=len(ids)) if sim.kind == "bullfight" else None
        paid, credits, hit, progressive, fed = sim.step(combo, draws)
        won_sq += float((session[paid & (paid_spins > 0)].astype(np.float64) ** 2).sum())
        session[paid] = 0
        paid_spins += paid
        session += credits
        won += credits
        hits += int((hit & paid).sum())
        prog += int(progressive.sum())
        fed_total += int(fed.sum())
    return SimResult(coins * lines, out_paid, out_won, won_sq, hits, prog, fed_total)


def play(title: Title, virtual_stops: np.ndarray, coins: int | None = None, lines: int | None = None,
         policy: Policy = Policy(), pick_draws: np.ndarray | None = None, machines: int = 1) -> dict[str, np.ndarray]:
    """Play given stops: `virtual_stops` is (spins, machines, 3); spin i of every machine uses row i (free
    spins included; stops of a free winning spin must win). Returns per spin and machine: paid, won,
    progressive, fed, and each meter after the spin — what the tests compare with `spin()`."""
    coins = title.max_coins if coins is None else coins
    lines = title.lines if lines is None else lines
    virtual_stops = np.asarray(virtual_stops, dtype=np.int64)
    n, m = virtual_stops.shape[:2]
    sim = _Sim(title, coins, lines, m, policy)
    out: dict[str, list] = {"paid": [], "won": [], "progressive": [], "fed": [], "free": []}
    out.update({name: [] for name in sim.meters})
    for i in range(n):
        sim.cash_in()
        combo = sim.t.combination(virtual_stops[i])
        draws = pick_draws[i] if pick_draws is not None else None
        paid, won, _, progressive, fed = sim.step(combo, draws)
        for key, value in (("paid", paid), ("won", won), ("progressive", progressive), ("fed", fed),
                           ("free", sim.free)):
            out[key].append(np.array(value))
        for name, meter in sim.meters.items():
            out[name].append(meter.copy())
    return {k: np.array(v) for k, v in out.items()}

"""PAR sheets for slot titles: return to player by bet, hit frequency, volatility, every paytable line and feature, top award odds, progressive figures.

Method (said in each sheet):
- "exact": the base game by enumerating every stop combination (every physical stop combination
  weighted by its virtual stops, which is every virtual stop combination); a stateless feature (the
  bullfight pick, wild multipliers, selectable paytables) adds its exact expectation.
- "markov": a persistent meter (piggy bank, safe clicks, free spins, dragon re-spins, snowman, loss
  meter, light-speed level) analysed exactly from the same enumeration: its stationary distribution
  (safe, snowman, loss meter, light speed), its renewal law (piggy bank, free winning spins) or the
  absorbing chain of a re-spin run (dragon, truncated where the leftover probability is below 1e-15).
- "simulation" (seeded, with a 95% interval): `simulate_sheet`, the cross-check of the two above; no title
  needs it for its sheet.
tests/test_slots_par.py proves each feature's analysis equal to the exact Markov chain obtained by
playing the real spin() on every stop combination from every reachable state of a small title.

Conventions: a "paid spin" is one the player pays for; its return includes the free spins and bonus
awards it leads to. Hit frequency is the chance that a paid spin pays something on the spin itself.
Volatility is the standard deviation of a paid spin's return per coin bet. A progressive jackpot is
valued at its reset value (the jackpot's growth is the contribution rate, returned in the long run), so
RTP = base + hit rate x reset / bet + contribution rate, computed at each denomination.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, Callable

import numpy as np

from controller.batch.slots import Tables, tables
from controller.slots.title import Bet, Title

__all__ = ["par_sheet", "moments", "simulate_sheet", "Moments", "bet_key"]

TRUNCATION = 1e-15


@dataclass
class Moments:
    """A paid spin's return X at one bet: E[X], E[X^2], P(the spin itself pays), progressive hits per spin."""

    mean: float
    second: float
    hit: float
    progressive: float = 0.0
    method: str = "exact"
    exact: Fraction | None = None
    details: dict[str, Any] = field(default_factory=dict)


def bet_key(title: Title, bet: Bet) -> str:
    return str(bet.total) if title.max_coins == 1 or title.lines == 1 else f"{bet.coins}x{bet.lines}"


class _Classes:
    """Sums over the combinations grouped by a key: probability, E[pay; class], E[pay^2; class], P(no pay; class)."""

    def __init__(self, t: Tables, key: np.ndarray, pays: np.ndarray) -> None:
        w = t.probability
        self.keys, inverse = np.unique(key, return_inverse=True)
        n = len(self.keys)
        self.p = np.bincount(inverse, w, n)
        self.s1 = np.bincount(inverse, w * pays, n)
        self.s2 = np.bincount(inverse, w * pays.astype(np.float64) ** 2, n)
        self.zero = np.bincount(inverse, w * (pays == 0), n)


def _plain(t: Tables, pays: np.ndarray) -> Moments:
    w = t.weights
    total = int((w * pays).sum())
    second = float((w.astype(np.float64) * pays.astype(np.float64) ** 2).sum()) / t.cycle
    hit = float(w[pays > 0].sum()) / t.cycle
    return Moments(total / t.cycle, second, hit, exact=Fraction(total, t.cycle))


def _stationary(matrix: np.ndarray) -> np.ndarray:
    n = len(matrix)
    a = matrix.T - np.eye(n)
    a[-1] = 1.0
    b = np.zeros(n)
    b[-1] = 1.0
    return np.linalg.solve(a, b)


def _meter_chain(states: int, classes: _Classes, step: Callable[[int, Any], tuple[int, float, float, float, bool]],
                 award_on_spin: bool = True) -> tuple[Moments, np.ndarray]:
    """A meter with `states` values driven by the class of each spin. `step(state, key)` gives
    (next state, mean award a, second moment of the award, multiplier m of the line pay, progressive):
    the spin returns X = a + m * pay. Returns the stationary moments of X and the distribution. With
    `award_on_spin` False the award comes later (free spins), so it does not make the spin a hit."""
    matrix = np.zeros((states, states))
    mean = np.zeros(states)
    second = np.zeros(states)
    hit = np.zeros(states)
    prog = np.zeros(states)
    for s in range(states):
        for i, key in enumerate(classes.keys.tolist()):
            p, s1, s2, zero = classes.p[i], classes.s1[i], classes.s2[i], classes.zero[i]
            nxt, a1, a2, m, progressive = step(s, key)
            matrix[s, nxt] += p
            mean[s] += p * a1 + m * s1
            second[s] += p * a2 + 2 * a1 * m * s1 + m * m * s2
            if (a1 > 0 and award_on_spin) or progressive:
                hit[s] += p
            elif m:
                hit[s] += p - zero
            prog[s] += p * progressive
    pi = _stationary(matrix)
    return Moments(float(pi @ mean), float(pi @ second), float(pi @ hit), float(pi @ prog), "markov"), pi


# ---------------------------------------------------------------------------------------------------
# One analyser per feature kind, called when the feature plays at this bet:
# (tables, title, feature, pays at this bet, bet, progressive reset in credits)


def _piggy_bank(t, title, f, pays, bet, reset):
    base = _plain(t, pays)
    w = t.probability
    fact = t.fact(0)
    p_fill, p_win = float(w[fact == f.FILL].sum()), float(w[fact == f.WIN].sum())
    q = p_fill / (p_fill + p_win)
    ek, ek2 = q / (1 - q), q * (1 + q) / (1 - q) ** 2  # fills since the last win: geometric
    eb = f.start + bet.total * ek
    eb2 = f.start ** 2 + 2 * f.start * bet.total * ek + bet.total ** 2 * ek2
    pays_on_win = float((w * pays)[fact == f.WIN].sum())
    hit = base.hit + float(w[(fact == f.WIN) & (pays == 0)].sum())
    return Moments(base.mean + p_win * eb, base.second + 2 * pays_on_win * eb + p_win * eb2, hit, method="markov",
                   details={"piggy_bank": {"win_one_in": 1 / p_win, "fill_probability": p_fill,
                                           "mean_bank_when_won": eb, "rtp": p_win * eb / bet.total,
                                           "law": "renewal: the bank holds start + bet x (three-blank spins since "
                                                  "the last win), geometric"}})


def _safe(t, title, f, pays, bet, reset):
    classes = _Classes(t, t.fact(0), pays)
    bonus = f.bonus[bet.total - 1]

    def step(clicks, dials):
        if dials == 3:
            return 0, f.three_dials * bonus, (f.three_dials * bonus) ** 2, 1, False
        if clicks + dials >= f.clicks:
            return 0, bonus, bonus ** 2, 1, False
        return clicks + dials, 0.0, 0.0, 1, False

    m, pi = _meter_chain(f.clicks, classes, step)
    p3 = float(classes.p[classes.keys == 3].sum())
    base = _plain(t, pays)
    m.details = {"safe": {"three_dials_one_in": 1 / p3, "secret_bonus": bonus,
                          "rtp": (m.mean - base.mean) / bet.total, "mean_clicks": float(pi @ np.arange(f.clicks)),
                          "law": f"stationary distribution of the safe counter (0..{f.clicks - 1})"}}
    return m


def _free_winning_spins(t, title, f, pays, bet, reset):
    base = _plain(t, pays)
    w = t.probability
    fact = t.fact(0)
    win = pays > 0
    p_win = float(w[win].sum())
    end = win & ((fact & 4) != 0)
    mu = float((w * pays)[win].sum()) / p_win            # a free winning spin pays pays | win
    mu2 = float((w * pays.astype(np.float64) ** 2)[win].sum()) / p_win
    r = float(w[end].sum()) / p_win
    mu_go = float((w * pays)[win & ~end].sum()) / p_win  # E[Y; the spins go on]

    def run(n):
        e = e2 = 0.0
        for _ in range(n):
            e, e2 = mu + (1 - r) * e, mu2 + 2 * mu_go * e + (1 - r) * e2
        return e, e2

    mean, second, extra = base.mean, base.second, {}
    for count, spins in ((2, f.for_two), (3, f.for_three)):
        sel = (fact & 3) == count
        p = float(w[sel].sum())
        e, e2 = run(spins)
        mean += p * e
        second += 2 * float((w * pays)[sel].sum()) * e + p * e2
        extra[f"{count}_symbols"] = {"one_in": 1 / p, "free_spins": spins, "mean_run_pays": e}
    extra.update({"mean_free_spin_pay": mu, "end_combination_given_win": r, "rtp": (mean - base.mean) / bet.total,
                  "law": "free winning spins drawn among winning combinations; a run ends early on the end combination"})
    return Moments(mean, second, base.hit, method="markov", details={"free_winning_spins": extra})


def _dragon_respins(t, title, f, pays, bet, reset):
    base = _plain(t, pays)
    classes = _Classes(t, t.fact(0), pays)
    add = [0, *f.respins]
    rmax = 256
    while True:  # grow the truncation until the chance of ever needing more re-spins is negligible
        run = _respin_run(classes, add, f.jackpot_at, rmax, reset)
        starts = [run["overflow"][n, n] for n in f.respins]
        if max(starts) < TRUNCATION or rmax >= 8192:
            break
        rmax *= 2
    v, v2, g = run["value"], run["second"], run["jackpots"]
    mean, second, prog = base.mean, base.second, 0.0
    runs = {}
    for i, parts in enumerate(classes.keys.tolist()):
        if parts == 0:
            continue
        n = add[parts]
        p, s1 = classes.p[i], classes.s1[i]
        mean += p * v[n, n]
        second += 2 * s1 * v[n, n] + p * v2[n, n]
        prog += p * g[n, n]
        runs[f"{parts}_parts"] = {"one_in": 1 / p, "respins": n, "mean_run_value": v[n, n],
                                  "jackpot_probability": g[n, n]}
    # a trigger alone pays nothing on the spin itself, so the hit frequency is the paytable's
    return Moments(mean, second, base.hit, prog, "markov", details={"dragon_respins": {
        **runs, "rtp": (mean - base.mean - prog * reset) / bet.total,
        "respins_per_respin": float(sum(add[k] * p for k, p in zip(classes.keys.tolist(), classes.p))),
        "law": f"absorbing chain over (re-spins left, run total < {f.jackpot_at}), solved exactly with at most "
               f"{rmax} re-spins left; chance of a run ever needing more: {max(starts):.1e}"}})


def _respin_run(classes: _Classes, add: list[int], jackpot: int, rmax: int, reset: float) -> dict[str, np.ndarray]:
    """A re-spin run from (re-spins left r, run total t): its value (mean and second moment, the jackpot at
    `reset`), expected jackpots, and the chance of ever going past `rmax` re-spins left (then held there).

    For each t, r -> r - 1 at the same t when a re-spin wins none, so each column is a first-order
    recurrence in r; other re-spins lead to a larger t (solved first, from the top down) or, with a
    jackpot, to t = 0, which is iterated to a fixed point (the jackpot is rare, so it settles fast)."""
    keys = classes.keys.tolist()
    p0 = float(classes.p[keys.index(0)]) if 0 in keys else 0.0
    s10 = float(classes.s1[keys.index(0)]) if 0 in keys else 0.0
    s20 = float(classes.s2[keys.index(0)]) if 0 in keys else 0.0
    others = [(add[k], float(classes.p[i]), float(classes.s1[i]), float(classes.s2[i]))
              for i, k in enumerate(keys) if add[k]]
    shape = (rmax + 1, jackpot)
    v, v2, g, h = np.zeros(shape), np.zeros(shape), np.zeros(shape), np.zeros(shape)
    below = np.arange(rmax)  # r - 1 for r = 1..rmax
    for _ in range(100):
        before = (v[:, 0].copy(), g[:, 0].copy())
        for tt in range(jackpot - 1, -1, -1):
            c1 = np.full(rmax, s10)
            c2 = np.full(rmax, s20)
            cg = np.zeros(rmax)
            ch = np.zeros(rmax)
            for n, pk, s1, s2 in others:
                r2 = below + n
                over = r2 > rmax
                r2 = np.minimum(r2, rmax)
                won = tt + n >= jackpot
                t2, prize = (0, reset) if won else (tt + n, 0.0)
                fv, fv2 = v[r2, t2], v2[r2, t2]
                c1 += s1 + pk * (prize + fv)
                c2 += s2 + 2 * s1 * (prize + fv) + pk * (prize * prize + 2 * prize * fv + fv2)
                cg += pk * (float(won) + g[r2, t2])
                ch += pk * np.where(over, 1.0, h[r2, t2])
            col1, col2, colg, colh = v[:, tt], v2[:, tt], g[:, tt], h[:, tt]
            for r in range(1, rmax + 1):  # the re-spins that win none: same t, one fewer left
                prev = col1[r - 1]
                col1[r] = c1[r - 1] + p0 * prev
                col2[r] = c2[r - 1] + 2 * s10 * prev + p0 * col2[r - 1]
                colg[r] = cg[r - 1] + p0 * colg[r - 1]
                colh[r] = ch[r - 1] + p0 * colh[r - 1]
        if np.allclose(before[0], v[:, 0], rtol=1e-13, atol=0) and np.allclose(before[1], g[:, 0], rtol=1e-13, atol=1e-300):
            break
    return {"value": v, "second": v2, "jackpots": g, "overflow": h}


def _bullfight(t, title, f, pays, bet, reset):
    base = _plain(t, pays)
    w = t.weights
    trig = t.fact(0) == 1
    hits = int(w[trig].sum())
    # The fight is a fair draw, so either pick wins `win` half the time and `lose` the other half.
    value = Fraction(f.win + f.lose, 2)
    exact = base.exact + Fraction(hits, t.cycle) * value
    p = hits / t.cycle
    second = base.second + 2 * float((w * pays)[trig].sum()) / t.cycle * float(value) + p * (f.win ** 2 + f.lose ** 2) / 2
    hit = base.hit + float(w[trig & (pays == 0)].sum()) / t.cycle
    return Moments(float(exact), second, hit, exact=exact, details={"bullfight": {
        "one_in": 1 / p, "mean_award": float(value), "rtp": p * float(value) / bet.total,
        "law": "exact: trigger probability x (right pick + wrong pick) / 2, whichever side is picked"}})


def _snowman(t, title, f, pays, bet, reset):
    base = _plain(t, pays)
    classes = _Classes(t, t.fact(0), pays)
    n = f.target
    keys = classes.keys.tolist()
    moved = np.zeros((n, len(keys)))
    done = np.zeros((n, len(keys)), dtype=bool)
    nxt = np.zeros((n, len(keys)), dtype=np.int64)
    for s in range(n):
        for i, key in enumerate(keys):
            count = s + (key >> 2)
            m = min(key & 3, count)
            count -= m
            moved[s, i], done[s, i], nxt[s, i] = m, count >= n, 0 if count >= n else count
    matrix = np.zeros((n, n))
    keep = np.zeros((n, n))  # transitions that keep the bonus meter growing
    for i in range(len(keys)):
        np.add.at(matrix, (np.arange(n), nxt[:, i]), classes.p[i])
        np.add.at(keep, (np.arange(n), nxt[:, i]), np.where(done[:, i], 0.0, classes.p[i]))
    pi = _stationary(matrix)
    # u(s) = E[A; meter at s], w2(s) = E[A^2; meter at s], A = credits the suns moved since the last win.
    b1 = np.zeros(n)
    for i in range(len(keys)):
        live = ~done[:, i]
        np.add.at(b1, nxt[live, i], classes.p[i] * moved[live, i] * pi[live])
    lhs = np.eye(n) - keep.T
    u = np.linalg.solve(lhs, b1)
    b2 = np.zeros(n)
    for i in range(len(keys)):
        live = ~done[:, i]
        m = moved[live, i]
        np.add.at(b2, nxt[live, i], classes.p[i] * (2 * m * u[live] + m * m * pi[live]))
    w2 = np.linalg.solve(lhs, b2)
    award = award2 = cross = hit = rate = 0.0
    for i in range(len(keys)):
        d = done[:, i]
        c = f.bonus + moved[d, i]
        award += classes.p[i] * float((c * pi[d] + u[d]).sum())
        award2 += classes.p[i] * float((c * c * pi[d] + 2 * c * u[d] + w2[d]).sum())
        cross += classes.s1[i] * float((c * pi[d] + u[d]).sum())
        hit += classes.zero[i] * float(pi[d].sum())
        rate += classes.p[i] * float(pi[d].sum())
    return Moments(base.mean + award, base.second + 2 * cross + award2, base.hit + hit, method="markov",
                   details={"snowman": {"won_one_in": 1 / rate, "mean_bonus_when_won": award / rate,
                                        "rtp": award / bet.total, "mean_snowman": float(pi @ np.arange(n)),
                                        "law": f"stationary distribution of the snowman (0..{n - 1}) with the "
                                               "bonus meter's first two moments carried along"}})


def _loss_meter(t, title, f, pays, bet, reset, policy: int | None = None):
    base = _plain(t, pays)
    classes = _Classes(t, (pays > 0).astype(np.int64), pays)
    mu_win = float(classes.s1[classes.keys == 1].sum() / classes.p[classes.keys == 1].sum())
    mu2_win = float(classes.s2[classes.keys == 1].sum() / classes.p[classes.keys == 1].sum())
    var_win = mu2_win - mu_win ** 2
    policies = {0: "never cash in"}
    policies.update({k: f"cash in {k} free winning spin(s) as soon as banked" for k in range(1, len(f.free_spin_at) + 1)})
    results = {}
    for k in policies:
        cash_at = f.free_spin_at[k - 1] if k else None

        def step(losses, win, cash_at=cash_at, k=k):
            if win:
                return 0, 0.0, 0.0, 1, False
            losses += 1
            if losses >= f.jackpot_at:
                return 0, reset, reset * reset, 1, True
            if losses == cash_at:  # Cash In!: k free winning spins, each pays pays | win
                return 0, k * mu_win, k * var_win + (k * mu_win) ** 2, 1, False
            return losses, 0.0, 0.0, 1, False

        states = cash_at if cash_at else f.jackpot_at
        results[k] = _meter_chain(states, classes, step, award_on_spin=False)[0]
    best = max(results, key=lambda k: results[k].mean) if policy is None else policy
    chosen = results[best]
    chosen.details = {"loss_meter": {
        "policy": policies[best], "cash_in_at": best, "mean_free_winning_spin_pay": mu_win,
        "rtp": (chosen.mean - base.mean - chosen.progressive * reset) / bet.total,
        "policies": {policies[k]: {"cash_in_at": k, "rtp": m.mean / bet.total, "progressive_one_in":
                                   (1 / m.progressive if m.progressive else None)} for k, m in results.items()},
        "law": f"stationary distribution of the loss meter (0..{f.jackpot_at - 1}) under each Cash In! policy; the "
               "sheet's figures are for the player's best policy"}}
    return chosen


def _light_speed(t, title, f, pays, bet, reset):
    fact = t.fact(0)
    classes = _Classes(t, fact * 2 + (pays > 0), pays)

    def step(level, key):
        fact, win = key >> 1, key & 1
        reached = min(f.top, level + 1 + (fact & 3)) - 1
        if fact & 4 and reached == f.top - 1:
            return 0, reset, reset * reset, 0, True
        if win:
            return 0, 0.0, 0.0, reached + 1, False
        return reached, 0.0, 0.0, 1, False

    m, pi = _meter_chain(f.top, classes, step)
    base = _plain(t, pays)
    m.details = {"light_speed": {"rtp": (m.mean - base.mean - m.progressive * reset) / bet.total,
                                 "levels": {f"{i + 1}x": float(p) for i, p in enumerate(pi)},
                                 "law": f"stationary distribution of the meter (1x..{f.top}x)"}}
    return m


ANALYSERS = {"piggy_bank": _piggy_bank, "safe": _safe, "free_winning_spins": _free_winning_spins,
             "dragon_respins": _dragon_respins, "bullfight": _bullfight, "snowman": _snowman,
             "loss_meter": _loss_meter, "light_speed": _light_speed}


def moments(title: Title, bet: Bet, paytable: int = 0, reset: float = 0.0, cash_in_at: int | None = None) -> Moments:
    """The return of one paid spin at `bet` (progressive valued at `reset` credits). For a loss meter,
    `cash_in_at` fixes the Cash In! policy (0: never); by default the player's best."""
    t = tables(title)
    pays = t.spin_pay(paytable, bet.coins, bet.lines)
    if not title.features:
        return _plain(t, pays)
    feature = title.features[0]
    if feature.max_bet_only and bet != title.max_bet:
        return _plain(t, pays)  # the feature does not play below max bet
    if feature.kind == "loss_meter":
        return _loss_meter(t, title, feature, pays, bet, reset, cash_in_at)
    return ANALYSERS[feature.kind](t, title, feature, pays, bet, reset)


# ---------------------------------------------------------------------------------------------------
# The sheet


def _lines_table(title: Title, paytable: int, bet: Bet) -> list[dict[str, Any]]:
    t = tables(title)
    rows = title.paytables[paytable].rows
    k = bet.coins - 1
    rid = t.row[paytable, k][t.triples[:bet.lines]]
    mult = t.mult[paytable, k][t.triples[:bet.lines]]
    pay = t.pay[paytable, k][t.triples[:bet.lines]]
    w = np.broadcast_to(t.weights, rid.shape)
    out = []
    for r in range(len(rows)):
        for m in sorted(set(mult[rid == r].tolist())):
            sel = (rid == r) & (mult == m)
            hits = int(w[sel].sum())
            credits = int(pay[sel].sum() // max(int(sel.sum()), 1))
            out.append({"combo": rows[r].text + (f" (wilds x{m})" if m > 1 else ""), "pays": list(rows[r].pays),
                        "multiplier": m, "credits": credits, "hits_per_cycle": hits,
                        "probability": hits / t.cycle, "one_in": t.cycle / hits if hits else None,
                        "rtp": int((w[sel] * pay[sel]).sum()) / (t.cycle * bet.total)})
    return out


def _top_award(title: Title, paytable: int, bet: Bet) -> dict[str, Any]:
    t = tables(title)
    line = t.line_pay(paytable, bet.coins)[:bet.lines]
    top = int(line.max())
    hits = int(np.broadcast_to(t.weights, line.shape)[line == top].sum())
    rid = t.row[paytable, bet.coins - 1][t.triples[:bet.lines]][line == top]
    return {"combo": title.paytables[paytable].rows[int(rid[0])].text, "credits": top,
            "probability": hits / t.cycle, "one_in": t.cycle / hits}


def _paytable_sheet(title: Title, pt: int) -> dict[str, Any]:
    max_bet = title.max_bet
    prog = title.progressive
    contribution = prog.contribution_bp / 10_000 if prog else 0.0
    by_bet, exact = {}, None
    for bet in title.bets():
        m = moments(title, bet, pt)
        by_bet[bet_key(title, bet)] = m.mean / bet.total
        if bet == max_bet and m.exact is not None and not prog:
            exact = m.exact / bet.total
    # A progressive is valued at its reset, which is in dollars: the return differs by denomination, and
    # the sheet heads with the lowest.
    per_denom: dict[int, dict[str, Any]] = {}
    for d in (title.denominations if prog else title.denominations[:1]):
        reset = prog.reset_credits(d) if prog else 0
        m = moments(title, max_bet, pt, reset)
        rtp_reset = m.progressive * reset / max_bet.total
        base = m.mean / max_bet.total - rtp_reset
        entry: dict[str, Any] = {"moments": m, "base_rtp": base, "rtp_reset": rtp_reset, "rtp": base + rtp_reset + contribution}
        if prog:
            entry["reset_credits"] = reset
        per_denom[d] = entry
    d = min(per_denom, key=lambda k: per_denom[k]["rtp"])
    head = per_denom[d]
    m = head["moments"]
    by_bet[bet_key(title, max_bet)] = head["rtp"]
    if "loss_meter" in m.details:
        # every Cash In! policy's full return (jackpot at reset and contribution included) at each denomination
        policies = {name: {"cash_in_at": p["cash_in_at"], "progressive_one_in": p["progressive_one_in"],
                           "rtp_by_denomination": {str(k): e["moments"].details["loss_meter"]["policies"][name]["rtp"]
                                                   + contribution for k, e in per_denom.items()}}
                    for name, p in m.details["loss_meter"]["policies"].items()}
        m.details = {"loss_meter": {**m.details["loss_meter"], "policies": policies}}
    return {
        "rtp": head["rtp"], "base_rtp": head["base_rtp"], "rtp_by_bet": by_bet, "hit_frequency": m.hit,
        "volatility": math.sqrt(max(m.second - m.mean ** 2, 0.0)) / max_bet.total, "method": m.method,
        "rtp_exact": str(exact) if exact is not None and m.method == "exact" else None,
        "lines_table": _lines_table(title, pt, max_bet), "top_award": _top_award(title, pt, max_bet),
        "features": m.details,
        "progressive": None if not prog else {
            "reset_cents": prog.reset_cents, "contribution_rate": contribution, "hit_probability": m.progressive,
            "one_in": 1 / m.progressive if m.progressive else None, "qualifying_bet": max_bet.total,
            "headline_denomination_cents": d,
            "by_denomination": {str(k): {key: v for key, v in e.items() if key != "moments"}
                                for k, e in per_denom.items()}},
    }


def par_sheet(title: Title, paytable: int | None = None) -> dict[str, Any]:
    """The PAR sheet of `title`. A title with several paytables gets one per paytable under "paytables";
    the headline figures are those of `paytable` (default: the first)."""
    t = tables(title)
    chosen = range(len(title.paytables)) if paytable is None else [paytable]
    sheets = {pt: _paytable_sheet(title, pt) for pt in chosen}
    head = sheets[0 if paytable is None else paytable]
    out = {
        "title": title.name, "id": title.id, "method": head["method"], "max_coins": title.max_bet.total,
        "coins_per_line": title.max_coins, "lines": title.lines, "denominations": list(title.denominations),
        "rtp": head["rtp"], "rtp_by_bet": head["rtp_by_bet"], "hit_frequency": head["hit_frequency"],
        "volatility": head["volatility"], "ci95": None, "target_rtp": list(title.target_rtp), "cycle": t.cycle,
        "reels": {"physical": [r.size for r in title.reels], "virtual": [r.virtual_size for r in title.reels]},
        "rtp_exact": head["rtp_exact"], "base_rtp": head["base_rtp"], "lines_table": head["lines_table"],
        "top_award": head["top_award"], "features": head["features"], "progressive": head["progressive"],
    }
    if len(title.paytables) > 1:
        out["paytable"] = title.paytables[0 if paytable is None else paytable].name
        out["paytables"] = {title.paytables[pt].name: {k: s[k] for k in ("rtp", "rtp_by_bet", "hit_frequency",
                                                                           "volatility", "rtp_exact", "top_award",
                                                                           "lines_table")}
                            for pt, s in sheets.items()}
    return out


def simulate_sheet(title: Title, spins: int, seed: int, machines: int = 100, paytable: int = 0,
                   cash_in_at: int = 1) -> dict[str, Any]:
    """A seeded simulation of `spins` max-bet paid spins through the vectorised path (proven equal to
    spin()), beside the exact figure it should agree with. Its RTP leaves out the progressive jackpot and
    contribution (the runtime pays those), so it is compared with the exact sheet's base_rtp."""
    from controller.batch.slots import Policy, simulate

    policy = Policy(paytable=paytable, cash_in_at=cash_in_at)
    result = simulate(title, spins, seed, machines=machines, policy=policy)
    mean = float(result.won.sum()) / result.spins
    second = result.won_sq / result.spins
    m = moments(title, title.max_bet, paytable, 0.0, cash_in_at)  # the jackpot is not in the simulated return
    exact = m.mean / title.max_bet.total
    ci = result.ci95()
    return {"title": title.name, "id": title.id, "method": "simulation", "spins": result.spins, "machines": machines,
            "seed": seed, "paytable": paytable, "cash_in_at": cash_in_at,
            "rtp": result.rtp, "ci95": ci, "exact_rtp": exact, "z": (result.rtp - exact) / (ci / 1.959963984540054),
            "hit_frequency": result.hits / result.spins, "exact_hit_frequency": m.hit,
            "volatility": math.sqrt(max(second - mean ** 2, 0.0)) / result.bet,
            "exact_volatility": math.sqrt(max(m.second - m.mean ** 2, 0.0)) / title.max_bet.total,
            "progressive_hits": result.progressive_hits,
            "progressive_expected": m.progressive * result.spins if title.progressive else 0.0}

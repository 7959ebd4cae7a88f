"""Advantage-play alerts for the pit: the Hi-Lo count of the journaled cards, and tests of each spot's bets and decisions against it and against the hole card.

A pure fold over the table's journal records (and the effects the table's fold gives for them), so a replay
gives the very same alerts: `step(state, record, effects)`, or `observe` with the game event already decoded.
Alerts go to the pit only (`pit_view`); nothing in here reaches a player's, spot's or dealer's screen, and
nothing happens automatically: each alert carries its evidence (the plot data, the statistic and its threshold)
for a supervisor to judge.

The tests (thresholds in `Thresholds`; the bench `croupier bench apalerts` measures their false-alert rate and
the shoes to a detection, tuned on one range of seeds and reported on another):

- bet_ramp: per spot, the regression of log(bet) on the true count at the bet over the spot's rounds of the last
  `ramp_window_shoes` shoes; its likelihood-ratio statistic LR = -n ln(1 - r^2) (chi-square, 1 df, under no
  relation) is looked at after every shoe, and an alert is raised when r > 0 and LR >= `ramp_lr`.
- wonging: a spot's mid-shoe entries (it bets in a round but not in the round before, in the same shoe); the
  binomial tail of entries at a true count >= `wong_tc` against the table's own share of such rounds.
- insurance: insurance taken against the true count at the offer: Fisher's exact test (one-sided) of "took it"
  against "true count >= `insurance_tc`".
- hole_card: a spot's first decision to hit or stand on a hard 12 to 16, against whether the dealer's two cards
  (hole card included) make the dealer draw; the Cochran-Mantel-Haenszel z over strata of (up card, player's
  total), so what the up card and the player's own cards explain is taken out. A player who sees the hole card
  stands when the dealer must draw and hits when the dealer stands.

Cards reach the count when they are seen: face up when placed, a face-down card when revealed (or when its round
ends). Decks left: the shoe's size less the cards dealt from it (face down ones too), in decks.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any, Iterable

from controller.cards import Card
from controller.games.base import (
    CardPlaced, CardsRevealed, CloseBets, Decision, Effect, Event, NewShoe, OpenBets, PlaceBet, RemoveBet,
    RoundSettled, RoundVoided, event_from_json,
)
from controller.hands.points import blackjack_total, blackjack_value

__all__ = ["Thresholds", "APAlert", "SpotLog", "APState", "new_state", "observe", "step", "hilo", "true_count",
           "pit_view", "replay", "correlation", "ramp_lr", "binomial_tail", "fisher_greater", "cmh_z", "KINDS"]

KINDS = ("bet_ramp", "wonging", "insurance", "hole_card")


@dataclass(frozen=True, slots=True)
class Thresholds:
    """Where each test raises an alert (tuned on the bench's tuning seeds, see `croupier bench apalerts`)."""

    ramp_lr: float = 10.8             # LR = -n ln(1-r^2) of log(bet) on the true count (chi-square 1 df)
    ramp_min_rounds: int = 24         # the spot's rounds in the window before the test is looked at
    ramp_window_shoes: int = 8        # the window: the spot's rounds in the last so many shoes
    wong_tc: float = 2.0              # a "high" true count for wonging
    wong_p: float = 0.001             # binomial tail of high-count entries
    wong_min: int = 4                 # high-count entries before an alert
    insurance_tc: float = 3.0         # Hi-Lo's insurance index: taking it above pays
    insurance_p: float = 0.001        # Fisher's exact one-sided p
    insurance_min: int = 3            # insurances taken at a high count before an alert
    hole_z: float = 3.5               # CMH z of standing against the dealer having to draw
    hole_min: int = 12                # informative decisions (in strata where both answers occur in the data)


@dataclass(frozen=True, slots=True)
class APAlert:
    """An alert for the pit: what, which spot, when (shoe, round), the statistic against its threshold, the evidence."""

    kind: str
    spot: int
    shoe: int
    round: int
    statistic: float
    threshold: float
    text: str
    evidence: Mapping[str, Any] = field(compare=False)

    def json(self) -> dict[str, Any]:
        return {"kind": self.kind, "spot": self.spot, "shoe": self.shoe, "round": self.round,
                "statistic": round(self.statistic, 4), "threshold": self.threshold, "text": self.text,
                "evidence": dict(self.evidence)}


@dataclass(frozen=True, slots=True)
class SpotLog:
    """What one spot did that the tests read; each test's part is emptied when it raises an alert."""

    pairs: tuple[tuple[float, int, int], ...] = ()            # (true count, bet, shoe) of each round bet
    last: tuple[int, int] = (-1, -1)                          # (shoe, round of the shoe) last bet
    entries: tuple[tuple[int, float], ...] = ()               # (round, true count) of each mid-shoe entry
    insurance: tuple[tuple[float, bool], ...] = ()            # (true count at the offer, took it)
    holecard: tuple[tuple[int, int, bool, bool], ...] = ()    # (up value, player total, dealer draws, stood)


@dataclass(frozen=True, slots=True)
class _Round:
    number: int
    tc: float                                             # the true count when the bets opened
    bets: tuple[tuple[int, int], ...] = ()                # (spot, credits) over all its boxes
    cards: tuple[tuple[str, Card, bool], ...] = ()        # (to, card, face up) as placed
    decided: tuple[int, ...] = ()                         # spots that made their first play decision


@dataclass(frozen=True, slots=True)
class APState:
    thresholds: Thresholds = Thresholds()
    shoe: int = 0                 # shoes loaded so far (the one in play)
    decks: int = 0
    dealt: int = 0                # cards out of the shoe in play
    running: int = 0              # Hi-Lo running count of the cards seen
    hidden: tuple[Card, ...] = () # placed face down, not yet seen
    shoe_round: int = -1          # rounds of the shoe in play so far, less one
    rounds: int = 0               # rounds of the table (bets closed)
    high_rounds: int = 0          # of them at a true count >= wong_tc
    round: _Round | None = None
    spots: tuple[tuple[int, SpotLog], ...] = ()
    alerts: tuple[APAlert, ...] = ()


def new_state(thresholds: Thresholds = Thresholds()) -> APState:
    return APState(thresholds)


def hilo(card: Card) -> int:
    """Hi-Lo: 2-6 count +1, 7-9 count 0, tens and aces -1."""
    v = blackjack_value(card)
    return 1 if 2 <= v <= 6 else -1 if v in (1, 10) else 0


def true_count(state: APState) -> float:
    """The running count per deck left in the shoe (0 before a shoe is loaded)."""
    if state.decks <= 0:
        return 0.0
    left = max(state.decks * 52 - state.dealt, 26) / 52   # half a deck at the least, as a counter reckons
    return state.running / left


# --------------------------------------------------------------------------------------------- statistics


def correlation(xs: Iterable[float], ys: Iterable[float]) -> float | None:
    """Pearson's r; None when either side does not vary."""
    xl, yl = list(xs), list(ys)
    n = len(xl)
    if n < 3:
        return None
    mx, my = sum(xl) / n, sum(yl) / n
    sxx = sum((x - mx) ** 2 for x in xl)
    syy = sum((y - my) ** 2 for y in yl)
    if sxx <= 1e-12 or syy <= 1e-12:
        return None
    sxy = sum((x - mx) * (y - my) for x, y in zip(xl, yl))
    return max(-1.0, min(1.0, sxy / math.sqrt(sxx * syy)))


def ramp_lr(r: float, n: int) -> float:
    """The likelihood-ratio statistic of a normal regression's slope: -n ln(1 - r^2)."""
    return -n * math.log(max(1e-300, 1.0 - r * r))


def binomial_tail(k: int, n: int, p: float) -> float:
    """P(X >= k) for X ~ Binomial(n, p)."""
    if k <= 0:
        return 1.0
    if k > n:
        return 0.0
    try:
        return min(1.0, sum(math.comb(n, i) * p ** i * (1 - p) ** (n - i) for i in range(k, n + 1)))
    except OverflowError:   # past ~1,000 trials the binomial coefficients overflow a float: sum in logs
        if not 0.0 < p < 1.0:
            return 1.0 if p >= 1.0 else 0.0
        lp, lq, top = math.log(p), math.log1p(-p), math.lgamma(n + 1)
        logs = [top - math.lgamma(i + 1) - math.lgamma(n - i + 1) + i * lp + (n - i) * lq for i in range(k, n + 1)]
        peak = max(logs)
        return min(1.0, math.exp(peak) * sum(math.exp(x - peak) for x in logs))


def fisher_greater(a: int, b: int, c: int, d: int) -> float:
    """One-sided Fisher exact p for the table [[a, b], [c, d]]: P(top-left >= a) with the margins fixed."""
    row1, col1, n = a + b, a + c, a + b + c + d
    hi = min(row1, col1)
    total = math.comb(n, col1)
    return sum(math.comb(row1, i) * math.comb(n - row1, col1 - i) for i in range(a, hi + 1)) / total


def cmh_z(rows: Iterable[tuple[Any, bool, bool]]) -> tuple[float, int]:
    """Cochran-Mantel-Haenszel z (one-sided, no continuity correction) of outcome against exposure, over strata:
    rows are (stratum, exposed, outcome). Also the informative rows (in strata where both vary)."""
    strata: dict[Any, list[int]] = {}
    for s, exposed, outcome in rows:
        t = strata.setdefault(s, [0, 0, 0, 0])   # a: exposed & outcome, exposed, outcome, n
        t[0] += exposed and outcome
        t[1] += exposed
        t[2] += outcome
        t[3] += 1
    diff = var = 0.0
    informative = 0
    for a, n1, m1, n in strata.values():
        if n < 2 or n1 in (0, n) or m1 in (0, n):
            continue
        informative += n
        diff += a - n1 * m1 / n
        var += n1 * (n - n1) * m1 * (n - m1) / (n * n * (n - 1))
    return (diff / math.sqrt(var) if var > 0 else 0.0), informative


# -------------------------------------------------------------------------------------------------- the fold


def step(state: APState, record: Mapping[str, Any], effects: Iterable[Effect] = ()) -> APState:
    """The state after one journal record (its row's object) and the effects the table's fold gave for it."""
    if record.get("kind") != "game":
        return state
    if record["event"].get("kind") not in _READ:   # a card, a settle...: only its effects count (not decoded again)
        return observe(state, None, effects)
    return observe(state, event_from_json(record["event"]), effects)


_READ = frozenset(c.KIND for c in (NewShoe, OpenBets, PlaceBet, RemoveBet, CloseBets, Decision))   # events observed


def _spot_of(actor: str) -> int | None:
    return int(actor[5:]) if actor.startswith("spot:") and actor[5:].isdigit() else None


def observe(state: APState, event: Event | None, effects: Iterable[Effect] = ()) -> APState:
    """The state after one game event and its effects (None: an event whose effects alone count)."""
    effects = tuple(effects)
    if isinstance(event, NewShoe):
        state = _finish_shoe(state)
        state = replace(state, shoe=state.shoe + 1, decks=event.decks, dealt=0, running=0, hidden=(), shoe_round=-1)
    elif isinstance(event, OpenBets):
        state = replace(state, round=_Round(state.rounds, true_count(state)))
    elif isinstance(event, (PlaceBet, RemoveBet)) and state.round is not None:
        bets = dict(state.round.bets)
        bets[event.spot] = bets.get(event.spot, 0) + (event.amount if isinstance(event, PlaceBet) else -event.amount)
        state = replace(state, round=replace(state.round, bets=tuple(sorted(bets.items()))))
    elif isinstance(event, CloseBets) and state.round is not None:
        state = _close(state, state.round)
    elif isinstance(event, Decision):
        spot, rnd = _spot_of(event.actor), state.round
        if spot is not None and rnd is not None:
            if event.action in ("insure", "decline"):
                state = _insurance(state, spot, event.action == "insure")
            elif spot not in rnd.decided:
                state = _first_decision(state, rnd, spot, event.action)
    placed = [eff for eff in effects if isinstance(eff, CardPlaced)]
    if placed:   # one new state for all the cards of an event (the fold runs for every record)
        up = sum(hilo(eff.card) for eff in placed if eff.up)
        down = tuple(eff.card for eff in placed if not eff.up)
        rnd = state.round
        if rnd is not None:
            rnd = replace(rnd, cards=rnd.cards + tuple((eff.to, eff.card, eff.up) for eff in placed))
        state = replace(state, dealt=state.dealt + len(placed), running=state.running + up,
                        hidden=state.hidden + down, round=rnd)
    for eff in effects:
        if isinstance(eff, CardsRevealed):
            state = _reveal(state, eff.cards)
        elif isinstance(eff, (RoundSettled, RoundVoided)):
            # the cards left face down are turned over when the round's cards are collected
            state = replace(_reveal(state, state.hidden), round=None)
    return state


def _reveal(state: APState, cards: Iterable[Card]) -> APState:
    if not state.hidden:
        return state
    hidden, running = list(state.hidden), state.running
    for c in cards:
        if c in hidden:
            hidden.remove(c)
            running += hilo(c)
    return replace(state, hidden=tuple(hidden), running=running)


def _spot(state: APState, spot: int) -> SpotLog:
    return dict(state.spots).get(spot, SpotLog())


def _with_spot(state: APState, spot: int, log: SpotLog, alert: APAlert | None = None) -> APState:
    spots = dict(state.spots)
    spots[spot] = log
    return replace(state, spots=tuple(sorted(spots.items())),
                   alerts=state.alerts + ((alert,) if alert is not None else ()))


def _close(state: APState, rnd: _Round) -> APState:
    t = state.thresholds
    shoe_round = state.shoe_round + 1
    state = replace(state, shoe_round=shoe_round, rounds=state.rounds + 1,
                    high_rounds=state.high_rounds + (rnd.tc >= t.wong_tc))
    for spot, bet in rnd.bets:
        if bet <= 0:
            continue
        log = _spot(state, spot)
        entered = shoe_round >= 1 and log.last != (state.shoe, shoe_round - 1)
        log = replace(log, pairs=log.pairs + ((rnd.tc, bet, state.shoe),), last=(state.shoe, shoe_round))
        alert = None
        if entered:
            log = replace(log, entries=log.entries + ((rnd.number, rnd.tc),))
            log, alert = _wonging(state, spot, log)
        state = _with_spot(state, spot, log, alert)
    return state


def _wonging(state: APState, spot: int, log: SpotLog) -> tuple[SpotLog, APAlert | None]:
    t = state.thresholds
    high = sum(tc >= t.wong_tc for _, tc in log.entries)
    if high < t.wong_min:
        return log, None
    # the table's own share of rounds at a high count (smoothed towards a sixth while it has few rounds)
    base = (state.high_rounds + 10 / 6) / (state.rounds + 10)
    p = binomial_tail(high, len(log.entries), base)
    if p > t.wong_p:
        return log, None
    alert = APAlert("wonging", spot, state.shoe, state.round.number if state.round else state.rounds, p, t.wong_p,
                    f"spot {spot}: {high} of its {len(log.entries)} entries in mid-shoe came at a true count of "
                    f"{t.wong_tc:g} or more (the table has {base:.0%} of its rounds there): p = {p:.2g}",
                    {"entries": [[r, round(tc, 2)] for r, tc in log.entries], "high": high, "base_rate": round(base, 4),
                     "p": p, "threshold": t.wong_p, "high_tc": t.wong_tc})
    return replace(log, entries=()), alert


def _insurance(state: APState, spot: int, took: bool) -> APState:
    t = state.thresholds
    tc = true_count(state)
    log = _spot(state, spot)
    log = replace(log, insurance=log.insurance + ((tc, took),))
    high_took = sum(took and tc >= t.insurance_tc for tc, took in log.insurance)
    alert = None
    if high_took >= t.insurance_min:
        a, b = high_took, sum(not took and tc >= t.insurance_tc for tc, took in log.insurance)
        c = sum(took and tc < t.insurance_tc for tc, took in log.insurance)
        d = sum(not took and tc < t.insurance_tc for tc, took in log.insurance)
        p = fisher_greater(a, b, c, d)
        if p <= t.insurance_p:
            alert = APAlert("insurance", spot, state.shoe, state.round.number if state.round else state.rounds, p,
                            t.insurance_p, f"spot {spot} took insurance {a} of {a + b} times at a true count of "
                            f"{t.insurance_tc:g} or more and {c} of {c + d} times below: Fisher p = {p:.2g}",
                            {"offers": [[round(tc, 2), took] for tc, took in log.insurance],
                             "table": [[a, b], [c, d]], "p": p, "threshold": t.insurance_p, "high_tc": t.insurance_tc})
            log = replace(log, insurance=())
    return _with_spot(state, spot, log, alert)


def _first_decision(state: APState, rnd: _Round, spot: int, action: str) -> APState:
    state = replace(state, round=replace(rnd, decided=rnd.decided + (spot,)))
    if action not in ("hit", "stand"):
        return state
    mine = [c for to, c, _ in rnd.cards if to == f"spot:{spot}"][:2]
    dealer = [(c, up) for to, c, up in rnd.cards if to == "dealer"][:2]
    if len(mine) != 2 or len(dealer) != 2 or not dealer[0][1] or dealer[1][1]:
        return state   # no face-down hole card under a face-up card here
    total = blackjack_total(mine)
    if total.soft or not 12 <= total.total <= 16:
        return state
    up, hole = dealer[0][0], dealer[1][0]
    draws = blackjack_total((up, hole)).total < 17
    log = _spot(state, spot)
    log = replace(log, holecard=log.holecard + ((blackjack_value(up), total.total, draws, action == "stand"),))
    t = state.thresholds
    z, informative = cmh_z(((u, tot), dr, st) for u, tot, dr, st in log.holecard)
    alert = None
    if informative >= t.hole_min and z >= t.hole_z:
        alert = APAlert("hole_card", spot, state.shoe, rnd.number, z, t.hole_z,
                        f"spot {spot} stands on 12 to 16 when the dealer's hole card makes the dealer draw, and hits "
                        f"when it does not, beyond what the up card explains: CMH z = {z:.2f} over {informative} "
                        "decisions",
                        {"decisions": [[u, tot, dr, st] for u, tot, dr, st in log.holecard],
                         "columns": ["up", "player_total", "dealer_draws", "stood"], "z": z, "threshold": t.hole_z,
                         "informative": informative})
        log = replace(log, holecard=())
    return _with_spot(state, spot, log, alert)


def _finish_shoe(state: APState) -> APState:
    """The bet-ramp test of every spot, looked at once a shoe ends."""
    t = state.thresholds
    oldest = state.shoe - t.ramp_window_shoes + 1
    for spot, log in state.spots:
        pairs = tuple(p for p in log.pairs if p[2] >= oldest)
        alert = None
        if len(pairs) >= t.ramp_min_rounds and len({b for _, b, _ in pairs}) >= 2:
            r = correlation([tc for tc, _, _ in pairs], [math.log(b) for _, b, _ in pairs])
            if r is not None and r > 0:
                lr = ramp_lr(r, len(pairs))
                if lr >= t.ramp_lr:
                    alert = APAlert("bet_ramp", spot, state.shoe, state.rounds, lr, t.ramp_lr,
                                    f"spot {spot}'s bets rise with the true count: r = {r:.2f} over {len(pairs)} "
                                    f"rounds of the last {t.ramp_window_shoes} shoes, LR = {lr:.1f}",
                                    {"points": [[round(tc, 2), b] for tc, b, _ in pairs], "r": r, "lr": lr,
                                     "threshold": t.ramp_lr, "rounds": len(pairs)})
                    pairs = ()
        if pairs != log.pairs or alert is not None:
            state = _with_spot(state, spot, replace(log, pairs=pairs), alert)
    return state


def pit_view(state: APState, table_id: str, latest: int | None = None) -> dict[str, Any]:
    """What the pit sees of a table's advantage-play watch: the count, each spot's bet-ramp figures, the alerts (the
    `latest` so many, when given; `alerts_total` counts them all). Pit only: the count and the alerts tell of the
    shoe and the players, for no screen at the table."""
    spots: dict[str, Any] = {}
    for spot, log in state.spots:
        r = correlation([tc for tc, _, _ in log.pairs], [math.log(b) for _, b, _ in log.pairs]) if log.pairs else None
        spots[str(spot)] = {"rounds_in_window": len(log.pairs), "r": r,
                            "lr": ramp_lr(r, len(log.pairs)) if r is not None else None,
                            "entries": len(log.entries), "insurance_offers": len(log.insurance),
                            "hole_card_decisions": len(log.holecard),
                            "points": [[round(tc, 2), b] for tc, b, _ in log.pairs]}   # the plot: bet by true count
    return {"table": table_id, "shoe": state.shoe, "running_count": state.running,
            "true_count": round(true_count(state), 2), "decks_left": round((state.decks * 52 - state.dealt) / 52, 2),
            "spots": spots, "alerts_total": len(state.alerts),
            "alerts": [a.json() for a in state.alerts[-latest if latest else 0:]]}


def replay(table: Any, records: Iterable[Mapping[str, Any]], thresholds: Thresholds = Thresholds()) -> APState:
    """The alerts' state after a journal's records, folded beside the table's own state (controller/tablestate.py's
    TableState `table`, whose effects say which cards lie face down); what the live table would have raised."""
    from controller.tablestate import step as table_step

    state = new_state(thresholds)
    for record in records:
        table, effects = table_step(table, record)
        state = step(state, record, effects)
    return state

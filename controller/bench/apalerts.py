"""`croupier bench apalerts`: seeded blackjack shoes dealt through the game's pure core to a card counter, a wonger, a hole-card player, a flat and a random bettor; shoes to each player's first alert, and false alerts per 100 shoes.

Every round is real journal records (`game` rows of controller/tablerecords.py) applied by controller/games/blackjack.py
and folded by controller/apalerts.py; the players play basic strategy (controller/analysis/blackjack_strategy.py)
except where their kind says otherwise. Randomness is controller/rng.py's SeededRng: one seed per session (one
table, one player of each kind, `shoes` shoes).

The players (a unit is the table minimum):
- counter: 1 unit below a true count of 2, then 2 units a true count above 1 (2, 4, 6, ...), at most 12; insures
  at a true count of 3 or more;
- wonger: 4 units flat, sits down in mid-shoe at a true count of 2 or more and leaves below 1;
- holecard: 2 units flat; sees the hole card: on a hard 12 to 16 stands when the dealer must draw, else hits;
- flat: 1 unit every round, basic strategy;
- random: 1 to 12 units at random, sits out a fifth of the rounds, insures half the times offered, and plays a
  hard 12 to 16 against basic strategy three times in ten (a weak player: the hole-card test's null).
The counter, wonger and holecard players count the same face-up cards the pit's count does (a perfect counter).
"""

from __future__ import annotations

import argparse
import dataclasses
import math
from dataclasses import dataclass
from typing import Any, Callable

from controller import apalerts
from controller.analysis.blackjack_strategy import basic_strategy, chart
from controller.cards import Card, Composition, shoe as full_shoe
from controller.games import blackjack as bj
from controller.games.base import (
    CardDealt, CloseBets, Decision, Event, NewShoe, OpenBets, PlaceBet, Settle, Waiting,
)
from controller.hands.points import blackjack_total
from controller.rng import Rng, SeededRng

HELP = ("advantage-play alerts on seeded blackjack shoes: shoes until a counter, wonger or hole-card player is "
        "flagged (median, 90th percentile), false alerts per 100 shoes of flat and random bettors (95% interval)")

PLAYERS = ("counter", "wonger", "holecard", "flat", "random")
NULL_PLAYERS = ("flat", "random")
UNIT = 10
TUNE_SEEDS = 1_000_000     # thresholds were tuned on sessions seeded from here; reports use seeds from 0


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--sessions", type=int, default=200, help="sessions per penetration (default 200)")
    parser.add_argument("--shoes", type=int, default=25, help="shoes per session (default 25)")
    parser.add_argument("--penetrations", default="60,75,85", help="cut card depths in %% (default 60,75,85)")
    parser.add_argument("--decks", type=int, default=6)
    parser.add_argument("--first-seed", type=int, default=0,
                        help="added to the sessions' seeds, penetration x 100,000 + i (default 0; the thresholds were "
                             "tuned on 1,075,000 to 1,075,119: see bench apalerts_tune)")
    parser.add_argument("--processes", type=int, default=1, help="sessions run on so many processes")


@dataclass
class Session:
    seed: int
    shoes: int
    alerts: list[apalerts.APAlert]
    records: list[dict[str, Any]] | None


def _hard_stiff(cards: tuple[Card, ...]) -> bool:
    t = blackjack_total(cards)
    return not t.soft and 12 <= t.total <= 16


def simulate(seed: int, shoes: int, penetration: int = 75, decks: int = 6, keep_records: bool = False,
             thresholds: apalerts.Thresholds = apalerts.Thresholds(),
             players: tuple[str, ...] = PLAYERS) -> Session:
    """One table dealt `shoes` shoes with one player of each kind (spot i+1 for players[i])."""
    rng: Rng = SeededRng(seed)
    rules = bj.Rules(decks=decks, spots=max(1, len(players)), penetration=penetration)
    strategy = chart(rules.dealer_hits_soft_17, rules.double_after_split)
    state = bj.new_table(rules)
    ap = apalerts.new_state(thresholds)
    records: list[dict[str, Any]] | None = [] if keep_records else None
    order: list[Card] = []
    seated = {i + 1: kind != "wonger" for i, kind in enumerate(players)}

    def emit(event: Event, via: str) -> None:
        nonlocal state, ap
        state, effects = bj.apply(state, event)
        ap = apalerts.observe(ap, event, effects)
        if records is not None:
            records.append({"kind": "game", "event": event.to_json(), "via": via})

    while True:
        exp = bj.expected_next(state)
        if exp.phase is Waiting.SHUFFLING and not state.seats:
            if ap.shoe >= shoes:
                break
            order = rng.shuffled(list(full_shoe(decks)))
            emit(NewShoe(decks), "shuffler")
            continue
        tc = apalerts.true_count(ap)
        emit(OpenBets(), "dealer")
        for i, kind in enumerate(players):
            spot = i + 1
            units = _bet(kind, tc, rng, seated, spot, ap)
            if units:
                emit(PlaceBet(spot, "main", units * UNIT), f"spot:{spot}")
        emit(CloseBets(), "dealer")
        while True:
            exp = bj.expected_next(state)
            if exp.phase is Waiting.DEALING:
                if not order:
                    raise RuntimeError("the simulated shoe ran out")  # a cut card at 85% leaves 46 cards
                emit(CardDealt(order.pop(), "shoe"), "shoe")
            elif exp.phase is Waiting.SHUFFLING:   # the shoe ran out mid-round: the discards reshuffled
                left = Composition.of(decks).remove_all(bj.table_cards(state))
                order = rng.shuffled(list(left.cards()))
                emit(NewShoe(decks), "shuffler")
            elif exp.phase is Waiting.DECIDING:
                emit(_decide(state, exp, players, rng, strategy, ap), exp.actor or "dealer")
            elif exp.phase is Waiting.SETTLING:
                emit(Settle(), "dealer")
                break
            else:
                raise RuntimeError(f"unexpected phase {exp.phase}")
    return Session(seed, ap.shoe, list(ap.alerts), records)


def _bet(kind: str, tc: float, rng: Rng, seated: dict[int, bool], spot: int, ap: apalerts.APState) -> int:
    if kind == "counter":
        t = math.floor(tc)
        return 1 if t < 2 else min(12, 2 * (t - 1))
    if kind == "wonger":
        if ap.shoe_round < 0:            # a fresh shoe: the back-counter is standing behind the table
            seated[spot] = False
        if seated[spot] and tc < 1:
            seated[spot] = False
        elif not seated[spot] and tc >= 2:
            seated[spot] = True
        return 4 if seated[spot] else 0
    if kind == "holecard":
        return 2
    if kind == "random":
        return 0 if rng.randbelow(5) == 0 else 1 + rng.randbelow(12)
    return 1


def _decide(state: bj.State, exp: Any, players: tuple[str, ...], rng: Rng, strategy: Any,
            ap: apalerts.APState) -> Decision:
    actor = exp.actor
    spot = int(actor.split(":")[1])
    kind = players[spot - 1]
    if "insure" in exp.actions:
        lo, hi = exp.amount_range
        take = ((kind == "counter" and apalerts.true_count(ap) >= 3)
                or (kind == "random" and rng.randbelow(2) == 0))
        return Decision(actor, "insure", hi) if take else Decision(actor, "decline")
    seat = next(s for s in state.seats if s.spot == spot)
    hand = seat.hands[exp.hand]
    up = state.dealer[0]
    action = basic_strategy(strategy, hand.cards, up, exp.actions)
    stiff = len(hand.cards) == 2 and _hard_stiff(hand.cards) and len(seat.hands) == 1
    if stiff and action in ("hit", "stand"):
        if kind == "holecard":
            action = "stand" if blackjack_total(state.dealer).total < 17 else "hit"
        elif kind == "random" and rng.randbelow(10) < 3:
            action = "stand" if action == "hit" else "hit"
    return Decision(actor, action, hand=exp.hand)


# ------------------------------------------------------------------------------------------------ figures


def _quantile(values: list[float], q: float) -> float | None:
    if not values:
        return None
    s = sorted(values)
    return s[min(len(s) - 1, int(math.ceil(q * len(s))) - 1)]


def poisson_interval(k: int, exposure: float, scale: float = 100.0) -> tuple[float, float]:
    """The exact (Garwood) 95% interval of a Poisson rate k/exposure, times `scale` (per 100 shoes)."""
    lo = 0.0 if k == 0 else _gamma_quantile(0.025, k)
    hi = _gamma_quantile(0.975, k + 1)
    return lo / exposure * scale, hi / exposure * scale


def _gamma_cdf(x: float, k: int) -> float:
    """P(Gamma(k, 1) <= x) for a whole k: 1 - P(Poisson(x) < k), summed in logs (no underflow at large x)."""
    if x <= 0:
        return 0.0
    logs = [i * math.log(x) - x - math.lgamma(i + 1) for i in range(k)]
    top = max(logs)
    return 1.0 - math.exp(top) * sum(math.exp(v - top) for v in logs)


def _gamma_quantile(p: float, k: int) -> float:
    lo, hi = 0.0, 2.0 * k + 50 + 10 * math.sqrt(k)
    for _ in range(200):
        mid = (lo + hi) / 2
        if _gamma_cdf(mid, k) < p:
            lo = mid
        else:
            hi = mid
    return (lo + hi) / 2


def figures(sessions: list[Session], players: tuple[str, ...] = PLAYERS) -> dict[str, Any]:
    """Per player kind: shoes to its first alert (median, 90th percentile, sessions never flagged) and alerts per
    100 shoes with a 95% interval; the null players' false alerts together."""
    out: dict[str, Any] = {}
    shoes = sum(s.shoes for s in sessions)
    for i, kind in enumerate(players):
        spot = i + 1
        firsts: list[float] = []
        kinds: dict[str, int] = {}
        count = 0
        for s in sessions:
            mine = [a for a in s.alerts if a.spot == spot]
            count += len(mine)
            for a in mine:
                kinds[a.kind] = kinds.get(a.kind, 0) + 1
            if mine:
                firsts.append(min(a.shoe for a in mine))
        lo, hi = poisson_interval(count, shoes)
        out[kind] = {"flagged_sessions": len(firsts), "sessions": len(sessions),
                     "shoes_to_first_alert": {"median": _quantile(firsts, 0.5) if len(firsts) * 2 >= len(sessions) else None,
                                              "p90": _quantile(firsts, 0.9) if len(firsts) * 10 >= 9 * len(sessions) else None},
                     "alerts": count, "by_kind": kinds, "per_100_shoes": 100 * count / shoes if shoes else 0.0,
                     "per_100_shoes_95": [lo, hi]}
    null = sum(out[k]["alerts"] for k in NULL_PLAYERS if k in out)
    lo, hi = poisson_interval(null, shoes)
    out["false_alerts"] = {"players": [k for k in NULL_PLAYERS if k in out], "alerts": null, "shoes": shoes,
                           "per_100_shoes_each": 100 * null / shoes / max(1, len([k for k in NULL_PLAYERS if k in out])),
                           "per_100_shoes_together": 100 * null / shoes, "per_100_shoes_together_95": [lo, hi]}
    return out


def _one(args: tuple[int, int, int, int]) -> Session:
    seed, shoes, penetration, decks = args
    return simulate(seed, shoes, penetration, decks)


def run(args: argparse.Namespace, say: Callable[[str], None]) -> dict[str, Any]:
    pens = [int(p) for p in str(args.penetrations).split(",") if p.strip()]
    report: dict[str, Any] = {"sessions": args.sessions, "shoes_per_session": args.shoes, "decks": args.decks,
                              "first_seed": args.first_seed, "tuned_on_seeds_from": TUNE_SEEDS,
                              "thresholds": dataclasses.asdict(apalerts.Thresholds()), "penetrations": {}}
    for pen in pens:
        jobs = [(args.first_seed + pen * 100_000 + i, args.shoes, pen, args.decks) for i in range(args.sessions)]
        if args.processes > 1:
            from multiprocessing import Pool

            with Pool(args.processes) as pool:
                sessions = pool.map(_one, jobs, chunksize=max(1, len(jobs) // (4 * args.processes)))
        else:
            sessions = [_one(j) for j in jobs]
        fig = figures(sessions)
        report["penetrations"][str(pen)] = fig
        say(f"penetration {pen}%: {len(sessions)} sessions of {args.shoes} shoes")
        for kind in PLAYERS:
            f = fig[kind]
            lo, hi = f["per_100_shoes_95"]
            say(f"  {kind:<9} flagged in {f['flagged_sessions']}/{f['sessions']} sessions; shoes to first alert "
                f"median {f['shoes_to_first_alert']['median']}, p90 {f['shoes_to_first_alert']['p90']}; "
                f"{f['per_100_shoes']:.2f} alerts/100 shoes [{lo:.2f}, {hi:.2f}] {f['by_kind']}")
        fa = fig["false_alerts"]
        lo, hi = fa["per_100_shoes_together_95"]
        say(f"  false alerts (flat + random): {fa['alerts']} in {fa['shoes']} shoes: {fa['per_100_shoes_together']:.3f} "
            f"per 100 shoes [{lo:.3f}, {hi:.3f}]")
    return report

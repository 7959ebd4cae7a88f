"""Rated play (controller/rating.py): sessions through the table's commands and roles, surviving a restart, never on a
player's or a spot's screen; the theoretical win and the blackjack decision costs against exact expectations in a
seeded simulation through the table's fold."""

from __future__ import annotations

import asyncio
import json
import math
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from controller.analysis.blackjack_ev import EvRules, action_evs, full_shoe, house_edge
from controller.bus import Role
from controller.games.base import IllegalEvent
from controller.games.blackjack import Rules
from controller.rating import Ratings, pit_view, rating_records, started
from controller.rng import SeededRng
from controller.tablerecords import RatingStart, table_record
from controller.tablestate import new_state, picture, replay
from controller.views import project, screen_views
from tests.rating_sim import Sim, basic, weak
from tests.table_helpers import table_config

PLAYER = "4711000042"


@pytest.mark.parametrize("command, args, message", [
    ("rating_start", {"spot": 1, "player": "12a4"}, "player must be a player card number: 4 to 20 digits"),
    ("rating_start", {"spot": 1, "player": "123"}, "player must be a player card number"),
    ("rating_start", {"spot": 1, "player": "1" * 21}, "player must be a player card number"),
    ("rating_start", {"spot": 1, "player": "１２３４"}, "player must be a player card number"),  # not ASCII digits
    ("rating_start", {"spot": 8, "player": PLAYER}, "spot must be a spot from 1 to 7"),
    ("rating_start", {"player": PLAYER}, "spot"),
    ("rating_move", {"from": 1, "to": 0}, "to must be a spot from 1 to 7"),
    ("rating_stop", {"spot": True}, "spot must be a spot"),
])
def test_a_bad_rating_command_is_refused_naming_the_field(command: str, args: dict[str, Any], message: str) -> None:
    with pytest.raises((ValueError, KeyError), match=message):
        rating_records(Ratings(), "pit", command, args, 0, 7)


def test_one_session_per_spot_and_per_player() -> None:
    r = started(Ratings(), RatingStart(1, PLAYER, 0, "pit"))
    with pytest.raises(IllegalEvent, match="spot 1 has a rated player already"):
        started(r, RatingStart(1, "12345", 0, "pit"))
    with pytest.raises(IllegalEvent, match=f"player {PLAYER} is rated at another spot"):
        started(r, RatingStart(2, PLAYER, 0, "pit"))
    [rec] = rating_records(r, "dealer", "rating_move", {"from": "1", "to": "2"}, 5, 7)   # text
    assert rec == {"kind": "rating", "what": "move", "spot": 1, "to": 2, "at": 5, "by": "dealer"}
    [rec] = rating_records(r, "pit", "rating_start", {"spot": 2, "player": 4711000042}, 5, 7)   # as the CLI sends
    assert rec["player"] == PLAYER
    [rec] = rating_records(r, "dealer", "rating_move", {"from": 1, "to": 2}, 5, 7)
    assert rec == {"kind": "rating", "what": "move", "spot": 1, "to": 2, "at": 5, "by": "dealer"}


def _rated_sim(rounds: int = 6) -> Sim:
    sim = Sim("blackjack", SeededRng(3))
    sim.rate(2, PLAYER)
    sim.add({"kind": "slip", "what": "entered", "slip": 1, "form": "opener", "day": "2026-11-26", "by": "dealer",
             "at": 1, "chips": {"25": 40}})
    for _ in range(rounds):
        sim.round({1: {"main": 10}, 2: {"main": 25}}, {1: basic, 2: weak})
    return sim


@pytest.mark.slow
def test_no_rating_or_paperwork_reaches_a_screen_view() -> None:
    sim = _rated_sim()
    pic = picture(sim.state)
    views = {**screen_views(pic), "public": project(pic, "public"), "dealer": project(pic, "dealer")}
    for name, view in views.items():
        text = json.dumps(view)
        for word in (PLAYER, '"ratings"', '"paperwork"', "theo", "decision_cost", '"slips"', "opener"):
            assert word not in text, (name, word)
    pit = pit_view(sim.state)
    assert pit["ratings"]["open"] == {"2": PLAYER} and pit["paperwork"]["slips"][0]["form"] == "opener"


def test_rated_play_through_the_tables_commands_survives_a_restart(tmp_path: Path) -> None:
    from controller.table import Table

    cfg = table_config(tmp_path, "blackjack")

    async def life(first: bool) -> tuple[Any, Any, Any]:
        from controller.autoplay import Autoplay

        table = Table(cfg)
        await table.start()
        try:
            pit, dealer, spot = Role("pit"), Role("dealer"), Role("spot", 3)
            if first:
                assert (await table.command(pit, "rating_start", {"spot": 3, "player": PLAYER}))["ok"]
                assert (await table.command(spot, "rating_start", {"spot": 3, "player": "1234"}))["error"] == \
                    "spot:3 may not rating start"
                assert (await table.command(dealer, "rating_start", {"spot": 4, "player": PLAYER}))["error"] == \
                    f"player {PLAYER} is rated at another spot: move that rating instead"
                play = Autoplay(table, SeededRng(9), rounds=0)
                for _ in range(30):   # until spot 3 has bet in a round (the autoplay's players bet at random)
                    play.rounds += 1
                    await play.run()
                    if table.state.ratings.sessions[0].rounds:
                        break
                assert (await table.command(dealer, "rating_move", {"from": 3, "to": 5}))["ok"]
            status = (await table.command(spot, "status", {}))["result"]
            view = (await table.command(pit, "pit", {}))["result"]
            return table.state.ratings, view, status
        finally:
            await table.stop()

    ratings, view, status = asyncio.run(asyncio.wait_for(life(True), 120))
    [session] = view["ratings"]["sessions"]
    assert session["player"] == PLAYER and session["spots"] == [3, 5] and session["rounds"] >= 1
    assert PLAYER not in json.dumps(status) and "ratings" not in json.dumps(status)
    again, view_again, _ = asyncio.run(asyncio.wait_for(life(False), 120))
    assert again == ratings

    def without_theo(view: dict[str, Any]) -> list[dict[str, Any]]:
        # the theoretical win is null until a thread has computed the rules' exact edge (the writer never waits)
        return [{k: v for k, v in s.items() if k != "theo_win"} for s in view["ratings"]["sessions"]]

    assert without_theo(view_again) == without_theo(view)


# --------------------------------------------------------------------------------------------- the acceptance

RULES = {"max_hands": 1}     # no splits: every EV below is exact (splits are the engine's one approximation)
BASIC, WEAK = (1, 2, 3), (4, 5, 6, 7)
ROUNDS = 1200
BET = 10
K = 3.0                      # intervals are +- K standard errors


@pytest.fixture(scope="module")
def simulated() -> Sim:
    """ROUNDS seeded rounds of six-deck blackjack, seven rated spots betting BET each: spots 1-3 play basic
    strategy, 4-7 the weak strategy (always stand on a hard 12-16, never double)."""
    sim = Sim("blackjack", SeededRng(20261126), rules=RULES)
    for spot in BASIC + WEAK:
        sim.rate(spot, f"9000{spot}")
    per_round: dict[int, list[int]] = {spot: [] for spot in BASIC + WEAK}
    costs: dict[int, list[float]] = {spot: [] for spot in WEAK}
    strategies = {spot: basic if spot in BASIC else weak for spot in BASIC + WEAK}
    for _ in range(ROUNDS):
        before = {s.spots[0]: s.cost for s in sim.state.ratings.sessions}
        sim.round({spot: {"main": BET} for spot in BASIC + WEAK}, strategies)
        settlement = sim.settled[-1].settlement
        for spot in per_round:
            per_round[spot].append(sum(r.stake - r.returned for r in settlement.for_spot(spot)))
        for s in sim.state.ratings.sessions:
            if s.spots[0] in costs:
                costs[s.spots[0]].append(s.cost - before[s.spots[0]])
    sim.per_round, sim.costs = per_round, costs  # type: ignore[attr-defined]
    return sim


def _mean_sd(xs: list[float]) -> tuple[float, float]:
    m = sum(xs) / len(xs)
    return m, math.sqrt(sum((x - m) ** 2 for x in xs) / (len(xs) - 1))


@pytest.mark.slow
def test_theoretical_win_agrees_with_the_exact_edge_times_handle_for_basic_strategy(simulated: Sim) -> None:
    """Flat basic strategy: the house's actual win lies within handle x edge +- K sigma sqrt(rounds), sigma the
    sample standard deviation of a round's result (the basic spots together); the rating's theoretical win is
    exactly handle x edge."""
    edge = house_edge(EvRules.of(Rules(max_hands=1)))
    view = {s["spot"]: s for s in pit_view(simulated.state)["ratings"]["sessions"]}
    # The spots of a round share the dealer's cards: the round (all of them together) is the independent unit.
    results = [float(sum(simulated.per_round[s][i] for s in BASIC)) for i in range(ROUNDS)]  # type: ignore[attr-defined]
    mean, sd = _mean_sd(results)
    handle = sum(view[s]["handle"] for s in BASIC)
    assert handle == ROUNDS * len(BASIC) * BET and all(view[s]["rounds"] == ROUNDS for s in BASIC)
    theo = sum(view[s]["theo_win"] for s in BASIC)
    assert theo == pytest.approx(handle * edge, abs=0.01 * len(BASIC))
    actual = sum(view[s]["actual_win"] for s in BASIC)
    assert actual == sum(results)
    half = K * sd * math.sqrt(ROUNDS)
    print(f"\nbasic strategy, {ROUNDS} rounds x {len(BASIC)} spots x {BET}: actual win {actual}, theoretical "
          f"{theo:.1f} (edge {edge:.5f}), interval +-{half:.0f} (K={K} x sd {sd:.1f} of a round's result x "
          f"sqrt(rounds)); decision cost {sum(view[s]['decision_cost'] for s in BASIC):.2f}")
    assert abs(actual - theo) <= half
    # basic strategy gives up next to nothing against the exact best play (chart cells that differ by a hair)
    assert sum(view[s]["decision_cost"] for s in BASIC) <= 0.002 * handle


def _expected_weak_cost(r: EvRules) -> float:
    """The weak strategy's exact expected decision cost per hand, in bets: over every first two cards and up
    card (no decision after a dealer or player blackjack), each decision's EV given up plus, after a hit, the
    expected cost of the decisions on every card that may come (the same composition as the EVs: the full shoe
    less the hand and the up card)."""
    shoe = full_shoe(r.decks)
    state = SimpleNamespace(rules=Rules(max_hands=1))
    from controller.cards import Card, parse_card

    def card(v: int) -> Card:
        return parse_card("AS" if v == 1 else "TS" if v == 10 else f"{v}S")

    def cost(values: tuple[int, ...], up: int) -> float:
        hard, ace = sum(values), 1 in values
        total = hard + 10 if ace and hard <= 11 else hard
        if total >= 21:
            return 0.0
        legal = ("hit", "stand", "double") if len(values) == 2 else ("hit", "stand")
        action = weak(state, tuple(card(v) for v in values), card(up), legal)
        evs = action_evs(r, values, up, legal)
        lost = max(evs.values()) - evs[action]
        if action != "hit":
            return lost
        comp = list(shoe)
        for v in values + (up,):
            comp[v - 1] -= 1
        n = sum(comp)
        return lost + sum(comp[v - 1] / n * cost(values + (v,), up) for v in range(1, 11) if comp[v - 1])

    n = sum(shoe)
    total = 0.0
    for p1 in range(1, 11):
        for up in range(1, 11):
            for p2 in range(1, 11):
                c = list(shoe)
                p = c[p1 - 1] / n
                c[p1 - 1] -= 1
                p *= c[up - 1] / (n - 1)
                c[up - 1] -= 1
                p *= c[p2 - 1] / (n - 2)
                c[p2 - 1] -= 1
                if {p1, p2} == {1, 10}:
                    continue
                hole_bj = (c[9] if up == 1 else c[0] if up == 10 else 0) / (n - 3)
                total += p * (1 - hole_bj) * cost((p1, p2), up)
    return total


@pytest.mark.slow
def test_a_weak_strategys_decision_cost_matches_its_exact_expected_cost(simulated: Sim) -> None:
    """Always stand on a hard 12-16, never double: the decision cost the ratings summed per hand lies within the
    exact expected cost +- K standard errors (the sample sd of a round's mean cost over sqrt(rounds)); and the weak
    spots' actual win agrees with theoretical win + decision cost within K sigma sqrt(rounds)."""
    expected = _expected_weak_cost(EvRules.of(Rules(max_hands=1)))
    # per round, the weak spots' cost together, in bets a hand: the spots of a round share the dealer's up card
    costs = [sum(simulated.costs[s][i] for s in WEAK) / BET / len(WEAK) for i in range(ROUNDS)]  # type: ignore[attr-defined]
    mean, sd = _mean_sd(costs)
    half = K * sd / math.sqrt(ROUNDS)
    view = {s["spot"]: s for s in pit_view(simulated.state)["ratings"]["sessions"]}
    results = [float(sum(simulated.per_round[s][i] for s in WEAK)) for i in range(ROUNDS)]  # type: ignore[attr-defined]
    _, sd_result = _mean_sd(results)
    theo = sum(view[s]["theo_win"] for s in WEAK)
    cost = sum(view[s]["decision_cost"] for s in WEAK)
    actual = sum(view[s]["actual_win"] for s in WEAK)
    band = K * sd_result * math.sqrt(ROUNDS)
    print(f"\nweak strategy, {ROUNDS} rounds x {len(WEAK)} spots: decision cost {mean:.4f} bets a hand, exact "
          f"{expected:.4f} +-{half:.4f} (K={K} x sd of a round's mean / sqrt(rounds)); actual win {actual} against "
          f"theoretical {theo:.0f} + cost {cost:.0f} +-{band:.0f}; mistakes {sum(view[s]['mistakes'] for s in WEAK)} "
          f"of {sum(view[s]['decisions'] for s in WEAK)} decisions")
    assert abs(mean - expected) <= half
    assert abs(actual - (theo + cost)) <= band
    # the rating tells the weak players from the good ones
    assert min(view[s]["decision_cost"] for s in WEAK) > 20 * max(view[s]["decision_cost"] for s in BASIC)


def test_ratings_survive_replay_exactly() -> None:
    sim = _rated_sim(10)
    again = replay(new_state(sim.state.table_id, sim.spec, sim.spec.rules({})), enumerate(sim.records, 1))
    assert again.ratings == sim.state.ratings and again.paperwork == sim.state.paperwork
    assert all(table_record(r) for r in sim.records)


def test_the_dealers_outcomes_agree_with_drawing_card_by_card() -> None:
    """blackjack_ev's dealer distribution (draw sequences grouped by their cards) against the plain recursion
    that draws one card at a time from what is left, for one and two decks, every up card, with and without
    hitting a soft 17, after the peek."""
    from functools import lru_cache

    from controller.analysis.blackjack_ev import dealer_outcomes

    for decks in (1, 2):
        for h17 in (False, True):
            @lru_cache(maxsize=None)
            def naive(comp: tuple[int, ...], hard: int, ace: bool, first: bool, up: int) -> tuple[float, ...]:
                total = hard + 10 if ace and hard <= 11 else hard
                if not first:
                    soft = ace and hard <= 11
                    if total > 21:
                        return (0.0,) * 5 + (1.0,)
                    if total >= 17 and not (h17 and total == 17 and soft):
                        return tuple(1.0 if i == total - 17 else 0.0 for i in range(6))
                bad = 10 if up == 1 else 1 if up == 10 else None   # the peek: no blackjack under the up card
                n = sum(comp) - (comp[bad - 1] if first and bad else 0)
                out = [0.0] * 6
                for v in range(1, 11):
                    if not comp[v - 1] or (first and v == bad):
                        continue
                    rest = comp[:v - 1] + (comp[v - 1] - 1,) + comp[v:]
                    for i, x in enumerate(naive(rest, hard + v, ace or v == 1, False, up)):
                        out[i] += comp[v - 1] / n * x
                return tuple(out)

            for up in range(1, 11):
                comp = list(full_shoe(decks))
                comp[up - 1] -= 1
                comp[9] -= 1          # a ten-card in the player's hand, too
                got = dealer_outcomes(tuple(comp), up, h17)
                assert got == pytest.approx(naive(tuple(comp), up, up == 1, True, up), abs=1e-12), (decks, h17, up)

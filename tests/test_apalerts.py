"""Advantage-play alerts (issue 42, point 2): the Hi-Lo count from the journaled cards, the bet-ramp, wonging,
insurance and hole-card tests, replay equality, and that no alert reaches a screen-facing view. The seeded tables
are small versions of `croupier bench apalerts` (which measures the full figures)."""

from __future__ import annotations

import json
import math
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from controller import apalerts
from controller.apalerts import APState, Thresholds
from controller.bench.apalerts import figures, poisson_interval, simulate
from controller.cards import parse_card
from controller.games import blackjack as bj
from controller.games.base import CardPlaced, CloseBets, Decision, NewShoe, OpenBets, PlaceBet
from controller.tablestate import new_state as new_table_state, picture, replay as table_replay
from controller.views import SCREEN_AUDIENCES, project


@pytest.fixture(scope="module")
def counter_table() -> Any:
    """Seed 3: a counter (spot 1), a flat (2) and a random bettor (3), six shoes at 75%, with its journal records."""
    return simulate(3, 6, 75, keep_records=True, players=("counter", "flat", "random"))


@pytest.fixture(scope="module")
def wonger_table() -> Any:
    """Seed 3: a wonger (spot 1), a hole-card player (2) and a flat bettor (3), six shoes at 75%."""
    return simulate(3, 6, 75, players=("wonger", "holecard", "flat"))


def _summary(alerts: list[apalerts.APAlert]) -> list[tuple[str, int, int, float]]:
    return [(a.kind, a.spot, a.shoe, round(a.statistic, 3)) for a in alerts]


def test_hilo_and_the_true_count() -> None:
    assert [apalerts.hilo(parse_card(c)) for c in ("2S", "6H", "7D", "9C", "TS", "KH", "AS")] == [1, 1, 0, 0, -1, -1, -1]
    state = apalerts.observe(apalerts.new_state(), NewShoe(6))
    low = tuple(CardPlaced(parse_card(f"{r}S"), "spot:1", True) for r in "23456" * 10 + "23")
    state = apalerts.observe(state, OpenBets(), low)
    assert (state.running, state.dealt) == (52, 52)
    assert apalerts.true_count(state) == 52 / 5            # 260 cards, five decks, left
    down = apalerts.observe(state, OpenBets(), (CardPlaced(parse_card("2H"), "dealer", False),))
    assert (down.running, down.dealt, down.hidden) == (52, 53, (parse_card("2H"),))   # not seen: not counted
    assert apalerts.observe(down, NewShoe(6)).running == 0


def test_the_statistics() -> None:
    assert apalerts.binomial_tail(3, 3, 0.5) == 0.125
    assert apalerts.binomial_tail(0, 5, 0.1) == 1.0
    assert apalerts.fisher_greater(3, 0, 0, 3) == pytest.approx(1 / 20)
    z, informative = apalerts.cmh_z([("s", True, True)] * 5 + [("s", False, False)] * 5 + [("t", True, True)] * 3)
    assert (round(z, 6), informative) == (3.0, 10)   # stratum t never varies: it tells nothing
    assert apalerts.correlation([1, 2, 3], [2, 4, 6]) == pytest.approx(1.0)
    assert apalerts.correlation([1, 2, 3], [5, 5, 5]) is None
    assert apalerts.ramp_lr(0.5, 40) == pytest.approx(-40 * math.log(0.75))
    assert poisson_interval(0, 1000) == (0.0, pytest.approx(100 * 3.6889 / 1000, rel=1e-3))
    assert poisson_interval(5, 100, 1) == (pytest.approx(1.6235 / 100, rel=1e-3), pytest.approx(11.668 / 100, rel=1e-3))
    lo, hi = poisson_interval(1238, 4800)   # many alerts: about the normal interval, 1238 +- 1.96 sqrt(1238)
    assert (lo, hi) == (pytest.approx(100 * (1238 - 69) / 4800, rel=2e-3), pytest.approx(100 * (1238 + 70) / 4800, rel=2e-3))


def test_a_counter_is_flagged_and_a_flat_and_a_random_bettor_are_not(counter_table: Any) -> None:
    assert counter_table.shoes == 6
    assert _summary(counter_table.alerts) == [("bet_ramp", 1, 2, 53.69), ("bet_ramp", 1, 4, 75.307)]
    alert = counter_table.alerts[0]
    ev = alert.evidence
    assert ev["threshold"] == Thresholds().ramp_lr == alert.threshold and ev["lr"] == alert.statistic
    # the plot data: (true count, bet) of every round of the window, the bets rising with the count
    assert len(ev["points"]) == ev["rounds"] >= Thresholds().ramp_min_rounds
    assert {b for tc, b in ev["points"] if tc < 2} == {10}
    assert max(b for tc, b in ev["points"]) > 10
    fig = figures([counter_table], ("counter", "flat", "random"))
    assert fig["counter"]["shoes_to_first_alert"]["median"] == 2
    assert fig["false_alerts"]["alerts"] == 0


def test_a_wonger_and_a_hole_card_player_are_flagged(wonger_table: Any) -> None:
    assert wonger_table.alerts[0].statistic == pytest.approx(3.5853890049e-05)
    assert _summary(wonger_table.alerts) == [("wonging", 1, 4, 0.0), ("hole_card", 2, 6, 3.53)]
    wong, hole = wonger_table.alerts
    assert all(tc >= 2 for _, tc in wong.evidence["entries"]) and wong.evidence["high"] >= Thresholds().wong_min
    assert wong.statistic <= wong.threshold == Thresholds().wong_p
    assert hole.evidence["columns"] == ["up", "player_total", "dealer_draws", "stood"]
    # the hole-card player stands exactly when the dealer's two cards make the dealer draw
    assert all(draws == stood for _, _, draws, stood in hole.evidence["decisions"])


def test_insurance_taken_at_high_counts() -> None:
    def offer(state: APState, spot: int, count_to: int, take: bool) -> APState:
        state = apalerts.observe(state, NewShoe(6))
        cards = ("2S" if count_to > 0 else "TS",) * abs(count_to)
        state = apalerts.observe(state, OpenBets(), tuple(CardPlaced(parse_card(c), "spot:9", True) for c in cards))
        state = apalerts.observe(state, PlaceBet(spot, "main", 10))
        state = apalerts.observe(state, CloseBets())
        return apalerts.observe(state, Decision(f"spot:{spot}", "insure" if take else "decline", 5))

    state = apalerts.new_state()
    offers = [True, False] * 7   # takes it at +20 (a true count near 4), declines at 0
    for i, high in enumerate(offers):
        state = offer(state, 4, 20 if high else 0, high)
        if state.alerts:
            break
    # Fisher's exact p of [[7, 0], [0, 6]] is 1/C(13, 6) = 1/1716, the first under 0.001 ([[6, 0], [0, 6]]: 1/924)
    assert i == 12
    [alert] = state.alerts
    assert (alert.kind, alert.spot, alert.evidence["table"]) == ("insurance", 4, [[7, 0], [0, 6]])
    assert alert.statistic == pytest.approx(1 / 1716) and alert.threshold == Thresholds().insurance_p
    assert [took for _, took in alert.evidence["offers"]] == offers[:13]
    assert state.spots[0][1].insurance == ()   # the evidence starts afresh after an alert


def test_replay_of_the_journal_gives_the_same_alerts(counter_table: Any) -> None:
    table = new_table_state("t", bj.GAME, bj.Rules(spots=3, penetration=75))
    replayed = apalerts.replay(table, counter_table.records)
    assert replayed.alerts == tuple(counter_table.alerts)
    assert [a.evidence for a in replayed.alerts] == [a.evidence for a in counter_table.alerts]


def test_no_alert_reaches_a_screen_facing_view(counter_table: Any) -> None:
    table = table_replay(new_table_state("t", bj.GAME, bj.Rules(spots=3, penetration=75)),
                         enumerate(counter_table.records, 1))
    ap = apalerts.replay(new_table_state("t", bj.GAME, bj.Rules(spots=3, penetration=75)), counter_table.records)
    pit = apalerts.pit_view(ap, "t")
    assert pit["alerts"] and pit["spots"]["1"]["rounds_in_window"] > 0
    for audience in SCREEN_AUDIENCES:   # the players', a spot's (the public view) and the dealer's
        text = json.dumps(project(picture(table), audience))
        for alert in pit["alerts"]:
            assert alert["text"] not in text
        for word in ("bet_ramp", "running_count", "true_count", "advantage"):
            assert word not in text


@settings(max_examples=4, deadline=None)
@given(seed=st.integers(0, 2**32), penetration=st.sampled_from([60, 75, 85]), decks=st.sampled_from([1, 2, 6, 8]))
def test_the_live_fold_and_the_replay_agree(seed: int, penetration: int, decks: int) -> None:
    """Whatever the shoe, the alerts' state folded as the cards are dealt is the replay of the journal's records."""
    live = simulate(seed, 1, penetration, decks, keep_records=True, players=("counter", "random"),
                    thresholds=Thresholds(ramp_min_rounds=3, wong_min=1, wong_p=0.5, hole_min=2, hole_z=0.5))
    table = new_table_state("t", bj.GAME, bj.Rules(decks=decks, spots=2, penetration=penetration))
    replayed = apalerts.replay(table, live.records,
                               Thresholds(ramp_min_rounds=3, wong_min=1, wong_p=0.5, hole_min=2, hole_z=0.5))
    assert replayed.alerts == tuple(live.alerts)
    if replayed.shoe == 1:   # (a shoe that ran out in mid-round was reshuffled: its count started again)
        # every round settled, every card was seen: the running count is the shoe's Hi-Lo sum
        assert replayed.running == sum(apalerts.hilo(parse_card(r["event"]["card"])) for r in live.records
                                       if r["event"]["kind"] == "card_dealt")


def test_the_bench_command(tmp_path: Any) -> None:
    from controller.cli import main

    out = tmp_path / "b.json"
    assert main(["bench", "apalerts", "--sessions", "1", "--shoes", "2", "--penetrations", "75", "--json", str(out)]) == 0
    report = json.loads(out.read_text())
    fig = report["penetrations"]["75"]
    assert set(fig) == {"counter", "wonger", "holecard", "flat", "random", "false_alerts"}
    assert report["thresholds"]["ramp_lr"] == Thresholds().ramp_lr
    assert fig["false_alerts"]["shoes"] == 2

"""Table analytics (issue 42, point 3): rounds per hour per dealer, handle, win and hold, dealer errors, camera/shoe
disagreements and time in each state, per shift and gaming day, from the journal; `croupier analytics`."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from controller.bench.apalerts import simulate
from controller.cli import main
from controller.games import blackjack as bj
from controller.tableanalytics import Periods, analyse
from controller.tablestate import new_state, replay
from tests.table_helpers import table_toml

RULES = bj.Rules(spots=3, penetration=75)
T0 = dt.datetime(2026, 11, 26, 4, 0, tzinfo=dt.timezone.utc).timestamp()   # 04:00 UTC: the gaming day of the 25th


@pytest.fixture(scope="module")
def journal() -> list[tuple[float, dict[str, Any]]]:
    """Three shoes to a counter, a flat and a random bettor dealt by dealer d1 then d2, 10 s a record from 04:00 UTC,
    with a voided round, a camera alert and a refused dealer command between rounds."""
    games = simulate(3, 3, 75, keep_records=True, players=("counter", "flat", "random")).records
    assert games is not None
    half = len(games) // 2
    while games[half]["event"]["kind"] != "open_bets":
        half += 1
    rows: list[dict[str, Any]] = [{"kind": "start", "game": "blackjack", "rules": RULES.to_json()},
                                  {"kind": "dealer", "dealer": "d1"}]
    rows += games[:half]
    rows += [{"kind": "alert", "alert": {"id": 1, "kind": "camera", "text": "the camera sees 7H on spot 2",
                                         "card": "7H", "options": ["confirm", "void"]}},
             {"kind": "resolve", "alert": 1, "action": "confirm", "by": "dealer"},
             {"kind": "refused", "who": "dealer", "reason": "no open alert 9", "request": None},
             {"kind": "refused", "who": "spot:2", "reason": "not now", "request": None},
             {"kind": "game", "event": {"kind": "open_bets"}},
             {"kind": "game", "event": {"kind": "place_bet", "spot": 1, "box": "main", "amount": 10}},
             {"kind": "game", "event": {"kind": "close_bets"}},
             {"kind": "game", "event": {"kind": "void_round", "reason": "misdeal"}},
             {"kind": "dealer", "dealer": "d2"}]
    rows += games[half:]
    return [(T0 + 10 * i, r) for i, r in enumerate(rows)]


@pytest.fixture(scope="module")
def report(journal: list[tuple[float, dict[str, Any]]]) -> dict[str, Any]:
    return analyse("t", bj.GAME, RULES, journal)


def test_totals_agree_with_the_meters_and_the_clock(journal: list[tuple[float, dict[str, Any]]],
                                                    report: dict[str, Any]) -> None:
    state = replay(new_state("t", bj.GAME, RULES), ((i + 1, r) for i, (_, r) in enumerate(journal)))
    total = report["total"]
    assert (total["rounds"], total["handle"], total["win"], total["voids"]) == (
        state.meters.rounds, state.meters.handle, state.meters.house_win, 1)
    assert total["hold"] == round(state.meters.house_win / state.meters.handle, 5)
    assert total["drop"] is None   # the paperwork's records bring the drop
    # every second between the first and the last record is in some state, and in no other
    assert sum(total["seconds_in_state"].values()) == pytest.approx(journal[-1][0] - journal[0][0])
    assert set(total["seconds_in_state"]) <= {"idle", "betting", "dealing", "deciding", "settling", "shuffling",
                                               "paused"}
    assert total["seconds_in_state"]["paused"] == 10.0   # the camera alert, open for one record
    dealers = total["dealers"]
    assert sum(d["rounds"] for d in dealers.values()) == state.meters.rounds
    assert set(dealers) == {"d1", "d2"} or set(dealers) == {"(not signed in)", "d1", "d2"}
    for d in ("d1", "d2"):
        assert dealers[d]["rounds_per_hour"] == round(dealers[d]["rounds"] / dealers[d]["hours"], 2)


def test_dealer_errors_and_camera_disagreements(report: dict[str, Any]) -> None:
    errors, rounds = report["total"]["dealer_errors"], report["total"]["rounds"]
    # the void, the camera alert and the dealer's refused command; the spot's refusal is no dealer error
    assert (errors["voids"], errors["alerts"], errors["corrections"], errors["refused"], errors["total"]) == (1, 1, 0, 1, 3)
    assert errors["per_100_rounds"] == round(300 / rounds, 3)
    assert report["total"]["camera_shoe_disagreements"] == 1


def test_gaming_days_and_shifts_split_at_their_starts(journal: list[tuple[float, dict[str, Any]]]) -> None:
    # the journal runs from 04:00 UTC for some hours: with the day starting at 06:00 UTC two gaming days show
    span = journal[-1][0] - journal[0][0]
    assert span > 2 * 3600
    report = analyse("t", bj.GAME, RULES, journal, Periods("06:00", ("06:00", "14:00", "22:00")))
    assert list(report["days"]) == ["2026-11-25", "2026-11-26"]
    early = report["days"]["2026-11-25"]
    assert list(early["shifts"]) == ["22:00"]
    assert sum(early["seconds_in_state"].values()) == pytest.approx(2 * 3600)
    assert sum(d["rounds"] for d in report["days"].values()) == report["total"]["rounds"]
    # local time two hours ahead of UTC: 04:00 UTC is 06:00 local, so all of it is the 26th's day shift
    later = analyse("t", bj.GAME, RULES, journal, Periods("06:00", ("06:00", "14:00"), utc_offset_minutes=120))
    assert list(later["days"]) == ["2026-11-26"] and list(later["days"]["2026-11-26"]["shifts"]) == ["06:00"]


@settings(max_examples=200, deadline=None)
@given(t=st.floats(0, 4e9), start=st.sampled_from(["00:00", "06:00", "07:30"]),
       shifts=st.lists(st.sampled_from(["00:00", "06:00", "07:30", "14:00", "22:00"]), min_size=1, max_size=4,
                       unique=True), offset=st.integers(-720, 840))
def test_a_period_ends_where_the_next_begins(t: float, start: str, shifts: list[str], offset: int) -> None:
    periods = Periods(start, tuple(sorted(set(shifts) | {start})), offset)
    day, shift, ends = periods.at(t)
    assert t < ends <= t + 86_400
    assert periods.at((t + ends) / 2)[:2] == (day, shift)
    assert periods.at(ends)[:2] != (day, shift)


def test_bad_periods_are_named() -> None:
    with pytest.raises(ValueError, match="day_start: expected HH:MM"):
        Periods("6am")
    with pytest.raises(ValueError, match="shifts: expected HH:MM between"):
        Periods("06:00", ("25:00",))
    with pytest.raises(ValueError, match=r"shifts: one shift starts when the gaming day does \(06:00\)"):
        Periods("06:00", ("07:00", "19:00"))


def test_the_analytics_command(tmp_path: Path, journal: list[tuple[float, dict[str, Any]]], report: dict[str, Any],
                               capsys: pytest.CaptureFixture[str]) -> None:
    from controller.config import load_config
    from controller.journal import open_journal

    path = table_toml(tmp_path, "bj-a", game="blackjack")
    cfg = load_config(path)
    with open_journal(cfg) as j:
        for t, record in journal:
            j.append(record, ts_ns=int(t * 1e9))
    assert main(["analytics", "--config", str(path), "--json"]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert printed["total"] == report["total"] and printed["days"] == report["days"]
    ap = printed["advantage_play"]
    assert [(a["kind"], a["spot"], a["shoe"]) for a in ap["alerts"]] == [("bet_ramp", 1, 2)]   # as dealt live
    assert main(["analytics", "--config", str(path)]) == 0
    out = capsys.readouterr().out
    assert "gaming day 2026-11-25" in out and "advantage-play alerts (pit only)" in out
    assert main(["analytics", "--config", str(path), "--day-start", "6am"]) == 2
    assert capsys.readouterr().err.strip().endswith("day_start: expected HH:MM, got '6am'")

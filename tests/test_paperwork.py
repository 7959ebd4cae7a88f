"""Table paperwork (controller/paperwork.py): slips entered by one role and confirmed by another, the gaming day's
win from them, equal to the table meters' house win over simulated shifts, through the runtime's commands and
across SIGKILLs."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from controller.bus import Role
from controller.games.base import IllegalEvent
from controller.journal import Journal
from controller.paperwork import Paperwork, confirmed, day_figures, entered, slip_records
from controller.rng import SeededRng
from controller.tablerecords import SlipConfirmed, SlipEntered, table_record
from controller.tablestate import new_state, replay
from tests.rating_sim import Sim
from tests.table_helpers import table_config

DAY = "2026-11-26"


def enter(pw: Paperwork, form: str, by: str, chips: dict[str, int] | None = None, amount: int | None = None,
          house_win: int = 0, day: str = DAY) -> Paperwork:
    return entered(pw, SlipEntered(pw.next_slip, form, day, by, 0, chips=chips, amount=amount), house_win)


def test_a_slip_counts_once_a_second_different_role_confirms_it() -> None:
    pw = enter(Paperwork(), "opener", "dealer", {"5": 100, "25": 40})              # 1500
    pw = enter(pw, "fill", "pit", {"25": 20})                                      # 500
    pw = enter(pw, "credit", "pit", {"100": 3})                                    # 300
    pw = enter(pw, "drop", "ops", amount=2000)
    pw = enter(pw, "closer", "dealer", {"5": 90, "25": 50, "100": 2}, house_win=900)  # 1900
    assert day_figures(pw, DAY)["win"] is None and day_figures(pw, DAY)["unconfirmed"] == [1, 2, 3, 4, 5]
    with pytest.raises(IllegalEvent, match="entered by dealer: a second, different role confirms it"):
        confirmed(pw, SlipConfirmed(1, "dealer", 0))
    for slip, by in ((1, "pit"), (2, "dealer"), (4, "pit"), (5, "pit")):
        pw = confirmed(pw, SlipConfirmed(slip, by, 0))
    with pytest.raises(IllegalEvent, match="slip 1 was confirmed by pit already"):
        confirmed(pw, SlipConfirmed(1, "ops", 0))
    with pytest.raises(IllegalEvent, match="no slip 9"):
        confirmed(pw, SlipConfirmed(9, "ops", 0))
    day = day_figures(pw, DAY)
    # the credit (slip 3) is not confirmed: it does not count
    assert day == {"day": DAY, "opener": 1500, "closer": 1900, "fills": 500, "credits": 0, "drop": 2000,
                   "win": 1900 - 1500 + 0 - 500 + 2000, "meters_house_win": 900, "difference": 1900 - 900,
                   "unconfirmed": [3]}
    pw = confirmed(pw, SlipConfirmed(3, "ops", 0))
    assert day_figures(pw, DAY)["win"] == 1900 - 1500 + 300 - 500 + 2000
    # a day has one opener and one closer: a second is refused when entered, or when confirmed if both were entered
    with pytest.raises(IllegalEvent, match="has a confirmed opener already"):
        enter(pw, "opener", "dealer", {"5": 1})
    pw = enter(pw, "opener", "dealer", {"5": 1}, day="2026-11-27")
    pw = enter(pw, "opener", "dealer", {"5": 2}, day="2026-11-27")
    pw = confirmed(pw, SlipConfirmed(6, "pit", 0))
    with pytest.raises(IllegalEvent, match="2026-11-27 has a confirmed opener already"):
        confirmed(pw, SlipConfirmed(7, "pit", 0))


@pytest.mark.parametrize("args, message", [
    ({"form": "tip", "chips": {"5": 1}}, "form must be one of opener, closer, fill, credit, drop"),
    ({"form": "fill", "chips": {"5": -1}}, "chips.5: the count must be a whole number"),
    ({"form": "fill", "chips": {"five": 1}}, "denomination 'five' is not a whole number"),
    ({"form": "fill", "chips": {}}, "chips must be an object"),
    ({"form": "fill", "chips": {"5": 1.5}}, "chips.5: the count must be a whole number"),
    ({"form": "drop", "amount": -3}, "amount must be the credits counted"),
    ({"form": "fill", "chips": {"5": 1}, "day": "yesterday"}, "day must be a gaming day YYYY-MM-DD"),
    ({"form": "fill"}, "chips"),
])
def test_a_bad_slip_is_refused_naming_the_field(args: dict[str, Any], message: str) -> None:
    with pytest.raises((ValueError, KeyError), match=message):
        slip_records(Paperwork(), "dealer", "slip_enter", args, 0, DAY)


def test_chips_given_as_text_by_the_command_line_are_taken() -> None:
    [rec] = slip_records(Paperwork(), "pit", "slip_enter", {"form": "fill", "chips": '{"25": 4}'}, 7, DAY)
    assert table_record(rec) == SlipEntered(1, "fill", DAY, "pit", 7, chips={"25": 4})


def _pay(tray: Counter[int], amount: int) -> Counter[int]:
    """Chips worth `amount` out of the tray, the largest first; raises when the tray cannot make it."""
    out: Counter[int] = Counter()
    for d in sorted(tray, reverse=True):
        n = min(tray[d], amount // d)
        out[d] += n
        amount -= n * d
    if amount:
        raise LookupError(amount)
    return out


def _chips(c: Counter[int]) -> dict[str, int]:
    return {str(d): n for d, n in sorted(c.items()) if n}


def _slip(sim: Sim, form: str, by: str, confirm_by: str | None, day: str, chips: Counter[int] | None = None,
          amount: int | None = None) -> None:
    pw = sim.state.paperwork
    for rec in slip_records(pw, by, "slip_enter", {"form": form, "day": day, **(
            {"amount": amount} if chips is None else {"chips": _chips(chips)})}, sim.clock, day):
        sim.add(rec)
    if confirm_by is not None:
        sim.add(SlipConfirmed(pw.next_slip, confirm_by, sim.clock).to_json())


def test_the_paperworks_win_equals_the_meters_house_win_over_simulated_shifts() -> None:
    """Three gaming days of seeded baccarat through the table's fold. Players buy chips with cash (to the drop
    box), the tray takes the chips lost and pays the chips won, fills come when it runs short and credits take
    its surplus to the cage; the count room's drop is entered after each day. Each day's win from the paperwork
    equals the meters' house win (tablestate's Meters: handle - returned, as it stood at the closer's entry less
    at the opener's)."""
    rng = SeededRng(42)
    sim = Sim("baccarat", rng)
    tray: Counter[int] = Counter({1: 300, 5: 300, 25: 200, 100: 60})
    days = ["2026-11-24", "2026-11-25", "2026-11-26"]
    fills = credits = 0
    for day in days:
        _slip(sim, "opener", "dealer", "pit", day, tray)
        drop = 0
        for r in range(120):
            if r % 30 == 0:   # each player buys chips with cash
                for _ in range(5):
                    cash = 100 * (1 + rng.randbelow(5))
                    drop += cash
                    tray -= _pay(tray, cash)
            bets = {spot: {rng.choice(["banker", "player", "tie"]): 10 * (1 + rng.randbelow(20))}
                    for spot in range(1, 8) if rng.randbelow(3)}
            sim.round(bets, {})
            for row in sim.settled[-1].settlement.results:
                net = row.stake - row.returned
                if net > 0:
                    tray += _pay(Counter({1: 10**6, 5: 10**6, 25: 10**6, 100: 10**6}), net)
                elif net < 0:
                    try:
                        tray -= _pay(tray, -net)
                    except LookupError:
                        fill = Counter({1: 200, 5: 200, 25: 100, 100: 40})
                        _slip(sim, "fill", "pit", "dealer", day, fill)
                        tray += fill
                        fills += 1
                        tray -= _pay(tray, -net)
            if r % 40 == 39 and tray[25] >= 60:   # the cage takes back a rack of 25s
                credit = Counter({25: 40})
                _slip(sim, "credit", "pit", "dealer", day, credit)
                tray -= credit
                credits += 1
        # an unconfirmed fill would not count: enter one and leave it
        _slip(sim, "fill", "pit", None, day, Counter({5: 1}))
        _slip(sim, "closer", "dealer", "pit", day, tray)
        _slip(sim, "drop", "ops", "pit", day, amount=drop)
    wins = []
    for day in days:
        figures = day_figures(sim.state.paperwork, day)
        assert figures["difference"] == 0 and figures["win"] == figures["meters_house_win"], figures
        assert len(figures["unconfirmed"]) == 1
        wins.append(figures["win"])
    assert sum(wins) == sim.state.meters.house_win
    assert fills and credits, (fills, credits)   # the shifts moved chips both ways
    # the replay of the records rebuilds the same paperwork
    again = replay(new_state(sim.state.table_id, sim.spec, sim.spec.rules({})), enumerate(sim.records, 1))
    assert again.paperwork == sim.state.paperwork


def test_paperwork_through_the_tables_commands_and_roles(tmp_path: Path) -> None:
    from controller.table import Table

    cfg = table_config(tmp_path, "baccarat")

    async def run() -> dict[str, Any]:
        table = Table(cfg)
        await table.start()
        try:
            dealer, pit, ops = Role("dealer"), Role("pit"), Role("ops")
            reply = await table.command(dealer, "slip_enter", {"form": "opener", "day": DAY, "chips": {"25": 8}})
            assert reply == {"ok": True, "result": {"records": 1, "slip": 1}}
            assert (await table.command(dealer, "slip_confirm", {"slip": 1}))["error"] == \
                "slip 1 was entered by dealer: a second, different role confirms it"
            assert (await table.command(Role("spot", 1), "slip_confirm", {"slip": 1}))["error"] == \
                "spot:1 may not slip confirm"
            assert (await table.command(dealer, "pit", {}))["error"] == "dealer may not pit"
            assert (await table.command(pit, "slip_confirm", {"slip": 1}))["ok"]
            assert (await table.command(ops, "slip_enter", {"form": "drop", "day": DAY, "amount": 50}))["ok"]
            view = (await table.command(pit, "pit", {}))["result"]
            return view
        finally:
            await table.stop()

    view = asyncio.run(asyncio.wait_for(run(), 60))
    assert view["paperwork"]["days"] == [{"day": DAY, "opener": 200, "closer": None, "fills": 0, "credits": 0,
                                          "drop": 0, "win": None, "meters_house_win": None, "difference": None,
                                          "unconfirmed": [2]}]
    # a restart replays the slips
    async def again() -> Any:
        table = Table(cfg)
        await table.start()
        state = table.state
        await table.stop()
        return state

    state = asyncio.run(asyncio.wait_for(again(), 60))
    assert [(s.slip, s.form, s.by, s.confirmed_by) for s in state.paperwork.slips] == \
        [(1, "opener", "dealer", "pit"), (2, "drop", "ops", None)]


ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.slow
def test_a_slip_naming_no_day_is_the_gaming_day_also_after_midnight(tmp_path: Path) -> None:
    from controller.table import Table

    after_midnight = 1_795_741_200.0   # 2026-11-27 01:00 UTC: the gaming day (from 06:00) is still the 26th

    async def run() -> dict[str, Any]:
        table = Table(table_config(tmp_path, "baccarat"))
        table.clock = lambda: after_midnight
        await table.start()
        try:
            assert (await table.command(Role("dealer"), "slip_enter", {"form": "opener", "chips": {"25": 8}}))["ok"]
            return (await table.command(Role("pit"), "pit", {}))["result"]
        finally:
            await table.stop()

    view = asyncio.run(asyncio.wait_for(run(), 60))
    assert [d["day"] for d in view["paperwork"]["days"]] == ["2026-11-26"] == [view["analytics"]["day"]]


def test_ratings_and_slips_survive_sigkills_neither_lost_nor_doubled(tmp_path: Path) -> None:
    """tests/rating_crash_driver.py: the pit's script of ratings and slips, a round of play after each command,
    SIGKILLed at 12 seeded journal points (before or after the durable write) and resent from its start after
    every restart with the same bus ids."""
    from controller.paperwork import paperwork_view
    from tests.rating_crash_driver import DAY as CRASH_DAY, SCRIPT

    cfg = table_config(tmp_path, "baccarat", seed=2026)
    config_file = tmp_path / "config.json"
    config_file.write_text(json.dumps(dict(cfg.raw)))
    out = subprocess.run([sys.executable, "-m", "tests.rating_crash_driver", str(config_file), "12", "17"], cwd=ROOT,
                         capture_output=True, text=True, timeout=600, check=False)
    lines = [json.loads(line) for line in out.stdout.splitlines() if line.startswith("{")]
    assert out.returncode == 0 and lines[-1] == {"done": True}, out.stderr[-3000:] + out.stdout[-2000:]
    kills = [x for x in lines if "kill" in x]
    assert len(kills) == 12 and all(x["killed"] for x in kills)
    landed = Counter((x["record"] or {}).get("kind") for x in kills)
    assert landed["slip"] + landed["rating"] >= 3, landed   # kills landed right after pit records
    assert sum(x["mode"] == "pit before_journal" for x in kills) >= 1   # and right before one

    with Journal(cfg.journal, cfg.table_id) as j:
        entries = [(e.seq, e.record) for e in j.entries()]
    ids = Counter(r["origin"]["id"] for _, r in entries if isinstance(r.get("origin"), dict))
    assert sorted(ids) == sorted(f"pit-{i}" for i in range(len(SCRIPT))) and set(ids.values()) == {1}
    state = replay(new_state(cfg.table_id, cfg.game, cfg.rules), entries)
    slips = [(s.slip, s.form, s.by, s.confirmed_by, s.amount) for s in state.paperwork.slips]
    assert slips == [(1, "opener", "dealer", "pit", 2000 + 5000 + 5000), (2, "fill", "pit", "dealer", 1000),
                     (3, "credit", "ops", "pit", 1000), (4, "drop", "ops", "pit", 4321),
                     (5, "closer", "dealer", "ops", 1900 + 5750 + 4100)]
    [day] = paperwork_view(state.paperwork)["days"]
    assert day["day"] == CRASH_DAY and day["win"] == (1900 + 5750 + 4100) - 12000 + 1000 - 1000 + 4321
    assert [(s.player, s.spots, s.stopped is not None) for s in state.ratings.sessions] == \
        [("100200300", (1, 3), True), ("555000111", (2,), True)]
    assert state.ratings.open == ()
    refused = [r for _, r in entries if r["kind"] == "refused" and (r.get("origin") or {}).get("id") == "pit-2"]
    assert len(refused) == 1   # the dealer's confirmation of its own slip: refused once, journaled once


def test_any_sequence_of_slip_commands_keeps_the_books_straight() -> None:
    """Hypothesis: whatever roles enter and confirm whatever slips in whatever order, a slip is confirmed at most
    once and never by the role that entered it, only confirmed slips count, and the replay of what was accepted
    rebuilds the same paperwork."""
    from hypothesis import given, settings
    from hypothesis import strategies as st

    from controller.tablestate import step

    roles = st.sampled_from(["dealer", "pit", "ops"])
    enter_cmd = st.tuples(st.just("slip_enter"), roles, st.sampled_from(["opener", "closer", "fill", "credit", "drop"]),
                          st.integers(0, 500), st.sampled_from(["2026-11-25", "2026-11-26"]))
    confirm_cmd = st.tuples(st.just("slip_confirm"), roles, st.integers(1, 8))

    @settings(max_examples=60, deadline=None)
    @given(st.lists(st.one_of(enter_cmd, confirm_cmd), max_size=14))
    def books(commands: list[tuple[Any, ...]]) -> None:
        from controller.games import get_game

        spec = get_game("baccarat")
        state = new_state("t", spec, spec.rules({}))
        accepted = []
        for c in commands:
            if c[0] == "slip_enter":
                _, by, form, n, day = c
                args = {"form": form, "day": day, **({"amount": n} if form == "drop" else {"chips": {"5": n}})}
            else:
                _, by, slip = c
                args = {"slip": slip}
            [rec] = slip_records(state.paperwork, by, c[0], args, 0, day if c[0] == "slip_enter" else DAY)
            try:
                state, _ = step(state, rec)
            except IllegalEvent:
                continue
            accepted.append(rec)
        pw = state.paperwork
        for s in pw.slips:
            assert s.confirmed_by is None or s.confirmed_by != s.by
        for day in ("2026-11-25", "2026-11-26"):
            figures = day_figures(pw, day)
            counted = [s for s in pw.slips if s.day == day and s.confirmed_by]
            assert figures["drop"] == sum(s.amount for s in counted if s.form == "drop")
            assert figures["fills"] == sum(s.amount for s in counted if s.form == "fill")
            assert sum(s.form == "opener" for s in counted) <= 1 and sum(s.form == "closer" for s in counted) <= 1
        again = replay(new_state("t", spec, spec.rules({})), enumerate(accepted, 1))
        assert again.paperwork == pw

    books()

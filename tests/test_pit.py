"""The pit's wiring (issue 42): dealers sign in and out by command, the table folds the advantage-play alerts and the
shift's analytics live exactly as a replay of its journal does (across a restart too), and the `pit` command answers
them beside the ratings and paperwork."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from controller import apalerts
from controller.bench.apalerts import simulate
from controller.bus import Role
from controller.config import config_from_mapping
from controller.games import blackjack as bj
from controller.journal import Journal
from controller.tableanalytics import analyse
from controller.tablestate import new_state
from tests.table_helpers import free_ports

T0 = 1_790_000_000.0   # a Thursday, 2026-09-21 14:13 UTC: in the 14:00 shift
PIT, DEALER, SPOT = Role("pit"), Role("dealer"), Role("spot", 1)


def manual_config(tmp: Path) -> Any:
    """A six-deck blackjack table of three spots whose cards are entered by hand (the seeded records deal them)."""
    p1, p2, p3 = free_ports(3)
    return config_from_mapping({
        "table": {"id": "bj-pit", "game": "blackjack", "journal": str(tmp / "bj.journal")},
        "rules": {"spots": 3, "penetration": 75},
        "shoe": {"port": "none"},
        "bus": {"publish": f"tcp://127.0.0.1:{p1}", "snapshot": f"tcp://127.0.0.1:{p2}",
                "commands": f"tcp://127.0.0.1:{p3}", "heartbeat": 0.2}}, tmp / "table.toml")


@pytest.fixture(scope="module")
def counter() -> Any:
    """Seed 3: a counter (spot 1), a flat (2) and a random bettor (3), four shoes at 75%, with its records (the
    counter is flagged after its second shoe)."""
    return simulate(3, 4, 75, keep_records=True, players=("counter", "flat", "random"))


async def feed(table: Any, records: list[dict[str, Any]], clock: list[float]) -> None:
    """Each record written by the table as its own group commit, a second apart on the table's clock."""
    for record in records:
        clock[0] += 1.0
        await table._submit(lambda batch, r=record: batch.add(dict(r)))


def test_the_live_watch_is_the_replay_of_the_journal_across_a_restart(tmp_path: Path, counter: Any) -> None:
    from controller.table import Table

    cfg = manual_config(tmp_path)
    clock = [T0]
    half = len(counter.records) // 2

    async def life(records: list[dict[str, Any]], first: bool) -> tuple[Any, dict[str, Any]]:
        table = Table(cfg, clock=lambda: clock[0])
        await table.start()
        try:
            if first:
                assert (await table.command(PIT, "dealer_sign_in", {"dealer": "D-17"}))["ok"]
            await feed(table, records, clock)
            view = (await table.command(PIT, "pit", {}))["result"]
            return table.watch, view
        finally:
            await table.stop()

    asyncio.run(asyncio.wait_for(life(counter.records[:half], True), 120))
    watch, view = asyncio.run(asyncio.wait_for(life(counter.records[half:], False), 120))
    # the alerts: the very state a replay of the game records gives (and the simulation's own live fold)
    table0 = new_state("bj-pit", bj.GAME, bj.Rules(spots=3, penetration=75))
    assert watch.ap == apalerts.replay(table0, counter.records)
    assert [a.json() for a in watch.ap.alerts] == [a.json() for a in counter.alerts] != []
    assert view["advantage_play"] == apalerts.pit_view(watch.ap, "bj-pit", 20)
    assert view["advantage_play"]["alerts"][0]["kind"] == "bet_ramp"
    assert view["advantage_play"]["spots"]["1"]["points"]   # the plot's [true count, bet] pairs
    # the analytics: what `croupier analytics` gives for the whole journal, as of the last record
    with Journal(cfg.journal, cfg.table_id) as journal:
        entries = [(e.time, e.record) for e in journal.entries()]
    report = analyse("bj-pit", bj.GAME, bj.Rules(spots=3, penetration=75), entries)
    assert watch.tally.report("bj-pit", "blackjack") == report
    shift = view["analytics"]
    assert (shift["day"], shift["shift"], shift["dealer"]) == ("2026-09-21", "14:00", "D-17")
    assert shift["shift_figures"] == report["days"]["2026-09-21"]["shifts"]["14:00"]
    assert shift["shift_figures"]["dealers"]["D-17"]["rounds"] == shift["shift_figures"]["rounds"] > 0
    series = shift["win_series"]
    assert len(series) == shift["shift_figures"]["rounds"] and series[-1][1] == shift["shift_figures"]["win"]


def test_dealers_sign_in_and_out_by_command(tmp_path: Path) -> None:
    from controller.table import Table

    cfg = manual_config(tmp_path)

    async def main() -> list[dict[str, Any]]:
        table = Table(cfg)
        await table.start()
        try:
            assert (await table.command(DEALER, "dealer_sign_out", {}))["error"] == "no dealer is signed in"
            assert (await table.command(SPOT, "dealer_sign_in", {"dealer": "x"}))["error"] == \
                "spot:1 may not dealer sign in"
            assert "dealer must be the dealer's id" in (await table.command(PIT, "dealer_sign_in", {"dealer": ""}))["error"]
            assert (await table.command(DEALER, "dealer_sign_in", {"dealer": 4711}))["ok"]
            assert (await table.command(PIT, "pit", {}))["result"]["analytics"]["dealer"] == "4711"
            assert (await table.command(PIT, "dealer_sign_out", {}))["ok"]
            assert (await table.command(PIT, "pit", {}))["result"]["analytics"]["dealer"] is None
            # a supervisor reads what the dealer's screen shows and the meters; a spot reads no pit
            assert (await table.command(PIT, "status", {}))["ok"] and (await table.command(PIT, "meters", {}))["ok"]
            assert (await table.command(DEALER, "pit", {}))["error"] == "dealer may not pit"
        finally:
            await table.stop()
        with Journal(cfg.journal, cfg.table_id) as journal:
            return [e.record for e in journal.entries() if e.record["kind"] == "dealer"]

    assert [r["dealer"] for r in asyncio.run(asyncio.wait_for(main(), 60))] == ["4711", None]


def test_the_pit_view_is_json_and_names_no_table_internals(tmp_path: Path) -> None:
    from controller.pitwatch import PitWatch

    state = new_state("t", bj.GAME, bj.Rules())
    view = PitWatch().view(state, T0)
    assert json.loads(json.dumps(view)) == view
    assert set(view) >= {"ratings", "paperwork", "advantage_play", "analytics"}


def test_the_binomial_tail_of_a_long_session_sums_in_logs() -> None:
    """A spot with over ~1,030 mid-shoe entries (a random bettor over a long shift) overflowed the float sum and would
    have failed the live fold: found by `croupier bench pit` on a 10,000-round journal."""
    from fractions import Fraction
    from math import comb

    p = Fraction(17, 100)
    exact = sum(comb(2000, i) * p ** i * (1 - p) ** (2000 - i) for i in range(300, 2001))
    assert apalerts.binomial_tail(300, 2000, 0.17) == pytest.approx(float(exact), rel=1e-9)
    assert apalerts.binomial_tail(1900, 2000, 0.17) == pytest.approx(0.0, abs=1e-300)
    assert apalerts.binomial_tail(3, 3, 0.5) == 0.125   # the exact sum below the overflow, as before


def test_the_pit_pages_config_errors_name_the_key(tmp_path: Path) -> None:
    import dataclasses

    from controller.config import ConfigError
    from controller.screens import pit_settings
    from controller.screens.config import screens_config
    from tests.screens_helpers import with_keys

    (tmp_path / "pit.token").write_text("pit-token-0123456789abcdef\n")
    (tmp_path / "dealer.token").write_text("pit-token-0123456789abcdef\n")
    plain = manual_config(tmp_path)
    with pytest.raises(ConfigError, match=r"\[screens\]\.pit_key: the bus has no CURVE keys"):
        screens_config(dataclasses.replace(plain, raw={**plain.raw, "screens": {"pit_key": "pit.key_secret"}}))
    keyed = with_keys(plain, tmp_path, "pit", {"pit_token_file": "pit.token"})
    with pytest.raises(ConfigError, match=r"pit_key: the pit page asks the table with the bridge's pit key"):
        screens_config(keyed)
    with pytest.raises(ConfigError, match=r"pit_key: ops.key_secret is not listed as a \[\[bus.client\]\] with role "
                                          r"\"pit\""):
        screens_config(dataclasses.replace(keyed, raw={**keyed.raw, "screens": {"pit_token_file": "pit.token",
                                                                                 "pit_key": "ops.key_secret"}}))
    with pytest.raises(ConfigError, match=r"pit_token_file: the pit page's token must not be the dealer pages'"):
        screens_config(dataclasses.replace(keyed, raw={**keyed.raw, "screens": {
            "pit_token_file": "pit.token", "pit_key": "pit.key_secret", "dealer_token_file": "dealer.token"}}))
    cfg = dataclasses.replace(keyed, raw={**keyed.raw, "screens": {"pit_token_file": "pit.token",
                                                                    "pit_key": "pit.key_secret",
                                                                    "pit_tables": ["bj-9"]}})
    settings = screens_config(cfg)
    assert settings.pit_token == "pit-token-0123456789abcdef" and settings.pit_keys is not None
    with pytest.raises(ConfigError, match=r"pit_tables: bj-9 not served here"):
        pit_settings([cfg], [settings])
    assert pit_settings([keyed], [screens_config(dataclasses.replace(keyed, raw={**keyed.raw, "screens": {}}))]) is None


@settings(max_examples=5, deadline=None)
@given(seed=st.integers(0, 2**32), cut=st.floats(0, 1), spot=st.integers(1, 2))
def test_a_watch_that_replays_then_folds_live_is_the_replay_and_no_screen_view_shows_it(seed: int, cut: float,
                                                                                        spot: int) -> None:
    """Any seeded shoe, a player rated at any spot, a restart anywhere: the watch rebuilt at the start and fed live
    after it is what apalerts' and tableanalytics' replays give, and the screens' views name none of it."""
    from controller.pitwatch import PitWatch, replay as watch_replay
    from controller.tablerecords import RatingStart
    from controller.tablestate import picture
    from controller.views import SCREEN_AUDIENCES, project

    thresholds = apalerts.Thresholds(ramp_min_rounds=3, wong_min=1, wong_p=0.5, hole_min=2, hole_z=0.5)
    live = simulate(seed, 1, 75, 2, keep_records=True, players=("counter", "random"), thresholds=thresholds)
    records = [RatingStart(spot, "40000001", int(T0), "pit").to_json(), *(live.records or [])]
    rows = [(i, T0 + 7 * i, r) for i, r in enumerate(records, 1)]
    rules = bj.Rules(decks=2, spots=2, penetration=75)
    at = int(cut * len(rows))
    watch = PitWatch(thresholds=thresholds)
    state = watch_replay(new_state("t", bj.GAME, rules), rows[:at], watch)
    for seq, t, row in rows[at:]:   # as the table's writer does after each commit
        from controller.tablestate import step

        after, effects = step(state, row)
        watch.add(t, row, state, after, effects)
        state = after
    assert watch.ap == apalerts.replay(new_state("t", bj.GAME, rules), records, thresholds)
    assert watch.tally.report("t", "blackjack") == analyse("t", bj.GAME, rules, [(t, r) for _, t, r in rows])
    assert watch.ap.alerts == tuple(live.alerts)
    pit = watch.view(state, rows[-1][1])
    assert pit["ratings"]["open"] == {str(spot): "40000001"}
    for audience in SCREEN_AUDIENCES:
        text = json.dumps(project(picture(state), audience))
        assert "40000001" not in text and not any(a["text"] in text for a in pit["advantage_play"]["alerts"])
        for key in ('"ratings"', '"advantage_play"', '"paperwork"', '"true_count"', '"win_series"', "theo"):
            assert key not in text


@pytest.mark.slow
def test_the_bench_command(tmp_path: Path) -> None:
    from controller.cli import main

    out = tmp_path / "b.json"
    assert main(["bench", "pit", "--rounds", "30", "--asks", "3", "--json", str(out)]) == 0
    report = json.loads(out.read_text())
    assert report["rounds"] == 30 and report["asks"] == 3 and report["answer_ms"]["median"] > 0
    assert report["alerts_in_answer"] <= 20


def test_a_failing_watch_stops_itself_never_the_table(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from controller.table import Table

    def broken(*args: Any) -> Any:
        raise OverflowError("int too large to convert to float")

    monkeypatch.setattr(apalerts, "step", broken)
    cfg = manual_config(tmp_path)

    async def main() -> dict[str, Any]:
        table = Table(cfg)
        await table.start()
        try:
            assert (await table.command(DEALER, "dealer_sign_in", {"dealer": "D-1"}))["ok"]
            return (await table.command(PIT, "pit", {}))["result"]
        finally:
            await table.stop()

    view = asyncio.run(asyncio.wait_for(main(), 60))
    assert view["watch_failed"] == "OverflowError: int too large to convert to float"

"""The floor service: per-machine summaries and the CSV report from known journals (pure, exact), the floor page on a real nats-server (a token per role, every machine with status, lag and meters), and `croupier floor serve --embedded` end to end."""

from __future__ import annotations

import asyncio
import itertools
import json
import signal
import subprocess
import sys
from datetime import datetime, timezone
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from controller.cabinetstate import Settings
from controller.floor.replicator import JournalReader, Replicator
from controller.floor.report import HEADER, report_csv
from controller.floor.summary import (MachineSummary, MeterSet, alerts_of, day_meters, fold_row, gaming_day,
                                      machine_status, meter_set)
from controller.floor.wire import FloorRow, subject_for
from controller.journal import Journal
from controller.slots.catalog import get_title
from tests.floor_cluster import ServedFloor, floor_page_json, floor_serve, replicate, skip_without_floor
from tests.floor_cluster import floor_server  # noqa: F401 - the module's server
from tests.slot_helpers import losing_stops, stops_for
from tests.table_helpers import free_ports, play_config, table_toml

ROOT = Path(__file__).resolve().parents[1]
UTC = ZoneInfo("UTC")


def ts(text: str) -> int:
    """Nanoseconds of a UTC time, e.g. "2026-03-01T10:00:00"."""
    return int(datetime.fromisoformat(text).replace(tzinfo=timezone.utc).timestamp()) * 1_000_000_000


def write_journal(folder: Path, machine: str, rows: list[tuple[str, dict[str, Any]]]) -> Path:
    """A machine's keyed, anchored journal of these (UTC time, record) rows."""
    path = folder / machine / f"{machine}.journal"
    journal = Journal(path, machine, key_file=folder / "keys" / f"{machine}.key", anchor=folder / machine / "anchor")
    for when, group in itertools.groupby(rows, key=lambda r: r[0]):  # one commit per time: fewer fsyncs
        journal.append_many([record for _, record in group], ts_ns=ts(when))
    journal.close()
    return path


def cabinet_rows(lockup: bool = False) -> list[tuple[str, dict[str, Any]]]:
    """Diamond Mine at 25 cents: 10 coins in, a losing and a winning spin (7R 7R 7R at 3 coins pays 450 credits,
    the second just before 06:00 the next morning: the same gaming day), then a hopper cash out of 454 coins in
    the next gaming day; `lockup`: a coin jam left open."""
    t = get_title("diamond-mine")
    bet = {"coins": 3, "lines": 1}
    rows: list[tuple[str, dict[str, Any]]] = [
        ("2026-03-01T10:00:00", {"kind": "start", "version": "test", "title": t.id, "digest": t.digest,
                                 "denomination": 25, "settings": Settings().json()})]
    rows += [(f"2026-03-01T10:00:{i + 1:02d}", {"kind": "credit", "source": "coin", "credits": 1, "by": "coin"})
             for i in range(10)]
    rows += [("2026-03-01T10:01:00", {"kind": "bet", **bet}),
             ("2026-03-01T10:01:01", {"kind": "spin", "game": 1, "stops": list(losing_stops(t)), "bet": bet}),
             ("2026-03-02T05:59:59", {"kind": "spin", "game": 2, "stops": list(stops_for(t, "7R", "7R", "7R")),
                                      "bet": bet}),
             ("2026-03-02T06:00:00", {"kind": "cashout", "credits": 454, "via": "hopper", "coins": 454})]
    rows += [("2026-03-02T06:00:01", {"kind": "coin_out"}) for _ in range(454)]
    if lockup:
        rows.append(("2026-03-02T07:00:00", {"kind": "lockup", "lockup": {"id": 1, "kind": "coin_in_jam",
                                                                            "text": "coin in jam"}}))
    return rows


def link_rows() -> list[tuple[str, dict[str, Any]]]:
    """A link of reset 500.00: two contributions, a hit of 25-cent credits, a contribution after it."""
    return [("2026-03-01T09:00:00", {"kind": "start", "version": "test", "reset_cents": 50_000, "title": None}),
            ("2026-03-01T09:00:01", {"kind": "contribution", "cabinet": "cab-1", "game": 1, "cents": 130}),
            ("2026-03-01T09:00:02", {"kind": "contribution", "cabinet": "cab-2", "game": 1, "cents": 60}),
            ("2026-03-01T09:00:03", {"kind": "hit", "cabinet": "cab-2", "game": 1, "denomination": 25,
                                     "award": 50_175}),
            ("2026-03-02T09:00:00", {"kind": "contribution", "cabinet": "cab-1", "game": 2, "cents": 40})]


def rows_of(path: Path) -> list[FloorRow]:
    reader = JournalReader(path)
    try:
        return reader.rows(0, 10**6)
    finally:
        reader.close()


def fold_all(machine: str, rows: list[FloorRow]) -> MachineSummary:
    summary = MachineSummary(machine)
    for row in rows:
        summary = fold_row(summary, row, start_hour=6, tz=UTC)
    return summary


# The report of the known journals, figured by hand: money in cents.
# cab-1, 2026-03-01: 2 games of 3 credits (150 cents), won 450 credits (11,250), 10 coins dropped (250).
# cab-1, 2026-03-02: the hopper paid 454 coins (11,350); no game.
# link-1, 2026-03-01: 2 contributions of 190 cents, the hit paid 50,175 (the pool in whole 25-cent credits).
REPORT_0301 = ("gaming_day,machine,kind,what,denomination,games,handle,paid,win,commission,drop,coins_out,hand_paid,"
               "credits_played,credits_won,error\r\n"
               "2026-03-01,cab-1,cabinet,Diamond Mine,25,2,150,11250,-11100,0,250,0,0,6,450,\r\n"
               "2026-03-01,link-1,link,progressive link,,2,190,50175,-49985,0,0,0,0,0,0,\r\n")
REPORT_0302 = ("2026-03-02,cab-1,cabinet,Diamond Mine,25,0,0,0,0,0,0,11350,0,0,0,\r\n"
               "2026-03-02,link-1,link,progressive link,,1,40,0,40,0,0,0,0,0,0,\r\n")


def test_gaming_days_run_from_the_start_hour_to_the_next_morning() -> None:
    assert gaming_day(ts("2026-03-02T05:59:59"), 6, UTC) == "2026-03-01"
    assert gaming_day(ts("2026-03-02T06:00:00"), 6, UTC) == "2026-03-02"
    assert gaming_day(ts("2026-03-02T00:30:00"), 0, UTC) == "2026-03-02"
    assert gaming_day(ts("2026-07-01T04:30:00"), 6, ZoneInfo("Europe/London")) == "2026-06-30"  # 05:30 BST
    assert gaming_day(ts("2026-07-01T05:30:00"), 6, ZoneInfo("Europe/London")) == "2026-07-01"  # 06:30 BST


def test_the_report_of_known_journals_has_the_figures_worked_by_hand(tmp_path: Path) -> None:
    cab = fold_all("cab-1", rows_of(write_journal(tmp_path, "cab-1", cabinet_rows())))
    link = fold_all("link-1", rows_of(write_journal(tmp_path, "link-1", link_rows())))
    assert report_csv([link, cab], "2026-03-01") == REPORT_0301
    assert report_csv([cab, link], "2026-03-02") == REPORT_0301.split("\r\n")[0] + "\r\n" + REPORT_0302
    assert report_csv([cab, link], "2026-03-03") == ",".join(HEADER) + "\r\n"  # nobody played
    assert (cab.kind, cab.what, cab.denomination, cab.seq, cab.error) == ("cabinet", "Diamond Mine", 25, 469, None)
    assert cab.state.credits == 0 and cab.state.meters.hopper_out == 454
    assert (link.state.pool, link.state.hits) == (50_000 + (50_000 + 190 - 50_175) + 40, 1)


def floor_rows(machine: str, records: list[dict[str, Any]], times: list[int]) -> list[FloorRow]:
    """Rows as the floor holds them (the fold never looks at the MACs: the chain check already has)."""
    return [FloorRow(seq, machine, when, 2, json.dumps(record, sort_keys=True), "0" * 64, "1" * 64)
            for seq, (record, when) in enumerate(zip(records, times), 1)]


@settings(max_examples=40, deadline=None)
@given(gaps=st.lists(st.integers(-2 * 3600, 30 * 3600), min_size=20, max_size=20), start_hour=st.integers(0, 23))
def test_the_gaming_days_of_a_machine_add_up_to_its_meters_wherever_the_days_fall(gaps: list[int],
                                                                                   start_hour: int) -> None:
    """However the rows fall over gaming days (a clock set back included), the days' meters sum to the machine's."""
    records = [r for _, r in cabinet_rows()]
    records = records[:15] + records[15:-454] + records[-454:][:5]  # the hopper pays 5 of its 454 coins
    when, times = ts("2026-03-01T10:00:00"), []
    for i in range(len(records)):
        when += gaps[i % len(gaps)] * 1_000_000_000
        times.append(when)
    summary = MachineSummary("cab-p")
    for row in floor_rows("cab-p", records, times):
        summary = fold_row(summary, row, start_hour=start_hour, tz=UTC)
    assert summary.error is None
    days = sorted({gaming_day(t, start_hour, UTC) for t in times})
    total = MeterSet()
    for day in days:
        total = total + day_meters(summary, day)  # type: ignore[operator]
    assert total == meter_set(summary) == MeterSet(games=2, handle=150, paid=11250, win=-11100, drop=250,
                                                    coins_out=125, credits_played=6, credits_won=450)


def test_a_days_meters_add_up_to_the_machines_own_meters(tmp_path: Path) -> None:
    """A real baccarat table's journal (two rounds of the seeded autoplay): its floor report line is what
    `croupier meters` says of the same journal."""
    config = table_toml(tmp_path, "bac-1", journal=str(tmp_path / "bac-1.journal"))
    play_config(config, rounds=2)
    rows = rows_of(tmp_path / "bac-1.journal")
    summary = fold_all("bac-1", rows)
    days = sorted({gaming_day(r.ts_ns, 6, UTC) for r in rows})
    total = [day_meters(summary, d) for d in days]
    meters = json.loads(subprocess.run([sys.executable, "-m", "controller.cli", "meters", "--config", str(config),
                                        "--json"], capture_output=True, text=True, cwd=ROOT, check=True).stdout)
    assert summary.error is None and summary.kind == "table" and summary.what == "baccarat"
    assert sum(m.games for m in total) == meters["rounds"] == 2
    assert sum(m.handle for m in total) == meters["handle"] > 0
    assert sum(m.paid for m in total) == meters["paid"]
    assert sum(m.win for m in total) == meters["house_win"]
    assert sum(m.commission for m in total) == meters["commission"]


def test_a_title_file_other_than_the_floors_stops_the_fold_and_says_so(tmp_path: Path) -> None:
    rows = cabinet_rows()
    rows[0] = (rows[0][0], {**rows[0][1], "digest": "0" * 64})
    cab = fold_all("cab-9", rows_of(write_journal(tmp_path, "cab-9", rows)))
    assert cab.seq == len(rows) and cab.kind == "unknown"
    assert cab.error == ("row 1: ValueError: title diamond-mine: the machine's title file is not the floor's "
                         f"(digest 000000000000, the floor has {get_title('diamond-mine').digest[:12]}): update the "
                         "floor")


def test_alerts_and_status() -> None:
    summary = MachineSummary("x")
    assert machine_status(summary, ts("2026-03-01T00:00:00"), 60) == "offline"
    later = MachineSummary("x", seq=3, last_ts_ns=ts("2026-03-01T00:00:00"))
    assert machine_status(later, ts("2026-03-01T00:01:00"), 60) == "online"
    assert machine_status(later, ts("2026-03-01T00:01:01"), 60) == "offline"
    assert alerts_of(later) == ()


# ----------------------------------------------------------------------------------------- on a real server

@pytest.mark.slow
def test_the_floor_page_refuses_without_a_role_token_and_shows_every_machine(floor_server: Any,
                                                                            tmp_path: Path) -> None:
    import aiohttp

    from controller.floor.page import FloorPage
    from controller.floor.service import FloorService, load_service_config

    journals = {"cab-1": write_journal(tmp_path, "cab-1", cabinet_rows()),
                "cab-2": write_journal(tmp_path, "cab-2", cabinet_rows(lockup=True)),
                "link-1": write_journal(tmp_path, "link-1", link_rows())}
    table = table_toml(tmp_path, "bac-1", journal=str(tmp_path / "bac-1.journal"))
    play_config(table, rounds=1)
    journals["bac-1"] = tmp_path / "bac-1.journal"
    last = {m: rows_of(p)[-1].seq for m, p in journals.items()}
    (tmp_path / "sup.token").write_text("supervisor-token-0123456789\n")
    (tmp_path / "acc.token").write_text("accounting-token-0123456789\n")
    (tmp_path / "floor.toml").write_text(f"""
[service]
servers = ["{floor_server.url}"]
replicas = 1
listen = "127.0.0.1:0"
timezone = "UTC"
offline_after = 3600
[service.tokens]
supervisor = "sup.token"
accounting = "acc.token"
""")
    cfg = load_service_config(tmp_path / "floor.toml")

    empty = MachineSummary("none")

    async def scenario() -> None:
        reps = [Replicator(path, subject_for(m), [floor_server.url]) for m, path in journals.items()]
        tasks = [asyncio.create_task(r.run()) for r in reps]
        service = FloorService(cfg, refresh=0.2)
        await service.start()
        page = FloorPage(service, "127.0.0.1", 0)
        await page.start()
        base = f"http://127.0.0.1:{page.port}"
        try:
            assert all([await r.wait_acked(last[r.machine], 30) for r in reps])
            assert await service.wait_for(lambda s: all(s.held.get(m) == n and s.summaries.get(m, empty).seq == n
                                                        for m, n in last.items()), 30)
            jar = aiohttp.CookieJar(unsafe=True)  # keeps cookies of an IP address host
            async with aiohttp.ClientSession(cookie_jar=jar) as http:
                for headers in ({}, {"Authorization": "Bearer not-a-token"}):
                    for path in ("/floor", "/floor.json", "/report/2026-03-01.csv"):
                        async with http.get(base + path, headers=headers, allow_redirects=False) as r:
                            assert r.status == 401, path
                sup = {"Authorization": "Bearer supervisor-token-0123456789"}
                acc = {"Authorization": "Bearer accounting-token-0123456789"}
                async with http.get(base + "/report/2026-03-01.csv", headers=sup) as r:
                    assert r.status == 403  # the supervisor's role does not open the report
                async with http.get(base + "/report/2026-03-01.csv", headers=acc) as r:
                    assert r.status == 200 and r.content_type == "text/csv"
                    text = await r.text()
                async with http.get(base + "/floor.json", headers=sup) as r:
                    assert r.status == 200
                    view = await r.json()
                async with http.get(base + "/floor.json?day=2026-03-01", headers=sup) as r:
                    march = await r.json()
                async with http.get(base + "/floor.json?day=yesterday", headers=sup) as r:
                    assert r.status == 400
                async with http.get(base + "/floor?token=supervisor-token-0123456789", allow_redirects=False) as r:
                    assert r.status == 303 and r.headers["Location"] == "/floor"
                async with http.get(base + "/floor") as r:  # the cookie the redirect set
                    assert r.status == 200
                    page_html = await r.text()
        finally:
            await page.close()
            await service.close()
            for r in reps:
                r.stop()
            await asyncio.gather(*tasks)

        by = {m["machine"]: m for m in view["machines"]}
        assert sorted(by) == ["bac-1", "cab-1", "cab-2", "link-1"]
        for machine, n in last.items():
            m = by[machine]
            assert (m["floor_seq"], m["held"], m["lag_rows"], m["chain"], m["error"]) == (n, n, 0, "ok", None)
        assert by["bac-1"]["status"] == "online" and by["bac-1"]["kind"] == "table"
        assert by["bac-1"]["today"]["games"] == by["bac-1"]["meters"]["games"] == 1
        assert [by[m]["status"] for m in ("cab-1", "cab-2", "link-1")] == ["offline"] * 3  # last rows in March
        assert (by["cab-1"]["last_row"], by["cab-2"]["last_row"]) == ("2026-03-02T06:00:01+00:00",
                                                                      "2026-03-02T07:00:00+00:00")
        assert by["cab-1"]["alerts"] == [] and by["cab-2"]["alerts"] == ["lockup 1 coin_in_jam: coin in jam"]
        assert by["cab-1"]["meters"] == {"games": 2, "handle": 150, "paid": 11250, "win": -11100, "commission": 0,
                                         "drop": 250, "coins_out": 11350, "hand_paid": 0, "credits_played": 6,
                                         "credits_won": 450}
        assert view["links"] == [{"link": "link-1", "pool": 50_055, "reset": 50_000, "hits": 1, "paid": 50_175,
                                  "contributed": 230}]
        assert view["pool_stream"] is None  # no progressive stream on this floor
        assert march["gaming_day"] == "2026-03-01"
        assert {m["machine"]: m["today"] for m in march["machines"]}["cab-1"] == {
            "games": 2, "handle": 150, "paid": 11250, "win": -11100, "commission": 0, "drop": 250, "coins_out": 0,
            "hand_paid": 0, "credits_played": 6, "credits_won": 450}
        assert text == (REPORT_0301.replace("2026-03-01,link-1", "2026-03-01,cab-2,cabinet,Diamond Mine,25,2,150,"
                                            "11250,-11100,0,250,0,0,6,450,\r\n2026-03-01,link-1"))
        for machine in last:
            assert f'data-machine="{machine}"' in page_html
        assert "lockup 1 coin_in_jam: coin in jam" in page_html

    asyncio.run(scenario())


@pytest.mark.slow
def test_croupier_floor_serve_embedded_starts_takes_a_machines_rows_and_stops_cleanly(tmp_path: Path) -> None:
    skip_without_floor()

    nats_port, page_port = free_ports(2)
    served = ServedFloor(tmp_path / "state", nats_port, page_port)
    try:
        token = served.token()
        journal = write_journal(tmp_path, "cab-1", cabinet_rows())
        asyncio.run(replicate(journal, "cab-1", [f"nats://127.0.0.1:{nats_port}"], 469))

        def floor_view() -> dict[str, Any]:
            return floor_page_json(page_port, token)

        async def until_folded() -> dict[str, Any]:
            for _ in range(100):  # the page is polled: the service folds the rows in its own process
                view = await asyncio.to_thread(floor_view)
                if view["machines"] and view["machines"][0]["floor_seq"] == 469:
                    return view
                await asyncio.sleep(0.1)
            raise AssertionError(f"the floor did not fold cab-1's rows: {view}")

        view = asyncio.run(until_folded())
        assert [(m["machine"], m["kind"], m["lag_rows"]) for m in view["machines"]] == [("cab-1", "cabinet", 0)]
        report = subprocess.run([sys.executable, "-m", "controller.cli", "floor", "report", "--servers",
                                 f"nats://127.0.0.1:{nats_port}", "--day", "2026-03-02"], cwd=ROOT,
                                capture_output=True, text=True, timeout=60)  # text: CRLF read as LF
        assert (report.returncode, report.stderr) == (0, "")
        # the report's gaming day is in this machine's local time (no config: no timezone)
        local = gaming_day(ts("2026-03-02T06:00:00"), 6) == "2026-03-02" == gaming_day(ts("2026-03-02T06:00:01"), 6)
        if local and gaming_day(ts("2026-03-02T05:59:59"), 6) == "2026-03-01":  # a UTC machine, as CI is
            assert report.stdout == (REPORT_0301.split("\r\n")[0] + "\n" + REPORT_0302.split("\r\n")[0] + "\n")
        else:
            assert report.stdout.startswith(",".join(HEADER)) and "cab-1" in report.stdout
        assert (tmp_path / "state" / "nats" / "store" / "jetstream").is_dir()
    finally:
        rc = served.stop()
    assert rc == 0, "".join(served.lines)
    assert served.lines[-1] == "floor: stopped\n"
    with pytest.raises(OSError):  # the embedded server stopped with it
        import socket

        socket.create_connection(("127.0.0.1", nats_port), timeout=1).close()


def test_the_pool_stream_is_shown_when_it_exists(floor_server: Any) -> None:
    from controller.floor.page import floor_view
    from controller.floor.server import connect
    from controller.floor.service import FloorService, service_config_from_mapping

    cfg = service_config_from_mapping({"service": {"servers": [floor_server.url], "replicas": 1,
                                                   "pool_stream": "TEST_POOLS"}}, Path.cwd())

    async def scenario() -> None:
        from nats.js.api import StreamConfig

        service = FloorService(cfg, refresh=0.1)
        await service.start()
        nc = await connect([floor_server.url])
        try:
            assert await service.wait_for(lambda s: s.refreshed.is_set(), 10)
            assert service.pools is None  # no such stream yet: nothing shown
            js = nc.jetstream(timeout=2.0)
            await js.add_stream(StreamConfig(name="TEST_POOLS", subjects=["testpools.>"]))
            for subject in ("testpools.L9.contribution.c1", "testpools.L9.contribution.c1", "testpools.L9.hit.c2"):
                await js.publish(subject, b"{}")
            assert await service.wait_for(lambda s: s.pools is not None and len(s.pools) == 2, 10)
        finally:
            await nc.close()
            await service.close()
        view = floor_view({}, {}, {}, service.pools, 0, 60, "2026-03-01")
        assert view["pool_stream"] == {"testpools.L9.contribution.c1": 2, "testpools.L9.hit.c2": 1}

    asyncio.run(scenario())


@pytest.mark.parametrize("service, error", [
    ({"servers": ["nats://a:4222"], "colour": 1}, "[service]: unknown key(s) colour (known: "),
    ({}, "[service].servers: which NATS servers hold the floor? (or run it --embedded)"),
    ({"servers": ["http://a"]}, "[service].servers: a list of nats:// or tls:// URLs"),
    ({"servers": ["nats://a:4222"], "gaming_day_start": 24}, "[service].gaming_day_start: expected a number from 0 "
                                                              "to 23, got 24"),
    ({"servers": ["nats://a:4222"], "timezone": "Mars/Olympus"}, "[service].timezone: no time zone 'Mars/Olympus'"),
    ({"servers": ["nats://a:4222"], "tokens": {"dealer": "x"}}, "[service].tokens: a token file per role "
                                                                "(supervisor, accounting)"),
    ({"servers": ["nats://a:4222"], "tokens": {"supervisor": "none.token"}}, "[service].tokens.supervisor: cannot "
                                                                            "read"),
])
def test_a_bad_floor_service_config_names_its_key(service: dict[str, Any], error: str, tmp_path: Path) -> None:
    from controller.floor.service import ServiceConfigError, service_config_from_mapping

    with pytest.raises(ServiceConfigError) as exc:
        service_config_from_mapping({"service": service}, tmp_path, tmp_path / "floor.toml")
    assert str(exc.value).startswith(f"{tmp_path / 'floor.toml'}{error}"), str(exc.value)


def test_floor_command_user_errors_are_one_line_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from controller.cli import main

    cases = [(["floor", "serve"], "croupier floor serve needs --config FILE (the floor's servers), or --embedded"),
             (["floor", "report", "--servers", "nats://127.0.0.1:1", "--day", "2026-3-1"],
              "--day '2026-3-1': expected YYYY-MM-DD"),
             (["floor", "credentials", "--site", str(tmp_path), "--machine", "bj-1"],
              "--machine needs --kind table, cabinet or link")]
    for argv, message in cases:
        assert main(argv) == 2
        err = capsys.readouterr().err
        assert err == f"croupier floor: error: {message}\n", err


def test_a_broken_chain_shows_on_the_page_with_the_rows_behind_it(floor_server: Any, tmp_path: Path) -> None:
    """A row whose previous MAC is not its predecessor's (forged, or a second writer) stops that machine's fold:
    the page says why, and counts the rows the floor holds beyond the last one checked."""
    from controller.floor.server import connect
    from controller.floor.service import FloorService, service_config_from_mapping
    from controller.floor.wire import HDR_MSG_ID, encode_row, msg_id

    rows = rows_of(write_journal(tmp_path, "bad-1", link_rows()))
    forged = FloorRow(4, "bad-1", rows[3].ts_ns, rows[3].schema, rows[3].record, "f" * 64, rows[3].mac)
    cfg = service_config_from_mapping({"service": {"servers": [floor_server.url], "replicas": 1,
                                                   "timezone": "UTC"}}, tmp_path)

    async def scenario() -> dict[str, Any]:
        from controller.floor.page import floor_view

        nc = await connect([floor_server.url])
        js = nc.jetstream(timeout=2.0)
        for row in [*rows[:3], forged, rows[4]]:
            await js.publish(subject_for("bad-1"), encode_row(row), headers={HDR_MSG_ID: msg_id("bad-1", row.seq)})
        await nc.close()
        service = FloorService(cfg, refresh=0.1)
        await service.start()
        try:
            assert await service.wait_for(lambda s: s.held.get("bad-1") == 5 and "bad-1" in s.broken, 30)
            return floor_view(service.summaries, service.held, service.broken, None, ts("2026-03-01T09:00:10"), 60,
                              "2026-03-01", UTC)
        finally:
            await service.close()

    view = asyncio.run(scenario())
    bad = next(m for m in view["machines"] if m["machine"] == "bad-1")
    assert (bad["floor_seq"], bad["held"], bad["lag_rows"], bad["status"], bad["age_s"]) == (3, 5, 2, "online", 8.0)
    assert bad["chain"].startswith("broken: stream seq ")
    assert bad["chain"].endswith(": floor copy of bad-1 row 4: chain broken (its previous MAC is not row 3's MAC)")
    assert bad["today"] == {"games": 2, "handle": 190, "paid": 0, "win": 190, "commission": 0, "drop": 0,
                            "coins_out": 0, "hand_paid": 0, "credits_played": 0, "credits_won": 0}


def test_wrong_floor_tokens_are_limited_per_address(tmp_path: Path) -> None:
    import types
    import urllib.error
    import urllib.request

    from controller.floor.page import FloorPage
    from controller.screens.bridge import TokenTries

    service = types.SimpleNamespace(cfg=types.SimpleNamespace(tokens={"supervisor": "s" * 20, "accounting": "a" * 20}))

    async def scenario() -> list[int]:
        page = FloorPage(service, "127.0.0.1", 0, token_tries=TokenTries(per_peer=2, overall=10, window=600))
        await page.start()

        def get(token: str) -> int:
            request = urllib.request.Request(f"http://127.0.0.1:{page.port}/floor.json",
                                             headers={"Authorization": f"Bearer {token}"})
            try:
                with urllib.request.urlopen(request, timeout=5) as response:
                    return response.status
            except urllib.error.HTTPError as exc:
                return exc.code

        try:
            return [await asyncio.to_thread(get, token) for token in ("x" * 20, "y" * 20, "s" * 20)]
        finally:
            await page.close()

    assert asyncio.run(scenario()) == [401, 401, 429]  # past two wrong tries even the right token waits


@pytest.mark.slow
def test_a_sigterm_while_the_embedded_floor_starts_stops_its_server_too(tmp_path: Path) -> None:
    """Stopped as soon as its server is up (before the page is served): no nats-server is left behind."""
    skip_without_floor()
    import socket

    nats_port, page_port = free_ports(2)
    proc = floor_serve(tmp_path / "state", nats_port, page_port)
    try:
        first = proc.stdout.readline()  # type: ignore[union-attr]
        assert first.startswith("floor: embedded nats-server at"), first
        proc.send_signal(signal.SIGTERM)
        rest = proc.stdout.read()  # type: ignore[union-attr]
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
        rc = proc.wait(timeout=30)
    assert rc == 0 and rest.endswith("floor: stopped\n"), rest
    with pytest.raises(OSError):
        socket.create_connection(("127.0.0.1", nats_port), timeout=1).close()

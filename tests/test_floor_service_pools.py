"""The floor page's floor-engine link pools: the page's view of a link (pure, exact), and on a real nats-server cabinets on a floor link contributing and one hitting, the page's JSON showing the exact pool, hit and balance, and a service started later rebuilding the same view from the stream."""

from __future__ import annotations

import asyncio
from dataclasses import replace
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable
from zoneinfo import ZoneInfo

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from controller.floor.page import floor_view, link_pool_view, render_floor
from controller.floor.progressive_fold import Contribution, Hit, Message, Open, new_pool, pool_fold, pool_step
from controller.floor.report import HEADER, report_csv
from controller.floor.summary import LinkDays, MeterSet, link_day_step
from tests.floor_cluster import floor_server  # noqa: F401 - the module's one server

UTC = ZoneInfo("UTC")
LINK = "fl-1"
RESET = 10_000
HIT_AT = "2026-03-01T10:00:00"


def ts(text: str) -> int:
    return int(datetime.fromisoformat(text).replace(tzinfo=timezone.utc).timestamp()) * 1_000_000_000


# Worked by hand: the open seeds 100.00; 2.99 contributed (1.30 + 0.70 by fc-1, 0.55 by fc-2, 0.44 by fc-3) makes
# 102.99; fc-2's hit in 25-cent credits wins 102.75 and the pool resets to 100.00 plus the 24 odd cents.
CONTRIBUTIONS = {"fc-1": [(1, 130), (2, 70)], "fc-2": [(1, 55)], "fc-3": [(1, 44)]}
WANT = {"link": LINK, "seq": 6, "pool": 10_024, "reset": RESET, "seeded": 20_000, "contributions": 4,
        "contributed": 299, "hits": 1, "paid": 10_275, "duplicates": 0, "refused": 0,
        "last_hit": {"hit": 1, "cabinet": "fc-2", "game": 2, "award": 10_275, "denomination": 25, "seq": 6,
                     "time": "2026-03-01T10:00:00+00:00"},
        "balanced": True}


def test_the_pages_view_of_a_floor_link_is_exact_and_says_whether_it_balances() -> None:
    when = ts(HIT_AT)
    stream: list[Message | None] = [Open(LINK, "fc-1", RESET), Contribution(LINK, "fc-1", 1, 130, when),
              Contribution(LINK, "fc-2", 1, 55, when), Contribution(LINK, "fc-1", 2, 70, when),
              Contribution(LINK, "fc-3", 1, 44, when), Hit(LINK, "fc-2", 2, 25, when)]
    state = pool_fold(new_pool(LINK), enumerate(stream, start=1))
    assert link_pool_view(state, UTC) == WANT
    assert link_pool_view(new_pool(LINK), UTC) == {
        "link": LINK, "seq": 0, "pool": 0, "reset": None, "seeded": 0, "contributions": 0, "contributed": 0,
        "hits": 0, "paid": 0, "duplicates": 0, "refused": 0, "last_hit": None, "balanced": True}
    off = replace(state, link="fl-0", pool=state.pool + 1)  # a pool a cent off its messages: the page says so
    assert link_pool_view(off, UTC)["balanced"] is False
    view = floor_view({}, {}, {}, None, 0, 60, "2026-03-01", UTC, {LINK: state, "fl-0": off})
    assert [p["link"] for p in view["floor_links"]] == ["fl-0", LINK] and view["floor_links"][1] == WANT
    page = render_floor(view, "supervisor")
    assert ("<tr><td>fl-1</td><td>100.24</td><td>100.00</td><td>1</td><td>fc-2 game 2: 102.75 at "
            "2026-03-01T10:00:00+00:00</td><td>4</td><td>2.99</td><td>102.75</td><td>balanced</td></tr>") in page
    assert "<td>NOT BALANCED</td>" in page and "none on the floor" not in page
    assert floor_view({}, {}, {}, None, 0, 60, "2026-03-01")["floor_links"] == []


REPORT_LINE = "2026-03-01,fl-1,floor-link,progressive link,,4,299,10275,-9976,0,0,0,0,0,0,\r\n"


def test_a_floor_links_meters_go_to_the_gaming_day_of_each_message_and_into_the_report() -> None:
    # 1.30 before 06:00 (the day before's), the open and a duplicate add no day, then 0.70 and a hit of the
    # 102.00 pool in 5-cent credits (102.00) on 2026-03-01, and 0.10 on 2026-03-02
    stream: list[Message] = [Open(LINK, "fc-1", RESET), Contribution(LINK, "fc-1", 1, 130, ts("2026-03-01T05:59:59")),
                             Contribution(LINK, "fc-1", 1, 130, ts("2026-03-01T12:00:00")),
                             Contribution(LINK, "fc-2", 1, 70, ts("2026-03-01T06:00:00")),
                             Hit(LINK, "fc-2", 1, 5, ts("2026-03-01T07:00:00")),
                             Contribution(LINK, "fc-1", 2, 10, ts("2026-03-02T06:00:00"))]
    state, days = new_pool(LINK), LinkDays(LINK)
    for seq, msg in enumerate(stream, start=1):
        after = pool_step(state, seq, msg)
        days = link_day_step(days, state, after, 0 if isinstance(msg, Open) else msg.ts_ns, start_hour=6, tz=UTC)
        state = after
    assert days.days == (("2026-02-28", MeterSet(games=1, handle=130, win=130)),
                         ("2026-03-01", MeterSet(games=1, handle=70, paid=10_200, win=-10_130)),
                         ("2026-03-02", MeterSet(games=1, handle=10, win=10)))
    assert report_csv([], "2026-03-01", [days]) == (",".join(HEADER) + "\r\n2026-03-01,fl-1,floor-link,progressive "
                                                    "link,,1,70,10200,-10130,0,0,0,0,0,0,\r\n")
    assert report_csv([], "2026-03-03", [days]) == ",".join(HEADER) + "\r\n"


cabinets = st.sampled_from(["fc-1", "fc-2"])
moments = st.integers(ts("2026-03-01T00:00:00"), ts("2026-03-04T00:00:00"))
messages = st.one_of(
    st.builds(lambda c: Open(LINK, c, RESET), cabinets),
    st.builds(lambda c, g, cents, t: Contribution(LINK, c, g, cents, t), cabinets, st.integers(1, 8),
              st.integers(0, 999), moments),
    st.builds(lambda c, g, d, t: Hit(LINK, c, g, d, t), cabinets, st.integers(1, 8), st.sampled_from([1, 5, 25]),
              moments))


@settings(max_examples=60, deadline=None)
@given(st.lists(messages, max_size=30), st.integers(0, 23))
def test_a_floor_links_gaming_days_add_up_to_its_folds_meters_whatever_the_times(stream: list[Message],
                                                                                  start_hour: int) -> None:
    state, days = new_pool(LINK), LinkDays(LINK)
    for seq, msg in enumerate(stream, start=1):
        after = pool_step(state, seq, msg)
        days = link_day_step(days, state, after, 0 if isinstance(msg, Open) else msg.ts_ns, start_hour=start_hour,
                             tz=UTC)
        state = after
    total = MeterSet()
    for _, meters in days.days:
        total = total + meters
    assert total == MeterSet(games=state.contributions, handle=state.contributed, paid=state.paid,
                             win=state.contributed - state.paid)
    assert len({day for day, _ in days.days}) == len(days.days)


# ----------------------------------------------------------------------------------------- on a real server

@pytest.mark.slow
def test_cabinets_on_a_floor_link_show_their_pool_hit_and_balance_and_a_later_service_rebuilds_it(
        floor_server: Any) -> None:
    import aiohttp

    from controller.bus import CommandError
    from controller.config import LinkConfig
    from controller.floor.config import FloorConfig
    from controller.floor.page import FloorPage
    from controller.floor.progressive import FloorLinkClient, ensure_progressive_stream
    from controller.floor.server import connect
    from controller.floor.service import FloorService, read_floor, service_config_from_mapping
    from controller.floor.wire import subject_for

    token = "supervisor-token-0123456789"
    cfg = replace(service_config_from_mapping({"service": {"servers": [floor_server.url], "replicas": 1,
                                                           "listen": "127.0.0.1:0", "timezone": "UTC"}}, Path.cwd()),
                  tokens={"supervisor": token, "accounting": "accounting-token-0123456789"})
    floor = FloorConfig((floor_server.url,), subject_for("x"))
    link = LinkConfig(LINK, None, heartbeat=0.2, timeout=2.0, engine="floor")

    def done(s: FloorService) -> bool:
        # the pool is folded live, the stream's per-subject counts are read each refresh: wait for both (once a
        # page was read between the two and listed one cabinet's subject of three)
        subjects = {f"croupier.link.fl-1.fc-{i}" for i in (1, 2, 3)}
        return LINK in s.link_pools and s.link_pools[LINK].seq >= 6 and subjects <= set(s.pools or ())

    async def scenario() -> tuple[dict[str, Any], str, str, dict[str, Any]]:
        nc = await connect([floor_server.url])
        await ensure_progressive_stream(nc.jetstream(timeout=2.0), 1)
        await nc.close()
        service = FloorService(cfg, refresh=0.1)
        await service.start()
        page = FloorPage(service, "127.0.0.1", 0)
        await page.start()
        ups = {name: asyncio.Event() for name in CONTRIBUTIONS}

        def on_link(name: str) -> Callable[[bool], None]:
            return lambda up: ups[name].set() if up else ups[name].clear()

        clients = {name: FloorLinkClient(name, link, floor, RESET, on_link(name), lambda cents: None,
                                         clock=lambda: ts(HIT_AT)) for name in CONTRIBUTIONS}
        try:
            for client in clients.values():
                client.start()
            await asyncio.wait_for(asyncio.gather(*(e.wait() for e in ups.values())), 10)
            for name, items in CONTRIBUTIONS.items():
                left = list(items)
                while left:
                    try:
                        held = set(await clients[name].contribute(left))
                    except CommandError:
                        await asyncio.sleep(0.05)  # backoff between retries, as the cabinet's link loop
                        continue
                    left = [i for i in left if i[0] not in held]
            award = await clients["fc-2"].hit(2, 25)
            assert award["award"] == 10_275 and award["hit"] == 1
            assert await service.wait_for(done, 10), service.link_pools
            async with aiohttp.ClientSession(headers={"Authorization": f"Bearer {token}"}) as http:
                async with http.get(f"http://127.0.0.1:{page.port}/floor.json") as r:
                    assert r.status == 200
                    view = await r.json()
                async with http.get(f"http://127.0.0.1:{page.port}/floor") as r:
                    html = await r.text()
            acc = {"Authorization": "Bearer accounting-token-0123456789"}
            async with aiohttp.ClientSession(headers=acc) as http:
                async with http.get(f"http://127.0.0.1:{page.port}/report/2026-03-01.csv") as r:
                    assert r.status == 200
                    report = await r.text()
        finally:
            for client in clients.values():
                await client.close()
            await page.close()
            await service.close()
        later = FloorService(cfg, refresh=0.1)  # a service started after it all: rebuilt from the stream
        await later.start()
        try:
            assert await later.wait_for(done, 10), later.link_pools
        finally:
            await later.close()
        again = floor_view({}, {}, {}, later.pools, 0, 60, "2026-03-01", UTC, later.link_pools)
        read = await read_floor(cfg, timeout=10)  # what `croupier floor report` reads
        assert report_csv(read.summaries.values(), "2026-03-01", read.link_days) == report
        return view, html, report, again

    view, html, report, again = asyncio.run(asyncio.wait_for(scenario(), 40))
    assert view["floor_links"] == [WANT]
    # one open (whichever cabinet's landed first: the others' are the same message id), 4 contributions, a hit
    assert sorted(view["pool_stream"]) == [f"croupier.link.fl-1.fc-{i}" for i in (1, 2, 3)]
    assert sum(view["pool_stream"].values()) == 6
    assert "fc-2 game 2: 102.75 at 2026-03-01T10:00:00+00:00" in html and "<td>balanced</td>" in html
    assert again["floor_links"] == [WANT]
    assert report == ",".join(HEADER) + "\r\n" + REPORT_LINE  # the journal stream holds no machine here

"""Linked progressives on the floor's JetStream: the pool as an exact fold of the stream, 10 cabinets on two readers through a node killed during simultaneous hits, and a cabinet on an engine link (a hit paid from the stream, no max-bet play while the link is down)."""

from __future__ import annotations

import asyncio
import json
import random
import time
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from controller.bus import CommandError
from controller.config import ConfigError, LinkConfig, cabinet_config_from_mapping
from controller.floor.config import FloorConfig
from controller.floor.progressive import FloorLinkClient, PoolReader
from controller.floor.progressive_fold import (
    STREAM, Contribution, Hit, Open, ProgressiveWireError, decode_message, encode_message, link_subject, message_id,
    new_pool, pool_fold, pool_step,
)
from controller.floor.server import NatsCluster, connect
from controller.floor.wire import subject_for
from tests.cabinet_helpers import Script, run, started, stops_for
from tests.floor_cluster import floor_cluster  # noqa: F401 - the module's cluster fixture
from tests.table_helpers import free_ports

pytestmark = pytest.mark.slow

LINK = "ls-link"

# ---------------------------------------------------------------------------------------------------- the fold

cabinets = st.sampled_from(["a", "b", "c"])
games = st.integers(1, 12)  # well inside the fold's window: every second copy is recognised
events = st.one_of(
    st.builds(lambda c, g, cents: Contribution(LINK, c, g, cents, 0), cabinets, games, st.integers(0, 10_000)),
    st.builds(lambda c, g, d: Hit(LINK, c, g, d, 0), cabinets, games, st.sampled_from([1, 5, 25, 100])),
    st.builds(lambda c, r: Open(LINK, c, r), cabinets, st.sampled_from([50_000, 7])),
    st.builds(lambda c, g: Contribution("other", c, g, 99, 0), cabinets, games),  # another link's message
    st.none(),  # a message that did not decode
)


def model(stream: list[Any]) -> dict[str, Any]:
    """The rules written out plainly: the first copy of each cabinet's game counts, hits in stream order."""
    reset, pool, contributed, seen, awards = None, 0, 0, set(), {}
    for msg in stream:
        if msg is None or msg.link != LINK:
            continue
        if isinstance(msg, Open):
            if reset is None:
                reset, pool = msg.reset_cents, pool + msg.reset_cents
        elif isinstance(msg, Contribution):
            if (msg.cabinet, msg.game) not in seen:
                seen.add((msg.cabinet, msg.game))
                pool += msg.cents
                contributed += msg.cents
        elif (msg.cabinet, msg.game) not in awards:
            award = pool // msg.denomination * msg.denomination
            awards[(msg.cabinet, msg.game)] = (len(awards) + 1, award)
            pool = (reset or 0) + pool - award
    return {"pool": pool, "contributed": contributed, "awards": awards}


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(events, max_size=60), st.data())
def test_the_pool_is_an_exact_fold_of_the_stream_whatever_its_duplicates(stream: list[Any], data: Any) -> None:
    # retries: copies of messages already sent, later in the stream (past JetStream's duplicate window)
    copies = data.draw(st.lists(st.sampled_from(stream), max_size=20)) if stream else []
    for msg in copies:
        stream.insert(data.draw(st.integers(stream.index(msg) + 1, len(stream))), msg)
    items = list(enumerate(stream, start=1))
    state = pool_fold(new_pool(LINK), items)
    want = model(stream)
    assert state.pool == want["pool"] and state.contributed == want["contributed"]
    assert {k: (a.hit, a.cents) for k, a in state.awards.items()} == want["awards"]
    assert state.pool == state.seeded + state.contributed - state.paid  # balances to the cent
    assert all(a.cents % a.denomination == 0 for a in state.awards.values())
    assert state.seq == len(stream)
    # a reader that reads part of the stream again (a new consumer from an older cursor) changes nothing
    cut = data.draw(st.integers(0, len(items)))
    again = pool_fold(pool_fold(new_pool(LINK), items[:cut]), items[max(cut - 5, 0):])
    assert again == state


@settings(max_examples=200, deadline=None)
@given(st.one_of(st.binary(max_size=200), st.builds(lambda m: encode_message(m), events.filter(lambda m: m))))
def test_a_progressive_message_decodes_or_is_refused_naming_the_field(data: bytes) -> None:
    try:
        msg = decode_message(link_subject(LINK, "a"), data)
    except ProgressiveWireError as exc:
        assert "progressive" in str(exc)
        return
    assert encode_message(msg) == data and msg.cabinet == "a"


def test_message_ids_and_refusals_are_exact() -> None:
    hit = Hit(LINK, "ls-3", 29, 25, 1)
    assert message_id(hit) == "ls-3:29:hit"
    assert message_id(Contribution(LINK, "ls-3", 29, 10, 1)) == "ls-3:29:contrib"
    assert message_id(Open(LINK, "ls-3", 50_000)) == "ls-link:open:50000"
    with pytest.raises(ProgressiveWireError, match="another cabinet's"):
        decode_message(link_subject(LINK, "ls-4"), encode_message(hit))
    with pytest.raises(ProgressiveWireError, match="field denomination"):
        decode_message(link_subject(LINK, "ls-3"), encode_message(hit).replace(b'"denomination":25',
                                                                              b'"denomination":0'))
    # two hits in the same instant: the first in stream order wins the pool, the second the reset pool
    s = pool_fold(new_pool(LINK), [(1, Open(LINK, "a", 1000)), (2, Contribution(LINK, "a", 1, 257, 0)),
                                   (3, Hit(LINK, "a", 2, 25, 0)), (4, Hit(LINK, "b", 7, 100, 0))])
    first, second = s.award_of("a", 2), s.award_of("b", 7)
    assert (first.hit, first.cents) == (1, 1250) and (second.hit, second.cents) == (2, 1000)
    assert s.pool == 1000 + 7 and s.paid == 2250 and pool_step(s, 4, Hit(LINK, "c", 1, 1, 0)) == s


def test_a_floor_link_needs_the_floor_and_names_the_key(tmp_path: Path) -> None:
    base = {"cabinet": {"id": "ls-1", "title": "light-speed", "journal": str(tmp_path / "j"),
                        "progressive": {"engine": "floor", "link": LINK}}}
    with pytest.raises(ConfigError, match=r"progressive.engine: \"floor\" needs the \[floor\] section"):
        cabinet_config_from_mapping(base, tmp_path / "c.toml")
    bad = {**base, "cabinet": {**base["cabinet"], "progressive": {"engine": "zmq", "link": LINK}}}
    with pytest.raises(ConfigError, match="progressive.engine"):
        cabinet_config_from_mapping(bad, tmp_path / "c.toml")
    cfg = cabinet_config_from_mapping({**base, "floor": {"servers": ["nats://127.0.0.1:4222"]}}, tmp_path / "c.toml")
    assert cfg.link.engine == "floor" and cfg.link.link_id == LINK and cfg.link.endpoints is None
    assert cfg.settings.progressive == "link"
    from controller.screens.bridge import source_for_cabinet

    assert source_for_cabinet(cfg).link is None  # no reader's endpoints given: the screen shows no linked pool
    signs = {"engine": "floor", "link": LINK, "publish": "tcp://10.0.0.9:5560", "snapshot": "tcp://10.0.0.9:5561"}
    cfg = cabinet_config_from_mapping({**base, "cabinet": {**base["cabinet"], "progressive": signs},
                                       "floor": {"servers": ["nats://127.0.0.1:4222"]}}, tmp_path / "c.toml")
    assert source_for_cabinet(cfg).link == (LINK, cfg.link.endpoints)  # the screen follows a reader's pool
    assert cfg.link.endpoints.publish == "tcp://10.0.0.9:5560"
    with pytest.raises(ConfigError, match="commands, key: not on a floor link"):
        cabinet_config_from_mapping({**base, "cabinet": {**base["cabinet"], "progressive": {
            **signs, "commands": "tcp://10.0.0.9:5562", "key": "k"}}, "floor": {"servers": ["nats://h:4222"]}},
            tmp_path / "c.toml")


# ---------------------------------------------------------------------------------------------------- the engine

def link_config(link: str = LINK, heartbeat: float = 0.2, timeout: float = 2.0) -> LinkConfig:
    return LinkConfig(link, None, heartbeat=heartbeat, timeout=timeout, engine="floor")


async def hit_until_paid(client: FloorLinkClient, game: int, denomination: int) -> dict[str, Any]:
    """What the cabinet's link loop does: send the hit again (same message id) until its award is read back."""
    while True:
        try:
            return await client.hit(game, denomination)
        except CommandError:
            await asyncio.sleep(0.05)  # backoff between retries, as the cabinet's loop (its heartbeat)


async def contribute_until_held(client: FloorLinkClient, items: list[tuple[int, int]]) -> None:
    left = list(items)
    while left:
        try:
            done = set(await client.contribute(left))
        except CommandError:
            await asyncio.sleep(0.05)  # backoff between retries
            continue
        left = [i for i in left if i[0] not in done]


async def stream_leader(urls: list[str], timeout: float = 30.0) -> str:
    """The progressive stream's leader, asked until one is elected: during an election stream_info fails
    (no responders, 503, a timeout) or names no leader."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    nc = await connect(urls, name="leader-probe")
    try:
        while True:
            try:
                leader = (await nc.jetstream(timeout=2).stream_info(STREAM)).cluster.leader
            except Exception as exc:  # noqa: BLE001 - a leader being elected
                leader, error = None, exc
            else:
                error = None
            if leader:
                return str(leader)
            if loop.time() > deadline:
                raise TimeoutError(f"the {STREAM} stream had no leader within {timeout:g} s: {error!r}")
            await asyncio.sleep(0.1)  # backoff between asks, bounded by the deadline
    finally:
        await nc.close()


def test_ten_cabinets_on_two_readers_through_a_node_killed_during_simultaneous_hits(
        floor_cluster: NatsCluster) -> None:  # noqa: F811
    cluster = floor_cluster
    floor = FloorConfig(tuple(cluster.urls), subject_for("x"))
    reset = 50_000
    rnd = random.Random(40)

    async def scenario() -> dict[str, Any]:
        readers = [PoolReader(LINK, cluster.urls[::-1], create_stream=3), PoolReader(LINK, cluster.urls),
                   PoolReader(LINK, cluster.urls)]  # the third starts at the end: rebuilt from the stream
        ups: dict[str, asyncio.Event] = {}
        clients = []
        for i in range(10):
            name = f"ls-{i + 1}"
            ups[name] = asyncio.Event()
            clients.append(FloorLinkClient(name, link_config(), floor, reset,
                                           lambda up, n=name: ups[n].set() if up else ups[n].clear(), lambda c: None))
        try:
            return await play(readers, clients, ups)
        finally:
            for r in readers:
                await r.close()
            for c in clients:
                await c.close()

    async def play(readers: list[PoolReader], clients: list[FloorLinkClient],
                   ups: dict[str, asyncio.Event]) -> dict[str, Any]:
        readers, late = readers[:2], readers[2]
        for r in readers:
            await r.start()
        for c in clients:
            c.start()
        await asyncio.wait_for(asyncio.gather(*(e.wait() for e in ups.values())), 20)
        sent: dict[tuple[str, int], int] = {}
        results: list[tuple[str, int, dict[str, Any]]] = []
        denominations = {c.cabinet_id: (1, 5, 25, 100)[i % 4] for i, c in enumerate(clients)}
        for rnd_no, (first, hits_at) in enumerate(((1, 6), (7, 12))):
            batches = {}
            for c in clients:
                items = [(g, rnd.randrange(1, 500)) for g in range(first, hits_at)]
                batches[c.cabinet_id] = items
                sent.update({(c.cabinet_id, g): cents for g, cents in items})
            await asyncio.gather(*(contribute_until_held(c, batches[c.cabinet_id]) for c in clients))
            # every cabinet sends some contributions a second time (a retry after a restart): counted once
            await asyncio.gather(*(contribute_until_held(c, batches[c.cabinet_id][:2]) for c in clients))
            # all ten hit in the same instant; in the first round the stream's leader dies under them
            leader = await stream_leader(cluster.urls) if rnd_no == 0 else ""
            hits = [asyncio.create_task(hit_until_paid(c, hits_at, denominations[c.cabinet_id])) for c in clients]
            if rnd_no == 0:
                await asyncio.sleep(0)  # one turn of the loop: every hit is on the wire, none acknowledged yet
                killed = int(leader[1:]) - 1
                cluster.kill(killed)
            paid = await asyncio.wait_for(asyncio.gather(*hits), 30)
            # and a cabinet that restarted before journaling its award sends its hit again
            paid.append(await hit_until_paid(clients[0], hits_at, denominations[clients[0].cabinet_id]))
            results += [(c.cabinet_id, hits_at, a) for c, a in zip(clients + [clients[0]], paid)]
        cluster.start(killed)
        last = max(c.follower.state.seq for c in clients)
        for r in readers:
            assert await r.wait_for(lambda s: s.seq >= last, 20), r.state
        await late.start()  # a reader started now rebuilds the pool from the stream
        assert await late.wait_for(lambda s: s.seq >= last, 20)
        return {"readers": [r.state for r in readers], "late": late.state, "sent": sent, "results": results}

    out = asyncio.run(asyncio.wait_for(scenario(), 50))
    a, b = out["readers"]
    assert a == b == out["late"]  # both readers, and one rebuilt from the stream, agree to the last message
    assert a.reset_cents == 50_000 and a.contributions == len(out["sent"]) == 100
    assert a.contributed == sum(out["sent"].values())
    # exactly one winner per pool cycle: 20 hits, cycles 1..20, each paid once, each cabinet told its own award
    assert a.hits == 20 and sorted(x.hit for x in a.awards.values()) == list(range(1, 21))
    for cabinet, game, result in out["results"]:
        award = a.award_of(cabinet, game)
        assert (result["hit"], result["award"], result["cabinet"]) == (award.hit, award.cents, cabinet)
    # the pool balances to the cent against the contributions: resets in, contributions in, awards out
    assert a.pool == 50_000 * (1 + 20) + sum(out["sent"].values()) - sum(x.cents for x in a.awards.values())
    # the first hit of each round won everything contributed before it; the other nine a reset pool each
    first = min((x for x in a.awards.values()), key=lambda x: x.seq)
    assert first.cents >= 50_000 + sum(out["sent"][(c, g)] for c, g in out["sent"] if g < 6) - 99


# ---------------------------------------------------------------------------------------------------- a cabinet

def floor_cabinet(tmp: Path, name: str, servers: list[str]) -> Any:
    p1, p2, p3 = free_ports(3)
    return cabinet_config_from_mapping({
        "cabinet": {"id": name, "title": "its-good-to-be-bad", "denomination": 25, "journal": str(tmp / f"{name}.j"),
                    "spin_seconds": 0.0, "attract_seconds": 0, "seed": 11,
                    "progressive": {"engine": "floor", "link": "bad-link", "heartbeat": 0.2, "timeout": 2.0}},
        "bus": {"publish": f"tcp://127.0.0.1:{p1}", "snapshot": f"tcp://127.0.0.1:{p2}",
                "commands": f"tcp://127.0.0.1:{p3}", "heartbeat": 0.2},
        "floor": {"servers": servers}}, tmp / f"{name}.toml")


def test_a_cabinet_on_a_floor_link_journals_its_hit_and_is_paid_from_the_stream(
        floor_cluster: NatsCluster, tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:  # noqa: F811
    from controller.cabinet import ATTENDANT, PLAYER
    from tests.cabinet_helpers import journal

    cfg = floor_cabinet(tmp_path, "bad-1", floor_cluster.urls)
    down = floor_cabinet(tmp_path, "bad-2", [f"nats://127.0.0.1:{free_ports(1)[0]}"])  # no floor there
    losing = stops_for(cfg.title, "--", "--", "--")

    async def main() -> dict[str, Any]:
        reader = PoolReader("bad-link", floor_cluster.urls, create_stream=3)
        await reader.start()
        try:
            return await play(reader)
        finally:
            await reader.close()

    async def play(reader: PoolReader) -> dict[str, Any]:
        cab = await started(cfg, rng=Script(losing * 40))
        alone = await started(down)
        assert await cab.wait_for(lambda s: s.progressive.up, 10)
        await cab.command(ATTENDANT, "add_credits", {"credits": 150})
        await alone.command(ATTENDANT, "add_credits", {"credits": 90})
        out: dict[str, Any] = {"alone_max": await alone.command(PLAYER, "max_bet", {}),
                               "alone_one": await alone.command(PLAYER, "bet_one", {})}
        out["alone_spin"] = await alone.command(PLAYER, "spin", {})
        for _ in range(29):  # 29 losses in a row: the progressive
            await cab.command(PLAYER, "max_bet", {})
            await asyncio.wait_for(cab.shown.wait(), 5)
        assert await cab.wait_for(lambda s: s.progressive.pending_hit is None, 15)
        out["clear"] = await cab.command(ATTENDANT, "clear", {})  # the jackpot's hand pay
        for _ in range(11):  # by the 34th game 1% of 3 credits a game has made a whole credit: a contribution
            await cab.command(PLAYER, "max_bet", {})
            await asyncio.wait_for(cab.shown.wait(), 5)
        assert await cab.wait_for(lambda s: not s.progressive.unacked and s.games == 40, 15)
        assert await reader.wait_for(lambda s: s.hits == 1 and s.contributions == 1, 10)
        out["state"], out["pool"], out["shown"] = cab.state, reader.state, cab.link_pool
        await cab.stop()
        await alone.stop()
        return out

    out = run(main(), 50)
    pool = out["pool"]
    award = pool.award_of("bad-1", 29)
    assert not out["alone_max"]["ok"] and "progressive link down" in out["alone_max"]["error"]
    assert out["alone_one"]["ok"] and out["alone_spin"]["ok"]  # smaller bets play on
    assert award.hit == 1 and pool.reset_cents == 10_000_000 and award.cents == 10_000_000
    assert pool.contributed == out["state"].meters.progressive_contributed * 25 == 25  # one whole credit
    assert pool.pool == 10_000_000 + 25 == pool.seeded + pool.contributed - pool.paid
    assert out["state"].meters.progressive_won == award.cents // 25 and out["clear"]["ok"]
    records = journal(cfg)
    spin = next(r for r in records if r["kind"] == "spin" and r["game"] == 29)
    win = next(r for r in records if r["kind"] == "progressive_win")
    acked = next(r for r in records if r["kind"] == "progressive_ack")
    contributed = next(r for r in records if r["kind"] == "spin" and r["game"] == acked["games"][0])
    # journaled before they take effect: the hit (its spin) before it is sent, the award before it is paid,
    # the contribution (its spin) before it is sent and acknowledged
    assert records.index(spin) < records.index(win) and records.index(contributed) < records.index(acked)
    assert (win["game"], win["cents"], win["hit"]) == (29, award.cents, 1)
    assert out["shown"] == pool.pool  # the cabinet's display follows its own fold of the stream
    # the reader logs every hit with its machine and time (GLI-12), as the stream holds them
    stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(award.ts_ns / 1e9))
    assert f"hit 1 by cabinet bad-1 game 29 at {stamp}: {award.cents} cents" in caplog.text
    assert award.cabinet == "bad-1" and abs(award.ts_ns / 1e9 - time.time()) < 120


def test_bench_floor_part_progressive_reports_hit_confirmation_as_json(tmp_path: Path) -> None:
    from controller.cli import main
    from tests.floor_cluster import floor_missing

    why = floor_missing()
    if why:
        pytest.skip(why)
    out = tmp_path / "bench.json"
    argv = ["bench", "floor", "--part", "progressive", "--hits", "5", "--cabinets", "3", "--json", str(out)]
    assert main(argv) == 0
    figures = json.loads(out.read_text())
    assert figures["bench"] == "floor" and figures["part"] == "progressive" and figures["hits"] == 5
    assert figures["readers_agree"] and figures["paid_once"] and figures["balanced"]
    assert 0 < figures["hit_p50_ms"] <= figures["hit_p99_ms"] <= figures["hit_max_ms"]


def test_a_link_config_on_the_floor_engine_runs_a_reader_whose_pool_the_displays_follow(
        floor_cluster: NatsCluster, tmp_path: Path) -> None:  # noqa: F811
    from controller.bus import BusClient
    from controller.commands.table.run import runtime_for as _runtime
    from controller.config import progressive_config_from_mapping

    p1, p2, p3 = free_ports(3)
    data = {"progressive": {"id": "sign-link", "reset_cents": 70_000, "engine": "floor",
                            "journal": str(tmp_path / "link.journal")},
            "bus": {"publish": f"tcp://127.0.0.1:{p1}", "snapshot": f"tcp://127.0.0.1:{p2}",
                    "commands": f"tcp://127.0.0.1:{p3}", "heartbeat": 0.2},
            "floor": {"servers": floor_cluster.urls}}
    with pytest.raises(ConfigError, match=r"\[progressive\].engine: \"floor\" needs the \[floor\] section"):
        progressive_config_from_mapping({k: v for k, v in data.items() if k != "floor"}, tmp_path / "link.toml")
    cfg = progressive_config_from_mapping(data, tmp_path / "link.toml")
    reader = _runtime(cfg)  # what `croupier progressive --config link.toml` runs
    assert isinstance(reader, PoolReader) and reader.link == "sign-link"
    floor = FloorConfig(tuple(floor_cluster.urls), subject_for("x"))

    async def scenario() -> tuple[list[int], Any]:
        shown: list[int] = []
        changed = asyncio.Event()

        def on_state(seq: int, state: dict[str, Any]) -> None:
            shown.append(state["pool"])
            changed.set()

        cabinet = FloorLinkClient("sign-1", link_config("sign-link"), floor, 70_000, lambda up: None, lambda c: None)
        # a cabinet configured with another reset value: the link refuses its open, and it never plays linked
        stranger = FloorLinkClient("sign-2", link_config("sign-link"), floor, 99, lambda up: None, lambda c: None)
        sign = BusClient("sign-link", "public", cfg.bus.endpoints, on_state, heartbeat_s=0.2)
        await reader.start()
        follow = asyncio.create_task(sign.run())
        cabinet.start()
        try:
            await contribute_until_held(cabinet, [(1, 125), (2, 75)])
            assert await reader.wait_for(lambda s: s.pool == 70_200, 10)
            stranger.start()
            assert await stranger.follower.wait_for(lambda s: s.refused == 1, 10)
            stranger._judge()
            assert cabinet.up and not stranger.up
            while shown[-1:] != [70_200]:
                changed.clear()
                await asyncio.wait_for(changed.wait(), 10)
            return shown, reader.state
        finally:
            follow.cancel()
            await stranger.close()
            await cabinet.close()
            await reader.stop()

    shown, state = asyncio.run(asyncio.wait_for(scenario(), 30))
    assert shown[-1] == 70_200 == state.pool and state.contributions == 2 and state.reset_cents == 70_000
    assert state.refused == 1


def test_a_floor_link_goes_down_when_the_floor_stops_answering_and_up_when_it_is_back(tmp_path: Path) -> None:
    from tests.floor_cluster import floor_missing

    why = floor_missing()
    if why:
        pytest.skip(why)
    alone = NatsCluster(tmp_path / "floor", nodes=1)  # its own server: this test stops the whole floor
    alone.start()
    try:
        floor = FloorConfig(tuple(alone.urls), subject_for("x"))

        async def scenario() -> list[bool]:
            seen: list[bool] = []
            changed = asyncio.Event()

            def on_link(up: bool) -> None:
                seen.append(up)
                changed.set()

            async def until(up: bool) -> None:
                while seen[-1:] != [up]:
                    changed.clear()
                    await asyncio.wait_for(changed.wait(), 15)

            reader = PoolReader("down-link", alone.urls, create_stream=1)
            client = FloorLinkClient("d-1", link_config("down-link", heartbeat=0.1, timeout=0.5), floor, 500,
                                     on_link, lambda c: None)
            await reader.start()
            client.start()
            try:
                await until(True)
                alone.kill(0)  # the floor is gone: linked play stops within three heartbeats
                await until(False)
                with pytest.raises(CommandError):
                    await client.hit(1, 1)
                alone.start(0)
                await until(True)
                return seen
            finally:
                await client.close()
                await reader.close()

        assert asyncio.run(asyncio.wait_for(scenario(), 45)) == [True, False, True]
    finally:
        alone.stop()

"""Linked progressives: the link controller's idempotent contributions and hits, two cabinets hitting at once, cabinets
on a link over CURVE (contributions, displays that follow, link loss and recovery, a hit resent after a restart)."""

from __future__ import annotations

import asyncio
import dataclasses
from pathlib import Path
from typing import Any

import pytest

from controller.bus import CommandClient, Role, create_keys, load_public_key, load_secret_keys
from controller.cabinet import ATTENDANT, PLAYER, Cabinet
from controller.config import progressive_config_from_mapping
from controller.journal import Journal
from controller.progressive import WINDOW, LinkController, link_replay, new_link_state
from tests.cabinet_helpers import RUNNING, Script, cabinet_config, run, stops_for
from tests.table_helpers import free_ports


def link_config(tmp: Path, keys: Path | None = None, cabinets: tuple[str, ...] = (), title: str = "light-speed",
                ports: list[int] | None = None) -> Any:
    p1, p2, p3 = ports or free_ports(3)
    bus: dict[str, Any] = {"publish": f"tcp://127.0.0.1:{p1}", "snapshot": f"tcp://127.0.0.1:{p2}",
                           "commands": f"tcp://127.0.0.1:{p3}", "heartbeat": 0.2}
    if keys is not None:
        bus["keys"] = str(keys)
        bus["client"] = [{"key": f"{c}.key", "role": f"cabinet:{c}"} for c in cabinets]
    return progressive_config_from_mapping({"progressive": {"id": "ls-link", "title": title,
                                                            "journal": str(tmp / "link.journal")}, "bus": bus},
                                           tmp / "link.toml")


def linked_cabinet(tmp: Path, link: Any, name: str, title: str = "light-speed", keys: Path | None = None,
                   **cabinet: Any) -> Any:
    folder = tmp / name
    folder.mkdir(exist_ok=True)
    e = link.bus.endpoints
    progressive: dict[str, Any] = {"link": link.link_id, "publish": e.publish, "snapshot": e.snapshot,
                                   "commands": e.commands, "heartbeat": 0.5, "timeout": 2.0}
    if keys is not None:
        progressive.update(server_key=str(keys / "server.key"), key=str(keys / f"{name}.key_secret"))
    cfg = cabinet_config(folder, title, panel=None, progressive=progressive, **cabinet)
    return dataclasses.replace(cfg, cabinet_id=name)


async def started(cfg: Any, **kw: Any) -> Any:
    runtime = (LinkController if hasattr(cfg, "link_id") else Cabinet)(cfg, **kw)
    RUNNING.append(runtime)
    await runtime.start()
    return runtime


async def until(runtime: Any, predicate: Any, timeout: float = 10) -> None:
    assert await runtime.wait_for(predicate, timeout), f"timed out: {runtime.state}"


def test_contributions_count_once_per_cabinet_and_game_and_a_hit_pays_once(tmp_path: Path) -> None:
    cfg = link_config(tmp_path)
    a, b = Role("cabinet", name="a"), Role("cabinet", name="b")

    async def main() -> tuple[list[dict], Any]:
        link = await started(cfg)
        send = link.command
        out = [await send(a, "contribute", {"game": 5, "cents": 3}), await send(a, "contribute", {"game": 5, "cents": 3}),
               await send(b, "contribute", {"game": 5, "cents": 4}), await send(a, "contribute", {"game": 7, "cents": 2}),
               await send(a, "contribute", {"game": 6, "cents": 1}),  # late, but within the window: counted
               await send(a, "contribute", {"game": 7 - WINDOW, "cents": 9}),  # far behind: already settled
               await send(a, "hit", {"game": 8, "denomination": 25}), await send(a, "hit", {"game": 8, "denomination": 25}),
               await send(b, "contribute", {"game": 6, "cents": -1}),
               await send(a, "contribute", {"game": 9, "cents": 1, "cabinet": "b"}),
               await send(Role("ops"), "contribute", {"game": 9, "cents": 1})]
        await link.stop()
        return out, link.state

    out, state = run(main())
    assert [r["result"]["duplicate"] for r in out[:6]] == [False, True, False, False, False, True]
    pool = 70_000 + 3 + 4 + 2 + 1
    hit, again = out[6]["result"], out[7]["result"]
    assert hit["award"] == pool - pool % 25 and not hit["duplicate"]
    assert again == {**hit, "duplicate": True}  # a retried hit is answered with the same award, paid once
    assert state.pool == 70_000 + pool % 25 and state.hits == 1 and state.paid == hit["award"]
    assert not out[8]["ok"] and "negative" in out[8]["error"]
    assert not out[9]["ok"] and "only for cabinet a" in out[9]["error"]
    assert not out[10]["ok"] and "ops may not contribute" in out[10]["error"]
    with Journal(cfg.journal, cfg.link_id) as j:
        replayed = link_replay(new_link_state(cfg.link_id, cfg.reset_cents), [(e.seq, e.record) for e in j.entries()])
    assert replayed.json() == state.json()
    assert replayed.refused == 3


def test_two_cabinets_hitting_in_the_same_instant_one_wins_the_pool_the_other_the_reset_pool(tmp_path: Path) -> None:
    keys = tmp_path / "keys"
    for name in ("server", "a", "b"):
        create_keys(keys, name)
    cfg = link_config(tmp_path, keys, ("a", "b"))

    async def main() -> tuple[list[dict], Any, int]:
        link = await started(cfg)
        server = load_public_key(keys / "server.key")
        ca, cb = (CommandClient(cfg.bus.endpoints.commands, load_secret_keys(keys / f"{n}.key_secret"), server)
                  for n in ("a", "b"))
        await ca.send("contribute", game=1, cents=12_345)
        before = link.state.pool
        replies = await asyncio.gather(ca.send("hit", game=2, denomination=25), cb.send("hit", game=9, denomination=100))
        for c in (ca, cb):
            c.close()
        await link.stop()
        return list(replies), link.state, before

    replies, state, before = run(main())
    assert all(r["ok"] for r in replies)
    awards = sorted((r["result"] for r in replies), key=lambda r: r["hit"])
    first, second = awards
    assert first["award"] == before - before % first["denomination"]  # the whole pool, in whole credits
    after_first = 70_000 + before % first["denomination"]
    assert second["award"] == after_first - after_first % second["denomination"]  # the pool as it reset
    assert state.hits == 2 and state.pool == 70_000 + after_first % second["denomination"]
    assert {first["cabinet"], second["cabinet"]} == {"a", "b"}


@pytest.mark.slow
def test_cabinets_on_a_link_contribute_follow_the_pool_and_stop_max_bet_play_while_it_is_down(tmp_path: Path) -> None:
    keys = tmp_path / "keys"
    for name in ("server", "ls-1", "ls-2"):
        create_keys(keys, name)
    cfg = link_config(tmp_path, keys, ("ls-1", "ls-2"))
    one = linked_cabinet(tmp_path, cfg, "ls-1", keys=keys)
    two = linked_cabinet(tmp_path, cfg, "ls-2", keys=keys)
    losing = stops_for(one.title, "--", "--", "--")

    async def main() -> dict:
        link = await started(cfg)
        cabs = [await started(one, rng=Script(losing * 40)), await started(two, rng=Script(losing * 40))]
        for cab in cabs:
            await until(cab, lambda s: s.progressive.up)
            await cab.command(ATTENDANT, "add_credits", {"credits": 200})
        for _ in range(34):  # 34 max bets of 3 credits at 1% make one whole credit (25 cents) per cabinet
            for cab in cabs:
                assert (await cab.command(PLAYER, "max_bet", {}))["ok"]
                await asyncio.wait_for(cab.shown.wait(), 5)
        for cab in cabs:
            await until(cab, lambda s: not s.progressive.unacked)
        await until(link, lambda s: s.contributions == 2)
        out: dict[str, Any] = {"pool": link.state.pool}
        await until(cabs[0], lambda s: cabs[0].link_pool == link.state.pool)  # the displays follow the pool
        out["shown"] = [cab.link_pool for cab in cabs]
        # the link goes down: max-bet play stops, smaller bets go on
        await link.stop()
        await until(cabs[0], lambda s: not s.progressive.up)
        out["max_bet"] = await cabs[0].command(PLAYER, "max_bet", {})
        out["bet_one"] = await cabs[0].command(PLAYER, "bet_one", {})
        out["small"] = await cabs[0].command(PLAYER, "spin", {})
        await asyncio.wait_for(cabs[0].shown.wait(), 5)
        # and comes back: max-bet play resumes
        link = await started(dataclasses.replace(cfg))
        for cab in cabs:
            await until(cab, lambda s: s.progressive.up)
        out["again"] = await cabs[0].command(PLAYER, "max_bet", {})
        out["status"] = cabs[1].state.progressive
        for cab in cabs:
            await cab.stop()
        await link.stop()
        return out

    out = run(main(), 90)
    assert out["pool"] == 70_000 + 2 * 25 and out["shown"][0] == out["pool"]
    assert not out["max_bet"]["ok"] and "progressive link down" in out["max_bet"]["error"]
    assert out["bet_one"]["ok"] and out["small"]["ok"] and out["again"]["ok"]
    with Journal(one.journal, one.cabinet_id) as j:
        links = [r["up"] for r in (e.record for e in j.entries()) if r["kind"] == "link"]
    assert links == [True, False, True]


@pytest.mark.parametrize("restart", [False, True], ids=["live", "restarted-mid-hit"])
def test_a_hit_on_the_link_is_paid_once_even_across_a_restart(tmp_path: Path, restart: bool) -> None:
    cfg = link_config(tmp_path, title="its-good-to-be-bad")
    cab_cfg = linked_cabinet(tmp_path, cfg, "bad-1", title="its-good-to-be-bad", denomination=25)
    losing = stops_for(cab_cfg.title, "--", "--", "--")

    async def main() -> dict:
        link = await started(cfg)
        cab = await started(cab_cfg, rng=Script(losing * 29))
        await until(cab, lambda s: s.progressive.up)
        await cab.command(ATTENDANT, "add_credits", {"credits": 90})
        for _ in range(28):
            await cab.command(PLAYER, "max_bet", {})
            await asyncio.wait_for(cab.shown.wait(), 5)
        if restart:
            async def never(*args: Any) -> dict:
                await asyncio.Event().wait()
                return {}

            cab.link.hit = never  # the award will not arrive before the power goes
        await cab.command(PLAYER, "max_bet", {})  # 29 losses in a row: the progressive
        out: dict[str, Any] = {"pending": cab.state.progressive.pending_hit}
        if restart:
            await until(cab, lambda s: not s.progressive.unacked)
            await cab.stop()
            cab = await started(dataclasses.replace(cab_cfg))
            await until(cab, lambda s: s.progressive.up)
        await until(cab, lambda s: s.progressive.pending_hit is None)
        out["lockup"] = cab.state.lockups[0]
        out["retry"] = await link.command(Role("cabinet"), "hit", {"cabinet": "bad-1", "game": 29, "denomination": 25})
        out["clear"] = await cab.command(ATTENDANT, "clear", {})
        out["cabinet"], out["link"] = cab.state, link.state
        await cab.stop()
        await link.stop()
        return out

    out = run(main(), 90)
    award = out["link"].awards[-1]["award"]
    assert out["pending"] == 29 and out["link"].hits == 1
    assert award >= 10_000_000 and 10_000_000 <= out["link"].pool < 10_000_000 + 25  # reset, and the odd cents
    assert out["lockup"].kind == "jackpot" and out["lockup"].credits == award // 25  # $100,000: a hand pay
    assert out["retry"]["result"]["duplicate"] and out["retry"]["result"]["award"] == award
    m = out["cabinet"].meters
    assert (m.progressive_hits, m.progressive_won, m.jackpot_handpaid) == (1, award // 25, award // 25)
    assert out["cabinet"].recall[-1]["progressive"]["won"] == award // 25


def test_a_link_controller_refuses_curve_on_its_screens_sockets(tmp_path: Path) -> None:
    from controller.config import ConfigError

    create_keys(tmp_path, "server")
    with pytest.raises(ConfigError, match=r"\[bus\].curve_screens: not on a link controller"):
        progressive_config_from_mapping({"progressive": {"id": "ls-link", "title": "light-speed"},
                                         "bus": {"keys": str(tmp_path), "curve_screens": True}}, tmp_path / "l.toml")

"""The cabinet screen and the attendant's page without a browser: the cabinet's Source, pages bound to the cabinet, the public socket carries nothing of the attendant's, lockups cleared through the cabinet's command path with the attendant's key, the link's pool beside the view, config and commands."""

from __future__ import annotations

import asyncio
import dataclasses
import json
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, AsyncIterator

import aiohttp
import pytest

from controller.bus import Role
from controller.cabinet import ATTENDANT, PLAYER, Cabinet
from controller.config import ConfigError
from controller.journal import Journal
from controller.screens import serve
from controller.screens.bridge import ATTENDANT_PAGE_COMMANDS, Bridge, source_for_cabinet
from controller.screens.config import screens_config
from controller.slots import all_titles
from tests.cabinet_helpers import RUNNING, cabinet_config, started
from tests.cabinet_helpers import run as run_stopping
from tests.screens_helpers import TOKEN, Socket, bridged, dealer_socket, run, url, with_keys
from tests.table_helpers import table_config

# What only the attendant may see: none of it ever reaches a public socket.
ATTENDANT_ONLY = ("dealer_only", "lockups", "recall", "meters", "doors_open", "balance", "settings", "payout")


@asynccontextmanager
async def cabinet_stack(cfg: Any, **source: Any) -> AsyncIterator[tuple[Cabinet, Bridge]]:
    """A running cabinet and a bridge following it on 127.0.0.1 (the bridge is stopped first)."""
    cab = await started(cfg)
    try:
        async with bridged(source_for_cabinet(cfg, **source), cfg.bus.heartbeat) as bridge:
            yield cab, bridge
    finally:
        RUNNING.remove(cab)
        await cab.stop()


def keys_in(node: Any) -> set[str]:
    out: set[str] = set()
    if isinstance(node, dict):
        out |= set(node)
        for value in node.values():
            out |= keys_in(value)
    elif isinstance(node, list):
        for value in node:
            out |= keys_in(value)
    return out


def journal(cfg: Any) -> list[dict[str, Any]]:
    with Journal(cfg.journal, cfg.table_id) as j:
        return [e.record for e in j.entries()]


@pytest.mark.parametrize("title", [t.id for t in all_titles()])
def test_a_cabinet_source_carries_what_its_screen_draws(tmp_path: Path, title: str) -> None:
    cfg = cabinet_config(tmp_path, title, panel="screen", **({"progressive": {"mode": "standalone"}}
                                                               if title in ("crazy-dragon", "its-good-to-be-bad", "light-speed") else {}))
    src = source_for_cabinet(cfg)
    t = cfg.title
    info = src.info
    assert src.kind == "cabinet" and src.views == ("public", "dealer") and src.page_commands == ATTENDANT_PAGE_COMMANDS
    assert info["commands"] == ["clear"] and info["reels"] == "screen" and info["denomination"] == cfg.denomination
    assert len(info["paylines"]) == t.lines and all(len(rows) == 3 for rows in info["paylines"])
    assert set(info["symbols"]) == set(t.symbols)
    assert [len(s) for s in info["strips"]] == [r.size for r in t.reels]
    assert all(sym in t.symbols for strip in info["strips"] for sym in strip)
    assert [p["name"] for p in info["paytables"]] == [p.name for p in t.paytables]
    for table, pays in zip(info["paytables"], t.paytables):
        assert [r["pays"] for r in table["rows"]] == [list(r.pays) for r in pays.rows]
        for row in table["rows"]:   # every combination is drawable: symbols of the title, or "any"
            cells = row.get("cells") or [row["anywhere"]]
            assert all(c["any"] or (c["symbols"] and set(c["symbols"]) <= set(t.symbols)) for c in cells)
    assert [f["kind"] for f in info["features"]] == [f.kind for f in t.features]
    json.dumps(info)   # it travels in every snapshot


def test_cabinet_pages_public_socket_and_attendant_clear(tmp_path: Path) -> None:
    cfg = cabinet_config(tmp_path, hand_pay_limit_cents=100)   # 20 credits at 5 cents: a cash out of 30 is a hand pay

    async def main() -> None:
        async with cabinet_stack(cfg) as (cab, bridge), aiohttp.ClientSession() as http:
            cid = cfg.cabinet_id
            async with http.get(url(bridge, f"/cabinet/{cid}")) as r:
                assert r.status == 200 and "cabinet.js" in await r.text()
            async with http.get(url(bridge, f"/table/{cid}")) as r:   # a cabinet has no table pages, and
                assert r.status == 404
            async with http.get(url(bridge, f"/cabinet/{cid}/attendant")) as r:
                assert r.status == 401
            async with http.get(url(bridge, f"/cabinet/{cid}/attendant?token={TOKEN}"), allow_redirects=False) as r:
                assert r.status == 303 and r.headers["Location"] == f"/cabinet/{cid}/attendant"
            async with http.get(url(bridge, "/")) as r:
                assert f"/cabinet/{cid}/attendant" in await r.text()

            await cab.command(ATTENDANT, "add_credits", {"credits": 30})
            assert (await cab.command(PLAYER, "max_bet", {}))["ok"]
            await asyncio.wait_for(cab.shown.wait(), 10)
            assert (await cab.command(PLAYER, "cash_out", {}))["ok"]
            lockup = cab.state.lockups[0]
            assert lockup.kind == "hand_pay"

            async with http.ws_connect(url(bridge, f"/ws/{cid}/public", ws=True)) as ws:
                pub = Socket(ws)
                snap = await pub.next("snapshot")
                assert snap["info"]["kind"] == "cabinet" and snap["side"] == {}
                public = (await pub.until_seq(cab.state.seq))["state"]   # the bridge's feed may still catch up
                assert public["status"] == "locked" and public["reels"]["game"] == 1
                assert public["reels"]["window"] == cab.state.recall[-1]["window"]
                await pub.send({"id": 1, "command": "clear", "args": {}})
                assert (await pub.next("error"))["error"] == "player screens send no commands"
                assert cab.state.lockups   # nothing reached the cabinet

                async with dealer_socket(http, bridge, cid) as att:
                    snap = await att.until_seq(cab.state.seq)
                    assert snap["state"]["dealer_only"]["lockups"][0]["id"] == lockup.id
                    before = len(journal(cfg))
                    for bad in ({"id": 1, "command": "add_credits", "args": {"credits": 1000}},
                                {"id": 2, "command": "spin", "args": {}}, {"id": 3, "command": "clear", "args": [1]}):
                        await att.send(bad)
                        reply = await att.next("reply")
                        assert not reply["ok"] and "an attendant screen sends clear" in reply["error"]
                    assert len(journal(cfg)) == before   # the bridge's refusals never reach the cabinet
                    await att.send({"id": 4, "command": "clear", "args": {"lockup": lockup.id, "action": "paid"}})
                    reply = await att.next("reply")
                    assert reply == {"kind": "reply", "id": 4, "ok": True, "result": {"cleared": "hand_pay", "action": "paid"}}
                    assert not cab.state.lockups
                    update = await att.until_seq(cab.state.seq)
                    assert update["state"]["dealer_only"]["lockups"] == []
                    await att.send({"id": 5, "command": "clear", "args": {"lockup": lockup.id}})
                    reply = await att.next("reply")
                    assert not reply["ok"] and f"no open lockup {lockup.id}" in reply["error"]   # the cabinet said so

                after = await pub.until_seq(cab.state.seq)
                assert after["state"]["status"] != "locked"
                for m in pub.messages:   # no attendant's data on the public socket, ever
                    if m["kind"] in ("snapshot", "update"):
                        assert not keys_in(m["state"]) & set(ATTENDANT_ONLY), sorted(keys_in(m["state"]) & set(ATTENDANT_ONLY))
        clears = [r for r in journal(cfg) if r["kind"] == "clear"]
        assert [(c["lockup"], c["action"]) for c in clears] == [(lockup.id, "paid")]

    run(main())


def _keyed(tmp_path: Path, attendant_key: str | None) -> Any:
    return with_keys(cabinet_config(tmp_path, hand_pay_limit_cents=100), tmp_path, "attendant",
                     {"attendant_key": attendant_key} if attendant_key else {})


def test_attendant_commands_are_signed_with_the_attendant_key(tmp_path: Path) -> None:
    cfg = _keyed(tmp_path, "attendant.key_secret")
    settings = screens_config(cfg)
    assert settings.dealer_keys is not None and settings.server_public is not None and settings.commands

    async def main() -> None:
        async with cabinet_stack(cfg, dealer_keys=settings.dealer_keys, server_public=settings.server_public) as (cab, bridge):
            await cab.command(ATTENDANT, "add_credits", {"credits": 30})
            assert (await cab.command(PLAYER, "cash_out", {}))["ok"]
            async with aiohttp.ClientSession() as http, dealer_socket(http, bridge, cfg.cabinet_id) as sock:
                await sock.until_seq(cab.state.seq)
                await sock.send({"id": 1, "command": "clear", "args": {}})
                assert (await sock.next("reply"))["ok"] and not cab.state.lockups
        assert [r["by"] for r in journal(cfg) if r["kind"] == "clear"] == ["attendant"]

    run(main())
    with pytest.raises(ConfigError, match='role "attendant"'):
        screens_config(_keyed(tmp_path / "b", "ops.key_secret"))
    assert not screens_config(_keyed(tmp_path / "c", None)).commands


@pytest.mark.parametrize("screens, message", [
    ({"dealer_key": "x.key_secret"}, "unknown key"),
    ({"four_colour": True}, "unknown key"),
    ({"attendant_key": "attendant.key_secret"}, "no CURVE keys"),
])
def test_cabinet_screens_config_errors_name_the_key(tmp_path: Path, screens: dict, message: str) -> None:
    cfg = cabinet_config(tmp_path)
    with pytest.raises(ConfigError, match=message):
        screens_config(dataclasses.replace(cfg, raw={**cfg.raw, "screens": screens}))


def test_a_linked_cabinet_screen_gets_the_link_pool_beside_its_view(tmp_path: Path) -> None:
    from tests.test_progressive import link_config, linked_cabinet, started

    link_cfg = link_config(tmp_path)
    cfg = linked_cabinet(tmp_path, link_cfg, "ls-1")

    async def main() -> None:
        link = await started(link_cfg)
        await started(cfg)   # the cabinet the bridge follows
        async with bridged(source_for_cabinet(cfg), 0.2) as bridge:
            assert bridge.links["ls-link"].source.endpoints == link_cfg.bus.endpoints
            async with aiohttp.ClientSession() as http, http.ws_connect(url(bridge, f"/ws/{cfg.cabinet_id}/public", ws=True)) as ws:
                sock = Socket(ws)
                snap = await sock.next("snapshot")
                side = snap["side"]["link"]
                while side is None or side["pool"] != link.state.pool:   # the link's feed may start after the cabinet's
                    msg = await sock.next("side")
                    side = msg["state"]
                assert side["link"] == "ls-link" and side["pool"] == link.state.pool
                pool = link.state.pool
                reply = await link.command(Role("cabinet", name="ls-2"), "contribute", {"game": 1, "cents": 500})
                assert reply["ok"] and link.state.pool == pool + 500
                while True:
                    msg = await sock.next("side")
                    if msg["state"]["pool"] == link.state.pool:
                        break
                async with http.get(url(bridge, "/healthz")) as r:
                    health = await r.json()
                    assert health["links"]["ls-link"]["live"] and health["ok"]

    run_stopping(main())   # stops the link and the cabinet however the test ends


def test_serve_mixes_tables_and_cabinets_and_the_demo_urls(tmp_path: Path) -> None:
    from controller.commands._common import urls

    table = table_config(tmp_path, "baccarat")
    cab = cabinet_config(tmp_path)

    async def main() -> None:
        bridge, settings = await serve([table, cab], listen="127.0.0.1:0")
        try:
            assert {s.kind for s in bridge.sources.values()} == {"table", "cabinet"}
            got = dict((what, u) for what, u in urls(bridge, settings))
            assert got["cabinet screen"].endswith(f"/cabinet/{cab.cabinet_id}")
            assert got["attendant"].endswith(f"/cabinet/{cab.cabinet_id}/attendant?token={settings.dealer_token}")
            assert got["dealer"].endswith(f"/dealer/{table.table_id}?token={settings.dealer_token}")
        finally:
            await bridge.close()
        with pytest.raises(ConfigError, match="twice"):
            await serve([cab, cab], listen="127.0.0.1:0")

    run(main())


@pytest.mark.slow
def test_demo_cabinet_starts_the_screens_and_prints_their_addresses(tmp_path: Path) -> None:
    import os
    import re

    from tests.table_helpers import run_demo

    out = run_demo("--cabinet", "frozen-assets", "--spins", "2", "--pace", "0", "--seed", "5", "--dir", str(tmp_path),
                   "--quiet", "--screens", "127.0.0.1:0", env={**os.environ, "PYTHONUNBUFFERED": "1"})
    assert re.search(r"screens: +http://127\.0\.0\.1:\d+/cabinet/demo-frozen-assets ", out.stdout), out.stdout
    assert re.search(r"http://127\.0\.0\.1:\d+/cabinet/demo-frozen-assets/attendant\?token=\S{16,}", out.stdout)


def test_the_example_cabinet_config_serves_screens_and_a_link_config_is_refused(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from controller.cli import main
    from controller.config import load_config

    root = Path(__file__).resolve().parents[1] / "deploy" / "config"
    s = screens_config(load_config(root / "cabinet-frozen-assets.toml"))
    assert (s.host, s.port, s.token_generated, s.commands) == ("127.0.0.1", 8081, True, True)
    assert main(["screens", "--config", str(root / "progressive-light-speed.toml")]) == 2
    assert "screens are for tables and cabinets" in capsys.readouterr().err

"""The pit page in real Chromium (issue 42, point 5): it opens with the pit's token only; it shows a rating started by
command and the alert a seeded card counter's rounds raise (replayed into the table's journal as it runs), with the
points of its plots; it fits at 1920x1080 and 1280x720. And no rating, alert or paperwork ever reaches a player's,
spot's or dealer's screen: every message of their WebSockets and their pages' DOM while a rating and an alert are live.

One table, one bridge and one browser for the module (the `seen` fixture); the tests read what it saw."""

from __future__ import annotations

import asyncio
import dataclasses
import json
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from controller.bench.apalerts import simulate
from controller.bus import Role
from controller.screens import pit_settings
from controller.screens.bridge import Bridge, source_for_table
from controller.screens.browser import browser, missing, wait_for
from controller.screens.config import screens_config
from tests.screens_fit_helpers import CHECK, fit, report, shots  # noqa: F401  (shots: a fixture)
from tests.screens_helpers import TOKEN, Socket, run, with_keys
from tests.test_pit import manual_config

pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(missing() is not None, reason=f"no browser for the screens tests: {missing()}")]

PIT_TOKEN = "test-pit-token-abcdefghijklmnop"
PLAYER = "40000001"
SLIP_CHIPS = {"25": 40}
# What only the pit may see: the pit answer's own keys, and its words a page would show.
PIT_KEYS = {"ratings", "sessions", "theo_win", "actual_win", "decision_cost", "average_bet", "paperwork", "slips",
            "advantage_play", "evidence", "true_count", "running_count", "win_series", "shift_figures",
            "day_figures", "rounds_in_window", "hole_card_decisions"}
PIT_WORDS = ("bet ramp", "true count", "advantage", "rated", "rating", "theo", "paperwork", "opener", "wonging",
             "hole-card", PLAYER)


def keys_in(node: Any) -> set[str]:
    if isinstance(node, dict):
        return set(node) | set().union(*(keys_in(v) for v in node.values()))
    if isinstance(node, list):
        return set().union(*(keys_in(v) for v in node)) if node else set()
    return set()


READ_PIT = """() => ({
  ratings: [...document.querySelectorAll('.pit-ratings tbody tr')].map((r) => [r.dataset.player, Number(r.dataset.spot),
    r.children[3].textContent]),
  alerts: [...document.querySelectorAll('.pit-alert')].map((a) => [a.dataset.kind, Number(a.dataset.spot),
    a.querySelector('.alert-text').textContent]),
  scatters: [...document.querySelectorAll('.scatter')].map((f) => [f.dataset.spot, f.dataset.alerted,
    Number(f.querySelector('svg').dataset.points), f.querySelectorAll('circle').length]),
  win: [...document.querySelectorAll('.win-line svg')].map((s) => [Number(s.dataset.points),
    s.querySelector('polyline').getAttribute('points').split(' ').length]),
  figures: Object.fromEntries([...document.querySelectorAll('[data-figure]')].map((f) => [f.dataset.figure,
    f.dataset.value])),
  paper: document.querySelector('.pit-paper') ? document.querySelector('.pit-paper').dataset.day : null,
  text: document.body.innerText,
})"""
READ_SCREEN = "() => [document.body.innerText, document.documentElement.outerHTML]"


@pytest.fixture(scope="module")
def seen(tmp_path_factory: pytest.TempPathFactory, shots: Path) -> dict[str, Any]:  # noqa: F811
    tmp = tmp_path_factory.mktemp("pit")
    (tmp / "pit.token").write_text(PIT_TOKEN + "\n")
    cfg = with_keys(manual_config(tmp), tmp, "pit", {"pit_token_file": "pit.token", "pit_key": "pit.key_secret"})
    settings = screens_config(cfg)
    counter = simulate(3, 4, 75, keep_records=True, players=("counter", "flat", "random"))
    rounds: list[list[dict[str, Any]]] = [[]]
    for record in counter.records or []:
        rounds[-1].append(record)
        if record["event"]["kind"] == "settle":
            rounds.append([])
    out: dict[str, Any] = {"status": {}}

    async def main() -> None:
        from controller.table import Table

        table = Table(cfg)
        await table.start()
        pits = pit_settings([cfg], [settings])
        # a second pit showing the table twice: the page of a pit of two tables (one table for the module)
        pits = dataclasses.replace(pits, pits={**pits.pits, "pair": (cfg.table_id, cfg.table_id)})
        bridge = Bridge([source_for_table(cfg)], dealer_token=TOKEN, host="127.0.0.1", port=0,
                        heartbeat=cfg.bus.heartbeat, pit=pits)
        await bridge.start()
        base = f"http://127.0.0.1:{bridge.port}"
        try:
            async with aiohttp.ClientSession() as http:
                # who may open the page and its socket: the pit's token only
                for name, kw in {"none": {}, "dealer": {"headers": {"Cookie": f"croupier_dealer={TOKEN}"}},
                                 "dealer_query": {"params": {"token": TOKEN}},
                                 "pit": {"params": {"token": PIT_TOKEN}}}.items():
                    async with http.get(f"{base}/pit/{cfg.table_id}", allow_redirects=False, **kw) as r:
                        out["status"][name] = (r.status, r.headers.get("Location"),
                                               "croupier_pit" in r.headers.get("Set-Cookie", ""))
                for name, cookie in {"ws_none": "", "ws_dealer": f"croupier_dealer={TOKEN}",
                                     "ws_pit": f"croupier_pit={PIT_TOKEN}"}.items():
                    try:
                        async with http.ws_connect(f"ws://127.0.0.1:{bridge.port}/pit/{cfg.table_id}/ws",
                                                   headers={"Cookie": cookie} if cookie else {}) as ws:
                            first = json.loads((await ws.receive(timeout=10)).data)
                            out["status"][name] = (101, first["kind"], first["tables"][0]["ok"])
                    except aiohttp.WSServerHandshakeError as exc:
                        out["status"][name] = (exc.status, None, None)
                # every message of the screens' sockets, from before the rating to the end
                sockets = [Socket(await http.ws_connect(f"ws://127.0.0.1:{bridge.port}/ws/{cfg.table_id}/{view}",
                                                        headers={"Cookie": f"croupier_dealer={TOKEN}"}))
                           for view in ("public", "dealer")]
                await sockets[0].next("snapshot")
                await sockets[1].next("snapshot")
                async with browser() as ctx:
                    page = await ctx.new_page()
                    await page.set_viewport_size({"width": 1920, "height": 1080})
                    refused = await page.goto(f"{base}/pit/{cfg.table_id}")
                    out["browser_refused"] = (refused.status, await page.evaluate("document.body.innerText"))
                    await page.goto(f"{base}/pit/{cfg.table_id}?token={PIT_TOKEN}")
                    out["browser_url"] = page.url
                    await wait_for(page, "document.querySelector('.pit-table')")
                    pit, dealer = Role("pit"), Role("dealer")
                    assert (await table.command(dealer, "dealer_sign_in", {"dealer": "D-17"}))["ok"]
                    assert (await table.command(pit, "rating_start", {"spot": 1, "player": PLAYER}))["ok"]
                    assert (await table.command(dealer, "slip_enter", {"form": "opener", "chips": SLIP_CHIPS}))["ok"]
                    assert (await table.command(pit, "slip_confirm", {"slip": 1}))["ok"]
                    for records in rounds:   # one group commit a round, as a dealt round's records come
                        await table._submit(lambda batch, rs=records: [batch.add(dict(r)) for r in rs])
                    view = (await table.command(pit, "pit", {}))["result"]
                    out["view"] = view
                    await wait_for(page, "document.querySelector('.pit-alert') && [...document.querySelectorAll("
                                         "'.pit-ratings tbody tr')].some((r) => r.children[3].textContent !== '0')",
                                   timeout=30)
                    out["pit"] = await page.evaluate(READ_PIT)
                    problems: dict[str, list[str]] = {}
                    await fit(page, CHECK, "pit", ((1920, 1080), (1280, 720)), problems, shots)
                    await page.goto(f"{base}/pit/pair")
                    await wait_for(page, "document.querySelectorAll('.pit-alert').length === 2")
                    await fit(page, CHECK, "pit-pair", ((1920, 1080), (1280, 720)), problems, shots)
                    out["pair"] = await page.evaluate("document.querySelectorAll('.pit-table .scatter').length")
                    out["fit"] = problems
                    # the players', the spot's and the dealer's pages, while the rating and the alert are live
                    screens = {}
                    for name, path in {"table": f"/table/{cfg.table_id}", "spot": f"/table/{cfg.table_id}/spot/1",
                                       "dealer": f"/dealer/{cfg.table_id}?token={TOKEN}"}.items():
                        other = await ctx.new_page()
                        await other.goto(base + path)
                        await wait_for(other, f"Number(document.body.dataset.seq) >= {table.state.seq}", timeout=20)
                        screens[name] = await other.evaluate(READ_SCREEN)
                        await other.close()
                    out["screens"] = screens
                for sock in sockets:
                    await sock.until_seq(table.state.seq)
                    await sock.ws.close()
                out["messages"] = [m for s in sockets for m in s.messages]
                out["pit_sent"] = bridge.pit.sent if bridge.pit else 0
        finally:
            await bridge.close()
            await table.stop()

    run(main(), timeout=240)
    return out


def test_only_the_pits_token_opens_the_pit_page_and_its_socket(seen: dict[str, Any]) -> None:
    status = seen["status"]
    assert status["none"][0] == status["dealer"][0] == status["dealer_query"][0] == 401
    assert status["pit"] == (303, "/pit/bj-pit", True)    # the token goes into a cookie, out of the address bar
    assert status["ws_none"][0] == status["ws_dealer"][0] == 403
    assert status["ws_pit"] == (101, "pit", True)
    assert seen["browser_refused"][0] == 401 and "pit_token_file" in seen["browser_refused"][1]
    assert seen["browser_url"].endswith("/pit/bj-pit")


def test_the_pit_page_shows_the_rating_the_alert_and_their_plots(seen: dict[str, Any]) -> None:
    shown, view = seen["pit"], seen["view"]
    [session] = view["ratings"]["sessions"]
    assert session["rounds"] > 0
    assert shown["ratings"] == [[PLAYER, 1, str(session["rounds"])]]
    alerts = view["advantage_play"]["alerts"]
    assert alerts and shown["alerts"] == [[a["kind"], a["spot"], a["text"]] for a in reversed(alerts)][:len(shown["alerts"])]
    assert shown["alerts"][-1][:2] == ["bet_ramp", 1]
    # spot 1 (rated and alerted): a dot per round of its window, as the pit's answer has them
    points = view["advantage_play"]["spots"]["1"]["points"]
    assert ["1", "yes", len(points), len(points)] in shown["scatters"] and len(points) >= 24
    series = view["analytics"]["win_series"]
    assert shown["win"] == [[len(series), len(series)]] and len(series) == view["analytics"]["shift_figures"]["rounds"]
    assert shown["figures"]["rounds"] == str(view["analytics"]["shift_figures"]["rounds"])
    assert shown["figures"]["win"] == str(view["analytics"]["shift_figures"]["win"])
    assert shown["paper"] == view["analytics"]["day"] and "Dealer D-17" in shown["text"]


def test_the_pit_page_fits_at_1920x1080_and_1280x720(seen: dict[str, Any]) -> None:
    """... with one table and with two (each with its rating, alert and plots)."""
    assert seen["fit"] == {}, report(seen["fit"])
    assert seen["pair"] == 2


def test_no_rating_alert_or_paperwork_reaches_a_players_spots_or_dealers_screen(seen: dict[str, Any]) -> None:
    view = seen["view"]
    texts = [a["text"] for a in view["advantage_play"]["alerts"]]
    frames = [m for m in seen["messages"] if m["kind"] in ("update", "snapshot")]
    assert len(frames) > 50 and seen["pit_sent"] > 1
    for m in seen["messages"]:
        assert not keys_in(m) & PIT_KEYS, (m["kind"], keys_in(m) & PIT_KEYS)
        text = json.dumps(m).lower()
        assert not any(w.lower() in text for w in PIT_WORDS if w != "rated"), m.get("seq")
        assert not any(t.lower() in text for t in texts)
    for name, (inner, html) in seen["screens"].items():
        for where in (inner.lower(), html.lower()):
            assert not any(w.lower() in where for w in PIT_WORDS), name
            assert not any(t.lower() in where for t in texts), name

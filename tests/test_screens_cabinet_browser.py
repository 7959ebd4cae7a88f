"""The cabinet screen and the attendant's page in a real browser (Debian's headless Chromium): the screen shows the public view's credits, bet, win and reel window after every spin, lights the line that paid on the selected paytable, carries nothing of the attendant's; the attendant's page clears a hand pay by clicking and pages through the recall; screenshots at 1920x1080 and 800x480 go to artifacts/screens/."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from controller.cabinet import ATTENDANT, PLAYER, Cabinet
from controller.screens.bridge import Bridge, source_for_cabinet
from controller.screens.browser import browser, missing, wait_for
from controller.slots import get_title
from tests.cabinet_helpers import RUNNING, Script, cabinet_config, stops_for
from tests.screens_helpers import TOKEN, run
from tests.test_screens_browser import shoot
from tests.test_screens_cabinet import ATTENDANT_ONLY, cabinet_stack, journal, keys_in

pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(missing() is not None, reason=f"no browser for the screens tests: {missing()}")]

READ_CABINET = """() => ({
  seq: Number(document.body.dataset.seq),
  game: Number(document.querySelector('.reels').dataset.game),
  meters: Object.fromEntries([...document.querySelectorAll('.cab-meters .meter')].map(m => [m.dataset.meter, Number(m.dataset.value)])),
  window: [0, 1, 2].map(row => [...document.querySelectorAll('.reel')].map(r => r.querySelectorAll('.cell')[row].dataset.symbol)),
  paylines: [...document.querySelectorAll('.payline.paid')].map(l => Number(l.dataset.line)),
  rows: [...document.querySelectorAll('.slot-paytable tr.paid')].map(r => Number(r.dataset.row)),
  paytable: document.querySelector('.slot-paytable').dataset.paytable,
  selected: [...document.querySelectorAll('.paytab.selected')].map(t => t.dataset.paytable),
  lockup: document.querySelector('.lockup').hidden ? null : document.querySelector('.lockup').textContent,
  banner: document.querySelector('.banner').textContent,
  features: Object.fromEntries([...document.querySelectorAll('.feature')].map(f => [f.dataset.feature, f.querySelector('.value').textContent])),
  turns: Number(document.body.dataset.turns || 0),
})"""


async def rested(page: Any, cab: Cabinet) -> dict[str, Any]:
    """The cabinet page once it shows the cabinet's latest state with its reels at rest on the last game."""
    await wait_for(page, f"Number(document.body.dataset.seq) >= {cab.state.seq} && "
                         f"Number(document.querySelector('.reels').dataset.game) === {cab.state.games} && "
                         "!document.querySelector('.paylines').classList.contains('hidden')")
    return await page.evaluate(READ_CABINET)


def expected(view: dict[str, Any]) -> dict[str, Any]:
    reels = view["reels"]
    return {"game": reels["game"] if reels else 0,
            "meters": {"credits": view["credits"], "bet": view["bet_credits"], "win": view["win"]},
            "window": reels["window"], "paylines": sorted({w["line"] for w in reels["line_wins"]}),
            "rows": sorted({w["row"] for w in reels["line_wins"]})}


def test_cabinet_screen_shows_the_public_view_spin_by_spin(tmp_path: Path) -> None:
    """Operation M.Y.O.W. on screen reels: each spin turns the reels, then the page holds the view's credits,
    bet, win and window; a win lights its payline and its row of the paytable the player selected."""
    t = get_title("operation-myow")
    # scripted stops: a loss, a pink-cat line (after Next Paytable: Catman), then what the seeded stream draws
    script = Script(stops_for(t, "--", "--", "--") + stops_for(t, "CK", "CK", "CK"), seed=3)
    cfg = cabinet_config(tmp_path, "operation-myow", panel="screen", spin_seconds=0.25)

    async def main() -> None:
        cab = Cabinet(cfg, rng=script)
        RUNNING.append(cab)
        await cab.start()
        bridge = Bridge([source_for_cabinet(cfg)], dealer_token=TOKEN, host="127.0.0.1", port=0,
                        heartbeat=cfg.bus.heartbeat)
        await bridge.start()
        try:
            async with browser() as ctx:
                page = await ctx.new_page()
                frames: list[str] = []
                errors: list[str] = []
                page.on("websocket", lambda ws: ws.on("framereceived", lambda payload: frames.append(payload)))
                page.on("pageerror", lambda e: errors.append(str(e)))
                page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
                await page.set_viewport_size({"width": 1920, "height": 1080})
                await page.goto(f"http://127.0.0.1:{bridge.port}/cabinet/{cfg.cabinet_id}")
                await wait_for(page, "window.croupier.snapshots > 0")
                assert (await cab.command(ATTENDANT, "add_credits", {"credits": 200}))["ok"]
                dom = await rested(page, cab)
                assert dom["meters"]["credits"] == 200 and dom["game"] == 0 and dom["banner"] == "Press spin"
                assert dom["selected"] == ["Lucky"] and dom["paytable"] == "Lucky"

                wins = 0
                for n in range(6):
                    if n == 1:
                        assert (await cab.command(PLAYER, "next_paytable", {}))["ok"]
                    reply = await cab.command(PLAYER, "max_bet", {})
                    assert reply["ok"], reply
                    await wait_for(page, f"Number(document.body.dataset.turns || 0) >= {n + 1}")   # the reels turn
                    await asyncio.wait_for(cab.shown.wait(), 10)
                    dom = await rested(page, cab)
                    view = cab.views()[1]["public"]
                    want = expected(view)
                    assert {k: dom[k] for k in want} == want, f"game {n + 1}"
                    assert dom["paytable"] == view["paytable"]["name"] and dom["selected"] == [view["paytable"]["name"]]
                    wins += bool(want["paylines"])
                    if n == 1:   # the scripted pink cats, paid on Catman's row for them
                        assert view["paytable"]["name"] == "Catman" and view["win"] > 0
                        assert dom["window"][1] == ["CK", "CK", "CK"] and dom["paylines"] == [1]
                        await shoot(page, "cabinet-operation-myow-win")
                assert wins >= 1 and dom["turns"] == 6 and errors == []
                await shoot(page, "cabinet-operation-myow")

                # what the page received: never anything of the attendant's
                states = [m for m in map(json.loads, frames) if m["kind"] in ("snapshot", "update")]
                assert len(states) >= 8   # a snapshot, the credits, the bet, 6 spins, the paytable
                for m in states:
                    assert not keys_in(m["state"]) & set(ATTENDANT_ONLY)
                html = await page.evaluate("document.documentElement.outerHTML")
                assert "dealer_only" not in html and "credits_before" not in html
        finally:
            await bridge.close()
            RUNNING.remove(cab)
            await cab.stop()

    run(main(), timeout=120)


def test_attendant_page_clears_a_hand_pay_by_clicking_and_pages_the_recall(tmp_path: Path) -> None:
    """Frozen Assets on mechanical reels (the screen shows the window at once): a cash out over the limit locks
    the cabinet for a hand pay; both pages say so; the attendant clicks Paid; the recall shows each game."""
    cfg = cabinet_config(tmp_path, hand_pay_limit_cents=100)   # 20 credits at 5 cents

    async def main() -> None:
        async with cabinet_stack(cfg) as (cab, bridge), browser() as ctx:
            screen = await ctx.new_page()
            await screen.goto(f"http://127.0.0.1:{bridge.port}/cabinet/{cfg.cabinet_id}")
            await wait_for(screen, "window.croupier.snapshots > 0")
            assert (await cab.command(ATTENDANT, "add_credits", {"credits": 60}))["ok"]
            for _ in range(3):
                assert (await cab.command(PLAYER, "max_bet", {}))["ok"]
                await asyncio.wait_for(cab.shown.wait(), 10)
            dom = await rested(screen, cab)
            want = expected(cab.views()[1]["public"])
            assert {k: dom[k] for k in want} == want and dom["turns"] == 0   # mechanical reels: no turning on screen
            assert set(dom["features"]) == {"snowman", "snowman_bonus"}
            assert (await cab.command(PLAYER, "cash_out", {}))["ok"]
            lockup = cab.state.lockups[0]
            assert lockup.kind == "hand_pay"
            await wait_for(screen, f"Number(document.body.dataset.seq) >= {cab.state.seq}")
            dom = await screen.evaluate(READ_CABINET)
            assert dom["lockup"] == lockup.text and dom["banner"] == lockup.text
            await shoot(screen, "cabinet-frozen-assets-hand-pay")

            attendant = await ctx.new_page()
            await attendant.goto(f"http://127.0.0.1:{bridge.port}/cabinet/{cfg.cabinet_id}/attendant?token={TOKEN}")
            assert attendant.url.endswith(f"/cabinet/{cfg.cabinet_id}/attendant")   # the token went into a cookie
            await wait_for(attendant, f"document.querySelector('.alert[data-lockup=\"{lockup.id}\"]')")
            assert str(lockup.credits) in await attendant.inner_text(".alert-text")
            # the recall: the latest game first, every game a click away, with its stops, bet and credits
            recall = cab.state.recall
            assert await attendant.evaluate("document.querySelector('.recall-page').dataset.game") == str(recall[-1]["game"])
            await attendant.click(f".recall-nav button[data-recall='game {recall[0]['game']}']")
            await wait_for(attendant, f"document.querySelector('.recall-page').dataset.game === '{recall[0]['game']}'")
            text = await attendant.inner_text(".recall-page")
            assert " ".join(map(str, recall[0]["stops"])) in text and f"{recall[0]['credits_before']} → " in text
            await shoot(attendant, "attendant-frozen-assets-hand-pay")

            await attendant.click(f".alert[data-lockup='{lockup.id}'] button:has-text('Paid')")
            await wait_for(attendant, "!document.querySelector('.alert') && document.body.dataset.lastReply")
            assert json.loads(await attendant.evaluate("document.body.dataset.lastReply"))["ok"] is True
            assert not cab.state.lockups
            await wait_for(screen, f"Number(document.body.dataset.seq) >= {cab.state.seq}")
            dom = await screen.evaluate(READ_CABINET)
            assert dom["lockup"] is None and dom["meters"]["credits"] == 0
            await wait_for(attendant, f"Number(document.body.dataset.seq) >= {cab.state.seq}")
            await shoot(attendant, "attendant-frozen-assets")
        clears = [r for r in journal(cfg) if r["kind"] == "clear"]
        assert [(c["lockup"], c["action"], c["by"]) for c in clears] == [(lockup.id, "paid", "attendant")]

    run(main(), timeout=120)

"""Every game's player page in real Chromium (issue 38): a layout of its own, and at 1920x1080, 1280x720 and 800x480 (its spot's screen at the largest and smallest) no scrolling, no text outside the viewport or cut off, no overlapping text, no raw data keys, no text under 18 px at 1080p, no burn card on hold'em's; from a demo of each game dealt a few rounds in, its views replayed to the page; screenshots in artifacts/screens/fit-*."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest

from controller.games import game_names
from controller.screens.browser import browser, missing, wait_for
from controller.screens.roads import ask, derived_roads
from tests.screens_helpers import Replay, artifacts, recorded_views, run

pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(missing() is not None, reason=f"no browser for the screens tests: {missing()}")]

SIZES = ((1920, 1080), (1280, 720), (800, 480))

# What is wrong with the page as it is laid out now: a list of sentences (empty: it fits).
CHECK = r"""() => {
  const W = innerWidth, H = innerHeight, out = [];
  const el = document.scrollingElement;
  if (el.scrollHeight > H + 1 || el.scrollWidth > W + 1) out.push(`scrolls: ${el.scrollWidth}x${el.scrollHeight}`);
  if (document.body.dataset.layout !== document.body.dataset.game) out.push(`layout: ${document.body.dataset.layout}`);
  const raw = /\b[A-Za-z]+\[\d+\]|\b[a-z]+_[a-z_]+\b|\b[a-z]+:\d+\b/.exec(document.body.innerText);
  if (raw) out.push(`raw key: ${raw[0]}`);
  // every piece of text (not the cards' own SVG letters) with its boxes and the boxes that clip it
  const texts = [];
  const walk = document.createTreeWalker(document.getElementById("app"), NodeFilter.SHOW_TEXT);
  for (let n = walk.nextNode(); n; n = walk.nextNode()) {
    if (!n.textContent.trim() || n.parentElement.closest("svg")) continue;
    const range = document.createRange();
    range.selectNodeContents(n);
    const rects = [...range.getClientRects()].filter((r) => r.width > 0.5 && r.height > 0.5);
    if (!rects.length) continue;
    const what = n.textContent.trim().slice(0, 30);
    const px = parseFloat(getComputedStyle(n.parentElement).fontSize);
    if (W >= 1900 && px < 18) out.push(`small text: "${what}" at ${px.toFixed(1)} px`);   // legible from two metres
    for (const r of rects) {
      if (r.left < -0.5 || r.top < -0.5 || r.right > W + 0.5 || r.bottom > H + 0.5) {
        out.push(`outside the viewport: "${what}" at ${Math.round(r.left)},${Math.round(r.top)}`);
      }
      for (let a = n.parentElement; a && a !== document.body; a = a.parentElement) {
        const s = getComputedStyle(a);
        if (s.overflowX === "visible" && s.overflowY === "visible") continue;
        const b = a.getBoundingClientRect();
        if (r.left < b.left - 1 || r.right > b.right + 1 || r.top < b.top - 1 || r.bottom > b.bottom + 1) {
          out.push(`cut off: "${what}" by .${[...a.classList].join(".")}`);
          break;
        }
      }
      texts.push([what, r]);
    }
  }
  // a spot's bets, cards and values lie inside it
  for (const spot of document.querySelectorAll(".felt .spot")) {
    const b = spot.getBoundingClientRect();
    for (const e of spot.querySelectorAll(".bet, .card, .note, .net, .seat-note")) {
      const r = e.getBoundingClientRect();
      if (r.width && (r.left < b.left - 1 || r.right > b.right + 1 || r.top < b.top - 1 || r.bottom > b.bottom + 1)) {
        out.push(`outside spot ${spot.dataset.spot}: .${[...e.classList].join(".")}`);
      }
    }
  }
  for (let i = 0; i < texts.length; i++) {
    for (let j = i + 1; j < texts.length; j++) {
      const [p, a] = texts[i], [q, b] = texts[j];
      const w = Math.min(a.right, b.right) - Math.max(a.left, b.left);
      const h = Math.min(a.bottom, b.bottom) - Math.max(a.top, b.top);
      if (w > 2 && h > 2) out.push(`overlap: "${p}" and "${q}"`);
    }
  }
  return [...new Set(out)];
}"""


def _cards(view: dict[str, Any]) -> int:
    return str(view["game"]).count("'up': True")


def states(views: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """The states a page is checked in: the round in play with the most cards up (a decision when there is
    one), and the last view (a few rounds in: the last round settled, or the next one under way)."""
    playing = [v for v in views if v["game"].get("phase") not in ("betting", "idle", None)]
    deciding = [v for v in playing if v["game"].get("phase") == "deciding"] or playing or views
    return {"play": max(deciding, key=_cards), "last": views[-1]}


async def check(page: Any, name: str, sizes: Any, problems: dict[str, list[str]]) -> None:
    """The page checked at each size, a screenshot of each in artifacts/screens/fit-*."""
    for w, h in sizes:
        await page.set_viewport_size({"width": w, "height": h})
        await page.evaluate("new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)))")
        found = await page.evaluate(CHECK)
        if found:
            problems[f"{name} {w}x{h}"] = found
        await page.screenshot(path=str(artifacts(f"fit-{name.replace(' ', '-')}-{w}x{h}.png")))


def test_every_game_fits_the_player_page_at_every_size(tmp_path: Path) -> None:
    games = game_names()

    async def main() -> dict[str, list[str]]:
        recorded = {}
        for game in games:
            recorded[game] = await recorded_views(tmp_path / game, game.replace("-", "_"))
        problems: dict[str, list[str]] = {}
        replay = Replay()
        await replay.start()
        try:
            async with browser() as ctx:
                page, spot_page = await ctx.new_page(), await ctx.new_page()
                for game in games:
                    info, views = recorded[game]
                    table = info["id"]
                    for label, state in states(views).items():
                        seq = await replay.show(table, info, state)
                        if label == "play":
                            await page.set_viewport_size({"width": SIZES[0][0], "height": SIZES[0][1]})
                            await page.goto(f"http://127.0.0.1:{replay.port}/table/{table}")
                        await wait_for(page, f"Number(document.body.dataset.seq) === {seq}")
                        await check(page, f"{game} {label}", SIZES, problems)
                        if label == "play":   # the spot's own screen, of the first spot with a bet
                            spot = min([b["spot"] for b in state["game"].get("bets", [])] or [1])
                            await spot_page.set_viewport_size({"width": SIZES[0][0], "height": SIZES[0][1]})
                            await spot_page.goto(f"http://127.0.0.1:{replay.port}/table/{table}/spot/{spot}")
                            await wait_for(spot_page, f"Number(document.body.dataset.seq) === {seq}")
                            await check(spot_page, f"{game} spot {label}", (SIZES[0], SIZES[-1]), problems)
                # hold'em's page draws no burn, even from a view that carried them (as views did before issue 38):
                # the cards on the felt are the board's and the seats' only
                info, views = recorded["texas-holdem"]
                state = states(views)["play"]
                game = state["game"]
                dealt = len(game["board"]) + sum(len(s.get("cards", [])) for s in game["seats"])
                assert "burns" not in game and len(game["board"]) >= 3
                burns = [{"card": None, "up": False}] * 3
                seq = await replay.show(info["id"], info, {**state, "game": {**game, "burns": burns}})
                await page.goto(f"http://127.0.0.1:{replay.port}/table/{info['id']}")
                await wait_for(page, f"Number(document.body.dataset.seq) === {seq}")
                assert await page.evaluate("document.querySelectorAll('.felt .card').length") == dealt
                assert await page.evaluate("!/burn/i.test(document.getElementById('app').innerHTML)")

                # the page's derived roads and ask are roads.py's, on random shoes
                rng = random.Random(38)
                for _ in range(200):
                    shoe = [rng.choice(("banker", "banker", "player", "player", "tie"))
                            for _ in range(rng.randrange(90))]
                    got = await page.evaluate("(w) => typeof Felt.derivedRoads === 'function' && "
                                              "[Felt.derivedRoads(w), Felt.askRoads(w)]", shoe)
                    if got != [derived_roads(shoe), ask(shoe)]:
                        roads_differ.append(shoe)
        finally:
            await replay.close()
        return problems

    roads_differ: list[list[str]] = []
    problems = run(main(), timeout=600)
    assert problems == {}, "\n".join(f"{k}: {'; '.join(v[:6])}" for k, v in problems.items())
    assert roads_differ == []

"""The dealer page in real Chromium (issue 38, points 2 and 4): every game in the states a round passes through (bets
open, dealing, in play, settled, a few rounds in) at 1920x1080 and 800x480, and a handful of representative games
(blackjack with splits, baccarat, hold'em, faro, pai gow) in play, split and a few rounds in at 1920x1080, 1280x720,
1024x600 and 800x480: the player page's fit checks (no scrolling, no text outside the viewport or cut off, no
overlapping text, no raw keys), with an alert and its buttons showing, and three alerts at once at every size; the
camera panel lists the round in play, not the last round's cards the camera still sees; from a demo's dealer views
replayed to the page; screenshots in the artifacts folder (screens/dealer-*)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from controller.games import game_names
from controller.screens.browser import browser, missing, wait_for
from tests.screens_fit_helpers import CHECK, ENDS, SIZES, fit, report, shots, shots_wrong  # noqa: F401 (shots: a fixture)
from tests.screens_helpers import Replay, cards_in, recorded_views, run
from tests.test_screens_fit import EVERY_SIZE, states

pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(missing() is not None, reason=f"no browser for the screens tests: {missing()}")]

GAMES = tuple(game_names())
# checked at every size in the round in play, the last view and a split; every game in every state at the largest and
# the smallest
EVERY_SIZE_GAMES = ("blackjack", "baccarat", "texas-holdem", "faro", "pai-gow")
SEEDS = {"blackjack": 6}   # a demo whose blackjack splits a pair


def _hands(view: dict[str, Any]) -> int:
    return max([len(s.get("hands", [])) for s in view["game"].get("spots", []) if isinstance(s, dict)] or [0])


def dealer_states(views: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """The player page's states, and for a game that splits, the view with the most hands on a spot."""
    out = states(views)
    split = max(views, key=lambda v: (_hands(v), str(v["game"]).count("'up': True")))
    if _hands(split) > 1:
        out["split"] = split
    return out

# The player page's checks, less its own (the dealer page has no player layout of its own; its title names the
# table by its id, no raw key), plus: the header's parts, each alert's buttons and every row of the meters shown
# (a page of the spots' meters at a time) lie inside the viewport.
DEALER_CHECK = CHECK.replace(
    "document.body.innerText", 'document.body.innerText.replace(document.querySelector(".bar .title").textContent, "")'
).replace(
    "if (document.body.dataset.layout !== document.body.dataset.game) out.push(`layout: ${document.body.dataset.layout}`);",
    """for (const e of document.querySelectorAll(".alert button, .meters tr:not([hidden]), .bar > span")) {
    const r = e.getBoundingClientRect();
    if (!r.width || r.left < -0.5 || r.top < -0.5 || r.right > W + 0.5 || r.bottom > H + 0.5) {
      out.push(`not in view: ${e.tagName.toLowerCase()} "${e.textContent.trim().slice(0, 30)}"`);
    }
  }""")


def _alert(card: str | None) -> dict[str, Any]:
    return {"id": 7, "kind": "camera", "card": card, "zone": "spot 1", "options": ["confirm", "reassign", "void"],
            "text": "the camera sees a card on spot 1 that disagrees with the deal: put it right and confirm, "
                    "or void the round", "reassign": []}


def many_alerts(cards: list[str]) -> list[dict[str, Any]]:
    """The camera's alert on the first face-up card (reassignable to the next three), a misdeal and a swapped shoe:
    ten buttons in all."""
    camera = {**_alert(cards[0]), "reassign": cards[1:4]}
    misdeal = {"id": 8, "kind": "misdeal", "card": cards[-1], "options": ["discard", "void"],
               "text": f"{cards[-1]} drawn: the round expects no card now"}
    swapped = {"id": 9, "kind": "shoe_reset", "card": None, "options": ["void", "deck_check"],
               "text": "the shoe was swapped or reset (serial 0042 after 0041): its cards are not the shoe counted so "
                       "far. Void the round in play, or deck check the new shoe (shuffle it) before any of its cards "
                       "is dealt"}
    return [camera, misdeal, swapped]


def with_camera(state: dict[str, Any]) -> tuple[dict[str, Any], set[str]]:
    """`state` with the camera seeing the round in play's face-up cards and the last round's, still lying on the
    table (its tracker reports a card gone only some frames after it is picked up), and an open alert; and the
    cards its camera panel must list: the round in play's."""
    now = cards_in(state["game"], True)
    before = cards_in(state.get("last_round") or {}, True) - now
    seen = [{"card": c, "zone": "spot 1", "certain": True, "face_down": False} for c in sorted(before) + sorted(now)]
    only = {**state["dealer_only"], "camera": seen, "alerts": [_alert(sorted(now)[0] if now else None)]}
    return {**state, "dealer_only": only}, now


async def sized(page: Any, name: str, problems: dict[str, list[str]], folder: Path, sizes: Any = SIZES) -> None:
    """The page checked at each size (the smallest last), a screenshot of each in `folder`/dealer-*."""
    await fit(page, DEALER_CHECK, f"dealer {name}", sizes, problems, folder)


@pytest.fixture(scope="module")
def checked(tmp_path_factory: pytest.TempPathFactory, shots: Path) -> tuple[dict[str, list[str]], dict[str, Any]]:
    """One pass of the browser over every game's states and sizes: (what does not fit, by game, state and size;
    the camera panels that list other cards than the round in play's: (listed not in play, in play not listed))."""
    tmp_path = tmp_path_factory.mktemp("dealer")

    async def main() -> tuple[dict[str, list[str]], dict[str, Any]]:
        recorded = {g: await recorded_views(tmp_path / g, g.replace("-", "_"), seed=SEEDS.get(g, 3), audience="dealer")
                    for g in GAMES}
        problems: dict[str, list[str]] = {}
        camera: dict[str, Any] = {}
        checked: set[str] = set()
        replay = Replay()
        await replay.start()
        try:
            async with browser() as ctx:
                page = await ctx.new_page()
                for game in GAMES:
                    info, views = recorded[game]
                    table = info["id"]
                    for n, (label, state) in enumerate(dealer_states(views).items()):
                        state, now = with_camera(state)
                        seq = await replay.show(table, info, state)
                        if n == 0:
                            await page.set_viewport_size({"width": SIZES[0][0], "height": SIZES[0][1]})
                            await page.goto(f"http://127.0.0.1:{replay.port}/dealer/{table}")
                        await wait_for(page, f"Number(document.body.dataset.seq) === {seq}")
                        shown = set(await page.evaluate(
                            "[...document.querySelectorAll('.camera [data-seen]')].map((e) => e.dataset.seen)"))
                        if shown != now:
                            camera[f"{game} {label}"] = (sorted(shown - now), sorted(now - shown))
                        checked.add(f"{game} {label}")
                        await sized(page, f"{game}-{label}", problems, shots,
                                    SIZES if game in EVERY_SIZE_GAMES and label in EVERY_SIZE + ("split",) else ENDS)
                # a crowded table: fourteen spots' meters and forty rounds go into pages and the newest rounds
                info, views = recorded["texas-holdem"]
                state, _ = with_camera(views[-1])
                spot = {"rounds": 120, "handle": 1_234_567, "paid": 1_200_000, "house_win": 34_567}
                only = {**state["dealer_only"], "meters": {**state["dealer_only"]["meters"],
                                                           "spots": {str(i): spot for i in range(1, 15)}}}
                rounds = [{"round": r, "stakes": 12_345, "returned": 12_000, "house_win": 345} for r in range(1, 41)]
                seq = await replay.show(info["id"], info, {**state, "dealer_only": only, "history": rounds})
                await page.set_viewport_size({"width": SIZES[0][0], "height": SIZES[0][1]})
                await page.goto(f"http://127.0.0.1:{replay.port}/dealer/{info['id']}")
                await wait_for(page, f"Number(document.body.dataset.seq) === {seq}")
                await sized(page, "crowded", problems, shots)
                pages = await page.evaluate("[document.querySelector('.meters').dataset.pages, "
                                            "document.querySelector('.spot-pages').textContent, "
                                            "document.querySelectorAll('.history tr[data-round]:not([hidden])').length]")
                if int(pages[0]) < 2 or not pages[1].startswith("spots 1\u2013") or pages[1].endswith(" of 1") \
                        or pages[2] < 1:
                    problems["crowded 800x480 pages"] = [str(pages)]
                # three alerts at once (the camera's with its named reassigns, a misdeal, a swapped shoe): every
                # alert's buttons in view at every size, the felt made room for them
                for game in ("blackjack", "texas-holdem"):
                    info, views = recorded[game]
                    state, now = with_camera(states(views)["play"])
                    only = {**state["dealer_only"], "alerts": many_alerts(sorted(now))}
                    seq = await replay.show(info["id"], info, {**state, "dealer_only": only})
                    await page.set_viewport_size({"width": SIZES[0][0], "height": SIZES[0][1]})
                    await page.goto(f"http://127.0.0.1:{replay.port}/dealer/{info['id']}")
                    await wait_for(page, f"Number(document.body.dataset.seq) === {seq}")
                    await sized(page, f"{game}-alerts", problems, shots)
                    buttons = await page.evaluate("document.querySelectorAll('.alert button').length")
                    if buttons != 3 + len(only["alerts"][0]["reassign"]) + 2 + 2:
                        problems[f"{game} alerts buttons"] = [f"{buttons} buttons"]
        finally:
            await replay.close()
        assert "blackjack split" in checked, "the blackjack demo split no pair: pick another seed"
        return problems, camera

    return run(main(), timeout=300)


def test_dealer_page_fits_at_every_size(checked: tuple[dict[str, list[str]], dict[str, Any]]) -> None:
    problems = checked[0]
    assert problems == {}, report(problems)


def test_dealer_camera_panel_shows_the_round_in_play(checked: tuple[dict[str, list[str]], dict[str, Any]]) -> None:
    assert checked[1] == {}, f"camera panel (listed but not in play, in play but not listed): {checked[1]}"


def test_every_dealer_check_left_its_screenshot(checked: tuple[dict[str, list[str]], dict[str, Any]]) -> None:
    assert shots_wrong("dealer-") == []

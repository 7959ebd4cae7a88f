"""Every game's player page in real Chromium (issue 38): a layout of its own, and no scrolling, no text outside the viewport or cut off, no overlapping text, no raw data keys, no text under 18 px at 1080p, no burn card on hold'em's; in the states a round passes through (bets open, cards being dealt, the round in play, settled, a few rounds in) at 1920x1080 and 800x480, the round in play and the last view at 1280x720 and 1024x600 too, its spot's screen in every state at 1920x1080 and 800x480; from one demo of each game, its views replayed to the pages state by state; screenshots in the artifacts folder (screens/fit-*: $CROUPIER_ARTIFACTS, else the pytest run's temporary folder)."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest

from controller.games import game_names
from controller.screens.browser import browser, missing, wait_for
from controller.screens.roads import ask, derived_roads
from tests.screens_fit_helpers import CHECK, ENDS, SIZES, fit, report, shots, shots_wrong  # noqa: F401 (shots: a fixture)
from tests.screens_fit_helpers import settled as settled_frame
from tests.screens_helpers import Replay, recorded_views, run

pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(missing() is not None, reason=f"no browser for the screens tests: {missing()}")]

# (the checks, the sizes and the screenshots are shared with the dealer's and the cabinets' fit tests)
EVERY_SIZE = ("play", "last")   # the states checked at every size; the others at the largest and the smallest


def _cards(view: dict[str, Any]) -> int:
    return str(view["game"]).count("'up': True")


def states(views: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """The states a page is checked in, those a round passes through (each the game has): bets open with the bets
    placed ("betting"), cards being dealt ("dealing", halfway through a deal), the round in play with the most cards
    up, a decision when there is one ("play"), settled with its results ("settled"), and the last view, a few rounds
    in ("last": the last round settled, or the next one under way)."""
    of = lambda phase: [v for v in views if v["game"].get("phase") == phase]  # noqa: E731
    out: dict[str, dict[str, Any]] = {}
    betting = of("betting")
    if betting:
        out["betting"] = max(reversed(betting), key=lambda v: len(v["game"].get("bets", [])))
    dealing = [v for v in of("dealing") if _cards(v)] or of("dealing")   # (big two deals every card face down)
    if dealing:
        out["dealing"] = dealing[len(dealing) // 2]
    playing = [v for v in views if v["game"].get("phase") not in ("betting", "idle", None)]
    deciding = [v for v in playing if v["game"].get("phase") == "deciding"] or playing or views
    out["play"] = max(deciding, key=_cards)
    if of("settling"):
        out["settled"] = of("settling")[-1]
    out["last"] = views[-1]
    return out


# The spots on the felt: how many there are, and how many lie whole inside the viewport and inside whatever clips them.
SPOTS_IN_VIEW = """() => {
  const spots = [...document.querySelectorAll(".felt .spot")];
  const whole = spots.filter((spot) => {
    const r = spot.getBoundingClientRect();
    if (!r.width || r.left < -0.5 || r.top < -0.5 || r.right > innerWidth + 0.5 || r.bottom > innerHeight + 0.5) return false;
    for (let a = spot.parentElement; a && a !== document.body; a = a.parentElement) {
      const s = getComputedStyle(a), b = a.getBoundingClientRect();
      if (s.overflowX === "visible" && s.overflowY === "visible") continue;
      if (r.left < b.left - 1 || r.right > b.right + 1 || r.top < b.top - 1 || r.bottom > b.bottom + 1) return false;
    }
    return true;
  });
  return [spots.length, whole.length];
}"""


def crowded_baccarat(info: dict[str, Any], views: list[dict[str, Any]]) -> tuple[dict[str, Any], dict[str, Any]]:
    """Baccarat's fullest felt: a coup being paid with every box of every spot bet at its limit; and the next
    round's bets open with that coup settled beside it (each box's result, the banker's with its commission)."""
    limits = info["rules"]["limits"]
    bets = [{"spot": s, "box": box, "amount": limits[box]["max"]} for s in range(1, info["spots"] + 1)
            for box in ("banker", "player", "tie")]
    paying = [v for v in views if v["game"].get("phase") == "settling"][-1]
    full = {**paying, "game": {**paying["game"], "bets": bets}}
    last = views[-1]
    assert last["last_round"] and last["history"], "the demo settled no round"
    results = [{"spot": b["spot"], "box": b["box"], "stake": b["amount"], "outcome": "win" if b["box"] == "banker" else "lose",
                "paid": b["amount"] if b["box"] == "banker" else 0, "commission": b["amount"] // 20 if b["box"] == "banker" else 0,
                "returned": 2 * b["amount"] - b["amount"] // 20 if b["box"] == "banker" else 0, "line": "banker wins"}
               for b in bets]
    settled = {**last, "last_round": {**last["last_round"], "bets": bets},
               "history": [*last["history"][:-1], {**last["history"][-1], "results": results}]}
    return full, settled


@pytest.fixture(scope="module")
def checked(tmp_path_factory: pytest.TempPathFactory, shots: Path) -> dict[str, Any]:
    """One browser over every game's demo, its pages stepped from state to state: what does not fit, by page, game,
    state and size ("player" and "spot"); what hold'em's page drew of a view that carried burns; the shoes whose
    page roads differ from roads.py's."""
    tmp_path = tmp_path_factory.mktemp("fit")
    games = game_names()

    async def main() -> dict[str, Any]:
        recorded = {}
        for game in games:
            recorded[game] = await recorded_views(tmp_path / game, game.replace("-", "_"))
        big_baccarat = await recorded_views(tmp_path / "baccarat-14", "baccarat", rounds=2, rules={"spots": 14})
        problems: dict[str, dict[str, list[str]]] = {"player": {}, "spot": {}}
        out: dict[str, Any] = {"problems": problems, "roads_differ": [], "baccarat_spots": {},
                               "baccarat_configured": big_baccarat[0]["spots"]}
        replay = Replay()
        await replay.start()
        try:
            async with browser() as ctx:
                page, spot_page = await ctx.new_page(), await ctx.new_page()
                for game in games:
                    info, views = recorded[game]
                    table = info["id"]
                    todo = states(views)
                    # the spot's own screen: of the first spot with a bet in the round in play
                    spot = min([b["spot"] for b in todo["play"]["game"].get("bets", [])] or [1])
                    for n, (label, state) in enumerate(todo.items()):
                        seq = await replay.show(table, info, state)
                        for p, url in ((page, f"/table/{table}"), (spot_page, f"/table/{table}/spot/{spot}")):
                            await p.bring_to_front()
                            if n == 0:
                                await p.set_viewport_size({"width": SIZES[0][0], "height": SIZES[0][1]})
                                await p.goto(f"http://127.0.0.1:{replay.port}{url}")
                            await wait_for(p, f"Number(document.body.dataset.seq) === {seq}")
                        await fit(page, CHECK, f"fit {game} {label}", SIZES if label in EVERY_SIZE else ENDS,
                                  problems["player"], shots)
                        await fit(spot_page, CHECK, f"fit {game} spot {label}", ENDS, problems["spot"], shots)
                # baccarat at its largest table (14 spots), every box of every spot bet at its limit, then settled:
                # how many spots lie whole in view, on the player's and the dealer's page, at each size
                info, views = big_baccarat
                table = info["id"]
                full, settled = crowded_baccarat(info, views)
                for label, state in (("bets", full), ("settled", settled)):
                    seq = await replay.show(table, info, state)
                    for p, url in ((page, f"/table/{table}"), (page, f"/dealer/{table}")):
                        await p.bring_to_front()
                        await p.goto(f"http://127.0.0.1:{replay.port}{url}")
                        await wait_for(p, f"Number(document.body.dataset.seq) === {seq}")
                        for w, h in SIZES:
                            await p.set_viewport_size({"width": w, "height": h})
                            await settled_frame(p)
                            out["baccarat_spots"][f"{url.split('/')[1]} {label} {w}x{h}"] = await p.evaluate(SPOTS_IN_VIEW)
                        if url.startswith("/table/"):
                            await fit(p, CHECK, f"fit baccarat-14 {label}", SIZES, problems["player"], shots)
                await page.set_viewport_size({"width": SIZES[0][0], "height": SIZES[0][1]})

                # hold'em's page draws no burn, even from a view that carried them (as views did before issue 38):
                # the cards on the felt are the board's and the seats' only
                info, views = recorded["texas-holdem"]
                state = states(views)["play"]
                game = state["game"]
                dealt = len(game["board"]) + sum(len(s.get("cards", [])) for s in game["seats"])
                assert "burns" not in game and len(game["board"]) >= 3
                burns = [{"card": None, "up": False}] * 3
                seq = await replay.show(info["id"], info, {**state, "game": {**game, "burns": burns}})
                await page.bring_to_front()
                await page.goto(f"http://127.0.0.1:{replay.port}/table/{info['id']}")
                await wait_for(page, f"Number(document.body.dataset.seq) === {seq}")
                out["holdem"] = (dealt, await page.evaluate("document.querySelectorAll('.felt .card').length"),
                                 await page.evaluate("/burn/i.test(document.getElementById('app').innerHTML)"))

                # the page's derived roads and ask are roads.py's, on random shoes
                rng = random.Random(38)
                for _ in range(200):
                    shoe = [rng.choice(("banker", "banker", "player", "player", "tie"))
                            for _ in range(rng.randrange(90))]
                    got = await page.evaluate("(w) => typeof Felt.derivedRoads === 'function' && "
                                              "[Felt.derivedRoads(w), Felt.askRoads(w)]", shoe)
                    if got != [derived_roads(shoe), ask(shoe)]:
                        out["roads_differ"].append(shoe)
        finally:
            await replay.close()
        return out

    return run(main(), timeout=600)


def test_every_game_fits_the_player_page_at_every_size(checked: dict[str, Any]) -> None:
    problems = checked["problems"]["player"]
    assert problems == {}, report(problems)


def test_every_game_fits_its_spot_page_in_every_state(checked: dict[str, Any]) -> None:
    problems = checked["problems"]["spot"]
    assert problems == {}, report(problems)


def test_baccarat_shows_every_configured_spot_whole_at_every_size(checked: dict[str, Any]) -> None:
    """14 spots configured (the most the rules allow), three bets on each, then settled: 14 on the page, each whole in
    view, on the player's and the dealer's page at every size (a 800x480 panel showed 12)."""
    n = checked["baccarat_configured"]
    assert n == 14
    assert checked["baccarat_spots"] and {k: v for k, v in checked["baccarat_spots"].items() if v != [n, n]} == {}


def test_holdem_page_draws_no_burn_card(checked: dict[str, Any]) -> None:
    dealt, drawn, burn = checked["holdem"]
    assert drawn == dealt and not burn


def test_page_roads_are_roads_py_s(checked: dict[str, Any]) -> None:
    assert checked["roads_differ"] == []


def test_every_page_check_left_its_screenshot(checked: dict[str, Any]) -> None:
    assert shots_wrong("fit-") == []

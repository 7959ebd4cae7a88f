"""The cabinet screen and the attendant page in real Chromium (issue 38, point 2): no scrolling, no text outside the
viewport or cut off, no overlapping text, no raw keys, text (the paytable's symbol names too) at least 18 px at 1080p,
reels, meters, paytable rows and lockup buttons whole in view. Three titles are stepped through the states a cabinet
passes through (idle, credits in, reels turning, a win shown, a door open, a hand pay pending), each at 1920x1080
and 800x480, with the win and the hand pay at 1280x720 and 1024x600 too; every other title with a win shown at all
four sizes. One simulated cabinet per title, one browser; screenshots in the artifacts folder (screens/cabinet-*,
screens/attendant-*: $CROUPIER_ARTIFACTS, else the pytest run's temporary folder)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from controller.bus import Role
from controller.cabinet import ATTENDANT, PLAYER
from controller.screens.browser import browser, missing, wait_for
from controller.slots import all_titles, get_title
from tests.cabinet_helpers import RUNNING, Script, cabinet_config, started, stops_for
from tests.cabinet_helpers import run as run_stopping
from tests.screens_fit_helpers import CABINET_CHECK, ENDS, SIZES, fit, report, shots, shots_wrong  # noqa: F401 (shots: a fixture)
from tests.screens_helpers import TOKEN, bridged

pytestmark = [pytest.mark.skipif(missing() is not None, reason=f"no browser for the screens tests: {missing()}"),
              pytest.mark.slow]  # a real browser

TITLES = [t.id for t in all_titles()]
# Stepped through every state: several paytables (tabs), a progressive with a feature meter at a dollar a credit, five
# paylines of five coins. Every other title is checked with a win shown, at every size.
FULL = ("operation-myow", "crazy-dragon", "high-rollers")
IDLE_LINES: dict[str, list[str]] = {}   # each title's centre line on its screen before the first game
STATES = ("idle", "credits", "turning", "win", "door", "hand-pay")
# The attendant's recall of the winning game: each paid line's row text, beside the names of the symbols the game's
# record put on that line (the record keeps their codes) and those codes.
RECALL_LINES: dict[str, list[dict[str, Any]]] = {}
RECALL_LINES_JS = """() => {
  const rows = [...document.querySelectorAll('.recall-page tr')].filter((tr) => /^Line /.test(tr.cells[0].textContent));
  return Screen.state.reels.line_wins.map((w, i) => ({text: rows[i] ? rows[i].cells[1].textContent : null,
    names: w.symbols.map((c) => Slots.info.symbols[c].name), codes: w.symbols}));
}"""
EVERY_SIZE = ("win", "hand-pay")   # the states checked at every size; the others at the largest and the smallest


def winning_stops(title_id: str) -> list[int]:
    """Stops that put the smallest three-of-a-kind of the first paytable on the centre line (a line win that rolls
    onto the credit meter, no hand pay)."""
    t = get_title(title_id)
    rows = [r for r in t.paytables[0].rows if r.pattern.positions and
            all(len(m.symbols) == 1 and not m.is_any for m in r.pattern.positions)]
    row = min(rows, key=lambda r: r.pays[-1])
    return stops_for(t, *(next(iter(m.symbols)) for m in row.pattern.positions))


async def _cabinet_title(pages: tuple[Any, Any], tmp: Path, title: str, problems: dict[str, list[str]],
                         folder: Path) -> None:
    """One cabinet of `title` with screen reels, its screen and its attendant page: stepped through STATES (a title
    in FULL), or to a win shown."""
    full = title in FULL
    pool = {"progressive": {"mode": "standalone"}} if get_title(title).progressive else {}
    cfg = cabinet_config(tmp, title, panel="screen", spin_seconds=1.0 if full else 0.0, hand_pay_limit_cents=100, **pool)
    cab = await started(cfg, rng=Script(winning_stops(title), seed=5))
    try:
        async with bridged(_source(cfg), cfg.bus.heartbeat) as bridge:
            screen, attendant = pages
            await screen.goto(f"http://127.0.0.1:{bridge.port}/cabinet/{cfg.cabinet_id}")
            await attendant.goto(f"http://127.0.0.1:{bridge.port}/cabinet/{cfg.cabinet_id}/attendant?token={TOKEN}")

            async def check(state: str) -> None:
                if not full and state != "win":
                    return
                for page, name in ((screen, "cabinet"), (attendant, "attendant")):
                    await page.bring_to_front()
                    if state != "turning":
                        await wait_for(page, f"Number(document.body.dataset.seq) >= {cab.state.seq}")
                    sizes = SIZES if state in EVERY_SIZE else ENDS
                    await fit(page, CABINET_CHECK, f"{name} {title} {state}", sizes, problems, folder)
                    await page.set_viewport_size({"width": SIZES[0][0], "height": SIZES[0][1]})

            await screen.bring_to_front()
            await wait_for(screen, "document.querySelector('.reel .cell')")
            IDLE_LINES[title] = await screen.evaluate(
                "[...document.querySelectorAll('.reel')].map((r) => r.querySelectorAll('.cell')[1].dataset.symbol)")
            await check("idle")
            assert (await cab.command(ATTENDANT, "add_credits", {"credits": 200}))["ok"]
            await check("credits")
            # a spin: the screen's reels turn (held still while they are checked), then rest on the scripted win
            assert (await cab.command(PLAYER, "max_bet", {}))["ok"]
            if full:
                await wait_for(screen, "Number(document.body.dataset.turns || 0) >= 1")
                await screen.evaluate("document.getAnimations().forEach((a) => a.pause())")
                await check("turning")
                # the page in front: a page in the background runs no animation frames, and its reels rest only in one
                await screen.bring_to_front()
                await screen.evaluate("document.getAnimations().forEach((a) => a.finish())")
            await asyncio.wait_for(cab.shown.wait(), 10)
            await wait_for(screen, f"Number(document.querySelector('.reels').dataset.game) === {cab.state.games} && "
                                   "!document.querySelector('.paylines').classList.contains('hidden')")
            assert cab.state.last_win > 0, f"{title}: the scripted stops won nothing"
            await check("win")
            await wait_for(attendant, f"Number((document.querySelector('.recall-page') || {{dataset: {{}}}}).dataset.game) "
                                      f"=== {cab.state.games}")
            RECALL_LINES[title] = await attendant.evaluate(RECALL_LINES_JS)
            if not full:
                return
            # a tilt: the main door opened, then shut (whatever it locked cleared by the attendant)
            cab.panel.sim.open_door("main")
            assert await cab.wait_for(lambda s: s.doors_open == ("main",), 5)
            await check("door")
            cab.panel.sim.close_door("main")
            assert await cab.wait_for(lambda s: not s.doors_open, 5)
            for lockup in cab.state.lockups:
                role = ATTENDANT if "attendant" in lockup.clear_by else Role("ops")
                assert (await cab.command(role, "clear", {"lockup": lockup.id, "action": lockup.options[0]}))["ok"]
            # a cash out over the hand-pay limit: both pages say so, the attendant's with its buttons
            assert (await cab.command(PLAYER, "cash_out", {}))["ok"]
            assert cab.state.lockups and cab.state.lockups[0].kind == "hand_pay"
            await wait_for(attendant, "document.querySelector('.alert button')")
            await check("hand-pay")
    finally:
        RUNNING.remove(cab)
        await cab.stop()


def _source(cfg: Any) -> Any:
    from controller.screens.bridge import source_for_cabinet

    return source_for_cabinet(cfg)


@pytest.fixture(scope="module")
def checked(tmp_path_factory: pytest.TempPathFactory, shots: Path) -> dict[str, list[str]]:
    """One browser over every title's cabinet, stepped through STATES: what does not fit, keyed
    "<page> <title> <state> <W>x<H>"."""
    tmp = tmp_path_factory.mktemp("cabinets")
    problems: dict[str, list[str]] = {}

    async def main() -> None:
        async with browser() as ctx:
            pages = (await ctx.new_page(), await ctx.new_page())
            for title in TITLES:
                await _cabinet_title(pages, tmp / title, title, problems, shots)

    run_stopping(main(), timeout=600)
    return problems


@pytest.mark.parametrize("page", ["cabinet", "attendant"])
@pytest.mark.parametrize("size", [f"{w}x{h}" for w, h in SIZES])
def test_cabinet_pages_fit_in_every_state(checked: dict[str, list[str]], page: str, size: str) -> None:
    mine = {k: v for k, v in checked.items() if k.startswith(page + " ") and k.endswith(" " + size)}
    assert mine == {}, report(mine)


def test_every_cabinet_check_left_its_screenshot(checked: dict[str, list[str]]) -> None:
    assert shots_wrong("cabinet-") == [] and shots_wrong("attendant-") == []


def test_a_cabinet_before_its_first_game_shows_no_three_of_a_kind_on_the_line(checked: dict[str, list[str]]) -> None:
    """(the strips often start alike: a cabinet showing a line it never paid would mislead a player)"""
    assert set(IDLE_LINES) == set(TITLES)
    assert {t: line for t, line in IDLE_LINES.items() if len(set(line)) == 1} == {}


def test_attendant_recall_names_the_symbols_on_each_paid_line(checked: dict[str, list[str]]) -> None:
    """The recall says "Single Bar, Single Bar, Single Bar: three Single Bar pays 30", never the record's "B1 B1 B1"."""
    assert set(RECALL_LINES) == set(TITLES)
    wrong = {}
    for title, lines in RECALL_LINES.items():
        for line in lines:
            words = set((line["text"] or "").replace(",", " ").replace(":", " ").split())
            if line["text"] is None or not all(n in line["text"] for n in line["names"]) or \
                    words & {c for c, n in zip(line["codes"], line["names"]) if c.upper() != n.upper()}:
                wrong[title] = line
    assert all(RECALL_LINES.values()) and wrong == {}

"""The player page patches its DOM in place: a card dealt to a spot adds that card's node and keeps every other node (each spot, each card already there), and the cards' faces live once in the page's sprite, with no card identity there."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from controller.autoplay import Autoplay
from controller.rng import SeededRng
from controller.screens.browser import browser, missing, wait_for
from tests.screens_helpers import run, stack
from tests.table_helpers import table_config

pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(missing() is not None, reason=f"no browser for the screens tests: {missing()}")]

# Every spot and card node of the felt tagged with a number (a JS property: it lives as long as the node does).
MARK = "() => { let n = 0; for (const e of document.querySelectorAll('.felt .spot, .felt .card')) e._kept = ++n; }"
READ = """() => ({
  seq: Number(document.body.dataset.seq),
  spots: [...document.querySelectorAll('.felt .spot')].map(s => s._kept || 0),
  hands: [...document.querySelectorAll('.felt .hand')].map(h => [h.dataset.to,
    [...h.querySelectorAll('.card')].map(c => [c.dataset.card, c._kept || 0])]),
  sprite: document.querySelectorAll('#card-sprite [data-card], #card-sprite [aria-label]').length,
  faces: document.querySelectorAll('#card-sprite symbol[id^="card-"]').length,
  uses: [...document.querySelectorAll('.felt .card[data-up="true"]')].every(c =>
    c.querySelector('use').getAttribute('href') === `#card-${c.dataset.card}-2`),
})"""


def _grew(before: dict[str, Any], after: dict[str, Any]) -> bool:
    """The update only added cards: the same hands, each holding at least what it held."""
    b, a = before["hands"], after["hands"]
    return len(a) == len(b) and all(x[0] == y[0] and len(y[1]) >= len(x[1]) for x, y in zip(b, a)) \
        and sum(len(y[1]) for y in a) > sum(len(x[1]) for x in b)


def test_a_dealt_card_adds_its_node_and_keeps_the_others(tmp_path: Path) -> None:
    cfg = table_config(tmp_path, "blackjack", seed=21)

    async def main() -> None:
        async with stack(cfg) as (table, bridge), browser() as ctx:
            page = await ctx.new_page()
            await page.set_viewport_size({"width": 1920, "height": 1080})
            await page.goto(f"http://127.0.0.1:{bridge.port}/table/{cfg.table_id}")
            await wait_for(page, "window.croupier.snapshots > 0")
            autoplay = Autoplay(table, SeededRng(5))
            checked = 0
            for _ in range(400):
                await page.evaluate(MARK)
                before = await page.evaluate(READ)
                seq = table.state.seq
                await autoplay.step()
                if table.state.seq == seq and not await table.wait_change(seq, 5):
                    continue
                await wait_for(page, f"Number(document.body.dataset.seq) >= {table.state.seq}")
                after = await page.evaluate(READ)
                if not _grew(before, after) or after["seq"] != table.state.seq:
                    continue
                assert all(after["spots"]), "a spot's node was re-created"
                for (to, was), (_, now) in zip(before["hands"], after["hands"]):
                    kept = now[:len(was)]
                    assert [m for _, m in kept] == [m for _, m in was], f"{to}: a card's node was re-created"
                    assert all(c == d or not c for (c, _), (d, _) in zip(was, kept)), f"{to}: a face changed"
                    assert all(m == 0 for _, m in now[len(was):]), f"{to}: the new card is no new node"
                assert after["sprite"] == 0 and after["faces"] == 53 and after["uses"]
                checked += 1
                if checked >= 5:
                    return
            raise AssertionError(f"only {checked} updates dealt cards")

    run(main())

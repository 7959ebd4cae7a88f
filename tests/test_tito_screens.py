"""The attendant page with notes and tickets, in Chromium: the validator's and printer's status, the last notes and tickets, a note put into the simulated validator by its button; and the page still fits (no scrolling, nothing cut off) at 1920x1080 and 800x480 with a ticket out and a printer warning showing."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from controller.cabinet import OPS, PLAYER, Cabinet
from controller.screens.bridge import source_for_cabinet
from controller.screens.browser import browser, missing, wait_for
from tests.cabinet_helpers import RUNNING, cabinet_config, run
from tests.screens_fit_helpers import CABINET_CHECK, fit, report, shots  # noqa: F401 (shots: a fixture)
from tests.screens_helpers import TOKEN, bridged
from tests.tito_fakes import FakePrinter, FakeTicketHost, FakeValidator

@dataclasses.dataclass(frozen=True)
class SimLine:
    port: str = "sim"
    simulated: bool = True


pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(missing() is not None, reason=f"no browser for the screens tests: {missing()}")]


def test_attendant_page_shows_devices_notes_and_tickets_and_fits(tmp_path: Path, shots: Path) -> None:  # noqa: F811
    cfg = cabinet_config(tmp_path, "frozen-assets", panel="screen", denomination=25, tito={"validation_id": 77})
    problems: dict[str, list[str]] = {}
    devices: dict[str, object] = {}

    async def main() -> None:
        cab = Cabinet(cfg)
        cab.validator_factory = lambda on: devices.setdefault("validator", FakeValidator(on))  # type: ignore[assignment]
        cab.printer_factory = lambda on: devices.setdefault("printer", FakePrinter(on))  # type: ignore[assignment]
        cab.ticket_host = FakeTicketHost(validate=False)
        RUNNING.append(cab)
        await cab.start()
        # the fakes stand for the simulated devices: the source a [validator] port = "sim" config makes
        source = source_for_cabinet(dataclasses.replace(cfg, validator=SimLine(), printer=SimLine()))
        async with bridged(source, cfg.bus.heartbeat) as bridge, browser() as ctx:
            page = await ctx.new_page()
            await page.set_viewport_size({"width": 1920, "height": 1080})
            await page.goto(f"http://127.0.0.1:{bridge.port}/cabinet/{cfg.cabinet_id}/attendant?token={TOKEN}")
            await wait_for(page, "document.querySelector('.tito [data-device=validator]')")
            assert await page.inner_text(".tito [data-device=validator]") == "Validator: ok"
            await page.click(".tito-sim button[data-command=insert_note]")  # Note $5.00
            assert await cab.wait_for(lambda s: s.credits == 20, 5)
            await wait_for(page, "document.querySelector('.tito-money tr[data-money=note]')")
            await cab.command(OPS, "add_credits", {"credits": 4})
            assert (await cab.command(PLAYER, "cash_out", {}))["result"]["via"] == "ticket"
            assert await cab.wait_for(lambda s: s.meters.tickets_out_cashable == 1, 5)
            devices["printer"].fault("paper_low")  # type: ignore[attr-defined]
            assert await cab.wait_for(lambda s: bool(s.device_faults), 5)
            await wait_for(page, "document.querySelector('.tito [data-device=printer].device-warning') && "
                                 "document.querySelector('.tito-money tr[data-money=ticket_out]')")
            assert await page.inner_text(".tito [data-device=printer]") == "Printer: paper low"
            rows = await page.eval_on_selector_all(".tito-money tr", "rs => rs.map(r => r.innerText.split('\\t')[0])")
            assert rows == ["Ticket out #1", "Note in"]
            await fit(page, CABINET_CHECK, "attendant tito", ((1920, 1080), (800, 480)), problems, shots)
        RUNNING.remove(cab)
        await cab.stop()

    run(main(), timeout=120)
    assert not problems, report(problems)

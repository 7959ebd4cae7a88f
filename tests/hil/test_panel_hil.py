"""Panel on a real Raspberry Pi: the pin map opens on GPIO, and a jumper from an output to an input carries
edges back through gpiozero's threads into the loop (set CROUPIER_HIL_PANEL=/path/to/map.toml, and for the
loopback CROUPIER_HIL_PANEL_LOOP=OUTPUT:SWITCH, a plain output wired to a door or switch input)."""

from __future__ import annotations

import asyncio
import os

import pytest

from tests.hil.conftest import hardware


def test_the_pin_map_opens_on_gpio() -> None:
    from drivers.panel import load_panel_config, open_panel

    config = load_panel_config(hardware("CROUPIER_HIL_PANEL", "panel pin map on a Raspberry Pi"))

    async def main() -> None:
        with open_panel(config) as panel:
            panel.start(lambda event: None)
            for lamp in config.lamps:
                panel.light(lamp.name, "on")
                panel.light(lamp.name, "off")
            if config.displays:
                for display in config.displays.displays:
                    panel.show(display.name, "8." * display.digits)

    asyncio.run(main())


def test_a_loopback_wire_reaches_the_loop() -> None:
    from drivers.panel import load_panel_config, open_panel

    config = load_panel_config(hardware("CROUPIER_HIL_PANEL", "panel pin map on a Raspberry Pi"))
    loop_spec = os.environ.get("CROUPIER_HIL_PANEL_LOOP")
    if not loop_spec or ":" not in loop_spec:
        pytest.skip("no loopback wire (set CROUPIER_HIL_PANEL_LOOP=OUTPUT:INPUT)")
    output, input_name = loop_spec.split(":", 1)

    async def main() -> list[str]:
        queue: asyncio.Queue = asyncio.Queue()
        with open_panel(config) as panel:
            panel.start(queue.put_nowait)
            while not queue.empty():  # a door found open at start
                queue.get_nowait()
            seen = []
            for _ in range(4):
                panel.set_output(output, not panel.lamp_level(output))
                seen.append(await asyncio.wait_for(queue.get(), 2.0))
            return seen

    events = asyncio.run(main())
    assert all(event.name == input_name for event in events)
    assert len({type(event) for event in events[0::2]}) == 1 and type(events[0]) is not type(events[1])

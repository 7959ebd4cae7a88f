"""The panel inside a real asyncio loop: pins driven from other threads, events delivered on the loop thread."""

from __future__ import annotations

import asyncio
import threading
from typing import Any, Iterator

import pytest
from gpiozero import Device
from gpiozero.pins.mock import MockPWMPin

from drivers.panel import (ButtonHeld, ButtonPressed, ButtonReleased, DoorOpened, PanelError, PulseCounted,
                           load_panel_config, open_panel, panel_config_from_mapping)
from tests.panel.test_config import CABINET, TABLE

TIMEOUT = 5.0  # generous: the machine is shared; nothing here waits this long when it works


def in_thread(action: Any) -> None:
    """Drive pins from another thread, as gpiozero's own edge threads do on a Pi."""
    thread = threading.Thread(target=action)
    thread.start()
    thread.join(TIMEOUT)
    assert not thread.is_alive()


@pytest.mark.slow
def test_events_cross_from_pin_threads_into_the_loop() -> None:
    async def main() -> list[tuple[Any, int]]:
        panel = open_panel(load_panel_config(TABLE).simulated())
        queue: asyncio.Queue = asyncio.Queue()
        loop_thread = threading.get_ident()
        got: list[tuple[Any, int]] = []
        with panel:
            panel.start(lambda event: (got.append((event, threading.get_ident())), queue.put_nowait(event)))
            in_thread(lambda: panel.sim.press("spot3_bet"))
            pressed = await asyncio.wait_for(queue.get(), TIMEOUT)
            held = await asyncio.wait_for(queue.get(), TIMEOUT)  # the one-second hold, in real time
            in_thread(lambda: panel.sim.release("spot3_bet"))
            released = await asyncio.wait_for(queue.get(), TIMEOUT)
            panel.light_spot(3, "betting_open")
            panel.show_spot(3, 1250)
            assert panel.sim.display("spot3_bet").text == "1250"
        assert isinstance(pressed, ButtonPressed) and str(pressed) == "spot 3 bet button pressed"
        assert isinstance(held, ButtonHeld)
        assert isinstance(released, ButtonReleased) and released.held and released.duration >= 1.0
        assert all(thread == loop_thread for _, thread in got)
        return got

    asyncio.run(main())


def test_a_cabinet_in_the_loop_counts_coins_and_sees_doors() -> None:
    async def main() -> None:
        panel = open_panel(load_panel_config(CABINET).simulated())
        queue: asyncio.Queue = asyncio.Queue()
        with panel:
            panel.start(queue.put_nowait)
            panel.sim.coins("coin_in", 2)
            counted = [await asyncio.wait_for(queue.get(), TIMEOUT) for _ in range(2)]
            in_thread(lambda: panel.sim.open_door("main"))
            opened = await asyncio.wait_for(queue.get(), TIMEOUT)
            panel.tower_light("door_open")
            panel.show("credit", 1250)
            assert panel.sim.display("credit").shown == "    1250"
        assert [type(e) for e in counted] == [PulseCounted, PulseCounted] and counted[1].count == 2
        assert opened == DoorOpened("main", opened.at) and str(opened) == "main door opened"

    asyncio.run(main())


def test_opening_needs_a_loop_or_a_clock() -> None:
    with pytest.raises(PanelError, match="inside the runtime's event loop"):
        open_panel(panel_config_from_mapping({"driver": "sim"}))


@pytest.fixture()
def default_factory() -> Iterator[None]:
    """Let gpiozero build its default pin factory afresh, then put things back (as gpiozero's tests do)."""
    saved = Device.pin_factory
    Device.pin_factory = None
    yield
    if Device.pin_factory is not None:
        Device.pin_factory.close()
    Device.pin_factory = saved


def test_gpio_driver_on_gpiozeros_mock_factory(monkeypatch: pytest.MonkeyPatch, default_factory: None) -> None:
    # driver = "gpio" uses gpiozero's default pin factory; GPIOZERO_PIN_FACTORY=mock makes it a MockFactory.
    monkeypatch.setenv("GPIOZERO_PIN_FACTORY", "mock")
    config = panel_config_from_mapping({"doors": {"main": 5}, "lamps": {"spin": {"pin": 18, "pwm": True}},
                                        "displays": {"chain": ["credit"]}})

    async def main() -> list[Any]:
        events: list[Any] = []
        with open_panel(config) as panel:
            panel.start(events.append)
            panel.light("spin", "on")
            panel.show("credit", 7)
            assert Device.pin_factory.pin(18, pin_class=MockPWMPin).state == 1.0  # a PWM pin, as wired
            with pytest.raises(PanelError, match="not simulated"):
                panel.sim
        return events

    # Nobody shuts the door of a bare mock pin: its pull-up reads "open", and the panel says so.
    assert [str(e) for e in asyncio.run(main())] == ["main door opened"]


def test_gpio_driver_without_gpio(monkeypatch: pytest.MonkeyPatch, default_factory: None) -> None:
    monkeypatch.setenv("GPIOZERO_PIN_FACTORY", "no_such_factory")
    loop = asyncio.new_event_loop()
    try:
        with pytest.raises(PanelError, match='no GPIO here .*driver = "sim"'):
            open_panel(panel_config_from_mapping({}), loop=loop)
    finally:
        loop.close()

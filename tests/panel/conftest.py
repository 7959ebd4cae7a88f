"""Fixtures for panel tests: a ManualClock, and simulated panels built from small pin maps on it."""

from __future__ import annotations

from typing import Any, Callable, Iterator

import pytest

from drivers.panel import ManualClock, Panel, PanelEvent, open_panel, panel_config_from_mapping


class Rig:
    """A simulated panel on a manual clock, with the events it reported."""

    def __init__(self, panel: Panel, clock: ManualClock, events: list[PanelEvent]) -> None:
        self.panel, self.clock, self.events = panel, clock, events
        self.sim = panel.sim

    def pins(self, *names: str) -> list[Any]:
        """Mock pins ("lamps.a", ...) with their recorded history starting now."""
        pins = [self.sim.pin(name) for name in names]
        for pin in pins:
            pin.clear_states()
        return pins

    def words(self) -> list[str]:
        return [str(event) for event in self.events]

    def take(self) -> list[PanelEvent]:
        taken = list(self.events)
        self.events.clear()
        return taken


@pytest.fixture()
def clock() -> ManualClock:
    return ManualClock()


@pytest.fixture()
def rig(clock: ManualClock) -> Iterator[Callable[..., Rig]]:
    """rig(mapping) -> a started simulated panel for that [panel] table."""
    opened: list[Panel] = []

    def make(mapping: dict[str, Any], *, start: bool = True, before_start: Callable[[Panel], None] | None = None) -> Rig:
        config = panel_config_from_mapping({"driver": "sim", **mapping})
        panel = open_panel(config, clock=clock)
        opened.append(panel)
        events: list[PanelEvent] = []
        if before_start is not None:
            before_start(panel)
        if start:
            panel.start(events.append)
        return Rig(panel, clock, events)

    yield make
    for panel in opened:
        panel.close()

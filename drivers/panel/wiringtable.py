"""The pin map's wiring table: every wire (header pin, GPIO, device, how it is connected), as `croupier panel-test --wiring` prints it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from drivers.panel.header import PHYSICAL

if TYPE_CHECKING:
    from drivers.panel.config import PanelConfig

__all__ = ["WiringRow", "wiring_rows", "wiring_markdown"]


@dataclass(frozen=True)
class WiringRow:
    """One wire: header pin, GPIO, device and how it is connected."""

    gpio: int
    section: str
    name: str
    wiring: str

    @property
    def device(self) -> str:
        return f"{self.section}.{self.name}"

    @property
    def physical(self) -> int:
        return PHYSICAL[self.gpio]


def _input_wiring(pull: str, active_high: bool, what: str) -> str:
    pull_text = {"up": "pull-up", "down": "pull-down", "none": "external pull"}[pull]
    return f"input, {pull_text}, {what} when {'high' if active_high else 'low'}"


def wiring_rows(config: PanelConfig) -> list[WiringRow]:
    """Every wire of the pin map, in the order the map lists them."""
    rows = []
    for b in config.buttons:
        rows.append(WiringRow(b.pin, "buttons", b.name, _input_wiring(b.pull, b.active_high, "pressed")))
    for s in config.switches:
        what = "open" if s.kind == "door" else "on"
        rows.append(WiringRow(s.pin, "doors" if s.kind == "door" else "switches", s.name,
                              _input_wiring(s.pull, s.active_high, what)))
    for p in config.pulses:
        rows.append(WiringRow(p.pin, "pulses", p.name,
                              _input_wiring(p.pull, p.active_high, "pulsing")
                              + f"; pulses {p.min_width * 1000:g}..{p.max_width * 1000:g} ms"))
    for lamp in config.lamps:
        kind = "PWM output" if lamp.pwm else "output"
        rows.append(WiringRow(lamp.pin, "lamps", lamp.name, f"{kind}, lit when {'high' if lamp.active_high else 'low'}"))
    for o in config.outputs:
        rows.append(WiringRow(o.pin, "outputs", o.name, f"output, on when {'high' if o.active_high else 'low'}"))
    if config.tower:
        for tier in config.tower.tiers:
            rows.append(WiringRow(tier.pin, "tower", tier.name,
                                  f"output, lit when {'high' if tier.active_high else 'low'}"))
    if config.reels:
        seen: set[tuple[int, str]] = set()
        for reel in config.reels.reels:
            for role, gpio, wiring in (
                    ("step", reel.step, "output, stepper driver STEP"),
                    ("dir", reel.dir, "output, stepper driver DIR"),
                    ("enable", reel.enable, f"output, stepper driver EN (active "
                                            f"{'high' if config.reels.enable_active_high else 'low'})"),
                    ("home", reel.home, _input_wiring(reel.home_pull, reel.home_active_high, "the index flag is in"))):
                shared = role in ("dir", "enable") and all(getattr(r, role) == gpio for r in config.reels.reels)
                if (gpio, role) in seen and shared:
                    continue  # one wire to every driver
                seen.add((gpio, role))
                rows.append(WiringRow(gpio, "reels", role if shared else f"{reel.name}.{role}", wiring))
    if config.displays:
        chain = config.displays
        bus = f"hardware {chain.bus.split('.')[0].upper()}" if chain.bus else "bit-banged SPI"
        for role, gpio, what in (("clock", chain.clock, "CLK"), ("data", chain.data, "DIN"),
                                 ("select", chain.select, "LOAD (CS)")):
            rows.append(WiringRow(gpio, "displays", role, f"output, MAX7219 {what}, {bus}"))
    return rows


def wiring_markdown(config: PanelConfig) -> str:
    """The wiring table as Markdown, sorted by header pin (what a technician follows with a cable in hand),
    then the display chain in order."""
    lines = ["| header pin | GPIO | device | wiring |", "|---:|---:|---|---|"]
    for row in sorted(wiring_rows(config), key=lambda r: r.physical):
        lines.append(f"| {row.physical} | GPIO{row.gpio} | {row.device} | {row.wiring} |")
    if config.displays:
        lines += ["", "| chip (1 = nearest the Pi) | display | digits | intensity |", "|---:|---|---:|---:|"]
        for display in config.displays.displays:
            lines.append(f"| {display.position + 1} | {display.name} | {display.digits} | {display.intensity} |")
    return "\n".join(lines) + "\n"

"""The panel's pin map: the [panel] TOML section parsed and validated into frozen dataclasses (pure, no gpiozero)."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Iterable, Mapping

from drivers.configreader import Section, read_toml
from drivers.panel.header import ALWAYS_RESERVED, BUSES, GPIO_MAX, HARDWARE_SPI, HEADER, pin_label
from drivers.panel.wiringtable import WiringRow, wiring_markdown, wiring_rows

__all__ = [
    "PanelConfigError", "PanelConfig", "ButtonSpec", "SwitchSpec", "PulseSpec", "LampSpec", "OutputSpec",
    "TowerSpec", "DisplaySpec", "ChainSpec", "ReelSpec", "ReelsSpec", "WiringRow",
    "load_panel_config", "panel_config_from_mapping", "parse_pin", "pin_label", "wiring_rows", "wiring_markdown",
    "DEFAULT_TOWER_CONDITIONS", "HEADER",
]


class PanelConfigError(ValueError):
    """A pin map that cannot be wired as written; the message names the key."""


DRIVERS = ("gpio", "sim")
PULLS = ("up", "down", "none")
LEVELS = ("low", "high")
SPOT_NAME = re.compile(r"^spot(\d+)_([a-z0-9_]+)$")
NAME = re.compile(r"^[a-z][a-z0-9_]*$")

# Tower light ("candle") conventions for the usual two-tier candle: the top tier is the white service light,
# the bottom tier the denomination colour. Service call lights the top steadily; an open door blinks the
# bottom; a hand pay blinks both slowly together; a tilt flashes both in turn. Highest priority first: for
# each tier, the first active condition that names it decides what it shows. Jurisdictions differ: a pin map
# may give its own [panel.tower.conditions].
DEFAULT_TOWER_CONDITIONS: tuple[tuple[str, tuple[tuple[str, str], ...]], ...] = (
    ("tilt", (("top", "flash"), ("bottom", "flash_alt"))),
    ("hand_pay", (("top", "slow_blink"), ("bottom", "slow_blink"))),
    ("door_open", (("bottom", "blink"),)),
    ("service", (("top", "on"),)),
)
# The looks a tower condition may use; lamps.py defines them (kept here so validation stays pure).
TOWER_LOOKS = ("off", "on", "slow_blink", "blink", "fast_blink", "flash", "flash_alt", "pulse")


@dataclass(frozen=True)
class ButtonSpec:
    """A push button: debounced, reports press, release and hold; a button held past `stuck` is reported stuck."""

    name: str
    pin: int
    pull: str = "up"
    active_high: bool = False
    spot: int | None = None
    role: str = ""
    bounce: float = 0.02
    hold: float = 1.0
    stuck: float = 30.0


@dataclass(frozen=True)
class SwitchSpec:
    """A door switch or key switch: debounced level with edge events."""

    name: str
    pin: int
    kind: str = "door"  # "door" or "switch"
    pull: str = "up"
    active_high: bool = True
    bounce: float = 0.05


@dataclass(frozen=True)
class PulseSpec:
    """A pulse line (coin acceptor, hopper coin-out sensor): each pulse is checked for width and spacing."""

    name: str
    pin: int
    pull: str = "up"
    active_high: bool = False
    glitch: float = 0.002
    min_width: float = 0.015
    max_width: float = 0.15
    min_gap: float = 0.015


@dataclass(frozen=True)
class LampSpec:
    """A lamp (or LED string) on one output; PWM-dimmable when `pwm` is set."""

    name: str
    pin: int
    pwm: bool = False
    active_high: bool = True
    brightness: float = 1.0
    spot: int | None = None
    role: str = ""


@dataclass(frozen=True)
class OutputSpec:
    """A plain output (hopper motor, electromechanical meter): on/off, or counted pulses of `pulse`/`gap` seconds."""

    name: str
    pin: int
    active_high: bool = True
    pulse: float = 0.05
    gap: float = 0.05


@dataclass(frozen=True)
class TowerSpec:
    """The tower light: its tiers (top first) and, highest priority first, what each condition shows on them."""

    tiers: tuple[LampSpec, ...]
    conditions: tuple[tuple[str, tuple[tuple[str, str], ...]], ...]


@dataclass(frozen=True)
class DisplaySpec:
    """One MAX7219 (up to 8 seven-segment digits) in a chain; `position` 0 is the chip nearest the Pi."""

    name: str
    position: int
    digits: int = 8
    intensity: int = 8
    spot: int | None = None
    role: str = ""


@dataclass(frozen=True)
class ChainSpec:
    """A daisy chain of MAX7219 displays on one SPI bus (hardware SPI0, or bit-banged on any three pins)."""

    clock: int
    data: int
    select: int
    bus: str | None  # "spi0"/"spi0.1" for the hardware bus, None when bit-banged
    refresh: float
    displays: tuple[DisplaySpec, ...]


@dataclass(frozen=True)
class ReelSpec:
    """One stepper-motor reel: a step/dir/enable driver (A4988-style) and an optical index sensor. Reels may
    share their dir and enable lines."""

    name: str
    step: int
    dir: int
    enable: int
    home: int
    home_pull: str = "up"
    home_active_high: bool = True     # a slotted sensor whose beam the index flag interrupts reads high


@dataclass(frozen=True)
class ReelsSpec:
    """Mechanical reels: their drivers and sensors, and how they turn.

    `steps` motor steps make one turn; the index flag enters the sensor `offset` steps before stop 0 sits on
    the payline; stop s sits there `offset + round(s * steps / stops)` steps past the index. A spin turns reel
    i at least `turns + i * stagger` turns at `rate` steps per second, so the reels stop left to right."""

    reels: tuple[ReelSpec, ...]
    stops: int
    steps: int = 200
    rate: float = 400.0
    turns: float = 1.0
    stagger: float = 0.5
    offset: int = 0
    enable_active_high: bool = False  # A4988/DRV8825: EN is active low
    forward_high: bool = True

    @property
    def half_symbol(self) -> float:
        """How far (in steps) a reel may miss its index before it is a mis-index."""
        return self.steps / self.stops / 2


@dataclass(frozen=True)
class PanelConfig:
    """A whole validated pin map."""

    name: str = ""
    driver: str = "gpio"
    reserve: tuple[str, ...] = ("uart",)
    buttons: tuple[ButtonSpec, ...] = ()
    switches: tuple[SwitchSpec, ...] = ()
    pulses: tuple[PulseSpec, ...] = ()
    lamps: tuple[LampSpec, ...] = ()
    outputs: tuple[OutputSpec, ...] = ()
    tower: TowerSpec | None = None
    displays: ChainSpec | None = None
    groups: tuple[tuple[str, tuple[str, ...]], ...] = ()
    reels: ReelsSpec | None = None
    source: str = field(default="", compare=False)

    @property
    def doors(self) -> tuple[SwitchSpec, ...]:
        return tuple(s for s in self.switches if s.kind == "door")

    def simulated(self) -> "PanelConfig":
        """The same pin map on simulated pins (what `--sim` runs)."""
        return replace(self, driver="sim")

    def group(self, name: str) -> tuple[str, ...]:
        """Lamp names of a group, in order; "all" is every lamp unless the pin map defines it."""
        for group, lamps in self.groups:
            if group == name:
                return lamps
        if name == "all":
            return tuple(lamp.name for lamp in self.lamps)
        raise KeyError(name)


def load_panel_config(path: str | Path) -> PanelConfig:
    """Read the [panel] section of a TOML file (a whole Croupier config, or a pin map on its own)."""
    path = Path(path)
    data = read_toml(path, PanelConfigError)
    if "panel" not in data:
        raise PanelConfigError(f"{path}: no [panel] section")
    config = panel_config_from_mapping(data["panel"])
    return replace(config, source=str(path))


def parse_pin(value: Any, where: str) -> int:
    """A pin as written in the map (17, "GPIO17", "BCM17", "BOARD11", "J8:11") -> its GPIO number."""
    if isinstance(value, bool) or not isinstance(value, (int, str)):
        raise PanelConfigError(f"{where}: a pin is a GPIO number or a name like \"GPIO17\" or \"BOARD11\", "
                               f"not {value!r}")
    text = str(value).strip().upper()
    if match := re.fullmatch(r"(?:GPIO|BCM)?(\d+)", text):
        gpio = int(match.group(1))
        if gpio > GPIO_MAX:
            raise PanelConfigError(f"{where}: GPIO{gpio} does not exist on the board (GPIO0..GPIO{GPIO_MAX})")
        return gpio
    if match := re.fullmatch(r"(?:BOARD|J8:)(\d+)", text):
        physical = int(match.group(1))
        what = HEADER.get(physical)
        if what is None:
            raise PanelConfigError(f"{where}: {value} does not exist on the board (header pins 1..40)")
        if isinstance(what, str):
            raise PanelConfigError(f"{where}: {value} is {what}, not a GPIO")
        return what
    raise PanelConfigError(f"{where}: {value!r} is not a pin name (use 17, \"GPIO17\" or \"BOARD11\")")


# ---------------------------------------------------------------------------------------------------------------
# Parsing

class _Table(Section):
    """A table of the pin map being read (drivers/configreader.py): every key must be read, so a misspelt key
    is an error, not a silent default."""

    error = PanelConfigError

    @staticmethod
    def not_a_table(data: Any, where: str) -> str:
        return f"{where}: expected a table, got {type(data).__name__}"

    def unknown(self, keys: list[str]) -> str:
        return f"{self.where}: unknown key {sorted(keys)[0]!r}"

    def number(self, key: str, default: float, low: float, high: float, *, integer: bool = False) -> Any:
        value = self.value(key, default)
        kind = "a whole number" if integer else "a number"
        if isinstance(value, bool) or not isinstance(value, (int, float)) or (integer and not isinstance(value, int)):
            raise PanelConfigError(f"{self.key(key)}: expected {kind}, got {value!r}")
        if not math.isfinite(value) or not low <= value <= high:
            raise PanelConfigError(f"{self.key(key)}: {value} is outside {low}..{high}")
        return value if integer else float(value)

    def flag(self, key: str, default: bool) -> bool:
        return bool(self.get(key, bool, default))

    def choice(self, key: str, default: str, choices: Iterable[str]) -> str:
        choices = tuple(choices)
        value = self.value(key, default)
        if value not in choices:
            raise PanelConfigError(f"{self.key(key)}: {value!r} is not one of {', '.join(choices)}")
        return str(value)

    def text(self, key: str, default: str) -> str:
        return str(self.get(key, str, default, what="a string"))


def _device(value: Any, where: str) -> _Table:
    """A device is a bare pin or an inline table with a `pin`."""
    if isinstance(value, Mapping):
        table = _Table(value, where)
        if not table.has("pin"):
            raise PanelConfigError(f"{where}: has no pin")
        return table
    return _Table({"pin": value}, where)


def _check_name(name: str, where: str) -> None:
    if not NAME.match(name):
        raise PanelConfigError(f"{where}: {name!r} is not a device name (lower case letters, digits and _, "
                               "starting with a letter)")


def _spot_and_role(table: _Table, name: str) -> tuple[int | None, str]:
    """A name like spot3_bet means spot 3, role "bet"; explicit `spot`/`role` keys win."""
    match = SPOT_NAME.match(name)
    spot = int(match.group(1)) if match else None
    role = match.group(2) if match else name
    if table.has("spot"):
        spot = table.number("spot", 0, 1, 99, integer=True)
    if table.has("role"):
        role = table.text("role", role)
        _check_name(role, table.key("role"))
    if spot is not None and not 1 <= spot <= 99:
        raise PanelConfigError(f"{table.where}: spot {spot} is outside 1..99")
    return spot, role


def _electrical(table: _Table, pull: str, active: str) -> tuple[str, bool]:
    pull = table.choice("pull", pull, PULLS)
    active_high = table.choice("active", active, LEVELS) == "high"
    return pull, active_high


def _devices(root: _Table, section: str) -> list[tuple[str, _Table]]:
    data = root.value(section, {})
    where = root.key(section)
    if not isinstance(data, Mapping):
        raise PanelConfigError(f"{where}: expected a table of devices, got {type(data).__name__}")
    out = []
    for name, value in data.items():
        _check_name(name, f"{where}.{name}")
        out.append((name, _device(value, f"{where}.{name}")))
    return out


def panel_config_from_mapping(data: Mapping[str, Any], where: str = "panel") -> PanelConfig:
    """Validate the [panel] table (as tomllib returns it) into a PanelConfig; errors name the key."""
    root = _Table(data, where)
    name = root.text("name", "")
    driver = root.choice("driver", "gpio", DRIVERS)
    reserve = root.value("reserve", ["uart"])
    if not isinstance(reserve, list) or any(bus not in ("uart", "i2c", "spi0") for bus in reserve):
        raise PanelConfigError(f"{root.key('reserve')}: expected a list of \"uart\", \"i2c\", \"spi0\", "
                               f"got {reserve!r}")
    bounce = root.number("bounce", 0.02, 0.0, 1.0)
    hold = root.number("hold", 1.0, 0.05, 60.0)
    stuck = root.number("stuck", 30.0, 0.0, 3600.0)

    buttons = []
    for name_, t in _devices(root, "buttons"):
        spot, role = _spot_and_role(t, name_)
        pull, active_high = _electrical(t, "up", "low")
        spec = ButtonSpec(name_, parse_pin(t.value("pin"), t.key("pin")), pull, active_high, spot, role,
                          t.number("bounce", bounce, 0.0, 1.0), t.number("hold", hold, 0.05, 60.0),
                          t.number("stuck", stuck, 0.0, 3600.0))
        if spec.stuck and spec.stuck <= spec.hold:
            raise PanelConfigError(f"{t.where}: stuck ({spec.stuck}s) must be longer than hold ({spec.hold}s)")
        t.done()
        buttons.append(spec)

    switches = []
    for kind, section, active in (("door", "doors", "high"), ("switch", "switches", "low")):
        for name_, t in _devices(root, section):
            pull, active_high = _electrical(t, "up", active)
            switches.append(SwitchSpec(name_, parse_pin(t.value("pin"), t.key("pin")), kind, pull, active_high,
                                       t.number("bounce", 0.05, 0.0, 1.0)))
            t.done()

    pulses = []
    for name_, t in _devices(root, "pulses"):
        pull, active_high = _electrical(t, "up", "low")
        line = PulseSpec(name_, parse_pin(t.value("pin"), t.key("pin")), pull, active_high,
                         t.number("glitch", 0.002, 0.0, 0.1), t.number("min_width", 0.015, 0.0, 1.0),
                         t.number("max_width", 0.15, 0.001, 5.0), t.number("min_gap", 0.015, 0.0, 1.0))
        if not line.glitch < line.min_width < line.max_width:
            raise PanelConfigError(f"{t.where}: needs glitch < min_width < max_width, got {line.glitch}, "
                                   f"{line.min_width}, {line.max_width}")
        t.done()
        pulses.append(line)

    lamps = []
    for name_, t in _devices(root, "lamps"):
        spot, role = _spot_and_role(t, name_)
        pwm = t.flag("pwm", False)
        brightness = t.number("brightness", 1.0, 0.0, 1.0)
        if brightness != 1.0 and not pwm:
            raise PanelConfigError(f"{t.key('brightness')}: only a PWM lamp can be dimmed (set pwm = true)")
        lamps.append(LampSpec(name_, parse_pin(t.value("pin"), t.key("pin")), pwm,
                              t.choice("active", "high", LEVELS) == "high", brightness, spot, role))
        t.done()

    outputs = []
    for name_, t in _devices(root, "outputs"):
        outputs.append(OutputSpec(name_, parse_pin(t.value("pin"), t.key("pin")),
                                  t.choice("active", "high", LEVELS) == "high",
                                  t.number("pulse", 0.05, 0.001, 10.0), t.number("gap", 0.05, 0.001, 10.0)))
        t.done()

    tower = _tower(root)
    displays = _displays(root)
    groups = _groups(root, lamps)
    reels = _reels(root)
    root.done()

    config = PanelConfig(name, driver, tuple(dict.fromkeys(reserve)), tuple(buttons), tuple(switches),
                         tuple(pulses), tuple(lamps), tuple(outputs), tower, displays, groups, reels)
    _check_names(config, where)
    _check_pins(config, where)
    return config


def _tower(root: _Table) -> TowerSpec | None:
    if not root.has("tower"):
        return None
    t = root.section("tower")
    tiers_table = t.section("tiers")
    tiers = []
    for tier, value in tiers_table.items():
        _check_name(tier, tiers_table.key(tier))
        d = _device(value, tiers_table.key(tier))
        tiers.append(LampSpec(tier, parse_pin(d.value("pin"), d.key("pin")), False,
                              d.choice("active", "high", LEVELS) == "high", role=tier))
        d.done()
    if not tiers:
        raise PanelConfigError(f"{t.where}: has no pins (give [{t.key('tiers')}], e.g. top = 26)")
    names = {tier.name for tier in tiers}
    if t.has("conditions"):
        ct = t.section("conditions")
        conditions = []
        for condition, looks in ct.items():
            _check_name(condition, ct.key(condition))
            lt = _Table(looks, ct.key(condition))
            for tier, look in lt.items():
                if tier not in names:
                    raise PanelConfigError(f"{lt.key(tier)}: the tower has no tier {tier!r} "
                                           f"(tiers: {', '.join(sorted(names))})")
                if look not in TOWER_LOOKS:
                    raise PanelConfigError(f"{lt.key(tier)}: {look!r} is not one of {', '.join(TOWER_LOOKS)}")
            conditions.append((condition, tuple(lt.items())))
        conditions_t = tuple(conditions)
    else:
        if not {"top", "bottom"} <= names:
            raise PanelConfigError(f"{t.where}: tiers are {', '.join(sorted(names))}; the default conditions are "
                                   f"for tiers top and bottom, so give [{t.key('conditions')}]")
        conditions_t = DEFAULT_TOWER_CONDITIONS
    t.done()
    return TowerSpec(tuple(tiers), conditions_t)


def _displays(root: _Table) -> ChainSpec | None:
    if not root.has("displays"):
        return None
    t = root.section("displays")
    bus = t.value("bus", "spi0")
    if isinstance(bus, str):
        if bus not in HARDWARE_SPI:
            raise PanelConfigError(f"{t.key('bus')}: {bus!r} is not \"spi0\", \"spi0.1\" or a table "
                                   "{ clock = .., data = .., select = .. }")
        clock, data, select = HARDWARE_SPI[bus]
        hardware: str | None = bus
    else:
        b = _Table(bus, t.key("bus"))
        for key in ("clock", "data", "select"):
            if not b.has(key):
                raise PanelConfigError(f"{b.where}: has no {key} pin")
        clock, data, select = (parse_pin(b.value(k), b.key(k)) for k in ("clock", "data", "select"))
        b.done()
        hardware = next((name for name, pins in HARDWARE_SPI.items() if pins == (clock, data, select)), None)
    intensity = t.number("intensity", 8, 0, 15, integer=True)
    refresh = t.number("refresh", 5.0, 0.0, 3600.0)
    chain = t.value("chain", [])
    if not isinstance(chain, list) or not chain:
        raise PanelConfigError(f"{t.key('chain')}: has no displays (list the chips, nearest the Pi first)")
    displays = []
    for position, item in enumerate(chain):
        where = f"{t.key('chain')}[{position}]"
        d = _Table(item if isinstance(item, Mapping) else {"name": item}, where)
        name = d.value("name")
        if not isinstance(name, str):
            raise PanelConfigError(f"{where}: a display needs a name")
        _check_name(name, where)
        spot, role = _spot_and_role(d, name)
        displays.append(DisplaySpec(name, position, d.number("digits", 8, 1, 8, integer=True),
                                    d.number("intensity", intensity, 0, 15, integer=True), spot, role))
        d.done()
    t.done()
    return ChainSpec(clock, data, select, hardware, refresh, tuple(displays))


def _reels(root: _Table) -> ReelsSpec | None:
    if not root.has("reels"):
        return None
    t = root.section("reels")
    shared = {key: parse_pin(t.value(key), t.key(key)) for key in ("dir", "enable") if t.has(key)}
    items = t.value("reel", [])
    if not isinstance(items, list) or not items:
        raise PanelConfigError(f"{t.key('reel')}: list the reels, left to right: reel = [{{ step = .., home = .. }}, ...]")
    reels = []
    for i, item in enumerate(items):
        r = _Table(item, f"{t.key('reel')}[{i}]")
        pins = {}
        for key in ("step", "home", "dir", "enable"):
            if r.has(key):
                pins[key] = parse_pin(r.value(key), r.key(key))
            elif key in shared:
                pins[key] = shared[key]
            else:
                raise PanelConfigError(f"{r.where}: has no {key} pin" + (" (give it here or for all reels in "
                                                                          f"{t.where})" if key in ("dir", "enable") else ""))
        pull, active_high = _electrical(r, "up", "high")
        reels.append(ReelSpec(f"reel{i + 1}", pins["step"], pins["dir"], pins["enable"], pins["home"], pull, active_high))
        r.done()
    stops = t.number("stops", 22, 3, 256, integer=True)
    steps = t.number("steps", 200, 3, 100_000, integer=True)
    if steps < 2 * stops:
        raise PanelConfigError(f"{t.key('steps')}: {steps} steps a turn cannot place {stops} stops (at least two "
                               "steps a stop)")
    spec = ReelsSpec(tuple(reels), stops, steps, t.number("rate", 400.0, 1.0, 1_000_000.0),
                     t.number("turns", 1.0, 1.0, 20.0), t.number("stagger", 0.5, 0.0, 5.0),
                     t.number("offset", 0, 0, steps - 1, integer=True),
                     t.choice("enable_active", "low", LEVELS) == "high", t.choice("forward", "high", LEVELS) == "high")
    t.done()
    return spec


def _groups(root: _Table, lamps: list[LampSpec]) -> tuple[tuple[str, tuple[str, ...]], ...]:
    t = root.section("groups")
    known = {lamp.name for lamp in lamps}
    groups = []
    for group, members in t.items():
        _check_name(group, t.key(group))
        if not isinstance(members, list) or not members or not all(isinstance(m, str) for m in members):
            raise PanelConfigError(f"{t.key(group)}: expected a list of lamp names")
        for member in members:
            if member not in known:
                raise PanelConfigError(f"{t.key(group)}: no lamp named {member!r}")
        if len(set(members)) != len(members):
            raise PanelConfigError(f"{t.key(group)}: names a lamp twice")
        groups.append((group, tuple(members)))
    return tuple(groups)


def _check_names(config: PanelConfig, where: str) -> None:
    def unique(kind: str, names: Iterable[tuple[str, str]]) -> None:
        seen: dict[str, str] = {}
        for section, name in names:
            if name in seen:
                raise PanelConfigError(f"{where}: {kind} name {name!r} is used by both {seen[name]}.{name} "
                                       f"and {section}.{name}")
            seen[name] = section

    unique("input", [("buttons", b.name) for b in config.buttons]
           + [("doors" if s.kind == "door" else "switches", s.name) for s in config.switches]
           + [("pulses", p.name) for p in config.pulses])
    unique("output", [("lamps", lamp.name) for lamp in config.lamps] + [("outputs", o.name) for o in config.outputs])
    if config.displays:
        unique("display", [("displays", d.name) for d in config.displays.displays])


def _check_pins(config: PanelConfig, where: str) -> None:
    reserved = dict(ALWAYS_RESERVED)
    for bus in config.reserve:
        reserved.update(BUSES[bus])
    if config.displays and config.displays.bus:
        reserved.update(BUSES["spi0"])
    used: dict[int, str] = {}
    for row in wiring_rows(config):
        if row.gpio in used:
            raise PanelConfigError(f"{where}: {pin_label(row.gpio)} is used by both {used[row.gpio]} and {row.device}")
        if row.gpio in reserved and not (config.displays and config.displays.bus and row.section == "displays"):
            raise PanelConfigError(f"{where}: {row.device} is on {pin_label(row.gpio)}, which is reserved for "
                                   f"{reserved[row.gpio]}")
        used[row.gpio] = row.device

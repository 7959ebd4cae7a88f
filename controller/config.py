"""Configuration files (TOML) of a table, a slot cabinet or a progressive link controller: ids, game or title, drivers, bus, journal and keys, validated at start with messages naming the key.

`load_config(path)` reads any of the three, told apart by their first section: `[table]`, `[cabinet]`
or `[progressive]`; the `[panel]` and `[bus]` sections and the journal mean the same in each.
"""

from __future__ import annotations

import math
import os
import re
import tomllib
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Mapping

from controller.bus import BusEndpoints
from controller.games import get_game
from controller.games.base import GameSpec, RulesBase, RulesError, rules_from_mapping

__all__ = ["ConfigError", "TableConfig", "ShoeConfig", "CameraConfig", "BusConfig", "CabinetConfig", "LinkConfig",
           "ProgressiveConfig", "load_config", "config_from_mapping", "cabinet_config_from_mapping",
           "progressive_config_from_mapping", "any_config_from_mapping", "check_runnable", "BUTTON_ACTIONS"]


class ConfigError(ValueError):
    """The configuration cannot run a table; the message names the file, the key and the problem."""


@dataclass(frozen=True)
class ShoeConfig:
    port: str = "sim"             # a pyserial URL, a device path, "sim" (simulated shoe over a pty) or "none"
    decks: int = 6                # simulated shoe only: decks per shoe
    cut: int | None = None        # simulated shoe only: cut card depth (default: 75% of the shoe)
    seed: int | None = None       # simulated shoe only: seeded card order (tests, demo); None = system RNG

    @property
    def simulated(self) -> bool:
        return self.port == "sim"


@dataclass(frozen=True)
class CameraConfig:
    source: str = "none"          # "none", "sim" (the rendered table), or a device index, /dev/v4l/by-id path,
                                  # video file or RTSP URL (drivers/camera/capture.py)
    config: Path | None = None    # a real camera's calibration and zones (`croupier vision calibrate` writes it)
    fps: float = 4.0              # frames read a second (each costs the recogniser ~17 ms of a core here)
    stable_frames: int = 3        # frames a card must lie still, the same, before it counts as seen
    min_confidence: float = 0.9   # below this a card is reported as unsure, and never raises an alert

    @property
    def on(self) -> bool:
        return self.source != "none"


@dataclass(frozen=True)
class BusConfig:
    endpoints: BusEndpoints = BusEndpoints()
    keys: Path | None = None                           # folder with server.key_secret and client .key files
    clients: tuple[tuple[Path, str], ...] = ()          # (public key file, role)
    heartbeat: float = 1.0
    hwm: int = 1000
    curve_screens: bool = False                        # updates and snapshots over CURVE, to the listed keys only


@dataclass(frozen=True)
class TableConfig:
    path: Path | None
    table_id: str
    game: GameSpec
    rules: RulesBase
    journal: Path
    shoe: ShoeConfig = ShoeConfig()
    camera: CameraConfig = CameraConfig()
    panel: Path | None = None                          # the file holding the [panel] pin map, or None
    panel_sim: bool = False
    bus: BusConfig = BusConfig()
    betting_seconds: float = 0.0                       # >0: bets close by themselves after this long
    raw: Mapping[str, Any] = field(default_factory=dict, repr=False)
    journal_key: Path | None = None                    # None: controller.journal.default_key_file()
    journal_anchor: Path | None = None                 # None: controller.journal.default_anchor(journal)
    floor: Any = None                                  # controller.floor.config.FloorConfig; None: no floor

    def simulated(self) -> TableConfig:
        """Every driver swapped for its simulation (`croupier run --sim`)."""
        return replace(self, shoe=replace(self.shoe, port="sim"), panel_sim=True,
                       camera=replace(self.camera, source="sim") if self.camera.on else self.camera)


# [screens]: controller/screens/config.py; [floor]: controller/floor/config.py
_SECTIONS = {"table", "rules", "shoe", "camera", "panel", "bus", "screens", "floor"}


def _get(table: Mapping[str, Any], key: str, kind: type | tuple[type, ...], where: str, default: Any = None) -> Any:
    if key not in table:
        return default
    value = table[key]
    if isinstance(value, bool) and bool not in (kind if isinstance(kind, tuple) else (kind,)):
        raise ConfigError(f"{where}.{key}: expected {_kind_name(kind)}, got {value!r}")
    if not isinstance(value, kind):
        raise ConfigError(f"{where}.{key}: expected {_kind_name(kind)}, got {value!r}")
    return value


def _kind_name(kind: type | tuple[type, ...]) -> str:
    names = {str: "text", int: "a whole number", float: "a number", bool: "true or false", dict: "a table",
             list: "a list"}
    kinds = kind if isinstance(kind, tuple) else (kind,)
    return " or ".join(names.get(k, k.__name__) for k in kinds)


def _unknown(table: Mapping[str, Any], known: set[str], where: str) -> None:
    extra = sorted(set(table) - known)
    if extra:
        raise ConfigError(f"{where}: unknown key(s) {', '.join(extra)} (known: {', '.join(sorted(known))})")


def _section(data: Mapping[str, Any], name: str, where: str) -> Mapping[str, Any]:
    value = data.get(name, {})
    if not isinstance(value, dict):
        raise ConfigError(f"{where}[{name}]: expected a table")
    return value


# An id names the journal file, the bus topics and the screens' URLs: ASCII only (a Unicode digit or letter reads
# like another id on a screen) and short enough for a file name and a topic.
_ID = re.compile(r"[A-Za-z0-9_-]{1,64}")


def _ident(t: Mapping[str, Any], where: str, what: str) -> str:
    ident = _get(t, "id", str, where)
    if ident is None or not _ID.fullmatch(ident):
        raise ConfigError(f"{where}.id: a {what} id is 1 to 64 ASCII letters, digits, - and _ (got {_shown(ident)})")
    return ident


def _shown(text: str | None) -> str:
    return repr(text) if text is None or len(text) <= 40 else f"{text[:40]!r}... ({len(text)} characters)"


def _finite(node: Any, where: str) -> None:
    """Refuse nan and inf anywhere in a config: TOML spells them, and one would reach a timer (`betting_seconds =
    inf` stopped a table at its first open_bets) or a journal record, which cannot hold them."""
    if isinstance(node, float) and not math.isfinite(node):
        raise ConfigError(f"{where}: {node} is not a finite number (nan and inf are refused)")
    if isinstance(node, dict):
        for key, value in node.items():
            _finite(value, f"{where}.{key}")
    elif isinstance(node, list):
        for i, value in enumerate(node):
            _finite(value, f"{where}[{i}]")


def _all_finite(data: Mapping[str, Any], where: str) -> None:
    for name, value in data.items():
        _finite(value, f"{where}[{name}]" if isinstance(value, (dict, list)) else f"{where}.{name}")


def _seconds(t: Mapping[str, Any], key: str, where: str, default: float, low: float, high: float,
             off: bool = False) -> float:
    """A timing key within sane bounds (`off`: 0 turns it off): a heartbeat of 1e-9 s spins a core at 100%."""
    value = float(_get(t, key, (int, float), where, default))
    if not (low <= value <= high or (off and value == 0)):
        raise ConfigError(f"{where}.{key}: {'0 (off) or ' if off else ''}{low:g} to {high:g} seconds, got {value:g}")
    return value


_ENDPOINT = re.compile(r"tcp://(\*|[A-Za-z0-9.-]+|\[[0-9A-Fa-f:.]+\]):(\d{1,5})|ipc://.+|inproc://[^\s]+", re.ASCII)


def _endpoint(value: str, where: str) -> str:
    """A ZeroMQ endpoint the bus can bind or connect: tcp://HOST:PORT (port 1..65535), ipc://PATH, inproc://NAME."""
    match = _ENDPOINT.fullmatch(value)
    if not match or (match.group(2) is not None and not 1 <= int(match.group(2)) <= 65535):
        raise ConfigError(f"{where}: expected tcp://HOST:PORT (port 1..65535), ipc://PATH or inproc://NAME, "
                          f"got {value!r}")
    return value


def _journal_key(section: Mapping[str, Any], where: str) -> str:
    return f"{where}.journal" if "journal" in section else f"{where}.state_dir"


def _journal(t: Mapping[str, Any], ident: str, where: str, base: Path) -> Path:
    if "journal" in t:
        journal = base / _get(t, "journal", str, where)
    else:
        journal = base / _get(t, "state_dir", str, where, ".") / f"{ident}.journal"
    key = _journal_key(t, where)
    if journal.is_dir():
        raise ConfigError(f"{key}: the journal {journal} is a folder")
    for folder in (journal.parent, *journal.parent.parents):
        if folder.exists():
            if not folder.is_dir():
                raise ConfigError(f"{key}: {folder} is a file, not a folder for the journal")
            break
    return journal


_JOURNAL_KEYS = {"journal_key", "journal_anchor"}


def _journal_files(t: Mapping[str, Any], journal: Path, where: str, base: Path) -> dict[str, Path | None]:
    """`journal_key` (the machine's journal key, outside the journal folder; default: the user's, made on first
    use) and `journal_anchor` (the last committed row, outside the database; default `<journal>.anchor`)."""
    from controller.journal import default_anchor

    key, anchor = _get(t, "journal_key", str, where), _get(t, "journal_anchor", str, where)
    key_path = base / key if key else None
    if key_path is not None and journal.parent.resolve() in (key_path.parent.resolve(), *key_path.resolve().parents):
        raise ConfigError(f"{where}.journal_key: keep the key outside the journal's folder {journal.parent}")
    return {"journal_key": key_path, "journal_anchor": base / anchor if anchor else default_anchor(journal)}


def config_from_mapping(data: Mapping[str, Any], path: Path | None = None) -> TableConfig:
    """Validate a parsed table config; relative paths are taken from the config file's folder."""
    where = str(path) if path else "config"
    base = path.parent if path else Path.cwd()
    _unknown(data, _SECTIONS, where)
    _all_finite(data, where)

    t = _section(data, "table", where)
    _unknown(t, {"id", "game", "journal", "state_dir", "betting_seconds"} | _JOURNAL_KEYS, f"{where}[table]")
    table_id = _ident(t, f"{where}[table]", "table")
    game_name = _get(t, "game", str, f"{where}[table]")
    if not game_name:
        raise ConfigError(f"{where}[table].game: which game does this table run?")
    try:
        game = get_game(game_name)
    except ValueError as exc:
        raise ConfigError(f"{where}[table].game: {exc}") from None
    try:
        rules = rules_from_mapping(game.rules_type, _section(data, "rules", where), where=f"{where}[rules]")
    except RulesError as exc:
        text = str(exc)
        raise ConfigError(text if text.startswith(where) else f"{where}[rules]: {text}") from None
    journal = _journal(t, table_id, f"{where}[table]", base)
    betting = _seconds(t, "betting_seconds", f"{where}[table]", 0, 1, 3600, off=True)  # 0: the dealer closes bets

    s = _section(data, "shoe", where)
    _unknown(s, {"port", "decks", "cut", "seed"}, f"{where}[shoe]")
    shoe = ShoeConfig(port=_get(s, "port", str, f"{where}[shoe]", "sim"),
                      decks=_get(s, "decks", int, f"{where}[shoe]", getattr(rules, "decks", 1)),
                      cut=_get(s, "cut", int, f"{where}[shoe]"), seed=_get(s, "seed", int, f"{where}[shoe]"))
    if not 1 <= shoe.decks <= 8:
        raise ConfigError(f"{where}[shoe].decks: 1 to 8 decks, got {shoe.decks}")
    if shoe.cut is not None and not 1 <= shoe.cut < 52 * shoe.decks:
        raise ConfigError(f"{where}[shoe].cut: the cut card goes inside the shoe (1..{52 * shoe.decks - 1})")

    camera = _camera(_section(data, "camera", where), f"{where}[camera]", base)

    panel, panel_sim = _panel(data, where, path, base)

    bus = _bus(data, where, base)

    return TableConfig(path, table_id, game, rules, journal, shoe, camera, panel, panel_sim, bus, float(betting),
                       data, **_journal_files(t, journal, f"{where}[table]", base),
                       floor=_floor(data, table_id, where, base))


def _camera(c: Mapping[str, Any], where: str, base: Path) -> CameraConfig:
    """The [camera] section: where frames come from, and how sure a card must be before it counts."""
    _unknown(c, {"source", "config", "fps", "stable_frames", "min_confidence"}, where)
    source = _get(c, "source", (str, int), where, "none")
    if isinstance(source, int):
        source = str(source)  # a device index
    if not source.strip():
        raise ConfigError(f"{where}.source: \"none\", \"sim\", a device index, a /dev/v4l/by-id path, a file or a URL")
    config = _get(c, "config", str, where)
    cam = CameraConfig(source, base / config if config else None,
                       float(_get(c, "fps", (int, float), where, 4.0)), _get(c, "stable_frames", int, where, 3),
                       float(_get(c, "min_confidence", (int, float), where, 0.9)))
    if not 0.1 <= cam.fps <= 30:
        raise ConfigError(f"{where}.fps: 0.1 to 30 frames a second, got {cam.fps}")
    if not 1 <= cam.stable_frames <= 100:
        raise ConfigError(f"{where}.stable_frames: 1 to 100, got {cam.stable_frames}")
    if not 0 < cam.min_confidence <= 1:
        raise ConfigError(f"{where}.min_confidence: above 0, at most 1, got {cam.min_confidence}")
    if cam.on and source != "sim":  # a real camera: its source and its calibration must hold up now
        from drivers.camera.capture import CameraError, parse_source
        from vision.geometry import ConfigError as CameraConfigError
        from vision.geometry import geometry_from_config, load_config as load_camera_config

        try:
            parse_source(source)
        except CameraError as exc:
            raise ConfigError(f"{where}.source: {exc}") from None
        if cam.config is None:
            raise ConfigError(f"{where}.config: a real camera needs its calibration file (`croupier vision "
                              "calibrate --config FILE`), e.g. config = \"camera.toml\"")
        try:
            geometry_from_config(load_camera_config(cam.config))
        except (OSError, CameraConfigError) as exc:
            raise ConfigError(f"{where}.config: {cam.config}: {getattr(exc, 'strerror', None) or exc}") from None
    return cam


def _panel(data: Mapping[str, Any], where: str, path: Path | None, base: Path) -> tuple[Path | None, bool]:
    """The [panel] section: a pin map file (and its driver), or the pin map inline in this file."""
    p = _section(data, "panel", where)
    panel: Path | None = None
    panel_sim = False
    if p:
        if set(p) == {"file"} or set(p) == {"file", "driver"}:
            panel = base / _get(p, "file", str, f"{where}[panel]")
            if not panel.is_file():
                raise ConfigError(f"{where}[panel].file: no such file {panel}")
            panel_sim = _get(p, "driver", str, f"{where}[panel]", "gpio") == "sim"
        else:
            panel = path  # the pin map is inline in this file
    if panel is not None:
        try:
            from drivers.panel import PanelConfigError, load_panel_config

            load_panel_config(panel)
        except PanelConfigError as exc:
            raise ConfigError(str(exc)) from None

    return panel, panel_sim


def _bus(data: Mapping[str, Any], where: str, base: Path) -> BusConfig:
    """The [bus] section: endpoints, the CURVE keys folder and each client's key and role."""
    b = _section(data, "bus", where)
    _unknown(b, {"publish", "snapshot", "commands", "keys", "client", "heartbeat", "hwm", "curve_screens"},
             f"{where}[bus]")
    endpoints = BusEndpoints(*(_endpoint(_get(b, k, str, f"{where}[bus]", getattr(BusEndpoints(), k)),
                                         f"{where}[bus].{k}") for k in ("publish", "snapshot", "commands")))
    bound = [endpoints.publish, endpoints.snapshot, endpoints.commands]
    for k, endpoint in zip(("snapshot", "commands"), bound[1:]):
        if bound.count(endpoint) > 1:
            raise ConfigError(f"{where}[bus].{k}: {endpoint} is bound by another of the bus's sockets already")
    keys = base / _get(b, "keys", str, f"{where}[bus]") if "keys" in b else None
    clients = []
    for i, entry in enumerate(_get(b, "client", list, f"{where}[bus]", [])):
        w = f"{where}[[bus.client]] #{i + 1}"
        if not isinstance(entry, dict):
            raise ConfigError(f"{w}: expected a table with key and role")
        _unknown(entry, {"key", "role"}, w)
        key_file = (keys or base) / _get(entry, "key", str, w, "")
        if not key_file.is_file():
            raise ConfigError(f"{w}.key: no such key file {key_file}")
        from controller.bus import parse_role

        role = _get(entry, "role", str, w, "")
        try:
            parse_role(role)
        except ValueError as exc:
            raise ConfigError(f"{w}.role: {exc}") from None
        clients.append((key_file, role))
    if clients and keys is None:
        raise ConfigError(f"{where}[bus].keys: client keys need the folder holding the server key")
    if keys is not None and not (keys / "server.key_secret").is_file():
        raise ConfigError(f"{where}[bus].keys: no server.key_secret in {keys} (create it: croupier keys server "
                          f"--dir {keys})")
    heartbeat = _seconds(b, "heartbeat", f"{where}[bus]", 1.0, 0.05, 60)
    hwm = _get(b, "hwm", int, f"{where}[bus]", 1000)
    if not 1 <= hwm <= 1_000_000:
        raise ConfigError(f"{where}[bus].hwm: 1 to 1000000 messages, got {hwm}")
    curve_screens = _get(b, "curve_screens", bool, f"{where}[bus]", False)
    if curve_screens and keys is None:
        raise ConfigError(f"{where}[bus].curve_screens: CURVE needs the keys folder ([bus].keys)")
    return BusConfig(endpoints, keys, tuple(clients), float(heartbeat), hwm, curve_screens)


# ---------------------------------------------------------------------------------------------------
# Slot cabinets and progressive links

# What a cabinet's buttons do ("pick:N" picks the Nth choice of a waiting pick bonus; "none" ignores it).
BUTTON_ACTIONS = ("bet_one", "max_bet", "spin", "cash_out", "cash_in", "next_paytable", "pick:1", "pick:2", "pick:3",
                  "none")
DEFAULT_BUTTONS = {"bet_one": "bet_one", "max_bet": "max_bet", "spin": "spin", "cash_out": "cash_out",
                   "cash_in": "cash_in", "next_paytable": "next_paytable", "pick1": "pick:1", "pick2": "pick:2",
                   "pick3": "pick:3"}
# Which panel display shows which meter ("lamps": a MAX7219 driving the title's meter lamps as a bar).
DEFAULT_DISPLAYS = {"credit": "credit", "bet": "bet", "win": "win", "progressive": "progressive",
                    "feature": "feature", "lamps": "feature_lamps"}


@dataclass(frozen=True)
class LinkConfig:
    """How a cabinet reaches its progressive link controller."""

    link_id: str
    endpoints: BusEndpoints | None
    server_key: Path | None = None      # the controller's public key (CURVE); None: unauthenticated (tests)
    key: Path | None = None             # this cabinet's key pair (NAME.key_secret)
    heartbeat: float = 1.0              # the controller's heartbeat or longer: silent for 3 of them = link down
    timeout: float = 2.0                # seconds to wait for the controller's answer
    # "bus": the ZeroMQ link controller at `endpoints`; "floor": the floor's JetStream ([floor] servers,
    # controller/floor/progressive.py), where `endpoints` (optional) are a pool reader's, for the screens
    engine: str = "bus"


@dataclass(frozen=True)
class CabinetConfig:
    path: Path | None
    cabinet_id: str
    title: Any                                         # controller.slots.Title
    denomination: int                                  # cents per credit
    journal: Path
    settings: Any                                      # controller.cabinetstate.Settings (in credits)
    paytable: int = 0
    hopper_timeout: float = 3.0                        # seconds without a coin while the motor runs: hopper empty
    spin_seconds: float = 1.0                          # screen reels: how long a spin takes to show
    attract_seconds: float = 60.0                      # idle with no credits this long: attract mode
    buttons: tuple[tuple[str, str], ...] = tuple(DEFAULT_BUTTONS.items())
    displays: tuple[tuple[str, str], ...] = tuple(DEFAULT_DISPLAYS.items())
    reels: str = "screen"                              # "screen" or "mechanical" (the pin map's [panel.reels])
    link: LinkConfig | None = None
    panel: Path | None = None
    panel_sim: bool = False
    bus: BusConfig = BusConfig()
    seed: int | None = None                            # simulation only: seeded reel stops; None = system RNG
    raw: Mapping[str, Any] = field(default_factory=dict, repr=False)
    journal_key: Path | None = None
    journal_anchor: Path | None = None
    sas: Any = None                                    # controller.sas.SasConfig: the floor's SAS line ([sas])
    floor: Any = None                                  # controller.floor: the floor's JetStream ([floor])

    @property
    def table_id(self) -> str:  # the bus and the journal name the service by this
        return self.cabinet_id

    def simulated(self) -> CabinetConfig:
        """Every driver swapped for its simulation (`croupier run --sim`)."""
        return replace(self, panel_sim=True)


@dataclass(frozen=True)
class ProgressiveConfig:
    path: Path | None
    link_id: str
    title: Any                                         # controller.slots.Title or None
    reset_cents: int
    journal: Path
    bus: BusConfig = BusConfig()
    raw: Mapping[str, Any] = field(default_factory=dict, repr=False)
    journal_key: Path | None = None
    journal_anchor: Path | None = None
    floor: Any = None
    engine: str = "bus"  # "floor": no controller, a pool reader of the link's stream (controller/floor/progressive.py)

    @property
    def table_id(self) -> str:
        return self.link_id

    def simulated(self) -> ProgressiveConfig:
        return self


def _cents(t: Mapping[str, Any], key: str, where: str, default: int) -> int:
    value = _get(t, key, int, where, default)
    if value < 0:
        raise ConfigError(f"{where}.{key}: cents cannot be negative")
    return value


def _title(t: Mapping[str, Any], where: str, base: Path) -> Any:
    from controller.slots import TitleError, get_title, load_title, title_ids

    name = _get(t, "title", str, where)
    if not name:
        raise ConfigError(f"{where}.title: which title? ({', '.join(title_ids())})")
    try:
        return load_title(base / name) if name.endswith(".toml") else get_title(name)
    except TitleError as exc:
        raise ConfigError(f"{where}.title: {exc}") from None


def cabinet_config_from_mapping(data: Mapping[str, Any], path: Path | None = None) -> CabinetConfig:
    """Validate a parsed cabinet config; relative paths are taken from the config file's folder."""
    from controller.cabinetstate import Settings

    where = str(path) if path else "config"
    base = path.parent if path else Path.cwd()
    _unknown(data, {"cabinet", "panel", "bus", "screens", "sas", "floor"}, where)  # [screens]: controller/screens/config.py
    _all_finite(data, where)
    c = _section(data, "cabinet", where)
    w = f"{where}[cabinet]"
    _unknown(c, {"id", "title", "denomination", "journal", "state_dir", "paytable", "hand_pay_limit_cents",
                 "jackpot_limit_cents", "coin_cents", "hopper", "hopper_timeout", "spin_seconds", "attract_seconds",
                 "reels", "seed", "buttons", "displays", "progressive"} | _JOURNAL_KEYS, w)
    cabinet_id = _ident(c, w, "cabinet")
    title = _title(c, w, base)
    denomination = _get(c, "denomination", int, w, title.denominations[0])
    if denomination not in title.denominations:
        raise ConfigError(f"{w}.denomination: {title.name} is played at "
                          f"{', '.join(map(str, title.denominations))} cents per credit, not {denomination}")
    paytable = _get(c, "paytable", int, w, 0)
    if not 0 <= paytable < len(title.paytables):
        raise ConfigError(f"{w}.paytable: {title.name} has paytables 0..{len(title.paytables) - 1}")
    coin = _cents(c, "coin_cents", w, denomination)
    if coin < denomination or coin % denomination:
        raise ConfigError(f"{w}.coin_cents: a coin must be whole credits of {denomination} cents, got {coin}")
    limits = {}
    for key in ("hand_pay_limit_cents", "jackpot_limit_cents"):
        cents = _cents(c, key, w, 120_000)
        if cents < denomination:
            raise ConfigError(f"{w}.{key}: at least one credit ({denomination} cents)")
        limits[key] = -(-cents // denomination)  # whole credits, rounded up so the limit is never undercut
    progressive = "none"
    link = None
    p = _section(c, "progressive", w)
    pw = f"{w}.progressive"
    if p:
        if title.progressive is None:
            raise ConfigError(f"{pw}: {title.name} has no progressive")
        _unknown(p, {"mode", "link", "publish", "snapshot", "commands", "server_key", "key", "heartbeat", "timeout",
                     "engine"}, pw)
        progressive = _get(p, "mode", str, pw, "link")
        if progressive not in ("link", "standalone"):
            raise ConfigError(f"{pw}.mode: \"link\" or \"standalone\", got {progressive!r}")
        engine = _get(p, "engine", str, pw, "bus")
        if engine not in ("bus", "floor"):
            raise ConfigError(f"{pw}.engine: \"bus\" (the link controller) or \"floor\" (the floor's JetStream), "
                              f"got {_shown(engine)}")
        if progressive == "link" and engine == "floor":
            link = _floor_link(data, p, pw, where)
        elif progressive == "link":
            missing = [k for k in ("link", "publish", "snapshot", "commands") if k not in p]
            if missing:
                raise ConfigError(f"{pw}: a link needs the controller's id (link) and its publish, snapshot and "
                                  f"commands endpoints; missing {', '.join(missing)}")
            keys = []
            for key in ("server_key", "key"):
                file = base / _get(p, key, str, pw) if key in p else None
                if file is not None and not file.is_file():
                    raise ConfigError(f"{pw}.{key}: no such key file {file}")
                keys.append(file)
            if (keys[0] is None) != (keys[1] is None):
                raise ConfigError(f"{pw}: give both server_key (the controller's public key) and key (ours), or "
                                  "neither (unauthenticated: tests only)")
            heartbeat = _seconds(p, "heartbeat", pw, 1.0, 0.05, 60)
            timeout = _seconds(p, "timeout", pw, 2.0, 0.05, 60)
            link_id = _get(p, "link", str, pw)
            if not _ID.fullmatch(link_id):
                raise ConfigError(f"{pw}.link: a link id is 1 to 64 ASCII letters, digits, - and _ (got "
                                  f"{_shown(link_id)})")
            link = LinkConfig(link_id, BusEndpoints(*(_endpoint(_get(p, k, str, pw), f"{pw}.{k}")
                                                      for k in ("publish", "snapshot", "commands"))),
                              keys[0], keys[1], float(heartbeat), float(timeout))
        else:
            _unknown(p, {"mode"}, pw)
    elif title.progressive is not None:
        raise ConfigError(f"{w}: {title.name} has a system-wide progressive: give [cabinet.progressive] with the "
                          "link controller's endpoints, or mode = \"standalone\" for the cabinet's own pool")
    hopper = _get(c, "hopper", bool, w, True)
    settings = Settings(limits["hand_pay_limit_cents"], limits["jackpot_limit_cents"], coin // denomination, hopper,
                        progressive)
    seconds = {"hopper_timeout": _seconds(c, "hopper_timeout", w, 3.0, 0.1, 60),
               "spin_seconds": _seconds(c, "spin_seconds", w, 1.0, 0, 30),
               "attract_seconds": _seconds(c, "attract_seconds", w, 60.0, 0.1, 86400, off=True)}
    reels = _get(c, "reels", str, w, "screen")
    if reels not in ("screen", "mechanical"):
        raise ConfigError(f"{w}.reels: \"screen\" or \"mechanical\", got {reels!r}")
    buttons = dict(DEFAULT_BUTTONS)
    for name, action in _section(c, "buttons", w).items():
        if action not in BUTTON_ACTIONS:
            raise ConfigError(f"{w}.buttons.{name}: {action!r} is not one of {', '.join(BUTTON_ACTIONS)}")
        buttons[name] = action
    displays = dict(DEFAULT_DISPLAYS)
    for meter, name in _section(c, "displays", w).items():
        if meter not in DEFAULT_DISPLAYS or not isinstance(name, str):
            raise ConfigError(f"{w}.displays.{meter}: meters are {', '.join(DEFAULT_DISPLAYS)}, each a display name")
        displays[meter] = name
    panel, panel_sim = _panel(data, where, path, base)
    if reels == "mechanical":
        from drivers.panel import load_panel_config

        if panel is None or not load_panel_config(panel).reels:
            raise ConfigError(f"{w}.reels: mechanical reels need [panel.reels] in the pin map")
        spec = load_panel_config(panel).reels
        assert spec is not None
        if len(spec.reels) != 3 or any(r.size != spec.stops for r in title.reels):
            raise ConfigError(f"{w}.reels: the pin map's {len(spec.reels)} reels of {spec.stops} stops do not "
                              f"carry {title.name}'s strips ({', '.join(str(r.size) for r in title.reels)} stops)")
    from controller.sas import sas_config

    return CabinetConfig(path, cabinet_id, title, denomination, _journal(c, cabinet_id, w, base), settings, paytable,
                         seconds["hopper_timeout"], seconds["spin_seconds"], seconds["attract_seconds"],
                         tuple(buttons.items()), tuple(displays.items()), reels, link, panel, panel_sim,
                         _bus(data, where, base), _get(c, "seed", int, w), data,
                         **_journal_files(c, _journal(c, cabinet_id, w, base), w, base),
                         sas=sas_config(_section(data, "sas", where), where, denomination),
                         floor=_floor(data, cabinet_id, where, base))


def _floor_link(data: Mapping[str, Any], p: Mapping[str, Any], pw: str, where: str) -> LinkConfig:
    """`[cabinet.progressive] engine = "floor"`: the link on the floor's JetStream (controller/floor/progressive.py)."""
    if "floor" not in data:
        raise ConfigError(f"{pw}.engine: \"floor\" needs the [floor] section (its servers carry the link)")
    extra = sorted(set(p) & {"commands", "server_key", "key"})
    if extra:
        raise ConfigError(f"{pw}: {', '.join(extra)}: not on a floor link (the floor's credential carries it)")
    if "link" not in p:
        raise ConfigError(f"{pw}: a link needs its id (link)")
    link_id = _get(p, "link", str, pw)
    if not _ID.fullmatch(link_id):
        raise ConfigError(f"{pw}.link: a link id is 1 to 64 ASCII letters, digits, - and _ (got {_shown(link_id)})")
    if ("publish" in p) != ("snapshot" in p):
        raise ConfigError(f"{pw}: give a pool reader's publish and snapshot endpoints (for the screens), or neither")
    endpoints = None
    if "publish" in p:
        endpoints = BusEndpoints(_endpoint(_get(p, "publish", str, pw), f"{pw}.publish"),
                                 _endpoint(_get(p, "snapshot", str, pw), f"{pw}.snapshot"))
    return LinkConfig(link_id, endpoints, heartbeat=float(_seconds(p, "heartbeat", pw, 1.0, 0.05, 60)),
                      timeout=float(_seconds(p, "timeout", pw, 2.0, 0.05, 60)), engine="floor")


def progressive_config_from_mapping(data: Mapping[str, Any], path: Path | None = None) -> ProgressiveConfig:
    """Validate a parsed progressive link controller config."""
    where = str(path) if path else "config"
    base = path.parent if path else Path.cwd()
    _unknown(data, {"progressive", "bus", "floor"}, where)
    _all_finite(data, where)
    p = _section(data, "progressive", where)
    w = f"{where}[progressive]"
    _unknown(p, {"id", "title", "reset_cents", "journal", "state_dir", "engine"} | _JOURNAL_KEYS, w)
    link_id = _ident(p, w, "link")
    engine = _get(p, "engine", str, w, "bus")
    if engine not in ("bus", "floor"):
        raise ConfigError(f"{w}.engine: \"bus\" (this link controller) or \"floor\" (a reader of the link on the "
                          f"floor's JetStream), got {_shown(engine)}")
    if engine == "floor" and "floor" not in data:
        raise ConfigError(f"{w}.engine: \"floor\" needs the [floor] section (its servers carry the link)")
    title = _title(p, w, base) if "title" in p else None
    if title is not None and title.progressive is None:
        raise ConfigError(f"{w}.title: {title.name} has no progressive")
    if title is None and "reset_cents" not in p:
        raise ConfigError(f"{w}: give the title (its reset value) or reset_cents")
    reset = _cents(p, "reset_cents", w, title.progressive.reset_cents if title is not None else 0)
    bus = _bus(data, where, base)
    if bus.curve_screens:
        raise ConfigError(f"{where}[bus].curve_screens: not on a link controller (its cabinets follow the pool in "
                          "the clear; their contributions and hits go over CURVE)")
    journal = _journal(p, link_id, w, base)
    return ProgressiveConfig(path, link_id, title, reset, journal, bus, data, **_journal_files(p, journal, w, base),
                             floor=_floor(data, link_id, where, base), engine=engine)


def _floor(data: Mapping[str, Any], ident: str, where: str, base: Path) -> Any:
    """The [floor] section (controller/floor/config.py), or None: no floor, the machine runs alone."""
    if "floor" not in data:
        return None
    from controller.floor.config import floor_config_from_mapping

    try:
        return floor_config_from_mapping(_section(data, "floor", where), ident, f"{where}[floor]", base)
    except ValueError as exc:
        raise ConfigError(str(exc)) from None


def any_config_from_mapping(data: Mapping[str, Any], path: Path | None = None) -> Any:
    """A table, cabinet or progressive link config, by its first section."""
    if "cabinet" in data:
        return cabinet_config_from_mapping(data, path)
    if "progressive" in data and "table" not in data:
        return progressive_config_from_mapping(data, path)
    return config_from_mapping(data, path)


def load_config(path: str | Path) -> Any:
    """Read a table's, a cabinet's or a progressive link's config file (a TableConfig, CabinetConfig or
    ProgressiveConfig)."""
    path = Path(path)
    try:
        with path.open("rb") as fh:
            data = tomllib.load(fh)
    except FileNotFoundError:
        raise ConfigError(f"{path}: no such config file") from None
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read: {exc.strerror}") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: not valid TOML: {exc}") from None
    except UnicodeDecodeError:  # a binary file, e.g. a journal given where its config belongs
        raise ConfigError(f"{path}: not a TOML config (not UTF-8 text; --config takes the config, not the journal)") \
            from None
    return any_config_from_mapping(data, path)


def check_runnable(cfg: Any) -> None:
    """What only a service about to run needs of its config (`croupier run`, after `--sim` has swapped its drivers):
    a seed only where it seeds a simulation, and a journal folder it can write. Raises ConfigError naming the key."""
    where = str(cfg.path) if cfg.path else "config"
    if isinstance(cfg, CabinetConfig):
        section = "cabinet"
        if cfg.seed is not None and not cfg.panel_sim:
            # A seeded live cabinet's reel stops are predictable: two runs with seed = 11 spun the same games.
            raise ConfigError(f"{where}[cabinet].seed: a seed is for simulation only (croupier run --sim, croupier "
                              "demo); a live cabinet draws its stops from the system's random numbers")
    elif isinstance(cfg, TableConfig):
        section = "table"
        if cfg.shoe.seed is not None and not cfg.shoe.simulated:
            raise ConfigError(f"{where}[shoe].seed: a seed is for the simulated shoe only (port = \"sim\" or "
                              f"croupier run --sim); this shoe is {cfg.shoe.port}")
    else:
        section = "progressive"
    key = _journal_key(cfg.raw.get(section, {}), f"{where}[{section}]")
    folder = cfg.journal.parent
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ConfigError(f"{key}: cannot make the journal's folder {folder}: {exc.strerror}") from None
    if not os.access(folder, os.W_OK | os.X_OK) or (cfg.journal.exists() and not os.access(cfg.journal, os.W_OK)):
        raise ConfigError(f"{key}: {cfg.journal if cfg.journal.exists() else folder} is not writable by this user")

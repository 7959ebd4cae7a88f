"""Configuration files (TOML) of a table, a slot cabinet or a progressive link controller: ids, game or title, drivers, bus, journal and keys, validated at start with messages naming the key.

`load_config(path)` reads any of the three, told apart by their first section; `[panel]`, `[bus]` and the journal
mean the same in each. Sections are read with drivers/configreader.py: a key nobody reads is refused.
"""

from __future__ import annotations

import os
import tomllib
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Mapping

from controller.bus import BusEndpoints, parse_role
from drivers.configreader import ConfigError, Section, refuse_non_finite, shown
from controller.games import get_game
from controller.games.base import GameSpec, RulesBase, RulesError, rules_from_mapping
from controller.titoconfig import TitoConfig, money_devices, simulated_devices, tito_config

__all__ = ["ConfigError", "TableConfig", "ShoeConfig", "CameraConfig", "BusConfig", "CabinetConfig", "LinkConfig",
           "ProgressiveConfig", "load_config", "config_from_mapping", "cabinet_config_from_mapping",
           "progressive_config_from_mapping", "any_config_from_mapping", "check_runnable", "BUTTON_ACTIONS"]


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


def _journal(t: Section, ident: str, base: Path) -> tuple[Path, dict[str, Path | None]]:
    """The journal (`journal`, else `<state_dir>/<id>.journal`), `journal_key` (the machine's journal key, outside
    the journal folder; default: the user's, made on first use) and `journal_anchor` (the last committed row,
    outside the database; default `<journal>.anchor`)."""
    from controller.journal import default_anchor

    if t.has("journal"):
        t.value("state_dir")  # the journal wins; a state_dir beside it is unused
        journal = base / t.get("journal", str)
    else:
        journal = base / t.get("state_dir", str, ".") / f"{ident}.journal"
    where = _journal_key(t.data, t.where)
    if journal.is_dir():
        raise ConfigError(f"{where}: the journal {journal} is a folder")
    for folder in (journal.parent, *journal.parent.parents):
        if folder.exists():
            if not folder.is_dir():
                raise ConfigError(f"{where}: {folder} is a file, not a folder for the journal")
            break
    key, anchor = t.get("journal_key", str), t.get("journal_anchor", str)
    key_path = base / key if key else None
    if key_path is not None and journal.parent.resolve() in (key_path.parent.resolve(), *key_path.resolve().parents):
        raise ConfigError(f"{t.key('journal_key')}: keep the key outside the journal's folder {journal.parent}")
    return journal, {"journal_key": key_path, "journal_anchor": base / anchor if anchor else default_anchor(journal)}


def _journal_key(section: Mapping[str, Any], where: str) -> str:
    return f"{where}.journal" if "journal" in section else f"{where}.state_dir"


def config_from_mapping(data: Mapping[str, Any], path: Path | None = None) -> TableConfig:
    """Validate a parsed table config; relative paths are taken from the config file's folder."""
    where = str(path) if path else "config"
    base = path.parent if path else Path.cwd()
    root = Section(data, where, root=True)
    t, r, s, c, p, b = (root.section(name) for name in ("table", "rules", "shoe", "camera", "panel", "bus"))
    floor = root.optional("floor")
    root.skip("screens")  # controller/screens/config.py reads it when the bridge starts
    root.done()
    refuse_non_finite(data, where)

    table_id = t.ident("id", "table")
    game_name = t.get("game", str)
    if not game_name:
        raise ConfigError(f"{t.key('game')}: which game does this table run?")
    try:
        game = get_game(game_name)
    except ValueError as exc:
        raise ConfigError(f"{t.key('game')}: {exc}") from None
    journal, files = _journal(t, table_id, base)
    betting = t.seconds("betting_seconds", 0, 1, 3600, off=True)  # 0: the dealer closes bets
    t.done()
    try:  # the rules read their own keys (controller/games/base.py)
        rules = rules_from_mapping(game.rules_type, r.data, where=r.where)
    except RulesError as exc:
        text = str(exc)
        raise ConfigError(text if text.startswith(where) else f"{r.where}: {text}") from None

    shoe = ShoeConfig(port=s.get("port", str, "sim"), decks=s.get("decks", int, getattr(rules, "decks", 1)),
                      cut=s.get("cut", int), seed=s.get("seed", int))
    s.done()
    if not 1 <= shoe.decks <= 8:
        raise ConfigError(f"{s.key('decks')}: 1 to 8 decks, got {shoe.decks}")
    if shoe.cut is not None and not 1 <= shoe.cut < 52 * shoe.decks:
        raise ConfigError(f"{s.key('cut')}: the cut card goes inside the shoe (1..{52 * shoe.decks - 1})")

    camera = _camera(c, base)
    panel, panel_sim = _panel(p, path, base)
    return TableConfig(path, table_id, game, rules, journal, shoe, camera, panel, panel_sim, _bus(b, where, base),
                       betting, data, **files, floor=_floor(floor, table_id, base))


def _camera(c: Section, base: Path) -> CameraConfig:
    """The [camera] section: where frames come from, and how sure a card must be before it counts."""
    source = c.get("source", (str, int), "none")
    if isinstance(source, int):
        source = str(source)  # a device index
    if not source.strip():
        raise ConfigError(f"{c.key('source')}: \"none\", \"sim\", a device index, a /dev/v4l/by-id path, a file or a "
                          "URL")
    config = c.get("config", str)
    cam = CameraConfig(source, base / config if config else None, float(c.get("fps", (int, float), 4.0)),
                       c.get("stable_frames", int, 3), float(c.get("min_confidence", (int, float), 0.9)))
    c.done()
    if not 0.1 <= cam.fps <= 30:
        raise ConfigError(f"{c.key('fps')}: 0.1 to 30 frames a second, got {cam.fps}")
    if not 1 <= cam.stable_frames <= 100:
        raise ConfigError(f"{c.key('stable_frames')}: 1 to 100, got {cam.stable_frames}")
    if not 0 < cam.min_confidence <= 1:
        raise ConfigError(f"{c.key('min_confidence')}: above 0, at most 1, got {cam.min_confidence}")
    if cam.on and source != "sim":  # a real camera: its source and its calibration must hold up now
        from drivers.camera.capture import CameraError, parse_source
        from vision.geometry import ConfigError as CameraConfigError
        from vision.geometry import geometry_from_config, load_config as load_camera_config

        try:
            parse_source(source)
        except CameraError as exc:
            raise ConfigError(f"{c.key('source')}: {exc}") from None
        if cam.config is None:
            raise ConfigError(f"{c.key('config')}: a real camera needs its calibration file (`croupier vision "
                              "calibrate --config FILE`), e.g. config = \"camera.toml\"")
        try:
            geometry_from_config(load_camera_config(cam.config))
        except (OSError, CameraConfigError) as exc:
            raise ConfigError(f"{c.key('config')}: {cam.config}: {getattr(exc, 'strerror', None) or exc}") from None
    return cam


def _panel(p: Section, path: Path | None, base: Path) -> tuple[Path | None, bool]:
    """The [panel] section: a pin map file (and its driver), or the pin map inline in this file (which
    drivers/panel/config.py reads)."""
    panel: Path | None = None
    panel_sim = False
    if p.has("file"):  # a pin map file: `file` and `driver` only
        panel, panel_sim = base / p.get("file", str), p.get("driver", str, "gpio") == "sim"
        p.done()
        if not panel.is_file():
            raise ConfigError(f"{p.key('file')}: no such file {panel}")
    elif p.data:
        panel = path  # the pin map is inline in this file
    if panel is not None:
        try:
            from drivers.panel import PanelConfigError, load_panel_config

            load_panel_config(panel)
        except PanelConfigError as exc:
            raise ConfigError(str(exc)) from None
    return panel, panel_sim


def _bus(b: Section, where: str, base: Path) -> BusConfig:
    """The [bus] section: endpoints, the CURVE keys folder and each client's key and role."""
    endpoints = BusEndpoints(*(b.endpoint(k, getattr(BusEndpoints(), k)) for k in ("publish", "snapshot", "commands")))
    folder = b.get("keys", str)
    keys = base / folder if folder is not None else None
    entries = b.get("client", list, [])
    heartbeat, hwm = b.seconds("heartbeat", 1.0, 0.05, 60), b.get("hwm", int, 1000)
    curve_screens = b.get("curve_screens", bool, False)
    b.done()
    bound = [endpoints.publish, endpoints.snapshot, endpoints.commands]
    for k, endpoint in zip(("snapshot", "commands"), bound[1:]):
        if bound.count(endpoint) > 1:
            raise ConfigError(f"{b.key(k)}: {endpoint} is bound by another of the bus's sockets already")
    clients = []
    for i, entry in enumerate(entries):
        w = f"{where}[[bus.client]] #{i + 1}"
        if not isinstance(entry, dict):
            raise ConfigError(f"{w}: expected a table with key and role")
        e = Section(entry, w)
        key_file, role = (keys or base) / e.get("key", str, ""), e.get("role", str, "")
        e.done()
        if not key_file.is_file():
            raise ConfigError(f"{e.key('key')}: no such key file {key_file}")
        try:
            parse_role(role)
        except ValueError as exc:
            raise ConfigError(f"{e.key('role')}: {exc}") from None
        clients.append((key_file, role))
    if clients and keys is None:
        raise ConfigError(f"{b.key('keys')}: client keys need the folder holding the server key")
    if keys is not None and not (keys / "server.key_secret").is_file():
        raise ConfigError(f"{b.key('keys')}: no server.key_secret in {keys} (create it: croupier keys server "
                          f"--dir {keys})")
    if not 1 <= hwm <= 1_000_000:
        raise ConfigError(f"{b.key('hwm')}: 1 to 1000000 messages, got {hwm}")
    if curve_screens and keys is None:
        raise ConfigError(f"{b.key('curve_screens')}: CURVE needs the keys folder ([bus].keys)")
    return BusConfig(endpoints, keys, tuple(clients), heartbeat, hwm, curve_screens)


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
    validator: Any = None                              # the bill validator's line ([validator]); None: none
    printer: Any = None                                # the ticket printer's line ([printer]); None: none
    tito: TitoConfig = field(default_factory=TitoConfig)  # [cabinet.tito]

    @property
    def table_id(self) -> str:  # the bus and the journal name the service by this
        return self.cabinet_id

    def simulated(self) -> CabinetConfig:
        """Every driver swapped for its simulation (`croupier run --sim`)."""
        return replace(self, panel_sim=True, **simulated_devices(self))


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


def _cents(t: Section, key: str, default: int) -> int:
    value = t.get(key, int, default)
    if value < 0:
        raise ConfigError(f"{t.key(key)}: cents cannot be negative")
    return int(value)


def _title(t: Section, base: Path) -> Any:
    from controller.slots import TitleError, get_title, load_title, title_ids

    name = t.get("title", str)
    if not name:
        raise ConfigError(f"{t.key('title')}: which title? ({', '.join(title_ids())})")
    try:
        return load_title(base / name) if name.endswith(".toml") else get_title(name)
    except TitleError as exc:
        raise ConfigError(f"{t.key('title')}: {exc}") from None


def cabinet_config_from_mapping(data: Mapping[str, Any], path: Path | None = None) -> CabinetConfig:
    """Validate a parsed cabinet config; relative paths are taken from the config file's folder."""
    from controller.cabinetstate import Settings
    from controller.sas import sas_config

    where = str(path) if path else "config"
    base = path.parent if path else Path.cwd()
    root = Section(data, where, root=True)
    c, p, b, sas = (root.section(name) for name in ("cabinet", "panel", "bus", "sas"))
    validator, printer, floor = (root.optional(name) for name in ("validator", "printer", "floor"))
    root.skip("screens")  # controller/screens/config.py reads it when the bridge starts
    root.done()
    refuse_non_finite(data, where)
    cabinet_id = c.ident("id", "cabinet")
    title = _title(c, base)
    denomination = c.get("denomination", int, title.denominations[0])
    if denomination not in title.denominations:
        raise ConfigError(f"{c.key('denomination')}: {title.name} is played at "
                          f"{', '.join(map(str, title.denominations))} cents per credit, not {denomination}")
    paytable = c.get("paytable", int, 0)
    if not 0 <= paytable < len(title.paytables):
        raise ConfigError(f"{c.key('paytable')}: {title.name} has paytables 0..{len(title.paytables) - 1}")
    coin = _cents(c, "coin_cents", denomination)
    if coin < denomination or coin % denomination:
        raise ConfigError(f"{c.key('coin_cents')}: a coin must be whole credits of {denomination} cents, got {coin}")
    limits = {}
    for key in ("hand_pay_limit_cents", "jackpot_limit_cents"):
        cents = _cents(c, key, 120_000)
        if cents < denomination:
            raise ConfigError(f"{c.key(key)}: at least one credit ({denomination} cents)")
        limits[key] = -(-cents // denomination)  # whole credits, rounded up so the limit is never undercut
    progressive, link = _cabinet_link(c, title, floor is not None, base)
    settings = Settings(limits["hand_pay_limit_cents"], limits["jackpot_limit_cents"], coin // denomination,
                        c.get("hopper", bool, True), progressive)
    hopper_timeout, spin, attract = (c.seconds("hopper_timeout", 3.0, 0.1, 60), c.seconds("spin_seconds", 1.0, 0, 30),
                                     c.seconds("attract_seconds", 60.0, 0.1, 86400, off=True))
    reels = c.get("reels", str, "screen")
    if reels not in ("screen", "mechanical"):
        raise ConfigError(f"{c.key('reels')}: \"screen\" or \"mechanical\", got {reels!r}")
    buttons, displays = dict(DEFAULT_BUTTONS), dict(DEFAULT_DISPLAYS)
    bt = c.section("buttons")
    for name, action in bt.items():
        if action not in BUTTON_ACTIONS:
            raise ConfigError(f"{bt.key(name)}: {action!r} is not one of {', '.join(BUTTON_ACTIONS)}")
        buttons[name] = action
    ds = c.section("displays")
    for meter, name in ds.items():
        if meter not in DEFAULT_DISPLAYS or not isinstance(name, str):
            raise ConfigError(f"{ds.key(meter)}: meters are {', '.join(DEFAULT_DISPLAYS)}, each a display name")
        displays[meter] = name
    (journal, files), seed, tito = _journal(c, cabinet_id, base), c.get("seed", int), tito_config(c)
    c.done()
    panel, panel_sim = _panel(p, path, base)
    if reels == "mechanical":
        _mechanical(c, title, panel)
    return CabinetConfig(path, cabinet_id, title, denomination, journal, settings, paytable, hopper_timeout, spin,
                         attract, tuple(buttons.items()), tuple(displays.items()), reels, link, panel, panel_sim,
                         _bus(b, where, base), seed, data, **files, sas=sas_config(sas.data, where, denomination),
                         floor=_floor(floor, cabinet_id, base), tito=tito,
                         **money_devices(validator, printer, where, denomination))


def _mechanical(c: Section, title: Any, panel: Path | None) -> None:
    """Mechanical reels: the pin map's [panel.reels] must carry the title's three strips."""
    from drivers.panel import load_panel_config

    spec = load_panel_config(panel).reels if panel is not None else None
    if spec is None:
        raise ConfigError(f"{c.key('reels')}: mechanical reels need [panel.reels] in the pin map")
    if len(spec.reels) != 3 or any(r.size != spec.stops for r in title.reels):
        raise ConfigError(f"{c.key('reels')}: the pin map's {len(spec.reels)} reels of {spec.stops} stops do not "
                          f"carry {title.name}'s strips ({', '.join(str(r.size) for r in title.reels)} stops)")


def _cabinet_link(c: Section, title: Any, floor: bool, base: Path) -> tuple[str, LinkConfig | None]:
    """`[cabinet.progressive]`: the progressive's mode ("link" or "standalone") and, on a link, how to reach it."""
    p = c.section("progressive")
    if not p.data:
        if title.progressive is not None:
            raise ConfigError(f"{c.where}: {title.name} has a system-wide progressive: give "
                              "[cabinet.progressive] with the link controller's endpoints, or mode = \"standalone\" "
                              "for the cabinet's own pool")
        return "none", None
    if title.progressive is None:
        raise ConfigError(f"{p.where}: {title.name} has no progressive")
    mode = p.get("mode", str, "link")
    if mode not in ("link", "standalone"):
        raise ConfigError(f"{p.key('mode')}: \"link\" or \"standalone\", got {mode!r}")
    if mode == "standalone":
        p.done()  # a standalone pool takes no other key
        return mode, None
    engine = p.get("engine", str, "bus")
    if engine not in ("bus", "floor"):
        raise ConfigError(f"{p.key('engine')}: \"bus\" (the link controller) or \"floor\" (the floor's JetStream), "
                          f"got {shown(engine)}")
    link = _floor_link(p, floor) if engine == "floor" else _bus_link(p, base)
    p.done()
    return mode, link


def _bus_link(p: Section, base: Path) -> LinkConfig:
    """`[cabinet.progressive]` on the ZeroMQ link controller (controller/progressive.py)."""
    missing = [k for k in ("link", "publish", "snapshot", "commands") if not p.has(k)]
    if missing:
        raise ConfigError(f"{p.where}: a link needs the controller's id (link) and its publish, snapshot and "
                          f"commands endpoints; missing {', '.join(missing)}")
    keys = []
    for key in ("server_key", "key"):
        name = p.get(key, str)
        file = base / name if name is not None else None
        if file is not None and not file.is_file():
            raise ConfigError(f"{p.key(key)}: no such key file {file}")
        keys.append(file)
    if (keys[0] is None) != (keys[1] is None):
        raise ConfigError(f"{p.where}: give both server_key (the controller's public key) and key (ours), or "
                          "neither (unauthenticated: tests only)")
    heartbeat, timeout = p.seconds("heartbeat", 1.0, 0.05, 60), p.seconds("timeout", 2.0, 0.05, 60)
    endpoints = (p.endpoint(k) for k in ("publish", "snapshot", "commands"))
    return LinkConfig(p.ident("link", "link"), BusEndpoints(*endpoints), keys[0], keys[1], heartbeat, timeout)


def _floor_link(p: Section, floor: bool) -> LinkConfig:
    """`[cabinet.progressive] engine = "floor"`: the link on the floor's JetStream (controller/floor/progressive.py)."""
    if not floor:
        raise ConfigError(f"{p.key('engine')}: \"floor\" needs the [floor] section (its servers carry the link)")
    extra = sorted(set(p.data) & {"commands", "server_key", "key"})
    if extra:
        raise ConfigError(f"{p.where}: {', '.join(extra)}: not on a floor link (the floor's credential carries it)")
    if not p.has("link"):
        raise ConfigError(f"{p.where}: a link needs its id (link)")
    link_id = p.ident("link", "link")
    if p.has("publish") != p.has("snapshot"):
        raise ConfigError(f"{p.where}: give a pool reader's publish and snapshot endpoints (for the screens), or "
                          "neither")
    endpoints = BusEndpoints(p.endpoint("publish"), p.endpoint("snapshot")) if p.has("publish") else None
    return LinkConfig(link_id, endpoints, heartbeat=p.seconds("heartbeat", 1.0, 0.05, 60),
                      timeout=p.seconds("timeout", 2.0, 0.05, 60), engine="floor")


def progressive_config_from_mapping(data: Mapping[str, Any], path: Path | None = None) -> ProgressiveConfig:
    """Validate a parsed progressive link controller config."""
    where = str(path) if path else "config"
    base = path.parent if path else Path.cwd()
    root = Section(data, where, root=True)
    p, b = root.section("progressive"), root.section("bus")
    floor = root.optional("floor")
    root.done()
    refuse_non_finite(data, where)
    link_id = p.ident("id", "link")
    engine = p.get("engine", str, "bus")
    if engine not in ("bus", "floor"):
        raise ConfigError(f"{p.key('engine')}: \"bus\" (this link controller) or \"floor\" (a reader of the link on "
                          f"the floor's JetStream), got {shown(engine)}")
    if engine == "floor" and floor is None:
        raise ConfigError(f"{p.key('engine')}: \"floor\" needs the [floor] section (its servers carry the link)")
    title = _title(p, base) if p.has("title") else None
    if title is not None and title.progressive is None:
        raise ConfigError(f"{p.key('title')}: {title.name} has no progressive")
    if title is None and not p.has("reset_cents"):
        raise ConfigError(f"{p.where}: give the title (its reset value) or reset_cents")
    reset = _cents(p, "reset_cents", title.progressive.reset_cents if title is not None else 0)
    journal, files = _journal(p, link_id, base)
    p.done()
    bus = _bus(b, where, base)
    if bus.curve_screens:
        raise ConfigError(f"{b.key('curve_screens')}: not on a link controller (its cabinets follow the pool in "
                          "the clear; their contributions and hits go over CURVE)")
    return ProgressiveConfig(path, link_id, title, reset, journal, bus, data, **files,
                             floor=_floor(floor, link_id, base), engine=engine)


def _floor(f: Section | None, ident: str, base: Path) -> Any:
    """The [floor] section (controller/floor/config.py), or None: no floor, the machine runs alone."""
    if f is None:
        return None
    from controller.floor.config import floor_config_from_mapping

    try:
        return floor_config_from_mapping(f.data, ident, f.where, base)
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

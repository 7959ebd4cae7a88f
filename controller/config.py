"""A table's configuration file (TOML): table id, game and rules, drivers, bus, journal and keys, validated at start with messages naming the key."""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Mapping

from controller.bus import BusEndpoints
from controller.games import get_game
from controller.games.base import GameSpec, RulesBase, RulesError, rules_from_mapping

__all__ = ["ConfigError", "TableConfig", "ShoeConfig", "BusConfig", "load_config", "config_from_mapping"]


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
class BusConfig:
    endpoints: BusEndpoints = BusEndpoints()
    keys: Path | None = None                           # folder with server.key_secret and client .key files
    clients: tuple[tuple[Path, str], ...] = ()          # (public key file, role)
    heartbeat: float = 1.0
    hwm: int = 1000


@dataclass(frozen=True)
class TableConfig:
    path: Path | None
    table_id: str
    game: GameSpec
    rules: RulesBase
    journal: Path
    shoe: ShoeConfig = ShoeConfig()
    camera: str = "none"
    panel: Path | None = None                          # the file holding the [panel] pin map, or None
    panel_sim: bool = False
    bus: BusConfig = BusConfig()
    betting_seconds: float = 0.0                       # >0: bets close by themselves after this long
    raw: Mapping[str, Any] = field(default_factory=dict, repr=False)

    def simulated(self) -> TableConfig:
        """Every driver swapped for its simulation (`croupier run --sim`)."""
        return replace(self, shoe=replace(self.shoe, port="sim"), panel_sim=True,
                       camera="sim" if self.camera != "none" else "none")


_SECTIONS = {"table", "rules", "shoe", "camera", "panel", "bus", "screens"}  # [screens]: controller/screens/config.py


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


def config_from_mapping(data: Mapping[str, Any], path: Path | None = None) -> TableConfig:
    """Validate a parsed config; relative paths are taken from the config file's folder."""
    where = str(path) if path else "config"
    base = path.parent if path else Path.cwd()
    _unknown(data, _SECTIONS, where)

    t = _section(data, "table", where)
    _unknown(t, {"id", "game", "journal", "state_dir", "betting_seconds"}, f"{where}[table]")
    table_id = _get(t, "id", str, f"{where}[table]")
    if not table_id or not all(c.isalnum() or c in "-_" for c in table_id):
        raise ConfigError(f"{where}[table].id: a table id is letters, digits, - and _ (got {table_id!r})")
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
    if "journal" in t:
        journal = base / _get(t, "journal", str, f"{where}[table]")
    else:
        journal = base / _get(t, "state_dir", str, f"{where}[table]", ".") / f"{table_id}.journal"
    betting = _get(t, "betting_seconds", (int, float), f"{where}[table]", 0)
    if betting < 0:
        raise ConfigError(f"{where}[table].betting_seconds: must be 0 (dealer closes bets) or more")

    s = _section(data, "shoe", where)
    _unknown(s, {"port", "decks", "cut", "seed"}, f"{where}[shoe]")
    shoe = ShoeConfig(port=_get(s, "port", str, f"{where}[shoe]", "sim"),
                      decks=_get(s, "decks", int, f"{where}[shoe]", getattr(rules, "decks", 1)),
                      cut=_get(s, "cut", int, f"{where}[shoe]"), seed=_get(s, "seed", int, f"{where}[shoe]"))
    if not 1 <= shoe.decks <= 8:
        raise ConfigError(f"{where}[shoe].decks: 1 to 8 decks, got {shoe.decks}")
    if shoe.cut is not None and not 1 <= shoe.cut < 52 * shoe.decks:
        raise ConfigError(f"{where}[shoe].cut: the cut card goes inside the shoe (1..{52 * shoe.decks - 1})")

    c = _section(data, "camera", where)
    _unknown(c, {"source"}, f"{where}[camera]")
    camera = _get(c, "source", str, f"{where}[camera]", "none")

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

    b = _section(data, "bus", where)
    _unknown(b, {"publish", "snapshot", "commands", "keys", "client", "heartbeat", "hwm"}, f"{where}[bus]")
    endpoints = BusEndpoints(*(_get(b, k, str, f"{where}[bus]", getattr(BusEndpoints(), k))
                               for k in ("publish", "snapshot", "commands")))
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
        raise ConfigError(f"{where}[bus].keys: client keys need the folder holding the table's server key")
    if keys is not None and not (keys / "server.key_secret").is_file():
        raise ConfigError(f"{where}[bus].keys: no server.key_secret in {keys} (create it: croupier keys server "
                          f"--dir {keys})")
    heartbeat = _get(b, "heartbeat", (int, float), f"{where}[bus]", 1.0)
    hwm = _get(b, "hwm", int, f"{where}[bus]", 1000)
    if heartbeat <= 0 or hwm < 1:
        raise ConfigError(f"{where}[bus]: heartbeat and hwm must be positive")
    bus = BusConfig(endpoints, keys, tuple(clients), float(heartbeat), hwm)

    return TableConfig(path, table_id, game, rules, journal, shoe, camera, panel, panel_sim, bus, float(betting),
                       data)


def load_config(path: str | Path) -> TableConfig:
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
    return config_from_mapping(data, path)

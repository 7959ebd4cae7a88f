"""The [screens] section of a table's or cabinet's config: where the bridge listens, the staff pages' token, the key for their commands.

```toml
[screens]
listen = "0.0.0.0:8080"                    # host:port the bridge serves pages and WebSockets on
dealer_token_file = "dealer-screen.token"  # the dealer pages' secret (one line, 16+ characters); relative to
                                           # this file. Unset: a fresh random token each start, logged.
dealer_key = "dealer.key_secret"           # the CURVE key pair (in [bus].keys) the bridge sends the dealer
                                           # pages' commands with; its public key must be a [[bus.client]]
                                           # with role "dealer". Unset with [bus].keys: dealer pages are read-only.
four_colour = false                        # the four-colour deck by default (a page may ask with ?deck=4 or 2)
pit_token_file = "pit-screen.token"        # the pit page's secret (/pit/<this table's id>), not the dealer's;
                                           # unset: no pit page
pit_key = "pit.key_secret"                 # the CURVE key pair (in [bus].keys) the bridge asks the table's `pit`
                                           # command with: a [[bus.client]] with role "pit" (needs [bus].keys)
pit_tables = ["bj-2"]                      # further tables of the pit (served by the same bridge): their pit
                                           # views are asked with their own configs' pit_key
```

A cabinet's [screens] has `listen` and `dealer_token_file` (the attendant's page shares the token
mechanism) and `attendant_key`: a key pair listed as a [[bus.client]] with role "attendant", which the
attendant's page clears lockups with.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping

from controller.config import CabinetConfig, ConfigError, TableConfig
from drivers.configreader import Section

__all__ = ["ScreensConfig", "screens_config", "parse_listen", "MIN_TOKEN"]

MIN_TOKEN = 16  # characters of a dealer token: guessing one over a LAN must be hopeless


@dataclass(frozen=True)
class ScreensConfig:
    host: str = "0.0.0.0"
    port: int = 8080
    dealer_token: str = ""                 # the dealer pages' secret
    token_generated: bool = True           # True: made up at start (say so, and print the dealer URL)
    dealer_keys: tuple[bytes, bytes] | None = None    # our CURVE pair for dealer commands (None: none or no CURVE)
    server_public: bytes | None = None     # the table's public key, for CURVE
    commands: bool = True                  # may dealer pages send commands at all
    four_colour: bool = False
    pit_token: str | None = None           # the pit page's secret (None: no pit page)
    pit_keys: tuple[bytes, bytes] | None = None   # our CURVE pair for the `pit` command
    pit_tables: tuple[str, ...] = ()       # further tables the pit page shows beside this one


def parse_listen(text: str, where: str = "listen") -> tuple[str, int]:
    host, sep, port = text.rpartition(":")
    if not sep or not (port.isascii() and port.isdigit()) or not 0 <= int(port) <= 65535:
        raise ConfigError(f"{where}: expected HOST:PORT (e.g. 0.0.0.0:8080), got {text!r}")
    return host.strip("[]") or "0.0.0.0", int(port)


def _read_token(path: Path, where: str) -> str:
    try:
        token = path.read_text().strip()
    except FileNotFoundError:
        raise ConfigError(f"{where}: no such token file {path} (make one: python3 -c 'import secrets; "
                          f"print(secrets.token_urlsafe(24))' > {path})") from None
    except OSError as exc:
        raise ConfigError(f"{where}: cannot read {path}: {exc.strerror}") from None
    if len(token) < MIN_TOKEN or any(c.isspace() for c in token):
        raise ConfigError(f"{where}: the token in {path} must be one word of at least {MIN_TOKEN} characters")
    return token


def screens_config(cfg: TableConfig | CabinetConfig, overrides: Mapping[str, Any] | None = None) -> ScreensConfig:
    """Validate the [screens] section of a table or cabinet config (plus command-line overrides: listen,
    four_colour)."""
    from controller.bus import load_public_key, load_secret_keys, parse_role

    where = f"{cfg.path or 'config'}[screens]"
    cabinet = isinstance(cfg, CabinetConfig)
    key_field, staff = ("attendant_key", "attendant") if cabinet else ("dealer_key", "dealer")
    s = Section(cfg.raw.get("screens", {}), where)
    listen, token_file, key_name = s.get("listen", str, "0.0.0.0:8080"), s.get("dealer_token_file", str), \
        s.get(key_field, str)
    four = False if cabinet else s.get("four_colour", bool, False)  # a cabinet's pages have no cards
    pit_token_file, pit_key = (None, None) if cabinet else (s.get("pit_token_file", str), s.get("pit_key", str))
    pit_tables = () if cabinet else tuple(s.get("pit_tables", list, []))
    if not all(isinstance(t, str) and t for t in pit_tables):
        raise ConfigError(f"{s.key('pit_tables')}: a list of table ids")
    s.done()
    given = Section({k: v for k, v in (overrides or {}).items() if v is not None}, where)  # the command line's
    listen, four = given.get("listen", str, listen), given.get("four_colour", bool, four)
    host, port = parse_listen(listen, s.key("listen"))
    base = cfg.path.parent if cfg.path else Path.cwd()
    if token_file:
        token, generated = _read_token(base / token_file, s.key("dealer_token_file")), False
    else:
        token, generated = secrets.token_urlsafe(18), True

    keys = server = None
    commands = True
    if cfg.bus.keys is None:
        if key_name:
            raise ConfigError(f"{where}.{key_field}: the bus has no CURVE keys ([bus].keys): commands are "
                              f"unauthenticated, so the bridge needs no key")
    elif not key_name:
        if cfg.bus.curve_screens:
            raise ConfigError(f"{where}.{key_field}: the bus sends updates over CURVE ([bus].curve_screens) to "
                              f"listed keys only: the bridge needs its key to follow the "
                              f"{'cabinet' if cabinet else 'table'}")
        commands = False  # an authenticated bus and no key for us: the staff pages only look
    else:
        path = cfg.bus.keys / key_name
        try:
            keys = load_secret_keys(path)
        except (OSError, ValueError) as exc:
            raise ConfigError(f"{where}.{key_field}: {path}: not a CURVE secret key file ({exc})") from None
        roles = {load_public_key(p): role for p, role in cfg.bus.clients}
        role = roles.get(keys[0])
        if role is None or parse_role(role).kind != staff:
            raise ConfigError(f"{where}.{key_field}: {path.name} is not listed as a [[bus.client]] with role "
                              f"\"{staff}\" ({'role ' + repr(role) if role else 'not listed'}), so the "
                              f"{'cabinet' if cabinet else 'table'} would refuse its commands")
        try:
            server = load_public_key(cfg.bus.keys / "server.key")
        except OSError:
            raise ConfigError(f"{where}.{key_field}: no server.key (the bus's public key) in {cfg.bus.keys}") from None
    pit_token = _read_token(base / pit_token_file, s.key("pit_token_file")) if pit_token_file else None
    if pit_token is not None and pit_token == token:
        raise ConfigError(f"{s.key('pit_token_file')}: the pit page's token must not be the dealer pages' token")
    pit_keys = None
    if pit_key:
        if cfg.bus.keys is None:
            raise ConfigError(f"{s.key('pit_key')}: the bus has no CURVE keys ([bus].keys): the table answers `pit` "
                              f"only to a pit key")
        pit_keys = _staff_keys(cfg, where, "pit_key", pit_key, "pit")
        try:
            server = server or load_public_key(cfg.bus.keys / "server.key")
        except OSError:
            raise ConfigError(f"{s.key('pit_key')}: no server.key (the bus's public key) in {cfg.bus.keys}") from None
    elif pit_token is not None:
        raise ConfigError(f"{s.key('pit_key')}: the pit page asks the table with the bridge's pit key: set it")
    return ScreensConfig(host, port, token, generated, keys, server, commands, four, pit_token, pit_keys, pit_tables)


def _staff_keys(cfg: TableConfig | CabinetConfig, where: str, field: str, name: str, role_kind: str) -> tuple[bytes, bytes]:
    """Our CURVE pair `name` in [bus].keys, checked to be a [[bus.client]] of `role_kind`."""
    from controller.bus import load_public_key, load_secret_keys, parse_role

    assert cfg.bus.keys is not None
    path = cfg.bus.keys / name
    try:
        keys = load_secret_keys(path)
    except (OSError, ValueError) as exc:
        raise ConfigError(f"{where}.{field}: {path}: not a CURVE secret key file ({exc})") from None
    role = {load_public_key(p): r for p, r in cfg.bus.clients}.get(keys[0])
    if role is None or parse_role(role).kind != role_kind:
        raise ConfigError(f"{where}.{field}: {path.name} is not listed as a [[bus.client]] with role \"{role_kind}\" "
                          f"({'role ' + repr(role) if role else 'not listed'}), so the table would refuse its commands")
    return keys

"""One reader for every config section (a TOML table): each key read is recorded with its type check and default, and a key nobody read is refused, naming the section and the key.

Klipper's configfile.py reads its options this way: a section's keys are named once, where they are read, so
the list of known keys cannot drift from the code that reads them, and a misspelt key is an error, not a silent
default. Pure, the standard library only. It sits among the drivers because the panel's pin map
(drivers/panel/config.py) is read with it too, and a driver imports nothing of `controller` but the card type;
the table's, cabinet's and link's configs (controller/config.py), [screens], [sas] and [floor] import it from here.
"""

from __future__ import annotations

import math
import re
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterator, Mapping, Self

__all__ = ["ConfigError", "Section", "Listed", "Kind", "kind_name", "refuse_non_finite", "shown", "read_toml",
           "DeviceLine"]


class ConfigError(ValueError):
    """The configuration cannot run a table; the message names the file, the key and the problem."""


Kind = type | tuple[type, ...]
_KIND_NAMES: dict[type, str] = {str: "text", int: "a whole number", float: "a number", bool: "true or false",
                                dict: "a table", list: "a list"}

# An id names the journal file, the bus topics and the screens' URLs: ASCII only (a Unicode digit or letter reads
# like another id on a screen) and short enough for a file name and a topic.
_ID = re.compile(r"[A-Za-z0-9_-]{1,64}")
_ENDPOINT = re.compile(r"tcp://(\*|[A-Za-z0-9.-]+|\[[0-9A-Fa-f:.]+\]):(\d{1,5})|ipc://.+|inproc://[^\s]+", re.ASCII)


@dataclass(frozen=True)
class DeviceLine:
    """A serial device's section ([validator], [printer]): its `port` first, the device's own keys after."""

    port: str = "none"             # "sim", "none", a device path (/dev/ttyUSB0) or a pyserial URL

    @property
    def on(self) -> bool:
        return self.port != "none"

    @property
    def simulated(self) -> bool:
        return self.port == "sim"


def kind_name(kind: Kind) -> str:
    """How an error names what a key should hold ("a whole number or text")."""
    kinds = kind if isinstance(kind, tuple) else (kind,)
    return " or ".join(_KIND_NAMES.get(k, k.__name__) for k in kinds)


def shown(text: str | None) -> str:
    """A value for an error message, cut short: a 10,000-character id must not flood the log."""
    return repr(text) if text is None or len(text) <= 40 else f"{text[:40]!r}... ({len(text)} characters)"


class Section:
    """One table of a config being read. `where` names it in errors ("t.toml[bus]", "panel.buttons.deal"); every
    read records its key, and `done()` refuses the keys left unread."""

    error: type[ValueError] = ConfigError

    def __init__(self, data: Any, where: str, *, root: bool = False) -> None:
        if not isinstance(data, Mapping):
            raise self.error(self.not_a_table(data, where))
        self.data: Mapping[str, Any] = data
        self.where = where
        self.root = root  # a whole config file: its keys are sections, named `file[section]` in errors
        self.read: set[str] = set()

    @staticmethod
    def not_a_table(data: Any, where: str) -> str:
        return f"{where}: expected a table"

    def key(self, key: str) -> str:
        """How errors name one of this section's keys."""
        return f"{self.where}[{key}]" if self.root else f"{self.where}.{key}"

    def has(self, key: str) -> bool:
        """Whether `key` is given; a key asked about is a key this section knows (recorded as read)."""
        self.read.add(key)
        return key in self.data

    def value(self, key: str, default: Any = None) -> Any:
        """The value at `key` as written (recorded as read), or `default`; the caller checks it."""
        self.read.add(key)
        return self.data.get(key, default)

    def get(self, key: str, kind: Kind, default: Any = None, what: str | None = None) -> Any:
        """The value at `key` (recorded as read), or `default` when absent; refused unless it is of `kind` (true
        and false are not numbers). `what` names the kind in the error instead ("a file name")."""
        if key not in self.data:
            self.read.add(key)
            return default
        value = self.value(key)
        kinds = kind if isinstance(kind, tuple) else (kind,)
        if not isinstance(value, kinds) or (isinstance(value, bool) and bool not in kinds):
            raise self.error(f"{self.key(key)}: expected {what or kind_name(kind)}, got {value!r}")
        return value

    def section(self, key: str) -> Self:
        """The table at `key` (empty when absent), read by the same rules."""
        return type(self)(self.value(key, {}), self.key(key))

    def optional(self, key: str) -> Self | None:
        """The table at `key`, or None when absent: a section whose absence turns its feature off ([floor])."""
        if not self.has(key):
            return None
        return self.section(key)

    def items(self) -> Iterator[tuple[str, Any]]:
        """Every key and value, each recorded as read: a table whose keys are names (buttons, tiers, groups)."""
        for key, value in self.data.items():
            self.read.add(key)
            yield key, value

    def skip(self, *keys: str) -> None:
        """Record keys as read that another reader validates (the [screens] section, read when the bridge starts)."""
        self.read.update(keys)

    def unknown(self, keys: list[str]) -> str:
        """The error for the keys nobody read (in the order written): the first named as section.key."""
        others = f"and {', '.join(keys[1:])}; " if len(keys) > 1 else ""
        return f"{self.key(keys[0])}: unknown key ({others}known: {', '.join(sorted(self.read))})"

    def done(self) -> None:
        """Refuse the keys nobody read: a misspelt or misplaced key."""
        unread = [key for key in self.data if key not in self.read]
        if unread:
            raise self.error(self.unknown(unread))

    # Kinds of value several configs share ------------------------------------------------------------------------

    def seconds(self, key: str, default: float, low: float, high: float, off: bool = False) -> float:
        """A timing key within sane bounds (`off`: 0 turns it off): a heartbeat of 1e-9 s spins a core at 100%."""
        value = float(self.get(key, (int, float), default))
        if not (low <= value <= high or (off and value == 0)):
            raise self.error(f"{self.key(key)}: {'0 (off) or ' if off else ''}{low:g} to {high:g} seconds, "
                             f"got {value:g}")
        return value

    def ident(self, key: str, what: str) -> str:
        """An id (`what`: table, cabinet, link): 1 to 64 ASCII letters, digits, - and _."""
        ident = self.get(key, str)
        if ident is None or not _ID.fullmatch(ident):
            raise self.error(f"{self.key(key)}: a {what} id is 1 to 64 ASCII letters, digits, - and _ (got "
                             f"{shown(ident)})")
        return str(ident)

    def endpoint(self, key: str, default: str | None = None) -> str:
        """A ZeroMQ endpoint the bus can bind or connect: tcp://HOST:PORT (port 1..65535), ipc://PATH, inproc://NAME."""
        value = self.get(key, str, default)
        match = _ENDPOINT.fullmatch(value)
        if not match or (match.group(2) is not None and not 1 <= int(match.group(2)) <= 65535):
            raise self.error(f"{self.key(key)}: expected tcp://HOST:PORT (port 1..65535), ipc://PATH or "
                             f"inproc://NAME, got {value!r}")
        return str(value)


class Listed(Section):
    """A section whose error for unread keys lists them all after the section's name (the wording [floor] has
    always had: "t.toml[floor]: unknown key(s) server (known: ...)")."""

    def unknown(self, keys: list[str]) -> str:
        return f"{self.where}: unknown key(s) {', '.join(sorted(keys))} (known: {', '.join(sorted(self.read))})"


def _finite(node: Any, where: str) -> None:
    if isinstance(node, float) and not math.isfinite(node):
        raise ConfigError(f"{where}: {node} is not a finite number (nan and inf are refused)")
    if isinstance(node, dict):
        for key, value in node.items():
            _finite(value, f"{where}.{key}")
    elif isinstance(node, list):
        for i, value in enumerate(node):
            _finite(value, f"{where}[{i}]")


def refuse_non_finite(data: Mapping[str, Any], where: str) -> None:
    """Refuse nan and inf anywhere in a config: TOML spells them, and one would reach a timer (`betting_seconds =
    inf` stopped a table at its first open_bets) or a journal record, which cannot hold them."""
    for name, value in data.items():
        _finite(value, f"{where}[{name}]" if isinstance(value, (dict, list)) else f"{where}.{name}")


def read_toml(path: str | Path, error: Callable[[str], Exception]) -> dict[str, Any]:
    """A TOML file's top table; raises `error(message)`, the message naming the file, when it cannot be read or
    is not TOML text."""
    try:
        with open(path, "rb") as fh:
            return tomllib.load(fh)
    except OSError as exc:
        raise error(f"{path}: cannot read: {exc.strerror or exc}") from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise error(f"{path}: not valid TOML: {exc}") from None

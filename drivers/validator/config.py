"""The cabinet config's [validator] section: which line the bill validator is on, the notes it takes, its country's note table.

    [validator]
    port = "sim"                 # "sim" (simulated ID-003 validator on a pty), "none", a device path or pyserial URL
    notes = [100, 500, 2000]     # cents; each must be a note of the country's table (default: all of them)
    country = "USD"              # which ID-003 escrow code table the firmware uses (drivers.validator.protocol)

controller/config.py reads the section with `validator_config(mapping, where)`; errors are
controller.config.ConfigError (drivers.configreader's), naming the key.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

from drivers.configreader import ConfigError, DeviceLine, Section

from .protocol import NOTE_TABLES

__all__ = ["ValidatorConfig", "validator_config"]


@dataclass(frozen=True)
class ValidatorConfig(DeviceLine):
    notes: tuple[int, ...] = ()            # cents the cabinet takes, ascending (the SAS host may narrow them)
    country: str = "USD"


def validator_config(mapping: Mapping[str, Any], where: str) -> ValidatorConfig:
    """The [validator] table `mapping`; `where` names it in errors ("cabinet.toml[validator]")."""
    s = Section(mapping, where)
    port = s.get("port", str, "none", what="text: \"sim\", \"none\", a device path or a pyserial URL")
    if not port.strip() or port != port.strip():
        raise ConfigError(f"{s.key('port')}: expected \"sim\", \"none\", a device path or a pyserial URL, "
                          f"got {port!r}")
    country = s.get("country", str, "USD")
    if country not in NOTE_TABLES:
        raise ConfigError(f"{s.key('country')}: no ID-003 note table for {country!r} "
                          f"(known: {', '.join(sorted(NOTE_TABLES))})")
    table = sorted(NOTE_TABLES[country].values())
    raw = s.get("notes", list, None)
    if raw is None:
        notes = tuple(table)
    else:
        for i, cents in enumerate(raw):
            if not isinstance(cents, int) or isinstance(cents, bool):
                raise ConfigError(f"{s.key('notes')}[{i}]: expected a whole number of cents, got {cents!r}")
            if cents not in table:
                raise ConfigError(f"{s.key('notes')}[{i}]: {cents} cents is not a {country} note "
                                  f"(the notes: {', '.join(map(str, table))})")
        if len(set(raw)) != len(raw):
            raise ConfigError(f"{s.key('notes')}: a note is listed twice ({raw})")
        notes = tuple(sorted(raw))
    s.done()
    return ValidatorConfig(port=port, notes=notes, country=country)

"""A cabinet config's notes-and-tickets parts: `[cabinet.tito]` (how tickets are numbered) and the `[validator]` and `[printer]` lines, read by their drivers' readers (controller/config.py calls these)."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from drivers.configreader import ConfigError, Section, shown

__all__ = ["TitoConfig", "tito_config", "money_devices", "simulated_devices"]


@dataclass(frozen=True)
class TitoConfig:
    """`[cabinet.tito]`: how the cabinet numbers its tickets and how long it waits for the ticket system."""

    validation: str = "enhanced"   # "enhanced": compute the number once the host set a validation id; "system": ask
    validation_id: int = 0         # a stand-alone site without SAS: the cabinet's own validation id (0: no ticket out)
    host_timeout: float = 10.0     # seconds the ticket system has to number a ticket out or answer a ticket in


def tito_config(c: Section) -> TitoConfig:
    """`[cabinet.tito]` of the cabinet section `c`."""
    t = c.section("tito")
    validation = t.get("validation", str, "enhanced")
    if validation not in ("enhanced", "system"):
        raise ConfigError(f"{t.key('validation')}: \"enhanced\" or \"system\", got {shown(validation)}")
    machine = t.get("validation_id", int, 0)
    if not 0 <= machine < 1 << 24:
        raise ConfigError(f"{t.key('validation_id')}: a 3-byte validation id (1 to 16777215), or 0 for none")
    timeout = t.seconds("host_timeout", 10.0, 0.01, 600)
    t.done()
    return TitoConfig(validation, machine, timeout)


def money_devices(validator: Section | None, printer: Section | None, where: str, denomination: int
                  ) -> dict[str, Any]:
    """[validator] and [printer], read by their drivers' readers; port "none" is no device."""
    from drivers.printer.config import printer_config
    from drivers.validator.config import validator_config

    out: dict[str, Any] = {"validator": None, "printer": None}
    if validator is not None:
        v = validator_config(validator.data, f"{where}[validator]")
        whole = [n for n in v.notes if n % denomination == 0]
        if v.on and not whole:
            raise ConfigError(f"{where}[validator].notes: none of {list(v.notes)} is whole credits of "
                              f"{denomination} cents")
        out["validator"] = v if v.on else None
    if printer is not None:
        pr = printer_config(printer.data, f"{where}[printer]")
        out["printer"] = pr if pr.on else None
    return out


def simulated_devices(cfg: Any) -> dict[str, Any]:
    """The validator and printer a cabinet config names, each on its simulator (`croupier run --sim`)."""
    return {name: replace(getattr(cfg, name), port="sim") for name in ("validator", "printer")
            if getattr(cfg, name) is not None}

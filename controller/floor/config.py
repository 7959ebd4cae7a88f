"""The `[floor]` section of a table's, cabinet's or link's config: which NATS servers its journal is replicated to.

    [floor]
    servers = ["nats://floor1:4222", "nats://floor2:4222", "nats://floor3:4222"]
    credentials = "/etc/croupier/floor"   # this machine's credential: its TLS folder (croupier floor credentials)
                                          # or a NATS .creds file (optional on a test floor)
    subject = "croupier.journal.bj-1"     # optional; the default is croupier.journal.<the config's id>
    stop_play_after = 30                  # optional, minutes: a table or cabinet starts no round or spin
                                          # once the floor has been unreachable that long (absent: never)

No `[floor]` section: no floor, the machine runs alone, as before.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping

from controller.floor.wire import SUBJECT_PREFIX, FloorWireError, machine_of, subject_for
from drivers.configreader import Listed

__all__ = ["FloorConfig", "floor_config_from_mapping"]

_SCHEMES = ("nats://", "tls://")


@dataclass(frozen=True)
class FloorConfig:
    servers: tuple[str, ...]
    subject: str
    credentials: Path | None = None
    stop_play_after: float | None = None  # minutes without the floor before play stops; None: never

    @property
    def machine(self) -> str:
        return machine_of(self.subject)


def floor_config_from_mapping(data: Mapping[str, Any], ident: str, where: str, base: Path) -> FloorConfig:
    """Validate a `[floor]` section (`where` names it in errors); raises ValueError naming the key."""
    f = Listed(data, where)
    servers, subject, creds = f.value("servers"), f.get("subject", str), f.get("credentials", str, what="a file name")
    stop = f.value("stop_play_after")
    f.done()
    if not isinstance(servers, list) or not servers or not all(isinstance(s, str) for s in servers):
        raise ValueError(f"{where}.servers: a list of NATS server URLs, e.g. [\"nats://floor1:4222\"]")
    for url in servers:
        if not url.startswith(_SCHEMES) or len(url) <= len("nats://"):
            raise ValueError(f"{where}.servers: {url!r} is not a nats:// or tls:// URL")
    if subject is None:
        subject = subject_for(ident)
    try:
        machine_of(subject)
    except FloorWireError:
        raise ValueError(f"{where}.subject: {subject!r} is not {SUBJECT_PREFIX}<machine id>") from None
    if stop is not None and (isinstance(stop, bool) or not isinstance(stop, (int, float)) or not 0 < stop < 10**6):
        raise ValueError(f"{where}.stop_play_after: minutes without the floor before play stops, a number above 0, "
                         f"got {stop!r}")
    return FloorConfig(tuple(servers), subject, base / creds if creds else None,
                       float(stop) if stop is not None else None)

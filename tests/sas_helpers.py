"""Helpers for the SAS tests: a cabinet with its SAS line on a pty, the host polling it from a thread, and a multi-drop hub."""

from __future__ import annotations

import asyncio
import dataclasses
import os
import select
import threading
from pathlib import Path
from typing import Any, Callable

from controller.sas import SasConfig
from controller.sas_host import SasHost
from tests.cabinet_helpers import cabinet_config


def sas_cabinet_config(tmp: Path, *, panel: Any = None, **sas: Any) -> Any:
    cfg = cabinet_config(tmp, panel=panel, hand_pay_limit_cents=100)
    return dataclasses.replace(cfg, sas=SasConfig(**{"port": "pty", "address": 1, "chirp_after": 0.0, **sas}))


def host_for(cab: Any, **kw: Any) -> SasHost:
    return SasHost(cab.sas.pty[2], cab.sas.config.address, **kw)


async def polled(fn: Callable[[], Any]) -> Any:
    """Run the host's blocking polls on a thread while the cabinet's loop goes on."""
    return await asyncio.to_thread(fn)


def drain(host: SasHost, limit: int = 40) -> list[int]:
    """General polls until the EGM has nothing more to report: the exception codes, in order."""
    out: list[int] = []
    for _ in range(limit):
        code, _ = host.general_poll()
        if code == 0:
            return out
        out.append(code)
    raise AssertionError(f"still reporting after {limit} polls: {out}")


class Hub:
    """A multi-drop SAS line: what the host sends reaches every EGM; what any EGM sends reaches the host."""

    def __init__(self, egm_ports: list[str]) -> None:
        import tty

        self.master, slave = os.openpty()
        tty.setraw(slave)
        self.host_port = os.ttyname(slave)
        self._slave = slave
        self.egms = []
        for name in egm_ports:
            fd = os.open(name, os.O_RDWR | os.O_NOCTTY)
            tty.setraw(fd)
            self.egms.append(fd)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.is_set():
            ready, _, _ = select.select([self.master, *self.egms], [], [], 0.05)
            for fd in ready:
                try:
                    data = os.read(fd, 4096)
                except OSError:
                    continue
                for out in (self.egms if fd == self.master else [self.master]):
                    os.write(out, data)

    def close(self) -> None:
        self._stop.set()
        self._thread.join(2)
        for fd in (self.master, self._slave, *self.egms):
            os.close(fd)


async def write(cab: Any, *items: Any) -> None:
    """Journal records as the cabinet's devices would (one batch)."""
    def handler(batch: Any) -> bool:
        for item in items:
            batch.add(item.to_json())
        return True

    await cab._submit(handler)


def note_in(cents: int, denomination: int) -> tuple[Any, ...]:
    """A note's records as the validator's flow writes them: in escrow, stacking, stacked (credited)."""
    from controller.cabinetrecords import NoteEscrow, NoteStacked, NoteStacking

    return NoteEscrow(cents), NoteStacking(cents), NoteStacked(cents, cents // denomination)

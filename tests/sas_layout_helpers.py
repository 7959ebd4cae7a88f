"""What the SAS byte-layout tests share: one EGM (address 05, a fixed clock), its answers, and frames with the host's CRC."""

from __future__ import annotations

import dataclasses
import datetime as dt
from pathlib import Path
from typing import Any

from controller.cabinetstate import new_state
from controller.sas import SasConfig, SasState, View, read_response
from controller.sas_host import kermit
from tests.cabinet_helpers import cabinet_config

A = 0x05  # the EGM's address
WHEN = dt.datetime(2031, 2, 3, 4, 5, 6)


def crc(frame: str) -> bytes:
    """`frame` (hex) with its CRC, computed by the host's own bit-by-bit Kermit (not the EGM's table)."""
    data = bytes.fromhex(frame)
    c = kermit(data)
    return data + bytes([c & 0xFF, c >> 8])


def layout_cabinet(tmp: Path, **fields: Any) -> Any:
    """A fresh frozen-assets cabinet (5 cents a credit) with these fields (its meters, its credits) set."""
    cfg = cabinet_config(tmp)
    state = new_state(cfg.cabinet_id, cfg.title, cfg.denomination, cfg.settings, cfg.paytable)
    return dataclasses.replace(state, **fields)


def view(cabinet: Any, sas: SasState = SasState(), **config: Any) -> View:
    """What the EGM answers from: SAS accounting in 1 cent credits (k = 5 SAS credits per cabinet credit), serial
    CR-0042, the clock at WHEN, a ROM signature of 1234 XOR the seed."""
    cfg = SasConfig(**{"port": "pty", "address": A, "accounting_denomination": 1, "serial": "CR-0042", **config})
    return View(cabinet, sas, cfg, WHEN.timestamp(), lambda seed: 0x1234 ^ seed)


def answer(v: View, command: int, data: str = "") -> bytes | None:
    """The EGM's answer to long poll `command` with `data` (hex)."""
    return read_response(v, A, command, bytes.fromhex(data))

"""SAS's own state beside the cabinet's (the exception queue, real-time reporting, sound, clock), folded from the cabinet's typed journal records.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, Iterable, Mapping

from controller.cabinetrecords import (
    CabinetDoor, CabinetRecord, CabinetStart, Cashout, Credit, Link, PickRecord, SasAck, SasRte, SasSound, SasTime,
    SpinRecord, cabinet_record,
)
from controller.cabinetstate import DoorChanged, LockupCleared, LockupRaised, ProgressiveWon

__all__ = ["SasState", "Exc", "SasNote", "raised", "sas_step", "bcd", "from_bcd", "PRIORITY", "EXCEPTIONS",
           "QUEUE_SIZE", "BONUS_BY"]

# Exception codes (SAS general poll), the ones this EGM raises.
EXCEPTIONS = {
    0x11: "slot door opened", 0x12: "slot door closed", 0x13: "drop door opened", 0x14: "drop door closed",
    0x15: "card cage opened", 0x16: "card cage closed", 0x17: "AC power applied", 0x18: "AC power lost",
    0x19: "cashbox door opened", 0x1A: "cashbox door closed", 0x1D: "belly door opened", 0x1E: "belly door closed",
    0x20: "general tilt", 0x21: "coin in tilt", 0x22: "coin out tilt", 0x23: "hopper empty", 0x24: "extra coin paid",
    0x2D: "reverse coin in", 0x3C: "operator changed options", 0x40: "reel tilt", 0x51: "hand pay pending",
    0x52: "hand pay reset", 0x53: "no progressive information for 5 seconds", 0x54: "progressive win",
    0x66: "cash out button pressed", 0x70: "exception buffer overflow", 0x7C: "legacy bonus pay awarded",
    0x7E: "game started", 0x7F: "game ended",
}
# Reported before any other queued exception (they ask the floor to act on money).
PRIORITY = frozenset([0x3D, 0x3E, 0x51, 0x52, 0x57, 0x67, 0x68])
QUEUE_SIZE = 32

_DOORS = {"main": (0x11, 0x12), "slot": (0x11, 0x12), "drop": (0x13, 0x14), "logic": (0x15, 0x16),
          "card_cage": (0x15, 0x16), "cash_box": (0x19, 0x1A), "cashbox": (0x19, 0x1A), "belly": (0x1D, 0x1E)}
_LOCKUPS = {"coin_in_jam": 0x21, "reverse_coin": 0x2D, "hopper_empty": 0x23, "hopper_jam": 0x22,
            "hopper_runaway": 0x24, "reel_misindex": 0x40, "hand_pay": 0x51, "jackpot": 0x51}
BONUS_BY = "sas:legacy_bonus"


@dataclass(frozen=True, slots=True)
class Exc:
    id: str          # "seq:index" of the journal record that raised it
    code: int
    data: bytes = b""  # what real-time event reporting adds

    @property
    def priority(self) -> bool:
        return self.code in PRIORITY


@dataclass(frozen=True)
class SasState:
    """What SAS keeps beside the cabinet's own state, folded from the same journal."""

    queue: tuple[Exc, ...] = ()
    rte: bool = False
    sound: bool = True
    clock_offset: float = 0.0        # seconds the host's clock is ahead of ours (long poll 7F)
    games_since_power: int = 0
    games_since_door: int = 0
    overflowed: bool = False
    starts: int = 0

    def next(self) -> Exc | None:
        """The exception the next general poll reports: priority ones first, then in order."""
        for e in self.queue:
            if e.priority:
                return e
        return self.queue[0] if self.queue else None


@dataclass(frozen=True, slots=True)
class SasNote:
    """An effect the cabinet's fold carries for SAS: the record with the states around it."""

    before: Any
    record: dict[str, Any]
    after: Any
    effects: tuple[Any, ...]


def bcd(value: int, size: int) -> bytes:
    """`value` in `size` bytes of packed BCD (a meter past its digits rolls over, as meters do)."""
    digits = f"{max(value, 0) % 10 ** (2 * size):0{2 * size}d}"
    return bytes.fromhex(digits)


def from_bcd(data: bytes) -> int:
    """Packed BCD to an int; ValueError for a nibble above 9 (a garbled field: the poll is NACKed)."""
    digits = data.hex()
    if not digits.isdigit():
        raise ValueError(f"not BCD: {digits or 'empty'}")
    return int(digits)


def raised(before: Any, record: CabinetRecord | Mapping[str, Any], after: Any, effects: Iterable[Any],
           k: int = 1) -> list[tuple[int, bytes]]:
    """The exceptions one journal record (typed, or its row's object) raises, as (code, real-time data). `k` turns
    cabinet credits into SAS credits."""
    rec = record if isinstance(record, CabinetRecord) else cabinet_record(record)
    out: list[tuple[int, bytes]] = []
    if isinstance(rec, CabinetStart):
        if before.meters.power_resets:
            out.append((0x18, b""))  # the power went away since the last start
        out.append((0x17, b""))
        if before.meters.power_resets and before.settings != after.settings:
            out.append((0x3C, b""))
    elif isinstance(rec, SpinRecord):
        bet = after.meters.coin_in - before.meters.coin_in
        out.append((0x7E, bcd(bet * k, 2) + bcd(after.meters.coin_in * k, 4) + b"\x00\x00"))
        if after.slot.pending is None:
            out.append((0x7F, bcd(after.last_win * k, 4)))
    elif isinstance(rec, PickRecord):
        out.append((0x7F, bcd(after.last_win * k, 4)))
    elif isinstance(rec, Cashout):
        out.append((0x66, b""))
    elif isinstance(rec, Credit) and rec.by == BONUS_BY:
        # real-time data: multiplier (00: not a multiplied jackpot), multiplied win, tax status, bonus amount
        out.append((0x7C, b"\x00" + bcd(0, 4) + bytes([int(rec.tax or 0)]) + bcd(rec.credits * k, 4)))
    elif isinstance(rec, Link) and not rec.up:
        out.append((0x53, b""))
    for eff in effects:
        if isinstance(eff, DoorChanged):
            codes = _DOORS.get(eff.name, (0x11, 0x12))
            out.append((codes[0] if eff.open else codes[1], b""))
        elif isinstance(eff, LockupRaised) and eff.lockup.kind in _LOCKUPS:
            out.append((_LOCKUPS[eff.lockup.kind], b""))
        elif isinstance(eff, LockupCleared) and eff.lockup.kind in ("hand_pay", "jackpot"):
            out.append((0x52, b""))
        elif isinstance(eff, ProgressiveWon):
            out.append((0x54, b""))
    return out


def _enqueue(sas: SasState, new: list[Exc]) -> SasState:
    queue = list(sas.queue)
    overflowed = sas.overflowed
    for e in new:
        queue.append(e)
        while len(queue) > QUEUE_SIZE:
            # the oldest that is not a priority exception goes; the host is told once (70)
            victim = next((i for i, x in enumerate(queue) if not x.priority and x.code != 0x70), 0)
            del queue[victim]
            if not overflowed:
                overflowed = True
                queue.append(Exc(f"{e.id}:overflow", 0x70))
    return replace(sas, queue=tuple(queue), overflowed=overflowed and any(x.code == 0x70 for x in queue))


def sas_step(sas: SasState, seq: int, before: Any, record: CabinetRecord | Mapping[str, Any], after: Any,
             effects: Iterable[Any], k: int = 1) -> SasState:
    """The SAS state after one journal record (pure: recovery and the live cabinet both fold with it), by its class."""
    rec = record if isinstance(record, CabinetRecord) else cabinet_record(record)
    if isinstance(rec, SasAck):
        gone = set(rec.ids)
        return replace(sas, queue=tuple(e for e in sas.queue if e.id not in gone))
    if isinstance(rec, SasSound):
        return replace(sas, sound=bool(rec.on))
    if isinstance(rec, SasRte):
        return replace(sas, rte=bool(rec.on))
    if isinstance(rec, SasTime):
        return replace(sas, clock_offset=float(rec.offset))
    if rec.KIND == "sas":  # disable, enable and signature leave SAS's own state as it is
        return sas
    if isinstance(rec, CabinetStart):
        sas = replace(sas, games_since_power=0, starts=sas.starts + 1)
    elif isinstance(rec, SpinRecord):
        sas = replace(sas, games_since_power=sas.games_since_power + 1, games_since_door=sas.games_since_door + 1)
    elif isinstance(rec, CabinetDoor) and rec.name in ("main", "slot") and not rec.open:
        sas = replace(sas, games_since_door=0)
    new = [Exc(f"{seq}:{i}", code, data) for i, (code, data) in enumerate(raised(before, rec, after, effects, k))]
    return _enqueue(sas, new) if new else sas

"""The cabinet as an EGM on the floor's SAS line: each poll answered from the cabinet's journal-derived state, the exception queue folded from the journal.

The line (drivers/sas) frames the host's polls and calls `SasEgm.respond` on its thread; the answer is built
from the cabinet's latest state and the SAS fold below (`SasState`), never from meters kept apart. A poll
that changes something (shutdown/startup, sound, real-time event reporting, date and time, legacy bonus,
remote hand-pay reset) becomes a journal record like any command, and is answered once journaled. The
exceptions a record raises (doors, power, tilts, hand pays, games, cash out, ...) are derived from the
record by `raised`; an exception the host has acknowledged is journaled as acknowledged, so after a
restart the queue is the journal's exceptions less the acknowledged ones: none is lost.

Money on the line is in credits of the SAS accounting denomination (`[sas] accounting_denomination`).
"""

from __future__ import annotations

import asyncio
import datetime as dt
import logging
import threading
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping

__all__ = ["SasConfig", "SasState", "Exc", "SasNote", "SasEgm", "View", "sas_config", "raised", "sas_step",
           "read_response", "general_poll", "change_record", "meter", "bcd", "PRIORITY", "EXCEPTIONS",
           "DENOMINATION_CODES", "METER_SIZE_5", "GAME_METERS", "FEATURES", "rom_image", "RomSignature",
           "from_bcd", "sas_datetime", "Busy", "validation_info", "unread_validation", "ticket_change", "redeem",
           "ticket_data", "enhanced_validation", "next_enhanced_validation", "ticket_lines", "BILL_POLLS",
           "TRANSFER_CODES"]

from controller.cabinetrecords import (
    CabinetDoor, Clear, Credit, SasAck, SasDisable, SasEnable, SasRte, SasSignature, SasSound, SasTime, cabinet_record,
)
from controller.sasfold import (  # the fold and its constants, re-exported: importers of controller.sas keep them
    BILL_ACCEPTED, BILL_DOLLARS, BONUS_BY, EXCEPTIONS, PRIORITY, VALIDATION_READ, Exc, SasNote, SasState, bcd,
    enhanced_validation, from_bcd, next_enhanced_validation, raised, sas_step, ticket_lines,
)
from controller.sasrom import RomSignature, rom_image
from controller.sastickets import (  # the note and ticket polls, re-exported likewise
    BILL_POLLS, TICKET_CHANGING, TICKET_READS, TRANSFER_CODES, redeem, ticket_change, ticket_data, ticket_read,
    unread_validation, validation_info,
)

log = logging.getLogger("croupier.sas")

# Denomination codes by cents (SAS 6.02 Table C-4, whole-cent rows; as quoted by Aristocrat's
# Aristocrat.Sas.Client DenominationCodes, tejvirc/Platform Protocol/SAS/Aristocrat.Sas.Client/DenominationCodes.cs).
DENOMINATION_CODES = {1: 0x01, 5: 0x02, 10: 0x03, 25: 0x04, 50: 0x05, 100: 0x06, 500: 0x07, 1000: 0x08, 2000: 0x09,
                      10000: 0x0A, 20: 0x0B, 200: 0x0C, 250: 0x0D, 2500: 0x0E, 5000: 0x0F, 20000: 0x10,
                      25000: 0x11, 50000: 0x12, 100000: 0x13, 200000: 0x14, 250000: 0x15, 500000: 0x16, 2: 0x17,
                      3: 0x18, 15: 0x19, 40: 0x1A}
# Meters (Table C-7) whose long poll 2F size is 5 BCD bytes: the ticket amounts in cents; every other is 4.
METER_SIZE_5 = frozenset(range(0x0D, 0x11))
# Meters kept per game (what 2F/6F report for game 1); the rest (credit meter, cash out, coins) are the machine's.
GAME_METERS = frozenset([0x00, 0x01, 0x02, 0x05, 0x06, 0x07])
FEATURES = ("legacy_bonus", "extended_meters", "rte")
HOST = "attendant:sas"  # the floor's remote hand-pay reset clears as an attendant would


# --------------------------------------------------------------------------------------------------- config

@dataclass(frozen=True)
class SasConfig:
    port: str                           # a device, a /dev/serial/by-id link or a pyserial URL ("pty" in demos)
    address: int = 1
    asset_number: int = 0
    accounting_denomination: int = 1    # cents per SAS credit
    serial: str = ""
    features: tuple[str, ...] = FEATURES
    wakeup: str = "auto"                # "auto", "parity" or "timing"
    chirp_after: float = 5.0
    gap: float = 0.01
    commit_wait: float = 0.015          # a changing poll waits this long for its journal write, else the host retries
    pty_link: str | None = None         # port "pty": the path the pseudo-terminal's far end is linked at
    rom_signature: str = "immediate"    # or "general_poll": ACK long poll 21, answer the next general poll with it
    realtime: int | None = None         # SCHED_FIFO priority for the line's thread (needs CAP_SYS_NICE)


def sas_config(s: Mapping[str, Any] | None, where: str, denomination: int) -> SasConfig | None:
    """`[sas]` of a cabinet config, validated (None when absent)."""
    from drivers.configreader import ConfigError, Section

    if not s:
        return None
    r = Section(s, f"{where}[sas]")
    if not r.has("port"):
        raise ConfigError(f"{r.key('port')}: the SAS line's device (/dev/ttyUSB0, a /dev/serial/by-id link or a URL)")
    port, address, asset = r.get("port", str), r.get("address", int, 1), r.get("asset_number", int, 0)
    acct, features = r.get("accounting_denomination", int, denomination), tuple(r.get("features", list, list(FEATURES)))
    wakeup, serial = r.get("wakeup", str, "auto"), r.get("serial", str, "")
    rom = r.get("rom_signature", str, "immediate")
    chirp, gap = float(r.get("chirp_after", (int, float), 5.0)), float(r.get("gap", (int, float), 0.01))
    realtime = r.get("realtime", int, 0) or None
    r.done()
    w = r.where
    if not 1 <= address <= 127:
        raise ConfigError(f"{w}.address: 1..127, got {address}")
    if not 0 <= asset <= 0xFFFFFFFF:
        raise ConfigError(f"{w}.asset_number: 0..4294967295, got {asset}")
    if acct <= 0 or denomination % acct:
        raise ConfigError(f"{w}.accounting_denomination: the cabinet's {denomination} cents must be whole SAS "
                          f"credits of it, got {acct}")
    bad = [f for f in features if f not in FEATURES]
    if bad:
        raise ConfigError(f"{w}.features: unknown {', '.join(map(str, bad))} (features: {', '.join(FEATURES)})")
    if wakeup not in ("auto", "parity", "timing"):
        raise ConfigError(f"{w}.wakeup: \"auto\", \"parity\" or \"timing\", got {wakeup!r}")
    if len(serial) > 40 or not serial.isascii():
        raise ConfigError(f"{w}.serial: at most 40 ASCII characters")
    if rom not in ("immediate", "general_poll"):
        raise ConfigError(f"{w}.rom_signature: \"immediate\" or \"general_poll\", got {rom!r}")
    if gap <= 0 or chirp < 0:
        raise ConfigError(f"{w}: gap must be positive and chirp_after not negative")
    if realtime is not None and not 1 <= realtime <= 99:
        raise ConfigError(f"{w}.realtime: a SCHED_FIFO priority 1..99, got {realtime}")
    return SasConfig(port, address, asset, acct, serial, features, wakeup, chirp, gap, rom_signature=rom,
                     realtime=realtime)


# --------------------------------------------------------------------------------------------------- the polls

def _ascii(text: str, size: int) -> bytes:
    return text.encode("ascii", "replace")[:size].ljust(size, b" ")


@dataclass(frozen=True)
class View:
    """What a poll is answered from: the cabinet's state, SAS's, the config, the clock and the signature."""

    cabinet: Any
    sas: SasState
    config: SasConfig
    now: float
    signature: Callable[[int], int]

    @property
    def k(self) -> int:
        return self.cabinet.denomination // self.config.accounting_denomination


def meter(view: View, code: int, game: int = 0) -> int | None:
    """SAS meter `code` (Table C-7, 2F/6F's meter codes) of the machine (game 0) or of its one game (game 1);
    None when this EGM has no such meter for it."""
    s, m, k = view.cabinet, view.cabinet.meters, view.k
    if game not in (0, 1) or game == 1 and code not in GAME_METERS:
        return None
    acct = view.config.accounting_denomination
    tin, tout = m.tickets_in_cashable_cents, m.tickets_out_cashable_cents
    rin, rout = m.tickets_in_restricted_cents, m.tickets_out_restricted_cents
    table = {0x00: m.coin_in * k, 0x01: m.coin_out * k, 0x02: m.jackpot_handpaid * k,
             0x03: m.cancelled_handpaid * k, 0x04: m.credits_out * k, 0x05: m.games_played, 0x06: m.games_won,
             0x07: m.games_lost, 0x08: m.drop * k, 0x09: m.hopper_out * k, 0x0A: m.drop * k,
             0x0B: m.notes_in_cents // acct, 0x0C: s.credits * k,
             # tickets (Table C-7 as Aristocrat's SasMeterId lists it): 0D-10 in cents, 11-14 counts, the rest credits
             0x0D: tin, 0x0E: tout, 0x0F: rin, 0x10: rout, 0x11: m.tickets_in_cashable, 0x12: m.tickets_out_cashable,
             0x13: m.tickets_in_restricted, 0x14: m.tickets_out_restricted, 0x15: (tin + rin) // acct,
             0x16: (tout + rout) // acct, 0x28: tin // acct, 0x29: tin // acct, 0x2A: rin // acct, 0x2B: 0,
             0x2C: tout // acct, 0x2D: rout // acct, 0x35: m.tickets_in_cashable, 0x36: m.tickets_in_restricted,
             0x37: 0, 0x38: m.tickets_out_cashable, 0x39: m.tickets_out_restricted}
    if 0x40 <= code < 0x40 + len(BILL_DOLLARS):  # notes accepted, by denomination (40 $1 ... 57 $1,000,000)
        return dict(m.notes_in).get(BILL_DOLLARS[code - 0x40] * 100, 0)
    return table.get(code)


def _machine_info(view: View) -> bytes:
    title, cab = view.cabinet.title, view.cabinet
    low_high = getattr(title, "target_rtp", None)  # fractions of one: 91.50 % is "9150"
    rtp = round(sum(low_high) / 2 * 10000) if low_high else 0
    max_bet = min(title.max_bet.total * view.k, 255)
    game_id = "".join(c for c in title.id.upper() if c.isalnum())[:2] or "CR"
    # the denomination field is the SAS accounting denomination (the unit of every meter on the line), not
    # the cabinet's: hosts such as saspy scale the meters by it
    denom = DENOMINATION_CODES.get(view.config.accounting_denomination, 0)
    return (_ascii(game_id, 2) + _ascii("000", 3) + bytes([denom, max_bet, 0]) + (0).to_bytes(2, "little")
            + _ascii(f"{title.id[:3].upper()}{cab.slot.paytable:03d}", 6) + _ascii(f"{rtp:04d}"[:4], 4))


def _handpay(view: View) -> bytes:
    lock = next((x for x in view.cabinet.lockups if x.kind in ("hand_pay", "jackpot")), None)
    if lock is None:
        return bytes(1 + 1 + 5 + 2 + 1 + 10)
    level = 0x80 if lock.kind == "hand_pay" else 0x40  # cancelled credits; a non-progressive top award
    return bytes([0, level]) + bcd(lock.credits * view.k, 5) + bcd(0, 2) + b"\x00" + bytes(10)


def _slot_door_opens(m: Any) -> int:
    """The slot door's openings: whichever names the cabinet's panel gives it (both raise 11/12)."""
    opens = dict(m.door_opens)
    return opens.get("main", 0) + opens.get("slot", 0)


def _clock(view: View) -> dt.datetime:
    return dt.datetime.fromtimestamp(view.now + view.sas.clock_offset)


def read_response(view: View, address: int, command: int, data: bytes) -> bytes | None:
    """The answer to a poll that changes nothing, with its CRC (None: not a poll this EGM answers). Raises
    ValueError for a garbled field (a game number that is not BCD): the poll is NACKed."""
    from drivers.sas.crc import with_crc

    a = bytes([address, command])
    cab, m, k = view.cabinet, view.cabinet.meters, view.k
    four = lambda v: bcd(v, 4)  # noqa: E731
    body: bytes | None = None
    if command == 0x0F:
        body = b"".join(four(v) for v in (m.credits_out * k, m.coin_in * k, m.coin_out * k, m.drop * k,
                                          m.jackpot_handpaid * k, m.games_played))
    elif 0x10 <= command <= 0x17:
        value = {0x10: m.credits_out * k, 0x11: m.coin_in * k, 0x12: m.coin_out * k, 0x13: m.drop * k,
                 0x14: m.jackpot_handpaid * k, 0x15: m.games_played, 0x16: m.games_won, 0x17: m.games_lost}[command]
        body = four(value)
    elif command == 0x18:
        body = bcd(view.sas.games_since_power, 2) + bcd(view.sas.games_since_door, 2)
    elif command == 0x19:
        body = b"".join(four(v) for v in (m.coin_in * k, m.coin_out * k, m.drop * k, m.jackpot_handpaid * k,
                                          m.games_played))
    elif command == 0x1A:
        body = four(cab.credits * k)
    elif command == 0x1B:
        body = _handpay(view)
    elif command == 0x1C:
        body = b"".join(four(v) for v in (m.coin_in * k, m.coin_out * k, m.drop * k, m.jackpot_handpaid * k,
                                          m.games_played, m.games_won, _slot_door_opens(m), m.power_resets))
    elif command == 0x1F:
        body = _machine_info(view)
    elif command == 0x21 and len(data) == 2:
        # seed and signature are binary: least significant byte first (SAS 6.02 2.2.3)
        body = view.signature(int.from_bytes(data, "little")).to_bytes(2, "little")
    elif command == 0x2F and len(data) >= 2:
        game = from_bcd(data[:2])
        out = bytearray(data[:2])
        for code in data[2:]:
            value = meter(view, code, game)
            if value is not None:  # a meter this EGM does not keep is left out, never sent at a guessed size
                out += bytes([code]) + bcd(value, 5 if code in METER_SIZE_5 else 4)
        return with_crc(a + bytes([len(out)]) + bytes(out))
    elif command in (0x6F, 0xAF) and len(data) >= 2 and "extended_meters" in view.config.features:
        # AF is 6F's twin (SAS 6.02 7.21: two codes for the same meters, so a host can poll them back to back)
        game = from_bcd(data[:2])
        if len(data) % 2:
            raise ValueError("6F: meter codes are two bytes each")
        out = bytearray(data[:2])
        for i in range(2, len(data), 2):
            value = meter(view, int.from_bytes(data[i:i + 2], "little"), game)
            out += data[i:i + 2] + (bytes([5]) + bcd(value, 5) if value is not None else b"\x00")
        return with_crc(a + bytes([len(out)]) + bytes(out))
    elif command == 0x51:
        body = bcd(1, 2)
    elif command == 0x53 and len(data) == 2 and from_bcd(data) in (0, 1):
        body = data + _machine_info(view)
    elif command == 0x54:
        serial = (view.config.serial or cab.cabinet_id)[:40].encode("ascii", "replace")
        body = bytes([3 + len(serial)]) + b"602" + serial
    elif command == 0x55:
        body = bcd(1, 2)
    elif command == 0x56:
        body = bytes([3, 1]) + bcd(1, 2)
    elif command == 0x7E:
        t = _clock(view)
        body = bcd(t.month, 1) + bcd(t.day, 1) + bcd(t.year, 2) + bcd(t.hour, 1) + bcd(t.minute, 1) + bcd(t.second, 1)
    elif command == 0xA0 and len(data) == 2:
        from_bcd(data)  # a garbled game number is NACKed
        f = view.config.features
        features1 = 0x04 if "legacy_bonus" in f else 0
        features2 = 0x01 | (0x08 if "extended_meters" in f else 0)  # won credits metered when won; 6F
        body = data + bytes([features1, features2, 0, 0]) + b"\x00\x00"  # features 1-4, two reserved bytes
    elif command in TICKET_READS:
        body = ticket_read(view, command, data)
    if body is None:
        return None
    return with_crc(a + body)


def general_poll(view: View, address: int) -> tuple[bytes | None, Exc | None]:
    """The answer to a general poll: the next exception's code (0 for none); with real-time event
    reporting on, address, FF, code, its data and a CRC, and no answer at all when there is no event
    (SAS 6.02 12.6: in that mode 00 is never sent, silence is "no activity")."""
    from drivers.sas.crc import with_crc

    exc = view.sas.next()
    if exc is None:
        return (None if view.sas.rte else b"\x00"), None
    if view.sas.rte:
        code = 0x4F if exc.code in BILL_ACCEPTED.values() else exc.code  # every note is 4F with its data in this mode
        return with_crc(bytes([address, 0xFF, code]) + exc.data), exc
    return bytes([exc.code]), exc


def sas_datetime(data: bytes) -> dt.datetime:
    """Long poll 7E/7F's date and time: MMDDYYYY then HHMMSS, seven bytes of BCD, each field at its place
    (ValueError naming the bytes when one is not a date or a time)."""
    try:
        month, day, year = from_bcd(data[0:1]), from_bcd(data[1:2]), from_bcd(data[2:4])
        hour, minute, second = from_bcd(data[4:5]), from_bcd(data[5:6]), from_bcd(data[6:7])
        return dt.datetime(year, month, day, hour, minute, second)
    except ValueError:
        raise ValueError(f"bad date and time {data.hex()}") from None


class Busy(Exception):
    """The EGM cannot do what the poll asks just now (SAS 6.02 4.1, 13.3.5): it answers address, 00 and the
    host retries later."""


def change_record(view: View, command: int, data: bytes) -> tuple[dict[str, Any] | None, bytes | None]:
    """A poll that changes something: (the journal record, or None when nothing changes; the answer
    without the address). Raises ValueError for a poll this EGM refuses (answered with a NACK), Busy for one
    it cannot do just now (answered address, 00)."""
    cab = view.cabinet
    if command in (0x01, 0x02):
        disable = command == 0x01
        changes = disable != bool(getattr(cab, "host_disabled", False))
        return ((SasDisable() if disable else SasEnable()).to_json() if changes else None), b""
    if command in (0x03, 0x04, 0x05):
        return SasSound(command == 0x04).to_json(), b""
    if command == 0x0E and len(data) == 1 and "rte" in view.config.features:
        if data[0] > 1:
            raise ValueError(f"0E: enable is 00 or 01, got {data[0]:02X}")
        return SasRte(data[0] == 1).to_json(), b""
    if command == 0x7F and len(data) == 7:
        host = sas_datetime(data)
        offset = round(host.timestamp() - view.now, 3)
        return SasTime(host.isoformat(), offset).to_json(), b""
    if command == 0x8A and len(data) == 5 and "legacy_bonus" in view.config.features:
        amount = from_bcd(data[:4])
        if data[4] > 2:  # 00 deductible, 01 non-deductible, 02 wager match
            raise ValueError(f"8A: tax status 00..02, got {data[4]:02X}")
        if amount <= 0 or amount % view.k:
            raise ValueError(f"a legacy bonus of {amount} SAS credits is not whole cabinet credits")
        from controller.cabinetstate import money_in_blocked

        blocked = money_in_blocked(cab)
        if blocked:  # a tilt, a door, a hand pay: the bonus is neither escrowed nor refused, the host retries
            raise Busy(f"legacy bonus: {blocked}")
        return Credit("operator", amount // view.k, BONUS_BY, data[4]).to_json(), b""
    if command == 0x94:
        lock = next((x for x in cab.lockups if x.kind in ("hand_pay", "jackpot")), None)
        if lock is None:
            return None, b"\x02"  # not in a hand pay
        return Clear(lock.id, "paid", HOST).to_json(), b"\x00"
    if command in TICKET_CHANGING:
        return ticket_change(view, command, data)
    raise LookupError(command)


CHANGING = frozenset([0x01, 0x02, 0x03, 0x04, 0x05, 0x0E, 0x7F, 0x8A, 0x94]) | TICKET_CHANGING



# --------------------------------------------------------------------------------------------------- runtime glue

class SasEgm:
    """The SAS line of one cabinet. The Cabinet builds it, folds its notes (`show`) after each journal write,
    and closes it; the line's thread calls `respond` and `acknowledged`."""

    def __init__(self, cabinet: Any, config: SasConfig, *, transport: Any = None,
                 clock: Callable[[], float] | None = None) -> None:
        import time

        self.cabinet = cabinet
        self.config = config
        self.k = cabinet.config.denomination // config.accounting_denomination
        self.state = SasState(validation_mode=self.validation_mode())
        self.clock = clock or time.time
        self._read: int | None = None  # the validation a 4D 00 answered with, read once the host acknowledges it
        self._lock = threading.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._sent: Exc | None = None
        self._change: tuple[bytes, Any, bytes | None] | None = None  # a changing poll in flight: bytes, future, answer
        self._rom_frame: bytes | None = None            # a ROM signature waiting for the next general poll
        self.transport = transport
        self.line: Any = None
        self.pty: Any = None
        self.signature = RomSignature(rom_image(extra=cabinet.title.digest.encode()))
        self.first_byte: Callable[[float], None] | None = None

    def validation_mode(self) -> str:
        """How the cabinet numbers its tickets out ([cabinet.tito] validation): "system" or "enhanced"."""
        return str(self.cabinet.config.tito.validation)

    # -- the fold

    def note(self, before: Any, record: dict[str, Any], after: Any, effects: tuple[Any, ...]) -> tuple[Any, ...]:
        return (SasNote(before, record, after, effects),)

    def rebuild(self, initial: Any, entries: Iterable[tuple[int, dict[str, Any]]]) -> None:
        """Fold the journal from the start (the cabinet folded it too): the exception queue, with what the
        host acknowledged taken out."""
        from controller.cabinetstate import step

        state, sas = initial, SasState(validation_mode=self.validation_mode())
        for seq, row in entries:
            record = cabinet_record(row, f"journal row {seq}")  # typed once, for both folds
            after, effects = step(state, record)
            sas = sas_step(sas, seq, state, record, after, effects, self.k, self._time_of(seq, row))
            state = after
        self.state = sas

    def _time_of(self, seq: int, row: Mapping[str, Any]) -> float:
        """A validation's journal time (what 4D reports); 0 for the records whose time SAS does not need."""
        if row.get("kind") != "ticket_out" or row.get("what") != "validation":
            return 0.0
        journal = getattr(self.cabinet, "journal", None)
        entry = next(journal.entries(seq - 1), None) if journal is not None else None
        return entry.time if entry is not None and entry.seq == seq else self.clock()

    def show(self, effects: tuple[Any, ...], seq: int) -> None:
        for eff in effects:
            if isinstance(eff, SasNote):
                r = cabinet_record(eff.record)
                when = self._time_of(seq, eff.record)
                with self._lock:
                    self.state = sas_step(self.state, seq, eff.before, r, eff.after, eff.effects, self.k, when)
                if isinstance(r, CabinetDoor) and r.name in ("main", "logic") and not r.open \
                        and r.name in eff.before.doors_open:
                    self._authenticate(f"{r.name} door close")  # the regulators' self-check after access

    # -- the line

    def start(self, loop: asyncio.AbstractEventLoop) -> None:
        from drivers.sas import SasLine

        self._loop = loop
        port: Any = self.transport
        if port is None and self.config.port == "pty":
            port = self.open_pty(self.config.pty_link)
        elif port is None:
            port = self.config.port
        self.line = SasLine(port, self.config.address, self, wakeup=self.config.wakeup, gap=self.config.gap,
                            chirp_after=self.config.chirp_after, on_first_byte=self.first_byte,
                            realtime=self.config.realtime)
        self.line.start()
        where = f"pseudo-terminal {self.pty[2]}" + (f" at {self.pty[3]}" if self.pty[3] else "") if self.pty else \
            str(self.config.port if self.transport is None else "the given transport")
        log.info("SAS: EGM address %d on %s (%s)", self.config.address, where,
                 "wake-up bit by parity" if self.line.marked else "framed by poll length and timing")
        self._authenticate("power up")

    def open_pty(self, link: str | None) -> int:
        """A pseudo-terminal for the host: its far end (the name printed, or linked at `link`); ours is the
        master's file descriptor."""
        import os
        import tty

        master, slave = os.openpty()
        tty.setraw(slave)
        name = os.ttyname(slave)
        if link:
            p = Path(link)
            if p.is_symlink() or p.exists():
                p.unlink()
            p.symlink_to(name)
        self.pty = (master, slave, name, link)
        return master

    def close(self) -> None:
        import os

        if self.line is not None:
            self.line.close()
            self.line = None
        if self.pty is not None:
            master, slave, _, link = self.pty
            for fd in (master, slave):
                try:
                    os.close(fd)
                except OSError:
                    pass
            if link and Path(link).is_symlink():
                Path(link).unlink()
            self.pty = None

    def _authenticate(self, why: str) -> None:
        sig = self.signature(0)
        log.info("SAS: self-authentication at %s: ROM signature %04X over %d bytes", why, sig, self.signature.length)
        self._post(SasSignature(0, sig, self.signature.length, why).to_json())

    def _post(self, record: dict[str, Any]) -> Any:
        loop = self._loop
        if loop is None:
            return None

        def handler(batch: Any) -> Any:
            batch.add(record)
            return True

        return asyncio.run_coroutine_threadsafe(self.cabinet._submit(handler), loop)

    def view(self) -> View:
        return View(self.cabinet.state, self.state, self.config, self.clock(), self.signature)

    def respond(self, message: Any) -> bytes | None:
        """On the line's thread: the answer to a poll addressed to this EGM (None: no answer)."""
        from drivers.sas import GeneralPoll

        view = self.view()
        address = self.config.address
        response: bytes | None
        if isinstance(message, GeneralPoll):
            self._change = None
            if self._rom_frame is not None:  # section 6: the signature answers the first general poll after it
                self._sent = None
                return self._rom_frame
            response, self._sent = general_poll(view, address)
            return response
        command, data = message.command, message.data
        if command not in CHANGING:
            self._change = None
            if command == 0x4D and data == b"\x00":  # read: the host's acknowledgement marks it read
                unread = unread_validation(view.sas)
                self._read = None if unread is None or view.sas.validation_mode == "none" else unread.n
            try:
                response = read_response(view, address, command, data)
            except ValueError as exc:
                log.warning("SAS poll %02X refused: %s", command, exc)
                return bytes([address | 0x80])  # NACK
            if command == 0x21 and response is not None and self.config.rom_signature == "general_poll":
                self._rom_frame = response
                return bytes([address])  # ACK now, the signature on the next general poll
            return response
        if self._change is not None and self._change[0] == message.raw:
            _, future, answer = self._change  # the host repeats a poll whose record is on its way: the same one
        else:
            try:
                record, answer = change_record(view, command, data)
            except LookupError:
                return None  # an optional feature that is off: an unknown poll
            except Busy as exc:
                log.info("SAS poll %02X: busy (%s)", command, exc)
                return bytes([address, 0x00])  # busy: address, 00, no CRC
            except ValueError as exc:
                log.warning("SAS poll %02X refused: %s", command, exc)
                return bytes([address | 0x80])  # NACK
            if record is None:
                return self._answer(address, command, answer)
            future = self._post(record)
            if future is None:
                return None
            self._change = (message.raw, future, answer)
        try:
            ok = future.result(timeout=self.config.commit_wait)
        except TimeoutError:
            return None  # not journaled yet: no answer, the host repeats the poll and gets it then
        except Exception as exc:  # noqa: BLE001 - the fold refused it (raced with the cabinet)
            log.warning("SAS poll %02X not journaled: %s", command, exc)
            self._change = None
            ok = False
        if not ok and command == 0x94:
            return self._answer(address, command, b"\x01")  # 01: unable to reset the hand pay
        if not ok and command == 0x8A:
            return bytes([address, 0x00])  # the cabinet refused the credit as it was written: busy, not a NACK
        return self._answer(address, command, answer) if ok else bytes([address | 0x80])

    def broadcast(self, message: Any) -> None:
        """On the line's thread: a long poll to address 0 (every EGM, none answers): the host's date and time."""
        if message.command != 0x7F:
            return
        try:
            record, _ = change_record(self.view(), message.command, message.data)
        except ValueError as exc:
            log.warning("SAS broadcast %02X refused: %s", message.command, exc)
            return
        if record is not None:
            self._post(record)

    @staticmethod
    def _answer(address: int, command: int, answer: bytes | None) -> bytes:
        from drivers.sas.crc import with_crc

        if answer:  # a poll answered with data (94's status, 4C, 58, 71, 7B, 7C, 7D)
            return with_crc(bytes([address, command]) + answer)
        return bytes([address])  # ACK: the address echoed

    def acknowledged(self, message: Any, response: bytes) -> None:
        """On the line's thread: the host's next poll acknowledged `response`."""
        self._change = None
        if response == self._rom_frame:
            self._rom_frame = None
        if getattr(message, "command", None) == 0x4D and self._read is not None:
            read, self._read = self._read, None
            self._post(SasAck((f"4D:{read}",), VALIDATION_READ).to_json())
        sent, self._sent = self._sent, None
        if sent is None:
            return
        with self._lock:
            self.state = replace(self.state, queue=tuple(e for e in self.state.queue if e.id != sent.id))
        self._post(SasAck((sent.id,), sent.code).to_json())

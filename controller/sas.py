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
           "TRANSFER_CODES", "VALIDATION_MODES"]

from controller.cabinetrecords import (
    CabinetDoor, Clear, Credit, SasAck, SasBills, SasDisable, SasEnable, SasRte, SasSignature, SasSound, SasTicketing,
    SasTime, SasValidationId, TicketInAuthorised, TicketInRefused, TicketOutFailed, TicketOutValidation, cabinet_record,
)
from controller.sasfold import (  # the fold and its constants, re-exported: importers of controller.sas keep them
    BILL_DOLLARS, BILL_ACCEPTED, BILL_CODES, BILL_COUNTRY, BONUS_BY, EXCEPTIONS, PRIORITY, VALIDATION_READ, Exc,
    SasNote, SasState, Validation, bcd, enhanced_validation, from_bcd, next_enhanced_validation, raised, sas_step,
    ticket_lines,
)
from controller.sasrom import RomSignature, rom_image

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
# The single bill meters by long poll: the note in dollars (Aristocrat's LP31..LP45 parsers, saspy's
# send_N_bills_in_meters); 3D between them is the cash out ticket information, not a bill meter.
BILL_POLLS = {0x31: 1, 0x32: 2, 0x33: 5, 0x34: 10, 0x35: 20, 0x36: 50, 0x37: 100, 0x38: 500, 0x39: 1000, 0x3A: 200,
              0x3B: 25, 0x3C: 2000, 0x3E: 2500, 0x3F: 5000, 0x40: 10000, 0x41: 20000, 0x42: 25000, 0x43: 50000,
              0x44: 100000, 0x45: 250}
# Long poll 08's bit of each note, in dollars, bits 0-23 least significant byte first (Aristocrat's LP08 parser)
BILL_BITS = (1, 2, 5, 10, 20, 25, 50, 100, 200, 250, 500, 1000, 2000, 2500, 5000, 10000, 20000, 25000, 50000, 100000,
             200000, 250000, 500000, 1000000)
# Long poll 71's transfer codes (Table 15.12c, Aristocrat's TicketTransferCode): 00-02 valid, 80-93 refusals
TRANSFER_CODES = {0x00: "valid cashable ticket", 0x01: "valid restricted promotional ticket",
                  0x02: "valid nonrestricted promotional ticket", 0x80: "unable to validate",
                  0x81: "not a valid validation number", 0x82: "validation number not in system",
                  0x83: "ticket marked pending in system", 0x84: "ticket already redeemed", 0x85: "ticket expired",
                  0x86: "validation information not available", 0x87: "ticket amount does not match system",
                  0x88: "ticket amount exceeds auto redemption limit", 0x90: "ticket not valid at this time",
                  0x91: "ticket not valid on this gaming machine", 0x92: "player card must be inserted",
                  0x93: "ticket not valid for current player"}
# Long poll 50's validation types (Table 15.13c, Aristocrat's LP50 parser)
VALIDATION_TYPES = frozenset([0x00, 0x01, 0x02, 0x03, 0x04, 0x10, 0x20, 0x40, 0x60, 0x80, 0x81, 0x82])
FEATURES = ("legacy_bonus", "extended_meters", "rte")
VALIDATION_MODES = ("system", "enhanced", "none")
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
    validation: str = "system"          # tickets' validation numbers: "system" (57/58), "enhanced" (4C) or "none"


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
    validation = r.get("validation", str, "system")
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
    if validation not in VALIDATION_MODES:
        raise ConfigError(f"{w}.validation: \"system\", \"enhanced\" or \"none\", got {validation!r}")
    return SasConfig(port, address, asset, acct, serial, features, wakeup, chirp, gap, rom_signature=rom,
                     realtime=realtime, validation=validation)


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
    elif command in (0x1E, 0x20, 0x48, 0x4D, 0x50, 0x57, 0x70) or command in BILL_POLLS:
        body = _ticket_read(view, command, data)
    if body is None:
        return None
    return with_crc(a + body)


def _notes(view: View) -> dict[int, int]:
    return dict(view.cabinet.meters.notes_in)


def _when(view: View, when: float) -> dt.datetime:
    return dt.datetime.fromtimestamp(when + view.sas.clock_offset)


def validation_info(view: View, v: Validation | None) -> bytes:
    """Long poll 4D's answer after the command: one validation of the buffer, or 31 zeros when there is none
    (Aristocrat's LP4D parser: type, index, date MMDDYYYY and time HHMMSS in BCD, the 16 digits after the system id
    in 8 BCD, amount in cents 5 BCD, ticket number 2 binary, system id 1 BCD, expiration 4 BCD, pool id 2 binary)."""
    if v is None:
        return bytes(31)
    t = _when(view, v.when)
    return (bytes([0x01 if v.restricted else 0x00, v.index]) + bcd(t.month, 1) + bcd(t.day, 1) + bcd(t.year, 2)
            + bcd(t.hour, 1) + bcd(t.minute, 1) + bcd(t.second, 1) + bcd(int(v.validation[2:]), 8) + bcd(v.cents, 5)
            + (v.number % 10000).to_bytes(2, "little") + bcd(int(v.validation[:2]), 1) + bcd(v.expires, 4)
            + b"\x00\x00")


def unread_validation(sas: SasState) -> Validation | None:
    """4D 00 and FF: the oldest validation printed and not yet read by the host."""
    return next((v for v in sas.validations if v.printed and not v.read), None)


def _ticket_read(view: View, command: int, data: bytes) -> bytes | None:
    m, sas = view.cabinet.meters, view.sas
    notes = _notes(view)
    if command == 0x1E:  # $1, $5, $10, $20, $50, $100 notes accepted [AR LP1E]
        return b"".join(bcd(notes.get(d * 100, 0), 4) for d in (1, 5, 10, 20, 50, 100))
    if command == 0x20:  # the notes' total value in dollars [AR LP20: AccountingMeters.CurrencyInAmount, Dollars]
        return bcd(m.notes_in_cents // 100, 4)
    if command in BILL_POLLS:
        return bcd(notes.get(BILL_POLLS[command] * 100, 0), 4)
    if command == 0x48:  # country code, denomination code (BCD, Table C-6), count of that note [AR LP48]
        cents = sas.last_bill
        if cents is None or cents not in BILL_CODES:
            return bytes(6)
        return bcd(BILL_COUNTRY, 1) + bcd(BILL_CODES[cents], 1) + bcd(notes.get(cents, 0), 4)
    if command == 0x4D:
        if len(data) != 1:
            return None
        fc = data[0]
        if 0x1F < fc < 0xFF:
            raise ValueError(f"4D: function code 00, 01-1F or FF, got {fc:02X}")
        if view.sas.validation_mode == "none":
            return validation_info(view, None)
        if fc in (0x00, 0xFF):
            return validation_info(view, unread_validation(sas))
        return validation_info(view, next((v for v in sas.validations if v.index == fc), None))
    if command == 0x50:
        if len(data) != 1 or data[0] not in VALIDATION_TYPES:
            raise ValueError(f"50: no validation type {data.hex() or 'missing'}")
        count, cents = {0x00: (m.tickets_out_cashable, m.tickets_out_cashable_cents),
                        0x01: (m.tickets_out_restricted, m.tickets_out_restricted_cents),
                        0x80: (m.tickets_in_cashable, m.tickets_in_cashable_cents),
                        0x81: (m.tickets_in_restricted, m.tickets_in_restricted_cents)}.get(data[0], (0, 0))
        return data[:1] + bcd(count, 4) + bcd(cents, 5)
    if command == 0x57:  # 00 cashable, 01 restricted, 80 not waiting for a validation; the amount in cents
        pending = sas.pending_cashout
        if pending is None:
            return b"\x80" + bcd(0, 5)
        return bytes([0x01 if pending[2] else 0x00]) + bcd(pending[1], 5)
    if command == 0x70:  # a ticket in escrow: 00, amount (unknown: zeros), parsing code 00, 18 digits; else FF
        r = sas.redemption
        if r is None or r.done:
            return b"\x01\xff"
        body = b"\x00" + bcd(0, 5) + b"\x00" + bytes.fromhex(r.validation)
        return bytes([len(body)]) + body
    return None


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


TICKET_CHANGING = frozenset([0x06, 0x07, 0x08, 0x4C, 0x58, 0x71, 0x7B, 0x7C, 0x7D])
CHANGING = frozenset([0x01, 0x02, 0x03, 0x04, 0x05, 0x0E, 0x7F, 0x8A, 0x94]) | TICKET_CHANGING


def _text(data: bytes, where: str) -> str:
    if not all(0x20 <= b < 0x7F for b in data):
        raise ValueError(f"{where}: not printable ASCII")
    return data.decode("ascii")


def ticket_data(command: int, data: bytes) -> dict[str, Any]:
    """7C's data elements or 7D's fields, as SasTicketing's fields (ValueError naming what is wrong). 7C: code,
    length, ASCII text, repeated (00 location, 01 address 1, 02 address 2, 10 restricted title, 20 debit title; titles
    at most 16 characters, the rest 40). 7D: host id 2 binary, expiration days 1 binary (00 never), then location,
    address 1 and address 2, each a length (00: unchanged, at most 40) and its text (Aristocrat's LP7C and LP7D)."""
    out: dict[str, Any] = {}
    if command == 0x7C:
        names = {0x00: "location", 0x01: "address1", 0x02: "address2", 0x10: "restricted_title", 0x20: "debit_title"}
        i = 0
        while i < len(data):
            if i + 2 > len(data):
                raise ValueError(f"7C: data element at byte {i} cut short")
            code, size = data[i], data[i + 1]
            if code not in names:
                raise ValueError(f"7C: no data code {code:02X}")
            if size > (16 if code >= 0x10 else 40) or i + 2 + size > len(data):
                raise ValueError(f"7C: {names[code]} of {size} bytes is too long or cut short")
            out[names[code]] = _text(data[i + 2:i + 2 + size], f"7C {names[code]}")
            i += 2 + size
        if not out:
            raise ValueError("7C: no data element")
        return out
    if len(data) < 2:
        raise ValueError("7D: no host id")
    out["host_id"] = int.from_bytes(data[:2], "little")
    if len(data) >= 3:
        out["cashable_expiry"] = data[2] or 9999  # 00: never expires
    i = 3
    for name in ("location", "address1", "address2"):
        if i >= len(data):
            break
        size = data[i]
        if size > 40 or i + 1 + size > len(data):
            raise ValueError(f"7D: {name} of {size} bytes is too long or cut short")
        if size:
            out[name] = _text(data[i + 1:i + 1 + size], f"7D {name}")
        i += 1 + size
    if i < len(data):
        raise ValueError(f"7D: {len(data) - i} bytes after address 2")
    return out


def _redeem_answer(status: int, cents: int = 0, validation: str | None = None) -> bytes:
    """71's answer after the command: length, machine status, and (except C0 and FF) amount, parsing code and
    the ticket's 18 digits (Aristocrat's LP71 parser)."""
    body = bytes([status])
    if status not in (0xC0, 0xFF):
        body += bcd(cents, 5) + b"\x00" + bytes.fromhex(validation or "0" * 18)
    return bytes([len(body)]) + body


def redeem(view: View, data: bytes) -> tuple[dict[str, Any] | None, bytes]:
    """Long poll 71 (after its length byte): the host's answer about the ticket in escrow, or a status query (FF, or
    the transfer code alone). Transfer code, amount 5 BCD cents, parsing code, 9 BCD validation data, then for a
    restricted ticket expiration 4 BCD and pool id 2 binary, then a target id's length and text (Aristocrat's LP71
    parser). ValueError for a malformed one (NACKed)."""
    if not data:
        raise ValueError("71: no transfer code")
    code, r = data[0], view.sas.redemption
    if code == 0xFF or len(data) == 1:
        return None, (_redeem_answer(0xFF) if r is None else _redeem_answer(r.status, r.cents, r.validation))
    if len(data) < 16:
        raise ValueError(f"71: {len(data)} bytes; a redemption is at least 16")
    cents = from_bcd(data[1:6])
    digits = data[7:16].hex()
    if not digits.isdigit():
        raise ValueError(f"71: validation data {digits} is not BCD")
    expires, pool = None, None
    if len(data) >= 22:
        expires, pool = f"{from_bcd(data[16:20]):08d}", int.from_bytes(data[20:22], "little")
        if len(data) > 22 and 23 + data[22] > len(data):
            raise ValueError(f"71: a target id of {data[22]} bytes in {len(data) - 23}")
    elif len(data) != 16:
        raise ValueError(f"71: {len(data)} bytes: 16 for a cashable ticket, 22 or more with expiration and pool")
    if r is None or r.done:
        return None, _redeem_answer(0xC0)  # no ticket in a redemption cycle
    if r.status != 0x20:  # answered already: the host asks again, it hears how it stands
        return None, (_redeem_answer(r.status, r.cents, r.validation) if r.validation == digits
                      else _redeem_answer(0xC0))
    if digits != r.validation:
        return None, _redeem_answer(0x81, cents, digits)  # not the ticket in escrow
    if code in (0x00, 0x01, 0x02):
        if cents <= 0:
            return None, _redeem_answer(0x83, cents, digits)
        if cents % view.cabinet.denomination:
            return None, _redeem_answer(0x85, cents, digits)  # not whole credits of this cabinet
        restricted = code == 0x01
        record = TicketInAuthorised(digits, cents, restricted, code, pool if restricted else None,
                                    expires if restricted else None)
        return record.to_json(), _redeem_answer(0x40, cents, digits)
    if code in TRANSFER_CODES:
        return TicketInRefused(digits, TRANSFER_CODES[code], code).to_json(), _redeem_answer(0x80, 0, digits)
    return None, _redeem_answer(0x82, cents, digits)  # not a valid transfer function


def ticket_change(view: View, command: int, data: bytes) -> tuple[dict[str, Any] | None, bytes]:
    """The ticket and bill polls that change something: (record or None, the answer after the command; b"" is
    an ACK). Raises ValueError for a malformed poll (NACKed), LookupError for one this EGM ignores."""
    sas, t = view.sas, view.sas.ticketing
    if command in (0x06, 0x07):
        enable = command == 0x06
        return (SasBills(enable).to_json() if enable != sas.bills else None), b""
    if command == 0x08:
        if len(data) != 5 or data[4] > 1:
            raise ValueError(f"08: four bytes of notes and an action flag 00 or 01, got {data.hex()}")
        bits = int.from_bytes(data[:4], "little")
        notes = tuple(d * 100 for i, d in enumerate(BILL_BITS) if bits >> i & 1)
        return SasBills(sas.bills, notes).to_json(), b""
    if command == 0x4C:
        if view.sas.validation_mode != "enhanced" or len(data) != 6:
            raise LookupError(command)  # not configured for secure enhanced validation: ignored [AR LP4C]
        # 4C's sequence number is incremented before each ticket takes it [AR LP4C]: the next ticket's is one more,
        # which is what SasValidationId holds (the 15.14 example: id 654321 sent with 0 numbers its ticket with 1)
        machine, sequence = int.from_bytes(data[:3], "little"), int.from_bytes(data[3:], "little")
        following = (machine, (sequence + 1) % 0x1000000)
        if machine == 0 or following == sas.validation_set:
            # 0 reads the current id; the last id and sequence sent again leave the sequence where it has got to
            current = sas.validation_id or (0, 1)
            return None, current[0].to_bytes(3, "little") + ((current[1] - 1) % 0x1000000).to_bytes(3, "little")
        return SasValidationId(*following).to_json(), data
    if command == 0x58:
        if len(data) != 9:
            raise ValueError("58: a system id and 8 BCD bytes of validation number")
        system, number = from_bcd(data[:1]), from_bcd(data[1:])
        pending = sas.pending_cashout
        if pending is None:
            return None, b"\x80"  # not in a cash out
        if system == 0:  # the host denies the validation: no ticket (the cabinet pays otherwise)
            return TicketOutFailed(pending[0], "system validation denied").to_json(), b"\x00"
        if number == 0:
            return None, b"\x81"  # improper validation number
        expiry = t.restricted_expiry if pending[2] else t.cashable_expiry
        return TicketOutValidation(pending[0], f"{system:02d}{number:016d}", "system", expiry).to_json(), b"\x00"
    if command == 0x71:
        return redeem(view, data)
    if command == 0x7B:
        if len(data) != 8:
            raise ValueError(f"7B: 8 bytes after the length, got {len(data)}")
        mask = int.from_bytes(data[:2], "little") & 0x803F  # bits this EGM knows (Table 15.2c)
        states = int.from_bytes(data[2:4], "little")
        cash, restricted = from_bcd(data[4:6]), from_bcd(data[6:8])  # 0000: unchanged
        status = (t.status & ~mask) | (states & mask)
        new: dict[str, Any] = {"status": status if status != t.status else None,
               "cashable_expiry": cash if cash and cash != t.cashable_expiry else None,
               "restricted_expiry": restricted if restricted and restricted != t.restricted_expiry else None}
        record = SasTicketing(**new).to_json() if any(v is not None for v in new.values()) else None
        answer = (view.config.asset_number.to_bytes(4, "little") + status.to_bytes(2, "little")
                  + bcd(cash or t.cashable_expiry, 2) + bcd(restricted or t.restricted_expiry, 2))
        return record, bytes([len(answer)]) + answer
    try:
        fields = ticket_data(command, data)
    except ValueError as exc:
        log.warning("SAS poll %02X: ticket data refused: %s", command, exc)
        return None, b"\x00"  # 00: the data is not valid (Aristocrat's TicketDataStatus.InvalidData)
    return SasTicketing(**fields).to_json(), b"\x01"


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
        """How tickets out are numbered: the cabinet's [cabinet.tito] validation where it has one, else [sas]'s."""
        tito = getattr(self.cabinet.config, "tito", None)
        return str(getattr(tito, "validation", None) or self.config.validation)

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

"""SAS's note and ticket polls on the EGM's side: bill meters, validation, ticket redemption and ticket data, each answered from the journal-derived state (controller/sas.py dispatches to them).

Layouts follow SAS 6.02 as Aristocrat's SAS client quotes it (tests/test_sas_tito_layouts.py names the source of
each); a poll that changes something returns the journal record it asks for and its answer, as
controller/sas.py's change_record does.
"""

from __future__ import annotations

import datetime as dt
import logging
from typing import Any

from controller.cabinetrecords import (
    SasBills, SasTicketing, SasValidationId, TicketInAuthorised, TicketInRefused, TicketOutFailed, TicketOutValidation,
)
from controller.sasfold import BILL_CODES, BILL_COUNTRY, SasState, Validation, bcd, from_bcd

__all__ = ["BILL_POLLS", "BILL_BITS", "TRANSFER_CODES", "VALIDATION_TYPES", "TICKET_READS", "TICKET_CHANGING",
           "ticket_read", "validation_info", "unread_validation", "ticket_data", "redeem", "ticket_change"]

log = logging.getLogger("croupier.sas")
View = Any  # controller.sas.View (imported there; a type here would import it back)

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
TICKET_READS = frozenset([0x1E, 0x20, 0x48, 0x4D, 0x50, 0x57, 0x70, *BILL_POLLS])
TICKET_CHANGING = frozenset([0x06, 0x07, 0x08, 0x4C, 0x58, 0x71, 0x7B, 0x7C, 0x7D])

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


def ticket_read(view: View, command: int, data: bytes) -> bytes | None:
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

"""The JCM ID-003 bill validator protocol as bytes: frames, their CRC, the command and status codes, escrow data.

Pure: no I/O, no clock. A frame is SYNC (0xFC), LNG (the whole frame's length, SYNC and CRC included), CMD (a
command from the host or a status from the validator), DATA (0 or more bytes), CRC (2 bytes, low byte first).

Sources (facts, not code, were taken; see README.md):
- tejvirc/Platform (Aristocrat Monaco), Hardware/Aristocrat.Monaco.Hardware.Serial/NoteAcceptor/ID003/
  Id003ProtocolDefs.cs @ d153cca961428a7fce08d3d4c42735bb5d47b064 (command, status, reject codes),
  Id003Protocol.cs @ 26c9860b278c495874ed2f2fabc58d343b6d3bd8 (frame layout "CRC ... lowest first"; the ticket
  escrow code 0x6F followed by 6..18 ASCII barcode bytes; vend valid is the only status the host must ACK;
  polling every 150 ms), Crc16Ccitt.cs @ c5b1311973f4c8602d69000ae886151e3ecf531f (the CRC).
- hackwin/JCMBillAcceptorID003, jcmbillacceptorid003.h @ ce3eb8e95df16eeb91cce7684f189a73e4597f6a (9600 bps 8E1;
  LNG = command length + 4; the USD escrow codes 0x61 $1, 0x63 $5 .. 0x67 $100; a 0 bit in C0's data enables a
  denomination; bar inhibit bit 1 refuses tickets).
- lamassu/lamassu-machine, lib/id003/id003rs232.js @ cecb72ede1f01f07a5332c5e85ff154bf65d544d (status names,
  the reject reasons 0x71..0x7F, inhibit C3 01 / C3 00).
- Portalum/Portalum.Id003, src/Portalum.Id003/Id003Client.cs @ b9867989e76bdfac03689c2326a6d29cf075b490 (the EUR
  escrow codes 0x62 5 .. 0x67 200).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import IntEnum
from typing import Mapping

# ID-003's CRC is SAS's: CRC-16/CCITT with the polynomial 0x1021 reflected (0x8408), initial value 0, no final
# XOR (the "Kermit" variant), sent low byte first. Monaco's Crc16Ccitt.cs and hackwin's calcCRC compute it a nibble
# at a time with 0x1081 (0x8408's nibble table step) from seed 0; the frames in tests/test_validator_protocol.py
# (FC 05 11 27 56, ...) check it byte for byte.
from drivers.sas.crc import crc16

__all__ = ["SYNC", "MIN_FRAME", "MAX_FRAME", "ProtocolError", "Frame", "Cmd", "Status", "REJECT_REASONS",
           "POWER_UP_HOLDING", "FAULT_STATUSES", "TICKET_ESCROW", "BARCODE_DIGITS", "NOTE_TABLES", "NoteTable",
           "Item", "encode", "decode", "FrameReader", "crc16", "escrow_data", "parse_escrow",
           "denomination_mask", "enabled_notes", "reject_reason"]

SYNC = 0xFC
MIN_FRAME = 5    # SYNC, LNG, CMD, CRC x2
MAX_FRAME = 255  # LNG is one byte


class ProtocolError(ValueError):
    """Bytes that are not an ID-003 frame; the message says which rule they broke."""


class Cmd(IntEnum):
    """Host to validator."""
    STATUS_REQUEST = 0x11
    ACK = 0x50
    RESET = 0x40
    STACK_1 = 0x41
    STACK_2 = 0x42
    RETURN = 0x43
    HOLD = 0x44
    WAIT = 0x45
    # Setting commands: the validator answers each with an echo of the command and its data.
    ENABLE_DENOMINATIONS = 0xC0  # 2 bytes: bit n set = escrow code 0x61+n refused
    SECURITY = 0xC1              # 2 bytes: bit n set = high security for escrow code 0x61+n
    COMMUNICATION_MODE = 0xC2
    INHIBIT = 0xC3               # 1 byte: 1 = inhibited (takes nothing), 0 = accepting
    DIRECTION = 0xC4
    OPTIONAL_FUNCTION = 0xC5
    BARCODE_FUNCTION = 0xC6
    BAR_INHIBIT = 0xC7           # 1 byte: bit 0 set = no notes, bit 1 set = no tickets
    # Setting status requests: the validator answers with the same code and the setting's current data.
    ENABLE_DENOMINATIONS_STATUS = 0x80
    SECURITY_STATUS = 0x81
    COMMUNICATION_MODE_STATUS = 0x82
    INHIBIT_STATUS = 0x83
    DIRECTION_STATUS = 0x84
    OPTIONAL_FUNCTION_STATUS = 0x85
    BARCODE_FUNCTION_STATUS = 0x86
    BAR_INHIBIT_STATUS = 0x87
    VERSION_REQUEST = 0x88


class Status(IntEnum):
    """Validator to host, in answer to STATUS_REQUEST (and ACK / INVALID_COMMAND in answer to operations)."""
    IDLING = 0x11
    ACCEPTING = 0x12
    ESCROW = 0x13            # + escrow data
    STACKING = 0x14
    VEND_VALID = 0x15        # the host answers ACK
    STACKED = 0x16
    REJECTING = 0x17         # + reject reason
    RETURNING = 0x18
    HOLDING = 0x19
    DISABLED = 0x1A          # inhibited
    INITIALIZE = 0x1B
    POWER_UP = 0x40
    POWER_UP_BILL_IN_ACCEPTOR = 0x41
    POWER_UP_BILL_IN_STACKER = 0x42
    STACKER_FULL = 0x43
    STACKER_OPEN = 0x44
    JAM_IN_ACCEPTOR = 0x45
    JAM_IN_STACKER = 0x46
    PAUSE = 0x47
    CHEATED = 0x48
    FAILURE = 0x49
    COMMUNICATION_ERROR = 0x4A
    INVALID_COMMAND = 0x4B
    ACK = 0x50


# The error statuses that are faults of the cabinet's contract (drivers.validator.events.VALIDATOR_FAULTS).
FAULT_STATUSES: Mapping[int, str] = {
    Status.STACKER_FULL: "stacker_full", Status.STACKER_OPEN: "stacker_open",
    Status.JAM_IN_ACCEPTOR: "jam", Status.JAM_IN_STACKER: "jam",
    Status.CHEATED: "cheat", Status.FAILURE: "failure",
}

POWER_UP_HOLDING: Mapping[int, str] = {
    Status.POWER_UP: "none", Status.POWER_UP_BILL_IN_ACCEPTOR: "acceptor", Status.POWER_UP_BILL_IN_STACKER: "stacker",
}

# Why a validator refused an item (the data byte of REJECTING), in words for the attendant.
REJECT_REASONS: Mapping[int, str] = {
    0x71: "insertion error", 0x72: "magnetic pattern error", 0x73: "sensor detected something while idle",
    0x74: "data amplitude error", 0x75: "feed error", 0x76: "denomination not recognised",
    0x77: "photo pattern error", 0x78: "photo level error", 0x79: "inhibited (denomination or tickets disabled)",
    0x7A: "reserved", 0x7B: "operation error", 0x7C: "item in the transport at the wrong time",
    0x7D: "length error", 0x7E: "colour pattern error", 0x7F: "true bill check failed",
    0x91: "barcode function not set", 0x92: "barcode unknown", 0x93: "barcode length error",
    0x94: "barcode start bit error", 0x95: "barcode stop bit error", 0x96: "barcode not set",
    0x9D: "ticket length error",
}

TICKET_ESCROW = 0x6F
BARCODE_DIGITS = 18  # a casino ticket's validation number (SAS): 18 ASCII digits

NoteTable = Mapping[int, int]  # escrow code -> cents

# Escrow codes per country, as each country's ID-003 firmware assigns them (config `country` picks one).
NOTE_TABLES: Mapping[str, NoteTable] = {
    "USD": {0x61: 100, 0x62: 200, 0x63: 500, 0x64: 1000, 0x65: 2000, 0x66: 5000, 0x67: 10000},
    "EUR": {0x62: 500, 0x63: 1000, 0x64: 2000, 0x65: 5000, 0x66: 10000, 0x67: 20000},
}


@dataclass(frozen=True)
class Frame:
    """One ID-003 message: a command or status byte and its data."""
    cmd: int
    data: bytes = b""

    def __post_init__(self) -> None:
        if not 0 <= self.cmd <= 0xFF:
            raise ProtocolError(f"command byte {self.cmd} is not 0..255")
        if len(self.data) > MAX_FRAME - MIN_FRAME:
            raise ProtocolError(f"{len(self.data)} data bytes do not fit a frame (at most {MAX_FRAME - MIN_FRAME})")

    def __str__(self) -> str:
        return f"{self.cmd:02X}" + (f" {self.data.hex(' ').upper()}" if self.data else "")


def encode(frame: Frame) -> bytes:
    """The bytes on the line for `frame`."""
    body = bytes((SYNC, len(frame.data) + MIN_FRAME, frame.cmd)) + frame.data
    return body + crc16(body).to_bytes(2, "little")


def decode(raw: bytes) -> Frame:
    """One whole frame from its bytes; ProtocolError names what is wrong."""
    if len(raw) < MIN_FRAME:
        raise ProtocolError(f"a frame is at least {MIN_FRAME} bytes, got {len(raw)}")
    if raw[0] != SYNC:
        raise ProtocolError(f"a frame starts with SYNC FC, got {raw[0]:02X}")
    if raw[1] != len(raw):
        raise ProtocolError(f"LNG says {raw[1]} bytes, the frame has {len(raw)}")
    want = crc16(raw[:-2])
    got = int.from_bytes(raw[-2:], "little")
    if want != got:
        raise ProtocolError(f"bad CRC {got:04X} (computed {want:04X}) on {raw.hex(' ').upper()}")
    return Frame(raw[2], bytes(raw[3:-2]))


class FrameReader:
    """Frames out of a byte stream cut anywhere, resynchronising after garbage: `feed` returns, in order, each frame
    and a ProtocolError for each run of bytes skipped. Never raises."""

    def __init__(self) -> None:
        self.buf = bytearray()

    def feed(self, data: bytes) -> list[Frame | ProtocolError]:
        self.buf += data
        out: list[Frame | ProtocolError] = []
        while self.buf:
            start = self.buf.find(SYNC)
            if start < 0:
                out.append(ProtocolError(f"{len(self.buf)} bytes of noise without SYNC"))
                self.buf.clear()
                break
            if start:
                out.append(ProtocolError(f"{start} bytes of noise before SYNC"))
                del self.buf[:start]
            if len(self.buf) < 2:
                break
            length = self.buf[1]
            if length < MIN_FRAME:
                out.append(ProtocolError(f"LNG {length} is shorter than a frame"))
                del self.buf[:1]
                continue
            if len(self.buf) < length:
                # Incomplete, or a SYNC in noise with a wild LNG: a whole valid frame starting later wins.
                later = self._complete_frame_after(1)
                if later is None:
                    break
                out.append(ProtocolError(f"{later} bytes skipped: an unfinished frame"))
                del self.buf[:later]
                continue
            raw = bytes(self.buf[:length])
            try:
                frame = decode(raw)
            except ProtocolError as exc:
                out.append(exc)
                del self.buf[:1]  # resynchronise on the next SYNC, which may sit inside this candidate
                continue
            out.append(frame)
            del self.buf[:length]
        return out

    def _complete_frame_after(self, begin: int) -> int | None:
        i = self.buf.find(SYNC, begin)
        while i >= 0:
            if i + 1 < len(self.buf):
                length = self.buf[i + 1]
                if length >= MIN_FRAME and i + length <= len(self.buf):
                    try:
                        decode(bytes(self.buf[i:i + length]))
                        return i
                    except ProtocolError:
                        pass
            i = self.buf.find(SYNC, i + 1)
        return None

    def clear(self) -> int:
        """Forget a partial frame (the host's answer timed out); returns how many bytes were dropped."""
        n = len(self.buf)
        self.buf.clear()
        return n


# ---- escrow data -------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Item:
    """What is in escrow: a note (cents) or a ticket (18-digit barcode)."""
    note_cents: int | None = None
    barcode: str | None = None


def escrow_data(item: Item, table: NoteTable) -> bytes:
    """The DATA of an ESCROW status for `item` (a note's escrow code, or 0x6F and the barcode's ASCII digits)."""
    if item.barcode is not None:
        if not (item.barcode.isascii() and item.barcode.isdigit() and len(item.barcode) == BARCODE_DIGITS):
            raise ProtocolError(f"a ticket's barcode is {BARCODE_DIGITS} digits, got {item.barcode!r}")
        return bytes((TICKET_ESCROW,)) + item.barcode.encode("ascii")
    for code, cents in table.items():
        if cents == item.note_cents:
            return bytes((code,))
    raise ProtocolError(f"no escrow code for a {item.note_cents}-cent note")


def parse_escrow(data: bytes, table: NoteTable) -> Item:
    """The item an ESCROW status's DATA names; ProtocolError for an unknown code or a malformed barcode."""
    if not data:
        raise ProtocolError("ESCROW without its escrow code")
    if data[0] == TICKET_ESCROW:
        text = data[1:]
        if not (1 <= len(text) <= BARCODE_DIGITS and text.isdigit()):
            raise ProtocolError(f"ticket escrow with a bad barcode {bytes(text)!r}")
        return Item(barcode=text.decode("ascii"))
    if len(data) != 1:
        raise ProtocolError(f"note escrow has 1 data byte, got {len(data)}")
    if data[0] not in table:
        raise ProtocolError(f"escrow code {data[0]:02X} is not in the note table")
    return Item(note_cents=table[data[0]])


def denomination_mask(notes: frozenset[int], table: NoteTable) -> bytes:
    """ENABLE_DENOMINATIONS's 2 data bytes: bit n of the first set refuses escrow code 0x61+n (every note not in
    `notes` is refused); the second byte is reserved (0)."""
    mask = 0
    for code, cents in table.items():
        if cents not in notes and 0x61 <= code <= 0x68:
            mask |= 1 << (code - 0x61)
    return bytes((mask, 0))


def enabled_notes(mask: bytes, table: NoteTable) -> frozenset[int]:
    """The notes (cents) an ENABLE_DENOMINATIONS mask lets in."""
    bits = mask[0] if mask else 0
    return frozenset(cents for code, cents in table.items() if 0x61 <= code <= 0x68 and not bits >> (code - 0x61) & 1)


def reject_reason(data: bytes) -> str:
    """A REJECTING status's reason in words."""
    if not data:
        return "rejected (no reason given)"
    return REJECT_REASONS.get(data[0], f"rejected (reason code {data[0]:02X})")


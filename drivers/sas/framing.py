"""Framing the host's messages on a SAS line: by the wake-up bit where the line carries it, else by each poll's known length and the gaps between bytes.

A host message starts with a byte whose wake-up (ninth) bit is set: a general poll is that one byte
(0x80 | address); a long poll is the address, the command, and what the command carries. Where the line
cannot carry the wake-up bit (a pseudo-terminal, an adapter without 9-bit support) the framer finds the
messages by protocol knowledge: each command's length (`poll_length`), CRC checks, and silence on the line
between messages. After garbage it resynchronises byte by byte (no wake-up bit) or at the next wake-up byte.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Union

from drivers.sas.crc import crc_ok

__all__ = ["GeneralPoll", "LongPoll", "CrcError", "Unknown", "Message", "Framer", "poll_length", "READ_POLLS",
           "FIXED_POLLS", "VARIABLE_POLLS"]

# Type R long polls: address and command only, no CRC (the meters, credits, IDs, date and time).
READ_POLLS = frozenset([0x0F, *range(0x10, 0x20), 0x20, 0x2A, 0x2B, *range(0x31, 0x46), 0x46, 0x47, 0x48, 0x49,
                        0x4A, 0x4F, 0x51, 0x54, 0x55, 0x56, 0x57, 0x70, 0x7E])
# Type S long polls of a fixed length, address to CRC inclusive.
FIXED_POLLS = {0x01: 4, 0x02: 4, 0x03: 4, 0x04: 4, 0x05: 4, 0x06: 4, 0x07: 4, 0x08: 9, 0x09: 7, 0x0A: 4, 0x0B: 4,
               0x0E: 5, 0x21: 6, 0x2D: 6, 0x4C: 10, 0x4D: 5, 0x50: 5, 0x52: 6, 0x53: 6, 0x58: 13, 0x7F: 11, 0x8A: 9,
               0x94: 4, 0xA0: 6}
# Type M long polls: address, command, length byte, that many bytes, CRC.
VARIABLE_POLLS = frozenset([0x2F, 0x6F, 0x71, 0x72, 0x73, 0x7B, 0x7C, 0x7D, 0xAF, 0xB5])


@dataclass(frozen=True, slots=True)
class GeneralPoll:
    address: int
    raw: bytes


@dataclass(frozen=True, slots=True)
class LongPoll:
    address: int
    command: int
    data: bytes      # what follows the command (and the length byte of a type M poll), without the CRC
    raw: bytes


@dataclass(frozen=True, slots=True)
class CrcError:
    address: int
    command: int
    raw: bytes


@dataclass(frozen=True, slots=True)
class Unknown:
    address: int
    command: int
    raw: bytes


Message = Union[GeneralPoll, LongPoll, CrcError, Unknown]


def poll_length(buf: bytes | bytearray) -> int | None:
    """The whole length of the long poll at the start of `buf` (address first), None while more bytes are
    needed to tell, 0 for a command this side does not know."""
    if len(buf) < 2:
        return None
    cmd = buf[1]
    if cmd in READ_POLLS:
        return 2
    if cmd in FIXED_POLLS:
        return FIXED_POLLS[cmd]
    if cmd in VARIABLE_POLLS:
        return None if len(buf) < 3 else 3 + buf[2] + 2
    return 0


class Framer:
    """Bytes in (each with its wake-up bit, or None where the line cannot tell), messages out.

    `addresses` are this side's: an unknown poll to one of them has an unknown length, so the rest of it
    (to the next wake-up byte, or to the next silence) is skipped rather than read as polls."""

    def __init__(self, addresses: Iterable[int], gap: float = 0.01, hold: float = 0.2) -> None:
        self.addresses = frozenset(addresses)
        self.gap = gap
        self.hold = hold  # a lone address byte of ours waits this long for its command (a host that pauses)
        self.buf = bytearray()
        self.marked = False         # the wake-up bit has been seen on this line: frame by it
        self.skipping = False
        self.last: float | None = None
        self.garbage = 0            # bytes thrown away while resynchronising

    @property
    def partial(self) -> bool:
        return bool(self.buf) or self.skipping

    def feed(self, items: Iterable[tuple[int, bool | None]], now: float) -> list[Message]:
        out: list[Message] = []
        if self.last is not None and now - self.last > self.gap:
            out += self.expire(now)
        self.last = now
        for byte, wake in items:
            if wake is not None:
                self.marked = True
            if wake:
                if self.buf:
                    self.garbage += len(self.buf)  # a message cut short by the next one
                self.buf.clear()
                self.skipping = False
            elif self.marked and not self.buf:
                self.garbage += 1  # no message starts without the wake-up bit (leading bytes, noise)
                continue
            if self.skipping:
                continue
            self.buf.append(byte)
            out += self._parse()
        return out

    def expire(self, now: float | None = None) -> list[Message]:
        """The line went quiet: whatever is partial will not complete. Without the wake-up bit, look for
        a whole message after each byte of it (leading bytes, a garbled first byte). A lone address byte of
        ours is kept a while: some hosts send the address, then reopen the port, then the command."""
        out: list[Message] = []
        self.skipping = False
        if not self.marked and len(self.buf) == 1 and self.buf[0] in self.addresses and now is not None \
                and self.last is not None and now - self.last < self.hold:
            return out
        if self.marked:
            self.garbage += len(self.buf)
            self.buf.clear()
            return out
        while self.buf:
            del self.buf[0]
            self.garbage += 1
            out += self._parse()
        return out

    def _drop(self, n: int) -> None:
        del self.buf[:n]

    def _parse(self) -> list[Message]:
        out: list[Message] = []
        buf = self.buf
        while buf and not self.skipping:
            first = buf[0]
            if first & 0x80:
                out.append(GeneralPoll(first & 0x7F, bytes(buf[:1])))
                self._drop(1)
                continue
            n = poll_length(buf)
            if n is None or (n and len(buf) < n):
                return out
            if n == 0:
                out.append(Unknown(first, buf[1], bytes(buf)))
                if self.marked or first in self.addresses:
                    self.skipping = True  # its length is unknown: skip to the next message
                    buf.clear()
                else:
                    self.garbage += 1
                    self._drop(1)
                continue
            msg = bytes(buf[:n])
            cmd = msg[1]
            if cmd not in READ_POLLS and not crc_ok(msg):
                out.append(CrcError(first, cmd, msg))
                if self.marked or first in self.addresses:
                    self.skipping = True  # a garbled poll to us: none of its bytes may pass for a poll
                    buf.clear()
                else:
                    self.garbage += 1
                    self._drop(1)  # perhaps a leading byte: the message may start at the next one
                continue
            body = msg[3:-2] if cmd in VARIABLE_POLLS else (msg[2:] if cmd in READ_POLLS else msg[2:-2])
            out.append(LongPoll(first, cmd, body, msg))
            self._drop(n)
        return out


def unmark(data: bytes, state: bytearray) -> list[tuple[int, bool]]:
    """Undo Linux's parity marking (PARMRK on a space-parity line): 0xFF 0x00 b is b with its wake-up bit,
    0xFF 0xFF is a 0xFF data byte. `state` carries an escape split across reads."""
    out: list[tuple[int, bool]] = []
    for b in data:
        if state:
            if len(state) == 1:
                if b == 0xFF:
                    out.append((0xFF, False))
                    state.clear()
                else:
                    state.append(b)  # 0xFF 0x00: the next byte had a parity error (its wake-up bit)
            else:
                out.append((b, True))
                state.clear()
        elif b == 0xFF:
            state.append(b)
        else:
            out.append((b, False))
    return out

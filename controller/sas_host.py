"""A SAS host for the slot technician, written from the protocol alone: it shares no framing or CRC code with the EGM side (drivers/sas, controller/sas.py).

It polls one EGM address the way a floor system does: general polls for exceptions (with a sync poll to
address 0 between them, the host's implied acknowledgement), long polls for meters, credits, machine
information and the ROM signature; a response that does not arrive or fails its CRC is asked for again by
repeating the same poll (the implied negative acknowledgement). Where the device carries it, the first
byte of each message goes out with the wake-up bit (mark parity), the rest with space parity.
"""

from __future__ import annotations

import datetime as dt
import os
import select
import termios
import time
from dataclasses import dataclass
from typing import Any

__all__ = ["SasHost", "HostError", "kermit", "EXCEPTION_NAMES", "METER_NAMES", "DENOMINATIONS", "BILL_METER_POLLS"]

EXCEPTION_NAMES = {
    0x00: "no activity", 0x11: "slot door opened", 0x12: "slot door closed", 0x13: "drop door opened",
    0x14: "drop door closed", 0x15: "card cage opened", 0x16: "card cage closed", 0x17: "AC power applied",
    0x18: "AC power lost", 0x19: "cashbox door opened", 0x1A: "cashbox door closed", 0x1D: "belly door opened",
    0x1E: "belly door closed", 0x20: "general tilt", 0x21: "coin in tilt", 0x22: "coin out tilt",
    0x23: "hopper empty", 0x24: "extra coin paid", 0x2D: "reverse coin in", 0x3C: "operator changed options",
    0x40: "reel tilt", 0x51: "hand pay pending", 0x52: "hand pay reset", 0x53: "no progressive information",
    0x54: "progressive win", 0x66: "cash out button pressed", 0x70: "exception buffer overflow",
    0x7C: "legacy bonus pay awarded", 0x7E: "game started", 0x7F: "game ended",
    0x1B: "cashbox was removed", 0x1C: "cashbox was installed", 0x27: "cashbox full detected", 0x28: "bill jam",
    0x29: "bill acceptor hardware failure", 0x2A: "reverse bill detected", 0x2B: "bill rejected",
    0x2C: "counterfeit bill detected", 0x3D: "cash out ticket has been printed", 0x3E: "hand pay validated",
    0x3F: "validation ID not configured", 0x47: "$1.00 bill accepted", 0x48: "$5.00 bill accepted",
    0x49: "$10.00 bill accepted", 0x4A: "$20.00 bill accepted", 0x4B: "$50.00 bill accepted",
    0x4C: "$100.00 bill accepted", 0x4D: "$2.00 bill accepted", 0x4E: "$500.00 bill accepted", 0x4F: "bill accepted",
    0x50: "$200.00 bill accepted", 0x57: "system validation request", 0x60: "printer communication error",
    0x61: "printer paper out error", 0x67: "ticket has been inserted", 0x68: "ticket transfer complete",
    0x74: "printer paper low", 0x75: "printer power off", 0x76: "printer power on", 0x78: "printer carriage jam",
}
# Long polls 31-45: the count of one note, by its value in dollars (3D between them is not a bill meter)
BILL_METER_POLLS = {1: 0x31, 2: 0x32, 5: 0x33, 10: 0x34, 20: 0x35, 50: 0x36, 100: 0x37, 500: 0x38, 1000: 0x39,
                    200: 0x3A, 25: 0x3B, 2000: 0x3C, 2500: 0x3E, 5000: 0x3F, 10000: 0x40, 20000: 0x41, 25000: 0x42,
                    50000: 0x43, 100000: 0x44, 250: 0x45}
# Long poll 08: the note of each bit, in dollars, least significant byte first
_BILL_BITS = (1, 2, 5, 10, 20, 25, 50, 100, 200, 250, 500, 1000, 2000, 2500, 5000, 10000, 20000, 25000, 50000, 100000,
              200000, 250000, 500000, 1000000)
# Table C-4 of SAS 6.02, the whole-cent rows: denomination code -> cents per credit (long polls 1F and 53).
DENOMINATIONS = {0x01: 1, 0x02: 5, 0x03: 10, 0x04: 25, 0x05: 50, 0x06: 100, 0x07: 500, 0x08: 1000, 0x09: 2000,
                 0x0A: 10000, 0x0B: 20, 0x0C: 200, 0x0D: 250, 0x0E: 2500, 0x0F: 5000, 0x10: 20000, 0x11: 25000,
                 0x12: 50000, 0x13: 100000, 0x14: 200000, 0x15: 250000, 0x16: 500000, 0x17: 2, 0x18: 3, 0x19: 15,
                 0x1A: 40}
METER_NAMES = {0x00: "coin in", 0x01: "coin out", 0x02: "jackpot", 0x03: "hand paid cancelled credits",
               0x04: "cancelled credits", 0x05: "games played", 0x06: "games won", 0x07: "games lost",
               0x08: "coin acceptor credits", 0x09: "hopper paid credits", 0x0A: "coins to drop credits",
               0x0B: "bills credits", 0x0C: "current credits"}


class HostError(Exception):
    """No valid response from the EGM (after the retries)."""


def kermit(data: bytes, seed: int = 0) -> int:
    """CRC-16/Kermit, bit by bit (the EGM side uses a table: two ways to one number)."""
    crc = seed
    for byte in data:
        crc ^= byte
        for _ in range(8):
            crc = (crc >> 1) ^ 0x8408 if crc & 1 else crc >> 1
    return crc


def _crc_bytes(data: bytes) -> bytes:
    c = kermit(data)
    return bytes([c & 0xFF, c >> 8])


def _bcd_int(data: bytes) -> int:
    return int("".join(f"{b >> 4}{b & 15}" for b in data) or "0")


def _meter_size(code: int) -> int:
    """Long poll 2F's size of meter `code` (Table C-7): the ticket amounts in cents (0D-10) are 5 bytes."""
    return 5 if 0x0D <= code <= 0x10 else 4


def _to_bcd(value: int, size: int) -> bytes:
    text = str(value).rjust(2 * size, "0")
    return bytes((int(text[i]) << 4) | int(text[i + 1]) for i in range(0, 2 * size, 2))


_CMSPAR = getattr(termios, "CMSPAR", 0o10000000000)


class _Port:
    def __init__(self, port: str) -> None:
        self.serial: Any = None
        self.fd = -1
        self.nine_bit = False
        if "://" in port:
            import serial

            self.serial = serial.serial_for_url(port, baudrate=19200, timeout=0.01)
            return
        self.fd = os.open(port, os.O_RDWR | os.O_NOCTTY | os.O_NONBLOCK)
        attrs = termios.tcgetattr(self.fd)
        attrs[0] = 0
        attrs[1] = 0
        attrs[2] = termios.CS8 | termios.CREAD | termios.CLOCAL
        attrs[3] = 0
        attrs[4] = attrs[5] = termios.B19200
        attrs[6][termios.VMIN], attrs[6][termios.VTIME] = 0, 0
        pty = 136 <= os.major(os.fstat(self.fd).st_rdev) < 144
        if not pty:
            attrs[2] |= termios.PARENB | _CMSPAR  # space parity; the wake-up byte goes with mark parity
        termios.tcsetattr(self.fd, termios.TCSANOW, attrs)
        self.nine_bit = not pty and bool(termios.tcgetattr(self.fd)[2] & _CMSPAR)
        self.space = attrs

    def send(self, message: bytes) -> None:
        if self.serial is not None:
            self.serial.write(message)
            return
        termios.tcflush(self.fd, termios.TCIFLUSH)  # a late answer to the last poll is not this one's
        if self.nine_bit:
            mark = [*self.space[:2], self.space[2] | termios.PARODD, *self.space[3:]]
            termios.tcsetattr(self.fd, termios.TCSADRAIN, mark)
            os.write(self.fd, message[:1])
            termios.tcsetattr(self.fd, termios.TCSADRAIN, self.space)
            message = message[1:]
        if message:
            os.write(self.fd, message)

    def recv(self, n: int, deadline: float) -> bytes:
        out = b""
        while len(out) < n:
            left = deadline - time.monotonic()
            if left <= 0:
                break
            if self.serial is not None:
                self.serial.timeout = left
                out += self.serial.read(n - len(out))
                continue
            ready, _, _ = select.select([self.fd], [], [], left)
            if ready:
                try:
                    out += os.read(self.fd, n - len(out))
                except BlockingIOError:
                    pass
        return out

    def close(self) -> None:
        if self.serial is not None:
            self.serial.close()
        elif self.fd >= 0:
            os.close(self.fd)


# Fixed response lengths (address to CRC) of the read polls this host sends.
_FIXED = {0x0F: 28, **{c: 8 for c in range(0x10, 0x18)}, 0x18: 8, 0x19: 24, 0x1A: 8, 0x1B: 24, 0x1C: 36, 0x1F: 24,
          0x21: 6, 0x51: 6, 0x53: 26, 0x55: 6, 0x7E: 11, 0x94: 5, 0xA0: 12,
          0x1E: 28, 0x20: 8, **{c: 8 for c in BILL_METER_POLLS.values()}, 0x48: 10, 0x4C: 10, 0x4D: 35, 0x50: 14,
          0x57: 10, 0x58: 5, 0x7C: 5, 0x7D: 5}
_VARIABLE = {0x2F, 0x54, 0x56, 0x6F, 0x70, 0x71, 0x7B}


@dataclass
class HostStats:
    polls: int = 0
    retries: int = 0
    timeouts: int = 0
    bad_crc: int = 0


class SasHost:
    """One EGM's host. `timeout`: how long to wait for a response; `retries`: how often a poll is repeated."""

    def __init__(self, port: str, address: int = 1, timeout: float = 0.2, retries: int = 3) -> None:
        if not 1 <= address <= 127:
            raise ValueError(f"address must be 1..127, got {address}")
        self.port = _Port(port)
        self.address = address
        self.timeout = timeout
        self.retries = retries
        self.stats = HostStats()
        self._answered = b""  # the last poll answered: sent again as is, it would ask for the same answer again
        self.rte = False      # real-time event reporting asked for (long poll 0E): silence means no event

    def close(self) -> None:
        self.port.close()

    # ---------------------------------------------------------------------------------------- the wire

    def _exchange(self, message: bytes, read: Any) -> Any:
        if message == self._answered:
            self.sync()  # acknowledge the last answer first: this is a new poll, not a retry
        self._answered = b""
        for attempt in range(self.retries + 1):
            if attempt:
                self.stats.retries += 1
            self.stats.polls += 1
            self.port.send(message)
            try:
                answer = read(time.monotonic() + self.timeout)
                self._answered = message
                return answer
            except HostError as exc:
                if str(exc) in ("NACK", "busy"):  # the EGM answered: the same bytes again get the same answer
                    self._answered = message  # so a later try is acknowledged apart, as a new poll
                    raise HostError(f"{message.hex(' ')}: address {self.address} answered {exc}") from None
                if "CRC" in str(exc):
                    self.stats.bad_crc += 1
                else:
                    self.stats.timeouts += 1
        raise HostError(f"no valid response to {message.hex(' ')} from address {self.address} "
                        f"after {self.retries + 1} tries")

    def general_poll(self) -> tuple[int, bytes]:
        """The next exception: (code, real-time data); (0, b"") for none."""
        def read(deadline: float) -> tuple[int, bytes]:
            first = self.port.recv(1, deadline)
            if not first:
                if self.rte:
                    return 0, b""  # in real-time mode an EGM with nothing to report stays silent
                raise HostError("timeout")
            if first[0] == self.address:  # real-time event reporting: address FF code data CRC
                rest = self.port.recv(2, deadline)
                if len(rest) < 2 or rest[0] != 0xFF:
                    raise HostError("bad real-time event")
                # game started: wagered 2 BCD, coin in 4 BCD, wager type, progressive group; game ended: win
                # 4 BCD; legacy bonus: multiplier, multiplied win 4 BCD, tax status, bonus 4 BCD
                # bill accepted: country code, denomination code, count 4 BCD
                size = {0x7E: 8, 0x7F: 4, 0x7C: 10, 0x4F: 6}.get(rest[1], 0)
                tail = self.port.recv(size + 2, deadline)
                frame = first + rest + tail
                if len(tail) < size + 2 or _crc_bytes(frame[:-2]) != frame[-2:]:
                    raise HostError("bad CRC")
                return rest[1], frame[3:-2]
            return first[0], b""

        return self._exchange(bytes([0x80 | self.address]), read)

    def sync(self) -> None:
        """A general poll to address 0: no EGM answers; the host has moved on (implied acknowledgement)."""
        self.port.send(b"\x80")
        self._answered = b""

    def long_poll(self, command: int, data: bytes = b"", crc: bool | None = None, ack: bool = False) -> bytes:
        """Send a long poll and return the response's body (after address and command, without the CRC);
        `ack`: the answer is the address alone (b"" returned)."""
        message = bytes([self.address, command]) + data
        if crc or (crc is None and data):
            message += _crc_bytes(message)

        def read(deadline: float) -> bytes:
            if ack:
                got = self.port.recv(1, deadline)
                if not got:
                    raise HostError("timeout")
                if got[0] == self.address | 0x80:
                    raise HostError("NACK")
                if got[0] != self.address:
                    raise HostError(f"not an ACK: {got.hex()}")
                # an ACK is the address alone; the address then 00 (within the 5 ms between bytes) is "busy"
                if self.port.recv(1, time.monotonic() + 0.02) == b"\x00":
                    raise HostError("busy")
                return b""
            head = self.port.recv(2, deadline)
            if len(head) < 2:
                raise HostError("timeout")
            if head != bytes([self.address, command]):
                raise HostError(f"answer {head.hex()} is not to {command:02X}")
            if command in _VARIABLE:
                size = self.port.recv(1, deadline)
                if not size:
                    raise HostError("timeout")
                head += size
                rest = self.port.recv(size[0] + 2, deadline)
            else:
                rest = self.port.recv(_FIXED[command] - 2, deadline)
            frame = head + rest
            if len(frame) < 4 or _crc_bytes(frame[:-2]) != frame[-2:]:
                raise HostError("bad CRC" if len(rest) else "timeout")
            return frame[3:-2] if command in _VARIABLE else frame[2:-2]

        try:
            return self._exchange(message, read)
        except HostError:
            raise

    # ---------------------------------------------------------------------------------------- the polls

    def meters(self) -> dict[str, int]:
        """Long poll 1C: the basic meters."""
        b = self.long_poll(0x1C)
        names = ("coin_in", "coin_out", "total_drop", "jackpot", "games_played", "games_won", "slot_door_opened",
                 "power_resets")
        return {n: _bcd_int(b[i * 4:i * 4 + 4]) for i, n in enumerate(names)}

    def meters_10_15(self) -> dict[str, int]:
        b = self.long_poll(0x0F)
        names = ("cancelled_credits", "coin_in", "coin_out", "total_drop", "jackpot", "games_played")
        return {n: _bcd_int(b[i * 4:i * 4 + 4]) for i, n in enumerate(names)}

    def meter(self, command: int) -> int:
        """One of the single-meter polls 10..17."""
        return _bcd_int(self.long_poll(command))

    def totals(self) -> dict[str, int]:
        b = self.long_poll(0x19)
        names = ("coin_in", "coin_out", "total_drop", "jackpot", "games_played")
        return {n: _bcd_int(b[i * 4:i * 4 + 4]) for i, n in enumerate(names)}

    def games_since(self) -> tuple[int, int]:
        b = self.long_poll(0x18)
        return _bcd_int(b[:2]), _bcd_int(b[2:4])

    def credits(self) -> int:
        return _bcd_int(self.long_poll(0x1A))

    def handpay(self) -> dict[str, int]:
        b = self.long_poll(0x1B)
        return {"group": b[0], "level": b[1], "amount": _bcd_int(b[2:7]), "partial": _bcd_int(b[7:9]),
                "reset_id": b[9]}

    def machine_info(self) -> dict[str, Any]:
        return self._info(self.long_poll(0x1F))

    @staticmethod
    def _info(b: bytes) -> dict[str, Any]:
        return {"game_id": b[0:2].decode("ascii", "replace"), "additional_id": b[2:5].decode("ascii", "replace"),
                "denomination_code": b[5], "denomination_cents": DENOMINATIONS.get(b[5]), "max_bet": b[6],
                "progressive_group": b[7],
                "options": int.from_bytes(b[8:10], "little"),  # binary fields come least significant byte first
                "paytable": b[10:16].decode("ascii", "replace"),
                "base_percent": b[16:20].decode("ascii", "replace")}

    def game_config(self, game: int = 1) -> dict[str, Any]:
        b = self.long_poll(0x53, _to_bcd(game, 2))
        return {"game": _bcd_int(b[:2]), **self._info(b[2:])}

    def rom_signature(self, seed: int = 0) -> int:
        """Long poll 21. An EGM answers with the signature, or ACKs and answers a later general poll with it
        (section 6 of the protocol: it may take time to compute); both are read."""
        message = bytes([self.address, 0x21, seed & 0xFF, seed >> 8])
        message += _crc_bytes(message)

        def read(deadline: float) -> bytes:
            first = self.port.recv(1, deadline)
            if first != bytes([self.address]):
                raise HostError("timeout" if not first else f"not an answer to 21: {first.hex()}")
            rest = self.port.recv(5, min(deadline, time.monotonic() + 0.02))
            if not rest:
                return b""  # an ACK alone: the signature comes with a general poll
            frame = first + rest
            if rest[0] != 0x21 or len(frame) < 6 or _crc_bytes(frame[:4]) != frame[4:6]:
                raise HostError("bad CRC")
            return frame[2:4]

        body = self._exchange(message, read)
        deadline = time.monotonic() + 10 * self.timeout + 2.0
        while not body and time.monotonic() < deadline:
            self.sync()
            self.port.send(bytes([0x80 | self.address]))
            first = self.port.recv(1, time.monotonic() + self.timeout)
            if first == bytes([self.address]):
                frame = first + self.port.recv(5, time.monotonic() + self.timeout)
                if len(frame) == 6 and frame[1] == 0x21 and _crc_bytes(frame[:4]) == frame[4:6]:
                    body = frame[2:4]
            elif first:
                raise HostError(f"exception {first.hex()} came before the ROM signature: read exceptions first")
        if not body:
            raise HostError("no ROM signature after the ACK")
        self.sync()  # acknowledge the signature
        return body[0] | body[1] << 8

    def selected_meters(self, codes: list[int], game: int = 0) -> dict[int, int]:
        data = _to_bcd(game, 2) + bytes(codes)
        b = self.long_poll(0x2F, bytes([len(data)]) + data)
        out, i = {}, 2
        while i < len(b):
            size = _meter_size(b[i])
            if i + 1 + size > len(b):
                raise HostError(f"2F: meter {b[i]:02X} cut short")
            out[b[i]] = _bcd_int(b[i + 1:i + 1 + size])
            i += 1 + size
        return out

    def extended_meters(self, codes: list[int], game: int = 0) -> dict[int, int | None]:
        data = _to_bcd(game, 2) + b"".join(c.to_bytes(2, "little") for c in codes)
        b = self.long_poll(0x6F, bytes([len(data)]) + data)
        out: dict[int, int | None] = {}
        i = 2
        while i + 3 <= len(b):
            code, size = int.from_bytes(b[i:i + 2], "little"), b[i + 2]
            out[code] = _bcd_int(b[i + 3:i + 3 + size]) if size else None
            i += 3 + size
        return out

    def version(self) -> tuple[str, str]:
        b = self.long_poll(0x54)
        return b[:3].decode("ascii", "replace"), b[3:].decode("ascii", "replace")

    def games_implemented(self) -> int:
        return _bcd_int(self.long_poll(0x51))

    def selected_game(self) -> int:
        return _bcd_int(self.long_poll(0x55))

    def enabled_games(self) -> list[int]:
        b = self.long_poll(0x56)
        return [_bcd_int(b[1 + 2 * i:3 + 2 * i]) for i in range(b[0])]

    def enabled_features(self, game: int = 0) -> dict[str, Any]:
        b = self.long_poll(0xA0, _to_bcd(game, 2))
        return {"game": _bcd_int(b[:2]), "features": list(b[2:6]), "legacy_bonus": bool(b[2] & 0x04),
                "extended_meters": bool(b[3] & 0x08)}

    def date_time(self) -> dt.datetime:
        """Long poll 7E: MMDDYYYY HHMMSS in BCD, each field read at its own place."""
        b = self.long_poll(0x7E)
        try:
            return dt.datetime(_bcd_int(b[2:4]), _bcd_int(b[0:1]), _bcd_int(b[1:2]), _bcd_int(b[4:5]),
                               _bcd_int(b[5:6]), _bcd_int(b[6:7]))
        except ValueError:
            raise HostError(f"7E: not a date and time: {b[:7].hex()}") from None

    def set_date_time(self, when: dt.datetime) -> None:
        self.long_poll(0x7F, bytes.fromhex(when.strftime("%m%d%Y%H%M%S")), ack=True)

    def shutdown(self) -> None:
        self.long_poll(0x01, crc=True, ack=True)

    def startup(self) -> None:
        self.long_poll(0x02, crc=True, ack=True)

    def sound(self, on: bool) -> None:
        self.long_poll(0x04 if on else 0x03, crc=True, ack=True)

    def real_time_events(self, on: bool) -> None:
        self.long_poll(0x0E, bytes([1 if on else 0]), ack=True)
        self.rte = on

    def legacy_bonus(self, credits: int, tax: int = 0) -> None:
        self.long_poll(0x8A, _to_bcd(credits, 4) + bytes([tax]), ack=True)

    def handpay_reset(self) -> int:
        """Long poll 94: 0 reset, 1 unable to reset, 2 not in a hand pay."""
        return self.long_poll(0x94, crc=True)[0]

    # ---------------------------------------------------------------------------------------- notes and tickets

    def bill_meters(self) -> dict[int, int]:
        """Long poll 1E: the notes accepted, by value in dollars ($1, $5, $10, $20, $50, $100)."""
        b = self.long_poll(0x1E)
        return {d: _bcd_int(b[i * 4:i * 4 + 4]) for i, d in enumerate((1, 5, 10, 20, 50, 100))}

    def bill_value(self) -> int:
        """Long poll 20: the notes' total value in dollars."""
        return _bcd_int(self.long_poll(0x20))

    def bills_in(self, dollars: int) -> int:
        """Long polls 31-45: the count of one note."""
        return _bcd_int(self.long_poll(BILL_METER_POLLS[dollars]))

    def last_bill(self) -> dict[str, int]:
        """Long poll 48: the last note accepted: country code, denomination code (Table C-6), its count."""
        b = self.long_poll(0x48)
        return {"country": _bcd_int(b[0:1]), "denomination": _bcd_int(b[1:2]), "count": _bcd_int(b[2:6])}

    def enable_bills(self, on: bool = True) -> None:
        """Long polls 06 (enable the bill acceptor) and 07 (disable it)."""
        self.long_poll(0x06 if on else 0x07, crc=True, ack=True)

    def configure_bills(self, dollars: list[int], keep_enabled: bool = True) -> None:
        """Long poll 08: the notes the acceptor takes, and whether it stays enabled after each."""
        bits = sum(1 << _BILL_BITS.index(d) for d in dollars)
        self.long_poll(0x08, bits.to_bytes(4, "little") + bytes([1 if keep_enabled else 0]), ack=True)

    def set_validation_id(self, machine: int, sequence: int) -> tuple[int, int]:
        """Long poll 4C: set (or with machine 0, read) the secure enhanced validation id and sequence number."""
        b = self.long_poll(0x4C, machine.to_bytes(3, "little") + sequence.to_bytes(3, "little"))
        return int.from_bytes(b[:3], "little"), int.from_bytes(b[3:6], "little")

    def validation_info(self, function: int = 0) -> dict[str, Any] | None:
        """Long poll 4D: 00 the next validation not yet read (read once this host moves on), FF the same without
        reading it, 01-1F the buffer's entry at that index; None where there is none (all zeros)."""
        b = self.long_poll(0x4D, bytes([function]))
        if not any(b):
            return None
        system = _bcd_int(b[24:25])
        try:
            when = dt.datetime(_bcd_int(b[4:6]), _bcd_int(b[2:3]), _bcd_int(b[3:4]), _bcd_int(b[6:7]),
                               _bcd_int(b[7:8]), _bcd_int(b[8:9]))
        except ValueError:
            raise HostError(f"4D: not a date and time: {b[2:9].hex()}") from None
        return {"type": b[0], "index": b[1], "when": when,
                "validation": f"{system:02d}{_bcd_int(b[9:17]):016d}", "cents": _bcd_int(b[17:22]),
                "ticket": int.from_bytes(b[22:24], "little"), "system": system, "expires": _bcd_int(b[25:29]),
                "pool": int.from_bytes(b[29:31], "little")}

    def validation_meters(self, kind: int = 0x00) -> tuple[int, int]:
        """Long poll 50: (count, cents) of one validation type (00 cashable tickets out, 80 cashable redeemed ...)."""
        b = self.long_poll(0x50, bytes([kind]))
        return _bcd_int(b[1:5]), _bcd_int(b[5:10])

    def pending_cashout(self) -> tuple[int, int]:
        """Long poll 57: (00 cashable, 01 restricted or 80 nothing waiting, the amount in cents)."""
        b = self.long_poll(0x57)
        return b[0], _bcd_int(b[1:6])

    def receive_validation(self, system: int, number: int) -> int:
        """Long poll 58: a validation number for the pending cash out (system 0: denied); 00 taken, 80 not in a
        cash out, 81 refused."""
        return self.long_poll(0x58, _to_bcd(system, 1) + _to_bcd(number, 8))[0]

    def ticket_validation_data(self) -> str | None:
        """Long poll 70: the 18 digits of the ticket in escrow, None when there is none."""
        b = self.long_poll(0x70)
        if not b or b[0] == 0xFF:
            return None
        return b[7:16].hex()

    def redeem_ticket(self, code: int, cents: int, validation: str, expires: str | None = None,
                      pool: int = 0) -> dict[str, Any]:
        """Long poll 71: authorise (code 00, 01 restricted with `expires` MMDDYYYY or 0000NNNN days and `pool`,
        02) or refuse (80-93) the ticket in escrow; the EGM's status, amount and validation."""
        data = bytes([code]) + _to_bcd(cents, 5) + b"\x00" + bytes.fromhex(validation)
        if expires is not None:
            data += _to_bcd(int(expires), 4) + pool.to_bytes(2, "little")
        return self._redemption(self.long_poll(0x71, bytes([len(data)]) + data))

    def ticket_status(self) -> dict[str, Any]:
        """Long poll 71 with transfer code FF: how the current redemption stands."""
        return self._redemption(self.long_poll(0x71, b"\x01\xff"))

    @staticmethod
    def _redemption(b: bytes) -> dict[str, Any]:
        if len(b) < 16:
            return {"status": b[0] if b else None, "cents": 0, "validation": None}
        return {"status": b[0], "cents": _bcd_int(b[1:6]), "validation": b[7:16].hex()}

    def extended_validation_status(self, mask: int = 0, states: int = 0, cashable: int = 0,
                                   restricted: int = 0) -> dict[str, int]:
        """Long poll 7B: change the masked status bits and the expirations in days (0: unchanged); what is now."""
        data = mask.to_bytes(2, "little") + states.to_bytes(2, "little") + _to_bcd(cashable, 2) + _to_bcd(restricted, 2)
        b = self.long_poll(0x7B, bytes([len(data)]) + data)
        return {"asset": int.from_bytes(b[0:4], "little"), "status": int.from_bytes(b[4:6], "little"),
                "cashable": _bcd_int(b[6:8]), "restricted": _bcd_int(b[8:10])}

    def set_extended_ticket_data(self, elements: dict[int, str]) -> int:
        """Long poll 7C: ticket texts by data code (00 location, 01 and 02 address, 10 restricted, 20 debit title);
        01 taken, 00 refused."""
        data = b"".join(bytes([code, len(text)]) + text.encode("ascii") for code, text in elements.items())
        return self.long_poll(0x7C, bytes([len(data)]) + data)[0]

    def set_ticket_data(self, host_id: int, expires: int | None = None, location: str = "", address1: str = "",
                        address2: str = "") -> int:
        """Long poll 7D: host id, expiration in days, location and address lines ("": unchanged); 01 taken."""
        data = host_id.to_bytes(2, "little")
        if expires is not None:
            data += bytes([expires])
            for text in (location, address1, address2):
                data += bytes([len(text)]) + text.encode("ascii")
        return self.long_poll(0x7D, bytes([len(data)]) + data)[0]

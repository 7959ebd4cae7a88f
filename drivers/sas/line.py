"""The EGM's end of a SAS line: opens the port, frames the host's polls, answers them at once, and keeps SAS's implied acknowledgement and chirping.

One thread reads the line and answers from the responder's snapshot of the cabinet (no waiting on the
journal), so the first byte of a response leaves within a millisecond or two of the poll's last byte.

Implied acknowledgement: the host acknowledges a response by its next poll. The same poll again, with
nothing between, means the host missed the response: it gets the same bytes again (an exception stays
queued, a poll that changed something does not change it twice). Any other poll, to this EGM or another,
acknowledges it. A poll with a bad CRC is not answered (the host repeats it).

Chirping (loop break indication): while no address byte has come for `chirp_after` seconds (5 in SAS), the
EGM sends its own address every `chirp_every` seconds (200 ms) with the wake-up bit set where the line carries
it, so the host, or a technician, sees it is alive and which address it has.

Deliberately not done: SAS's resynchronisation after start-up (ignoring polls to itself until another EGM
or address 0 is polled), which would leave a host that polls only this EGM unanswered for ever.
"""

from __future__ import annotations

import logging
import os
import select
import termios
import threading
import time
from dataclasses import dataclass
from typing import Callable, Protocol

from drivers.sas.framing import CrcError, Framer, GeneralPoll, LongPoll, Message, Unknown, unmark

__all__ = ["Responder", "SasLine", "open_line", "LineStats", "CMSPAR"]

log = logging.getLogger("croupier.sas.line")

CMSPAR = getattr(termios, "CMSPAR", 0o10000000000)  # Linux: stick parity (mark/space), absent from some Pythons
_PTY_MAJORS = range(136, 144)  # Linux Unix98 pty slaves


class Responder(Protocol):
    def respond(self, message: GeneralPoll | LongPoll) -> bytes | None: ...

    def acknowledged(self, message: GeneralPoll | LongPoll, response: bytes) -> None: ...


class Transport(Protocol):
    """The line as SasLine uses it: open_line's port, or a test's stand-in."""

    def read(self, timeout: float | None) -> bytes: ...

    def write(self, data: bytes, wake: bool = False) -> None: ...

    def close(self) -> None: ...


@dataclass
class LineStats:
    polls: int = 0
    repeats: int = 0
    crc_errors: int = 0
    unknown: int = 0
    chirps: int = 0


class _Fd:
    """A serial device or pseudo-terminal by its file descriptor, in raw mode at 19,200 baud."""

    def __init__(self, fd: int, owned: bool, marked: bool) -> None:
        self.fd, self.owned, self.marked = fd, owned, marked

    def read(self, timeout: float | None) -> bytes:
        ready, _, _ = select.select([self.fd], [], [], timeout)
        if not ready:
            return b""
        try:
            return os.read(self.fd, 4096)
        except OSError:  # the other end went away (a pty whose host closed): quiet, not fatal
            time.sleep(timeout or 0.01)
            return b""

    def write(self, data: bytes, wake: bool = False) -> None:
        if wake and self.marked:  # one byte with the ninth bit set: mark parity for it, then space again
            attrs = termios.tcgetattr(self.fd)
            mark = list(attrs)
            mark[2] |= termios.PARODD
            termios.tcsetattr(self.fd, termios.TCSADRAIN, mark)
            os.write(self.fd, data)
            termios.tcdrain(self.fd)
            termios.tcsetattr(self.fd, termios.TCSADRAIN, attrs)
            return
        view = memoryview(data)
        while view:
            view = view[os.write(self.fd, view):]

    def close(self) -> None:
        if self.owned:
            os.close(self.fd)


class _Url:
    """A pyserial URL (socket://, rfc2217://): no wake-up bit, framing by protocol knowledge."""

    marked = False

    def __init__(self, url: str) -> None:
        import serial

        self.port = serial.serial_for_url(url, baudrate=19200, timeout=0.005)

    def read(self, timeout: float | None) -> bytes:
        self.port.timeout = 0.05 if timeout is None else max(timeout, 0.0005)
        return self.port.read(4096)

    def write(self, data: bytes, wake: bool = False) -> None:
        self.port.write(data)

    def close(self) -> None:
        self.port.close()


def _configure(fd: int, wakeup: str) -> bool:
    """Raw 19,200 8-bit; where the device carries it, space parity with parity marking, so a byte with
    the wake-up bit arrives as 0xFF 0x00 byte. True when the line carries the wake-up bit."""
    attrs = termios.tcgetattr(fd)
    iflag, oflag, cflag, lflag = attrs[0], attrs[1], attrs[2], attrs[3]
    iflag &= ~(termios.IGNBRK | termios.BRKINT | termios.ISTRIP | termios.INLCR | termios.IGNCR | termios.ICRNL
               | termios.IXON | termios.IXOFF | termios.IGNPAR | termios.PARMRK | termios.INPCK)
    oflag &= ~termios.OPOST
    lflag &= ~(termios.ECHO | termios.ECHONL | termios.ICANON | termios.ISIG | termios.IEXTEN)
    cflag &= ~(termios.CSIZE | termios.PARENB | termios.PARODD | CMSPAR | termios.CSTOPB)
    cflag |= termios.CS8 | termios.CREAD | termios.CLOCAL
    dev = os.fstat(fd).st_rdev
    is_pty = os.major(dev) in _PTY_MAJORS or (os.major(dev), os.minor(dev)) == (5, 2)  # a slave, or /dev/ptmx
    marked = wakeup == "parity" or (wakeup == "auto" and not is_pty)
    if marked:
        cflag |= termios.PARENB | CMSPAR  # space parity: host bytes with the wake-up bit are parity errors
        iflag |= termios.INPCK | termios.PARMRK
    attrs[0], attrs[1], attrs[2], attrs[3] = iflag, oflag, cflag, lflag
    attrs[4] = attrs[5] = termios.B19200
    attrs[6][termios.VMIN], attrs[6][termios.VTIME] = 0, 0
    try:
        termios.tcsetattr(fd, termios.TCSANOW, attrs)
        took = not marked or bool(termios.tcgetattr(fd)[2] & CMSPAR)
    except termios.error:  # a driver that refuses stick parity outright (a pty says EINVAL)
        took = False
    if not took:
        log.warning("this serial device does not carry the wake-up bit (no mark/space parity): framing by "
                    "protocol knowledge and timing")
        attrs[0] &= ~(termios.INPCK | termios.PARMRK)
        attrs[2] &= ~(termios.PARENB | CMSPAR)
        termios.tcsetattr(fd, termios.TCSANOW, attrs)
        return False
    return marked


def open_line(port: str | int, wakeup: str = "auto") -> Transport:
    """A device path (or /dev/serial/by-id link), an open file descriptor (tests, the pty's far end) or a
    pyserial URL. `wakeup`: "auto" (parity marking on serial devices, timing on ptys and URLs), "parity",
    or "timing"."""
    if isinstance(port, int):
        return _Fd(port, False, _configure(port, wakeup))
    if "://" in port:
        return _Url(port)
    fd = os.open(port, os.O_RDWR | os.O_NOCTTY | os.O_NONBLOCK)
    try:
        return _Fd(fd, True, _configure(fd, wakeup))
    except Exception:
        os.close(fd)
        raise


class SasLine:
    """One EGM address on one SAS line. `start()` runs the reader thread; `close()` stops it."""

    def __init__(self, port: str | int | Transport, address: int, responder: Responder, *, wakeup: str = "auto",
                 gap: float = 0.01, chirp_after: float = 5.0, chirp_every: float = 0.2,
                 clock: Callable[[], float] = time.monotonic, on_first_byte: Callable[[float], None] | None = None,
                 realtime: int | None = None) -> None:
        if not 1 <= address <= 127:
            raise ValueError(f"SAS address must be 1..127, got {address}")
        self.transport = open_line(port, wakeup) if isinstance(port, (str, int)) else port
        self.address = address
        self.responder = responder
        self.framer = Framer([address], gap)
        self.chirp_after, self.chirp_every = chirp_after, chirp_every
        self.clock = clock
        self.stats = LineStats()
        self.on_first_byte = on_first_byte
        self.realtime = realtime  # SCHED_FIFO priority of the line's thread (1..99; needs CAP_SYS_NICE)
        self._pending: tuple[GeneralPoll | LongPoll, bytes] | None = None   # the last response, until the host's next poll
        self._last_poll = clock()
        self._last_chirp = 0.0
        self._marks = bytearray()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.chirping = False

    @property
    def marked(self) -> bool:
        return bool(getattr(self.transport, "marked", False))

    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, name=f"sas-{self.address}", daemon=True)
        self._thread.start()

    def close(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=2)
        self.transport.close()

    # ------------------------------------------------------------------------------------------ the loop

    def _run(self) -> None:
        if self.realtime is not None:  # a loaded machine must not delay the answer past SAS's 20 ms
            try:
                os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(self.realtime))
            except (OSError, AttributeError) as exc:
                log.warning("SAS line: real-time priority %s refused (%s): normal scheduling", self.realtime, exc)
        while not self._stop.is_set():
            try:
                self._once()
            except Exception:  # noqa: BLE001 - a bad poll must never stop the line
                log.exception("SAS line %d", self.address)

    def _once(self) -> None:
        now = self.clock()
        timeout = self.framer.gap if self.framer.partial else self._chirp_wait(now)
        data = self.transport.read(timeout)
        now = self.clock()
        if data:
            items = unmark(data, self._marks) if self.marked else [(b, None) for b in data]
            self._handle(self.framer.feed(items, now), now)
        elif self.framer.partial and self.framer.last is not None and now - self.framer.last > self.framer.gap:
            self._handle(self.framer.expire(now), now)
        self._chirp(now)

    def _chirp_wait(self, now: float) -> float:
        quiet = now - self._last_poll
        if quiet < self.chirp_after:
            return min(0.05, self.chirp_after - quiet)
        return max(0.0005, min(0.05, self._last_chirp + self.chirp_every - now))

    def _chirp(self, now: float) -> None:
        if self.chirp_after <= 0 or now - self._last_poll < self.chirp_after:
            self.chirping = False
            return
        if now - self._last_chirp >= self.chirp_every:
            if not self.chirping:
                log.warning("SAS address %d: no poll for %.0f s, chirping", self.address, self.chirp_after)
            self.chirping = True
            self._last_chirp = now
            self.stats.chirps += 1
            self.transport.write(bytes([self.address]), wake=True)

    def _handle(self, messages: list[Message], now: float) -> None:
        for m in messages:
            self._last_poll = now  # any address byte on the line: the loop is not broken, no chirping
            self.chirping = False
            if m.address != self.address:
                self._ack()  # a poll to another EGM (or a broadcast): the host has moved on
                if m.address == 0 and isinstance(m, LongPoll) and hasattr(self.responder, "broadcast"):
                    self.responder.broadcast(m)  # to every EGM on the line, answered by none
                continue
            if isinstance(m, CrcError):
                self.stats.crc_errors += 1
                continue  # not answered: the host repeats it
            if isinstance(m, Unknown):
                self.stats.unknown += 1
                continue  # ignored, as the protocol asks
            self.stats.polls += 1
            if self._pending is not None and self._pending[0].raw == m.raw:
                self.stats.repeats += 1
                self._send(self._pending[1])  # the host missed it: the same bytes again
                continue
            self._ack()
            response = self.responder.respond(m)
            if response:
                self._send(response)
                self._pending = (m, response)

    def _send(self, response: bytes) -> None:
        if self.on_first_byte is not None:
            self.on_first_byte(self.clock())
        self.transport.write(response)

    def _ack(self) -> None:
        if self._pending is not None:
            message, response = self._pending
            self._pending = None
            self.responder.acknowledged(message, response)

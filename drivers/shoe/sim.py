"""Simulated card shoe and shuffler: speaks the real wire protocol over a pseudo-terminal or TCP, with fault switches.

In-process use (the runtime's `--sim` mode and the tests):

    sim = ShoeSim(cards)                  # the card order comes from the caller (controller.rng builds it)
    url = sim.open_pty("/tmp/shoe0")      # or sim.listen_tcp(0) -> "socket://127.0.0.1:PORT"
    sim.start()
    ShoeDriver(url, on_event).start()     # the real host driver, over the real pty
    sim.deal()                            # the dealer draws the next card
    sim.faults.drop = 2; sim.unplug(0.2)  # fault switches (OctoPrint's virtual printer is the model)

As a separate process, `croupier shoe-sim` serves the same device and reads the control commands of
`ShoeSim.command` (one per line: `deal`, `drop 3`, `unplug 0.5`, `help`, ...) from stdin or a TCP control port.
Nothing here draws random numbers: shuffles use the card order handed in (`new_order`), faults are deterministic.
"""

from __future__ import annotations

import heapq
import os
import select
import threading
import time
from dataclasses import asdict
from typing import Callable, Sequence

from controller.cards import JOKER_INDEX, Card, Composition, from_index
from drivers.simport import PtyEnd, TcpEnd

from .device import DeviceLink, DeviceTiming
from .protocol import (
    MAX_PAYLOAD, CardDrawn, DeckCheck, DeviceKind, Heartbeat, Identify, Lock, Message, PROTOCOL_VERSION,
    RequestStatus, ResetCounters, SetTime, Shuffle, ShoeState, StateFlags,
)
from .simcontrol import COMMANDS_HELP, Faults, SimError, command

__all__ = ["ShoeSim", "Faults", "SimError", "COMMANDS_HELP"]

FIRMWARE = (0, 1, 0)
_UNRELIABLE = frozenset({"Ack", "Nak", "Identify", "Heartbeat"})
_MANUAL = StateFlags.LID_OPEN | StateFlags.JAM | StateFlags.LOCKED
_TICK = 0.005  # seconds between timer checks of the device thread


class ShoeSim:
    """A simulated shoe and shuffler device. Thread-safe: every public method may be called from any thread."""

    def __init__(self, cards: Sequence[Card] = (), *, decks: int = 1, jokers: int = 0, shoe_id: int = 1,
                 serial: str = "SIM-0001", cut: int | None = None, low: int = 10, boot: int = 1,
                 timing: DeviceTiming | None = None, new_order: Callable[[int], Sequence[Card]] | None = None,
                 write_hook: Callable[[str, bytes, float], None] | None = None) -> None:
        self._lock = threading.RLock()
        self._changed = threading.Condition(self._lock)
        self.faults = Faults()
        self.timing = timing or DeviceTiming()
        self.shoe_id, self.serial, self.boot = shoe_id, serial, boot
        self.decks, self.jokers, self.cut, self.low = decks, jokers, cut, low
        self.new_order = new_order  # decks -> the next shoe's card order, for `shuffle` without cards
        self.write_hook = write_hook  # (kind, bytes, time the write began) after every write: the bench's stopwatch
        self._cards: list[Card] = list(cards)
        self._pos = 0
        self.draws = 0
        self.last_card: Card | None = None
        self.shuffles = 0
        self.clock_offset_ms: int | None = None
        self._manual = StateFlags(0)
        self._reported: StateFlags | None = None
        self._started_at = time.monotonic()
        self.link = self._new_link()
        self.link.identify()
        self.counters = dict.fromkeys(("dropped", "corrupted", "duplicated", "delayed", "acks_dropped",
                                       "garbage_bytes", "unplugs", "resets", "bytes_out", "bytes_lost"), 0)
        self._delayed: list[tuple[float, int, bytes, str]] = []
        self._delay_seq = 0
        self._transport: PtyEnd | TcpEnd | None = None
        self._plug: Callable[[], PtyEnd | TcpEnd] | None = None
        self._replug_at: float | None = None
        self._thread: threading.Thread | None = None
        self._stop = threading.Event()
        self._wake_r, self._wake_w = os.pipe()

    # ---- transports ------------------------------------------------------------------------------------

    def open_pty(self, link: str | None = None) -> str:
        """Serve on a new pseudo-terminal; returns the path the host opens (`link`, a symlink kept up to date, if
        given, else the pty itself, whose name changes on every replug)."""
        with self._lock:
            self._plug = lambda: PtyEnd(link)
            self._transport = self._plug()
            return self._transport.url

    def listen_tcp(self, port: int = 0, host: str = "127.0.0.1") -> str:
        """Serve on a loopback TCP port (0: any free port); returns the pyserial URL, socket://HOST:PORT."""
        with self._lock:
            first = TcpEnd(port, host)
            port = first.port
            self._plug = lambda: TcpEnd(port, host)
            self._transport = first
            return first.url

    @property
    def url(self) -> str | None:
        with self._lock:
            return self._transport.url if self._transport else None

    @property
    def plugged(self) -> bool:
        with self._lock:
            return self._transport is not None

    def start(self) -> ShoeSim:
        if self._thread is None:
            self._thread = threading.Thread(target=self._run, name="shoe-sim", daemon=True)
            self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        self._wake()
        if self._thread is not None:
            self._thread.join(5)
            self._thread = None
        with self._lock:
            if self._transport:
                self._transport.close()
                self._transport = None
            self._plug = None
        for fd in (self._wake_r, self._wake_w):
            try:
                os.close(fd)
            except OSError:
                pass

    def __enter__(self) -> ShoeSim:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # ---- the dealer and the shuffler -----------------------------------------------------------------------

    @property
    def remaining(self) -> int:
        with self._lock:
            return len(self._cards) - self._pos

    def upcoming(self, n: int) -> list[Card]:
        """The next `n` cards (fewer near the end): what a simulated dealer sees as each card comes out."""
        with self._lock:
            return self._cards[self._pos:self._pos + n]

    def deal(self) -> CardDrawn:
        """The dealer draws the next card: the shoe reads it and sends CARD DRAWN. Refused if locked, jammed, empty."""
        with self._lock:
            flags = self._flags()
            if flags & StateFlags.LOCKED:
                raise SimError("the shoe is locked: no card can be drawn")
            if flags & StateFlags.JAM:
                raise SimError("the shoe is jammed: clear it first")
            if self._pos >= len(self._cards):
                raise SimError("the shoe is empty")
            card = self._cards[self._pos]
            self._pos += 1
            self.draws += 1
            self.last_card = card
            msg = CardDrawn(self.shoe_id, self.draws, card)
            self._send(msg)
            self._report_state()
            self._flush()
            return msg

    def load(self, cards: Sequence[Card], decks: int | None = None) -> None:
        """Load a scripted shoe (no shuffle, no deck check)."""
        with self._lock:
            self._cards, self._pos = list(cards), 0
            if decks:
                self.decks = decks
            self._report_state()
            self._flush()

    def resume(self, cards: Sequence[Card], position: int, draws: int) -> None:
        """Load a shoe already dealt up to `position` with the draw counter at `draws`: a simulated table
        restarting from its journal continues the same shoe (no shuffle, no deck check)."""
        with self._lock:
            if not 0 <= position <= len(cards):
                raise SimError(f"cannot resume at card {position} of a {len(cards)}-card shoe")
            self._cards, self._pos, self.draws = list(cards), position, draws
            self._report_state()
            self._flush()

    def shuffle(self, cards: Sequence[Card] | None = None, decks: int | None = None) -> DeckCheck:
        """Shuffle a new shoe: SHUFFLE started, DECK CHECK, SHUFFLE finished. `cards` is the new order (default:
        `new_order(decks)`); cards named in `faults.missing` are taken out first, so the deck check reports them."""
        with self._lock:
            decks = decks or self.decks
            if cards is None:
                if self.new_order is None:
                    raise SimError("this simulator has no card source for a shuffle: give the cards")
                cards = self.new_order(decks)
            cards = list(cards)
            for card in self.faults.missing:
                if card in cards:
                    cards.remove(card)
            self.faults.missing = []
            self.shuffles += 1
            self.decks = decks
            self._send(Shuffle(self.shoe_id, True, decks, self.shuffles))
            check = self._deck_check(cards, decks)
            self._send(check)
            self._cards, self._pos = cards, 0
            self._send(Shuffle(self.shoe_id, False, decks, self.shuffles))
            self._report_state()
            self._flush()
            return check

    def _deck_check(self, cards: list[Card], decks: int) -> DeckCheck:
        want = Composition.of(decks, self.jokers).counts
        have = Composition.from_cards(cards).counts
        missing = [from_index(i) for i in range(JOKER_INDEX + 1) for _ in range(max(0, want[i] - have[i]))]
        extra = [from_index(i) for i in range(JOKER_INDEX + 1) for _ in range(max(0, have[i] - want[i]))]
        room = MAX_PAYLOAD - 5
        truncated = len(missing) + len(extra) > room
        if truncated:
            missing = missing[:room]
            extra = extra[:room - len(missing)]
        return DeckCheck(self.shoe_id, min(decks, 255), tuple(missing), tuple(extra), truncated)

    def set_lid(self, open_: bool) -> None:
        self._set_manual(StateFlags.LID_OPEN, open_)

    def set_jam(self, jammed: bool) -> None:
        self._set_manual(StateFlags.JAM, jammed)

    def _set_manual(self, flag: StateFlags, on: bool) -> None:
        with self._lock:
            self._manual = (self._manual | flag) if on else (self._manual & ~flag)
            self._report_state()
            self._flush()

    # ---- faults --------------------------------------------------------------------------------------------

    def unplug(self, seconds: float | None = 0.5) -> None:
        """Close the device's side of the line (the host sees the port vanish); reopen after `seconds` (None or 0:
        stay unplugged until `replug()`). The device keeps running: what it sends meanwhile is lost and resent."""
        with self._lock:
            if self._transport is None:
                return
            self.counters["unplugs"] += 1
            self._transport.close()
            self._transport = None
            self._replug_at = time.monotonic() + seconds if seconds else None
        self._wake()

    def replug(self) -> str:
        with self._lock:
            if self._plug is None:
                raise SimError("no transport to replug: call open_pty or listen_tcp first")
            if self._transport is None:
                self._transport = self._plug()
            self._replug_at = None
            url = self._transport.url
        self._wake()
        return url

    def reset(self, keep_counter: bool = True) -> None:
        """Power-cycle: unacknowledged messages are lost, the boot counter goes up, the draw counter and last card
        (kept in flash) survive unless `keep_counter` is False (a factory reset: they start again from 0), the lock
        is released. The device announces itself with IDENTIFY."""
        with self._lock:
            self.counters["resets"] += 1
            self.boot += 1
            if not keep_counter:
                self.draws, self.last_card = 0, None
            self._manual &= ~StateFlags.LOCKED
            self._reported = None
            self._started_at = time.monotonic()
            self.link = self._new_link()
            self.link.identify()
            self._flush()

    def swap(self, serial: str, draws: int = 0) -> None:
        """Another shoe takes this one's place on the line: a new serial, its own draw counter at `draws`, no
        last card; it announces itself with IDENTIFY (the cards it holds are this simulator's, as loaded)."""
        with self._lock:
            self.serial, self.draws, self.last_card = serial, draws, None
            self.reset()

    def inject(self, data: bytes) -> None:
        """Send raw bytes (line noise) to the host."""
        with self._lock:
            self.counters["garbage_bytes"] += len(data)
            self._write("garbage", data)

    # ---- waiting (tests and the bench) -----------------------------------------------------------------------

    def wait_idle(self, timeout: float) -> bool:
        """Wait until every reliable message has been acknowledged by the host."""
        with self._changed:
            return self._changed.wait_for(lambda: self.link.idle, timeout)

    def wait_until(self, predicate: Callable[[ShoeSim], bool], timeout: float) -> bool:
        with self._changed:
            return self._changed.wait_for(lambda: predicate(self), timeout)

    # ---- control commands ----------------------------------------------------------------------------------

    def command(self, line: str) -> str:
        """Carry out one control command (see COMMANDS_HELP); returns 'ok ...' or 'error: ...'."""
        return command(self, line)

    def status(self) -> dict:
        with self._lock:
            faults = asdict(self.faults)
            faults["missing"] = [str(c) for c in self.faults.missing]
            faults["ignore_acks"] = self.link.ignore_acks
            return {"url": self._transport.url if self._transport else None, "shoe_id": self.shoe_id,
                    "serial": self.serial, "boot": self.boot, "draws": self.draws,
                    "last_card": str(self.last_card) if self.last_card else None,
                    "remaining": len(self._cards) - self._pos, "decks": self.decks, "shuffles": self.shuffles,
                    "flags": [f.name for f in StateFlags if f & self._flags()], "faults": faults,
                    "counters": dict(self.counters), "link": dict(self.link.counters),
                    "unacknowledged": len(self.link.queue) + (0 if self.link.idle else 1)}

    # ---- device internals ------------------------------------------------------------------------------------

    def _new_link(self) -> DeviceLink:
        return DeviceLink(self._identity, self._heartbeat, self.timing)

    def _identity(self, tx_base: int) -> Identify:
        kind = DeviceKind.SHOE | DeviceKind.SHUFFLER
        return Identify(kind, PROTOCOL_VERSION, FIRMWARE, self.shoe_id, tx_base, self.boot, self.draws,
                        self.last_card, self.serial)

    def _heartbeat(self) -> Heartbeat:
        return Heartbeat(int((time.monotonic() - self._started_at) * 1000) & 0xFFFFFFFF, self._flags())

    def _flags(self) -> StateFlags:
        flags = self._manual
        remaining = len(self._cards) - self._pos
        if self._cards and remaining <= self.low:
            flags |= StateFlags.CARDS_LOW
        if self.cut is not None and self._cards and self._pos >= self.cut:
            flags |= StateFlags.CUT_CARD
        if remaining <= 0:
            flags |= StateFlags.EMPTY
        return flags

    def _report_state(self, always: bool = False) -> None:
        flags = self._flags()
        if always or flags != self._reported:
            self._reported = flags
            self._send(ShoeState(self.shoe_id, flags, self.draws))

    def _send(self, message: Message) -> None:
        self.link.send(message, time.monotonic())

    def _execute(self, command: Message) -> None:
        if isinstance(command, Lock):
            self._manual = (self._manual | StateFlags.LOCKED) if command.locked else (self._manual & ~StateFlags.LOCKED)
            self._report_state(always=True)
        elif isinstance(command, ResetCounters):
            self.draws, self.last_card = 0, None
            self._report_state(always=True)
        elif isinstance(command, RequestStatus):
            self._report_state(always=True)
        elif isinstance(command, SetTime):
            self.clock_offset_ms = command.unix_ms - int(time.monotonic() * 1000)

    def _flush(self) -> None:
        """Send what the link produced, through the fault switches."""
        now = time.monotonic()
        f = self.faults
        for frame, kind in self.link.take_frames():
            if kind == "Heartbeat" and not f.heartbeat:
                continue
            if kind == "Ack" and f.drop_acks > 0:
                f.drop_acks -= 1
                self.counters["acks_dropped"] += 1
                continue
            if kind not in _UNRELIABLE:
                if f.drop > 0:
                    f.drop -= 1
                    self.counters["dropped"] += 1
                    continue
                if f.corrupt > 0:
                    f.corrupt -= 1
                    self.counters["corrupted"] += 1
                    corrupted = bytearray(frame)
                    corrupted[len(corrupted) // 2] ^= 0x01
                    frame = bytes(corrupted)
                if f.delay_count > 0:
                    f.delay_count -= 1
                    self.counters["delayed"] += 1
                    self._delay_seq += 1
                    heapq.heappush(self._delayed, (now + f.delay, self._delay_seq, frame, kind))
                    continue
                if f.duplicate > 0:
                    f.duplicate -= 1
                    self.counters["duplicated"] += 1
                    self._write(kind, frame)
            self._write(kind, frame)
        while self._delayed and self._delayed[0][0] <= now:
            _, _, frame, kind = heapq.heappop(self._delayed)
            self._write(kind, frame)

    def _write(self, kind: str, data: bytes) -> None:
        transport = self._transport
        started = time.monotonic()  # the bytes are at the host's side no earlier than this: a latency's zero
        written = transport.write(data) if transport else 0
        self.counters["bytes_out"] += written
        self.counters["bytes_lost"] += len(data) - written
        if self.write_hook is not None:
            self.write_hook(kind, data, started)

    def _wake(self) -> None:
        try:
            os.write(self._wake_w, b"!")
        except OSError:
            pass

    def _run(self) -> None:
        while not self._stop.is_set():
            with self._lock:
                transport = self._transport
                fds = [self._wake_r] + (transport.fds() if transport else [])
            try:
                ready = select.select(fds, [], [], _TICK)[0]
            except (OSError, ValueError):
                ready = []  # a descriptor closed under us by unplug(): go round again
            with self._changed:
                now = time.monotonic()
                if self._wake_r in ready:
                    try:
                        os.read(self._wake_r, 512)
                    except OSError:
                        pass
                if self._transport is transport and transport is not None:
                    for fd in ready:
                        if fd != self._wake_r:
                            data = transport.read(fd)
                            if data:
                                for command in self.link.receive(data, now):
                                    self._execute(command)
                if self._transport is None and self._replug_at is not None and now >= self._replug_at:
                    self._transport = self._plug() if self._plug else None
                    self._replug_at = None
                self.link.poll(now)
                self._flush()
                self._changed.notify_all()

"""Host side of the shoe link as a pure state machine (no I/O, no clock): bytes and time in, events and bytes out.

The driver thread (driver.py) feeds it what the port reads and the current monotonic time, hands the returned
events to the runtime and writes `take_output()` to the port. Everything the protocol promises is decided here,
so it is tested without threads: acknowledgement and duplicate suppression by sequence number, retransmission
of host commands with bounded retries, the heartbeat watchdog, and a second line of defence on the draw counter
that delivers every drawn card exactly once even across device restarts and link resyncs.
"""

from __future__ import annotations

import logging
from collections import deque
from concurrent.futures import Future
from dataclasses import dataclass
from typing import Mapping

from controller.cards import Card

from .protocol import (
    PROTOCOL_VERSION, Ack, CardDrawn, Decoder, Frame, Hello, Identify, Message, Nak, NakReason, PayloadError,
    Rejected, ShoeState, decode_message, encode_message,
)

__all__ = ["LinkConfig", "LinkUp", "LinkDown", "Anomaly", "CounterReset", "HostLink", "LinkDownError",
           "CommandFailed", "COUNTERS", "Event"]

log = logging.getLogger("croupier.shoe")


@dataclass(frozen=True)
class LinkConfig:
    """Timing of the link, in seconds. Defaults suit a USB or 115200-baud UART shoe; tests shorten them."""

    heartbeat_timeout: float = 1.5  # no valid frame for this long while up: the link is down
    hello_interval: float = 0.25  # while syncing, send HELLO this often
    retransmit_timeout: float = 0.1  # resend an unacknowledged command after this long
    retries: int = 5  # resends before a command fails
    reconnect_interval: float = 0.5  # (driver) retry opening the port this often
    poll_interval: float = 0.01  # (driver) read timeout, i.e. how often timers are checked when idle

    def __post_init__(self) -> None:
        for name in ("heartbeat_timeout", "hello_interval", "retransmit_timeout", "reconnect_interval",
                     "poll_interval"):
            if not getattr(self, name) > 0:
                raise ValueError(f"shoe link {name} must be positive, got {getattr(self, name)!r}")
        if not isinstance(self.retries, int) or self.retries < 0:
            raise ValueError(f"shoe link retries must be a non-negative integer, got {self.retries!r}")


@dataclass(frozen=True, slots=True)
class LinkUp:
    """The device identified itself: from now on its messages are delivered."""

    identity: Identify


@dataclass(frozen=True, slots=True)
class LinkDown:
    """The link is down: `reason` is 'heartbeat lost', 'device restarted', 'disconnected: ...', or 'stopped'."""

    reason: str


@dataclass(frozen=True, slots=True)
class Anomaly:
    """Something the runtime must know about: a draw counter gap or conflict, a failed command, a refused device."""

    kind: str
    detail: str


@dataclass(frozen=True, slots=True)
class CounterReset:
    """The shoe's draw counter went back (the device was reset) or another device answers (a swapped shoe): the
    cards it reads from now on are not the shoe counted so far. `draws` is its counter now (its next card is
    draw `draws + 1`); `detail` says what was seen. The runtime must rebase its own count and have the new shoe
    checked: without this its next cards would look like draws already journaled."""

    shoe_id: int
    draws: int
    detail: str


# Device messages (CardDrawn, ShoeState, DeckCheck, Shuffle, DeviceError) plus the four link events.
Event = object


class LinkDownError(ConnectionError):
    """A command was submitted or pending while the link was down."""


class CommandFailed(TimeoutError):
    """A command was not acknowledged after every retry."""


# Every counter the link keeps; each anomaly also goes to the log ("croupier.shoe").
COUNTERS = (
    "bytes_in", "bytes_out", "frames_in", "frames_out", "noise_bytes", "oversize",
    "too_short", "bad_escape", "bad_length", "bad_crc", "unknown_type", "bad_payload", "wrong_direction",
    "duplicates", "out_of_order", "unsynced_frames", "naks_sent", "naks_received", "retransmits",
    "commands_sent", "command_failures", "heartbeat_losses", "device_restarts", "protocol_mismatch",
    "replayed_cards", "draw_conflicts", "draw_gaps", "recovered_cards", "draw_resets",
    "connects", "disconnects", "open_failures",
)
_FRAME_VERDICTS = ("too_short", "bad_escape", "bad_length", "bad_crc")
_UP, _SYNCING, _CLOSED = "up", "syncing", "closed"


class _Draws:
    """Last draw delivered per shoe: a card is delivered once per (shoe, draw), gaps and conflicts are flagged."""

    def __init__(self, link: HostLink, last_draws: Mapping[int, int] | None) -> None:
        self.link = link
        self.last: dict[int, tuple[int, Card | None]] = {s: (d, None) for s, d in (last_draws or {}).items()}

    def card(self, msg: CardDrawn, events: list, recovered: bool = False) -> None:
        prev = self.last.get(msg.shoe_id)
        if prev is not None:
            last, last_card = prev
            if msg.draw <= last:
                if msg.draw == last and last_card is not None and last_card != msg.card:
                    self.link._anomaly(events, "draw_conflicts", f"shoe {msg.shoe_id} draw {msg.draw} was {last_card} "
                                                                 f"and is now reported as {msg.card}")
                else:
                    self.link._count("replayed_cards", f"shoe {msg.shoe_id} draw {msg.draw} ({msg.card}) was "
                                                       f"already delivered (last {last}): suppressed")
                return
            if msg.draw > last + 1:
                self.link._anomaly(events, "draw_gaps", f"shoe {msg.shoe_id}: draws {last + 1}..{msg.draw - 1} "
                                                        f"never arrived (the device lost them)")
        if recovered:
            self.link._count("recovered_cards", f"shoe {msg.shoe_id} draw {msg.draw} ({msg.card}) recovered from "
                                                f"the restarted device's IDENTIFY")
        self.last[msg.shoe_id] = (msg.draw, msg.card)
        events.append(msg)

    def counter(self, shoe_id: int, draws: int, events: list) -> None:
        """A STATE or IDENTIFY reported the device's counter: a lower value means it was reset."""
        prev = self.last.get(shoe_id)
        if prev is not None and draws < prev[0]:
            detail = f"shoe {shoe_id} draw counter went from {prev[0]} to {draws}"
            self.link._count("draw_resets", detail)
            self.last[shoe_id] = (draws, None)
            events.append(CounterReset(shoe_id, draws, detail))

    def swapped(self, ident: Identify, before: Identify, events: list) -> None:
        """Another device answers: whatever its counter says, its cards are another shoe's."""
        detail = f"shoe {ident.shoe_id} is another device: serial {before.serial} -> {ident.serial}, draws {ident.draws}"
        self.link._count("draw_resets", detail)
        self.last[ident.shoe_id] = (ident.draws, None)
        events.append(CounterReset(ident.shoe_id, ident.draws, detail))

    def restarted(self, ident: Identify, events: list) -> None:
        """The device restarted, losing whatever it had not sent: recover its last card, flag anything older."""
        prev = self.last.get(ident.shoe_id)
        if prev is None or ident.draws == prev[0]:
            return  # nothing delivered yet to compare with (the runtime compares with its journal), or nothing lost
        if ident.draws < prev[0]:
            self.counter(ident.shoe_id, ident.draws, events)
            return
        if ident.last_card is not None:
            self.card(CardDrawn(ident.shoe_id, ident.draws, ident.last_card), events, recovered=True)
        else:
            self.link._anomaly(events, "draw_gaps", f"shoe {ident.shoe_id}: draws {prev[0] + 1}..{ident.draws} "
                                                    f"were lost when the device restarted")
            self.last[ident.shoe_id] = (ident.draws, None)


class HostLink:
    """The host end of one shoe link. Not thread-safe: one thread (the driver's) calls every method."""

    def __init__(self, config: LinkConfig | None = None, *, last_draws: Mapping[int, int] | None = None) -> None:
        self.config = config or LinkConfig()
        self.decoder = Decoder()
        self.counters: dict[str, int] = dict.fromkeys(COUNTERS, 0)
        self.state = _CLOSED
        self.identity: Identify | None = None
        self._draws = _Draws(self, last_draws)
        self._out = bytearray()
        self._rx_next: int | None = None  # next sequence number expected from the device; None until IDENTIFY
        self._tx_next = 0  # sequence number of the next host command
        self._hello_seq = 0  # sequence number of the last HELLO sent
        self._refused: Identify | None = None
        self._hello_at = 0.0
        self._last_rx = 0.0
        self._pending: deque[tuple[Message, Future]] = deque()
        self._inflight: list | None = None  # [seq, frame bytes, future (None: resync HELLO), sent at, resends]

    # ---- state -------------------------------------------------------------------------------------------

    @property
    def up(self) -> bool:
        return self.state == _UP

    def snapshot_counters(self) -> dict[str, int]:
        counters = dict(self.counters)
        counters["noise_bytes"] += self.decoder.noise
        counters["oversize"] += self.decoder.oversize
        return counters

    def take_output(self) -> bytes:
        out = bytes(self._out)
        self._out.clear()
        return out

    # ---- port events -------------------------------------------------------------------------------------

    def opened(self, now: float) -> list[Event]:
        """The port is open: start a session (HELLO until the device identifies)."""
        self.counters["connects"] += 1
        self.decoder.reset()
        self._out.clear()
        self.state = _SYNCING
        self._last_rx = now
        self._send_hello(now)
        return []

    def closed(self, reason: str, now: float) -> list[Event]:
        """The port failed or was closed; outstanding commands fail."""
        events: list[Event] = []
        if self.state != _CLOSED:
            self.counters["disconnects"] += 1
            (log.info if reason == "stopped" else log.warning)("shoe link closed: %s", reason)
            self._down(events, reason)
        self.state = _CLOSED
        return events

    # ---- commands ----------------------------------------------------------------------------------------

    def submit(self, message: Message, now: float, future: Future | None = None) -> Future:
        """Queue a host command; the future completes when the device acknowledges it."""
        future = future or Future()
        if message.FROM_DEVICE is not False or not message.RELIABLE:
            future.set_exception(ValueError(f"{type(message).__name__} is not a host command"))
        elif self.state != _UP:
            future.set_exception(LinkDownError(f"shoe link is {self.state}: {type(message).__name__} not sent"))
        else:
            self._pending.append((message, future))
            self._pump(now)
        return future

    def _pump(self, now: float) -> None:
        while self._inflight is None and self._pending:
            message, future = self._pending.popleft()
            if not future.set_running_or_notify_cancel():
                continue
            seq = self._tx_next
            frame = encode_message(message, seq)
            self._inflight = [seq, frame, future, now, 0]
            self.counters["commands_sent"] += 1
            self._write(frame)

    # ---- time --------------------------------------------------------------------------------------------

    def poll(self, now: float) -> list[Event]:
        """Run the timers: watchdog, HELLO while syncing, command retransmission."""
        events: list[Event] = []
        cfg = self.config
        if self.state == _UP and now - self._last_rx > cfg.heartbeat_timeout:
            self._count("heartbeat_losses", f"no frame from the shoe for {now - self._last_rx:.3f} s")
            self._down(events, "heartbeat lost")
            self.state = _SYNCING
            self._send_hello(now)
        elif self.state == _SYNCING and now - self._hello_at >= cfg.hello_interval:
            self._send_hello(now)
        inflight = self._inflight
        if inflight is not None and now - inflight[3] >= cfg.retransmit_timeout:
            if inflight[4] >= cfg.retries and inflight[2] is not None:
                self._inflight = None
                self._anomaly(events, "command_failures", f"command seq {inflight[0]} not acknowledged after "
                                                          f"{cfg.retries} resends")
                inflight[2].set_exception(CommandFailed(f"shoe did not acknowledge the command after "
                                                        f"{cfg.retries} resends"))
                # Whether or not the device got it, a HELLO puts both ends on a fresh sequence number, so the
                # next command is neither taken for a duplicate nor refused as out of order. The HELLO is resent
                # like a command until acknowledged; the commands waiting go after it.
                self._tx_next = (inflight[0] + 1) & 0xFF
                self._send_hello(now)
                self._inflight = [self._hello_seq, encode_message(Hello(PROTOCOL_VERSION), self._hello_seq), None,
                                  now, 0]
            else:
                self._resend(now)
        return events

    def _resend(self, now: float) -> None:
        inflight = self._inflight
        assert inflight is not None
        inflight[3] = now
        inflight[4] += 1
        self.counters["retransmits"] += 1
        self._write(inflight[1])

    # ---- receiving ---------------------------------------------------------------------------------------

    def receive(self, data: bytes, now: float) -> list[Event]:
        """Bytes read from the port: returns the events to hand to the runtime, in order."""
        events: list[Event] = []
        self.counters["bytes_in"] += len(data)
        nak_due = False
        for item in self.decoder.feed(data):
            if type(item) is Rejected:
                self._count(item.verdict, f"segment of {len(item.raw)} bytes refused: {item.verdict} "
                                          f"({item.raw[:24].hex()})")
                nak_due = True
                continue
            try:
                msg = decode_message(item)
            except PayloadError as exc:
                self._count(exc.verdict, f"frame type 0x{item.type:02x} seq {item.seq} refused: {exc}")
                nak_due = True
                continue
            self.counters["frames_in"] += 1
            if msg.FROM_DEVICE is False:
                self._count("wrong_direction", f"the shoe sent a host command ({type(msg).__name__})")
                continue
            self._last_rx = now
            if msg.RELIABLE:
                nak_due = self._reliable(item, msg, events, now) or nak_due
            elif type(msg) is Identify:
                self._on_identify(msg, events)
            elif type(msg) is Ack:
                self._on_ack(msg.seq, now)
            elif type(msg) is Nak:
                self.counters["naks_received"] += 1
                if self._inflight is not None:
                    if self._inflight[0] == msg.seq:
                        self._resend(now)
                    elif (self._inflight[0] + 1) & 0xFF == msg.seq:
                        self._on_ack(self._inflight[0], now)  # it expects the next one: it has ours, the ACK was lost
        if nak_due and self.state == _UP and self._rx_next is not None:  # (UP: IDENTIFY has set it)
            # One NAK per read, naming the frame still expected: the device resends it only if it is in flight.
            self.counters["naks_sent"] += 1
            self._write(encode_message(Nak(self._rx_next, NakReason.BAD_FRAME)))
        return events

    def _reliable(self, frame: Frame, msg: Message, events: list, now: float) -> bool:
        seq = frame.seq
        expected = self._rx_next
        if self.state != _UP or expected is None:
            # Not synced: the device answers our HELLO with IDENTIFY, then resends this.
            self._count("unsynced_frames", f"{type(msg).__name__} seq {seq} before IDENTIFY: dropped")
            return False
        if seq == expected:
            self._rx_next = (seq + 1) & 0xFF
            self._deliver(msg, events)
            self._ack(seq)
            return False
        if seq == (expected - 1) & 0xFF:
            self._count("duplicates", f"{type(msg).__name__} seq {seq} received again (our ACK was lost): "
                                      f"acknowledged, not delivered")
            self._ack(seq)
            return False
        self._count("out_of_order", f"{type(msg).__name__} seq {seq} while expecting {expected}")
        return True

    def _deliver(self, msg: Message, events: list) -> None:
        if type(msg) is CardDrawn:
            self._draws.card(msg, events)
            return
        if type(msg) is ShoeState:
            self._draws.counter(msg.shoe_id, msg.draws, events)
        events.append(msg)

    def _on_identify(self, msg: Identify, events: list) -> None:
        if msg.protocol != PROTOCOL_VERSION:
            if msg != self._refused:
                self._refused = msg
                self._anomaly(events, "protocol_mismatch", f"shoe {msg.serial} speaks protocol {msg.protocol}, "
                                                           f"this host speaks {PROTOCOL_VERSION}: link refused")
            return
        previous = self.identity
        self.identity = msg
        restarted = previous is not None and (msg.boot, msg.serial) != (previous.boot, previous.serial)
        if self.state == _UP and not restarted:
            return  # the answer to a HELLO that crossed our first command: nothing changed
        if restarted and previous is not None:
            self._count("device_restarts", f"shoe {msg.serial} restarted or was swapped (boot {previous.boot} "
                                           f"-> {msg.boot})")
            self._down(events, "device restarted")
        base, expected = msg.tx_base, self._rx_next
        if restarted or expected is None:
            self._rx_next = base
        elif base != expected and base != (expected - 1) & 0xFF:
            # Same device and boot, yet it is not where we left it: trust the device, the draw counter guards cards.
            self._count("out_of_order", f"IDENTIFY says the device resends from seq {base}, we expected {expected}")
            self._rx_next = base
        # base == expected - 1: the frame in flight was delivered and its ACK lost; it will come as a duplicate.
        self.state = _UP
        self._tx_next = (self._hello_seq + 1) & 0xFF
        log.info("shoe link up: %s serial %s firmware %s, shoe %d, draws %d, boot %d", msg.kind.name,
                 msg.serial, ".".join(map(str, msg.firmware)), msg.shoe_id, msg.draws, msg.boot)
        events.append(LinkUp(msg))
        if previous is not None and msg.serial != previous.serial:
            self._draws.swapped(msg, previous, events)
        elif restarted:
            self._draws.restarted(msg, events)
        else:
            # Not a baseline: IDENTIFY's counter includes cards still waiting in the device's queue.
            self._draws.counter(msg.shoe_id, msg.draws, events)

    def _on_ack(self, seq: int, now: float) -> None:
        inflight = self._inflight
        if inflight is not None and inflight[0] == seq:
            self._inflight = None
            self._tx_next = (seq + 1) & 0xFF
            if inflight[2] is not None:  # None: a resync HELLO
                inflight[2].set_result(None)
            self._pump(now)

    # ---- helpers -----------------------------------------------------------------------------------------

    def _send_hello(self, now: float) -> None:
        # HELLO takes the next command sequence number; the device expects the number after it.
        self._hello_seq = self._tx_next
        self._hello_at = now
        self._write(encode_message(Hello(PROTOCOL_VERSION), self._hello_seq))

    def _down(self, events: list, reason: str) -> None:
        # _rx_next survives: if the same device comes back, its IDENTIFY says whether its frame in flight is new.
        was_up = self.state == _UP
        if was_up:
            events.append(LinkDown(reason))
        failed = [self._inflight[2]] if self._inflight and self._inflight[2] else []
        failed += [f for _, f in self._pending]
        self._inflight = None
        self._pending.clear()
        for future in failed:
            if not future.done():
                future.set_exception(LinkDownError(f"shoe link went down ({reason})"))
        if was_up:
            self.state = _SYNCING

    def _ack(self, seq: int) -> None:
        self._write(encode_message(Ack(seq)))

    def _write(self, frame: bytes) -> None:
        self.counters["frames_out"] += 1
        self.counters["bytes_out"] += len(frame)
        self._out += frame

    def _count(self, kind: str, detail: str) -> None:
        self.counters[kind] += 1
        log.warning("shoe %s: %s", kind.replace("_", " "), detail)

    def _anomaly(self, events: list, kind: str, detail: str) -> None:
        self._count(kind, detail)
        events.append(Anomaly(kind, detail))

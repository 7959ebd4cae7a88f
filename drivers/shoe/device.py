"""Device side of the shoe link as a pure state machine: the simulated shoe's protocol engine.

It does what firmware/shoe/ does on the RP2040 (that code is MicroPython and has its own copy, checked against
the same test vectors): one reliable message in flight, resent with exponential backoff until acknowledged
(immediately on a NAK that names it), host commands delivered once by sequence number, IDENTIFY in answer to
every HELLO, a heartbeat every interval.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass
from typing import Callable

from .protocol import (
    Ack, Decoder, Hello, Heartbeat, Identify, Message, Nak, NakReason, PayloadError, Rejected, decode_message,
    encode_message,
)

__all__ = ["DeviceTiming", "DeviceLink"]


@dataclass(frozen=True)
class DeviceTiming:
    """Device timers in seconds (the firmware uses the same defaults)."""

    heartbeat_interval: float = 0.5
    retransmit_timeout: float = 0.1
    retransmit_max: float = 1.0  # exponential backoff stops growing here; the device never gives up

    def __post_init__(self) -> None:
        if not (0 < self.retransmit_timeout <= self.retransmit_max and self.heartbeat_interval > 0):
            raise ValueError(f"bad device timing {self}")


class DeviceLink:
    """The device end of one link. `identify(tx_base)` and `heartbeat()` build those messages from device state."""

    def __init__(self, identify: Callable[[int], Identify], heartbeat: Callable[[], Heartbeat],
                 timing: DeviceTiming | None = None) -> None:
        self.timing = timing or DeviceTiming()
        self._identify = identify
        self._heartbeat = heartbeat
        self.decoder = Decoder()
        self.queue: deque[Message] = deque()
        self._inflight: list | None = None  # [seq, frame, sent at, current timeout, kind]
        self._tx_next = 0
        self._rx_next: int | None = None
        self._beat_at: float | None = None
        self._frames: list[tuple[bytes, str]] = []  # (frame, message type name): fault injectors pick by kind
        self.ignore_acks = 0  # fault switch: pretend the next N ACKs were lost
        self.counters = dict.fromkeys(("frames_in", "rejected", "naks_sent", "naks_received", "retransmits",
                                       "duplicates", "out_of_order", "acks_ignored", "sent"), 0)

    @property
    def tx_base(self) -> int:
        return self._inflight[0] if self._inflight is not None else self._tx_next

    @property
    def idle(self) -> bool:
        """Nothing waiting for an acknowledgement."""
        return self._inflight is None and not self.queue

    def take_frames(self) -> list[tuple[bytes, str]]:
        frames, self._frames = self._frames, []
        return frames

    def send(self, message: Message, now: float) -> None:
        if message.RELIABLE:
            self.queue.append(message)
            self._pump(now)
        else:
            self._frames.append((encode_message(message), type(message).__name__))

    def identify(self) -> None:
        self._frames.append((encode_message(self._identify(self.tx_base)), "Identify"))

    def _pump(self, now: float) -> None:
        if self._inflight is None and self.queue:
            seq = self._tx_next
            message = self.queue.popleft()
            frame = encode_message(message, seq)
            self._inflight = [seq, frame, now, self.timing.retransmit_timeout, type(message).__name__]
            self.counters["sent"] += 1
            self._frames.append((frame, self._inflight[4]))

    def _resend(self, now: float) -> None:
        inflight = self._inflight
        assert inflight is not None
        inflight[2] = now
        self.counters["retransmits"] += 1
        self._frames.append((inflight[1], inflight[4]))

    def poll(self, now: float) -> None:
        if self._beat_at is None or now - self._beat_at >= self.timing.heartbeat_interval:
            self._beat_at = now
            self._frames.append((encode_message(self._heartbeat()), "Heartbeat"))
        inflight = self._inflight
        if inflight is not None and now - inflight[2] >= inflight[3]:
            inflight[3] = min(inflight[3] * 2, self.timing.retransmit_max)
            self._resend(now)

    def receive(self, data: bytes, now: float) -> list[Message]:
        """Bytes from the host: returns the host commands to carry out (each once; HELLO is handled here)."""
        commands: list[Message] = []
        nak = False
        for item in self.decoder.feed(data):
            if type(item) is Rejected:
                self.counters["rejected"] += 1
                nak = True
                continue
            try:
                msg = decode_message(item)
            except PayloadError:
                self.counters["rejected"] += 1
                nak = True
                continue
            self.counters["frames_in"] += 1
            if type(msg) is Ack:
                if self._inflight is not None and self._inflight[0] == msg.seq:
                    if self.ignore_acks > 0:
                        self.ignore_acks -= 1
                        self.counters["acks_ignored"] += 1
                        continue
                    self._acked(now)
            elif type(msg) is Nak:
                self.counters["naks_received"] += 1
                if self._inflight is not None:
                    if self._inflight[0] == msg.seq:
                        self._resend(now)
                    elif (self._inflight[0] + 1) & 0xFF == msg.seq:
                        self._acked(now)  # the host expects the next one: it has ours, its ACK was lost
            elif msg.FROM_DEVICE is not False:
                continue  # a device message coming back (echo): not for us
            elif type(msg) is Hello:
                self._rx_next = (item.seq + 1) & 0xFF
                self._ack(item.seq)
                self.identify()
            else:
                seq, expected = item.seq, self._rx_next
                if expected is None or seq == expected:
                    # Before any HELLO (the device just booted) the host's first command starts the session.
                    self._rx_next = (seq + 1) & 0xFF
                    self._ack(seq)
                    commands.append(msg)
                elif seq == (expected - 1) & 0xFF:
                    self.counters["duplicates"] += 1
                    self._ack(seq)
                else:
                    self.counters["out_of_order"] += 1
                    nak = True
        if nak and self._rx_next is not None:
            self.counters["naks_sent"] += 1
            self._frames.append((encode_message(Nak(self._rx_next, NakReason.BAD_FRAME)), "Nak"))
        return commands

    def _acked(self, now: float) -> None:
        assert self._inflight is not None
        self._tx_next = (self._inflight[0] + 1) & 0xFF
        self._inflight = None
        self._pump(now)

    def _ack(self, seq: int) -> None:
        self._frames.append((encode_message(Ack(seq)), "Ack"))

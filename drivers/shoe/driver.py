"""Host driver for the card shoe: one thread owns the serial port (any pyserial URL), reconnects, and hands events on.

    driver = ShoeDriver("/dev/serial/by-id/usb-Croupier_Shoe-if00", on_event)
    driver.start()
    ...
    driver.lock(True).result(timeout=1)   # host commands return concurrent.futures.Future
    driver.counters                        # every anomaly, counted
    driver.stop()

`on_event` is called on the driver's thread, once per event, in order; it must not block (an asyncio runtime
wraps it with `loop.call_soon_threadsafe`, which is what drivers.shoe.aio.AsyncShoe does). Events are the
device messages CardDrawn, ShoeState, DeckCheck, Shuffle and DeviceError, and the link events LinkUp, LinkDown,
Anomaly and CounterReset (drivers.shoe.link). The driver acknowledges a frame after `on_event` returns.

A port that cannot be opened (a USB shoe unplugged, a wrong path) is retried every `reconnect_interval` for
as long as the driver runs, since the shoe may be plugged in again: the first failure of a run of them is handed
on as LinkDown("cannot open the port: ...") and logged, and while it lasts the log says so again after 30 s,
then after twice as long each time (at most every 5 minutes), never at every retry.
"""

from __future__ import annotations

import logging
import os
import queue
import time
from concurrent.futures import Future
from typing import Callable, Mapping

import serial

from drivers.serialdevice import SerialDevice

from .link import Event, HostLink, LinkConfig, LinkDown
from .protocol import Lock, Message, RequestStatus, ResetCounters, SetTime

__all__ = ["ShoeDriver", "STILL_DOWN_FIRST", "STILL_DOWN_MAX"]

log = logging.getLogger("croupier.shoe")
STILL_DOWN_FIRST = 30.0   # seconds of failing to open the port before the log says so again...
STILL_DOWN_MAX = 300.0    # ...then twice as long each time, up to this


class ShoeDriver(SerialDevice[Event]):
    """The card shoe on a serial line. Opens `url` with `serial.serial_for_url` (a device path, /dev/serial/by-id/...,
    socket://host:port, rfc2217://host:port, loop://), keeps trying to (re)open it, and runs the link. Started and
    stopped as drivers.serialdevice.SerialDevice; on stop a last LinkDown('stopped') is handed on if the link was up.
    Its counters: drivers.shoe.link.COUNTERS, plus callback_errors, write_errors and internal_errors, published
    after every read and timer tick."""

    def __init__(self, url: str, on_event: Callable[[Event], object], *, config: LinkConfig | None = None,
                 baudrate: int = 115200, last_draws: Mapping[int, int] | None = None,
                 realtime: int | None = None, clock: Callable[[], float] = time.monotonic) -> None:
        """`last_draws`: the last draw number journaled per shoe id, so a gap across a restart of the host is seen.
        `realtime`: run the driver thread under SCHED_FIFO at this priority (1..99; needs CAP_SYS_NICE, e.g.
        systemd's LimitRTPRIO), so a busy Pi does not delay cards; if refused, a warning and normal scheduling."""
        super().__init__("shoe", url, on_event, log)
        self.baudrate = baudrate
        self.realtime = realtime
        self.config = config or LinkConfig()
        self._clock = clock
        self._link = HostLink(self.config, last_draws=last_draws)
        self._commands: queue.SimpleQueue[tuple[Message, Future]] = queue.SimpleQueue()
        self._snapshot = self._link.snapshot_counters()
        self._extra = {"callback_errors": 0, "write_errors": 0, "internal_errors": 0}
        self.read_at = 0.0  # clock() right after the read that completed the frames being handed on (bench)

    # ---- state and commands (any thread) -------------------------------------------------------------------

    @property
    def up(self) -> bool:
        return self._link.up

    @property
    def identity(self):
        """The last IDENTIFY of the device (drivers.shoe.protocol.Identify), or None."""
        return self._link.identity

    def submit(self, message: Message) -> Future:
        """Send a host command; the future completes when the device acknowledges it, or fails with LinkDownError
        or CommandFailed. Sent within one poll interval (10 ms by default)."""
        future: Future = Future()
        if self._thread is None:
            from .link import LinkDownError

            future.set_exception(LinkDownError("the shoe driver is not running"))
        else:
            self._commands.put((message, future))
        return future

    def lock(self, locked: bool = True) -> Future:
        return self.submit(Lock(locked))

    def reset_counters(self) -> Future:
        return self.submit(ResetCounters())

    def request_status(self) -> Future:
        return self.submit(RequestStatus())

    def set_time(self, unix_ms: int | None = None) -> Future:
        return self.submit(SetTime(int(time.time() * 1000) if unix_ms is None else unix_ms))

    # ---- the thread ----------------------------------------------------------------------------------------

    def _run(self) -> None:
        self._failing_since: float | None = None  # while the port cannot be opened: since when, and how often
        self._remind_at, self._remind_gap, self._tries = 0.0, STILL_DOWN_FIRST, 0
        if self.realtime is not None:
            try:  # on Linux, pid 0 means this thread
                os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(self.realtime))
            except (OSError, AttributeError, ValueError) as exc:
                log.warning("shoe driver: real-time priority %s refused (%s): normal scheduling", self.realtime, exc)
        try:
            self._serve(self.config.reconnect_interval)
        finally:
            self._close("stopped")
            self._fail_queued()
            self._publish()

    def _connect(self) -> serial.Serial:
        port = serial.serial_for_url(self.url, baudrate=self.baudrate, timeout=self.config.poll_interval,
                                     write_timeout=1.0)
        if self._failing_since is not None:
            log.info("shoe port %s open again after %.1f s", self.url, self._clock() - self._failing_since)
            self._failing_since = None
        self._link.opened(self._clock())
        return port

    def _open_failed(self, exc: Exception) -> None:
        self._link.counters["open_failures"] += 1
        now = self._clock()
        self._tries += 1
        if self._failing_since is None:
            self._failing_since, self._tries = now, 1
            self._remind_at, self._remind_gap = now + STILL_DOWN_FIRST, STILL_DOWN_FIRST
            log.warning("shoe port %s cannot be opened (retrying every %.2f s): %s", self.url,
                        self.config.reconnect_interval, exc)
            self._dispatch([LinkDown(f"cannot open the port {self.url}: {exc}")])
        elif now >= self._remind_at:
            log.warning("shoe port %s still cannot be opened after %.0f s (%d tries): %s", self.url,
                        now - self._failing_since, self._tries, exc)
            self._remind_gap = min(self._remind_gap * 2, STILL_DOWN_MAX)
            self._remind_at = now + self._remind_gap

    def _step(self, port: serial.Serial) -> None:
        link = self._link
        self._write(port)
        data = self._read(port)
        now = self.read_at = self._clock()
        events = link.receive(data, now) if data else []
        while True:
            try:
                message, future = self._commands.get_nowait()
            except queue.Empty:
                break
            link.submit(message, now, future)
        events += link.poll(now)
        self._dispatch(events)
        self._write(port)

    def _write(self, port: serial.SerialBase) -> None:
        out = self._link.take_output()
        if out:
            try:
                port.write(out)
            except serial.SerialTimeoutException as exc:
                # A port that stops draining is as good as unplugged.
                self._extra["write_errors"] += 1
                raise serial.SerialException(f"write timed out: {exc}") from exc

    def _close(self, reason: str) -> None:
        self._close_port()
        events = self._link.closed(reason, self._clock())
        if reason == "stopped" and events:
            events = [LinkDown("stopped")]
        self._dispatch(events)

    def _count(self, name: str) -> None:
        self._extra[name] += 1

    def _fail_queued(self) -> None:
        from .link import LinkDownError

        while True:
            try:
                _, future = self._commands.get_nowait()
            except queue.Empty:
                return
            if future.set_running_or_notify_cancel():
                future.set_exception(LinkDownError("shoe driver stopped"))

    def _publish(self) -> None:
        counters = self._link.snapshot_counters()
        counters.update(self._extra)
        self._publish_counters(counters)

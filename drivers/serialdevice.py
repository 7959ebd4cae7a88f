"""What every serial device driver's thread shares (the shoe's, the validator's, the printer's): its port checked, started, stopped, its counters published.

A driver subclasses SerialDevice, calls `super().__init__(kind, url, on_event, log)` first, and runs its line in
`_run` until `self._stop` is set; `self._port` is the open line or None. A driver whose line is one `_step` after
another runs them with `_serve` (the port opened, and reopened afresh when a step fails). It hands its events on
with `_dispatch` and counts its own errors in `_count`. The thread publishes a fresh copy of its counters with
`_publish_counters` (after every poll): `counters` and `wait_counters` read that copy from any thread.
"""

from __future__ import annotations

import logging
import threading
from typing import Callable, Generic, Self, Sequence, TypeVar

import serial

__all__ = ["SerialDevice"]

E = TypeVar("E")


class SerialDevice(Generic[E]):
    # True: each event handed on is logged at debug level first.
    log_events = False

    def __init__(self, kind: str, url: str, on_event: Callable[[E], object], log: logging.Logger) -> None:
        """`kind` names the device in errors, logs and its thread's name ("shoe", "validator", "printer");
        `on_event` is called on the driver's thread with each event, in order."""
        if not isinstance(url, str) or not url.strip():
            raise ValueError(f"{kind} port must be a device path or pyserial URL, got {url!r}")
        self.url = url
        self._kind = kind
        self._on_event = on_event
        self._log = log
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._port: serial.Serial | None = None
        self._published = threading.Condition()
        self._snapshot: dict[str, int] = {}

    def _run(self) -> None:
        raise NotImplementedError

    def _count(self, name: str) -> None:
        """Count one of the driver's own errors ("callback_errors", ...)."""
        raise NotImplementedError

    # What `_serve` asks of the driver: to open its port and start the line on it, what a failure to open it
    # means, one step of the line, closing it (with why), publishing its counters.
    def _connect(self) -> serial.Serial:
        raise NotImplementedError

    def _open_failed(self, exc: Exception) -> None:
        raise NotImplementedError

    def _step(self, port: serial.Serial) -> None:
        raise NotImplementedError

    def _close(self, reason: str) -> None:
        raise NotImplementedError

    def _publish(self) -> None:
        raise NotImplementedError

    def _serve(self, retry: float) -> None:
        """Run the line until stopped: open the port (again every `retry` seconds while it cannot be opened), then
        one `_step` after another, publishing the counters after each; a step that fails closes the port (the
        line lost, or a bug here: see `_failure`) and it is opened afresh `retry` seconds later."""
        while not self._stop.is_set():
            port = self._port
            if port is None:
                try:
                    port = self._port = self._connect()
                except (serial.SerialException, OSError, ValueError) as exc:
                    self._open_failed(exc)
                    self._publish()
                    self._stop.wait(retry)
                    continue
            try:
                self._step(port)
            except Exception as exc:  # the line lost, or a bug here: close, and reopen afresh
                self._close(self._failure(exc))
                self._stop.wait(retry)
            self._publish()

    def start(self) -> Self:
        if self._thread is None:
            self._stop.clear()
            self._thread = threading.Thread(target=self._run, name=f"{self._kind} {self.url}", daemon=True)
            self._thread.start()
        return self

    def stop(self, timeout: float = 5.0) -> None:
        """Close the port and end the thread (what the driver hands on last, its class says)."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout)
            self._thread = None

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def counters(self) -> dict[str, int]:
        """A snapshot of every counter (the driver's class names them)."""
        with self._published:
            return dict(self._snapshot)

    def wait_counters(self, predicate: Callable[[dict[str, int]], bool], timeout: float) -> bool:
        """Wait until `predicate(counters)` holds (published after every poll)."""
        with self._published:
            return self._published.wait_for(lambda: predicate(self._snapshot), timeout)

    def _publish_counters(self, counters: dict[str, int]) -> None:
        with self._published:
            self._snapshot = counters
            self._published.notify_all()

    @staticmethod
    def _read(port: serial.Serial) -> bytes:
        """What the line has: a byte (or nothing, within the port's read timeout), then all that waits behind it."""
        data: bytes = port.read(1)
        if data:
            waiting = port.in_waiting
            if waiting:
                data += port.read(waiting)
        return data

    def _failure(self, exc: Exception) -> str:
        """Why a step of the line failed, called in its `except`: the line itself ("disconnected: ..."), or a bug,
        counted as internal_errors and logged with its traceback ("driver error: ..."), so the port is reopened
        afresh rather than the device silently ending."""
        if isinstance(exc, (serial.SerialException, OSError)):
            return f"disconnected: {exc}"
        self._count("internal_errors")
        self._log.exception("%s driver failed; reopening the port", self._kind)
        return f"driver error: {exc!r}"

    def _dispatch(self, events: Sequence[E]) -> None:
        for event in events:
            if self.log_events:
                self._log.debug("%s event %r", self._kind, event)
            try:
                self._on_event(event)
            except Exception:  # the runtime's bug must not take the device down with it
                self._count("callback_errors")
                self._log.exception("%s event handler failed on %r", self._kind, event)

    def _close_port(self) -> None:
        """Close the line if it is open (an error closing it changes nothing: it is gone either way)."""
        port, self._port = self._port, None
        if port is not None:
            try:
                port.close()
            except (serial.SerialException, OSError):
                pass

"""Host driver for a JCM ID-003 bill validator: one thread owns the serial line, polls the validator's status, and hands on the contract's events.

    driver = ValidatorDriver("/dev/ttyUSB0", on_event, country="USD")
    driver.start()
    driver.enable(frozenset({100, 500, 2000}), tickets=True)
    ... on Escrowed: driver.stack() or driver.return_item() ...
    driver.stop()

`on_event` is called on the driver's thread, once per event, in order (drivers.validator.events); it must not
block: drivers.validator.aio.AsyncValidator hands the events to an asyncio loop. The line is ID-003's: 9600 baud,
8 data bits, even parity, 1 stop bit; the host asks, the validator answers. Every `poll_interval` the driver asks
for the status (and first sends the cabinet's commands, each answered by ACK or by its echo), and turns each
status change into events with `StatusTracker`, the pure part. It acknowledges VEND VALID with ACK at once, every
time the validator reports it (the validator repeats VEND VALID until it hears the ACK), and credits the note
(Stacked) once. `offline_after` polls without a good answer raise ValidatorFault("offline"); the first good
answer clears it.
"""

from __future__ import annotations

import logging
import os
import queue
import termios
import threading
import time
from dataclasses import dataclass, field
from typing import Callable

import serial

from drivers.serialdevice import SerialDevice

from .events import (Escrowed, PoweredUp, Rejected, Returned, Stacked, ValidatorCleared, ValidatorEvent,
                     ValidatorFault)
from .protocol import (
    FAULT_STATUSES, NOTE_TABLES, POWER_UP_HOLDING, Cmd, Frame, FrameReader, Item, NoteTable, ProtocolError, Status,
    denomination_mask, encode, parse_escrow, reject_reason,
)

__all__ = ["ValidatorDriver", "StatusTracker", "DriverTiming", "COUNTERS"]

log = logging.getLogger("croupier.validator")

COUNTERS = ("polls", "answers", "missed_polls", "bad_frames", "noise_bytes", "acks_sent", "commands_sent",
            "command_retries", "command_failures", "invalid_commands", "unknown_statuses", "bad_escrows",
            "resets_sent", "configures", "open_failures", "disconnects", "callback_errors", "internal_errors")

# Statuses that say nothing about the item or a fault: the validator is busy or did not understand the host.
_QUIET = (Status.PAUSE, Status.COMMUNICATION_ERROR, Status.INVALID_COMMAND, Status.ACK)


def _parity(url: str) -> str:
    """ID-003's even parity, except on a pseudo-terminal (the simulator): a pty carries no parity bit, and Linux
    reads PARENB back cleared, so a second open that sets it again is refused (EINVAL)."""
    return serial.PARITY_NONE if os.path.realpath(url).startswith("/dev/pts/") else serial.PARITY_EVEN


@dataclass(frozen=True)
class DriverTiming:
    """The line's timing. ID-003 validators are polled every 100-200 ms (Monaco polls every 150 ms) and answer
    within 50 ms or so."""
    poll_interval: float = 0.15
    response_timeout: float = 0.1
    offline_after: int = 5          # polls without a good answer before ValidatorFault("offline")
    command_tries: int = 3          # sends of one command before it is given up (counted, logged)
    reconnect_interval: float = 1.0


@dataclass
class StatusTracker:
    """Turns the validator's answers to STATUS REQUEST into the contract's events, and says what the host must
    send back ("ack", "reset", "configure", "return"). Pure: no I/O, no clock."""

    table: NoteTable
    last: int | None = None
    item: Item | None = None
    escrow_reported: bool = False
    done: bool = False              # the escrowed item was reported stacked or returned
    fault: str | None = None
    configured: bool = False        # settings sent since the last contact or initialisation
    resumed: bool = False           # `item` is the journal's, not yet seen on the line by this process
    counters: dict[str, int] = field(default_factory=lambda: {"bad_escrows": 0, "unknown_statuses": 0,
                                                               "unknown_vend_valid": 0, "unsettled": 0})

    def resume(self, item: Item) -> None:
        """A new process takes over a validator that may hold `item` in escrow (the cabinet's journal says so): the
        escrow is not reported again, and VEND VALID or STACKED credit it."""
        self.item, self.escrow_reported, self.done, self.resumed = item, True, False, True

    def on_status(self, frame: Frame) -> tuple[list[ValidatorEvent], list[str]]:
        events: list[ValidatorEvent] = []
        actions: list[str] = []
        s = frame.cmd
        if s in _QUIET:
            return events, actions
        if s in FAULT_STATUSES:
            code = FAULT_STATUSES[s]
            if self.fault != code:
                if self.fault is not None:
                    events.append(ValidatorCleared(self.fault))
                events.append(ValidatorFault(code))
                self.fault = code
            self.last = s
            return events, actions
        try:
            status = Status(s)
        except ValueError:
            self.counters["unknown_statuses"] += 1
            return events, actions
        if self.fault is not None:
            events.append(ValidatorCleared(self.fault))
            self.fault = None
        if not self.configured and status not in POWER_UP_HOLDING:
            actions.append("configure")
            self.configured = True
        if status in POWER_UP_HOLDING:
            if self.last not in POWER_UP_HOLDING:
                events.append(PoweredUp(POWER_UP_HOLDING[status]))
            self._forget()
            self.configured = False
            actions.append("reset")  # ID-003: the host resets a validator that reports power up
        elif status == Status.INITIALIZE:
            if self.last != Status.INITIALIZE and "configure" not in actions:
                actions.append("configure")  # settings are sent while it initialises, as Monaco does
        elif status == Status.ESCROW:
            try:
                item = parse_escrow(frame.data, self.table)
            except ProtocolError as exc:
                self.counters["bad_escrows"] += 1
                log.warning("validator escrow not understood (%s): returning it", exc)
                actions.append("return")
            else:
                if not self.escrow_reported or item != self.item or self.done:
                    self.item, self.escrow_reported, self.done = item, True, False
                    events.append(Escrowed(item.note_cents, item.barcode))
                self.resumed = False
        elif status == Status.VEND_VALID:
            actions.append("ack")  # the note goes in whatever we know of it: the validator waits for this ACK
            if self.item is None:
                self.counters["unknown_vend_valid"] += 1
                log.error("validator stacked an item this process never saw in escrow (pass the journal's "
                          "escrowed item to the driver): no Stacked event")
            self._stacked(events)
        elif status == Status.STACKED:
            self._stacked(events)  # after a restart of the host: the process before ACKed VEND VALID
        elif status == Status.RETURNING:
            if self.item is not None and not self.done:
                events.append(Returned(self.item.note_cents, self.item.barcode, "returned"))
                self.done = True
        elif status == Status.REJECTING:
            if self.last != Status.REJECTING:
                events.append(Rejected(reject_reason(frame.data)))
        elif status in (Status.IDLING, Status.DISABLED):
            if self.item is not None and self.escrow_reported and not self.done:
                if self.resumed:
                    # The process before may have ACKed VEND VALID: stacked or returned, the line cannot say.
                    self.counters["unsettled"] += 1
                    log.warning("validator: the journal's escrowed %s is gone; stacked or returned while the host "
                                "was down, the line cannot tell", self.item)
                else:
                    # Gone from escrow without our ACK (the answers in between were lost): the validator does not
                    # leave VEND VALID without it, so the item was not stacked.
                    events.append(Returned(self.item.note_cents, self.item.barcode,
                                           "left escrow without being stacked"))
            self._forget()
        self.last = s
        return events, actions

    def on_contact_lost(self) -> None:
        """The line was silent: the settings are sent again at the next answer (the validator may have restarted)."""
        self.configured = False

    def _stacked(self, events: list[ValidatorEvent]) -> None:
        if self.item is not None and not self.done:
            events.append(Stacked(self.item.note_cents, self.item.barcode))
            self.done = True

    def _forget(self) -> None:
        self.item, self.escrow_reported, self.done, self.resumed = None, False, False, False


class ValidatorDriver(SerialDevice[ValidatorEvent]):
    """The validator on a serial line (any pyserial URL: a device path, socket://host:port, rfc2217://...), started
    and stopped as drivers.serialdevice.SerialDevice."""

    log_events = True

    def __init__(self, url: str, on_event: Callable[[ValidatorEvent], object], *, country: str = "USD",
                 timing: DriverTiming | None = None, baudrate: int = 9600, in_escrow: Item | None = None) -> None:
        """`in_escrow`: the item the cabinet's journal has in escrow (escrowed, not yet stacked or returned) when
        this process starts: a validator still holding it is not reported again, and its VEND VALID credits it."""
        super().__init__("validator", url, on_event, log)
        if country not in NOTE_TABLES:
            raise ValueError(f"no ID-003 note table for {country!r} (known: {', '.join(NOTE_TABLES)})")
        self.country, self.baudrate = country, baudrate
        self.table = NOTE_TABLES[country]
        self.timing = timing or DriverTiming()
        self._tracker = StatusTracker(self.table)
        if in_escrow is not None:
            self._tracker.resume(in_escrow)
        self._reader = FrameReader()
        self._commands: queue.SimpleQueue[Frame | str] = queue.SimpleQueue()
        self._notes: frozenset[int] = frozenset()
        self._tickets = False
        self._settings_lock = threading.Lock()
        self._missed = 0
        self._offline = False
        self._decision: Frame | None = None  # a STACK or RETURN the validator has not answered yet
        self._counters = dict.fromkeys(COUNTERS, 0)
        self._snapshot = dict(self._counters)

    # ---- the cabinet's commands (any thread; each returns at once) --------------------------------------------

    def stack(self) -> None:
        """Stack the item in escrow (STACK-1); Stacked follows once the validator reports VEND VALID."""
        self._commands.put(Frame(Cmd.STACK_1))

    def return_item(self) -> None:
        """Return the item in escrow (RETURN); Returned follows."""
        self._commands.put(Frame(Cmd.RETURN))

    def enable(self, notes: frozenset[int], tickets: bool) -> None:
        """Take these notes (cents; others, and amounts this country's firmware lacks, are refused) and tickets or
        not; nothing enabled inhibits the validator. Kept, and sent again after every power up."""
        unknown = set(notes) - set(self.table.values())
        if unknown:
            log.warning("validator: no %s note of %s cents; left disabled", self.country, sorted(unknown))
        with self._settings_lock:
            self._notes, self._tickets = frozenset(notes) & frozenset(self.table.values()), bool(tickets)
        self._commands.put("configure")

    @property
    def offline(self) -> bool:
        return self._offline

    # ---- the thread ------------------------------------------------------------------------------------------

    def _run(self) -> None:
        t = self.timing
        try:
            while not self._stop.is_set():
                if self._port is None and not self._open():
                    self._stop.wait(t.reconnect_interval)
                    continue
                try:
                    self._cycle()
                except (serial.SerialException, OSError) as exc:
                    self._counters["disconnects"] += 1
                    log.warning("validator line %s lost: %s", self.url, exc)
                    self._close_port()
                    self._silent()
                    self._stop.wait(t.reconnect_interval)
                except Exception:  # a bug here must not end the validator silently: log it, carry on
                    self._counters["internal_errors"] += 1
                    log.exception("validator driver failed; reopening the line")
                    self._close_port()
                    self._stop.wait(t.reconnect_interval)
                self._publish()
                self._stop.wait(t.poll_interval)
        finally:
            self._close_port()
            self._publish()

    def _open(self) -> bool:
        try:
            self._port = serial.serial_for_url(self.url, baudrate=self.baudrate, bytesize=serial.EIGHTBITS,
                                               parity=_parity(self.url), stopbits=serial.STOPBITS_ONE,
                                               timeout=min(0.01, self.timing.response_timeout), write_timeout=1.0)
            return True
        except (serial.SerialException, OSError, ValueError, termios.error) as exc:
            self._counters["open_failures"] += 1
            if self._counters["open_failures"] == 1:
                log.warning("validator port %s cannot be opened (retrying): %r", self.url, exc)
            self._silent()
            self._publish()
            return False

    def _cycle(self) -> None:
        while True:
            try:
                command = self._commands.get_nowait()
            except queue.Empty:
                break
            if command == "configure":
                self._configure()
            elif isinstance(command, Frame):
                self._decide(command)
        self._counters["polls"] += 1
        answer = self._exchange(Frame(Cmd.STATUS_REQUEST))
        if answer is None:
            self._counters["missed_polls"] += 1
            self._silent()
            return
        self._answered()
        events, actions = self._tracker.on_status(answer)
        for action in actions:  # ACK first: the validator waits on it, and the runtime's handler may be slow
            if action == "ack":
                self._send(Frame(Cmd.ACK))
                self._counters["acks_sent"] += 1
        self._dispatch(events)
        if self._decision is not None:
            if answer.cmd in (Status.ESCROW, Status.HOLDING):
                self._decide(self._decision)  # the cabinet's stack or return never reached the validator: again
            else:
                self._decision = None  # the escrow ended (a power up, a return by the validator itself)
        for action in actions:
            if action == "reset":
                self._counters["resets_sent"] += 1
                self._command(Frame(Cmd.RESET))
            elif action == "configure":
                self._configure()
            elif action == "return":
                self._command(Frame(Cmd.RETURN))

    def _configure(self) -> None:
        """Send the cabinet's settings: which notes, tickets or not, and inhibit when nothing is enabled."""
        with self._settings_lock:
            notes, tickets = self._notes, self._tickets
        self._counters["configures"] += 1
        self._command(Frame(Cmd.ENABLE_DENOMINATIONS, denomination_mask(notes, self.table)))
        self._command(Frame(Cmd.BAR_INHIBIT, bytes(((0 if notes else 0x01) | (0 if tickets else 0x02),))))
        self._command(Frame(Cmd.INHIBIT, b"\x00" if notes or tickets else b"\x01"))

    def _decide(self, frame: Frame) -> None:
        """Send the cabinet's STACK or RETURN; if the validator never answers (the line is down), keep it to send
        again while the validator still reports the item in escrow: a note must not wait there for ever."""
        self._decision = None if self._command(frame) else frame

    def _command(self, frame: Frame) -> bool:
        """Send a command until the validator answers it (ACK for operations, the echo for settings); False when it
        never answered."""
        for attempt in range(self.timing.command_tries):
            if attempt:
                self._counters["command_retries"] += 1
            self._counters["commands_sent"] += 1
            answer = self._exchange(frame)
            if answer is None:
                continue
            self._answered()
            if answer.cmd == Status.INVALID_COMMAND:
                self._counters["invalid_commands"] += 1
                log.info("validator refused %s (invalid command in its state)", frame)
            elif answer.cmd != Status.ACK and answer != frame:
                log.info("validator answered %s with %s", frame, answer)
            return True
        self._counters["command_failures"] += 1
        log.warning("validator did not answer %s after %d tries", frame, self.timing.command_tries)
        return False

    def _send(self, frame: Frame) -> None:
        port = self._port
        if port is None:
            raise serial.SerialException("the line is closed")
        port.write(encode(frame))

    def _exchange(self, frame: Frame) -> Frame | None:
        """Send `frame` and read the validator's answer: None when none comes whole within the response timeout."""
        port = self._port
        if port is None:
            raise serial.SerialException("the line is closed")
        port.reset_input_buffer()  # a late answer to an earlier frame must not pass for this one's
        dropped = self._reader.clear()
        if dropped:
            self._counters["noise_bytes"] += dropped
        port.write(encode(frame))
        deadline = time.monotonic() + self.timing.response_timeout
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                return None
            # The port's read timeout stays as opened (a short slice): setting it reconfigures the line, and a
            # pty with even parity refuses that (EINVAL) once it is open.
            data = port.read(max(1, port.in_waiting))
            if not data:
                continue
            for msg in self._reader.feed(data):
                if isinstance(msg, Frame):
                    return msg
                self._counters["bad_frames"] += 1
                log.debug("validator line: %s", msg)

    def _silent(self) -> None:
        self._missed += 1
        if not self._offline and self._missed >= self.timing.offline_after:
            self._offline = True
            self._tracker.on_contact_lost()
            log.warning("validator %s offline: no answer to %d polls", self.url, self._missed)
            self._dispatch([ValidatorFault("offline")])

    def _answered(self) -> None:
        self._counters["answers"] += 1
        self._missed = 0
        if self._offline:
            self._offline = False
            log.info("validator %s answers again", self.url)
            self._dispatch([ValidatorCleared("offline")])

    def _count(self, name: str) -> None:
        self._counters[name] += 1

    def _publish(self) -> None:
        counters = dict(self._counters)
        counters.update(self._tracker.counters)
        self._publish_counters(counters)

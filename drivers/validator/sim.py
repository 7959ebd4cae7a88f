"""Simulated JCM ID-003 bill validator: answers the host's frames on a pseudo-terminal (or TCP), with fault switches.

In-process use (the cabinet's `sim` port, the demo, the tests):

    sim = ValidatorSim(country="USD")
    url = sim.open_pty()                  # or sim.listen_tcp(0) -> "socket://127.0.0.1:PORT"
    sim.start()
    ValidatorDriver(url, on_event).start()   # the real host driver over the real pty
    sim.insert_note(2000)                 # a $20 note: accepting, then escrow
    sim.insert_ticket("123456789012345678")
    sim.set_jam(True); sim.power_loss(); sim.set_offline(True)   # faults

ID-003 is polled: the validator speaks only when spoken to, so the simulator is a pure state machine
(`ValidatorDevice`) stepped by the host's frames: an item moves one step on each status request (accepting ->
escrow; stacking -> vend valid, held until the host's ACK -> stacked -> idling). Nothing reads the clock and
nothing is random: the same frames give the same answers.
"""

from __future__ import annotations

import json
import os
import select
import threading
from dataclasses import dataclass, field
from typing import Callable

from drivers.simport import PtyEnd, TcpEnd

from .protocol import (
    BARCODE_DIGITS, NOTE_TABLES, Cmd, Frame, FrameReader, Item, NoteTable, Status, encode, enabled_notes,
    escrow_data,
)

__all__ = ["ValidatorDevice", "ValidatorSim", "SimError", "SimFaults", "VERSION", "COMMANDS_HELP"]

VERSION = b"SIM(USA)-CROUPIER ID003-05V001-00 26NOV26 0000"
_SETTINGS = {Cmd.ENABLE_DENOMINATIONS: 2, Cmd.SECURITY: 2, Cmd.COMMUNICATION_MODE: 1, Cmd.INHIBIT: 1,
             Cmd.DIRECTION: 1, Cmd.OPTIONAL_FUNCTION: 2, Cmd.BARCODE_FUNCTION: 2, Cmd.BAR_INHIBIT: 1}
_SETTING_STATUS = {cmd - 0x40: cmd for cmd in _SETTINGS}  # 0x80.. asks for 0xC0..
_IN_ACCEPTOR = ("accepting", "escrow", "returning", "holding")
_IN_STACKER = ("stacking", "vend_valid")
_FAULT_ORDER = (Status.STACKER_OPEN, Status.STACKER_FULL, Status.JAM_IN_ACCEPTOR, Status.JAM_IN_STACKER,
                Status.CHEATED, Status.FAILURE)


COMMANDS_HELP = """\
note CENTS               a note at the slot (an amount the firmware lacks is rejected as unknown)
ticket BARCODE           a ticket with this 18-digit validation number at the slot
jam on|off               jam the note path (in the stacker if a note is stacking) or clear it
full on|off              the stacker is full, or emptied
stacker open|closed      the cash box is out, or back in
cheat on|off             a cheat detected, or cleared
failure on|off           a hardware failure, or repaired
stall on|off             hold the item where it is (stacking, returning)
power off|on|cycle       lose power (answers nothing), get it back (reports power up), or both at once
offline on|off           the line goes quiet, or comes back
corrupt N | drop N       garble or lose the next N answers
garbage N                N bytes of line noise before the next answer
status                   one line of JSON: phase, item, settings, faults, counters
help                     this list"""


class SimError(RuntimeError):
    """A request the simulated validator refuses (a note while inhibited, an item while one is inside, ...)."""


@dataclass
class SimFaults:
    """Line faults: counts apply to the validator's next N answers."""
    corrupt: int = 0   # flip one bit in each
    drop: int = 0      # never send them
    garbage: bytes = b""  # sent before the next answer (line noise)


@dataclass
class ValidatorDevice:
    """The validator's state machine: `receive(frame)` returns its answer (None: ID-003 answers nothing, e.g. the
    host's ACK). Not thread-safe; ValidatorSim holds a lock around it."""

    table: NoteTable
    phase: str = "idle"
    item: Item | None = None
    reject_code: int = 0
    power_code: int | None = Status.POWER_UP  # a validator comes up reporting power up until the host resets it
    stall: bool = False                     # the item stops where it is (to catch it mid-stack)
    faults: set[int] = field(default_factory=set)
    settings: dict[int, bytes] = field(default_factory=dict)
    counters: dict[str, int] = field(default_factory=lambda: dict.fromkeys(
        ("frames_in", "frames_out", "status_requests", "acks", "stacked", "returned", "rejected", "resets",
         "invalid_commands", "power_ups", "returned_on_power_up", "stacked_on_power_up"), 0))
    stacked_items: list[Item] = field(default_factory=list)
    returned_items: list[Item] = field(default_factory=list)

    def __post_init__(self) -> None:
        self._default_settings()

    def _default_settings(self) -> None:
        # After power up a validator takes nothing until the host configures it.
        self.settings = {cmd: bytes(n) for cmd, n in _SETTINGS.items()}
        self.settings[Cmd.INHIBIT] = b"\x01"

    # ---- the host's frames ---------------------------------------------------------------------------------

    def receive(self, frame: Frame) -> Frame | None:
        self.counters["frames_in"] += 1
        cmd = frame.cmd
        if cmd == Cmd.STATUS_REQUEST:
            self.counters["status_requests"] += 1
            return self._status()
        if cmd == Cmd.ACK:
            if self.phase == "vend_valid" and self.power_code is None:
                self.counters["acks"] += 1
                self.phase = "stacked"
            return None
        if cmd == Cmd.RESET:
            return self._reset()
        if self.power_code is not None and cmd in (Cmd.STACK_1, Cmd.STACK_2, Cmd.RETURN, Cmd.HOLD):
            return self._invalid()
        if cmd in (Cmd.STACK_1, Cmd.STACK_2):
            if self.phase not in ("escrow", "holding") or self._fault() is not None:
                return self._invalid()
            self.phase = "stacking"
            return Frame(Status.ACK)
        if cmd == Cmd.RETURN:
            if self.phase not in ("escrow", "holding") or self._fault() is not None:
                return self._invalid()
            self.phase = "returning"
            return Frame(Status.ACK)
        if cmd == Cmd.HOLD:
            if self.phase not in ("escrow", "holding"):
                return self._invalid()
            self.phase = "holding"
            return Frame(Status.ACK)
        if cmd == Cmd.WAIT:
            return Frame(Status.ACK)
        if cmd in _SETTINGS:
            if len(frame.data) != _SETTINGS[Cmd(cmd)]:
                return self._invalid()
            self.settings[cmd] = frame.data
            return Frame(cmd, frame.data)  # setting commands are answered by their echo
        if cmd in _SETTING_STATUS:
            setting = _SETTING_STATUS[cmd]
            return Frame(cmd, self.settings[setting])
        if cmd == Cmd.VERSION_REQUEST:
            return Frame(cmd, VERSION)
        return self._invalid()

    def _invalid(self) -> Frame:
        self.counters["invalid_commands"] += 1
        return Frame(Status.INVALID_COMMAND)

    def _reset(self) -> Frame:
        self.counters["resets"] += 1
        if self.power_code == Status.POWER_UP_BILL_IN_ACCEPTOR and self.item is not None:
            # ID-003: a note left in the acceptor by a power loss goes back to the player as the validator starts.
            self.counters["returned_on_power_up"] += 1
            self.returned_items.append(self.item)
        elif self.power_code == Status.POWER_UP_BILL_IN_STACKER and self.item is not None:
            self.counters["stacked_on_power_up"] += 1
            self.stacked_items.append(self.item)
        self.power_code = None
        self.item = None
        self.phase = "initialize"
        self._default_settings()
        return Frame(Status.ACK)

    def _status(self) -> Frame:
        if self.power_code is not None:
            return Frame(self.power_code)
        if self.phase == "initialize":
            self.phase = "idle"
            return Frame(Status.INITIALIZE)
        fault = self._fault()
        if fault is not None:
            return Frame(fault)
        phase = self.phase
        if phase == "accepting":
            assert self.item is not None
            if self.reject_code:
                self.phase = "rejecting"
            else:
                self.phase = "escrow"
            return Frame(Status.ACCEPTING)
        if phase == "escrow":
            assert self.item is not None
            return Frame(Status.ESCROW, escrow_data(self.item, self.table))
        if phase == "holding":
            return Frame(Status.HOLDING)
        if phase == "stacking":
            if not self.stall:
                self.phase = "vend_valid"
            return Frame(Status.STACKING)
        if phase == "vend_valid":
            return Frame(Status.VEND_VALID)  # repeated until the host's ACK
        if phase == "stacked":
            assert self.item is not None
            self.counters["stacked"] += 1
            self.stacked_items.append(self.item)
            self.item, self.phase = None, "idle"
            return Frame(Status.STACKED)
        if phase == "returning":
            if not self.stall:
                assert self.item is not None
                self.counters["returned"] += 1
                self.returned_items.append(self.item)
                self.item, self.phase = None, "idle"
            return Frame(Status.RETURNING)
        if phase == "rejecting":
            code, self.reject_code = self.reject_code, 0
            self.counters["rejected"] += 1
            self.item, self.phase = None, "idle"
            return Frame(Status.REJECTING, bytes((code,)))
        return Frame(Status.DISABLED if self.inhibited else Status.IDLING)

    def _fault(self) -> int | None:
        for status in _FAULT_ORDER:
            if status in self.faults:
                return status
        return None

    # ---- the player and the technician ------------------------------------------------------------------------

    @property
    def inhibited(self) -> bool:
        return self.settings[Cmd.INHIBIT] != b"\x00"

    def insert(self, item: Item) -> None:
        """An item at the slot: it will be accepting at the next status request, then in escrow (or rejected)."""
        if self.power_code is not None or self.phase == "initialize":
            raise SimError("the validator is starting up: it takes nothing yet")
        if self.phase != "idle":
            raise SimError(f"the validator is busy ({self.phase})")
        fault = self._fault()
        if fault is not None:
            raise SimError(f"the validator is in fault ({Status(fault).name.lower()})")
        if self.inhibited:
            raise SimError("the validator is inhibited: the slot takes nothing")
        bar = self.settings[Cmd.BAR_INHIBIT][0]
        if item.barcode is not None:
            if len(item.barcode) != BARCODE_DIGITS or not (item.barcode.isascii() and item.barcode.isdigit()):
                raise SimError(f"a ticket's barcode is {BARCODE_DIGITS} digits, got {item.barcode!r}")
            self.reject_code = 0x79 if bar & 0x02 else 0
        elif item.note_cents not in self.table.values():
            self.reject_code = 0x76  # not a note this firmware knows
        elif bar & 0x01 or item.note_cents not in enabled_notes(self.settings[Cmd.ENABLE_DENOMINATIONS], self.table):
            self.reject_code = 0x79
        else:
            self.reject_code = 0
        self.item, self.phase = item, "accepting"

    def power_up(self) -> None:
        """Power comes back: the validator reports where the item was when it went (40 none, 41 in the acceptor,
        42 in the stacker) until the host resets it. A note already past vend valid is in the cash box."""
        self.counters["power_ups"] += 1
        if self.item is not None and self.phase in _IN_ACCEPTOR:
            self.power_code = Status.POWER_UP_BILL_IN_ACCEPTOR
        elif self.item is not None and self.phase in _IN_STACKER:
            self.power_code = Status.POWER_UP_BILL_IN_STACKER
        else:
            if self.item is not None and self.phase == "stacked":
                self.counters["stacked"] += 1
                self.stacked_items.append(self.item)
            self.item = None
            self.power_code = Status.POWER_UP
        if self.power_code == Status.POWER_UP:
            self.phase = "idle"
        self.reject_code = 0
        self.stall = False
        self.faults.discard(Status.JAM_IN_ACCEPTOR)  # a restart clears a jam; the stacker's state is physical
        self.faults.discard(Status.JAM_IN_STACKER)
        self.faults.discard(Status.FAILURE)
        self._default_settings()


class ValidatorSim:
    """A simulated ID-003 validator on a pty or TCP port. Thread-safe: every public method may be called from any
    thread."""

    def __init__(self, country: str = "USD", *, powered_up: bool = False) -> None:
        """`powered_up`: start as if the host had already reset it (idle, inhibited) instead of reporting power up."""
        if country not in NOTE_TABLES:
            raise SimError(f"no note table for {country!r} (known: {', '.join(NOTE_TABLES)})")
        self.country = country
        self.device = ValidatorDevice(NOTE_TABLES[country])
        if powered_up:
            self.device.power_code = None
        self.faults = SimFaults()
        self.offline = False
        self.powered = True
        self._lock = threading.RLock()
        self._changed = threading.Condition(self._lock)
        self._reader = FrameReader()
        self._transport: PtyEnd | TcpEnd | None = None
        self._thread: threading.Thread | None = None
        self._stop = threading.Event()
        self._wake_r, self._wake_w = os.pipe()
        self.counters = dict.fromkeys(("bad_frames", "ignored_frames", "corrupted", "dropped", "garbage_bytes"), 0)

    # ---- transports ------------------------------------------------------------------------------------------

    def open_pty(self, link: str | None = None) -> str:
        """Serve on a new pseudo-terminal; returns the path the host opens (`link`, a symlink to it, if given)."""
        with self._lock:
            self._transport = PtyEnd(link)
            return self._transport.url

    def listen_tcp(self, port: int = 0, host: str = "127.0.0.1") -> str:
        """Serve on a loopback TCP port (0: any free port); returns the pyserial URL socket://HOST:PORT."""
        with self._lock:
            self._transport = TcpEnd(port, host)
            return self._transport.url

    @property
    def url(self) -> str | None:
        with self._lock:
            return self._transport.url if self._transport else None

    def start(self) -> ValidatorSim:
        if self._transport is None:
            self.open_pty()
        if self._thread is None:
            self._stop.clear()
            self._thread = threading.Thread(target=self._run, name="validator-sim", daemon=True)
            self._thread.start()
        return self

    def stop(self) -> None:
        if self._stop.is_set() and self._thread is None and self._transport is None:
            return  # stopped already (its wake pipe is closed)
        self._stop.set()
        try:
            os.write(self._wake_w, b"x")
        except OSError:
            pass
        if self._thread is not None:
            self._thread.join(5)
            self._thread = None
        with self._lock:
            if self._transport is not None:
                self._transport.close()
                self._transport = None
        for fd in (self._wake_r, self._wake_w):
            try:
                os.close(fd)
            except OSError:
                pass

    def __enter__(self) -> ValidatorSim:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # ---- the player ------------------------------------------------------------------------------------------

    def insert_note(self, cents: int) -> None:
        """A note at the slot. A note the firmware does not know (any other amount) is rejected; a disabled one too."""
        with self._lock:
            self.device.insert(Item(note_cents=cents))
            self._changed.notify_all()

    def insert_ticket(self, barcode: str) -> None:
        """A ticket with this 18-digit validation number at the slot (rejected while tickets are disabled)."""
        with self._lock:
            self.device.insert(Item(barcode=barcode))
            self._changed.notify_all()

    # ---- faults ----------------------------------------------------------------------------------------------

    def set_jam(self, on: bool) -> None:
        """Jam the note path (in the stacker if an item is stacking, else in the acceptor), or clear it."""
        with self._lock:
            where = Status.JAM_IN_STACKER if self.device.phase in _IN_STACKER else Status.JAM_IN_ACCEPTOR
            self._set_fault(where if on else None, (Status.JAM_IN_ACCEPTOR, Status.JAM_IN_STACKER))

    def set_stacker_full(self, on: bool) -> None:
        with self._lock:
            self._set_fault(Status.STACKER_FULL if on else None, (Status.STACKER_FULL,))

    def set_stacker_open(self, on: bool) -> None:
        """The cash box is out (open) or back in."""
        with self._lock:
            self._set_fault(Status.STACKER_OPEN if on else None, (Status.STACKER_OPEN,))

    def set_cheat(self, on: bool) -> None:
        """The validator detected a cheat (a string, a light attack), or the attendant cleared it."""
        with self._lock:
            self._set_fault(Status.CHEATED if on else None, (Status.CHEATED,))

    def set_failure(self, on: bool) -> None:
        with self._lock:
            self._set_fault(Status.FAILURE if on else None, (Status.FAILURE,))

    def _set_fault(self, add: int | None, clear: tuple[int, ...]) -> None:
        self.device.faults.difference_update(clear)
        if add is not None:
            self.device.faults.add(add)
        self._changed.notify_all()

    def set_stall(self, on: bool) -> None:
        """Hold the item where it is (stacking or returning) until released: to cut the power mid-stack."""
        with self._lock:
            self.device.stall = on

    def power_off(self) -> None:
        """The validator loses power: it answers nothing until `power_on`."""
        with self._lock:
            self.powered = False

    def power_on(self) -> None:
        """Power is back: the validator reports power up (with the bill in the acceptor or stacker if one was
        inside) until the host resets it."""
        with self._lock:
            if not self.powered:
                self.powered = True
                self.device.power_up()
                self._changed.notify_all()

    def power_loss(self) -> None:
        """Power off and on again between two polls."""
        with self._lock:
            self.power_off()
            self.power_on()

    def set_offline(self, on: bool) -> None:
        """The line goes quiet (a cut cable): nothing is answered, the validator's state is kept."""
        with self._lock:
            self.offline = on

    def inject(self, data: bytes) -> None:
        """Line noise, sent before the next answer."""
        with self._lock:
            self.faults.garbage += data

    # ---- waiting and looking (tests, the demo) -----------------------------------------------------------------

    @property
    def phase(self) -> str:
        with self._lock:
            return "power_up" if self.device.power_code is not None else self.device.phase

    def wait_until(self, predicate: Callable[[ValidatorSim], bool], timeout: float) -> bool:
        """Wait until `predicate(sim)` holds (checked after every frame the host sends and every control call)."""
        with self._changed:
            return self._changed.wait_for(lambda: predicate(self), timeout)

    def status(self) -> dict[str, object]:
        with self._lock:
            d = self.device
            return {"url": self.url, "phase": self.phase, "item": d.item, "inhibited": d.inhibited,
                    "notes": sorted(enabled_notes(d.settings[Cmd.ENABLE_DENOMINATIONS], d.table)),
                    "tickets": not d.settings[Cmd.BAR_INHIBIT][0] & 0x02,
                    "faults": sorted(Status(f).name.lower() for f in d.faults), "powered": self.powered,
                    "offline": self.offline, "counters": {**d.counters, **self.counters},
                    "stacked": list(d.stacked_items), "returned": list(d.returned_items)}

    # ---- control commands (the demo, an attendant's console) ----------------------------------------------------

    def command(self, line: str) -> str:
        """Carry out one text command (COMMANDS_HELP); returns 'ok ...' or 'error: ...'."""
        words = line.split()
        if not words:
            return "ok"
        verb, args = words[0].lower(), [w.lower() for w in words[1:]]
        switches: dict[str, Callable[[bool], None]] = {
            "jam": self.set_jam, "full": self.set_stacker_full, "cheat": self.set_cheat, "failure": self.set_failure,
            "stall": self.set_stall, "offline": self.set_offline}
        try:
            if verb == "note" and len(args) == 1:
                self.insert_note(int(args[0]))
            elif verb == "ticket" and len(args) == 1:
                self.insert_ticket(args[0])
            elif verb in switches and args in (["on"], ["off"]):
                switches[verb](args == ["on"])
            elif verb == "stacker" and args in (["open"], ["closed"]):
                self.set_stacker_open(args == ["open"])
            elif verb == "power" and args in (["off"], ["on"], ["cycle"]):
                {"off": self.power_off, "on": self.power_on, "cycle": self.power_loss}[args[0]]()
            elif verb in ("corrupt", "drop") and len(args) == 1 and int(args[0]) >= 0:
                with self._lock:
                    setattr(self.faults, verb, getattr(self.faults, verb) + int(args[0]))
            elif verb == "garbage" and len(args) == 1 and int(args[0]) >= 0:
                # a fixed pattern with SYNC bytes and wild lengths in it: deterministic, and as nasty as noise gets
                self.inject(bytes((0xFC, 0xFF, 0x13, 0xFC, 0x02, 0x55)[i % 6] for i in range(int(args[0]))))
            elif verb == "status" and not args:
                return "ok " + json.dumps(self.status(), sort_keys=True, default=str)
            elif verb == "help":
                return "ok\n" + COMMANDS_HELP
            else:
                return f"error: unknown command {line.strip()!r} (try `help`)"
        except (SimError, ValueError) as exc:
            return f"error: {exc}"
        return f"ok {line.strip()}"

    # ---- the line --------------------------------------------------------------------------------------------

    def _run(self) -> None:
        while not self._stop.is_set():
            with self._lock:
                transport = self._transport
            if transport is None:
                return
            try:
                ready, _, _ = select.select(transport.fds() + [self._wake_r], [], [], 0.5)
            except (OSError, ValueError):
                return
            if self._wake_r in ready:
                os.read(self._wake_r, 64)
            for fd in ready:
                if fd == self._wake_r:
                    continue
                data = transport.read(fd)
                if data:
                    self._receive(transport, data)

    def _receive(self, transport: PtyEnd | TcpEnd, data: bytes) -> None:
        with self._lock:
            for msg in self._reader.feed(data):
                if not isinstance(msg, Frame):
                    self.counters["bad_frames"] += 1  # ID-003: a garbled frame is not answered; the host resends
                    continue
                if not self.powered or self.offline:
                    self.counters["ignored_frames"] += 1
                    continue
                answer = self.device.receive(msg)
                self._changed.notify_all()
                if answer is None:
                    continue
                out = encode(answer)
                if self.faults.drop:
                    self.faults.drop -= 1
                    self.counters["dropped"] += 1
                    continue
                if self.faults.corrupt:
                    self.faults.corrupt -= 1
                    self.counters["corrupted"] += 1
                    out = out[:3] + bytes((out[3] ^ 0x01,)) + out[4:] if len(out) > 5 else out[:-1] + bytes(
                        (out[-1] ^ 0x01,))
                if self.faults.garbage:
                    self.counters["garbage_bytes"] += len(self.faults.garbage)
                    out, self.faults.garbage = self.faults.garbage + out, b""
                self.device.counters["frames_out"] += 1
                transport.write(out)

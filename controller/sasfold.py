"""SAS's own state beside the cabinet's (the exception queue, real-time reporting, sound, clock), folded from the cabinet's typed journal records.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, Iterable, Mapping

from controller.cabinetrecords import (
    CabinetDoor, CabinetRecord, CabinetStart, Cashout, Credit, DeviceCleared, DeviceFault, Link, NoteRejected,
    NoteReturned, NoteStacked, PickRecord, SasAck, SasBills, SasRte, SasSound, SasTicketing, SasTime, SasValidationId,
    SpinRecord, TicketInAuthorised, TicketInInserted, TicketInRefused, TicketInReturned, TicketInStacked,
    TicketOutFailed, TicketOutPrinted, TicketOutRequested, TicketOutValidation, cabinet_record,
)
from controller.cabinetstate import DoorChanged, LockupCleared, LockupRaised, ProgressiveWon

__all__ = ["SasState", "Exc", "SasNote", "raised", "sas_step", "bcd", "from_bcd", "PRIORITY", "EXCEPTIONS",
           "QUEUE_SIZE", "BONUS_BY", "Validation", "Redemption", "Ticketing", "BILL_ACCEPTED", "BILL_COUNTRY",
           "bill_code", "BILL_DOLLARS", "BILL_CODES", "VALIDATION_BUFFER", "VALIDATION_READ", "enhanced_validation",
           "next_enhanced_validation", "ticket_lines"]

# Exception codes (SAS general poll), the ones this EGM raises.
EXCEPTIONS = {
    0x11: "slot door opened", 0x12: "slot door closed", 0x13: "drop door opened", 0x14: "drop door closed",
    0x15: "card cage opened", 0x16: "card cage closed", 0x17: "AC power applied", 0x18: "AC power lost",
    0x19: "cashbox door opened", 0x1A: "cashbox door closed", 0x1D: "belly door opened", 0x1E: "belly door closed",
    0x20: "general tilt", 0x21: "coin in tilt", 0x22: "coin out tilt", 0x23: "hopper empty", 0x24: "extra coin paid",
    0x2D: "reverse coin in", 0x3C: "operator changed options", 0x40: "reel tilt", 0x51: "hand pay pending",
    0x52: "hand pay reset", 0x53: "no progressive information for 5 seconds", 0x54: "progressive win",
    0x66: "cash out button pressed", 0x70: "exception buffer overflow", 0x7C: "legacy bonus pay awarded",
    0x7E: "game started", 0x7F: "game ended",
    # notes and tickets
    0x1B: "cashbox was removed", 0x1C: "cashbox was installed", 0x27: "cashbox full detected", 0x28: "bill jam",
    0x29: "bill acceptor hardware failure", 0x2A: "reverse bill detected", 0x2B: "bill rejected",
    0x2C: "counterfeit bill detected", 0x3D: "cash out ticket has been printed", 0x3F: "validation ID not configured",
    0x47: "$1.00 bill accepted", 0x48: "$5.00 bill accepted", 0x49: "$10.00 bill accepted",
    0x4A: "$20.00 bill accepted", 0x4B: "$50.00 bill accepted", 0x4C: "$100.00 bill accepted",
    0x4D: "$2.00 bill accepted", 0x4E: "$500.00 bill accepted", 0x4F: "bill accepted", 0x50: "$200.00 bill accepted",
    0x57: "system validation request", 0x60: "printer communication error", 0x61: "printer paper out error",
    0x67: "ticket has been inserted", 0x68: "ticket transfer complete", 0x74: "printer paper low",
    0x75: "printer power off", 0x76: "printer power on", 0x78: "printer carriage jam",
}
# Bill accepted by note value in cents, without real-time event reporting (SAS 6.02 exceptions 47-50; Aristocrat's
# Aristocrat.Monaco.Sas.Contracts/Client/SASBillException.cs); any other note is the generic 4F. With real-time event
# reporting every note is 4F with its country, denomination code and count (BillDataExceptionBuilder.cs).
BILL_ACCEPTED = {100: 0x47, 500: 0x48, 1000: 0x49, 2000: 0x4A, 5000: 0x4B, 10000: 0x4C, 200: 0x4D, 50000: 0x4E,
                 20000: 0x50}
# Table C-6's bill denomination codes by note value in cents (Aristocrat's BillDenominationCodes, Utilities.cs)
BILL_DOLLARS = (1, 2, 5, 10, 20, 25, 50, 100, 200, 250, 500, 1000, 2000, 2500, 5000, 10000, 20000, 25000, 50000,
                 100000, 200000, 250000, 500000, 1000000)
BILL_CODES = {d * 100: i for i, d in enumerate(BILL_DOLLARS)}
BILL_COUNTRY = 37  # Table C-6's country code of the United States (Aristocrat's BillAcceptorCountryCode 0x25)
VALIDATION_BUFFER = 31  # long poll 4D's buffer: indexes 01-1F (Aristocrat's SasConstants.MaxValidationIndex)
VALIDATION_READ = 0x4D  # the SasAck code of a validation the host read with 4D 00 and acknowledged
# DeviceFault/DeviceCleared codes to exceptions (Aristocrat's NoteAcceptorHardwareFaultConsumer.cs,
# PrinterHardwareFaultConsumer.cs, PrinterDisconnectedConsumer.cs, PrinterConnectedConsumer.cs,
# PrinterHardwareWarningConsumer.cs, NoteAcceptorHardwareFaultClearConsumer.cs)
_DEVICE_FAULTS = {("validator", "jam"): 0x28, ("validator", "stacker_full"): 0x27, ("validator", "stacker_open"): 0x1B,
                  ("validator", "cheat"): 0x2A, ("validator", "failure"): 0x29, ("validator", "offline"): 0x29,
                  ("printer", "paper_out"): 0x61, ("printer", "jam"): 0x78, ("printer", "head_open"): 0x20,
                  ("printer", "offline"): 0x75, ("printer", "paper_low"): 0x74}
_DEVICE_CLEARED = {("validator", "stacker_open"): 0x1C, ("printer", "offline"): 0x76}
# Reported before any other queued exception (they ask the floor to act on money).
PRIORITY = frozenset([0x3D, 0x3E, 0x3F, 0x51, 0x52, 0x57, 0x67, 0x68])
# Among priority exceptions, the order SAS 6.02 2.2.1 gives (Aristocrat's SasPriorityExceptionQueue.cs); hand pay
# pending and reset keep the order they happened in.
_RANK = {0x57: 0, 0x67: 1, 0x68: 2, 0x3F: 3, 0x3D: 4, 0x3E: 5, 0x51: 6, 0x52: 6}
QUEUE_SIZE = 32

_DOORS = {"main": (0x11, 0x12), "slot": (0x11, 0x12), "drop": (0x13, 0x14), "logic": (0x15, 0x16),
          "card_cage": (0x15, 0x16), "cash_box": (0x19, 0x1A), "cashbox": (0x19, 0x1A), "belly": (0x1D, 0x1E)}
_LOCKUPS = {"coin_in_jam": 0x21, "reverse_coin": 0x2D, "hopper_empty": 0x23, "hopper_jam": 0x22,
            "hopper_runaway": 0x24, "reel_misindex": 0x40, "hand_pay": 0x51, "jackpot": 0x51}
BONUS_BY = "sas:legacy_bonus"


@dataclass(frozen=True, slots=True)
class Exc:
    id: str          # "seq:index" of the journal record that raised it
    code: int
    data: bytes = b""  # what real-time event reporting adds

    @property
    def priority(self) -> bool:
        return self.code in PRIORITY


@dataclass(frozen=True, slots=True)
class Validation:
    """One validated cash-out ticket in long poll 4D's buffer."""

    n: int                  # the how-manieth validation of this EGM, from 1: its buffer index is (n - 1) % 31 + 1
    number: int             # the cabinet's ticket number
    validation: str         # 18 digits: the system id (00: secure enhanced) and 16 digits
    cents: int
    restricted: bool
    when: float             # the journal's time of the validation (seconds)
    expires: int = 0        # days (0: not given)
    printed: bool = False
    read: bool = False      # the host read it with 4D 00 and acknowledged it

    @property
    def index(self) -> int:
        return (self.n - 1) % VALIDATION_BUFFER + 1


@dataclass(frozen=True, slots=True)
class Redemption:
    """The ticket in the validator's redemption cycle (long polls 70 and 71), by its machine status (Table 15.12d as
    Aristocrat's RedemptionStatusCode lists it): 20 waiting for 71, 40 pending, 00/01/02 redeemed, 80+ rejected."""

    validation: str
    status: int = 0x20
    cents: int = 0
    code: int | None = None        # the host's transfer code
    done: bool = False             # stacked or returned: the cycle is over


@dataclass(frozen=True, slots=True)
class Ticketing:
    """What the host set with 7B, 7C and 7D."""

    status: int = 0x0021            # 7B's bits: printer as cash-out device, ticket redemption
    cashable_expiry: int = 30       # days
    restricted_expiry: int = 30
    host_id: int = 0
    location: str = ""
    address1: str = ""
    address2: str = ""
    restricted_title: str = ""
    debit_title: str = ""


@dataclass(frozen=True)
class SasState:
    """What SAS keeps beside the cabinet's own state, folded from the same journal."""

    queue: tuple[Exc, ...] = ()
    rte: bool = False
    sound: bool = True
    clock_offset: float = 0.0        # seconds the host's clock is ahead of ours (long poll 7F)
    games_since_power: int = 0
    games_since_door: int = 0
    overflowed: bool = False
    starts: int = 0
    validation_mode: str = "system"  # [sas] validation: "system" (57/58), "enhanced" (4C) or "none"
    validation_id: tuple[int, int] | None = None  # (machine validation id, the next ticket's sequence number)
    validation_set: tuple[int, int] | None = None  # the journal's SasValidationId as last written (4C's, less 1)
    requested: tuple[tuple[int, int, bool], ...] = ()  # tickets out awaiting a validation: (number, cents, restricted)
    validations: tuple[Validation, ...] = ()      # the last 31 (4D)
    validated: int = 0               # validations so far
    redemption: Redemption | None = None
    bills: bool = True               # 06/07
    notes: tuple[int, ...] | None = None  # 08: the notes enabled (cents); None: the cabinet's own
    last_bill: int | None = None     # cents of the last note stacked (48)
    ticketing: Ticketing = Ticketing()

    def next(self) -> Exc | None:
        """The exception the next general poll reports: priority ones first (in SAS's order), then in order."""
        best: tuple[int, int] | None = None
        for i, e in enumerate(self.queue):
            if e.priority and (best is None or _RANK.get(e.code, 9) < best[0]):
                best = (_RANK.get(e.code, 9), i)
        if best is not None:
            return self.queue[best[1]]
        return self.queue[0] if self.queue else None

    @property
    def waits_for_host(self) -> bool:
        """Whether a ticket out waits for the host's validation number: system validation, or secure enhanced
        validation before the host set a validation id (the cabinet then asks the host, as controller/cabinettito.py
        does, rather than print nothing)."""
        return self.validation_mode == "system" or self.validation_mode == "enhanced" and self.validation_id is None

    @property
    def pending_cashout(self) -> tuple[int, int, bool] | None:
        """The ticket out waiting for the host's validation number, if any."""
        if not self.waits_for_host or not self.requested:
            return None
        return self.requested[-1]


@dataclass(frozen=True, slots=True)
class SasNote:
    """An effect the cabinet's fold carries for SAS: the record with the states around it."""

    before: Any
    record: dict[str, Any]
    after: Any
    effects: tuple[Any, ...]


def bcd(value: int, size: int) -> bytes:
    """`value` in `size` bytes of packed BCD (a meter past its digits rolls over, as meters do)."""
    digits = f"{max(value, 0) % 10 ** (2 * size):0{2 * size}d}"
    return bytes.fromhex(digits)


def from_bcd(data: bytes) -> int:
    """Packed BCD to an int; ValueError for a nibble above 9 (a garbled field: the poll is NACKed)."""
    digits = data.hex()
    if not digits.isdigit():
        raise ValueError(f"not BCD: {digits or 'empty'}")
    return int(digits)


def enhanced_validation(machine: int, sequence: int) -> str:
    """The 18-digit secure enhanced validation number of a ticket given sequence number `sequence` (SAS 6.02 15.14,
    as Aristocrat's SecureEnhancedValidationHandler.cs computes it): A = sequence then machine id, 3 bytes each LSB
    first; B = A0 A1 A0^A2 A1^A3 A0^A4 A1^A5; C = the SAS CRC of each pair of B, LSB first; each half of C (3 bytes,
    LSB first) in 8 BCD digits, its top digit raised by twice its digit sum mod 5; "00", the upper half, the lower."""
    from drivers.sas.crc import crc16

    a = (sequence % 0x1000000).to_bytes(3, "little") + (machine % 0x1000000).to_bytes(3, "little")
    b = bytes([a[0], a[1], a[0] ^ a[2], a[1] ^ a[3], a[0] ^ a[4], a[1] ^ a[5]])
    c = b"".join(crc16(b[i:i + 2]).to_bytes(2, "little") for i in (0, 2, 4))
    halves = []
    for part in (c[3:], c[:3]):
        digits = f"{int.from_bytes(part, 'little'):08d}"
        top = int(digits[0]) + 2 * (sum(map(int, digits)) % 5)
        halves.append(f"{top}{digits[1:]}")
    return "00" + "".join(halves)


def next_enhanced_validation(sas: SasState) -> tuple[int, str] | None:
    """The next ticket's (sequence number, validation number) under secure enhanced validation (the journal's
    SasValidationId holds the next ticket's sequence number); None while no validation id is set."""
    if sas.validation_id is None:
        return None
    machine, sequence = sas.validation_id
    return sequence, enhanced_validation(machine, sequence)


def ticket_lines(t: Ticketing, restricted: bool = False) -> tuple[str, str, int]:
    """What the host set (7B, 7C, 7D) for a ticket the printer prints: (venue, address, days until it expires, 0 for
    never), for drivers/printer's TicketData; empty texts where the host set none (the cabinet's own then)."""
    days = t.restricted_expiry if restricted else t.cashable_expiry
    return t.location, ", ".join(x for x in (t.address1, t.address2) if x), 0 if days >= 9999 else days


def bill_code(cents: int) -> int:
    """A note's bill accepted exception without real-time event reporting: its own code, else the generic 4F."""
    return BILL_ACCEPTED.get(cents, 0x4F)


def raised(before: Any, record: CabinetRecord | Mapping[str, Any], after: Any, effects: Iterable[Any],
           k: int = 1, sas: SasState | None = None) -> list[tuple[int, bytes]]:
    """The exceptions one journal record (typed, or its row's object) raises, as (code, real-time data). `k` turns
    cabinet credits into SAS credits; `sas` is SAS's state before the record (the validation mode, the redemption)."""
    rec = record if isinstance(record, CabinetRecord) else cabinet_record(record)
    sas = sas or SasState()
    out: list[tuple[int, bytes]] = []
    if isinstance(rec, NoteStacked):
        count = dict(after.meters.notes_in).get(rec.cents, 0)
        # real-time data: country code, denomination code (both BCD), count of this note (Aristocrat's
        # BillDataExceptionBuilder.cs); a general poll without real-time reporting sends bill_code alone
        out.append((bill_code(rec.cents), bcd(BILL_COUNTRY, 1) + bcd(BILL_CODES.get(rec.cents, 0), 1) + bcd(count, 4)))
    elif isinstance(rec, NoteRejected):
        out.append((0x2C if "counterfeit" in rec.reason.lower() else 0x2B, b""))
    elif isinstance(rec, NoteReturned):
        out.append((0x2B, b""))  # Aristocrat's NoteAcceptorCurrencyReturnedConsumer.cs: a note returned is rejected
    elif isinstance(rec, DeviceFault) and (rec.device, rec.code) in _DEVICE_FAULTS:
        out.append((_DEVICE_FAULTS[rec.device, rec.code], b""))
    elif isinstance(rec, DeviceCleared) and (rec.device, rec.code) in _DEVICE_CLEARED:
        out.append((_DEVICE_CLEARED[rec.device, rec.code], b""))
    elif isinstance(rec, TicketOutRequested):
        if sas.waits_for_host:
            out.append((0x57, b""))  # the host is asked for a validation number (long polls 57, 58)
    elif isinstance(rec, TicketOutPrinted):
        out.append((0x3D, b""))
    elif isinstance(rec, TicketInInserted):
        out.append((0x67, b""))
    elif isinstance(rec, (TicketInStacked, TicketInReturned)):
        r = sas.redemption
        if r is not None and not r.done and r.validation == rec.validation:
            out.append((0x68, b""))  # the redemption cycle is over, stacked or not (71's status query tells which)
    if isinstance(rec, CabinetStart):
        if before.meters.power_resets:
            out.append((0x18, b""))  # the power went away since the last start
        out.append((0x17, b""))
        if before.meters.power_resets and before.settings != after.settings:
            out.append((0x3C, b""))
    elif isinstance(rec, SpinRecord):
        bet = after.meters.coin_in - before.meters.coin_in
        out.append((0x7E, bcd(bet * k, 2) + bcd(after.meters.coin_in * k, 4) + b"\x00\x00"))
        if after.slot.pending is None:
            out.append((0x7F, bcd(after.last_win * k, 4)))
    elif isinstance(rec, PickRecord):
        out.append((0x7F, bcd(after.last_win * k, 4)))
    elif isinstance(rec, Cashout):
        out.append((0x66, b""))
    elif isinstance(rec, Credit) and rec.by == BONUS_BY:
        # real-time data: multiplier (00: not a multiplied jackpot), multiplied win, tax status, bonus amount
        out.append((0x7C, b"\x00" + bcd(0, 4) + bytes([int(rec.tax or 0)]) + bcd(rec.credits * k, 4)))
    elif isinstance(rec, Link) and not rec.up:
        out.append((0x53, b""))
    for eff in effects:
        if isinstance(eff, DoorChanged):
            codes = _DOORS.get(eff.name, (0x11, 0x12))
            out.append((codes[0] if eff.open else codes[1], b""))
        elif isinstance(eff, LockupRaised) and eff.lockup.kind in _LOCKUPS:
            out.append((_LOCKUPS[eff.lockup.kind], b""))
        elif isinstance(eff, LockupCleared) and eff.lockup.kind in ("hand_pay", "jackpot"):
            out.append((0x52, b""))
        elif isinstance(eff, ProgressiveWon):
            out.append((0x54, b""))
    return out


def _enqueue(sas: SasState, new: list[Exc]) -> SasState:
    queue = list(sas.queue)
    overflowed = sas.overflowed
    for e in new:
        queue.append(e)
        while len(queue) > QUEUE_SIZE:
            # the oldest that is not a priority exception goes; the host is told once (70)
            victim = next((i for i, x in enumerate(queue) if not x.priority and x.code != 0x70), 0)
            del queue[victim]
            if not overflowed:
                overflowed = True
                queue.append(Exc(f"{e.id}:overflow", 0x70))
    return replace(sas, queue=tuple(queue), overflowed=overflowed and any(x.code == 0x70 for x in queue))


def sas_step(sas: SasState, seq: int, before: Any, record: CabinetRecord | Mapping[str, Any], after: Any,
             effects: Iterable[Any], k: int = 1, when: float = 0.0) -> SasState:
    """The SAS state after one journal record (pure: recovery and the live cabinet both fold with it), by its class.
    `when`: the record's journal time (what long poll 4D reports of a validation)."""
    rec = record if isinstance(record, CabinetRecord) else cabinet_record(record)
    if isinstance(rec, SasAck):
        gone = set(rec.ids)
        if rec.code == VALIDATION_READ:
            return replace(sas, validations=tuple(replace(v, read=True) if f"4D:{v.n}" in gone else v
                                                  for v in sas.validations))
        return replace(sas, queue=tuple(e for e in sas.queue if e.id not in gone))
    if isinstance(rec, SasSound):
        return replace(sas, sound=bool(rec.on))
    if isinstance(rec, SasRte):
        return replace(sas, rte=bool(rec.on))
    if isinstance(rec, SasTime):
        return replace(sas, clock_offset=float(rec.offset))
    if isinstance(rec, SasValidationId):
        vid = (int(rec.machine), int(rec.sequence))
        return replace(sas, validation_id=vid, validation_set=vid)
    if isinstance(rec, SasBills):
        return replace(sas, bills=bool(rec.enabled), notes=sas.notes if rec.notes is None else tuple(rec.notes))
    if isinstance(rec, SasTicketing):
        changes = {f: getattr(rec, f) for f in Ticketing.__dataclass_fields__ if getattr(rec, f, None) is not None}
        return replace(sas, ticketing=replace(sas.ticketing, **changes))
    if rec.KIND == "sas":  # disable, enable and signature leave SAS's own state as it is
        return sas
    new = [Exc(f"{seq}:{i}", code, data) for i, (code, data) in enumerate(raised(before, rec, after, effects, k, sas))]
    if isinstance(rec, CabinetStart):
        sas = replace(sas, games_since_power=0, starts=sas.starts + 1)
    elif isinstance(rec, SpinRecord):
        sas = replace(sas, games_since_power=sas.games_since_power + 1, games_since_door=sas.games_since_door + 1)
    elif isinstance(rec, CabinetDoor) and rec.name in ("main", "slot") and not rec.open:
        sas = replace(sas, games_since_door=0)
    elif isinstance(rec, NoteStacked):
        sas = replace(sas, last_bill=int(rec.cents))
    elif isinstance(rec, (TicketOutRequested, TicketOutValidation, TicketOutFailed, TicketOutPrinted)):
        sas = _ticket_out(sas, rec, when)
    elif isinstance(rec, (TicketInInserted, TicketInAuthorised, TicketInRefused, TicketInStacked, TicketInReturned)):
        sas = replace(sas, redemption=_ticket_in(sas.redemption, rec))
    return _enqueue(sas, new) if new else sas


def _ticket_out(sas: SasState, rec: CabinetRecord, when: float) -> SasState:
    if isinstance(rec, TicketOutRequested):
        return replace(sas, requested=(*sas.requested, (int(rec.number), int(rec.cents), bool(rec.restricted))))
    number = int(getattr(rec, "number"))
    left = tuple(r for r in sas.requested if r[0] != number)
    if isinstance(rec, TicketOutValidation):
        asked = next((r for r in sas.requested if r[0] == number), (number, 0, False))
        v = Validation(sas.validated + 1, number, str(rec.validation), asked[1], asked[2], when, int(rec.expires or 0))
        vid = sas.validation_id
        if rec.by == "enhanced" and vid is not None:  # the sequence number is used up by the ticket
            vid = (vid[0], (vid[1] + 1) % 0x1000000)
        return replace(sas, requested=left, validations=(*sas.validations, v)[-VALIDATION_BUFFER:],
                       validated=sas.validated + 1, validation_id=vid)
    if isinstance(rec, TicketOutPrinted):
        return replace(sas, requested=left, validations=tuple(replace(v, printed=True) if v.number == number else v
                                                              for v in sas.validations))
    return replace(sas, requested=left)  # failed: no ticket, nothing to validate


def _ticket_in(r: Redemption | None, rec: CabinetRecord) -> Redemption | None:
    if isinstance(rec, TicketInInserted):
        return Redemption(str(rec.validation))
    if r is None or r.validation != getattr(rec, "validation", None):
        return r  # a record of another ticket (the cabinet's own refusal of a ticket never asked about)
    if isinstance(rec, TicketInAuthorised):
        return replace(r, status=0x40, cents=int(rec.cents), code=int(rec.code))
    if isinstance(rec, TicketInRefused):
        reason = rec.reason.lower()
        status = 0x88 if "timeout" in reason else 0x89 if "link" in reason else 0x80
        return replace(r, status=status, code=rec.code)
    if isinstance(rec, TicketInStacked):
        status = 0x02 if r.code == 0x02 else 0x01 if rec.restricted else 0x00
        return replace(r, status=status, cents=int(rec.cents), done=True)
    if isinstance(rec, TicketInReturned):
        # returned before the host answered: timed out; after it authorised: the validator could not stack it
        status = {0x20: 0x88, 0x40: 0x8B}.get(r.status, r.status)
        return replace(r, status=status, done=True)
    return r

"""The simulated shoe's controls: its fault switches (`Faults`), its refusals (`SimError`) and the text commands that
work them (`command`: `croupier shoe-sim` reads them from stdin or its control port; `help` lists them)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from controller.cards import Card, parse_cards
from drivers.simcontrol import control

if TYPE_CHECKING:
    from .sim import ShoeSim


class SimError(RuntimeError):
    """A request the simulated device refuses (a locked or empty shoe, an unknown command, ...)."""


@dataclass
class Faults:
    """Fault switches. Counts apply to the next N reliable frames sent (first sends and resends alike)."""

    drop: int = 0  # never send them
    corrupt: int = 0  # flip one bit in each
    duplicate: int = 0  # send each twice
    delay: float = 0.0  # hold each this many seconds...
    delay_count: int = 0  # ...for the next N frames
    drop_acks: int = 0  # do not send the next N ACKs of host commands
    ignore_acks: int = 0  # act as if the next N ACKs from the host were lost (the host then sees duplicates)
    heartbeat: bool = True  # False: heartbeats stop (the host's watchdog fires)
    missing: list[Card] = field(default_factory=list)  # taken out of the next shuffle: its deck check reports them


COMMANDS_HELP = """\
deal [N]                 the dealer draws the next card (N cards)
load CARD...             load a scripted shoe, e.g. `load AS KD 7H` (no deck check)
shuffle [DECKS]          shuffle a new shoe (the process's seeded order): SHUFFLE, DECK CHECK, SHUFFLE done
lid open|closed          open or close the shoe's lid
jam on|off               jam or clear the card path
missing CARD...          the next shuffle's deck check is missing these cards
drop N | corrupt N | duplicate N      the next N reliable frames are lost, get a bit flipped, are sent twice
delay SECONDS [N]        hold the next N reliable frames (default 1) for SECONDS
drop-acks N              do not acknowledge the host's next N commands
ignore-acks N            ignore the host's next N acknowledgements (the host sees duplicates)
heartbeat on|off         stop or resume heartbeats
garbage N                send N bytes of line noise
unplug [SECONDS]         close the device's side; reopen after SECONDS (default 0.5; 0: stay unplugged)
replug                   reopen the device's side now
reset [counter]          power-cycle the device (unacknowledged messages are lost; the draw counter is kept,
                         or with `counter` starts again from 0)
swap SERIAL [DRAWS]      another shoe takes this one's place: a new serial, its draw counter at DRAWS (0)
status                   one line of JSON: the device's state, fault switches and counters
help                     this list"""


def command(sim: ShoeSim, line: str) -> str:
    """Carry out one control command on `sim` (see COMMANDS_HELP); returns 'ok ...' or 'error: ...'."""

    def act(verb: str, args: list[str]) -> str | None:
        if verb == "deal":
            out = [sim.deal() for _ in range(_count(args, 1))]
            return "ok " + " ".join(f"{m.card}#{m.draw}" for m in out)
        if verb == "load":
            sim.load(parse_cards(args))
            return f"ok {len(args)} cards loaded"
        if verb == "shuffle":
            check = sim.shuffle(decks=_count(args, sim.decks))
            return "ok deck check " + ("complete" if check.complete else
                                       f"missing {' '.join(map(str, check.missing)) or '-'} "
                                       f"extra {' '.join(map(str, check.extra)) or '-'}")
        if verb == "lid":
            sim.set_lid(_switch(args, ("open",), ("closed", "close")))
            return f"ok lid {args[0]}"
        if verb == "jam":
            sim.set_jam(_switch(args, ("on",), ("off",)))
            return f"ok jam {args[0]}"
        if verb == "missing":
            cards = parse_cards(args)
            with sim._lock:
                sim.faults.missing.extend(cards)
            return f"ok next deck check misses {' '.join(map(str, cards))}"
        if verb in ("drop", "corrupt", "duplicate", "drop-acks", "ignore-acks"):
            n = _count(args, 1)
            with sim._lock:
                name = verb.replace("-", "_")
                if name == "ignore_acks":
                    sim.link.ignore_acks += n
                else:
                    setattr(sim.faults, name, getattr(sim.faults, name) + n)
            return f"ok {verb} {n}"
        if verb == "delay":
            if not args:
                raise SimError("delay needs SECONDS")
            seconds, n = float(args[0]), _count(args[1:], 1)
            if not seconds >= 0:
                raise SimError("delay SECONDS must be 0 or more")
            with sim._lock:
                sim.faults.delay, sim.faults.delay_count = seconds, n
            return f"ok delay {seconds} s for {n} frames"
        if verb == "heartbeat":
            on = _switch(args, ("on",), ("off",))
            with sim._lock:
                sim.faults.heartbeat = on
            return f"ok heartbeat {args[0]}"
        if verb == "garbage":
            n = _count(args, 16)
            # A fixed pattern with flags and escapes in it: deterministic, and as nasty as noise gets.
            sim.inject(bytes((0x7E, 0x7D, 0x05, 0x01, 0x02, 0xFF, 0x7D, 0x5E)[i % 8] ^ (i // 8 & 0x0F)
                              for i in range(n)))
            return f"ok {n} bytes of noise sent"
        if verb == "unplug":
            seconds = float(args[0]) if args else 0.5
            sim.unplug(seconds)
            return "ok unplugged" + (f" for {seconds} s" if seconds else "")
        if verb == "replug":
            return f"ok {sim.replug()}"
        if verb == "reset":
            if args and args != ["counter"]:
                raise SimError("reset takes nothing, or `counter` (the draw counter starts again from 0)")
            sim.reset(keep_counter=not args)
            return f"ok reset (boot {sim.boot}, draws {sim.draws})"
        if verb == "swap":
            if not args:
                raise SimError("swap needs the new shoe's SERIAL")
            sim.swap(args[0], _count(args[1:], 0))
            return f"ok swapped for shoe {sim.serial} (draws {sim.draws})"
        return None

    return control(line, act, status=sim.status, commands_help=COMMANDS_HELP, refused=(SimError,))


def _count(args: list[str], default: int) -> int:
    if not args:
        return default
    n = int(args[0])
    if n < 0:
        raise SimError(f"expected a count of 0 or more, got {n}")
    return n


def _switch(args: list[str], on: tuple[str, ...], off: tuple[str, ...]) -> bool:
    word = args[0].lower() if args else ""
    if word in on:
        return True
    if word in off:
        return False
    raise SimError(f"expected {'/'.join(on + off)}, got {word or 'nothing'!r}")

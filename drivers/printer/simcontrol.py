"""The simulated printer's control commands as text, one per line (`help` lists them): what a test, a demo's control port or an attendant's bench types to fault it."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Callable

from drivers.simcontrol import control

from .sim import JOB_FAULTS, SimError

if TYPE_CHECKING:
    from .sim import PrinterSim

COMMANDS_HELP = """\
paper ok|low|out         the paper roll: full, running low (a warning), or out (a fault)
jam on|off               jam or clear the paper path
head open|closed         lift or lower the print head (platen)
offline on|off           the printer's own offline flag (it still answers)
power off|on             cut the power (the line goes silent; a job in progress is lost) or restore it
fail-next FAULT          the next job stops before its validation number: jam, paper_out, head_open, offline, power
tickets [N]              the last N tickets printed (default 1), one line of JSON each
status                   one line of JSON: power, flags, counters
help                     this list"""


def command(sim: PrinterSim, line: str) -> str:
    """Carry out one control command on `sim`; returns 'ok ...' or 'error: ...'."""

    def paper(state: str) -> None:
        sim.set_paper_out(state == "out")
        sim.set_paper_low(state in ("low", "out"))

    # verb: (the words it takes, what it does with one); each answers "ok VERB WORD"
    switches: dict[str, tuple[tuple[str, ...], Callable[[str], None]]] = {
        "paper": (("ok", "low", "out"), paper),
        "jam": (("on", "off"), lambda word: sim.set_jam(word == "on")),
        "head": (("open", "closed"), lambda word: sim.set_head_open(word == "open")),
        "offline": (("on", "off"), lambda word: sim.set_offline(word == "on")),
        "power": (("on", "off"), lambda word: sim.power(word == "on")),
    }

    def act(verb: str, args: list[str]) -> str | None:
        arg = args[0] if args else ""
        if verb in switches and arg in switches[verb][0]:
            switches[verb][1](arg)
            return f"ok {verb} {arg}"
        if verb == "fail-next" and arg in JOB_FAULTS:
            sim.fail_next_job(arg)
            return f"ok the next job fails: {arg}"
        if verb == "tickets":
            n = int(arg) if arg else 1
            return "ok\n" + "\n".join(json.dumps({"template": t.template, "fields": t.fields, "lines": t.lines,
                                                  "error": t.error}) for t in sim.last_tickets(n))
        if verb in switches or verb == "fail-next":
            return f"error: {verb} {' '.join(args) or '(nothing)'}: see `help`"
        return None

    return control(line, act, status=sim.status, commands_help=COMMANDS_HELP, refused=(SimError,), lower_words=True)

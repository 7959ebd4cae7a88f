"""The simulated printer's control commands as text, one per line (`help` lists them): what a test, a demo's control port or an attendant's bench types to fault it."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

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
    words = line.split()
    if not words:
        return "ok"
    verb, args = words[0].lower(), [w.lower() for w in words[1:]]
    arg = args[0] if args else ""
    try:
        if verb == "paper" and arg in ("ok", "low", "out"):
            sim.set_paper_out(arg == "out")
            sim.set_paper_low(arg in ("low", "out"))
            return f"ok paper {arg}"
        if verb == "jam" and arg in ("on", "off"):
            sim.set_jam(arg == "on")
            return f"ok jam {arg}"
        if verb == "head" and arg in ("open", "closed"):
            sim.set_head_open(arg == "open")
            return f"ok head {arg}"
        if verb == "offline" and arg in ("on", "off"):
            sim.set_offline(arg == "on")
            return f"ok offline {arg}"
        if verb == "power" and arg in ("on", "off"):
            sim.power(arg == "on")
            return f"ok power {arg}"
        if verb == "fail-next" and arg in JOB_FAULTS:
            sim.fail_next_job(arg)
            return f"ok the next job fails: {arg}"
        if verb == "tickets":
            n = int(arg) if arg else 1
            return "ok\n" + "\n".join(json.dumps({"template": t.template, "fields": t.fields, "lines": t.lines,
                                                  "error": t.error}) for t in sim.last_tickets(n))
        if verb == "status":
            return "ok " + json.dumps(sim.status(), sort_keys=True)
        if verb == "help":
            return "ok\n" + COMMANDS_HELP
    except (SimError, ValueError) as exc:
        return f"error: {exc}"
    known = {"paper", "jam", "head", "offline", "power", "fail-next"}
    if verb in known:
        return f"error: {verb} {' '.join(args) or '(nothing)'}: see `help`"
    return f"error: unknown command {verb!r} (try `help`)"

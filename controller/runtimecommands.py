"""Bus commands as a runtime declares them (name, roles, help, beside the handler) and the window in which a command's id is answered once.

A handler is a method of a runtime, `(self, batch, role, args) -> reply` (`named`: `(self, batch, role, command,
args)`), marked with `@command(...)`: the
runtime's class collects its own and its bases' declarations into `COMMANDS` (name -> `Command`), which the
dispatcher (controller/runtime.py) looks a command up in, checks the sender's role against and calls. A
command the base runtime handles the same way everywhere (status, meters, audit) is declared there without
roles; each runtime grants it to its own roles in `GRANTS`. `croupier command --list` prints the declarations,
and tests/test_bus_doc.py holds controller/bus.md's command tables to them.
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass, replace
from typing import Any, Callable, Iterable, Mapping, TypeVar

__all__ = ["Command", "command", "collect", "commands_text", "Answer", "AnswerWindow"]

F = TypeVar("F", bound=Callable[..., Any])


@dataclass(frozen=True, slots=True)
class Command:
    """One bus command: its name, the role kinds that may send it, a line of help, and its handler's name on the
    runtime (looked up on the instance, so a subclass may override it). `read_only`: it changes nothing and is
    answered afresh each time, never from the window of answered ids. `named`: the handler is told the command's
    name (it serves several)."""
    name: str
    roles: tuple[str, ...]
    help: str
    method: str
    read_only: bool = False
    named: bool = False


def command(name: str, *, help: str, roles: Iterable[str] = (), read_only: bool = False,
            named: bool = False) -> Callable[[F], F]:
    """Declare the decorated method the handler of bus command `name`, sent by `roles` (none: each runtime grants
    it in its GRANTS). One handler may serve several commands: decorate it once for each, `named=True`, and it is
    called with the command's name before its arguments."""
    def declare(fn: F) -> F:
        spec = Command(name, tuple(roles), help, fn.__name__, read_only, named)
        # decorators apply from the bottom up: put this one first, so the list keeps the order they are written in
        setattr(fn, "__commands__", (spec, *getattr(fn, "__commands__", ())))
        return fn
    return declare


def collect(cls: type, grants: Mapping[str, tuple[str, ...]]) -> dict[str, Command]:
    """The commands a runtime class takes: every declaration of it and its bases (a subclass's declaration of a
    name replaces its base's), with the roles `grants` gives; a command no role may send is not taken."""
    declared: dict[str, Command] = {}
    for klass in cls.__mro__:  # its own first, in the order written, then its bases'
        for attr in vars(klass).values():
            for spec in getattr(attr, "__commands__", ()):
                declared.setdefault(spec.name, spec)
    unknown = set(grants) - set(declared)
    if unknown:
        raise TypeError(f"{cls.__name__} grants commands it has no handler for: {', '.join(sorted(unknown))}")
    out = {name: replace(spec, roles=tuple(grants.get(name, spec.roles))) for name, spec in declared.items()}
    return {name: spec for name, spec in out.items() if spec.roles}


def commands_text(commands: Mapping[str, Command]) -> str:
    """The commands as `croupier command --list` prints them: one line each, `name (roles): help`."""
    return "\n".join(f"  {c.name} ({', '.join(c.roles)}): {c.help}" for c in commands.values())


@dataclass(frozen=True, slots=True)
class Answer:
    """The first answer to a bus command's (key, id)."""
    digest: str
    answer: dict[str, Any] | None  # None: answered before a restart, with an answer too large to journal
    seq: int
    at: float


class AnswerWindow:
    """The answers kept for resent commands: a (key, id) seen within `seconds` gets its first answer again; at most
    `most` of the latest are kept, so memory stays bounded."""

    def __init__(self, seconds: float, most: int) -> None:
        self.seconds, self.most = seconds, most
        self._answers: OrderedDict[tuple[str, str | int], Answer] = OrderedDict()

    def get(self, ident: tuple[str, str | int], now: float) -> Answer | None:
        """The first answer to `ident`, when it is still within the window."""
        known = self._answers.get(ident)
        return known if known is not None and now - known.at <= self.seconds else None

    def remember(self, ident: tuple[str, str | int], answer: Answer) -> None:
        self._answers[ident] = answer
        self._answers.move_to_end(ident)
        while self._answers:
            oldest = next(iter(self._answers.values()))
            if len(self._answers) <= self.most and answer.at - oldest.at <= self.seconds:
                break
            self._answers.popitem(last=False)

    def recall(self, entries: Iterable[Any], now: float) -> None:
        """Rebuild the window from journal entries (seq, time, record), oldest first: a restart must not apply a
        resend of a command journaled before it."""
        for entry in entries:
            tag = entry.record.get("origin")
            if isinstance(tag, dict) and isinstance(tag.get("id"), (str, int)) and now - entry.time <= self.seconds:
                answer = tag.get("answer") if isinstance(tag.get("answer"), dict) else None
                self.remember((tag.get("key") or "", tag["id"]),
                              Answer(str(tag.get("digest", "")), answer, entry.seq, entry.time))

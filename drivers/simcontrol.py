"""The frame the simulators' text controls share (the shoe's, the printer's): a line read as a verb and its words, `status` and `help`, refusals answered as errors."""

from __future__ import annotations

import json
from typing import Any, Callable

__all__ = ["control"]


def control(line: str, act: Callable[[str, list[str]], str | None], *, status: Callable[[], Any],
            commands_help: str, refused: tuple[type[Exception], ...], lower_words: bool = False) -> str:
    """Carry out one command line: `act(verb, words)` answers "ok ..." or "error: ...", or None for a verb it does
    not know; `status` and `help` are answered here. A refusal (`refused`, or a word that is not a number) answers
    "error: ..."; a blank line "ok". `lower_words`: the words are lower-cased too (the verb always is)."""
    words = line.split()
    if not words:
        return "ok"
    verb, args = words[0].lower(), words[1:]
    if lower_words:
        args = [w.lower() for w in args]
    caught: tuple[type[Exception], ...] = (*refused, ValueError)
    try:
        answer = act(verb, args)
        if answer is not None:
            return answer
        if verb == "status":
            return "ok " + json.dumps(status(), sort_keys=True)
        if verb == "help":
            return "ok\n" + commands_help
    except caught as exc:
        return f"error: {exc}"
    return f"error: unknown command {verb!r} (try `help`)"

"""Progress of a long job on a terminal: one line on stderr, redrawn, with a bar, the count and the time left; silent when piped or asked to be quiet.

A job takes the bar as its `progress(done, total)` callback (so the code doing the work, `vision/` included,
needs nothing of this module), and its lines for people go through `bar.say(line)`, which prints them above
the bar. Standard library only.
"""

from __future__ import annotations

import sys
import time
from typing import Callable, TextIO

__all__ = ["Progress", "progress"]


def _clock(seconds: float) -> str:
    """0:07, 12:34, 1:02:03."""
    whole = max(0, round(seconds))
    hours, rest = divmod(whole, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours}:{minutes:02}:{secs:02}" if hours else f"{minutes}:{secs:02}"


class Progress:
    """A progress bar for `total` units of work: call it as `bar(done)` or `bar(done, total)` as the work goes,
    `bar.say(line)` to print a line above it, and `bar.close()` (or leave its with-block) to clear it. When it is
    not `shown` it draws nothing and `say` only prints. Redrawn at most every `interval` seconds, and at the end."""

    def __init__(self, label: str, total: int | None = None, *, shown: bool, stream: TextIO | None = None,
                 clock: Callable[[], float] = time.monotonic, interval: float = 0.2, width: int = 30) -> None:
        self.label, self.total, self.shown = label, total, shown
        self.stream = stream if stream is not None else sys.stderr
        self.clock, self.interval, self.width = clock, interval, width
        self.done = 0
        self.started = clock()
        self._drawn_at: float | None = None
        self._visible = False

    def __call__(self, done: int, total: int | None = None) -> None:
        if total is not None:
            self.total = total
        self.done = done
        if not self.shown:
            return
        now = self.clock()
        finished = self.total is not None and done >= self.total
        if self._drawn_at is None or finished or now - self._drawn_at >= self.interval:
            self._drawn_at = now
            self._draw()

    def advance(self, n: int = 1) -> None:
        self(self.done + n)

    def text(self) -> str:
        """The bar as it is drawn now: `label [#####.....] 42% 4,200/10,000, about 0:07 left`."""
        if not self.total:
            return f"{self.label} {self.done:,}"
        part = min(1.0, self.done / self.total)
        filled = int(part * self.width)
        bar = "#" * filled + "." * (self.width - filled)
        elapsed = self.clock() - self.started
        if self.done >= self.total:
            when = f", {_clock(elapsed)}"
        elif self.done and elapsed >= 1:  # an estimate from less than a second of work says little
            when = f", about {_clock(elapsed / self.done * (self.total - self.done))} left"
        else:
            when = ""
        return f"{self.label} [{bar}] {part:4.0%} {self.done:,}/{self.total:,}{when}"

    def say(self, line: str, stream: TextIO | None = None) -> None:
        """Print a line for people (stdout unless told), above the bar, which is drawn again below it."""
        out = stream if stream is not None else sys.stdout
        self._clear()
        print(line, file=out, flush=True)
        if self.shown and self._drawn_at is not None:
            self._draw()

    def close(self) -> None:
        self._clear()
        self._drawn_at = None

    def __enter__(self) -> Progress:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _draw(self) -> None:
        self.stream.write("\r" + self.text() + "\x1b[K")
        self.stream.flush()
        self._visible = True

    def _clear(self) -> None:
        if self._visible:
            self.stream.write("\r\x1b[K")
            self.stream.flush()
            self._visible = False


def _terminal(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):  # a closed or unusual stream is no terminal
        return False


def progress(label: str, total: int | None = None, *, quiet: bool = False) -> Progress:
    """A bar on stderr, shown only when stdout and stderr are both a terminal and the caller is not `quiet`
    (`--json`): piped or redirected output stays as it was, free of bars."""
    return Progress(label, total, shown=not quiet and _terminal(sys.stderr) and _terminal(sys.stdout))

"""The simulated printer's end of its line: a pseudo-terminal, its path optionally kept linked like a udev by-id link (drivers/shoe/simport.py's PtyEnd, for one printer)."""

from __future__ import annotations

import errno
import os
import tty


class PtyEnd:
    """The device end of a pseudo-terminal; `link`, if given, is a symlink kept pointing at the slave."""

    def __init__(self, link: str | None = None) -> None:
        self.link = link
        self.master, self.slave = os.openpty()
        tty.setraw(self.slave)  # no echo or line editing, before the host opens it
        os.set_blocking(self.master, False)
        self.path = os.ttyname(self.slave)
        if link:
            tmp = f"{link}.{os.getpid()}.tmp"
            os.symlink(self.path, tmp)
            os.replace(tmp, link)

    @property
    def url(self) -> str:
        return self.link or self.path

    def read(self) -> bytes:
        try:
            return os.read(self.master, 4096)
        except (BlockingIOError, InterruptedError):
            return b""
        except OSError as exc:
            if exc.errno == errno.EIO:  # no host has the slave open
                return b""
            raise

    def write(self, data: bytes) -> int:
        try:
            return os.write(self.master, data)
        except (BlockingIOError, InterruptedError):
            return 0  # nobody reads and the buffer is full: the bytes are lost, as on a UART

    def close(self) -> None:
        for fd in (self.master, self.slave):
            try:
                os.close(fd)
            except OSError:
                pass
        if self.link:
            try:
                if os.readlink(self.link) == self.path:
                    os.unlink(self.link)
            except OSError:
                pass

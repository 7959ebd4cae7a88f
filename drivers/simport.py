"""A simulated device's end of its line (the shoe's, the validator's, the printer's): a pseudo-terminal (its path
optionally kept linked, like a udev by-id link) or a TCP listener on the loopback, one host at a time."""

from __future__ import annotations

import errno
import os
import socket
import tty


class PtyEnd:
    """The device end of a pseudo-terminal; `link`, if given, is kept pointing at the current slave, like a udev
    by-id link."""

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

    def fds(self) -> list[int]:
        return [self.master]

    def read(self, fd: int | None = None) -> bytes:
        """What the host wrote (`fd`, one of fds(), is only TcpEnd's concern)."""
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
            return 0  # nobody is reading and the buffer is full: the bytes are lost, as on a UART

    def close(self) -> None:
        for fd in (self.master, self.slave):
            try:
                os.close(fd)
            except OSError:
                pass
        if self.link:
            try:  # like udev, remove the link while the device is gone (unless it was re-pointed meanwhile)
                if os.readlink(self.link) == self.path:
                    os.unlink(self.link)
            except OSError:
                pass


class TcpEnd:
    """A TCP listener on the loopback; one host at a time (a new connection replaces the old one)."""

    def __init__(self, port: int, host: str) -> None:
        self.listener = socket.create_server((host, port))
        self.listener.setblocking(False)
        self.host, self.port = host, self.listener.getsockname()[1]
        self.conn: socket.socket | None = None

    @property
    def url(self) -> str:
        return f"socket://{self.host}:{self.port}"

    def fds(self) -> list[int]:
        return [self.listener.fileno()] + ([self.conn.fileno()] if self.conn else [])

    def read(self, fd: int) -> bytes:
        if fd == self.listener.fileno():
            try:
                conn, _ = self.listener.accept()
            except BlockingIOError:
                return b""
            if self.conn:
                self.conn.close()
            conn.setblocking(False)
            conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            self.conn = conn
            return b""
        if self.conn is None:
            return b""
        try:
            data = self.conn.recv(4096)
        except (BlockingIOError, InterruptedError):
            return b""
        except OSError:
            data = b""
        if not data:
            self.conn.close()
            self.conn = None
        return data

    def write(self, data: bytes) -> int:
        if self.conn is None:
            return 0
        try:
            return self.conn.send(data)
        except (BlockingIOError, InterruptedError):
            return 0
        except OSError:
            return 0

    def close(self) -> None:
        if self.conn:
            self.conn.close()
            self.conn = None
        self.listener.close()

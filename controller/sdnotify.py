"""systemd's notify protocol in a few lines: readiness, watchdog pings and status for a Type=notify unit."""

from __future__ import annotations

import os
import socket

__all__ = ["notify", "watchdog_interval"]


def notify(message: str) -> bool:
    """Send e.g. "READY=1", "WATCHDOG=1", "STATUS=dealing" to systemd; False when not run under systemd."""
    address = os.environ.get("NOTIFY_SOCKET")
    if not address:
        return False
    if address.startswith("@"):  # abstract namespace socket
        address = "\0" + address[1:]
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM | socket.SOCK_CLOEXEC) as sock:
            sock.sendto(message.encode(), address)
    except OSError:
        return False
    return True


def watchdog_interval() -> float | None:
    """Seconds between the pings systemd expects (half its WatchdogSec), or None when there is no watchdog."""
    usec = os.environ.get("WATCHDOG_USEC")
    pid = os.environ.get("WATCHDOG_PID")
    if not usec or (pid and pid != str(os.getpid())):
        return None
    try:
        return int(usec) / 1e6 / 2
    except ValueError:
        return None

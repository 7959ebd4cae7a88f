"""What the bus tests share: free endpoints, a fake table behind a BusServer, waiting on the loop for a condition,
a raw subscriber, the CURVE keys of a test (`keys`, a fixture) and the nesting limit spelt out."""

from __future__ import annotations

import asyncio
import socket
from pathlib import Path
from typing import Any

import pytest
import zmq
import zmq.asyncio

from controller.bus import BusEndpoints, Role, create_keys

MAX_DEPTH = 16  # controller.bus.MAX_DEPTH, spelt out so these tests read the same against any version


def free_endpoints() -> BusEndpoints:
    ports = []
    for _ in range(3):
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            ports.append(s.getsockname()[1])
    return BusEndpoints(*(f"tcp://127.0.0.1:{p}" for p in ports))


class FakeTable:
    def __init__(self) -> None:
        self.seq = 0
        self.commands: list[tuple[Any, str, dict]] = []
        self.refused: list[tuple[str, str]] = []
        self.summaries: list[dict] = []
        self.origins: list[Any] = []  # controller.bus.Origin of each command

    def views(self) -> tuple[int, dict[str, dict]]:
        return self.seq, {"public": {"n": self.seq}, "dealer": {"n": self.seq, "alerts": []}}

    async def on_command(self, role: Role | None, command: str, args: dict, origin: Any = None) -> dict:
        self.commands.append((role, command, args))
        self.origins.append(origin)
        if command == "void" and (role is None or role.kind != "dealer"):
            return {"ok": False, "error": f"{role} may not void a round"}
        return {"ok": True, "result": command}

    def on_refused(self, who: str, reason: str, request: dict) -> None:
        self.refused.append((who, reason))
        self.summaries.append(request)


async def wait_for(predicate, timeout: float = 10.0) -> None:  # type: ignore[no-untyped-def]
    deadline = asyncio.get_running_loop().time() + timeout
    while not predicate():
        if asyncio.get_running_loop().time() > deadline:
            raise AssertionError("condition not reached in time")
        await asyncio.sleep(0.005)  # polling the asyncio loop for a condition, not timing the system


def raw_subscriber(ep: BusEndpoints) -> zmq.asyncio.Socket:
    """A plain SUB socket on table t1's public topic: the messages exactly as sent."""
    sub = zmq.asyncio.Context.instance().socket(zmq.SUB)
    sub.setsockopt(zmq.SUBSCRIBE, b"t1/public")
    sub.connect(ep.publish)
    return sub


@pytest.fixture
def keys(tmp_path: Path) -> Path:
    for name in ("server", "dealer", "spot3", "stranger"):
        create_keys(tmp_path, name)
    return tmp_path


# Speaking ZMTP by hand, below libzmq: what a hostile peer can send.

def zmtp_frame(body: bytes, command: bool = False) -> bytes:
    flags = 0x04 if command else 0x00
    if len(body) > 255:
        return bytes([flags | 0x02]) + len(body).to_bytes(8, "big") + body
    return bytes([flags, len(body)]) + body


def _read_exactly(sock: socket.socket, n: int) -> bytes:
    data = b""
    while len(data) < n:
        chunk = sock.recv(n - len(data))
        if not chunk:
            raise EOFError("the peer closed the connection")
        data += chunk
    return data


def zmtp_read(sock: socket.socket) -> tuple[int, bytes]:
    """One ZMTP frame: (flags, body)."""
    flags = _read_exactly(sock, 1)[0]
    size = int.from_bytes(_read_exactly(sock, 8 if flags & 0x02 else 1), "big")
    return flags, _read_exactly(sock, size)


def zmtp_connect(endpoint: str, socket_type: bytes = b"SUB") -> socket.socket:
    """A hostile peer's view of the bus: a raw TCP connection speaking ZMTP 3.0 (NULL mechanism) by hand, so it
    can send what no libzmq client would (and holds nothing of what it sends in a trie of its own)."""
    host, port = endpoint.removeprefix("tcp://").rsplit(":", 1)
    sock = socket.create_connection((host, int(port)), timeout=20)
    sock.sendall(b"\xff" + b"\x00" * 8 + b"\x7f" + b"\x03\x00" + b"NULL".ljust(20, b"\x00") + b"\x00" * 32)
    _read_exactly(sock, 64)  # the server's greeting
    sock.sendall(zmtp_frame(b"\x05READY\x0bSocket-Type" + len(socket_type).to_bytes(4, "big") + socket_type,
                             command=True))
    flags, body = zmtp_read(sock)
    assert flags & 0x04 and body.startswith(b"\x05READY"), body[:40]
    return sock

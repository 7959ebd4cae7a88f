"""The bus's clients: `CommandClient` sends commands to a table (CURVE when keyed) and `BusClient` follows one of
its views (Clone pattern: a snapshot, then every update in order; a gap or silence asks for a new snapshot)."""

from __future__ import annotations

import asyncio
import json
import secrets
import time
from dataclasses import dataclass
from typing import Any, Callable, Mapping

import zmq
import zmq.asyncio

from controller.buswire import BUS_VERSION, BusEndpoints


class CommandError(RuntimeError):
    """A command was refused or not answered."""


@dataclass
class CommandClient:
    """Sends commands to a table; with keys, over CURVE (our key pair, the server's public key). With `table`
    each request names it, and any other table refuses it. Each request's id is unique to this client (a
    random prefix and a count), since the table answers a repeated id (from the same key, within its window)
    with the first answer instead of applying it again."""

    endpoint: str
    client_keys: tuple[bytes, bytes] | None = None
    server_public: bytes | None = None
    timeout_s: float = 5.0
    context: zmq.asyncio.Context | None = None
    table: str | None = None
    _n: int = 0
    last_id: str | None = None

    def __post_init__(self) -> None:
        self._prefix = secrets.token_hex(6)
        self._last: bytes | None = None
        self.context = self.context or zmq.asyncio.Context.instance()
        self._sock = self.context.socket(zmq.DEALER)
        self._sock.setsockopt(zmq.LINGER, 0)
        if self.client_keys is not None:
            if self.server_public is None:
                raise ValueError("a CURVE client needs the server's public key")
            self._sock.curve_publickey, self._sock.curve_secretkey = self.client_keys
            self._sock.curve_serverkey = self.server_public
        self._sock.connect(self.endpoint)

    def _request(self, command: str, args: Mapping[str, Any]) -> tuple[str, bytes]:
        self._n += 1
        self.last_id = f"{self._prefix}-{self._n}"
        req: dict[str, Any] = {"v": BUS_VERSION, "id": self.last_id, "command": command, "args": args}
        if self.table is not None:
            req["table"] = self.table
        try:
            self._last = json.dumps(req, allow_nan=False).encode()
            return self.last_id, self._last
        except ValueError:  # caught here, so a caller learns it without the table refusing it
            raise CommandError(f"{command}: NaN and Infinity are not numbers a command may carry") from None

    async def send(self, command: str, **args: Any) -> dict[str, Any]:
        """Send a command and return the reply ({"ok": True, "result": ...} or {"ok": False, "error": ...})."""
        req_id, body = self._request(command, args)
        await self._send(body)
        return await self._reply(req_id)

    async def resend(self) -> dict[str, Any]:
        """Send the last request again as it was (same id), as a client does that got no answer: the table
        answers it with its first answer and applies it at most once."""
        assert self._last is not None, "nothing sent yet"
        await self._send(self._last)
        return await self._reply(self.last_id)

    async def send_many(self, requests: list[tuple[str, dict[str, Any]]]) -> list[dict[str, Any]]:
        """Send several commands at once (they arrive in order) and return their replies in the same order; a
        server that answers commands concurrently journals them in one group commit."""
        ids = []
        for command, args in requests:
            req_id, body = self._request(command, args)
            ids.append(req_id)
            await self._send(body)
        replies: dict[Any, dict[str, Any]] = {}
        deadline = time.monotonic() + self.timeout_s
        while len(replies) < len(ids):
            left = deadline - time.monotonic()
            if left <= 0 or not await self._sock.poll(left * 1000):
                raise CommandError(f"no answer from {self.endpoint} within {self.timeout_s:g} s")
            reply = json.loads((await self._sock.recv_multipart())[-1])
            if reply.get("id") in ids:
                replies[reply["id"]] = reply
        return [replies[i] for i in ids]

    async def send_raw(self, body: bytes) -> dict[str, Any]:
        await self._send(body)
        return await self._reply(None)

    async def _send(self, body: bytes) -> None:
        # A DEALER whose only connection failed its handshake has no peer to queue for: its send would wait for
        # good, so it waits as long as an answer may.
        try:
            await asyncio.wait_for(self._sock.send_multipart([b"", body]), self.timeout_s)
        except asyncio.TimeoutError:
            raise CommandError(f"no answer from {self.endpoint} within {self.timeout_s:g} s (no connection took "
                               f"the command: a CURVE key the table refuses, or none?)") from None

    async def _reply(self, req_id: Any) -> dict[str, Any]:
        deadline = time.monotonic() + self.timeout_s
        while True:
            left = deadline - time.monotonic()
            if left <= 0 or not await self._sock.poll(left * 1000):
                raise CommandError(f"no answer from {self.endpoint} within {self.timeout_s:g} s")
            reply = json.loads((await self._sock.recv_multipart())[-1])
            if req_id is None or reply.get("id") == req_id:
                return reply

    def close(self) -> None:
        self._sock.close(0)


@dataclass
class BusClient:
    """A Clone-pattern subscriber of one view: snapshot, then every update in order; a gap or silence
    means a new snapshot. `on_state(seq, state)` sees each state once, in seq order; `linked` tells it
    whether that state is the update right after the one before (False: a snapshot). What it receives must
    name its table: a snapshot or update of another table raises CommandError (the endpoints are another
    table's), as does a snapshot request the table refuses."""

    table_id: str
    view: str
    endpoints: BusEndpoints
    on_state: Callable[[int, dict[str, Any]], None]
    heartbeat_s: float = 1.0
    context: zmq.asyncio.Context | None = None
    on_alive: Callable[[], None] | None = None    # anything heard from the server (update, heartbeat, snapshot)
    on_silence: Callable[[], None] | None = None  # nothing heard for three heartbeats
    on_waiting: Callable[[float], None] | None = None  # a snapshot request unanswered: seconds waited so far
    client_keys: tuple[bytes, bytes] | None = None  # our CURVE pair, when the table's screens sockets need one
    server_public: bytes | None = None              # the table's public key, with client_keys
    seq: int = -1
    snapshots: int = 0
    gaps: int = 0
    ts: float | None = None    # the table's time of the state last handed to on_state (latency figures)
    heard: float = 0.0         # time.monotonic() when the table was last heard (update, heartbeat or snapshot)
    linked: bool = False       # the state last handed to on_state came as the update that follows the one before

    async def run(self) -> None:
        ctx = self.context = self.context or zmq.asyncio.Context.instance()
        sub = self._curve(ctx.socket(zmq.SUB))
        sub.setsockopt(zmq.LINGER, 0)
        sub.setsockopt(zmq.RCVHWM, 100_000)
        sub.setsockopt(zmq.SUBSCRIBE, f"{self.table_id}/{self.view}".encode())
        sub.connect(self.endpoints.publish)
        try:
            # Subscribe first, then snapshot: updates that raced the snapshot are filtered by seq.
            await self._snapshot()
            while True:
                if not await sub.poll(self.heartbeat_s * 3000):
                    if self.on_silence is not None:
                        self.on_silence()
                    await self._snapshot()  # silence: the table restarted or the link broke
                    continue
                topic, body = await sub.recv_multipart()
                if topic != f"{self.table_id}/{self.view}".encode():
                    continue  # a longer topic sharing our prefix
                msg = json.loads(body)
                self._same_table(msg, self.endpoints.publish)
                if self.on_alive is not None:
                    self.on_alive()
                self.heard = time.monotonic()
                seq = msg["seq"]
                if seq <= self.seq and msg["kind"] == "update":
                    continue
                if msg["kind"] == "heartbeat":
                    if seq != self.seq:
                        self.gaps += 1
                        await self._snapshot()
                    continue
                # An update names the seq of the one before it (a version 1 server published every seq).
                if msg.get("prev", seq - 1) != self.seq:
                    self.gaps += 1
                    await self._snapshot()
                    continue
                self.seq, self.ts, self.linked = seq, msg.get("ts"), True
                self.on_state(seq, msg["state"])
        finally:
            sub.close(0)

    def _same_table(self, msg: dict[str, Any], endpoint: str) -> None:
        if msg.get("table", self.table_id) != self.table_id:
            raise CommandError(f"{endpoint} serves table {str(msg['table'])[:80]}, not {self.table_id}")

    def _curve(self, sock: zmq.asyncio.Socket) -> zmq.asyncio.Socket:
        if self.client_keys is not None:
            if self.server_public is None:
                raise ValueError("a CURVE subscriber needs the server's public key")
            sock.curve_publickey, sock.curve_secretkey = self.client_keys
            sock.curve_serverkey = self.server_public
        return sock

    async def _snapshot(self) -> None:
        assert self.context is not None
        req = self._curve(self.context.socket(zmq.DEALER))
        req.setsockopt(zmq.LINGER, 0)
        req.connect(self.endpoints.snapshot)
        asked = time.monotonic()
        try:
            while True:
                await req.send_multipart([b"", json.dumps({"view": self.view, "table": self.table_id}).encode()])
                if await req.poll(self.heartbeat_s * 3000):
                    msg = json.loads((await req.recv_multipart())[-1])
                    if msg.get("kind") != "snapshot":
                        raise CommandError(f"{self.endpoints.snapshot}: {msg.get('error', 'snapshot refused')}")
                    self._same_table(msg, self.endpoints.snapshot)
                    break
                if self.on_waiting is not None:
                    self.on_waiting(time.monotonic() - asked)
        finally:
            req.close(0)
        self.snapshots += 1
        if self.on_alive is not None:
            self.on_alive()
        self.heard = time.monotonic()
        if msg["seq"] != self.seq:
            self.seq, self.ts, self.linked = msg["seq"], msg.get("ts"), False
            self.on_state(self.seq, msg["state"])

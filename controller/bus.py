"""The ZeroMQ bus: the Clone pattern for screens (PUB updates, ROUTER snapshots, heartbeats) and CURVE-authenticated commands with roles.

Messages and their fields are documented in controller/bus.md. In short:
- PUB `[b"<table>/<view>", json]` with `{"v", "seq", "prev", "ts", "kind": "update"|"heartbeat", "table", "view",
  "state"}`; one update per group commit, the state after its last record (`seq`), published on every screen
  view's topic; `prev` is the seq of the update before it, so a subscriber detects a gap.
- ROUTER snapshot: request `{"view": "public"}` -> `{"kind": "snapshot", "seq", "state", ...}`.
- ROUTER commands (CURVE): request `{"v": 2, "id": ..., "table": ..., "command": ..., "args": {...}}` ->
  `{"v": 2, "id": ..., "ok": bool, "error"|"result": ...}`; the client's public key decides its role.
A slow subscriber never blocks the table: PUB drops at the high-water mark, and nothing here awaits a
subscriber. Nothing a peer sends can grow the table without bound: libzmq drops a message over its socket's
limit (MAX_MESSAGE, MAX_SUBSCRIPTION) with the connection, the publisher applies only subscriptions to its
own topics (an XPUB socket in manual mode), and every parsed message is bounded in size and nesting and holds
only finite numbers (`parse_message`). A refused message travels on as a bounded summary (`summary`).
"""

from __future__ import annotations

import asyncio
import hashlib
import itertools
import json
import logging
import math
import re
import os
import secrets
import socket
import time
from collections import OrderedDict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Awaitable, Callable, Mapping

import zmq
import zmq.asyncio
from zmq.auth.asyncio import AsyncioAuthenticator

from controller.views import SCREEN_AUDIENCES

__all__ = ["BUS_VERSION", "BusEndpoints", "BusServer", "BusClient", "CommandClient", "CommandError",
           "Role", "Origin", "Malformed", "parse_message", "summary", "parse_role", "load_client_roles",
           "create_keys", "MAX_MESSAGE", "MAX_SNAPSHOT_REQUEST", "MAX_SUBSCRIPTION", "MAX_DEPTH", "MAX_INT"]

log = logging.getLogger("croupier.bus")
BUS_VERSION = 2  # 2: an update covers a group commit (`prev` links it to the one before); 1: one per record

# What a peer may send. libzmq checks the sizes (ZMQ_MAXMSGSIZE) before it allocates a message and drops the
# connection of a peer that goes over; the rest is checked before and after parsing.
MAX_MESSAGE = 65_536          # bytes of a command (the largest real one is a few hundred)
MAX_SNAPSHOT_REQUEST = 4_096  # bytes of a snapshot request ({"view": ..., "table": ...})
MAX_SUBSCRIPTION = 512        # bytes of a subscription (a topic prefix); a CURVE handshake needs about 300
MAX_DEPTH = 16                # nesting of arrays and objects (a command needs 2)
MAX_INT = 2 ** 53 - 1         # the largest whole number a JavaScript screen holds exactly
HEAD_BYTES = 64               # the first bytes of a refused message kept in its summary


# ---------------------------------------------------------------------------------------------------
# Roles and keys


@dataclass(frozen=True, slots=True)
class Role:
    """Who a command key belongs to: the dealer, one spot's player terminal, or operations; at a cabinet the
    attendant (and "player", the cabinet's own buttons, never a bus key); at a progressive link controller,
    one cabinet of the link."""

    kind: str             # "dealer", "spot", "ops", "attendant", "player", "cabinet"
    spot: int | None = None
    name: str | None = None  # the cabinet id of a "cabinet" role

    def __str__(self) -> str:
        if self.kind == "spot":
            return f"spot:{self.spot}"
        return f"cabinet:{self.name}" if self.kind == "cabinet" else self.kind


def parse_role(text: str) -> Role:
    if text in ("dealer", "ops", "attendant"):
        return Role(text)
    if text.startswith("spot:") and text[5:].isdigit() and int(text[5:]) >= 1:
        return Role("spot", int(text[5:]))
    if text.startswith("cabinet:") and text[8:] and all(c.isalnum() or c in "-_" for c in text[8:]):
        return Role("cabinet", name=text[8:])
    raise ValueError(f"unknown role {text!r} (roles: dealer, ops, spot:N, attendant, cabinet:ID)")


def create_keys(folder: str | Path, name: str) -> tuple[Path, Path]:
    """A CURVE key pair NAME.key (public, to give to the other side) and NAME.key_secret (keep private)."""
    import zmq.auth

    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    public, secret = zmq.auth.create_certificates(str(folder), name)
    Path(secret).chmod(0o600)
    return Path(public), Path(secret)


def load_public_key(path: str | Path) -> bytes:
    import zmq.auth

    public, _ = zmq.auth.load_certificate(str(path))
    return public


def load_secret_keys(path: str | Path) -> tuple[bytes, bytes]:
    import zmq.auth

    public, secret = zmq.auth.load_certificate(str(path))
    if secret is None:
        raise ValueError(f"{path} holds no secret key")
    return public, secret


def load_client_roles(entries: list[tuple[str | Path, str]]) -> dict[bytes, Role]:
    """Map each client's public key (z85) to its role, from (key file, role) pairs of the config."""
    roles: dict[bytes, Role] = {}
    for path, role in entries:
        key = load_public_key(path)
        if key in roles:
            raise ValueError(f"{path}: the same key is listed twice")
        roles[key] = parse_role(role)
    return roles


# ---------------------------------------------------------------------------------------------------
# Parsing what peers send


class Malformed(ValueError):
    """A message that is not a bounded JSON value of finite numbers; the text says what is wrong, naming the
    field where there is one."""


_STRING = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"')
_NOT_BRACKETS = bytes(sorted(set(range(256)) - set(b"[]{}")))


def _nesting(body: bytes) -> int:
    """How deep arrays and objects nest in JSON text, counted without parsing (so without recursion); brackets
    in strings do not count (an unterminated string's do: the text is not JSON anyway). Below MAX_DEPTH it may
    answer more than the depth: a text that opens at most MAX_DEPTH brackets cannot nest deeper, so the usual
    message is not scanned."""
    opening = body.count(b"[") + body.count(b"{")
    if opening <= MAX_DEPTH:
        return opening
    skeleton = _STRING.sub(b"", body).translate(None, _NOT_BRACKETS)
    return max(itertools.accumulate(1 if c in b"[{" else -1 for c in skeleton), default=0)


def _field(path: str) -> str:
    return path or "the message"


def _check(value: Any, path: str) -> None:
    """Every number finite and within ±MAX_INT when whole, every text encodable as UTF-8 (a lone surrogate
    from a `\\ud800` escape is not): what the journal and the screens can hold."""
    if isinstance(value, float):
        if not math.isfinite(value):
            raise Malformed(f"{_field(path)} is {value!r}: only finite numbers are taken (no NaN or Infinity)")
    elif isinstance(value, int) and not isinstance(value, bool):
        if abs(value) > MAX_INT:
            raise Malformed(f"{_field(path)} is beyond \u00b1{MAX_INT} (2**53 - 1)")
    elif isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            raise Malformed(f"{_field(path)} holds a lone UTF-16 surrogate: not text") from None
    elif isinstance(value, dict):
        for key, item in value.items():
            _check(key, path)
            _check(item, f"{path}.{key[:40]}" if path else key[:40])
    elif isinstance(value, list):
        for i, item in enumerate(value):
            _check(item, f"{path}[{i}]")


def parse_message(body: bytes, limit: int = MAX_MESSAGE) -> Any:
    """The JSON value of a peer's message, or Malformed: at most `limit` bytes, nested at most MAX_DEPTH deep,
    numbers finite (JSON has no NaN or Infinity; Python's parser takes them, and 1e400 overflows to inf)."""
    if len(body) > limit:
        raise Malformed(f"{len(body)} bytes: a message here is at most {limit}")
    depth = _nesting(body)
    if depth > MAX_DEPTH:
        raise Malformed(f"nested {depth} deep: at most {MAX_DEPTH}")
    try:
        value = json.loads(body)
    except RecursionError:  # not reached after the count above; kept so no parse can take a task down
        raise Malformed(f"nested too deep: at most {MAX_DEPTH}") from None
    except ValueError as exc:  # UnicodeDecodeError is one
        raise Malformed(f"not JSON ({str(exc)[:80]})") from None
    _check(value, "")
    return value


def summary(body: bytes, peer: str | None) -> dict[str, Any]:
    """A refused message as journaled: its size, SHA-256, first bytes (undecodable ones as \\x escapes) and the
    peer's address; never the message itself, so its size does not matter."""
    return {"bytes": len(body), "sha256": hashlib.sha256(body).hexdigest(),
            "head": body[:HEAD_BYTES].decode("utf-8", "backslashreplace"), "peer": peer}


def digest(command: str, args: Mapping[str, Any]) -> str:
    """What a command asks, as a short hash: a resend with the same id must ask the same."""
    text = json.dumps([command, args], sort_keys=True, separators=(",", ":"), ensure_ascii=True)
    return hashlib.sha256(text.encode()).hexdigest()[:32]


@dataclass(frozen=True, slots=True)
class Origin:
    """Where a bus command came from: the client's key (z85 text; None without CURVE), its IP address, the
    request's id (None: the request named none) and `digest(command, args)`."""

    key: str | None
    peer: str | None
    id: str | int | None
    digest: str


# ---------------------------------------------------------------------------------------------------
# Server


@dataclass(frozen=True)
class BusEndpoints:
    publish: str = "tcp://127.0.0.1:5550"
    snapshot: str = "tcp://127.0.0.1:5551"
    commands: str = "tcp://127.0.0.1:5552"


CommandHandler = Callable[[Role | None, str, dict[str, Any], Origin], Awaitable[dict[str, Any]]]
# (who, reason, summary): `summary` is `summary(body, peer)`, with "command" when the message named one
Refusal = Callable[[str, str, dict[str, Any]], None]


def _now() -> float:
    return time.time()


@dataclass
class BusServer:
    """The table's side of the bus. `views()` returns (seq, {view: state}) for the current state."""

    table_id: str
    endpoints: BusEndpoints
    views: Callable[[], tuple[int, dict[str, dict[str, Any]]]]
    on_command: CommandHandler
    on_refused: Refusal
    server_keys: tuple[bytes, bytes] | None = None   # (public, secret); None: commands without CURVE (tests only)
    client_roles: Mapping[bytes, Role] = field(default_factory=dict)
    screens_curve: bool = False                      # PUB and snapshots over CURVE too, for listed client keys only
    heartbeat_s: float = 1.0
    hwm: int = 1000
    context: zmq.asyncio.Context | None = None
    pipelined: bool = False                          # answer commands concurrently (they still arrive in order)
    published: int = 0
    restarts: int = 0                                # socket tasks restarted after a failure (each one logged)
    _last_sent: float = 0.0
    _prev: int | None = None  # the seq of the last update sent; None until the first since this start
    _tasks: list[asyncio.Task[None]] = field(default_factory=list)
    _inflight: set[asyncio.Task[None]] = field(default_factory=set)

    async def start(self) -> None:
        self.context = self.context or zmq.asyncio.Context()
        ctx = self.context
        # XPUB in manual mode: each subscription reaches us, and only those to our own topics are applied.
        # libzmq still keeps every subscription a connection sent (a node per byte) until that connection
        # ends, so a connection that subscribes to anything else is closed (`_take_subscriptions`); what it
        # can have sent before that is taken in is bounded by the small queue and receive buffer below
        # (about 60 subscriptions of at most MAX_SUBSCRIPTION bytes: a few MB at most).
        self._pub = ctx.socket(zmq.XPUB)
        self._pub.setsockopt(zmq.XPUB_MANUAL, 1)
        self._pub.setsockopt(zmq.RCVHWM, 16)
        self._pub.setsockopt(zmq.RCVBUF, 16_384)  # the kernel's buffer of a subscriber's connection (it doubles it)
        self._snap = ctx.socket(zmq.ROUTER)
        self._cmd = ctx.socket(zmq.ROUTER)
        for s, limit in ((self._pub, MAX_SUBSCRIPTION), (self._snap, MAX_SNAPSHOT_REQUEST), (self._cmd, MAX_MESSAGE)):
            s.setsockopt(zmq.LINGER, 0)
            s.setsockopt(zmq.MAXMSGSIZE, limit)
        self._pub.setsockopt(zmq.SNDHWM, self.hwm)
        self._snap.setsockopt(zmq.SNDHWM, self.hwm)
        self._cmd.setsockopt(zmq.ROUTER_MANDATORY, 0)
        self._topics = tuple(f"{self.table_id}/{view}".encode() for view in SCREEN_AUDIENCES)
        self._auth: AsyncioAuthenticator | None = None
        self._monitors: list[zmq.asyncio.Socket] = []
        self.kicked = 0                       # connections the publisher closed for a foreign subscription
        if self.screens_curve and self.server_keys is None:
            raise ValueError("CURVE on the screens' sockets needs the server's keys")
        if self.server_keys is not None:
            # Every CURVE key may connect to the commands (the handshake still proves the client holds its
            # secret key); which commands it may send is decided per key below, so an unknown key gets a
            # reason. The screens' sockets, when protected, take only the keys listed in the config.
            self._auth = AsyncioAuthenticator(ctx)
            self._auth.start()
            self._auth.configure_curve_callback(domain="*", credentials_provider=_KeyCheck(lambda key: True))
            self._auth.configure_curve_callback(domain=_SCREENS_DOMAIN,
                                                credentials_provider=_KeyCheck(self.client_roles.__contains__))
            self._cmd.curve_server = True
            self._cmd.curve_publickey, self._cmd.curve_secretkey = self.server_keys
            curved = [self._cmd]
            if self.screens_curve:
                for sock in (self._pub, self._snap):
                    sock.zap_domain = _SCREENS_DOMAIN.encode()
                    sock.curve_server = True
                    sock.curve_publickey, sock.curve_secretkey = self.server_keys
                curved += [self._pub, self._snap]
            for name, sock in zip(("commands", "publish", "snapshot"), curved):
                watch = self._monitor(name, sock)
                if sock is self._pub:
                    self._pub_watch = watch
        if not self.screens_curve:
            self._pub_watch = self._monitor("publish", self._pub)
        self._pub.bind(self.endpoints.publish)
        # PUB never waits (it drops at the high-water mark), so updates go out on a plain socket sharing the
        # same one: the asyncio socket would wrap every send in a future for nothing.
        self._pub_now: zmq.Socket[bytes] = zmq.Socket.shadow(self._pub.underlying)
        self._snap.bind(self.endpoints.snapshot)
        self._cmd.bind(self.endpoints.commands)
        self._tasks += [self._supervised("snapshots", self._serve_snapshots),
                        self._supervised("commands", self._serve_commands),
                        self._supervised("subscriptions", self._serve_subscriptions),
                        self._supervised("heartbeats", self._heartbeats)]

    def _monitor(self, name: str, sock: zmq.asyncio.Socket) -> _Connections:
        monitor = sock.get_monitor_socket(
            zmq.EVENT_ACCEPTED | zmq.EVENT_DISCONNECTED | zmq.EVENT_HANDSHAKE_FAILED_NO_DETAIL
            | zmq.EVENT_HANDSHAKE_FAILED_PROTOCOL | zmq.EVENT_HANDSHAKE_FAILED_AUTH)
        self._monitors.append(monitor)
        endpoint = {"commands": self.endpoints.commands, "publish": self.endpoints.publish,
                    "snapshot": self.endpoints.snapshot}[name]
        port = endpoint.rpartition(":")[2]
        watch = _Connections(monitor, self.on_refused, int(port) if port.isdigit() else None)
        self._tasks.append(self._supervised(f"{name} connections", lambda: self._watch_connections(watch)))
        return watch

    def _supervised(self, name: str, serve: Callable[[], Awaitable[None]]) -> asyncio.Task[None]:
        """Run a socket's task for good: one that fails anyway is logged and started again, after a pause that
        grows while it keeps failing (so a failure on every message cannot spin the loop)."""
        async def supervise() -> None:
            pause = 0.01
            while True:
                started = time.monotonic()
                try:
                    await serve()
                except asyncio.CancelledError:
                    raise
                except Exception:  # noqa: BLE001 - logged; the task goes on
                    self.restarts += 1
                    log.exception("bus %s: the %s task failed; restarting it", self.table_id, name)
                pause = 0.01 if time.monotonic() - started > 10 else min(pause * 2, 1.0)
                await asyncio.sleep(pause)

        return asyncio.create_task(supervise(), name=f"bus {self.table_id} {name}")

    async def close(self) -> None:
        for task in (*self._tasks, *self._inflight):
            task.cancel()
        await asyncio.gather(*self._tasks, *self._inflight, return_exceptions=True)
        self._tasks.clear()
        if self._auth is not None:
            self._auth.stop()
        for sock in (self._pub, self._snap, self._cmd):
            try:
                sock.disable_monitor()
            except zmq.ZMQError:
                pass
        for monitor in self._monitors:
            monitor.close(0)
        for s in (self._pub, self._snap, self._cmd):
            s.close(0)

    def publish(self, seq: int, views: Mapping[str, dict[str, Any]], kind: str = "update",
                texts: Mapping[str, str] | None = None) -> None:
        """Send one update (or heartbeat) on every screen view's topic. Never blocks: PUB drops for a
        subscriber at its high-water mark, and that subscriber resnapshots when it sees the gap.
        `texts`: each view's JSON when the caller has it already (`controller.views.ScreenViews`)."""
        self._take_subscriptions()
        fields: dict[str, Any] = {"v": BUS_VERSION, "seq": seq}
        if kind == "update":  # an update names the one before it; a heartbeat only the latest
            fields["prev"], self._prev = self._prev, seq
        fields.update(ts=_now(), kind=kind, table=self.table_id)
        head = json.dumps(fields)[:-1]
        for view in SCREEN_AUDIENCES:
            if view not in views:
                continue
            text = f'{head}, "view": "{view}"'
            if kind == "update":
                text += f', "state": {texts[view] if texts is not None else json.dumps(views[view])}'
            try:
                self._pub_now.send_multipart([f"{self.table_id}/{view}".encode(), (text + "}").encode()],
                                             flags=zmq.NOBLOCK)
            except zmq.Again:
                pass  # no peer can take it now; PUB has nothing to wait for
        self._last_sent = time.monotonic()
        self.published += 1

    async def _heartbeats(self) -> None:
        while True:
            await asyncio.sleep(self.heartbeat_s / 2)
            if time.monotonic() - self._last_sent >= self.heartbeat_s:
                seq, views = self.views()
                self.publish(seq, views, kind="heartbeat")

    async def _serve_subscriptions(self) -> None:
        # Sends on the plain socket can take the edge that would wake an asyncio read of the same socket, so
        # subscriptions are also taken before each publish, and here at least every half heartbeat.
        while True:
            await self._pub.poll(self.heartbeat_s * 500)  # (for POLLIN, the default)
            self._take_subscriptions()

    def _take_subscriptions(self) -> None:
        """Apply each waiting (un)subscription that is a prefix of one of our topics (b"" included: all of
        them); each applies to the peer that sent it, so it is applied before the next one is read. A
        subscription to anything else (or a message that is none) is refused and closes the connections of
        its sender's address: libzmq would keep it until the connection ends (the rest of a closed
        connection's messages, read in the same call, close nothing more)."""
        kicked: set[str | None] = set()
        while True:
            try:
                frame = self._pub_now.recv(zmq.NOBLOCK, copy=False)
            except zmq.Again:
                return
            msg = frame.bytes
            if msg[:1] in (b"\x00", b"\x01") and any(t.startswith(msg[1:]) for t in self._topics):
                self._pub_now.setsockopt(zmq.SUBSCRIBE if msg[0] == 1 else zmq.UNSUBSCRIBE, msg[1:])
            elif msg[:1] != b"\x00":  # an unsubscription of a topic never applied costs nothing
                peer = _peer(frame)
                self._refused("subscriber", "not a subscription to this table's topics: connection closed", frame,
                              None)
                if peer in kicked:
                    continue
                if not self._kick(peer):
                    return  # its connection is not known yet: read on once the monitor has told it
                kicked.add(peer)

    def _kick(self, peer: str | None) -> bool:
        """Close the publisher's connections from `peer` (the subscriber reconnects, if it is one, and is
        welcome with our topics); every connection when the message named no peer (ZMTP 1.0 framing, which no
        current client uses, carries none). False when none is known."""
        self._pub_watch.catch_up()
        fds = [fd for fd, address in self._pub_watch.peers.items() if peer is None or address == peer]
        for fd in fds:
            del self._pub_watch.peers[fd]
            try:
                dup = os.dup(fd)
            except OSError:
                continue
            try:
                sock = socket.socket(fileno=dup)
            except OSError:
                os.close(dup)
                continue
            with sock:
                try:
                    sock.shutdown(socket.SHUT_RDWR)  # libzmq sees the end and drops it, with its subscriptions
                except OSError:
                    continue
            self.kicked += 1
        return bool(fds)

    async def _serve_snapshots(self) -> None:
        while True:
            frames = await self._snap.recv_multipart(copy=False)
            if len(frames) < 2:
                continue
            ident, body = frames[0].bytes, frames[-1]
            try:
                req = parse_message(body.bytes, MAX_SNAPSHOT_REQUEST)
                if not isinstance(req, dict):
                    raise Malformed('expected {"view": "public"|"dealer"}')
                view = req.get("view", "public")
                table = req.get("table", self.table_id)
                if table != self.table_id:
                    raise _Refused(f"this is table {self.table_id}, not {str(table)[:80]}", None)
                if view not in SCREEN_AUDIENCES:
                    raise ValueError(f"no such view {str(view)[:80]!r} on the bus "
                                     f"(views: {', '.join(SCREEN_AUDIENCES)})")
                seq, views = self.views()
                reply: dict[str, Any] = {"v": BUS_VERSION, "kind": "snapshot", "seq": seq, "ts": _now(),
                                         "table": self.table_id, "view": view, "state": views[view]}
            except Malformed as exc:
                reason = f"malformed snapshot request: {exc}"
                self._refused("snapshot", reason, body, None)
                reply = {"v": BUS_VERSION, "kind": "error", "table": self.table_id, "error": reason}
            except _Refused as exc:
                self._refused("snapshot", exc.reason, body, None)
                reply = {"v": BUS_VERSION, "kind": "error", "table": self.table_id, "error": exc.reason}
            except ValueError as exc:
                reply = {"v": BUS_VERSION, "kind": "error", "table": self.table_id, "error": str(exc)}
            await self._snap.send_multipart([ident, b"", json.dumps(reply).encode()])

    def _refused(self, who: str, reason: str, body: Any, command: str | None) -> None:
        """Hand a refusal on as a bounded summary of the message (never the message itself)."""
        info = summary(body.bytes, _peer(body))
        if command is not None:
            info["command"] = command[:64]
        self.on_refused(who, reason, info)

    async def _serve_commands(self) -> None:
        while True:
            frames = await self._cmd.recv_multipart(copy=False)
            if len(frames) < 2:
                continue
            if self.pipelined:
                # Answer in a task of its own, so the next command is read (and can share the writer's group
                # commit) while this one is journaled. Tasks start in arrival order, so commands still reach
                # the runtime in the order they came.
                task = asyncio.create_task(self._answer(frames))
                self._inflight.add(task)
                task.add_done_callback(self._inflight.discard)
            else:
                await self._answer(frames)

    async def _answer(self, frames: list[Any]) -> None:
        ident, body = frames[0].bytes, frames[-1]
        user = body.get("User-Id") if self.server_keys is not None else None
        key = user if user else None
        who = key or "unauthenticated"
        req_id: Any = None
        command: str | None = None
        try:
            try:
                req = parse_message(body.bytes)
            except Malformed as exc:
                raise _Refused(f"malformed command: {exc}", None) from None
            if not isinstance(req, dict) or not isinstance(req.get("command"), str) or \
                    not isinstance(req.get("args", {}), dict):
                raise _Refused("malformed command: expected {\"command\": str, \"args\": {...}}", None)
            command = req["command"]
            req_id = req.get("id")
            if req_id is not None and (isinstance(req_id, bool) or not isinstance(req_id, (int, str))
                                       or (isinstance(req_id, str) and not 0 < len(req_id) <= 64)):
                req_id = None
                raise _Refused("malformed command: id must be a whole number or text of 1 to 64 characters", None)
            table = req.get("table", self.table_id)
            if table != self.table_id:
                raise _Refused(f"this is table {self.table_id}, not {str(table)[:80]}: the command was not "
                               f"applied", None)
            if self.server_keys is not None:
                role = self.client_roles.get(key.encode()) if key else None
                if role is None:
                    raise _Refused("unknown key: this client is not authorised for any role", None)
            else:
                role = None
            args = dict(req.get("args", {}))
            origin = Origin(key, _peer(body), req_id, digest(command, args))
            reply = await self.on_command(role, command, args, origin)
        except _Refused as refusal:
            self._refused(who, refusal.reason, body, command)
            reply = {"ok": False, "error": refusal.reason}
        except Exception as exc:  # a bug in one command must not take the service down
            log.exception("command failed")
            reply = {"ok": False, "error": f"internal error: {type(exc).__name__}"}
        reply = {"v": BUS_VERSION, "id": req_id, **reply}
        await self._cmd.send_multipart([ident, b"", json.dumps(reply).encode()])

    async def _watch_connections(self, watch: _Connections) -> None:
        while True:
            watch.event(await watch.monitor.recv_multipart())


def _peer(frame: Any) -> str | None:
    """The IP address a message came from (libzmq's Peer-Address property), None when unknown."""
    try:
        return frame.get("Peer-Address")
    except (zmq.ZMQError, AttributeError, UnicodeDecodeError):
        return None  # a ZMTP 1.0 peer's messages carry no properties (libzmq still speaks it)


def _fd_peer(fd: int) -> str:
    """The peer's IP address of a connection libzmq accepted on descriptor `fd` (read from a duplicate)."""
    try:
        dup = os.dup(fd)
    except OSError:
        return "unknown"
    try:
        sock = socket.socket(fileno=dup)
    except OSError:
        os.close(dup)
        return "unknown"
    try:
        address = sock.getpeername()
    except OSError:
        return "unknown"
    finally:
        sock.close()
    return str(address[0]) if isinstance(address, tuple) else str(address)


_SCREENS_DOMAIN = "screens"  # the ZAP domain of the PUB and snapshot sockets when they are CURVE-protected


class _Connections:
    """A socket's connections (descriptor -> peer's IP address) from its monitor, and each failed CURVE handshake
    reported with the peer's address. libzmq's monitor names a connection by its descriptor (on ACCEPTED and
    DISCONNECTED), not its address, and reports a failure just before the DISCONNECTED of the same connection.
    The address is read from the descriptor when the ACCEPTED is read; a handshake that fails at once (a
    client without CURVE) has closed it by then, and its address is the newest one in TIME_WAIT on our port
    that no failure took before (Linux's /proc/net/tcp: the side that closes keeps it there), else unknown."""

    def __init__(self, monitor: zmq.asyncio.Socket, on_refused: Refusal, port: int | None) -> None:
        self.monitor = monitor
        self._now: zmq.Socket[bytes] = zmq.Socket.shadow(monitor.underlying)
        self.on_refused = on_refused
        self.port = port
        self.peers: dict[int, str] = {}
        self._failed: str | None = None
        self._taken: OrderedDict[str, None] = OrderedDict()  # TIME_WAIT peers (address:port) already named
        self._lookups: list[float] = []                       # times of the latest /proc reads (at most 50 a s)

    def catch_up(self) -> None:
        """Take every event waiting now (so `peers` knows the connections accepted so far)."""
        while True:
            try:
                self.event(self._now.recv_multipart(zmq.NOBLOCK))
            except zmq.Again:
                return

    def event(self, frames: list[bytes]) -> None:
        from zmq.utils.monitor import parse_monitor_message

        msg = parse_monitor_message(frames)
        event, value = msg["event"], msg["value"]
        if event == zmq.EVENT_ACCEPTED:
            self.peers[value] = _fd_peer(value)
            if len(self.peers) > 4096:  # descriptors whose DISCONNECTED never came: keep the newest
                for fd in list(self.peers)[:1024]:
                    del self.peers[fd]
            return
        if event == zmq.EVENT_DISCONNECTED:
            peer = self.peers.pop(value, None)
            if self._failed is not None:
                info: dict[str, Any] = {"peer": peer}
                if peer in (None, "unknown"):
                    # a likely address, not a certain one: the record says so, so an audit never reads it as fact
                    info = {"peer": self._closed_peer(), "peer_from": "time_wait"}
                self.on_refused("unauthenticated", self._failed, info)
                self._failed = None
            return
        if self._failed is not None:  # a failure whose DISCONNECTED did not follow
            self.on_refused("unauthenticated", self._failed, {"peer": None})
        endpoint = msg["endpoint"].decode() if isinstance(msg["endpoint"], bytes) else str(msg["endpoint"])
        reasons: dict[int, str] = {zmq.EVENT_HANDSHAKE_FAILED_AUTH: "authentication failed",
                                   zmq.EVENT_HANDSHAKE_FAILED_PROTOCOL:
                                       "security handshake failed (not a CURVE client?)"}
        reason = reasons.get(event, "security handshake failed")
        self._failed = f"{reason} on {endpoint}"


    def _closed_peer(self) -> str:
        now = time.monotonic()
        self._lookups = [t for t in self._lookups if now - t < 1.0]
        if self.port is None or len(self._lookups) >= 50:
            return "unknown"
        self._lookups.append(now)
        newest: tuple[int, str] | None = None
        for peer, when in _time_wait(self.port):
            if peer not in self._taken and (newest is None or when > newest[0]):
                newest = (when, peer)
        if newest is None:
            return "unknown"
        self._taken[newest[1]] = None
        while len(self._taken) > 4096:
            self._taken.popitem(last=False)
        return newest[1].rpartition(":")[0]


def _time_wait(port: int) -> list[tuple[str, int]]:
    """(peer address:port, TIME_WAIT timer left) of our port's connections in TIME_WAIT (Linux; else none)."""
    import struct

    out = []
    for path, family, words in (("/proc/net/tcp", socket.AF_INET, 1), ("/proc/net/tcp6", socket.AF_INET6, 4)):
        try:
            lines = Path(path).read_text().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            cols = line.split()
            if len(cols) < 6 or cols[3] != "06" or int(cols[1].rsplit(":", 1)[1], 16) != port:
                continue
            address, _, remote_port = cols[2].partition(":")
            raw = b"".join(struct.pack("=I", int(address[i * 8:i * 8 + 8], 16)) for i in range(words))
            ip = socket.inet_ntop(family, raw)
            if ip.startswith("::ffff:"):
                ip = ip[7:]
            out.append((f"{ip}:{int(remote_port, 16)}", int(cols[5].partition(":")[2], 16)))
    return out


class _KeyCheck:
    """A ZAP credentials provider: `allowed(z85 public key)` decides whether a CURVE client may connect."""

    def __init__(self, allowed: Callable[[bytes], bool]) -> None:
        self.allowed = allowed

    def callback(self, domain: str, key: bytes) -> bool:
        return bool(self.allowed(key))


class _Refused(Exception):
    def __init__(self, reason: str, request: dict[str, Any] | None) -> None:
        super().__init__(reason)
        self.reason, self.request = reason, request


# ---------------------------------------------------------------------------------------------------
# Clients


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

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
import errno
import json
import logging
import os
import socket
import time
from collections import OrderedDict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Awaitable, Callable, Mapping

import zmq
import zmq.asyncio
from zmq.auth.asyncio import AsyncioAuthenticator

# The bus's public names, importable from here as before: its wire (limits, parsing), its keys and roles, its clients.
from controller.busclient import BusClient, CommandClient, CommandError
from controller.buskeys import Role, create_keys, load_client_roles, load_public_key, load_secret_keys, parse_role
from controller.buswire import (BUS_VERSION, MAX_DEPTH, MAX_INT, MAX_MESSAGE, MAX_SNAPSHOT_REQUEST,
                                MAX_SUBSCRIPTION, BusEndpoints, Malformed, Origin, digest, parse_message, summary)
from controller.views import SCREEN_AUDIENCES

__all__ = ["BUS_VERSION", "BusEndpoints", "BusServer", "BusClient", "CommandClient", "CommandError",
           "Role", "Origin", "Malformed", "parse_message", "summary", "parse_role", "load_client_roles",
           "create_keys", "load_public_key", "load_secret_keys", "MAX_MESSAGE", "MAX_SNAPSHOT_REQUEST",
           "MAX_SUBSCRIPTION", "MAX_DEPTH", "MAX_INT"]

log = logging.getLogger("croupier.bus")


# ---------------------------------------------------------------------------------------------------
# Server


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
        try:
            await _bind(self._pub, self.endpoints.publish)
            await _bind(self._snap, self.endpoints.snapshot)
            await _bind(self._cmd, self.endpoints.commands)
        except BaseException:
            await self.close()  # a bus that could not start keeps no socket open: its context could never end
            raise
        # PUB never waits (it drops at the high-water mark), so updates go out on a plain socket sharing the
        # same one: the asyncio socket would wrap every send in a future for nothing.
        self._pub_now: zmq.Socket[bytes] = zmq.Socket.shadow(self._pub.underlying)
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


async def _bind(sock: zmq.asyncio.Socket, endpoint: str, timeout: float = 5.0) -> None:
    """Bind, waiting out "Address already in use" for up to `timeout` s: a bus closed in this process a moment
    ago (a table restarted in place) leaves its ports to libzmq's I/O thread, which closes them a little later."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            sock.bind(endpoint)
            return
        except zmq.ZMQError as exc:
            if exc.errno != errno.EADDRINUSE or time.monotonic() >= deadline:
                raise
        await asyncio.sleep(0.01)  # backoff between tries, bounded by the deadline


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

"""The ZeroMQ bus: the Clone pattern for screens (PUB updates, ROUTER snapshots, heartbeats) and CURVE-authenticated commands with roles.

Messages and their fields are documented in controller/bus.md. In short:
- PUB `[b"<table>/<view>", json]` with `{"v", "seq", "prev", "ts", "kind": "update"|"heartbeat", "table", "view",
  "state"}`; one update per group commit, the state after its last record (`seq`), published on every screen
  view's topic; `prev` is the seq of the update before it, so a subscriber detects a gap.
- ROUTER snapshot: request `{"view": "public"}` -> `{"kind": "snapshot", "seq", "state", ...}`.
- ROUTER commands (CURVE): request `{"v": 2, "id": ..., "command": ..., "args": {...}}` ->
  `{"v": 2, "id": ..., "ok": bool, "error"|"result": ...}`; the client's public key decides its role.
A slow subscriber never blocks the table: PUB drops at the high-water mark, and nothing here awaits a
subscriber.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Awaitable, Callable, Mapping

import zmq
import zmq.asyncio
from zmq.auth.asyncio import AsyncioAuthenticator

from controller.views import SCREEN_AUDIENCES

__all__ = ["BUS_VERSION", "BusEndpoints", "BusServer", "BusClient", "CommandClient", "CommandError",
           "Role", "parse_role", "load_client_roles", "create_keys"]

log = logging.getLogger("croupier.bus")
BUS_VERSION = 2  # 2: an update covers a group commit (`prev` links it to the one before); 1: one per record


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
# Server


@dataclass(frozen=True)
class BusEndpoints:
    publish: str = "tcp://127.0.0.1:5550"
    snapshot: str = "tcp://127.0.0.1:5551"
    commands: str = "tcp://127.0.0.1:5552"


CommandHandler = Callable[[Role | None, str, dict[str, Any]], Awaitable[dict[str, Any]]]
Refusal = Callable[[str, str, dict[str, Any] | None], None]


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
    _last_sent: float = 0.0
    _prev: int | None = None  # the seq of the last update sent; None until the first since this start
    _tasks: list[asyncio.Task[None]] = field(default_factory=list)
    _inflight: set[asyncio.Task[None]] = field(default_factory=set)

    async def start(self) -> None:
        self.context = self.context or zmq.asyncio.Context()
        ctx = self.context
        self._pub = ctx.socket(zmq.PUB)
        self._snap = ctx.socket(zmq.ROUTER)
        self._cmd = ctx.socket(zmq.ROUTER)
        for s in (self._pub, self._snap, self._cmd):
            s.setsockopt(zmq.LINGER, 0)
        self._pub.setsockopt(zmq.SNDHWM, self.hwm)
        self._snap.setsockopt(zmq.SNDHWM, self.hwm)
        self._cmd.setsockopt(zmq.ROUTER_MANDATORY, 0)
        self._auth: AsyncioAuthenticator | None = None
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
            if self.screens_curve:
                for sock in (self._pub, self._snap):
                    sock.zap_domain = _SCREENS_DOMAIN.encode()
                    sock.curve_server = True
                    sock.curve_publickey, sock.curve_secretkey = self.server_keys
            self._monitor = self._cmd.get_monitor_socket(
                zmq.EVENT_HANDSHAKE_FAILED_NO_DETAIL | zmq.EVENT_HANDSHAKE_FAILED_PROTOCOL
                | zmq.EVENT_HANDSHAKE_FAILED_AUTH)
            self._tasks.append(asyncio.create_task(self._watch_handshakes()))
        self._pub.bind(self.endpoints.publish)
        # PUB never waits (it drops at the high-water mark), so updates go out on a plain socket sharing the
        # same one: the asyncio socket would wrap every send in a future for nothing.
        self._pub_now = zmq.Socket.shadow(self._pub.underlying)
        self._snap.bind(self.endpoints.snapshot)
        self._cmd.bind(self.endpoints.commands)
        self._tasks += [asyncio.create_task(self._serve_snapshots()), asyncio.create_task(self._serve_commands()),
                        asyncio.create_task(self._heartbeats())]

    async def close(self) -> None:
        for task in (*self._tasks, *self._inflight):
            task.cancel()
        await asyncio.gather(*self._tasks, *self._inflight, return_exceptions=True)
        self._tasks.clear()
        if self._auth is not None:
            self._auth.stop()
        if self.server_keys is not None:
            self._cmd.disable_monitor()
            self._monitor.close(0)
        for s in (self._pub, self._snap, self._cmd):
            s.close(0)

    def publish(self, seq: int, views: Mapping[str, dict[str, Any]], kind: str = "update",
                texts: Mapping[str, str] | None = None) -> None:
        """Send one update (or heartbeat) on every screen view's topic. Never blocks: PUB drops for a
        subscriber at its high-water mark, and that subscriber resnapshots when it sees the gap.
        `texts`: each view's JSON when the caller has it already (`controller.views.ScreenViews`)."""
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

    async def _serve_snapshots(self) -> None:
        while True:
            frames = await self._snap.recv_multipart()
            if len(frames) < 2:
                continue
            ident, body = frames[0], frames[-1]
            try:
                req = json.loads(body)
                view = req.get("view", "public") if isinstance(req, dict) else None
                if view not in SCREEN_AUDIENCES:
                    raise ValueError(f"no such view {view!r} on the bus (views: {', '.join(SCREEN_AUDIENCES)})")
                seq, views = self.views()
                reply: dict[str, Any] = {"v": BUS_VERSION, "kind": "snapshot", "seq": seq, "ts": _now(),
                                         "table": self.table_id, "view": view, "state": views[view]}
            except (ValueError, AttributeError) as exc:
                reply = {"v": BUS_VERSION, "kind": "error", "error": str(exc)}
            await self._snap.send_multipart([ident, b"", json.dumps(reply).encode()])

    async def _serve_commands(self) -> None:
        while True:
            frames = await self._cmd.recv_multipart(copy=False)
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
        key = user.encode() if user else None
        req_id: Any = None
        try:
            try:
                req = json.loads(body.bytes)
            except ValueError:
                raise _Refused("malformed command: not JSON", None) from None
            if not isinstance(req, dict) or not isinstance(req.get("command"), str) or \
                    not isinstance(req.get("args", {}), dict):
                raise _Refused("malformed command: expected {\"command\": str, \"args\": {...}}", None)
            req_id = req.get("id")
            if self.server_keys is not None:
                role = self.client_roles.get(key) if key else None
                if role is None:
                    raise _Refused("unknown key: this client is not authorised for any role", req)
            else:
                role = None
            reply = await self.on_command(role, req["command"], dict(req.get("args", {})))
        except _Refused as refusal:
            self.on_refused(key.decode() if key else "unauthenticated", refusal.reason, refusal.request)
            reply = {"ok": False, "error": refusal.reason}
        except Exception as exc:  # a bug in one command must not take the service down
            log.exception("command failed")
            reply = {"ok": False, "error": f"internal error: {type(exc).__name__}"}
        reply = {"v": BUS_VERSION, "id": req_id, **reply}
        await self._cmd.send_multipart([ident, b"", json.dumps(reply).encode()])

    async def _watch_handshakes(self) -> None:
        from zmq.utils.monitor import parse_monitor_message

        while True:
            msg = parse_monitor_message(await self._monitor.recv_multipart())
            reason = {zmq.EVENT_HANDSHAKE_FAILED_AUTH: "authentication failed",
                      zmq.EVENT_HANDSHAKE_FAILED_PROTOCOL: "security handshake failed (not a CURVE client?)",
                      }.get(msg["event"], "security handshake failed")
            endpoint = msg["endpoint"].decode() if isinstance(msg["endpoint"], bytes) else str(msg["endpoint"])
            self.on_refused("unauthenticated", f"{reason} on {endpoint}", None)


_SCREENS_DOMAIN = "screens"  # the ZAP domain of the PUB and snapshot sockets when they are CURVE-protected


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
    """Sends commands to a table; with keys, over CURVE (our key pair, the server's public key)."""

    endpoint: str
    client_keys: tuple[bytes, bytes] | None = None
    server_public: bytes | None = None
    timeout_s: float = 5.0
    context: zmq.asyncio.Context | None = None
    _n: int = 0

    def __post_init__(self) -> None:
        self.context = self.context or zmq.asyncio.Context.instance()
        self._sock = self.context.socket(zmq.DEALER)
        self._sock.setsockopt(zmq.LINGER, 0)
        if self.client_keys is not None:
            if self.server_public is None:
                raise ValueError("a CURVE client needs the server's public key")
            self._sock.curve_publickey, self._sock.curve_secretkey = self.client_keys
            self._sock.curve_serverkey = self.server_public
        self._sock.connect(self.endpoint)

    async def send(self, command: str, **args: Any) -> dict[str, Any]:
        """Send a command and return the reply ({"ok": True, "result": ...} or {"ok": False, "error": ...})."""
        self._n += 1
        req = {"v": BUS_VERSION, "id": self._n, "command": command, "args": args}
        await self._sock.send_multipart([b"", json.dumps(req).encode()])
        return await self._reply(self._n)

    async def send_many(self, requests: list[tuple[str, dict[str, Any]]]) -> list[dict[str, Any]]:
        """Send several commands at once (they arrive in order) and return their replies in the same order; a
        server that answers commands concurrently journals them in one group commit."""
        ids = []
        for command, args in requests:
            self._n += 1
            ids.append(self._n)
            req = {"v": BUS_VERSION, "id": self._n, "command": command, "args": args}
            await self._sock.send_multipart([b"", json.dumps(req).encode()])
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
        await self._sock.send_multipart([b"", body])
        return await self._reply(None)

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
    whether that state is the update right after the one before (False: a snapshot)."""

    table_id: str
    view: str
    endpoints: BusEndpoints
    on_state: Callable[[int, dict[str, Any]], None]
    heartbeat_s: float = 1.0
    context: zmq.asyncio.Context | None = None
    on_alive: Callable[[], None] | None = None    # anything heard from the server (update, heartbeat, snapshot)
    on_silence: Callable[[], None] | None = None  # nothing heard for three heartbeats
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
        try:
            while True:
                await req.send_multipart([b"", json.dumps({"view": self.view}).encode()])
                if await req.poll(self.heartbeat_s * 3000):
                    msg = json.loads((await req.recv_multipart())[-1])
                    if msg.get("kind") != "snapshot":
                        raise CommandError(msg.get("error", "snapshot refused"))
                    break
        finally:
            req.close(0)
        self.snapshots += 1
        if self.on_alive is not None:
            self.on_alive()
        self.heard = time.monotonic()
        if msg["seq"] != self.seq:
            self.seq, self.ts, self.linked = msg["seq"], msg.get("ts"), False
            self.on_state(self.seq, msg["state"])

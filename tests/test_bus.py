"""The bus: late joiners snapshot then follow without gaps, heartbeats when idle, a stalled subscriber does not
slow the table, and commands are authenticated (CURVE) and authorised per role."""

from __future__ import annotations

import asyncio
import json
import socket
import time
from pathlib import Path
from typing import Any

import pytest
import zmq
import zmq.asyncio

from controller.bus import BusClient, BusEndpoints, BusServer, CommandClient, Role, create_keys, load_client_roles, \
    load_secret_keys, parse_role


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


def test_late_joiner_gets_snapshot_then_every_update() -> None:
    async def main() -> None:
        table, ep = FakeTable(), free_endpoints()
        server = BusServer("t1", ep, table.views, table.on_command, table.on_refused, heartbeat_s=0.2)
        await server.start()
        try:
            for _ in range(50):  # history before the subscriber joins
                table.seq += 1
                server.publish(*table.views())
            seen: list[int] = []
            client = BusClient("t1", "public", ep, lambda seq, st: seen.append(seq), heartbeat_s=0.2)
            task = asyncio.create_task(client.run())
            await wait_for(lambda: seen and seen[0] == 50)
            for _ in range(500):
                table.seq += 1
                server.publish(*table.views())
                await asyncio.sleep(0)
            await wait_for(lambda: seen[-1] == 550)
            assert seen == list(range(50, 551)), "every update once, in order, no gap"
            assert client.snapshots == 1 and client.gaps == 0
            task.cancel()
        finally:
            await server.close()

    asyncio.run(main())


def test_an_update_covers_a_group_commit_and_names_the_one_before() -> None:
    # A group commit journals several records and publishes once, with the last record's seq: the seq jumps,
    # `prev` links the update to the one before, and a subscriber follows without a snapshot. An update whose
    # `prev` is not the seq it holds (one it missed) makes it take a snapshot.
    async def main() -> None:
        table, ep = FakeTable(), free_endpoints()
        server = BusServer("t1", ep, table.views, table.on_command, table.on_refused, heartbeat_s=0.2)
        await server.start()
        raw = raw_subscriber(ep)
        try:
            assert await raw.poll(5000)  # a heartbeat: subscribed
            await raw.recv_multipart()
            table.seq = 3
            server.publish(*table.views())
            seen: list[int] = []
            client = BusClient("t1", "public", ep, lambda seq, st: seen.append(seq), heartbeat_s=0.2)
            task = asyncio.create_task(client.run())
            await wait_for(lambda: seen == [3])
            links = []
            for step in (1, 3, 2, 5, 1):
                table.seq += step
                server.publish(*table.views())
                await asyncio.sleep(0)
            await wait_for(lambda: seen and seen[-1] == 15)
            assert seen == [3, 4, 7, 9, 14, 15] and client.snapshots == 1 and client.gaps == 0 and client.linked
            while len(links) < 6:
                assert await raw.poll(5000)
                msg = json.loads((await raw.recv_multipart())[1])
                if msg["kind"] == "update":
                    links.append((msg["prev"], msg["seq"]))
            assert links == [(None, 3), (3, 4), (4, 7), (7, 9), (9, 14), (14, 15)]
            # The server forgets an update (as a subscriber's high-water mark would drop one): the next one's
            # prev names a seq this subscriber never held.
            table.seq = 20
            server.publish(*table.views())
            server._prev = 30
            table.seq = 31
            server.publish(*table.views())
            await wait_for(lambda: seen[-1] == 31)
            assert seen == [3, 4, 7, 9, 14, 15, 20, 31] and client.gaps == 1 and client.snapshots == 2
            assert not client.linked  # 31 came from the snapshot
            task.cancel()
        finally:
            raw.close(0)
            await server.close()

    asyncio.run(main())


def test_heartbeats_when_idle_and_gap_means_resnapshot() -> None:
    async def main() -> None:
        table, ep = FakeTable(), free_endpoints()
        server = BusServer("t1", ep, table.views, table.on_command, table.on_refused, heartbeat_s=0.1)
        await server.start()
        sub = raw_subscriber(ep)
        try:
            assert await sub.poll(5000)
            topic, body = await sub.recv_multipart()
            msg = json.loads(body)
            assert topic == b"t1/public" and msg["kind"] == "heartbeat" and msg["v"] == 2 and "state" not in msg
            seen: list[int] = []
            client = BusClient("t1", "public", ep, lambda seq, st: seen.append(seq), heartbeat_s=0.1)
            task = asyncio.create_task(client.run())
            await wait_for(lambda: seen == [0])
            table.seq = 7  # state moved on without an update reaching this subscriber: a gap
            await wait_for(lambda: seen == [0, 7])
            assert client.gaps >= 1 and client.snapshots == 2
            task.cancel()
        finally:
            sub.close(0)
            await server.close()

    asyncio.run(main())


@pytest.mark.slow
def test_a_stalled_subscriber_does_not_block_publishing() -> None:
    async def main() -> None:
        table, ep = FakeTable(), free_endpoints()
        server = BusServer("t1", ep, table.views, table.on_command, table.on_refused, hwm=10, heartbeat_s=0.05)
        await server.start()
        ctx = zmq.asyncio.Context.instance()
        stalled = ctx.socket(zmq.SUB)
        stalled.setsockopt(zmq.RCVHWM, 10)
        stalled.setsockopt(zmq.SUBSCRIBE, b"")
        stalled.connect(ep.publish)
        try:
            assert await stalled.poll(5000)  # one heartbeat proves the subscription is live; then no more reads
            await stalled.recv_multipart()
            before = server.published
            for _ in range(20_000):
                table.seq += 1
                server.publish(*table.views())  # returns at once: PUB drops for the stalled peer
            assert server.published - before == 20_000
        finally:
            stalled.close(0)
            await server.close()

    asyncio.run(main())


@pytest.fixture
def keys(tmp_path: Path) -> Path:
    for name in ("server", "dealer", "spot3", "stranger"):
        create_keys(tmp_path, name)
    return tmp_path


def test_commands_are_authenticated_and_authorised(keys: Path) -> None:
    async def main() -> None:
        table, ep = FakeTable(), free_endpoints()
        roles = load_client_roles([(keys / "dealer.key", "dealer"), (keys / "spot3.key", "spot:3")])
        server_keys = load_secret_keys(keys / "server.key_secret")
        server = BusServer("t1", ep, table.views, table.on_command, table.on_refused, server_keys=server_keys,
                           client_roles=roles)
        await server.start()

        def client(name: str, **kw: Any) -> CommandClient:
            return CommandClient(ep.commands, load_secret_keys(keys / f"{name}.key_secret"), server_keys[0], **kw)

        try:
            dealer, spot3, stranger = client("dealer"), client("spot3"), client("stranger")
            assert (await dealer.send("void", reason="misdeal")) == {"v": 2, "id": dealer.last_id, "ok": True,
                                                                     "result": "void"}
            assert table.commands[-1][0] == Role("dealer")
            wrong = await spot3.send("void", reason="x")
            assert wrong["ok"] is False and "may not void" in wrong["error"]
            unknown = await stranger.send("void", reason="x")
            assert unknown["ok"] is False and "unknown key" in unknown["error"]
            assert table.refused[-1][1].startswith("unknown key")
            malformed = await dealer.send_raw(b"{not json")
            assert malformed["ok"] is False and "malformed" in malformed["error"]
            shapeless = await dealer.send_raw(b'{"args": 3}')
            assert shapeless["ok"] is False and "malformed" in shapeless["error"]
            # A client without CURVE never gets a command through; the failed handshake is reported.
            plain = CommandClient(ep.commands, timeout_s=0.5)
            with pytest.raises(Exception, match="no answer"):
                await plain.send("void", reason="x")
            await wait_for(lambda: any(who == "unauthenticated" for who, _ in table.refused))
            assert all(c[1] != "void" or c[0] is not None for c in table.commands)
            for c in (dealer, spot3, stranger, plain):
                c.close()
        finally:
            await server.close()

    asyncio.run(main())


def test_roles() -> None:
    assert parse_role("spot:3") == Role("spot", 3) and str(Role("spot", 3)) == "spot:3"
    assert parse_role("dealer") == Role("dealer")
    for bad in ("spot:0", "spot:", "player", ""):
        with pytest.raises(ValueError, match="unknown role"):
            parse_role(bad)


def test_screens_sockets_under_curve_take_only_listed_keys(keys: Path) -> None:
    """With `screens_curve` the PUB and snapshot sockets are CURVE servers that admit only the keys the config
    lists: a listed client snapshots and follows; a stranger's valid key and a plain socket get nothing."""
    async def main() -> None:
        table, ep = FakeTable(), free_endpoints()
        roles = load_client_roles([(keys / "dealer.key", "dealer")])
        server_keys = load_secret_keys(keys / "server.key_secret")
        server = BusServer("t1", ep, table.views, table.on_command, table.on_refused, server_keys=server_keys,
                           client_roles=roles, screens_curve=True, heartbeat_s=0.2)
        await server.start()
        server.publish(0, table.views()[1])  # the table's first update: the next ones name it
        got: list[int] = []
        alive = [0]
        listed = BusClient("t1", "dealer", ep, lambda seq, state: got.append(seq), heartbeat_s=0.2,
                           on_alive=lambda: alive.__setitem__(0, alive[0] + 1),
                           client_keys=load_secret_keys(keys / "dealer.key_secret"), server_public=server_keys[0])
        task = asyncio.create_task(listed.run())
        ctx = zmq.asyncio.Context.instance()
        outsiders = []
        for pair in (load_secret_keys(keys / "stranger.key_secret"), None):
            sub, req = ctx.socket(zmq.SUB), ctx.socket(zmq.DEALER)
            for sock in (sub, req):
                sock.setsockopt(zmq.LINGER, 0)
                if pair is not None:
                    sock.curve_publickey, sock.curve_secretkey = pair
                    sock.curve_serverkey = server_keys[0]
            sub.setsockopt(zmq.SUBSCRIBE, b"t1/")
            sub.connect(ep.publish)
            req.connect(ep.snapshot)
            await req.send_multipart([b"", b'{"view": "public"}'])
            outsiders.append((sub, req))
        try:
            await wait_for(lambda: got == [0])
            # The subscription reaches PUB after the CURVE handshake: heartbeats until one is heard on it.
            for _ in range(500):
                if alive[0] > listed.snapshots:
                    break
                server.publish(0, table.views()[1], kind="heartbeat")
                await asyncio.sleep(0.02)  # polling for the subscription, as wait_for does
            assert alive[0] > listed.snapshots, "the listed key never heard the PUB socket"
            for seq in (1, 2, 3):
                table.seq = seq
                server.publish(seq, table.views()[1])
            await wait_for(lambda: got == [0, 1, 2, 3])
            assert listed.snapshots == 1 and listed.gaps == 0
            for sub, req in outsiders:   # neither the stranger's key nor no key hears a thing
                assert not await sub.poll(300) and not await req.poll(10)
        finally:
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)
            for sub, req in outsiders:
                sub.close(0)
                req.close(0)
            await server.close()

    asyncio.run(main())


# ---------------------------------------------------------------------------------------------------
# Hardening (issue 43): nothing a peer sends may stop, grow or flood the service.

from controller.bus import CommandError  # noqa: E402

MAX_DEPTH = 16  # controller.bus.MAX_DEPTH, spelt out so these tests read the same against any version


def _zmtp_frame(body: bytes, command: bool = False) -> bytes:
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
    sock.sendall(_zmtp_frame(b"\x05READY\x0bSocket-Type" + len(socket_type).to_bytes(4, "big") + socket_type,
                             command=True))
    flags, body = zmtp_read(sock)
    assert flags & 0x04 and body.startswith(b"\x05READY"), body[:40]
    return sock


def rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise AssertionError("no VmRSS")


_SERVER_SCRIPT = """
import asyncio, sys
from controller.bus import BusEndpoints, BusServer

async def main():
    ep = BusEndpoints(*sys.argv[1:4])
    async def on_command(role, command, args, origin=None):
        return {"ok": True, "result": command}
    server = BusServer("t1", ep, lambda: (1, {"public": {"n": 1}, "dealer": {"n": 1}}), on_command,
                       lambda *a: None, heartbeat_s=0.1)
    await server.start()
    print("ready", flush=True)
    await asyncio.get_running_loop().run_in_executor(None, sys.stdin.read)
    await server.close()

asyncio.run(main())
"""


@pytest.fixture
def bus_process() -> Any:
    """A BusServer of table t1 in a process of its own (whose memory a test measures), until stdin closes."""
    import subprocess
    import sys

    ep = free_endpoints()
    proc = subprocess.Popen([sys.executable, "-c", _SERVER_SCRIPT, ep.publish, ep.snapshot, ep.commands],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, cwd=Path(__file__).resolve().parent.parent)
    assert proc.stdout is not None and proc.stdout.readline() == b"ready\n"
    yield proc, ep
    proc.stdin.close()  # type: ignore[union-attr]
    try:
        proc.wait(10)
    except Exception:  # noqa: BLE001
        proc.kill()


def test_a_huge_subscription_or_many_foreign_ones_do_not_grow_the_publisher(bus_process: Any) -> None:
    """Issue 43 point 2: one 10 MB subscription took a table from 35 MB to 1.2 GB (libzmq keeps a node per
    byte). Now the publisher drops a subscription over MAX_SUBSCRIPTION with its connection, and closes the
    connection of a peer that subscribes to a topic it does not publish, so no pile of them is kept; a
    subscriber of its topics still hears it."""
    proc, ep = bus_process
    before = rss_kib(proc.pid)
    hostile = zmtp_connect(ep.publish)
    try:
        hostile.sendall(_zmtp_frame(b"\x01" + b"X" * 10_485_760))
    except OSError:
        pass  # the publisher may hang up before the whole subscription is written
    with pytest.raises((EOFError, ConnectionResetError)):  # it closed the connection: nothing kept
        while True:
            zmtp_read(hostile)
    hostile.close()
    # 4,000 subscriptions of 1,000 bytes each (4 MB of topics no one publishes): the connection is closed
    many = zmtp_connect(ep.publish)
    try:
        for i in range(4000):
            many.sendall(_zmtp_frame(b"\x01" + f"{i:06d}".encode() + b"Y" * 994))
    except OSError:
        pass
    with pytest.raises((EOFError, ConnectionResetError)):
        while True:
            zmtp_read(many)
    many.close()
    grown = rss_kib(proc.pid) - before
    assert grown < 8 * 1024, f"the publisher grew by {grown} KiB"
    sub = zmq.Context.instance().socket(zmq.SUB)  # reconnects by itself, as every subscriber does
    sub.setsockopt(zmq.LINGER, 0)
    sub.setsockopt(zmq.SUBSCRIBE, b"t1/")
    sub.connect(ep.publish)
    assert sub.poll(20_000), "a subscriber of the table's topics hears nothing"
    assert sub.recv_multipart()[0] in (b"t1/public", b"t1/dealer")
    sub.close(0)


def test_deep_nesting_and_oversized_messages_never_stop_the_snapshot_or_command_service() -> None:
    """Issue 43 points 5 and 13: b"[" * 100000 to the snapshot socket killed its task (RecursionError, nothing
    logged, no snapshot again). Now libzmq drops a message over the socket's limit with its connection, and
    a parsed one deeper than MAX_DEPTH is answered with the reason, never "internal error: RecursionError"."""
    async def main() -> None:
        table, ep = FakeTable(), free_endpoints()
        server = BusServer("t1", ep, table.views, table.on_command, table.on_refused, heartbeat_s=0.2)
        await server.start()
        ctx = zmq.asyncio.Context.instance()
        huge, snap = ctx.socket(zmq.DEALER), ctx.socket(zmq.DEALER)
        for sock in (huge, snap):
            sock.setsockopt(zmq.LINGER, 0)
            sock.connect(ep.snapshot)
        try:
            await huge.send_multipart([b"", b"[" * 100_000])   # over the limit: dropped with the connection
            await snap.send_multipart([b"", b"[" * 4_000])     # within it: answered with the reason
            assert await snap.poll(5000)
            reply = json.loads((await snap.recv_multipart())[-1])
            assert reply == {"v": 2, "kind": "error", "table": "t1",
                             "error": f"malformed snapshot request: nested 4000 deep: at most {MAX_DEPTH}"}
            await snap.send_multipart([b"", b'{"view": "public"}'])
            assert await snap.poll(5000)
            reply = json.loads((await snap.recv_multipart())[-1])
            assert reply["kind"] == "snapshot" and reply["state"] == {"n": 0}
            client = CommandClient(ep.commands)
            deep = b'{"command": "void", "args": {"reason": ' + b"[" * 20_000 + b"]" * 20_000 + b"}}"
            reply = await client.send_raw(deep)
            assert reply == {"v": 2, "id": None, "ok": False,
                             "error": f"malformed command: nested 20002 deep: at most {MAX_DEPTH}"}
            assert table.commands == [] and table.refused[-1] == ("unauthenticated", reply["error"])
            assert table.summaries[-1]["bytes"] == len(deep) and table.summaries[-1]["head"] == deep[:64].decode()
            assert (await client.send("status"))["ok"]
            client.close()
            assert not await huge.poll(10)  # never answered: libzmq dropped it unread
        finally:
            huge.close(0)
            snap.close(0)
            await server.close()

    asyncio.run(main())


def test_a_socket_task_that_fails_anyway_is_logged_and_restarted(caplog: pytest.LogCaptureFixture) -> None:
    async def main() -> None:
        table, ep = FakeTable(), free_endpoints()
        calls = [0]

        def views() -> tuple[int, dict[str, dict]]:
            calls[0] += 1
            if calls[0] == 1:
                raise RuntimeError("a bug in the views")
            return table.views()

        server = BusServer("t1", ep, views, table.on_command, table.on_refused, heartbeat_s=60)
        await server.start()
        ctx = zmq.asyncio.Context.instance()
        try:
            first = ctx.socket(zmq.DEALER)
            first.setsockopt(zmq.LINGER, 0)
            first.connect(ep.snapshot)
            await first.send_multipart([b"", b'{"view": "public"}'])  # the task fails on this one
            await wait_for(lambda: server.restarts == 1)
            first.close(0)
            seen: list[int] = []
            client = BusClient("t1", "public", ep, lambda seq, st: seen.append(seq), heartbeat_s=60)
            task = asyncio.create_task(client.run())
            await wait_for(lambda: seen == [0])
            task.cancel()
        finally:
            await server.close()

    with caplog.at_level("ERROR", logger="croupier.bus"):
        asyncio.run(main())
    assert any("the snapshots task failed; restarting it" in r.getMessage() for r in caplog.records)


def test_nan_infinity_and_unstorable_values_are_refused_at_the_edge_from_any_key(keys: Path) -> None:
    """Issue 43 point 1: NaN or Infinity in a command's args, from a listed key or not, reached the table (and its
    refusal record then failed the journal write). The bus refuses them, naming the field, before any role is
    looked at; the refusal goes on as a bounded summary with the peer's address."""
    async def main() -> list[dict[str, Any]]:
        table, ep = FakeTable(), free_endpoints()
        roles = load_client_roles([(keys / "dealer.key", "dealer")])
        server_keys = load_secret_keys(keys / "server.key_secret")
        server = BusServer("t1", ep, table.views, table.on_command, table.on_refused, server_keys=server_keys,
                           client_roles=roles)
        await server.start()
        replies = []
        try:
            for name in ("dealer", "stranger"):
                client = CommandClient(ep.commands, load_secret_keys(keys / f"{name}.key_secret"), server_keys[0])
                for body in (b'{"command": "place_bet", "args": {"spot": 1, "box": "main", "amount": NaN}}',
                             b'{"command": "place_bet", "args": {"amount": Infinity}}',
                             b'{"command": "place_bet", "args": {"amount": -Infinity}}',
                             b'{"command": "place_bet", "args": {"amount": 1e400}}',
                             b'{"command": "place_bet", "args": {"amount": 9007199254740993}}',
                             b'{"command": "void", "args": {"reason": "\\ud800"}}'):
                    replies.append(await client.send_raw(body))
                client.close()
        finally:
            await server.close()
        assert table.commands == []
        assert all(s["peer"] == "127.0.0.1" and len(s["sha256"]) == 64 for s in table.summaries)
        return replies

    replies = asyncio.run(main())
    finite = "only finite numbers are taken (no NaN or Infinity)"
    assert [r["error"] for r in replies[:6]] == [
        f"malformed command: args.amount is nan: {finite}", f"malformed command: args.amount is inf: {finite}",
        f"malformed command: args.amount is -inf: {finite}", f"malformed command: args.amount is inf: {finite}",
        "malformed command: args.amount is beyond \u00b19007199254740991 (2**53 - 1)",
        "malformed command: args.reason holds a lone UTF-16 surrogate: not text"]
    assert [r["error"] for r in replies[6:]] == [r["error"] for r in replies[:6]]  # an unlisted key: the same


@pytest.mark.parametrize("body", [b"", b"\x00\xff", b"[" * 17, b'{"a": NaN}', b"1e999", b'"\\udfff"', b"[1, 2"])
def test_parse_message_refuses_what_the_journal_or_a_screen_cannot_hold(body: bytes) -> None:
    from controller.bus import Malformed, parse_message

    with pytest.raises(Malformed):
        parse_message(body)


@pytest.mark.slow
def test_parse_message_takes_json_bounded_and_finite_or_says_why() -> None:
    """A property: whatever the bytes, parse_message returns a value strict JSON can write (finite numbers, UTF-8
    text, nested at most MAX_DEPTH) or raises Malformed; nothing else escapes it."""
    from hypothesis import given, settings
    from hypothesis import strategies as st

    from controller.bus import Malformed, parse_message
    from controller.journal import canonical_json

    leaves = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(), st.text())
    values = st.recursive(leaves, lambda inner: st.one_of(st.lists(inner), st.dictionaries(st.text(), inner)),
                          max_leaves=40)
    texts = st.one_of(st.binary(max_size=300), values.map(lambda v: json.dumps(v).encode()),
                      st.integers(0, 60).map(lambda n: b"[" * n + b"]" * n),
                      st.integers(0, 60).map(lambda n: b'{"a":' * n + b"1" + b"}" * n))

    @settings(max_examples=400, deadline=None)
    @given(texts)
    def check(body: bytes) -> None:
        try:
            value = parse_message(body)
        except Malformed:
            return
        canonical_json({"v": value}).encode()  # raises for NaN, Infinity or a lone surrogate

    check()


def test_the_refusal_limiter_journals_a_burst_then_one_a_second_and_counts_what_it_left_out() -> None:
    from controller.runtime import RefusalLimiter

    now = [0.0]
    limiter = RefusalLimiter(burst=3, every=1.0, peers=2, clock=lambda: now[0])
    assert [limiter.allow("10.0.0.9") for _ in range(5)] == [(True, 0)] * 3 + [(False, 0)] * 2
    now[0] = 1.0
    assert limiter.allow("10.0.0.9") == (True, 2) and limiter.allow("10.0.0.9") == (False, 0)
    assert limiter.allow("10.0.0.7") == (True, 0)  # another peer has a bucket of its own
    assert limiter.flush() == {"10.0.0.9": 1} and limiter.flush() == {}
    for _ in range(4):
        limiter.allow("10.0.0.7")
    limiter.allow("10.0.0.5")   # a third peer: the oldest tracked one (10.0.0.9) is forgotten
    limiter.allow("10.0.0.4")   # and then 10.0.0.7, whose 2 left out count as "(others)"
    assert limiter.flush() == {"(others)": 2}
    assert limiter.left_out == 5


def test_a_command_or_snapshot_request_for_another_table_is_refused() -> None:
    """Issue 43 point 16: a command names its table and any other table refuses it (not applied); a subscriber
    checks the table of what it receives."""
    async def main() -> None:
        table, ep = FakeTable(), free_endpoints()
        server = BusServer("t1", ep, table.views, table.on_command, table.on_refused, heartbeat_s=0.2)
        await server.start()
        try:
            wrong = CommandClient(ep.commands, table="totally-wrong-id")
            reply = await wrong.send("void", reason="x")
            assert reply == {"v": 2, "id": wrong.last_id, "ok": False,
                             "error": "this is table t1, not totally-wrong-id: the command was not applied"}
            assert table.commands == [] and table.refused[-1] == ("unauthenticated", reply["error"])
            right = CommandClient(ep.commands, table="t1")
            assert (await right.send("status"))["ok"] and len(table.commands) == 1
            client = BusClient("totally-wrong-id", "public", ep, lambda seq, st: None, heartbeat_s=0.2)
            with pytest.raises(CommandError, match="this is table t1, not totally-wrong-id"):
                await asyncio.wait_for(client.run(), 10)
            for c in (wrong, right):
                c.close()
        finally:
            await server.close()

    asyncio.run(main())


# ---------------------------------------------------------------------------------------------------
# The same at a running table (controller/runtime.py behind the bus)


def keyed_table_config(tmp: Path) -> Any:
    """A blackjack table on free ports whose commands need CURVE: dealer, spot:3 and ops listed, `stranger` not."""
    import dataclasses

    from tests.table_helpers import table_config

    keys = tmp / "keys"
    for name in ("server", "dealer", "spot3", "ops", "stranger"):
        create_keys(keys, name)
    cfg = table_config(tmp, "blackjack")
    return dataclasses.replace(cfg, bus=dataclasses.replace(cfg.bus, keys=keys, clients=(
        (keys / "dealer.key", "dealer"), (keys / "spot3.key", "spot:3"), (keys / "ops.key", "ops"))))


def keyed_client(cfg: Any, name: str, **kw: Any) -> CommandClient:
    from controller.bus import load_public_key

    return CommandClient(cfg.bus.endpoints.commands, load_secret_keys(cfg.bus.keys / f"{name}.key_secret"),
                         load_public_key(cfg.bus.keys / "server.key"), **kw)


async def shuffled(table: Any) -> None:
    """The table's simulated shoe shuffled and loaded: bets may open."""
    assert (await table.command(Role("dealer"), "shuffle", {}))["ok"]
    assert await table.wait_for(lambda state: not state.shoe.shuffling, 10)


def refusals(table: Any) -> list[dict[str, Any]]:
    assert table.journal is not None
    return [e.record for e in table.journal.entries() if e.record["kind"] == "refused"]


def test_no_input_can_make_a_journal_write_fail(tmp_path: Path) -> None:
    """Issue 43 point 1: NaN in a command from any key (listed or not) stopped the table: its refusal record
    could not be written. Now nothing a command carries reaches the journal unless the journal can hold it:
    the bus refuses what strict JSON cannot write, and a command whose records still cannot be written (a
    local caller's lone surrogate) is refused, its args kept as a summary."""
    from controller.table import Table

    cfg = keyed_table_config(tmp_path)

    async def main() -> None:
        table = Table(cfg)
        await table.start()
        try:
            for name in ("stranger", "dealer"):
                client = keyed_client(cfg, name)
                for body in (b'{"command": "place_bet", "args": {"spot": 1, "box": "player", "amount": NaN}}',
                             b'{"command": "void", "args": {"reason": "\\ud800"}}',
                             b'{"command": "open_bets", "args": {"x": [Infinity]}}'):
                    reply = await client.send_raw(body)
                    assert not reply["ok"] and reply["error"].startswith("malformed command: args.")
                client.close()
            await shuffled(table)
            assert (await table.command(Role("dealer"), "open_bets", {}))["ok"]
            local = await table.command(Role("dealer"), "void", {"reason": "\ud800"})
            assert local["ok"] is False and local["error"].startswith("malformed void: the journal cannot hold")
            dealer = keyed_client(cfg, "dealer")
            status = await dealer.send("status")
            assert status["ok"] and status["result"]["table"] == cfg.table_id
            assert (await dealer.send("void", reason="the table still takes commands"))["ok"]
            dealer.close()
            assert table.failure is None
            await table.wait_for(lambda state: len(refusals(table)) >= 7, 5)
            records = refusals(table)
            assert len(records) == 7 and all(r["request"]["peer"] == "127.0.0.1" for r in records[:6])
            assert records[6]["request"] == {"command": "void", "args": {
                "bytes": 20, "sha256": records[6]["request"]["args"]["sha256"], "head": "{'reason': '\\ud800'}"}}
        finally:
            await table.stop()

    asyncio.run(main())


def test_a_fatal_stop_exits_non_zero_so_systemd_restarts_it(tmp_path: Path) -> None:
    """Issue 43 point 1: the runtime stopped with exit status 0 when its journal could not be written, so
    Restart=on-failure left it down. Now run() raises FatalStop: exit status 1, one line, no traceback."""
    import sqlite3
    import subprocess
    import sys

    from controller.table import Table
    from tests.table_helpers import table_config

    cfg = table_config(tmp_path, "baccarat")

    async def main() -> SystemExit:
        table = Table(cfg)
        await table.start()
        assert table.journal is not None

        def broken(*args: Any, **kw: Any) -> Any:
            raise sqlite3.OperationalError("disk I/O error")

        table.journal.append = table.journal.append_many = broken  # type: ignore[method-assign]
        command = asyncio.create_task(table.command(Role("dealer"), "open_bets", {}))
        with pytest.raises(SystemExit) as stopped:  # FatalStop: awaited here, not in a task of its own
            await table.run()
        with pytest.raises(RuntimeError, match="journal write failed"):
            await command
        await table.stop()
        return stopped.value

    stop = asyncio.run(main())
    assert stop.code == f"{cfg.table_id} stopped: journal write failed: OperationalError: disk I/O error"
    done = subprocess.run([sys.executable, "-c", "from controller.runtime import FatalStop\n"
                           f"raise FatalStop({stop.code!r})"], capture_output=True, text=True,
                          cwd=Path(__file__).resolve().parent.parent)
    assert (done.returncode, done.stderr) == (1, stop.code + "\n")


@pytest.mark.slow
def test_refusals_are_journaled_as_bounded_summaries_rate_limited_per_peer(tmp_path: Path) -> None:
    """Issue 43 point 6: a 10 MB message from an unlisted key was journaled in full, and failed handshakes
    without the peer's address (20 attempts: 45 rows). Now a refusal keeps a summary (size, SHA-256, first
    bytes, peer's address), a message over MAX_MESSAGE never gets in, and one peer's refusals are journaled at
    most at the limiter's rate, the rest counted."""
    import hashlib
    import os

    from controller.journal import canonical_json
    from controller.table import Table

    cfg = keyed_table_config(tmp_path)

    def journal_bytes() -> int:
        return sum(os.path.getsize(p) for p in (cfg.journal, Path(f"{cfg.journal}-wal")) if p.exists())

    async def main() -> None:
        table = Table(cfg)
        await table.start()
        try:
            # Clients without CURVE: their failed handshakes are journaled with their address. libzmq names a
            # connection by its descriptor only, closed when a handshake fails at once, so the address is read
            # from it or from the port's TIME_WAIT entries: best effort, "unknown" when neither has it (a
            # connection reset rather than closed); of 8 tries, some name it.
            def handshakes() -> list[dict[str, Any]]:
                return [r for r in refusals(table) if "handshake" in r["reason"]]

            for tries in range(1, 9):
                plain = CommandClient(cfg.bus.endpoints.commands, timeout_s=0.2)
                with pytest.raises(CommandError, match="no answer"):
                    await plain.send("open_bets")
                plain.close()
                assert await table.wait_for(lambda state: len(handshakes()) >= tries, 5)
            assert all(r["who"] == "unauthenticated" and r["request"]["peer"] in ("127.0.0.1", "unknown")
                       for r in handshakes())
            assert any(r["request"]["peer"] == "127.0.0.1" for r in handshakes())
            # Just under the limit, from an unlisted key: refused, journaled as a summary.
            stranger = keyed_client(cfg, "stranger")
            body = json.dumps({"command": "open_bets", "args": {"pad": "x" * 65_000}}).encode()  # MAX_MESSAGE: 65,536
            reply = await stranger.send_raw(body)
            assert reply == {"v": 2, "id": None, "ok": False,
                             "error": "unknown key: this client is not authorised for any role"}
            assert await table.wait_for(lambda state: any("unknown key" in r["reason"] for r in refusals(table)), 5)
            record = next(r for r in refusals(table) if "unknown key" in r["reason"])
            assert record["request"] == {"bytes": len(body), "sha256": hashlib.sha256(body).hexdigest(),
                                         "head": body[:64].decode(), "peer": "127.0.0.1", "command": "open_bets"}
            assert len(canonical_json(record)) < 1024
            # 10 MB: libzmq drops it unread with the connection; the journal does not grow by it.
            before = journal_bytes()
            await stranger._sock.send_multipart([b"", b"x" * 10_485_760])
            reply = await keyed_client(cfg, "dealer").send("status")  # the table still answers
            assert reply["ok"] and journal_bytes() - before < 64 * 1024
            # A flood from one address: at most the burst and one a second are journaled, the rest counted.
            started, count = time.monotonic(), len(refusals(table))
            for i in range(200):
                await stranger.send_raw(b"not json %d" % i)
            seconds = time.monotonic() - started
            await keyed_client(cfg, "dealer").send("status")  # after every refusal above has been journaled
            flood = refusals(table)[count:]
            assert len(flood) <= table.refusals.burst + seconds / table.refusals.every + 1
            assert table.refusals.left_out > 0
            stranger.close()
        finally:
            await table.stop()

    asyncio.run(main())


def test_a_resent_command_is_answered_once_and_applied_once_even_across_a_restart(tmp_path: Path) -> None:
    """Issue 43 point 11: a resent request (same body, same id) was applied twice (a bet went 25 -> 45). Now a
    (key, id) seen within the window gets the first answer and changes nothing, also after a restart (the
    window is rebuilt from the journal, where each command's first record keeps its id and answer); the same
    id for another command is refused."""
    from controller.table import Table

    cfg = keyed_table_config(tmp_path)

    async def bets(client: CommandClient) -> list[dict[str, Any]]:
        status = await client.send("status")
        return status["result"]["game"]["bets"]

    async def main() -> None:
        table = Table(cfg)
        await table.start()
        dealer = keyed_client(cfg, "dealer")
        await shuffled(table)
        assert (await dealer.send("open_bets"))["ok"]
        placed = json.dumps({"v": 2, "id": "bet-17", "command": "place_bet",
                             "args": {"spot": 1, "box": "main", "amount": 25}}).encode()
        first = await dealer.send_raw(placed)
        assert first["ok"] and first["id"] == "bet-17"
        assert await dealer.send_raw(placed) == first   # resent: the first answer, not applied again
        assert await bets(dealer) == [{"spot": 1, "box": "main", "amount": 25}]
        await table.stop()
        table = Table(cfg)   # a restart: the window comes back from the journal
        await table.start()
        try:
            assert await dealer.send_raw(placed) == first
            assert await bets(dealer) == [{"spot": 1, "box": "main", "amount": 25}]
            other = json.loads(placed)
            other["args"]["amount"] = 50
            reply = await dealer.send_raw(json.dumps(other).encode())
            assert reply["ok"] is False and reply["error"].startswith("id 'bet-17' was used for another command")
            assert await bets(dealer) == [{"spot": 1, "box": "main", "amount": 25}]
            dealer.close()
        finally:
            await table.stop()

    asyncio.run(main())


def test_decision_amounts_infinity_nesting_and_a_spot_keys_status(tmp_path: Path) -> None:
    """Issue 43 point 13: a decision amount of 25.9 was taken as 25; Infinity and deep nesting were answered
    "internal error: OverflowError / RecursionError" and not journaled; a spot key's `status` without `spot`
    was refused as "spot:3 may act only for spot 3"."""
    from controller.table import Table

    cfg = keyed_table_config(tmp_path)

    async def main() -> None:
        table = Table(cfg)
        await table.start()
        try:
            local = await table.command(Role("dealer"), "decision", {"actor": "spot:1", "action": "double",
                                                                     "amount": 25.9})
            assert local == {"ok": False, "error": "malformed decision: amount must be a whole number, not 25.9"}
            dealer = keyed_client(cfg, "dealer")
            count = len(refusals(table))
            infinite = await dealer.send_raw(b'{"command": "decision", "args": {"actor": "spot:1", '
                                             b'"action": "double", "amount": Infinity}}')
            assert infinite["error"] == ("malformed command: args.amount is inf: only finite numbers are taken "
                                         "(no NaN or Infinity)")
            deep = b'{"command": "decision", "args": {"amount": ' + b"[" * 20_000 + b"]" * 20_000 + b"}}"
            nested = await dealer.send_raw(deep)
            assert nested["error"] == f"malformed command: nested 20002 deep: at most {MAX_DEPTH}"
            assert await table.wait_for(lambda state: len(refusals(table)) == count + 2, 5)
            journaled = refusals(table)[count:]
            assert [r["reason"] for r in journaled] == [infinite["error"], nested["error"]]
            assert journaled[1]["request"]["bytes"] == len(deep) and journaled[1]["request"]["head"] == deep[:64].decode()
            spot3 = keyed_client(cfg, "spot3")
            status = await spot3.send("status")
            assert status["ok"] and "dealer_only" not in status["result"]
            wrong = await spot3.send("status", spot=4)
            assert (wrong["ok"], wrong["error"]) == (False, "spot:3 may act only for spot 3")
            for c in (dealer, spot3):
                c.close()
        finally:
            await table.stop()

    asyncio.run(main())


def test_croupier_watch_and_command_refuse_another_tables_endpoints(tmp_path: Path,
                                                                    capsys: pytest.CaptureFixture[str]) -> None:
    """Issue 43 point 16: `croupier watch --table totally-wrong-id` streamed whatever table was on the ports, and
    `croupier command --table totally-wrong-id status` was answered by it."""
    from controller.cli import main as cli
    from controller.table import Table
    from tests.table_helpers import serving, table_config

    cfg = table_config(tmp_path, "baccarat")
    ports = [e.rsplit(":", 1)[1] for e in (cfg.bus.endpoints.publish, cfg.bus.endpoints.snapshot,
                                           cfg.bus.endpoints.commands)]
    with serving(lambda: Table(cfg)):
        assert cli(["watch", "--table", "totally-wrong-id", "--ports", *ports, "--count", "1"]) == 2
        err = capsys.readouterr().err
        assert err == (f"croupier watch: error: {cfg.bus.endpoints.snapshot}: this is table {cfg.table_id}, not "
                       f"totally-wrong-id\n")
        assert cli(["command", "--table", "totally-wrong-id", "--ports", *ports, "open_bets"]) == 1
        reply = json.loads(capsys.readouterr().out)
        assert reply["error"] == f"this is table {cfg.table_id}, not totally-wrong-id: the command was not applied"
        assert cli(["command", "--table", cfg.table_id, "--ports", *ports, "status"]) == 0
        assert json.loads(capsys.readouterr().out)["result"]["table"] == cfg.table_id


@pytest.mark.slow
def test_croupier_watch_says_it_waits_for_a_table_that_does_not_answer(tmp_path: Path) -> None:
    """Issue 43 point 17: `croupier watch --config FILE` hung without a word when the table was not running. It
    waits (the table may be starting, or restarting under systemd) and says so on stderr at once, and again
    every 30 s, naming the table and endpoint."""
    import selectors
    import subprocess
    import sys

    from tests.table_helpers import free_ports

    p1, p2, p3 = free_ports(3)
    config = tmp_path / "table.toml"
    config.write_text(f'[table]\nid = "bj-9"\ngame = "blackjack"\njournal = "{tmp_path / "bj.journal"}"\n'
                      f'[shoe]\nport = "sim"\n[bus]\npublish = "tcp://127.0.0.1:{p1}"\n'
                      f'snapshot = "tcp://127.0.0.1:{p2}"\ncommands = "tcp://127.0.0.1:{p3}"\nheartbeat = 0.2\n')
    proc = subprocess.Popen([sys.executable, "-m", "controller.cli", "watch", "--config", str(config)],
                            stderr=subprocess.PIPE, text=True, cwd=Path(__file__).resolve().parent.parent)
    try:
        assert proc.stderr is not None
        with selectors.DefaultSelector() as sel:
            sel.register(proc.stderr, selectors.EVENT_READ)
            assert sel.select(30), "watch said nothing"
        line = proc.stderr.readline()
        assert line == (f"croupier watch: waiting for table bj-9 at tcp://127.0.0.1:{p2}: no answer yet (is it "
                        f"running?). Ctrl-C to stop.\n")
    finally:
        proc.kill()
        proc.wait()

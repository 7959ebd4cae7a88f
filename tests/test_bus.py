"""The bus: late joiners snapshot then follow without gaps, heartbeats when idle, a stalled subscriber does not
slow the table, and commands are authenticated (CURVE) and authorised per role (hardening against what a peer
sends: test_bus_hardening.py; the same at a running table: test_bus_table.py)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
import zmq

from controller.bus import BusClient, BusServer, CommandClient, Role, load_client_roles, load_secret_keys, parse_role
from tests.bus_helpers import FakeTable, free_endpoints, keys, raw_subscriber, wait_for  # noqa: F401 - keys: a fixture


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


def test_a_bus_binds_the_ports_a_bus_closed_a_moment_ago() -> None:
    """A table restarted in one process binds the ports its predecessor's bus just closed; zmq's close leaves
    them to libzmq's I/O thread, so a bind right after was refused now and then ("Address already in use": within
    these 300 restarts every time here), as a busy machine could refuse the resent-command test's restart
    (test_bus_table.py). The bind waits that moment out."""
    async def main() -> None:
        table, ep = FakeTable(), free_endpoints()
        for _ in range(300):
            server = BusServer("t1", ep, table.views, table.on_command, table.on_refused, heartbeat_s=0.2)
            await server.start()
            await server.close()

    asyncio.run(main())


def test_a_bus_that_cannot_bind_leaves_no_socket_open(keys: Path) -> None:
    """A bus whose bind failed left its sockets (the ports it did bind, its monitors, its authenticator) open
    until the garbage collector found them, and its context could not end (`term()` waits for every socket)."""
    import dataclasses
    import threading

    async def main() -> Any:
        table, ep = FakeTable(), free_endpoints()
        bad = dataclasses.replace(ep, commands="tcp://127.0.0.1:not-a-port")
        server = BusServer("t1", bad, table.views, table.on_command, table.on_refused,
                           server_keys=load_secret_keys(keys / "server.key_secret"),
                           client_roles=load_client_roles([(keys / "dealer.key", "dealer")]))
        with pytest.raises(zmq.ZMQError, match="Invalid argument"):
            await server.start()
        return server.context

    context = asyncio.run(main())
    ended = threading.Thread(target=context.term, daemon=True)  # term() waits for every socket to be closed
    ended.start()
    ended.join(10)
    assert not ended.is_alive()

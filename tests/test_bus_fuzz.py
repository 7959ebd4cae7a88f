"""A seeded fuzz of every socket a table and a slot cabinet bind (issue 43's acceptance): arbitrary bytes and JSON
(NaN, Infinity, deep nesting, 10 MB, wrong types, unknown commands, resent ids) from listed, unlisted and no
keys. Each runtime runs once per module, as `croupier run --sim` in a process of its own; afterwards it is still
up, answers a snapshot and `status`, has journaled at most a bounded summary per refusal (and at most the
limiter's rate of them), and its peak RSS stayed under 150 MB."""

from __future__ import annotations

import asyncio
import json
import random
import socket
import sqlite3
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator

import pytest
import zmq
import zmq.asyncio

from controller.bus import BusClient, BusEndpoints, CommandClient, create_keys, load_public_key, load_secret_keys
from controller.journal import canonical_json
from tests.table_helpers import free_ports
from tests.bus_helpers import zmtp_connect, zmtp_frame, zmtp_read

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parent.parent
SEED = 43
RSS_LIMIT_KIB = 150 * 1024
RECORD_LIMIT = 2048      # bytes of one refusal record: a bounded summary, whatever was sent
TEN_MB = 10 * 1024 * 1024
MAX_MESSAGE = 65_536     # controller.bus.MAX_MESSAGE: every body below but the 10 MB ones stays within it


@dataclass
class Runtime:
    """One `croupier run --sim` under fuzz: its config's facts and its process."""

    kind: str                     # "table" or "cabinet"
    ident: str
    endpoints: BusEndpoints
    keys: Path
    listed: str                   # a listed key's name (the dealer's, the attendant's)
    journal: Path
    curve_screens: bool
    proc: subprocess.Popen[bytes]
    started: float
    log: Path

    def pair(self, name: str) -> tuple[bytes, bytes]:
        return load_secret_keys(self.keys / f"{name}.key_secret")

    @property
    def server(self) -> bytes:
        return load_public_key(self.keys / "server.key")

    def screens_keys(self, name: str | None) -> dict[str, Any]:
        if not self.curve_screens or name is None:
            return {}
        return {"client_keys": self.pair(name), "server_public": self.server}

    def commands(self, name: str | None, **kw: Any) -> CommandClient:
        if name is None:
            return CommandClient(self.endpoints.commands, **kw)
        return CommandClient(self.endpoints.commands, self.pair(name), self.server, **kw)

    def peak_rss_kib(self) -> int:
        for line in Path(f"/proc/{self.proc.pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
        raise AssertionError("no VmHWM")

    def records(self) -> list[dict[str, Any]]:
        db = sqlite3.connect(f"file:{self.journal}?mode=ro", uri=True)
        try:
            return [json.loads(text) for (text,) in db.execute("SELECT record FROM journal ORDER BY seq")]
        finally:
            db.close()


def _start(tmp: Path, kind: str) -> Runtime:
    keys = tmp / "keys"
    listed = "dealer" if kind == "table" else "attendant"
    for name in ("server", listed, "ops", "stranger"):
        create_keys(keys, name)
    p1, p2, p3 = free_ports(3)
    ep = BusEndpoints(*(f"tcp://127.0.0.1:{p}" for p in (p1, p2, p3)))
    ident = f"fuzz-{kind}"
    journal = tmp / f"{ident}.journal"
    curve_screens = kind == "cabinet"  # the table's screens sockets plain, the cabinet's over CURVE: both kinds
    head = (f'[table]\nid = "{ident}"\ngame = "blackjack"\njournal = "{journal}"\n[shoe]\nport = "sim"\nseed = 5\n'
            if kind == "table" else
            f'[cabinet]\nid = "{ident}"\ntitle = "frozen-assets"\njournal = "{journal}"\nspin_seconds = 0.0\n'
            f'attract_seconds = 0\n')
    config = tmp / f"{kind}.toml"
    config.write_text(head + f'[bus]\npublish = "{ep.publish}"\nsnapshot = "{ep.snapshot}"\n'
                             f'commands = "{ep.commands}"\nheartbeat = 0.2\nkeys = "{keys}"\n'
                             f'curve_screens = {"true" if curve_screens else "false"}\n'
                             f'[[bus.client]]\nkey = "{listed}.key"\nrole = "{listed}"\n'
                             f'[[bus.client]]\nkey = "ops.key"\nrole = "ops"\n')
    log = (tmp / f"{kind}.log").open("wb")
    proc = subprocess.Popen([sys.executable, "-m", "controller.cli", "run", "--config", str(config), "--sim",
                             "--log-level", "WARNING"], stdout=log, stderr=subprocess.STDOUT, cwd=ROOT)
    rt = Runtime(kind, ident, ep, keys, listed, journal, curve_screens, proc, time.monotonic(), tmp / f"{kind}.log")
    asyncio.run(_until_answered(rt))
    return rt


async def _until_answered(rt: Runtime, timeout: float = 60) -> dict[str, Any]:
    """The runtime's answer to a listed key's `status`, once it is up (waits on its answer, not on a clock)."""
    client = rt.commands(rt.listed, timeout_s=timeout)
    try:
        reply = await client.send("status")
    finally:
        client.close()
    assert reply["ok"], reply
    return reply


def _stop(rt: Runtime) -> None:
    rt.proc.terminate()
    try:
        rt.proc.wait(20)
    except subprocess.TimeoutExpired:
        rt.proc.kill()


@pytest.fixture(scope="module")
def table(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Runtime]:
    rt = _start(tmp_path_factory.mktemp("fuzz-table"), "table")
    yield rt
    _stop(rt)


@pytest.fixture(scope="module")
def cabinet(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Runtime]:
    rt = _start(tmp_path_factory.mktemp("fuzz-cabinet"), "cabinet")
    yield rt
    _stop(rt)


# ---------------------------------------------------------------------------------------------------
# What is sent


COMMANDS = {"table": ["open_bets", "close_bets", "place_bet", "remove_bet", "decision", "card", "settle", "void",
                      "resolve", "shuffle", "status", "meters", "audit"],
            "cabinet": ["bet_one", "max_bet", "spin", "cash_out", "cash_in", "next_paytable", "pick", "add_credits",
                        "clear", "recall", "status", "meters", "audit"]}
ARGS = ["spot", "box", "amount", "actor", "action", "hand", "card", "target", "reason", "alert", "credits",
        "lockup", "choice", "cabinet", "game", "cents"]


def _value(rng: random.Random, depth: int = 0) -> Any:
    makers = [lambda: None, lambda: True, lambda: rng.randint(-3, 3), lambda: rng.randint(-10**6, 10**6),
              lambda: rng.choice([25.9, -0.5, 1e300, 0.0]),
              lambda: rng.choice(["main", "player", "hit", "stand", "AS", "spot:1", "dealer", ""]),
              lambda: "x" * rng.randrange(0, 700), lambda: rng.choice([2**53, -2**53, 10**30]), lambda: "\ud800",
              lambda: rng.choice(["NaN", "Infinity", "-Infinity", "1e999"]),
              lambda: [_value(rng, depth + 1) for _ in range(rng.randrange(3))],
              lambda: {rng.choice(ARGS): _value(rng, depth + 1) for _ in range(rng.randrange(3))}]
    return makers[rng.randrange(len(makers) if depth < 3 else len(makers) - 2)]()


def _dump(value: Any) -> bytes:
    """JSON as Python writes it (NaN, Infinity allowed), with the strings "NaN"/"Infinity"/... written as the bare
    words, and lone surrogates escaped: what a hostile client can put on the wire."""
    text = json.dumps(value)
    for word in ("NaN", "-Infinity", "Infinity", "1e999"):
        text = text.replace(f'"{word}"', word)
    return text.encode()


def command_bodies(rng: random.Random, kind: str, ident: str, n: int) -> list[bytes]:
    """n command messages, each within MAX_MESSAGE: valid-looking, malformed, non-finite, nested, of wrong types."""
    out: list[bytes] = []
    for i in range(n):
        pick = rng.randrange(10)
        command = rng.choice(COMMANDS[kind]) if rng.random() < 0.8 else f"cmd{rng.randrange(10**6)}"
        args = {rng.choice(ARGS): _value(rng) for _ in range(rng.randrange(4))}
        req: Any = {"v": 2, "id": f"fuzz-{i}", "command": command, "args": args}
        if rng.random() < 0.3:
            req["table"] = rng.choice([ident, "another-table", 7, None])
        if pick == 0:
            out.append(rng.randbytes(rng.randrange(0, 3000)))
        elif pick == 1:
            opener, closer = rng.choice([(b"[", b"]"), (b'{"a":', b"}")])
            n_deep = min(rng.choice([17, 200, 5_000, 30_000]), (MAX_MESSAGE - 100) // len(opener + closer))
            out.append(b'{"command": "status", "args": {"x": ' + opener * n_deep + b"1" + closer * n_deep + b"}}")
        elif pick == 2:
            req = rng.choice([{"command": 5}, {"command": command, "args": [1, 2]}, [command], "status", 7, None,
                              {"command": command, "args": args, "id": rng.choice([{"a": 1}, True, 1.5, "i" * 100])}])
            out.append(_dump(req))
        else:
            out.append(_dump(req))
    return out


async def _replies(client: CommandClient, bodies: list[bytes], timeout: float = 60) -> list[dict[str, Any]]:
    """Send every body (each within the size limit: each is answered) and collect as many answers."""
    for body in bodies:
        await client._sock.send_multipart([b"", body])
    replies = []
    deadline = time.monotonic() + timeout
    while len(replies) < len(bodies):
        left = deadline - time.monotonic()
        assert left > 0 and await client._sock.poll(left * 1000), f"{len(replies)} of {len(bodies)} answered"
        replies.append(json.loads((await client._sock.recv_multipart())[-1]))
    return replies


async def _send(sock: zmq.asyncio.Socket, body: bytes) -> bool:
    """Send, unless the socket has no connection to queue for (its handshake was refused): False then."""
    try:
        await asyncio.wait_for(sock.send_multipart([b"", body]), 2)
    except asyncio.TimeoutError:
        return False
    return True


async def _oversized(endpoint: str, pair: tuple[bytes, bytes] | None, server: bytes | None) -> None:
    """10 MB on a socket of its own (libzmq drops it unread with the connection: no answer)."""
    sock = zmq.asyncio.Context.instance().socket(zmq.DEALER)
    sock.setsockopt(zmq.LINGER, 0)
    if pair is not None:
        sock.curve_publickey, sock.curve_secretkey = pair
        sock.curve_serverkey = server
    sock.connect(endpoint)
    if await _send(sock, b"{" + b" " * TEN_MB + b"}"):
        assert not await sock.poll(300)
    sock.close(0)


def _raw_tcp(endpoint: str, rng: random.Random) -> None:
    """Bytes that are not ZMTP at all, straight to the port."""
    host, port = endpoint.removeprefix("tcp://").rsplit(":", 1)
    with socket.create_connection((host, int(port)), timeout=10) as sock:
        try:
            sock.sendall(rng.randbytes(rng.randrange(1, 5000)))
            sock.shutdown(socket.SHUT_WR)
            while sock.recv(4096):
                pass
        except OSError:
            pass


def _hostile_subscriptions(rt: Runtime, rng: random.Random) -> None:
    """Over plain ZMTP (which a CURVE publisher refuses at the handshake): a 10 MB subscription, then thousands
    of foreign topics; each connection ends closed."""
    for body in (b"\x01" + b"X" * TEN_MB, None):
        try:
            sock = zmtp_connect(rt.endpoints.publish)
        except (OSError, EOFError, AssertionError):
            continue  # the CURVE publisher refused the plain handshake
        try:
            if body is not None:
                sock.sendall(zmtp_frame(body))
            else:
                for i in range(3000):
                    sock.sendall(zmtp_frame(b"\x01" + rng.randbytes(rng.randrange(1, 500))))
        except OSError:
            pass
        try:
            while True:
                zmtp_read(sock)
        except (EOFError, OSError):
            pass
        sock.close()


# ---------------------------------------------------------------------------------------------------
# The fuzz


def fuzz(rt: Runtime) -> dict[str, Any]:
    rng = random.Random(f"{SEED}-{rt.kind}")
    seen: dict[str, Any] = {}

    async def main() -> None:
        # Commands from a listed key, an unlisted key and no key at all (no CURVE: the handshake fails).
        for who in (rt.listed, "stranger"):
            client = rt.commands(who)
            bodies = command_bodies(rng, rt.kind, rt.ident, 400)
            replies = await _replies(client, bodies)
            assert all(isinstance(r, dict) and r.get("v") == 2 and "ok" in r for r in replies)
            assert not any("internal error" in str(r.get("error")) for r in replies), \
                [r for r in replies if "internal error" in str(r.get("error"))][:3]
            seen[who] = replies
            # A resent id: a mutating command sent twice with one id is answered the same, applied once.
            resend = _dump({"v": 2, "id": f"again-{who}", "table": rt.ident, "command": COMMANDS[rt.kind][0],
                            "args": {}})
            first, again = await _replies(client, [resend, resend])
            assert first == again
            seen[f"resend-{who}"] = first
            await _oversized(rt.endpoints.commands, rt.pair(who), rt.server)
            client.close()
        plain = rt.commands(None, timeout_s=0.3)
        for _ in range(3):
            try:
                await plain.send("status")
                raise AssertionError("a command without CURVE was answered")
            except Exception as exc:  # noqa: BLE001 - CommandError: no answer
                assert "no answer" in str(exc)
        plain.close()
        # Snapshot requests, from each kind of sender the socket lets in (and those it does not).
        snap_bodies = [rng.randbytes(rng.randrange(0, 200)) for _ in range(30)] + \
            [_dump({"view": rng.choice(["public", "dealer", "audit", 5, None, "NaN"]),
                    "table": rng.choice([rt.ident, "wrong", 3])}) for _ in range(30)] + \
            [b"[" * 4000, b'{"view": Infinity}', b'{"view": "\\ud800"}']
        senders = [rt.listed, "stranger", None] if rt.curve_screens else [None]
        for who in senders:
            sock = zmq.asyncio.Context.instance().socket(zmq.DEALER)
            sock.setsockopt(zmq.LINGER, 0)
            if rt.curve_screens and who is not None:
                sock.curve_publickey, sock.curve_secretkey = rt.pair(who)
                sock.curve_serverkey = rt.server
            sock.connect(rt.endpoints.snapshot)
            for body in snap_bodies:
                if not await _send(sock, body):
                    break
            answered = 0
            while await sock.poll(2000 if answered < len(snap_bodies) and who in (rt.listed, None) else 300):
                await sock.recv_multipart()
                answered += 1
                if answered == len(snap_bodies):
                    break
            seen[f"snapshots-{who}"] = answered
            sock.close(0)
            await _oversized(rt.endpoints.snapshot, rt.pair(who) if rt.curve_screens and who else None,
                             rt.server if rt.curve_screens and who else None)

    asyncio.run(main())
    for endpoint in (rt.endpoints.publish, rt.endpoints.snapshot, rt.endpoints.commands):
        for _ in range(3):
            _raw_tcp(endpoint, rng)
    _hostile_subscriptions(rt, rng)
    return seen


def check_after(rt: Runtime, seen: dict[str, Any]) -> None:
    assert rt.proc.poll() is None, f"the {rt.kind} stopped (exit {rt.proc.returncode})"

    async def main() -> None:
        status = await _until_answered(rt, timeout=10)
        assert status["result"]
        got: list[int] = []
        client = BusClient(rt.ident, "public", rt.endpoints, lambda seq, state: got.append(seq), heartbeat_s=0.2,
                           **rt.screens_keys(rt.listed))
        task = asyncio.create_task(client.run())
        try:
            deadline = time.monotonic() + 20
            while not (got and client.heard and client.snapshots >= 1):  # a snapshot, then heard on PUB too
                assert time.monotonic() < deadline, "no snapshot after the fuzz"
                await asyncio.sleep(0.05)  # polling the client's own counters, not timing the runtime
        finally:
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)

    asyncio.run(main())
    records = rt.records()
    refused = [r for r in records if r["kind"] == "refused"]
    assert refused, "nothing journaled as refused"
    assert max(len(canonical_json(r).encode()) for r in refused) <= RECORD_LIMIT
    # Every sender was 127.0.0.1, and libzmq takes raw bytes as ZMTP 1.0 frames, which name no peer: two buckets,
    # so at most twice the burst and one a second since the start (and the flush records) were journaled.
    seconds = time.monotonic() - rt.started
    assert len(refused) <= 2 * (20 + seconds) + seconds / 60 + 2, (len(refused), seconds)
    resent = [r for r in records if isinstance(r.get("origin"), dict)
              and str(r["origin"].get("id", "")).startswith("again-")]
    assert len(resent) <= 2  # each resent id journaled at most once (once per key)
    assert "Traceback" not in rt.log.read_text(), rt.log.read_text()[-3000:]  # no task or command failed
    peak = rt.peak_rss_kib()
    assert peak < RSS_LIMIT_KIB, f"the {rt.kind}'s peak RSS was {peak / 1024:.0f} MB"


def test_fuzzing_every_socket_of_a_table_leaves_it_up_bounded_and_answering(table: Runtime) -> None:
    check_after(table, fuzz(table))


def test_fuzzing_every_socket_of_a_cabinet_leaves_it_up_bounded_and_answering(cabinet: Runtime) -> None:
    check_after(cabinet, fuzz(cabinet))

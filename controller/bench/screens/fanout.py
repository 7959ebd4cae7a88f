"""`croupier bench screens --fanout`: the screens bridge's fan-out to N WebSocket clients in another process, from the table's publish to the last client holding the update, and the bridge's CPU per update.

Three processes, so that each figure is one program's: this one runs the table and its autoplay, a child
runs the bridge (its CPU is read from /proc/<pid>/stat), another child runs the N clients (plain aiohttp
WebSocket clients, not browsers). With two or more cores the bridge is pinned to one core and the table
and the clients to the others, so the clients reading 500 sockets never take the bridge's core; on one core
they share it and the JSON says so. Each client stamps an update on arrival (time.time(), the clock the table
stamps `ts` with at its publish) and reads only the message's head (kind, seq, ts: the bridge writes them
first), not the whole view: parsing 500 copies of a view would be the clients' cost, not the bridge's.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import sys
import time
from pathlib import Path
from typing import Any, Callable

TOKEN = "bench-dealer-token-0123456789"
GOAL_P99_MS = 20
# The head of the bridge's update message, as json.dumps writes it (controller.screens.bridge._Feed).
HEAD = re.compile(r'\{"kind": "update", "seq": (\d+), "prev": -?\d+, "ts": ([-+.\deE]+)')


def _percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def _cpu_of(pid: int) -> tuple[float, float] | None:
    """CPU seconds (user, system) of process `pid`, all its threads; None without /proc."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
    except OSError:
        return None
    ticks = os.sysconf("SC_CLK_TCK")
    return int(fields[11]) / ticks, int(fields[12]) / ticks


def _pin(cpus: set[int] | None) -> None:
    """Pin every thread of this process to `cpus` (threads started later inherit it)."""
    if not cpus or not hasattr(os, "sched_setaffinity"):
        return
    for tid in os.listdir("/proc/self/task") if os.path.isdir("/proc/self/task") else ["0"]:
        try:
            os.sched_setaffinity(int(tid), cpus)
        except OSError:
            pass  # a thread that ended meanwhile


def _more_files() -> None:
    """Raise this process's open-file limit to its hard limit: a socket per client, and 1024 is a common default."""
    try:
        import resource

        soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        if soft != hard:
            resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    except (ImportError, ValueError, OSError):
        pass  # not POSIX, or not allowed: as many clients as the limit lets connect


def _table_mapping(tmp: str, seed: int, game: str) -> dict[str, Any]:
    import socket

    ports = []
    sockets = [socket.socket() for _ in range(3)]
    try:
        for s in sockets:
            s.bind(("127.0.0.1", 0))
            ports.append(s.getsockname()[1])
    finally:
        for s in sockets:
            s.close()
    # The bus's default heartbeat (1 s): the bench's 0.2 s would bill 500 heartbeats five times a second
    # to the bridge's CPU per update.
    return {"table": {"id": "bench", "game": game, "journal": f"{tmp}/bench.journal"},
            "shoe": {"port": "sim", "seed": seed},
            "bus": {"publish": f"tcp://127.0.0.1:{ports[0]}", "snapshot": f"tcp://127.0.0.1:{ports[1]}",
                    "commands": f"tcp://127.0.0.1:{ports[2]}"}}


# ---------------------------------------------------------------------------------------------- children

async def _bridge_child(spec: dict[str, Any]) -> None:
    """The bridge, alone in its process: prints its port, serves until `stop LAST FIRST` on stdin, then prints
    each measured update's time from the table's publish to its write for the last screen, ms."""
    from controller.config import config_from_mapping
    from controller.screens.bridge import Bridge, source_for_table

    _pin(set(spec["cpus"]) if spec.get("cpus") else None)
    _more_files()
    cfg = config_from_mapping(spec["mapping"], Path(spec["path"]))
    bridge = Bridge([source_for_table(cfg)], dealer_token=TOKEN, host="127.0.0.1", port=0,
                    heartbeat=cfg.bus.heartbeat)
    await bridge.start()
    print(json.dumps({"port": bridge.port}), flush=True)
    line = await asyncio.get_running_loop().run_in_executor(None, sys.stdin.readline)
    if line:   # "stop LAST FIRST": the bridge's own part of the measured updates
        until, lo = (int(x) for x in line.split()[1:3])
        feed = bridge.feeds[("bench", "public")]
        print(json.dumps([ms * 1000 for seq, ms in feed.fanout_latency if lo <= seq <= until]), flush=True)
    await bridge.close()


async def _clients_child(spec: dict[str, Any]) -> None:
    """N WebSocket clients: connect, print "ready", stamp every update's arrival until told `stop LAST`, then
    wait (10 s at most) until each open client holds LAST and print the figures."""
    import aiohttp

    _pin(set(spec["cpus"]) if spec.get("cpus") else None)
    _more_files()
    url, n = spec["url"], spec["clients"]
    loop = asyncio.get_running_loop()
    seen = [-1] * n                          # each client's latest seq
    first: dict[int, float] = {}             # seq -> first arrival
    last: dict[int, float] = {}              # seq -> last arrival
    count: dict[int, int] = {}               # seq -> clients holding it
    stamps: dict[int, float] = {}            # seq -> the table's publish time
    latencies: list[tuple[int, float]] = []  # every client's every update: seq, s
    sizes: list[int] = []
    closed, snapshots = [0], [0]
    changed = asyncio.Event()

    async def read(i: int, ws: aiohttp.ClientWebSocketResponse) -> None:
        while True:
            msg = await ws.receive()
            now = time.time()
            if msg.type is not aiohttp.WSMsgType.TEXT:
                closed[0] += 1
                changed.set()
                return
            head = HEAD.match(msg.data)
            if head is None:
                if msg.data.startswith('{"kind": "snapshot"'):
                    snapshots[0] += 1
                continue
            seq = int(head[1])
            ts = stamps.setdefault(seq, float(head[2]))
            if seq not in first:
                first[seq] = now
                sizes.append(len(msg.data))
            last[seq] = now
            count[seq] = count.get(seq, 0) + 1
            latencies.append((seq, now - ts))
            seen[i] = seq
            changed.set()

    session = aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=0))
    sockets: list[aiohttp.ClientWebSocketResponse] = []
    try:
        for start in range(0, n, 50):   # 50 handshakes at a time: the bridge's listen backlog is finite
            sockets += await asyncio.gather(*(session.ws_connect(url, max_msg_size=0) for _ in range(start, min(n, start + 50))))
        for ws in sockets:
            await ws.receive()          # the snapshot
        readers = [asyncio.create_task(read(i, ws)) for i, ws in enumerate(sockets)]
        print("ready", flush=True)
        line = await loop.run_in_executor(None, sys.stdin.readline)
        if not line:
            return   # the bench went away
        until, lo = (int(x) for x in line.split()[1:3])
        deadline = loop.time() + 10
        while min((s for s, ws in zip(seen, sockets) if not ws.closed), default=until) < until \
                and loop.time() < deadline:
            changed.clear()
            try:
                await asyncio.wait_for(changed.wait(), max(0.01, deadline - loop.time()))
            except asyncio.TimeoutError:
                break
        for task in readers:
            task.cancel()
        await asyncio.gather(*readers, return_exceptions=True)
        measured = [s for s in sorted(count) if lo <= s <= until]
        tail = [(last[s] - stamps[s]) * 1000 for s in measured]
        spread = [(last[s] - first[s]) * 1000 for s in measured]
        every = [x * 1000 for seq, x in latencies if lo <= seq <= until]
        print(json.dumps({
            "clients": n, "closed": closed[0], "resnapshots": snapshots[0], "updates_seen": len(measured),
            "missed": sum(n - closed[0] - count[s] for s in measured if count[s] < n - closed[0]),
            "last_client_ms": tail, "spread_ms": spread,
            "client_p50_ms": _percentile(every, 0.5) if every else None,
            "client_p99_ms": _percentile(every, 0.99) if every else None,
            "message_bytes": round(sum(sizes) / len(sizes)) if sizes else None,
        }), flush=True)
    finally:
        for ws in sockets:
            await ws.close()
        await session.close()


# ---------------------------------------------------------------------------------------------- the bench

async def _child(role: str, spec: dict[str, Any]) -> asyncio.subprocess.Process:
    proc = await asyncio.create_subprocess_exec(sys.executable, "-m", "controller.bench.screens.fanout", role,
                                                stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE)
    assert proc.stdin is not None
    proc.stdin.write((json.dumps(spec) + "\n").encode())
    await proc.stdin.drain()
    return proc


async def _line(proc: asyncio.subprocess.Process, timeout: float, what: str) -> str:
    assert proc.stdout is not None
    try:
        line = (await asyncio.wait_for(proc.stdout.readline(), timeout)).decode()
    except asyncio.TimeoutError:
        raise RuntimeError(f"the {what} said nothing for {timeout:g} s") from None
    if not line:
        raise RuntimeError(f"the {what} exited (code {await proc.wait()})")
    return line


async def _end(proc: asyncio.subprocess.Process | None) -> None:
    if proc is None or proc.returncode is not None:
        return
    try:
        await asyncio.wait_for(proc.wait(), 15)
    except asyncio.TimeoutError:
        proc.kill()
        await proc.wait()


async def _measure(args: argparse.Namespace, say: Callable[[str], None]) -> dict[str, Any]:
    import tempfile

    from controller.autoplay import Autoplay
    from controller.bench.screens import play
    from controller.config import config_from_mapping
    from controller.rng import SeededRng
    from controller.table import Table

    cpus = sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else []
    own = set(cpus)
    if len(cpus) >= 2:
        bridge_cpus, other_cpus = [cpus[0]], cpus[1:]
        separation = (f"bridge pinned to CPU {cpus[0]}; table and clients pinned to CPU "
                      f"{','.join(map(str, cpus[1:]))} (sched_setaffinity)")
    else:
        bridge_cpus, other_cpus = [], []
        separation = "one CPU: bridge, table and clients share it"
    load = os.getloadavg() if hasattr(os, "getloadavg") else None
    bridge = clients = None
    with tempfile.TemporaryDirectory(prefix="croupier-bench-fanout-") as tmp:
        mapping = _table_mapping(tmp, args.seed, args.game)
        cfg = config_from_mapping(mapping, Path(tmp) / "bench.toml")
        _pin(set(other_cpus) or None)
        table = Table(cfg)
        try:
            await table.start()
            assert table.state is not None  # start() folded the journal: set from here on
            if table.shoe is not None and not await table.wait_for(lambda s: s.shoe.link, 30):
                raise RuntimeError("the simulated shoe never answered")
            bridge = await _child("bridge", {"mapping": mapping, "path": str(Path(tmp) / "bench.toml"),
                                             "cpus": bridge_cpus})
            port = json.loads(await _line(bridge, 60, "bridge"))["port"]
            started = time.perf_counter()
            clients = await _child("clients", {"url": f"ws://127.0.0.1:{port}/ws/bench/public",
                                               "clients": args.clients, "cpus": other_cpus})
            if (await _line(clients, 180, "clients")).strip() != "ready":
                raise RuntimeError("the clients did not connect")
            say(f"{args.clients} WebSocket clients connected in {time.perf_counter() - started:.1f} s ({separation})")
            player = Autoplay(table, SeededRng(args.seed + 1), pace=args.pace)
            for _ in range(3):
                await player.step()        # warm up: the first messages of each kind
            first = table.state.seq + 1
            cpu0, load0, t0 = _cpu_of(bridge.pid), _cpu_of(clients.pid), time.perf_counter()
            published = await play(table, player, args.updates)
            elapsed = time.perf_counter() - t0
            last = table.state.seq
            assert clients.stdin is not None and bridge.stdin is not None
            clients.stdin.write(f"stop {last} {first}\n".encode())
            await clients.stdin.drain()
            seen = json.loads(await _line(clients, 60, "clients"))
            cpu1, load1 = _cpu_of(bridge.pid), _cpu_of(clients.pid)
            bridge.stdin.write(f"stop {last} {first}\n".encode())
            await bridge.stdin.drain()
            written = json.loads(await _line(bridge, 30, "bridge"))
        finally:
            for proc in (clients, bridge):
                if proc is not None and proc.returncode is None and proc.stdin is not None:
                    proc.stdin.close()
            await _end(clients)
            await _end(bridge)
            await table.stop()
            _pin(own or None)

    tail = seen["last_client_ms"]
    if not tail:
        raise RuntimeError("the clients saw no update")
    updates = published[0]
    cpu = sys_cpu = clients_cpu = None
    if cpu0 is not None and cpu1 is not None and load0 is not None and load1 is not None:
        cpu, sys_cpu = sum(cpu1) - sum(cpu0), cpu1[1] - cpu0[1]
        clients_cpu = sum(load1) - sum(load0)
    return {
        "part": "fanout", "game": args.game, "clients": args.clients, "pace_s": args.pace, "updates": updates,
        "updates_per_s": round(updates / elapsed, 1), "updates_seen": seen["updates_seen"],
        "message_bytes": seen["message_bytes"], "clients_closed": seen["closed"], "resnapshots": seen["resnapshots"],
        "missed": seen["missed"],
        "last_client_p50_ms": round(_percentile(tail, 0.5), 2), "last_client_p99_ms": round(_percentile(tail, 0.99), 2),
        "last_client_max_ms": round(max(tail), 2),
        # The bridge's own part: from the publish to the update handed to the last client's socket (or to its
        # queue, for a client that lags); the clients' reading, and their process waiting for a core, left out.
        "bridge_written_p50_ms": round(_percentile(written, 0.5), 2) if written else None,
        "bridge_written_p99_ms": round(_percentile(written, 0.99), 2) if written else None,
        "first_to_last_client_p50_ms": round(_percentile(seen["spread_ms"], 0.5), 2),
        "client_p50_ms": round(seen["client_p50_ms"], 2), "client_p99_ms": round(seen["client_p99_ms"], 2),
        "bridge_cpu_ms_per_update": round(cpu * 1000 / updates, 2) if cpu is not None else None,
        "bridge_cpu_share": round(cpu / elapsed, 3) if cpu is not None else None,
        # The kernel's part: one send per client and update, and on the loopback the receiving end's TCP too.
        "bridge_system_cpu_ms_per_update": round(sys_cpu * 1000 / updates, 2) if sys_cpu is not None else None,
        # The clients' own reading (a bound on the figures above when it nears the update's interval).
        "clients_cpu_ms_per_update": round(clients_cpu * 1000 / updates, 2) if clients_cpu is not None else None,
        "separation": separation, "load_avg_at_start": [round(x, 2) for x in load] if load else None,
        "goal_p99_ms": GOAL_P99_MS,
    }


def run(args: argparse.Namespace, say: Callable[[str], None]) -> dict[str, Any]:
    from controller.cli import CliError

    args.updates = 300 if args.updates is None else args.updates
    args.pace = 0.1 if args.pace is None else args.pace
    if args.clients < 1 or args.updates < 10:
        raise CliError("--clients at least 1 and --updates at least 10")
    figures = asyncio.run(_measure(args, say))
    say(f"{figures['updates']} updates of a {figures['game']} table ({figures['updates_per_s']}/s, "
        f"{figures['message_bytes']} bytes each) to {figures['clients']} clients: {figures['missed']} missed, "
        f"{figures['clients_closed']} closed, {figures['resnapshots']} resnapshots")
    p99 = figures["last_client_p99_ms"]
    say(f"publish -> last client: p50 {figures['last_client_p50_ms']:.1f} ms   p99 {p99:.1f} ms   "
        f"max {figures['last_client_max_ms']:.1f} ms   (goal p99 < {GOAL_P99_MS} ms: "
        f"{'met' if p99 < GOAL_P99_MS else 'NOT met'})")
    say(f"publish -> any client:  p50 {figures['client_p50_ms']:.1f} ms   p99 {figures['client_p99_ms']:.1f} ms")
    if figures["bridge_written_p50_ms"] is not None:
        say(f"publish -> the bridge handed it to the last client: p50 {figures['bridge_written_p50_ms']:.1f} ms   "
            f"p99 {figures['bridge_written_p99_ms']:.1f} ms")
    if figures["bridge_cpu_ms_per_update"] is not None:
        say(f"bridge CPU: {figures['bridge_cpu_ms_per_update']:.2f} ms per update "
            f"({figures['bridge_system_cpu_ms_per_update']:.2f} ms of it the kernel's; "
            f"{figures['bridge_cpu_share']:.2f} of a core); the clients' CPU: "
            f"{figures['clients_cpu_ms_per_update']:.2f} ms per update")
    return figures


if __name__ == "__main__":
    role = sys.argv[1]
    child = _bridge_child if role == "bridge" else _clients_child
    asyncio.run(child(json.loads(sys.stdin.readline())))

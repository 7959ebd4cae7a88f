"""Helpers for runtime tests: a table config on free loopback ports with a simulated shoe, a runtime served in a thread, stepping the autoplay, recall."""

from __future__ import annotations

import asyncio
import json
import os
import socket
import subprocess
import sys
import threading
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Awaitable, Callable, Iterator

from controller.config import TableConfig, config_from_mapping


ROOT = Path(__file__).resolve().parent.parent
_PORTS_FROM, _PORTS = 20000, 12000  # 20000-31999: below Linux's ephemeral range (32768-60999)
_next_port = _PORTS_FROM + os.getpid() % _PORTS


def free_ports(n: int) -> list[int]:
    """n loopback ports free now, each handed out once per process in turn, from below the kernel's ephemeral
    range: a port taken from that range (bind to port 0) could be given to an outgoing connection between this
    check and the test's bind ("Address already in use" on a busy CI machine)."""
    global _next_port
    ports: list[int] = []
    while len(ports) < n:
        port = _next_port
        _next_port = _PORTS_FROM + (port - _PORTS_FROM + 1) % _PORTS
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                continue
        ports.append(port)
    return ports


def bus_section(heartbeat: float | None = 0.2) -> dict[str, Any]:
    """A config's [bus] on three free loopback ports, its heartbeat `heartbeat` seconds (None: the default)."""
    p1, p2, p3 = free_ports(3)
    bus: dict[str, Any] = {"publish": f"tcp://127.0.0.1:{p1}", "snapshot": f"tcp://127.0.0.1:{p2}",
                           "commands": f"tcp://127.0.0.1:{p3}"}
    if heartbeat is not None:
        bus["heartbeat"] = heartbeat
    return bus


def bus_toml(heartbeat: float | None = 0.2) -> str:
    """`bus_section` as the lines of a TOML config file."""
    return "[bus]\n" + "".join(f"{key} = {json.dumps(value)}\n" for key, value in bus_section(heartbeat).items())


def table_config(tmp: Path, game: str = "baccarat", seed: int = 7, rules: dict[str, Any] | None = None,
                 panel: str | None = None, **table: Any) -> TableConfig:
    data: dict[str, Any] = {
        "table": {"id": f"{game}-1", "game": game, "journal": str(tmp / f"{game}.journal"), **table},
        "rules": rules or {},
        "shoe": {"port": "sim", "seed": seed},
        "bus": bus_section(),
    }
    if panel:
        data["panel"] = {"file": panel, "driver": "sim"}
    return config_from_mapping(data, tmp / "table.toml")


def table_toml(tmp: Path, table_id: str, game: str = "baccarat", journal: str = "t.journal", extra: str = "") -> Path:
    """A table's config file (simulated shoe, seed 3, free loopback ports), `extra` lines added to [table]."""
    path = tmp / "table.toml"
    path.write_text(f"""
[table]
id = "{table_id}"
game = "{game}"
journal = "{journal}"
{extra}
[shoe]
port = "sim"
seed = 3
{bus_toml()}""")
    return path


def run_demo(*args: str, cwd: Path = ROOT, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """`croupier demo ARGS` run to its end in a process of its own on free bus ports (two minutes at most); it must
    exit 0 (else the test fails with its stderr)."""
    ports = [str(p) for p in free_ports(3)]
    out = subprocess.run([sys.executable, "-m", "controller.cli", "demo", *args, "--ports", *ports],
                         capture_output=True, text=True, timeout=120, cwd=cwd, env=env, check=False)
    assert out.returncode == 0, out.stderr
    return out


def play_config(path: Path, rounds: int = 2) -> None:
    """Run the table of a config file for `rounds` rounds of a seeded autoplay, then stop it."""
    from controller.autoplay import Autoplay
    from controller.config import load_config
    from controller.rng import SeededRng
    from controller.table import Table

    async def run() -> None:
        table = Table(load_config(path))
        await table.start()
        await Autoplay(table, SeededRng(1), rounds=rounds).run()
        await table.stop()

    asyncio.run(asyncio.wait_for(run(), 120))


@contextmanager
def serving(make: Callable[[], Any], prepare: Callable[[Any], Awaitable[None]] | None = None) -> Iterator[Any]:
    """Run a runtime (table, cabinet or link controller) in a thread of its own while the body talks to it over the
    bus, as another process would; `prepare(runtime)` runs on its loop once it has started."""
    ready = threading.Event()
    holder: dict[str, Any] = {}

    def serve() -> None:
        async def run() -> None:
            runtime = make()
            await runtime.start()
            if prepare is not None:
                await prepare(runtime)
            holder["runtime"], holder["loop"] = runtime, asyncio.get_running_loop()
            ready.set()
            await runtime.run()
            await runtime.stop()

        asyncio.run(run())

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    assert ready.wait(30), "the runtime did not start"
    try:
        yield holder["runtime"]
    finally:
        holder["loop"].call_soon_threadsafe(holder["runtime"].request_stop)
        thread.join(30)


async def step_until(table: Any, autoplay: Any, done: Callable[[], bool], limit: int = 2000) -> None:
    """Let the autoplay do one thing at a time until `done()`; waits on the table's journal, never sleeps.
    `done()` is asked only once every card the simulated shoe has drawn is journaled: the dealer draws a coup's
    cards in one motion, and a test acting on its first cards would find the rest arriving after."""
    for _ in range(limit):
        if table.sim is not None and not await table.wait_for(autoplay.drawn_journaled, 10):
            raise AssertionError("cards drawn from the simulated shoe were never journaled")
        if done():
            return
        seq = table.state.seq
        await autoplay.step()
        if table.state.seq == seq:
            await table.wait_change(seq, 5)
    raise AssertionError("the table never got there")


def misplaceable(table: Any) -> list[str]:
    """The banker's cards of a baccarat coup, once its first four are out, that the player does not also hold
    (eight decks hold eight of each): one of them laid in the player's box is a misdeal the camera can tell."""
    from controller.camera import layout

    cards = layout(table.game.snapshot(table.state.game))
    if sum(z in ("player", "banker") for z, _, _ in cards) < 4:
        return []
    return [c for z, c, _ in cards if z == "banker" and ("player", c, True) not in cards]


def recall_text(cfg: Any, *args: str) -> str:
    """What `croupier recall` prints for the table of `cfg`, a config built in memory rather than read from a file."""
    import contextlib
    import io
    from unittest import mock

    from controller.cli import main
    from controller.commands.table import recall as recall_command

    out = io.StringIO()
    with mock.patch.object(recall_command, "load", lambda path: cfg), contextlib.redirect_stdout(out):
        assert main(["recall", "--config", "table.toml", *args]) == 0
    return out.getvalue()

